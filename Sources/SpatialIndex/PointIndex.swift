// Exact k-nearest over points on the sphere. Each point is stored as its unit vector (x, y, z);
// the chord between two unit vectors grows monotonically with their great-circle distance, so
// ranking by squared chord is exact and needs no trigonometry per candidate. Only the answers
// are converted to metres (haversine, R = 6,371,008.8 m).
//
// The vectors sit in an implicit 3-d k-d tree: a median-split array with no node objects. The
// range [lo, hi) of more than `leafSize` points is an inner node whose own point sits at
// mid = (lo + hi) / 2, split on `axes[mid]`: the points before it are smaller on that axis
// (ties by index), those after it larger. Smaller ranges are leaves, scanned whole. The axis is
// the one along which the node's points spread widest: a layer in one country is a thin,
// tilted sheet in 3-d, and cycling x, y, z would split it across its thickness a third of the
// time (W5: 22.5 nodes a 3-nearest search instead of 28).
//
// Layout: the coordinates in tree order, one block per axis (all x, then all y, then all z), so
// a leaf scan and a split read contiguous doubles, and the build moves 28 bytes per swap.
//
// Pruning is exact: a subtree is skipped only when the squared distance from the query to its
// cell exceeds the k-th best squared chord. That distance is built from one offset per axis
// (how far the query lies outside the cell along it), summed by `squaredNorm` in the same
// order as a candidate's own squared chord. Every point in the cell is at least as far along
// each axis, and rounding is monotone, so the rounded bound never exceeds a rounded candidate
// distance: no answer, and no tie, is ever pruned.
//
// A set of at most `scanMaximum` points asked for at most 3 nearest without a filter is scanned
// whole instead, from a cheaper unit vector than libm's, and its answer kept only where that
// cannot have changed it; the rest go to the tree (see `Tree.scan` and `Tree.settle`).

import Dispatch
import Foundation
import Geometry

public struct PointIndex: Sendable {
    /// Unit vectors in tree order: x of position i at `coords[i]`, y at `coords[count + i]`,
    /// z at `coords[2 * count + i]`.
    private let coords: [Double]
    /// Original index of the point at each tree position.
    private let order: [Int32]
    /// The split axis (0, 1, 2 for x, y, z) of the inner node whose point is at each position.
    private let axes: [UInt8]
    private let lons: [Double]
    private let lats: [Double]
    /// The points indexed: positions that are NaN in both coordinates are left out.
    public let count: Int
    /// Leaves this small are cheaper to scan than to descend.
    static let leafSize = 8
    /// Ranges at least this large build their two halves on two threads (about a millisecond
    /// of work each, against tens of microseconds to hand one over).
    static let parallelBuildSize = 16_384

    /// Indexes the points by position. A position whose longitude and latitude are both NaN is
    /// no point (WKB's spelling of POINT EMPTY, and a layer's placeholder for a feature without
    /// one) and is left out; any other NaN or infinite coordinate is refused with
    /// `.nonFinite(item:)`, so a caller can name the feature rather than index garbage.
    public init(lons: [Double], lats: [Double]) throws(SpatialIndexError) {
        precondition(lons.count == lats.count, "PointIndex: lons and lats differ in length")  // programmer error, not input
        guard lons.count <= Int(Int32.max) else { throw .tooLarge(lons.count) }
        var count = 0
        for i in lons.indices {
            if lons[i].isFinite && lats[i].isFinite {
                count += 1
            } else if !(lons[i].isNaN && lats[i].isNaN) {
                throw .nonFinite(item: i)
            }
        }
        self.lons = lons
        self.lats = lats
        self.count = count
        var coords = [Double](repeating: 0, count: 3 * count)
        var order = [Int32](repeating: 0, count: count)
        var axes = [UInt8](repeating: 0, count: count)
        coords.withUnsafeMutableBufferPointer { coords in
            order.withUnsafeMutableBufferPointer { order in
                axes.withUnsafeMutableBufferPointer { axes in
                    var slot = 0
                    for i in lons.indices where lons[i].isFinite && lats[i].isFinite {
                        let v = Geodesy.unitVector(lon: lons[i], lat: lats[i])
                        (coords[slot], coords[count + slot], coords[2 * count + slot]) = (v.x, v.y, v.z)
                        order[slot] = Int32(truncatingIfNeeded: i)
                        slot += 1
                    }
                    TreeBuilder(coords: coords, order: order, axes: axes, count: count).build(0, count)
                }
            }
        }
        self.coords = coords
        self.order = order
        self.axes = axes
    }

