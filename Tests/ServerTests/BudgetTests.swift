// The budget of one request (EngineLimits, per request): statements in a body, rows in all
// the answers, bytes of the answer, seconds of work; the heavy endpoints' pool and its 503
// `busy`; and error messages that quote what a request sent only up to 200 characters.

import Engine
import Foundation
import Geometry
@testable import Server
import Support
import Synchronization
import TestSupport
import Testing

@Suite(.validatesStores) struct BudgetTests {
    /// A server on the demo store with `change` applied to its engine limits.
    static func server(limits change: (inout EngineLimits) -> Void = { _ in },
                       configure: @escaping (inout ServerConfiguration) -> Void = { _ in }) async throws -> RunningServer {
        var limits = RunningServer.testLimits
        change(&limits)
        let chosen = limits
        let store = try await DemoStore.path()
        let server = await RunningServer.start({ configuration in
            configuration.limits = chosen
            configure(&configuration)
        }) { try Engine(storePath: store, limits: chosen) }
        try await server.ready()
        return server
    }

    /// The report's body: 400 TILE statements in 12 KB took 21.5 s of CPU and answered 150 MB.
    /// Now it is refused before any statement runs, pointing at the 21st.
    @Test func fourHundredTilesAreRefusedAtOnce() async throws {
        let server = try await RunningServer.shared.value
        let body = Array(repeating: "TILE 15/17694/11097 OF zoo_map;", count: 400).joined(separator: "\n")
        #expect(body.utf8.count == 12_799)
        let answer = try await post(server.port, "/v1/query", body: body)
        #expect(answer.status == 422)
        #expect(answer.header("Content-Type") == "application/problem+json")
        #expect(answer.object["code"] == .string("too_many_statements"))
        #expect(answer.object["detail"] == .string("the request holds 400 statements, more than the limit of 20 per request"))
        #expect(answer.object["line"] == .integer(21) && answer.object["column"] == .integer(1))
        #expect(answer.body.count < 1000)
        // Refused before any statement ran is what the error at line 21 says; how long the
        // parse took is no test's business (a loaded run took 26.7 s to answer).
    }

    /// 20 statements are allowed; the rows of all of them count together: two tiles of 1,566
    /// rows each keep to the per-statement limit but not to a request's 2,000.
    @Test func rowsCountAcrossStatements() async throws {
        let shared = try await RunningServer.shared.value
        let twenty = try await post(shared.port, "/v1/query", body: Array(repeating: "SHOW LAYERS", count: 20).joined(separator: ";"))
        #expect(twenty.status == 200 && twenty.json.items.count == 20)
        let server = try await BudgetTests.server { $0.maxRowsPerRequest = 2000 }
        defer { server.stop() }
        let one = try await post(server.port, "/v1/query", body: "TILE 15/17694/11097 OF zoo_map")
        #expect(one.status == 200 && one.object["count"] == .integer(1566))
        let two = try await post(server.port, "/v1/query", body: "TILE 15/17694/11097 OF zoo_map\nTILE 15/17694/11097 OF zoo_map")
        #expect(two.status == 422)
        #expect(two.object["code"] == .string("too_many_rows"))
        #expect(two.object["detail"] == .string("the statements of this request answer 3132 rows in all, more than the limit of 2000 per request"))
        #expect(two.object["line"] == .integer(2) && two.object["column"] == .integer(1))
        #expect(two.object["hint"] == .string("add LIMIT n, or send the statements in separate requests"))
    }

    /// The answer's size is checked while it is written: past the limit it is a 422
    /// `response_too_large`, in the language and on the endpoints alike.
    @Test func responseBytesAreCapped() async throws {
        let server = try await BudgetTests.server { $0.maxResponseBytes = 1000 }
        defer { server.stop() }
        let small = try await post(server.port, "/v1/query", body: "FIND districts CONTAINING POINT(14.4208 50.0880) RETURN NAZEV_MC")
        #expect(small.status == 200 && small.text == #"{"count":1,"rows":[{"NAZEV_MC":"Praha 1"}]}"#)
        let large = try await post(server.port, "/v1/query", body: "FIND districts RETURN NAZEV_MC, KOD_MC")
        #expect(large.status == 422)
        #expect(large.object["code"] == .string("response_too_large"))
        #expect(large.object["detail"] == .string("the answer is larger than the limit of 1000 bytes per response"))
        // Praha 1 with its polygon is 15 KB of GeoJSON.
        let polygon = try await get(server.port, "/v1/layers/districts/containing?lon=14.4208&lat=50.0880&geometry=true")
        #expect(polygon.status == 422 && polygon.object["code"] == .string("response_too_large"))
        #expect(polygon.object["limit"] == .integer(1000))
        let bare = try await get(server.port, "/v1/layers/districts/containing?lon=14.4208&lat=50.0880&geometry=false")
        #expect(bare.status == 200)
    }

