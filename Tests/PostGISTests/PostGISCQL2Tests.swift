// CQL2 filters (OGC API – Features Part 3) on layers kept in PostgreSQL: the filter becomes the
// same store condition a WHERE does (the FIND pushdown), PostgreSQL selects the page, and the
// features are those the loaded layer gives.

import Engine
@testable import PostGIS
import Store
import Support
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
                // LIKE, the spatial and the temporal functions: PostgreSQL's LIKE, ST_* and
                // vltava_utc against GEOS, LikePattern and UTCTime.parse in memory.
                ("districts", "NAZEV_MC LIKE 'Praha 1%' OR NAZEV_MC NOT LIKE '%a%'", .text),
                ("parking", "S_INTERSECTS(geom, BBOX(14.40, 50.07, 14.45, 50.09)) AND CATEGORY LIKE 'V_S'", .text),
                ("districts", "S_TOUCHES(geom, POLYGON((14.40 50.07, 14.45 50.07, 14.45 50.09, 14.40 50.09, 14.40 50.07))) OR S_WITHIN(geom, BBOX(14.3, 50.0, 14.5, 50.1))", .text),
                ("districts", "S_CROSSES(geom, LINESTRING(14.3 50.0, 14.6 50.15)) OR S_DISJOINT(geom, POINT(14.4208 50.0875)) AND KOD_MC < 539000", .text),
                ("parking", #"{"op":"s_overlaps","args":[{"property":"geom"},{"bbox":[14.40,50.07,14.45,50.09]}]}"#, .json),
                ("parking", "S_CROSSES(geom, LINESTRING(14.40 50.07, 14.45 50.09)) OR S_CONTAINS(BBOX(14.42, 50.075, 14.43, 50.08), geom)", .text),
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
            #expect(compared > 400, "\(compared)")
        }
    }

    /// The temporal functions' SQL (the time-series table is not served as items on PostGIS,
    /// so this runs the condition itself): `vltava_utc` in PostgreSQL against `UTCTime.parse`.
    @Test func instantsComparedInTheDatabaseAsInMemory() async throws {
        try await onAThreadOfItsOwn {
            let database = try PostGISDatabase(try PushedStore.pushed.get().cluster.url)
            let rows = try database.rows("SELECT fid, interval_start FROM observations ORDER BY fid", [], deadline: .none)
            let times = rows.compactMap { row -> (Int64, Int64)? in
                guard case .integer(let fid)? = row.first, let text = row.last?.stringValue, let time = UTCTime.parse(text) else { return nil }
                return (fid, time.seconds)
            }
            #expect(times.count == 816)
            let t = try #require(UTCTime.parse("2019-04-15T06:00:00Z"))
            for comparison in [StoreComparison.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual] {
                var parameters: [AttributeValue] = []
                let condition = Fetch.sql(.instant(column: "interval_start", comparison, t)) { value in
                    parameters.append(value)
                    return "$\(parameters.count)"
                }
                let selected = try database.rows("SELECT t.fid FROM observations AS t WHERE \(condition) ORDER BY t.fid", parameters, deadline: .none)
                    .compactMap { if case .integer(let fid)? = $0.first { fid } else { nil } }
                let expected = times.filter { (_, seconds) in
                    switch comparison {
                    case .equal: seconds == t.seconds
                    case .notEqual: seconds != t.seconds
                    case .less: seconds < t.seconds
                    case .lessOrEqual: seconds <= t.seconds
                    case .greater: seconds > t.seconds
                    case .greaterOrEqual: seconds >= t.seconds
                    }
                }.map(\.0)
                #expect(selected == expected && !expected.isEmpty, "\(comparison)")
            }
        }
    }
}
