// The PostGIS store against a real PostgreSQL 15 + PostGIS 3: a throwaway cluster on loopback
// (TestSupport/PostgresCluster.swift), the demo store pushed into it once, and every answer
// compared with the GeoPackage store's, which is the reference.

import Dispatch
import Engine
import Foundation
import Geometry
import Live
@testable import PostGIS
import QueryLanguage
import Store
import Support
import TestSupport
import Testing
import Vltava

/// The demo store as a GeoPackage and pushed into the shared cluster, built once.
enum PushedStore {
    static let gpkg: Result<String, any Error> = Result {
        let path = try Fixtures.temporaryDirectory("postgis").appendingPathComponent("demo.gpkg").path
        try DemoFixtureStore.build(at: path)
        return path
    }
    static let pushed: Result<(cluster: PostgresCluster, summary: PostGISStore.PushSummary), any Error> = Result {
        let cluster = try PostgresCluster.shared.get()
        let summary = try PostGISStore.push(geoPackage: try gpkg.get(), to: try PostGISDatabase(cluster.url))
        return (cluster, summary)
    }
    static let embedded: Result<Snapshot, any Error> = Result { try Snapshot.load(storePath: try gpkg.get()) }
    static let postgis: Result<Snapshot, any Error> = Result { try StoreLocation.snapshot(try pushed.get().cluster.url) }

    /// A database of its own in the shared cluster (`name`), with the demo store pushed into it,
    /// for a test that writes, so the other tests' data stays as pushed; returns its URL.
    static func database(_ name: String) throws -> String {
        let cluster = try pushed.get().cluster
        try cluster.psql("CREATE DATABASE \(name)", database: "postgres")
        try cluster.psql("CREATE EXTENSION postgis", database: name)
        let url = "postgresql://\(PostgresCluster.user):\(PostgresCluster.password)@127.0.0.1:\(cluster.port)/\(name)"
        try PostGISStore.push(geoPackage: try gpkg.get(), to: try PostGISDatabase(url))
        return url
    }
    /// The same database with no feature layer loaded that may stay in PostgreSQL (every one
    /// but the paths, a network, and the stations, which have a time series).
    static let kept: Result<Snapshot, any Error> = Result {
        var limits = EngineLimits()
        limits.maxRowsLoadedPerLayer = 0
        return try StoreLocation.snapshot(try pushed.get().cluster.url, limits: limits)
    }
}

/// JSON of one statement's answer, for comparing the two stores byte for byte.
func answer(_ text: String, on snapshot: Snapshot) -> String {
    do {
        return String(decoding: try QueryResult.write(Query.run(text, on: snapshot), geoJSON: false, pretty: false), as: UTF8.self)
    } catch {
        return "error \(error.code): \(error.message)"
    }
}

/// Where `store` answers `statements(lon, lat)` at `points` unlike `reference`, one line each,
/// and how many bytes of answers were compared. Threads of their own: each query waits for
/// PostgreSQL, and waits on the cooperative pool (two threads here) would starve the in-process
/// servers of the other suites.
func mismatches(at points: [(Double, Double)], _ statements: @escaping @Sendable (Double, Double) -> [String],
                on store: Snapshot, as reference: Snapshot) async -> (found: [String], bytes: Int) {
    let found = Locked<[String]>([])
    let counted = Locked(0)
    let chunks = 4
    await onThreadsOfTheirOwn(chunks) { chunk in
        var bytes = 0
        for i in stride(from: chunk, to: points.count, by: chunks) {
            for text in statements(points[i].0, points[i].1) {
                let a = answer(text, on: reference), b = answer(text, on: store)
                if a != b { found.withLock { $0.append("\(text)\n  reference: \(a)\n  store:     \(b)") } }
                bytes += a.count
            }
        }
        counted.withLock { $0 += bytes }
    }
    return (found.withLock { $0 }, counted.withLock { $0 })
}

/// Each statement answers alike on `store` and `reference`, and not with an error.
func expectSameAnswers(_ statements: [String], on store: Snapshot, as reference: Snapshot) {
    for text in statements {
        let a = answer(text, on: store)
        #expect(a == answer(text, on: reference), "\(text)")
        #expect(!a.hasPrefix("error"), "\(text)")
    }
}

/// `here` (every polygon layer at the point, the nearest station's readings) and `air` (the
/// district, the nearest station measuring each pollutant) give the same bytes on both.
func expectSameHereAndAir(at point: Point, on store: Snapshot, as reference: Snapshot) throws {
    func bytes(_ snapshot: Snapshot) throws -> [UInt8] {
        var w = JSONWriter()
        Output.here(&w, try snapshot.here(at: point))
        Output.air(&w, try snapshot.air(at: point, districts: try snapshot.layer("districts")), now: Date(timeIntervalSince1970: 1.6e9))
        return w.bytes
    }
    #expect(try bytes(store) == bytes(reference), "here and air at \(point)")
}

/// `vltava serve --db URL` in a child process on a free loopback port of 55400–55499, and
/// statements posted to its `/v1/query` with curl.
struct ServedStore {
    let port: Int
    let server: ChildProcess

