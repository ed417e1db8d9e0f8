// The engine's operations called directly, without the query language: which district contains
// a point, the nearest stations, a walking route, and the air where you are.
// Run it on the demo store: `swift run TypedOperations demo.gpkg`.

import Support
import Vltava

let engine = try Engine(path: CommandLine.arguments.dropFirst().first ?? "vltava.gpkg")
let oldTown = Point(lon: 14.4208, lat: 50.0880)

// snippet.containing
let snapshot = engine.snapshot
let districts = try snapshot.layer("districts")
for match in try snapshot.containing(districts, at: oldTown) {
    print(districts.properties[match.index]["NAZEV_MC"]?.stringValue ?? "-")  // Praha 1
}
// snippet.end

// snippet.nearest
let stations = try snapshot.layer("stations")
for match in try snapshot.nearest(stations, to: oldTown, k: 3) {
    let code = stations.properties[match.index]["code"]?.stringValue ?? "-"
    // Round as every answer of the engine does: metres to the millimetre.
    print(code, Rounding.metres(match.metres ?? 0))  // AREPA 600.76 …
}
// snippet.end

// snippet.route
let entrance = Point(lon: 14.4109, lat: 50.1167)
let pen = try Query.place("pens WHERE name = 'lachtani'", on: snapshot)
let walk = try snapshot.route(RouteRequest(from: .point(entrance), to: pen), on: snapshot.network("paths"))
print(Rounding.metres(walk.route.metres), Rounding.seconds(walk.route.seconds))  // 110.416 79.5
// snippet.end

// snippet.air
let air = try snapshot.air(at: oldTown, districts: districts)
if let index = air.index {
    print(index.code ?? "-", index.column, index.value)  // AREPA aqi 3.0
}
for reading in air.pollutants {
    print(reading.column, reading.code ?? "-", reading.value, reading.end.iso)
}
// snippet.end

// snippet.locate
let library = try snapshot.venue("wmu_library")
let inside = try snapshot.locate([("b3002", -76), ("b3005", -71), ("b3008", -80)], in: library, options: LocateOptions(k: 5, method: .wknn))
let position = inside.position
print(inside.pointLabel, Rounding.metres(position.x), Rounding.metres(position.y), Rounding.metres(position.spread))  // I07 9.442 6.646 0.689
// snippet.end
