// The binary min-heap of the engine's best-first searches: the R-tree's k-nearest here, and
// A* and the landmarks' Dijkstra in Routing (which sits above this module). One array of
// entries, sifted by moving a hole rather than swapping pairs.
//
// Generic over the entry, so each caller keeps its own order (the R-tree breaks distance ties
// by index, routing needs no tie rule). Public and @inlinable, so each caller's module
// specialises it for its entry type and inlines the comparisons: `@inlinable package` code was
// measured not to be inlined across modules (a workload 18 % slower), and an unspecialised
// generic heap would call `<` through a witness table on every comparison.

public struct MinHeap<Element: Comparable> {
    @usableFromInline var entries: [Element] = []

    @inlinable
    public init() {}

    @inlinable
    public var isEmpty: Bool { entries.isEmpty }

    @inlinable
    public var count: Int { entries.count }

    /// The smallest entry, left in place; nil when empty.
    @inlinable
    public var first: Element? { entries.first }

    /// Empties the heap and keeps its storage, for the next search.
    @inlinable
    public mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
    }

    @inlinable
    public mutating func push(_ element: Element) {
        entries.append(element)
        entries.withUnsafeMutableBufferPointer { e in
            var i = e.count - 1
            while i > 0 {
                let p = (i - 1) / 2
                guard element < e[p] else { break }
                e[i] = e[p]
                i = p
            }
            e[i] = element
        }
    }

    /// The smallest entry, removed; nil when empty. Of equal entries, any may come first.
    @inlinable
    public mutating func pop() -> Element? {
        guard let top = entries.first else { return nil }
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries.withUnsafeMutableBufferPointer { e in
                let n = e.count
                var i = 0
                while true {
                    let l = 2 * i + 1
                    guard l < n else { break }
                    let r = l + 1
                    let c = r < n && e[r] < e[l] ? r : l
                    guard e[c] < last else { break }
                    e[i] = e[c]
                    i = c
                }
                e[i] = last
            }
        }
        return top
    }
}

extension MinHeap: Sendable where Element: Sendable {}
