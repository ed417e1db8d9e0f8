// Immutable flat storage shared by the indexes and the engine's layers: either memory this
// module allocated (an index built at load), or a range of a memory-mapped snapshot file (see
// Engine/SnapshotFile.swift). Either way the elements never change and `owner` keeps them
// alive: when the last copy of every FlatArray on a mapping is gone, the mapping goes (munmap)
// and its pages with it. Reads go straight to memory, with no reference counting and no
// bounds check in release builds: whoever makes a FlatArray from a file validates every index
// stored in it first (`PackedRTree(image:)`, `PolygonIndex(image:)`).

public struct FlatArray<Element: BitwiseCopyable>: RandomAccessCollection, @unchecked Sendable {
    public let buffer: UnsafeBufferPointer<Element>
    /// Keeps the memory alive; nil only for the empty array.
    let owner: AnyObject?

    public init() {
        buffer = UnsafeBufferPointer(start: nil, count: 0)
        owner = nil
    }

    /// A copy of `elements` in memory of its own.
    public init(_ elements: some Collection<Element>) {
        let allocation = FlatAllocation(bytes: elements.count * MemoryLayout<Element>.stride, alignment: MemoryLayout<Element>.alignment)
        let typed = allocation.pointer.bindMemory(to: Element.self, capacity: elements.count)
        _ = UnsafeMutableBufferPointer(start: typed, count: elements.count).initialize(fromContentsOf: elements)
        buffer = UnsafeBufferPointer(start: typed, count: elements.count)
        owner = allocation
    }

    /// `count` copies of `value` in memory of its own, then changed in place by `fill` (a
    /// large array built without a second copy).
    init(count: Int, repeating value: Element, _ fill: (UnsafeMutableBufferPointer<Element>) -> Void) {
        let allocation = FlatAllocation(bytes: count * MemoryLayout<Element>.stride, alignment: MemoryLayout<Element>.alignment)
        let typed = allocation.pointer.bindMemory(to: Element.self, capacity: count)
        let elements = UnsafeMutableBufferPointer(start: typed, count: count)
        elements.initialize(repeating: value)
        fill(elements)
        buffer = UnsafeBufferPointer(elements)
        owner = allocation
    }

    /// Elements read in place from `bytes`, which `owner` keeps valid and unchanged. Nil when
    /// the bytes are not a whole number of elements or not aligned for them.
    public init?(bytes: UnsafeRawBufferPointer, owner: AnyObject) {
        let stride = MemoryLayout<Element>.stride
        guard bytes.count % stride == 0 else { return nil }
        if let base = bytes.baseAddress {
            guard Int(bitPattern: base) % MemoryLayout<Element>.alignment == 0 else { return nil }
            buffer = UnsafeBufferPointer(start: base.assumingMemoryBound(to: Element.self), count: bytes.count / stride)
        } else {
            buffer = UnsafeBufferPointer(start: nil, count: 0)
        }
        self.owner = owner
    }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { buffer.count }

    @inlinable
    public subscript(position: Int) -> Element { buffer[position] }

    /// The elements' bytes, for writing them to a file.
    public var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(buffer) }
}

/// Memory a FlatArray owns.
final class FlatAllocation: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer

    init(bytes: Int, alignment: Int) {
        pointer = UnsafeMutableRawPointer.allocate(byteCount: max(bytes, 1), alignment: max(alignment, 8))
    }

    deinit { pointer.deallocate() }
}

/// The flat form of an index: named byte sections plus a small description, written to a file
/// as they are and read back in place (`PackedRTree.image`, `PolygonIndex.image`).
public struct IndexImage {
    /// Small numbers that describe the sections (counts, grid sizes; doubles as bit patterns so
    /// they come back exact).
    public var numbers: [String: UInt64]
    /// Section name → its bytes (one or more pieces, written back to back).
    public var sections: [String: [UnsafeRawBufferPointer]]
    /// Keeps the sections' memory alive.
    public var owner: AnyObject?

    public init(numbers: [String: UInt64], sections: [String: [UnsafeRawBufferPointer]], owner: AnyObject?) {
        self.numbers = numbers
        self.sections = sections
        self.owner = owner
    }

    func number(_ name: String) throws(SpatialIndexError) -> UInt64 {
        guard let value = numbers[name] else { throw .corrupt("no '\(name)'") }
        return value
    }

    func count(_ name: String, atMost limit: Int = Int(Int32.max)) throws(SpatialIndexError) -> Int {
        let value = try number(name)
        guard value <= UInt64(limit) else { throw .corrupt("'\(name)' is \(value), more than \(limit)") }
        return Int(value)
    }

    func double(_ name: String) throws(SpatialIndexError) -> Double { Double(bitPattern: try number(name)) }

    /// A section read in place as `count` elements (nil count: whatever it holds).
    func array<T: BitwiseCopyable>(_ name: String, _ type: T.Type, count: Int? = nil) throws(SpatialIndexError) -> FlatArray<T> {
        guard let pieces = sections[name], pieces.count == 1, let bytes = pieces.first, let owner else {
            throw .corrupt("section '\(name)' is missing")
        }
        guard let array = FlatArray<T>(bytes: bytes, owner: owner) else { throw .corrupt("section '\(name)' is misaligned or cut short") }
        if let count, array.count != count { throw .corrupt("section '\(name)' holds \(array.count) entries, not \(count)") }
        return array
    }
}
