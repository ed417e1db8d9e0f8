import Foundation
import Geometry
import Store
import TestSupport
import Testing
import ZooPraha

/// GeoPackage interoperability with GDAL in both directions.
@Suite(.validatesStores) struct GDALTests {
    /// `Fixtures/gdal/zoo-places.gdal.gpkg` was written by GDAL 3.6.2:
    ///   ogr2ogr -f GPKG zoo-places.gdal.gpkg Fixtures/zoo/pavilions-and-pens.geojson -nln places
    ///   ogr2ogr -f GPKG -update zoo-places.gdal.gpkg Fixtures/prague/districts.sjtsk-epsg5514.geojson \
    ///           -nln districts_sjtsk -where "KOD_MO = 19"
    @Test func readsAGeoPackageThatGDALWrote() throws {
        let store = try GeoPackage(path: Fixtures.path("gdal/zoo-places.gdal.gpkg"))
        #expect(try store.layerNames() == ["districts_sjtsk", "places"])

        let places = try store.layer("places")
        #expect(places.featureCount == 90)
        #expect(places.geometryType == "GEOMETRY")
        #expect(places.columns.map(\.name) == ["name", "is_animal_pen", "is_building", "animals"])
        let features = try store.features(of: "places")
        let gorillas = try #require(features.first { $0.feature.properties["name"] == .text("Pavilon goril") })
        #expect(gorillas.feature.properties["is_building"] == .bool(true))
        let original = try GeoJSON.parseDocument([UInt8](try Data(contentsOf: Fixtures.url("zoo/pavilions-and-pens.geojson"))))
        let originalGorillas = try #require(original.features.first { $0.properties["name"] == .text("Pavilon goril") })
        #expect(maxCoordinateDifference(try #require(gorillas.feature.geometry), try #require(originalGorillas.geometry)) == 0)

        // Stored in S-JTSK: read back in EPSG:4326, matching our own import of the same file.
        let district = try store.layer("districts_sjtsk")
        #expect(district.crs == "EPSG:5514")
        let praha1 = try #require(try store.features(of: "districts_sjtsk").first)
        #expect(praha1.feature.properties["NAZEV_MC"] == .text("Praha 1"))
        let (ours, _) = try freshStore()
        try importFixture("prague/districts.sjtsk-epsg5514.geojson", as: "districts", into: ours)
        let ourPraha1 = try #require(try ours.features(of: "districts").first { $0.feature.properties["NAZEV_MC"] == .text("Praha 1") })
        #expect(maxCoordinateDifference(try #require(praha1.feature.geometry), try #require(ourPraha1.feature.geometry)) < 1e-9)
    }

    /// `ogrinfo` lists the layers and features Vltava writes. CI installs gdal-bin
    /// (scripts/install-deps.sh --test); the test fails loudly if it is missing.
    @Test func gdalReadsWhatVltavaWrites() throws {
        let (store, path) = try freshStore()
        try importFixture("prague/districts.wgs84.geojson", as: "districts", into: store)
        try importFixture("zoo/pavilions-and-pens.geojson", as: "pens", into: store) { $0.only = .point }
        // An attribute table: the zoo's animal lexicon, in its own format (ZooPraha's).
        try importFixture("zoo/animals.json", as: "animals", into: store) { $0.format = .zooAnimals }

        let summary = try run("ogrinfo", ["-ro", "-so", "-al", path])
        let layers = layerBlocks(summary)
        #expect(layers.keys.sorted() == ["animals", "districts", "pens"])
        #expect(layers["districts"]?.contains("Geometry: Polygon\nFeature Count: 57") == true)
        #expect(layers["pens"]?.contains("Geometry: Point\nFeature Count: 77") == true)
        #expect(layers["animals"]?.contains("Geometry: None\nFeature Count: 605") == true)
        #expect(layers["districts"]?.contains("DESCRIPTION=imported from districts.wgs84.geojson") == true)
        #expect(summary.contains("NAZEV_MC: String"))
        #expect(summary.contains("KOD_MO: Integer"))
        #expect(!summary.lowercased().contains("warning"))
        #expect(!summary.contains("ERROR"))

        // A feature read by GDAL has our geometry and attributes.
        let feature = try run("ogrinfo", ["-ro", "-q", path, "pens", "-fid", "4638766183"])
        #expect(feature.contains("name (String) = adaxi"))
        #expect(feature.contains("POINT (14.40667271 50.11784778)"))
    }

    /// `ogrinfo -so -al` output split into one text block per layer, keyed by layer name.
    func layerBlocks(_ summary: String) -> [String: String] {
        var blocks: [String: String] = [:]
        for chunk in summary.components(separatedBy: "Layer name: ").dropFirst() {
            let name = String(chunk.prefix { $0 != "\n" })
            blocks[name] = chunk
        }
        return blocks
    }

    func run(_ tool: String, _ arguments: [String]) throws -> String {
        let result = try Fixtures.run(URL(fileURLWithPath: "/usr/bin/env"), [tool] + arguments)
        #expect(result.status == 0, "\(tool) failed: \(result.stderr)")
        return result.stdout + result.stderr
    }
}
