// Reads from hot standbys, writes to the primary (`vltava serve --db-read`, docs/SCALING.md).
//
// The answers' statements (PostGISFetch.swift: a kept layer's rows, a time series' rows, their
// EXPLAIN) go through `PostGISDatabase.read`, the one place that picks where a read runs. The
// snapshot's loads, the catalogue, the catch-up after another process's write and every write
// stay on the primary (`--db`): they must see what the change feed numbers.
//
// Freshness is measured in WAL positions, not in `now() - pg_last_xact_replay_timestamp()`,
// which grows on an idle primary with nothing to replay. A prober samples the primary's
// `pg_current_wal_lsn()` and each standby's `pg_last_wal_replay_lsn()` every `probeInterval`;
// a standby serves while it has replayed everything the primary had written `maxLag` seconds
// before (its replay position at least the primary's sample of that age). Otherwise, or when it
// does not answer, reads go to the primary: a lagging or dead standby costs speed, never an
// answer.
//
// Read-your-writes: every transaction this process commits records the primary's
// `pg_current_wal_insert_lsn()` after its COMMIT (at or past its commit record). A read sent to
// a standby that has not replayed that far waits on it (polling `pg_last_wal_replay_lsn()`, 1 ms
// doubling to 20 ms) for at most `maxLag` seconds and the request's deadline, then runs on the
// primary. So whoever wrote through this server reads the write back, whichever host answers.

import Engine
import Foundation
import Geometry
import PostgresNIO
import Store
import Support

public final class Standbys: @unchecked Sendable {
    /// Past this many seconds of lag a standby serves no reads, and a read waits no longer for
    /// one to replay its server's last write. Half a second: replay on a LAN keeps up within
    /// milliseconds (docs/SCALING.md has the measured lag), so a standby past it is stuck or
    /// overloaded, and the primary answers instead; and a client right after its write waits at
    /// most this before the primary answers it.
    public static let defaultMaxLag = 0.5
    /// How often the prober samples the positions: a tenth of a second, or a quarter of
    /// `maxLag` when that is shorter, so a standby's state is never older than the bound.
    let probeInterval: Double

    public let maxLag: Double
    /// One pool per standby server of the URL: each is asked on its own, and reads are spread
    /// over those fresh enough in turn.
    let replicas: [PostGISDatabase]

    struct State {
        /// (uptime ns, primary's WAL position) samples, oldest first: the last `maxLag`
        /// seconds and the newest sample older than that.
        var history: [(time: UInt64, lsn: Int64)] = []
        /// Each standby's replay position at its last probe; nil: it did not answer.
        var replayed: [Int64?]
        /// The WAL position past this process's last commit (read-your-writes).
        var lastWrite: Int64 = 0
        /// A commit whose position could not be read: reads go to the primary until the next
        /// sample of the primary's position covers it.
        var lastWriteUnknown = false
        /// When the last probe ended (uptime ns): a prober stuck on a server that hangs makes
        /// every standby stale after `maxLag` + 1 s, rather than fresh on old figures.
        var probedAt: UInt64 = 0
        /// Round-robin over the fresh standbys.
        var next = 0
        /// Reads served: one per standby, then the primary's.
        var reads: [Int]
        /// Reads that waited for a standby to replay a write, and those of them that went to
        /// the primary after all.
        var waited = 0, waitedInVain = 0
    }
    let state: Locked<State>

    init(_ url: PostGISURL, maxLag: Double, primary: PostGISDatabase) {
        self.maxLag = maxLag
        probeInterval = min(0.1, maxLag / 4)
        replicas = url.servers.map { server in
            var one = url
            one.servers = [server]
            one.sessionAttributes = .any
            return PostGISDatabase(standby: one)
        }
        state = Locked(State(replayed: Array(repeating: nil, count: replicas.count), reads: Array(repeating: 0, count: replicas.count + 1)))
        // The prober holds the primary weakly: it ends once the database is released.
        let owner = Weak(primary)
        let thread = Thread { [self] in
            while true {
                do {
                    guard let primary = owner.value else { return }
                    probe(primary)
                }
                Thread.sleep(forTimeInterval: probeInterval)
            }
        }
        thread.name = "vltava.postgis.standbys"
        thread.start()
    }