    /// The k nearest points, nearest first (ties by smaller index), optionally within
    /// `maxMetres` and passing `filter`. Distances in metres (haversine). `visited` counts the
    /// tree nodes the search entered (inner nodes and leaves), for EXPLAIN.
    public func nearest(k: Int, lon: Double, lat: Double, maxMetres: Double = .infinity,
                        filter: ((Int) -> Bool)? = nil, visited: UnsafeMutablePointer<Int>? = nil) -> [(index: Int, metres: Double)] {
        guard k > 0, count > 0 else { return [] }
        let limitChord = maxMetres.isFinite ? Geodesy.chord(fromMetres: maxMetres) : 3
        let found = withUnsafeTemporaryAllocation(of: (Double, Int32).self, capacity: min(k, count)) { storage in
            var best = Best(storage: storage, limit: limitChord * limitChord)
            withTree { tree in tree.search(lon: lon, lat: lat, &best, filter) }
            visited?.pointee = best.visited
            return (0..<best.size).map { Int(storage[$0].1) }
        }
        return found.map { i in (i, Geodesy.haversine(lon1: lon, lat1: lat, lon2: lons[i], lat2: lats[i])) }
    }

    /// Every point within `metres`, nearest first.
    public func within(metres: Double, lon: Double, lat: Double, filter: ((Int) -> Bool)? = nil) -> [(index: Int, metres: Double)] {
        nearest(k: count, lon: lon, lat: lat, maxMetres: metres, filter: filter)
    }

    /// Writes the indices of the k nearest points (nearest first) into `result`, which must
    /// hold k entries; returns how many were found. No allocation per query beyond the
    /// caller's buffer: the server's hot path.
    public func nearestIndices(k: Int, lon: Double, lat: Double, into result: UnsafeMutableBufferPointer<Int32>) -> Int {
        guard k > 0, count > 0 else { return 0 }
        return withUnsafeTemporaryAllocation(of: (Double, Int32).self, capacity: min(k, count)) { storage in
            withTree { tree in tree.nearest(lon: lon, lat: lat, storage, into: result) }
        }
    }

    /// The k nearest points of every query in `queries` (longitude, latitude pairs): query i's
    /// go to `result[k * i ..< k * i + k]`, nearest first, with -1 after the last one found.
    /// The answers are `nearestIndices`'s, query by query; only the order of the work differs
    /// (see `Tree.nearest(_:_:_:into:)`).
    public func nearestIndices(k: Int, queries: UnsafeBufferPointer<Double>, into result: UnsafeMutableBufferPointer<Int32>) {
        let n = queries.count / 2
        precondition(k >= 0 && result.count >= k * n, "PointIndex: the result buffer is too small")  // programmer error, not input
        guard k > 0 else { return }
        for i in 0..<(k * n) { result[i] = -1 }
        guard count > 0 else { return }
        withUnsafeTemporaryAllocation(of: (Double, Int32).self, capacity: min(k, count)) { storage in
            withTree { tree in
                if tree.scans(k: k) {
                    // Two queries a scan (one in each lane); the odd last one in both lanes.
                    for i in stride(from: 0, to: n, by: 2) {
                        let j = min(i + 1, n - 1)
                        tree.nearestByScan((queries[2 * i], queries[2 * i + 1]), (queries[2 * j], queries[2 * j + 1]), storage,
                                           into: UnsafeMutableBufferPointer(rebasing: result[(k * i)..<(k * i + k)]),
                                           UnsafeMutableBufferPointer(rebasing: result[(k * j)..<(k * j + k)]))
                    }
                    return
                }
                guard count >= PointIndex.sortedBatchMinimum else {
                    for i in 0..<n {
                        _ = tree.nearest(lon: queries[2 * i], lat: queries[2 * i + 1], storage,
                                         into: UnsafeMutableBufferPointer(rebasing: result[(k * i)..<(k * i + k)]))
                    }
                    return
                }
                var start = 0
                while start < n {
                    let end = min(n, start + PointIndex.batchSize)
                    tree.nearest(queries, start..<end, storage, into: result)
                    start = end
                }
            }
        }
    }