    init(_ url: String, cluster: PostgresCluster, arguments: [String] = []) throws {
        port = try #require((55400...55499).shuffled().first { $0 != cluster.port && PostgresCluster.portIsFree($0) },
                            "no free port in 55400–55499")
        server = try ChildProcess(CLI.binary, ["serve", "--db", url, "--host", "127.0.0.1", "--port", "\(port)"] + arguments)
    }

    /// The HTTP status and body of `GET path`.
    func get(_ path: String) throws -> (status: Int, body: String) {
        let result = try Fixtures.run(URL(fileURLWithPath: "/usr/bin/curl"),
                                      ["-s", "-m", "20", "-o", "-", "-w", "\n%{http_code}", "http://127.0.0.1:\(port)\(path)"])
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    func stop() { server.stop() }

    /// The HTTP status and body of `POST /v1/query` with `statement`.
    func post(_ statement: String) throws -> (status: Int, body: String) {
        let result = try Fixtures.run(URL(fileURLWithPath: "/usr/bin/curl"),
                                      ["-s", "-m", "20", "-o", "-", "-w", "\n%{http_code}", "-X", "POST", "--data-binary",
                                       statement, "http://127.0.0.1:\(port)/v1/query"])
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    /// `post`'s first 200 while the server starts (up to 10 s), or its last answer.
    func firstAnswer(_ post: () throws -> (status: Int, body: String)) throws -> (status: Int, body: String) {
        var answer = (status: 0, body: "")
        for _ in 0..<100 {
            answer = try post()
            if answer.status == 200 { break }
            usleep(100_000)
        }
        return answer
    }
}

@Suite(.enabled(if: PostgresCluster.missing == nil, "\(PostgresCluster.missing ?? "")"), .serialized)
struct PostGISStoreTests {
    @Test func pushCopiesEveryLayerWithItsIndexes() async throws {
        try await onAThreadOfItsOwn {
            let (cluster, summary) = try PushedStore.pushed.get()
            let embedded = try PushedStore.embedded.get(), postgis = try PushedStore.postgis.get()
            #expect(summary.layers.map(\.name).sorted() == embedded.layerNames.sorted())
            #expect(postgis.layerNames == embedded.layerNames)
            for layer in embedded.layers where layer.info.timeSeries == nil {
                let other = try postgis.layer(layer.name)
                #expect(Array(other.fids) == Array(layer.fids), "\(layer.name)")
                #expect(Array(other.properties) == Array(layer.properties), "\(layer.name)")
                #expect(Array(other.geometries) == Array(layer.geometries), "\(layer.name)")
            }
            #expect(try cluster.psql("SELECT count(*) FROM parking") == "1548")
            // GiST on geom and on geom::geography for every feature layer.
            let gist = try cluster.psql("SELECT count(*) FROM pg_indexes WHERE tablename = 'districts' AND indexdef LIKE '%USING gist%'")
            #expect(gist == "2")
            // The time series stays in PostgreSQL: the snapshot holds its metadata, no observation.
            #expect(try cluster.psql("SELECT count(*) FROM observations") == "816")
            let observations = try postgis.layer("observations")
            #expect(observations.count == 0 && observations.storage.rowsInDatabase && observations.rowCount == 816)
            #expect(try embedded.layer("observations").count == 816)
            #expect(postgis.timeSeriesByLayer["stations"]?.keys == [])
            #expect(embedded.timeSeriesByLayer["stations"]?.keys.count == 17)
            #expect(postgis.timeSeriesByLayer["stations"]?.columns == embedded.timeSeriesByLayer["stations"]?.columns)
            // Its indexes: the key, and (key, start, fid) and (key, end) as the engine reads times.
            let indexes = try cluster.psql("SELECT string_agg(indexdef, ' | ' ORDER BY indexdef) FROM pg_indexes WHERE tablename = 'observations'")
            #expect(indexes.contains("(code, vltava_utc(interval_start), fid)") && indexes.contains("(code, vltava_utc(interval_end))"), "\(indexes)")
        }
    }

    /// 10,000 seeded random points over Prague, six statements each, on both stores.
    @Test func equalAnswersAtTenThousandRandomPoints() async throws {
        let embedded = try PushedStore.embedded.get(), postgis = try PushedStore.postgis.get()
        let districts = try embedded.layer("districts").bounds
        var generator = SplitMix(state: 2026)
        let points = (0..<10_000).map { _ in
            (Double.random(in: districts.minLon...districts.maxLon, using: &generator), Double.random(in: districts.minLat...districts.maxLat, using: &generator))
        }
        @Sendable func statements(_ lon: Double, _ lat: Double) -> [String] {
            let p = "POINT(\(lon) \(lat))"
            return ["FIND districts CONTAINING \(p) RETURN fid, NAZEV_MC",
                    "FIND parking CONTAINING \(p) RETURN fid",
                    "FIND stations NEAREST 3 TO \(p) RETURN fid, code, distance_m",
                    "FIND stations NEAREST 3 TO \(p) WHERE MEASURES(so2) RETURN code, distance_m, LATEST(so2), OBSERVED_AT",
                    "FIND parking WITHIN 500 m OF \(p) RETURN fid, distance_m"]
        }
        let (found, bytes) = await mismatches(at: points, statements, on: postgis, as: embedded)
        #expect(found.isEmpty, "\(found.count) mismatches, first: \(found.prefix(3).joined(separator: "\n"))")
        #expect(bytes > 1_000_000)
        // NEAREST on polygons, within a distance, at every tenth point (polygon distances are
        // the costliest SQL here).
        for i in stride(from: 0, to: points.count, by: 10) {
            let text = "FIND parking NEAREST 3 TO POINT(\(points[i].0) \(points[i].1)) WITHIN 2000 m RETURN fid, distance_m"
            let a = answer(text, on: embedded), b = answer(text, on: postgis)
            #expect(a == b, "\(text)")
            if a != b { break }
        }
        // The time-series functions on their own, and the WHERE forms that compile to SQL.
        let statements = ["FIND stations WHERE MEASURES(so2) RETURN code, LATEST(so2), HISTORY(so2, 3 h)",
                     "FIND stations WHERE FRESH(1 h) ORDER BY code RETURN code, OBSERVED_AT",
                     "FIND stations WHERE NOT FRESH(1 h) RETURN code",
                     "FIND stations NEAREST 3 TO POINT(14.42 50.08) WHERE MEASURES(no2) AND FRESH(3 h) RETURN code, distance_m, LATEST(no2), HISTORY(no2, 2 h)",
                     "FIND parking WHERE fid >= 100 AND fid < 120 OR fid IN (3, 5) ORDER BY fid DESC LIMIT 7 RETURN fid",
                     "FIND districts WHERE NAZEV_MC >= 'Praha 2' AND NAZEV_MC < 'Praha 5' RETURN NAZEV_MC",
                     "FIND districts WHERE NAZEV_MC IS NOT NULL AND NOT NAZEV_MC = 'Praha 1' ORDER BY NAZEV_MC LIMIT 5 RETURN NAZEV_MC",
                     "FIND parking INTERSECTING BBOX(14.40 50.07, 14.43 50.09) RETURN fid",
                     "FIND stations NEAREST 3 TO POINT(14.42 50.09) WHERE code <> 'AREPA' RETURN code, distance_m",
                     // Every column's LATEST (some are missing at the station's newest hour), windows of HISTORY.
                     "FIND stations ORDER BY code RETURN code, OBSERVED_AT, LATEST(aqi), LATEST(no2), LATEST(o3), LATEST(pm10), LATEST(pm10_24), LATEST(pm2_5), LATEST(so2), LATEST(co)",
                     "FIND stations ORDER BY code RETURN code, HISTORY(no2, 1 h), HISTORY(pm2_5, 5 h), HISTORY(aqi, 48 h), HISTORY(so2, 2 h)",
                     "FIND stations WHERE MEASURES(no2) ORDER BY AVG(HISTORY(no2, 24 h)) DESC LIMIT 5 RETURN code, AVG(HISTORY(no2, 24 h)), MAX(HISTORY(no2, 24 h)), COUNT(HISTORY(no2, 24 h))",
                     "FIND stations WHERE MEASURES(no2) RETURN classif, COUNT(*), AVG(MAX(HISTORY(no2, 24 h))) GROUP BY classif",
                     "FIND stations ORDER BY LATEST(pm10) DESC, code LIMIT 4 RETURN code, LATEST(pm10)",
                     "FIND stations WITHIN 3000 m OF POINT(14.42 50.08) RETURN code, distance_m, LATEST(o3), OBSERVED_AT",
                     "FIND stations WHERE code = 'NONE' RETURN code, LATEST(no2)",
                     // Terms SQL cannot check: SQL selects a superset, the engine's predicate decides
                     // (under NOT too, where the superset needs the term as false).
                     "FIND districts WHERE NAZEV_MC ~ 'praha 1' RETURN NAZEV_MC",
                     "FIND districts CONTAINING POINT(14.4208 50.0880) WHERE NAZEV_MC ~ CZECH 'praha' RETURN NAZEV_MC",
                     "FIND stations WHERE LATEST(no2) > 20 RETURN code, LATEST(no2)",
                     "FIND stations WHERE NOT (LATEST(no2) > 20 OR code = 'AREPA') ORDER BY code RETURN code",
                     "FIND stations NEAREST 3 TO POINT(14.42 50.08) WHERE NOT name ~ 'praha' RETURN code, distance_m",
                     "FIND stations WHERE (districts CONTAINING).NAZEV_MC = 'Praha 1' OR MEASURES(so2) RETURN code",
                     "FIND parking WITHIN 800 m OF POINT(14.42 50.08) WHERE NOT (fid < 300 OR layer = 'parking') LIMIT 5 RETURN fid, distance_m",
                     "FIND parking WITHIN 800 m OF POINT(14.42 50.08) WHERE NOT (fid < 300 OR layer = 'x') LIMIT 5 RETURN fid, distance_m",
                     // Another layer's series through a feature reference (read for every station at once).
                     "FIND districts ORDER BY fid LIMIT 8 RETURN NAZEV_MC, (stations NEAREST).code, (stations NEAREST).LATEST(no2), (stations NEAREST).HISTORY(o3, 3 h), (stations NEAREST WHERE MEASURES(so2)).OBSERVED_AT"]
        expectSameAnswers(statements, on: postgis, as: embedded)
        // The engine's own answers that read the series: here, air, and a station's readings.
        for i in stride(from: 0, to: points.count, by: 100) {
            let point = Point(lon: points[i].0, lat: points[i].1)
            try expectSameHereAndAir(at: point, on: postgis, as: embedded)
            // /v1/layers/stations/nearest?where=so2: MEASURES outside SQL, and the stations' readings.
            func nearest(_ snapshot: Snapshot) throws -> [UInt8] {
                let layer = try snapshot.layer("stations"), stations = try #require(snapshot.stations)
                let filter = try Query.filter(on: layer, in: snapshot, measuring: ["so2"], equal: [])
                let matches = try snapshot.nearest(layer, to: point, k: 3, filter: filter)
                var w = JSONWriter()
                for (match, reading) in zip(matches, try snapshot.readings(stations, matches)) { Output.match(&w, layer, match, geometry: .none, reading: reading) }
                return w.bytes
            }
            #expect(try nearest(embedded) == nearest(postgis), "nearest stations measuring so2 at \(point)")
        }
    }

    /// The series is read per answer: a row inserted with psql changes LATEST, HISTORY and
    /// OBSERVED_AT on the same snapshot (no reload), and a station code that carries SQL is only
    /// ever a bound value.
    @Test func theSeriesIsReadFromPostgreSQLPerAnswer() async throws {
        try await onAThreadOfItsOwn {
            let (cluster, _) = try PushedStore.pushed.get()
            let url = try PushedStore.database("vltava_series")
            let snapshot = try StoreLocation.snapshot(url)
            let text = "FIND stations WHERE code = 'ALEGA' RETURN code, OBSERVED_AT, LATEST(no2), HISTORY(no2, 1 h)"
            let before = answer(text, on: snapshot)
            #expect(before.contains("\"2019-04-16T21:00:00Z\""), "\(before)")
            try cluster.psql("INSERT INTO observations (fid, code, interval_start, interval_end, aqi, no2) VALUES (100001, 'ALEGA', '2019-04-16 21:00:00.0 UTC', '2019-04-16 22:00:00.0 UTC', 2, 12.5)",
                             database: "vltava_series")
            let after = answer(text, on: snapshot)
            #expect(after == #"{"count":1,"rows":[{"code":"ALEGA","observed_at":"2019-04-16T22:00:00Z","latest_no2":12.5,"history_no2_1h":[["2019-04-16T22:00:00Z",12.5]]}]}"#, "\(after)")
            // A zero in an incomplete hour (aqi 0) is missing: LATEST keeps 12.5, OBSERVED_AT moves on.
            try cluster.psql("INSERT INTO observations (fid, code, interval_start, interval_end, aqi, no2) VALUES (100002, 'ALEGA', '2019-04-16T22:00:00Z', '2019-04-16T23:00:00Z', 0, 0)",
                             database: "vltava_series")
            // A row whose time the engine cannot read is no observation, in PostgreSQL too.
            try cluster.psql("INSERT INTO observations (fid, code, interval_start, interval_end, aqi, no2) VALUES (100003, 'ALEGA', '2019-04-17 25:00', '2019-04-17 26:00', 2, 99)",
                             database: "vltava_series")
            #expect(answer("FIND stations WHERE code = 'ALEGA' RETURN OBSERVED_AT, LATEST(no2)", on: snapshot)
                    == #"{"count":1,"rows":[{"observed_at":"2019-04-16T23:00:00Z","latest_no2":12.5}]}"#)
            // The same three rows in a copy of the GeoPackage: LATEST older than the newest hour,
            // an incomplete hour, an unreadable time, and every form reading the series, alike.
            let copy = try Fixtures.temporaryDirectory("postgis-series").appendingPathComponent("demo.gpkg").path
            try FileManager.default.copyItem(atPath: try PushedStore.gpkg.get(), toPath: copy)
            for row in ["(100001, 'ALEGA', '2019-04-16 21:00:00.0 UTC', '2019-04-16 22:00:00.0 UTC', 2, 12.5)",
                        "(100002, 'ALEGA', '2019-04-16T22:00:00Z', '2019-04-16T23:00:00Z', 0, 0)", "(100003, 'ALEGA', '2019-04-17 25:00', '2019-04-17 26:00', 2, 99)"] {
                try RawStoreEdits.execute("INSERT INTO observations (fid, code, interval_start, interval_end, aqi, no2) VALUES \(row)", in: copy)
            }
            let reference = try Snapshot.load(storePath: copy)
            for text in ["FIND stations ORDER BY code RETURN code, OBSERVED_AT, LATEST(aqi), LATEST(no2), LATEST(o3), LATEST(pm10), LATEST(pm10_24), LATEST(pm2_5), LATEST(so2), LATEST(co)",
                         "FIND stations ORDER BY code RETURN code, HISTORY(no2, 1 h), HISTORY(no2, 3 h), HISTORY(aqi, 2 h), AVG(HISTORY(no2, 24 h))",
                         "FIND stations NEAREST 2 TO POINT(14.43 50.07) WHERE MEASURES(no2) AND FRESH(2 h) RETURN code, LATEST(no2), OBSERVED_AT"] {
                #expect(answer(text, on: snapshot) == answer(text, on: reference), "\(text)")
            }
            for point in [Point(lon: 14.43, lat: 50.07), Point(lon: 14.38, lat: 50.09)] {
                var a = JSONWriter(), b = JSONWriter()
                Output.air(&a, try reference.air(at: point), now: Date(timeIntervalSince1970: 1.6e9))
                Output.air(&b, try snapshot.air(at: point), now: Date(timeIntervalSince1970: 1.6e9))
                #expect(a.bytes == b.bytes, "air at \(point)")
            }

            // A station whose code is SQL: its rows are found through the bound JSON array only.
            let hostile = "x'); DROP TABLE observations; --"
            let quoted = hostile.replacingOccurrences(of: "'", with: "''")
            try cluster.psql("INSERT INTO stations (fid, geom, code, name) VALUES (9001, ST_SetSRID(ST_MakePoint(14.3, 50.0), 4326), '\(quoted)', 'Hostile')", database: "vltava_series")
            try cluster.psql("INSERT INTO observations (fid, code, interval_start, interval_end, aqi, no2) VALUES (100004, '\(quoted)', '2019-04-16 20:00:00.0 UTC', '2019-04-16 21:00:00.0 UTC', 1, 7)",
                             database: "vltava_series")
            let reloaded = try StoreLocation.snapshot(url)
            let rows = try Query.run("FIND stations WHERE code = $1 RETURN name, LATEST(no2), OBSERVED_AT", [hostile], on: reloaded)
            #expect(answer("FIND stations WHERE fid = 9001 RETURN name, LATEST(no2), OBSERVED_AT", on: reloaded)
                    == #"{"count":1,"rows":[{"name":"Hostile","latest_no2":7.0,"observed_at":"2019-04-16T21:00:00Z"}]}"#)
            #expect(rows.first?.count == 1)
            let series = try #require(reloaded.timeSeriesByLayer["stations"])
            let statement = Fetch.seriesStatement(series, keys: [hostile], needs: SeriesNeeds(columns: ["no2"], historyHours: 3))
            #expect(!statement.sql.contains("DROP") && !statement.sql.contains("x'"))
            #expect(statement.parameters == [.text(#"["x'); DROP TABLE observations; --"]"#), .integer(10800)])
            #expect(try cluster.psql("SELECT count(*) FROM observations", database: "vltava_series") == "820")
        }
    }

    /// vltava_utc (SQL) reads a time exactly as UTCTime.parse (the engine) does, NULL where it gives nil.
    @Test func theSQLTimeParserIsTheEngines() async throws {
        try await onAThreadOfItsOwn {
            let (cluster, _) = try PushedStore.pushed.get()
            var texts = ["2019-04-14 21:00:00.0 UTC", "2019-04-14T21:00:00Z", "2019-04-14 21:00", "2019-04-14T21:00+00:00", "2019-04-14 21:00:00+0000",
                         " \t2019-04-14 21:00:00UTC\t ", "2019-04-14 21:00:00 Z", "2019-04-14 21:00:00.", "2019-04-14 21:00:", "2019-02-29 00:00",
                         "2020-02-29 23:59:59.999999", "1900-02-29 00:00", "2000-02-29 00:00", "0000-01-01 00:00", "0000-03-01 00:00", "9999-12-31 23:59:59",
                         "2019-13-01 00:00", "2019-04-31 00:00", "2019-04-14 24:00", "2019-04-14 23:60", "2019-04-14 23:59:60", "2019-04-14 21:00:00+02:00",
                         "2019-04-14", "", "2019/04/14 21:00", "2019-04-14 21:00:00UTCZ", "1969-12-31 23:59:59Z", "2019-04-14x21:00", "٢٠١٩-04-14 21:00"]
            var generator = SplitMix(state: 7)
            let alphabet = Array("0123456789 -:T.ZU+x")
            for _ in 0..<300 {
                var characters = Array("2019-04-14 21:00:00.0 UTC")
                for _ in 0..<Int.random(in: 1...3, using: &generator) {
                    let at = Int.random(in: 0..<characters.count, using: &generator)
                    switch Int.random(in: 0..<3, using: &generator) {
                    case 0: characters[at] = alphabet[Int.random(in: 0..<alphabet.count, using: &generator)]
                    case 1: characters.remove(at: at)
                    default: characters.insert(alphabet[Int.random(in: 0..<alphabet.count, using: &generator)], at: at)
                    }
                }
                texts.append(String(characters))
            }
            let values = texts.map { "('" + $0.replacingOccurrences(of: "'", with: "''") + "')" }.joined(separator: ", ")
            let output = try cluster.psql("SELECT coalesce(vltava_utc(t)::text, 'null') FROM (VALUES \(values)) AS v(t)")
            let sql = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let engine = texts.map { UTCTime.parse($0).map { String($0.seconds) } ?? "null" }
            #expect(sql == engine)
            #expect(engine.filter { $0 != "null" }.count > 15 && engine.filter { $0 == "null" }.count > 100, "\(engine.filter { $0 != "null" }.count)")
        }
    }

    @Test func sqlInStatementTextIsOnlyEverABoundValue() async throws {
        try await onAThreadOfItsOwn {
            let (cluster, _) = try PushedStore.pushed.get()
            let postgis = try PushedStore.postgis.get(), embedded = try PushedStore.embedded.get()
            let hostile = "x'; DROP TABLE districts; --"
            let quoted = hostile.replacingOccurrences(of: "'", with: "''")
            for text in ["FIND districts WHERE NAZEV_MC = '\(quoted)' RETURN fid",
                         "FIND districts WHERE NAZEV_MC IN ('Praha 1', '\(quoted)') RETURN NAZEV_MC"] {
                #expect(answer(text, on: postgis) == answer(text, on: embedded))
            }
            let bound = try Query.run("FIND districts WHERE NAZEV_MC = $1 OR NAZEV_MC = $2 RETURN NAZEV_MC", [hostile, "Praha 1"], on: postgis)
            #expect(bound.first?.count == 1)
            // `~` and `~ CZECH` take a bound value too, and answer as the text written in: in
            // the snapshot, and on a layer kept in PostgreSQL, whose pushed-down WHERE relaxes
            // a `~` term and checks it on the rows fetched.
            let kept = try PushedStore.kept.get()
            for (bound, written, value) in [("NAZEV_MC ~ $1", "NAZEV_MC ~ 'praha 1'", "praha 1"), ("NAZEV_MC ~ CZECH $1", "NAZEV_MC ~ CZECH 'prahy 1'", "prahy 1"),
                                            ("NAZEV_MC ~ $1", "NAZEV_MC ~ '\(quoted)'", hostile)] {
                let expected = answer("FIND districts WHERE \(written) RETURN NAZEV_MC", on: embedded)
                #expect(expected.contains("Praha 1") == (value != hostile), "\(expected)")
                for store in [postgis, kept] {
                    let results = try Query.run("FIND districts WHERE \(bound) RETURN NAZEV_MC", [value], on: store)
                    #expect(String(decoding: try QueryResult.write(results, geoJSON: false, pretty: false), as: UTF8.self) == expected, "\(bound) \(value)")
                }
            }
            #expect(try cluster.psql("SELECT count(*) FROM districts") == "\(try embedded.layer("districts").count)")
        }
    }

    /// Layers kept in PostgreSQL (none loaded that may stay there): the snapshot holds none of
    /// their rows, and every answer on them, fetched per answer, is the GeoPackage's.
    @Test func layersKeptInPostgreSQLAnswerAsLoadedOnes() async throws {
        let embedded = try PushedStore.embedded.get(), kept = try PushedStore.kept.get()
        var keptNames: [String] = []
        for layer in embedded.layers {
            let other = try kept.layer(layer.name)
            #expect(other.family == layer.family && other.rowCount == layer.rowCount, "\(layer.name)")
            if other.storage == .database {
                keptNames.append(layer.name)
                #expect(other.count == 0)
            }
        }
        #expect(keptNames == ["districts", "districts_sjtsk", "parking", "pavilions", "pens"])
        #expect(try kept.layer("paths").count == embedded.layer("paths").count && kept.layer("stations").count == 17)
        #expect(answer("SHOW LAYERS", on: kept) == answer("SHOW LAYERS", on: try PushedStore.postgis.get()))

        let districts = try embedded.layer("districts").bounds
        var generator = SplitMix(state: 2027)
        let points = (0..<1_000).map { _ in
            (Double.random(in: districts.minLon...districts.maxLon, using: &generator), Double.random(in: districts.minLat...districts.maxLat, using: &generator))
        }
        let (found, _) = await mismatches(at: points, { lon, lat in
            let p = "POINT(\(lon) \(lat))"
            return ["FIND districts CONTAINING \(p) RETURN fid, NAZEV_MC, KOD_MC",
                    "FIND parking CONTAINING \(p) RETURN fid",
                    "FIND parking WITHIN 500 m OF \(p) RETURN fid, distance_m",
                    "FIND pavilions NEAREST 3 TO \(p) RETURN fid, distance_m",
                    "FIND districts, parking CONTAINING \(p) RETURN layer, fid"]
        }, on: kept, as: embedded)
        #expect(found.isEmpty, "\(found.count) mismatches, first: \(found.prefix(3).joined(separator: "\n"))")
        // At every tenth point: polygons nearest within a distance, WITHIN and NEAREST with a WHERE.
        let (others, _) = await mismatches(at: stride(from: 0, to: points.count, by: 10).map { points[$0] }, { lon, lat in
            let p = "POINT(\(lon) \(lat))"
            return ["FIND parking NEAREST 3 TO \(p) WITHIN 2000 m RETURN fid, distance_m",
                    "FIND parking WITHIN 1500 m OF \(p) WHERE fid > 200 LIMIT 4 RETURN fid, distance_m",
                    "FIND districts NEAREST 2 TO \(p) WHERE NAZEV_MC <> 'Praha 1' RETURN NAZEV_MC, distance_m"]
        }, on: kept, as: embedded)
        #expect(others.isEmpty, "\(others.count) mismatches, first: \(others.prefix(3).joined(separator: "\n"))")

        try await onAThreadOfItsOwn {
            expectSameAnswers(["FIND parking WHERE fid >= 100 AND fid < 120 OR fid IN (3, 5) ORDER BY fid DESC LIMIT 7 RETURN fid",
                               "FIND districts WHERE NAZEV_MC >= 'Praha 2' AND NAZEV_MC < 'Praha 5' ORDER BY NAZEV_MC RETURN NAZEV_MC",
                               "FIND parking INTERSECTING BBOX(14.40 50.07, 14.43 50.09) RETURN fid",
                               "FIND parking INTERSECTING BBOX(14.40 50.07, 14.43 50.09) LIMIT 5 RETURN fid",
                               "FIND districts RETURN COUNT(*), MIN(NAZEV_MC)",
                               "FIND pens NEAREST 2 TO POINT(14.4065 50.1170) RETURN *",
                               "FIND pavilions ORDER BY fid DESC LIMIT 3",
                               "FIND districts CONTAINING POINT(14.4208 50.0880) RETURN NAZEV_MC, (stations NEAREST).code",
                               "FIND pens WHERE name ~ 'tamar' RETURN name",
                               "FIND districts WHERE NOT NAZEV_MC ~ 'praha' OR fid = 3 RETURN fid, NAZEV_MC",
                               "FIND parking WITHIN 800 m OF POINT(14.42 50.08) WHERE NOT (fid < 300 OR layer = 'x') LIMIT 5 RETURN fid, distance_m"],
                              on: kept, as: embedded)
            // here (every polygon layer at the point) and air (its district) read the rows fetched.
            for i in stride(from: 0, to: points.count, by: 20) {
                try expectSameHereAndAir(at: Point(lon: points[i].0, lat: points[i].1), on: kept, as: embedded)
            }
            // An answer never holds more than maxRows: the same error as on the loaded layer.
            var small = EngineLimits()
            small.maxRows = 1000
            small.maxRowsLoadedPerLayer = 0
            let smallKept = try StoreLocation.snapshot(try PushedStore.pushed.get().cluster.url, limits: small)
            let smallEmbedded = try Snapshot.load(storePath: try PushedStore.gpkg.get(), limits: small)
            let everything = "FIND parking WHERE fid > 0 RETURN fid"
            #expect(answer(everything, on: smallKept) == answer(everything, on: smallEmbedded))
            #expect(answer(everything, on: smallKept).hasPrefix("error too_many_rows: the answer has 1548 rows"), "\(answer(everything, on: smallKept))")
            // Read outside a FIND of its own, a kept layer is refused by name, never empty.
            #expect(answer("FIND stations RETURN code, (districts CONTAINING).NAZEV_MC", on: kept)
                    .hasPrefix("error not_supported_on_postgis: 'districts' outside a FIND of its own: it stays in PostgreSQL (57 rows"))
            #expect(answer("ROUTE FROM POINT(14.4109 50.1167) TO pens WHERE name = 'lachtani' ON paths", on: kept)
                    .hasPrefix("error not_supported_on_postgis: 'pens' outside a FIND of its own"))
            #expect(throws: EngineError.self) { _ = try kept.containing(try kept.layer("districts"), at: Point(lon: 14.42, lat: 50.08)) }
            #expect(answer("FIND pens NEAREST 2 TO POINT(14.4065 50.1170) WHERE name ~ 'tamar' RETURN name", on: kept)
                    .hasPrefix("error not_supported_on_postgis: NEAREST on 'pens', which stays in PostgreSQL, with a condition PostgreSQL cannot check"))
            // EXPLAIN shows the fetch, and PostgreSQL's plan for it.
            let explained = answer("EXPLAIN FIND parking CONTAINING POINT(14.42 50.08) WHERE fid > 10", on: kept)
            #expect(explained.contains("'parking' stays in PostgreSQL (1548 rows)"), "\(explained)")
            #expect(explained.contains("WHERE ST_Covers(t.geom, ST_SetSRID(ST_MakePoint($1, $2), 4326)) AND (t.fid::float8 > $3) ORDER BY t.fid LIMIT $4"), "\(explained)")
        }
    }

    /// `vltava serve --max-rows-loaded 0`: the point endpoints, here and an OGC feature by id
    /// answer from rows fetched per request.
    @Test func theServerAnswersFromLayersKeptInPostgreSQL() async throws {
        try await onAThreadOfItsOwn {
            let (cluster, _) = try PushedStore.pushed.get()
            let server = try ServedStore(cluster.url, cluster: cluster, arguments: ["--max-rows-loaded", "0"])
            defer { server.stop() }
            let first = try server.firstAnswer { try server.get("/v1/layers/districts/containing?lon=14.4208&lat=50.0880") }
            #expect(first.status == 200 && first.body.contains("\"NAZEV_MC\":\"Praha 1\"") && first.body.contains("\"KOD_MC\":500054"), "\(first)")
            let here = try server.get("/v1/here?lon=14.4208&lat=50.0880")
            #expect(here.status == 200 && here.body.contains("Praha 1"), "\(here)")
            let nearest = try server.get("/v1/layers/pavilions/nearest?lon=14.4065&lat=50.1170&k=2")
            let embedded = try PushedStore.embedded.get()
            let reference = try embedded.nearest(try embedded.layer("pavilions"), to: Point(lon: 14.4065, lat: 50.1170), k: 2)
            #expect(nearest.status == 200 && reference.count == 2)
            for match in reference { #expect(nearest.body.contains("\"fid\":\(match.fid)") || nearest.body.contains("\"id\":\(match.fid)"), "\(nearest)") }
            let filtered = try server.get("/v1/layers/pavilions/nearest?lon=14.4065&lat=50.1170&k=2&attr.fid=1")
            #expect(filtered.status == 422 && filtered.body.contains("not_supported_on_postgis"), "\(filtered)")
            let item = try server.get("/ogc/collections/districts/items/1")
            #expect(item.status == 200 && item.body.contains("\"id\":1"), "\(item)")
            #expect(try server.get("/ogc/collections/districts/items/999999").status == 404)
            // OGC API items of a kept layer: the page selected in PostgreSQL, the loaded layer's
            // page (OutageAndPagingTests.swift compares many), without numberMatched.
            let box = BBox(minLon: 14.40, minLat: 50.07, maxLon: 14.43, maxLat: 50.09)
            let expected = try embedded.items(try embedded.layer("parking"), ItemsRequest(bbox: box, offset: 5, limit: 5))
            let items = try server.get("/ogc/collections/parking/items?bbox=14.40,50.07,14.43,50.09&limit=5&offset=5")
            #expect(items.status == 200 && !items.body.contains("numberMatched") && items.body.contains("\"numberReturned\":5"), "\(items)")
            let layer = try embedded.layer("parking")
            #expect((expected.matched ?? 0) > 10 && featureIDs(items.body) == expected.indices.map { layer.fids[$0] }, "\(items.body.prefix(300))")
            let query = try server.post("FIND parking NEAREST 1 TO POINT(14.42 50.08) RETURN fid")
            #expect(query.status == 200 && query.body.contains("\"fid\""), "\(query)")
        }
    }

    @Test func explainShowsTheSQLAndPostgreSQLsPlan() async throws {
        try await onAThreadOfItsOwn {
            let postgis = try PushedStore.postgis.get()
            let text = answer("EXPLAIN FIND parking CONTAINING POINT(14.42 50.08) WHERE fid > 10", on: postgis)
            #expect(text.contains("ST_Covers(t.geom, ST_SetSRID(ST_MakePoint($1, $2), 4326))"))
            #expect(text.contains("(t.fid::float8 > $3)"))
            #expect(text.contains("Index Scan") || text.contains("Bitmap Index Scan"))
            let nearest = answer("EXPLAIN FIND stations NEAREST 3 TO POINT(14.42 50.08)", on: postgis)
            #expect(nearest.contains("ORDER BY t.geom::geography <-> ST_SetSRID(ST_MakePoint($1, $2), 4326)::geography, t.fid LIMIT $3"))
            // The series' statement for the stations selected, and PostgreSQL's plan for it.
            let series = answer("EXPLAIN FIND stations NEAREST 3 TO POINT(14.42 50.08) RETURN code, LATEST(no2), HISTORY(no2, 3 h)", on: postgis)
            #expect(series.contains("series (observations), LATEST/HISTORY/OBSERVED_AT for the stations selected: WITH keys AS (SELECT DISTINCT value FROM json_array_elements_text($1::json))"), "\(series)")
            #expect(series.contains("vltava_utc(r.\\\"interval_end\\\") > last.e - $2"), "\(series)")
            #expect(series.contains("Index Scan"), "\(series)")
        }
    }

    @Test func whatIsNotPushedDownIsRefusedByName() async throws {
        try await onAThreadOfItsOwn {
            let postgis = try PushedStore.postgis.get()
            #expect(answer("FIND pens LINKED TO (animals WHERE fid = 1) RETURN fid", on: postgis).hasPrefix("error not_supported_on_postgis: LINKED TO"))
            // The series table's rows are not in the snapshot: a FIND on it is refused, not empty.
            #expect(answer("FIND observations WHERE code = 'ALEGA' RETURN no2", on: postgis).hasPrefix("error not_supported_on_postgis: FIND on the time-series table 'observations'"))
            // The table's count is the database's (tile sets stay in files: the GeoPackage lists one more row).
            let row = #"{"name":"observations","kind":"table","count":816,"notes":"time series of 'stations'"}"#
            let embedded = try PushedStore.embedded.get()
            #expect(answer("SHOW LAYERS", on: postgis).contains(row) && answer("SHOW LAYERS", on: embedded).contains(row))
            let items = ItemsRequest(limit: 10)
            #expect(throws: EngineError.notSupportedOnPostGIS("the items of a time-series table (its rows stay in the database)")) {
                _ = try postgis.items(try postgis.layer("observations"), items)
            }
        }
    }

    @Test func aWrongPasswordOrURLIsOneLineWithoutThePassword() async throws {
        try await onAThreadOfItsOwn {
            let (cluster, _) = try PushedStore.pushed.get()
            let wrong = "postgresql://vltava:not-the-password@127.0.0.1:\(cluster.port)/vltava"
            let result = try CLI.run(["query", "--db", wrong, "SHOW LAYERS"])
            #expect(result.status != 0)
            let message = result.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(!message.contains("\n"))
            #expect(!message.contains("not-the-password"))
            #expect(message.contains("postgresql://vltava@127.0.0.1:\(cluster.port)/vltava"))
            #expect(message.contains("password authentication failed"))
            let unreachable = try CLI.run(["layers", "--db", "postgresql://vltava:secret@127.0.0.1:1/vltava"])
            #expect(unreachable.status != 0)
            #expect(unreachable.stderr.contains("postgresql://vltava@127.0.0.1:1/vltava cannot be reached"))
            #expect(!unreachable.stderr.contains("secret"))
            let bad = try CLI.run(["query", "--db", "postgresql://vltava:secret@127.0.0.1:5432", "SHOW LAYERS"])
            #expect(bad.stderr.contains("no database name") && !bad.stderr.contains("secret"))
        }
    }

    @Test func theCLIQueriesExportsAndDescribesAPostGISStore() async throws {
        try await onAThreadOfItsOwn {
            let (cluster, _) = try PushedStore.pushed.get()
            let gpkg = try PushedStore.gpkg.get()
            let text = "FIND stations NEAREST 2 TO POINT(14.42 50.09) RETURN code, distance_m"
            let a = try CLI.run(["query", "--db", cluster.url, "--format", "json", text]), b = try CLI.run(["query", "--db", gpkg, "--format", "json", text])
            #expect(a.status == 0 && a.stdout == b.stdout, "\(a.stderr)")
            let exported = try CLI.run(["export", "districts", "--db", cluster.url]), reference = try CLI.run(["export", "districts", "--db", gpkg])
            #expect(exported.status == 0 && exported.stdout == reference.stdout)
            // Streamed, it is the bytes of the whole collection serialized at once.
            let districts = try GeoPackage(path: gpkg).features(of: "districts").map(\.feature)
            #expect(exported.stdout == JSON.serialize(GeoJSON.featureCollection(districts)) + "\n")
            // In pages by fid (here of 100 rows: 16 pages for the 1,548 zones), every row once, in order.
            var paged: [StoredFeature] = []
            try StoreLocation.source(cluster.url).forEachFeature(of: "parking", pageSize: 100) { paged.append($0) }
            let parking = try GeoPackage(path: gpkg).features(of: "parking")
            #expect(paged.map(\.fid) == parking.map(\.fid) && paged.map(\.feature) == parking.map(\.feature))
            let described = try CLI.run(["describe", "stations", "--db", cluster.url])
            #expect(described.stdout.contains("time series of 'stations'") == false && described.stdout.contains("stations: 17 features"), "\(described.stdout)")
            let layers = try CLI.run(["layers", "--db", cluster.url])
            #expect(layers.stdout.contains("parking") && layers.stdout.contains("1548"))
        }
    }

    /// A push streams the file's rows, and stays all or nothing: a feature that cannot be read,
    /// met after other rows went in, leaves the database as it was.
    @Test func aPushThatMeetsABadFeatureChangesNothing() async throws {
        try await onAThreadOfItsOwn {
            let (cluster, _) = try PushedStore.pushed.get()
            let url = try PushedStore.database("vltava_bad")
            let before = try cluster.psql("SELECT md5(string_agg(fid || ST_AsText(geom) || code, ',' ORDER BY fid)) FROM stations", database: "vltava_bad")
            let bad = try Fixtures.temporaryDirectory("postgis-bad").appendingPathComponent("bad.gpkg").path
            try FileManager.default.copyItem(atPath: try PushedStore.gpkg.get(), toPath: bad)
            try RawStoreEdits.setGeometry(of: "stations", fid: 16, to: RawStoreEdits.infiniteLatitude, in: bad)
            #expect(throws: EngineError.self) { try PostGISStore.push(geoPackage: bad, to: try PostGISDatabase(url)) }
            do {
                try PostGISStore.push(geoPackage: bad, to: try PostGISDatabase(url))
            } catch {
                #expect("\(error)".contains("layer 'stations', fid 16") && "\(error)".contains("not a finite number"), "\(error)")
            }
            #expect(try cluster.psql("SELECT md5(string_agg(fid || ST_AsText(geom) || code, ',' ORDER BY fid)) FROM stations", database: "vltava_bad") == before)
            #expect(try cluster.psql("SELECT count(*) FROM stations", database: "vltava_bad") == "17")
        }
    }

    /// `vltava drop` and `rename` on a URL: the table and its catalogue entry, the time-series
    /// link following the stations' new name, each in one transaction.
    @Test func dropAndRenameOnAURL() async throws {
        try await onAThreadOfItsOwn {
            let (cluster, _) = try PushedStore.pushed.get()
            let url = try PushedStore.database("vltava_manage")
            let latest = "FIND stations WHERE code = 'AREPA' RETURN code, LATEST(no2), OBSERVED_AT"
            let before = try CLI.run(["query", "--db", url, "--format", "json", latest])
            #expect(before.status == 0 && before.stdout.contains("AREPA"), "\(before.stderr)")

            let renamed = try CLI.run(["rename", "stations", "air_stations", "--db", url])
            #expect(renamed.status == 0 && renamed.stdout == "renamed 'stations' to 'air_stations'\n", "\(renamed.stderr)")
            let after = try CLI.run(["query", "--db", url, "--format", "json", latest.replacingOccurrences(of: "FIND stations", with: "FIND air_stations")])
            #expect(after.status == 0 && after.stdout == before.stdout, "\(after.stderr)")
            #expect(try cluster.psql("SELECT (time_series::json)->>'key_layer' FROM vltava_layers WHERE name = 'observations'", database: "vltava_manage") == "air_stations")
            let gone = try CLI.run(["query", "--db", url, "FIND stations RETURN code"])
            #expect(gone.status != 0 && gone.stderr.contains("unknown layer 'stations'"))
            // Names that are taken or not valid change nothing.
            for (newName, reason) in [("parking", "a layer of that name exists"), ("spatial_ref_sys", "a table of that name exists in the database"),
                                      ("bad name", "use only ASCII letters, digits and '_'")] {
                let refused = try CLI.run(["rename", "districts", newName, "--db", url])
                #expect(refused.status != 0 && refused.stderr.contains(reason), "\(newName): \(refused.stderr)")
            }

            let dropped = try CLI.run(["drop", "air_stations", "--db", url])
            #expect(dropped.status == 0 && dropped.stdout == "dropped 'air_stations'\n", "\(dropped.stderr)")
            #expect(try cluster.psql("SELECT to_regclass('air_stations') IS NULL", database: "vltava_manage") == "t")
            // The series stays, as a plain table.
            #expect(try cluster.psql("SELECT time_series IS NULL FROM vltava_layers WHERE name = 'observations'", database: "vltava_manage") == "t")
            let layers = try CLI.run(["layers", "--db", url])
            #expect(layers.status == 0 && !layers.stdout.contains("air_stations") && layers.stdout.contains("observations"), "\(layers.stdout)")
            let unknown = try CLI.run(["drop", "nothing_here", "--db", url])
            #expect(unknown.status != 0 && unknown.stderr.contains("unknown layer 'nothing_here'"), "\(unknown.stderr)")
            // The feed: the push's layers imported, then the rename and the drop, numbered in order.
            let feed = try cluster.psql("SELECT string_agg(kind || ' ' || layer, ', ' ORDER BY seq) FROM vltava_changes WHERE fid IS NULL AND seq > (SELECT max(seq) FROM vltava_changes WHERE kind = 'imported' AND layer = 'stations')", database: "vltava_manage")
            #expect(feed == "dropped stations, imported air_stations, dropped air_stations")
            let gaps = try cluster.psql("SELECT count(*) = max(seq) FROM vltava_changes", database: "vltava_manage")
            #expect(gaps == "t")
        }
    }

    /// A write in PostgreSQL reaches a running server's next snapshot through LISTEN/NOTIFY:
    /// no reload request, no polling by the server, and every request meanwhile answers 200.
    @Test func aWriteInPostgreSQLReachesTheServerByNotify() async throws {
        try await onAThreadOfItsOwn {
            let (cluster, _) = try PushedStore.pushed.get()
            let url = try PushedStore.database("vltava_live")
            let server = try ServedStore(url, cluster: cluster)
            defer { server.stop() }
            func post() throws -> (status: Int, body: String) {
                try server.post("FIND stations WHERE code = 'ZNEW' RETURN code, name")
            }
            let before = try server.firstAnswer(post)
            #expect(before.status == 200 && before.body.contains("\"count\":0"), "\(before)")
            try cluster.psql("INSERT INTO stations (fid, geom, code, name) VALUES (9999, ST_SetSRID(ST_MakePoint(14.42, 50.08), 4326), 'ZNEW', 'Nová')",
                             database: "vltava_live")
            var after = (status: 0, body: "")
            var failed = 0
            let start = Date()
            while Date().timeIntervalSince(start) < 10 {
                after = try post()
                if after.status != 200 { failed += 1 }
                if after.body.contains("Nová") { break }
                usleep(20_000)
            }
            #expect(after.body.contains("\"code\":\"ZNEW\""), "\(after)")
            #expect(failed == 0)
        }
    }
}

