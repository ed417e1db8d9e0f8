// A walking network as a compact graph: node coordinates and adjacency in CSR arrays (one
// offsets array, one targets array, one lengths array), built once and never changed.
// Components are labelled at build time, so a route between two components is answered
// "no route" at once, without a search.

import Geometry

public struct Graph: Sendable {
    /// Node coordinates, lon/lat.
    public let lons: [Double]
    public let lats: [Double]
    /// The source's id of each node (an OSM node id), for answers.
    public let nodeIDs: [Int64]
    /// Edges of node u: `firstEdge[u] ..< firstEdge[u + 1]` of `targets` and `lengths`.
    let firstEdge: [Int32]
    let targets: [Int32]
    /// Metres (haversine between the ends, or along the way's vertices).
    let lengths: [Double]
    /// Each node's unit vector (x, y, z): the A* heuristic's chord needs no trigonometry.
    let xyz: [Double]
    /// Component label of each node; components are numbered by decreasing size.
    public let component: [Int32]
    public let componentCount: Int
    /// ALT landmarks for the A* heuristic (in the largest component).
    public private(set) var landmarks = Landmarks()

    public var nodeCount: Int { lons.count }
    /// Directed edge count (an undirected edge counts twice).
    public var edgeCount: Int { targets.count }

    /// An edge between two nodes (by index) with its length in metres; both ways unless
    /// `oneway` (then only u → v).
    public struct Edge: Sendable, Equatable {
        public var u: Int
        public var v: Int
        public var metres: Double
        public var oneway: Bool
        public init(u: Int, v: Int, metres: Double, oneway: Bool = false) {
            self.u = u
            self.v = v
            self.metres = metres
            self.oneway = oneway
        }
    }

    /// The edges after dropping self-loops and keeping the shortest of parallel edges, each
    /// once (u < v for two-way edges): for snapping and drawing.
    public let edges: [Edge]

    /// Builds the graph. Self-loops are dropped and parallel edges keep the shortest.
    public init(lons: [Double], lats: [Double], nodeIDs: [Int64]? = nil, edges input: [Edge]) {
        let n = lons.count
        self.lons = lons
        self.lats = lats
        self.nodeIDs = nodeIDs ?? (0..<Int64(n)).map { $0 }
        xyz = (0..<n).flatMap { i -> [Double] in
            let v = Geodesy.unitVector(lon: lons[i], lat: lats[i])
            return [v.x, v.y, v.z]
        }
        // Keep the shortest of parallel edges: two-way ones keyed by their sorted ends, one-way
        // ones by their direction (the top bit tells them apart).
        var best: [UInt64: Double] = [:]
        for e in input where e.u != e.v && e.u >= 0 && e.v >= 0 && e.u < n && e.v < n {
            let key = e.oneway ? 1 << 63 | UInt64(e.u) << 31 | UInt64(e.v) : UInt64(min(e.u, e.v)) << 31 | UInt64(max(e.u, e.v))
            if let existing = best[key], existing <= e.metres { continue }
            best[key] = e.metres
        }
        // Deterministic order: by key.
        let kept = best.keys.sorted().map { key -> Edge in
            let u = Int((key >> 31) & 0x7FFF_FFFF), v = Int(key & 0x7FFF_FFFF)
            return Edge(u: u, v: v, metres: best[key] ?? 0, oneway: key >> 63 == 1)
        }
        var degree = [Int32](repeating: 0, count: n + 1)
        for e in kept {
            degree[e.u + 1] += 1
            if !e.oneway { degree[e.v + 1] += 1 }
        }
        for i in 0..<n { degree[i + 1] += degree[i] }
        var fill = degree
        var targets = [Int32](repeating: 0, count: Int(degree[n]))
        var lengths = [Double](repeating: 0, count: Int(degree[n]))
        for e in kept {
            targets[Int(fill[e.u])] = Int32(e.v); lengths[Int(fill[e.u])] = e.metres; fill[e.u] += 1
            if !e.oneway { targets[Int(fill[e.v])] = Int32(e.u); lengths[Int(fill[e.v])] = e.metres; fill[e.v] += 1 }
        }
        firstEdge = degree
        self.targets = targets
        self.lengths = lengths
        edges = kept
        (component, componentCount) = Graph.components(n: n, edges: kept)
        // The landmark bound needs distances that are the same both ways.
        // 16 landmarks (1 MB per 8,000 nodes); fewer on very large graphs.
        landmarks = kept.contains(where: \.oneway) ? Landmarks() : Landmarks(graph: self, count: n <= 1_000_000 ? 16 : 6)
    }

    /// Connected components (ignoring edge direction) by union-find, relabelled by decreasing size.
    static func components(n: Int, edges: [Edge]) -> ([Int32], Int) {
        var parent = Array(0..<n)
        func root(_ x: Int) -> Int {
            var x = x
            while parent[x] != x {
                parent[x] = parent[parent[x]]
                x = parent[x]
            }
            return x
        }
        for e in edges {
            let a = root(e.u), b = root(e.v)
            if a != b { parent[max(a, b)] = min(a, b) }
        }
        var label = [Int](repeating: -1, count: n)
        var sizes: [Int] = []
        for v in 0..<n {
            let r = root(v)
            if label[r] < 0 {
                label[r] = sizes.count
                sizes.append(0)
            }
            sizes[label[r]] += 1
        }
        let order = sizes.indices.sorted { sizes[$0] > sizes[$1] || (sizes[$0] == sizes[$1] && $0 < $1) }
        var rename = [Int32](repeating: 0, count: sizes.count)
        for (newID, oldID) in order.enumerated() { rename[oldID] = Int32(newID) }
        return ((0..<n).map { rename[label[root($0)]] }, sizes.count)
    }