    /// Up to this many points, a search for up to `scanMaximumK` nearest with no filter scans
    /// every point instead of walking the tree (see `Tree.scan`): W4, 17 stations.
    static let scanMaximum = 32
    static let scanMaximumK = 3
    /// A tree this small sits in the first-level cache, and sorting a batch costs more than it
    /// saves (W4, 17 points: a tenth more time per query).
    static let sortedBatchMinimum = 1_024
    /// Queries in a batch are sorted this many at a time (see `Tree.nearest(_:_:_:into:)`), so
    /// the scratch space stays small (about 2 MB).
    static let batchSize = 1 << 16

    private func withTree<R>(_ body: (Tree) -> R) -> R {
        coords.withUnsafeBufferPointer { coords in
            order.withUnsafeBufferPointer { order in
                axes.withUnsafeBufferPointer { axes in
                    body(Tree(coords: coords, order: order, axes: axes, count: count))
                }
            }
        }
    }
}

/// A candidate's squared chord, and the squared distance to a cell from the query's offsets
/// along each axis: one function, so both are rounded alike (see the header on exact pruning).
@inline(__always)
private func squaredNorm(_ dx: Double, _ dy: Double, _ dz: Double) -> Double {
    dx * dx + dy * dy + dz * dz
}

/// The extent of a node's points along each axis, while the tree is built.
private struct Extent {
    var low = (Double.infinity, Double.infinity, Double.infinity)
    var high = (-Double.infinity, -Double.infinity, -Double.infinity)

    mutating func extend(_ x: Double, _ y: Double, _ z: Double) {
        low = (min(low.0, x), min(low.1, y), min(low.2, z))
        high = (max(high.0, x), max(high.1, y), max(high.2, z))
    }

    /// The axis of the widest spread (the lowest such axis on a tie).
    var longestAxis: Int {
        let (dx, dy, dz) = (high.0 - low.0, high.1 - low.1, high.2 - low.2)
        return dx >= dy && dx >= dz ? 0 : dy >= dz ? 1 : 2
    }
}

/// Builds the implicit tree in place over the index's own arrays. The two halves of a node
/// touch disjoint ranges, so large ones are built on two threads at once.
private struct TreeBuilder: @unchecked Sendable {
    let coords: UnsafeMutableBufferPointer<Double>
    let order: UnsafeMutableBufferPointer<Int32>
    let axes: UnsafeMutableBufferPointer<UInt8>
    let count: Int

    func build(_ lo: Int, _ hi: Int) {
        guard hi - lo > PointIndex.leafSize else { return }
        let mid = (lo + hi) / 2
        var extent = Extent()
        for i in lo..<hi { extent.extend(coords[i], coords[count + i], coords[2 * count + i]) }
        let axis = extent.longestAxis
        select(mid, lo, hi, axis: axis)
        axes[mid] = UInt8(truncatingIfNeeded: axis)
        if hi - lo >= PointIndex.parallelBuildSize {
            DispatchQueue.concurrentPerform(iterations: 2) { half in
                if half == 0 { build(lo, mid) } else { build(mid + 1, hi) }
            }
        } else {
            build(lo, mid)
            build(mid + 1, hi)
        }
    }

    @inline(__always)
    func swapAt(_ i: Int, _ j: Int) {
        coords.swapAt(i, j)
        coords.swapAt(count + i, count + j)
        coords.swapAt(2 * count + i, 2 * count + j)
        order.swapAt(i, j)
    }

