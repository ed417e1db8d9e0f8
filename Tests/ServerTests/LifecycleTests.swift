// Loading, live reloads and logs: 503 until the first snapshot is there; new observations
// imported while `vltava serve` runs are seen after POST /v1/admin/reload or SIGHUP; requests
// keep succeeding while snapshots are swapped under them.

import Engine
import Foundation
import Geometry
import Logging
@testable import Server
import Support
import Synchronization
import TestSupport
import Testing

@Suite(.validatesStores) struct LifecycleTests {
    /// The port a `vltava serve` child prints ("listening on http://127.0.0.1:PORT"), once its
    /// /healthz answers 200; nil (with the issue recorded) when it prints none or never does.
    static func healthyPort(of server: ChildProcess) async throws -> Int? {
        var line = ""
        for _ in 0..<2000 where !line.contains("\n") {
            line = server.stdout
            try await Task.sleep(for: .milliseconds(10))
        }
        guard let port = line.split(separator: "\n").first?.split(separator: ":").last.flatMap({ Int($0) }) else {
            Issue.record("no port in \(line)\n\(server.stderr)")
            return nil
        }
        var health = try await get(port, "/healthz")
        for _ in 0..<400 where health.status != 200 {
            try await Task.sleep(for: .milliseconds(25))
            health = try await get(port, "/healthz")
        }
        #expect(health.status == 200)
        return health.status == 200 ? port : nil
    }

    @Test func answers503WhileLoading() async throws {
        let gate = DispatchSemaphore(value: 0)
        let store = try await DemoStore.path()
        let server = await RunningServer.start { _ in } load: {
            gate.wait()
            return try Engine(storePath: store)
        }
        defer { server.stop() }
        let health = try await get(server.port, "/healthz")
        #expect(health.status == 503)
        #expect(health.header("Retry-After") == "1")
        #expect(health.object["code"] == .string("snapshot_loading"))
        let notReady = try await get(server.port, "/readyz")
        #expect(notReady.status == 503 && notReady.object["code"] == .string("snapshot_loading"))
        let data = try await get(server.port, "/v1/layers/districts/containing?lon=14.4208&lat=50.0880")
        #expect(data.status == 503 && data.header("Content-Type") == "application/problem+json")
        // Bad parameters are still a 400: they do not depend on the data.
        #expect(try await get(server.port, "/v1/layers/districts/containing?lon=x&lat=50").status == 400)
        #expect(try await get(server.port, "/metrics").status == 200)
        gate.signal()
        try await server.ready()
        #expect(try await get(server.port, "/v1/layers/districts/containing?lon=14.4208&lat=50.0880").status == 200)
        // A GeoPackage store is ready once loaded (a readiness answer is kept for 250 ms).
        var ready = try await get(server.port, "/readyz")
        for _ in 0..<100 where ready.status != 200 {
            try await Task.sleep(for: .milliseconds(50))
            ready = try await get(server.port, "/readyz")
        }
        #expect(ready.status == 200 && ready.object["status"] == .string("ready"))
    }

    @Test func aStoreThatCannotLoadIs503WithTheReason() async throws {
        let server = await RunningServer.start(store: "/nonexistent/store.gpkg")
        defer { server.stop() }
        var answer = try await get(server.port, "/healthz")
        for _ in 0..<100 where answer.object["code"] == .string("snapshot_loading") {
            try await Task.sleep(for: .milliseconds(20))
            answer = try await get(server.port, "/healthz")
        }
        #expect(answer.status == 503 && answer.object["code"] == .string("snapshot_unavailable"))
    }

