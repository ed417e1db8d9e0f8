// The event loop's fast path (Sources/Server/FastPath.swift) answers exactly as the router: the
// same server started twice on the demo store, once with it and once without, gives the same
// status, fields (but Date) and bytes for every request: answers, gzip, 304, errors, CORS and
// filters (the last three are the router's, through the fast path's hand-over). It counts its
// requests in the same metrics, and keeps answers in order behind a request the router is
// still answering on the same connection (pipelining).

import Foundation
import Support
import TestSupport
import Testing

@Suite(.serialized) struct FastPathTests {
    static let servers: Task<(fast: RunningServer, routed: RunningServer), any Error> = Task {
        let store = try await DemoStore.path()
        let fast = await RunningServer.start(store: store)
        let routed = await RunningServer.start(store: store) { $0.fastPath = false }
        try await fast.ready()
        try await routed.ready()
        return (fast, routed)
    }

    struct Comparable: Equatable {
        var status: Int
        var fields: [String]
        var body: [UInt8]
    }

    /// Status, the fields but Date (in order), and the body.
    static func comparable(_ response: HTTPResponse) -> Comparable {
        Comparable(status: response.status, fields: response.headers.filter { $0.name.lowercased() != "date" }.map { "\($0.name.lowercased()): \($0.value)" },
                   body: response.body)
    }

    @Test func everyAnswerIsTheRoutersOwn() async throws {
        let (fast, routed) = try await Self.servers.value
        var generator = SplitMix(state: 37)
        var targets: [(String, [(String, String)])] = []
        for n in 0..<60 {
            let lon = Double.random(in: 14.2...14.75, using: &generator), lat = Double.random(in: 49.93...50.19, using: &generator)
            let point = "lon=\(String(format: "%.5f", lon))&lat=\(String(format: "%.5f", lat))"
            targets.append(("/v1/layers/districts/containing?\(point)\(n % 3 == 0 ? "&geometry=true" : "")", []))
            targets.append(("/v1/layers/stations/nearest?\(point)&k=\(1 + n % 5)", []))
            targets.append(("/v1/layers/pens/nearest?\(point)&k=\(5 + n % 20)&geometry=true", n % 2 == 0 ? [("Accept-Encoding", "gzip, deflate")] : []))
        }
        targets += [
            ("/v1/layers/districts/containing?lon=14.4208&lat=50.0880", [("Accept-Encoding", "gzip")]),
            ("/v1/layers/districts/containing?lon=14.4208&lat=50.0880&geometry=true", [("Accept-Encoding", "gzip;q=0")]),
            ("/v1/layers/districts/containing?lat=50.0880&lon=14.4208", [("Origin", "https://example.org")]),
            ("/v1/layers/stations/nearest?lon=14.4208&lat=50.0880&k=2&where=no2", []),
            ("/v1/layers/stations/nearest?lon=14.4208&lat=50.0880&attr.classif=urban", []),
            ("/v1/layers/stations/nearest?lon=14.4208&lat=50.0880&within_m=900&k=5", []),
            // Errors, answered by the router through the hand-over.
            ("/v1/layers/districts/containing?lon=14.4208", []),
            ("/v1/layers/districts/containing?lon=214.4&lat=50", []),
            ("/v1/layers/districts/containing?lng=14.4&lat=50", []),
            ("/v1/layers/nowhere/containing?lon=14.4&lat=50", []),
            ("/v1/layers/animals/containing?lon=14.4&lat=50", []),
            ("/v1/layers/stations/nearest?lon=14.4&lat=50&k=0", []),
            ("/v1/layers/stations/nearest?lon=14.4&lat=50&k=99999999999999999999", []),
            ("/v1/layers/stations/nearest?lon=nan&lat=50", []),
            ("/v1/layers/stations/nearest?lon=14.4&lat=50&lon=14.5", []),
            ("/v1/layers/stations/nearer?lon=14.4&lat=50", []),
            ("/v1/layers//containing?lon=14.4&lat=50", []),
            ("/v1/layers/dis%74ricts/containing?lon=14.4208&lat=50.0880", []),
            ("/v1/layers/districts/containing?lon=14.4208&lat=50.0880&" + String(repeating: "x", count: 9000) + "=1", []),
        ]
        var answered = 0
        for (target, headers) in targets {
            let a = try await get(fast.port, target, headers: headers)
            let b = try await get(routed.port, target, headers: headers)
            #expect(Self.comparable(a) == Self.comparable(b), "\(target.prefix(120)) \(headers)")
            if a.status == 200 { answered += 1 }
            // Asked again with its ETag: a bodiless 304 from both.
            if a.status == 200, let tag = a.header("ETag"), target.hasSuffix("k=1") || target.hasSuffix("k=2") {
                let c = try await get(fast.port, target, headers: headers + [("If-None-Match", tag)])
                let d = try await get(routed.port, target, headers: headers + [("If-None-Match", tag)])
                #expect(c.status == 304 && Self.comparable(c) == Self.comparable(d), "\(target)")
            }
        }
        #expect(answered == 187, "\(answered)")
        // /healthz: the same fields and keys (the load times differ between the two servers).
        let (h1, h2) = (try await get(fast.port, "/healthz"), try await get(routed.port, "/healthz"))
        #expect(h1.status == 200 && h1.headers.map(\.name) == h2.headers.map(\.name) && h1.json["status"] == .string("ok"))
        #expect(h1.object.keys == h2.object.keys && h1.json["layers"] == h2.json["layers"])
    }

    /// The fast answers are in the same metrics, under the route's template.
    @Test func theMetricsCountThem() async throws {
        let (fast, _) = try await Self.servers.value
        func served() async throws -> Int {
            let metrics = try await get(fast.port, "/metrics").text
            let prefix = "vltava_http_requests_total{route=\"/v1/layers/{layer}/containing\",method=\"GET\",status=\"200\"}"
            return metrics.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { $0.split(separator: " ").last.flatMap { Int($0) } } ?? 0
        }
        let before = try await served()
        for _ in 0..<25 { _ = try await get(fast.port, "/v1/layers/districts/containing?lon=14.4208&lat=50.0880") }
        #expect(try await served() - before == 25)
    }

    /// Pipelined on one connection: a query the router answers, then a fast request, then
    /// another query. The answers come in the order asked.
    @Test func pipelinedAnswersKeepTheirOrder() async throws {
        let (fast, _) = try await Self.servers.value
        let connection = try await HTTPConnection.open(port: fast.port)
        let query = "FIND stations NEAREST 3 TO POINT(14.42 50.08) RETURN code"
        let post = "POST /v1/query HTTP/1.1\r\nHost: x\r\nContent-Length: \(query.utf8.count)\r\n\r\n\(query)"
        let fastGet = "GET /v1/layers/districts/containing?lon=14.4208&lat=50.0880 HTTP/1.1\r\nHost: x\r\n\r\n"
        try await connection.send(post + fastGet + post + fastGet)
        let first = try await connection.readResponse(method: "POST"), second = try await connection.readResponse()
        let third = try await connection.readResponse(method: "POST"), fourth = try await connection.readResponse()
        #expect(first.status == 200 && first.text.contains("\"rows\"") && third.text == first.text)
        #expect(second.status == 200 && second.text.contains("\"NAZEV_MC\":\"Praha 1\"") && fourth.text == second.text)
    }
}
