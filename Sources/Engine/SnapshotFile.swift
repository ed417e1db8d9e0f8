// The snapshot file: the large polygon layers of a store, with their indexes, in flat arrays
// that a load maps (mmap) and reads in place instead of reading and indexing every feature.
//
// Beside the store: `STORE.vltava-snapshot` (e.g. `city.gpkg.vltava-snapshot`). Built by the
// first load that finds it missing, stale or damaged (or by `vltava import --snapshot-file`),
// streaming each layer from the store (`build`, `LayerStream`: the layer is never held whole,
// only its indexes' input); written to a temporary name and renamed into place, so a reader sees the
// old file or the new one whole, and a snapshot keeps the file it mapped even if it is
// replaced meanwhile (the mapping holds the old inode). Never changed in place.
//
// Layout (native byte order, every section 64-byte aligned):
//   "VLTVSNAP" + version (UInt32) + padding, to byte 64
//   sections: per layer fids, areas, shape offsets and shapes, attribute offsets and records,
//             the R-tree's arrays and the PolygonIndex's arrays (coordinates, entries, bands,
//             grid cells, classified fine cells)
//   directory: JSON (Codable) naming every section's offset and length, the layers' counts,
//             bounds, warnings and attribute names, and the store's identity
//   trailer (40 bytes): directory offset, length and FNV-1a checksum, version, "VLTVSNAP"
// The coordinates are held once, by the polygon index (as Int32 where that is exact, see
// SpatialIndex/PolygonIndex.swift "Storage"): a feature's geometry is read back from its run
// and its shape (`GeometryShape`: the ring lengths), and only a geometry the run cannot give
// back (a ring of fewer than 2 positions, a polygon with no area) keeps its WKB. Version 1
// also held every geometry as WKB: 161 MB for W3's 200,000 polygons against the store's
// 81 MB; version 2 holds 70 MB. The store's own copy cannot be mapped: its WKB lies in SQLite
// pages, read through SQLite, and queries never touch SQLite.
//
// A truncated file has no trailer and is refused; a damaged directory fails its checksum; a
// section out of the file or of the wrong size, or an index naming anything outside its
// arrays, is refused (`PackedRTree(image:)`, `PolygonIndex(image:)`). These checks read the
// indexes (linear in the features) but not the coordinates, rows or fids: row offsets are
// checked per row as it is read, and damaged coordinates, rows or fids can give wrong
// answers, never a crash (rows decode with bounds checks).
//
// The store's identity: the store file's device, inode, size and modification time (ns), the
// SQLite header's file change counter, and the same for its `-wal` file plus the WAL header's
// checkpoint sequence and salts. Stores are in WAL mode: a commit appends frames to the WAL
// (size and time change), a checkpoint rewrites the main file (time changes), and a WAL reset
// changes its salts, so every write changes the identity. A checkpoint that changes no data
// also changes it: that costs a rebuild, never a wrong answer. The identity is taken before
// the store is read, so a write during a build makes the next load rebuild.
//
// Which layers: polygon layers of at least `Snapshot.mappedLayerMinimumFeatures` (10,000) features (the large ones,
// where load time and memory are), whose fids ascend (GeoPackage order: fid lookup is a binary
// search) and which hold no id-list column and no time series (those are read whole at load).
// Smaller layers load as before: a few thousand features read and index in milliseconds, and
// keeping them in Swift arrays keeps point, line and network code unchanged.

import Dispatch
import Foundation
import Geometry
import SpatialIndex
import Store
import Synchronization
#if canImport(Glibc)
import Glibc
import Support
#endif

enum SnapshotFile {
    static let magic: [UInt8] = Array("VLTVSNAP".utf8)
    static let version: UInt32 = 2
    static let alignment = 64
    static let trailerSize = 40

    static func path(forStore store: String) -> String { store + ".vltava-snapshot" }

    struct Section: Codable {
        var offset: Int
        var length: Int
    }

    struct IndexEntry: Codable {
        var numbers: [String: UInt64]
        var sections: [String: Section]
    }

    struct LayerEntry: Codable {
        var name: String
        var count: Int
        var bounds: [UInt64]
        var warnings: [String]
        var attributeNames: [String]
        var sections: [String: Section]
        var tree: IndexEntry
        var polygons: IndexEntry
    }

