// Opens a store, runs a statement with bound parameters, decodes its rows into your own type,
// reads several answers from one snapshot, prepares a statement and reloads.
// Run it on the demo store: `swift run GettingStarted demo.gpkg`.

import Vltava

// snippet.open
let path = CommandLine.arguments.dropFirst().first ?? "vltava.gpkg"
let engine = try Engine(path: path)
// snippet.end

// snippet.fetch
struct Station: Decodable {
    var code: String
    var name: String
    var distance_m: Double
}

let oldTown = Point(lon: 14.4208, lat: 50.0880)
let stations = try engine.fetch(Station.self,
                                "FIND stations NEAREST $1 TO $2 RETURN code, name, distance_m",
                                [3, oldTown])
for station in stations {
    print(station.code, station.name, station.distance_m)  // AREPA Praha 1-n. Republiky 600.76 …
}
// snippet.end

// snippet.read
struct District: Decodable {
    var NAZEV_MC: String
}

let (district, nearest) = try engine.read { snapshot in
    (try snapshot.fetch(District.self, "FIND districts CONTAINING ? RETURN NAZEV_MC", [oldTown]).first,
     try snapshot.fetch(Station.self, "FIND stations NEAREST 1 TO ? RETURN code, name, distance_m", [oldTown]).first)
}
print(district?.NAZEV_MC ?? "-", nearest?.code ?? "-")  // Praha 1 AREPA
// snippet.end

// snippet.prepare
let nearestStations = try Query.prepare("FIND stations NEAREST $1 TO $2 RETURN code, name, distance_m")
for result in try nearestStations.run([1, oldTown], on: engine.snapshot) {
    print(try result.decode(Station.self).map(\.code))  // ["AREPA"]
}
// snippet.end

// snippet.reload
// After an import has changed the store: build a new snapshot and swap it in. Reads already
// running finish on the old one; the prepared statement runs on whichever it is given.
try engine.reload()
print(try nearestStations.run([1, oldTown], on: engine.snapshot).count)  // 1
// snippet.end
