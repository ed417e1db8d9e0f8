// A static packed Hilbert R-tree, after mourner/flatbush: items are sorted by the Hilbert
// value of their box centres and packed bottom-up into nodes of `nodeSize` children. The whole
// tree is four flat arrays of box bounds plus one of indices, built once at load and never
// changed, so it is Sendable and lock-free to query.
//
// Layout: level 0 holds the items (in Hilbert order), each level above holds the nodes of the
// level below; `boxes[i]` of a node covers its children at `indices[i] ..< indices[i] + nodeSize`
// of the level below. The root is the last box.

import Geometry

public struct PackedRTree: Sendable {
    public let nodeSize: Int
    /// Items indexed (empty boxes are left out and never returned).
    public let count: Int
    let minX: FlatArray<Double>
    let minY: FlatArray<Double>
    let maxX: FlatArray<Double>
    let maxY: FlatArray<Double>
    /// For an item slot: the item's original index. For a node: the first slot of its children.
    let indices: FlatArray<Int32>
    /// Slot offsets where each level ends, from the leaves up.
    var levelBounds: [Int]

    /// Indexes `boxes` by position. A box with a NaN or infinite bound is refused with
    /// `.nonFinite(item:)` (its index), so the caller can name the feature: such a box has no
    /// place on the Hilbert grid, and would poison every parent box it joined.
    public init(boxes: [BBox], nodeSize: Int = 16) throws(SpatialIndexError) {
        let nodeSize = min(max(nodeSize, 2), 65_535)
        self.nodeSize = nodeSize
        let items = boxes.indices.filter { !boxes[$0].isEmpty }
        for i in items where !boxes[i].isFinite { throw .nonFinite(item: i) }
        // Item indices are stored as Int32.
        guard boxes.count <= Int(Int32.max) else { throw .tooLarge(boxes.count) }
        count = items.count

        var extent = BBox.empty
        for i in items { extent.extend(boxes[i]) }
        // Hilbert order of the box centres on a 2^16 grid over the extent.
        let keyed: [(UInt32, Int32)] = items.map { i in (hilbert(boxes[i], in: extent), Int32(truncatingIfNeeded: i)) }
            .sorted { $0.0 < $1.0 || ($0.0 == $1.0 && $0.1 < $1.1) }

        // Level sizes: items, then ceil(n / nodeSize) per level up to a single root.
        var levelBounds: [Int] = []
        var n = count
        var total = n
        levelBounds.append(total)
        while n > 1 {
            n = (n + nodeSize - 1) / nodeSize
            total += n
            levelBounds.append(total)
        }
        var minX = [Double](repeating: 0, count: total), minY = minX, maxX = minX, maxY = minX
        var indices = [Int32](repeating: 0, count: total)
        for (slot, (_, item)) in keyed.enumerated() {
            let b = boxes[Int(item)]
            minX[slot] = b.minLon; minY[slot] = b.minLat; maxX[slot] = b.maxLon; maxY[slot] = b.maxLat
            indices[slot] = item
        }
        // Pack each level's boxes into parents.
        var start = 0
        for level in 0..<(levelBounds.count - 1) {
            let end = levelBounds[level]
            var parent = end
            var child = start
            while child < end {
                var box = BBox.empty
                let first = child
                for c in child..<min(child + nodeSize, end) {
                    box.extend(BBox(minLon: minX[c], minLat: minY[c], maxLon: maxX[c], maxLat: maxY[c]))
                }
                minX[parent] = box.minLon; minY[parent] = box.minLat; maxX[parent] = box.maxLon; maxY[parent] = box.maxLat
                indices[parent] = Int32(first)
                parent += 1
                child += nodeSize
            }
            start = end
        }
        // Each array dropped once copied: a million boxes' arrays are not all held twice.
        self.minX = FlatArray(minX)
        minX = []
        self.minY = FlatArray(minY)
        minY = []
        self.maxX = FlatArray(maxX)
        maxX = []
        self.maxY = FlatArray(maxY)
        maxY = []
        self.indices = FlatArray(indices)
        indices = []
        self.levelBounds = levelBounds
    }

    /// The tree's flat form, for a snapshot file (valid while the tree is).
    public var image: IndexImage {
        IndexImage(numbers: ["nodeSize": UInt64(nodeSize), "count": UInt64(count), "slots": UInt64(minX.count)],
                   sections: ["minX": [minX.bytes], "minY": [minY.bytes], "maxX": [maxX.bytes], "maxY": [maxY.bytes],
                              "indices": [indices.bytes]],
                   owner: nil)
    }

