// Exact k-nearest in Euclidean space of any dimension: a k-d tree over the signal vectors of
// indoor fingerprints (one dBm value per beacon). Each node splits its items at the median of
// the dimension in which they spread most, so the many dimensions a region's beacons never
// reach cost nothing. A search keeps, per dimension, how far the query lies outside the
// current region (Arya & Mount's incremental distance), so the bound it prunes with is the
// exact squared distance to the region's box, with no boxes stored.
//
// Items may count several times: the fingerprint map keeps each distinct vector once with the
// number of survey scans that share it (a survey of integer dBm values repeats itself: 648
// distinct vectors among 1,420 scans of the WMU library), and a leave-one-out evaluation counts
// the left-out scan's vector once less. A search returns the fewest nearest items whose counts
// reach k, plus every item tied with the last of them, so the caller can break ties by its own
// rule.

public struct VectorTree: Sendable {
    public let dimensions: Int
    /// Items in the tree.
    public let count: Int
    /// Item vectors in tree order, `dimensions` values each.
    private let values: [Double]
    /// The caller's index of the item at each tree position.
    private let order: [Int32]
    /// Nodes: the range of tree positions they hold, the split (axis < 0 for a leaf) and the
    /// children (the left one holds values below the split on the axis, the right one above).
    private let nodeStart: [Int32]
    private let nodeEnd: [Int32]
    private let nodeAxis: [Int32]
    private let nodeSplit: [Double]
    private let nodeLeft: [Int32]
    private let nodeRight: [Int32]
    /// Leaves this small are cheaper to scan than to descend.
    static let leafSize = 6

    /// Indexes `vectors` (flat, `dimensions` values per item; item i is `vectors[i*d ..< (i+1)*d]`).
    /// A NaN or infinite value is refused with `.nonFinite(item:)`.
    public init(dimensions: Int, vectors: [Double]) throws(SpatialIndexError) {
        precondition(dimensions >= 1 && vectors.count % dimensions == 0, "VectorTree: vectors are not whole items")  // programmer error
        let n = vectors.count / dimensions
        guard n <= Int(Int32.max) else { throw .tooLarge(n) }
        for i in vectors.indices where !vectors[i].isFinite { throw .nonFinite(item: i / dimensions) }
        self.dimensions = dimensions
        count = n
        var perm = Array(0..<n)
        var starts: [Int32] = [], ends: [Int32] = [], axes: [Int32] = [], splits: [Double] = [], lefts: [Int32] = [], rights: [Int32] = []
        func value(_ item: Int, _ axis: Int) -> Double { vectors[item * dimensions + axis] }
        /// Builds the node over perm[lo..<hi] and returns its number.
        func build(_ lo: Int, _ hi: Int) -> Int32 {
            let node = Int32(starts.count)
            starts.append(Int32(lo)); ends.append(Int32(hi)); axes.append(-1); splits.append(0); lefts.append(-1); rights.append(-1)
            guard hi - lo > VectorTree.leafSize else { return node }
            var axis = 0, widest = -1.0
            for a in 0..<dimensions {
                var low = Double.infinity, high = -Double.infinity
                for k in lo..<hi {
                    let v = value(perm[k], a)
                    low = min(low, v)
                    high = max(high, v)
                }
                if high - low > widest { (axis, widest) = (a, high - low) }
            }
            // Every item the same: one leaf, however many (a survey repeats itself).
            guard widest > 0 else { return node }
            perm[lo..<hi].sort { (value($0, axis), $0) < (value($1, axis), $1) }
            // Split between two distinct values nearest the median, never through a run of
            // equal ones: a survey's values repeat (every beacon not heard is -200), and a plane
            // through such a run would leave the query on it with both sides to search.
            var mid = (lo + hi) / 2
            if value(perm[mid - 1], axis) == value(perm[mid], axis) {
                var down = mid - 1, up = mid + 1
                while down > lo && value(perm[down - 1], axis) == value(perm[down], axis) { down -= 1 }
                while up < hi && value(perm[up - 1], axis) == value(perm[up], axis) { up += 1 }
                mid = up >= hi || (down > lo && mid - down <= up - mid) ? down : up
            }
            axes[Int(node)] = Int32(axis)
            splits[Int(node)] = (value(perm[mid - 1], axis) + value(perm[mid], axis)) / 2
            let left = build(lo, mid)
            let right = build(mid, hi)
            lefts[Int(node)] = left
            rights[Int(node)] = right
            return node
        }
        if n > 0 { _ = build(0, n) }
        var ordered: [Double] = []
        ordered.reserveCapacity(vectors.count)
        for item in perm { ordered += vectors[(item * dimensions)..<((item + 1) * dimensions)] }
        values = ordered
        order = perm.map { Int32($0) }
        (nodeStart, nodeEnd, nodeAxis, nodeSplit, nodeLeft, nodeRight) = (starts, ends, axes, splits, lefts, rights)
    }

