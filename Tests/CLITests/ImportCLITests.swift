import Foundation
import Geometry
import TestSupport
import Testing

/// The CLI end to end: every fixture imported into a fresh store through `vltava import`
/// (scripts/build-demo-store.sh, the same script the demo uses), then `vltava layers`.
@Suite(.validatesStores) struct ImportCLITests {
    @Test func importEveryFixtureThenListLayers() throws {
        let db = try Fixtures.temporaryDirectory("cli").appendingPathComponent("demo.gpkg").path
        let build = try CLI.run([db, CLI.binary.path], executable: Fixtures.root.appendingPathComponent("scripts/build-demo-store.sh"))
        #expect(build.status == 0, "\(build.stderr)")
        #expect(build.stdout.contains("imported 57 POLYGON features into layer 'districts_sjtsk' (geojson, reprojected from EPSG:5514 to EPSG:4326)"))
        #expect(build.stdout.contains("imported 816 rows into layer 'observations' (observations)"))
        // The demo store passes GDAL's GeoPackage validator.
        #expect(try GeoPackageValidator.problems(db) == nil)

        let layers = try CLI.run(["layers", "--db", db])
        #expect(layers.status == 0, "\(layers.stderr)")
        // The bounding boxes were checked against a plain Python min/max over each source file.
        #expect(layers.stdout == """
            layer            type                     features  bbox (min lon, min lat, max lon, max lat)  crs
            ---------------  -----------------------  --------  -----------------------------------------  ---------
            animals          table                         605
            districts        POLYGON                        57  14.224437 49.941900 14.706788 50.177425    EPSG:4326
            districts_sjtsk  POLYGON                        57  14.224436 49.941900 14.706787 50.177430    EPSG:4326
            observations     time series of stations       816
            parking          GEOMETRY                     1548  14.337907 50.055247 14.499431 50.133283    EPSG:4326
            paths            LINESTRING                    892  14.392090 50.106488 14.414062 50.127622    EPSG:4326
            pavilions        POLYGON                        13  14.402919 50.115238 14.410570 50.119818    EPSG:4326
            pens             POINT                          77  14.401247 50.115365 14.410650 50.120863    EPSG:4326
            stations         POINT                          17  14.257226 50.007305 14.537820 50.126530    EPSG:4326

            """)
    }

    @Test func describeShowsColumnsAndTypes() throws {
        let db = try Fixtures.temporaryDirectory("cli").appendingPathComponent("s.gpkg").path
        #expect(try CLI.run(["import", Fixtures.path("zoo/pavilions-and-pens.geojson"), "--layer", "pens", "--only", "point", "--db", db]).status == 0)
        let describe = try CLI.run(["describe", "pens", "--db", db])
        #expect(describe.stdout == """
            pens: 77 features, EPSG:4326
            column         type
            -------------  -------
            geom           POINT
            name           TEXT
            is_animal_pen  BOOLEAN
            is_building    BOOLEAN
            animals        JSON

            """)
    }

    @Test func errorsAreClearAndExitNonZero() throws {
        let db = try Fixtures.temporaryDirectory("cli").appendingPathComponent("e.gpkg").path
        let missing = try CLI.run(["import", "/no/such/file.geojson", "--layer", "x", "--db", db])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("no such file: /no/such/file.geojson"))
        // The failed import into a new store left no file behind; nor does a failed
        // registration of a tile set (GeoPackage.write(at:_:), as every import).
        #expect(!FileManager.default.fileExists(atPath: db))
        let notTiles = URL(fileURLWithPath: db).deletingLastPathComponent().appendingPathComponent("not.mbtiles")
        try Data("name,lon,lat\n".utf8).write(to: notTiles)
        let tiles = try CLI.run(["import", notTiles.path, "--layer", "tiles", "--db", db])
        #expect(tiles.status == 1 && tiles.stderr.contains("not an MBTiles file"), "\(tiles.stderr)")
        #expect(!FileManager.default.fileExists(atPath: db))
        #expect(try CLI.run(["import", Fixtures.path("air/stations-prague.csv"), "--layer", "stations", "--db", db]).status == 0)
        let unknown = try CLI.run(["describe", "nothing", "--db", db])
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("unknown layer 'nothing'"))
    }
}

@Suite(.validatesStores) struct ExportCLITests {
    /// GeoJSON → store → GeoJSON through the CLI: the same coordinates (bit for bit: the store
    /// keeps IEEE doubles and the writer prints the shortest round-trip form) and the same
    /// properties, holes and MultiPolygons included.
    @Test(arguments: ["prague/parking-zones.wgs84.geojson", "prague/districts.wgs84.geojson"])
    func exportGivesBackTheImportedFile(fixture: String) throws {
        let db = try Fixtures.temporaryDirectory("cli").appendingPathComponent("x.gpkg").path
        let imported = try CLI.run(["import", Fixtures.path(fixture), "--layer", "layer", "--db", db])
        #expect(imported.status == 0, "\(imported.stderr)")
        let exported = try CLI.run(["export", "layer", "--db", db])
        #expect(exported.status == 0, "\(exported.stderr)")
        let original = try GeoJSON.parseDocument([UInt8](Data(contentsOf: Fixtures.url(fixture)))).features
        let again = try GeoJSON.parseDocument(Array(exported.stdout.utf8)).features
        #expect(again.count == original.count)
        for (a, b) in zip(original, again) {
            #expect(a.geometry == b.geometry)
            #expect(a.properties == b.properties)
        }
    }
}
