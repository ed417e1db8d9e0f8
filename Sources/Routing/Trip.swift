// The order to visit stops in: the shortest round trip or open path through every stop of a
// cost matrix, optionally from a fixed first stop and/or to a fixed last one.
//
// Up to `exactLimit` stops it is exact: Held–Karp dynamic programming over subsets
// (O(2ⁿ·n²); 12 stops are 0.6 million steps). Beyond, a heuristic: nearest neighbour from the
// start, then 2-opt (reverse a stretch) and Or-opt (move a run of 1–3 stops elsewhere, either
// way round) until neither improves, kicked out of its local optimum by random double bridges
// (iterated local search) a fixed number of times. Every move is costed on the matrix itself,
// so asymmetric costs (one-way paths) stay right. Its answer comes with a lower bound (Held and
// Karp's 1-tree bound, or a spanning tree for a path, on the cheaper direction of each pair) to
// say how far from the optimum it can be.

/// What the trip must do at its ends.
public struct TripShape: Sendable, Equatable {
    /// Back to where it started.
    public var roundTrip: Bool
    /// Starts at stop 0.
    public var fixedFirst: Bool
    /// Ends at the last stop (for a round trip: visits it last, before going back).
    public var fixedLast: Bool

    public init(roundTrip: Bool = true, fixedFirst: Bool = false, fixedLast: Bool = false) {
        self.roundTrip = roundTrip
        self.fixedFirst = fixedFirst
        self.fixedLast = fixedLast
    }
}

public struct TripOrder: Sendable, Equatable {
    /// The stops in visiting order (indices into the matrix), each once; a round trip goes
    /// back from the last to the first.
    public var order: [Int]
    /// The trip's cost, the leg back included for a round trip.
    public var cost: Double
    /// Whether `order` is proven optimal (Held–Karp); else a heuristic's.
    public var exact: Bool
    /// A lower bound on the optimum (equal to `cost` when exact).
    public var lowerBound: Double
}

/// SplitMix64: the heuristic's kicks, the same on every run.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

public enum TripSolver {
    /// The most stops solved exactly by default.
    public static let exactLimit = 12

    /// The best order for `matrix` (`matrix[i][j]`: the cost from stop i to j; infinity where no
    /// path joins them). Nil when no order visits every stop (some stop is cut off).
    /// `shouldStop` is asked now and then: true ends the search early, with nil.
    public static func solve(_ matrix: [[Double]], shape: TripShape, exactLimit: Int = TripSolver.exactLimit,
                             shouldStop: () -> Bool = { false }) -> TripOrder? {
        let n = matrix.count
        guard n > 0, matrix.allSatisfy({ $0.count == n }) else { return nil }
        if n == 1 { return TripOrder(order: [0], cost: 0, exact: true, lowerBound: 0) }
        // Every shape becomes a path from a fixed start, optionally to a fixed end, optionally
        // closed back to the start:
        // - a round trip fixes stop 0 as its start (a cycle may begin anywhere); with a fixed
        //   last stop it is the path 0 → … → last, closed;
        // - an open path with a free start is solved on the reversed matrix from its end, or,
        //   with both ends free, from a dummy stop that costs nothing to leave or reach.
        var costs = matrix
        var start = 0, end: Int? = nil, closed = shape.roundTrip, reversed = false, dummy = false
        if shape.roundTrip {
            // Fixed at both ends, the leg back from the last to the first is part of it;
            // with only the last fixed, the best cycle is turned to end there (below).
            end = shape.fixedFirst && shape.fixedLast ? n - 1 : nil
        } else if shape.fixedFirst {
            end = shape.fixedLast ? n - 1 : nil
        } else if shape.fixedLast {
            costs = (0..<n).map { i in (0..<n).map { j in matrix[j][i] } }
            start = n - 1
            reversed = true
        } else {
            costs = matrix.map { $0 + [0] } + [[Double](repeating: 0, count: n + 1)]
            start = n
            closed = true
            dummy = true
        }
        let m = costs.count
        let solved: (order: [Int], cost: Double)?
        let exact = m <= exactLimit + (dummy ? 1 : 0)
        if exact {
            solved = heldKarp(costs, start: start, end: end, closed: closed, shouldStop: shouldStop)
        } else {
            solved = improve(nearestNeighbour(costs, start: start, end: end), costs, end: end, closed: closed, shouldStop: shouldStop)
        }
        guard let solved, solved.cost.isFinite else { return nil }
        var order = solved.order
        let cost = solved.cost
        var bound = exact ? cost : lowerBound(costs, closed: closed, upper: cost)
        if dummy { order.removeFirst() }
        if reversed { order.reverse() }
        // A round trip whose last stop is fixed but not its first: begin right after it.
        if shape.roundTrip && shape.fixedLast && !shape.fixedFirst, let last = order.firstIndex(of: n - 1), last != order.count - 1 {
            order = Array(order[(last + 1)...] + order[...last])
        }
        bound = min(bound, cost)
        return TripOrder(order: order, cost: cost, exact: exact, lowerBound: bound)
    }

