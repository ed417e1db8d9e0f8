// What a tile's bytes are, told from the bytes themselves: MBTiles metadata lies (the zoo's
// file says MVT and holds uncompressed GeoJSON), so `format` in metadata is never trusted.

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
        var stream = z_stream()
        // 15 + 32: a 32 KiB window and automatic gzip/zlib header detection.
        guard inflateInit2_(&stream, 15 + 32, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw DecompressionError(message: "cannot initialise zlib")
        }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var input = input
        let status: Int32 = input.withUnsafeMutableBufferPointer { inBuffer in
            stream.next_in = inBuffer.baseAddress
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