    /// `SELECT (lsn - '0/0')::bigint`: a WAL position as a number of bytes.
    static func position(_ expression: String) -> String { "SELECT (\(expression) - '0/0'::pg_lsn)::bigint" }

    /// One sample of the primary's position and of each standby's replay position.
    func probe(_ primary: PostGISDatabase) {
        let now = DispatchTime.now().uptimeNanoseconds
        let sampled = try? primary.rows(Standbys.position("pg_current_wal_lsn()"), [], deadline: .after(seconds: 1))
        var replayed: [Int64?] = []
        for replica in replicas {
            // Not in recovery: promoted, it has everything it holds (and is the primary's
            // successor, which the multi-host `--db` finds too).
            let row = try? replica.rows("SELECT pg_is_in_recovery(), (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint", [], deadline: .after(seconds: 1)).first
            switch (row?.first, row?.last) {
            case (.bool(false)?, _): replayed.append(.max)
            case (.bool(true)?, .integer(let lsn)?): replayed.append(lsn)
            default: replayed.append(nil)
            }
        }
        state.withLock { state in
            state.replayed = replayed
            state.probedAt = DispatchTime.now().uptimeNanoseconds
            if case .integer(let lsn)? = sampled?.first?.first {
                state.history.append((now, lsn))
                if state.lastWriteUnknown {
                    state.lastWrite = max(state.lastWrite, lsn)
                    state.lastWriteUnknown = false
                }
            }
            // Keeps the newest sample older than the bound: with the primary gone (a failover)
            // no new sample comes, and the standbys stay fresh against the last one.
            let horizon = now &- UInt64(maxLag * 1e9)
            while state.history.count > 1 && state.history[1].time <= horizon { state.history.removeFirst() }
        }
    }

    /// Records the WAL position past a transaction this process just committed on `connection`.
    func committed(_ database: PostGISDatabase, _ connection: PostgresConnection) {
        let row = try? database.rows(connection, Standbys.position("pg_current_wal_insert_lsn()"), [])
        guard case .integer(var lsn)? = row?.first?.first else {
            state.withLock { $0.lastWriteUnknown = true }
            return
        }
        // Right after a page's 24-byte header nothing of the page is written yet: the commit
        // ended at or before the page's start, which is where a standby's replay stops.
        if lsn % 8192 == 24 { lsn -= 24 }
        state.withLock { $0.lastWrite = max($0.lastWrite, lsn) }
    }

    /// The standby to read from (round-robin over those fresh enough), and the position it must
    /// have replayed first (nil: it has); nil when none is fresh enough.
    func pick() -> (index: Int, waitFor: Int64?)? {
        state.withLock { state in
            let now = DispatchTime.now().uptimeNanoseconds
            guard !state.lastWriteUnknown, now &- state.probedAt < UInt64((maxLag + 1) * 1e9) else { return nil }
            let horizon = now &- UInt64(maxLag * 1e9)
            // What the primary had written `maxLag` ago (the oldest sample if none is that old).
            guard let oldest = state.history.first else { return nil }
            let needed = state.history.last(where: { $0.time <= horizon })?.lsn ?? oldest.lsn
            let fresh = state.replayed.indices.filter { (state.replayed[$0] ?? .min) >= needed }
            guard !fresh.isEmpty else { return nil }
            let index = fresh[state.next % fresh.count]
            state.next &+= 1
            let replayed = state.replayed[index] ?? .min
            return (index, state.lastWrite > replayed ? state.lastWrite : nil)
        }
    }

    /// Waits until the standby on `connection` has replayed `lsn`, for at most `maxLag` seconds
    /// and until `deadline`; false when it has not by then.
    func replay(_ replica: PostGISDatabase, _ connection: PostgresConnection, reaching lsn: Int64, deadline: Deadline) throws -> Bool {
        let start = DispatchTime.now().uptimeNanoseconds
        var pause = 0.001
        while true {
            let row = try replica.rows(connection, Standbys.position("pg_last_wal_replay_lsn()"), [])
            if case .integer(let replayed)? = row.first?.first, replayed >= lsn { return true }
            if row.first?.first?.isNull ?? true { return true }  // promoted meanwhile: it has what it holds
            let waited = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            guard waited + pause < maxLag, !deadline.hasPassed,
                  deadline.end == .max || DispatchTime.now().uptimeNanoseconds + UInt64(pause * 1e9) < deadline.end else { return false }
            usleep(UInt32(pause * 1e6))
            pause = min(pause * 2, 0.02)
        }
    }

