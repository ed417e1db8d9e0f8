import Foundation
import Geometry
import Support
import TestSupport
import Testing
@testable import VectorTiles

/// PMTiles v3: Vltava's writer and reader against each other and against the format's reference
/// implementation (PyPI `pmtiles` 3.8, through Tests/Clients/pmtiles_reference.py), and damaged
/// archives, each refused with its own error.
@Suite struct PMTilesTests {
    static let worldCities = "mbtiles/mbtileserver-world_cities.mbtiles"

    /// The reference client with `arguments`; its JSON answer.
    static func reference(_ arguments: [String]) throws -> JSONValue {
        let script = Fixtures.root.appendingPathComponent("Tests/Clients/pmtiles_reference.py").path
        let run = try Fixtures.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script] + arguments)
        guard run.status == 0 else {
            throw ReferenceFailed(description: "pmtiles_reference.py \(arguments.joined(separator: " ")) exited \(run.status) (scripts/install-deps.sh --test installs pmtiles): \(run.stderr)")
        }
        return run.stdout.isEmpty ? .null : try JSON.parse(run.stdout)
    }

    struct ReferenceFailed: Error, CustomStringConvertible { var description: String }

    /// Every tile of an archive as the reference reads it, by "z/x/y".
    static func referenceTiles(_ read: JSONValue) -> [String: [UInt8]] {
        guard case .object(let object) = read, case .array(let tiles)? = object["tiles"] else { return [:] }
        var out: [String: [UInt8]] = [:]
        for tile in tiles {
            guard case .array(let t) = tile, t.count == 4, case .integer(let z) = t[0], case .integer(let x) = t[1], case .integer(let y) = t[2],
                  case .string(let hex) = t[3] else { continue }
            out["\(z)/\(x)/\(y)"] = hexBytes(hex)
        }
        return out
    }

    static func hexBytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8).map { $0 <= 0x39 ? $0 - 0x30 : $0 - 0x57 }
        return stride(from: 0, to: digits.count - 1, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
    }

    /// Every tile of a set, by "z/x/y".
    static func tiles(of set: any TileArchive) throws -> [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        for a in try set.tileAddresses() { out["\(a.z)/\(a.x)/\(a.y)"] = try set.tile(z: a.z, x: a.x, y: a.y) }
        return out
    }

    /// world_cities written by Vltava's writer, as `vltava tiles export` does: tiles in tile id
    /// order, its metadata, bounds and center.
    static func writeWorldCities(to path: String, reversed: Bool = false) throws -> PMTilesWriter.Summary {
        let source = try MBTiles(path: Fixtures.path(worldCities))
        var addresses = try source.tileAddresses().sorted { PMTilesTileID.id(z: $0.z, x: $0.x, y: $0.y) ?? 0 < PMTilesTileID.id(z: $1.z, x: $1.x, y: $1.y) ?? 0 }
        if reversed { addresses.reverse() }
        let writer = try PMTilesWriter(path: path, tileType: .mvt, tileCompression: .gzip)
        for a in addresses { try writer.add(z: a.z, x: a.x, y: a.y, bytes: try #require(try source.tile(z: a.z, x: a.x, y: a.y))) }
        var metadata = JSONObject()
        for key in ["name", "description", "version", "type", "format"] { metadata[key] = source.metadata[key].map(JSONValue.string) }
        metadata["vector_layers"] = .array(source.contents.vectorLayers)
        return try writer.finish(metadata: metadata, bounds: source.bounds, center: source.center)
    }

    // MARK: - Tile ids

    /// Tile ids as the reference's `zxy_to_tileid` gives them (pmtiles 3.8), and back.
    @Test func tileIDsMatchTheReference() {
        let cases: [((Int, Int, Int), UInt64)] = [
            ((0, 0, 0), 0), ((1, 1, 0), 4), ((2, 1, 3), 11), ((3, 3, 0), 26), ((6, 34, 22), 4839), ((12, 2200, 1400), 19_868_629),
            ((16, 35389, 22192), 5_086_524_846), ((20, 563_000, 351_000), 1_302_048_668_031),
            ((30, (1 << 30) - 1, 0), 1_537_228_672_809_129_300), ((30, 123_456_789, 987_654_321), 776_650_969_942_899_181),
            ((31, (1 << 31) - 1, (1 << 31) - 1), 4_611_686_018_427_387_903),
        ]
        for ((z, x, y), id) in cases {
            #expect(PMTilesTileID.id(z: z, x: x, y: y) == id, "\(z)/\(x)/\(y)")
            #expect(PMTilesTileID.address(id).map { [$0.z, $0.x, $0.y] } == [z, x, y], "\(id)")
        }
        // z0–6 take ids 0..<5461, each once, and each comes back to its address.
        var seen = Set<UInt64>()
        for z in 0...6 {
            for x in 0..<(1 << z) {
                for y in 0..<(1 << z) {
                    let id = PMTilesTileID.id(z: z, x: x, y: y) ?? .max
                    seen.insert(id)
                    #expect(PMTilesTileID.address(id).map { [$0.z, $0.x, $0.y] } == [z, x, y])
                }
            }
        }
        #expect(seen == Set(0..<5461))
        #expect(PMTilesTileID.id(z: 1, x: 2, y: 0) == nil && PMTilesTileID.id(z: 32, x: 0, y: 0) == nil && PMTilesTileID.id(z: 3, x: -1, y: 0) == nil)
        #expect(PMTilesTileID.address(6_148_914_691_236_517_205) == nil && PMTilesTileID.address(.max) == nil)
    }

    // MARK: - Round trips

    /// Vltava writes world_cities and reads it back: tile for tile the MBTiles file's bytes, the
    /// same zooms, bounds, center and TileJSON.
    @Test func roundTripEqualsTheMBTilesFile() throws {
        let path = try Fixtures.temporaryDirectory("pmtiles").appendingPathComponent("cities.pmtiles").path
        let summary = try Self.writeWorldCities(to: path)
        #expect(summary.addressedTiles == 196 && summary.tileEntries == 196 && summary.tileContents == 196 && summary.leafDirectories == 0)
        let source = try MBTiles(path: Fixtures.path(Self.worldCities))
        let archive = try PMTiles(path: path)
        #expect(try Self.tiles(of: archive) == Self.tiles(of: source))
        #expect(try archive.tileAddresses().map { [$0.z, $0.x, $0.y] } == source.tileAddresses().map { [$0.z, $0.x, $0.y] })
        #expect(archive.minZoom == 0 && archive.maxZoom == 6 && archive.warnings.isEmpty)
        #expect(archive.bounds == [-123.12359, -37.818085, 174.763027, 59.352706])
        #expect(archive.center == TileCenter(lon: -75.9375, lat: 38.788894, zoom: 6))
        #expect(archive.header.tileType == .mvt && archive.header.tileCompression == .gzip && archive.header.clustered)
        #expect(archive.metadata["format"] == "pbf" && archive.formatName == "PMTiles")
        #expect(archive.tileJSON(tilesURL: "x") == source.tileJSON(tilesURL: "x"))
        #expect(try archive.tile(z: 6, x: 0, y: 0) == nil && archive.tile(z: 7, x: 0, y: 0) == nil && archive.tile(z: 31, x: 0, y: 0) == nil)
        let vienna = try archive.features(z: 6, x: 34, y: 22)?.first { $0.feature.properties["name"] == .text("Vienna") }
        #expect(vienna?.feature.geometry == .point(Point(lon: 16.3641357421875, lat: 48.20271028869972)))
        // Tiles given in the reverse order are put in tile id order: the same archive, byte for byte.
        let reversed = path.replacingOccurrences(of: "cities.pmtiles", with: "reversed.pmtiles")
        _ = try Self.writeWorldCities(to: reversed, reversed: true)
        #expect(FileManager.default.contents(atPath: reversed) == FileManager.default.contents(atPath: path))
    }

    /// The reference reads Vltava's world_cities archive: tile for tile the MBTiles file's
    /// bytes, and the header and metadata it was given.
    @Test func theReferenceReadsVltavasArchive() throws {
        let path = try Fixtures.temporaryDirectory("pmtiles").appendingPathComponent("cities.pmtiles").path
        _ = try Self.writeWorldCities(to: path)
        let read = try Self.reference(["read", path])
        #expect(Self.referenceTiles(read) == (try Self.tiles(of: MBTiles(path: Fixtures.path(Self.worldCities)))))
        guard case .object(let header)? = read["header"] else { Issue.record("no header"); return }
        let expected: [String: Int64] = [
            "version": 3, "root_offset": 127, "tile_compression": 2, "internal_compression": 2, "tile_type": 1, "min_zoom": 0, "max_zoom": 6,
            "min_lon_e7": -1_231_235_900, "min_lat_e7": -378_180_850, "max_lon_e7": 1_747_630_270, "max_lat_e7": 593_527_060,
            "center_zoom": 6, "center_lon_e7": -759_375_000, "center_lat_e7": 387_888_940,
            "addressed_tiles_count": 196, "tile_entries_count": 196, "tile_contents_count": 196, "tile_data_length": 18861,
        ]
        for (key, value) in expected { #expect(header[key] == .integer(value), "\(key)") }
        #expect(header["clustered"] == .bool(true))
        #expect(read["metadata"]?["name"] == .string("Major cities from Natural Earth data"))
        #expect(read["metadata"]?["vector_layers"]?[0]?["id"] == .string("cities"))
    }

    /// Vltava reads what the reference's own MBTiles conversion writes from the fixture: tile
    /// for tile the MBTiles file, with the header's zooms, bounds and center, and the
    /// vector_layers the conversion keeps in the MBTiles `json` text.
    @Test func vltavaReadsTheReferencesArchive() throws {
        let path = try Fixtures.temporaryDirectory("pmtiles").appendingPathComponent("converted.pmtiles").path
        _ = try Self.reference(["convert", Fixtures.path(Self.worldCities), path])
        let source = try MBTiles(path: Fixtures.path(Self.worldCities))
        let archive = try PMTiles(path: path)
        #expect(try Self.tiles(of: archive) == Self.tiles(of: source))
        #expect(try archive.tileAddresses().count == 196)
        #expect(archive.minZoom == 0 && archive.maxZoom == 6 && archive.warnings.isEmpty)
        #expect(archive.bounds == source.bounds && archive.center == source.center)
        #expect(archive.contents.vectorLayers == source.contents.vectorLayers && !archive.contents.vectorLayers.isEmpty)
        #expect(archive.tileJSON(tilesURL: "x") == source.tileJSON(tilesURL: "x"))
    }

    /// 87,381 tiles (all of z0–8), the west half of z8 one "ocean" tile: one entry with a run
    /// of 32,768 (the Hilbert curve covers that half first), the rest distinct. The root alone
    /// would pass 16 KiB, so there are leaves. Read back by Vltava from eight threads at once
    /// and by the reference, tile for tile.
    @Test func leavesRunsAndDuplicates() throws {
        let path = try Fixtures.temporaryDirectory("pmtiles").appendingPathComponent("pyramid.pmtiles").path
        let ocean = Array("ocean".utf8)
        @Sendable func bytes(_ z: Int, _ x: Int, _ y: Int) -> [UInt8] {
            if z == 8 && x < 128 { return ocean }
            // Lengths that look random (a multiplicative hash's top byte), so that the directory
            // does not compress into the root.
            let padding = Int((UInt64(z << 40 | x << 20 | y) &* 0x9E37_79B9_7F4A_7C15) >> 56)
            return Array("tile \(z)/\(x)/\(y)".utf8) + [UInt8](repeating: 0x2E, count: padding)
        }
        var all: [(z: Int, x: Int, y: Int)] = []
        for z in 0...8 { for x in 0..<(1 << z) { for y in 0..<(1 << z) { all.append((z, x, y)) } } }
        let addresses = all
        let summary = try PMTilesWriter.write(addresses.lazy.map { ($0.z, $0.x, $0.y, bytes($0.z, $0.x, $0.y)) }, to: path,
                                              tileType: .unknown, tileCompression: .none, metadata: JSONObject([("name", .string("pyramid"))]))
        #expect(summary.addressedTiles == 87_381 && summary.tileContents == 21_845 + 32_768 + 1 && summary.tileEntries == 21_845 + 32_768 + 1)
        #expect(summary.leafDirectories > 1 && summary.rootDirectoryBytes <= 16_384 - 127)

        let archive = try PMTiles(path: path)
        #expect(archive.header.leafLength > 0 && archive.minZoom == 0 && archive.maxZoom == 8)
        #expect(archive.bounds == [-180, -85.0511288, 180, 85.0511288])
        let mismatches = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 8) { part in
            for a in addresses[(part * addresses.count / 8)..<((part + 1) * addresses.count / 8)] where (try? archive.tile(z: a.z, x: a.x, y: a.y)) != bytes(a.z, a.x, a.y) {
                mismatches.withLock { $0 += 1 }
            }
        }
        #expect(mismatches.withLock { $0 } == 0)
        #expect(try archive.tileAddresses().count == 87_381)

        let reference = Self.referenceTiles(try Self.reference(["read", path]))
        #expect(reference.count == 87_381)
        #expect(addresses.allSatisfy { reference["\($0.z)/\($0.x)/\($0.y)"] == bytes($0.z, $0.x, $0.y) })
    }

    /// What the writer refuses, each with its reason.
    @Test func theWriterRefusesWhatItCannotStore() throws {
        let directory = try Fixtures.temporaryDirectory("pmtiles")
        func refusal(_ body: (PMTilesWriter) throws -> Void) throws -> String? {
            let writer = try PMTilesWriter(path: directory.appendingPathComponent("x.pmtiles").path, tileType: .mvt, tileCompression: .gzip)
            do {
                try body(writer)
                try writer.finish(metadata: JSONObject())
                return nil
            } catch let error as PMTilesError {
                #expect(error.kind == .invalidInput)
                return error.message
            }
        }
        let gzipped = try #require(TileCompressor.gzip([0x1A, 0x00]))
        #expect(try refusal { try $0.add(z: 0, x: 0, y: 0, bytes: []) } == "tile 0/0/0: 0 bytes: a PMTiles archive cannot store an empty tile (leave it out)")
        #expect(try refusal { try $0.add(z: 0, x: 0, y: 0, bytes: [0x1A, 0x00]) } == "tile 0/0/0: not gzip-compressed, but the archive's tiles are declared gzip")
        #expect(try refusal { try $0.add(z: 2, x: 4, y: 0, bytes: gzipped) } == "tile 2/4/0: not a tile address (z 0…30, x and y below 2^z)")
        #expect(try refusal { _ in } == "no tiles: a PMTiles archive holds at least one")
        #expect(try refusal { w in
            for (x, y) in [(1, 1), (0, 0), (1, 1)] { try w.add(z: 1, x: x, y: y, bytes: gzipped) }
        } == "tile 1/1/1 was added twice")
        // Nothing is left behind by a refused archive.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    // MARK: - Damaged archives

    /// An archive laid out as the writer does, from raw sections (directories uncompressed
    /// unless `compression` says otherwise), with the header edited last.
    static func rawArchive(root: [UInt8], leaves: [UInt8] = [], tiles: [UInt8] = Array("tile".utf8), metadata: [UInt8] = Array("{}".utf8),
                           compression: PMTilesCompression = .none, edit: (inout PMTilesHeader) -> Void = { _ in }) throws -> String {
        var header = PMTilesHeader()
        header.internalCompression = compression
        header.tileCompression = .none
        header.minZoom = 0
        header.maxZoom = 0
        header.rootOffset = 127
        header.rootLength = UInt64(root.count)
        header.metadataOffset = header.rootOffset + header.rootLength
        header.metadataLength = UInt64(metadata.count)
        header.leafOffset = header.metadataOffset + header.metadataLength
        header.leafLength = UInt64(leaves.count)
        header.tileDataOffset = header.leafOffset + header.leafLength
        header.tileDataLength = UInt64(tiles.count)
        edit(&header)
        let path = try Fixtures.temporaryDirectory("pmtiles-damaged").appendingPathComponent("damaged.pmtiles").path
        try Data(header.bytes + root + metadata + leaves + tiles).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The error opening `path` (or, when it opens, reading tile 0/0/0) throws.
    static func damage(_ path: String) -> PMTilesError? {
        do {
            let archive = try PMTiles(path: path)
            _ = try archive.tile(z: 0, x: 0, y: 0)
            // Listing every tile and describing the set meet the same damage without trapping.
            _ = try? archive.tileAddresses()
            _ = archive.contents
            return nil
        } catch {
            // The reader throws only PMTilesError (typed throws).
            return error
        }
    }

    static func directory(_ entries: [PMTilesEntry]) -> [UInt8] { PMTilesDirectory.encode(entries) }

    @Test func aWellFormedRawArchiveReads() throws {
        let path = try Self.rawArchive(root: Self.directory([PMTilesEntry(tileID: 0, offset: 0, length: 4, runLength: 1)]))
        #expect(Self.damage(path) == nil)
        #expect(try PMTiles(path: path).tile(z: 0, x: 0, y: 0) == Array("tile".utf8))
    }

    @Test func truncatedOrForeignFilesAreRefused() throws {
        let good = try Self.rawArchive(root: Self.directory([PMTilesEntry(tileID: 0, offset: 0, length: 4, runLength: 1)]))
        let bytes = try #require(FileManager.default.contents(atPath: good))
        func variant(_ data: Data) throws -> String {
            let path = try Fixtures.temporaryDirectory("pmtiles-damaged").appendingPathComponent("v.pmtiles").path
            try data.write(to: URL(fileURLWithPath: path))
            return path
        }
        let cases: [(Data, PMTilesError.Kind, String)] = [
            (bytes.prefix(100), .truncated, "truncated header: 100 of its 127 bytes"),
            (Data(), .truncated, "truncated: 0 bytes, shorter than a PMTiles header (127)"),
            (Data("PMTilez".utf8) + bytes.dropFirst(7), .badMagic, "not a PMTiles archive: it does not begin with 'PMTiles'"),
            (Data("SQLite format 3\u{0}".utf8) + bytes.dropFirst(16), .badMagic, "not a PMTiles archive: it does not begin with 'PMTiles'"),
            (Data([0x50, 0x4D, 2, 0]) + bytes.dropFirst(4), .unsupportedVersion, "a PMTiles version 2 archive: only version 3 is read (convert it with the pmtiles tool)"),
            (bytes.prefix(7) + Data([4]) + bytes.dropFirst(8), .unsupportedVersion, "PMTiles version 4: only version 3 is read"),
            // Cut inside the tile data: a download that stopped.
            (bytes.dropLast(2), .truncated, "truncated: the tile data ends at byte \(bytes.count), past the end of the file (\(bytes.count - 2) bytes)"),
        ]
        for (data, kind, message) in cases {
            let error = Self.damage(try variant(data))
            #expect(error?.kind == kind && error?.message == message, "\(message): \(String(describing: error))")
        }
        #expect(Self.damage("/no/such.pmtiles")?.description == "such.pmtiles: no such file")
        #expect(Self.damage(try Fixtures.temporaryDirectory("pmtiles-damaged").path)?.message == "not a regular file")
    }

    @Test func offsetsOutOfRangeAreRefused() throws {
        let tile = [PMTilesEntry(tileID: 0, offset: 0, length: 4, runLength: 1)]
        // A section starting past the end of the file.
        var error = Self.damage(try Self.rawArchive(root: Self.directory(tile)) { $0.rootOffset = 1 << 40 })
        #expect(error?.kind == .outOfRange && error?.message.hasPrefix("the root directory starts at byte 1099511627776, past the end of the file") == true)
        // Offset + length past 2^64.
        error = Self.damage(try Self.rawArchive(root: Self.directory(tile)) { $0.leafOffset = 130; $0.leafLength = .max })
        #expect(error?.kind == .truncated && error?.message == "truncated: the leaf directories ends at byte past 2^64, past the end of the file (138 bytes)")
        // A tile entry past the tile data section.
        error = Self.damage(try Self.rawArchive(root: Self.directory([PMTilesEntry(tileID: 0, offset: 2, length: 4, runLength: 1)])))
        #expect(error?.kind == .outOfRange && error?.message == "tile 0/0/0 points at bytes 2..<6, outside the tile data section (4 bytes)")
        // A leaf pointer past the leaf section.
        let leaf = Self.directory(tile)
        error = Self.damage(try Self.rawArchive(root: Self.directory([PMTilesEntry(tileID: 0, offset: 1000, length: 10, runLength: 0)]), leaves: leaf))
        #expect(error?.kind == .outOfRange && error?.message == "a directory entry points at leaf bytes 1000..<1010, outside the leaf section (\(leaf.count) bytes)")
        // A leaf that points at itself: refused at the fourth level, not followed forever.
        let loop = Self.directory([PMTilesEntry(tileID: 0, offset: 0, length: 9, runLength: 0)])
        let padded = loop + [UInt8](repeating: 0, count: 9 - loop.count)
        error = Self.damage(try Self.rawArchive(root: loop, leaves: padded))
        #expect(error?.kind == .badDirectory && error?.message == "leaf directories nested deeper than 3 levels")
    }

    @Test func badDirectoriesAreRefused() throws {
        let cases: [([UInt8], PMTilesError.Kind, String)] = [
            // One entry whose tile id's varint never ends.
            ([0x01, 0x80, 0x80, 0x80, 0x80], .badVarint, "the root directory: a varint runs past the end of the directory (byte 5 of 5)"),
            // A tile id varint of 70 bits.
            ([0x01] + [UInt8](repeating: 0xFF, count: 9) + [0x7F, 0x01, 0x01, 0x01], .badVarint, "the root directory: a varint longer than 64 bits at byte 10"),
            ([0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0, 0, 0, 0], .outOfRange, "the root directory: 4294967295 entries cannot fit in its 9 bytes"),
            ([0x00], .badDirectory, "the root directory: a directory with no entries"),
            ([0x01, 0x00, 0x01, 0x04, 0x00], .badDirectory, "the root directory: the first entry's offset is 0 (\"after the previous entry\")"),
            ([0x01, 0x00, 0x01, 0x00, 0x01], .badDirectory, "the root directory: entry 0 has length 0"),
            ([0x02, 0x05, 0x00, 0x01, 0x01, 0x04, 0x04, 0x01, 0x00], .badDirectory, "the root directory: entry 1 repeats the tile id of the entry before it"),
            ([0x01, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0x04, 0x01], .outOfRange, "the root directory: entry 0 repeats 34359738367 times (more than 2^32 - 1)"),
        ]
        for (root, kind, message) in cases {
            let error = Self.damage(try Self.rawArchive(root: root))
            #expect(error?.kind == kind && error?.message == message, "\(message): \(String(describing: error))")
        }
        let empty = Self.damage(try Self.rawArchive(root: []))
        #expect(empty?.kind == .badDirectory && empty?.message == "the root directory is empty (length 0)")
    }

    /// Found by the pmtiles fuzz target: with the header's zooms unusable, they are taken from
    /// the first and the last tile, and leaves that disagree with their pointers (the first
    /// leaf's tile at z2, the last's at z1) made the range 2…1, a trap. Now 1…2.
    @Test func leavesOutOfOrderGiveAZoomRangeNotATrap() throws {
        let first = Self.directory([PMTilesEntry(tileID: 5, offset: 0, length: 4, runLength: 1)])
        let last = Self.directory([PMTilesEntry(tileID: 1, offset: 0, length: 4, runLength: 1)])
        let root = Self.directory([PMTilesEntry(tileID: 0, offset: 0, length: UInt32(first.count), runLength: 0),
                                   PMTilesEntry(tileID: 10, offset: UInt64(first.count), length: UInt32(last.count), runLength: 0)])
        let archive = try PMTiles(path: try Self.rawArchive(root: root, leaves: first + last) { $0.minZoom = 200 })
        #expect(archive.minZoom == 1 && archive.maxZoom == 2)
        #expect(archive.warnings == ["header minzoom '200' ignored: it is not a whole number of 0…30; the tiles' zooms 1…2 are used"])
    }

    @Test func badCompressionAndMetadataAreRefused() throws {
        let root = Self.directory([PMTilesEntry(tileID: 0, offset: 0, length: 4, runLength: 1)])
        var error = Self.damage(try Self.rawArchive(root: root, compression: .brotli))
        #expect(error?.kind == .compression && error?.message == "its directories and metadata are brotli-compressed: only gzip is read")
        error = Self.damage(try Self.rawArchive(root: [0x1F, 0x8B, 0x08, 0x00, 0x01], compression: .gzip))
        #expect(error?.kind == .compression && error?.message.hasPrefix("the root directory does not inflate: ") == true)
        error = Self.damage(try Self.rawArchive(root: root) { $0.tileCompression = .zstd })
        #expect(error?.kind == .compression && error?.message == "its tiles are zstd-compressed: only gzip or uncompressed tiles are served")
        error = Self.damage(try Self.rawArchive(root: root) { $0.internalCompression = PMTilesCompression(rawValue: 4) ?? .unknown; $0.tileType = .mvt })
        #expect(error?.kind == .compression)
        error = Self.damage(try Self.rawArchive(root: root, metadata: Array("{\"name\": ".utf8)))
        #expect(error?.kind == .metadata && error?.message.hasPrefix("its metadata is not JSON") == true)
        // Unusable header values are set aside with a warning, as MBTiles metadata is.
        let odd = try PMTiles(path: try Self.rawArchive(root: root) { $0.minZoom = 40; $0.maxLatE7 = 1_000_000_000; $0.minLonE7 = 1 })
        #expect(odd.warnings == ["header bounds '1e-07,0.0,0.0,100.0' ignored: the latitude 100 is outside -90…90",
                                 "header minzoom '40' ignored: it is not a whole number of 0…30; the tiles' zooms 0…0 are used"])
        #expect(odd.minZoom == 0 && odd.bounds == nil)
    }
}
