// The PostGIS store against a real PostgreSQL 15 + PostGIS 3: a throwaway cluster on loopback
// (TestSupport/PostgresCluster.swift), the demo store pushed into it once, and every answer
// compared with the GeoPackage store's, which is the reference.

import Dispatch
import Engine
import Foundation
import Geometry
import PostGIS
import QueryLanguage
import Store
import TestSupport
import Testing

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
}

/// JSON of one statement's answer, for comparing the two stores byte for byte.
func answer(_ text: String, on snapshot: Snapshot) -> String {
    do {
        return String(decoding: try QueryResult.write(Query.run(text, on: snapshot), geoJSON: false, pretty: false), as: UTF8.self)
    } catch {
        return "error \(error.code): \(error.message)"
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
            for layer in embedded.layers {
                let other = try postgis.layer(layer.name)
                #expect(Array(other.fids) == Array(layer.fids), "\(layer.name)")
                #expect(Array(other.properties) == Array(layer.properties), "\(layer.name)")
                #expect(Array(other.geometries) == Array(layer.geometries), "\(layer.name)")
            }
            #expect(try cluster.psql("SELECT count(*) FROM parking") == "1548")
            // GiST on geom and on geom::geography for every feature layer.
            let gist = try cluster.psql("SELECT count(*) FROM pg_indexes WHERE tablename = 'districts' AND indexdef LIKE '%USING gist%'")
            #expect(gist == "2")
            #expect(postgis.timeSeriesByLayer["stations"]?.keys == embedded.timeSeriesByLayer["stations"]?.keys)
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
        let mismatches = Locked<[String]>([])
        let counted = Locked(0)
        let chunks = 4
        // Threads of their own: each query waits for PostgreSQL, and waits on the cooperative
        // pool (two threads here) would starve the in-process servers of the other suites.
        await onThreadsOfTheirOwn(chunks) { chunk in
            var rows = 0
            for i in stride(from: chunk, to: points.count, by: chunks) {
                for text in statements(points[i].0, points[i].1) {
                    let a = answer(text, on: embedded), b = answer(text, on: postgis)
                    if a != b { mismatches.withLock { $0.append("\(text)\n  gpkg:    \(a)\n  postgis: \(b)") } }
                    rows += a.count
                }
            }
            counted.withLock { $0 += rows }
        }
        let found = mismatches.withLock { $0 }
        #expect(found.isEmpty, "\(found.count) mismatches, first: \(found.prefix(3).joined(separator: "\n"))")
        #expect(counted.withLock { $0 } > 1_000_000)
        // NEAREST on polygons, within a distance, at every tenth point (polygon distances are
        // the costliest SQL here).
        for i in stride(from: 0, to: points.count, by: 10) {
            let text = "FIND parking NEAREST 3 TO POINT(\(points[i].0) \(points[i].1)) WITHIN 2000 m RETURN fid, distance_m"
            let a = answer(text, on: embedded), b = answer(text, on: postgis)
            #expect(a == b, "\(text)")
            if a != b { break }
        }
        // The time-series functions on their own, and the WHERE forms that compile to SQL.
        for text in ["FIND stations WHERE MEASURES(so2) RETURN code, LATEST(so2), HISTORY(so2, 3 h)",
                     "FIND stations WHERE FRESH(1 h) ORDER BY code RETURN code, OBSERVED_AT",
                     "FIND stations WHERE NOT FRESH(1 h) RETURN code",
                     "FIND stations NEAREST 3 TO POINT(14.42 50.08) WHERE MEASURES(no2) AND FRESH(3 h) RETURN code, distance_m, LATEST(no2), HISTORY(no2, 2 h)",
                     "FIND parking WHERE fid >= 100 AND fid < 120 OR fid IN (3, 5) ORDER BY fid DESC LIMIT 7 RETURN fid",
                     "FIND districts WHERE NAZEV_MC >= 'Praha 2' AND NAZEV_MC < 'Praha 5' RETURN NAZEV_MC",
                     "FIND districts WHERE NAZEV_MC IS NOT NULL AND NOT NAZEV_MC = 'Praha 1' ORDER BY NAZEV_MC LIMIT 5 RETURN NAZEV_MC",
                     "FIND parking INTERSECTING BBOX(14.40 50.07, 14.43 50.09) RETURN fid",
                     "FIND stations NEAREST 3 TO POINT(14.42 50.09) WHERE code <> 'AREPA' RETURN code, distance_m"] {
            #expect(answer(text, on: postgis) == answer(text, on: embedded), "\(text)")
            #expect(!answer(text, on: postgis).hasPrefix("error"), "\(text)")
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
            #expect(try cluster.psql("SELECT count(*) FROM districts") == "\(try embedded.layer("districts").count)")
        }
    }

    @Test func explainShowsTheSQLAndPostgreSQLsPlan() async throws {
        try await onAThreadOfItsOwn {
            let postgis = try PushedStore.postgis.get()
            let text = answer("EXPLAIN FIND parking CONTAINING POINT(14.42 50.08) WHERE fid > 10", on: postgis)
            #expect(text.contains("ST_Covers(t.geom, ST_SetSRID(ST_MakePoint($2, $3), 4326))"))
            #expect(text.contains("(t.fid::float8 > $1)"))
            #expect(text.contains("Index Scan") || text.contains("Bitmap Index Scan"))
            let nearest = answer("EXPLAIN FIND stations NEAREST 3 TO POINT(14.42 50.08)", on: postgis)
            #expect(nearest.contains("ORDER BY t.geom::geography <-> ST_SetSRID(ST_MakePoint($1, $2), 4326)::geography, t.fid LIMIT $3"))
        }
    }

    @Test func whatIsNotPushedDownIsRefusedByName() async throws {
        try await onAThreadOfItsOwn {
            let postgis = try PushedStore.postgis.get()
            #expect(answer("FIND districts WHERE NAZEV_MC ~ 'praha' RETURN fid", on: postgis)
                    == "error not_supported_on_postgis: `~` (contains, ignoring case and diacritics) is not supported on a PostGIS store yet")
            #expect(answer("FIND pens LINKED TO (animals WHERE fid = 1) RETURN fid", on: postgis).hasPrefix("error not_supported_on_postgis: LINKED TO"))
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
            let described = try CLI.run(["describe", "stations", "--db", cluster.url])
            #expect(described.stdout.contains("time series of 'stations'") == false && described.stdout.contains("stations: 17 features"), "\(described.stdout)")
            let layers = try CLI.run(["layers", "--db", cluster.url])
            #expect(layers.stdout.contains("parking") && layers.stdout.contains("1548"))
        }
    }

    /// The database stops under a running server: a clear 503, and once it is back the next
    /// request answers without a restart of the server.
    @Test func aDroppedDatabaseIs503AndRecoversOnItsOwn() async throws {
        try await onAThreadOfItsOwn {
            let (cluster, _) = try PushedStore.pushed.get()
            guard let port = (55400...55499).shuffled().first(where: { $0 != cluster.port && PostgresCluster.portIsFree($0) }) else { return }
            let server = try ChildProcess(CLI.binary, ["serve", "--db", cluster.url, "--host", "127.0.0.1", "--port", "\(port)"])
            defer { server.stop() }
            func post() throws -> (status: Int, body: String) {
                let result = try Fixtures.run(URL(fileURLWithPath: "/usr/bin/curl"),
                                              ["-s", "-m", "20", "-o", "-", "-w", "\n%{http_code}", "-X", "POST", "--data-binary",
                                               "FIND districts CONTAINING POINT(14.42 50.08) RETURN NAZEV_MC", "http://127.0.0.1:\(port)/v1/query"])
                let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
                return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
            }
            var first = (status: 0, body: "")
            for _ in 0..<100 {
                first = try post()
                if first.status == 200 { break }
                usleep(100_000)
            }
            #expect(first.status == 200 && first.body.contains("Praha 1"), "\(first)")
            try cluster.pause()
            let down = try post()
            try cluster.resume()
            #expect(down.status == 503, "\(down)")
            #expect(down.body.contains("database_unavailable") && down.body.contains("postgresql://vltava@127.0.0.1:\(cluster.port)/vltava"), "\(down.body)")
            #expect(!down.body.contains(PostgresCluster.password))
            let back = try post()
            #expect(back.status == 200 && back.body == first.body, "\(back)")
        }
    }

    /// A write in PostgreSQL reaches a running server's next snapshot through LISTEN/NOTIFY:
    /// no reload request, no polling by the server, and every request meanwhile answers 200.
    @Test func aWriteInPostgreSQLReachesTheServerByNotify() async throws {
        try await onAThreadOfItsOwn {
            let (cluster, _) = try PushedStore.pushed.get()
            // A database of its own, so the other tests' data stays as pushed.
            try cluster.psql("CREATE DATABASE vltava_live", database: "postgres")
            try cluster.psql("CREATE EXTENSION postgis", database: "vltava_live")
            let url = "postgresql://\(PostgresCluster.user):\(PostgresCluster.password)@127.0.0.1:\(cluster.port)/vltava_live"
            try PostGISStore.push(geoPackage: try PushedStore.gpkg.get(), to: try PostGISDatabase(url))
            guard let port = (55400...55499).shuffled().first(where: { $0 != cluster.port && PostgresCluster.portIsFree($0) }) else { return }
            let server = try ChildProcess(CLI.binary, ["serve", "--db", url, "--host", "127.0.0.1", "--port", "\(port)"])
            defer { server.stop() }
            func post() throws -> (status: Int, body: String) {
                let result = try Fixtures.run(URL(fileURLWithPath: "/usr/bin/curl"),
                                              ["-s", "-m", "20", "-o", "-", "-w", "\n%{http_code}", "-X", "POST", "--data-binary",
                                               "FIND stations WHERE code = 'ZNEW' RETURN code, name", "http://127.0.0.1:\(port)/v1/query"])
                let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
                return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
            }
            var before = (status: 0, body: "")
            for _ in 0..<100 {
                before = try post()
                if before.status == 200 { break }
                usleep(100_000)
            }
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