    /// Nodes per component, largest first.
    public var componentSizes: [Int] {
        var sizes = [Int](repeating: 0, count: componentCount)
        for c in component { sizes[Int(c)] += 1 }
        return sizes
    }

    /// The total length of the network in metres (each edge once).
    public var totalMetres: Double { edges.reduce(0) { $0 + $1.metres } }

    /// Neighbours of node `u` with edge lengths.
    public func forEachNeighbour(of u: Int, _ body: (Int, Double) -> Void) {
        for e in Int(firstEdge[u])..<Int(firstEdge[u + 1]) { body(Int(targets[e]), lengths[e]) }
    }
}

extension Graph {
    /// The network of a line layer: consecutive vertices of every line become edges; vertices
    /// shared by lines (equal coordinates, or given the same id by `vertexIDs`) become one node.
    /// With `snapMetres` > 0, a line's first or last vertex that lies that close to another
    /// line's end joins it (digitised paths often stop a little short of each other). Edge
    /// lengths are haversine metres.
    public static func fromLines(_ lines: [[Double]], vertexIDs: [[Int64]]? = nil, snapMetres: Double = 0) -> Graph {
        fromLinesWithNodes(lines, vertexIDs: vertexIDs, snapMetres: snapMetres).graph
    }

    /// `fromLines`, also answering which node each vertex of each line became (`lineNodes[l][i]`
    /// for vertex i of line l), so a caller can map what it knows about a line (its tags, e.g.
    /// steps) onto the graph's edges.
    public static func fromLinesWithNodes(_ lines: [[Double]], vertexIDs: [[Int64]]? = nil, snapMetres: Double = 0, oneway: [Bool]? = nil) -> (graph: Graph, lineNodes: [[Int32]]) {
        enum VertexKey: Hashable {
            case id(Int64)
            case position(SIMD2<Double>)
        }
        var index: [VertexKey: Int] = [:]
        var lons: [Double] = [], lats: [Double] = [], ids: [Int64] = []
        var edges: [Edge] = []
        // Line ends already placed, in a grid of cells about `snapMetres` wide.
        var endCells: [SIMD2<Int>: [Int]] = [:]
        // At least 1e-9° (0.1 mm), so that a coordinate over a cell (≤ 1.8e11) always fits an
        // Int: a radius of 1e-300 m would otherwise trap in the conversion.
        let cellDegrees = max(snapMetres / 111_000, 1e-9)
        func cell(_ lon: Double, _ lat: Double) -> SIMD2<Int> {
            SIMD2(Int((lon / cellDegrees).rounded(.down)), Int((lat / cellDegrees).rounded(.down)))
        }
        func nearbyEnd(_ lon: Double, _ lat: Double) -> Int? {
            guard snapMetres > 0 else { return nil }
            let c = cell(lon, lat)
            var best: (Int, Double)?
            for dx in -1...1 {
                for dy in -1...1 {
                    for node in endCells[c &+ SIMD2(dx, dy)] ?? [] {
                        let d = Geodesy.haversine(lon1: lon, lat1: lat, lon2: lons[node], lat2: lats[node])
                        if d <= snapMetres && d < (best?.1 ?? .infinity) { best = (node, d) }
                    }
                }
            }
            return best?.0
        }
        var lineNodes: [[Int32]] = []
        lineNodes.reserveCapacity(lines.count)
        for (l, line) in lines.enumerated() {
            var nodesOfLine: [Int32] = []
            nodesOfLine.reserveCapacity(line.count / 2)
            var previous: Int?
            var i = 0
            let last = line.count - 2
            while i + 1 < line.count {
                let lon = line[i], lat = line[i + 1]
                let isEnd = i == 0 || i == last
                // A vertex is known by its id where the layer has ids, else by its position.
                let sourceID: Int64? = vertexIDs.flatMap { l < $0.count && i / 2 < $0[l].count ? $0[l][i / 2] : nil }
                let key: VertexKey = sourceID.map { .id($0) } ?? .position(SIMD2(lon, lat))
                let node: Int
                if let known = index[key] {
                    node = known
                } else if isEnd, let near = nearbyEnd(lon, lat) {
                    node = near
                    index[key] = near
                } else {
                    node = lons.count
                    index[key] = node
                    lons.append(lon); lats.append(lat); ids.append(sourceID ?? Int64(node))
                }
                if isEnd && snapMetres > 0 { endCells[cell(lons[node], lats[node]), default: []].append(node) }
                if let previous {
                    edges.append(Edge(u: previous, v: node, metres: Geodesy.haversine(lon1: lons[previous], lat1: lats[previous], lon2: lons[node], lat2: lats[node]),
                                      oneway: oneway.map { l < $0.count && $0[l] } ?? false))
                }
                previous = node
                nodesOfLine.append(Int32(node))
                i += 2
            }
            lineNodes.append(nodesOfLine)
        }
        return (Graph(lons: lons, lats: lats, nodeIDs: ids, edges: edges), lineNodes)
    }
}
