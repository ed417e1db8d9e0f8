import Foundation
@testable import Engine
import Geometry
import SpatialIndex
import Store
import TestSupport
import Testing

/// The snapshot file (Engine/SnapshotFile.swift): polygon layers mapped from it answer exactly
/// as loaded ones do, and a damaged, truncated or stale file is refused and rebuilt, never a
/// crash. The demo store's polygon layers are small, so these tests map every polygon layer
/// (`mappedLayerMinimumFeatures: 1`); the reference is the same store loaded into memory.
@Suite(.validatesStores, .serialized) struct SnapshotFileTests {
    static let mappedLayers = ["districts", "districts_sjtsk", "parking", "pavilions"]

    /// The demo store, built once (a debug build takes seconds; the server suites running
    /// beside these tests have wall-clock bounds).
    static let built: Result<String, any Error> = Result {
        let path = try Fixtures.temporaryDirectory("snapshot-file").appendingPathComponent("demo.gpkg").path
        try DemoFixtureStore.build(at: path)
        return path
    }

    /// A fresh copy of the demo store, with no snapshot file yet.
    static func store() throws -> String {
        let path = try Fixtures.temporaryDirectory("snapshot-file").appendingPathComponent("store.gpkg").path
        try FileManager.default.copyItem(atPath: try built.get(), toPath: path)
        return path
    }

    static func mappedSnapshot(_ path: String) throws -> Snapshot {
        try Snapshot.load(storePath: path, mappedLayerMinimumFeatures: 1)
    }

    /// Every feature of every mapped layer equals the loaded layer's: fid, geometry, attributes,
    /// area, fid lookup, and the layer's bounds and warnings.
    static func expectSameLayers(_ mapped: Snapshot, _ reference: Snapshot) throws {
        for name in mappedLayers {
            let m = try mapped.layer(name), r = try reference.layer(name)
            #expect(m.storage == .mapped && r.storage == .loaded, "\(name)")
            #expect(m.count == r.count && m.count > 0)
            // Taken from the file, not counted: the rows mapped plus those left out.
            #expect(m.info.featureCount == r.info.featureCount && m.info.featureCount == m.count + m.warnings.count)
            #expect(Array(m.fids) == Array(r.fids))
            #expect(Array(m.areas) == Array(r.areas))
            Self.expectSameRows(m, r, name)
            #expect(m.index(ofFID: (r.fids.last ?? 0) + 1) == nil && m.index(ofFID: -5) == nil)
        }
    }

    @Test func mappedLayersEqualLoadedOnesAndContainingEqualsGEOS() async throws {
        try await onAThreadOfItsOwn {
            let path = try Self.store()
            let mapped = try Self.mappedSnapshot(path)
            #expect(FileManager.default.fileExists(atPath: SnapshotFile.path(forStore: path)))
            #expect(mapped.warnings.filter { $0.contains("snapshot file") }.isEmpty)
            // Point and line layers, and the time series, stay as they were.
            #expect(try mapped.layer("stations").storage == .loaded && mapped.layer("paths").storage == .loaded)
            let reference = try DemoStore.get()
            try Self.expectSameLayers(mapped, reference)
            // A second load maps the file written by the first.
            try Self.expectSameLayers(try Self.mappedSnapshot(path), reference)

            // Containing, through the mapped index, against GEOS and against the loaded layer.
            for name in ["districts", "parking"] {
                let layer = try mapped.layer(name)
                let geometries = layer.geometries.map { $0 ?? .collection([]) }
                let reference = try GEOSPreparedLayer(context: try GEOSContext(), geometries: geometries)
                let boxes = geometries.map(\.bbox)
                var g = SplitMix(state: 21)
                var mismatches = 0, inside = 0
                for _ in 0..<5_000 {
                    let lon = Double.random(in: layer.bounds.minLon...layer.bounds.maxLon, using: &g)
                    let lat = Double.random(in: layer.bounds.minLat...layer.bounds.maxLat, using: &g)
                    var expected: [Int] = []
                    for i in boxes.indices where boxes[i].contains(lon: lon, lat: lat) {
                        if try reference.contains(i, lon: lon, lat: lat) { expected.append(i) }
                    }
                    let found = try mapped.containing(layer, at: Point(lon: lon, lat: lat)).map(\.index).sorted()
                    if found != expected { mismatches += 1 }
                    inside += expected.isEmpty ? 0 : 1
                }
                #expect(mismatches == 0, "\(name)")
                #expect(inside > 250)
            }
            // Nearest (R-tree and geometries read from the file) equals the loaded layer's.
            var g = SplitMix(state: 5)
            for _ in 0..<500 {
                let point = Point(lon: Double.random(in: 14.2...14.7, using: &g), lat: Double.random(in: 49.95...50.18, using: &g))
                let m = try mapped.nearest(mapped.layer("parking"), to: point, k: 3)
                let r = try reference.nearest(reference.layer("parking"), to: point, k: 3)
                #expect(m.map(\.fid) == r.map(\.fid) && m.map(\.metres) == r.map(\.metres))
            }
        }
    }