    struct Directory: Codable {
        var store: String
        var layers: [LayerEntry]
    }

    enum Problem: Error, CustomStringConvertible {
        case missing
        /// Built from another version of the store: rebuilt without a warning.
        case stale
        case rejected(String)
        var description: String {
            switch self {
            case .missing: "there is none"
            case .stale: "it was built from another version of the store"
            case .rejected(let reason): reason
            }
        }
    }

    // MARK: The store's identity

    /// The store's identity (see the header), or nil when the store cannot be examined.
    static func identity(ofStore path: String) -> String? {
        guard let main = fileIdentity(path, headerBytes: 24..<28) else { return nil }
        // The WAL header: magic, version, page size, checkpoint sequence, salts. A WAL shorter
        // than its 32-byte header holds no commit (a reader's open leaves an empty one).
        var walInfo = stat()
        let hasWAL = stat(path + "-wal", &walInfo) == 0 && walInfo.st_size >= 32
        let wal = hasWAL ? fileIdentity(path + "-wal", headerBytes: 12..<24) ?? "none" : "none"
        return "v\(version) \(main) wal \(wal)"
    }

    private static func fileIdentity(_ path: String, headerBytes: Range<Int>) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        var header = [UInt8](repeating: 0, count: headerBytes.count)
        let fd = open(path, O_RDONLY)
        if fd >= 0 {
            _ = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, headerBytes.count, off_t(headerBytes.lowerBound)) }
            close(fd)
        }
        let stamp = "\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
        return "\(info.st_dev):\(info.st_ino):\(info.st_size):\(stamp):\(header.map { String($0, radix: 16) }.joined(separator: "."))"
    }

    // MARK: Reading

    /// The layers in the file at `path`, read in place, if the file is whole and was built
    /// from the store whose identity is `identity`.
    static func read(_ path: String, identity: String) throws(Problem) -> [String: MappedLayer] {
        let file = try MappedFile(path: path)
        let directory = try file.directory()
        guard directory.store == identity else { throw .stale }
        var layers: [String: MappedLayer] = [:]
        for entry in directory.layers {
            do {
                layers[entry.name] = try MappedLayer(entry, in: file)
            } catch {
                throw .rejected("layer '\(entry.name)': \(error)")
            }
        }
        return layers
    }

    // MARK: Writing

    /// Whether a layer of the store may go into the file: a feature layer of at least
    /// `minimumFeatures` rows with no time series. Whether it does is known only once its
    /// features are read (`LayerStream`): polygons only, ascending fids, no id-list column.
    static func isCandidate(_ info: LayerInfo, minimumFeatures: Int) -> Bool {
        info.kind == .features && info.timeSeries == nil && info.featureCount >= max(minimumFeatures, 1)
    }

    /// Builds the file at `path` (through a temporary file renamed into place) from the
    /// candidate layers `infos` of `store`, streaming each layer's features once: geometries
    /// and attribute records go to scratch files as they are read, and only what the indexes
    /// need (fids, areas, boxes, the polygon index's coordinates) stays in memory. A layer that
    /// turns out not to qualify is left out; the file is written even if none does, so that
    /// the next load does not read them again to find that out. Returns the layers written.
    @discardableResult
    static func build(from store: GeoPackage, layers infos: [LayerInfo], identity: String, minimumFeatures: Int,
                      to path: String) throws(Problem) -> [String] {
        let temporary = "\(path).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        do {
            let writer = try FileWriter(path: temporary)
            var entries: [LayerEntry] = []
            try writer.write(magic + withUnsafeBytes(of: version) { Array($0) })
            for info in infos {
                let stream = try LayerStream(info: info, scratch: temporary)
                let problems: [FeatureProblem]
                let pipeline = StreamPipeline(stream)
                do {
                    defer { pipeline.finish() }
                    problems = try store.forEachFeature(of: info.name) { pipeline.take($0) }
                } catch {
                    throw Problem.rejected("cannot read layer '\(info.name)': \(error)")
                }
                if let entry = try stream.finish(problems: problems, minimumFeatures: minimumFeatures, into: writer) {
                    entries.append(entry)
                }
            }
            // Sorted keys: the same store gives the same file, byte for byte.
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let json = try encoder.encode(Directory(store: identity, layers: entries))
            let directoryOffset = writer.offset
            try writer.write(Array(json))
            var trailer: [UInt8] = []
            for value in [UInt64(directoryOffset), UInt64(json.count), fnv1a(json)] {
                withUnsafeBytes(of: value) { trailer += $0 }
            }
            withUnsafeBytes(of: version) { trailer += $0 }
            trailer += [0, 0, 0, 0] + magic
            try writer.write(trailer)
            try writer.close()
            guard rename(temporary, path) == 0 else { throw Problem.rejected("cannot rename it into place: \(String(cString: strerror(errno)))") }
            return entries.map(\.name)
        } catch let problem as Problem {
            unlink(temporary)
            throw problem
        } catch {
            unlink(temporary)
            throw .rejected("\(error)")
        }
    }

    /// FNV-1a, 64 bits: enough to tell a damaged directory from a whole one.
    static func fnv1a(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }
}

