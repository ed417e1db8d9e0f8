import Engine
import Foundation
import Store
import TestSupport

/// The demo store, built from Fixtures/ the way scripts/build-demo-store.sh builds it, once for
/// all query-language tests.
enum QueryStore {
    static let snapshot: Result<Snapshot, any Error> = Result {
        let path = try Fixtures.temporaryDirectory("query").appendingPathComponent("demo.gpkg").path
        let store = try GeoPackage(path: path, mode: .readWrite)
        func load(_ fixture: String, _ layer: String, _ configure: (inout ImportOptions) -> Void = { _ in }) throws {
            var options = ImportOptions(layer: layer)
            configure(&options)
            _ = try Importer.importFile(Fixtures.path(fixture), into: store, options: options)
        }
        try load("prague/districts.wgs84.geojson", "districts")
        try load("prague/districts.sjtsk-epsg5514.geojson", "districts_sjtsk")
        try load("prague/parking-zones.wgs84.geojson", "parking")
        try load("air/stations-prague.csv", "stations")
        try load("air/observations-2019-04-15-16.csv", "observations") { $0.timeSeriesOf = "stations" }
        try load("zoo/pavilions-and-pens.geojson", "pavilions") { $0.only = .polygon }
        try load("zoo/pavilions-and-pens.geojson", "pens") { $0.only = .point }
        try load("zoo/animals.json", "animals")
        try load("zoo/paths-graph.json", "paths")
        try store.registerTileSet(name: "zoo_map", path: Fixtures.path("zoo/zoo-prague-geojson-tiles.mbtiles"), replace: false)
        return try Snapshot.load(storePath: path)
    }

    static func get() throws -> Snapshot { try snapshot.get() }
}