    /// A tree read in place from its flat form, over `items` items. Every stored index is
    /// checked, so a damaged image is refused (`.corrupt`) and can never make a search read
    /// outside its arrays; damaged boxes can only give wrong answers.
    public init(image: IndexImage, items: Int) throws(SpatialIndexError) {
        nodeSize = try image.count("nodeSize", atMost: 65_535)
        count = try image.count("count")
        guard nodeSize >= 2, count <= items else { throw .corrupt("node size \(nodeSize), \(count) boxes for \(items) items") }
        // The level layout follows from the count and the node size, as the builder makes it.
        var levelBounds = [count]
        var n = count, total = count
        while n > 1 {
            n = (n + nodeSize - 1) / nodeSize
            total += n
            levelBounds.append(total)
        }
        guard try image.count("slots") == total else { throw .corrupt("the tree has the wrong number of slots") }
        minX = try image.array("minX", Double.self, count: total)
        minY = try image.array("minY", Double.self, count: total)
        maxX = try image.array("maxX", Double.self, count: total)
        maxY = try image.array("maxY", Double.self, count: total)
        indices = try image.array("indices", Int32.self, count: total)
        self.levelBounds = levelBounds
        var levelStart = 0
        for (level, end) in levelBounds.enumerated() {
            // Items name an item; a node names a slot of the level below.
            let (low, high) = level == 0 ? (0, items) : (level == 1 ? 0 : levelBounds[level - 2], levelBounds[level - 1])
            for slot in levelStart..<end where !(Int(indices[slot]) >= low && Int(indices[slot]) < high) {
                throw .corrupt("tree slot \(slot) points outside its level")
            }
            levelStart = end
        }
    }

    /// The level a slot belongs to (0 = items).
    @inline(__always)
    func upperBound(ofLevelContaining slot: Int) -> Int {
        var level = 0
        while levelBounds[level] <= slot { level += 1 }
        return levelBounds[level]
    }

    /// Calls `visit` with every item whose box intersects `box` (closed intervals). Returns the
    /// number of tree nodes visited, for EXPLAIN.
    @discardableResult
    public func search(_ box: BBox, _ visit: (Int) -> Void) -> Int {
        let root = minX.count - 1
        guard count > 0, !box.isEmpty,
              maxX[root] >= box.minLon && minX[root] <= box.maxLon && maxY[root] >= box.minLat && minY[root] <= box.maxLat else { return 0 }
        var visited = 0
        // The stack on the machine's stack, not the heap: a fence evaluation searches once per
        // position update. Depth first, it holds at most one node's children per level.
        let capacity = nodeSize * (levelBounds.count + 1) + 1
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: capacity) { stack in
            stack[0] = root
            var top = 1
            while top > 0 {
                top -= 1
                let node = stack[top]
                visited += 1
                if node < count {
                    visit(Int(indices[node]))
                    continue
                }
                let first = Int(indices[node])
                let end = min(first + nodeSize, upperBound(ofLevelContaining: first))
                for c in first..<end where maxX[c] >= box.minLon && minX[c] <= box.maxLon && maxY[c] >= box.minLat && minY[c] <= box.maxLat {
                    stack[top] = c
                    top += 1
                }
            }
            return visited
        }
    }

    public func search(_ box: BBox) -> [Int] {
        var found: [Int] = []
        search(box) { found.append($0) }
        return found.sorted()
    }

    /// Best-first k-nearest with a pluggable distance (Hjaltason & Samet): nodes and items
    /// share one priority queue keyed by `boxDistance` (a lower bound for anything inside the
    /// box) or `itemDistance` (exact), so an item is reported only when nothing left in the
    /// queue can be nearer. Stops at `maxDistance`; `filter` rejects items. Nearest first, ties
    /// by smaller index. `visited` counts the nodes expanded, for EXPLAIN. `shouldStop` (a
    /// request's deadline) is asked every 64 expansions; when it says stop, the search ends
    /// with what it has, and the caller, who asked, knows the answer is incomplete.
    public func nearest(k: Int, maxDistance: Double = .infinity,
                        boxDistance: (BBox) -> Double, itemDistance: (Int) -> Double,
                        filter: ((Int) -> Bool)? = nil, visited: UnsafeMutablePointer<Int>? = nil,
                        shouldStop: (() -> Bool)? = nil) -> [(index: Int, distance: Double)] {
        guard count > 0, k > 0 else { return [] }
        var result: [(index: Int, distance: Double)] = []
        var queue = MinHeap<NearestCandidate>()
        var expanded = 0
        // Entries: slot >= 0 is a tree slot to expand; an item is pushed as -(index + 1) with
        // its exact distance.
        queue.push(NearestCandidate(distance: 0, id: minX.count - 1))
        while let entry = queue.pop() {
            let distance = entry.distance, id = entry.id
            if distance > maxDistance { break }
            if id < 0 {
                result.append((-id - 1, distance))
                if result.count == k { break }
                continue
            }
            expanded += 1
            if expanded & 63 == 0, let shouldStop, shouldStop() { break }
            if id < count {
                let item = Int(indices[id])
                if filter?(item) ?? true {
                    let d = itemDistance(item)
                    if d <= maxDistance { queue.push(NearestCandidate(distance: d, id: -item - 1)) }
                }
                continue
            }
            let first = Int(indices[id])
            let end = min(first + nodeSize, upperBound(ofLevelContaining: first))
            for c in first..<end {
                let d = boxDistance(BBox(minLon: minX[c], minLat: minY[c], maxLon: maxX[c], maxLat: maxY[c]))
                if d <= maxDistance { queue.push(NearestCandidate(distance: d, id: c)) }
            }
        }
        visited?.pointee = expanded
        return result
    }
}

