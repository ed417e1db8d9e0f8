import Foundation
import Geometry
import Routing
import SpatialIndex
import TestSupport
import Testing

/// Isochrones against brute force: a full Dijkstra of the test's own (every edge, no bound)
/// decides which vertices are reachable within the limit, and GEOS (prepared `contains`) says
/// which lie inside the polygon. Every reached vertex must be inside. An unreached vertex
/// inside must lie within the boundary tolerance of a reached stretch of path: the buffer
/// (15 m), 1.5 m of simplification and 0.5 m for the local plane (17 m is asked). Reached
/// stretches are computed here too, from the brute-force distances.
@Suite struct IsochroneTests {
    static let buffer = 15.0
    static let tolerance = buffer * 1.1 + 0.5

    struct Outcome: CustomStringConvertible {
        var tested = 0, reached = 0, reachedOutside = 0, unreachedInside = 0, unreachedInsideBeyondTolerance = 0
        var description: String {
            "\(tested) vertices tested, \(reached) reached: \(reachedOutside) reached but outside, \(unreachedInside) unreached inside (within \(IsochroneTests.tolerance) m), \(unreachedInsideBeyondTolerance) beyond"
        }
    }

    /// One isochrone checked: `limit` metres from `start`.
    static func check(_ graph: Graph, router: Router, start: Point, limit: Double) throws -> Outcome {
        let reach = try router.reach(from: start, within: limit)
        let area = try reach.polygon(within: limit, graph: graph, bufferMetres: buffer)
        // Brute force: Dijkstra from the start's edge ends, with their partial lengths.
        let u0 = reach.start.edgeStart, v0 = reach.start.edgeEnd
        var edgeMetres = 0.0
        graph.forEachNeighbour(of: u0) { v, m in if v == v0 { edgeMetres = m } }
        let t = Geodesy.haversine(lon1: graph.lons[u0], lat1: graph.lats[u0], lon2: reach.start.location.lon, lat2: reach.start.location.lat)
            / max(1e-9, Geodesy.haversine(lon1: graph.lons[u0], lat1: graph.lats[u0], lon2: graph.lons[v0], lat2: graph.lats[v0]))
        let fromU = ContractionHierarchyTests.dijkstra(graph, u0, reversed: false)
        let fromV = ContractionHierarchyTests.dijkstra(graph, v0, reversed: false)
        let distance = graph.lons.indices.map { min(fromU[$0] + t * edgeMetres, fromV[$0] + (1 - t) * edgeMetres) }
        // The reached stretches, brute force: from each reached end of every edge.
        var stretches: [(Double, Double, Double, Double)] = []
        for u in graph.lons.indices where distance[u] <= limit {
            graph.forEachNeighbour(of: u) { v, m in
                let f = m > 0 ? min(1, (limit - distance[u]) / m) : 1
                stretches.append((graph.lons[u], graph.lats[u], graph.lons[u] + f * (graph.lons[v] - graph.lons[u]), graph.lats[u] + f * (graph.lats[v] - graph.lats[u])))
            }
        }
        let along = edgeMetres > 0 ? limit / edgeMetres : 1
        let (a, b) = (max(0, t - along), min(1, t + along))
        stretches.append((graph.lons[u0] + a * (graph.lons[v0] - graph.lons[u0]), graph.lats[u0] + a * (graph.lats[v0] - graph.lats[u0]),
                          graph.lons[u0] + b * (graph.lons[v0] - graph.lons[u0]), graph.lats[u0] + b * (graph.lats[v0] - graph.lats[u0])))
        let context = try GEOSContext()
        let prepared = try GEOSPreparedLayer(context: context, geometries: [area])
        let box = area.bbox
        var outcome = Outcome()
        for v in graph.lons.indices {
            let (lon, lat) = (graph.lons[v], graph.lats[v])
            outcome.tested += 1
            let reached = distance[v] <= limit
            if reached { outcome.reached += 1 }
            let inside = try box.contains(lon: lon, lat: lat) && prepared.contains(0, lon: lon, lat: lat)
            if reached && !inside { outcome.reachedOutside += 1 }
            if !reached && inside {
                outcome.unreachedInside += 1
                let nearest = stretches.map { Geodesy.pointToSegment(lon: lon, lat: lat, ax: $0.0, ay: $0.1, bx: $0.2, by: $0.3) }.min() ?? .infinity
                if nearest > tolerance { outcome.unreachedInsideBeyondTolerance += 1 }
            }
        }
        return outcome
    }