    /// Puts at position k the point that a sort of [lo, hi) by (coordinate on `axis`, index)
    /// would put there, with the smaller ones before it and the larger after (Hoare's
    /// selection, median-of-three pivots; a range that keeps shrinking slowly is sorted
    /// instead, so the worst case stays O(n log n)). Keys with the index as tie-break are all
    /// distinct, so the tree is the same on every run.
    func select(_ k: Int, _ lo: Int, _ hi: Int, axis: Int) {
        let base = axis * count
        @inline(__always) func less(_ i: Int, _ j: Int) -> Bool {
            let a = coords[base + i], b = coords[base + j]
            return a < b || (a == b && order[i] < order[j])
        }
        var lo = lo, hi = hi
        var budget = 2 * (Int.bitWidth - (hi - lo).leadingZeroBitCount) + 4
        while hi - lo > 16 {
            budget -= 1
            if budget < 0 {
                heapSort(lo, hi, less)
                return
            }
            // Median of three to hi - 1, then partition [lo, hi - 1) around it (Lomuto).
            let m = lo + (hi - lo) / 2, last = hi - 1
            if less(m, lo) { swapAt(m, lo) }
            if less(last, lo) { swapAt(last, lo) }
            if less(m, last) { swapAt(m, last) }
            var store = lo
            for i in lo..<last where less(i, last) {
                swapAt(i, store)
                store += 1
            }
            swapAt(store, last)
            if store == k { return }
            if k < store { hi = store } else { lo = store + 1 }
        }
        // Insertion sort of what is left: k lands in place.
        if hi - lo > 1 {
            for i in (lo + 1)..<hi {
                var j = i
                while j > lo && less(j, j - 1) {
                    swapAt(j, j - 1)
                    j -= 1
                }
            }
        }
    }

    /// Sorts [lo, hi) in place by `less` (the rare fallback of `select`).
    func heapSort(_ lo: Int, _ hi: Int, _ less: (Int, Int) -> Bool) {
        let n = hi - lo
        func siftDown(_ start: Int, _ end: Int) {
            var root = start
            while 2 * root + 1 < end {
                var child = 2 * root + 1
                if child + 1 < end && less(lo + child, lo + child + 1) { child += 1 }
                guard less(lo + root, lo + child) else { return }
                swapAt(lo + root, lo + child)
                root = child
            }
        }
        for start in stride(from: n / 2 - 1, through: 0, by: -1) { siftDown(start, n) }
        for end in stride(from: n - 1, to: 0, by: -1) {
            swapAt(lo, lo + end)
            siftDown(0, end)
        }
    }
}

/// The index's arrays, borrowed for a search without bounds checks or reference counting
/// (the arrays outlive it).
private struct Tree {
    let coords: UnsafeBufferPointer<Double>
    let order: UnsafeBufferPointer<Int32>
    let axes: UnsafeBufferPointer<UInt8>
    let count: Int

    /// Every query path's search: the k best (k = `best.storage.count`) into `best`. A small
    /// set is scanned when the scan's answer is settled (see `scan`); otherwise, and always
    /// with a filter, the tree is walked from the query's exact unit vector.
    func search(lon: Double, lat: Double, _ best: inout Best, _ filter: ((Int) -> Bool)?) {
        if filter == nil && scans(k: best.storage.count) && searchByScan(lon: lon, lat: lat, &best) { return }
        searchTree(Geodesy.unitVector(lon: lon, lat: lat), &best, filter)
    }

    /// The scan of one position (in both lanes), settled or not. Out of line: inlined, it made
    /// every tree search 3% slower (W5).
    @inline(never)
    private func searchByScan(lon: Double, lat: Double, _ best: inout Best) -> Bool {
        let (slots, _) = scan((lon, lat), (lon, lat))
        return settle(slots, &best)
    }

    private func searchTree(_ q: (x: Double, y: Double, z: Double), _ best: inout Best, _ filter: ((Int) -> Bool)?) {
        Searcher(tree: self, qx: q.x, qy: q.y, qz: q.z, filter: filter).visit(0, count, 0, 0, 0, &best)
    }

    /// The k nearest (k = `storage.count`) of a position into `result`; returns how many were
    /// found.
    func nearest(lon: Double, lat: Double, _ storage: UnsafeMutableBufferPointer<(Double, Int32)>,
                 into result: UnsafeMutableBufferPointer<Int32>) -> Int {
        var best = Best(storage: storage, limit: 9)
        search(lon: lon, lat: lat, &best, nil)
        for i in 0..<best.size { result[i] = storage[i].1 }
        return best.size
    }

    /// Whether a search for k nearest without a filter scans (see `scan`).
    func scans(k: Int) -> Bool { count <= PointIndex.scanMaximum && k <= PointIndex.scanMaximumK }

