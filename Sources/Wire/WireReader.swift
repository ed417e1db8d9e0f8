// The protobuf wire format (varints, fixed 32/64-bit values, length-delimited fields), read
// by the MVT decoder and the OSM PBF reader alike. Every read is checked against the end of
// the message, so hostile bytes give an error, never a crash, a hang or an overread.
//
// The reader walks raw bytes (an `UnsafeBufferPointer`, made inside `withUnsafeBufferPointer`)
// rather than an array: the MVT walk reads every byte of every tile through it, and array
// indexing would add a bounds check and reference counting per byte. Its methods are
// @inlinable so that the callers in other modules get them inlined and specialised for their
// error type, as if the reader were their own; without that the W8 benchmark is ~20% slower.
// That is also why the reader is `public`, not `package`: Swift 6.3 does not inline
// `@inlinable package` code across modules (checked in the release build's disassembly).
// The package's only product is the `vltava` executable, so `public` reaches no further.

/// An error a `WireReader` can throw. A caller reads with its own error type (MVT), so that a
/// wire error and its own checks go through one typed `throws`, or with `WireError` and turns
/// it into its own at the top (the OSM reader, whose errors also carry the file name).
public protocol WireFailure: Error {
    init(wireMessage: String)
}

/// A wire-format error: a message without context, for the caller to place.
package struct WireError: WireFailure, CustomStringConvertible, Sendable {
    package let message: String

    package init(_ message: String) { self.message = message }
    package init(wireMessage: String) { message = wireMessage }

    package var description: String { message }
}

/// A bounds-checked reader of one protobuf message (or packed field) in `bytes[position..<end]`.
/// It does not own `bytes`: it is only valid inside the `withUnsafeBufferPointer` that made them.
public struct WireReader<Failure: WireFailure> {
    public let bytes: UnsafeBufferPointer<UInt8>
    public var position: Int
    public let end: Int

    /// A reader of `bytes[range]`, or of all of `bytes`. The range is clamped to the buffer, so
    /// that no range a caller computes wrongly can make a read leave it.
    @inlinable
    public init(_ bytes: UnsafeBufferPointer<UInt8>, range: Range<Int>? = nil) {
        self.bytes = bytes
        let range = range ?? 0..<bytes.count
        end = min(max(range.upperBound, 0), bytes.count)
        position = min(max(range.lowerBound, 0), end)
    }

    /// A reader of an embedded message, given the range `lengthDelimited()` returned.
    @inlinable
    public func message(_ range: Range<Int>) -> WireReader {
        WireReader(bytes, range: range)
    }

    @inlinable
    public var isAtEnd: Bool { position >= end }

    /// The next field number and wire type, or nil at the end of the message.
    @inlinable @inline(__always)
    public mutating func field() throws(Failure) -> (field: Int, wire: Int)? {
        guard position < end else { return nil }
        let key = try varint()
        guard key >> 3 > 0 else { throw Failure(wireMessage: "field number 0 at byte \(position)") }
        return (Int(truncatingIfNeeded: key >> 3), Int(key & 7))
    }

    /// A base-128 varint: at most 10 bytes make 64 bits.
    @inlinable @inline(__always)
    public mutating func varint() throws(Failure) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while position < end {
            let b = bytes[position]
            position += 1
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
            guard shift < 64 else { throw Failure(wireMessage: "varint longer than 10 bytes") }
        }
        throw Failure(wireMessage: "truncated varint")
    }

    @inlinable
    public mutating func fixed32() throws(Failure) -> UInt32 { try littleEndian("fixed32") }

    @inlinable
    public mutating func fixed64() throws(Failure) -> UInt64 { try littleEndian("fixed64") }

    @inlinable
    mutating func littleEndian<T: FixedWidthInteger & UnsignedInteger>(_ what: String) throws(Failure) -> T {
        let size = MemoryLayout<T>.size
        guard end - position >= size else { throw Failure(wireMessage: "truncated \(what)") }
        var v: T = 0
        for k in 0..<size { v |= T(bytes[position + k]) << (8 * k) }
        position += size
        return v
    }

    /// The byte range of a length-delimited field (a string, an embedded message or a packed
    /// field), which must lie within this message.
    @inlinable @inline(__always)
    public mutating func lengthDelimited() throws(Failure) -> Range<Int> {
        let length = try varint()
        guard length <= UInt64(end - position) else { throw Failure(wireMessage: "a field of \(length) bytes overruns its message") }
        defer { position += Int(length) }
        return position..<(position + Int(length))
    }

    /// A length-delimited field as UTF-8 text (invalid sequences become U+FFFD).
    @inlinable
    public mutating func string() throws(Failure) -> String {
        let range = try lengthDelimited()
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    /// Calls `body` with each varint of a packed repeated field (wire type 2).
    @inlinable
    public mutating func forEachPackedVarint(_ body: (UInt64) -> Void) throws(Failure) {
        var inner = message(try lengthDelimited())
        while inner.position < inner.end { body(try inner.varint()) }
    }

    /// Steps over a field of a wire type this reader knows (groups, types 3 and 4, are long
    /// deprecated and used by neither format).
    @inlinable
    public mutating func skip(_ wire: Int) throws(Failure) {
        switch wire {
        case 0: _ = try varint()
        case 1: _ = try fixed64()
        case 2: _ = try lengthDelimited()
        case 5: _ = try fixed32()
        default: throw Failure(wireMessage: "unsupported wire type \(wire)")
        }
    }
}

/// Zigzag decoding (sint64 fields, MVT geometry deltas): 0, 1, 2, 3… mean 0, −1, 1, −2…
@inlinable @inline(__always)
public func zigzag(_ v: UInt64) -> Int64 { Int64(bitPattern: (v >> 1) ^ (0 &- (v & 1))) }

/// Zigzag decoding of a 32-bit value (sint32 fields, MVT geometry parameters).
@inlinable @inline(__always)
public func zigzag(_ v: UInt32) -> Int32 { Int32(bitPattern: (v >> 1) ^ (0 &- (v & 1))) }
