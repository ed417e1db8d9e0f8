// A walking network built once at load from a line layer of the store: the zoo's paths, a
// festival's footpaths. Lines meet where they share an OSM node id (layers with `node_ids`, as
// the zoo paths have) or else a vertex position. The edges that are steps are known from the
// lines' tags, so a profile can keep off them (Zoo Praha lies on a hillside with many stairs).

import Dispatch
import Foundation
import Geometry
import Routing
import SpatialIndex
import Support

/// How a route is walked: a speed, and which edges it may use. One vocabulary for every
/// network, a zoo's paths or an imported OSM layer: a line's OSM tags (`highway`, `foot`,
/// `access`, `oneway:foot`), where it has them, decide what `foot` may walk, by the rule of
/// `OSMProfile.foot`; a line without a `highway` tag is a path anyone may walk.
public enum WalkingProfile: String, Sendable, CaseIterable {
    /// The lines a pedestrian may use (all of them, unless OSM tags say otherwise), at 5 km/h.
    case foot
    /// Step-free, for wheelchairs and strollers: `foot` but never an edge of steps, at 4 km/h.
    case wheelchair
    /// Every line of the network in both directions (OSM: every `highway`), at 5 km/h.
    case any

    /// The default speed in km/h (a query's SPEED overrides it).
    public var kmh: Double {
        switch self {
        case .foot, .any: 5
        case .wheelchair: 4
        }
    }

    public var avoidsSteps: Bool { self == .wheelchair }

    /// "foot, wheelchair, any": for the errors that list them.
    public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

public final class Network: Sendable {
    public let layerName: String
    public let graph: Graph
    /// The edges that are steps (`kind_detail` or `highway` = `steps` on their line), found
    /// once at load. An edge counts only when every line that runs along it is steps, so a
    /// ramp drawn over the same two nodes keeps it open.
    public let steps: EdgeSet
    /// The name of each edge whose line has one (OSM's `name` tag): the street names of a
    /// route's steps and of the points where positions join the network.
    let names: EdgeNames
    /// The lines with opening hours (`opening_hours`), which a route at a time keeps off while
    /// they are closed (TimedPaths.swift).
    let timed: TimedPaths
    /// Built once at load, shared by every router of the pool.
    let edges: EdgeIndex
    /// The contraction hierarchies routes and tables run on, built on first use: one of the
    /// whole graph (key false), one without the steps for the step-free profile (key true).
    private let hierarchies = Locked<[Bool: HierarchyState]>([:])
    private enum HierarchyState {
        case building
        case built(ContractionHierarchy)
    }
    /// The network of every line both ways, for the `any` profile, when it differs from this
    /// one (some line's tags keep pedestrians off it or make it one-way for them).
    let anyVariant: Network?
    /// Routers keep per-search scratch state, so each request borrows one from this pool and
    /// gives it back; the pool grows to the number of concurrent routes and no further.
    private let idle: Locked<[Borrowed]>

    /// A router is used by one request at a time: it leaves the pool while it works.
    private final class Borrowed: @unchecked Sendable {
        let router: Router
        init(_ router: Router) { self.router = router }
    }

    init(layerName: String, graph: Graph, steps: EdgeSet = .empty, names: EdgeNames = EdgeNames(), timed: TimedPaths = .empty,
         anyVariant: Network? = nil) throws(SpatialIndexError) {
        self.layerName = layerName
        self.graph = graph
        self.steps = steps
        self.names = names
        self.timed = timed
        self.anyVariant = anyVariant
        edges = try EdgeIndex(graph: graph)
        idle = Locked([])
    }

