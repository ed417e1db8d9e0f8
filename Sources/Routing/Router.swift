// Routes between map points: each point snaps to the nearest point on the nearest edge (not the
// nearest node), through an R-tree over the edges; the search starts from both ends of that
// edge with the partial lengths as starting costs. Answers follow the shape routing clients
// know (OSRM, GraphHopper): metres, seconds, a LineString from snapped start to snapped end,
// the waypoints with their snap distances, and the nodes passed.

import Foundation
import Geometry
import SpatialIndex
import Support

public struct Route: Sendable {
    public var metres: Double
    public var seconds: Double
    /// From the snapped start to the snapped end, lon/lat.
    public var geometry: LineString
    public var waypoints: [Waypoint]
    /// The source ids (OSM node ids) of the graph nodes passed, in order.
    public var nodeIDs: [Int64]
    /// The same nodes as indices into the graph (for naming the edges walked).
    public var nodes: [Int]
    /// Nodes the search settled: its work.
    public var settled: Int
}

public struct Waypoint: Sendable, Equatable {
    /// The point asked for.
    public var input: Point
    /// Where it joins the network.
    public var location: Point
    /// Great-circle metres from `input` to `location`.
    public var snapMetres: Double
    /// The edge it joins, as the graph's node indices.
    public var edgeStart: Int
    public var edgeEnd: Int
}

public enum RouteError: CategorizedError, Equatable, Sendable {
    /// No edge within the snap radius of a waypoint (OSRM's NoSegment): 0 the start, 1 the
    /// destination.
    case noSegment(waypoint: Int, nearestMetres: Double?, maxSnapMetres: Double)
    /// The same for coordinate `coordinate` (from 0) of a request of many (a table, a route
    /// through several points).
    case noSegmentAt(coordinate: Int, nearestMetres: Double?, maxSnapMetres: Double)
    /// The waypoints lie in different parts of the network (OSRM's NoRoute).
    case noRoute(reason: String)
    case tooMuchWork(settled: Int)
    case invalidPoint(String)
    /// An end given as features matched none: 0 the start, 1 the destination.
    case noTarget(waypoint: Int)
    /// More points than a request may hold (a table's sources or destinations, a route's
    /// waypoints): OSRM's TooBig.
    case tooManyPoints(what: String, count: Int, limit: Int)

    public var code: String {
        switch self {
        case .noSegment, .noSegmentAt: "NoSegment"
        case .noRoute: "NoRoute"
        case .tooMuchWork, .tooManyPoints: "TooBig"
        case .invalidPoint: "InvalidValue"
        case .noTarget: "NoTarget"
        }
    }

    public var category: ErrorCategory {
        switch self {
        case .invalidPoint: .invalid
        case .tooMuchWork, .tooManyPoints: .limit
        case .noSegment, .noSegmentAt, .noRoute, .noTarget: .impossible
        }
    }

    /// The end the error is about (0 the start, 1 the destination), for pointing at it.
    public var waypoint: Int? {
        switch self {
        case .noSegment(let waypoint, _, _), .noTarget(let waypoint): waypoint
        case .noSegmentAt, .noRoute, .tooMuchWork, .invalidPoint, .tooManyPoints: nil
        }
    }

    public var description: String {
        switch self {
        case .noSegment(let waypoint, let nearest, let max):
            let which = waypoint == 0 ? "the start" : "the destination"
            return "\(which) is not within \(Rounding.wholeMetres(max)) m of the network" + (nearest.map { " (the nearest path is \(Rounding.wholeMetres($0)) m away)" } ?? "")
        case .noSegmentAt(let coordinate, let nearest, let max):
            return "coordinate \(coordinate) is not within \(Rounding.wholeMetres(max)) m of the network" + (nearest.map { " (the nearest path is \(Rounding.wholeMetres($0)) m away)" } ?? "")
        case .noRoute(let reason): return "no route: \(reason)"
        case .tooMuchWork(let settled): return "the route search gave up after settling \(settled) nodes"
        case .invalidPoint(let message): return message
        case .noTarget(let waypoint): return "\(waypoint == 0 ? "the start" : "the destination") matched no feature"
        case .tooManyPoints(let what, let count, let limit): return "\(count) \(what), more than the limit of \(limit)"
        }
    }
}

