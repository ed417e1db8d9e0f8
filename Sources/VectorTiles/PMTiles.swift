// PMTiles v3 (github.com/protomaps/PMTiles, spec/v3/spec.md), the parts the reader
// (PMTilesReader.swift) and the writer (PMTilesWriter.swift) share: the 127-byte header, the
// tile ids along Hilbert curves, varints and the directories' columnar encoding, and the one
// error type. Everything read from a file is untrusted: each number is checked before it
// becomes an index, a length or an Int, and a bad one is a `PMTilesError`, never a trap.

import Foundation

public struct PMTilesError: Error, CustomStringConvertible, Sendable {
    /// What kind of damage, for a caller (and a test) that tells them apart.
    public enum Kind: Sendable, Equatable {
        /// Shorter than its header, or a section or tile ends past the end of the file.
        case truncated
        /// Not a PMTiles archive (its first bytes are not `PMTiles`).
        case badMagic
        /// A PMTiles archive of a version other than 3.
        case unsupportedVersion
        /// A directory entry or header field points outside its section, or a length is absurd.
        case outOfRange
        /// A varint that runs past its directory's end or past 64 bits.
        case badVarint
        /// A directory that decodes but breaks the spec's rules (no entries, a zero length,
        /// leaves nested too deep).
        case badDirectory
        /// A compression this reader does not have (brotli, zstd), or gzip that does not inflate.
        case compression
        /// The JSON metadata is not JSON.
        case metadata
        /// The file could not be opened, read or written.
        case io
        /// The writer was given tiles it cannot store.
        case invalidInput
    }

    public let file: String
    public let kind: Kind
    public let message: String
    public var description: String { "\(file): \(message)" }

    public init(file: String, kind: Kind, message: String) {
        self.file = file
        self.kind = kind
        self.message = message
    }
}

/// The spec's `Compression` enum (header bytes 97 and 98).
public enum PMTilesCompression: UInt8, Sendable {
    case unknown = 0, none = 1, gzip = 2, brotli = 3, zstd = 4
}

/// The spec's tile type enum (header byte 99).
public enum PMTilesTileType: UInt8, Sendable {
    case unknown = 0, mvt = 1, png = 2, jpeg = 3, webp = 4, avif = 5

    /// MBTiles' `format` word for it (`pbf` for MVT), nil for unknown.
    public var formatName: String? {
        switch self {
        case .unknown: nil
        case .mvt: "pbf"
        case .png: "png"
        case .jpeg: "jpg"
        case .webp: "webp"
        case .avif: "avif"
        }
    }

    /// The type of tiles of this format (GeoJSON and TopoJSON tiles have none of their own).
    public init(_ format: TileFormat) {
        switch format {
        case .mvt: self = .mvt
        case .png: self = .png
        case .jpeg: self = .jpeg
        case .webp: self = .webp
        case .geojson, .topojson, .unknown: self = .unknown
        }
    }
}

/// The fixed-size header at the start of every archive. Offsets and lengths are in bytes from
/// the start of the file (sections) or of their section (directory entries).
public struct PMTilesHeader: Sendable, Equatable {
    public static let size = 127
    static let magic = Array("PMTiles".utf8)

    public var rootOffset: UInt64 = 0, rootLength: UInt64 = 0
    public var metadataOffset: UInt64 = 0, metadataLength: UInt64 = 0
    public var leafOffset: UInt64 = 0, leafLength: UInt64 = 0
    public var tileDataOffset: UInt64 = 0, tileDataLength: UInt64 = 0
    public var addressedTiles: UInt64 = 0, tileEntries: UInt64 = 0, tileContents: UInt64 = 0
    public var clustered = false
    public var internalCompression = PMTilesCompression.gzip
    public var tileCompression = PMTilesCompression.unknown
    public var tileType = PMTilesTileType.unknown
    public var minZoom: UInt8 = 0, maxZoom: UInt8 = 0
    /// Degrees × 10^7, as stored.
    public var minLonE7: Int32 = 0, minLatE7: Int32 = 0, maxLonE7: Int32 = 0, maxLatE7: Int32 = 0
    public var centerZoom: UInt8 = 0
    public var centerLonE7: Int32 = 0, centerLatE7: Int32 = 0

