// A PMTiles v3 reader: the header and the root directory are read and checked at open; a tile
// is found by its id in the root and at most three levels of leaf directories (the last few
// dozen leaves kept decoded), then read with pread, so any number of requests read at once
// without a lock on the file. Tiles come back as stored (gzip MVT stays gzip), as MBTiles'.
//
// Every offset and length comes from the file, so each is checked against its section and the
// file's size before anything is read or allocated: a damaged archive is a `PMTilesError`
// naming what is wrong, at open or at the tile that reaches the damage.

import Foundation
import Support
#if canImport(Glibc)
import Glibc
#endif

public final class PMTiles: TileArchive {
    public let path: String
    public var formatName: String { "PMTiles" }
    public let header: PMTilesHeader
    public let metadata: [String: String]
    public let bounds: [Double]?
    public let center: TileCenter?
    public let minZoom: Int?
    public let maxZoom: Int?
    public let warnings: [String]
    let file: ArchiveFile
    let root: [PMTilesEntry]
    /// The metadata's `vector_layers`, when it declares usable ones.
    let declaredLayers: [JSONValue]?
    private let leaves = Locked<(entries: [LeafKey: [PMTilesEntry]], order: [LeafKey])>(([:], []))
    private let scanned = Locked<TileSetContents?>(nil)
    private let scanning = Locked(())

    /// A directory (compressed or not) or the metadata past this is refused as absurd: the
    /// whole planet's root and leaves are a few MB each.
    static let maxSectionBytes = 64 << 20
    /// The root and up to three levels of leaves, as the spec's own readers go.
    static let maxDepth = 4
    /// Leaf directories kept decoded: a leaf covers about 4,096 tiles, so a map view's tiles
    /// come from one or two.
    static let leafCacheCount = 64
    /// `tileAddresses` refuses an archive of more tiles than this (240 MB of addresses).
    static let maxListedTiles = 10_000_000

    struct LeafKey: Hashable { var offset: UInt64, length: UInt32 }

