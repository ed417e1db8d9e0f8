// Reads from hot standbys (PostGIS/PostGISStandbys.swift): a primary and a streaming standby
// of their own, every feature layer but the paths and stations kept in PostgreSQL
// (`--max-rows-loaded 0`), so the answers below are PostgreSQL's. A read is served by the standby
// while it is fresh; with its replay paused it stays within the bound for `maxLag` seconds and
// then the primary answers, newest write included; and whoever wrote reads the write back in
// 200 write-then-read pairs, replay paused and resumed along the way.

import Engine
import Foundation
import Geometry
@testable import PostGIS
import Store
import Support
import TestSupport
import Testing
import Vltava

@Suite(.enabled(if: PostgresCluster.missing == nil, "\(PostgresCluster.missing ?? "")"), .serialized)
struct StandbyReadTests {
    /// A small square around (lon, lat), inside no parking zone of Prague's.
    static func square(_ lon: Double, _ lat: Double) -> Geometry {
        let d = 0.0001
        return .polygon(Polygon(rings: [[lon - d, lat - d, lon + d, lat - d, lon + d, lat + d, lon - d, lat + d, lon - d, lat - d]]))
    }

    /// The fids of the parking zones containing (lon, lat), as the engine answers.
    static func containing(_ lon: Double, _ lat: Double, on engine: Engine) -> String {
        answer("FIND parking CONTAINING POINT(\(lon) \(lat)) RETURN fid", on: engine.snapshot)
    }

    @Test func theStandbyAnswersWhileFreshAndTheWriterReadsItsWrites() async throws {
        try await onAThreadOfItsOwn {
            // Synchronous commit: a commit's WAL is flushed, hence sent, at once (the test
            // clusters otherwise leave it to the WAL writer, up to 200 ms later).
            let primary = try PostgresCluster.start(extra: "-c synchronous_commit=on")
            defer { primary.stop() }
            try PostGISStore.push(geoPackage: try PushedStore.gpkg.get(), to: try PostGISDatabase(primary.url))
            let standby = try primary.standby()
            defer { standby.stop() }
            let maxLag = 1.0
            let database = PostGISDatabase(url: try PostGISURL(primary.url), readURL: try PostGISURL(standby.url), maxReplicaLag: maxLag)
            let standbys = try #require(database.standbys)
            var limits = EngineLimits()
            limits.maxRowsLoadedPerLayer = 0
            let engine = try Engine(source: PostGISSource(database: database), limits: limits)
            let standbyName = "127.0.0.1:\(standby.port)"
            func reads() -> (standby: Int, primary: Int) { (standbys.reads.standbys[standbyName] ?? -1, standbys.reads.primary) }

            // Fresh: the standby answers (once the prober has seen it, a tenth of a second).
            var found = ""
            for _ in 0..<100 where reads().standby < 1 {
                found = answer("FIND districts CONTAINING POINT(14.42 50.08) RETURN NAZEV_MC", on: engine.snapshot)
                usleep(50_000)
            }
            #expect(found == #"{"count":1,"rows":[{"NAZEV_MC":"Praha 1"}]}"#)
            #expect(reads().standby >= 1, "\(reads())")
            #expect(try standby.psql("SELECT pg_is_in_recovery()") == "t")

            // Replay paused, a row written by another program (psql) on the primary: within the
            // bound the standby still answers, without it; past the bound the primary does, with it.
            try standby.psql("SELECT pg_wal_replay_pause()")
            try primary.psql("INSERT INTO parking (fid, geom) VALUES (900001, ST_GeomFromText('POLYGON((15.2 49.4, 15.21 49.4, 15.21 49.41, 15.2 49.4))', 4326))")
            let written = Date()
            let before = reads()
            let stale = Self.containing(15.208, 49.402, on: engine)
            if Date().timeIntervalSince(written) < maxLag * 0.8 {
                #expect(stale == #"{"count":0,"rows":[]}"# && reads().standby == before.standby + 1, "within the bound: \(stale), \(reads())")
            }
            usleep(UInt32((maxLag + 0.3) * 1e6))
            let fresh = Self.containing(15.208, 49.402, on: engine)
            #expect(fresh == #"{"count":1,"rows":[{"fid":900001}]}"#)
            #expect(reads().primary >= before.primary + 1 && reads().standby <= before.standby + 1, "\(before) → \(reads())")
            try standby.psql("SELECT pg_wal_replay_resume()")

            // Read-your-writes: 200 pairs, a square written through the engine and read back at
            // once; replay paused for pairs 50–99 and 150–199.
            var failures: [String] = []
            var servedWhileRunning = 0, servedWhilePaused = (standby: 0, primary: 0)
            for i in 0..<200 {
                if i % 50 == 0 { try standby.psql(i % 100 == 0 ? "SELECT pg_wal_replay_resume()" : "SELECT pg_wal_replay_pause()") }
                let paused = (i / 50) % 2 == 1
                let (lon, lat) = (15.5 + Double(i) * 0.001, 49.2)
                let receipt = try engine.write(WriteBatch([.change(layer: "parking", .insert(Feature(geometry: Self.square(lon, lat), properties: Attributes())))]))
                let fid = try #require(receipt.changes.first?.fid)
                let start = reads()
                let got = Self.containing(lon, lat, on: engine)
                if got != #"{"count":1,"rows":[{"fid":\#(fid)}]}"# { failures.append("pair \(i): wrote \(fid), read \(got)") }
                let end = reads()
                if paused {
                    servedWhilePaused.standby += end.standby - start.standby
                    servedWhilePaused.primary += end.primary - start.primary
                } else {
                    servedWhileRunning += end.standby - start.standby
                }
            }
            try standby.psql("SELECT pg_wal_replay_resume()")
            #expect(failures.isEmpty, "\(failures.count) of 200 pairs missed their write: \(failures.prefix(3))")
            // Replaying, the standby answered the reads after waiting for the write's position;
            // paused, none of them could (the write is not there): the primary answered all 100.
            let waited = standbys.state.withLock { ($0.waited, $0.waitedInVain) }
            #expect(servedWhileRunning >= 50, "the standby served \(servedWhileRunning) of the 100 reads while replaying")
            #expect(servedWhilePaused.standby == 0 && servedWhilePaused.primary == 100, "\(servedWhilePaused)")
            #expect(waited.0 - waited.1 >= 1, "reads that waited for the standby and ran there: \(waited)")

            // The same through `vltava serve --db-read`: the standby answers, /metrics says so.
            let server = try ServedStore(primary.url, cluster: primary, arguments: [
                "--db-read", standby.url, "--max-replica-lag", "1", "--max-rows-loaded", "0"])
            defer { server.stop() }
            var served = 0
            var metrics = ""
            for _ in 0..<100 where served < 1 {
                let first = try server.firstAnswer { try server.post("FIND districts CONTAINING POINT(14.42 50.08) RETURN NAZEV_MC") }
                #expect(first.status == 200 && first.body.contains("Praha 1"), "\(first)")
                metrics = try server.get("/metrics").body
                let line = metrics.split(separator: "\n").first { $0.hasPrefix("vltava_db_reads_total{server=\"\(standbyName)\",role=\"standby\"}") }
                served = line.flatMap { $0.split(separator: " ").last.flatMap { Int($0) } } ?? 0
                if served < 1 { usleep(50_000) }
            }
            #expect(served >= 1, "\(metrics.split(separator: "\n").filter { $0.hasPrefix("vltava_db") })")
            #expect(metrics.contains("vltava_db_standby_behind_bytes{server=\"\(standbyName)\"}"))
        }
    }
}