    /// The real binary, as deployed: import a later hour of observations while it runs, then
    /// reload through the admin endpoint (and see it refuse without the token); then import a
    /// new layer and reload with SIGHUP.
    @Test func reloadSeesNewlyImportedData() async throws {
        let store = try await DemoStore.copy()
        let directory = URL(fileURLWithPath: store).deletingLastPathComponent()
        let server = try ChildProcess(CLI.binary, ["serve", "--db", store, "--port", "0", "--log-level", "warning"],
                                      environment: ["VLTAVA_ADMIN_TOKEN": "s3cret"])
        defer { server.stop() }
        guard let port = try await Self.healthyPort(of: server) else { return }
        let nearest = "/v1/layers/stations/nearest?lon=14.4208&lat=50.0880"
        #expect(try await get(port, nearest).json["features"]?[0]?["properties"]?["observed_until"] == .string("2019-04-16T21:00:00Z"))

        // The next hour: every row of the fixture plus one new hour for AREPA.
        let original = try String(contentsOfFile: Fixtures.path("air/observations-2019-04-15-16.csv"), encoding: .utf8)
        let newHour = "AREPA,Praha 1-n. Republiky,urban,CHMI,50.088066,14.42922,2019-04-16 21:00:00.0 UTC,2019-04-16 22:00:00.0 UTC,2,good,99.9,0,20,21,0,0,0\n"
        let csv = directory.appendingPathComponent("observations-next-hour.csv")
        try (original.hasSuffix("\n") ? original + newHour : original + "\n" + newHour).write(to: csv, atomically: true, encoding: .utf8)
        let imported = try await offPool {
            let result = try CLI.run(["import", csv.path, "--layer", "observations", "--time-series-of", "stations", "--replace", "--db", store])
            return (status: result.status, stderr: result.stderr)
        }
        #expect(imported.status == 0, "\(imported.stderr)")
        // Imported, not yet reloaded: the server still answers from its snapshot.
        #expect(try await get(port, nearest).json["features"]?[0]?["properties"]?["observed_until"] == .string("2019-04-16T21:00:00Z"))

        #expect(try await post(port, "/v1/admin/reload", body: "").status == 401)
        let wrong = try await post(port, "/v1/admin/reload", body: "", headers: [("Authorization", "Bearer s3cres")])
        #expect(wrong.status == 401 && wrong.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
        let reloaded = try await post(port, "/v1/admin/reload", body: "", headers: [("Authorization", "Bearer s3cret")])
        #expect(reloaded.status == 200 && reloaded.object["status"] == .string("reloaded"))
        let after = try await get(port, nearest).json["features"]?[0]
        #expect(after?["properties"]?["observed_until"] == .string("2019-04-16T22:00:00Z"))
        #expect(after?["properties"]?["latest"]?["no2"]?["value"] == .double(99.9))

        // A new layer, and SIGHUP.
        #expect(try await offPool { try CLI.run(["import", Fixtures.path("air/stations-prague.csv"), "--layer", "stations_copy", "--db", store]).status } == 0)
        #expect(try await get(port, "/v1/layers/stations_copy/nearest?lon=14.4208&lat=50.0880").status == 404)
        kill(server.pid, SIGHUP)
        var copy = try await get(port, "/v1/layers/stations_copy/nearest?lon=14.4208&lat=50.0880")
        for _ in 0..<200 where copy.status != 200 {
            try await Task.sleep(for: .milliseconds(25))
            copy = try await get(port, "/v1/layers/stations_copy/nearest?lon=14.4208&lat=50.0880")
        }
        #expect(copy.json["features"]?[0]?["properties"]?["code"] == .string("AREPA"))
        let metrics = try await get(port, "/metrics").text
        #expect(metrics.contains("vltava_snapshot_reloads_total{result=\"ok\"} 2"))
    }