    /// The total cost of visiting `order`, closed or not.
    public static func cost(of order: [Int], _ matrix: [[Double]], closed: Bool) -> Double {
        var total = 0.0
        for (a, b) in zip(order, order.dropFirst()) { total += matrix[a][b] }
        if closed, let first = order.first, let last = order.last, order.count > 1 { total += matrix[last][first] }
        return total
    }

    /// Held–Karp: best[S][j], the cheapest path from `start` through the set S ending at j.
    static func heldKarp(_ c: [[Double]], start: Int, end: Int?, closed: Bool, shouldStop: () -> Bool) -> (order: [Int], cost: Double)? {
        let n = c.count
        // The other stops, numbered 0..<k in the subsets' bits.
        let others = (0..<n).filter { $0 != start }
        let k = others.count
        let full = (1 << k) - 1
        var best = [Double](repeating: .infinity, count: (1 << k) * k)
        var parent = [Int8](repeating: -1, count: (1 << k) * k)
        for j in 0..<k { best[(1 << j) * k + j] = c[start][others[j]] }
        for set in 1...full {
            if set & 1023 == 0 && shouldStop() { return nil }
            for j in 0..<k where set & (1 << j) != 0 {
                let here = best[set * k + j]
                guard here.isFinite else { continue }
                // A fixed end comes last: nothing follows it before the set is full.
                if let end, others[j] == end, set != full { continue }
                for next in 0..<k where set & (1 << next) == 0 {
                    let to = set | (1 << next)
                    let candidate = here + c[others[j]][others[next]]
                    if candidate < best[to * k + next] {
                        best[to * k + next] = candidate
                        parent[to * k + next] = Int8(j)
                    }
                }
            }
        }
        var last = -1
        var total = Double.infinity
        for j in 0..<k {
            if let end, others[j] != end { continue }
            let value = best[full * k + j] + (closed ? c[others[j]][start] : 0)
            if value < total {
                total = value
                last = j
            }
        }
        guard last >= 0, total.isFinite else { return nil }
        var order: [Int] = []
        var set = full, j = last
        while j >= 0 {
            order.append(others[j])
            let previous = Int(parent[set * k + j])
            set &= ~(1 << j)
            j = previous
        }
        return ([start] + order.reversed(), total)
    }

    /// From `start`, always the cheapest unvisited stop next; a fixed `end` last.
    static func nearestNeighbour(_ c: [[Double]], start: Int, end: Int?) -> [Int] {
        let n = c.count
        var visited = [Bool](repeating: false, count: n)
        visited[start] = true
        if let end { visited[end] = true }
        var order = [start]
        var current = start
        for _ in 0..<(n - 1 - (end == nil || end == start ? 0 : 1)) {
            var next = -1
            for j in 0..<n where !visited[j] && (next < 0 || c[current][j] < c[current][next]) { next = j }
            guard next >= 0 else { break }
            visited[next] = true
            order.append(next)
            current = next
        }
        if let end, end != start { order.append(end) }
        return order
    }

