import Foundation
import Geometry
import Routing
import SpatialIndex
import Support
import TestSupport
import Testing

/// The contraction hierarchy against its reference, plain Dijkstra (`Search` without the
/// heuristic): the same length on every sampled pair, bit for bit where the path is the same
/// (the hierarchy sums the unpacked path's edges in order, as Dijkstra does), and the same
/// nodes wherever the shortest path is unique.
@Suite struct ContractionHierarchyTests {
    /// Andorra, every `highway` way (the W7 network of the shared benchmark: 38,556 nodes), and
    /// its hierarchy (built once for the suite).
    static let andorra: Result<(graph: Graph, hierarchy: ContractionHierarchy), any Error> = Result {
        let osm = try OSMReader.read(path: Fixtures.path("osm/andorra.osm.pbf"))
        let graph = Graph.fromOSM(osm, profile: .anyHighway)
        return (graph, ContractionHierarchy(graph: graph))
    }

    /// Whether the shortest s–t path is unique: no edge off it lies on another path as short
    /// (within 1 mm), by full Dijkstra from s and, over reversed edges, to t.
    static func isUnique(_ graph: Graph, _ path: [Int], from: [Double], to: [Double]) -> Bool {
        guard let t = path.last else { return true }
        let total = from[t]
        var onPath = Set<UInt64>()
        for (u, v) in zip(path, path.dropFirst()) { onPath.insert(UInt64(u) << 32 | UInt64(v)) }
        for u in 0..<graph.nodeCount where from[u].isFinite {
            var unique = true
            graph.forEachNeighbour(of: u) { v, metres in
                if !onPath.contains(UInt64(u) << 32 | UInt64(v)), from[u] + metres + to[v] <= total + 0.001 { unique = false }
            }
            if !unique { return false }
        }
        return true
    }

    /// Full Dijkstra from `origin`, or with `reversed` to `origin` (over reversed edges).
    static func dijkstra(_ graph: Graph, _ origin: Int, reversed: Bool) -> [Double] {
        var adjacent = [[(Int, Double)]](repeating: [], count: graph.nodeCount)
        for u in 0..<graph.nodeCount { graph.forEachNeighbour(of: u) { v, m in if reversed { adjacent[v].append((u, m)) } else { adjacent[u].append((v, m)) } } }
        var distance = [Double](repeating: .infinity, count: graph.nodeCount)
        var heap = MinHeap<Queued>()
        distance[origin] = 0
        heap.push(Queued(key: 0, node: origin))
        while let e = heap.pop() {
            if e.key > distance[e.node] { continue }
            for (u, m) in adjacent[e.node] where e.key + m < distance[u] {
                distance[u] = e.key + m
                heap.push(Queued(key: distance[u], node: u))
            }
        }
        return distance
    }

    struct Queued: Comparable {
        var key: Double
        var node: Int
        static func < (a: Queued, b: Queued) -> Bool { a.key < b.key }
    }

    /// Random pairs of `graph`: the hierarchy's length equals Dijkstra's to the bit when it
    /// walks the same nodes, and to 1e-9 m otherwise; the nodes are the same wherever the
    /// path is unique (checked on the first `uniqueChecks` pairs). Returns (pairs joined by a
    /// path, of them with the same nodes).
    static func compare(_ graph: Graph, _ hierarchy: ContractionHierarchy, pairs: Int, seed: UInt64, uniqueChecks: Int, among: [Int]? = nil,
                        sourceLocation: SourceLocation = #_sourceLocation) throws -> (Int, Int) {
        let dijkstra = Search(graph: graph)
        let ch = HierarchySearch(hierarchy: hierarchy)
        var g = SplitMix(state: seed)
        var sameNodes = 0, joined = 0
        for k in 0..<pairs {
            let pool = among ?? Array(0..<graph.nodeCount)
            let s = pool[Int.random(in: 0..<pool.count, using: &g)], t = pool[Int.random(in: 0..<pool.count, using: &g)]
            let expected = try? dijkstra.shortestPath(from: [(s, 0)], to: [(t, 0)], heuristic: false)
            let got = try? ch.shortestPath(from: [(s, 0)], to: [(t, 0)])
            guard let expected else {
                #expect(got == nil, "pair \(s)→\(t): Dijkstra finds no path, the hierarchy does", sourceLocation: sourceLocation)
                continue
            }
            guard let got else {
                Issue.record("pair \(s)→\(t): no path by the hierarchy, \(expected.metres) m by Dijkstra", sourceLocation: sourceLocation)
                continue
            }
            joined += 1
            if got.nodes == expected.nodes {
                sameNodes += 1
                #expect(got.metres == expected.metres, "pair \(s)→\(t)", sourceLocation: sourceLocation)
            } else {
                #expect(abs(got.metres - expected.metres) <= 1e-9 * max(1, expected.metres), "pair \(s)→\(t)", sourceLocation: sourceLocation)
                if k < uniqueChecks {
                    let from = Self.dijkstra(graph, s, reversed: false), to = Self.dijkstra(graph, t, reversed: true)
                    #expect(!isUnique(graph, expected.nodes, from: from, to: to), "pair \(s)→\(t): a unique path, other nodes", sourceLocation: sourceLocation)
                }
            }
            // The unpacked path is a path of the graph, as long as its length.
            var along = 0.0
            for (u, v) in zip(got.nodes, got.nodes.dropFirst()) {
                var edge = Double.infinity
                graph.forEachNeighbour(of: u) { w, m in if w == v { edge = min(edge, m) } }
                along += edge
            }
            #expect(abs(along - got.metres) <= 1e-9 * max(1, got.metres), sourceLocation: sourceLocation)
        }
        return (joined, sameNodes)
    }

