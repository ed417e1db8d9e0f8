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
    /// ALT landmarks for the A* heuristic (8, in the largest component).
    public private(set) var landmarks = Landmarks()

    public var nodeCount: Int { lons.count }
    /// Directed edge count (an undirected edge counts twice).
    public var edgeCount: Int { targets.count }

    /// An undirected edge between two nodes (by index) with its length in metres.
    public struct Edge: Sendable, Equatable {
        public var u: Int
        public var v: Int
        public var metres: Double
        public init(u: Int, v: Int, metres: Double) {
            self.u = u
            self.v = v
            self.metres = metres
        }
    }

    /// Builds the graph. Self-loops are dropped and parallel edges keep the shortest.
    public init(lons: [Double], lats: [Double], nodeIDs: [Int64]? = nil, edges: [Edge]) {
        let n = lons.count
        self.lons = lons
        self.lats = lats
        self.nodeIDs = nodeIDs ?? (0..<Int64(n)).map { $0 }
        xyz = (0..<n).flatMap { i -> [Double] in
            let v = Geodesy.unitVector(lon: lons[i], lat: lats[i])
            return [v.x, v.y, v.z]
        }
        // Keep the shortest of parallel edges.
        var best: [UInt64: Double] = [:]
        for e in edges where e.u != e.v && e.u >= 0 && e.v >= 0 && e.u < n && e.v < n {
            let key = UInt64(min(e.u, e.v)) << 32 | UInt64(max(e.u, e.v))
            if let existing = best[key], existing <= e.metres { continue }
            best[key] = e.metres
        }
        var degree = [Int32](repeating: 0, count: n + 1)
        for key in best.keys {
            degree[Int(key >> 32) + 1] += 1
            degree[Int(key & 0xFFFF_FFFF) + 1] += 1
        }
        for i in 0..<n { degree[i + 1] += degree[i] }
        var fill = degree
        var targets = [Int32](repeating: 0, count: Int(degree[n]))
        var lengths = [Double](repeating: 0, count: Int(degree[n]))
        // Deterministic order: by key.
        for key in best.keys.sorted() {
            let u = Int(key >> 32), v = Int(key & 0xFFFF_FFFF)
            let metres = best[key] ?? 0
            targets[Int(fill[u])] = Int32(v); lengths[Int(fill[u])] = metres; fill[u] += 1
            targets[Int(fill[v])] = Int32(u); lengths[Int(fill[v])] = metres; fill[v] += 1
        }
        firstEdge = degree
        self.targets = targets
        self.lengths = lengths
        (component, componentCount) = Graph.components(n: n, firstEdge: degree, targets: targets)
        landmarks = Landmarks(graph: self, count: 8)
    }

    /// Connected components by breadth-first search, relabelled by decreasing size.
    static func components(n: Int, firstEdge: [Int32], targets: [Int32]) -> ([Int32], Int) {
        var label = [Int32](repeating: -1, count: n)
        var sizes: [Int] = []
        var queue: [Int32] = []
        for start in 0..<n where label[start] < 0 {
            let id = Int32(sizes.count)
            label[start] = id
            queue.removeAll(keepingCapacity: true)
            queue.append(Int32(start))
            var head = 0
            while head < queue.count {
                let u = Int(queue[head])
                head += 1
                for e in Int(firstEdge[u])..<Int(firstEdge[u + 1]) where label[Int(targets[e])] < 0 {
                    label[Int(targets[e])] = id
                    queue.append(targets[e])
                }
            }
            sizes.append(queue.count)
        }
        let order = sizes.indices.sorted { sizes[$0] > sizes[$1] || (sizes[$0] == sizes[$1] && $0 < $1) }
        var rename = [Int32](repeating: 0, count: sizes.count)
        for (newID, oldID) in order.enumerated() { rename[oldID] = Int32(newID) }
        return (label.map { rename[Int($0)] }, sizes.count)
    }

    /// Nodes per component, largest first.
    public var componentSizes: [Int] {
        var sizes = [Int](repeating: 0, count: componentCount)
        for c in component { sizes[Int(c)] += 1 }
        return sizes
    }

    /// The total length of the network in metres (each undirected edge once).
    public var totalMetres: Double { lengths.reduce(0, +) / 2 }

    /// Neighbours of node `u` with edge lengths.
    public func forEachNeighbour(of u: Int, _ body: (Int, Double) -> Void) {
        for e in Int(firstEdge[u])..<Int(firstEdge[u + 1]) { body(Int(targets[e]), lengths[e]) }
    }
}

extension Graph {
    /// The network of a line layer: consecutive vertices of every line become edges; vertices
    /// shared by lines (equal coordinates, or given the same id by `vertexIDs`) become one node.
    /// Edge lengths are haversine metres.
    public static func fromLines(_ lines: [[Double]], vertexIDs: [[Int64]]? = nil) -> Graph {
        var index: [Int64: Int] = [:]
        var coordinateIndex: [SIMD2<Double>: Int] = [:]
        var lons: [Double] = [], lats: [Double] = [], ids: [Int64] = []
        var edges: [Edge] = []
        for (l, line) in lines.enumerated() {
            var previous: Int?
            var i = 0
            while i + 1 < line.count {
                let lon = line[i], lat = line[i + 1]
                let node: Int
                if let vertexIDs, l < vertexIDs.count, i / 2 < vertexIDs[l].count {
                    let id = vertexIDs[l][i / 2]
                    if let known = index[id] { node = known } else {
                        node = lons.count
                        index[id] = node
                        lons.append(lon); lats.append(lat); ids.append(id)
                    }
                } else {
                    let key = SIMD2(lon, lat)
                    if let known = coordinateIndex[key] { node = known } else {
                        node = lons.count
                        coordinateIndex[key] = node
                        lons.append(lon); lats.append(lat); ids.append(Int64(node))
                    }
                }
                if let previous {
                    edges.append(Edge(u: previous, v: node, metres: Geodesy.haversine(lon1: lons[previous], lat1: lats[previous], lon2: lon, lat2: lat)))
                }
                previous = node
                i += 2
            }
        }
        return Graph(lons: lons, lats: lats, nodeIDs: ids, edges: edges)
    }
}