    /// Iterated local search: 2-opt and Or-opt moves until none lowers the cost, then a
    /// random double bridge (three cuts, the middle pieces swapped) and again, keeping the best
    /// order found. The first stop, and a fixed last, stay where they are. Deterministic: the
    /// kicks come from a fixed seed.
    static func improve(_ initial: [Int], _ c: [[Double]], end: Int?, closed: Bool, shouldStop: () -> Bool) -> (order: [Int], cost: Double)? {
        var best = initial
        guard localSearch(&best, c, end: end, closed: closed, shouldStop: shouldStop) else { return nil }
        var bestCost = cost(of: best, c, closed: closed)
        let n = best.count
        let hi = end == nil ? n : n - 1
        guard hi - 1 >= 4 else { return (best, bestCost) }
        var random = SplitMix64(seed: 0x7269_7073)
        let kicks = n <= 30 ? 200 : 60
        for _ in 0..<kicks {
            var cuts = [Int]()
            while cuts.count < 3 {
                let cut = 1 + Int(random.next() % UInt64(hi - 1))
                if !cuts.contains(cut) { cuts.append(cut) }
            }
            cuts.sort()
            var candidate = Array(best[..<cuts[0]])
            candidate += best[cuts[1]..<cuts[2]]
            candidate += best[cuts[0]..<cuts[1]]
            candidate += best[cuts[2]...]
            guard localSearch(&candidate, c, end: end, closed: closed, shouldStop: shouldStop) else { return nil }
            let value = cost(of: candidate, c, closed: closed)
            if value < bestCost - 1e-9 {
                best = candidate
                bestCost = value
            }
        }
        return (best, bestCost)
    }

    /// 2-opt and Or-opt until neither improves, each move costed in O(1) from prefix sums of
    /// the order's edges both ways (a reversed stretch costs its edges backwards). False when
    /// `shouldStop` said so.
    static func localSearch(_ order: inout [Int], _ c: [[Double]], end: Int?, closed: Bool, shouldStop: () -> Bool) -> Bool {
        let n = order.count
        let hi = end == nil ? n : n - 1          // positions 1 ..< hi may move
        guard hi - 1 >= 2 else { return true }
        var forward = [Double](repeating: 0, count: n), backward = [Double](repeating: 0, count: n)
        func sums() {
            for k in 1..<n {
                forward[k] = forward[k - 1] + c[order[k - 1]][order[k]]
                backward[k] = backward[k - 1] + c[order[k]][order[k - 1]]
            }
        }
        /// The stop after position k, nil at the end of an open path.
        func after(_ k: Int) -> Int? { k + 1 < n ? order[k + 1] : closed ? order[0] : nil }
        var improved = true
        var passes = 0
        while improved && passes < 10_000 {
            improved = false
            passes += 1
            if shouldStop() { return false }
            sums()
            // 2-opt: reverse positions i...j.
            for i in 1..<(hi - 1) {
                for j in (i + 1)..<hi {
                    let a = order[i - 1], first = order[i], last = order[j]
                    var delta = c[a][last] - c[a][first] + (backward[j] - backward[i]) - (forward[j] - forward[i])
                    if let b = after(j) { delta += c[first][b] - c[last][b] }
                    if delta < -1e-9 {
                        order[i...j].reverse()
                        sums()
                        improved = true
                    }
                }
            }
            // Or-opt: move a run of 1–3 stops between two others, as it is or reversed.
            for length in 1...3 {
                var i = 1
                while i + length <= hi {
                    let run = Array(order[i..<(i + length)])
                    let p = order[i - 1], q = after(i + length - 1)
                    var inside = 0.0, insideBack = 0.0
                    for (x, y) in zip(run, run.dropFirst()) { inside += c[x][y]; insideBack += c[y][x] }
                    var removal = -c[p][run[0]]
                    if let q { removal += c[p][q] - c[run[length - 1]][q] }
                    var rest = order
                    rest.removeSubrange(i..<(i + length))
                    let restHi = hi - length
                    var bestMove: (place: Int, reversed: Bool, delta: Double)?
                    // Between rest[r] and rest[r + 1] (or the wrap, or the open end).
                    for r in 0..<restHi where r != i - 1 {
                        let x = rest[r]
                        let y: Int? = r + 1 < rest.count ? rest[r + 1] : closed ? rest[0] : nil
                        let cut = y.map { c[x][$0] } ?? 0
                        let ahead = c[x][run[0]] + (y.map { c[run[length - 1]][$0] } ?? 0) - cut
                        let back = c[x][run[length - 1]] + (y.map { c[run[0]][$0] } ?? 0) - cut + insideBack - inside
                        for (reversed, added) in [(false, ahead), (true, back)] {
                            let delta = removal + added
                            if delta < -1e-9 && delta < (bestMove?.delta ?? 0) { bestMove = (r + 1, reversed, delta) }
                        }
                    }
                    if let move = bestMove {
                        rest.insert(contentsOf: move.reversed ? run.reversed() : run, at: move.place)
                        order = rest
                        sums()
                        improved = true
                    }
                    i += 1
                }
            }
        }
        return true
    }

