// What a tile's bytes are, told from the bytes themselves: MBTiles metadata lies (the zoo's
// file says MVT and holds uncompressed GeoJSON), so `format` in metadata is never trusted.

import CDeflate
import CZlib

public enum TileCompression: String, Sendable {
    case none, gzip, zlib

    /// The HTTP Content-Encoding for the stored bytes (zlib is "deflate" on the wire).
    public var contentEncoding: String? {
        switch self {
        case .none: nil
        case .gzip: "gzip"
        case .zlib: "deflate"
        }
    }
}

public enum TileFormat: String, Sendable {
    case mvt, geojson, topojson, png, jpeg, webp, unknown

    public var isRaster: Bool { self == .png || self == .jpeg || self == .webp }

    public var contentType: String {
        switch self {
        case .mvt: "application/vnd.mapbox-vector-tile"
        case .geojson: "application/geo+json"
        case .topojson: "application/json"
        case .png: "image/png"
        case .jpeg: "image/jpeg"
        case .webp: "image/webp"
        case .unknown: "application/octet-stream"
        }
    }
}

public struct TileEncoding: Sendable, Equatable {
    public var compression: TileCompression
    public var format: TileFormat

    /// Sniffs the stored bytes; for compressed tiles, the format of the decompressed bytes.
    public static func detect(_ bytes: [UInt8]) -> TileEncoding {
        let compression = detectCompression(bytes)
        guard compression != .none else { return TileEncoding(compression: .none, format: detectFormat(bytes)) }
        // The head tells the format, except TopoJSON from GeoJSON, which needs the whole text.
        let head = (try? Decompression.inflate(bytes, limit: 4096, truncate: true)) ?? []
        var format = detectFormat(head)
        if format == .geojson, let whole = try? Decompression.inflate(bytes) { format = detectFormat(whole) }
        return TileEncoding(compression: compression, format: format)
    }

    static func detectCompression(_ b: [UInt8]) -> TileCompression {
        if b.count >= 2 && b[0] == 0x1F && b[1] == 0x8B { return .gzip }
        // zlib: CMF 0x78 (deflate, 32K window) and a FLG making CMF·256 + FLG a multiple of 31.
        if b.count >= 2 && b[0] == 0x78 && (UInt16(b[0]) << 8 | UInt16(b[1])) % 31 == 0 { return .zlib }
        return .none
    }

    static func detectFormat(_ b: [UInt8]) -> TileFormat {
        if b.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return .png }
        if b.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if b.count >= 12 && b.starts(with: Array("RIFF".utf8)) && Array(b[8..<12]) == Array("WEBP".utf8) { return .webp }
        let firstNonSpace = b.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        if firstNonSpace == UInt8(ascii: "{") {
            // A TopoJSON topology names its type at the top level, often after its objects.
            return contains(b, Array("\"Topology\"".utf8)) ? .topojson : .geojson
        }
        // An MVT tile is a sequence of layers (field 3, length-delimited: key byte 0x1A); an
        // empty tile is a valid MVT too.
        if b.isEmpty || b[0] == 0x1A { return .mvt }
        return .unknown
    }
}

func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard let first = needle.first, haystack.count >= needle.count else { return false }
    var i = 0
    let last = haystack.count - needle.count
    while i <= last {
        if haystack[i] == first && haystack[i..<(i + needle.count)].elementsEqual(needle) { return true }
        i += 1
    }
    return false
}

public struct DecompressionError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public var description: String { message }
}

public enum Decompression {
    /// 64 MiB: far above any real tile, and a bound against decompression bombs.
    public static let defaultLimit = 64 << 20

    /// Inflates gzip or zlib data (zlib detects which). With `truncate`, stops quietly at
    /// `limit` bytes; otherwise exceeding it is an error.
    public static func inflate(_ input: [UInt8], limit: Int = defaultLimit, truncate: Bool = false) throws(DecompressionError) -> [UInt8] {
        let inflater = try Inflater()
        return try inflater.inflate(input, limit: limit, truncate: truncate)
    }
}

/// A reusable inflater. Setting zlib up costs more than inflating a typical 600-byte tile, so
/// a caller decoding many tiles keeps one (per thread: it is not Sendable). gzip tiles, whose
/// trailer gives their size, go through libdeflate in one call; anything else through zlib.
public final class Inflater {
    private var stream = z_stream()
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    private let deflate: OpaquePointer

    public init() throws(DecompressionError) {
        guard let deflate = libdeflate_alloc_decompressor() else { throw DecompressionError(message: "cannot initialise libdeflate") }
        self.deflate = deflate
        // 15 + 32: a 32 KiB window and automatic gzip/zlib header detection.
        guard inflateInit2_(&stream, 15 + 32, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw DecompressionError(message: "cannot initialise zlib")
        }
    }

    deinit {
        inflateEnd(&stream)
        libdeflate_free_decompressor(deflate)
    }

    public func inflate(_ input: [UInt8], limit: Int = Decompression.defaultLimit, truncate: Bool = false) throws(DecompressionError) -> [UInt8] {
        // Fast path: gzip's trailer gives the size (mod 2^32), so inflate straight into an
        // array of that size in one call. If the trailer lies, fall through to the chunked path.
        if !truncate, input.count >= 18, input[0] == 0x1F, input[1] == 0x8B {
            let n = input.count
            let size = Int(input[n - 4]) | Int(input[n - 3]) << 8 | Int(input[n - 2]) << 16 | Int(input[n - 1]) << 24
            if size > 0 && size <= limit {
                var result = LIBDEFLATE_BAD_DATA
                let output = input.withUnsafeBufferPointer { inBuffer in
                    [UInt8](unsafeUninitializedCapacity: size) { outBuffer, count in
                        var produced = 0
                        result = libdeflate_gzip_decompress(deflate, inBuffer.baseAddress, inBuffer.count, outBuffer.baseAddress, size, &produced)
                        count = result == LIBDEFLATE_SUCCESS ? produced : 0
                    }
                }
                if result == LIBDEFLATE_SUCCESS { return output }
            }
        }
        guard inflateReset(&stream) == Z_OK else { throw DecompressionError(message: "cannot reset zlib") }
        var output: [UInt8] = []
        let status: Int32 = input.withUnsafeBufferPointer { inBuffer in
            stream.next_in = UnsafeMutablePointer(mutating: inBuffer.baseAddress)
            stream.avail_in = UInt32(inBuffer.count)
            var result: Int32 = Z_OK
            while result == Z_OK {
                result = chunk.withUnsafeMutableBufferPointer { outBuffer in
                    stream.next_out = outBuffer.baseAddress
                    stream.avail_out = UInt32(outBuffer.count)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk.count - Int(stream.avail_out)
                output.append(contentsOf: chunk[0..<produced])
                if output.count >= limit { return truncate ? Z_STREAM_END : Z_MEM_ERROR }
                if result == Z_BUF_ERROR && stream.avail_in == 0 { return Z_DATA_ERROR }
                if result == Z_BUF_ERROR { result = Z_OK }
            }
            return result
        }
        switch status {
        case Z_STREAM_END: return truncate ? Array(output.prefix(limit)) : output
        case Z_MEM_ERROR: throw DecompressionError(message: "the tile inflates to more than \(limit) bytes")
        default:
            if truncate { return output }
            throw DecompressionError(message: "corrupt compressed tile (zlib status \(status))")
        }
    }
}