/// One layer's part of the snapshot file, built from its features in the store's fid order,
/// one at a time (`add`), holding what a loaded `Layer` would hold of it with the same rules
/// (Layer.swift): a feature with a position out of range (`Layer.refusal`) is left out with a warning, the
/// same areas, boxes, R-tree and polygon index, the same attribute names. Shapes
/// (`GeometryShape`) and attribute records go to two scratch files, unlinked at once, and are
/// copied into the snapshot file by `finish`, after the fids and areas, where a reader expects them.
final class LayerStream {
    let info: LayerInfo
    private var fids: [Int64] = []
    private var areas: [Double] = []
    private var boxes: [BBox] = []
    private var shapeOffsets: [UInt64] = [0]
    private var attributeOffsets: [UInt64] = [0]
    private var polygons = PolygonIndex.Builder()
    private let shapes: FileWriter
    private let attributes: FileWriter
    private var names: [String] = []
    private var nameIndex: [String: Int] = [:]
    private var record: [UInt8] = []
    private var leftOut: [String] = []
    /// Per JSON column: whether every value so far is a list of integers, and whether one is
    /// not empty (`Layer.idList`: such a column makes the layer stay in memory).
    private var idLists: [(name: String, allLists: Bool, anyIDs: Bool)]
    private var sawPolygon = false
    /// Why the layer does not go into the file, once known (reading stops there).
    private(set) var refusal: String?
    private var failure: SnapshotFile.Problem?

    init(info: LayerInfo, scratch: String) throws(SnapshotFile.Problem) {
        self.info = info
        shapes = try FileWriter(path: scratch + ".shapes", scratch: true)
        attributes = try FileWriter(path: scratch + ".records", scratch: true)
        for column in info.columns where nameIndex[column.name] == nil {
            nameIndex[column.name] = names.count
            names.append(column.name)
        }
        idLists = info.columns.filter(\.isJSON).map { ($0.name, true, false) }
        // Sized once from the store's count: no array is copied while it grows.
        let expected = max(info.featureCount, 0)
        fids.reserveCapacity(expected)
        areas.reserveCapacity(expected)
        boxes.reserveCapacity(expected)
        shapeOffsets.reserveCapacity(expected + 1)
        attributeOffsets.reserveCapacity(expected + 1)
        polygons.reserveCapacity(expected)
    }

