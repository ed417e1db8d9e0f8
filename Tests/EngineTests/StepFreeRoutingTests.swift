@testable import Engine
import Foundation
import Geometry
import Routing
import SpatialIndex
import Support
import TestSupport
import Testing

/// The `wheelchair` profile on the zoo's real paths: 45 lines are `kind_detail = steps`, and a
/// step-free route must never use one of their edges. Every answer is checked against a
/// reference written here from scratch: the ends snapped by a linear scan over the allowed
/// edges, then a plain Dijkstra over the graph without the step edges.
@Suite(.validatesStores) struct StepFreeRoutingTests {
    static let entrance = Point(lon: 14.4109, lat: 50.1167)

    /// The steps the network found at load: every consecutive vertex pair of the 45 step lines
    /// (81 edges; no other line runs along any of them).
    @Test func stepEdgesOfTheZoo() throws {
        let network = try DemoStore.get().network("paths")
        #expect(network.steps.count == 81)
        let graph = network.graph
        let all = Set(graph.edges.map { SIMD2(min($0.u, $0.v), max($0.u, $0.v)) })
        for (u, v) in network.steps.pairs {
            #expect(all.contains(SIMD2(u, v)), "step edge \(u)-\(v) is not an edge of the graph")
            #expect(network.steps.contains(v, u))
        }
        #expect(graph.edges.filter { network.steps.contains($0.u, $0.v) }.count == 81)
    }

    /// The paths layer also holds 29 lines of track (26 railway, 3 tram: Tilezen `kind = rail`).
    /// No profile walks along them: the graph's nodes are exactly the nodes of the other lines.
    @Test func railwayAndTramTracksAreNotWalked() throws {
        let snapshot = try DemoStore.get()
        let layer = try snapshot.layer("paths")
        let graph = try snapshot.network("paths").graph
        var trackNodes = Set<Int64>(), pathNodes = Set<Int64>(), tracks: [String: Int] = [:]
        for properties in layer.properties {
            guard case .array(let items)? = try? JSON.parse(properties["node_ids"]?.stringValue ?? "") else { continue }
            let ids = items.compactMap { item -> Int64? in if case .integer(let id) = item { id } else { nil } }
            if properties["kind"]?.stringValue == "rail" {
                trackNodes.formUnion(ids)
                tracks[properties["kind_detail"]?.stringValue ?? "?", default: 0] += 1
            } else {
                pathNodes.formUnion(ids)
            }
        }
        #expect(tracks == ["rail": 26, "tram": 3])
        #expect(trackNodes.subtracting(pathNodes).count == 165)
        #expect(Set(graph.nodeIDs) == pathNodes)
        #expect(graph.nodeCount == 3196)
    }

    /// From the main entrance to the sea lions' pen: on foot the shortest way takes two flights
    /// of steps; the step-free way is 55 m longer, uses none, and is exactly the reference.
    @Test func entranceToTheSeaLionsWithoutSteps() throws {
        let snapshot = try DemoStore.get()
        let network = try snapshot.network("paths")
        let pens = try snapshot.layer("pens")
        let index = try #require((0..<pens.count).first { pens.properties[$0]["name"]?.stringValue == "lachtani" })
        guard case .point(let pen)? = pens.geometries[index] else { Issue.record("the sea lions' pen is not a point"); return }
        let foot = try network.withRouter(metresPerSecond: 5 / 3.6, maxSnapMetres: 500) { router throws(RouteError) in
            try router.route(from: Self.entrance, to: pen)
        }
        let wheelchair = try network.withRouter(profile: .wheelchair, metresPerSecond: 4 / 3.6, maxSnapMetres: 500) { router throws(RouteError) in
            try router.route(from: Self.entrance, to: pen)
        }
        #expect(Self.stepEdges(of: foot, network) == 2)
        #expect(Self.stepEdges(of: wheelchair, network) == 0)
        #expect(wheelchair.metres > foot.metres)
        #expect(abs(foot.metres - 110.416) < 0.001)
        #expect(abs(wheelchair.metres - 165.696) < 0.001)
        #expect(abs(wheelchair.seconds - wheelchair.metres / (4 / 3.6)) < 1e-9)
        // Both against the reference: with every edge, and without the steps.
        let all = try #require(Self.reference(network, from: Self.entrance, to: pen, excluding: .empty))
        let stepFree = try #require(Self.reference(network, from: Self.entrance, to: pen, excluding: network.steps))
        #expect(abs(foot.metres - all) < 0.0005)
        #expect(abs(wheelchair.metres - stepFree) < 0.0005)
        // The drawn line is as long as the answer.
        #expect(abs(Geodesy.length(of: wheelchair.geometry.coordinates) - wheelchair.metres) < 0.01)
    }