    /// `nearest(lon:lat:_:into:)` of two positions at once, a and b (which may be the same
    /// position with the same result buffer): one scan, each lane settled on its own.
    func nearestByScan(_ a: (lon: Double, lat: Double), _ b: (lon: Double, lat: Double), _ storage: UnsafeMutableBufferPointer<(Double, Int32)>,
                       into resultA: UnsafeMutableBufferPointer<Int32>, _ resultB: UnsafeMutableBufferPointer<Int32>) {
        let (slotsA, slotsB) = scan(a, b)
        @inline(__always) func answer(_ slots: Slots, _ position: (lon: Double, lat: Double), _ result: UnsafeMutableBufferPointer<Int32>) {
            var best = Best(storage: storage, limit: 9)
            if !settle(slots, &best) { searchTree(Geodesy.unitVector(lon: position.lon, lat: position.lat), &best, nil) }
            for i in 0..<best.size { result[i] = storage[i].1 }
        }
        answer(slotsA, a, resultA)
        answer(slotsB, b, resultB)
    }

    /// The four nearest points of two positions (one in each SIMD lane) by a scan of every
    /// point, as keys: a squared chord whose lowest 5 bits are replaced by the point's tree
    /// position (below `scanMaximum` = 32), read as a Double. Non-negative Doubles order as
    /// their bit patterns, so the four smallest keys are kept by min/max alone, with no branch
    /// (W4, 17 points and queries in random order: a branch per candidate mispredicts).
    ///
    /// The query's unit vector comes from `approximateUnitVectors`, not `Geodesy.unitVector`
    /// (libm's sin and cos were a third of W4's time), so each squared chord here may differ
    /// from the exact path's by up to `scanError`; `settle` accepts the answer only where that
    /// cannot change it. A position the approximation does not cover (|lon| > 360, |lat| > 90,
    /// NaN) gives keys that `settle` refuses.
    @inline(__always)
    func scan(_ a: (lon: Double, lat: Double), _ b: (lon: Double, lat: Double)) -> (Slots, Slots) {
        let (qx, qy, qz, inRange) = approximateUnitVectors(lon: SIMD2(a.lon, b.lon), lat: SIMD2(a.lat, b.lat))
        var s0 = SIMD2<Double>(repeating: .infinity), s1 = s0, s2 = s0, s3 = s0
        let keep = SIMD2<UInt64>(repeating: ~PointIndex.scanPositionMask)
        for i in 0..<count {
            let dx = SIMD2(repeating: coords[i]) - qx
            let dy = SIMD2(repeating: coords[count &+ i]) - qy
            let dz = SIMD2(repeating: coords[2 &* count &+ i]) - qz
            let d2 = dx * dx + dy * dy + dz * dz
            let bits = unsafeBitCast(d2, to: SIMD2<UInt64>.self) & keep | SIMD2(repeating: UInt64(truncatingIfNeeded: i))
            // Insert into the sorted four: each slot keeps the smaller, passes on the larger.
            var key = unsafeBitCast(bits, to: SIMD2<Double>.self)
            var less = key .< s0
            (s0, key) = (s0.replacing(with: key, where: less), key.replacing(with: s0, where: less))
            less = key .< s1
            (s1, key) = (s1.replacing(with: key, where: less), key.replacing(with: s1, where: less))
            less = key .< s2
            (s2, key) = (s2.replacing(with: key, where: less), key.replacing(with: s2, where: less))
            s3 = s3.replacing(with: key, where: key .< s3)
        }
        return (Slots(keys: SIMD4(s0[0], s1[0], s2[0], s3[0]), valid: inRange[0]), Slots(keys: SIMD4(s0[1], s1[1], s2[1], s3[1]), valid: inRange[1]))
    }

