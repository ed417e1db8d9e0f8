// Issue 38 in short (Benchmarks/failover-drill.sh is the long run): a primary and a synchronous
// standby on loopback, `vltava serve` on a URL naming both with target_session_attrs=read-write,
// and writes while the primary is killed (-9) and, six seconds later, the standby promoted.
// Every acknowledged write is on the new primary; every failed one was 503 database_unavailable
// with Retry-After, never 500; writes succeed again with no restart of Vltava; and the change
// feed resumed with the Last-Event-ID seen before the failover holds every acknowledged change.

import Dispatch
import Engine
import Foundation
import PostGIS
import Support
import TestSupport
import Testing

@Suite(.enabled(if: PostgresCluster.missing == nil, "\(PostgresCluster.missing ?? "")"), .serialized)
struct FailoverTests {
    /// One write's outcome: the HTTP status, Retry-After, the error code, the codes it sent and
    /// the sequence numbers its receipt gave.
    struct Outcome: Sendable {
        var status: Int
        var retryAfter: String?
        var code: String?
        var codes: [String]
        var sequences: [Int64]
        var afterPromotion: Bool
        /// When it was sent and answered, in seconds from the crash (negative: before).
        var sent = 0.0, answered = 0.0
    }

    static func post(_ port: Int, _ path: String, _ body: String, token: String) throws -> (status: Int, headers: [String: String], body: String) {
        try exchange(port, path, post: body, headers: ["Authorization: Bearer \(token)", "Content-Type: application/json"])
    }

    /// A batch inserting a station for each code.
    static func batch(_ codes: [String]) -> String {
        let operations = codes.enumerated().map { index, code in
            #"{"insert": "stations", "feature": {"type": "Feature", "geometry": {"type": "Point", "coordinates": [\#(14.3 + Double(index % 50) * 0.004), 50.05]}, "properties": {"code": "\#(code)"}}}"#
        }
        return #"{"operations": [\#(operations.joined(separator: ", "))]}"#
    }

    /// The sequence numbers of a receipt's (or a feed page's) changes.
    static func sequences(_ body: String) -> [Int64] {
        guard case .object(let root)? = try? JSON.parse(body), case .array(let changes)? = root["changes"] else { return [] }
        return changes.compactMap { change in
            guard case .object(let fields) = change, case .integer(let sequence)? = fields["sequence"] else { return nil }
            return sequence
        }
    }

    static func errorCode(_ body: String) -> String? {
        guard case .object(let root)? = try? JSON.parse(body), case .string(let code)? = root["code"] else { return nil }
        return code
    }