    /// The network of a line layer, or nil when the layer holds no lines. `joinEnds` > 0 also
    /// joins line ends that lie within that many metres of another line (for hand-drawn data;
    /// the snapshot's networks use 0). Fails, naming the layer and the fid, only on a NaN or
    /// infinite vertex, which a loaded layer has already left out.
    public static func build(from layer: Layer, joinEnds: Double = 0) throws(EngineError) -> Network? {
        guard let all = lines(of: layer) else { return nil }
        var lines = all
        var anyVariant: Network?
        if !all.footAccess.allSatisfy({ $0 == .both }) {
            anyVariant = try network(layer.name, all, joinEnds: joinEnds, forFoot: false)
            lines = all.filter { $0 != .none }
        }
        return try network(layer.name, lines, joinEnds: joinEnds, forFoot: true, anyVariant: anyVariant)
    }

    /// The network of some lines: for `foot` (one-way lines and steps known), or for `any`.
    private static func network(_ name: String, _ lines: Lines, joinEnds: Double, forFoot: Bool, anyVariant: Network? = nil) throws(EngineError) -> Network {
        let (graph, lineNodes) = graphAndNodes(lines, joinEnds: joinEnds, oneway: forFoot)
        do {
            return try Network(layerName: name, graph: graph, steps: forFoot ? steps(lines, lineNodes, nodeCount: graph.nodeCount) : .empty,
                               names: EdgeNames(lines.names, lineNodes), timed: TimedPaths(lines, lineNodes), anyVariant: anyVariant)
        } catch {
            var fid = ""
            if case .nonFinite(let node) = error, let line = lineNodes.firstIndex(where: { $0.contains(Int32(truncatingIfNeeded: node)) }) {
                fid = ", fid \(lines.fids[line])"
            }
            throw .store("layer '\(name)'\(fid): cannot build its walking network: \(error)")
        }
    }

    /// A layer's lines: coordinates, node ids (empty when the line has none), whether the
    /// feature is steps, and its fid (for errors).
    struct Lines {
        var coordinates: [[Double]] = []
        var ids: [[Int64]] = []
        var isSteps: [Bool] = []
        var fids: [Int64] = []
        /// The line's `name`, "" when it has none.
        var names: [String] = []
        /// Which way a pedestrian may walk each line, from its tags.
        var footAccess: [FootAccess] = []
        /// The line's `opening_hours`, "" when it has none.
        var openingHours: [String] = []

        /// The lines whose access passes `keep`.
        func filter(_ keep: (FootAccess) -> Bool) -> Lines {
            var kept = Lines()
            for i in coordinates.indices where keep(footAccess[i]) {
                kept.coordinates.append(coordinates[i]); kept.ids.append(ids[i]); kept.isSteps.append(isSteps[i])
                kept.fids.append(fids[i]); kept.names.append(names[i]); kept.footAccess.append(footAccess[i])
                kept.openingHours.append(openingHours[i])
            }
            return kept
        }
    }

    enum FootAccess { case both, forward, none }

    /// OSM's walking rule (`OSMProfile.foot`) on a line's tags; a line without `highway` is a path.
    static func footAccess(_ properties: Attributes) -> FootAccess {
        guard let highway = properties["highway"]?.stringValue else { return .both }
        var tags = ["highway": highway]
        for key in ["foot", "access"] { tags[key] = properties[key]?.stringValue }
        tags["oneway:foot"] = (properties["oneway:foot"] ?? properties["oneway_foot"])?.stringValue
        let (keep, oneway) = OSMProfile.foot.direction(of: tags)
        return !keep ? .none : oneway ? .forward : .both
    }

    static func lines(of layer: Layer) -> Lines? {
        guard layer.family == .lines else { return nil }
        var lines = Lines()
        for index in layer.indices {
            let (geometry, properties, fid) = (layer.geometries[index], layer.properties[index], layer.fids[index])
            guard !isTrack(properties) else { continue }
            let steps = isSteps(properties)
            let name = properties["name"]?.stringValue ?? ""
            let access = footAccess(properties)
            let hours = properties["opening_hours"]?.stringValue ?? ""
            switch geometry {
            case .lineString(let line)?:
                lines.coordinates.append(line.coordinates)
                let nodeIDs = properties["node_ids"]?.stringValue.flatMap(JSON.integerList)
                lines.ids.append(nodeIDs?.count == line.pointCount ? nodeIDs ?? [] : [])
                lines.isSteps.append(steps)
                lines.fids.append(fid)
                lines.names.append(name)
                lines.footAccess.append(access)
                lines.openingHours.append(hours)
            case .multiLineString(let lines_)?:
                for i in 0..<lines_.lineCount {
                    lines.coordinates.append(lines_.line(i).coordinates)
                    lines.ids.append([])
                    lines.isSteps.append(steps)
                    lines.fids.append(fid)
                    lines.names.append(name)
                    lines.footAccess.append(access)
                    lines.openingHours.append(hours)
                }
            default:
                continue
            }
        }
        return lines.coordinates.isEmpty ? nil : lines
    }