    /// Cut short at several lengths, or with bytes of its directory or its index arrays
    /// overwritten: refused with a warning naming the file, rebuilt, and the answers are right.
    @Test func aTruncatedOrDamagedFileIsRefusedAndRebuilt() async throws {
        try await onAThreadOfItsOwn {
            let path = try Self.store()
            let file = SnapshotFile.path(forStore: path)
            _ = try Self.mappedSnapshot(path)
            let whole = try Data(contentsOf: URL(fileURLWithPath: file))
            let directory = try #require(try MappedFile(path: file).directory())
            let cellItems = try #require(directory.layers.first { $0.name == "districts" }?.polygons.sections["cellItems"])
            let treeIndices = try #require(directory.layers.first { $0.name == "parking" }?.tree.sections["indices"])
            var damaged: [(String, Data)] = [
                ("empty", Data()),
                ("cut to 100 bytes", whole.prefix(100)),
                ("cut in half", whole.prefix(whole.count / 2)),
                ("cut one byte short", whole.prefix(whole.count - 1)),
            ]
            var flipped = whole
            flipped[whole.count - 100] ^= 0xFF  // inside the directory: its checksum fails
            damaged.append(("directory byte flipped", flipped))
            var badItems = whole
            for k in 0..<min(cellItems.length, 64) { badItems[cellItems.offset + k] = 0x7F }  // polygon 2,139,062,143
            damaged.append(("grid cells naming no polygon", badItems))
            // A file of the format before (version 1: every geometry also as WKB), as a store
            // built before this version has it: refused for its version and rebuilt.
            var older = whole
            for offset in [8, whole.count - SnapshotFile.trailerSize + 24] {
                older.replaceSubrange(offset..<(offset + 4), with: withUnsafeBytes(of: UInt32(1)) { Data($0) })
            }
            damaged.append(("format version 1", older))
            var badTree = whole
            for k in 0..<min(treeIndices.length, 64) { badTree[treeIndices.offset + k] = 0xFF }  // slot -1
            damaged.append(("tree slots out of range", badTree))

            let reference = try DemoStore.get()
            for (what, bytes) in damaged {
                try bytes.write(to: URL(fileURLWithPath: file))
                let snapshot = try Self.mappedSnapshot(path)
                let refused = snapshot.warnings.filter { $0.hasPrefix("snapshot file \(file) was refused and is rebuilt") }
                #expect(refused.count == 1, "\(what): \(snapshot.warnings)")
                if what == "format version 1" { #expect(refused.first?.hasSuffix("it has format version 1, not 2") == true, "\(refused)") }
                try Self.expectSameLayers(snapshot, reference)
                // The rebuilt file is whole again.
                #expect(try Data(contentsOf: URL(fileURLWithPath: file)).count == whole.count, "\(what)")
                #expect(try Self.mappedSnapshot(path).warnings.filter { $0.contains("snapshot file") }.isEmpty, "\(what)")
            }
        }
    }

    /// Bytes flipped anywhere: every load either refuses the file or maps it, and reading every
    /// feature and answering points never crashes (damaged coordinates may answer wrongly).
    @Test func randomDamageNeverCrashes() async throws {
        try await onAThreadOfItsOwn {
            let path = try Self.store()
            let file = SnapshotFile.path(forStore: path)
            _ = try Self.mappedSnapshot(path)
            let whole = try Data(contentsOf: URL(fileURLWithPath: file))
            var g = SplitMix(state: 99)
            var refusals = 0
            for _ in 0..<6 {
                var bytes = whole
                for _ in 0..<8 { bytes[Int.random(in: 0..<bytes.count, using: &g)] = UInt8.random(in: 0...255, using: &g) }
                try bytes.write(to: URL(fileURLWithPath: file))
                let snapshot = try Self.mappedSnapshot(path)
                refusals += snapshot.warnings.contains { $0.contains("was refused") } ? 1 : 0
                for name in Self.mappedLayers {
                    let layer = try snapshot.layer(name)
                    for i in 0..<layer.count { _ = (layer.geometries[i], layer.properties[i]) }
                    for _ in 0..<50 {
                        let point = Point(lon: Double.random(in: 14.2...14.7, using: &g), lat: Double.random(in: 49.95...50.18, using: &g))
                        _ = try snapshot.containing(layer, at: point)
                        _ = try? snapshot.nearest(layer, to: point, k: 2)
                    }
                }
            }
            #expect(refusals >= 0)
        }
    }

    /// A change to the store makes the file stale: the next load rebuilds it, with no warning,
    /// and maps the new data.
    @Test func aChangedStoreRebuildsTheFile() async throws {
        try await onAThreadOfItsOwn {
            let path = try Self.store()
            let file = SnapshotFile.path(forStore: path)
            let first = try Self.mappedSnapshot(path)
            let identity = try MappedFile(path: file).directory().store
            // Unchanged: the same file is mapped again.
            _ = try Self.mappedSnapshot(path)
            #expect(try MappedFile(path: file).directory().store == identity)
            // Another layer, written through the store as `vltava import` does.
            let store = try GeoPackage(path: path, mode: .readWrite)
            _ = try Importer.importFile(Fixtures.path("prague/districts.wgs84.geojson"), into: store,
                                        options: ImportOptions(layer: "districts_again"), formats: ImportFormat.builtIn)
            let second = try Self.mappedSnapshot(path)
            #expect(try MappedFile(path: file).directory().store != identity)
            #expect(second.warnings.filter { $0.contains("snapshot file") }.isEmpty)
            let again = try second.layer("districts_again"), original = try first.layer("districts")
            #expect(again.storage == .mapped && again.count == original.count)
            #expect((0..<again.count).allSatisfy { again.geometries[$0] == original.geometries[$0] })
        }
    }

    // MARK: The streamed build, on a layer over the 10,000-feature line

    /// Prague's 1,548 real parking zones (polygons and MultiPolygons), in `copies` copies each
    /// shifted 0.6° further east, plus the 57 real districts (large polygons: banded edges), with
    /// attributes of every type the store keeps.
    /// `idList`: also a JSON column of id lists, which keeps a layer in memory.
    /// `rounded`: the zones' coordinates rounded to 7 decimals (kept as Int32 in the file), the
    /// districts' left at full precision (Doubles).
    static func zonesGeoJSON(copies: Int, idList: Bool, rounded: Bool = false) throws -> String {
        func features(_ file: String) throws -> [[String: Any]] {
            let data = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path(file)))
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
            return try #require(object?["features"] as? [[String: Any]])
        }
        func shifted(_ coordinates: Any, by dx: Double) -> Any {
            guard let list = coordinates as? [Any] else { return coordinates }
            if let lon = list.first as? Double, list.count == 2, let lat = list.last as? Double {
                return rounded ? [((lon + dx) * 1e7).rounded() / 1e7, (lat * 1e7).rounded() / 1e7] : [lon + dx, lat]
            }
            return list.map { shifted($0, by: dx) }
        }
        let zones = try features("prague/parking-zones.wgs84.geojson")
        var out: [[String: Any]] = try features("prague/districts.wgs84.geojson").map { ["type": "Feature", "geometry": $0["geometry"] ?? NSNull()] }
        for copy in 0..<copies {
            for zone in zones {
                var geometry = zone["geometry"] as? [String: Any] ?? [:]
                geometry["coordinates"] = shifted(geometry["coordinates"] ?? [], by: 0.6 * Double(copy))
                out.append(["type": "Feature", "geometry": geometry, "properties": zone["properties"] ?? [:]])
            }
        }
        for i in out.indices {
            var properties = out[i]["properties"] as? [String: Any] ?? [:]
            properties["n"] = i
            properties["paid"] = i % 3 == 0
            properties["share"] = Double(i) / 7
            properties["note"] = i % 5 == 0 ? NSNull() : "zone \(i)" as Any
            properties["extra"] = ["copy": i / 1548, "tags": ["a", "b"]] as [String: Any]
            if idList { properties["ids"] = [i % 100, i % 7] }
            out[i]["properties"] = properties
        }
        let collection: [String: Any] = ["type": "FeatureCollection", "features": out]
        return String(decoding: try JSONSerialization.data(withJSONObject: collection), as: UTF8.self)
    }

    /// A new store holding the zones as layer `zones`.
    static func zonesStore(_ label: String, copies: Int, idList: Bool, rounded: Bool = false) throws -> String {
        let directory = try Fixtures.temporaryDirectory(label)
        let geojson = directory.appendingPathComponent("zones.geojson")
        try zonesGeoJSON(copies: copies, idList: idList, rounded: rounded).write(to: geojson, atomically: true, encoding: .utf8)
        let path = directory.appendingPathComponent("zones.gpkg").path
        _ = try Importer.importFile(geojson.path, into: GeoPackage(path: path, mode: .readWrite), options: ImportOptions(layer: "zones"))
        return path
    }

    /// Bytes of an index image's sections, by name, pieces joined.
    /// A mapped layer holds what the same layer loaded whole holds: bounds, family, warnings,
    /// and every row's geometry, attributes and fid lookup.
    static func expectSameRows(_ m: Layer, _ r: Layer, _ name: String) {
        #expect(m.bounds == r.bounds && m.family == r.family && m.warnings == r.warnings, "\(name)")
        var geometryMismatches = 0, propertyMismatches = 0, lookupMismatches = 0
        for i in 0..<r.count {
            if m.geometries[i] != r.geometries[i] { geometryMismatches += 1 }
            if m.properties[i] != r.properties[i] { propertyMismatches += 1 }
            if m.index(ofFID: r.fids[i]) != i { lookupMismatches += 1 }
        }
        #expect(geometryMismatches == 0 && propertyMismatches == 0 && lookupMismatches == 0, "\(name)")
    }

    static func sectionBytes(_ image: IndexImage) -> [String: [UInt8]] {
        image.sections.mapValues { pieces in pieces.flatMap { Array($0) } }
    }

    /// The file built by streaming the store holds what the layer loaded whole holds: the same
    /// fids, areas (bit for bit), geometries, attributes, bounds and warnings, and the same
    /// R-tree and polygon index byte for byte (the old build wrote those images of the loaded
    /// layer); and its answers equal GEOS's and the loaded layer's. `rounded`: with the zones at
    /// 7 decimals, their runs Int32 beside the districts' Doubles.
    @Test(arguments: [false, true]) func aStreamedFileHoldsWhatTheLoadedLayerHolds(rounded: Bool) async throws {
        try await onAThreadOfItsOwn {
            let path = try Self.zonesStore(rounded ? "snapshot-stream-rounded" : "snapshot-stream", copies: 7, idList: false, rounded: rounded)
            let snapshot = try Snapshot.load(storePath: path)  // the default line: 10,000
            #expect(snapshot.warnings.filter { $0.contains("snapshot file") }.isEmpty, "\(snapshot.warnings)")
            let m = try snapshot.layer("zones")
            let store = try GeoPackage(path: path)
            let read = try store.readFeatures(of: "zones")
            let r = try Layer(info: try store.layer("zones"), features: read.features, skipped: read.problems)
            #expect(m.storage == .mapped && r.storage == .loaded)
            #expect(r.count == 57 + 7 * 1548 && m.count == r.count)
            let tableRows = try store.rowCount(of: "zones")
            #expect(m.info.featureCount == r.count && tableRows == r.count)
            #expect(Array(m.fids) == Array(r.fids))
            #expect(m.areas.map(\.bitPattern) == r.areas.map(\.bitPattern))
            Self.expectSameRows(m, r, "zones")
            let (mt, rt) = (try #require(m.tree?.parts.first?.structure), try #require(r.tree?.parts.first?.structure))
            #expect(mt.image.numbers == rt.image.numbers && Self.sectionBytes(mt.image) == Self.sectionBytes(rt.image))
            let (mp, rp) = (try #require(m.polygons?.parts.first?.structure), try #require(r.polygons?.parts.first?.structure))
            #expect(mp.image.numbers == rp.image.numbers && Self.sectionBytes(mp.image) == Self.sectionBytes(rp.image))
            // The coordinates are held once: shapes of a few bytes, no WKB.
            let entry = try #require(try MappedFile(path: SnapshotFile.path(forStore: path)).directory().layers.first)
            #expect(entry.sections["geometries"] == nil && (entry.sections["shapes"]?.length ?? .max) < 5 * r.count)
            // Rounded, the zones' 7 × 13,675 run vertices take 8 bytes instead of 16 (the districts
            // keep their Doubles): 765,800 bytes less.
            #expect(entry.polygons.sections["coordinates"]?.length == (rounded ? 1_387_848 : 2_153_648))

            // Containing through the mapped layer, against GEOS over every candidate box, and
            // nearest against the same store loaded whole.
            // A copy of the store has no file of its own (another identity): loaded whole.
            let copy = path + ".copy.gpkg"
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            let loaded = try Snapshot.load(storePath: copy, mappedLayerMinimumFeatures: Int.max)
            #expect(try loaded.layer("zones").storage == .loaded)
            let geometries = r.geometries.map { $0 ?? .collection([]) }
            let geos = try GEOSPreparedLayer(context: try GEOSContext(), geometries: geometries)
            let boxes = geometries.map(\.bbox)
            var g = SplitMix(state: 2121)
            var mismatches = 0, inside = 0, nearestMismatches = 0
            for k in 0..<3_000 {
                // Within the first copy's extent, where zones are dense, most of the time.
                let lon = Double.random(in: k % 4 == 0 ? r.bounds.minLon...r.bounds.maxLon : 14.3...14.6, using: &g)
                let lat = Double.random(in: r.bounds.minLat...r.bounds.maxLat, using: &g)
                var expected: [Int] = []
                for i in boxes.indices where boxes[i].contains(lon: lon, lat: lat) {
                    if try geos.contains(i, lon: lon, lat: lat) { expected.append(i) }
                }
                let point = Point(lon: lon, lat: lat)
                if try snapshot.containing(m, at: point).map(\.index).sorted() != expected { mismatches += 1 }
                inside += expected.isEmpty ? 0 : 1
                if k % 6 == 0 {
                    let a = try snapshot.nearest(m, to: point, k: 3), b = try loaded.nearest(loaded.layer("zones"), to: point, k: 3)
                    if a.map(\.fid) != b.map(\.fid) || a.map(\.metres) != b.map(\.metres) { nearestMismatches += 1 }
                }
            }
            #expect(mismatches == 0 && nearestMismatches == 0)
            #expect(inside > 1_000)  // inside a district at least, most of the time
        }
    }

    /// A large layer that turns out not to qualify (an id-list column, found only at its last
    /// feature) stays in memory, and the file written without it is not rebuilt at the next
    /// load: the store is not streamed again to find that out.
    @Test func aLargeLayerThatDoesNotQualifyIsStreamedOnce() async throws {
        try await onAThreadOfItsOwn {
            let path = try Self.zonesStore("snapshot-stream-idlist", copies: 7, idList: true)
            let file = SnapshotFile.path(forStore: path)
            let first = try Snapshot.load(storePath: path)
            let layer = try first.layer("zones")
            #expect(layer.storage != .mapped && layer.idList?.column == "ids" && layer.count == 57 + 7 * 1548)
            #expect(first.warnings.filter { $0.contains("snapshot file") }.isEmpty)
            let directory = try MappedFile(path: file).directory()
            #expect(directory.layers.isEmpty)
            var before = stat(), after = stat()
            #expect(stat(file, &before) == 0)
            let second = try Snapshot.load(storePath: path)
            #expect(stat(file, &after) == 0 && after.st_ino == before.st_ino && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec)
            #expect(try second.layer("zones").storage == .loaded)
        }
    }
}
