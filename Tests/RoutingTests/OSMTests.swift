import Foundation
import Geometry
import Routing
import TestSupport
import Testing

@Suite struct OSMTests {
    /// The PBF and the XML of the same Andorra extract give the same graph, and with every
    /// `highway` way kept, the shared benchmark's W7 network: 38,556 nodes, 38,991 edges,
    /// 854,723.058 m (counted by pyosmium in gen_workloads.py).
    @Test func pbfAndXMLGiveTheSameGraph() throws {
        let start = Date()
        let pbf = try OSMReader.read(path: Fixtures.path("osm/andorra.osm.pbf"))
        let pbfSeconds = Date().timeIntervalSince(start)
        let xml = try OSMReader.read(path: Fixtures.path("osm/andorra.osm.gz"))
        #expect(pbf.lons.count == 69_644 && xml.lons.count == 69_644)
        #expect(pbf.ways.count == 2_725 && xml.ways.count == 2_725)
        for profile in OSMProfile.allCases {
            let a = Graph.fromOSM(pbf, profile: profile), b = Graph.fromOSM(xml, profile: profile)
            #expect(a.nodeCount == b.nodeCount)
            #expect(a.edges.count == b.edges.count)
            #expect(abs(a.totalMetres - b.totalMetres) < 1e-6)
        }
        let any = Graph.fromOSM(pbf, profile: .anyHighway)
        #expect(any.nodeCount == 38_556)
        #expect(any.edges.count == 38_991)
        #expect(abs(any.totalMetres - 854_723.057819561) < 0.01)
        // The foot profile drops motorways and private ways: a smaller network.
        let foot = Graph.fromOSM(pbf, profile: .foot)
        #expect(foot.nodeCount < any.nodeCount && foot.nodeCount > 30_000)
        // Debug builds are several times slower than release; the release figure is in the notes.
        #expect(pbfSeconds < 10)
    }

    @Test func brokenFilesGiveClearErrors() throws {
        let dir = try Fixtures.temporaryDirectory("osm")
        let pbf = try Data(contentsOf: Fixtures.url("osm/andorra.osm.pbf"))
        let truncated = dir.appendingPathComponent("cut.osm.pbf")
        try pbf.prefix(100_000).write(to: truncated)
        #expect(throws: OSMError.self) { try OSMReader.read(path: truncated.path) }
        let garbage = dir.appendingPathComponent("garbage.osm.pbf")
        try Data((0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }).write(to: garbage)
        #expect(throws: OSMError.self) { try OSMReader.read(path: garbage.path) }
        let xml = dir.appendingPathComponent("cut.osm")
        try Data("<?xml version='1.0'?>\n<osm version='0.6'>\n <node id='1' lat='42.5' lon='1.5'/>\n <way id='7'>\n  <nd ref='1'/>".utf8).write(to: xml)
        do {
            _ = try OSMReader.read(path: xml.path)
            Issue.record("a truncated XML file was read")
        } catch {
            #expect(error.description == "cut.osm: the XML is truncated (no closing </osm>)")
        }
        #expect(throws: OSMError.self) { try OSMReader.read(path: dir.appendingPathComponent("none.osm").path) }
    }

    /// The foot profile keeps footways, drops motorways, respects access and foot tags, and
    /// makes a way one-way only for `oneway:foot`.
    @Test func footProfile() throws {
        let xml = """
            <?xml version='1.0'?><osm version='0.6'>
            <node id='1' lat='42.50' lon='1.50'/><node id='2' lat='42.51' lon='1.50'/><node id='3' lat='42.52' lon='1.50'/>
            <node id='4' lat='42.53' lon='1.50'/><node id='5' lat='42.54' lon='1.50'/><node id='6' lat='42.55' lon='1.50'/>
            <way id='10'><nd ref='1'/><nd ref='2'/><tag k='highway' v='footway'/></way>
            <way id='11'><nd ref='2'/><nd ref='3'/><tag k='highway' v='motorway'/></way>
            <way id='12'><nd ref='3'/><nd ref='4'/><tag k='highway' v='service'/><tag k='access' v='private'/></way>
            <way id='13'><nd ref='4'/><nd ref='5'/><tag k='highway' v='track'/><tag k='access' v='no'/><tag k='foot' v='yes'/></way>
            <way id='14'><nd ref='5'/><nd ref='6'/><tag k='highway' v='steps'/><tag k='oneway:foot' v='yes'/></way>
            </osm>
            """
        let data = try OSMReader.readXML(Array(xml.utf8), file: "t.osm")
        let graph = Graph.fromOSM(data, profile: .foot)
        #expect(graph.nodeIDs.sorted() == [1, 2, 4, 5, 6])
        #expect(graph.edges.map(\.oneway) == [false, false, true])
        let search = Search(graph: graph)
        let up = try #require(graph.nodeIDs.firstIndex(of: 5)), down = try #require(graph.nodeIDs.firstIndex(of: 6))
        #expect(try search.shortestPath(from: [(up, 0)], to: [(down, 0)]).nodes == [up, down])
        #expect(throws: Search.Failure.unreachable) { try search.shortestPath(from: [(down, 0)], to: [(up, 0)]) }
    }
}