    /// The graph of the lines; with `oneway`, lines a pedestrian may walk one way only are
    /// one-way edges.
    static func graphAndNodes(_ lines: Lines, joinEnds: Double, oneway: Bool) -> (graph: Graph, lineNodes: [[Int32]]) {
        let directions = oneway && lines.footAccess.contains(.forward) ? lines.footAccess.map { $0 == .forward } : nil
        return lines.ids.allSatisfy(\.isEmpty)
            ? Graph.fromLinesWithNodes(lines.coordinates, snapMetres: joinEnds, oneway: directions)
            : Graph.fromLinesWithNodes(lines.coordinates, vertexIDs: lines.ids, snapMetres: joinEnds, oneway: directions)
    }

    /// Railway and tram tracks are not for walking, though an OSM-derived layer may hold them
    /// (the zoo's paths have 29 lines of them: 26 of railway, 3 of tram). They stay out of
    /// the graph, so no profile walks along them. Tilezen-style data says `kind = rail`; raw OSM
    /// says `railway = rail, tram, …` on a way with no `highway` tag (a platform has one).
    static func isTrack(_ properties: Attributes) -> Bool {
        if properties["kind"]?.stringValue == "rail" { return true }
        guard properties["highway"] == nil, let railway = properties["railway"]?.stringValue else { return false }
        return Network.tracks.contains(railway)
    }

    static let tracks: Set<String> = ["rail", "tram", "light_rail", "subway", "narrow_gauge", "funicular", "monorail", "miniature", "preserved"]

    /// Tilezen-style data (the zoo's) says `kind_detail = steps`; raw OSM says `highway = steps`.
    static func isSteps(_ properties: Attributes) -> Bool {
        properties["kind_detail"]?.stringValue == "steps" || properties["highway"]?.stringValue == "steps"
    }

    /// The node pairs that only lines of steps join: each step line's consecutive vertices,
    /// less any pair that another line also joins.
    static func steps(_ lines: Lines, _ lineNodes: [[Int32]], nodeCount: Int) -> EdgeSet {
        guard lines.isSteps.contains(true) else { return .empty }
        var stepPairs: [(Int, Int)] = [], otherPairs: [(Int, Int)] = []
        for (l, nodes) in lineNodes.enumerated() {
            for (u, v) in zip(nodes, nodes.dropFirst()) where u != v {
                if lines.isSteps[l] { stepPairs.append((Int(u), Int(v))) } else { otherPairs.append((Int(u), Int(v))) }
            }
        }
        let others = EdgeSet(pairs: otherPairs, nodeCount: nodeCount)
        return EdgeSet(pairs: stepPairs.filter { !others.contains($0.0, $0.1) }, nodeCount: nodeCount)
    }

    /// The contraction hierarchy a profile's routes and tables run on: of the whole graph, or
    /// without the steps for a step-free profile. Built once, on first use (0.16 s for
    /// Andorra's 38,556 nodes, 0.034 s for the zoo's paths, in release), then kept for the
    /// snapshot's life; loading and reloading a store pay nothing for it. This waits for it.
    public func hierarchy(for profile: WalkingProfile) -> ContractionHierarchy {
        while true {
            if let built = builtHierarchy(for: profile, buildInBackground: false) { return built }
            // Another thread is building it.
            usleep(1_000)
        }
    }

