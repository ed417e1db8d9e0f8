// A PMTiles v3 writer. Tiles are added one at a time and their bytes go straight to a scratch
// file beside the output, so an export of any size holds no tile but the one being added:
// what stays in memory is the directory, 24 bytes an entry, and for deduplication a hash and
// an offset per distinct tile (about 60 bytes a tile in all: 60 MB for a million tiles), plus
// the finished leaf directories (a few bytes a tile, compressed).
//
// Identical tiles (same bytes: hashed, then compared) are stored once; consecutive tile ids
// with the same bytes become one entry with a run length. Tiles added out of tile id order
// are put in order at the end (their bytes copied once more), so every archive is clustered.
// The root directory is kept within the 16,384 bytes the spec allows with the header; past
// that the entries go into leaf directories of 4,096 entries (doubled until the root fits).
// The archive is written beside its path and renamed into place when complete.

import Foundation
import Geometry
import Support
import Wire
#if canImport(Glibc)
import Glibc
#endif

public final class PMTilesWriter {
    /// What an archive holds, once written.
    public struct Summary: Sendable, Equatable {
        /// Tiles added; directory entries after run-length merging; distinct tile contents.
        public var addressedTiles: Int, tileEntries: Int, tileContents: Int
        public var leafDirectories: Int
        public var rootDirectoryBytes: Int
        public var fileBytes: UInt64
    }

    public let path: String
    public let tileType: PMTilesTileType
    public let tileCompression: PMTilesCompression
    private let scratch: ScratchFile
    private var entries: [PMTilesEntry] = []
    /// Distinct tile contents so far: their bytes' hash → where in the scratch file; a second
    /// content of the same hash (rare) goes to `moreContents`, so the usual case holds no array.
    private var contents: [Int: Blob] = [:]
    private var moreContents: [Int: [Blob]] = [:]
    private struct Blob { var offset: UInt64, length: UInt32 }
    private var contentCount = 0
    private var inOrder = true
    /// The tiles' extent, for an archive given no bounds.
    private var box = (minLon: 180.0, minLat: 90.0, maxLon: -180.0, maxLat: -90.0)
    private var finished = false

    /// The root directory and the header fit in the first 16 KiB (spec, "Directory Hierarchy").
    static let rootBudget = 16_384 - PMTilesHeader.size
    static let firstLeafSize = 4096

    /// `tileCompression`: how the tiles given to `add` are compressed (gzip, none, or unknown
    /// for bytes of mixed kinds); each tile is checked against it.
    public init(path: String, tileType: PMTilesTileType, tileCompression: PMTilesCompression) throws(PMTilesError) {
        self.path = path
        self.tileType = tileType
        self.tileCompression = tileCompression
        guard [.none, .gzip, .unknown].contains(tileCompression) else {
            throw PMTilesError(file: (path as NSString).lastPathComponent, kind: .invalidInput, message: "tiles are written uncompressed or gzipped, not \(tileCompression)")
        }
        scratch = try ScratchFile(beside: path)
    }

