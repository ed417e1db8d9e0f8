import Foundation
import Geometry
import Store
import TestSupport
import Testing
import ZooPraha

/// Imports a fixture with the store's formats and Zoo Praha's, as the CLI does.
@discardableResult
func importZooFixture(_ fixture: String, as layer: String, into store: GeoPackage, _ configure: (inout ImportOptions) -> Void = { _ in }) throws -> ImportReport {
    var options = ImportOptions(layer: layer)
    configure(&options)
    return try Importer.importFile(Fixtures.path(fixture), into: store, options: options, formats: ImportFormat.builtIn + ZooPraha.formats)
}

func freshStore() throws -> GeoPackage {
    try GeoPackage(path: Fixtures.temporaryDirectory("zoo").appendingPathComponent("test.gpkg").path, mode: .readWrite)
}

@Suite(.validatesStores) struct ZooPrahaImportTests {
    @Test func zooAnimalsLinkToPensAndPavilions() throws {
        let store = try freshStore()
        try importZooFixture("zoo/animals.json", as: "animals", into: store)
        let info = try store.layer("animals")
        #expect(info.kind == .attributes)
        #expect(info.featureCount == 605)
        #expect(info.columns.map(\.name).contains("class"))
        let adax = try #require(try store.features(of: "animals").first { $0.fid == 3 })
        #expect(adax.feature.properties["name"] == .text("Adax"))
        #expect(adax.feature.properties["class"] == .text("Savci"))
        #expect(adax.feature.properties["location_ids"] == .json("[4638766183]"))
    }

    @Test func zooPathsBecomeALineLayer() throws {
        let store = try freshStore()
        let report = try importZooFixture("zoo/paths-graph.json", as: "paths", into: store)
        #expect(report.format == .zooPaths)
        #expect(report.featureCount == 892)
        #expect(try store.layer("paths").geometryType == "LINESTRING")
        let road = try #require(try store.features(of: "paths").first { $0.fid == 659327047 })
        #expect(road.feature.properties["kind"] == .text("path"))
        guard case .json(let ids)? = road.feature.properties["node_ids"] else { Issue.record("no node_ids"); return }
        #expect(ids.hasPrefix("[105553969,588485178,"))
    }

    @Test func formatsAreRecognisedFromTheContent() throws {
        let all = ImportFormat.builtIn + ZooPraha.formats
        #expect(all.map(\.name) == ["geojson", "csv", "observations", "shapefile", "gpkg", "flatgeobuf", "gpx", "kml", "gml", "gdal", "zoo-paths", "zoo-animals"])
        #expect(try importZooFixture("zoo/animals.json", as: "animals", into: freshStore()).format == .zooAnimals)
        #expect(try importZooFixture("zoo/pavilions-and-pens.geojson", as: "pens", into: freshStore()).format == .geojson)
        #expect(try importZooFixture("air/stations-prague.csv", as: "stations", into: freshStore()).format == .csv)
        // An explicit format needs no recognising, and the store alone does not read the zoo's.
        var options = ImportOptions(layer: "paths")
        options.format = .zooPaths
        #expect(try Importer.importFile(Fixtures.path("zoo/paths-graph.json"), into: freshStore(), options: options).featureCount == 892)
        do {
            _ = try Importer.importFile(Fixtures.path("zoo/paths-graph.json"), into: freshStore(), options: ImportOptions(layer: "paths"))
            Issue.record("the store read the zoo's paths as GeoJSON")
        } catch {
            #expect("\(error)".hasPrefix("import of paths-graph.json failed; the store is unchanged:"), "\(error)")
        }
    }

    @Test func unknownFilesListEveryFormat() throws {
        let path = try Fixtures.temporaryDirectory("zoo").appendingPathComponent("animals.txt")
        try Data("[]".utf8).write(to: path)
        do {
            _ = try Importer.importFile(path.path, into: freshStore(), options: ImportOptions(layer: "x"), formats: ImportFormat.builtIn + ZooPraha.formats)
            Issue.record("a .txt file was imported")
        } catch {
            #expect("\(error)" == "cannot import \(path.path): the file is JSON, but neither GeoJSON (a root \"type\" such as \"FeatureCollection\") nor another format of: geojson, csv, observations, shapefile, gpkg, flatgeobuf, gpx, kml, gml, gdal, zoo-paths, zoo-animals; pass --format")
        }
    }

    @Test func badZooFilesNameTheProblem() throws {
        let dir = try Fixtures.temporaryDirectory("zoo")
        func failure(_ text: String, _ name: String) throws -> String {
            let url = dir.appendingPathComponent(name)
            try Data(text.utf8).write(to: url)
            do {
                _ = try importZooFixtureAt(url.path)
                return "imported"
            } catch {
                return "\(error)"
            }
        }
        #expect(try failure(#"{"roads": 3}"#, "paths.json") == "import of paths.json failed; the store is unchanged:\n  - expected an object with a \"roads\" array (Zoo Praha paths graph)")
        #expect(try failure(#"{"roads": [{"geometry": {"coordinates": [{"_id": 1, "lon": 14.4}]}}]}"#, "paths.json")
                == "import of paths.json failed; the store is unchanged:\n  - roads[0]: a road node needs _id, lon and lat\n  - roads[0]: a road needs at least two nodes")
        #expect(try failure(#"[{"_id": 1, "latin_name": "Adax nasomaculatus"}]"#, "animals.json")
                == "import of animals.json failed; the store is unchanged:\n  - animals[0]: an animal needs an integer _id and a name")
    }

    func importZooFixtureAt(_ path: String) throws -> ImportReport {
        try Importer.importFile(path, into: freshStore(), options: ImportOptions(layer: "zoo"), formats: ImportFormat.builtIn + ZooPraha.formats)
    }
}
