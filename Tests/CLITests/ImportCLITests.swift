import Engine
import Foundation
import Geometry
import Store
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

/// `vltava import --append` and `--upsert --key`: a file added to a layer that exists, as one
/// write batch that the change feed numbers.
@Suite(.validatesStores) struct AppendCLITests {
    @Test func observationsAppendedToASeriesEqualTheSeriesImportedWhole() throws {
        let folder = try Fixtures.temporaryDirectory("cli-append")
        let db = folder.appendingPathComponent("a.gpkg").path, whole = folder.appendingPathComponent("whole.gpkg").path
        let csv = try String(contentsOf: Fixtures.url("air/observations-2019-04-15-16.csv"), encoding: .utf8)
        let lines = csv.split(whereSeparator: \.isNewline)
        #expect(lines.count == 817)
        // The first 39 rows, then the whole file: 39 of its rows are there already.
        let first = folder.appendingPathComponent("first.csv")
        try (lines.prefix(40).joined(separator: "\n") + "\n").write(to: first, atomically: true, encoding: .utf8)
        for store in [db, whole] {
            #expect(try CLI.run(["import", Fixtures.path("air/stations-prague.csv"), "--layer", "stations", "--db", store]).status == 0)
        }
        #expect(try CLI.run(["import", first.path, "--layer", "observations", "--time-series-of", "stations", "--db", db]).status == 0)
        let appended = try CLI.run(["import", Fixtures.path("air/observations-2019-04-15-16.csv"), "--layer", "observations", "--append", "--db", db])
        #expect(appended.status == 0, "\(appended.stderr)")
        // The feed's first two changes are the two imports.
        #expect(appended.stdout == "appended 816 rows to layer 'observations': 777 added, 39 replaced (changes 3–818 of the feed)\n")
        #expect(try CLI.run(["import", Fixtures.path("air/observations-2019-04-15-16.csv"), "--layer", "observations",
                             "--time-series-of", "stations", "--db", whole]).status == 0)

        // The same rows as the file imported at once, compared by station and hour.
        func rows(_ path: String) throws -> [String: Attributes] {
            var rows: [String: Attributes] = [:]
            try GeoPackage(path: path).forEachFeature(of: "observations") { stored in
                var properties = stored.feature.properties
                let key = "\(properties["code"]?.stringValue ?? "")@\(properties["interval_start"]?.stringValue ?? "")"
                properties["fid"] = nil
                rows[key] = properties
                return true
            }
            return rows
        }
        let appendedRows = try rows(db), importedRows = try rows(whole)
        #expect(appendedRows.count == 816)
        #expect(appendedRows == importedRows)
        let feed = try GeoPackage(path: db).changes(since: 2, limit: 10_000)
        #expect(try GeoPackage(path: db).changes(since: 0, limit: 2).map { "\($0.kind.rawValue) \($0.layer)" } == ["imported stations", "imported observations"])
        #expect(feed.map(\.sequence) == Array(3...818))
        #expect(feed.filter { $0.kind == .inserted }.count == 777 && feed.filter { $0.kind == .replaced }.count == 39)
    }

    @Test func upsertReplacesByKeyAndAddsTheRest() throws {
        let folder = try Fixtures.temporaryDirectory("cli-upsert")
        let db = folder.appendingPathComponent("u.gpkg").path
        let csv = try String(contentsOf: Fixtures.url("air/stations-prague.csv"), encoding: .utf8)
        let lines = csv.split(whereSeparator: \.isNewline).map(String.init)
        #expect(lines.count == 18 && lines[1].hasPrefix("ABREA,"))
        let first = folder.appendingPathComponent("first.csv"), renamed = folder.appendingPathComponent("renamed.csv")
        try (lines.prefix(11).joined(separator: "\n") + "\n").write(to: first, atomically: true, encoding: .utf8)
        var changed = lines
        changed[1] = changed[1].replacingOccurrences(of: "Praha 6-Břevnov", with: "Praha 6 – Břevnov")
        try (changed.joined(separator: "\n") + "\n").write(to: renamed, atomically: true, encoding: .utf8)
        #expect(try CLI.run(["import", first.path, "--layer", "stations", "--db", db]).status == 0)
        let upserted = try CLI.run(["import", renamed.path, "--layer", "stations", "--upsert", "--key", "code", "--db", db])
        #expect(upserted.status == 0, "\(upserted.stderr)")
        #expect(upserted.stdout == "upserted 17 features to layer 'stations': 7 added, 10 replaced (changes 2–18 of the feed)\n")
        var names: [String: String] = [:]
        try GeoPackage(path: db).forEachFeature(of: "stations") { stored in
            names[stored.feature.properties["code"]?.stringValue ?? ""] = stored.feature.properties["name"]?.stringValue
            return true
        }
        #expect(names.count == 17 && names["ABREA"] == "Praha 6 – Břevnov")

        // A polygon into a point layer fails the batch, naming the operation; nothing changes.
        let polygons = try CLI.run(["import", Fixtures.path("prague/districts.wgs84.geojson"), "--layer", "stations", "--append", "--db", db])
        #expect(polygons.status == 1)
        #expect(polygons.stderr.contains("operation 1 of the batch: layer 'stations' holds POINT geometries; this is a"), "\(polygons.stderr)")
        #expect(try GeoPackage(path: db).changes(since: 0, limit: 100).count == 18)
        let noKey = try CLI.run(["import", renamed.path, "--layer", "stations", "--upsert", "--key", "nope", "--db", db])
        #expect(noKey.status != 0 && noKey.stderr.contains("layer 'stations' has no column 'nope' to upsert on (columns: code, name, classif, owner)"), "\(noKey.stderr)")

        // While another process is the store's writer (a server taking writes), the CLI is
        // refused by name rather than writing what that process's snapshot would not see.
        let writer = try GeoPackageSource(path: db).openWriter()
        let refused = try CLI.run(["import", renamed.path, "--layer", "stations", "--append", "--db", db])
        #expect(refused.status == 1 && refused.stderr.contains("is written by another process (pid \(getpid()))"), "\(refused.stderr)")
        withExtendedLifetime(writer) {}
    }
}
