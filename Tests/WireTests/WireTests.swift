import CDeflate
import Testing
@testable import Wire

/// Reads `bytes` with a fresh reader over all of them.
func read<T>(_ bytes: [UInt8], _ body: (inout WireReader<WireError>) throws(WireError) -> T) throws(WireError) -> T {
    try bytes.withUnsafeBufferPointer { buffer throws(WireError) in
        var reader = WireReader<WireError>(buffer)
        return try body(&reader)
    }
}

/// The message of the error `body` throws, or nil.
func failure<T>(_ bytes: [UInt8], _ body: (inout WireReader<WireError>) throws(WireError) -> T) -> String? {
    do { _ = try read(bytes, body); return nil } catch { return error.message }
}

@Suite struct WireReaderTests {
    @Test func varints() throws {
        #expect(try read([0x00]) { r throws(WireError) in try r.varint() } == 0)
        #expect(try read([0x96, 0x01]) { r throws(WireError) in try r.varint() } == 150)
        let max: [UInt8] = Array(repeating: 0xFF, count: 9) + [0x01]
        #expect(try read(max) { r throws(WireError) in try r.varint() } == UInt64.max)
        #expect(failure(Array(repeating: 0xFF, count: 10) + [0x01]) { r throws(WireError) in try r.varint() } == "varint longer than 10 bytes")
        #expect(failure([0x96]) { r throws(WireError) in try r.varint() } == "truncated varint")
        #expect(failure([]) { r throws(WireError) in try r.varint() } == "truncated varint")
    }

    @Test func fieldsAndTheirValues() throws {
        // Field 1 varint 150, field 2 string "hi", field 3 fixed32, field 4 fixed64.
        let message: [UInt8] = [0x08, 0x96, 0x01, 0x12, 0x02, 0x68, 0x69, 0x1D, 0x01, 0x02, 0x03, 0x04,
                                0x21, 1, 0, 0, 0, 0, 0, 0, 0x80]
        try read(message) { r throws(WireError) in
            #expect(try r.field()! == (1, 0))
            #expect(try r.varint() == 150)
            #expect(try r.field()! == (2, 2))
            #expect(try r.string() == "hi")
            #expect(try r.field()! == (3, 5))
            #expect(try r.fixed32() == 0x0403_0201)
            #expect(try r.field()! == (4, 1))
            #expect(try r.fixed64() == 0x8000_0000_0000_0001)
            #expect(try r.field() == nil)
        }
        // Every known wire type skips to the same end.
        try read(message) { r throws(WireError) in
            var fields = 0
            while let (_, wire) = try r.field() { try r.skip(wire); fields += 1 }
            #expect(fields == 4 && r.isAtEnd)
        }
    }

    @Test func hostileInputGivesErrors() {
        #expect(failure([0x00]) { r throws(WireError) in try r.field() } == "field number 0 at byte 1")
        #expect(failure([0x12, 0x05, 0x68]) { r throws(WireError) in _ = try r.field(); return try r.lengthDelimited() } == "a field of 5 bytes overruns its message")
        #expect(failure([0x01, 0x02]) { r throws(WireError) in try r.fixed32() } == "truncated fixed32")
        #expect(failure([0x01, 0x02]) { r throws(WireError) in try r.fixed64() } == "truncated fixed64")
        #expect(failure([0x01, 0x02]) { r throws(WireError) in try r.skip(1) } == "truncated fixed64")
        #expect(failure([0x01, 0x02]) { r throws(WireError) in try r.skip(5) } == "truncated fixed32")
        #expect(failure([0x01]) { r throws(WireError) in try r.skip(3) } == "unsupported wire type 3")
        // A packed field must stay inside its message, and each of its varints inside it.
        #expect(failure([0x03, 0x01, 0x02]) { r throws(WireError) in try r.forEachPackedVarint { _ in } } == "a field of 3 bytes overruns its message")
        #expect(failure([0x02, 0x01, 0x80, 0x01]) { r throws(WireError) in try r.forEachPackedVarint { _ in } } == "truncated varint")
    }

    @Test func packedVarintsAndSubmessages() throws {
        let values = try read([0x04, 0x01, 0x96, 0x01, 0x7F, 0x09]) { r throws(WireError) -> ([UInt64], Int) in
            var out: [UInt64] = []
            try r.forEachPackedVarint { out.append($0) }
            return (out, r.position)
        }
        #expect(values.0 == [1, 150, 127] && values.1 == 5)
        // A reader of an embedded message stops at its end, not at its parent's.
        try read([0x0A, 0x02, 0x08, 0x01, 0x10, 0x02]) { r throws(WireError) in
            _ = try r.field()
            var inner = r.message(try r.lengthDelimited())
            #expect(try inner.field()! == (1, 0))
            #expect(try inner.varint() == 1)
            #expect(try inner.field() == nil)
            #expect(try r.field()! == (2, 0))
        }
    }