/// Walking distances between sources and destinations, with where each point joined the
/// network.
public struct DistanceTable: Sendable {
    public var sources: [Waypoint]
    public var destinations: [Waypoint]
    /// `metres[i][j]` from source i to destination j; nil when no path joins them.
    public var metres: [[Double?]]
}

/// A point where a query joins the network: on edge (u, v) at fraction `t` from u.
struct Snap {
    var u: Int
    var v: Int
    var t: Double
    var edgeMetres: Double
    var location: Point
    var metres: Double

    func waypoint(for input: Point) -> Waypoint {
        Waypoint(input: input, location: location, snapMetres: metres, edgeStart: u, edgeEnd: v)
    }
}

/// The network's edges for snapping, each undirected edge once, with an R-tree over their boxes.
/// Immutable and built once per graph: every router of the graph shares it (its arrays are
/// copy-on-write, so sharing copies nothing).
public struct EdgeIndex: Sendable {
    let edgeU: [Int32]
    let edgeV: [Int32]
    let edgeMetres: [Double]
    let tree: PackedRTree

    /// Refuses a graph with a NaN or infinite node coordinate (`.nonFinite(item:)` names the
    /// node): the readers check positions first, so this is the index's own defence.
    public init(graph: Graph) throws(SpatialIndexError) {
        for i in 0..<graph.nodeCount where !(graph.lons[i].isFinite && graph.lats[i].isFinite) { throw .nonFinite(item: i) }
        var us: [Int32] = [], vs: [Int32] = [], ms: [Double] = [], boxes: [BBox] = []
        for e in graph.edges {
            us.append(Int32(e.u)); vs.append(Int32(e.v)); ms.append(e.metres)
            var box = BBox.empty
            box.extend(lon: graph.lons[e.u], lat: graph.lats[e.u])
            box.extend(lon: graph.lons[e.v], lat: graph.lats[e.v])
            boxes.append(box)
        }
        edgeU = us
        edgeV = vs
        edgeMetres = ms
        tree = try PackedRTree(boxes: boxes)
    }
}

/// Routes over one graph. A router keeps the search's scratch arrays, so it serves one route at a
/// time; concurrent routes use one router each over the same `EdgeIndex`.
public final class Router {
    public let graph: Graph
    private let edges: EdgeIndex
    let search: Search
    /// Walking speed, m/s (5 km/h by default).
    public var metresPerSecond: Double
    public var maxSnapMetres: Double
    /// How far a route's destination may lie from the network; nil: `maxSnapMetres`.
    public var maxEndSnapMetres: Double?
    /// Edges a route must not use (a profile's: steps for wheelchairs), or nil for every edge.
    /// Neither end snaps onto one, and the search never walks one.
    public var forbidden: Forbidden?
    /// The contraction hierarchy that routes and tables run on, built from this graph less
    /// exactly the `forbidden` edges; nil: A* (and one Dijkstra per source for tables). Routes
    /// that avoid areas always use A*: their penalties change the edges' weights.
    public var hierarchy: ContractionHierarchy? {
        didSet {
            guard let hierarchy, hierarchy.nodeCount == graph.nodeCount else { return }
            if let hierarchySearch { hierarchySearch.hierarchy = hierarchy } else { hierarchySearch = HierarchySearch(hierarchy: hierarchy) }
        }
    }
    private var hierarchySearch: HierarchySearch?
    /// The search a query without penalties runs: the hierarchy's when there is one.
    private var plainSearch: HierarchySearch? {
        // A hierarchy of another graph (another node count) is not used.
        guard let hierarchy, hierarchy.nodeCount == graph.nodeCount, let hierarchySearch else { return nil }
        hierarchySearch.maxSettled = search.maxSettled
        return hierarchySearch
    }
    /// The search's bounds on work: nodes settled and seconds (`tooMuchWork` past either).
    public var maxSettled: Int {
        get { search.maxSettled }
        set { search.maxSettled = newValue }
    }
    public var maxSeconds: Double {
        get { search.maxSeconds }
        set { search.maxSeconds = newValue }
    }
    /// Asked inside each search with its clock (`Search.shouldStop`).
    public var shouldStop: (() -> Bool)? {
        get { search.shouldStop }
        set { search.shouldStop = newValue }
    }