    /// Takes the next feature; false when the layer turned out not to qualify (or a scratch
    /// file could not be written), and reading it can stop.
    func add(_ stored: StoredFeature) -> Bool {
        guard refusal == nil, failure == nil else { return false }
        let geometry = stored.feature.geometry
        if let refused = Layer.refusal(of: stored, in: info.name) {
            leftOut.append(refused)
            return true
        }
        switch geometry {
        case .polygon?, .multiPolygon?: sawPolygon = true
        case nil: break
        default: return refuse("it holds other geometries than polygons")
        }
        if let last = fids.last, stored.fid <= last { return refuse("its fids do not ascend") }
        for k in idLists.indices where idLists[k].allLists {
            guard let text = stored.feature.properties[idLists[k].name]?.stringValue else { continue }
            if let ids = JSON.integerList(text) {
                idLists[k].anyIDs = idLists[k].anyIDs || !ids.isEmpty
            } else {
                idLists[k].allLists = false
            }
        }
        let readable: Bool
        do {
            readable = try polygons.add(geometry ?? .collection([]))
        } catch {
            return refuse("it cannot be indexed: \(error)")
        }
        do throws(SnapshotFile.Problem) {
            if let geometry {
                guard GeometryShape.encode(geometry, readableFromRun: readable, into: &record) else {
                    return refuse("a geometry does not come back from WKB exactly")
                }
                try shapes.write(record)
            }
            guard AttributeRecord.encode(stored.feature.properties, names: &names, index: &nameIndex, into: &record) else {
                return refuse("a feature's attributes do not fit a record")
            }
            try attributes.write(record)
        } catch {
            failure = error
            return false
        }
        shapeOffsets.append(UInt64(shapes.offset))
        attributeOffsets.append(UInt64(attributes.offset))
        fids.append(stored.fid)
        areas.append(geometry.map(Measure.area) ?? 0)
        boxes.append(geometry?.bbox ?? .empty)
        return true
    }

    private func refuse(_ reason: String) -> Bool {
        refusal = reason
        return false
    }

    /// Writes the layer's sections to `writer`, if it qualifies, and returns its directory
    /// entry; nil when it does not. `problems`: the features the store could not read.
    func finish(problems: [FeatureProblem], minimumFeatures: Int, into writer: FileWriter) throws -> SnapshotFile.LayerEntry? {
        if let failure { throw failure }
        guard refusal == nil, sawPolygon, fids.count >= max(minimumFeatures, 1),
              !idLists.contains(where: { $0.allLists && $0.anyIDs }) else { return nil }
        var sections: [String: SnapshotFile.Section] = [:]
        // Each array is dropped once written: the peak is the polygon index's build.
        sections["fids"] = try fids.withUnsafeBytes { try writer.section([$0]) }
        sections["areas"] = try areas.withUnsafeBytes { try writer.section([$0]) }
        let count = fids.count
        (fids, areas) = ([], [])
        sections["shapes"] = try writer.section(copying: shapes)
        sections["shapeOffsets"] = try shapeOffsets.withUnsafeBytes { try writer.section([$0]) }
        sections["attributes"] = try writer.section(copying: attributes)
        sections["attributeOffsets"] = try attributeOffsets.withUnsafeBytes { try writer.section([$0]) }
        (shapeOffsets, attributeOffsets) = ([], [])

        // An image points into its index: the index is kept alive until its image is written.
        func index(_ image: IndexImage) throws -> SnapshotFile.IndexEntry {
            var placed: [String: SnapshotFile.Section] = [:]
            for name in image.sections.keys.sorted() { placed[name] = try writer.section(image.sections[name] ?? []) }
            return SnapshotFile.IndexEntry(numbers: image.numbers, sections: placed)
        }
        let bounds = boxes.reduce(into: BBox.empty) { $0.extend($1) }
        // The arrays above are gone: their pages go back before the grid's are taken.
        Memory.returnFreedPagesNow()
        // The R-tree builds on another thread while the polygon index builds here (its grid's
        // candidate lists are one thread's work; the tree took 0.54 s of a 1M first load on a
        // busy machine), at the price of the tree's input and arrays held meanwhile (the 1M
        // first load's peak: 430 MB, against 348 MB with the tree built first, in this branch).
        let treeBoxes = boxes
        boxes = []
        let rtree = OnAnotherThread { try PackedRTree(boxes: treeBoxes) }
        var builder = PolygonIndex.Builder()
        swap(&builder, &polygons)
        let built = builder.build()
        let tree = try withExtendedLifetime(try rtree.value()) { try index($0.image) }  // cannot fail: every box is finite (checked in `add`)
        let polygonIndex = try withExtendedLifetime(built) { try index(built.image) }
        let corners = [bounds.minLon, bounds.minLat, bounds.maxLon, bounds.maxLat].map(\.bitPattern)
        return SnapshotFile.LayerEntry(name: info.name, count: count, bounds: corners,
                                       warnings: problems.map { Layer.leftOut(info.name, $0.fid, $0.reason) } + leftOut,
                                       attributeNames: names, sections: sections, tree: tree, polygons: polygonIndex)
    }
}