extension PostGISStoreTests {
    /// `vltava import --append` and `--upsert --key` on a PostGIS store, as on a GeoPackage
    /// (AppendCLITests): the file as one batch through the database's writer, numbered in its
    /// feed after the push's nine imports, and what PostgreSQL holds read back with psql.
    @Test func appendAndUpsertOnAURL() async throws {
        try await onAThreadOfItsOwn {
            let (cluster, _) = try PushedStore.pushed.get()
            let url = try PushedStore.database("vltava_append")
            func psql(_ sql: String) throws -> String { try cluster.psql(sql, database: "vltava_append").trimmingCharacters(in: .whitespacesAndNewlines) }
            #expect(try psql("SELECT max(seq) FROM vltava_changes") == "9")

            // The series' own file again: every row is there, so each replaces its station's hour.
            let observations = try CLI.run(["import", Fixtures.path("air/observations-2019-04-15-16.csv"), "--layer", "observations", "--append", "--db", url])
            #expect(observations.status == 0, "\(observations.stderr)")
            #expect(observations.stdout == "appended 816 rows to layer 'observations': 0 added, 816 replaced (changes 10–825 of the feed)\n")
            #expect(try psql("SELECT count(*) FROM observations") == "816")

            // The stations with one renamed and one new: 17 replaced by code, 1 added.
            let folder = try Fixtures.temporaryDirectory("postgis-upsert")
            var lines = try String(contentsOf: Fixtures.url("air/stations-prague.csv"), encoding: .utf8).split(whereSeparator: \.isNewline).map(String.init)
            #expect(lines.count == 18 && lines[1].hasPrefix("ABREA,"))
            lines[1] = lines[1].replacingOccurrences(of: "Praha 6-Břevnov", with: "Praha 6 – Břevnov")
            lines.append(lines[2].replacingOccurrences(of: lines[2].prefix(5), with: "ZNEWA"))
            let file = folder.appendingPathComponent("stations.csv")
            try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
            let upserted = try CLI.run(["import", file.path, "--layer", "stations", "--upsert", "--key", "code", "--db", url])
            #expect(upserted.status == 0, "\(upserted.stderr)")
            #expect(upserted.stdout == "upserted 18 features to layer 'stations': 1 added, 17 replaced (changes 826–843 of the feed)\n")
            #expect(try psql("SELECT count(*) || ' ' || max(fid) FROM stations") == "18 18")
            #expect(try psql("SELECT name FROM stations WHERE code = 'ABREA'") == "Praha 6 – Břevnov")
            #expect(try psql("SELECT string_agg(DISTINCT kind, ',' ORDER BY kind) FROM vltava_changes WHERE seq > 9") == "inserted,replaced")

            // A polygon into the point layer fails the batch and changes nothing.
            let polygons = try CLI.run(["import", Fixtures.path("prague/districts.wgs84.geojson"), "--layer", "stations", "--append", "--db", url])
            #expect(polygons.status == 1 && polygons.stderr.contains("operation 1 of the batch: layer 'stations' holds POINT geometries"), "\(polygons.stderr)")
            #expect(try psql("SELECT max(seq) FROM vltava_changes") == "843")
        }
    }
}