    /// Isochrones from random nodes of the largest component, each limit in turn, summed.
    static func checkAll(_ graph: Graph, seed: UInt64, limits: [Double], startsPerLimit: Int, offset: (Double, Double) = (0, 0)) throws -> Outcome {
        let router = try Router(graph: graph)
        var random = SplitMix(state: seed)
        var total = Outcome()
        let largest = graph.lons.indices.filter { graph.component[$0] == 0 }
        for limit in limits {
            for _ in 0..<startsPerLimit {
                let node = largest[Int.random(in: 0..<largest.count, using: &random)]
                let start = Point(lon: graph.lons[node] + offset.0, lat: graph.lats[node] + offset.1)
                let outcome = try check(graph, router: router, start: start, limit: limit)
                total.tested += outcome.tested; total.reached += outcome.reached
                total.reachedOutside += outcome.reachedOutside; total.unreachedInside += outcome.unreachedInside
                total.unreachedInsideBeyondTolerance += outcome.unreachedInsideBeyondTolerance
            }
        }
        return total
    }

    /// 150, 400 and 900 m from 4 points each, a little off the paths.
    @Test func zooIsochronesHoldEveryReachedVertexAndNoFarOne() throws {
        let total = try Self.checkAll(try ZooNetwork.graph.get(), seed: 33, limits: [150, 400, 900], startsPerLimit: 4, offset: (0.0001, 0.00005))
        print("zoo isochrones: \(total)")
        #expect(total.reached > 1000)
        #expect(total.reachedOutside == 0)
        #expect(total.unreachedInsideBeyondTolerance == 0)
    }

    /// 15 minutes at 5 km/h (1,250 m) from 5 points of Andorra's network.
    @Test func andorraIsochronesHoldEveryReachedVertexAndNoFarOne() throws {
        let total = try Self.checkAll(try ContractionHierarchyTests.andorra.get().graph, seed: 1250, limits: [1250], startsPerLimit: 5)
        print("Andorra isochrones: \(total)")
        #expect(total.reached > 1000)
        #expect(total.reachedOutside == 0)
        #expect(total.unreachedInsideBeyondTolerance == 0)
    }

    /// The limit falls inside an edge: the polygon stops there (within the buffer), and a
    /// larger limit reaches along the same edge. A straight path of 1 km: 300 m from its start
    /// the area ends 300 + 15 m along it, not at the next vertex.
    @Test func theLimitCutsAnEdgeWhereItFalls() throws {
        // One edge of 1 km, due north at 14.4°E.
        let metresPerDegree = Geodesy.earthRadius * .pi / 180
        let graph = Graph(lons: [14.4, 14.4], lats: [50, 50 + 1000 / metresPerDegree], edges: [Graph.Edge(u: 0, v: 1, metres: 1000)])
        let router = try Router(graph: graph)
        let reach = try router.reach(from: Point(lon: 14.4, lat: 50), within: 300)
        let area = try reach.polygon(within: 300, graph: graph, bufferMetres: 15)
        let northmost = (area.bbox.maxLat - 50) * metresPerDegree
        #expect(abs(northmost - 315) < 0.5, "the area reaches \(northmost) m north")
        let half = try reach.polygon(within: 100, graph: graph, bufferMetres: 15)
        #expect(abs((half.bbox.maxLat - 50) * metresPerDegree - 115) < 0.5)
        // Nothing south of the start but the buffer's round end.
        #expect(abs((50 - area.bbox.minLat) * metresPerDegree - 15) < 0.5)
    }

    /// Two paths 100 m apart joined only far away: from one, a short limit never reaches the
    /// other, and the polygon does not cover it (no spill across the "river").
    @Test func theAreaDoesNotSpillAcrossAGap() throws {
        let metresPerDegree = Geodesy.earthRadius * .pi / 180
        let dLat = 100 / metresPerDegree, dLon = 1000 / (metresPerDegree * cos(50 * .pi / 180))
        // West bank: (0,0)–(dLon,0); east… the two banks joined by a bridge 1 km away.
        let lons = [14.4, 14.4 + dLon, 14.4, 14.4 + dLon], lats = [50, 50, 50 + dLat, 50 + dLat]
        let graph = Graph(lons: lons, lats: lats, edges: [
            Graph.Edge(u: 0, v: 1, metres: 1000), Graph.Edge(u: 2, v: 3, metres: 1000), Graph.Edge(u: 1, v: 3, metres: 100),
        ])
        let router = try Router(graph: graph)
        let reach = try router.reach(from: Point(lon: 14.4, lat: 50), within: 600)
        let area = try reach.polygon(within: 600, graph: graph, bufferMetres: 15)
        #expect(!area.contains(lon: 14.4, lat: 50 + dLat))
        #expect(!area.contains(lon: 14.4 + dLon / 4, lat: 50 + dLat / 2))
        #expect(area.contains(lon: 14.4 + dLon / 4, lat: 50))
        #expect(reach.nodes.map(\.node) == [0])
    }
}
