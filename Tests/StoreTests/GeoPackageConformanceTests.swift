import Foundation
import Geometry
import Store
import TestSupport
import Testing
import ZooPraha

/// Every store Vltava writes passes GDAL's validate_gpkg.py and carries the GeoPackage R-tree
/// that GDAL and QGIS use; Vltava imports into GeoPackages that GDAL wrote; layers and tile
/// sets can be dropped and renamed, leaving a valid file.
@Suite(.validatesStores) struct GeoPackageConformanceTests {
    /// The sweep behind `.validatesStores` finds the stores a test writes in its temporary
    /// directories (not the MBTiles beside them, nor a file edited raw), and the batch
    /// validator catches a store that breaks Req 141 (a third gpkg_schema row).
    @Test func theStoreSweepFindsEveryStoreATestWrites() throws {
        let sweep = StoreSweep()
        let (store, edited) = try StoreSweep.$current.withValue(sweep) {
            let dir = try Fixtures.temporaryDirectory("sweep")
            let store = dir.appendingPathComponent("a.gpkg").path
            _ = try Importer.importFile(Fixtures.path("zoo/pavilions-and-pens.geojson"), intoStoreAt: store, options: ImportOptions(layer: "pens"))
            try FileManager.default.copyItem(atPath: Fixtures.path("zoo/zoo-prague-geojson-tiles.mbtiles"), toPath: dir.appendingPathComponent("tiles.mbtiles").path)
            let edited = dir.appendingPathComponent("edited.gpkg").path
            try FileManager.default.copyItem(atPath: store, toPath: edited)
            try RawStoreEdits.execute("INSERT INTO gpkg_extensions VALUES ('pens', NULL, 'gpkg_schema', 'x', 'read-write')", in: edited)
            return (store, edited)
        }
        #expect(sweep.stores() == [URL(fileURLWithPath: store).standardizedFileURL.path])
        #expect(try GeoPackageValidator.problems([store]) == nil)
        let complaint = try #require(try GeoPackageValidator.problems([store, edited]))
        #expect(complaint.contains("edited.gpkg") && !complaint.contains("a.gpkg:"), "\(complaint)")
    }

    @Test func theDemoStorePassesTheValidatorAndHasSpatialIndexes() throws {
        let path = try Fixtures.temporaryDirectory("conformance").appendingPathComponent("demo.gpkg").path
        try DemoFixtureStore.build(at: path)
        #expect(try GeoPackageValidator.problems(path) == nil)
        // Every feature layer: the R-tree is there, and GDAL's HasSpatialIndex says so.
        let layers = ["districts", "districts_sjtsk", "parking", "stations", "pavilions", "pens", "paths"]
        let sql = "SELECT " + layers.map { "HasSpatialIndex('\($0)','geom')" }.joined(separator: ", ")
        #expect(try GeoPackageValidator.ogrSQL(sql, on: path) == Array(repeating: "1", count: layers.count))
        // The R-tree holds one row per feature (1548 parking zones, 17 stations), and GDAL's
        // spatial filter through it finds the stations that a brute-force test of every
        // station finds.
        #expect(try GeoPackageValidator.ogrSQL("SELECT (SELECT count(*) FROM rtree_parking_geom), (SELECT count(*) FROM rtree_stations_geom)", on: path) == ["1548", "17"])
        let box = BBox(minLon: 14.35, minLat: 50.05, maxLon: 14.45, maxLat: 50.10)
        let stations = try GeoPackage(path: path).features(of: "stations")
        let inside = stations.filter { stored in
            guard case .point(let p)? = stored.feature.geometry else { return false }
            return p.lon >= box.minLon && p.lon <= box.maxLon && p.lat >= box.minLat && p.lat <= box.maxLat
        }.map(\.fid).sorted()
        #expect(inside.count == 7)  // Python over the CSV counts 7 too
        let spatial = try Fixtures.run(URL(fileURLWithPath: "/usr/bin/ogrinfo"), ["-q", path, "stations", "-spat", "14.35", "50.05", "14.45", "50.10"], timeout: 60)
        let fids = spatial.stdout.split(separator: "\n").compactMap { line -> Int64? in
            guard line.hasPrefix("OGRFeature(stations):") else { return nil }
            return Int64(line.dropFirst("OGRFeature(stations):".count))
        }.sorted()
        #expect(fids == inside)
    }

