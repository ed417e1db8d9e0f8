// Inflating gzip and zlib data with a cap on the output, for vector tiles (gzip or zlib in
// MBTiles), `.osm.gz` files and the zlib blobs of `.osm.pbf`. The cap bounds what a small
// hostile input can make us allocate (a gzip bomb).

import CDeflate
import CZlib

package enum InflateError: Error, Sendable, Equatable {
    /// zlib or libdeflate could not be set up (out of memory).
    case setup(String)
    /// The output passes the caller's limit.
    case tooLarge(limit: Int)
    /// The data is corrupt or truncated; what the library said.
    case corrupt(String)
}

/// A reusable inflater. Setting zlib up costs more than inflating a typical 600-byte tile, so
/// a caller inflating many inputs keeps one (per thread: it is not Sendable). gzip inputs,
/// whose trailer gives their size, go through libdeflate in one call (several times faster
/// than zlib on small tiles); anything else through zlib's streaming inflate.
package final class Inflater {
    private var stream = z_stream()
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    private let deflate: OpaquePointer

    package init() throws(InflateError) {
        guard let deflate = libdeflate_alloc_decompressor() else { throw .setup("cannot initialise libdeflate") }
        self.deflate = deflate
        // 15 + 32: a 32 KiB window and automatic gzip/zlib header detection. If this fails,
        // deinit still runs (every property is set): it frees libdeflate, and inflateEnd on a
        // stream zlib never set up is a no-op.
        guard inflateInit2_(&stream, 15 + 32, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .setup("cannot initialise zlib")
        }
    }

    deinit {
        inflateEnd(&stream)
        libdeflate_free_decompressor(deflate)
    }

    /// Inflates gzip or zlib data (zlib tells which from the header); of a multi-member gzip,
    /// the first member. With `truncate`, stops quietly at `limit` bytes (and returns what it
    /// has on corrupt data: for sniffing the head of a stream); otherwise passing `limit` is
    /// `tooLarge`.
    package func inflate(_ input: [UInt8], limit: Int, truncate: Bool = false) throws(InflateError) -> [UInt8] {
        if !truncate, let output = gzipInOneCall(input, limit: limit) { return output }
        guard inflateReset(&stream) == Z_OK else { throw .setup("cannot reset zlib") }
        var output: [UInt8] = []
        var tooLarge = false
        let status: Int32 = input.withUnsafeBufferPointer { inBuffer in
            stream.next_in = UnsafeMutablePointer(mutating: inBuffer.baseAddress)
            // Clamped: an input over 4 GiB reads as a truncated stream rather than trapping.
            stream.avail_in = UInt32(clamping: inBuffer.count)
            var result: Int32 = Z_OK
            while result == Z_OK {
                result = chunk.withUnsafeMutableBufferPointer { outBuffer in
                    stream.next_out = outBuffer.baseAddress
                    stream.avail_out = UInt32(outBuffer.count)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                output.append(contentsOf: chunk[0..<(chunk.count - Int(stream.avail_out))])
                if truncate && output.count >= limit { return Z_STREAM_END }
                if output.count > limit { tooLarge = true; return result }
                // Z_BUF_ERROR means no progress: with input left, the output chunk was full
                // (go on with an empty one); with none left, the stream stops short.
                if result == Z_BUF_ERROR && stream.avail_in == 0 { return Z_DATA_ERROR }
                if result == Z_BUF_ERROR { result = Z_OK }
            }
            return result
        }
        if tooLarge { throw .tooLarge(limit: limit) }
        switch status {
        case Z_STREAM_END: return truncate ? Array(output.prefix(limit)) : output
        default:
            if truncate { return output }
            throw .corrupt("zlib status \(status)")
        }
    }

    /// gzip's trailer gives the size (mod 2^32), so the data can go straight into an array of
    /// that size in one libdeflate call. nil when the trailer is not believable or does not hold
    /// (a lie, several members, corrupt data): the caller falls back on zlib, which tells why.
    private func gzipInOneCall(_ input: [UInt8], limit: Int) -> [UInt8]? {
        guard input.count >= 18, input[0] == 0x1F, input[1] == 0x8B else { return nil }
        let n = input.count
        let size = Int(input[n - 4]) | Int(input[n - 3]) << 8 | Int(input[n - 2]) << 16 | Int(input[n - 1]) << 24
        // deflate expands at most 1032:1, so a larger claim is a lie, and not worth allocating.
        guard size > 0, size <= limit, size / 1032 <= n else { return nil }
        var result = LIBDEFLATE_BAD_DATA
        var produced = 0
        let output = input.withUnsafeBufferPointer { inBuffer in
            [UInt8](unsafeUninitializedCapacity: size) { outBuffer, count in
                result = libdeflate_gzip_decompress(deflate, inBuffer.baseAddress, inBuffer.count, outBuffer.baseAddress, size, &produced)
                count = result == LIBDEFLATE_SUCCESS ? produced : 0
            }
        }
        return result == LIBDEFLATE_SUCCESS && produced == size ? output : nil
    }

    /// Inflates zlib data whose size is known up front (an OSM PBF blob's `raw_size`): one
    /// libdeflate call into an array of that size. Any other size is `corrupt`.
    package func inflateZlib(_ input: UnsafeBufferPointer<UInt8>, size: Int) throws(InflateError) -> [UInt8] {
        guard size >= 0 else { throw .corrupt("a negative size \(size)") }
        var result = LIBDEFLATE_BAD_DATA
        var produced = 0
        let output = [UInt8](unsafeUninitializedCapacity: size) { outBuffer, count in
            result = libdeflate_zlib_decompress(deflate, input.baseAddress, input.count, outBuffer.baseAddress, size, &produced)
            count = result == LIBDEFLATE_SUCCESS ? produced : 0
        }
        if result == LIBDEFLATE_INSUFFICIENT_SPACE { throw .corrupt("more than the \(size) bytes it announces") }
        guard result == LIBDEFLATE_SUCCESS else { throw .corrupt("libdeflate result \(result.rawValue)") }
        guard produced == size else { throw .corrupt("\(produced) bytes, not the \(size) it announces") }
        return output
    }
}