    @Test func aPromotedStandbyTakesTheWritesAndNothingAcknowledgedIsLost() async throws {
        try await onAThreadOfItsOwn {
            let primary = try PostgresCluster.start(extra: "-c synchronous_commit=on")
            defer { primary.stop() }
            try PostGISStore.push(geoPackage: try PushedStore.gpkg.get(), to: try PostGISDatabase(primary.url))
            // The standby starts with no synchronous standby of its own: once promoted it commits
            // alone until another standby joins (the drill brings the old primary back as one).
            let standby = try primary.standby(extra: "-c synchronous_commit=on")
            defer { standby.stop() }
            // Synchronous once the standby streams (set before, the primary's commits would wait for it).
            try primary.psql("ALTER SYSTEM SET synchronous_standby_names = 'walreceiver'")
            try primary.psql("SELECT pg_reload_conf()")
            var state = ""
            for _ in 0..<200 where state != "sync" {
                state = try primary.psql("SELECT sync_state FROM pg_stat_replication")
                if state != "sync" { usleep(50_000) }
            }
            #expect(state == "sync")

            let folder = try Fixtures.temporaryDirectory("failover")
            let tokenFile = folder.appendingPathComponent("tokens").path
            let token = "failover-\(UInt32.random(in: 0...UInt32.max))"
            try (token + "\n").write(toFile: tokenFile, atomically: true, encoding: .utf8)
            let url = "postgresql://\(PostgresCluster.user):\(PostgresCluster.password)@127.0.0.1:\(primary.port),127.0.0.1:\(standby.port)/"
                + "\(PostgresCluster.database)?target_session_attrs=read-write"
            let server = try ServedStore(url, cluster: primary, arguments: ["--write-token-file", tokenFile])
            defer { server.stop() }
            let statement = "FIND districts CONTAINING POINT(14.42 50.08) RETURN NAZEV_MC"
            let first = try server.firstAnswer { try server.post(statement) }
            #expect(first.status == 200 && first.body.contains("Praha 1"), "\(first)")

            // A writer, one batch after the other: 1 station, every fifth batch 100.
            let outcomes = Locked<[Outcome]>([])
            let promoted = Locked(false), running = Locked(true), crashed = Locked(Date.distantFuture)
            let port = server.port
            let writer = DispatchSemaphore(value: 0)
            Thread {
                var n = 0
                while running.withLock({ $0 }) {
                    let codes = n % 5 == 4 ? (0..<100).map { "fo-\(n)-\($0)" } : ["fo-\(n)"]
                    n += 1
                    let after = promoted.withLock { $0 }
                    let sent = Date().timeIntervalSince(crashed.withLock { $0 })
                    guard let answer = try? Self.post(port, "/v1/write", Self.batch(codes), token: token) else { continue }
                    outcomes.withLock {
                        $0.append(Outcome(status: answer.status, retryAfter: answer.headers["retry-after"], code: Self.errorCode(answer.body),
                                          codes: codes, sequences: answer.status == 200 ? Self.sequences(answer.body) : [], afterPromotion: after,
                                          sent: sent, answered: Date().timeIntervalSince(crashed.withLock { $0 })))
                    }
                }
                writer.signal()
            }.start()
            func acknowledged() -> Int { outcomes.withLock { $0.filter { $0.status == 200 }.count } }
            for _ in 0..<200 where acknowledged() < 10 { usleep(50_000) }
            // What a feed client has seen before the failover: the last event id.
            let seen = try exchange(port, "/v1/changes?limit=10000")
            let lastEventID = try #require(Self.sequences(seen.body).last)

            crashed.withLock { $0 = Date() }
            try primary.crash()
            sleep(6)  // no primary for six seconds, past the two a write waits for one: 503s meanwhile
            try standby.promote()
            promoted.withLock { $0 = true }
            let promotedAt = Date()
            var back: Double?
            while Date().timeIntervalSince(promotedAt) < 20 {
                if outcomes.withLock({ $0.contains { $0.afterPromotion && $0.status == 200 } }) {
                    back = back ?? Date().timeIntervalSince(promotedAt)
                    if outcomes.withLock({ $0.filter { $0.afterPromotion && $0.status == 200 }.count }) >= 10 { break }
                }
                usleep(20_000)
            }
            running.withLock { $0 = false }
            _ = writer.wait(timeout: .now() + 30)

            let all = outcomes.withLock { $0 }
            let statuses = Dictionary(grouping: all, by: \.status).mapValues(\.count)
            // Only 200 and 503: some of each, never 500, never anything else.
            let timeline = all.filter { $0.answered > -1 }.map { String(format: "%d %.2f–%.2f", $0.status, $0.sent, $0.answered) }
            #expect(Set(statuses.keys).isSubset(of: [200, 503]), "\(statuses): \(timeline.joined(separator: ", "))")
            #expect((statuses[503] ?? 0) > 0 && (statuses[200] ?? 0) > 10, "\(statuses): \(timeline.joined(separator: ", "))")
            for failed in all where failed.status == 503 {
                #expect(failed.retryAfter == "1" && failed.code == "database_unavailable", "\(failed)")
            }
            // Writes succeed again, after promotion, with no restart of the server.
            #expect(back != nil && all.filter { $0.afterPromotion && $0.status == 200 }.count >= 10, "\(statuses)")
            #expect(try exchange(port, "/readyz").status == 200, "the same server, never restarted, is ready")

            // Every acknowledged station is on the new primary.
            let stored = Set(try standby.psql("SELECT code FROM stations WHERE code LIKE 'fo-%'").split(separator: "\n").map(String.init))
            let acknowledgedCodes = all.filter { $0.status == 200 }.flatMap(\.codes)
            #expect(!acknowledgedCodes.isEmpty && acknowledgedCodes.allSatisfy(stored.contains),
                    "\(acknowledgedCodes.filter { !stored.contains($0) }.prefix(5)) acknowledged, not stored")
            #expect(acknowledgedCodes.contains { $0.hasSuffix("-99") }, "a 100-station batch was acknowledged")

            // The feed resumed after the last event seen before the failover: every change an
            // acknowledged write was told of is there, numbered on from it with no gap.
            let stream = try Fixtures.run(URL(fileURLWithPath: "/usr/bin/curl"), [
                "-s", "-N", "-m", "3", "-H", "Accept: text/event-stream", "-H", "Last-Event-ID: \(lastEventID)",
                "http://127.0.0.1:\(port)/v1/changes"])
            let ids = stream.stdout.split(separator: "\n").compactMap { line in line.hasPrefix("id: ") ? Int64(line.dropFirst(4)) : nil }
            let told = all.filter { $0.status == 200 }.flatMap(\.sequences).filter { $0 > lastEventID }
            #expect(!told.isEmpty && Set(told).isSubset(of: Set(ids)), "\(Set(told).subtracting(ids).sorted().prefix(5)) missing from the feed")
            #expect(ids.first == lastEventID + 1 && ids == Array((lastEventID + 1)...(ids.last ?? lastEventID)), "\(ids.prefix(5))…")
        }
    }
}

