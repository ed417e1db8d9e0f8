// Errors of the library: `QueryError` for statements (with the position of the offending token
// and a stable code), `EngineError` for typed operations (with a stable code).
// Run it on the demo store: `swift run HandlingErrors demo.gpkg`.

import Vltava

let engine = try Engine(path: CommandLine.arguments.dropFirst().first ?? "vltava.gpkg")

// snippet.query
let text = "FIND stations NEAREST $1 TO $2 RETURN code"
do throws(QueryError) {
    _ = try engine.query(text, [3, "50.0880, 14.4208"])
} catch {
    print(error.code, error.kind, error.line, error.column)  // parameter_type invalid 1 29
    print(error.rendered(in: text))
}
// snippet.end

// snippet.engine
do throws(EngineError) {
    _ = try engine.snapshot.nearest(engine.snapshot.layer("station"), to: Point(lon: 14.4208, lat: 50.0880), k: 3)
} catch {
    print(error.code, error.description)  // unknown_layer unknown layer 'station' — did you mean 'stations'?
}
// snippet.end