    public init() {}

    /// Reads a header from the first bytes of a file; `file` names it in errors.
    init(_ b: [UInt8], file: String) throws(PMTilesError) {
        guard b.count >= 7, Array(b[0..<7]) == PMTilesHeader.magic else {
            // Version 1 and 2 archives begin "PM" and a 2-byte version.
            if b.count >= 4, b[0] == 0x50, b[1] == 0x4D, b[2] == 1 || b[2] == 2, b[3] == 0 {
                throw PMTilesError(file: file, kind: .unsupportedVersion, message: "a PMTiles version \(b[2]) archive: only version 3 is read (convert it with the pmtiles tool)")
            }
            throw PMTilesError(file: file, kind: b.count < 7 ? .truncated : .badMagic,
                               message: b.count < 7 ? "truncated: \(b.count) bytes, shorter than a PMTiles header (127)" : "not a PMTiles archive: it does not begin with 'PMTiles'")
        }
        guard b.count >= PMTilesHeader.size else {
            throw PMTilesError(file: file, kind: .truncated, message: "truncated header: \(b.count) of its 127 bytes")
        }
        guard b[7] == 3 else { throw PMTilesError(file: file, kind: .unsupportedVersion, message: "PMTiles version \(b[7]): only version 3 is read") }
        func u64(_ at: Int) -> UInt64 { (0..<8).reduce(UInt64(0)) { $0 | UInt64(b[at + $1]) << (8 * UInt64($1)) } }
        func i32(_ at: Int) -> Int32 { Int32(bitPattern: (0..<4).reduce(UInt32(0)) { $0 | UInt32(b[at + $1]) << (8 * UInt32($1)) }) }
        func compression(_ byte: UInt8, _ what: String) throws(PMTilesError) -> PMTilesCompression {
            guard let value = PMTilesCompression(rawValue: byte) else {
                throw PMTilesError(file: file, kind: .compression, message: "unknown \(what) compression \(byte) in the header")
            }
            return value
        }
        (rootOffset, rootLength, metadataOffset, metadataLength) = (u64(8), u64(16), u64(24), u64(32))
        (leafOffset, leafLength, tileDataOffset, tileDataLength) = (u64(40), u64(48), u64(56), u64(64))
        (addressedTiles, tileEntries, tileContents) = (u64(72), u64(80), u64(88))
        clustered = b[96] == 1
        internalCompression = try compression(b[97], "internal")
        tileCompression = try compression(b[98], "tile")
        // An unknown tile type (a newer spec's) is "other": the tiles' own bytes tell.
        tileType = PMTilesTileType(rawValue: b[99]) ?? .unknown
        (minZoom, maxZoom) = (b[100], b[101])
        (minLonE7, minLatE7, maxLonE7, maxLatE7) = (i32(102), i32(106), i32(110), i32(114))
        (centerZoom, centerLonE7, centerLatE7) = (b[118], i32(119), i32(123))
    }

    /// The 127 bytes of this header.
    var bytes: [UInt8] {
        var b = PMTilesHeader.magic + [3]
        func u64(_ v: UInt64) { for i in 0..<8 { b.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) } }
        func i32(_ v: Int32) { let u = UInt32(bitPattern: v); for i in 0..<4 { b.append(UInt8(truncatingIfNeeded: u >> (8 * UInt32(i)))) } }
        for v in [rootOffset, rootLength, metadataOffset, metadataLength, leafOffset, leafLength, tileDataOffset, tileDataLength,
                  addressedTiles, tileEntries, tileContents] { u64(v) }
        b += [clustered ? 1 : 0, internalCompression.rawValue, tileCompression.rawValue, tileType.rawValue, minZoom, maxZoom]
        for v in [minLonE7, minLatE7, maxLonE7, maxLatE7] { i32(v) }
        b.append(centerZoom)
        i32(centerLonE7)
        i32(centerLatE7)
        return b
    }
}