    /// Puts a scan's answer into `best` (empty, its bound still the limit) if it is certainly
    /// the exact path's: every squared chord in it farther than 2 × `scanError` from the next
    /// one (so no nearer point could be ranked after it, and no tie is decided by the
    /// approximation: ties go to the exact path, which breaks them by index), and farther than
    /// `scanError` from the limit. Returns false, leaving `best` empty, otherwise.
    func settle(_ slots: Slots, _ best: inout Best) -> Bool {
        guard slots.valid else { return false }
        let keys = slots.keys
        let limit = best.bound, margin = PointIndex.scanError
        @inline(__always) func chord2(_ slot: Int) -> Double {
            Double(bitPattern: keys[slot].bitPattern & ~PointIndex.scanPositionMask)
        }
        var found = 0
        while found < best.storage.count {
            let d2 = chord2(found)
            if d2 > limit + margin { break }
            guard d2 < limit - margin else { return false }
            if found + 1 < count && !(chord2(found + 1) - d2 > 2 * margin) { return false }
            found += 1
        }
        best.visited &+= 1  // the scan, as one leaf
        for slot in 0..<found {
            best.insert(chord2(slot), order[Int(keys[slot].bitPattern & PointIndex.scanPositionMask)])
        }
        return true
    }

    /// The k nearest of each of the queries `range` (k = `storage.count`), into `result` at
    /// k * i. The queries are taken in Hilbert order of their positions, so that consecutive
    /// searches walk the same nodes, still in cache, and take the same branches: a counting
    /// sort by the top 16 bits of the curve's index over the queries' extent. On 100,000
    /// points and queries in random order this takes a fifth off the time per query (W5),
    /// sort included.
    func nearest(_ queries: UnsafeBufferPointer<Double>, _ range: Range<Int>, _ storage: UnsafeMutableBufferPointer<(Double, Int32)>,
                 into result: UnsafeMutableBufferPointer<Int32>) {
        let k = storage.count
        var extent = BBox.empty
        for i in range where queries[2 * i].isFinite && queries[2 * i + 1].isFinite {
            extent.extend(lon: queries[2 * i], lat: queries[2 * i + 1])
        }
        let buckets = 1 << 16
        var keys = [UInt16](repeating: 0, count: range.count)
        var starts = [Int32](repeating: 0, count: buckets + 1)
        for i in range {
            let point = BBox(minLon: queries[2 * i], minLat: queries[2 * i + 1], maxLon: queries[2 * i], maxLat: queries[2 * i + 1])
            let key = UInt16(truncatingIfNeeded: hilbert(point, in: extent) >> 16)
            keys[i - range.lowerBound] = key
            starts[Int(key) + 1] += 1
        }
        for b in 0..<buckets { starts[b + 1] += starts[b] }
        // The positions are copied in that order, so the searches read them in sequence.
        var sorted = [(lon: Double, lat: Double, query: Int)](repeating: (0, 0, 0), count: range.count)
        for i in range {
            let key = Int(keys[i - range.lowerBound])
            sorted[Int(starts[key])] = (queries[2 * i], queries[2 * i + 1], i)
            starts[key] += 1
        }
        for (lon, lat, i) in sorted {
            _ = nearest(lon: lon, lat: lat, storage, into: UnsafeMutableBufferPointer(rebasing: result[(k * i)..<(k * i + k)]))
        }
    }
}

/// A scan's four best keys for one query (see `Tree.scan`), and whether the query was within
/// the approximation's range.
private struct Slots {
    var keys: SIMD4<Double>
    var valid: Bool
}

extension PointIndex {
    /// The low bits of a scan's key that hold the point's position.
    static let scanPositionMask: UInt64 = 31
    /// How far a scan's squared chord may be from the exact path's, with room to spare: the
    /// approximate unit vector is within 2e-15 of libm's per coordinate (5.6e-16 at most in
    /// `approximateUnitVectorIsWithinItsBound`), which moves a squared chord (at most 4, between vectors of
    /// length 1) by at most 2 × |Δq| × 2 + rounding ≈ 3e-14; the key drops 5 bits, at most
    /// 32 ulps of 4 (2.8e-14).
    static let scanError = 1e-12
}

