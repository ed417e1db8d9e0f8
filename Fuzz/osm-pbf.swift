// Fuzzes the OSM PBF reader (Sources/Routing/OSM.swift `OSMReader.readPBF`): blob headers,
// zlib blobs, string tables, plain and dense nodes, ways. Whatever it reads then becomes a
// walking network under both profiles, as `vltava route --osm` does.

import Routing

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    guard let data = try? OSMReader.readPBF(FuzzSupport.bytes(start, count), file: "fuzz.osm.pbf") else { return 0 }
    for profile in OSMProfile.allCases {
        let graph = Graph.fromOSM(data, profile: profile)
        guard graph.nodeIDs.count == graph.nodeCount else {
            FuzzSupport.fail("a graph with \(graph.nodeCount) nodes but \(graph.nodeIDs.count) ids")
        }
    }
    return 0
}