    /// The request's seconds of work: a deadline already passed stops the query before its
    /// first statement, the route before its search, the schedule before its first leg; a
    /// short one stops a run of tiles between two statements.
    @Test func deadlineStopsTheWork() async throws {
        let none = try await BudgetTests.server { $0.maxRequestSeconds = 0 }
        defer { none.stop() }
        let query = try await post(none.port, "/v1/query", body: "SHOW LAYERS")
        #expect(query.status == 422)
        #expect(query.object["code"] == .string("deadline_exceeded"))
        #expect(query.object["detail"] == .string("the request needs more than 0.0 s of work, the limit per request"))
        #expect(query.object["line"] == .integer(1) && query.object["column"] == .integer(1))
        let route = try await get(none.port, "/v1/route?from=14.4109,50.1167&to=14.40519,50.11576")
        #expect(route.status == 422 && route.object["code"] == .string("deadline_exceeded"))
        let plan = #"{"events":[{"place":"POINT(14.4109 50.1167)","start":"2026-06-20T14:00:00Z","end":"2026-06-20T14:10:00Z"},"#
            + #"{"place":"POINT(14.40519 50.11576)","start":"2026-06-20T14:30:00Z","end":"2026-06-20T14:40:00Z"}]}"#
        let schedule = try await post(none.port, "/v1/schedule/check", body: plan, headers: [("Content-Type", "application/json")])
        #expect(schedule.status == 422 && schedule.object["code"] == .string("deadline_exceeded"))
        #expect(schedule.object["leg"] == .integer(0))

        // A tile takes tens of milliseconds to decode and answer; twenty of them (LIMIT keeps
        // the rows within the request's 10,000) run past 50 ms: stopped inside a statement or
        // between two, and never all twenty answered.
        let short = try await BudgetTests.server { $0.maxRequestSeconds = 0.05 }
        defer { short.stop() }
        let tiles = try await post(short.port, "/v1/query",
                                   body: Array(repeating: "TILE 15/17694/11097 OF zoo_map LIMIT 500", count: 20).joined(separator: "\n"))
        #expect(tiles.status == 422 && tiles.object["code"] == .string("deadline_exceeded"))
        #expect((1.0...20.0).contains(tiles.object["line"]?.number ?? 0))
    }

    /// The heavy endpoints share a pool; when its threads are all working and its queue is full
    /// they answer 503 `busy` with Retry-After at once, while the light endpoints still answer.
    @Test func heavyEndpointsAreBusyWhenThePoolIsFull() async throws {
        let server = try await BudgetTests.server(configure: { configuration in
            configuration.heavyWorkers = 1
            configuration.heavyQueue = 0
        })
        defer { server.stop() }
        let gate = DispatchSemaphore(value: 0)
        let pool = server.server.heavy
        let holding = Task { try await pool.run { gate.wait() } }
        try await eventually { pool.counts.running > 0 }
        #expect(pool.counts.running == 1)
        for (method, target, body) in [("POST", "/v1/query", "SHOW LAYERS"), ("GET", "/v1/route?from=14.4109,50.1167&to=14.40519,50.11576", ""),
                                       ("GET", "/v1/tiles/zoo_map/16/35389/22192", "")] {
            let answer = try await HTTPConnection.open(port: server.port).request(method, target, body: Array(body.utf8))
            #expect(answer.status == 503, "\(target)")
            #expect(answer.object["code"] == .string("busy"), "\(target)")
            #expect(answer.header("Retry-After") == "1", "\(target)")
        }
        let light = try await get(server.port, "/v1/layers/districts/containing?lon=14.4208&lat=50.0880")
        #expect(light.status == 200 && light.json["features"]?[0]?["properties"]?["NAZEV_MC"] == .string("Praha 1"))
        let metrics = try await get(server.port, "/metrics").text
        #expect(metrics.contains("vltava_heavy_busy_total 3\n"))
        #expect(metrics.contains("vltava_heavy_running 1\n"))
        gate.signal()
        try await holding.value
        let after = try await post(server.port, "/v1/query", body: "SHOW LAYERS")
        #expect(after.status == 200)
    }

