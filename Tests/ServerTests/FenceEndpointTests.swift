import Foundation
import Geometry
import Support
import Testing
import TestSupport

/// Live layers and fences over real HTTP, against `vltava serve` children: the random walk
/// against shapely's brute force (Tests/Clients/fences_bruteforce.py, short), fences surviving a
/// `kill -9`, and clear errors for what a client gets wrong.
@Suite struct FenceEndpointTests {
    static let token = "fence-test-token-0123456789"
    static let auth = [("Authorization", "Bearer \(token)")]

    /// A `vltava serve` child on a copy of the demo store, taking writes with `token`.
    static func serve(_ store: String) async throws -> (ChildProcess, Int)? {
        let tokens = URL(fileURLWithPath: store).deletingLastPathComponent().appendingPathComponent("tokens").path
        try Self.token.write(toFile: tokens, atomically: true, encoding: .utf8)
        let server = try ChildProcess(CLI.binary, ["serve", "--db", store, "--port", "0", "--log-level", "warning", "--write-token-file", tokens])
        guard let port = try await LifecycleTests.healthyPort(of: server) else {
            server.stop()
            return nil
        }
        return (server, port)
    }

    static func put(_ port: Int, _ target: String, _ body: String) async throws -> HTTPResponse {
        try await HTTPConnection.request(port: port, "PUT", target, headers: auth + [("Content-Type", "application/json")], body: Array(body.utf8))
    }

    /// Declared live layers, fences and webhooks are in the store when the server is killed
    /// with SIGKILL, and a new server on it runs them (the positions, memory, are gone, but a
    /// durable layer's, kept before their answer).
    @Test func fencesSurviveKillMinus9() async throws {
        let store = try await DemoStore.copy()
        guard let (first, port) = try await Self.serve(store) else { return }
        #expect(try await Self.put(port, "/v1/live/visitors", #"{"history": {"last": 3}, "ttl_s": 600}"#).status == 200)
        let gorillas = #"{"watch": {"layer": "visitors"}, "area": {"layer": "pens", "match": {"name": "gorily"}, "within_m": 50}, "hysteresis_m": 10}"#
        #expect(try await Self.put(port, "/v1/fences/gorillas", gorillas).status == 200)
        #expect(try await Self.put(port, "/v1/webhooks/app", #"{"url": "http://127.0.0.1:9/hook", "secret": "0123456789abcdef"}"#).status == 200)
        let inside = #"{"positions": [{"id": "phone", "position": [14.40519, 50.1160]}]}"#
        let entered = try await post(port, "/v1/live/visitors/positions", body: inside, headers: Self.auth + [("Content-Type", "application/json")])
        #expect(entered.json["events"]?[0]?["event"] == .string("enter") && entered.json["events"]?[0]?["feature"]?["fid"] == .integer(4_791_797_957))
        #expect(try await Self.put(port, "/v1/live/keepers", #"{"durable": true}"#).status == 200)
        let keeper = #"{"positions": [{"id": "k1", "position": [14.40519, 50.1160], "time": 1780000000, "fields": {"shift": "early"}}]}"#
        #expect(try await post(port, "/v1/live/keepers/positions", body: keeper, headers: Self.auth + [("Content-Type", "application/json")]).status == 200)
        kill(first.pid, SIGKILL)
        _ = try first.wait(timeout: 10)

        guard let (second, again) = try await Self.serve(store) else { return }
        defer { second.stop() }
        let fences = try await get(again, "/v1/fences").json["fences"]?.items ?? []
        #expect(fences.map { $0["name"] } == [.string("gorillas")] && fences.first?["running"] == .bool(true))
        #expect(fences.first?["definition"] == (try? JSON.parse(gorillas)))
        let layers = try await get(again, "/v1/live").json["layers"]?.items ?? []
        #expect(layers.map { $0["name"] } == [.string("keepers"), .string("visitors")])
        #expect(layers.last?["objects"] == .integer(0) && layers.last?["ttl_s"] == .double(600) && layers.last?["durable"] == .bool(false))
        #expect(layers.first?["objects"] == .integer(1) && layers.first?["durable"] == .bool(true))
        let k1 = try await get(again, "/v1/live/keepers/objects/k1").json
        #expect(k1["geometry"]?["coordinates"] == .array([.double(14.40519), .double(50.116)]) && k1["properties"]?["fields"]?["shift"] == .string("early") && k1["properties"]?["time"] == .string("2026-05-28T20:26:40.000Z"), "\(k1)")
        let webhook = try await get(again, "/v1/webhooks/app", headers: Self.auth).json
        #expect(webhook["url"] == .string("http://127.0.0.1:9/hook") && webhook["secret"] == nil)
        // The phone is unknown again: its next position inside is a new enter.
        let reentered = try await post(again, "/v1/live/visitors/positions", body: inside, headers: Self.auth + [("Content-Type", "application/json")])
        #expect(reentered.json["events"]?[0]?["event"] == .string("enter"))
    }