/// Features handed from the thread that reads the store (SQLite, GeoPackage decoding) to one
/// that adds them to the layer's stream (checks, index input, records), in batches, so that
/// a first load reads and indexes on two cores. At most two batches wait for the adding
/// thread: the memory stays bounded by them, whatever the layer's size. Features are added
/// in the order read, by one thread at a time, so the file is the same as one thread's.
final class StreamPipeline: @unchecked Sendable {
    private let stream: LayerStream
    private let queue = DispatchQueue(label: "vltava.snapshot-stream")
    private let slots = DispatchSemaphore(value: 2)
    /// Set by the adding thread when the layer turned out not to qualify: reading stops.
    private let stopped = Atomic<Bool>(false)
    private var batch: [StoredFeature] = []
    static let batchSize = 512

    init(_ stream: LayerStream) {
        self.stream = stream
        batch.reserveCapacity(StreamPipeline.batchSize)
    }

    /// Takes the next feature read; false when reading can stop.
    func take(_ feature: StoredFeature) -> Bool {
        batch.append(feature)
        if batch.count >= StreamPipeline.batchSize { send() }
        return !stopped.load(ordering: .relaxed)
    }

    /// Sends the last batch and waits until every feature is added.
    func finish() {
        if !batch.isEmpty { send() }
        queue.sync {}
    }

    private func send() {
        let features = batch
        batch = []
        batch.reserveCapacity(StreamPipeline.batchSize)
        slots.wait()
        queue.async { [self] in
            defer { slots.signal() }
            guard !stopped.load(ordering: .relaxed) else { return }
            for feature in features where !stream.add(feature) {
                stopped.store(true, ordering: .relaxed)
                return
            }
        }
    }
}

/// A value computed on a thread of Dispatch's pool from now on, waited for by `value()`.
final class OnAnotherThread<Value: Sendable>: @unchecked Sendable {
    private struct NotComputed: Error {}
    /// Written once by the work, read after the group's wait (which orders the two).
    private var result: Result<Value, any Error> = .failure(NotComputed())
    private let group = DispatchGroup()

    init(_ work: @escaping @Sendable () throws -> Value) {
        DispatchQueue.global().async(group: group) { [self] in result = Result { try work() } }
    }

    func value() throws -> Value {
        group.wait()
        return try result.get()
    }
}

/// A snapshot file mapped read-only; unmapped when the last array on it is gone.
final class MappedFile: @unchecked Sendable {
    let base: UnsafeRawPointer
    let size: Int

    init(path: String) throws(SnapshotFile.Problem) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { throw .missing }
            throw .rejected("cannot open it: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .rejected("cannot examine it") }
        let size = Int(info.st_size)
        guard size >= SnapshotFile.alignment + SnapshotFile.trailerSize else { throw .rejected("it is cut short (\(size) bytes)") }
        guard let mapped = mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0), mapped != MAP_FAILED else {
            throw .rejected("cannot map it: \(String(cString: strerror(errno)))")
        }
        base = UnsafeRawPointer(mapped)
        self.size = size
    }

    deinit { munmap(UnsafeMutableRawPointer(mutating: base), size) }

    func bytes(_ offset: Int, _ length: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + offset, count: length)
    }

    private func uint64(at offset: Int) -> UInt64 { base.loadUnaligned(fromByteOffset: offset, as: UInt64.self) }

    /// The directory, after checking the magic at both ends, the version and the checksum.
    func directory() throws(SnapshotFile.Problem) -> SnapshotFile.Directory {
        let end = size - SnapshotFile.trailerSize
        guard Array(bytes(0, 8)) == SnapshotFile.magic, Array(bytes(size - 8, 8)) == SnapshotFile.magic else {
            throw .rejected("it is not a whole snapshot file (no marker at its start and end: cut short?)")
        }
        let version = base.loadUnaligned(fromByteOffset: end + 24, as: UInt32.self)
        guard version == SnapshotFile.version, base.loadUnaligned(fromByteOffset: 8, as: UInt32.self) == SnapshotFile.version else {
            throw .rejected("it has format version \(version), not \(SnapshotFile.version)")
        }
        let offset = uint64(at: end), length = uint64(at: end + 8)
        guard offset <= UInt64(end), length <= UInt64(end) - offset else { throw .rejected("its directory lies outside the file") }
        let json = bytes(Int(offset), Int(length))
        guard SnapshotFile.fnv1a(json) == uint64(at: end + 16) else { throw .rejected("its directory fails its checksum") }
        do {
            return try JSONDecoder().decode(SnapshotFile.Directory.self, from: Data(json))
        } catch {
            throw .rejected("its directory cannot be read: \(error)")
        }
    }

    /// A section's bytes, if it lies within the data part of the file and is aligned.
    func section(_ section: SnapshotFile.Section?, _ name: String) throws(SnapshotFile.Problem) -> UnsafeRawBufferPointer {
        guard let section else { throw .rejected("section '\(name)' is missing") }
        guard section.offset >= SnapshotFile.alignment, section.length >= 0, section.offset % 8 == 0,
              section.length <= size - SnapshotFile.trailerSize - section.offset else {
            throw .rejected("section '\(name)' lies outside the file")
        }
        return bytes(section.offset, section.length)
    }
}

