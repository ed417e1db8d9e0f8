// A throwaway PostgreSQL 15 cluster with PostGIS for the PostGIS store's tests: initdb into a
// temporary folder as an unprivileged user, listening on 127.0.0.1 only, on a free port of
// 55400–55499 (the range the project's tests and benchmarks keep to), and stopped and removed
// by `stop()`. One cluster serves a whole suite: starting one takes about a second.
//
// CI runs as root, and PostgreSQL refuses to run as root, so the server runs as `nobody`
// through `runuser` (util-linux, on every Debian). As another user it runs as that user.

import Foundation
#if canImport(Glibc)
import Glibc
#endif

public final class PostgresCluster: @unchecked Sendable {
    /// Where Debian's postgresql-15 puts its programs.
    public static let binaries = URL(fileURLWithPath: "/usr/lib/postgresql/15/bin")
    public static let user = "vltava"
    public static let password = "vltava-test-secret"
    public static let database = "vltava"

    public let port: Int
    public let directory: URL
    /// `postgresql://vltava:…@127.0.0.1:port/vltava`
    public var url: String { "postgresql://\(Self.user):\(Self.password)@127.0.0.1:\(port)/\(Self.database)" }

    /// Why the tests that need a server cannot run here (nil when PostgreSQL 15 and PostGIS 3
    /// are installed): they skip with this message.
    public static var missing: String? {
        let postgres = binaries.appendingPathComponent("postgres").path
        guard FileManager.default.isExecutableFile(atPath: postgres) else {
            return "PostgreSQL 15 is not installed (\(postgres)); scripts/install-deps.sh --test installs postgresql-15-postgis-3"
        }
        guard FileManager.default.fileExists(atPath: "/usr/share/postgresql/15/extension/postgis.control") else {
            return "PostGIS 3 for PostgreSQL 15 is not installed; scripts/install-deps.sh --test installs postgresql-15-postgis-3"
        }
        return nil
    }

    private let runAs: [String]
    /// Settings beyond `options`' (`-c name=value …`), kept for `resume`.
    private let extra: String

    private init(port: Int, directory: URL, runAs: [String], extra: String = "") {
        self.port = port
        self.directory = directory
        self.runAs = runAs
        self.extra = extra
    }

    /// Creates the cluster, starts it and creates the database with PostGIS in it. `extra`:
    /// more settings (`-c synchronous_commit=on …`), after the defaults, so they win.
    public static func start(extra: String = "") throws -> PostgresCluster {
        if let missing { throw ClusterError(message: missing) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vltava-pg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var runAs: [String] = []
        if getuid() == 0 {
            // PostgreSQL will not run as root: hand the folder to nobody and run as nobody.
            guard let nobody = getpwnam("nobody") else { throw ClusterError(message: "no user 'nobody' to run PostgreSQL as") }
            guard chown(directory.path, nobody.pointee.pw_uid, nobody.pointee.pw_gid) == 0 else {
                throw ClusterError(message: "cannot hand \(directory.path) to nobody")
            }
            runAs = ["-u", "nobody", "--"]
        }
        let data = directory.appendingPathComponent("data").path
        let passwordFile = directory.appendingPathComponent("password").path
        try password.write(toFile: passwordFile, atomically: true, encoding: .utf8)
        if getuid() == 0, let nobody = getpwnam("nobody") { _ = chown(passwordFile, nobody.pointee.pw_uid, nobody.pointee.pw_gid) }
        // Password authentication over TCP (the wrong-password test needs it), trust on the socket.
        let cluster = PostgresCluster(port: 0, directory: directory, runAs: runAs, extra: extra)
        try cluster.run("initdb", ["-D", data, "-U", user, "--pwfile=\(passwordFile)", "--auth-host=scram-sha-256",
                                   "--auth-local=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"])
        // Tests run in parallel, in this process and in others: try random ports of the range
        // until one is free (a port taken meanwhile makes pg_ctl fail, and the next is tried).
        var lastError = ""
        for port in (55400...55499).shuffled().prefix(12) where portIsFree(port) {
            let started = PostgresCluster(port: port, directory: directory, runAs: runAs, extra: extra)
            let options = Self.options(port, directory) + " " + extra
            do {
                try started.run("pg_ctl", ["-D", data, "-o", options, "-l", directory.appendingPathComponent("log").path, "-w", "-t", "30", "start"])
            } catch {
                lastError = "\(error)"
                continue
            }
            do {
                try started.psql("CREATE DATABASE \(database)", database: "postgres")
                try started.psql("CREATE EXTENSION postgis")
            } catch {
                started.stop()
                throw error
            }
            return started
        }
        try? FileManager.default.removeItem(at: directory)
        throw ClusterError(message: "could not start PostgreSQL on a port of 55400–55499: \(lastError)")
    }

    /// Runs SQL as the cluster's owner over the socket, and returns psql's unaligned output.
    @discardableResult
    public func psql(_ sql: String, database: String = PostgresCluster.database) throws -> String {
        try run("psql", ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", directory.path, "-p", "\(port)", "-U", Self.user,
                         "-d", database, "-c", sql])
    }