    /// Fences through the language over POST /v1/query: listing needs no token, adding and
    /// dropping need one for every layer, and what the language adds PUT's list shows.
    @Test func fencesThroughTheQueryEndpoint() async throws {
        let store = try await DemoStore.copy()
        guard let (server, port) = try await Self.serve(store) else { return }
        defer { server.stop() }
        #expect(try await Self.put(port, "/v1/live/visitors", #"{"ttl_s": 600}"#).status == 200)
        let create = #"{"query": "CREATE FENCE entrance AS $1", "params": ["{\"watch\": {\"layer\": \"visitors\"}, \"area\": {\"point\": [14.4052, 50.1157], \"radius_m\": 30}}"]}"#
        let json = [("Content-Type", "application/json")]
        #expect(try await post(port, "/v1/query", body: create, headers: json).status == 401)
        let created = try await post(port, "/v1/query", body: create, headers: Self.auth + json)
        #expect(created.status == 200 && created.json["rows"]?[0]?["name"] == .string("entrance"), "\(created.text)")
        #expect(try await get(port, "/v1/fences").json["fences"]?.items.map { $0["name"] } == [.string("entrance")])
        let shown = try await post(port, "/v1/query", body: #"{"query": "SHOW FENCES"}"#, headers: json)
        #expect(shown.status == 200 && shown.json["rows"]?[0]?["running"] == .bool(true), "\(shown.text)")
        let dropped = try await post(port, "/v1/query", body: #"{"query": "DROP FENCE entrance"}"#, headers: Self.auth + json)
        let left = try await get(port, "/v1/fences").json["fences"]?.items.count
        #expect(dropped.status == 200 && left == 0)
    }

    @Test func badRequestsGetClearErrors() async throws {
        let store = try await DemoStore.copy()
        guard let (server, port) = try await Self.serve(store) else { return }
        defer { server.stop() }
        func problem(_ response: HTTPResponse) -> String {
            "\(response.status) \(response.json["code"]?.string ?? "") \(response.json["detail"]?.string ?? "")"
        }
        #expect(try await Self.put(port, "/v1/live/visitors", "{}").status == 200)
        #expect(problem(try await Self.put(port, "/v1/live/pens", "{}")) == "422 layer_exists 'pens' is a store layer; a live layer needs a name of its own")
        #expect(problem(try await Self.put(port, "/v1/fences/f", #"{"watch": {"layer": "cars"}, "area": {"point": [14.4, 50.1], "radius_m": 5}}"#))
                    == "404 unknown_live_layer watch.layer: no live layer named 'cars' (declare it first: PUT /v1/live/cars)")
        #expect(problem(try await Self.put(port, "/v1/fences/f", #"{"watch": {"layer": "visitors"}, "area": {"layer": "pens", "fids": [1]}}"#))
                    == "400 empty_fence area: no feature of pens is selected (fids, match)")
        #expect(problem(try await Self.put(port, "/v1/fences/f", "{not json")).hasPrefix("400 invalid_json the body is not JSON"))
        let positions = [("Content-Type", "application/json")] + Self.auth
        #expect(problem(try await post(port, "/v1/live/visitors/positions", body: #"{"positions": [{"id": "a", "position": [14.4, 50.1]}, {"id": "b", "position": [14.4, NaN]}]}"#, headers: positions))
                    .hasPrefix("400 invalid_json"))
        #expect(problem(try await post(port, "/v1/live/visitors/positions", body: #"{"positions": [{"id": "a", "position": [14.4, 50.1]}, {"id": "b", "position": [1e308, 50]}]}"#, headers: positions))
                    .hasPrefix("400 invalid_position position 2: position: "))
        // The batch was refused whole: a is not there.
        #expect(try await get(port, "/v1/live/visitors/objects/a").status == 404)
        #expect(problem(try await post(port, "/v1/live/cars/positions", body: #"{"positions": [{"id": "a", "position": [14.4, 50.1]}]}"#, headers: positions))
                    == "404 unknown_live_layer no live layer named 'cars'")
        #expect(try await post(port, "/v1/live/visitors/positions", body: #"{"positions": [{"id": "a", "position": [14.4, 50.1]}]}"#).status == 401)
        #expect(problem(try await get(port, "/v1/events?after=-3")) == "400 invalid_parameter after: '-3' is not an event id")
        #expect(try await get(port, "/v1/fences/nothing/events").status == 404)
    }
}