    /// ogr2ogr writes a GeoPackage (with gpkg_ogr_contents, metadata and its own R-tree, but
    /// no gpkg_data_columns); Vltava imports into it, renames and drops its layers, and every
    /// step leaves a file that passes the validator.
    @Test func importsRenamesAndDropsInAGeoPackageThatGDALWrote() throws {
        let path = try Fixtures.temporaryDirectory("conformance").appendingPathComponent("gdal.gpkg").path
        let made = try Fixtures.run(URL(fileURLWithPath: "/usr/bin/ogr2ogr"), ["-f", "GPKG", path, Fixtures.path("prague/parking-zones.wgs84.geojson"), "-nln", "zones"], timeout: 120)
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try GeoPackageValidator.ogrSQL("SELECT count(*) FROM sqlite_master WHERE name = 'gpkg_data_columns'", on: path) == ["0"])

        let store = try GeoPackage(path: path, mode: .readWrite)
        let report = try Importer.importFile(Fixtures.path("zoo/pavilions-and-pens.geojson"), into: store, options: ImportOptions(layer: "pens", only: .point))
        #expect(report.featureCount == 77)
        #expect(try store.layerNames() == ["pens", "zones"])
        #expect(try store.layer("pens").columns.first { $0.name == "animals" }?.isJSON == true)
        #expect(try GeoPackageValidator.problems(path) == nil)

        // An edit by another tool (raw SQL here) fires the R-tree's triggers, whose GeoPackage
        // functions every Vltava connection defines too: the index follows the moved pen.
        let pen = try #require(try store.features(of: "pens").first?.fid)
        try RawStoreEdits.setGeometry(of: "pens", fid: pen, to: RawStoreEdits.geoPackageBlob(WKB.encode(.point(Point(lon: 14.5, lat: 50.25)))), in: path)
        #expect(try GeoPackageValidator.ogrSQL("SELECT minx, maxx, miny, maxy FROM rtree_pens_geom WHERE id = \(pen)", on: path) == ["14.5", "14.5", "50.25", "50.25"])
        #expect(try GeoPackageValidator.ogrSQL("SELECT count(*) FROM rtree_pens_geom", on: path) == ["77"])

        // GDAL's layer, renamed: its features, fids and R-tree follow it.
        let before = try store.features(of: "zones")
        try store.rename(layerOrTileSet: "zones", to: "parking")
        #expect(try store.layerNames() == ["parking", "pens"])
        #expect(try store.features(of: "parking") == before)
        #expect(try GeoPackageValidator.problems(path) == nil)
        #expect(try GeoPackageValidator.ogrSQL("SELECT HasSpatialIndex('parking','geom'), HasSpatialIndex('pens','geom'), (SELECT count(*) FROM rtree_parking_geom)", on: path) == ["1", "1", "1548"])