    /// Random pairs of zoo nodes (stairs' own vertices included): 200 in the largest component
    /// and 100 anywhere. The wheelchair route equals the reference without steps to the
    /// millimetre, uses no step edge, and is NoRoute exactly when the reference finds no path.
    @Test func randomPairsEqualTheReference() throws {
        let network = try DemoStore.get().network("paths")
        let graph = network.graph
        let largest = (0..<graph.nodeCount).filter { graph.component[$0] == 0 }
        var generator = SplitMix(state: 11)
        var routed = 0, noRoute = 0, onlySteps = 0, longer = 0
        for pair in 0..<300 {
            let pool = pair < 200 ? largest : Array(0..<graph.nodeCount)
            let s = pool[Int.random(in: 0..<pool.count, using: &generator)], t = pool[Int.random(in: 0..<pool.count, using: &generator)]
            let from = Point(lon: graph.lons[s], lat: graph.lats[s]), to = Point(lon: graph.lons[t], lat: graph.lats[t])
            let expected = Self.reference(network, from: from, to: to, excluding: network.steps)
            do {
                let route = try network.withRouter(profile: .wheelchair, metresPerSecond: 4 / 3.6, maxSnapMetres: 500) { router throws(RouteError) in
                    try router.route(from: from, to: to)
                }
                routed += 1
                #expect(expected != nil, "\(s) → \(t): routed \(route.metres) m where the reference finds no path")
                if let expected { #expect(abs(route.metres - expected) < 0.0005, "\(s) → \(t)") }
                #expect(Self.stepEdges(of: route, network) == 0, "\(s) → \(t)")
                if let all = Self.reference(network, from: from, to: to, excluding: .empty), route.metres > all + 0.0005 { longer += 1 }
            } catch {
                #expect(error.code == "NoRoute", "\(s) → \(t): \(error)")
                #expect(expected == nil, "\(s) → \(t): \(error), the reference has \(expected ?? 0) m")
                noRoute += 1
                if error.description.contains("only paths with steps") { onlySteps += 1 }
            }
        }
        print("step-free cross-check: \(routed) routed (\(longer) longer than on foot), \(noRoute) NoRoute (\(onlySteps) only by steps)")
        #expect(routed + noRoute == 300)
        #expect(routed > 150 && longer > 20 && onlySteps > 0)
    }

    /// AVOID and the profile together: a box forbidden around the middle of the step-free route
    /// gives a longer route that keeps off both the box and the steps, equal to the reference
    /// without either.
    @Test func stepsAndAvoidedAreaTogether() throws {
        let network = try DemoStore.get().network("paths")
        let graph = network.graph
        let start = Self.entrance, end = Point(lon: 14.40519, lat: 50.11576)
        func route(_ avoid: Router.Avoid?) throws(RouteError) -> Route {
            try network.withRouter(profile: .wheelchair, metresPerSecond: 4 / 3.6, maxSnapMetres: 500) { router throws(RouteError) in
                try router.route(from: start, to: end, avoiding: avoid)
            }
        }
        let plain = try route(nil)
        let middle = plain.geometry.point(at: plain.geometry.pointCount / 2)
        let d = 0.0004
        let ring: [Double] = [middle.lon - d, middle.lat - d, middle.lon + d, middle.lat - d, middle.lon + d, middle.lat + d,
                              middle.lon - d, middle.lat + d, middle.lon - d, middle.lat - d]
        let zone = try PolygonIndex(geometries: [.polygon(Polygon(rings: [ring]))])
        let avoided = try route(Router.Avoid(polygons: zone, factor: nil))
        #expect(avoided.metres > plain.metres)
        #expect(Self.stepEdges(of: avoided, network) == 0)
        func inZone(_ u: Int, _ v: Int) -> Bool {
            zone.firstContaining(lon: (graph.lons[u] + graph.lons[v]) / 2, lat: (graph.lats[u] + graph.lats[v]) / 2) != nil
        }
        let outside = EdgeSet(pairs: graph.edges.filter { inZone($0.u, $0.v) || network.steps.contains($0.u, $0.v) }.map { ($0.u, $0.v) },
                              nodeCount: graph.nodeCount)
        // The router snaps past the steps only (an avoided area does not move the ends).
        let expected = try #require(Self.reference(network, from: start, to: end, excluding: outside, snappingPast: network.steps))
        #expect(abs(avoided.metres - expected) < 0.0005)
        print("wheelchair, entrance → gorillas: \(plain.metres) m; avoiding a box too: \(avoided.metres) m")
    }

    /// A piece of path that only steps join to the rest: NoRoute, and the reason says so.
    @Test func onlyStepsConnect() throws {
        let network = try DemoStore.get().network("paths")
        let graph = network.graph
        let island = try #require(Self.stepOnlyIsland(network))
        let start = Point(lon: graph.lons[island.inside], lat: graph.lats[island.inside])
        let end = Point(lon: graph.lons[island.outside], lat: graph.lats[island.outside])
        print("only steps join (\(start.lon) \(start.lat)) and (\(end.lon) \(end.lat))")
        // On foot it is a route (here straight down the flight of steps) …
        let before = try network.withRouter(metresPerSecond: 5 / 3.6, maxSnapMetres: 500) { router throws(RouteError) in try router.route(from: start, to: end) }
        let all = try #require(Self.reference(network, from: start, to: end, excluding: .empty))
        #expect(abs(before.metres - all) < 0.0005)
        // … and step-free it is not.
        #expect(throws: RouteError.noRoute(reason: "no path without steps connects the two points: only paths with steps join them")) {
            try network.withRouter(profile: .wheelchair, metresPerSecond: 4 / 3.6, maxSnapMetres: 500) { router throws(RouteError) in try router.route(from: start, to: end) }
        }
        #expect(Self.reference(network, from: start, to: end, excluding: network.steps) == nil)
        // Pooled routers forget the profile: the next foot route takes the steps again.
        let after = try network.withRouter(metresPerSecond: 5 / 3.6, maxSnapMetres: 500) { router throws(RouteError) in try router.route(from: start, to: end) }
        #expect(after.metres == before.metres)
    }