/// The fences' clients nobody here wrote, each driving its own `vltava serve`: shapely's brute
/// force over a random walk, sseclient-py reconnecting, a webhook receiver that fails. They run
/// in the second pass of `make test`, with the PostgreSQL suite (see the Makefile): their
/// Python processes take a core each for seconds, which the first pass's wall-clock bounds
/// would feel.
@Suite struct LiveClientTests {
    /// Every enter, exit and cross of 100 objects' 5,000 random steps over the zoo against 197
    /// fences (pavilions, pens, circles, roaming pairs) equals what shapely computes, in the same
    /// order; dwell and hysteresis on a jittered track along a fence's edge as documented.
    @Test func aRandomWalkMatchesShapelysBruteForce() async throws {
        let store = try await DemoStore.copy()
        let script = Fixtures.root.appendingPathComponent("Tests/Clients/fences_bruteforce.py").path
        let run = try await offPool {
            try Fixtures.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script, "--vltava", CLI.binary.path, "--store", store,
                                                                    "--objects", "100", "--updates", "5000", "--seed", "7"])
        }
        #expect(run.status == 0, "\(run.stdout.suffix(3000))\n\(run.stderr.suffix(2000))")
        #expect(run.stdout.contains("fences brute force: ") && run.stdout.contains("events, all equal"), "\(run.stdout.suffix(2000))")
    }

    /// sseclient-py leaves and comes back 50 times while positions make events: the events it
    /// got, in order, are exactly the feed's (none missed, none twice); a stream resuming from
    /// before the run is told `missed` first (Tests/Clients/sse_resume.py).
    @Test func anSSEClientReconnecting50TimesMissesNone() async throws {
        let run = try await Self.client("sse_resume.py", ["--reconnects", "50", "--seed", "5"])
        #expect(run.status == 0, "\(run.stdout.suffix(3000))\n\(run.stderr.suffix(2000))")
        #expect(run.stdout.contains("over 50 reconnections, none missed"), "\(run.stdout.suffix(1000))")
    }

    /// A webhook receiver that fails 30% of calls (500s, and a connection closed unanswered) and
    /// is down twice gets every event at least once, in order, signed (Tests/Clients/webhook_delivery.py).
    @Test func aFailingWebhookReceiverGetsEveryEventInOrder() async throws {
        let run = try await Self.client("webhook_delivery.py", ["--failure-rate", "0.3", "--restarts", "2", "--events", "100",
                                                                "--duration", "3", "--max-drops", "2", "--seed", "3"])
        #expect(run.status == 0, "\(run.stdout.suffix(3000))\n\(run.stderr.suffix(2000))")
        #expect(run.stdout.contains("all delivered in order"), "\(run.stdout.suffix(1000))")
    }

    /// The same over https: the receiver's certificate comes from a CA made for the run, which
    /// `--webhook-ca` trusts, and its name (localhost) is checked. A file that holds no
    /// certificate stops the server at start, naming it.
    @Test func anHTTPSWebhookReceiverGetsEveryEventInOrder() async throws {
        let run = try await Self.client("webhook_delivery.py", ["--tls", "--failure-rate", "0.3", "--restarts", "1", "--events", "60",
                                                                "--duration", "2", "--max-drops", "2", "--seed", "4"])
        #expect(run.status == 0, "\(run.stdout.suffix(3000))\n\(run.stderr.suffix(2000))")
        #expect(run.stdout.contains("webhook: 60 events") && run.stdout.contains("all delivered in order"), "\(run.stdout.suffix(1000))")

        let notPEM = try Fixtures.temporaryDirectory("webhook-ca").appendingPathComponent("ca.pem")
        try "not a certificate\n".write(to: notPEM, atomically: true, encoding: .utf8)
        let refused = try CLI.run(["serve", "--db", try await DemoStore.copy(), "--port", "0", "--webhook-ca", notPEM.path])
        #expect(refused.status != 0 && refused.stderr.contains("--webhook-ca \(notPEM.path): "), "\(refused.stderr)")
    }

    static func client(_ script: String, _ arguments: [String]) async throws -> CLI.Result {
        let store = try await DemoStore.copy()
        let path = Fixtures.root.appendingPathComponent("Tests/Clients/\(script)").path
        return try await offPool {
            try Fixtures.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", path, "--vltava", CLI.binary.path, "--store", store] + arguments)
        }
    }
}