/// libpq's multi-host URLs, parsed without a server.
struct PostGISURLTests {
    @Test func severalHostsAndTheSessionAttributesParseAsLibpqReadsThem() throws {
        let url = try PostGISURL("postgresql://vltava:s3cret@10.0.0.1:5432,db2.example:5433,[::1]/geo?connect_timeout=3&target_session_attrs=read-write")
        #expect(url.servers.map(\.host) == ["10.0.0.1", "db2.example", "::1"] && url.servers.map(\.port) == [5432, 5433, 5432])
        #expect(url.sessionAttributes == .readWrite && url.user == "vltava" && url.password == "s3cret" && url.database == "geo")
        #expect(url.description == "postgresql://vltava@10.0.0.1:5432,db2.example:5433,[::1]:5432/geo?target_session_attrs=read-write")
        // One host, no attributes: as before.
        let one = try PostGISURL("postgres://a%40b:p%2Fw@localhost/db")
        #expect(one.servers.map(\.description) == ["localhost:5432"] && one.sessionAttributes == .any)
        #expect(one.user == "a@b" && one.password == "p/w" && one.description == "postgresql://a@b@localhost:5432/db")
        for value in ["any", "read-write", "read-only", "primary", "standby", "prefer-standby"] {
            #expect(try PostGISURL("postgresql://u@h1,h2/db?target_session_attrs=\(value)").sessionAttributes.rawValue == value)
        }
    }

    @Test func aBadURLIsRefusedWithoutItsPassword() {
        let cases = [
            ("postgresql://u:s3cret@h1,h2/db?target_session_attrs=master",
             "target_session_attrs=master is none of any, read-write, read-only, primary, standby, prefer-standby"),
            ("postgresql://u:s3cret@h1:5432,h2:99999/db", "port 99999 is out of range"),
            ("postgresql://u:s3cret@h1,/db", "no host"),
            ("postgresql://u:s3cret@h1:5432", "no database name"),
            ("postgresql://h1:5432/db", "no user"),
        ]
        for (text, why) in cases {
            do throws(EngineError) {
                _ = try PostGISURL(text)
                Issue.record("\(text) was taken")
            } catch {
                #expect(error.code == "store_error" && "\(error)".contains(why) && !"\(error)".contains("s3cret"), "\(text): \(error)")
            }
        }
    }
}
