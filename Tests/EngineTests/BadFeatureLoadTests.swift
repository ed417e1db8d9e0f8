import Foundation
import Engine
import Geometry
import Store
import TestSupport
import Testing

/// A store edited by another tool loads (issue 19): a feature whose geometry cannot be read or
/// has a NaN or infinite coordinate is left out of its layer with a warning naming the layer
/// and the fid; POINT EMPTY is a feature without geometry. Before, the infinite latitude trapped
/// in the R-tree and the NaN vertex in the polygon index, killing the process.
@Suite(.validatesStores) struct BadFeatureLoadTests {
    /// Stations and districts, then: station fid 3 (AKALA) at (14.42, inf), station fid 5
    /// (ALEGA) POINT EMPTY, and Praha 1 with its sixth vertex's latitude NaN. Returns the path
    /// and the warning expected for Praha 1.
    static func editedStore() throws -> (path: String, praha1: String) {
        let path = try Fixtures.temporaryDirectory("bad-features").appendingPathComponent("s.gpkg").path
        let store = try GeoPackage(path: path, mode: .readWrite)
        for (file, layer) in [("air/stations-prague.csv", "stations"), ("prague/districts.wgs84.geojson", "districts")] {
            _ = try Importer.importFile(Fixtures.path(file), into: store, options: ImportOptions(layer: layer))
        }
        try RawStoreEdits.setGeometry(of: "stations", fid: 3, to: RawStoreEdits.infiniteLatitude, in: path)
        try RawStoreEdits.setGeometry(of: "stations", fid: 5, to: RawStoreEdits.pointEmpty, in: path)
        let praha1 = try #require(try store.features(of: "districts").first { $0.feature.properties["NAZEV_MC"] == .text("Praha 1") })
        guard case .polygon(var polygon)? = praha1.feature.geometry else { throw CocoaError(.coderInvalidValue) }
        let lon = polygon.coordinates[10]
        polygon.coordinates[11] = .nan
        try RawStoreEdits.setGeometry(of: "districts", fid: praha1.fid, to: RawStoreEdits.geoPackageBlob(WKB.encode(.polygon(polygon))), in: path)
        // Byte 93: order, type, ring count and point count (13 bytes), then 5 positions of 16.
        return (path, "layer 'districts', fid \(praha1.fid) left out: corrupt geometry: invalid WKB at byte 93: the coordinate (\(lon), nan) is not a finite number")
    }