    /// Adds tile z/x/y (XYZ addressing) with its bytes as they are to be stored.
    public func add(z: Int, x: Int, y: Int, bytes: [UInt8]) throws(PMTilesError) {
        func refuse(_ message: String) -> PMTilesError { PMTilesError(file: scratch.name, kind: .invalidInput, message: "tile \(z)/\(x)/\(y): \(message)") }
        guard !finished else { throw refuse("the archive is already written") }
        guard z <= 30, let id = PMTilesTileID.id(z: z, x: x, y: y) else { throw refuse("not a tile address (z 0…30, x and y below 2^z)") }
        // The spec's entries have lengths > 0: an empty tile is left out, which a reader
        // takes as nothing there.
        guard !bytes.isEmpty else { throw refuse("0 bytes: a PMTiles archive cannot store an empty tile (leave it out)") }
        guard let length = UInt32(exactly: bytes.count) else { throw refuse("\(bytes.count) bytes, more than a directory entry can address") }
        let gzipped = bytes.count >= 2 && bytes[0] == 0x1F && bytes[1] == 0x8B
        if tileCompression == .gzip && !gzipped { throw refuse("not gzip-compressed, but the archive's tiles are declared gzip") }
        if tileCompression == .none && TileEncoding.detectCompression(bytes) != .none { throw refuse("compressed, but the archive's tiles are declared uncompressed") }
        if let last = entries.last, id <= last.tileID { inOrder = false }

        var hasher = Hasher()
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        let hash = hasher.finalize()
        var offset: UInt64?
        // A hash match is compared byte for byte: two tiles are one only when they are equal.
        for candidate in (contents[hash].map { [$0] } ?? []) + (moreContents[hash] ?? []) where candidate.length == length {
            if try scratch.read(candidate.offset, Int(length)) == bytes {
                offset = candidate.offset
                break
            }
        }
        if offset == nil {
            offset = scratch.size
            try scratch.append(bytes)
            let blob = Blob(offset: scratch.size - UInt64(length), length: length)
            if contents[hash] == nil { contents[hash] = blob } else { moreContents[hash, default: []].append(blob) }
            contentCount += 1
        }
        entries.append(PMTilesEntry(tileID: id, offset: offset ?? 0, length: length, runLength: 1))
        let tileBox = TileProjection(z: z, x: x, y: y).lonLatBox(margin: 0)
        box = (min(box.minLon, tileBox.minLon), min(box.minLat, tileBox.minLat), max(box.maxLon, tileBox.maxLon), max(box.maxLat, tileBox.maxLat))
    }

    /// Writes the archive: the header (zooms from the tiles; `bounds` [west, south, east,
    /// north] and `center`, else the tiles' extent and its middle at the lowest zoom), the
    /// directories, `metadata` gzipped, and the tiles.
    @discardableResult
    public func finish(metadata: JSONObject, bounds: [Double]? = nil, center: TileCenter? = nil) throws(PMTilesError) -> Summary {
        func fail(_ kind: PMTilesError.Kind, _ message: String) -> PMTilesError { PMTilesError(file: scratch.name, kind: kind, message: message) }
        guard !finished else { throw fail(.invalidInput, "the archive is already written") }
        finished = true
        guard !entries.isEmpty else { throw fail(.invalidInput, "no tiles: a PMTiles archive holds at least one") }
        var data = scratch
        if !inOrder {
            entries.sort { $0.tileID < $1.tileID }
            for i in entries.indices.dropFirst() where entries[i].tileID == entries[i - 1].tileID {
                let (z, x, y) = PMTilesTileID.address(entries[i].tileID) ?? (0, 0, 0)
                throw fail(.invalidInput, "tile \(z)/\(x)/\(y) was added twice")
            }
            // The bytes in tile id order, each distinct tile once, where it first appears.
            let ordered = try ScratchFile(beside: path)
            var moved: [UInt64: UInt64] = [:]
            for i in entries.indices {
                if let kept = moved[entries[i].offset] {
                    entries[i].offset = kept
                    continue
                }
                moved[entries[i].offset] = ordered.size
                try ordered.append(try scratch.read(entries[i].offset, Int(entries[i].length)))
                entries[i].offset = ordered.size - UInt64(entries[i].length)
            }
            data = ordered
        }
        // Runs: the next tile id with the same bytes extends the entry before it (in place, so
        // the directory is never held twice).
        let addressed = entries.count
        var kept = 0
        for i in entries.indices {
            let entry = entries[i]
            if kept > 0, entries[kept - 1].runLength < UInt32.max, entry.tileID == entries[kept - 1].tileID + UInt64(entries[kept - 1].runLength),
               entry.offset == entries[kept - 1].offset, entry.length == entries[kept - 1].length {
                entries[kept - 1].runLength += 1
            } else {
                entries[kept] = entry
                kept += 1
            }
        }
        entries.removeLast(entries.count - kept)
        let merged = entries
        let (root, leaves, leafCount) = try PMTilesWriter.directories(merged, file: scratch.name)
        guard let metadataBytes = Gzip.compress(Array(JSON.serialize(.object(metadata)).utf8)) else { throw fail(.io, "cannot gzip the metadata") }

        var header = PMTilesHeader()
        header.rootOffset = UInt64(PMTilesHeader.size)
        header.rootLength = UInt64(root.count)
        header.metadataOffset = header.rootOffset + header.rootLength
        header.metadataLength = UInt64(metadataBytes.count)
        header.leafOffset = header.metadataOffset + header.metadataLength
        header.leafLength = UInt64(leaves.count)
        header.tileDataOffset = header.leafOffset + header.leafLength
        header.tileDataLength = data.size
        header.addressedTiles = UInt64(addressed)
        header.tileEntries = UInt64(merged.count)
        header.tileContents = UInt64(contentCount)
        header.clustered = true
        header.internalCompression = .gzip
        header.tileCompression = tileCompression
        header.tileType = tileType
        let lastID = (merged.last?.tileID ?? 0) + UInt64((merged.last?.runLength ?? 1) - 1)
        let minZoom = PMTilesTileID.address(merged.first?.tileID ?? 0)?.z ?? 0
        header.minZoom = UInt8(clamping: minZoom)
        header.maxZoom = UInt8(clamping: PMTilesTileID.address(lastID)?.z ?? 0)
        let b = bounds ?? [box.minLon, box.minLat, box.maxLon, box.maxLat]
        func e7(_ degrees: Double) -> Int32 { Int32(clamping: Int64((degrees * 10_000_000).rounded())) }
        if b.count == 4, b.allSatisfy({ $0.isFinite && abs($0) <= 180 }) {
            (header.minLonE7, header.minLatE7, header.maxLonE7, header.maxLatE7) = (e7(b[0]), e7(b[1]), e7(b[2]), e7(b[3]))
        }
        let middle = center ?? TileCenter(lon: (b[safe: 0] + b[safe: 2]) / 2, lat: (b[safe: 1] + b[safe: 3]) / 2, zoom: minZoom)
        if abs(middle.lon) <= 180 && abs(middle.lat) <= 90 {
            (header.centerLonE7, header.centerLatE7, header.centerZoom) = (e7(middle.lon), e7(middle.lat), UInt8(clamping: max(0, middle.zoom)))
        }

        let output = try OutputFile(replacing: path)
        try output.write(header.bytes + root + metadataBytes + leaves)
        try data.copy(to: output)
        try output.commit()
        return Summary(addressedTiles: addressed, tileEntries: merged.count, tileContents: contentCount, leafDirectories: leafCount,
                       rootDirectoryBytes: root.count, fileBytes: output.size)
    }

