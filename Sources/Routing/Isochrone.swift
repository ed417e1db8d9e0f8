// Isochrones: what a walker reaches from a point within a time or a distance.
//
// One Dijkstra from the start's snapped point settles every node within the largest limit
// (the shortest-path tree, bounded). Each limit then takes the reached part of every edge: a
// whole edge where its cost from either end fits, else the stretch from a reached end up to the
// exact point where the limit falls inside it. The polygon is those pieces buffered by a few
// metres (in a local plane around the start), so it follows the paths: it does not spill across
// a river or a fenced enclosure that no reached path crosses. Every reached node lies on a
// reached piece, so it is inside; an unreached node is inside only when it lies within the
// buffer of a reached piece (the polygon's boundary tolerance).

import Foundation
import Geometry

/// The network reached from a point within a bound: the tree's nodes with their costs, and the
/// out-edges of each, from which the reached pieces of any smaller bound follow.
public struct Reach: Sendable {
    /// Where the start joined the network.
    public let start: Waypoint
    /// The bound searched, in the search's cost (metres, times the avoided areas' factors).
    public let limit: Double
    /// Every node within `limit`, with its cost, in the order settled.
    public let nodes: [ReachedNode]
    /// The start's edge: its ends, its cost (weight), and the start's fraction along it.
    let startEdge: (u: Int, v: Int, weight: Double, t: Double)
    /// Per reached node's allowed out-edge: its ends, the cost at `u`, and its weight.
    let edges: [(u: Int32, v: Int32, costAtU: Double, weight: Double)]

    public struct ReachedNode: Sendable, Equatable {
        public var node: Int
        public var cost: Double
    }

    /// The cost of the walk to a point of the network (where a feature joins it), when it is
    /// within `limit`: through either end of its edge, or straight along the start's own edge.
    /// `costs` is `nodeCosts()`, built once for many points.
    public func cost(to point: Waypoint, costs: [Int: Double], graph: Graph) -> Double? {
        var best = Double.infinity
        for node in [point.edgeStart, point.edgeEnd] {
            guard let reached = costs[node] else { continue }
            best = min(best, reached + Geodesy.haversine(lon1: point.location.lon, lat1: point.location.lat, lon2: graph.lons[node], lat2: graph.lats[node]))
        }
        if Set([point.edgeStart, point.edgeEnd]) == Set([startEdge.u, startEdge.v]) {
            best = min(best, Geodesy.haversine(lon1: start.location.lon, lat1: start.location.lat, lon2: point.location.lon, lat2: point.location.lat))
        }
        return best <= limit ? best : nil
    }

    /// Each reached node's cost, by node.
    public func nodeCosts() -> [Int: Double] {
        Dictionary(nodes.map { ($0.node, $0.cost) }, uniquingKeysWith: min)
    }

    /// The reached pieces within `bound` (≤ `limit`), as segments in lon/lat: each edge at most
    /// once whole, else the stretches from its reached ends.
    public func segments(within bound: Double, graph: Graph) -> [(Point, Point)] {
        var pieces: [(Point, Point)] = []
        // A node's own coordinates at t = 0 and 1, bit for bit, so that pieces meeting there
        // are merged into one line before the buffer.
        func point(_ u: Int, _ v: Int, _ t: Double) -> Point {
            if t == 0 { return Point(lon: graph.lons[u], lat: graph.lats[u]) }
            if t == 1 { return Point(lon: graph.lons[v], lat: graph.lats[v]) }
            return Point(lon: graph.lons[u] + t * (graph.lons[v] - graph.lons[u]), lat: graph.lats[u] + t * (graph.lats[v] - graph.lats[u]))
        }
        // Per edge (lower node first), how far along it is reached from each end: one piece
        // for the edge, or one from each end, never two that overlap.
        var reached: [UInt64: (fromLow: Double, fromHigh: Double)] = [:]
        for e in edges where e.costAtU <= bound {
            let u = Int(e.u), v = Int(e.v)
            let reach = e.weight > 0 ? min(1, (bound - e.costAtU) / e.weight) : 1
            guard reach > 0 else { continue }
            let key = UInt64(min(u, v)) << 32 | UInt64(max(u, v))
            var entry = reached[key] ?? (0, 0)
            if u < v { entry.fromLow = max(entry.fromLow, reach) } else { entry.fromHigh = max(entry.fromHigh, reach) }
            reached[key] = entry
        }
        for (key, entry) in reached {
            let low = Int(key >> 32), high = Int(key & 0xFFFF_FFFF)
            if entry.fromLow + entry.fromHigh >= 1 {
                pieces.append((point(low, high, 0), point(low, high, 1)))
            } else {
                if entry.fromLow > 0 { pieces.append((point(low, high, 0), point(low, high, entry.fromLow))) }
                if entry.fromHigh > 0 { pieces.append((point(low, high, 1 - entry.fromHigh), point(low, high, 1))) }
            }
        }
        // The start's own edge, both ways from the start (the ends' pieces may not come back
        // to it when the bound is short).
        let (u, v, weight, t) = startEdge
        let along = weight > 0 ? bound / weight : 1
        pieces.append((point(u, v, max(0, t - along)), point(u, v, min(1, t + along))))
        return pieces
    }