    func served(_ index: Int?, waited: Bool = false) {
        state.withLock { state in
            state.reads[index ?? replicas.count] += 1
            if waited {
                state.waited += 1
                if index == nil { state.waitedInVain += 1 }
            }
        }
    }

    func down(_ index: Int) {
        state.withLock { $0.replayed[index] = nil }
    }

    /// Reads served so far: by each standby (`host:port`) and by the primary.
    public var reads: (standbys: [String: Int], primary: Int) {
        state.withLock { state in
            (Dictionary(uniqueKeysWithValues: replicas.indices.map { (replicas[$0].url.servers[0].description, state.reads[$0]) }), state.reads[replicas.count])
        }
    }

    /// Prometheus lines: reads by host, each standby's distance behind the primary.
    func metrics() -> String {
        let copy = state.withLock { $0 }
        var out = "# HELP vltava_db_reads_total Answers' reads by the server that ran them (--db-read).\n# TYPE vltava_db_reads_total counter\n"
        for (index, replica) in replicas.enumerated() {
            out += "vltava_db_reads_total{server=\"\(replica.url.servers[0].description)\",role=\"standby\"} \(copy.reads[index])\n"
        }
        out += "vltava_db_reads_total{server=\"primary\",role=\"primary\"} \(copy.reads[replicas.count])\n"
        out += "# HELP vltava_db_read_waits_total Reads that waited for a standby to replay this server's last write, by where they ran.\n"
        out += "# TYPE vltava_db_read_waits_total counter\n"
        out += "vltava_db_read_waits_total{ran=\"standby\"} \(copy.waited - copy.waitedInVain)\n"
        out += "vltava_db_read_waits_total{ran=\"primary\"} \(copy.waitedInVain)\n"
        out += "# HELP vltava_db_standby_behind_bytes WAL bytes the standby had not replayed at the last probe (-1: it did not answer).\n"
        out += "# TYPE vltava_db_standby_behind_bytes gauge\n"
        let newest = copy.history.last?.lsn ?? 0
        for (index, replica) in replicas.enumerated() {
            let behind = copy.replayed[index].map { $0 == .max ? 0 : max(0, newest - $0) } ?? -1
            out += "vltava_db_standby_behind_bytes{server=\"\(replica.url.servers[0].description)\"} \(behind)\n"
        }
        return out
    }
}

extension PostGISDatabase {
    /// An answer's read (PostGISFetch.swift): on a standby fresh enough, after it has replayed
    /// this process's last write, else on the primary. A standby that does not answer, or
    /// cancels the statement for a conflict with its replay (SQLSTATE 40001), hands the read to
    /// the primary.
    func read(_ sql: String, _ parameters: [AttributeValue], deadline: Deadline) throws(EngineError) -> [[AttributeValue]] {
        guard let standbys, let (index, waitFor) = standbys.pick() else {
            let result = try rows(sql, parameters, deadline: deadline)
            standbys?.served(nil)
            return result
        }
        try deadline.check()
        let replica = standbys.replicas[index]
        do throws(EngineError) {
            // nil: the standby did not replay the write in time.
            let result = try replica.withConnection(retryingOnce: true, deadline: deadline) { connection -> [[AttributeValue]]? in
                if let waitFor, try !standbys.replay(replica, connection, reaching: waitFor, deadline: deadline) { return nil }
                return try replica.rows(connection, sql, parameters)
            }
            if let result {
                standbys.served(index, waited: waitFor != nil)
                return result
            }
        } catch {
            switch error {
            case .databaseUnavailable: standbys.down(index)
            case .store(let message) where message.contains("SQLSTATE 40001"): break
            default: throw error
            }
        }
        let result = try rows(sql, parameters, deadline: deadline)
        standbys.served(nil, waited: waitFor != nil)
        return result
    }
}

/// A weak reference a thread may hold.
final class Weak<Value: AnyObject>: @unchecked Sendable {
    weak var value: Value?
    init(_ value: Value) { self.value = value }
}