    /// Edges a profile forbids, and what they are (for the NoRoute reason).
    public struct Forbidden: Sendable {
        public var edges: EdgeSet
        /// A plural noun: "steps".
        public var what: String
        public init(edges: EdgeSet, what: String) {
            self.edges = edges
            self.what = what
        }
    }

    /// A router with its own edge index, which fails only for a graph with a NaN or infinite
    /// node coordinate.
    public convenience init(graph: Graph, metresPerSecond: Double = 5.0 / 3.6, maxSnapMetres: Double = 500) throws(SpatialIndexError) {
        self.init(graph: graph, edges: try EdgeIndex(graph: graph), metresPerSecond: metresPerSecond, maxSnapMetres: maxSnapMetres)
    }

    /// A router over a graph's shared edge index.
    public init(graph: Graph, edges: EdgeIndex, metresPerSecond: Double = 5.0 / 3.6, maxSnapMetres: Double = 500) {
        self.graph = graph
        self.edges = edges
        self.metresPerSecond = metresPerSecond
        self.maxSnapMetres = maxSnapMetres
        search = Search(graph: graph)
    }

    /// The point on the network nearest to (lon, lat), or nil beyond `maxMetres`. Forbidden
    /// edges are skipped: a wheelchair user must not be placed on a flight of steps.
    func snap(lon: Double, lat: Double, maxMetres: Double) -> Snap? {
        snaps(lon: lon, lat: lat, count: 1, maxMetres: maxMetres).first
    }

    /// Where (lon, lat) would join each of the `count` edges nearest to it within `maxMetres`,
    /// nearest first; forbidden edges skipped.
    func snaps(lon: Double, lat: Double, count: Int, maxMetres: Double) -> [Snap] {
        let edges = self.edges, graph = self.graph
        let allowed: ((Int) -> Bool)? = forbidden.map { forbidden in
            let set = forbidden.edges
            return { e in !set.contains(Int(edges.edgeU[e]), Int(edges.edgeV[e])) }
        }
        let found = edges.tree.nearest(
            k: count, maxDistance: maxMetres,
            boxDistance: { SphericalDistance.toBox(lon: lon, lat: lat, $0) },
            itemDistance: { e in
                let u = Int(edges.edgeU[e]), v = Int(edges.edgeV[e])
                return Geodesy.pointToSegment(lon: lon, lat: lat, ax: graph.lons[u], ay: graph.lats[u], bx: graph.lons[v], by: graph.lats[v])
            },
            filter: allowed)
        return found.map { snap(lon: lon, lat: lat, onEdge: $0.index) }
    }

    /// The `count` edges nearest to the point within `maxMetres`, nearest first, each as the
    /// point where the position would join it (OSRM's nearest service).
    public func nearest(to point: Point, count: Int, maxMetres: Double) -> [Waypoint] {
        snaps(lon: point.lon, lat: point.lat, count: count, maxMetres: maxMetres).map { $0.waypoint(for: point) }
    }

    /// Where (lon, lat) joins edge `e` of the edge index: the foot of the perpendicular,
    /// clamped to the edge.
    private func snap(lon: Double, lat: Double, onEdge e: Int) -> Snap {
        let u = Int(edges.edgeU[e]), v = Int(edges.edgeV[e])
        // The foot's fraction along the edge, in a local equirectangular plane (edges are
        // metres long: the plane's error is far below a millimetre).
        let k = cos(lat * .pi / 180)
        let ax = graph.lons[u] * k, ay = graph.lats[u], bx = graph.lons[v] * k, by = graph.lats[v]
        let dx = bx - ax, dy = by - ay
        let length2 = dx * dx + dy * dy
        let t = length2 > 0 ? max(0, min(1, ((lon * k - ax) * dx + (lat - ay) * dy) / length2)) : 0
        let location = Point(lon: graph.lons[u] + t * (graph.lons[v] - graph.lons[u]), lat: graph.lats[u] + t * (graph.lats[v] - graph.lats[u]))
        return Snap(u: u, v: v, t: t, edgeMetres: edges.edgeMetres[e], location: location,
                    metres: Geodesy.haversine(lon1: lon, lat1: lat, lon2: location.lon, lat2: location.lat))
    }