/// Tile ids: 0 for z0, then each zoom's 4^z tiles in the order of that zoom's Hilbert curve, so
/// that one number orders the whole pyramid and neighbouring tiles have nearby ids.
public enum PMTilesTileID {
    /// Ids fit 64 bits through z31; Vltava's tiles stop at z30, as MBTiles'.
    static let maxZoom = 31

    /// The id of the first tile of zoom `z`: the number of tiles of every zoom above it,
    /// (4^z - 1) / 3. For z32 (the end of z31) 4^32 wraps to 0, and 0 &- 1 is the 2^64 - 1 wanted.
    static func first(ofZoom z: Int) -> UInt64 { (((1 as UInt64) << (2 * UInt64(z))) &- 1) / 3 }

    /// The id of tile z/x/y, or nil for an address off the grid (z 0…31, x and y below 2^z).
    public static func id(z: Int, x: Int, y: Int) -> UInt64? {
        guard (0...maxZoom).contains(z), x >= 0, y >= 0, x < 1 << z, y < 1 << z else { return nil }
        // Walks the quadrants from the largest down (Hilbert's xy→d): each level adds its
        // quadrant's rank and turns the remaining coordinates into that quadrant's frame.
        var (px, py) = (UInt64(x), UInt64(y))
        var d: UInt64 = 0
        var s: UInt64 = z == 0 ? 0 : 1 << UInt64(z - 1)
        while s > 0 {
            let rx: UInt64 = px & s != 0 ? 1 : 0
            let ry: UInt64 = py & s != 0 ? 1 : 0
            d += s * s * ((3 * rx) ^ ry)
            (px, py) = rotate(s, px, py, rx, ry)
            s >>= 1
        }
        return first(ofZoom: z) + d
    }

    /// The address of a tile id, or nil for one past z31's last tile.
    public static func address(_ id: UInt64) -> (z: Int, x: Int, y: Int)? {
        var z = 0
        while z <= maxZoom && id >= first(ofZoom: z + 1) { z += 1 }
        guard z <= maxZoom else { return nil }
        var t = id - first(ofZoom: z)
        var (x, y): (UInt64, UInt64) = (0, 0)
        var s: UInt64 = 1
        while s < 1 << UInt64(z) {
            let rx = 1 & (t >> 1)
            let ry = 1 & (t ^ rx)
            (x, y) = rotate(s, x, y, rx, ry)
            x += s * rx
            y += s * ry
            t >>= 2
            s <<= 1
        }
        return (z, Int(x), Int(y))
    }

    /// The curve's turn in a quadrant of side `s`: the lower-left quadrant is mirrored about
    /// its diagonal, the lower-right about the other diagonal.
    private static func rotate(_ s: UInt64, _ x: UInt64, _ y: UInt64, _ rx: UInt64, _ ry: UInt64) -> (UInt64, UInt64) {
        guard ry == 0 else { return (x, y) }
        // Only the bits below s matter to the levels that follow, so s - 1 - x is taken
        // within those bits (wrapping), and never underflows into a trap.
        if rx == 1 { return ((s &- 1 &- y) & (s &- 1), (s &- 1 &- x) & (s &- 1)) }
        return (y, x)
    }
}

/// One directory entry. `runLength` 0 makes it a pointer to a leaf directory (offset and length
/// within the leaf section); otherwise tiles `tileID ..< tileID + runLength` are the bytes at
/// `offset` of the tile data section.
struct PMTilesEntry: Sendable, Equatable {
    var tileID: UInt64
    var offset: UInt64
    var length: UInt32
    var runLength: UInt32
}

