// The protobuf wire format, written: varints, zigzag, fixed 32/64-bit values and
// length-delimited fields, appended to one growing byte array. The MVT encoder writes tiles
// with it; `WireReader` reads them back. @inlinable for the same reason as the reader: the
// encoder's hot loop writes every coordinate through it.

/// Appends protobuf fields to `bytes`.
public struct WireWriter {
    public var bytes: [UInt8]

    @inlinable
    public init(reservingCapacity capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    @inlinable @inline(__always)
    public mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(truncatingIfNeeded: v))
    }

    /// The bytes a varint of `value` takes.
    @inlinable @inline(__always)
    public static func varintSize(_ value: UInt64) -> Int {
        var v = value, n = 1
        while v >= 0x80 {
            v >>= 7
            n += 1
        }
        return n
    }

    /// A field's key: its number and wire type (0 varint, 1 fixed64, 2 length-delimited, 5 fixed32).
    @inlinable @inline(__always)
    public mutating func key(_ field: Int, _ wire: Int) {
        varint(UInt64(field << 3 | wire))
    }

    @inlinable
    public mutating func varintField(_ field: Int, _ value: UInt64) {
        key(field, 0)
        varint(value)
    }

    @inlinable
    public mutating func fixed64Field(_ field: Int, _ value: UInt64) {
        key(field, 1)
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    @inlinable
    public mutating func fixed32Field(_ field: Int, _ value: UInt32) {
        key(field, 5)
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    /// A length-delimited field holding `payload` (an embedded message or raw bytes).
    @inlinable
    public mutating func bytesField(_ field: Int, _ payload: some Collection<UInt8>) {
        key(field, 2)
        varint(UInt64(payload.count))
        bytes.append(contentsOf: payload)
    }

    @inlinable
    public mutating func stringField(_ field: Int, _ text: String) {
        bytesField(field, text.utf8)
    }

    /// A packed repeated field of varints (MVT's tags and geometry).
    @inlinable
    public mutating func packedField(_ field: Int, _ values: some Collection<UInt32>) {
        var length = 0
        for value in values { length += WireWriter.varintSize(UInt64(value)) }
        key(field, 2)
        varint(UInt64(length))
        for value in values { varint(UInt64(value)) }
    }
}

/// Zigzag encoding: small negative numbers become small unsigned ones (-1 → 1, 1 → 2).
@inlinable @inline(__always)
public func zigzagEncode(_ v: Int64) -> UInt64 { UInt64(bitPattern: (v << 1) ^ (v >> 63)) }
