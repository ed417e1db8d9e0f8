// ALT landmarks (Goldberg & Harrelson, "Computing the shortest path: A* search meets graph
// theory", 2005): the exact distances from a few well-spread nodes to every node. For any
// landmark L, |d(L, t) − d(L, v)| ≤ d(v, t) by the triangle inequality, so the largest such
// difference is an admissible and consistent A* heuristic, far tighter than the straight line
// on winding mountain roads. Penalties only lengthen edges, so the bound stays admissible.

import SpatialIndex

/// Distances from each landmark to every node, `count` values per node (node-major, so one
/// node's bounds are read together).
public struct Landmarks: Sendable {
    public let count: Int
    let distances: [Double]

    /// No landmarks: the heuristic falls back to the straight line.
    init() {
        count = 0
        distances = []
    }

    /// Picks `count` landmarks in the largest component, each the node farthest (by route)
    /// from those already picked, and runs one Dijkstra from each.
    init(graph: Graph, count wanted: Int) {
        let n = graph.nodeCount
        guard n > 0, wanted > 0, let start = (0..<n).first(where: { graph.component[$0] == 0 }) else {
            count = 0
            distances = []
            return
        }
        var rows: [[Double]] = []
        // The first landmark: the node farthest from an arbitrary node of the largest component.
        var nearestToPicked = Landmarks.dijkstra(graph, from: start)
        for _ in 0..<wanted {
            var far = start, farDistance = -1.0
            for v in 0..<n where nearestToPicked[v].isFinite && nearestToPicked[v] > farDistance {
                far = v
                farDistance = nearestToPicked[v]
            }
            let row = Landmarks.dijkstra(graph, from: far)
            rows.append(row)
            for v in 0..<n { nearestToPicked[v] = min(nearestToPicked[v], row[v]) }
        }
        count = rows.count
        var distances = [Double](repeating: .infinity, count: n * rows.count)
        for (l, row) in rows.enumerated() {
            for v in 0..<n { distances[v * rows.count + l] = row[v] }
        }
        self.distances = distances
    }

    /// Single-source Dijkstra over the whole graph.
    static func dijkstra(_ graph: Graph, from source: Int) -> [Double] {
        var distance = [Double](repeating: .infinity, count: graph.nodeCount)
        var heap = MinHeap<QueuedNode>()
        distance[source] = 0
        heap.push(QueuedNode(source, 0))
        while let entry = heap.pop() {
            let u = Int(entry.node), d = entry.key
            if d > distance[u] { continue }
            graph.forEachNeighbour(of: u) { v, metres in
                let dv = d + metres
                if dv < distance[v] {
                    distance[v] = dv
                    heap.push(QueuedNode(v, dv))
                }
            }
        }
        return distance
    }
}
