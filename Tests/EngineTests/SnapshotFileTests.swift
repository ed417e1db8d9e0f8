import Foundation
@testable import Engine
import Geometry
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
            #expect(m.isMapped && !r.isMapped, "\(name)")
            #expect(m.count == r.count && m.count > 0)
            #expect(Array(m.fids) == Array(r.fids))
            #expect(Array(m.areas) == Array(r.areas))
            #expect(m.bounds == r.bounds && m.family == r.family && m.warnings == r.warnings)
            var geometryMismatches = 0, propertyMismatches = 0, lookupMismatches = 0
            for i in 0..<r.count {
                if m.geometries[i] != r.geometries[i] { geometryMismatches += 1 }
                if m.properties[i] != r.properties[i] { propertyMismatches += 1 }
                if m.index(ofFID: r.fids[i]) != i { lookupMismatches += 1 }
            }
            #expect(geometryMismatches == 0 && propertyMismatches == 0 && lookupMismatches == 0, "\(name)")
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
            #expect(try !mapped.layer("stations").isMapped && !mapped.layer("paths").isMapped)
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
            var badTree = whole
            for k in 0..<min(treeIndices.length, 64) { badTree[treeIndices.offset + k] = 0xFF }  // slot -1
            damaged.append(("tree slots out of range", badTree))

            let reference = try DemoStore.get()
            for (what, bytes) in damaged {
                try bytes.write(to: URL(fileURLWithPath: file))
                let snapshot = try Self.mappedSnapshot(path)
                let refused = snapshot.warnings.filter { $0.hasPrefix("snapshot file \(file) was refused and is rebuilt") }
                #expect(refused.count == 1, "\(what): \(snapshot.warnings)")
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
            #expect(again.isMapped && again.count == original.count)
            #expect((0..<again.count).allSatisfy { again.geometries[$0] == original.geometries[$0] })
        }
    }
}