    /// Walking distances between every source and every destination (OSRM's table service).
    /// Each point snaps once (within its own radius); then, with a hierarchy, one upward search
    /// per destination fills buckets that one upward search per source reads (N + M searches
    /// of a few dozen nodes each), and without one, one Dijkstra per source reaches every
    /// destination: N searches for an N×M table rather than N×M routes. Each distance is the
    /// one `route(from:to:)` answers for the pair: the same snapping, the same partial edges at
    /// both ends, the same shortcut along a shared edge.
    /// `shouldStop` is asked before each search (a request's deadline): `tooMuchWork` when it
    /// says so. `closed` edges are kept off too (then by Dijkstra: the hierarchy has them).
    public func table(sources: [Point], sourceSnapMetres: [Double], destinations: [Point], destinationSnapMetres: [Double],
                      closed: EdgeSet = .empty, shouldStop: () -> Bool = { false }) throws(RouteError) -> DistanceTable {
        func snapAll(_ points: [Point], _ radii: [Double], first: Int) throws(RouteError) -> [Snap] {
            var snapped: [Snap] = []
            for (i, p) in points.enumerated() {
                do {
                    _ = try Point.checked(lon: p.lon, lat: p.lat)
                } catch {
                    throw .invalidPoint("coordinate \(first + i): \(error)")
                }
                let radius = i < radii.count ? radii[i] : maxSnapMetres
                guard let s = snap(lon: p.lon, lat: p.lat, maxMetres: radius) else {
                    throw .noSegmentAt(coordinate: first + i, nearestMetres: snap(lon: p.lon, lat: p.lat, maxMetres: .infinity)?.metres, maxSnapMetres: radius)
                }
                snapped.append(s)
            }
            return snapped
        }
        let from = try snapAll(sources, sourceSnapMetres, first: 0)
        let to = try snapAll(destinations, destinationSnapMetres, first: sources.count)
        let forbiddenEdges = forbidden.flatMap { $0.edges.isEmpty ? nil : $0.edges }
        var edgeFactor: ((Int, Int) -> Double?)? = forbiddenEdges.map { set in { u, v in set.contains(u, v) ? nil : 1 } }
        if !closed.isEmpty {
            let profile = edgeFactor
            edgeFactor = { u, v in closed.contains(u, v) ? nil : profile?(u, v) ?? 1 }
        }
        let flat: [Double]
        if closed.isEmpty, let byHierarchy = try hierarchyTable(from: from, to: to, shouldStop: shouldStop) {
            flat = byHierarchy
        } else {
            flat = try dijkstraTable(from: from, to: to, edgeFactor: edgeFactor, shouldStop: shouldStop)
        }
        // Along the shared edge, as `route` does, unless the profile forbids it.
        var metres: [[Double?]] = []
        metres.reserveCapacity(from.count)
        for (i, a) in from.enumerated() {
            var row: [Double?] = []
            row.reserveCapacity(to.count)
            for (j, b) in to.enumerated() {
                var best = flat[i * to.count + j]
                if (b.u, b.v) == (a.u, a.v), !(forbiddenEdges?.contains(a.u, a.v) ?? false), !closed.contains(a.u, a.v) {
                    best = min(best, abs(b.t - a.t) * a.edgeMetres)
                }
                row.append(best.isFinite ? best : nil)
            }
            metres.append(row)
        }
        return DistanceTable(sources: zip(from, sources).map { $0.waypoint(for: $1) },
                             destinations: zip(to, destinations).map { $0.waypoint(for: $1) }, metres: metres)
    }

    /// Where a snapped point joins the graph: both ends of its edge, with the partial lengths.
    static func seeds(_ s: Snap) -> [(node: Int, cost: Double)] {
        [(node: s.u, cost: s.t * s.edgeMetres), (node: s.v, cost: (1 - s.t) * s.edgeMetres)]
    }

