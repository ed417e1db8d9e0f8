// Connection limits: a cap on open connections (the longest-waiting connection without a
// request in progress makes room for a new one; with none, the new one is closed), the
// request-head deadline, and one warning line per interval when they bite.
// Benchmarks/slowloris.py runs the same attack at 20,000 connections against the real binary.

import Engine
import Foundation
import Logging
@testable import Server
import TestSupport
import Testing

@Suite(.validatesStores) struct ConnectionLimitTests {
    /// 300 half-open connections (a partial head each) against a cap of 100: a real request on a
    /// new connection is answered at once, at most 100 connections are ever open, the warning
    /// is logged with the counts, and the head deadline closes the half-open ones.
    @Test func halfOpenConnectionsAreCappedAndLogged() async throws {
        let records = LogRecords()
        let store = try await DemoStore.path()
        let logger = Logger(label: "capture") { _ in CapturingHandler(records: records) }
        let server = await RunningServer.start({ configuration in
            configuration.logLevel = .warning
            configuration.maxConnections = 100
            configuration.headerTimeout = .seconds(5)
            configuration.limitWarningInterval = .seconds(3600)  // one interval for the whole test, however slow the machine
        }, logger: logger) { try Engine(storePath: store) }
        defer { server.stop() }
        try await server.ready()
        try await ConnectionLimitTests.untilClosed(server)
        // Counted from here: on a very slow run (ThreadSanitizer) a readiness probe can itself
        // meet the head deadline while the first snapshot loads.
        let before = server.server.connections.counts.totals

        var halfOpen: [HTTPConnection] = []
        for _ in 0..<300 {
            let connection = try await HTTPConnection.open(port: server.port)
            try await connection.send("GET /v1/layers HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            halfOpen.append(connection)
        }
        // A prompt client gets in while half-open ones fill the cap: it displaces one (how soon
        // is the load benchmark's business; a wall-clock bound here failed on busy machines).
        let real = try await get(server.port, "/v1/layers/districts/containing?lon=14.4208&lat=50.0880")
        #expect(real.status == 200 && real.json["features"]?[0]?["properties"]?["NAZEV_MC"] == .string("Praha 1"))

        let counts = server.server.connections.counts
        #expect(counts.peak == 100)
        #expect(counts.totals.refused == 0)
        // The first time a limit is hit it is logged at once; the rest wait for the next interval.
        let warnings = records.entries.withLock { $0.filter { $0.message == "connection limits hit" } }
        #expect(warnings.count == 1)
        #expect(warnings.first?.metadata["max_connections"]?.description == "100")

        // The connections that are still open never complete their heads: closed by the head
        // deadline (5 s), long before the idle timeout (30 s).
        try await eventually { server.server.connections.counts.open == 0 }
        #expect(server.server.connections.counts.open == 0)
        // 300 half-open and the real one in 100 places: every half-open one was displaced by a
        // newer one or closed by the head deadline. Which of the two depends on how fast the
        // 300 opened on a busy machine (a slow start lets the deadline close some early), so
        // the test counts them together.
        let totals = server.server.connections.counts.totals
        let evicted = totals.evicted - before.evicted, timedOut = totals.headerTimeouts - before.headerTimeouts
        #expect(evicted + timedOut == 300, "\(totals), before: \(before)")
        // Displacing did part of the work. How much depends on how fast the 300 opened against
        // the 5 s deadline (190–200 on a quiet machine, 88 with the whole suite beside it), so
        // only that it happened is asserted: the count is the load benchmark's business.
        #expect(evicted >= 1, "\(totals), before: \(before)")
        #expect(await halfOpen[299].isClosedByServer())
        #expect(try await get(server.port, "/healthz").status == 200)
    }

    /// The head deadline on a keep-alive connection runs from the first byte of the next
    /// request, not from the last answer: an idle wait longer than it is fine, a head that
    /// completes in a later read is fine, and a head left incomplete is closed. (The guard arms
    /// its timer only when a read ends with the head incomplete.)
    @Test func laterHeadsOnAKeepAliveConnectionAreTimed() async throws {
        // On a thread of its own: its steps are timed against the server's deadlines, and
        // tests beside it may block the cooperative pool for longer than those.
        try await onAThreadOfItsOwn {
            let store = try await DemoStore.path()
            let server = await RunningServer.start({ configuration in
                // Short, for a quicker test, but long enough for the test's own steps on a machine
                // that the full parallel run loads (3 s was missed there).
                configuration.headerTimeout = .seconds(8)
            }) { try Engine(storePath: store) }
            defer { server.stop() }
            try await server.ready()
            let before = server.server.connections.counts.totals.headerTimeouts
            let connection = try await HTTPConnection.open(port: server.port)
            #expect(try await connection.request("GET", "/healthz").status == 200)
            try await Task.sleep(for: .milliseconds(8500))  // idle, past the head deadline
            #expect(try await connection.request("GET", "/healthz").status == 200)
            try await connection.send("GET /healthz HTTP/1.1\r\nHo")
            try await Task.sleep(for: .milliseconds(200))
            try await connection.send("st: 127.0.0.1\r\n\r\n")  // the head completes in a second read
            #expect(try await connection.readResponse().status == 200)
            try await connection.send("GET /healthz HTTP/1.1\r\nHo")  // and this one never does
            #expect(await connection.isClosedByServer())
            #expect(server.server.connections.counts.totals.headerTimeouts == before + 1)
        }
    }

    /// When every open connection is in the middle of a request, a new one is closed at once.
    @Test func aConnectionBeyondBusyOnesIsClosed() async throws {
        // On a thread of its own: its steps are timed against the server's deadlines, and
        // tests beside it may block the cooperative pool for longer than those.
        try await onAThreadOfItsOwn {
            let store = try await DemoStore.path()
            let server = await RunningServer.start({ configuration in
                configuration.maxConnections = 2
                configuration.heavyWorkers = 1
                configuration.heavyQueue = 4
            }) { try Engine(storePath: store) }
            defer { server.stop() }
            try await server.ready()
            try await ConnectionLimitTests.untilClosed(server)
            // Hold the heavy pool, so two queries wait in it with their connections busy.
            let gate = DispatchSemaphore(value: 0)
            let pool = server.server.heavy
            let holding = Task { try await pool.run { gate.wait() } }
            // Running, not still queued: its thread (at nice 10) may start late on a busy machine,
            // and the two queries below must be the only jobs waiting.
            try await eventually { pool.counts.running >= 1 }
            #expect(pool.counts.running == 1)
            let a = try await HTTPConnection.open(port: server.port)
            let b = try await HTTPConnection.open(port: server.port)
            try await a.send("POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 11\r\n\r\nSHOW LAYERS")
            try await b.send("POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 11\r\n\r\nSHOW LAYERS")
            try await eventually { pool.counts.queued >= 2 }
            #expect(pool.counts.queued == 2)
            let c = try await HTTPConnection.open(port: server.port)
            #expect(await c.isClosedByServer())
            #expect(server.server.connections.counts.totals.refused == 1)
            gate.signal()
            try await holding.value
            #expect(try await a.readResponse(method: "POST").status == 200)
            #expect(try await b.readResponse(method: "POST").status == 200)
        }
    }

    /// Waits until the server has seen the readiness checks' connections close, so that the
    /// counts start from none.
    static func untilClosed(_ server: RunningServer) async throws {
        try await eventually { server.server.connections.counts.open == 0 }
        #expect(server.server.connections.counts.open == 0)
    }
}