    /// A job that waited in the queue longer than `heavyQueueTimeout` is answered busy when its
    /// turn comes, without running.
    @Test func aJobThatWaitedTooLongIsNotRun() async throws {
        let pool = WorkPool(threads: 1, queueLimit: 4, maxWaitSeconds: 0.05)
        defer { pool.stop() }
        let gate = DispatchSemaphore(value: 0)
        let ran = Atomic<Int>(0)
        let first = Task { try await pool.run { gate.wait() } }
        // Waits of up to a minute: only a hang should fail them, not a busy machine (whose
        // timers may fire late: the worker is held until the refusal has happened).
        try await eventually { pool.counts.running > 0 }
        let late = Task { try await pool.run { ran.add(1, ordering: .relaxed) } }
        try await eventually { pool.counts.refused > 0 }
        gate.signal()
        try await first.value
        await #expect(throws: APIError.self) { try await late.value }
        #expect(ran.load(ordering: .relaxed) == 0)
        #expect(pool.counts.refused == 1)
    }

    /// A statement that keeps a worker busy far longer than any test waits: every parking
    /// zone's nearest district measured polygon to polygon, eight times over, in 20 statements.
    static let slowJoins = Array(repeating: "FIND parking RETURN " + Array(repeating: "(districts NEAREST).distance_m", count: 8).joined(separator: ", "),
                                 count: 20).joined(separator: ";\n")

    /// Join fields and aggregates run within the request's deadline: with 50 ms of work a
    /// statement whose feature references take seconds stops with 422 `deadline_exceeded`
    /// (before, each row's search ran to its end, and the answer came whole, late).
    @Test func joinsAndAggregatesStopAtTheDeadline() async throws {
        let server = try await BudgetTests.server { $0.maxRequestSeconds = 0.05 }
        defer { server.stop() }
        let join = "FIND parking RETURN fid, " + Array(repeating: "(districts NEAREST).distance_m", count: 8).joined(separator: ", ")
        let group = "FIND parking GROUP BY (districts NEAREST).NAZEV_MC RETURN (districts NEAREST).NAZEV_MC, COUNT(*), AVG((districts NEAREST).distance_m)"
        for text in [join, group] {
            let answer = try await post(server.port, "/v1/query", body: text)
            #expect(answer.status == 422, "\(text)")
            #expect(answer.object["code"] == .string("deadline_exceeded"), "\(text)")
            let detail = answer.object["detail"]?.string ?? ""
            #expect(detail.hasPrefix("the request needs more than 0.") && detail.hasSuffix(" s of work, the limit per request"), "\(detail)")
            #expect(answer.object["line"] == .integer(1) && answer.object["column"] == .integer(1), "\(text)")
        }
    }

    /// A client that leaves while its query runs frees the worker: the connection's input
    /// closes, the request's deadline passes with it, and the next request runs on the one
    /// worker (the pool has no queue: busy, it would answer 503).
    @Test func aClientThatLeavesFreesItsWorker() async throws {
        let server = try await BudgetTests.server(limits: { limits in
            limits.maxRequestSeconds = 600
            limits.maxRowsPerRequest = 1_000_000
        }, configure: { configuration in
            configuration.heavyWorkers = 1
            configuration.heavyQueue = 0
        })
        defer { server.stop() }
        let pool = server.server.heavy
        let leaving = try await HTTPConnection.open(port: server.port)
        let body = Array(BudgetTests.slowJoins.utf8)
        try await leaving.send("POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: \(body.count)\r\n\r\n")
        try await leaving.send(body)
        // Waits of up to a minute: only a hang (or work that never stops) should fail them.
        try await eventually { pool.counts.running > 0 }
        #expect(pool.counts.running == 1)
        let busy = try await post(server.port, "/v1/query", body: "SHOW LAYERS")
        #expect(busy.status == 503 && busy.object["code"] == .string("busy"))
        leaving.leave()
        try await eventually { pool.counts.running == 0 }
        #expect(pool.counts.running == 0)
        let next = try await post(server.port, "/v1/query", body: "SHOW LAYERS")
        #expect(next.status == 200 && next.text.contains(#""districts""#))
    }