    /// The hierarchy when it is built. Otherwise nil, and the first caller starts building it:
    /// in the background (a request then routes by A*, with the same lengths, rather than wait
    /// for the build), or here with `buildInBackground` false.
    func builtHierarchy(for profile: WalkingProfile, buildInBackground: Bool) -> ContractionHierarchy? {
        let stepFree = profile.avoidsSteps && !steps.isEmpty
        let (known, start) = hierarchies.withLock { state -> (ContractionHierarchy?, Bool) in
            switch state[stepFree] {
            case .built(let hierarchy)?: return (hierarchy, false)
            case .building?: return (nil, false)
            case nil:
                state[stepFree] = .building
                return (nil, true)
            }
        }
        guard start else { return known }
        let build: @Sendable () -> ContractionHierarchy = { [self] in
            let hierarchy = ContractionHierarchy(graph: graph, excluding: stepFree ? steps : .empty)
            hierarchies.withLock { $0[stepFree] = .built(hierarchy) }
            return hierarchy
        }
        if buildInBackground {
            DispatchQueue.global(qos: .utility).async { _ = build() }
            return nil
        }
        return build()
    }

    /// Runs `body` with a router of this network for a profile (which edges it may use), at the
    /// given speed and snap radius.
    /// A router of the pool, set up for one request; its searches stop once `deadline` has
    /// passed (or the request is cancelled).
    func withRouter<T, Failure: Error>(profile: WalkingProfile = .foot, metresPerSecond: Double, maxSnapMetres: Double, deadline: Deadline = .none,
                                       _ body: (Router) throws(Failure) -> T) throws(Failure) -> T {
        let borrowed = idle.withLock { $0.popLast() } ?? Borrowed(Router(graph: graph, edges: edges))
        defer { idle.withLock { $0.append(borrowed) } }
        borrowed.router.metresPerSecond = metresPerSecond
        borrowed.router.maxSnapMetres = maxSnapMetres
        borrowed.router.maxEndSnapMetres = nil
        borrowed.router.shouldStop = deadline == .none ? nil : { deadline.hasPassed }
        // Set on every borrow: a pooled router may come back from a wheelchair route.
        let stepFree = profile.avoidsSteps && !steps.isEmpty
        borrowed.router.forbidden = stepFree ? Router.Forbidden(edges: steps, what: "steps") : nil
        // The hierarchy built without exactly those edges.
        borrowed.router.hierarchy = builtHierarchy(for: profile, buildInBackground: true)
        return try body(borrowed.router)
    }
}

/// The names of a network's edges, from the names of the lines that run along them: where two
/// lines share an edge, the first named one gives it its name.
struct EdgeNames: Sendable {
    private let names: [String]
    /// `min(u, v) << 32 | max(u, v)` → index into `names`.
    private let byEdge: [UInt64: Int32]

    init() {
        names = []
        byEdge = [:]
    }

    init(_ lineNames: [String], _ lineNodes: [[Int32]]) {
        var names: [String] = [], index: [String: Int32] = [:], byEdge: [UInt64: Int32] = [:]
        for (name, nodes) in zip(lineNames, lineNodes) where !name.isEmpty {
            let i = index[name] ?? Int32(names.count)
            if index[name] == nil {
                index[name] = i
                names.append(name)
            }
            for (u, v) in zip(nodes, nodes.dropFirst()) where u != v {
                let key = EdgeNames.key(Int(u), Int(v))
                if byEdge[key] == nil { byEdge[key] = i }
            }
        }
        self.names = names
        self.byEdge = byEdge
    }

    static func key(_ u: Int, _ v: Int) -> UInt64 { UInt64(min(u, v)) << 32 | UInt64(max(u, v)) }

    /// The edge's name, "" when it has none.
    func name(_ u: Int, _ v: Int) -> String {
        byEdge[EdgeNames.key(u, v)].map { names[Int($0)] } ?? ""
    }
}
