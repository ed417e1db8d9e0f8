import Foundation
import Support
import TestSupport
import Testing
import Vltava

/// The library as a Swift backend uses it (docs/EMBEDDING.md): only `import Vltava`, on the demo
/// store. Expected values are the ones the engine, language and HTTP tests check, each
/// cross-checked there against a reference (haversine over the CSV, the reference router,
/// the district file's attributes); here they prove the library gives the same answers.
@Suite(.serialized, .validatesStores) struct LibraryTests {
    /// The demo store, built once for the suite.
    static let store: Result<String, any Error> = Result {
        let path = try Fixtures.temporaryDirectory("library").appendingPathComponent("demo.gpkg").path
        try DemoFixtureStore.build(at: path)
        return path
    }

    static func engine() throws -> Engine { try Engine(path: try store.get()) }

    /// The Old Town point of the air-quality app's examples.
    static let oldTown = Point(lon: 14.4208, lat: 50.0880)
    /// The zoo's main entrance, where the routing tests start.
    static let entrance = Point(lon: 14.4109, lat: 50.1167)

    /// A caller's own row type: columns decode by name.
    struct Station: Decodable, Equatable {
        var code: String
        var name: String
        var distance_m: Double
    }

    /// The three stations nearest the Old Town, decoded into `Station`: the order and distances
    /// of the HTTP tests (haversine from the CSV's coordinates: AREPA at 14.42922 50.088066 is
    /// 600.7601 m away, AKALA 1,667.0471 m, ARIEA 1,721.9268 m; Python, R = 6,371,008.8 m).
    @Test func fetchDecodesRowsIntoTheCallersType() throws {
        let engine = try Self.engine()
        let stations = try engine.fetch(Station.self, "FIND stations NEAREST $1 TO $2 RETURN code, name, distance_m", [3, Self.oldTown])
        #expect(stations == [
            Station(code: "AREPA", name: "Praha 1-n. Republiky", distance_m: 600.76),
            Station(code: "AKALA", name: "Praha 8-Karlín", distance_m: 1667.047),
            Station(code: "ARIEA", name: "Praha 2-Riegrovy sady", distance_m: 1721.927),
        ])
        let reference = Geodesy.haversine(lon1: 14.4208, lat1: 50.0880, lon2: 14.42922, lat2: 50.088066)
        #expect(stations.first?.distance_m == Rounding.metres(reference))
    }

    /// Where am I inside the library: LOCATE through `fetch` decodes into the caller's type and
    /// gives the typed operation's answer (the position the IndoorTests brute force checks), with
    /// the strengths bound as parameters.
    struct Inside: Decodable, Equatable {
        var point: String
        var x: Double
        var y: Double
        var spread: Double
    }

    @Test func locateDecodesIntoTheCallersType() throws {
        let engine = try Self.engine()
        let decoded = try engine.fetch(Inside.self, "LOCATE SCAN(b3002 $1, b3005 $2, b3008 $3) IN wmu_library K 5 METHOD wknn", [-76, -71, -80])
        #expect(decoded == [Inside(point: "I07", x: 9.442, y: 6.646, spread: 0.689)])
        let snapshot = engine.snapshot
        let typed = try snapshot.locate([("b3002", -76), ("b3005", -71), ("b3008", -80)], in: snapshot.venue("wmu_library"), options: LocateOptions(k: 5, method: .wknn))
        #expect(decoded.first?.x == Rounding.metres(typed.position.x) && decoded.first?.point == typed.pointLabel)
        #expect(throws: EngineError.unknownVenue("wmu", known: ["wmu_library"])) { try snapshot.venue("wmu") }
    }

    /// The decoded distance is the one every other path gives: the typed operation's metres
    /// rounded by `Rounding.metres`, and the very bytes `Output` (the HTTP API's writer) puts in
    /// `distance_m`.
    @Test func decodedDistanceIsTheOutputPathsValue() throws {
        let engine = try Self.engine()
        try engine.read { snapshot in
            let decoded = try snapshot.fetch(Station.self, "FIND stations NEAREST 1 TO $1 RETURN code, name, distance_m", [Self.oldTown])
            let stations = try snapshot.layer("stations")
            let match = try #require(try snapshot.nearest(stations, to: Self.oldTown, k: 1).first)
            let metres = try #require(match.metres)
            #expect(decoded.first?.distance_m == Rounding.metres(metres))

            var output = JSONWriter()
            Output.match(&output, stations, match, geometry: .none)
            var number = JSONWriter()
            number.number(try #require(decoded.first?.distance_m))
            let text = String(decoding: number.bytes, as: UTF8.self)
            #expect(text == "600.76")
            #expect(String(decoding: output.bytes, as: UTF8.self).contains("\"distance_m\":\(text)"))
        }
    }

    /// One snapshot for several reads: a district and a station from the same version.
    @Test func readAndPositionalParameters() throws {
        let engine = try Self.engine()
        struct District: Decodable, Equatable { var NAZEV_MC: String; var KOD_MC: Int }
        struct Name: Decodable, Equatable { var name: String }
        let (districts, names) = try engine.read { snapshot in
            (try snapshot.fetch(District.self, "FIND districts CONTAINING ? RETURN NAZEV_MC, KOD_MC", [Self.oldTown]),
             try snapshot.fetch(Name.self, "FIND stations WHERE code = ? RETURN name", ["AREPA"]))
        }
        // The CLI and HTTP tests' answer for this point: MČ Praha 1, code 500054.
        #expect(districts == [District(NAZEV_MC: "Praha 1", KOD_MC: 500054)])
        #expect(names == [Name(name: "Praha 1-n. Republiky")])
        // The raw result, before decoding.
        let result = try engine.query("FIND districts CONTAINING ? RETURN NAZEV_MC", [Self.oldTown])
        #expect(result.columns == ["NAZEV_MC"])
        #expect(result.count == 1)
    }

    /// A prepared statement holds text, not a snapshot: it runs before and after a reload, each
    /// time on the snapshot it is given.
    @Test func preparedQueryOutlivesAReload() throws {
        let engine = try Self.engine()
        let prepared = try Query.prepare("FIND stations NEAREST $1 TO $2 RETURN code, name, distance_m")
        #expect(prepared.parameterCount == 2)
        let before = engine.snapshot
        let first = try #require(try prepared.run([1, Self.oldTown], on: before).first).decode(Station.self)
        let reloaded = try engine.reload()
        #expect(reloaded !== before)
        #expect(engine.snapshot === reloaded)
        let second = try #require(try prepared.run([1, Self.oldTown], on: engine.snapshot).first).decode(Station.self)
        #expect(first == [Station(code: "AREPA", name: "Praha 1-n. Republiky", distance_m: 600.76)])
        #expect(second == first)
    }

    @Test func parameterErrors() throws {
        let engine = try Self.engine()
        let text = "FIND stations NEAREST $1 TO $2 RETURN code"
        // Too few values: the first missing one is named, where it stands.
        #expect(throws: QueryError(kind: .invalid, code: "missing_parameter", message: "no value for $2: 1 value was given",
                                   line: 1, column: 29, length: 2, hint: "bind a point to $2")) {
            try engine.query(text, [3])
        }
        // Too many values.
        #expect(throws: QueryError(kind: .invalid, code: "parameter_count", message: "3 values were given, but the text uses 2 parameters",
                                   line: 1, column: 1)) {
            try engine.query(text, [3, Self.oldTown, 5])
        }
        let prepared = try Query.prepare(text)
        #expect(throws: QueryError(kind: .invalid, code: "parameter_count", message: "the statement takes 2 parameters, 1 given",
                                   line: 1, column: 1)) {
            try prepared.run([3], on: engine.snapshot)
        }
        // Text where a point belongs: refused by type, never read as query text.
        #expect(throws: QueryError(kind: .invalid, code: "parameter_type", message: "$2 must be a point, got text",
                                   line: 1, column: 29, length: 2)) {
            try engine.query(text, [3, "POINT(14.4208 50.0880)"])
        }
        // Parameters never stand for names: a layer name given as one is a syntax error.
        do {
            _ = try engine.query("FIND $1 NEAREST 3 TO POINT(14.4208 50.0880)", ["stations"])
            Issue.record("a parameter was taken as a layer name")
        } catch {
            #expect(error.kind == .syntax)
            #expect(error.code == "syntax_error")
            #expect(error.line == 1 && error.column == 6)
        }
    }

    /// Issue 13's injection: a place from outside (a festival event's place) carrying more of a
    /// statement after it. `Query.place` takes one place and nothing else.
    @Test func placeTextCannotCarryClauses() throws {
        let snapshot = try Self.engine().snapshot
        do {
            _ = try Query.place("POINT(14.4109 50.1167) TO POINT(14.4109 50.1167) ON paths --", on: snapshot)
            Issue.record("the place took extra clauses")
        } catch {
            #expect(error.kind == .syntax)
            #expect(error.code == "syntax_error")
            #expect(error.column == 24)  // the TO after the point
        }
        guard case .point(let point) = try Query.place("POINT(14.4109 50.1167)", on: snapshot) else {
            Issue.record("a point place is not a point"); return
        }
        #expect(point == Self.entrance)
    }

    /// The typed operations, without the language.
    @Test func typedOperations() throws {
        let engine = try Self.engine()
        try engine.read { snapshot in
            // Where am I: MČ Praha 1.
            let districts = try snapshot.layer("districts")
            let inside = try snapshot.containing(districts, at: Self.oldTown)
            #expect(inside.count == 1)
            let district = try #require(inside.first)
            #expect(districts.properties[district.index]["NAZEV_MC"]?.stringValue == "Praha 1")
            #expect(districts.properties[district.index]["KOD_MC"]?.doubleValue == 500054)

            // How do I get there: the entrance to the sea lions' pen on foot, 110.416 m (the
            // routing tests' reference Dijkstra gives the same to 0.5 mm).
            let pens = try snapshot.layer("pens")
            let lachtani = try #require((0..<pens.count).first { pens.properties[$0]["name"]?.stringValue == "lachtani" })
            guard case .point(let pen)? = pens.geometries[lachtani] else { Issue.record("the sea lions' pen is not a point"); return }
            let walk = try snapshot.route(RouteRequest(from: .point(Self.entrance), to: .point(pen)), on: snapshot.network("paths"))
            #expect(Rounding.metres(walk.route.metres) == 110.416)
            #expect(walk.network == "paths")
            #expect(walk.profile == .foot)
            // The same walk through the language, with the pen as a parameterised place.
            let routed = try snapshot.query("ROUTE FROM $1 TO pens WHERE name = $2 ON paths", [Self.entrance, "lachtani"])
            struct Answer: Decodable { struct Leg: Decodable { var distance: Double }; var code: String; var routes: [Leg] }
            let answer = try #require(try routed.decode(Answer.self).first)
            #expect(answer.code == "Ok")
            #expect(answer.routes.first?.distance == 110.416)

            // The air where I am: AREPA, 600.76 m away, gives the index (3, "fair") and NO2
            // 32.9 µg/m³ of the fixture's last hour (the HTTP test's /v1/air answer).
            let air = try snapshot.air(at: Self.oldTown, districts: districts)
            let index = try #require(air.index)
            #expect(index.code == "AREPA" && index.column == "aqi" && index.value == 3)
            #expect(Rounding.metres(index.station.metres ?? 0) == 600.76)
            #expect(index.texts.first { $0.column == "aqidescription" }?.value == "fair")
            let no2 = try #require(air.pollutants.first { $0.column == "no2" })
            #expect(no2.code == "AREPA" && no2.value == 32.9)
            #expect(air.observedUntil?.iso == "2019-04-16T21:00:00Z")
            #expect(air.district.map { districts.properties[$0.index]["NAZEV_MC"]?.stringValue } == "Praha 1")
        }
    }

    /// Engine errors carry a stable code.
    /// The write closure: the festival organiser's stages in one batch, read back by the next
    /// statement; a closure that throws writes nothing. Only `import Vltava` is needed.
    @Test func aWriteClosureIsOneBatch() throws {
        let path = try Fixtures.temporaryDirectory("library-write").appendingPathComponent("live.gpkg").path
        let source = try Self.store.get()
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: source + suffix) {
            try FileManager.default.copyItem(atPath: source + suffix, toPath: path + suffix)
        }
        let engine = try Engine(path: path)
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try engine.write { batch in
                batch.create(LayerSchema(name: "stages", geometryType: "POINT", columns: [ColumnInfo(name: "name", type: .text)]))
                throw Refused()
            }
        }
        #expect(engine.snapshot.layerNames.contains("stages") == false)
        let receipt = try engine.write { batch in
            batch.create(LayerSchema(name: "stages", geometryType: "POINT", columns: [ColumnInfo(name: "name", type: .text)]))
            for (name, lon, lat) in [("Main stage", 14.4378, 50.1031), ("Tent", 14.4410, 50.1050)] {
                var properties = Attributes()
                properties["name"] = .text(name)
                batch.insert(Feature(geometry: .point(Point(lon: lon, lat: lat)), properties: properties), into: "stages")
            }
        }
        #expect(receipt.changes.map(\.kind) == [.created, .inserted, .inserted])
        struct Stage: Decodable, Equatable { var name: String; var distance_m: Double }
        // Haversine (R = 6,371,008.8 m) from (14.4400, 50.1040): the tent 132.101 m, the main stage 186.103 m.
        let nearest = try engine.fetch(Stage.self, "FIND stages NEAREST 1 TO POINT(14.4400 50.1040) RETURN name, distance_m")
        #expect(nearest == [Stage(name: "Tent", distance_m: 132.101)])
    }

    @Test func engineErrorsHaveCodes() throws {
        let snapshot = try Self.engine().snapshot
        #expect(throws: EngineError.unknownLayer("station", known: snapshot.layerNames)) { try snapshot.layer("station") }
        #expect(EngineError.unknownLayer("station", known: snapshot.layerNames).code == "unknown_layer")
        #expect(EngineError.unknownLayer("station", known: snapshot.layerNames).description == "unknown layer 'station' — did you mean 'stations'?")
        #expect(throws: EngineError.invalidArgument(parameter: "lat", message: "latitude 150 is outside -90…90 — did you swap longitude and latitude?")) {
            try snapshot.nearest(snapshot.layer("stations"), to: Point(lon: 14.4, lat: 150), k: 1)
        }
        #expect(throws: EngineError.invalidArgument(parameter: "k", message: "must be between 1 and 10000, got 0")) {
            try snapshot.nearest(snapshot.layer("stations"), to: Self.oldTown, k: 0)
        }
        // A store that cannot be opened: nothing is created, and the error says so.
        do throws(EngineError) {
            _ = try Engine(path: "/nonexistent/vltava-library-test.gpkg")
            Issue.record("opened a store that does not exist")
        } catch {
            #expect(error == .store("no such file: /nonexistent/vltava-library-test.gpkg"))
            #expect(error.code == "store_error")
        }
        #expect(!FileManager.default.fileExists(atPath: "/nonexistent/vltava-library-test.gpkg"))
    }
}