    /// A queued job is refused the moment its wait passes the bound, while the thread it waits
    /// for is still busy (before, it waited for the thread, however long that took).
    @Test func aQueuedJobIsRefusedWhenItsWaitRunsOut() async throws {
        let pool = WorkPool(threads: 1, queueLimit: 4, maxWaitSeconds: 0.05)
        defer { pool.stop() }
        let gate = DispatchSemaphore(value: 0)
        let ran = Atomic<Int>(0)
        let first = Task { try await pool.run { gate.wait() } }
        try await eventually { pool.counts.running > 0 }
        // Frees the thread after a minute whatever happens, so a failure fails rather than hangs.
        let backstop = Task { try await Task.sleep(for: .seconds(60)); gate.signal() }
        let late = Task { try await pool.run { ran.add(1, ordering: .relaxed) } }
        await #expect(throws: APIError.self) { try await late.value }
        #expect(pool.counts.running == 1 && pool.counts.queued == 0 && pool.counts.refused == 1)
        backstop.cancel()
        gate.signal()
        try await first.value
        #expect(ran.load(ordering: .relaxed) == 0)
    }

    /// A queued job whose client has gone is dropped when its turn comes, without running.
    @Test func aCancelledQueuedJobIsNotRun() async throws {
        let pool = WorkPool(threads: 1, queueLimit: 4, maxWaitSeconds: 60)
        defer { pool.stop() }
        let gate = DispatchSemaphore(value: 0)
        let ran = Atomic<Int>(0)
        let first = Task { try await pool.run { gate.wait() } }
        try await eventually { pool.counts.running > 0 }
        let departure = Cancellation()
        let dropped = Task { try await pool.run(cancellation: departure) { ran.add(1, ordering: .relaxed) } }
        try await eventually { pool.counts.queued > 0 }
        departure.cancel()
        gate.signal()
        try await first.value
        await #expect(throws: APIError.self) { try await dropped.value }
        #expect(ran.load(ordering: .relaxed) == 0)
        // The pool goes on: the next job runs.
        #expect(try await pool.run { 42 } == 42)
    }

    /// Errors quote what was sent up to 200 characters and an ellipsis, never whole.
    @Test func errorsQuoteInputShort() async throws {
        let server = try await RunningServer.shared.value
        let x200 = String(repeating: "x", count: 200)
        let number = try await get(server.port, "/v1/layers/districts/containing?lon=\(String(repeating: "x", count: 5000))&lat=50")
        #expect(number.status == 400)
        #expect(number.object["detail"] == .string("lon: '\(x200)…' is not a number"))

        let name = String(repeating: "a", count: 60_000)
        let layer = try await post(server.port, "/v1/query", body: "FIND \(name) CONTAINING POINT(14.42 50.08)")
        #expect(layer.status == 404 && layer.object["code"] == .string("unknown_layer"))
        #expect(layer.object["detail"] == .string("unknown layer '\(String(repeating: "a", count: 200))…'"))
        #expect(layer.body.count < 1500)

        let string = try await post(server.port, "/v1/query", body: "FIND districts CONTAINING '\(String(repeating: "s", count: 60_000))'")
        #expect(string.status == 400)
        #expect((string.object["detail"]?.string ?? "").hasSuffix("found string '\(String(repeating: "s", count: 200))…'"))
        #expect(string.body.count < 1500)

        // Event names come back in a leg's error.
        let long = String(repeating: "n", count: 20_000)
        let plan = #"{"events":[{"name":"\#(long)","place":"POINT(14.4109 50.1167)","start":"2026-06-20T14:00:00Z","end":"2026-06-20T14:10:00Z"},"#
            + #"{"name":"\#(long)","place":"POINT(14.5 50.0)","start":"2026-06-20T14:30:00Z","end":"2026-06-20T14:40:00Z"}]}"#
        let schedule = try await post(server.port, "/v1/schedule/check", body: plan, headers: [("Content-Type", "application/json")])
        #expect(schedule.status == 422 && schedule.object["code"] == .string("NoSegment"))
        let n200 = String(repeating: "n", count: 200)
        #expect((schedule.object["detail"]?.string ?? "").hasPrefix("leg from \(n200)… to \(n200)…: "))
        #expect(schedule.body.count < 1500)
    }
}
