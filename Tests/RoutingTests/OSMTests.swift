import Foundation
import Geometry
import Routing
import SpatialIndex
import TestSupport
import Testing

@Suite(.validatesStores) struct OSMTests {
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

    /// A node whose position is not a finite number in range is an error naming the node
    /// (issue 19): `lon="inf"` used to crash `vltava route` in the edge index, and NaN, 95.5 or
    /// 1e300 were taken as they were.
    @Test(arguments: [
        ("lat='42.52' lon='inf'", "node 3: longitude inf is not a finite number"),
        ("lat='NaN' lon='1.50'", "node 3: latitude nan is not a finite number"),
        ("lat='95.5' lon='1.50'", "node 3: latitude 95.5 is outside -90…90"),
        ("lat='42.52' lon='1e300'", "node 3: longitude 1e+300 is outside -180…180"),
        ("lat='42.52' lon='east'", "node 3: lat '42.52' or lon 'east' is not a number"),
    ])
    func xmlNodeOutOfRangeIsAnError(position: String, message: String) throws {
        let xml = Self.network(third: position)
        do {
            _ = try OSMReader.readXML(Array(xml.utf8), file: "bad.osm")
            Issue.record("read a node at \(position)")
        } catch {
            #expect(error.description == "bad.osm: \(message)")
        }
    }

    /// Three nodes on a footway, the third at `third` ("lat='…' lon='…'").
    static func network(third: String) -> String {
        """
        <?xml version='1.0'?><osm version='0.6'>
        <node id='1' lat='42.50' lon='1.50'/><node id='2' lat='42.51' lon='1.50'/><node id='3' \(third)/>
        <way id='10'><nd ref='1'/><nd ref='2'/><nd ref='3'/><tag k='highway' v='footway'/></way>
        </osm>
        """
    }

    /// A PBF block's granularity scales every coordinate: a corrupt one (here 100,000 instead of
    /// 100 nanodegrees) put the nodes thousands of degrees away without an error; now the first
    /// node out of range is named. A granularity of 0 is refused too.
    @Test func corruptGranularityIsAnError() throws {
        let nodes = [PBFBuilder.Node(id: 1, lat: 425_000_000, lon: 15_000_000), PBFBuilder.Node(id: 2, lat: 425_100_000, lon: 15_000_000)]
        let good = try OSMReader.readPBF(PBFBuilder.file(nodes: nodes, way: [1, 2]), file: "good.osm.pbf")
        // 100 nanodegrees per unit, as the reader computes them.
        #expect(good.lats == [1e-9 * 42_500_000_000, 1e-9 * 42_510_000_000] && good.lons == [1.5, 1.5])
        #expect(abs(good.lats[1] - 42.51) < 1e-12)
        #expect(good.ways.map(\.refs) == [[1, 2]])
        #expect(good.ways.first?.tags == ["highway": "footway"])
        do {
            _ = try OSMReader.readPBF(PBFBuilder.file(nodes: nodes, way: [1, 2], granularity: 100_000), file: "bad.osm.pbf")
            Issue.record("read nodes at latitude 42,500")
        } catch {
            #expect(error.description == "bad.osm.pbf: node 1: latitude 42500 is outside -90…90")
        }
        do {
            _ = try OSMReader.readPBF(PBFBuilder.file(nodes: nodes, way: [1, 2], granularity: 0), file: "zero.osm.pbf")
            Issue.record("read a block of granularity 0")
        } catch {
            #expect(error.description == "zero.osm.pbf: a block with granularity 0 (it must be at least 1 nanodegree)")
        }
    }

    /// The edge index refuses a graph with a non-finite node rather than trapping on it.
    @Test func edgeIndexRefusesNonFiniteNodes() throws {
        let graph = Graph(lons: [1.5, 1.5, .infinity], lats: [42.5, 42.51, 42.52], edges: [Graph.Edge(u: 0, v: 1, metres: 1112), Graph.Edge(u: 1, v: 2, metres: 1112)])
        #expect(throws: SpatialIndexError.nonFinite(item: 2)) { try EdgeIndex(graph: graph) }
        #expect(throws: SpatialIndexError.nonFinite(item: 2)) { try Router(graph: graph) }
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