    public init(path: String) throws(PMTilesError) {
        self.path = path
        let file = try ArchiveFile(path: path)
        self.file = file
        let name = file.name
        func fail(_ kind: PMTilesError.Kind, _ message: String) -> PMTilesError { PMTilesError(file: name, kind: kind, message: message) }
        let header = try PMTilesHeader(try file.read(0, Int(min(file.size, UInt64(PMTilesHeader.size))), what: "the header"), file: name)
        self.header = header
        // Each section inside the file: one starting past its end is nonsense, one ending past
        // it a file cut short (a download that stopped).
        for (offset, length, what) in [(header.rootOffset, header.rootLength, "root directory"), (header.metadataOffset, header.metadataLength, "metadata"),
                                       (header.leafOffset, header.leafLength, "leaf directories"), (header.tileDataOffset, header.tileDataLength, "tile data")] {
            let (end, overflow) = offset.addingReportingOverflow(length)
            guard length == 0 || offset < file.size else {
                throw fail(.outOfRange, "the \(what) starts at byte \(offset), past the end of the file (\(file.size) bytes)")
            }
            guard !overflow, end <= file.size else {
                throw fail(.truncated, "truncated: the \(what) ends at byte \(overflow ? "past 2^64" : String(end)), past the end of the file (\(file.size) bytes)")
            }
        }
        guard header.rootLength > 0 else { throw fail(.badDirectory, "the root directory is empty (length 0)") }
        guard header.rootLength <= UInt64(PMTiles.maxSectionBytes) else {
            throw fail(.outOfRange, "the root directory's length \(header.rootLength) is absurd (more than \(PMTiles.maxSectionBytes) bytes)")
        }
        guard header.metadataLength <= UInt64(PMTiles.maxSectionBytes) else {
            throw fail(.outOfRange, "the metadata's length \(header.metadataLength) is absurd (more than \(PMTiles.maxSectionBytes) bytes)")
        }
        // Stored tiles go out as they are, and only gzip (or none) is something a client and
        // the tile decoder here both take.
        guard header.tileCompression != .brotli && header.tileCompression != .zstd else {
            throw fail(.compression, "its tiles are \(header.tileCompression == .brotli ? "brotli" : "zstd")-compressed: only gzip or uncompressed tiles are served")
        }
        root = try PMTiles.directory(file, header, offset: header.rootOffset, length: header.rootLength, what: "root directory")

        // The JSON metadata: string values as they are, others as JSON text.
        var metadata: [String: String] = [:]
        var warnings: [String] = []
        var json = JSONValue.object(JSONObject())
        if header.metadataLength > 0 {
            let stored = try file.read(header.metadataOffset, Int(header.metadataLength), what: "the metadata")
            let bytes = try PMTiles.inflated(stored, header.internalCompression, file: name, what: "the metadata")
            do {
                json = try JSON.parse(bytes)
            } catch {
                throw fail(.metadata, "its metadata is not JSON: \(error)")
            }
        }
        if case .object(let object) = json {
            for (key, value) in object { metadata[key] = if case .string(let text) = value { text } else { JSON.serialize(value) } }
        } else {
            warnings.append("metadata ignored: it is JSON but not an object")
        }
        // vector_layers at the top (the spec), or in the `json` text of an MBTiles file's
        // metadata carried over by a converter (pmtiles convert does).
        declaredLayers = TileSetContents.declaredLayers(in: json)
            ?? TileSetContents.declaredLayers(in: metadata["json"].flatMap { try? JSON.parse($0) })

        // The header's zooms, bounds and center, checked by MBTiles' rules. All-zero bounds
        // or center are a writer that had none, not a set at 0°, 0°.
        let e7 = { (v: Int32) in Double(v) / 10_000_000 }
        let noBounds = header.minLonE7 == 0 && header.minLatE7 == 0 && header.maxLonE7 == 0 && header.maxLatE7 == 0
        let boundsText = noBounds ? nil : "\(e7(header.minLonE7)),\(e7(header.minLatE7)),\(e7(header.maxLonE7)),\(e7(header.maxLatE7))"
        let noCenter = header.centerLonE7 == 0 && header.centerLatE7 == 0 && header.centerZoom == 0
        let centerText = noCenter ? nil : "\(e7(header.centerLonE7)),\(e7(header.centerLatE7)),\(header.centerZoom)"
        let (bounds, boundsWarning) = MBTiles.checkedBounds(boundsText, source: "header")
        let (center, centerWarning) = MBTiles.checkedCenter(centerText, source: "header")
        let root = root
        let zooms = try MBTiles.checkedZooms(min: String(header.minZoom), max: String(header.maxZoom), source: "header") { () throws(PMTilesError) in
            try PMTiles.zoomRange(file, header, root)
        }
        self.bounds = bounds
        self.center = center
        (minZoom, maxZoom) = (zooms.min, zooms.max)
        self.warnings = warnings + [boundsWarning, centerWarning].compactMap { $0 } + zooms.warnings
        // What the header says wins over the metadata's own copies.
        metadata["format"] = header.tileType.formatName ?? metadata["format"]
        metadata["minzoom"] = minZoom.map(String.init) ?? metadata["minzoom"]
        metadata["maxzoom"] = maxZoom.map(String.init) ?? metadata["maxzoom"]
        if let boundsText, bounds != nil { metadata["bounds"] = boundsText }
        if let centerText, center != nil { metadata["center"] = centerText }
        self.metadata = metadata
    }

    // MARK: Tiles

    /// The stored bytes of tile z/x/y (XYZ addressing), or nil when the archive has no such tile.
    public func tile(z: Int, x: Int, y: Int) throws(PMTilesError) -> [UInt8]? {
        guard z >= 0 && z <= 30, let id = PMTilesTileID.id(z: z, x: x, y: y) else { return nil }
        guard let entry = try entry(for: id) else { return nil }
        return try bytes(of: entry, tile: "\(z)/\(x)/\(y)")
    }

    /// Every tile's address, in (z, x, y) order; tiles past z30 are left out, as `tile` never
    /// reads them.
    public func tileAddresses() throws(PMTilesError) -> [(z: Int, x: Int, y: Int)] {
        var out: [(z: Int, x: Int, y: Int)] = []
        var count: UInt64 = 0
        try forEachEntry { (entry) throws(PMTilesError) in
            count += UInt64(entry.runLength)
            guard count <= UInt64(PMTiles.maxListedTiles) else {
                throw PMTilesError(file: file.name, kind: .outOfRange, message: "more than \(PMTiles.maxListedTiles) tiles to list")
            }
            for i in 0..<UInt64(entry.runLength) {
                let (id, overflow) = entry.tileID.addingReportingOverflow(i)
                guard !overflow, let address = PMTilesTileID.address(id), address.z <= 30 else { continue }
                out.append(address)
            }
            return true
        }
        return out.sorted { ($0.z, $0.x, $0.y) < ($1.z, $1.x, $1.y) }
    }

