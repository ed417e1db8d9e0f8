import Foundation
import Geometry
import SQLite
import Store
import TestSupport
import Testing

/// Every bad input gives a clear error naming the problem and where it is, and leaves the
/// store exactly as it was: the same layers with the same row counts.
@Suite(.validatesStores) struct BadInputTests {
    /// A store with one layer already in it, and a snapshot of every table's row count.
    func populatedStore() throws -> (GeoPackage, String, [String: Int]) {
        let (store, path) = try freshStore()
        try importFixture("air/stations-prague.csv", as: "stations", into: store)
        return (store, path, try rowCounts(path))
    }

    func rowCounts(_ path: String) throws -> [String: Int] {
        let database = try Database(path: path, mode: .readOnly)
        let tables = try database.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        var counts: [String: Int] = [:]
        while try tables.step() {
            let name = tables.text(0) ?? ""
            if case .integer(let n)? = try database.scalar("SELECT count(*) FROM \"\(name)\"") { counts[name] = Int(n) }
        }
        return counts
    }

    func write(_ text: String, name: String) throws -> String {
        let url = try Fixtures.temporaryDirectory("bad").appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    /// Imports `path`, expects it to fail with a message containing every fragment, and checks
    /// that the store did not change.
    func expectFailure(_ path: String, layer: String = "new_layer", _ fragments: [String], _ configure: (inout ImportOptions) -> Void = { _ in }) throws {
        let (store, storePath, before) = try populatedStore()
        var options = ImportOptions(layer: layer)
        configure(&options)
        do {
            _ = try Importer.importFile(path, into: store, options: options)
            Issue.record("import of \(path) succeeded")
        } catch {
            let message = "\(error)"
            for fragment in fragments {
                #expect(message.contains(fragment), "«\(fragment)» not in «\(message)»")
            }
        }
        #expect(try rowCounts(storePath) == before)
        #expect(try store.layerNames() == ["stations"])
    }

    @Test func malformedJSONNamesLineAndColumn() throws {
        let path = try write("{\"type\": \"FeatureCollection\",\n  \"features\": [\n    {\"type\": \"Feature\" \"geometry\": null}\n]}", name: "bad.geojson")
        try expectFailure(path, ["bad.geojson", "line 3", "column 24"])
    }

    @Test func featureWithoutGeometry() throws {
        let path = try write("""
            {"type": "FeatureCollection", "features": [
              {"type": "Feature", "id": 7, "geometry": {"type": "Point", "coordinates": [14.4, 50.1]}, "properties": {}},
              {"type": "Feature", "id": 8, "geometry": null, "properties": {"name": "nowhere"}}
            ]}
            """, name: "nogeom.geojson")
        try expectFailure(path, ["feature 1 (id 8)", "has no geometry"])
    }

    @Test func selfIntersectingPolygonUnderStrict() throws {
        let path = try write("""
            {"type": "FeatureCollection", "features": [
              {"type": "Feature", "properties": {"name": "bow tie"}, "geometry": {"type": "Polygon",
               "coordinates": [[[14.40, 50.10], [14.41, 50.11], [14.41, 50.10], [14.40, 50.11], [14.40, 50.10]]]}}
            ]}
            """, name: "bowtie.geojson")
        try expectFailure(path, ["feature 0", "Self-intersection", "--strict"]) { $0.strict = true }

        // Without --strict it is repaired and reported.
        let (store, _) = try freshStore()
        let report = try Importer.importFile(path, into: store, options: ImportOptions(layer: "bowtie"))
        #expect(report.warnings.count == 1)
        #expect(report.warnings.first?.message.contains("repaired with make-valid") == true)
        let geometry = try #require(try store.features(of: "bowtie").first?.feature.geometry)
        guard case .multiPolygon(let parts) = geometry else { Issue.record("expected a MultiPolygon, got \(geometry.typeName)"); return }
        #expect(parts.polygons.count == 2)
    }

    @Test func swappedLatitudeInCSV() throws {
        let path = try write("code,name,latitude,longitude\nX1,ok,50.1,14.4\nX2,far,14.4,214.4\n", name: "far.csv")
        let swapped = try write("code,name,latitude,longitude\nX1,ok,50.1,14.4\nX2,swapped,114.4,50.1\n", name: "swapped2.csv")
        try expectFailure(swapped, ["line 3", "latitude 114.4 is outside -90…90", "did you swap longitude and latitude?"])
        try expectFailure(path, ["line 3", "longitude 214.4 is outside -180…180"])
    }

    @Test func unknownEPSGCode() throws {
        try expectFailure(Fixtures.path("prague/districts.wgs84.geojson"), ["EPSG:99999"]) { $0.crs = "EPSG:99999" }
    }

    @Test func duplicateLayerNameWithoutReplace() throws {
        try expectFailure(Fixtures.path("air/stations-prague.csv"), layer: "stations", ["layer 'stations' already exists", "--replace"])

        // With --replace the layer is replaced, in one transaction.
        let (store, _) = try freshStore()
        try importFixture("air/stations-prague.csv", as: "stations", into: store)
        try importFixture("prague/districts.wgs84.geojson", as: "stations", into: store) { $0.replace = true }
        #expect(try store.layer("stations").featureCount == 57)
        #expect(try store.layer("stations").geometryType == "POLYGON")
    }

    @Test func fileThatDoesNotExist() throws {
        try expectFailure("/nonexistent/districts.geojson", ["no such file: /nonexistent/districts.geojson"])
    }

    @Test func unknownStationInObservations() throws {
        let path = try write("code,datefromutc,datetoutc,no2\nABREA,2019-04-14 21:00:00.0 UTC,2019-04-14 22:00:00.0 UTC,3\nXXXXX,2019-04-14 21:00:00.0 UTC,2019-04-14 22:00:00.0 UTC,4\n", name: "obs.csv")
        try expectFailure(path, ["line 3", "'XXXXX' is not a code of layer 'stations'"]) { $0.timeSeriesOf = "stations" }
    }

    /// `1e309` (an overflow to infinity) and `NaN` in a number column were stored as +Inf and
    /// NULL without a word (issue 19); the import now fails naming the line and the column.
    @Test func nonFiniteNumbersInCSV() throws {
        let observations = try write("""
            code,datefromutc,datetoutc,no2,pm10
            ABREA,2019-04-14 21:00:00.0 UTC,2019-04-14 22:00:00.0 UTC,3,20
            ACHOA,2019-04-14 21:00:00.0 UTC,2019-04-14 22:00:00.0 UTC,1e309,21
            AKALA,2019-04-14 21:00:00.0 UTC,2019-04-14 22:00:00.0 UTC,4.5,NaN

            """, name: "obs.csv")
        let expected = """
            import of obs.csv failed; the store is unchanged:
              - line 3: column 'no2': '1e309' is not a finite number
              - line 4: column 'pm10': 'NaN' is not a finite number
            """
        try expectFailure(observations, [expected]) { $0.timeSeriesOf = "stations" }
        let points = try write("code,latitude,longitude,height\nX1,50.1,14.4,200\nX2,50.2,14.5,-inf\n", name: "points.csv")
        try expectFailure(points, ["import of points.csv failed", "line 3: column 'height': '-inf' is not a finite number"])
    }

    /// Issue 30: a FlatGeobuf cut in the middle imported the features before the cut and
    /// reported success, since GDAL's read error ended the loop as the end of the layer does.
    /// Now it fails naming the file and GDAL's error, and changes nothing, under `--replace` too.
    @Test func truncatedFlatGeobufFails() throws {
        let dir = try Fixtures.temporaryDirectory("fgb-cut")
        let whole = dir.appendingPathComponent("districts.fgb").path
        try ogr2ogr(["-f", "FlatGeobuf", whole, Fixtures.path("prague/districts.wgs84.geojson")])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        let cut = dir.appendingPathComponent("districts-cut.fgb")
        try bytes.prefix(bytes.count / 2).write(to: cut)
        let expected = ["import of districts-cut.fgb failed; the store is unchanged:\n  - GDAL could not read feature ",
                        " (the file may be cut short or damaged): Fatal error parsing feature"]
        try expectFailure(cut.path, expected)
        try expectFailure(cut.path, layer: "stations", expected) { $0.replace = true }
        // The whole file imports, all 57 features.
        let (store, _) = try freshStore()
        #expect(try Importer.importFile(whole, into: store, options: ImportOptions(layer: "districts")).featureCount == 57)
    }

    /// Issue 30: a Shapefile without its .dbf imported its geometries alone, without a word
    /// about the attributes left behind.
    @Test func shapefileWithoutItsDBFFails() throws {
        let dir = try Fixtures.temporaryDirectory("shp-no-dbf")
        let shp = dir.appendingPathComponent("districts.shp").path
        try ogr2ogr(["-f", "ESRI Shapefile", "-lco", "ENCODING=UTF-8", shp, Fixtures.path("prague/districts.wgs84.geojson")])
        try FileManager.default.removeItem(at: dir.appendingPathComponent("districts.dbf"))
        try expectFailure(shp, ["""
            import of districts.shp failed; the store is unchanged:
              - the Shapefile has no districts.dbf beside it, which holds its attributes: without it only the geometries could be read
            """])
    }

    /// Issue 30: a CSV header of 10⁵ columns took 19.8 s before failing in SQLite (10⁶: more
    /// than 280 s), each row's attributes built by a search per name. A header past
    /// `ImportLimits.maxCSVColumns` is refused at once; one at the cap imports whole.
    @Test func csvHeaderWiderThanTheCapIsRefused() throws {
        func csv(columns: Int, rows: Int) -> String {
            let names = ["lon", "lat"] + (0..<(columns - 2)).map { "c\($0)" }
            let lines = (0..<rows).map { row in (["14.4\(row)", "50.0\(row)"] + (0..<(columns - 2)).map { String($0 * 10 + row) }).joined(separator: ",") }
            return ([names.joined(separator: ",")] + lines).joined(separator: "\n") + "\n"
        }
        let wide = try write(csv(columns: 100_000, rows: 2), name: "wide.csv")
        try expectFailure(wide, ["import of wide.csv failed; the store is unchanged:\n  - the header has 100000 columns; an import takes at most 1000"])
        let observations = try write("code,datefromutc,datetoutc," + (0..<1_000).map { "v\($0)" }.joined(separator: ",") + "\n", name: "wide-obs.csv")
        try expectFailure(observations, ["import of wide-obs.csv failed; the store is unchanged:\n  - the header has 1003 columns; an import takes at most 1000"]) {
            $0.timeSeriesOf = "stations"
        }

        #expect(ImportLimits.maxCSVColumns == 1_000)
        let atCap = try write(csv(columns: ImportLimits.maxCSVColumns, rows: 3), name: "at-cap.csv")
        let (store, _) = try freshStore()
        let report = try Importer.importFile(atCap, into: store, options: ImportOptions(layer: "wide"))
        #expect(report.featureCount == 3)
        #expect(try store.layer("wide").columns.map(\.name) == (0..<998).map { "c\($0)" })
        let third = try #require(try store.features(of: "wide").last?.feature)
        #expect(third.properties["c0"] == .integer(2) && third.properties["c997"] == .integer(9972))
        #expect(third.geometry == .point(Point(lon: 14.42, lat: 50.02)))
    }

    func ogr2ogr(_ arguments: [String]) throws {
        let result = try Fixtures.run(URL(fileURLWithPath: "/usr/bin/env"), ["ogr2ogr"] + arguments, timeout: 60)
        #expect(result.status == 0, "ogr2ogr \(arguments.joined(separator: " ")): \(result.stderr)")
    }

    @Test func invalidLayerNames() throws {
        try expectFailure(Fixtures.path("air/stations-prague.csv"), layer: "gpkg_contents", ["reserved"])
        try expectFailure(Fixtures.path("air/stations-prague.csv"), layer: "my layer", ["invalid layer name 'my layer'"])
    }

    @Test func unknownLayerSuggestsTheClosestName() throws {
        let (store, _, _) = try populatedStore()
        #expect(throws: StoreError.self) { try store.layer("station") }
        do {
            _ = try store.layer("station")
        } catch {
            #expect("\(error)" == "unknown layer 'station' — did you mean 'stations'? (layers: stations)")
        }
    }

    @Test func aFileThatIsNotAGeoPackage() throws {
        let path = try write("this is not sqlite", name: "not.gpkg")
        #expect(throws: StoreError.self) { try GeoPackage(path: path) }
    }
}