    /// The table through the hierarchy's buckets (row-major), or nil without a hierarchy.
    private func hierarchyTable(from: [Snap], to: [Snap], shouldStop: () -> Bool) throws(RouteError) -> [Double]? {
        guard let plainSearch else { return nil }
        do {
            return try plainSearch.table(sources: from.map(Router.seeds), destinations: to.map(Router.seeds), shouldStop: shouldStop)
        } catch {
            throw .tooMuchWork(settled: plainSearch.settled)
        }
    }

    /// The table by one Dijkstra per source until every destination is settled (row-major):
    /// the reference, and the way when edges carry penalties.
    private func dijkstraTable(from: [Snap], to: [Snap], edgeFactor: ((Int, Int) -> Double?)?, shouldStop: () -> Bool) throws(RouteError) -> [Double] {
        // Every destination is reached through either end of its edge.
        let targetNodes = to.flatMap { [$0.u, $0.v] }
        var metres: [Double] = []
        metres.reserveCapacity(from.count * to.count)
        for a in from {
            if shouldStop() { throw .tooMuchWork(settled: search.settled) }
            let reached: [Double]
            do {
                reached = try search.distances(from: Router.seeds(a), to: targetNodes, edgeFactor: edgeFactor)
            } catch {
                if case .tooMuchWork(let settled) = error { throw .tooMuchWork(settled: settled) }
                reached = targetNodes.map { _ in .infinity }
            }
            for (j, b) in to.enumerated() {
                metres.append(min(reached[2 * j] + b.t * b.edgeMetres, reached[2 * j + 1] + (1 - b.t) * b.edgeMetres))
            }
        }
        return metres
    }

    /// Areas a route keeps out of (e.g. air-quality zones of class 4 and 5): an edge whose
    /// midpoint lies in one of `polygons` costs `factor` times its length, or is forbidden when
    /// `factor` is nil. The answer's distance stays in real metres.
    public struct Avoid {
        /// Areas kept out of (nil factor) or made dearer by `factor`; nil: none.
        public var polygons: PolygonIndex?
        public var factor: Double?
        /// Edges that may not be walked at all: paths closed when the walk would reach them.
        public var closed: EdgeSet
        public init(polygons: PolygonIndex?, factor: Double?, closed: EdgeSet = .empty) {
            self.polygons = polygons
            self.factor = factor
            self.closed = closed
        }

        /// Whether the edge is walkable at all, and if so whether it lies in an avoided area.
        func blocks(_ u: Int, _ v: Int, in graph: Graph) -> (closed: Bool, inArea: Bool) {
            if closed.contains(u, v) { return (true, false) }
            guard let polygons else { return (false, false) }
            return (false, polygons.firstContaining(lon: (graph.lons[u] + graph.lons[v]) / 2, lat: (graph.lats[u] + graph.lats[v]) / 2) != nil)
        }
    }

    /// The search's edge weights for a route that avoids areas, with the profile's forbidden
    /// edges: nil forbids an edge, else its length is multiplied by the factor. nil when every
    /// edge weighs its length.
    func edgeFactor(avoiding avoid: Avoid?) -> ((Int, Int) -> Double?)? {
        var edgeFactor: ((Int, Int) -> Double?)?
        if let avoid {
            let graph = self.graph
            edgeFactor = { u, v in
                let (closed, inside) = avoid.blocks(u, v, in: graph)
                if closed { return nil }
                guard inside else { return 1 }
                return avoid.factor.map { max(1, $0) }
            }
        }
        // A profile's forbidden edges go through the same hook: nil forbids, and otherwise the
        // avoided areas' factor (if any) applies.
        if let forbidden, !forbidden.edges.isEmpty {
            let set = forbidden.edges
            let avoidFactor = edgeFactor
            edgeFactor = { u, v in
                if set.contains(u, v) { return nil }
                guard let avoidFactor else { return 1 }
                return avoidFactor(u, v)
            }
        }
        return edgeFactor
    }

    /// The walking route between two points.
    public func route(from start: Point, to end: Point, avoiding avoid: Avoid? = nil) throws(RouteError) -> Route {
        try route(from: start, toAny: [end], avoiding: avoid)
    }

