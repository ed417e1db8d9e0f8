// Writes over real HTTP on loopback: OGC API – Features Part 4 sent with curl and read back by
// GDAL's OAPIF driver, the batch endpoint's all-or-nothing, rows appended to the air-quality
// time series and answered at once, the change feed, and who may write.

import Engine
import Foundation
import Geometry
import Server
import Store
import TestSupport
import Testing

@Suite(.validatesStores) struct WriteEndpointTests {
    static let token = "write-token-0123456789abcdef"
    static let stationsToken = "stations-only-0123456789abcdef"

    /// A server on a copy of the demo store that takes writes with `token` (every layer) and
    /// `stationsToken` (the stations only).
    static func writableServer(_ label: String) async throws -> (RunningServer, String) {
        let directory = try Fixtures.temporaryDirectory(label)
        let store = directory.appendingPathComponent("demo.gpkg").path
        let source = try await DemoStore.path()
        // The shared store is checkpointed and no longer written, so the file alone is all of it.
        try FileManager.default.copyItem(atPath: source, toPath: store)
        let server = await RunningServer.start(store: store) { configuration in
            configuration.writeTokens = WriteTokens([(token, nil), (stationsToken, ["stations"])])
        }
        try await server.ready()
        return (server, store)
    }

    static func curl(_ arguments: [String]) async throws -> (status: Int, headers: String, body: String) {
        let directory = try Fixtures.temporaryDirectory("curl")
        let headers = directory.appendingPathComponent("headers").path
        let result = try await offPool {
            try Fixtures.run(URL(fileURLWithPath: "/usr/bin/curl"), ["-s", "-D", headers, "-w", "\n%{http_code}"] + arguments)
        }
        guard result.status == 0 else { throw HTTPClientError("curl \(arguments): \(result.stderr)") }
        var lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let status = Int(lines.popLast() ?? "") ?? 0
        return (status, (try? String(contentsOfFile: headers, encoding: .utf8)) ?? "", lines.joined(separator: "\n"))
    }

    static func header(_ name: String, in headers: String) -> String? {
        headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
            .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
    }