public enum SpatialIndexError: Error, CustomStringConvertible, Equatable, Sendable {
    /// Input item `item` (its position in what the builder was given) has a NaN or infinite
    /// coordinate. Decoders refuse such input first; this is the builders' own defence.
    case nonFinite(item: Int)
    /// More items than an index can address.
    case tooLarge(Int)
    /// An index read from a file does not hold together (`PackedRTree(image:)`, `PolygonIndex(image:)`).
    case corrupt(String)
    public var description: String {
        switch self {
        case .nonFinite(let item): "item \(item) has a coordinate that is not a finite number"
        case .tooLarge(let count): "\(count) items are more than a spatial index can hold"
        case .corrupt(let reason): "the stored index is damaged: \(reason)"
        }
    }
}

/// An entry of the k-nearest queue: a tree slot (id >= 0) or an item (id = -(index + 1)).
/// Nearer first; at equal distance the larger id, so nodes are expanded before items are
/// reported (a node may still hold an item as near with a smaller index), and items come out
/// by smaller index: results are deterministic.
struct NearestCandidate: Comparable {
    var distance: Double
    var id: Int

    @inline(__always)
    static func < (a: NearestCandidate, b: NearestCandidate) -> Bool {
        a.distance < b.distance || (a.distance == b.distance && a.id > b.id)
    }
}

/// The Hilbert curve index of a box's centre on a 2^16 × 2^16 grid over `extent`; a box
/// outside the extent or with NaN bounds is put on its edge, never trapped on.
func hilbert(_ box: BBox, in extent: BBox) -> UInt32 {
    // Halves before the sums and differences: finite boxes near ±Double.greatestFiniteMagnitude
    // must not overflow to infinity on the way.
    func grid(_ low: Double, _ high: Double, _ origin: Double, _ half: Double) -> UInt32 {
        let hilbertMax = Double((1 << 16) - 1)
        guard half > 0 else { return 0 }
        let t = hilbertMax * ((low / 2 + high / 2) / 2 - origin / 2) / half
        // `!(t > 0)` also catches NaN: a conversion of NaN would trap.
        return !(t > 0) ? 0 : t >= hilbertMax ? UInt32(hilbertMax) : UInt32(t)
    }
    return hilbert(grid(box.minLon, box.maxLon, extent.minLon, extent.maxLon / 2 - extent.minLon / 2),
                   grid(box.minLat, box.maxLat, extent.minLat, extent.maxLat / 2 - extent.minLat / 2))
}

/// The Hilbert curve index of (x, y) on a 2^16 grid (after flatbush, from Rawrunprotected's
/// "2D Hilbert curves in O(1)").
func hilbert(_ x: UInt32, _ y: UInt32) -> UInt32 {
    var a = x ^ y
    var b = 0xFFFF ^ a
    var c = 0xFFFF ^ (x | y)
    var d = x & (y ^ 0xFFFF)
    var A = a | (b >> 1)
    var B = (a >> 1) ^ a
    var C = ((c >> 1) ^ (b & (d >> 1))) ^ c
    var D = ((a & (c >> 1)) ^ (d >> 1)) ^ d
    a = A; b = B; c = C; d = D
    A = (a & (a >> 2)) ^ (b & (b >> 2))
    B = (a & (b >> 2)) ^ (b & ((a ^ b) >> 2))
    C ^= (a & (c >> 2)) ^ (b & (d >> 2))
    D ^= (b & (c >> 2)) ^ ((a ^ b) & (d >> 2))
    a = A; b = B; c = C; d = D
    A = (a & (a >> 4)) ^ (b & (b >> 4))
    B = (a & (b >> 4)) ^ (b & ((a ^ b) >> 4))
    C ^= (a & (c >> 4)) ^ (b & (d >> 4))
    D ^= (b & (c >> 4)) ^ ((a ^ b) & (d >> 4))
    a = A; b = B; c = C; d = D
    C ^= (a & (c >> 8)) ^ (b & (d >> 8))
    D ^= (b & (c >> 8)) ^ ((a ^ b) & (d >> 8))
    a = C ^ (C >> 1)
    b = D ^ (D >> 1)
    var i0 = x ^ y
    var i1 = b | (0xFFFF ^ (i0 | a))
    i0 = (i0 | (i0 << 8)) & 0x00FF00FF
    i0 = (i0 | (i0 << 4)) & 0x0F0F0F0F
    i0 = (i0 | (i0 << 2)) & 0x33333333
    i0 = (i0 | (i0 << 1)) & 0x55555555
    i1 = (i1 | (i1 << 8)) & 0x00FF00FF
    i1 = (i1 | (i1 << 4)) & 0x0F0F0F0F
    i1 = (i1 | (i1 << 2)) & 0x33333333
    i1 = (i1 | (i1 << 1)) & 0x55555555
    return (i1 << 1) | i0
}