    /// A lower bound on any order's cost, on the cheaper direction of each pair (a tour never
    /// costs less on those). For a path: a spanning tree of all stops (a path is one). For a
    /// closed trip: Held and Karp's 1-tree bound (1970): a spanning tree of the others plus the
    /// two cheapest edges of stop 0, on costs raised by a penalty per stop, which subgradient
    /// steps move towards every stop having two edges (a tour); the best bound seen is kept.
    /// `upper` (a trip's cost) sizes the steps.
    static func lowerBound(_ c: [[Double]], closed: Bool, upper: Double) -> Double {
        let n = c.count
        var penalty = [Double](repeating: 0, count: n)
        func cost(_ i: Int, _ j: Int) -> Double { min(c[i][j], c[j][i]) + penalty[i] + penalty[j] }
        /// Prim's spanning tree over `nodes` on the penalised costs: its cost, and each node's degree.
        func spanningTree(_ nodes: [Int], degree: inout [Int]) -> Double {
            guard nodes.count > 1 else { return 0 }
            var inTree = [Bool](repeating: false, count: n)
            var cheapest = [Double](repeating: .infinity, count: n)
            var parent = [Int](repeating: -1, count: n)
            var total = 0.0
            cheapest[nodes[0]] = 0
            for _ in nodes {
                var u = -1
                for v in nodes where !inTree[v] && (u < 0 || cheapest[v] < cheapest[u]) { u = v }
                guard u >= 0 else { break }
                inTree[u] = true
                total += cheapest[u]
                if parent[u] >= 0 { degree[u] += 1; degree[parent[u]] += 1 }
                for v in nodes where !inTree[v] && cost(u, v) < cheapest[v] {
                    cheapest[v] = cost(u, v)
                    parent[v] = u
                }
            }
            return total
        }
        var degree = [Int](repeating: 0, count: n)
        guard closed, n > 2 else { return spanningTree(Array(0..<n), degree: &degree) }
        var best = -Double.infinity
        var scale = 2.0
        var sinceBetter = 0
        for _ in 0..<(20 * n) {
            degree = [Int](repeating: 0, count: n)
            var tree = spanningTree(Array(1..<n), degree: &degree)
            let nearest = (1..<n).sorted { cost(0, $0) < cost(0, $1) }.prefix(2)
            for j in nearest {
                tree += cost(0, j)
                degree[0] += 1
                degree[j] += 1
            }
            let bound = tree - 2 * penalty.reduce(0, +)
            guard bound.isFinite else { return best.isFinite ? best : 0 }
            if bound > best + 1e-9 {
                best = bound
                sinceBetter = 0
            } else {
                sinceBetter += 1
                if sinceBetter >= max(5, n / 4) {
                    scale /= 2
                    sinceBetter = 0
                }
            }
            // Every stop with two edges: the 1-tree is a tour, and the bound is the optimum.
            let norm = degree.reduce(0) { $0 + ($1 - 2) * ($1 - 2) }
            if norm == 0 || scale < 1e-4 { break }
            let step = scale * max(0, upper - bound) / Double(norm)
            for i in 0..<n { penalty[i] += step * Double(degree[i] - 2) }
        }
        return best
    }
}
