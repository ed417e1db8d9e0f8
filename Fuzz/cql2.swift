// Fuzzes OGC API – Features Part 3's CQL2 reader (Sources/QueryLanguage/CQL2.swift) and its way
// into the WHERE compiler, against a real snapshot (Shared/DemoSnapshot.swift): the filter is
// read in the text encoding and in the JSON encoding, on the districts, the stations and the
// observations (a table, with times).
//
// Invariants: every filter ends in a compiled filter or a FilterError naming `filter` with a
// message; a compiled filter runs over every feature without trapping.

import Engine
import Foundation
import QueryLanguage

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
    for layerName in ["districts", "stations", "observations"] {
        guard let layer = try? snapshot.layer(layerName) else { FuzzSupport.fail("the demo snapshot has no \(layerName)") }
        for encoding in [CQL2Encoding.text, .json] {
            var request = ItemsRequest(limit: 10)
            do {
                try Query.filterItems(&request, on: layer, in: snapshot, equal: [], cql2: (text, encoding))
                guard let filter = request.filter else { FuzzSupport.fail("a filter that compiled gave no filter: \(text)") }
                for index in 0..<layer.slots { _ = filter(index) }
            } catch {
                guard error.parameter == "filter", !error.message.isEmpty else {
                    FuzzSupport.fail("an error that names \(error.parameter), or says nothing: \(error.message)")
                }
            }
        }
    }
    return 0
}