    @Test func badFeaturesAreLeftOutWithWarnings() throws {
        let (path, praha1) = try Self.editedStore()
        let snapshot = try Snapshot.load(storePath: path)
        #expect(snapshot.warnings == [
            praha1,
            "layer 'stations', fid 3 left out: corrupt geometry: invalid WKB at byte 5: the coordinate (14.42, inf) is not a finite number",
        ])
        let stations = try snapshot.layer("stations")
        #expect(stations.count == 16)
        #expect(stations.index(ofFID: 3) == nil)
        // The layer's row count still counts the row left out, as the table does.
        let tableRows = try GeoPackage(path: path).rowCount(of: "stations")
        #expect(stations.info.featureCount == 17 && tableRows == 17)
        #expect(try snapshot.layer("districts").info.featureCount == 57)
        // POINT EMPTY stays, without geometry: found by its attributes, never by a spatial query.
        let alega = try #require(stations.index(ofFID: 5))
        #expect(stations.geometries[alega] == nil)
        #expect(stations.properties[alega]["code"] == .text("ALEGA"))
        // At AKALA's place: AREPA 1,143.9 m, ARIEA 1,419.1 m, then ASROA, not ALEGA (2,561.6 m).
        let nearest = try snapshot.nearest(snapshot.layer("stations"), to: Point(lon: 14.442049, lat: 50.094238), k: 3)
        #expect(nearest.map(\.fid) == [9, 11, 13])
        #expect(nearest.map { (($0.metres ?? 0) * 1000).rounded() / 1000 } == [1143.946, 1419.146, 3045.553])
        #expect(try snapshot.within(snapshot.layer("stations"), metres: 2_600, of: Point(lon: 14.442049, lat: 50.094238)).map(\.fid) == [9, 11])
        // Praha 1 is gone; the district next door still answers.
        #expect(try snapshot.containing(snapshot.layer("districts"), at: Point(lon: 14.4208, lat: 50.0880)).isEmpty)
        let karlin = try snapshot.containing(snapshot.layer("districts"), at: Point(lon: 14.442049, lat: 50.094238))
        #expect(karlin.map { try? snapshot.text("districts", $0.index, "NAZEV_MC") } == ["Praha 8"])
    }

    /// Issue 30: finite but huge coordinates, as another tool may write them. Before, the
    /// polygon at lon ±1e308 trapped the polygon index's grid ("Double value cannot be converted
    /// to Int") and points at ±1.7e308 the TileJSON's zoom, killing `vltava serve` at load. A
    /// store layer is WGS 84 lon/lat: such features are left out with a warning, in memory and
    /// in the snapshot file alike.
    @Test(arguments: [Snapshot.mappedLayerMinimumFeatures, 1])
    func hugeFiniteCoordinatesAreLeftOutWithWarnings(mappedFrom minimumFeatures: Int) throws {
        let path = try Fixtures.temporaryDirectory("huge-coordinates").appendingPathComponent("s.gpkg").path
        let store = try GeoPackage(path: path, mode: .readWrite)
        for (file, layer) in [("air/stations-prague.csv", "stations"), ("prague/districts.wgs84.geojson", "districts")] {
            _ = try Importer.importFile(Fixtures.path(file), into: store, options: ImportOptions(layer: layer))
        }
        // AKALA and AKOBA, at the two ends of the doubles' range.
        for (fid, value) in [(Int64(3), 1.7e308), (4, -1.7e308)] {
            try RawStoreEdits.setGeometry(of: "stations", fid: fid, to: RawStoreEdits.geoPackageBlob(WKB.encode(.point(Point(lon: value, lat: value)))), in: path)
        }
        let praha1 = try #require(try store.features(of: "districts").first { $0.feature.properties["NAZEV_MC"] == .text("Praha 1") })
        let wide = Polygon(rings: [[-1e308, 50.08, 1e308, 50.08, 1e308, 50.09, -1e308, 50.09, -1e308, 50.08]])
        try RawStoreEdits.setGeometry(of: "districts", fid: praha1.fid, to: RawStoreEdits.geoPackageBlob(WKB.encode(.polygon(wide))), in: path)

        let snapshot = try Snapshot.load(storePath: path, mappedLayerMinimumFeatures: minimumFeatures)
        #expect(snapshot.warnings == [
            "layer 'districts', fid \(praha1.fid) left out: longitude -1e+308 is outside -180…180",
            "layer 'stations', fid 3 left out: latitude 1.7e+308 is outside -90…90",
            "layer 'stations', fid 4 left out: latitude -1.7e+308 is outside -90…90",
        ])
        let districts = try snapshot.layer("districts")
        #expect(districts.storage == (minimumFeatures == 1 ? .mapped : .loaded))
        #expect(districts.count == 56 && districts.info.featureCount == 57)
        #expect(try snapshot.containing(districts, at: Point(lon: 14.4208, lat: 50.0880)).isEmpty)
        let karlin = try snapshot.containing(districts, at: Point(lon: 14.442049, lat: 50.094238))
        #expect(karlin.map { try? snapshot.text("districts", $0.index, "NAZEV_MC") } == ["Praha 8"])
        let stations = try snapshot.layer("stations")
        #expect(stations.count == 15 && stations.index(ofFID: 3) == nil && stations.index(ofFID: 4) == nil)
        // The TileJSON of the layer: the bounds of the 15 stations left, a center at zoom 10
        // (log2(360 / 0.280594°) = 10.3).
        guard case .object(let doc) = snapshot.tileJSON(.layer(stations), tilesURL: "x") else { Issue.record("not an object"); return }
        #expect(doc["bounds"] == .array([.double(14.257226), .double(50.007305), .double(14.53782), .double(50.12653)]))
        #expect(doc["center"] == .array([.double((14.257226 + 14.53782) / 2), .double((50.007305 + 50.12653) / 2), .integer(10)]))
        // A reload of the same store (what SIGHUP does) loads it again.
        let host = try Engine(storePath: path)
        try host.reload()
        #expect(host.snapshot.warnings == snapshot.warnings)
    }

    /// A failed reload keeps the snapshot that was there (here the store stops being a
    /// GeoPackage at all).
    @Test func aFailedReloadKeepsTheOldSnapshot() throws {
        let (path, _) = try Self.editedStore()
        let host = try Engine(storePath: path)
        let before = host.snapshot
        try RawStoreEdits.execute("ALTER TABLE gpkg_contents RENAME TO contents_elsewhere", in: path)
        #expect(throws: EngineError.self) { try host.reload() }
        #expect(host.snapshot === before)
        #expect(try host.snapshot.nearest(host.snapshot.layer("stations"), to: Point(lon: 14.442049, lat: 50.094238), k: 1).map(\.fid) == [9])
    }
}