    @Test func zooPairsEqualDijkstra() throws {
        let graph = try ZooNetwork.graph.get()
        let hierarchy = ContractionHierarchy(graph: graph)
        // Pairs across the 61 components too: those have no path either way.
        let (joined, same) = try Self.compare(graph, hierarchy, pairs: 1_000, seed: 11, uniqueChecks: 1_000)
        #expect(joined > 100 && same >= joined * 9 / 10, "\(same) of \(joined) with the same nodes")
        #expect(hierarchy.originalArcCount == 2 * 3573)
    }

    /// W7's first pairs, found by their OSM node ids; the reference lengths are the shared
    /// benchmark's answer.f64 (Python heapq Dijkstra over the same edges), to the millimetre.
    @Test func andorraKnownRoutes() throws {
        let (graph, hierarchy) = try Self.andorra.get()
        #expect(graph.nodeCount == 38_556)
        let search = HierarchySearch(hierarchy: hierarchy)
        var node: [Int64: Int] = [:]
        for (i, id) in graph.nodeIDs.enumerated() { node[id] = i }
        let known: [(Int64, Int64, Double)] = [
            (51_420_935, 51_563_238, 17_124.8543905694),
            (2_008_332_436, 2_188_740_546, 15_226.750531457206),
            (1_922_626_620, 1_922_470_517, 18_674.267801651968),
            (51_589_338, 52_322_644, 16_612.28744052079),
            (366_540_917, 1_879_481_632, 10_593.425611346693),
        ]
        let dijkstra = Search(graph: graph)
        for (a, b, metres) in known {
            let s = try #require(node[a]), t = try #require(node[b])
            let path = try search.shortestPath(from: [(s, 0)], to: [(t, 0)])
            #expect(Rounding.metres(path.metres) == Rounding.metres(metres), "\(a)→\(b): \(path.metres)")
            let reference = try dijkstra.shortestPath(from: [(s, 0)], to: [(t, 0)], heuristic: false)
            #expect(path.nodes == reference.nodes)
            #expect(path.metres == reference.metres)
        }
        // The first route's nodes, by OSM id: its ends and length in nodes.
        let first = try search.shortestPath(from: [(try #require(node[51_420_935]), 0)], to: [(try #require(node[51_563_238]), 0)])
        #expect(first.nodes.first.map { graph.nodeIDs[$0] } == 51_420_935)
        #expect(first.nodes.last.map { graph.nodeIDs[$0] } == 51_563_238)
        #expect(first.nodes.count == Self.firstRouteNodeCount)
    }

    static let firstRouteNodeCount = 472

    @Test func andorraPairsEqualDijkstra() throws {
        let (graph, hierarchy) = try Self.andorra.get()
        let (joined, same) = try Self.compare(graph, hierarchy, pairs: 200, seed: 7, uniqueChecks: 20)
        #expect(joined > 150 && same >= joined * 9 / 10, "\(same) of \(joined) with the same nodes")
    }

    /// One-way arcs: the zoo with every seventh edge one-way (either way round), pairs in its
    /// largest component.
    @Test func oneWayArcs() throws {
        let zoo = try ZooNetwork.graph.get()
        let edges = zoo.edges.enumerated().map { i, e in
            i % 7 == 0 ? Graph.Edge(u: i % 14 == 0 ? e.u : e.v, v: i % 14 == 0 ? e.v : e.u, metres: e.metres, oneway: true) : e
        }
        let graph = Graph(lons: zoo.lons, lats: zoo.lats, edges: edges)
        let largest = (0..<graph.nodeCount).filter { graph.component[$0] == 0 }
        let (joined, same) = try Self.compare(graph, ContractionHierarchy(graph: graph), pairs: 1_000, seed: 12, uniqueChecks: 200, among: largest)
        #expect(joined > 100 && same >= joined * 9 / 10, "\(same) of \(joined) with the same nodes")
    }

    /// Without the steps: the hierarchy built without them equals Dijkstra forbidden them.
    @Test func stepFreeHierarchyEqualsForbiddingDijkstra() throws {
        let graph = try ZooNetwork.graph.get()
        // Every 40th edge of the largest component counts as steps here.
        let stepPairs = graph.edges.enumerated().filter { $0.offset % 40 == 0 && graph.component[$0.element.u] == 0 }.map { ($0.element.u, $0.element.v) }
        let steps = EdgeSet(pairs: stepPairs, nodeCount: graph.nodeCount)
        let hierarchy = ContractionHierarchy(graph: graph, excluding: steps)
        let search = HierarchySearch(hierarchy: hierarchy)
        let dijkstra = Search(graph: graph)
        let largest = (0..<graph.nodeCount).filter { graph.component[$0] == 0 }
        var g = SplitMix(state: 3)
        var reachable = 0, unreachable = 0
        for _ in 0..<300 {
            let s = largest[Int.random(in: 0..<largest.count, using: &g)], t = largest[Int.random(in: 0..<largest.count, using: &g)]
            let expected = try? dijkstra.shortestPath(from: [(s, 0)], to: [(t, 0)], heuristic: false, edgeFactor: { steps.contains($0, $1) ? nil : 1 })
            let got = try? search.shortestPath(from: [(s, 0)], to: [(t, 0)])
            #expect(got?.metres.isFinite == expected?.metres.isFinite)
            if let expected, let got {
                reachable += 1
                #expect(abs(got.metres - expected.metres) <= 1e-9 * max(1, expected.metres))
                for (u, v) in zip(got.nodes, got.nodes.dropFirst()) { #expect(!steps.contains(u, v)) }
            } else {
                unreachable += 1
            }
        }
        // Forbidding a 40th of the edges cuts some pairs apart, and others stay joined.
        #expect(reachable > 50 && unreachable > 0, "\(reachable) joined, \(unreachable) cut")
    }

    /// A table through the hierarchy equals a route per pair by A* (the router without a
    /// hierarchy), to the millimetre, for the foot and the step-free networks; a route that
    /// avoids an area goes by A* and answers as before.
    @Test func tablesEqualPairwiseRoutes() throws {
        let graph = try ZooNetwork.graph.get()
        let edges = try EdgeIndex(graph: graph)
        let reference = Router(graph: graph, edges: edges)
        let router = Router(graph: graph, edges: edges)
        router.hierarchy = ContractionHierarchy(graph: graph)
        var g = SplitMix(state: 21)
        let largest = (0..<graph.nodeCount).filter { graph.component[$0] == 0 }
        // Points near nodes of the largest component, a few metres off the paths.
        let points = (0..<12).map { _ -> Point in
            let v = largest[Int.random(in: 0..<largest.count, using: &g)]
            return Point(lon: graph.lons[v] + Double.random(in: -0.00005...0.00005, using: &g), lat: graph.lats[v] + Double.random(in: -0.00005...0.00005, using: &g))
        }
        let radii = [Double](repeating: 500, count: points.count)
        let table = try router.table(sources: points, sourceSnapMetres: radii, destinations: points, destinationSnapMetres: radii)
        let dijkstraTable = try reference.table(sources: points, sourceSnapMetres: radii, destinations: points, destinationSnapMetres: radii)
        for (i, a) in points.enumerated() {
            for (j, b) in points.enumerated() {
                let route = try reference.route(from: a, to: b)
                let chRoute = try router.route(from: a, to: b)
                #expect(table.metres[i][j].map(Rounding.metres) == Rounding.metres(route.metres), "\(i)→\(j)")
                #expect(dijkstraTable.metres[i][j].map(Rounding.metres) == Rounding.metres(route.metres), "\(i)→\(j)")
                #expect(abs(chRoute.metres - route.metres) < 1e-9 * max(1, route.metres))
                #expect(chRoute.geometry.pointCount == route.geometry.pointCount)
            }
        }
        // The gorilla route of ZooRoutingTests, through the hierarchy: NetworkX's 565.368 m.
        let entrance = Point(lon: 14.4109, lat: 50.1167), pen = Point(lon: 14.40519, lat: 50.11576)
        let viaHierarchy = try router.route(from: entrance, to: pen), viaAStar = try reference.route(from: entrance, to: pen)
        #expect(viaHierarchy.nodes == viaAStar.nodes)
        #expect(viaHierarchy.metres == viaAStar.metres)
        #expect(viaHierarchy.settled < viaAStar.settled)
        // AVOID: the router with a hierarchy answers as A* does (it is A* then).
        let middle = viaAStar.geometry.point(at: viaAStar.geometry.pointCount / 2)
        let d = 0.0004
        let box = Geometry.polygon(Polygon(rings: [[middle.lon - d, middle.lat - d, middle.lon + d, middle.lat - d, middle.lon + d, middle.lat + d,
                                                    middle.lon - d, middle.lat + d, middle.lon - d, middle.lat - d]]))
        let avoid = Router.Avoid(polygons: try PolygonIndex(geometries: [box]), factor: nil)
        let detour = try router.route(from: entrance, to: pen, avoiding: avoid), detourAStar = try reference.route(from: entrance, to: pen, avoiding: avoid)
        #expect(detour.nodes == detourAStar.nodes)
        #expect(detour.metres == detourAStar.metres)
        #expect(detour.metres > viaAStar.metres + 1)
    }
}
