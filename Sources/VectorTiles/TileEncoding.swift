// What a tile's bytes are, told from the bytes themselves: MBTiles metadata lies (the zoo's
// file says MVT and holds uncompressed GeoJSON), so `format` in metadata is never trusted.

import Wire

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

    public init(compression: TileCompression, format: TileFormat) {
        self.compression = compression
        self.format = format
    }

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
    /// One call sets up a fresh `Wire.Inflater`; a caller inflating many tiles keeps its own
    /// (with `defaultLimit`), since setting zlib up costs more than a typical 600-byte tile.
    public static func inflate(_ input: [UInt8], limit: Int = defaultLimit, truncate: Bool = false) throws(DecompressionError) -> [UInt8] {
        do {
            return try Inflater().inflate(input, limit: limit, truncate: truncate)
        } catch {
            throw DecompressionError(error)
        }
    }
}

/// gzip for tiles going into an archive (`vltava tiles export`): PMTiles has no zlib, and
/// vector tiles are stored gzipped by convention.
public enum TileCompressor {
    /// `input` gzipped, or nil if the compressor cannot be set up (out of memory).
    public static func gzip(_ input: [UInt8]) -> [UInt8]? { Gzip.compress(input) }
}

extension DecompressionError {
    /// Wire's inflate errors in a tile's words.
    init(_ error: InflateError) {
        switch error {
        case .setup(let message): self.init(message: message)
        case .tooLarge(let limit): self.init(message: "the tile inflates to more than \(limit) bytes")
        case .corrupt(let detail): self.init(message: "corrupt compressed tile (\(detail))")
        }
    }
}