    /// Stops the server (immediate mode: nothing of it is kept) and removes its folder.
    public func stop() {
        _ = try? run("pg_ctl", ["-D", directory.appendingPathComponent("data").path, "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(at: directory)
    }

    /// Stops the server, keeping its data (for the dropped-connection tests); `resume` starts it
    /// again. `mode`: pg_ctl's, "fast" (sessions are terminated: 57P01) or "smart" (new
    /// connections are refused with 57P03 while the sessions open run to their end); `wait`:
    /// whether to return only once the server has stopped (else `waitUntilStopped`).
    public func pause(mode: String = "fast", wait: Bool = true) throws {
        try run("pg_ctl", ["-D", directory.appendingPathComponent("data").path, "-m", mode, wait ? "-w" : "-W", "stop"])
    }

    /// Returns once the server no longer runs (pg_ctl status answers 3), polling for up to 60 s.
    public func waitUntilStopped() throws {
        for _ in 0..<600 {
            if (try? run("pg_ctl", ["-D", directory.appendingPathComponent("data").path, "status"])) == nil { return }
            usleep(100_000)
        }
        throw ClusterError(message: "PostgreSQL did not stop within 60 s")
    }

    /// A hot standby of this cluster, streaming from it: a base backup with `-R` (it writes
    /// `primary_conninfo` and `standby.signal`), started on a free port of the range. Its
    /// walreceiver is `walreceiver`, the name `synchronous_standby_names` may list.
    public func standby(extra: String = "") throws -> PostgresCluster {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vltava-pg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        if getuid() == 0, let nobody = getpwnam("nobody") {
            guard chown(folder.path, nobody.pointee.pw_uid, nobody.pointee.pw_gid) == 0 else {
                throw ClusterError(message: "cannot hand \(folder.path) to nobody")
            }
        }
        let data = folder.appendingPathComponent("data").path
        try run("pg_basebackup", ["-D", data, "-R", "-X", "stream", "-c", "fast", "-h", directory.path, "-p", "\(port)", "-U", Self.user])
        var lastError = ""
        for port in (55400...55499).shuffled().prefix(12) where Self.portIsFree(port) && port != self.port {
            let started = PostgresCluster(port: port, directory: folder, runAs: runAs, extra: extra)
            do {
                try started.resume()
                return started
            } catch {
                lastError = "\(error)"
            }
        }
        try? FileManager.default.removeItem(at: folder)
        throw ClusterError(message: "could not start the standby on a port of 55400–55499: \(lastError)")
    }

    /// Promotes a standby to primary (`pg_ctl promote`, waiting until it takes writes).
    public func promote() throws {
        try run("pg_ctl", ["-D", directory.appendingPathComponent("data").path, "-w", "-t", "30", "promote"])
    }

    /// `kill -9` of the postmaster: a crash, nothing flushed that was not already.
    public func crash() throws {
        let pidFile = directory.appendingPathComponent("data/postmaster.pid").path
        guard let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
              let line = text.split(separator: "\n").first, let pid = Int32(line.trimmingCharacters(in: .whitespaces)) else {
            throw ClusterError(message: "no postmaster.pid in \(pidFile)")
        }
        guard kill(pid, SIGKILL) == 0 else { throw ClusterError(message: "kill -9 \(pid) failed") }
    }

    public func resume() throws {
        try run("pg_ctl", ["-D", directory.appendingPathComponent("data").path, "-o", Self.options(port, directory) + " " + extra,
                           "-l", directory.appendingPathComponent("log").path, "-w", "-t", "30", "start"])
    }

    static func options(_ port: Int, _ directory: URL) -> String {
        "-c listen_addresses=127.0.0.1 -p \(port) -c unix_socket_directories=\(directory.path) -c fsync=off "
            + "-c synchronous_commit=off -c full_page_writes=off -c max_connections=40"
    }

    /// Clusters started by this process, stopped when it exits (a suite has no teardown).
    nonisolated(unsafe) static var running: [PostgresCluster] = []
    static let registry = NSLock()

    /// One cluster for the whole test process, started on first use and stopped at exit.
    public static let shared: Result<PostgresCluster, any Error> = Result {
        let cluster = try start()
        registry.lock()
        running.append(cluster)
        registry.unlock()
        atexit {
            PostgresCluster.registry.lock()
            for cluster in PostgresCluster.running { cluster.stop() }
            PostgresCluster.registry.unlock()
        }
        return cluster
    }

    @discardableResult
    private func run(_ program: String, _ arguments: [String]) throws -> String {
        let executable = Self.binaries.appendingPathComponent(program)
        let result = runAs.isEmpty
            ? try Fixtures.run(executable, arguments, timeout: 60)
            : try Fixtures.run(URL(fileURLWithPath: "/usr/sbin/runuser"), runAs + [executable.path] + arguments, timeout: 60)
        guard result.status == 0 else {
            throw ClusterError(message: "\(program) failed (\(result.status)): \(result.stderr.suffix(600))")
        }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public static func portIsFree(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

public struct ClusterError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