    @Test func rangesAreClampedToTheBuffer() {
        [UInt8]([1, 2, 3]).withUnsafeBufferPointer { buffer in
            let past = WireReader<WireError>(buffer, range: 5..<100)
            #expect(past.isAtEnd && past.end == 3)
            let partly = WireReader<WireError>(buffer, range: 1..<100)
            #expect(partly.position == 1 && partly.end == 3)
        }
    }

    @Test func zigzagDecoding() {
        #expect([0, 1, 2, 3, 4].map { zigzag(UInt64($0)) } == [0, -1, 1, -2, 2])
        #expect(zigzag(UInt64.max) == Int64.min)
        #expect(zigzag(UInt32(4_294_967_294)) == Int32.max)
        #expect(zigzag(UInt32.max) == Int32.min)
    }
}

@Suite struct InflaterTests {
    /// zlib (`gzip: false`) or gzip compression of `input`, by libdeflate at level 9.
    static func compress(_ input: [UInt8], gzip: Bool) -> [UInt8] {
        guard let compressor = libdeflate_alloc_compressor(9) else { return [] }
        defer { libdeflate_free_compressor(compressor) }
        let bound = gzip ? libdeflate_gzip_compress_bound(compressor, input.count) : libdeflate_zlib_compress_bound(compressor, input.count)
        return [UInt8](unsafeUninitializedCapacity: bound) { out, count in
            count = input.withUnsafeBytes { raw in
                gzip ? libdeflate_gzip_compress(compressor, raw.baseAddress, raw.count, out.baseAddress, bound)
                    : libdeflate_zlib_compress(compressor, raw.baseAddress, raw.count, out.baseAddress, bound)
            }
        }
    }

    /// 200 KB of text-like bytes: more than one 64 KiB zlib output chunk.
    static let text: [UInt8] = (0..<200_000).map { UInt8(truncatingIfNeeded: ($0 * 7 + $0 / 13) % 91 + 32) }

    @Test func roundTrips() throws {
        let inflater = try Inflater()
        for gzip in [true, false] {
            let packed = Self.compress(Self.text, gzip: gzip)
            #expect(!packed.isEmpty && packed.count < Self.text.count)
            // Twice: the inflater is reused.
            #expect(try inflater.inflate(packed, limit: 1 << 20) == Self.text)
            #expect(try inflater.inflate(packed, limit: 1 << 20) == Self.text)
            // An output of exactly the limit is within it.
            #expect(try inflater.inflate(packed, limit: Self.text.count) == Self.text)
            #expect(try inflater.inflate(packed, limit: 1000, truncate: true) == Array(Self.text.prefix(1000)))
        }
    }

    /// A megabyte of zeros packs into about a kilobyte: past the limit, an error (or with
    /// `truncate`, exactly the limit's worth).
    @Test func theLimitHolds() throws {
        let inflater = try Inflater()
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        for gzip in [true, false] {
            let bomb = Self.compress(zeros, gzip: gzip)
            #expect(bomb.count < 2000)
            #expect(throws: InflateError.tooLarge(limit: 100_000)) { try inflater.inflate(bomb, limit: 100_000) }
            #expect(try inflater.inflate(bomb, limit: 100_000, truncate: true).count == 100_000)
            #expect(try inflater.inflate(bomb, limit: 1 << 20) == zeros)
        }
    }

    @Test func corruptDataIsAnError() throws {
        let inflater = try Inflater()
        for gzip in [true, false] {
            let packed = Self.compress(Self.text, gzip: gzip)
            let cut = Array(packed.prefix(packed.count / 2))
            #expect(throws: InflateError.self) { try inflater.inflate(cut, limit: 1 << 20) }
            // With `truncate`, what came out before the damage.
            #expect(try Self.text.starts(with: inflater.inflate(cut, limit: 1 << 20, truncate: true)))
        }
        // A gzip trailer that lies about the size: libdeflate refuses it, and so does zlib.
        var lying = Self.compress(Self.text, gzip: true)
        lying[lying.count - 4] ^= 1
        #expect(throws: InflateError.self) { try inflater.inflate(lying, limit: 1 << 20) }
        #expect(throws: InflateError.corrupt("zlib status -3")) { try inflater.inflate([0x78, 0x9C, 0xFF, 0xFF, 0xFF], limit: 1 << 20) }
        // After errors, the inflater still works.
        #expect(try inflater.inflate(Self.compress(Self.text, gzip: false), limit: 1 << 20) == Self.text)
    }

    @Test func zlibOfAKnownSize() throws {
        let inflater = try Inflater()
        let packed = Self.compress(Self.text, gzip: false)
        try packed.withUnsafeBufferPointer { buffer throws(InflateError) in
            #expect(try inflater.inflateZlib(buffer, size: Self.text.count) == Self.text)
            #expect(throws: InflateError.corrupt("more than the 1000 bytes it announces")) { try inflater.inflateZlib(buffer, size: 1000) }
            #expect(throws: InflateError.corrupt("200000 bytes, not the 300000 it announces")) { try inflater.inflateZlib(buffer, size: 300_000) }
            #expect(throws: InflateError.self) { try inflater.inflateZlib(UnsafeBufferPointer(rebasing: buffer[0..<(buffer.count / 2)]), size: Self.text.count) }
        }
    }
}
