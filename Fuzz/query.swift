// Fuzzes the query language's lexer, parser and planner (Sources/QueryLanguage) against a real
// snapshot: districts, the air-quality stations with their observations (a time series), the
// zoo's pavilions, pens, animals (linked by id lists) and footpaths (a walking network), and the
// zoo's tile set, so names resolve, fields type and WHERE compiles as in the server.
// Statements are planned, never run: running is the Engine's work, fuzzed through its own inputs.
//
// Invariants: every text ends in plans or a QueryError whose line and column lie inside the
// text, and whose rendering (message, source line, caret) does not trap.

import Engine
import Foundation
import Geometry
import QueryLanguage
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

/// Values for bound parameters, one of each kind the grammar takes.
let palette: [QueryValue] = [
    .number(14.4208), .number(50.088), .text("Praha"), .point(Point(lon: 14.4208, lat: 50.088)), .number(3),
    .bool(true), .null, .number(500), .text(""), .number(-1), .number(.infinity), .number(.nan),
]

/// Checks an error's position against the text, and renders it as the CLI does.
func check(_ error: QueryError, in text: String) {
    let lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).count
    guard error.line >= 1, error.line <= max(1, lines), error.column >= 1, !error.message.isEmpty else {
        FuzzSupport.fail("error outside the text (line \(error.line), column \(error.column) of \(lines) lines): \(error)")
    }
    _ = error.rendered(in: text, origin: "fuzz")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
    var parameterCount = 0
    do {
        parameterCount = try Query.prepare(text).parameterCount
    } catch {
        check(error, in: text)
    }
    do {
        _ = try Query.plan(text, on: snapshot)
    } catch {
        check(error, in: text)
    }
    if parameterCount > 0 {
        // The values depend only on the text, so a saved input replays the same run.
        let parameters = (0..<parameterCount).map { palette[($0 + count) % palette.count] }
        do {
            _ = try Query.plan(text, parameters, on: snapshot)
        } catch {
            check(error, in: text)
        }
    }
    do {
        _ = try Query.place(text, on: snapshot)
    } catch {
        check(error, in: text)
    }
    return 0
}
