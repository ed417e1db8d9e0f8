// Issue 30 on the PostGIS store: a database that stops and starts under a running server (503
// `database_unavailable` with Retry-After, never 500; `/readyz` follows the database while
// `/healthz` stays 200), OGC API items of a layer kept in PostgreSQL paged by PostgreSQL, a NUL
// in text refused alike on both stores, and libpq's PGPASSWORD and password file. Tests of the
// same serialized suite (they stop the shared cluster).

import Dispatch
import Engine
import Foundation
import Geometry
import PostGIS
import QueryLanguage
import Server
import Store
import Support
import TestSupport
import Testing
import Vltava

/// Status, headers (names lower-cased) and body of a request to the server on `port`.
func exchange(_ port: Int, _ path: String, post body: String? = nil, headers sent: [String] = []) throws -> (status: Int, headers: [String: String], body: String) {
    var arguments = ["-s", "-m", "20", "-i", "-w", "\n%{http_code}"]
    for header in sent { arguments += ["-H", header] }
    if let body { arguments += ["-X", "POST", "--data-binary", body] }
    arguments.append("http://127.0.0.1:\(port)\(path)")
    let result = try Fixtures.run(URL(fileURLWithPath: "/usr/bin/curl"), arguments)
    var lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
    let status = Int(lines.popLast() ?? "") ?? 0
    let text = lines.joined(separator: "\n")
    guard let end = text.range(of: "\r\n\r\n") else { return (status, [:], text) }
    var headers: [String: String] = [:]
    for line in text[..<end.lowerBound].components(separatedBy: "\r\n").dropFirst() {
        guard let colon = line.firstIndex(of: ":") else { continue }
        headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    return (status, headers, String(text[end.upperBound...]))
}

/// The feature ids of a GeoJSON answer, in order.
func featureIDs(_ body: String) -> [Int64] {
    guard case .object(let root)? = try? JSON.parse(body), case .array(let features)? = root["features"] else { return [] }
    return features.compactMap { feature in
        guard case .object(let fields) = feature, case .integer(let id)? = fields["id"] else { return nil }
        return id
    }
}

/// The href of a page's `next` link, if it has one.
func nextLink(_ body: String) -> String? {
    guard case .object(let root)? = try? JSON.parse(body), case .array(let links)? = root["links"] else { return nil }
    for case .object(let link) in links {
        if case .string("next")? = link["rel"], case .string(let href)? = link["href"] { return href }
    }
    return nil
}

/// Waits (up to `tries` × 50 ms) until PostgreSQL runs a statement whose text is `sql`.
func waitUntilRunning(_ sql: String, on cluster: PostgresCluster, tries: Int = 400) throws -> Bool {
    for _ in 0..<tries {
        if try cluster.psql("SELECT count(*) FROM pg_stat_activity WHERE query = '\(sql)'") == "1" { return true }
        usleep(50_000)
    }
    return false
}

extension PostGISStoreTests {
    /// A fast shutdown ends the statement running (57P01): the database is unavailable, not
    /// the statement wrong; once it is back, the next read answers (its kept connection died
    /// with the restart, and a new one is opened).
    @Test func aStatementAShutdownEndsIsUnavailableAndTheNextReadAnswers() async throws {
        try await onAThreadOfItsOwn {
            let (cluster, _) = try PushedStore.pushed.get()
            let database = try PostGISDatabase(cluster.url)
            #expect(try database.rows("SELECT 1", [], deadline: .none) == [[.integer(1)]])
            let outcome = Locked<Result<[[AttributeValue]], EngineError>?>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread {
                let result = Result { () throws(EngineError) in try database.rows("SELECT pg_sleep(30)", [], deadline: .none) }
                outcome.withLock { $0 = result }
                done.signal()
            }.start()
            #expect(try waitUntilRunning("SELECT pg_sleep(30)", on: cluster))
            try cluster.pause()
            let ended = done.wait(timeout: .now() + 60) == .success
            try cluster.resume()
            #expect(ended)
            guard case .failure(let error)? = outcome.withLock({ $0 }) else {
                Issue.record("the statement did not fail: \(String(describing: outcome.withLock { $0 }))")
                return
            }
            #expect(error.code == "database_unavailable", "\(error)")
            #expect("\(error)".contains("postgresql://vltava@127.0.0.1:\(cluster.port)/vltava") && !"\(error)".contains(PostgresCluster.password))
            #expect(try database.rows("SELECT 2", [], deadline: .none) == [[.integer(2)]])
        }
    }

    /// While a smart shutdown waits for a session to end, PostgreSQL refuses new connections
    /// with 57P03 ("the database system is shutting down"): unavailable, not a store error.
    @Test func connectingWhileTheDatabaseShutsDownIsUnavailable() async throws {
        try await onAThreadOfItsOwn {
            let (cluster, _) = try PushedStore.pushed.get()
            let session = DispatchSemaphore(value: 0)
            Thread { _ = try? cluster.psql("SELECT pg_sleep(5)"); session.signal() }.start()
            #expect(try waitUntilRunning("SELECT pg_sleep(5)", on: cluster))
            try cluster.pause(mode: "smart", wait: false)
            var refused: EngineError?
            for _ in 0..<200 where refused == nil {
                do throws(EngineError) {
                    _ = try PostGISDatabase(cluster.url).rows("SELECT 1", [], deadline: .none)
                    usleep(10_000)
                } catch {
                    refused = error
                }
            }
            _ = session.wait(timeout: .now() + 60)
            try cluster.waitUntilStopped()
            try cluster.resume()
            #expect(refused?.code == "database_unavailable", "\(String(describing: refused))")
            #expect("\(String(describing: refused))".contains("57P03"), "\(String(describing: refused))")
        }
    }

    /// PostgreSQL stops under a running server and load: every data request answers 200 or 503
    /// `database_unavailable` with Retry-After (never 500), `/readyz` 503 and `/healthz` 200
    /// while it is down; once it is back `/readyz` turns 200 and the answers are as before.
    @Test func anOutageIs503WithRetryAfterAndReadyzFollowsTheDatabase() async throws {
        try await onAThreadOfItsOwn {
            let (cluster, _) = try PushedStore.pushed.get()
            let server = try ServedStore(cluster.url, cluster: cluster)
            defer { server.stop() }
            let statement = "FIND districts CONTAINING POINT(14.42 50.08) RETURN NAZEV_MC"
            let first = try server.firstAnswer { try server.post(statement) }
            #expect(first.status == 200 && first.body.contains("Praha 1"), "\(first)")
            #expect(try exchange(server.port, "/readyz").status == 200)

            // Load from three threads through the outage.
            let running = Locked(true)
            let statuses = Locked<[Int: Int]>([:])
            let unexpected = Locked<[String]>([])
            let load = DispatchGroup()
            let port = server.port
            for _ in 0..<3 {
                load.enter()
                Thread {
                    while running.withLock({ $0 }) {
                        guard let answer = try? exchange(port, "/v1/query", post: statement) else { continue }
                        statuses.withLock { $0[answer.status, default: 0] += 1 }
                        let fine = answer.status == 200
                            || (answer.status == 503 && answer.body.contains("\"code\":\"database_unavailable\"") && answer.headers["retry-after"] == "1")
                        if !fine { unexpected.withLock { $0.append("\(answer.status) \(answer.headers) \(answer.body.prefix(300))") } }
                    }
                    load.leave()
                }.start()
            }
            usleep(300_000)
            try cluster.pause()
            let down = try exchange(server.port, "/v1/query", post: statement)
            #expect(down.status == 503 && down.body.contains("\"code\":\"database_unavailable\""), "\(down)")
            #expect(down.headers["retry-after"] == "1", "\(down.headers)")
            #expect(down.body.contains("postgresql://vltava@127.0.0.1:\(cluster.port)/vltava") && !down.body.contains(PostgresCluster.password))
            let item = try exchange(server.port, "/ogc/collections/districts/items?limit=1")
            #expect(item.status == 200, "districts load into memory: \(item.status)")
            usleep(300_000)  // past the 250 ms readiness answers are kept
            let notReady = try exchange(server.port, "/readyz")
            #expect(notReady.status == 503 && notReady.body.contains("\"code\":\"database_unavailable\""), "\(notReady)")
            #expect(try exchange(server.port, "/healthz").status == 200)
            try cluster.resume()
            var ready = 0
            for _ in 0..<400 where ready != 200 {
                ready = try exchange(server.port, "/readyz").status
                if ready != 200 { usleep(50_000) }
            }
            #expect(ready == 200)
            let back = try server.post(statement)
            #expect(back.status == 200 && back.body == first.body, "\(back)")
            running.withLock { $0 = false }
            load.wait()
            #expect(unexpected.withLock { $0 }.isEmpty, "\(unexpected.withLock { $0 }.prefix(5))")
            #expect(statuses.withLock { $0[500] } == nil && statuses.withLock { $0[200] ?? 0 } > 0, "\(statuses.withLock { $0 })")
        }
    }

    /// OGC API items of layers kept in PostgreSQL: PostgreSQL selects the page (limit, offset,
    /// property filters; with a bbox the engine's box test decides each candidate), and the
    /// pages are the GeoPackage store's, feature for feature.
    @Test func itemsOfAKeptLayerArePagedAsTheLoadedLayersAre() async throws {
        try await onAThreadOfItsOwn {
            let kept = try PushedStore.kept.get(), embedded = try PushedStore.embedded.get()
            var generator = SplitMix(state: 30)
            func unit() -> Double { Double.random(in: 0..<1, using: &generator) }
            var requests: [(layer: String, bbox: BBox?, equal: [(name: String, value: String)], offset: Int, limit: Int)] = [
                ("parking", nil, [], 0, 1), ("parking", nil, [], 700, 100), ("parking", nil, [], 1500, 100), ("parking", nil, [], 5000, 10),
                ("parking", nil, [("CATEGORY", "VIS")], 0, 100), ("parking", nil, [("CATEGORY", "RES"), ("POSKYT", "HMP-TSK")], 300, 50),
                ("parking", nil, [("CATEGORY", "none such")], 0, 10), ("parking", nil, [("OBJECTID", "17")], 0, 10),
                ("parking", BBox(minLon: 14.40, minLat: 50.07, maxLon: 14.43, maxLat: 50.09), [], 5, 5),
                ("parking", BBox(minLon: 14.2, minLat: 49.9, maxLon: 14.8, maxLat: 50.2), [], 1200, 100),
                ("parking", BBox(minLon: 14.40, minLat: 50.07, maxLon: 14.43, maxLat: 50.09), [("CATEGORY", "MIX")], 3, 7),
            ]
            for _ in 0..<40 {
                let lon = 14.25 + unit() * 0.5, lat = 49.95 + unit() * 0.2
                let box = BBox(minLon: lon, minLat: lat, maxLon: lon + unit() * 0.08, maxLat: lat + unit() * 0.05)
                let layer = unit() < 0.5 ? "parking" : "districts"
                requests.append((layer, box, [], Int(unit() * 20), 1 + Int(unit() * 30)))
            }
            for request in requests {
                let keptLayer = try kept.layer(request.layer), loaded = try embedded.layer(request.layer)
                #expect(keptLayer.storage == .database)
                let expected = try embedded.items(loaded, ItemsRequest(
                    bbox: request.bbox, filter: try Query.filter(on: loaded, in: embedded, measuring: [], equal: request.equal),
                    offset: request.offset, limit: request.limit))
                let page = try kept.items(keptLayer, ItemsRequest(
                    bbox: request.bbox, condition: try Query.storeFilter(on: keptLayer, in: kept, equal: request.equal),
                    offset: request.offset, limit: request.limit))
                let fids = page.indices.map { page.layer.fids[$0] }
                #expect(fids == expected.indices.map { loaded.fids[$0] }, "\(request)")
                #expect(page.hasNext == expected.hasNext && page.matched == nil, "\(request)")
                for (index, expectedIndex) in zip(page.indices, expected.indices) {
                    #expect(page.layer.geometries[index] == loaded.geometries[expectedIndex] && page.layer.properties[index] == loaded.properties[expectedIndex])
                }
            }
            // Keyset pages (`after`, the next link's): the features past a fid, alone, with an
            // offset, a filter or a box, as the loaded layer gives them.
            let parking = try embedded.layer("parking")
            let middle = parking.fids[700], box = BBox(minLon: 14.2, minLat: 49.9, maxLon: 14.8, maxLat: 50.2)
            let keyset: [(bbox: BBox?, equal: [(name: String, value: String)], after: Int64, offset: Int, limit: Int)] = [
                (nil, [], middle, 0, 100), (nil, [], middle, 30, 10), (nil, [("CATEGORY", "VIS")], middle, 0, 50),
                (box, [], middle, 0, 100), (box, [("CATEGORY", "RES")], middle, 4, 20),
                (nil, [], parking.fids[parking.count - 3], 0, 10), (nil, [], Int64.max, 0, 10), (nil, [], Int64.min, 0, 5),
            ]
            for request in keyset {
                let expected = try embedded.items(parking, ItemsRequest(
                    bbox: request.bbox, filter: try Query.filter(on: parking, in: embedded, measuring: [], equal: request.equal),
                    after: request.after, offset: request.offset, limit: request.limit))
                let keptLayer = try kept.layer("parking")
                let page = try kept.items(keptLayer, ItemsRequest(
                    bbox: request.bbox, condition: try Query.storeFilter(on: keptLayer, in: kept, equal: request.equal),
                    after: request.after, offset: request.offset, limit: request.limit))
                let fids = page.indices.map { page.layer.fids[$0] }
                #expect(fids == expected.indices.map { parking.fids[$0] } && page.hasNext == expected.hasNext, "\(request)")
                #expect(fids.allSatisfy { $0 > request.after }, "\(request)")
            }
            // The checked numbers: the last 3 fids leave 2 after the third-last; none after the largest.
            #expect(try kept.items(try kept.layer("parking"), ItemsRequest(after: parking.fids[parking.count - 3], limit: 10)).indices.count == 2)
            #expect(try kept.items(try kept.layer("parking"), ItemsRequest(after: Int64.max, limit: 10)).indices.isEmpty)
        }
    }

    /// Over HTTP, on a server whose answers may hold 100 rows and that keeps every layer it may
    /// in PostgreSQL: pages of the 1,548 parking zones (15 times the limit) answer as the
    /// GeoPackage store's do, where they were 422 `too_many_rows`.
    @Test func ogcItemsOfAKeptLayerLargerThanTheRowLimitAnswer() async throws {
        try await onAThreadOfItsOwn {
            let (cluster, _) = try PushedStore.pushed.get()
            var configuration = ServerConfiguration()
            configuration.port = 0
            configuration.limits.maxRows = 100
            configuration.limits.maxRowsLoadedPerLayer = 0
            let server = VltavaServer(configuration: configuration, source: try StoreLocation.source(cluster.url))
            let task = Task { try await server.run() }
            defer { task.cancel() }
            let port = await server.port()
            var health = 0
            for _ in 0..<400 where health != 200 {
                health = try exchange(port, "/healthz").status
                if health != 200 { usleep(50_000) }
            }
            #expect(health == 200)
            let embedded = try PushedStore.embedded.get()
            let parking = try embedded.layer("parking")
            let box = BBox(minLon: 14.40, minLat: 50.07, maxLon: 14.43, maxLat: 50.09)
            let cases: [(query: String, request: ItemsRequest, equal: [(name: String, value: String)])] = [
                ("limit=1", ItemsRequest(limit: 1), []),
                ("limit=100&offset=700", ItemsRequest(offset: 700, limit: 100), []),
                ("CATEGORY=VIS&limit=50", ItemsRequest(limit: 50), [("CATEGORY", "VIS")]),
                ("bbox=14.40,50.07,14.43,50.09&limit=20&offset=5", ItemsRequest(bbox: box, offset: 5, limit: 20), []),
            ]
            for item in cases {
                var request = item.request
                request.filter = try Query.filter(on: parking, in: embedded, measuring: [], equal: item.equal)
                let expected = try embedded.items(parking, request)
                let answer = try exchange(port, "/ogc/collections/parking/items?" + item.query)
                #expect(answer.status == 200, "\(item.query): \(answer.body.prefix(300))")
                #expect(featureIDs(answer.body) == expected.indices.map { parking.fids[$0] } && !expected.indices.isEmpty, "\(item.query)")
                #expect(answer.body.contains("\"rel\":\"next\"") == expected.hasNext, "\(item.query)")
            }
            // Following the next links through all 1,548 zones, 100 a page: each link carries the
            // page's last fid as `after` (no offset), and the pages together are the layer, in order.
            var next: String? = "/ogc/collections/parking/items?limit=100"
            var seen: [Int64] = [], pages = 0
            while let target = next, pages < 30 {
                let answer = try exchange(port, target)
                #expect(answer.status == 200, "\(target): \(answer.body.prefix(300))")
                let ids = featureIDs(answer.body)
                seen += ids
                pages += 1
                next = nextLink(answer.body).map { String($0.drop { $0 != "/" }.dropFirst(2).drop { $0 != "/" }) }
                if let link = next {
                    #expect(link.hasSuffix("limit=100&after=\(ids.last ?? -1)") && !link.contains("offset"), "\(link)")
                }
            }
            #expect(pages == 16 && seen == Array(parking.fids) && seen.count == 1_548, "\(pages) pages, \(seen.count) features")
            let nul = try exchange(port, "/ogc/collections/parking/items?CATEGORY=VIS%00")
            #expect(nul.status == 400 && nul.body.contains("\"code\":\"invalid_parameter\"") && nul.body.contains("NUL"), "\(nul)")
        }
    }

    /// A NUL in text is refused before either store sees it, the same way on both: a bound
    /// `$1` (invalid_parameter), a quoted string (invalid_text), a filter's value.
    @Test func aNULInTextIsRefusedAlikeOnBothStores() async throws {
        try await onAThreadOfItsOwn {
            let stores = [("GeoPackage", try PushedStore.embedded.get()), ("PostGIS", try PushedStore.postgis.get()),
                          ("PostGIS, kept", try PushedStore.kept.get())]
            for (name, snapshot) in stores {
                do throws(QueryError) {
                    _ = try Query.run("FIND districts WHERE NAZEV_MC = $1 RETURN fid", ["Praha\u{0}1"], on: snapshot)
                    Issue.record("\(name): a NUL in $1 was answered")
                } catch {
                    #expect(error.code == "invalid_parameter" && error.kind == .invalid && error.message.contains("$1 holds a NUL character"), "\(name): \(error)")
                }
                do throws(QueryError) {
                    _ = try Query.run("FIND districts WHERE NAZEV_MC = 'Praha\u{0}1' RETURN fid", on: snapshot)
                    Issue.record("\(name): a NUL in a string was answered")
                } catch {
                    #expect(error.code == "invalid_text" && error.kind == .invalid && error.column == 33, "\(name): \(error)")
                }
                #expect(throws: FilterError.self, "\(name)") {
                    _ = try Query.filter(on: try snapshot.layer("stations"), in: snapshot, measuring: [], equal: [("code", "AREPA\u{0}")])
                }
                // Text without a NUL still answers.
                #expect(answer("FIND districts WHERE NAZEV_MC = 'Praha 1' RETURN fid", on: snapshot).contains("\"count\":1"), "\(name)")
            }
        }
    }

    /// A URL without a password takes PGPASSWORD, else the password file (PGPASSFILE, else
    /// ~/.pgpass), as libpq does: wildcards, `\:` and `\\` escapes, the first matching line; a
    /// file others may read is ignored; with no password anywhere, one line saying where it goes.
    @Test func aURLWithoutAPasswordTakesPGPASSWORDOrThePasswordFile() async throws {
        try await onAThreadOfItsOwn {
            let (cluster, _) = try PushedStore.pushed.get()
            let folder = try Fixtures.temporaryDirectory("pgpass")
            let nowhere = folder.appendingPathComponent("no-such-file").path
            let bare = "postgresql://\(PostgresCluster.user)@127.0.0.1:\(cluster.port)/\(PostgresCluster.database)"
            let refused = try CLI.run(["layers", "--db", bare], environment: ["PGPASSWORD": "", "PGPASSFILE": nowhere, "HOME": folder.path])
            #expect(refused.status != 0 && refused.stderr.contains("the server asks for a password and none was given"), "\(refused.stderr)")
            let fromEnvironment = try CLI.run(["layers", "--db", bare], environment: ["PGPASSWORD": PostgresCluster.password, "PGPASSFILE": nowhere])
            #expect(fromEnvironment.status == 0 && fromEnvironment.stdout.contains("parking"), "\(fromEnvironment.stderr)")
            // The URL's own password comes first.
            let own = try CLI.run(["layers", "--db", cluster.url], environment: ["PGPASSWORD": "wrong"])
            #expect(own.status == 0, "\(own.stderr)")

            // A role whose password holds a colon and a backslash, found on the file's third line.
            try cluster.psql(#"CREATE ROLE pgpass_user LOGIN PASSWORD 'p:w\x'"#)
            try cluster.psql("GRANT SELECT ON ALL TABLES IN SCHEMA public TO pgpass_user")
            let lines = ["# Vltava's test", "127.0.0.1:1:*:*:wrong", "*:\(cluster.port):vltava:pgpass_user:p\\:w\\\\x", "*:*:*:*:a-later-line-loses", ""]
            let file = folder.appendingPathComponent("pgpass").path
            try lines.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
            #expect(chmod(file, 0o600) == 0)
            let user = "postgresql://pgpass_user@127.0.0.1:\(cluster.port)/vltava"
            let fromFile = try CLI.run(["layers", "--db", user], environment: ["PGPASSWORD": "", "PGPASSFILE": file])
            #expect(fromFile.status == 0 && fromFile.stdout.contains("parking"), "\(fromFile.stderr)")
            let home = folder.appendingPathComponent("home")
            try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: file, toPath: home.appendingPathComponent(".pgpass").path)
            #expect(chmod(home.appendingPathComponent(".pgpass").path, 0o600) == 0)
            let fromHome = try CLI.run(["layers", "--db", user], environment: ["PGPASSWORD": "", "PGPASSFILE": "", "HOME": home.path])
            #expect(fromHome.status == 0 && fromHome.stdout.contains("parking"), "\(fromHome.stderr)")
            // Readable by the group: ignored, as libpq ignores it.
            #expect(chmod(file, 0o640) == 0)
            let open = try CLI.run(["layers", "--db", user], environment: ["PGPASSWORD": "", "PGPASSFILE": file, "HOME": folder.path])
            #expect(open.status != 0 && open.stderr.contains("the server asks for a password and none was given"), "\(open.stderr)")
        }
    }
}