    /// The nearest items to `query` (`dimensions` values), nearest first, ties by item index:
    /// the fewest whose `weight`s add up to at least `k`, and every further item at the same
    /// distance as the last of them. Items of weight 0 or less are skipped. Distances are
    /// squared. `visited` counts the nodes entered.
    public func nearest(to query: [Double], k: Int, weight: (Int) -> Int, visited: inout Int) -> [(item: Int, distanceSquared: Double)] {
        precondition(query.count == dimensions, "VectorTree: the query has \(query.count) values for \(dimensions) dimensions")
        guard count > 0, k > 0 else { return [] }
        var search = Search(k: k)
        var offsets = [Double](repeating: 0, count: dimensions)
        values.withUnsafeBufferPointer { values in
            query.withUnsafeBufferPointer { query in
                offsets.withUnsafeMutableBufferPointer { offsets in
                    visit(0, 0, values, query, offsets, &search, weight, &visited)
                }
            }
        }
        return zip(search.items, search.distances).map { (Int($0), $1) }
    }

    private func visit(_ node: Int, _ lowerBound: Double, _ values: UnsafeBufferPointer<Double>, _ query: UnsafeBufferPointer<Double>,
                       _ offsets: UnsafeMutableBufferPointer<Double>, _ search: inout Search, _ weight: (Int) -> Int, _ visited: inout Int) {
        // Strictly greater: an item exactly at the bound is a tie the caller must see.
        guard lowerBound <= search.bound else { return }
        visited += 1
        let axis = Int(nodeAxis[node])
        if axis < 0 {
            let d = dimensions
            for position in Int(nodeStart[node])..<Int(nodeEnd[node]) {
                let item = Int(order[position])
                let w = weight(item)
                guard w > 0 else { continue }
                var sum = 0.0
                var a = 0
                let base = position * d
                while a < d {
                    let diff = values[base + a] - query[a]
                    sum += diff * diff
                    a += 1
                    if sum > search.bound { break }
                }
                if sum <= search.bound { search.insert(Int32(item), sum, w) }
            }
            return
        }
        let diff = query[axis] - nodeSplit[node]
        let (near, far) = diff < 0 ? (Int(nodeLeft[node]), Int(nodeRight[node])) : (Int(nodeRight[node]), Int(nodeLeft[node]))
        visit(near, lowerBound, values, query, offsets, &search, weight, &visited)
        let old = offsets[axis]
        let farBound = lowerBound - old * old + diff * diff
        offsets[axis] = diff
        visit(far, farBound, values, query, offsets, &search, weight, &visited)
        offsets[axis] = old
    }

    /// The candidates so far, nearest first, and the squared distance beyond which nothing can
    /// join them (that of the candidate whose weight makes the sum reach k).
    private struct Search {
        let k: Int
        var items: [Int32] = []
        var distances: [Double] = []
        var weights: [Int] = []
        var bound = Double.infinity

        init(k: Int) {
            self.k = k
            items.reserveCapacity(k + 4)
            distances.reserveCapacity(k + 4)
            weights.reserveCapacity(k + 4)
        }

        mutating func insert(_ item: Int32, _ distance: Double, _ weight: Int) {
            var at = distances.count
            while at > 0 && (distances[at - 1] > distance || (distances[at - 1] == distance && items[at - 1] > item)) { at -= 1 }
            items.insert(item, at: at)
            distances.insert(distance, at: at)
            weights.insert(weight, at: at)
            var total = 0
            for i in weights.indices {
                total += weights[i]
                if total >= k {
                    bound = distances[i]
                    var end = i + 1
                    while end < distances.count && distances[end] == bound { end += 1 }
                    if end < distances.count {
                        items.removeSubrange(end...)
                        distances.removeSubrange(end...)
                        weights.removeSubrange(end...)
                    }
                    return
                }
            }
        }
    }
}
