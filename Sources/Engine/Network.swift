// A walking network built once at load from a line layer of the store: the zoo's paths, a
// festival's footpaths. Lines meet where they share an OSM node id (layers with `node_ids`, as
// the zoo paths have) or else a vertex position.

import Geometry
import Routing
import Synchronization

public final class Network: Sendable {
    public let layerName: String
    public let graph: Graph
    /// Built once at load, shared by every router of the pool.
    let edges: EdgeIndex
    /// Routers keep per-search scratch state, so each request borrows one from this pool and
    /// gives it back; the pool grows to the number of concurrent routes and no further.
    private let idle: Mutex<[Borrowed]>

    /// A router is used by one request at a time: it leaves the pool while it works.
    private final class Borrowed: @unchecked Sendable {
        let router: Router
        init(_ router: Router) { self.router = router }
    }

    init(layerName: String, graph: Graph) {
        self.layerName = layerName
        self.graph = graph
        edges = EdgeIndex(graph: graph)
        idle = Mutex([])
    }

    static func build(from layer: Layer) -> Network? {
        graph(of: layer).map { Network(layerName: layer.name, graph: $0) }
    }

    /// The graph of a line layer, or nil when the layer holds no lines. `joinEnds` > 0 also
    /// joins line ends that lie within that many metres of another line (for hand-drawn data).
    public static func graph(of layer: Layer, joinEnds: Double = 0) -> Graph? {
        guard layer.family == .lines else { return nil }
        var lines: [[Double]] = [], ids: [[Int64]] = []
        for (geometry, properties) in zip(layer.geometries, layer.properties) {
            switch geometry {
            case .lineString(let line)?:
                lines.append(line.coordinates)
                let nodeIDs = properties["node_ids"]?.stringValue.flatMap(Network.nodeIDs(in:))
                ids.append(nodeIDs?.count == line.pointCount ? nodeIDs ?? [] : [])
            case .multiLineString(let lines_)?:
                for i in 0..<lines_.lineCount { lines.append(lines_.line(i).coordinates); ids.append([]) }
            default:
                continue
            }
        }
        guard !lines.isEmpty else { return nil }
        return ids.allSatisfy(\.isEmpty) ? Graph.fromLines(lines, snapMetres: joinEnds) : Graph.fromLines(lines, vertexIDs: ids, snapMetres: joinEnds)
    }

    /// `[123, 456, …]` → the ids; nil for anything else.
    static func nodeIDs(in text: String) -> [Int64]? {
        guard case .array(let items)? = try? JSON.parse(text) else { return nil }
        var ids: [Int64] = []
        for item in items {
            guard case .integer(let id) = item else { return nil }
            ids.append(id)
        }
        return ids
    }

    /// Runs `body` with a router of this network at the given speed and snap radius.
    public func withRouter<T>(metresPerSecond: Double, maxSnapMetres: Double, _ body: (Router) throws(RouteError) -> T) throws(RouteError) -> T {
        let borrowed = idle.withLock { $0.popLast() } ?? Borrowed(Router(graph: graph, edges: edges))
        defer { idle.withLock { $0.append(borrowed) } }
        borrowed.router.metresPerSecond = metresPerSecond
        borrowed.router.maxSnapMetres = maxSnapMetres
        return try body(borrowed.router)
    }
}