    // MARK: - Reference

    /// Step edges a route walks between consecutive nodes.
    static func stepEdges(of route: Route, _ network: Network) -> Int {
        let index = Dictionary(network.graph.nodeIDs.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        let nodes = route.nodeIDs.compactMap { index[$0] }
        return zip(nodes, nodes.dropFirst()).filter { network.steps.contains($0, $1) }.count
    }

    /// Where a point joins the allowed edges: the nearest by a scan of all of them.
    static func snap(_ graph: Graph, _ p: Point, excluding: EdgeSet) -> (edge: Graph.Edge, t: Double)? {
        var best: (edge: Graph.Edge, metres: Double)?
        for e in graph.edges where !excluding.contains(e.u, e.v) {
            let d = Geodesy.pointToSegment(lon: p.lon, lat: p.lat, ax: graph.lons[e.u], ay: graph.lats[e.u], bx: graph.lons[e.v], by: graph.lats[e.v])
            if d < (best?.metres ?? .infinity) { best = (e, d) }
        }
        guard let best else { return nil }
        // The fraction along the edge in a local equirectangular plane, as a GIS would.
        let k = cos(p.lat * .pi / 180)
        let ax = graph.lons[best.edge.u] * k, ay = graph.lats[best.edge.u], bx = graph.lons[best.edge.v] * k, by = graph.lats[best.edge.v]
        let dx: Double = bx - ax, dy: Double = by - ay
        let length2: Double = dx * dx + dy * dy
        let along: Double = (p.lon * k - ax) * dx + (p.lat - ay) * dy
        let t: Double = length2 > 0 ? max(0, min(1, along / length2)) : 0
        return (best.edge, t)
    }

    /// The shortest walk between two points without the excluded edges, or nil; the ends join
    /// the network past `snappingPast` (by default the excluded edges).
    static func reference(_ network: Network, from: Point, to: Point, excluding: EdgeSet, snappingPast: EdgeSet? = nil) -> Double? {
        let graph = network.graph
        let skipped = snappingPast ?? excluding
        guard let a = snap(graph, from, excluding: skipped), let b = snap(graph, to, excluding: skipped) else { return nil }
        let distance = dijkstra(graph, from: [(a.edge.u, a.t * a.edge.metres), (a.edge.v, (1 - a.t) * a.edge.metres)], excluding: excluding)
        var best = min(distance[b.edge.u] + b.t * b.edge.metres, distance[b.edge.v] + (1 - b.t) * b.edge.metres)
        if (a.edge.u, a.edge.v) == (b.edge.u, b.edge.v) && !excluding.contains(a.edge.u, a.edge.v) { best = min(best, abs(a.t - b.t) * a.edge.metres) }
        return best.isFinite ? best : nil
    }

    /// Textbook Dijkstra with a binary heap over the undirected edges, skipping the excluded.
    static func dijkstra(_ graph: Graph, from sources: [(Int, Double)], excluding: EdgeSet) -> [Double] {
        var adjacency = [[(Int, Double)]](repeating: [], count: graph.nodeCount)
        for e in graph.edges where !excluding.contains(e.u, e.v) {
            adjacency[e.u].append((e.v, e.metres))
            adjacency[e.v].append((e.u, e.metres))
        }
        var distance = [Double](repeating: .infinity, count: graph.nodeCount)
        var heap: [(Double, Int)] = []
        func push(_ item: (Double, Int)) {
            heap.append(item)
            var i = heap.count - 1
            while i > 0, heap[(i - 1) / 2].0 > heap[i].0 { heap.swapAt(i, (i - 1) / 2); i = (i - 1) / 2 }
        }
        func pop() -> (Double, Int)? {
            guard !heap.isEmpty else { return nil }
            heap.swapAt(0, heap.count - 1)
            let top = heap.removeLast()
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < heap.count, heap[l].0 < heap[m].0 { m = l }
                if r < heap.count, heap[r].0 < heap[m].0 { m = r }
                if m == i { break }
                heap.swapAt(i, m)
                i = m
            }
            return top
        }
        for (node, cost) in sources where cost < distance[node] {
            distance[node] = cost
            push((cost, node))
        }
        while let (d, u) = pop() {
            guard d <= distance[u] else { continue }
            for (v, metres) in adjacency[u] where d + metres < distance[v] {
                distance[v] = d + metres
                push((d + metres, v))
            }
        }
        return distance
    }

    /// A node on an allowed edge that only steps join to another node on an allowed edge of the
    /// same component: step-free components (union-find over the allowed edges) that differ.
    static func stepOnlyIsland(_ network: Network) -> (inside: Int, outside: Int)? {
        let graph = network.graph
        var parent = Array(0..<graph.nodeCount)
        func root(_ x: Int) -> Int {
            var x = x
            while parent[x] != x { parent[x] = parent[parent[x]]; x = parent[x] }
            return x
        }
        var hasAllowed = [Bool](repeating: false, count: graph.nodeCount)
        for e in graph.edges where !network.steps.contains(e.u, e.v) {
            hasAllowed[e.u] = true
            hasAllowed[e.v] = true
            let a = root(e.u), b = root(e.v)
            if a != b { parent[max(a, b)] = min(a, b) }
        }
        // Across each step edge whose two ends both have allowed edges.
        for (u, v) in network.steps.pairs where hasAllowed[u] && hasAllowed[v] && root(u) != root(v) {
            // Prefer the smaller side as the island, for a short example.
            let size = { (r: Int) in (0..<graph.nodeCount).filter { root($0) == r }.count }
            return size(root(u)) <= size(root(v)) ? (u, v) : (v, u)
        }
        return nil
    }
}
