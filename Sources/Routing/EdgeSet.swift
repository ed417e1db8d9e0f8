// A set of undirected edges of a graph (node pairs), e.g. the steps of a walking network: the
// edges a profile may not use. Built once when a network loads; the router asks it for every
// edge the search relaxes and every edge a point could snap to, so a lookup is one bit for the
// common case (a node on no edge of the set) and a binary search over the few keys otherwise.

public struct EdgeSet: Sendable, Equatable {
    /// Sorted keys `min(u, v) << 32 | max(u, v)`, each once.
    private let keys: [UInt64]
    /// One bit per node: set when the node ends at least one edge of the set.
    private let touches: [UInt64]

    /// The set of the given node pairs (either order; repeats and self-loops are dropped).
    public init(pairs: [(Int, Int)], nodeCount: Int) {
        var keys: [UInt64] = []
        var touches = [UInt64](repeating: 0, count: (max(0, nodeCount) + 63) / 64)
        for (u, v) in pairs where u != v && u >= 0 && v >= 0 && u < nodeCount && v < nodeCount {
            keys.append(EdgeSet.key(u, v))
            touches[u >> 6] |= 1 << UInt64(u & 63)
            touches[v >> 6] |= 1 << UInt64(v & 63)
        }
        keys.sort()
        var unique: [UInt64] = []
        unique.reserveCapacity(keys.count)
        for key in keys where unique.last != key { unique.append(key) }
        self.keys = unique
        self.touches = touches
    }

    public static let empty = EdgeSet(pairs: [], nodeCount: 0)

    /// The number of undirected edges in the set.
    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }

    /// The pairs, (smaller node, larger node), in ascending order.
    public var pairs: [(Int, Int)] { keys.map { (Int($0 >> 32), Int($0 & 0xFFFF_FFFF)) } }

    @inline(__always)
    static func key(_ u: Int, _ v: Int) -> UInt64 { UInt64(min(u, v)) << 32 | UInt64(max(u, v)) }

    /// Whether the edge between `u` and `v` (either direction) is in the set.
    @inline(__always)
    public func contains(_ u: Int, _ v: Int) -> Bool {
        guard u >= 0, u >> 6 < touches.count, touches[u >> 6] & (1 << UInt64(u & 63)) != 0 else { return false }
        let key = EdgeSet.key(u, v)
        var low = 0, high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low < keys.count && keys[low] == key
    }
}
