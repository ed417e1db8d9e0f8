// Shortest paths: A* with an admissible lower bound, and plain Dijkstra as its reference.
//
// The bound, towards the nearest target:
// - In the largest component, where the graph's landmarks live: the ALT bound
//   max over landmarks L of |d(L, t) − d(L, u)|. Distances in the graph obey the triangle
//   inequality, so this never exceeds d(u, t); it is consistent for the same reason.
//   Penalties (factors ≥ 1) and forbidden edges only lengthen paths, so it stays a lower bound.
// - Elsewhere: R times the straight (chord) distance through the sphere. Every edge is at
//   least the great-circle distance between its ends (its length is a sum of great-circle
//   segments), and the chord is never more than that; the chord is a Euclidean distance, so
//   the bound is consistent. It needs no trigonometry, only unit vectors computed once.
// Either way A* returns exactly Dijkstra's lengths (checked on random pairs in the tests); the
// bound is scaled by 1 − 1e-9 so rounding can never push it over.
//
// Per-query state (distance, parent, settled) lives in arrays owned by a reusable `Search`;
// a generation stamp marks which entries belong to the current query, so starting a query
// costs O(1), not O(nodes).

import Dispatch
import Geometry
import SpatialIndex

public final class Search {
    public let graph: Graph
    private var distance: [Double]
    private var parent: [Int32]
    private var stamp: [UInt32]
    private var settledStamp: [UInt32]
    private var generation: UInt32 = 0
    private var heap = MinHeap<QueuedNode>()
    private var targetData: [Double] = []
    /// Per node: the query generation that made it a target, and its extra cost then.
    private var targetStamp: [UInt32]
    private var targetExtra: [Double]
    /// Nodes settled by the last query, for comparing A* with Dijkstra.
    public private(set) var settled = 0
    /// The most nodes a query may settle before it gives up: a bound on work.
    public var maxSettled: Int
    /// The longest a query may run, in seconds: a bound on time (checked every 4,096 nodes).
    public var maxSeconds: Double = 5
    /// Asked with the clock, every 4,096 nodes: true ends the query as `tooMuchWork` (a
    /// request whose client has gone).
    public var shouldStop: (() -> Bool)?

    public init(graph: Graph, maxSettled: Int = 5_000_000) {
        self.graph = graph
        let n = graph.nodeCount
        distance = [Double](repeating: .infinity, count: n)
        parent = [Int32](repeating: -1, count: n)
        stamp = [UInt32](repeating: 0, count: n)
        settledStamp = [UInt32](repeating: 0, count: n)
        targetStamp = [UInt32](repeating: 0, count: n)
        targetExtra = [Double](repeating: 0, count: n)
        self.maxSettled = maxSettled
    }

    public struct Path: Sendable, Equatable {
        public var metres: Double
        /// Node indices from a source to the target reached.
        public var nodes: [Int]
    }

    public enum Failure: Error, Equatable, Sendable {
        /// No path: the sources and targets lie in different components.
        case unreachable
        /// The search hit `maxSettled` or `maxSeconds`.
        case tooMuchWork(settled: Int)
    }

    /// The shortest path from any of `sources` (with a starting cost each, e.g. the distance
    /// along the snapped edge) to any of `targets` (with an extra cost each). With
    /// `heuristic` false it is Dijkstra. `edgeFactor` multiplies an edge's length (≥ 1), or
    /// returns nil to forbid it.
    public func shortestPath(from sources: [(node: Int, cost: Double)], to targets: [(node: Int, cost: Double)],
                             heuristic: Bool = true, edgeFactor: ((Int, Int) -> Double?)? = nil) throws(Failure) -> Path {
        let (metres, target) = try search(from: sources, to: targets, heuristic: heuristic, edgeFactor: edgeFactor)
        var nodes: [Int] = []
        var u = target
        while u >= 0 {
            nodes.append(u)
            u = Int(parent[u])
        }
        return Path(metres: metres, nodes: nodes.reversed())
    }

    /// The length of the shortest path between two nodes, without building the path (for
    /// distance matrices and the benchmark).
    public func metres(from source: Int, to target: Int) throws(Failure) -> Double {
        // One-element lists kept between calls: no allocation per query.
        oneSource[0] = (source, 0)
        oneTarget[0] = (target, 0)
        return try search(from: oneSource, to: oneTarget, heuristic: true, edgeFactor: nil).metres
    }
    private var oneSource: [(node: Int, cost: Double)] = [(0, 0)]
    private var oneTarget: [(node: Int, cost: Double)] = [(0, 0)]