    /// The walking route to the nearest (by route) of some features: a point feature at its
    /// place, a line or polygon at the nearest point of its outline (sampled every `step`
    /// metres along each edge). Every pen of an animal, or a pavilion's walls.
    public func route(from start: Point, toFeatures features: [Geometry], step: Double = 5, avoiding avoid: Avoid? = nil) throws(RouteError) -> Route {
        var ends: [Point] = []
        func sample(_ flat: ArraySlice<Double>) {
            var i = flat.startIndex
            while i + 1 < flat.endIndex {
                ends.append(Point(lon: flat[i], lat: flat[i + 1]))
                if i + 3 < flat.endIndex {
                    let (ax, ay, bx, by) = (flat[i], flat[i + 1], flat[i + 2], flat[i + 3])
                    let n = Int((Geodesy.haversine(lon1: ax, lat1: ay, lon2: bx, lat2: by) / max(step, 0.5)).rounded(.up))
                    if n > 1 { for k in 1..<n { let t = Double(k) / Double(n); ends.append(Point(lon: ax + t * (bx - ax), lat: ay + t * (by - ay))) } }
                }
                i += 2
            }
        }
        for feature in features {
            switch feature {
            case .point(let p): ends.append(p)
            case .multiPoint(let m): for i in 0..<m.pointCount { ends.append(Point(lon: m.coordinates[2 * i], lat: m.coordinates[2 * i + 1])) }
            case .lineString(let l): sample(l.coordinates[...])
            case .multiLineString(let m): for i in 0..<m.lineCount { sample(m.line(i).coordinates[...]) }
            case .polygon(let p): for r in 0..<p.ringCount { sample(p.ring(r)) }
            case .multiPolygon(let m): for p in m.polygons { for r in 0..<p.ringCount { sample(p.ring(r)) } }
            case .collection(let parts): for part in parts { if case .point(let p) = part { ends.append(p) } }
            }
        }
        return try route(from: start, toAny: ends, avoiding: avoid)
    }