/// One layer read in place from a snapshot file.
struct MappedLayer {
    let count: Int
    let bounds: BBox
    let warnings: [String]
    let fids: FlatArray<Int64>
    let areas: FlatArray<Double>
    let geometries: LayerGeometries
    let properties: LayerProperties
    let tree: PackedRTree
    let polygons: PolygonIndex

    init(_ entry: SnapshotFile.LayerEntry, in file: MappedFile) throws {
        let count = entry.count
        guard count >= 0, entry.bounds.count == 4 else { throw SnapshotFile.Problem.rejected("bad counts") }
        self.count = count
        bounds = BBox(minLon: Double(bitPattern: entry.bounds[0]), minLat: Double(bitPattern: entry.bounds[1]),
                      maxLon: Double(bitPattern: entry.bounds[2]), maxLat: Double(bitPattern: entry.bounds[3]))
        warnings = entry.warnings
        func array<T: BitwiseCopyable>(_ name: String, _ type: T.Type, count: Int) throws -> FlatArray<T> {
            guard let array = FlatArray<T>(bytes: try file.section(entry.sections[name], name), owner: file), array.count == count else {
                throw SnapshotFile.Problem.rejected("section '\(name)' has the wrong size")
            }
            return array
        }
        fids = try array("fids", Int64.self, count: count)
        areas = try array("areas", Double.self, count: count)
        // Not rechecked here: ascending fids (checked when written) only decide which row a fid
        // lookup finds, and row offsets are checked per row as they are read (`EncodedRows`).
        let shapeOffsets = try array("shapeOffsets", UInt64.self, count: count + 1)
        let shapes = try file.section(entry.sections["shapes"], "shapes")
        let attributeOffsets = try array("attributeOffsets", UInt64.self, count: count + 1)
        let records = try file.section(entry.sections["attributes"], "attributes")
        properties = LayerProperties(encoded: EncodedRows(offsets: attributeOffsets, bytes: records, owner: file), names: entry.attributeNames)
        func image(_ index: SnapshotFile.IndexEntry) throws -> IndexImage {
            var sections: [String: [UnsafeRawBufferPointer]] = [:]
            for (name, section) in index.sections { sections[name] = [try file.section(section, name)] }
            return IndexImage(numbers: index.numbers, sections: sections, owner: file)
        }
        tree = try PackedRTree(image: image(entry.tree), items: count)
        polygons = try PolygonIndex(image: image(entry.polygons), items: count)
        geometries = LayerGeometries(shapes: EncodedRows(offsets: shapeOffsets, bytes: shapes, owner: file), runs: polygons)
    }
}

/// Variable-length rows in a mapped file: row i is `bytes[offsets[i] ..< offsets[i + 1]]`.
/// The offsets are checked per row as it is read (a damaged pair reads as an empty row), not
/// all at load: that would touch every offset page of a million-feature layer at each load.
struct EncodedRows: @unchecked Sendable {
    let offsets: FlatArray<UInt64>
    let bytes: UnsafeRawBufferPointer
    let owner: AnyObject