extension PostGISStoreTests {
    /// Live layers and fences on a PostGIS store: kept in `vltava_live` (read back with psql),
    /// so a new engine on the database runs them, and a walk fires the fence there.
    @Test func liveLayersAndFencesAreKeptInPostgreSQL() async throws {
        try await onAThreadOfItsOwn {
            let (cluster, _) = try PushedStore.pushed.get()
            let url = try PushedStore.database("vltava_fences")
            // The gorillas' pen, fid 4791797957, within 20 m.
            let fence = #"{"watch": {"layer": "visitors"}, "area": {"layer": "pens", "fids": [4791797957], "within_m": 20}}"#
            do {
                let engine = try StoreLocation.engine(url)
                try engine.declareLiveLayer("visitors", settings: LiveLayerSettings(ttlSeconds: 600))
                try engine.putFence(FenceDefinition.parse(name: "gorillas", try JSON.parse(fence)))
                try engine.putFence(FenceDefinition.parse(name: "gone", try JSON.parse(#"{"watch": {"layer": "visitors"}, "area": {"point": [14.4, 50.1], "radius_m": 5}}"#)))
                #expect(try engine.deleteFence("gone") && !engine.deleteFence("gone"))
            }
            #expect(try cluster.psql("SELECT string_agg(kind || ' ' || name, ', ' ORDER BY kind, name) FROM vltava_live", database: "vltava_fences")
                .trimmingCharacters(in: .whitespacesAndNewlines) == "fence gorillas, layer visitors")

            let engine = try StoreLocation.engine(url)
            #expect(engine.fences.map { "\($0.definition.name) \($0.problem ?? "running")" } == ["gorillas running"])
            let pens = try engine.snapshot.layer("pens")
            let pen = try #require(pens.index(ofFID: 4791797957))
            guard case .point(let where_) = pens.geometries[pen] else { Issue.record("the gorillas' pen is not a point"); return }
            let receipt = try engine.updatePositions("visitors", [PositionUpdate(id: "phone-1", point: where_, time: 1_780_000_000)])
            #expect(receipt.events.map { "\($0.fence) \($0.kind) \($0.feature?.layer ?? "") \($0.feature?.fid ?? 0)" } == ["gorillas enter pens 4791797957"])
        }
    }
}

extension PostGISStoreTests {
    /// A durable live layer on a PostGIS store: each batch's objects are kept in
    /// `vltava_positions` (read back with psql) before it is answered, and a new engine on the
    /// database puts them back with their fence states, firing nothing.
    @Test func durableLiveObjectsAreKeptInPostgreSQL() async throws {
        try await onAThreadOfItsOwn {
            let (cluster, _) = try PushedStore.pushed.get()
            let url = try PushedStore.database("vltava_durable")
            let fence = #"{"watch": {"layer": "keepers"}, "area": {"point": [14.40519, 50.11576], "radius_m": 50}}"#
            do {
                let engine = try StoreLocation.engine(url)
                try engine.declareLiveLayer("keepers", settings: LiveLayerSettings.parse(try JSON.parse(#"{"durable": true}"#)))
                try engine.putFence(FenceDefinition.parse(name: "pen", try JSON.parse(fence)))
                let inside = try engine.updatePositions("keepers", [
                    PositionUpdate(id: "k1", point: Point(lon: 14.40519, lat: 50.11576), time: 100, fields: JSONObject([("shift", .string("morning"))])),
                    PositionUpdate(id: "k2", point: Point(lon: 14.40519, lat: 50.12076), time: 100.25),
                ])
                #expect(inside.events.map { "\($0.fence) \($0.kind) \($0.object ?? "")" } == ["pen enter k1"])
                #expect(try engine.removeLiveObject("keepers", id: "k2"))
            }
            #expect(try cluster.psql("SELECT string_agg(id || ' ' || lon || ' ' || lat || ' ' || time || ' ' || fields || ' ' || coalesce(expires::text, 'never'), ', ') FROM vltava_positions",
                                     database: "vltava_durable").trimmingCharacters(in: .whitespacesAndNewlines)
                    == #"k1 14.40519 50.11576 100 {"shift":"morning"} never"#)

            let restarted = try StoreLocation.engine(url)
            let k1 = try #require(restarted.live.object("keepers", id: "k1"))
            #expect(k1.point == Point(lon: 14.40519, lat: 50.11576) && k1.time == 100 && k1.fields?["shift"] == .string("morning"))
            #expect(restarted.live.object("keepers", id: "k2") == nil && restarted.live.events(after: 0, limit: 10).events.isEmpty)
            // Inside still: leaving fires exit, not a second enter.
            let out = try restarted.updatePositions("keepers", [PositionUpdate(id: "k1", point: Point(lon: 14.40519, lat: 50.12076), time: 200)])
            #expect(out.events.map { "\($0.fence) \($0.kind)" } == ["pen exit"])
            // Made a memory layer: its kept objects are forgotten.
            try restarted.declareLiveLayer("keepers", settings: LiveLayerSettings())
            #expect(try cluster.psql("SELECT count(*) FROM vltava_positions", database: "vltava_durable").trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        }
    }
}