    /// Writes `tiles` as an archive at `path` in one call.
    @discardableResult
    public static func write(_ tiles: some Sequence<(z: Int, x: Int, y: Int, bytes: [UInt8])>, to path: String, tileType: PMTilesTileType,
                             tileCompression: PMTilesCompression, metadata: JSONObject, bounds: [Double]? = nil,
                             center: TileCenter? = nil) throws(PMTilesError) -> Summary {
        let writer = try PMTilesWriter(path: path, tileType: tileType, tileCompression: tileCompression)
        for tile in tiles { try writer.add(z: tile.z, x: tile.x, y: tile.y, bytes: tile.bytes) }
        return try writer.finish(metadata: metadata, bounds: bounds, center: center)
    }

    /// The gzipped root directory and leaf directories for `entries`, and how many leaves: the
    /// root alone when it fits its budget, else leaves of 4,096 entries, doubled until the
    /// root of pointers to them fits.
    static func directories(_ entries: [PMTilesEntry], file: String) throws(PMTilesError) -> (root: [UInt8], leaves: [UInt8], count: Int) {
        func gzip(_ bytes: [UInt8]) throws(PMTilesError) -> [UInt8] {
            guard let out = Gzip.compress(bytes) else { throw PMTilesError(file: file, kind: .io, message: "cannot gzip a directory") }
            return out
        }
        let whole = try gzip(PMTilesDirectory.encode(entries))
        if whole.count <= rootBudget { return (whole, [], 0) }
        var leafSize = firstLeafSize
        while true {
            var leaves: [UInt8] = []
            var pointers: [PMTilesEntry] = []
            var start = 0
            while start < entries.count {
                let chunk = Array(entries[start..<min(start + leafSize, entries.count)])
                let leaf = try gzip(PMTilesDirectory.encode(chunk))
                pointers.append(PMTilesEntry(tileID: chunk[0].tileID, offset: UInt64(leaves.count), length: UInt32(clamping: leaf.count), runLength: 0))
                leaves += leaf
                start += leafSize
            }
            let root = try gzip(PMTilesDirectory.encode(pointers))
            if root.count <= rootBudget { return (root, leaves, pointers.count) }
            leafSize *= 2
        }
    }
}