    /// The reached area within `bound`: the pieces, joined and simplified within a tenth of the
    /// buffer, buffered by `bufferMetres` (round ends and joins of two segments a quarter circle:
    /// a coarse circle, and a third of the time of four), as a polygon or multipolygon in lon/lat.
    public func polygon(within bound: Double, graph: Graph, bufferMetres: Double) throws(GEOSError) -> Geometry {
        let plane = LocalPlane(origin: start.location)
        var lines: [[Double]] = []
        for (a, b) in segments(within: bound, graph: graph) {
            let (ax, ay) = plane.project(a), (bx, by) = plane.project(b)
            // A piece of no length (the start on a node, a bound of 0) is buffered as a dot.
            lines.append(ax == bx && ay == by ? [ax, ay, ax + 1e-6, ay] : [ax, ay, bx, by])
        }
        let context = try GEOSContext()
        let area = try context.buffer(.multiLineString(MultiLineString(lines: lines)), distance: bufferMetres, quadrantSegments: 2,
                                      inputTolerance: bufferMetres / 10)
        return plane.unproject(area)
    }
}

/// An equirectangular plane in metres around a point: over a walk's few kilometres its scale
/// error is below 0.1% (the cosine of the latitude changes that little), far under a buffer's.
struct LocalPlane {
    let origin: Point
    let metresPerDegreeLat = Geodesy.earthRadius * .pi / 180
    let metresPerDegreeLon: Double

    init(origin: Point) {
        self.origin = origin
        metresPerDegreeLon = Geodesy.earthRadius * .pi / 180 * cos(origin.lat * .pi / 180)
    }

    func project(_ p: Point) -> (Double, Double) {
        ((p.lon - origin.lon) * metresPerDegreeLon, (p.lat - origin.lat) * metresPerDegreeLat)
    }

    func unproject(_ geometry: Geometry) -> Geometry {
        func back(_ flat: [Double]) -> [Double] {
            var out = flat
            var i = 0
            while i + 1 < out.count {
                out[i] = origin.lon + flat[i] / metresPerDegreeLon
                out[i + 1] = origin.lat + flat[i + 1] / metresPerDegreeLat
                i += 2
            }
            return out
        }
        switch geometry {
        case .polygon(let p): return .polygon(Polygon(coordinates: back(p.coordinates), ringOffsets: p.ringOffsets))
        case .multiPolygon(let m):
            return .multiPolygon(MultiPolygon(polygons: m.polygons.map { Polygon(coordinates: back($0.coordinates), ringOffsets: $0.ringOffsets) }))
        case .collection(let parts): return .collection(parts.map(unproject))
        default: return geometry
        }
    }
}

extension Router {
    /// Every node reachable from `start` within `limit` (cost: metres, times the avoided
    /// areas' factors), by one bounded Dijkstra; the profile's forbidden edges are never walked.
    public func reach(from start: Point, within limit: Double, avoiding avoid: Avoid? = nil) throws(RouteError) -> Reach {
        do {
            _ = try Point.checked(lon: start.lon, lat: start.lat)
        } catch {
            throw .invalidPoint("the start: \(error)")
        }
        guard limit.isFinite, limit >= 0 else { throw .invalidPoint("the limit must be a finite number ≥ 0, got \(limit)") }
        guard let a = snap(lon: start.lon, lat: start.lat, maxMetres: maxSnapMetres) else {
            throw .noSegment(waypoint: 0, nearestMetres: snap(lon: start.lon, lat: start.lat, maxMetres: .infinity)?.metres, maxSnapMetres: maxSnapMetres)
        }
        let edgeFactor = self.edgeFactor(avoiding: avoid)
        // The start's edge weighs what the search's weights say (its factor in an avoided area).
        let startFactor = edgeFactor.map { $0(a.u, a.v) ?? 1 } ?? 1
        let startWeight = a.edgeMetres * startFactor
        let settled: [(node: Int, cost: Double)]
        do {
            settled = try search.settle(from: [(a.u, a.t * startWeight), (a.v, (1 - a.t) * startWeight)], within: limit, edgeFactor: edgeFactor)
        } catch {
            if case .tooMuchWork(let count) = error { throw .tooMuchWork(settled: count) }
            settled = []
        }
        var edges: [(u: Int32, v: Int32, costAtU: Double, weight: Double)] = []
        for (u, cost) in settled {
            graph.forEachNeighbour(of: u) { v, metres in
                var weight = metres
                if let edgeFactor {
                    guard let factor = edgeFactor(u, v) else { return }
                    weight *= factor
                }
                edges.append((Int32(u), Int32(v), cost, weight))
            }
        }
        return Reach(start: a.waypoint(for: start), limit: limit, nodes: settled.map { Reach.ReachedNode(node: $0.node, cost: $0.cost) },
                     startEdge: (a.u, a.v, startWeight, a.t), edges: edges)
    }
}