    /// What the tiles hold: the metadata's vector_layers, else read from the first tiles.
    public var contents: TileSetContents {
        if let known = scanned.withLock({ $0 }) { return known }
        return scanning.withLock { _ in
            if let known = scanned.withLock({ $0 }) { return known }
            var sample: [(z: Int, x: Int, y: Int, bytes: [UInt8])] = []
            do {
                try forEachEntry { (entry) throws(PMTilesError) in
                    guard let (z, x, y) = PMTilesTileID.address(entry.tileID), z <= 30 else { return false }
                    sample.append((z, x, y, try bytes(of: entry, tile: "\(z)/\(x)/\(y)")))
                    return sample.count < TileSetContents.scanLimit
                }
            } catch {
                // A damaged tile among the first ones: described by those before it; serving
                // it reports the damage.
            }
            let found = TileSetContents.described(sample: sample, declared: declaredLayers, complete: sample.count < TileSetContents.scanLimit, maxZoom: maxZoom)
            scanned.withLock { $0 = found }
            return found
        }
    }

    // MARK: Directories

    /// The tile entry holding `id`, through the leaves, or nil.
    func entry(for id: UInt64) throws(PMTilesError) -> PMTilesEntry? {
        var entries = root
        for depth in 0..<PMTiles.maxDepth {
            guard let entry = PMTilesDirectory.search(entries, for: id) else { return nil }
            if entry.runLength > 0 { return entry }
            entries = try leaf(entry, depth: depth + 1)
        }
        throw PMTilesError(file: file.name, kind: .badDirectory, message: "leaf directories nested deeper than \(PMTiles.maxDepth - 1) levels")
    }

    /// Calls `body` with every tile entry in tile id order (leaves expanded) until it says stop.
    func forEachEntry(_ body: (PMTilesEntry) throws(PMTilesError) -> Bool) throws(PMTilesError) {
        func walk(_ entries: [PMTilesEntry], depth: Int) throws(PMTilesError) -> Bool {
            for entry in entries {
                if entry.runLength > 0 {
                    guard try body(entry) else { return false }
                } else {
                    guard depth + 1 < PMTiles.maxDepth else {
                        throw PMTilesError(file: file.name, kind: .badDirectory, message: "leaf directories nested deeper than \(PMTiles.maxDepth - 1) levels")
                    }
                    guard try walk(try leaf(entry, depth: depth + 1), depth: depth + 1) else { return false }
                }
            }
            return true
        }
        _ = try walk(root, depth: 0)
    }

    /// The leaf directory an entry points at, decoded (kept for the next request).
    func leaf(_ entry: PMTilesEntry, depth: Int) throws(PMTilesError) -> [PMTilesEntry] {
        let key = LeafKey(offset: entry.offset, length: entry.length)
        if let kept = leaves.withLock({ $0.entries[key] }) { return kept }
        let (end, overflow) = entry.offset.addingReportingOverflow(UInt64(entry.length))
        guard !overflow, end <= header.leafLength else {
            throw PMTilesError(file: file.name, kind: .outOfRange,
                               message: "a directory entry points at leaf bytes \(entry.offset)..<\(overflow ? "2^64" : String(end)), outside the leaf section (\(header.leafLength) bytes)")
        }
        let entries = try PMTiles.directory(file, header, offset: header.leafOffset + entry.offset, length: UInt64(entry.length), what: "leaf directory at level \(depth)")
        leaves.withLock { cache in
            guard cache.entries[key] == nil else { return }
            cache.entries[key] = entries
            cache.order.append(key)
            if cache.order.count > PMTiles.leafCacheCount { cache.entries[cache.order.removeFirst()] = nil }
        }
        return entries
    }

    /// The bytes of a tile entry, checked to lie in the tile data section.
    func bytes(of entry: PMTilesEntry, tile: String) throws(PMTilesError) -> [UInt8] {
        let (end, overflow) = entry.offset.addingReportingOverflow(UInt64(entry.length))
        guard !overflow, end <= header.tileDataLength else {
            throw PMTilesError(file: file.name, kind: .outOfRange,
                               message: "tile \(tile) points at bytes \(entry.offset)..<\(overflow ? "2^64" : String(end)), outside the tile data section (\(header.tileDataLength) bytes)")
        }
        return try file.read(header.tileDataOffset + entry.offset, Int(entry.length), what: "tile \(tile)")
    }

