// Fuzzes the OSM XML reader (Sources/Routing/OSM.swift `OSMReader.readXML`): the element
// scanner, attributes with quotes and entities, nodes, ways with refs and tags. Whatever it
// reads then becomes a walking network under both profiles, as `vltava route --osm` does.

import Routing

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    guard let data = try? OSMReader.readXML(FuzzSupport.bytes(start, count), file: "fuzz.osm") else { return 0 }
    for profile in OSMProfile.allCases {
        let graph = Graph.fromOSM(data, profile: profile)
        guard graph.nodeIDs.count == graph.nodeCount else {
            FuzzSupport.fail("a graph with \(graph.nodeCount) nodes but \(graph.nodeIDs.count) ids")
        }
    }
    return 0
}