        try store.drop(layerOrTileSet: "parking")
        #expect(try store.layerNames() == ["pens"])
        #expect(try GeoPackageValidator.problems(path) == nil)
        #expect(try GeoPackageValidator.ogrSQL("SELECT count(*) FROM sqlite_master WHERE name LIKE '%parking%' OR name LIKE '%zones%'", on: path) == ["0"])
    }

    @Test func renameKeepsTimeSeriesAndTileSetsAndDropFreesTheName() throws {
        let dir = try Fixtures.temporaryDirectory("conformance")
        let path = dir.appendingPathComponent("demo.gpkg").path
        try DemoFixtureStore.build(at: path)
        let store = try GeoPackage(path: path, mode: .readWrite)
        let stations = try store.features(of: "stations")
        try store.rename(layerOrTileSet: "stations", to: "air_stations")
        #expect(try store.features(of: "air_stations") == stations)
        #expect(try store.layer("observations").timeSeries?.keyLayer == "air_stations")
        let unknown = #expect(throws: StoreError.self) { try store.rename(layerOrTileSet: "stations", to: "x") }
        #expect(unknown.map { "\($0)" }?.hasPrefix("unknown layer 'stations'") == true)
        let taken = #expect(throws: StoreError.self) { try store.rename(layerOrTileSet: "pens", to: "paths") }
        #expect(taken.map { "\($0)" } == "invalid layer name 'paths': a layer or tile set of that name exists")
        let reserved = #expect(throws: StoreError.self) { try store.rename(layerOrTileSet: "pens", to: "gpkg_pens") }
        #expect(reserved.map { "\($0)" }?.contains("reserved") == true)
        #expect(try store.layer("pens").featureCount == 77)

        try store.rename(layerOrTileSet: "zoo_map", to: "zoo_tiles")
        #expect(try store.tileSets().map(\.name) == ["zoo_tiles"])
        #expect(try store.tileSets().first?.path == Fixtures.path("zoo/zoo-prague-geojson-tiles.mbtiles"))
        try store.drop(layerOrTileSet: "zoo_tiles")
        #expect(try store.tileSets().isEmpty)

        // Dropping the point layer keeps its series as a plain table.
        try store.drop(layerOrTileSet: "air_stations")
        #expect(try !store.hasLayer("air_stations"))
        #expect(try store.layer("observations").timeSeries == nil)
        #expect(try store.layer("observations").featureCount == 816)
        #expect(try GeoPackageValidator.problems(path) == nil)
        // The name is free again.
        _ = try Importer.importFile(Fixtures.path("air/stations-prague.csv"), into: store, options: ImportOptions(layer: "air_stations"))
        #expect(try store.layer("air_stations").featureCount == 17)
        #expect(try GeoPackageValidator.problems(path) == nil)

        // The feed numbers each layer change after the demo's own imports, in order: a rename
        // as the old name dropped and the new one imported; tile sets are not in the feed.
        let imports = try store.changes(since: 0, limit: 100)
        let demoLayers = imports.prefix { !($0.layer == "stations" && $0.kind == .dropped) }
        #expect(demoLayers.allSatisfy { $0.kind == .imported && $0.fid == nil } && demoLayers.map(\.layer).contains("pens"))
        let after = imports.dropFirst(demoLayers.count).map { "\($0.kind.rawValue) \($0.layer)" }
        #expect(after == ["dropped stations", "imported air_stations", "dropped air_stations", "imported air_stations"])
        #expect(imports.map(\.sequence) == Array(1...Int64(imports.count)))
    }

    /// A tile set is registered relative to the store: the store and its tiles move together.
    @Test func tileSetPathsAreRelativeToTheStore() throws {
        let dir = try Fixtures.temporaryDirectory("conformance")
        let tiles = dir.appendingPathComponent("tiles")
        try FileManager.default.createDirectory(at: tiles, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixtures.path("zoo/zoo-prague-geojson-tiles.mbtiles"), toPath: tiles.appendingPathComponent("zoo.mbtiles").path)
        let path = dir.appendingPathComponent("s.gpkg").path
        let store = try GeoPackage(path: path, mode: .readWrite)
        try store.registerTileSet(name: "zoo_map", path: tiles.appendingPathComponent("zoo.mbtiles").path, replace: false)
        // Stored relative…
        let stored = try GeoPackageValidator.ogrSQL("SELECT path FROM vltava_tilesets", on: path)
        #expect(stored == ["tiles/zoo.mbtiles"])
        // …so the pair, moved elsewhere, still resolves.
        let moved = try Fixtures.temporaryDirectory("conformance-moved").appendingPathComponent("here")
        try FileManager.default.moveItem(at: dir, to: moved)
        let reopened = try GeoPackage(path: moved.appendingPathComponent("s.gpkg").path)
        #expect(try reopened.tileSets().map(\.name) == ["zoo_map"])
        #expect(try reopened.tileSets().map(\.path) == [moved.appendingPathComponent("tiles/zoo.mbtiles").standardizedFileURL.path])
        #expect(FileManager.default.fileExists(atPath: try reopened.tileSets()[0].path))
    }
}