enum PMTilesDirectory {
    /// Decodes an (already inflated) directory. Every entry needs at least a byte in each of
    /// its four columns, so a count above a quarter of the bytes is refused before anything
    /// is allocated for it.
    static func decode(_ b: [UInt8], file: String, what: String) throws(PMTilesError) -> [PMTilesEntry] {
        var at = 0
        func varint() throws(PMTilesError) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard at < b.count else {
                    throw PMTilesError(file: file, kind: .badVarint, message: "\(what): a varint runs past the end of the directory (byte \(at) of \(b.count))")
                }
                let byte = b[at]
                at += 1
                // The tenth byte may hold only bit 63.
                guard shift < 63 || (shift == 63 && byte <= 1) else {
                    throw PMTilesError(file: file, kind: .badVarint, message: "\(what): a varint longer than 64 bits at byte \(at - 1)")
                }
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
        }
        func fail(_ kind: PMTilesError.Kind, _ message: String) -> PMTilesError { PMTilesError(file: file, kind: kind, message: "\(what): \(message)") }
        let count = try varint()
        guard count > 0 else { throw fail(.badDirectory, "a directory with no entries") }
        guard count <= UInt64(b.count - at) / 4 else {
            throw fail(.outOfRange, "\(count) entries cannot fit in its \(b.count) bytes")
        }
        let n = Int(count)
        var entries = [PMTilesEntry](repeating: PMTilesEntry(tileID: 0, offset: 0, length: 0, runLength: 0), count: n)
        var id: UInt64 = 0
        for i in 0..<n {
            let delta = try varint()
            // Ascending, as the search needs: a repeated id is two entries for one tile.
            guard i == 0 || delta > 0 else { throw fail(.badDirectory, "entry \(i) repeats the tile id of the entry before it") }
            let (sum, overflow) = id.addingReportingOverflow(delta)
            guard !overflow else { throw fail(.outOfRange, "tile id of entry \(i) passes 2^64") }
            id = sum
            entries[i].tileID = id
        }
        for i in 0..<n {
            let run = try varint()
            guard run <= UInt64(UInt32.max) else { throw fail(.outOfRange, "entry \(i) repeats \(run) times (more than 2^32 - 1)") }
            entries[i].runLength = UInt32(run)
        }
        for i in 0..<n {
            let length = try varint()
            guard length > 0 else { throw fail(.badDirectory, "entry \(i) has length 0") }
            guard length <= UInt64(UInt32.max) else { throw fail(.outOfRange, "entry \(i) has length \(length) (more than 2^32 - 1)") }
            entries[i].length = UInt32(length)
        }
        for i in 0..<n {
            let stored = try varint()
            if stored == 0 {
                // 0: right after the previous entry's bytes, which the first entry has none of.
                guard i > 0 else { throw fail(.badDirectory, "the first entry's offset is 0 (\"after the previous entry\")") }
                let (next, overflow) = entries[i - 1].offset.addingReportingOverflow(UInt64(entries[i - 1].length))
                guard !overflow else { throw fail(.outOfRange, "entry \(i)'s offset passes 2^64") }
                entries[i].offset = next
            } else {
                entries[i].offset = stored - 1
            }
        }
        return entries
    }

    /// The columnar varint encoding of `entries` (in tile id order), not yet compressed.
    static func encode(_ entries: [PMTilesEntry]) -> [UInt8] {
        var b: [UInt8] = []
        b.reserveCapacity(entries.count * 6 + 8)
        func varint(_ value: UInt64) {
            var v = value
            while v >= 0x80 {
                b.append(UInt8(truncatingIfNeeded: v) | 0x80)
                v >>= 7
            }
            b.append(UInt8(v))
        }
        varint(UInt64(entries.count))
        var last: UInt64 = 0
        for entry in entries {
            varint(entry.tileID - last)
            last = entry.tileID
        }
        for entry in entries { varint(UInt64(entry.runLength)) }
        for entry in entries { varint(UInt64(entry.length)) }
        for (i, entry) in entries.enumerated() {
            let contiguous = i > 0 && entry.offset == entries[i - 1].offset &+ UInt64(entries[i - 1].length)
            varint(contiguous ? 0 : entry.offset &+ 1)
        }
        return b
    }

    /// The entry that holds `id` or the leaf that may: the last entry whose id is at most it.
    static func search(_ entries: [PMTilesEntry], for id: UInt64) -> PMTilesEntry? {
        var low = 0, high = entries.count
        while low < high {
            let mid = low + (high - low) / 2
            if entries[mid].tileID <= id { low = mid + 1 } else { high = mid }
        }
        guard low > 0 else { return nil }
        let entry = entries[low - 1]
        if entry.runLength == 0 { return entry }
        // Tiles id ..< id + runLength, without overflowing near 2^64.
        return id - entry.tileID < UInt64(entry.runLength) ? entry : nil
    }
}
