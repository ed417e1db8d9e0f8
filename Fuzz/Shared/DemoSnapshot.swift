// The snapshot the query targets run against: districts, the air-quality stations with their
// observations (a time series), the zoo's pavilions, pens, animals (linked by id lists) and
// footpaths (a walking network), and the zoo's tile set.

import Engine
import Store
import ZooPraha

/// Built once per process: a small store from the fixtures, through the importers, as
/// scripts/build-demo-store.sh builds the demo (without the large parking layer and the S-JTSK
/// copy of the districts, which would only slow the start).
let snapshot: Snapshot = {
    let path = FuzzSupport.scratchDirectory("vltava-fuzz-query") + "/demo.gpkg"
    do {
        let store = try GeoPackage(path: path, mode: .readWrite)
        func load(_ fixture: String, _ layer: String, _ configure: (inout ImportOptions) -> Void = { _ in }) throws {
            var options = ImportOptions(layer: layer)
            configure(&options)
            _ = try Importer.importFile(FuzzSupport.fixture(fixture), into: store, options: options, formats: ImportFormat.builtIn + ZooPraha.formats)
        }
        try load("prague/districts.wgs84.geojson", "districts")
        try load("air/stations-prague.csv", "stations")
        try load("air/observations-2019-04-15-16.csv", "observations") { $0.timeSeriesOf = "stations" }
        try load("zoo/pavilions-and-pens.geojson", "pavilions") { $0.only = .polygon }
        try load("zoo/pavilions-and-pens.geojson", "pens") { $0.only = .point }
        try load("zoo/animals.json", "animals")
        try load("zoo/paths-graph.json", "paths")
        try store.registerTileSet(name: "zoo_map", path: FuzzSupport.fixture("zoo/zoo-prague-geojson-tiles.mbtiles"), replace: false)
        return try Snapshot.load(storePath: path)
    } catch {
        FuzzSupport.fail("cannot build the demo store: \(error)")
    }
}()
