import Foundation
import Geometry
import Store
import Support
import TestSupport
import Testing
import ZooPraha

/// Files as GIS users have them, written at test time by GDAL's own `ogr2ogr` (gdal-bin, a
/// test dependency) from the fixtures, imported, and checked against GDAL's own reading and
/// reprojection (`ogr2ogr -t_srs EPSG:4326`) to 1 mm.
@Suite(.validatesStores) struct GDALImportTests {
    static let formats = ImportFormat.builtIn + ZooPraha.formats

    /// A Shapefile in EPSG:5514 (ESRI WKT in its .prj) whose .dbf is in windows-1250 (its .cpg
    /// says so), as IPR Praha publishes them.
    @Test func czechShapefileInSJTSKWithWindows1250() throws {
        let dir = try Fixtures.temporaryDirectory("shp")
        let shp = dir.appendingPathComponent("districts.shp").path
        try ogr2ogr(["-f", "ESRI Shapefile", "-lco", "ENCODING=CP1250", shp, Fixtures.path("prague/districts.sjtsk-epsg5514.geojson")])
        #expect(try String(contentsOfFile: dir.appendingPathComponent("districts.cpg").path, encoding: .utf8) == "CP1250")
        // "Č" is byte 0xC8 in windows-1250 (in UTF-8 it would be C4 8C): the .dbf really is 1250.
        let dbf = [UInt8](try Data(contentsOf: dir.appendingPathComponent("districts.dbf")))
        #expect(contains(dbf, Array("Praha-".utf8) + [0xC8] + Array("akovice".utf8)))

        let (store, _) = try freshStore()
        let report = try Importer.importFile(shp, into: store, options: ImportOptions(layer: "districts"), formats: Self.formats)
        #expect(report.format == .shapefile)
        #expect(report.featureCount == 57)
        #expect(report.sourceCRS == "EPSG:5514")
        #expect(report.geometryType == "POLYGON")
        let features = try store.features(of: "districts").map(\.feature)
        let names = Set(features.compactMap { $0.properties["NAZEV_MC"]?.stringValue })
        #expect(names.count == 57)
        #expect(names.isSuperset(of: ["Praha-Čakovice", "Praha-Řeporyje", "Praha-Šeberov", "Praha-Ďáblice", "Praha-Přední Kopanina"]))
        #expect(features.first { $0.properties["NAZEV_MC"] == .text("Praha 1") }?.properties["KOD_MO"] == .integer(19))

        let reference = try gdalReprojection(shp, dir: dir)
        try expectSameGeometries(features, reference, key: "OBJECTID")
    }

    /// A GeoPackage written by GDAL with two layers: the import lists them, then reads the one
    /// named, keeping GDAL's fids.
    @Test func geoPackageWrittenByGDAL() throws {
        let dir = try Fixtures.temporaryDirectory("gpkg")
        let gpkg = dir.appendingPathComponent("prague.gpkg").path
        try ogr2ogr(["-f", "GPKG", gpkg, Fixtures.path("prague/districts.sjtsk-epsg5514.geojson"), "-nln", "districts"])
        try ogr2ogr(["-f", "GPKG", "-update", gpkg, Fixtures.path("prague/parking-zones.wgs84.geojson"), "-nln", "parking"])

        let (store, _) = try freshStore()
        let error = importError(gpkg, into: store, ImportOptions(layer: "x"))
        #expect(error.contains("the file has 2 layers; choose one with --source-layer: districts (Polygon, 57 features), parking ("), "\(error)")

        let report = try Importer.importFile(gpkg, into: store, options: ImportOptions(layer: "districts", sourceLayer: "districts"), formats: Self.formats)
        #expect(report.format == .gpkg)
        #expect(report.featureCount == 57)
        #expect(report.sourceCRS == "EPSG:5514")
        let stored = try store.features(of: "districts")
        #expect(stored.map(\.fid) == Array(1...57))
        #expect(stored.first { $0.feature.properties["NAZEV_MC"] == .text("Praha-Čakovice") }?.fid == 1)
        try expectSameGeometries(stored.map(\.feature), try gdalReprojection(gpkg, dir: dir, layer: "districts"), key: "OBJECTID")

        let parkingCount = try gdalFeatureCount(gpkg, layer: "parking")
        let parking = try Importer.importFile(gpkg, into: store, options: ImportOptions(layer: "parking", sourceLayer: "parking"), formats: Self.formats)
        #expect(parking.featureCount == parkingCount)
        #expect(parking.sourceCRS == "EPSG:4326")
    }