    /// SIGTERM with a client on the change feed: the stream ends (the client sees its end) and
    /// the server exits 0 within seconds, rather than wait for a client that never leaves.
    @Test func sigtermEndsTheChangeFeedAndStops() async throws {
        let store = try await DemoStore.copy()
        let server = try ChildProcess(CLI.binary, ["serve", "--db", store, "--port", "0", "--log-level", "warning"])
        defer { server.stop() }
        guard let port = try await Self.healthyPort(of: server) else { return }
        // curl as the feed's client: it prints the stream and exits when the server ends it.
        let client = try ChildProcess(URL(fileURLWithPath: "/usr/bin/curl"), ["-sN", "-H", "Accept: text/event-stream", "http://127.0.0.1:\(port)/v1/changes"])
        defer { client.stop() }
        for _ in 0..<500 where !client.stdout.contains("retry: 1000") { try await Task.sleep(for: .milliseconds(10)) }
        #expect(client.stdout.contains("retry: 1000"), "\(client.stderr)")
        let started = Date()
        kill(server.pid, SIGTERM)
        // (Waited for here: a few seconds of one thread, as `stop` waits in every test.)
        let status = try server.wait(timeout: 20)
        let seconds = Date().timeIntervalSince(started)
        #expect(status == 0 && seconds < 5, "exit \(status) after \(seconds) s")
        #expect(try client.wait(timeout: 5) == 0)
    }

    @Test func adminIsDisabledWithoutAToken() async throws {
        let server = try await RunningServer.shared.value
        let answer = try await post(server.port, "/v1/admin/reload", body: "", headers: [("Authorization", "Bearer anything")])
        #expect(answer.status == 404 && answer.object["code"] == .string("admin_disabled"))
    }

    /// Requests in flight while the snapshot is swapped ten times: every one succeeds with the
    /// same answer.
    @Test func requestsSucceedDuringReloads() async throws {
        let server = await RunningServer.start(store: try await DemoStore.path()) { $0.adminToken = "t" }
        defer { server.stop() }
        try await server.ready()
        let counters = Counters()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let connection = try await HTTPConnection.open(port: server.port)
                    while !counters.done.load(ordering: .relaxed) {
                        let response = try await connection.request("GET", "/v1/layers/districts/containing?lon=14.4208&lat=50.0880")
                        let ok = response.status == 200 && response.json["features"]?[0]?["properties"]?["NAZEV_MC"] == .string("Praha 1")
                        if !ok { counters.failures.add(1, ordering: .relaxed) }
                        counters.answered.add(1, ordering: .relaxed)
                    }
                }
            }
            group.addTask {
                defer { counters.done.store(true, ordering: .relaxed) }
                for _ in 0..<10 {
                    let reload = try await post(server.port, "/v1/admin/reload", body: "", headers: [("Authorization", "Bearer t")])
                    #expect(reload.status == 200)
                }
            }
            try await group.waitForAll()
        }
        #expect(counters.failures.load(ordering: .relaxed) == 0)
        #expect(counters.answered.load(ordering: .relaxed) > 10)
    }

    /// Requests are logged through swift-log with their route, status and time: one in
    /// `logSampleEvery` ordinary ones at info, marked with the rate, and every failed one.
    @Test func requestsAreSampledAndFailuresAlwaysLogged() async throws {
        let records = LogRecords()
        let store = try await DemoStore.path()
        let logger = Logger(label: "capture") { _ in CapturingHandler(records: records) }
        let server = await RunningServer.start({ $0.logLevel = .info; $0.logSampleEvery = 10; $0.slowRequest = .seconds(60) }, logger: logger) { try Engine(storePath: store) }
        defer { server.stop() }
        try await server.ready()
        for _ in 0..<20 { _ = try await get(server.port, "/v1/layers/districts/containing?lon=14.4208&lat=50.0880") }
        #expect(try await get(server.port, "/v1/layers/districts/containing?lon=914.4208&lat=50.0880").status == 400)
        #expect(try await get(server.port, "/v1/layers/nowhere/containing?lon=14.4208&lat=50.0880").status == 404)
        let requests = records.entries.withLock { $0.filter { $0.message == "request" } }
        let ok = requests.filter { $0.metadata["status"]?.description == "200" && $0.metadata["path"] == "/v1/layers/districts/containing" }
        #expect(ok.count == 2)  // 2 of any 20 in a row (the readiness probes count too)
        #expect(ok.allSatisfy { $0.level == .info && $0.metadata["sampled"]?.description == "10" })
        let entry = ok.first
        #expect(entry?.metadata["route"] == "/v1/layers/{layer}/containing")
        #expect(entry?.metadata["method"] == "GET")
        #expect(entry?.metadata["client"] == "127.0.0.1")
        #expect(Double(entry?.metadata["ms"]?.description ?? "") != nil)
        #expect(requests.filter { $0.level == .notice }.map { $0.metadata["status"]?.description } == ["400", "404"])
    }

    /// At debug every request is logged; a slow one is logged at warning whatever the sampling.
    @Test func debugLogsEveryRequestAndSlowOnesAlwaysShow() async throws {
        let store = try await DemoStore.path()
        for (level, sample, slow, expected) in [(Logger.Level.debug, 100, Duration.seconds(60), Logger.Level.debug),
                                                (.info, 0, .nanoseconds(1), .warning)] {
            let records = LogRecords()
            let logger = Logger(label: "capture") { _ in CapturingHandler(records: records) }
            let server = await RunningServer.start({ $0.logLevel = level; $0.logSampleEvery = sample; $0.slowRequest = slow },
                                                   logger: logger) { try Engine(storePath: store) }
            defer { server.stop() }
            try await server.ready()
            for _ in 0..<5 { _ = try await get(server.port, "/v1/layers/stations/nearest?lon=14.42&lat=50.08&k=1") }
            let levels = records.entries.withLock { $0.filter { $0.message == "request" && $0.metadata["path"] == "/v1/layers/stations/nearest" }.map(\.level) }
            #expect(levels == Array(repeating: expected, count: 5))
        }
    }
}