    /// The walking route from `start` to the nearest (by route) of several destinations, e.g.
    /// every pen of an animal, or points on a pavilion's outline.
    public func route(from start: Point, toAny ends: [Point], avoiding avoid: Avoid? = nil) throws(RouteError) -> Route {
        guard !ends.isEmpty else { throw .noTarget(waypoint: 1) }
        for (i, p) in ([start] + ends).enumerated() {
            do {
                _ = try Point.checked(lon: p.lon, lat: p.lat)
            } catch {
                throw .invalidPoint("waypoint \(i): \(error)")
            }
        }
        guard let a = snap(lon: start.lon, lat: start.lat, maxMetres: maxSnapMetres) else {
            throw .noSegment(waypoint: 0, nearestMetres: snap(lon: start.lon, lat: start.lat, maxMetres: .infinity)?.metres, maxSnapMetres: maxSnapMetres)
        }
        let endSnapMetres = maxEndSnapMetres ?? maxSnapMetres
        var snaps: [(Point, Snap)] = []
        for end in ends {
            if let b = snap(lon: end.lon, lat: end.lat, maxMetres: endSnapMetres) { snaps.append((end, b)) }
        }
        guard !snaps.isEmpty else {
            let nearest = ends.compactMap { snap(lon: $0.lon, lat: $0.lat, maxMetres: .infinity)?.metres }.min()
            throw .noSegment(waypoint: 1, nearestMetres: nearest, maxSnapMetres: endSnapMetres)
        }
        let reachable = snaps.filter { graph.component[$0.1.u] == graph.component[a.u] }
        guard !reachable.isEmpty else {
            throw .noRoute(reason: "the start and the destination lie in different, unconnected parts of the network (components \(graph.component[a.u]) and \(graph.component[snaps[0].1.u]))")
        }
        // Along the shared edge directly, when start and destination snap to the same edge.
        var direct: (metres: Double, end: Point, snap: Snap)?
        // (Snapping already skips forbidden edges; the check keeps this case honest on its own.)
        let directAllowed = (avoid.map { avoid in
            let (closed, inside) = avoid.blocks(a.u, a.v, in: graph)
            return !closed && (avoid.factor != nil || !inside)
        } ?? true) && !(forbidden?.edges.contains(a.u, a.v) ?? false)
        for (end, b) in reachable where directAllowed && (b.u, b.v) == (a.u, a.v) {
            let metres = abs(b.t - a.t) * a.edgeMetres
            if metres < (direct?.metres ?? .infinity) { direct = (metres, end, b) }
        }
        let sources = [(node: a.u, cost: a.t * a.edgeMetres), (node: a.v, cost: (1 - a.t) * a.edgeMetres)]
        var targets: [(node: Int, cost: Double)] = []
        for (_, b) in reachable {
            targets.append((b.u, b.t * b.edgeMetres))
            targets.append((b.v, (1 - b.t) * b.edgeMetres))
        }
        let edgeFactor = self.edgeFactor(avoiding: avoid)
        var path: Search.Path
        var settled = 0
        do {
            if avoid == nil, let plainSearch {
                defer { settled = plainSearch.settled }
                path = try plainSearch.shortestPath(from: sources, to: targets)
            } else {
                defer { settled = search.settled }
                path = try search.shortestPath(from: sources, to: targets, edgeFactor: edgeFactor)
            }
            if avoid != nil {
                // The search ranked by penalised cost; report the real length walked.
                var metres = 0.0
                for (u, v) in zip(path.nodes, path.nodes.dropFirst()) {
                    var best = Double.infinity
                    graph.forEachNeighbour(of: u) { w, m in if w == v { best = min(best, m) } }
                    metres += best
                }
                let first = path.nodes[0], last = path.nodes[path.nodes.count - 1]
                let startCost = sources.filter { $0.node == first }.map(\.cost).min() ?? 0
                let endCost = targets.filter { $0.node == last }.map(\.cost).min() ?? 0
                path.metres = startCost + metres + endCost
            }
        } catch {
            switch error {
            case .unreachable:
                // The points share a component of the whole network (checked above), so when a
                // profile forbids edges or paths are closed, those edges are what stands between them.
                if let avoid, !avoid.closed.isEmpty {
                    throw .noRoute(reason: "no path open when the walk reaches it connects the two points (\(avoid.closed.count) edges of closed paths kept off)")
                }
                guard let forbidden, !forbidden.edges.isEmpty else { throw .noRoute(reason: "no path connects the two points") }
                let avoided = avoid != nil && avoid?.factor == nil
                throw .noRoute(reason: avoided
                    ? "no path without \(forbidden.what) and outside the avoided areas connects the two points"
                    : "no path without \(forbidden.what) connects the two points: only paths with \(forbidden.what) join them")
            case .tooMuchWork(let settled): throw .tooMuchWork(settled: settled)
            }
        }
        if let direct, direct.metres <= path.metres {
            return Route(metres: direct.metres, seconds: direct.metres / metresPerSecond,
                         geometry: LineString(coordinates: [a.location.lon, a.location.lat, direct.snap.location.lon, direct.snap.location.lat]),
                         waypoints: [a.waypoint(for: start), direct.snap.waypoint(for: direct.end)],
                         nodeIDs: [], nodes: [], settled: settled)
        }
        // Which destination the path reached: the one whose edge ends at the last node.
        let last = path.nodes[path.nodes.count - 1]
        let reached = reachable.min { x, y in
            func cost(_ s: Snap) -> Double { s.u == last ? s.t * s.edgeMetres : s.v == last ? (1 - s.t) * s.edgeMetres : .infinity }
            return cost(x.1) < cost(y.1)
        } ?? reachable[0]
        var coordinates = [a.location.lon, a.location.lat]
        for node in path.nodes { coordinates += [graph.lons[node], graph.lats[node]] }
        coordinates += [reached.1.location.lon, reached.1.location.lat]
        return Route(metres: path.metres, seconds: path.metres / metresPerSecond, geometry: LineString(coordinates: coordinates),
                     waypoints: [a.waypoint(for: start), reached.1.waypoint(for: reached.0)],
                     nodeIDs: path.nodes.map { graph.nodeIDs[$0] }, nodes: path.nodes, settled: settled)
    }
}