extension Array where Element == Double {
    /// The element at `i`, or 0 past the end (the bounds of a center computed from none).
    fileprivate subscript(safe i: Int) -> Double { i < count ? self[i] : 0 }
}

/// A scratch file for tile bytes, unlinked as soon as it is open so that nothing is left
/// behind however the export ends; read back with pread.
final class ScratchFile {
    let descriptor: Int32
    let name: String
    private(set) var size: UInt64 = 0

    init(beside path: String) throws(PMTilesError) {
        name = (path as NSString).lastPathComponent
        let directory = (path as NSString).deletingLastPathComponent
        let scratch = (directory.isEmpty ? "." : directory) + "/.\(name).tiles-\(UUID().uuidString)"
        descriptor = open(scratch, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw PMTilesError(file: name, kind: .io, message: "cannot create a scratch file in \(directory.isEmpty ? "." : directory): \(String(cString: strerror(errno)))")
        }
        unlink(scratch)
    }

    deinit { close(descriptor) }

    func append(_ bytes: [UInt8]) throws(PMTilesError) {
        try writeAll(descriptor, bytes, name: name)
        size += UInt64(bytes.count)
    }

    func read(_ offset: UInt64, _ count: Int) throws(PMTilesError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = out.withUnsafeMutableBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return -1 }
                return pread(descriptor, base + done, count - done, off_t(offset) + off_t(done))
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw PMTilesError(file: name, kind: .io, message: "reading back the scratch file failed") }
            done += n
        }
        return out
    }

    /// Everything written, to `output`, a megabyte at a time.
    func copy(to output: OutputFile) throws(PMTilesError) {
        let chunk = 1 << 20
        var offset: UInt64 = 0
        while offset < size {
            let part = try read(offset, Int(min(UInt64(chunk), size - offset)))
            try output.write(part)
            offset += UInt64(part.count)
        }
    }
}

/// The archive being written: a hidden file beside `path`, renamed onto it by `commit`, so a
/// failed export leaves neither a half archive nor a damaged old one; removed if never committed.
final class OutputFile {
    let path: String
    let partial: String
    let descriptor: Int32
    private(set) var size: UInt64 = 0
    private var committed = false

    init(replacing path: String) throws(PMTilesError) {
        self.path = path
        let directory = (path as NSString).deletingLastPathComponent
        partial = (directory.isEmpty ? "." : directory) + "/.\((path as NSString).lastPathComponent).partial-\(UUID().uuidString)"
        descriptor = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw PMTilesError(file: (path as NSString).lastPathComponent, kind: .io, message: "cannot create the archive: \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        close(descriptor)
        if !committed { unlink(partial) }
    }

    func write(_ bytes: [UInt8]) throws(PMTilesError) {
        try writeAll(descriptor, bytes, name: (path as NSString).lastPathComponent)
        size += UInt64(bytes.count)
    }

    func commit() throws(PMTilesError) {
        guard fsync(descriptor) == 0, rename(partial, path) == 0 else {
            throw PMTilesError(file: (path as NSString).lastPathComponent, kind: .io, message: "cannot write the archive: \(String(cString: strerror(errno)))")
        }
        committed = true
    }
}

private func writeAll(_ descriptor: Int32, _ bytes: [UInt8], name: String) throws(PMTilesError) {
    var done = 0
    while done < bytes.count {
        let n = bytes.withUnsafeBytes { buffer -> Int in
            guard let base = buffer.baseAddress else { return -1 }
            return Glibc.write(descriptor, base + done, bytes.count - done)
        }
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { throw PMTilesError(file: name, kind: .io, message: "writing failed: \(String(cString: strerror(errno)))") }
        done += n
    }
}