final class Counters: Sendable {
    let failures = Atomic<Int>(0)
    let answered = Atomic<Int>(0)
    let done = Atomic<Bool>(false)
}

final class LogRecords: Sendable {
    let entries = Mutex<[(level: Logger.Level, message: String, metadata: Logger.Metadata)]>([])
}

struct CapturingHandler: LogHandler {
    let records: LogRecords
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        records.entries.withLock { $0.append((event.level, event.message.description, merged)) }
    }
}

/// The serve command's log handler: one JSON object per line, metadata as members.
@Suite(.validatesStores) struct JSONLogTests {
    @Test func oneJSONObjectPerLine() throws {
        let pipe = Pipe()
        let sink = LogSink(fileDescriptor: pipe.fileHandleForWriting.fileDescriptor)
        var logger = Logger(label: "vltava.server") { JSONLogHandler(label: $0, level: .info, sink: sink) }
        logger[metadataKey: "hb.request.id"] = "abc"
        logger.info("request", metadata: ["route": "/v1/here", "status": "200", "quote": "a\"b"])
        logger.debug("not written at info")
        sink.flush()
        try pipe.fileHandleForWriting.close()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 1)
        guard case .object(let line)? = try? JSON.parse(String(lines.first ?? "")) else { Issue.record("not JSON: \(text)"); return }
        #expect(line["msg"] == .string("request") && line["level"] == .string("info") && line["logger"] == .string("vltava.server"))
        #expect(line["route"] == .string("/v1/here") && line["status"] == .string("200") && line["quote"] == .string("a\"b"))
        #expect(line["hb.request.id"] == .string("abc"))
        #expect(line["ts"]?.string?.hasSuffix("Z") == true && line["ts"]?.string?.count == 24)
    }
}

@Suite(.validatesStores) struct AccessLogFormatTests {
    @Test func milliseconds() {
        #expect(AccessMiddleware.milliseconds(0.000015) == "0.015")
        #expect(AccessMiddleware.milliseconds(0.0012345) == "1.235" || AccessMiddleware.milliseconds(0.0012345) == "1.234")
        #expect(AccessMiddleware.milliseconds(2.5) == "2500.000")
        #expect(AccessMiddleware.milliseconds(0) == "0.000")
    }
}