    @Test func flatGeobuf() throws {
        let dir = try Fixtures.temporaryDirectory("fgb")
        let fgb = dir.appendingPathComponent("districts.fgb").path
        try ogr2ogr(["-f", "FlatGeobuf", fgb, Fixtures.path("prague/districts.sjtsk-epsg5514.geojson")])
        let (store, _) = try freshStore()
        let report = try Importer.importFile(fgb, into: store, options: ImportOptions(layer: "districts"), formats: Self.formats)
        #expect(report.format == .flatgeobuf)
        #expect(report.featureCount == 57)
        #expect(report.sourceCRS == "EPSG:5514")
        let features = try store.features(of: "districts").map(\.feature)
        #expect(features.contains { $0.properties["NAZEV_MC"] == .text("Praha-Řeporyje") })
        try expectSameGeometries(features, try gdalReprojection(fgb, dir: dir), key: "OBJECTID")
    }

    /// A CSV with a WKT column, in S-JTSK metres, as `ogr2ogr -lco GEOMETRY=AS_WKT` writes it:
    /// without `--crs` the one-line error names EPSG:5514; with it, GDAL's reprojection to 1 mm.
    @Test func csvWithWKTColumn() throws {
        let dir = try Fixtures.temporaryDirectory("csv")
        let csv = dir.appendingPathComponent("districts.csv").path
        try ogr2ogr(["-f", "CSV", "-lco", "GEOMETRY=AS_WKT", csv, Fixtures.path("prague/districts.sjtsk-epsg5514.geojson")])
        #expect(try String(contentsOfFile: csv, encoding: .utf8).hasPrefix("WKT,"))
        let (store, _) = try freshStore()

        let error = importError(csv, into: store, ImportOptions(layer: "districts"))
        #expect(error == """
            import of districts.csv failed; the store is unchanged:
              - 57 of 57 features are not longitude/latitude (line 2 at (-733714 -1035864)); the file names no CRS, \
            and these look like metres in EPSG:5514 (S-JTSK / Krovak East North): pass --crs EPSG:5514
            """)

        let report = try Importer.importFile(csv, into: store, options: ImportOptions(layer: "districts", crs: "EPSG:5514"), formats: Self.formats)
        #expect(report.format == .csv)
        #expect(report.featureCount == 57)
        let features = try store.features(of: "districts").map(\.feature)
        #expect(features.contains { $0.properties["NAZEV_MC"] == .text("Praha-Ďáblice") })
        #expect(features.allSatisfy { $0.properties["WKT"] == nil })
        let reference = try gdalReprojection(Fixtures.path("prague/districts.sjtsk-epsg5514.geojson"), dir: dir)
        try expectSameGeometries(features, reference, key: "OBJECTID")
    }

    /// GPX waypoints written by GDAL: of the file's five layers only `waypoints` has features.
    @Test func gpxWaypoints() throws {
        let dir = try Fixtures.temporaryDirectory("gpx")
        let gpx = dir.appendingPathComponent("pens.gpx").path
        try ogr2ogr(["-f", "GPX", gpx, Fixtures.path("zoo/pavilions-and-pens.geojson"), "-where", "OGR_GEOMETRY = 'POINT'", "-select", "name", "-nlt", "POINT"])
        let (store, _) = try freshStore()
        let report = try Importer.importFile(gpx, into: store, options: ImportOptions(layer: "pens"), formats: Self.formats)
        #expect(report.format == .gpx)
        #expect(report.featureCount == 77)
        #expect(report.geometryType == "POINT")
        let features = try store.features(of: "pens").map(\.feature)
        let original = try GeoJSON.parseDocument([UInt8](try Data(contentsOf: Fixtures.url("zoo/pavilions-and-pens.geojson"))))
            .features.filter { if case .point? = $0.geometry { true } else { false } }
        #expect(original.count == 77)
        // GPX keeps 9 decimals (0.1 mm): every waypoint within 1 mm of its point.
        for (ours, theirs) in zip(features, original) {
            #expect(ours.properties["name"] == theirs.properties["name"])
            let (a, b) = (try #require(ours.geometry), try #require(theirs.geometry))
            #expect(maxDifferenceInMetres(a, b) < 0.001)
        }
    }

    /// The Estonia case: longitude/latitude wrongly declared as EPSG:5514 would land at the
    /// Krovak origin; the layer is refused in one line, and imported under --force.
    @Test func layerOutsideItsCRSAreaOfUseIsRefused() throws {
        let dir = try Fixtures.temporaryDirectory("estonia")
        let path = dir.appendingPathComponent("districts.geojson").path
        var text = try String(contentsOfFile: Fixtures.path("prague/districts.wgs84.geojson"), encoding: .utf8)
        let range = try #require(text.range(of: "\"features\""))
        text.replaceSubrange(range, with: "\"crs\": { \"type\": \"name\", \"properties\": { \"name\": \"EPSG:5514\" } }, \"features\"")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let (store, _) = try freshStore()
        let error = importError(path, into: store, ImportOptions(layer: "districts"))
        #expect(error == """
            import of districts.geojson failed; the store is unchanged:
              - 57 of 57 features land outside the area of use of EPSG:5514 (S-JTSK / Krovak East North): 12.09° E…22.56° E, 47.73° N…51.06° N \
            (feature 0 at (14.456427 50.137023) lands at (24.830324 59.756264)); the coordinates look like longitude/latitude: \
            pass --crs EPSG:4326, or --force to import anyway
            """)
        #expect(try store.layerNames().isEmpty)
        let forced = try Importer.importFile(path, into: store, options: ImportOptions(layer: "districts", force: true), formats: Self.formats)
        #expect(forced.featureCount == 57)
    }

    /// S-JTSK metres in a GeoJSON without a `crs` member: one line naming EPSG:5514, not 57.
    @Test func projectedMetresWithoutCRSNameTheLikelyCRS() throws {
        let dir = try Fixtures.temporaryDirectory("metres")
        let path = dir.appendingPathComponent("districts.geojson").path
        try ogr2ogr(["-f", "GeoJSON", path, Fixtures.path("prague/districts.sjtsk-epsg5514.geojson"), "-a_srs", "EPSG:5514", "-lco", "WRITE_NAME=NO"])
        // GDAL writes the crs member; drop it, as files in the wild do.
        var text = try String(contentsOfFile: path, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.contains("\"crs\"") }
        text = lines.joined(separator: "\n")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let (store, _) = try freshStore()
        let error = importError(path, into: store, ImportOptions(layer: "districts"))
        #expect(error == """
            import of districts.geojson failed; the store is unchanged:
              - 57 of 57 features are not longitude/latitude (feature 0 at (-733714 -1035864)); the file names no CRS, \
            and these look like metres in EPSG:5514 (S-JTSK / Krovak East North): pass --crs EPSG:5514
            """)
        // Web Mercator metres are told apart from S-JTSK ones.
        let mercator = dir.appendingPathComponent("mercator.geojson").path
        try ogr2ogr(["-f", "GeoJSON", mercator, Fixtures.path("prague/districts.wgs84.geojson"), "-t_srs", "EPSG:3857"])
        var mercatorText = try String(contentsOfFile: mercator, encoding: .utf8)
        mercatorText = mercatorText.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.contains("\"crs\"") }.joined(separator: "\n")
        try mercatorText.write(toFile: mercator, atomically: true, encoding: .utf8)
        #expect(importError(mercator, into: store, ImportOptions(layer: "districts")).contains("look like metres in EPSG:3857 (WGS 84 / Pseudo-Mercator): pass --crs EPSG:3857"))
    }

    /// A FeatureCollection is GeoJSON whatever its header says: GDAL writes `"name": "roads"`,
    /// and Vltava's own export of the animals has `latin_name` in every row.
    @Test func formatsAreSniffedByStructure() throws {
        let dir = try Fixtures.temporaryDirectory("sniff")
        let roads = dir.appendingPathComponent("roads.json").path
        try ogr2ogr(["-f", "GeoJSON", roads, Fixtures.path("prague/districts.wgs84.geojson"), "-nln", "roads"])
        #expect(try String(contentsOfFile: roads, encoding: .utf8).contains("\"name\": \"roads\""))
        let (store, _) = try freshStore()
        let report = try Importer.importFile(roads, into: store, options: ImportOptions(layer: "roads"), formats: Self.formats)
        #expect(report.format == .geojson)
        #expect(report.featureCount == 57)

        // The zoo's own files are still told by their structure.
        let animals = try Importer.importFile(Fixtures.path("zoo/animals.json"), into: store, options: ImportOptions(layer: "animals"), formats: Self.formats)
        #expect(animals.format == .zooAnimals)
        let paths = try Importer.importFile(Fixtures.path("zoo/paths-graph.json"), into: store, options: ImportOptions(layer: "paths"), formats: Self.formats)
        #expect(paths.format == .zooPaths)

        // Vltava's export of the animal table (a FeatureCollection without geometries) comes back.
        let exported = dir.appendingPathComponent("animals-export.json").path
        let rows = try store.features(of: "animals")
        try JSON.serialize(GeoJSON.featureCollection(rows.map(\.feature))).write(toFile: exported, atomically: true, encoding: .utf8)
        let again = try Importer.importFile(exported, into: store, options: ImportOptions(layer: "animals_again"), formats: Self.formats)
        #expect(again.format == .geojson)
        #expect(again.kind == .attributes)
        #expect(again.featureCount == 605)
        let reimported = try store.features(of: "animals_again")
        #expect(reimported.map(\.fid) == rows.map(\.fid))
        #expect(reimported.first?.feature.properties["latin_name"] == rows.first?.feature.properties["latin_name"])
    }

    /// A file Vltava cannot import is named: a GeoTIFF is a raster, a PDF is a PDF.
    @Test func unsupportedFormatsAreNamed() throws {
        let dir = try Fixtures.temporaryDirectory("unsupported")
        let tif = dir.appendingPathComponent("dem.tif").path
        let result = try Fixtures.run(URL(fileURLWithPath: "/usr/bin/env"), ["gdal_create", "-of", "GTiff", "-outsize", "4", "4", "-bands", "1", "-a_srs", "EPSG:5514", "-a_ullr", "-750000", "-1040000", "-740000", "-1050000", tif])
        #expect(result.status == 0, "\(result.stderr)")
        let (store, _) = try freshStore()
        let error = importError(tif, into: store, ImportOptions(layer: "dem"))
        #expect(error.hasPrefix("cannot import \(tif): the file is GeoTIFF (GDAL driver GTiff), a raster format; Vltava imports vector data; formats: geojson, csv,"), "\(error)")
        let pdf = dir.appendingPathComponent("map.pdf").path
        try Data("%PDF-1.7\n%\u{e2}\u{e3}".utf8).write(to: URL(fileURLWithPath: pdf))
        #expect(importError(pdf, into: store, ImportOptions(layer: "map")).hasPrefix("cannot import \(pdf): the file is a PDF document, which Vltava does not import"))
    }

    /// A CSV as Czech Excel writes it: `;` between cells, decimal commas, Czech column names.
    @Test func czechCSV() throws {
        let dir = try Fixtures.temporaryDirectory("czech-csv")
        let path = dir.appendingPathComponent("body.csv").path
        try """
            název;zem. šířka;zem. délka;výška
            Staroměstské náměstí;50,087451;14,421254;190,5
            Petřín;50,083469;14,395013;327
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let (store, _) = try freshStore()
        let report = try Importer.importFile(path, into: store, options: ImportOptions(layer: "body"), formats: Self.formats)
        #expect(report.featureCount == 2)
        let features = try store.features(of: "body").map(\.feature)
        #expect(features[0].geometry == .point(Point(lon: 14.421254, lat: 50.087451)))
        #expect(features[0].properties["název"] == .text("Staroměstské náměstí"))
        #expect(features[0].properties["výška"] == .real(190.5))
        #expect(features[1].properties["výška"] == .real(327))
        #expect(features[0].properties["zem. šířka"] == nil)
    }