    /// A directory read, inflated and decoded; its range was checked by the caller.
    static func directory(_ file: ArchiveFile, _ header: PMTilesHeader, offset: UInt64, length: UInt64, what: String) throws(PMTilesError) -> [PMTilesEntry] {
        guard length <= UInt64(maxSectionBytes) else {
            throw PMTilesError(file: file.name, kind: .outOfRange, message: "the \(what)'s length \(length) is absurd (more than \(maxSectionBytes) bytes)")
        }
        let stored = try file.read(offset, Int(length), what: "the \(what)")
        return try PMTilesDirectory.decode(try inflated(stored, header.internalCompression, file: file.name, what: "the \(what)"), file: file.name, what: "the \(what)")
    }

    /// A directory or the metadata, inflated as the header's internal compression says.
    static func inflated(_ stored: [UInt8], _ compression: PMTilesCompression, file: String, what: String) throws(PMTilesError) -> [UInt8] {
        switch compression {
        case .none: return stored
        // Unknown: whatever the bytes are (gzip by its magic number), as the spec's readers do.
        case .gzip, .unknown:
            if compression == .unknown && !(stored.count >= 2 && stored[0] == 0x1F && stored[1] == 0x8B) { return stored }
            do {
                return try Decompression.inflate(stored, limit: maxSectionBytes)
            } catch {
                throw PMTilesError(file: file, kind: .compression, message: "\(what) does not inflate: \(error.message)")
            }
        case .brotli, .zstd:
            throw PMTilesError(file: file, kind: .compression, message: "its directories and metadata are \(compression == .brotli ? "brotli" : "zstd")-compressed: only gzip is read")
        }
    }

    /// The zooms of the first and the last tile, for a header whose own are unusable.
    static func zoomRange(_ file: ArchiveFile, _ header: PMTilesHeader, _ root: [PMTilesEntry]) throws(PMTilesError) -> ClosedRange<Int>? {
        func end(_ entries: [PMTilesEntry], last: Bool, depth: Int) throws(PMTilesError) -> UInt64? {
            guard let entry = last ? entries.last : entries.first, depth < maxDepth else { return nil }
            if entry.runLength > 0 { return last ? entry.tileID &+ UInt64(entry.runLength - 1) : entry.tileID }
            let (stop, overflow) = entry.offset.addingReportingOverflow(UInt64(entry.length))
            guard !overflow, stop <= header.leafLength else { return nil }
            return try end(try directory(file, header, offset: header.leafOffset + entry.offset, length: UInt64(entry.length), what: "leaf directory"),
                           last: last, depth: depth + 1)
        }
        guard let first = try end(root, last: false, depth: 0).flatMap(PMTilesTileID.address)?.z,
              let last = try end(root, last: true, depth: 0).flatMap(PMTilesTileID.address)?.z else { return nil }
        // In order unless the leaves disagree with their pointers (found by the pmtiles fuzz
        // target: the first leaf's tiles above the last's trapped building the range).
        return min(first, last, 30)...min(max(first, last), 30)
    }
}

/// A file read with pread: safe from any number of threads at once, and a read past its end
/// (a file cut short after it was opened) is an error, not a crash as with a mapping.
final class ArchiveFile: Sendable {
    let descriptor: Int32
    let size: UInt64
    let name: String

    init(path: String) throws(PMTilesError) {
        name = (path as NSString).lastPathComponent
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw PMTilesError(file: name, kind: .io, message: errno == ENOENT ? "no such file" : "cannot open: \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size >= 0 else {
            close(descriptor)
            throw PMTilesError(file: name, kind: .io, message: "not a regular file")
        }
        size = UInt64(info.st_size)
    }

    deinit { close(descriptor) }

    /// `count` bytes at `offset`.
    func read(_ offset: UInt64, _ count: Int, what: String) throws(PMTilesError) -> [UInt8] {
        guard count > 0 else { return [] }
        guard let start = Int64(exactly: offset) else {
            throw PMTilesError(file: name, kind: .outOfRange, message: "\(what) starts at byte \(offset), past any file")
        }
        var out = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = out.withUnsafeMutableBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return -1 }
                return pread(descriptor, base + done, count - done, off_t(start) + off_t(done))
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw PMTilesError(file: name, kind: n == 0 ? .truncated : .io,
                                   message: n == 0 ? "truncated: the file ends inside \(what)" : "reading \(what): \(String(cString: strerror(errno)))")
            }
            done += n
        }
        return out
    }
}