    subscript(row: Int) -> UnsafeRawBufferPointer {
        let start = offsets[row], end = offsets[row + 1]
        guard start <= end, end <= UInt64(bytes.count) else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(rebasing: bytes[Int(start)..<Int(end)])
    }
}

/// Buffered sequential writes to a new file, with 64-byte aligned sections.
final class FileWriter {
    private let fd: Int32
    private var closed = false
    private var buffer: [UInt8] = []
    private(set) var offset = 0

    /// `scratch`: a file that is read back (`section(copying:)`) and then dropped: it is
    /// unlinked at once, so nothing is left behind whatever happens.
    init(path: String, scratch: Bool = false) throws(SnapshotFile.Problem) {
        fd = open(path, (scratch ? O_RDWR : O_WRONLY) | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .rejected("cannot create \(scratch ? "a scratch file" : "it"): \(String(cString: strerror(errno)))") }
        if scratch { unlink(path) }
        buffer.reserveCapacity(1 << 20)
    }

    deinit { if fd >= 0 && !closed { Glibc.close(fd) } }

    func write(_ bytes: some Collection<UInt8>) throws(SnapshotFile.Problem) {
        buffer.append(contentsOf: bytes)
        offset += bytes.count
        if buffer.count >= 1 << 20 { try flush() }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(SnapshotFile.Problem) {
        if bytes.count >= 1 << 20 {
            try flush()
            try writeAll(bytes)
            offset += bytes.count
        } else {
            buffer.append(contentsOf: bytes)
            offset += bytes.count
            if buffer.count >= 1 << 20 { try flush() }
        }
    }

    /// Pads to the next section boundary; returns the offset there.
    func align() throws(SnapshotFile.Problem) -> Int {
        let padding = (SnapshotFile.alignment - offset % SnapshotFile.alignment) % SnapshotFile.alignment
        try write([UInt8](repeating: 0, count: padding))
        return offset
    }

    /// Writes `pieces` back to back as one aligned section.
    func section(_ pieces: [UnsafeRawBufferPointer]) throws(SnapshotFile.Problem) -> SnapshotFile.Section {
        let start = try align()
        for piece in pieces { try write(piece) }
        return SnapshotFile.Section(offset: start, length: offset - start)
    }

    /// Writes everything written to the scratch file `scratch` as one aligned section.
    func section(copying scratch: FileWriter) throws(SnapshotFile.Problem) -> SnapshotFile.Section {
        try scratch.flush()
        let start = try align()
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        var done = 0
        while done < scratch.offset {
            let wanted = min(chunk.count, scratch.offset - done)
            let read = chunk.withUnsafeMutableBytes { pread(scratch.fd, $0.baseAddress, wanted, off_t(done)) }
            if read < 0 && errno == EINTR { continue }
            guard read > 0 else { throw .rejected("cannot read a scratch file back: \(String(cString: strerror(errno)))") }
            let failure = chunk.withUnsafeBytes { bytes -> SnapshotFile.Problem? in
                do throws(SnapshotFile.Problem) { try write(UnsafeRawBufferPointer(rebasing: bytes[0..<read])) } catch { return error }
                return nil
            }
            if let failure { throw failure }
            done += read
        }
        return SnapshotFile.Section(offset: start, length: offset - start)
    }

    func close() throws(SnapshotFile.Problem) {
        try flush()
        closed = true
        guard Glibc.close(fd) == 0 else { throw .rejected("cannot close it: \(String(cString: strerror(errno)))") }
    }

    private func flush() throws(SnapshotFile.Problem) {
        let failure = buffer.withUnsafeBytes { bytes -> SnapshotFile.Problem? in
            do throws(SnapshotFile.Problem) { try writeAll(bytes) } catch { return error }
            return nil
        }
        if let failure { throw failure }
        buffer.removeAll(keepingCapacity: true)
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) throws(SnapshotFile.Problem) {
        guard let base = bytes.baseAddress else { return }
        var done = 0
        while done < bytes.count {
            let written = Glibc.write(fd, base + done, bytes.count - done)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw .rejected("cannot write it: \(String(cString: strerror(errno)))") }
            done += written
        }
    }
}