/// sin and cos of two angles in degrees (one a lane), |degrees| ≤ 360, without libm: each
/// is reduced by whole quarter turns in degrees (exact: both terms are multiples of the
/// angle's ulp) to |r| ≤ 45°, then Taylor polynomials in r radians up to r¹⁵ for sin and r¹⁶
/// for cos, whose truncation errors are below the first omitted term, (π/4)¹⁷/17! = 4.6e-17
/// and (π/4)¹⁸/18! = 2e-18. With the rounding of r and of the evaluation, each result is
/// within a few ulps of libm's (of 1). The quarter turns are rounded by adding and
/// subtracting 1.5 × 2⁵² (no SSE4.1 round in a baseline x86-64 build), which also leaves
/// their count modulo 4 in the low bits. Branch-free: the quadrant swaps sin and cos and
/// flips signs by bit masks. Only the scan uses it, and only through `settle`'s check.
@inline(__always)
private func approximateSinCos(degrees: SIMD2<Double>) -> (sin: SIMD2<Double>, cos: SIMD2<Double>) {
    let shifter = SIMD2<Double>(repeating: 0x1.8p52)
    let shifted = degrees * (1.0 / 90) + shifter
    let turns = shifted - shifter
    let r = (degrees - 90 * turns) * (Double.pi / 180)
    let r2 = r * r
    var s = r2 * (-1.0 / 1_307_674_368_000) + 1.0 / 6_227_020_800
    s = s * r2 + -1.0 / 39_916_800
    s = s * r2 + 1.0 / 362_880
    s = s * r2 + -1.0 / 5_040
    s = s * r2 + 1.0 / 120
    s = s * r2 + -1.0 / 6
    s = r + r * r2 * s
    var c = r2 * (1.0 / 20_922_789_888_000) + -1.0 / 87_178_291_200
    c = c * r2 + 1.0 / 479_001_600
    c = c * r2 + -1.0 / 3_628_800
    c = c * r2 + 1.0 / 40_320
    c = c * r2 + -1.0 / 720
    c = c * r2 + 1.0 / 24
    c = c * r2 + -0.5
    c = c * r2 + 1
    // Quadrant q: sin = (s, c, -s, -c)[q], cos = (c, -s, -c, s)[q].
    let q = unsafeBitCast(shifted, to: SIMD2<UInt64>.self)
    let swap = 0 &- (q & 1)
    let sBits = unsafeBitCast(s, to: SIMD2<UInt64>.self), cBits = unsafeBitCast(c, to: SIMD2<UInt64>.self)
    let sinBits = (sBits & ~swap | cBits & swap) ^ ((q & 2) &<< 62)
    let cosBits = (cBits & ~swap | sBits & swap) ^ (((q &+ 1) & 2) &<< 62)
    return (unsafeBitCast(sinBits, to: SIMD2<Double>.self), unsafeBitCast(cosBits, to: SIMD2<Double>.self))
}

/// `Geodesy.unitVector` of two positions (one a lane) through `approximateSinCos`, where
/// |lon| ≤ 360 and |lat| ≤ 90 (`inRange`); a lane out of that range (NaN included) is
/// computed as (0, 0), for the caller to discard.
@inline(__always)
func approximateUnitVectors(lon: SIMD2<Double>, lat: SIMD2<Double>)
    -> (x: SIMD2<Double>, y: SIMD2<Double>, z: SIMD2<Double>, inRange: SIMDMask<SIMD2<Int64>>) {
    let inRange = (lon .>= -360) .& (lon .<= 360) .& (lat .>= -90) .& (lat .<= 90)
    let lambda = approximateSinCos(degrees: lon.replacing(with: 0, where: .!inRange))
    let phi = approximateSinCos(degrees: lat.replacing(with: 0, where: .!inRange))
    return (phi.cos * lambda.cos, phi.cos * lambda.sin, phi.sin, inRange)
}

/// One query's walk over the tree.
private struct Searcher {
    let tree: Tree
    let qx: Double, qy: Double, qz: Double
    let filter: ((Int) -> Bool)?

    @inline(__always)
    func consider(_ i: Int, _ best: inout Best) {
        let (coords, count) = (tree.coords, tree.count)
        let d2 = squaredNorm(coords[i] - qx, coords[count &+ i] - qy, coords[2 &* count &+ i] - qz)
        if d2 <= best.bound, filter?(Int(tree.order[i])) ?? true { best.insert(d2, tree.order[i]) }
    }