    /// Validation runs in one slice per core: problems still come in file order, and every
    /// slice's features are stored.
    @Test func largeFilesAreCheckedInSlicesInFileOrder() throws {
        let dir = try Fixtures.temporaryDirectory("slices")
        let path = dir.appendingPathComponent("points.csv").path
        var rows = ["id,lon,lat"]
        for i in 0..<6_000 { rows.append("\(i),\(14 + Double(i) / 10_000),\(50 + Double(i) / 20_000)") }
        try rows.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        let (store, _) = try freshStore()
        let report = try Importer.importFile(path, into: store, options: ImportOptions(layer: "points"), formats: Self.formats)
        #expect(report.featureCount == 6_000)
        let stored = try store.features(of: "points").map(\.feature)
        #expect(stored[5_999].geometry == .point(Point(lon: 14.5999, lat: 50.29995)))
        #expect(stored[2_999].properties["id"] == .integer(2_999))

        rows[11] = "10,14.001,95.5"
        rows[5_991] = "5990,14.5990,-97"
        try rows.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        #expect(importError(path, into: store, ImportOptions(layer: "bad")) == """
            import of points.csv failed; the store is unchanged:
              - line 12: latitude 95.5 is outside -90…90 — did you swap longitude and latitude?
              - line 5992: latitude -97 is outside -90…90 — did you swap longitude and latitude?
            """)
    }

    /// A layer of 25,000 features is read in one slice per core, each through its own GDAL
    /// handle: every feature arrives once, in the file's order, with its attributes.
    @Test func largeShapefilesAreReadInSlicesInFileOrder() throws {
        let dir = try Fixtures.temporaryDirectory("big-shp")
        let csv = dir.appendingPathComponent("points.csv").path
        var rows = ["id,name,lon,lat"]
        for i in 0..<25_000 { rows.append("\(i),bod \(i),\(14 + Double(i) / 100_000),\(50 + Double(i) / 200_000)") }
        try rows.joined(separator: "\n").write(toFile: csv, atomically: true, encoding: .utf8)
        let shp = dir.appendingPathComponent("points.shp").path
        try ogr2ogr(["-f", "ESRI Shapefile", shp, csv, "-oo", "X_POSSIBLE_NAMES=lon", "-oo", "Y_POSSIBLE_NAMES=lat", "-oo", "AUTODETECT_TYPE=YES", "-a_srs", "EPSG:4326"])
        let (store, _) = try freshStore()
        let report = try Importer.importFile(shp, into: store, options: ImportOptions(layer: "points"), formats: Self.formats)
        #expect(report.featureCount == 25_000)
        let features = try store.features(of: "points").map(\.feature)
        #expect(features.map { $0.properties["id"] } == (0..<25_000).map { .integer(Int64($0)) })
        #expect(features[12_345].properties["name"] == .text("bod 12345"))
        #expect(features[24_999].geometry == .point(Point(lon: 14.24999, lat: 50.124995)))
    }

    // MARK: - Helpers

    func ogr2ogr(_ arguments: [String]) throws {
        let result = try Fixtures.run(URL(fileURLWithPath: "/usr/bin/env"), ["ogr2ogr"] + arguments, timeout: 60)
        #expect(result.status == 0, "ogr2ogr \(arguments.joined(separator: " ")): \(result.stderr)")
    }

    /// GDAL's own reading of the file, reprojected by GDAL to EPSG:4326, as GeoJSON features.
    func gdalReprojection(_ path: String, dir: URL, layer: String? = nil) throws -> [Feature] {
        let out = dir.appendingPathComponent("reference-\(UUID().uuidString).geojson").path
        try ogr2ogr(["-f", "GeoJSON", "-t_srs", "EPSG:4326", "-lco", "COORDINATE_PRECISION=15", out, path] + (layer.map { [$0] } ?? []))
        return try GeoJSON.parseDocument([UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))).features
    }

    func gdalFeatureCount(_ path: String, layer: String) throws -> Int {
        let result = try Fixtures.run(URL(fileURLWithPath: "/usr/bin/env"), ["ogrinfo", "-ro", "-so", path, layer], timeout: 60)
        let line = result.stdout.split(separator: "\n").first { $0.hasPrefix("Feature Count: ") }
        return Int(line?.dropFirst("Feature Count: ".count) ?? "") ?? -1
    }

    /// Every feature's geometry within 1 mm of GDAL's, matched by an id attribute.
    func expectSameGeometries(_ ours: [Feature], _ reference: [Feature], key: String) throws {
        #expect(ours.count == reference.count)
        let byKey = Dictionary(reference.map { ($0.properties[key], $0) }, uniquingKeysWith: { a, _ in a })
        var worst = 0.0
        for feature in ours {
            let theirs = try #require(byKey[feature.properties[key]], "no reference feature for \(key) \(String(describing: feature.properties[key]))")
            worst = max(worst, maxDifferenceInMetres(try #require(feature.geometry), try #require(theirs.geometry)))
        }
        #expect(worst < 0.001, "worst difference from GDAL \(worst) m")
    }

    /// The largest distance between corresponding vertices, in metres (equirectangular: exact
    /// enough at millimetres).
    func maxDifferenceInMetres(_ a: Geometry, _ b: Geometry) -> Double {
        var arraysA: [[Double]] = [], arraysB: [[Double]] = []
        a.forEachCoordinateArray { arraysA.append($0) }
        b.forEachCoordinateArray { arraysB.append($0) }
        guard arraysA.count == arraysB.count else { return .infinity }
        var worst = 0.0
        for (x, y) in zip(arraysA, arraysB) {
            guard x.count == y.count else { return .infinity }
            var i = 0
            while i + 1 < x.count {
                let metresPerDegree = 6_371_008.8 * Double.pi / 180
                let dx = (x[i] - y[i]) * metresPerDegree * cos(y[i + 1] * Double.pi / 180)
                let dy = (x[i + 1] - y[i + 1]) * metresPerDegree
                worst = max(worst, (dx * dx + dy * dy).squareRoot())
                i += 2
            }
        }
        return worst
    }

    func importError(_ path: String, into store: GeoPackage, _ options: ImportOptions) -> String {
        do {
            _ = try Importer.importFile(path, into: store, options: options, formats: Self.formats)
            return "the import succeeded"
        } catch {
            return "\(error)"
        }
    }

    func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