    /// Dijkstra from `sources` (each with a starting cost) until every node of `targets` is
    /// settled: the shortest distance to each target node (infinity when none reaches it), in
    /// one search however many targets there are. A distance matrix runs one of these per
    /// source instead of one A* per pair. `edgeFactor` as in `shortestPath`.
    /// With `maxCost` finite the search stops there: targets farther are infinity (map
    /// matching asks only how far the next fix's candidates are, within a plausible bound).
    public func distances(from sources: [(node: Int, cost: Double)], to targets: [Int],
                          edgeFactor: ((Int, Int) -> Double?)? = nil, maxCost: Double = .infinity) throws(Failure) -> [Double] {
        generation &+= 1
        if generation == 0 {
            for i in stamp.indices { stamp[i] = 0; settledStamp[i] = 0; targetStamp[i] = 0 }
            generation = 1
        }
        let generation = self.generation
        // Targets are marked once each, so a target listed twice is waited for once.
        var waiting = 0
        for t in targets where t >= 0 && t < graph.nodeCount && targetStamp[t] != generation {
            targetStamp[t] = generation
            waiting += 1
        }
        var heap = MinHeap<QueuedNode>()
        swap(&heap, &self.heap)
        defer { swap(&heap, &self.heap) }
        heap.removeAll()
        for s in sources where stamp[s.node] != generation || s.cost < distance[s.node] {
            stamp[s.node] = generation
            distance[s.node] = s.cost
            heap.push(QueuedNode(s.node, s.cost))
        }
        var settledCount = 0
        var overLimit = false
        let maxSettled = self.maxSettled, shouldStop = self.shouldStop
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, min(maxSeconds, 3600)) * 1e9)
        // On raw buffers, as the A* loop: no exclusivity checks per access to the class's arrays.
        distance.withUnsafeMutableBufferPointer { distance in
        stamp.withUnsafeMutableBufferPointer { stamp in
        settledStamp.withUnsafeMutableBufferPointer { settledStamp in
        targetStamp.withUnsafeBufferPointer { targetStamp in
        graph.firstEdge.withUnsafeBufferPointer { firstEdge in
        graph.targets.withUnsafeBufferPointer { edgeTargets in
        graph.lengths.withUnsafeBufferPointer { lengths in
            while waiting > 0, let entry = heap.pop() {
                if entry.key > maxCost { break }
                let u = Int(entry.node)
                if settledStamp[u] == generation { continue }
                settledStamp[u] = generation
                settledCount += 1
                if settledCount > maxSettled || (settledCount & 4095 == 0 && (DispatchTime.now().uptimeNanoseconds > deadline || shouldStop?() == true)) {
                    overLimit = true
                    break
                }
                if targetStamp[u] == generation { waiting -= 1 }
                let du = distance[u]
                for e in Int(firstEdge[u])..<Int(firstEdge[u + 1]) {
                    let v = Int(edgeTargets[e])
                    var w = lengths[e]
                    if let edgeFactor {
                        guard let factor = edgeFactor(u, v) else { continue }
                        w *= factor
                    }
                    let dv = du + w
                    if stamp[v] != generation || dv < distance[v] {
                        stamp[v] = generation
                        distance[v] = dv
                        heap.push(QueuedNode(v, dv))
                    }
                }
            }
        }}}}}}}
        if overLimit {
            settled = settledCount
            throw .tooMuchWork(settled: settledCount)
        }
        settled = settledCount
        return targets.map { t in
            t >= 0 && t < graph.nodeCount && settledStamp[t] == generation ? distance[t] : .infinity
        }
    }

    /// Dijkstra from `sources` settling every node whose cost is at most `limit`: those nodes
    /// with their costs, in the order settled (a shortest-path tree's nodes, for isochrones).
    /// `edgeFactor` as in `shortestPath`. Bounded by `maxSettled` and `maxSeconds` as the others.
    public func settle(from sources: [(node: Int, cost: Double)], within limit: Double,
                       edgeFactor: ((Int, Int) -> Double?)? = nil) throws(Failure) -> [(node: Int, cost: Double)] {
        generation &+= 1
        if generation == 0 {
            for i in stamp.indices { stamp[i] = 0; settledStamp[i] = 0; targetStamp[i] = 0 }
            generation = 1
        }
        let generation = self.generation
        var heap = MinHeap<QueuedNode>()
        swap(&heap, &self.heap)
        defer { swap(&heap, &self.heap) }
        heap.removeAll()
        for s in sources where s.cost <= limit && (stamp[s.node] != generation || s.cost < distance[s.node]) {
            stamp[s.node] = generation
            distance[s.node] = s.cost
            heap.push(QueuedNode(s.node, s.cost))
        }
        var reached: [(node: Int, cost: Double)] = []
        var overLimit = false
        let maxSettled = self.maxSettled, shouldStop = self.shouldStop
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, min(maxSeconds, 3600)) * 1e9)
        distance.withUnsafeMutableBufferPointer { distance in
        stamp.withUnsafeMutableBufferPointer { stamp in
        settledStamp.withUnsafeMutableBufferPointer { settledStamp in
        graph.firstEdge.withUnsafeBufferPointer { firstEdge in
        graph.targets.withUnsafeBufferPointer { edgeTargets in
        graph.lengths.withUnsafeBufferPointer { lengths in
            while let entry = heap.pop() {
                let u = Int(entry.node)
                if settledStamp[u] == generation { continue }
                settledStamp[u] = generation
                let du = distance[u]
                reached.append((u, du))
                if reached.count > maxSettled || (reached.count & 4095 == 0 && (DispatchTime.now().uptimeNanoseconds > deadline || shouldStop?() == true)) {
                    overLimit = true
                    break
                }
                for e in Int(firstEdge[u])..<Int(firstEdge[u + 1]) {
                    let v = Int(edgeTargets[e])
                    var w = lengths[e]
                    if let edgeFactor {
                        guard let factor = edgeFactor(u, v) else { continue }
                        w *= factor
                    }
                    let dv = du + w
                    if dv <= limit && (stamp[v] != generation || dv < distance[v]) {
                        stamp[v] = generation
                        distance[v] = dv
                        heap.push(QueuedNode(v, dv))
                    }
                }
            }
        }}}}}}
        settled = reached.count
        if overLimit { throw .tooMuchWork(settled: reached.count) }
        return reached
    }

    /// The search itself: the best cost and the target node reached (parents are left set).
    private func search(from sources: [(node: Int, cost: Double)], to targets: [(node: Int, cost: Double)],
                        heuristic: Bool, edgeFactor: ((Int, Int) -> Double?)?) throws(Failure) -> (metres: Double, target: Int) {
        generation &+= 1
        if generation == 0 {  // wrapped: clear once every 4 billion queries
            for i in stamp.indices { stamp[i] = 0; settledStamp[i] = 0; targetStamp[i] = 0 }
            generation = 1
        }
        // The heap is moved into a local for the search (and back after), so the loop does not
        // go through the class's storage.
        var heap = MinHeap<QueuedNode>()
        swap(&heap, &self.heap)
        defer { swap(&heap, &self.heap) }
        heap.removeAll()
        settled = 0
        // Per target: its unit vector, then its distance from each landmark (the ALT bound),
        // in a buffer reused across queries.
        let landmarks = graph.landmarks
        let L = landmarks.count
        // Sources and targets in no common component: no search needed.
        let component = graph.component
        guard targets.contains(where: { t in sources.contains { component[$0.node] == component[t.node] } }) else { throw .unreachable }
        // The landmarks live in the largest component (0): their bounds apply, with every
        // distance finite, when the whole search stays there. Every landmark bounds every node
        // (choosing a few "active" ones per query settled more nodes than it saved here).
        let useLandmarks = heuristic && L > 0 && sources.allSatisfy { component[$0.node] == 0 } && targets.allSatisfy { component[$0.node] == 0 }
        let activeCount = useLandmarks ? L : 0
        let stride = 3 + activeCount
        targetData.removeAll(keepingCapacity: true)
        for t in targets {
            targetData.append(graph.xyz[3 * t.node])
            targetData.append(graph.xyz[3 * t.node + 1])
            targetData.append(graph.xyz[3 * t.node + 2])
            for l in 0..<activeCount { targetData.append(landmarks.distances[t.node * L + l]) }
        }
        for t in targets where t.node >= 0 && t.node < graph.nodeCount {
            if targetStamp[t.node] != generation || t.cost < targetExtra[t.node] {
                targetStamp[t.node] = generation
                targetExtra[t.node] = t.cost
            }
        }
        // The loop works on raw buffers: no exclusivity checks or reference counting per
        // access to the class's arrays.
        let generation = self.generation
        var best = Double.infinity
        var bestTarget = -1
        var settledCount = 0
        var overLimit = false
        let maxSettled = self.maxSettled, shouldStop = self.shouldStop
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, min(maxSeconds, 3600)) * 1e9)
        distance.withUnsafeMutableBufferPointer { distance in
        parent.withUnsafeMutableBufferPointer { parent in
        stamp.withUnsafeMutableBufferPointer { stamp in
        settledStamp.withUnsafeMutableBufferPointer { settledStamp in
        graph.firstEdge.withUnsafeBufferPointer { firstEdge in
        graph.targets.withUnsafeBufferPointer { edgeTargets in
        graph.lengths.withUnsafeBufferPointer { lengths in
        graph.xyz.withUnsafeBufferPointer { xyz in
        landmarks.distances.withUnsafeBufferPointer { landmarkDistances in
        targetData.withUnsafeBufferPointer { targetData in
        targetStamp.withUnsafeBufferPointer { targetStamp in
        targetExtra.withUnsafeBufferPointer { targetExtra in
            let targetCount = targets.count
            /// The A* bound: for the nearest target, the larger of the chord and ALT bounds.
            func h(_ u: Int) -> Double {
                guard heuristic else { return 0 }
                var best = Double.infinity
                for t in 0..<targetCount {
                    let base = t * stride
                    var bound = 0.0
                    if activeCount > 0 {
                        // ALT: |d(L, t) − d(L, u)| for every landmark (all finite here, see above).
                        // On a road network it is almost always tighter than the straight line,
                        // which is left out here to keep each bound cheap.
                        let row = u * L
                        for k in 0..<activeCount {
                            bound = max(bound, abs(targetData[base + 3 + k] - landmarkDistances[row + k]))
                        }
                    } else {
                        // The straight line through the sphere: never longer than the arc.
                        let dx = xyz[3 * u] - targetData[base], dy = xyz[3 * u + 1] - targetData[base + 1], dz = xyz[3 * u + 2] - targetData[base + 2]
                        bound = Geodesy.earthRadius * (dx * dx + dy * dy + dz * dz).squareRoot()
                    }
                    best = min(best, bound)
                }
                // The targets' own extra costs are ≥ 0, so leaving them out keeps h admissible;
                // the factor keeps rounding from ever making it exceed the true distance.
                return best.isFinite ? best * (1 - 1e-9) : 0
            }
            for s in sources {
                if stamp[s.node] != generation || s.cost < distance[s.node] {
                    stamp[s.node] = generation
                    distance[s.node] = s.cost
                    parent[s.node] = -1
                    heap.push(QueuedNode(s.node, s.cost + h(s.node)))
                }
            }
            while let entry = heap.pop() {
                let u = Int(entry.node)
                if entry.key >= best { break }
                if settledStamp[u] == generation { continue }
                settledStamp[u] = generation
                settledCount += 1
                if settledCount > maxSettled { overLimit = true; break }
                if settledCount & 4095 == 0 && (DispatchTime.now().uptimeNanoseconds > deadline || shouldStop?() == true) { overLimit = true; break }
                let du = distance[u]
                if targetStamp[u] == generation, du + targetExtra[u] < best {
                    best = du + targetExtra[u]
                    bestTarget = u
                }
                for e in Int(firstEdge[u])..<Int(firstEdge[u + 1]) {
                    let v = Int(edgeTargets[e])
                    var w = lengths[e]
                    if let edgeFactor {
                        guard let factor = edgeFactor(u, v) else { continue }
                        w *= factor
                    }
                    let dv = du + w
                    if stamp[v] != generation || dv < distance[v] {
                        stamp[v] = generation
                        distance[v] = dv
                        parent[v] = Int32(u)
                        heap.push(QueuedNode(v, dv + h(v)))
                    }
                }
            }
        }}}}}}}}}}}}
        settled = settledCount
        if overLimit { throw .tooMuchWork(settled: settledCount) }
        guard bestTarget >= 0 else { throw .unreachable }
        return (best, bestTarget)
    }
}

/// A node in the search queue (stale entries are skipped by the caller). Ordered by key alone,
/// and equal when the keys are: A* and Dijkstra are exact whichever of two equal keys comes
/// first, so ties need no rule (and no second comparison in the hot loop).
struct QueuedNode: Comparable {
    var key: Double
    var node: Int32

    init(_ node: Int, _ key: Double) {
        self.key = key
        self.node = Int32(node)
    }

    @inline(__always)
    static func < (a: QueuedNode, b: QueuedNode) -> Bool { a.key < b.key }

    @inline(__always)
    static func == (a: QueuedNode, b: QueuedNode) -> Bool { a.key == b.key }
}