    /// Searches [lo, hi), whose cell lies (ox, oy, oz) away from the query along each axis.
    func visit(_ lo: Int, _ hi: Int, _ ox: Double, _ oy: Double, _ oz: Double, _ best: inout Best) {
        best.visited &+= 1
        if hi &- lo <= PointIndex.leafSize {
            for i in lo..<hi { consider(i, &best) }
            return
        }
        let mid = (lo &+ hi) / 2
        let axis = Int(tree.axes[mid])
        let delta = (axis == 0 ? qx : axis == 1 ? qy : qz) - tree.coords[axis &* tree.count &+ mid]
        // Near side first, then the node's own point: the bound is tight by then, so the points
        // high up the tree, mostly far away, seldom enter the list only to be pushed out again
        // (W5: a sixth off the time per query). The far side only if its cell is within the
        // bound; its offset along the split axis is the distance to the splitting plane.
        let (fx, fy, fz) = (axis == 0 ? delta : ox, axis == 1 ? delta : oy, axis == 2 ? delta : oz)
        if delta < 0 {
            visit(lo, mid, ox, oy, oz, &best)
            consider(mid, &best)
            if squaredNorm(fx, fy, fz) <= best.bound { visit(mid &+ 1, hi, fx, fy, fz, &best) }
        } else {
            visit(mid &+ 1, hi, ox, oy, oz, &best)
            consider(mid, &best)
            if squaredNorm(fx, fy, fz) <= best.bound { visit(lo, mid, fx, fy, fz, &best) }
        }
    }
}

/// The k best (squared chord, index) pairs seen so far, kept sorted (k is small: a handful of
/// stations), with the admission bound cached.
private struct Best {
    var storage: UnsafeMutableBufferPointer<(Double, Int32)>
    var size = 0
    /// Tree nodes entered so far.
    var visited = 0
    /// Anything farther than this cannot enter.
    private(set) var bound: Double

    init(storage: UnsafeMutableBufferPointer<(Double, Int32)>, limit: Double) {
        self.storage = storage
        bound = limit
    }

    static func worse(_ a: (Double, Int32), _ b: (Double, Int32)) -> Bool {
        a.0 > b.0 || (a.0 == b.0 && a.1 > b.1)
    }

    mutating func insert(_ d2: Double, _ index: Int32) {
        let item = (d2, index)
        var j: Int
        if size < storage.count {
            j = size
            size += 1
        } else {
            guard Best.worse(storage[size - 1], item) else { return }
            j = size - 1
        }
        while j > 0 && Best.worse(storage[j - 1], item) {
            storage[j] = storage[j - 1]
            j -= 1
        }
        storage[j] = item
        if size == storage.count { bound = storage[size - 1].0 }
    }
}

/// Lower bounds on great-circle distances, for pruning R-tree searches over lon/lat boxes.
public enum SphericalDistance {
    /// The great-circle metres from a point to the nearest point of a lon/lat box: 0 inside;
    /// along the meridian when the point's longitude is within the box's; otherwise the
    /// distance to the nearer meridian edge of the box (the perpendicular foot on that meridian,
    /// or the edge's nearer corner). Exact for boxes less than 90° of longitude away from the
    /// point and not crossing the antimeridian, which covers every layer this engine serves.
    public static func toBox(lon: Double, lat: Double, _ box: BBox) -> Double {
        if lon >= box.minLon && lon <= box.maxLon {
            if lat < box.minLat { return Geodesy.earthRadius * (box.minLat - lat) * .pi / 180 }
            if lat > box.maxLat { return Geodesy.earthRadius * (lat - box.maxLat) * .pi / 180 }
            return 0
        }
        let edge = lon < box.minLon ? box.minLon : box.maxLon
        let dLambda = (lon - edge) * .pi / 180
        let phi = lat * .pi / 180
        let cosD = cos(dLambda)
        if cosD > 0 {
            // The foot of the perpendicular from the point to the meridian's great circle.
            let footLat = atan2(tan(phi), cosD) * 180 / .pi
            if footLat >= box.minLat && footLat <= box.maxLat {
                return Geodesy.earthRadius * asin(min(1, abs(sin(dLambda)) * cos(phi)))
            }
        }
        return min(Geodesy.haversine(lon1: lon, lat1: lat, lon2: edge, lat2: box.minLat),
                   Geodesy.haversine(lon1: lon, lat1: lat, lon2: edge, lat2: box.maxLat))
    }
}
