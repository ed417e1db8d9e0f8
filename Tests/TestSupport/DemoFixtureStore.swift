import Indoor
import Store
import ZooPraha

/// The demo store that scripts/build-demo-store.sh builds with the CLI, built in-process here
/// for the tests of the modules below the CLI.
public enum DemoFixtureStore {
    /// The change feed of a freshly built demo store (and of its push into PostgreSQL): one
    /// `imported` change for each of its nine layers, so a test's first write is change 10.
    public static let importedLayers: Int64 = 9

    public static func build(at path: String) throws {
        let store = try GeoPackage(path: path, mode: .readWrite)
        func load(_ fixture: String, _ layer: String, _ configure: (inout ImportOptions) -> Void = { _ in }) throws {
            var options = ImportOptions(layer: layer)
            configure(&options)
            _ = try Importer.importFile(Fixtures.path(fixture), into: store, options: options, formats: ImportFormat.builtIn + ZooPraha.formats)
        }
        try load("prague/districts.wgs84.geojson", "districts")
        try load("prague/districts.sjtsk-epsg5514.geojson", "districts_sjtsk")
        try load("prague/parking-zones.wgs84.geojson", "parking")
        try load("air/stations-prague.csv", "stations")
        try load("air/observations-2019-04-15-16.csv", "observations") { options in
            options.timeSeriesOf = "stations"
            options.units = airUnits
        }
        try load("zoo/pavilions-and-pens.geojson", "pavilions") { $0.only = .polygon }
        try load("zoo/pavilions-and-pens.geojson", "pens") { $0.only = .point }
        try load("zoo/animals.json", "animals")
        try load("zoo/paths-graph.json", "paths")
        try store.registerTileSet(name: "zoo_map", path: Fixtures.path("zoo/zoo-prague-geojson-tiles.mbtiles"), replace: false)
        _ = try IndoorStore.importSurvey(Fixtures.path("indoor/ble-rssi-wmu-labeled.csv"), into: store, options: wmuLibrary)
    }

    /// The observations' units, as scripts/build-demo-store.sh gives them (and says why).
    public static let airUnits = ["aqi": "1", "no2": "µg/m³", "o3": "µg/m³", "pm10": "µg/m³", "pm10_24": "µg/m³",
                                  "pm2_5": "µg/m³", "so2": "µg/m³", "co": "µg/m³"]

    /// The WMU library's survey as scripts/build-demo-store.sh imports it: labels are grid cells
    /// (letter = column, number = row, cell 1), all on the first floor, no frame on the globe
    /// (the data set gives none).
    public static var wmuLibrary: SurveyOptions {
        var options = SurveyOptions(venue: "wmu_library")
        options.title = "Waldo Library, Western Michigan University"
        options.grid = GridConvention(letters: .column, cellSize: 1)
        options.floor = 1
        options.floors = [Floor(number: 1, name: "first floor")]
        return options
    }
}
