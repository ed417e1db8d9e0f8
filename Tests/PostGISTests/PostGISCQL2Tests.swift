// CQL2 filters (OGC API – Features Part 3) on layers kept in PostgreSQL: the filter becomes the
// same store condition a WHERE does (the FIND pushdown), PostgreSQL selects the page, and the
// features are those the loaded layer gives.

import Engine
import Geometry
import QueryLanguage
import TestSupport
import Testing

// In the serialized suite of the shared cluster: other tests there stop and start it.
extension PostGISStoreTests {
    @Test func filtersArePushedDownAndAnswerAsLoaded() async throws {
        try await onAThreadOfItsOwn {
            let kept = try PushedStore.kept.get()
            let embedded = try PushedStore.embedded.get()
            let filters: [(String, String, CQL2Encoding)] = [
                ("districts", "KOD_MC > 547000", .text),
                ("districts", "NAZEV_MC IN ('Praha 1', 'Praha 2') OR KOD_MC BETWEEN 538000 AND 539500", .text),
                ("districts", "NOT (KOD_MC >= 500000 AND KOD_MC < 547000) AND NAZEV_MC <> 'Praha 22'", .text),
                ("parking", "CATEGORY = 'VIS' AND NOT (OBJECTID < 100)", .text),
                ("parking", #"{"op":"and","args":[{"op":"in","args":[{"property":"CATEGORY"},["RES","MIX"]]},{"op":"<","args":[{"property":"OBJECTID"},400]}]}"#, .json),
                ("parking", "CODE IS NULL OR 50 > OBJECTID", .text),
            ]
            var compared = 0
            for (name, text, encoding) in filters {
                let keptLayer = try kept.layer(name), loaded = try embedded.layer(name)
                #expect(keptLayer.fetchesRows && !loaded.fetchesRows)
                var inDatabase = ItemsRequest(limit: 10_000), inMemory = ItemsRequest(limit: 10_000)
                try Query.filterItems(&inDatabase, on: keptLayer, in: kept, equal: [], cql2: (text, encoding))
                try Query.filterItems(&inMemory, on: loaded, in: embedded, equal: [], cql2: (text, encoding))
                #expect(inDatabase.condition != nil && inDatabase.filter == nil && inMemory.filter != nil)
                let page = try kept.items(keptLayer, inDatabase)
                let expected = try embedded.items(loaded, inMemory)
                let fids = page.indices.map { page.layer.fids[$0] }
                #expect(fids == expected.indices.map { loaded.fids[$0] } && !fids.isEmpty, "\(name): \(text)")
                compared += fids.count
            }
            #expect(compared > 100)
        }
    }
}