    static func json(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    /// Insert, read, replace under If-Match, patch, delete: each visible to the very next
    /// request, and the inserted station read back by GDAL's OAPIF driver.
    @Test func ogcPart4WithCurlAndGDAL() async throws {
        let (server, _) = try await Self.writableServer("write-ogc")
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        let auth = ["-H", "Authorization: Bearer \(Self.token)"]
        let feature = #"{"type": "Feature", "geometry": {"type": "Point", "coordinates": [14.4205, 50.0875]}, "properties": {"code": "ANEWA", "name": "Praha 1-Nová", "classif": "urban"}}"#
        let created = try await Self.curl(auth + ["-X", "POST", "-H", "Content-Type: application/geo+json", "--data-binary", feature, base + "/ogc/collections/stations/items"])
        #expect(created.status == 201, "\(created.body)")
        let receipt = Self.json(created.body)
        let changes = try #require(receipt["changes"] as? [[String: Any]])
        let fid = try #require(changes.first?["fid"] as? Int)
        #expect(fid == 18)  // the 17 stations are fids 1–17
        let imported = Int(DemoFixtureStore.importedLayers)  // the demo's layers, numbered first
        #expect(changes.first?["change"] as? String == "inserted" && receipt["sequence"] as? Int == imported + 1)
        #expect(Self.header("Location", in: created.headers) == base + "/ogc/collections/stations/items/18")

        // Read-your-writes: the nearest station to a point 60 m away is the new one.
        let nearest = try await get(server.port, "/v1/layers/stations/nearest?lon=14.4208&lat=50.0880&k=1")
        #expect(nearest.text.contains(#""code":"ANEWA""#), "\(nearest.text)")

        let read = try await Self.curl([base + "/ogc/collections/stations/items/18"])
        let etag = try #require(Self.header("ETag", in: read.headers))
        #expect(read.body.contains(#""name":"Praha 1-Nová""#))

        // GDAL's OAPIF driver, a client nobody here wrote, reads the written feature.
        let gdal = try await offPool {
            try Fixtures.run(StandardClientTests.ogrinfo, ["-ro", "-al", "-where", "code = 'ANEWA'", "OAPIF:\(base)/ogc", "stations"])
        }
        #expect(gdal.status == 0, "\(gdal.stderr)")
        #expect(gdal.stdout.contains("name (String) = Praha 1-Nová") && gdal.stdout.contains("POINT (14.4205 50.0875)"), "\(gdal.stdout)")

        // A replacement with a stale ETag is refused; with the current one it lands.
        let replacement = #"{"type": "Feature", "geometry": {"type": "Point", "coordinates": [14.4210, 50.0870]}, "properties": {"code": "ANEWA", "name": "Praha 1-Nová 2"}}"#
        let stale = try await Self.curl(auth + ["-X", "PUT", "-H", "If-Match: \"0\"", "--data-binary", replacement, base + "/ogc/collections/stations/items/18"])
        #expect(stale.status == 412 && stale.body.contains("precondition_failed"), "\(stale.body)")
        let replaced = try await Self.curl(auth + ["-X", "PUT", "-H", "If-Match: \(etag)", "--data-binary", replacement, base + "/ogc/collections/stations/items/18"])
        #expect(replaced.status == 200, "\(replaced.body)")
        let newTag = try #require(Self.header("ETag", in: replaced.headers))
        #expect(newTag != etag)
        let afterReplace = Self.json(try await Self.curl([base + "/ogc/collections/stations/items/18"]).body)
        #expect(((afterReplace["properties"] as? [String: Any])?["classif"]) is NSNull)

        let patched = try await Self.curl(auth + ["-X", "PATCH", "-H", "Content-Type: application/merge-patch+json", "-H", "If-Match: \(newTag)",
                                                  "--data-binary", #"{"properties": {"classif": "traffic"}}"#, base + "/ogc/collections/stations/items/18"])
        #expect(patched.status == 200, "\(patched.body)")
        let afterPatch = Self.json(try await Self.curl([base + "/ogc/collections/stations/items/18"]).body)
        #expect((afterPatch["properties"] as? [String: Any])?["classif"] as? String == "traffic")
        #expect((afterPatch["properties"] as? [String: Any])?["name"] as? String == "Praha 1-Nová 2")

        let deleted = try await Self.curl(auth + ["-X", "DELETE", base + "/ogc/collections/stations/items/18"])
        #expect(deleted.status == 200, "\(deleted.body)")
        #expect(try await Self.curl([base + "/ogc/collections/stations/items/18"]).status == 404)

        // The feed: the demo's imports, then four changes in order, resumable from any of them.
        let feed = Self.json(try await Self.curl([base + "/v1/changes?since=0"]).body)
        let kinds = (feed["changes"] as? [[String: Any]])?.compactMap { $0["change"] as? String }
        #expect(kinds == Array(repeating: "imported", count: imported) + ["inserted", "replaced", "updated", "deleted"] && feed["last"] as? Int == imported + 4)
        let later = Self.json(try await Self.curl([base + "/v1/changes?since=\(imported + 2)&limit=1"]).body)
        #expect((later["changes"] as? [[String: Any]])?.compactMap { $0["sequence"] as? Int } == [imported + 3])
    }

    /// Many clients at once: their batches are committed together (group commit), each still
    /// all or nothing; the feed numbers the accepted ones without a gap. Of twelve PUTs sent at
    /// once with the same If-Match, exactly one lands; the others get 412.
    @Test func concurrentWritersEachStandAloneAndIfMatchHasOneWinner() async throws {
        let (server, _) = try await Self.writableServer("write-concurrent")
        defer { server.stop() }
        let port = server.port
        let auth = [("Authorization", "Bearer \(Self.token)")]
        func body(_ i: Int) -> String {
            let latitude = i % 5 == 4 ? 95.0 : 50.05 + Double(i) / 1000  // every fifth is refused
            return #"{"operations": [{"insert": "stations", "feature": {"type": "Feature", "geometry": {"type": "Point", "coordinates": [14.41, \#(latitude)]}, "properties": {"code": "C\#(i)"}}}, {"insert": "stations", "feature": {"type": "Feature", "geometry": {"type": "Point", "coordinates": [14.42, 50.05]}, "properties": {"code": "D\#(i)"}}}]}"#
        }
        let statuses = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for i in 0..<30 { group.addTask { (i, try await post(port, "/v1/write", body: body(i), headers: auth).status) } }
            return try await group.reduce(into: [Int: Int]()) { $0[$1.0] = $1.1 }
        }
        #expect(statuses.filter { $0.key % 5 == 4 }.allSatisfy { $0.value == 400 } && statuses.filter { $0.key % 5 != 4 }.allSatisfy { $0.value == 200 }, "\(statuses)")
        let imported = Int(DemoFixtureStore.importedLayers)
        let feed = Self.json(try await Self.curl(["http://127.0.0.1:\(port)/v1/changes?since=\(imported)&limit=100"]).body)
        #expect((feed["changes"] as? [[String: Any]])?.compactMap { $0["sequence"] as? Int } == Array(imported + 1...imported + 48))
        let codes = Self.json(try await Self.curl(["http://127.0.0.1:\(port)/ogc/collections/stations/items?limit=100"]).body)
        let written = Set(((codes["features"] as? [[String: Any]]) ?? []).compactMap { ($0["properties"] as? [String: Any])?["code"] as? String }.filter { $0.hasPrefix("C") || $0.hasPrefix("D") })
        #expect(written == Set((0..<30).filter { $0 % 5 != 4 }.flatMap { ["C\($0)", "D\($0)"] }))

        let read = try await Self.curl(["http://127.0.0.1:\(port)/ogc/collections/stations/items/1"])
        let etag = try #require(Self.header("ETag", in: read.headers))
        let replaced = try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<12 {
                group.addTask {
                    let feature = #"{"type": "Feature", "geometry": {"type": "Point", "coordinates": [14.4, 50.0\#(i)]}, "properties": {"code": "W\#(i)"}}"#
                    return try await HTTPConnection.request(port: port, "PUT", "/ogc/collections/stations/items/1", headers: auth + [("If-Match", etag)], body: Array(feature.utf8)).status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(replaced.filter { $0 == 200 }.count == 1 && replaced.filter { $0 == 412 }.count == 11, "\(replaced)")
    }

    /// A write that waits for the writes' thread past its request's budget is refused with
    /// 503 `deadline_exceeded` and not applied (a budget of 0 s has passed when it is taken).
    @Test func aWriteLatePastItsBudgetIsNotApplied() async throws {
        let directory = try Fixtures.temporaryDirectory("write-deadline")
        let store = directory.appendingPathComponent("demo.gpkg").path
        try FileManager.default.copyItem(atPath: try await DemoStore.path(), toPath: store)
        let before = try GeoPackage(path: store).lastSequence()
        var limits = RunningServer.testLimits
        limits.maxRequestSeconds = 0
        let chosen = limits
        let server = await RunningServer.start({ configuration in
            configuration.limits = chosen
            configuration.writeTokens = WriteTokens([(Self.token, nil)])
        }) { try Engine(storePath: store, limits: chosen) }
        try await server.ready()
        defer { server.stop() }
        let body = #"{"operations": [{"insert": "stations", "feature": {"type": "Feature", "geometry": {"type": "Point", "coordinates": [14.43, 50.1]}, "properties": {}}}]}"#
        let late = try await post(server.port, "/v1/write", body: body, headers: [("Authorization", "Bearer \(Self.token)")])
        #expect(late.status == 503 && late.object["code"] == .string("deadline_exceeded"), "\(late.text)")
        #expect(try GeoPackage(path: store).lastSequence() == before)
        #expect(try await get(server.port, "/v1/layers/stations/nearest?lon=14.43&lat=50.1&k=1").text.contains("14.43,50.1") == false)
    }

    /// A batch over two layers is all or nothing; the refused one names its operation.
    @Test func aBatchIsAllOrNothing() async throws {
        let (server, store) = try await Self.writableServer("write-batch")
        defer { server.stop() }
        let auth = [("Authorization", "Bearer \(Self.token)")]
        let bad = #"""
            {"operations": [
              {"create": {"name": "stages", "geometry_type": "POINT", "columns": [{"name": "name", "type": "TEXT"}]}},
              {"insert": "stages", "feature": {"type": "Feature", "geometry": {"type": "Point", "coordinates": [14.43, 50.1]}, "properties": {"name": "Main"}}},
              {"insert": "stages", "feature": {"type": "Feature", "geometry": {"type": "Point", "coordinates": [14.43, 95]}, "properties": {"name": "Moon"}}}
            ]}
            """#
        let refused = try await post(server.port, "/v1/write", body: bad, headers: auth)
        #expect(refused.status == 400 && refused.object["code"] == .string("bad_write"), "\(refused.text)")
        #expect(refused.object["detail"]?.string?.hasPrefix("operation 3 of the batch: ") == true, "\(refused.text)")
        #expect(try await get(server.port, "/v1/layers/stages/nearest?lon=14.43&lat=50.1").status == 404)
        #expect(try GeoPackage(path: store).hasLayer("stages") == false)

        let good = bad.replacingOccurrences(of: "[14.43, 95]", with: "[14.44, 50.11]")
        let applied = try await post(server.port, "/v1/write", body: good, headers: auth)
        #expect(applied.status == 200, "\(applied.text)")
        let nearest = try await get(server.port, "/v1/layers/stages/nearest?lon=14.4401&lat=50.1101&k=2")
        #expect(nearest.status == 200)
        #expect(nearest.text.range(of: #""name":"Moon".*"name":"Main""#, options: .regularExpression) != nil, "\(nearest.text)")
    }

    /// The hourly air-quality update: one hour of AREPA appended as CSV is the station's
    /// latest value in the very next query, and the feed lists the row.
    @Test func theHourlyUpdate() async throws {
        let (server, _) = try await Self.writableServer("write-rows")
        defer { server.stop() }
        let csv = """
            code,datefromutc,datetoutc,aqi,no2,pm10
            AREPA,2019-04-16 21:00:00.0 UTC,2019-04-16 22:00:00.0 UTC,3,51.5,44
            """
        let appended = try await HTTPConnection.request(port: server.port, "POST", "/v1/layers/observations/rows",
                                                        headers: [("Authorization", "Bearer \(Self.token)"), ("Content-Type", "text/csv")], body: Array(csv.utf8))
        #expect(appended.status == 201, "\(appended.text)")
        let latest = try await post(server.port, "/v1/query", body: "FIND stations WHERE code = 'AREPA' RETURN LATEST(no2), LATEST(pm10)")
        #expect(latest.text.contains("51.5") && latest.text.contains("44"), "\(latest.text)")
        let feed = try await get(server.port, "/v1/changes")
        #expect(feed.text.contains(#""layer":"observations""#) && feed.text.contains(#""change":"inserted""#), "\(feed.text)")
        // The feed sends the hour again, corrected: the row is replaced, not doubled.
        let again = try await HTTPConnection.request(port: server.port, "POST", "/v1/layers/observations/rows",
                                                     headers: [("Authorization", "Bearer \(Self.token)"), ("Content-Type", "text/csv")],
                                                     body: Array(csv.replacingOccurrences(of: "51.5", with: "52.5").utf8))
        #expect(again.status == 201 && again.text.contains(#""change":"replaced""#), "\(again.text)")
        let hours = try await post(server.port, "/v1/query", body: "FIND observations WHERE code = 'AREPA' AND interval_start = '2019-04-16T21:00:00Z' RETURN no2")
        #expect(hours.text.contains(#""count":1"#) && hours.text.contains("52.5"), "\(hours.text)")
        // A station the stations layer does not have is refused with its line.
        let unknown = try await HTTPConnection.request(port: server.port, "POST", "/v1/layers/observations/rows",
                                                       headers: [("Authorization", "Bearer \(Self.token)"), ("Content-Type", "text/csv")],
                                                       body: Array(csv.replacingOccurrences(of: "AREPA", with: "AXXXA").utf8))
        #expect(unknown.status == 400 && unknown.text.contains("line 2: 'AXXXA' is not a code of layer 'stations'"), "\(unknown.text)")
        // A field that is not the column's type is refused with its line.
        let wrong = try await HTTPConnection.request(port: server.port, "POST", "/v1/layers/observations/rows",
                                                     headers: [("Authorization", "Bearer \(Self.token)"), ("Content-Type", "text/csv")],
                                                     body: Array("code,datefromutc,datetoutc,no2\nAREPA,2019-04-16 22:00,2019-04-16 23:00,high\n".utf8))
        #expect(wrong.status == 400 && wrong.text.contains("column 'no2' holds REAL; the text 'high' does not fit"), "\(wrong.text)")
    }

    /// The short version of scripts/write-drill.py: batches of 1 and 100 features and rows while
    /// the server is killed with SIGKILL twice; every acknowledged batch is in the store whole,
    /// none is there in part, and the store passes integrity_check and validate_gpkg.py.
    @Test func nothingAcknowledgedIsLostToKillNine() async throws {
        let script = Fixtures.root.appendingPathComponent("scripts/write-drill.py")
        let run = try await offPool {
            try Fixtures.run(URL(fileURLWithPath: "/usr/bin/python3"), [script.path, "--binary", CLI.binary.path, "--seconds", "8", "--kills", "2"], timeout: 600)
        }
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr.suffix(3000))")
        let summary = (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
        #expect(summary["kills"] as? Int == 2 && (summary["acknowledged"] as? Int ?? 0) > 0, "\(run.stdout)")
        #expect(summary["integrity_check"] as? String == "ok" && summary["validate_gpkg"] as? Bool == true, "\(run.stdout)")
        #expect((summary["problems"] as? [String])?.isEmpty == true, "\(run.stdout)")
    }

    /// The short version of scripts/feed-drill.py: sseclient-py (PyPI) reads the change feed as
    /// Server-Sent Events while batches are written, leaves 8 times and resumes with
    /// Last-Event-ID; it sees every sequence number exactly once, in order.
    @Test func theFeedMissesNothingAcrossReconnects() async throws {
        let script = Fixtures.root.appendingPathComponent("scripts/feed-drill.py")
        let run = try await offPool {
            try Fixtures.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path, "--binary", CLI.binary.path, "--changes", "300", "--disconnects", "8"], timeout: 600)
        }
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr.suffix(3000))")
        let summary = (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] ?? [:]
        #expect(summary["changes"] as? Int == 301 && summary["events"] as? Int == 301 && summary["reconnects"] as? Int == 8, "\(run.stdout)")
        #expect(summary["every_one_once"] as? Bool == true && summary["duplicates"] as? Int == 0, "\(run.stdout)")
    }

    /// OGC API – Features Part 2's Content-Crs: a station sent in S-JTSK is stored in WGS 84
    /// (`echo "50.1031 14.4378" | cs2cs -f %.4f EPSG:4326 EPSG:5514` gives -741399.9687
    /// -1041451.4369); a header that names no EPSG CRS is 400.
    @Test func geometriesInSJTSK() async throws {
        let (server, _) = try await Self.writableServer("write-crs")
        defer { server.stop() }
        let auth = ("Authorization", "Bearer \(Self.token)")
        let body = #"{"type": "Feature", "geometry": {"type": "Point", "coordinates": [-741399.9687, -1041451.4369]}, "properties": {"code": "AKRIZ"}}"#
        let created = try await post(server.port, "/ogc/collections/stations/items", body: body,
                                     headers: [auth, ("Content-Crs", "<http://www.opengis.net/def/crs/EPSG/0/5514>")])
        #expect(created.status == 201, "\(created.text)")
        let item = try await get(server.port, "/ogc/collections/stations/items/18")
        let coordinates = item.json["geometry"]?["coordinates"]
        let lon = coordinates?[0]?.number ?? 0, lat = coordinates?[1]?.number ?? 0
        #expect(abs(lon - 14.4378) < 1e-6 && abs(lat - 50.1031) < 1e-6, "\(item.text)")
        let bad = try await post(server.port, "/ogc/collections/stations/items", body: body, headers: [auth, ("Content-Crs", "<urn:nonsense>")])
        #expect(bad.status == 400 && bad.object["code"] == .string("invalid_crs"), "\(bad.text)")
    }

    /// Who may write: nobody without tokens (403 writes_disabled), 401 without a known token,
    /// 403 for a layer the token does not cover.
    @Test func whoMayWrite() async throws {
        let body = #"{"type": "Feature", "geometry": {"type": "Point", "coordinates": [14.42, 50.08]}, "properties": {}}"#
        let readOnly = try await RunningServer.shared.value
        let disabled = try await post(readOnly.port, "/ogc/collections/stations/items", body: body)
        #expect(disabled.status == 403 && disabled.object["code"] == .string("writes_disabled"), "\(disabled.text)")
        // Its feed can be read, and reading it does not make the server the store's writer.
        let feed = try await get(readOnly.port, "/v1/changes?since=\(DemoFixtureStore.importedLayers)")
        #expect(feed.status == 200 && feed.text == #"{"changes":[],"last":\#(DemoFixtureStore.importedLayers)}"#, "\(feed.text)")
        #expect(!FileManager.default.fileExists(atPath: try await DemoStore.path() + "-writer"))

        let (server, _) = try await Self.writableServer("write-auth")
        defer { server.stop() }
        let none = try await post(server.port, "/ogc/collections/stations/items", body: body)
        #expect(none.status == 401 && none.header("WWW-Authenticate") == "Bearer realm=\"vltava-write\"", "\(none.text)")
        let wrong = try await post(server.port, "/ogc/collections/stations/items", body: body, headers: [("Authorization", "Bearer not-a-token-at-all")])
        #expect(wrong.status == 401)
        let outside = try await post(server.port, "/ogc/collections/pens/items", body: body, headers: [("Authorization", "Bearer \(Self.stationsToken)")])
        #expect(outside.status == 403 && outside.object["code"] == .string("forbidden"), "\(outside.text)")
        let allowed = try await post(server.port, "/ogc/collections/stations/items", body: body, headers: [("Authorization", "Bearer \(Self.stationsToken)")])
        #expect(allowed.status == 201, "\(allowed.text)")
    }

    /// INSERT, UPDATE and DELETE over POST /v1/query: a write token for the layers they write,
    /// checked before any statement runs; bound values; read at once and numbered in the feed.
    @Test func writeStatementsOverQuery() async throws {
        let (server, store) = try await Self.writableServer("write-query")
        defer { server.stop() }
        let insert = #"{"query": "INSERT INTO stations (code, name, geom) VALUES ($1, $2, $3)", "params": ["QTEST", "Náměstí", {"lon": 14.4205, "lat": 50.0875}]}"#
        let json = [("Content-Type", "application/json")]
        let anonymous = try await post(server.port, "/v1/query", body: insert, headers: json)
        #expect(anonymous.status == 401, "\(anonymous.text)")
        let pensOnly = #"{"query": "FIND stations LIMIT 1; DELETE FROM pens WHERE fid = 1"}"#
        let outside = try await post(server.port, "/v1/query", body: pensOnly, headers: json + [("Authorization", "Bearer \(Self.stationsToken)")])
        #expect(outside.status == 403 && outside.object["code"] == .string("forbidden"), "\(outside.text)")

        let auth = json + [("Authorization", "Bearer \(Self.stationsToken)")]
        let inserted = try await post(server.port, "/v1/query", body: insert, headers: auth)
        #expect(inserted.status == 200, "\(inserted.text)")
        let imported = DemoFixtureStore.importedLayers
        #expect(inserted.text.contains(#""rows":[{"sequence":\#(imported + 1),"layer":"stations","fid":18,"change":"inserted"}]"#), "\(inserted.text)")
        let nearest = try await get(server.port, "/v1/layers/stations/nearest?lon=14.4208&lat=50.0880&k=1")
        #expect(nearest.text.contains(#""code":"QTEST""#), "\(nearest.text)")

        // A script: the update, then a FIND that sees it, in one request.
        let script = #"{"query": "UPDATE stations SET name = $1 WHERE code = 'QTEST'; FIND stations WHERE code = 'QTEST' RETURN name", "params": ["Staroměstské náměstí"]}"#
        let updated = try await post(server.port, "/v1/query", body: script, headers: auth)
        #expect(updated.status == 200 && updated.text.contains(#""name":"Staroměstské náměstí""#), "\(updated.text)")
        let feed = try await get(server.port, "/v1/changes?since=0")
        #expect(feed.text.contains(#"{"sequence":\#(imported + 2),"layer":"stations","fid":18,"change":"updated""#), "\(feed.text)")

        // EXPLAIN plans without writing, and needs no token.
        let explain = try await post(server.port, "/v1/query", body: "EXPLAIN DELETE FROM stations WHERE code = 'QTEST'")
        #expect(explain.status == 200 && explain.text.contains("not run: EXPLAIN does not write"), "\(explain.text)")
        let deleted = try await post(server.port, "/v1/query", body: #"{"query": "DELETE FROM stations WHERE code = 'QTEST'"}"#, headers: auth)
        #expect(deleted.status == 200 && deleted.text.contains(#""change":"deleted""#), "\(deleted.text)")
        let gone = try await get(server.port, "/v1/layers/stations/nearest?lon=14.4208&lat=50.0880&k=1")
        #expect(!gone.text.contains("QTEST"))
        #expect(FileManager.default.fileExists(atPath: store + "-writer"))
    }

    /// Caches follow the data: after a write to the stations, their answers and the tile that
    /// holds the new station get new ETags, while the districts' keep theirs (304 to the old
    /// one); TileJSON and the OGC collection say when the layer last changed.
    @Test func cachesFollowTheData() async throws {
        let (server, _) = try await Self.writableServer("write-etags")
        defer { server.stop() }
        let at = (lon: 14.4205, lat: 50.0875), z = 14
        let n = Double(1 << z), rad = at.lat * Double.pi / 180
        let x = Int((at.lon + 180) / 360 * n), y = Int((1 - log(tan(rad) + 1 / cos(rad)) / Double.pi) / 2 * n)
        let paths = ["/v1/layers/stations/nearest?lon=14.4208&lat=50.0880&k=1", "/v1/tiles/stations/\(z)/\(x)/\(y)",
                     "/ogc/collections/stations/items?limit=50",
                     "/v1/layers/districts/containing?lon=14.4208&lat=50.0880", "/v1/tiles/districts/\(z)/\(x)/\(y)"]
        var before: [String: String] = [:]
        for path in paths { before[path] = try #require(try await get(server.port, path).header("ETag"), "\(path)") }
        // A second later (the items page's timeStamp has moved on), the same tags still match.
        try await Task.sleep(for: .milliseconds(1100))
        for path in paths {
            let again = try await get(server.port, path, headers: [("If-None-Match", before[path] ?? "")])
            #expect(again.status == 304 && again.body.isEmpty, "\(path)")
        }
        let stationsJSON = try await get(server.port, "/v1/tiles/stations.json")
        let collection = try await get(server.port, "/ogc/collections/stations")
        let imported = try #require(collection.object["updated"]?.string)
        #expect(stationsJSON.json["updated"]?.string == imported)

        let feature = #"{"type": "Feature", "geometry": {"type": "Point", "coordinates": [14.4205, 50.0875]}, "properties": {"code": "ETAG1"}}"#
        let created = try await post(server.port, "/ogc/collections/stations/items", body: feature,
                                     headers: [("Authorization", "Bearer \(Self.token)"), ("Content-Type", "application/geo+json")])
        #expect(created.status == 201, "\(created.text)")
        for path in paths {
            let after = try await get(server.port, path, headers: [("If-None-Match", before[path] ?? "")])
            if path.contains("districts") {
                #expect(after.status == 304, "\(path)")
            } else {
                #expect(after.status == 200 && after.header("ETag") != before[path], "\(path)")
            }
        }
        let updated = try #require(try await get(server.port, "/ogc/collections/stations").object["updated"]?.string)
        #expect(updated > imported && updated.hasSuffix("Z"))
        #expect(try await get(server.port, "/v1/tiles/stations.json").json["updated"]?.string == updated)
        let districts = try await get(server.port, "/ogc/collections/districts").object["updated"]?.string
        #expect(districts != nil && (districts ?? "") < updated)
        #expect(try await get(server.port, "/v1/tiles/districts.json").json["updated"]?.string == districts)
    }
}
