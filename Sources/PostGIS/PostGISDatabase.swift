// A PostgreSQL database reached through postgres-nio: the URL, a small pool of connections,
// and statements with bound parameters only. The engine's work is synchronous (the server runs
// it on its heavy-work pool's threads), so each statement waits on its future there; no event
// loop thread ever waits.

import Engine
import Foundation
import Geometry
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Store
import Support

/// `postgresql://user[:password]@host[:port][,host[:port]…]/database[?target_session_attrs=…]`
/// (also `postgres://`), as libpq reads it: several hosts are tried in order, and the first
/// whose session is of the kind `target_session_attrs` asks for is used. Without a password in
/// it, the connection takes libpq's: PGPASSWORD, else the password file (PasswordFile.swift).
public struct PostGISURL: Sendable, CustomStringConvertible {
    /// One `host:port` of the list.
    public struct Server: Sendable, Equatable, CustomStringConvertible {
        public var host: String
        public var port: Int
        public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }

    /// libpq's `target_session_attrs`: which server of the list a connection may use.
    public enum SessionAttributes: String, Sendable, CaseIterable {
        /// The first that answers.
        case any
        /// One that takes writes by default (`transaction_read_only` off): the primary.
        case readWrite = "read-write"
        /// One that refuses writes by default (`transaction_read_only` on).
        case readOnly = "read-only"
        /// One not in recovery (`pg_is_in_recovery()` false).
        case primary
        /// One in recovery: a hot standby.
        case standby
        /// A standby if any answers, else any server.
        case preferStandby = "prefer-standby"
    }

    public var user: String
    public var password: String?
    /// At least one, in the order connecting tries them.
    public var servers: [Server]
    public var database: String
    public var sessionAttributes: SessionAttributes
    /// The first server's host and port.
    public var host: String { servers[0].host }
    public var port: Int { servers[0].port }

    /// Whether `location` names a PostgreSQL database rather than a GeoPackage file.
    public static func isDatabase(_ location: String) -> Bool {
        location.hasPrefix("postgresql://") || location.hasPrefix("postgres://")
    }

    public init(_ text: String) throws(EngineError) {
        // The message never repeats the password: the URL as given goes through `redacted`.
        func bad(_ why: String) -> EngineError {
            .store("\(PostGISURL.redacted(text)): \(why) (expected postgresql://user[:password]@host[:port][,host[:port]…]/database"
                   + "[?target_session_attrs=…])")
        }
        guard PostGISURL.isDatabase(text), let scheme = text.range(of: "://") else { throw bad("not a PostgreSQL URL") }
        // URLComponents takes one host only: the parts are split here, as libpq splits them.
        var rest = Substring(text[scheme.upperBound...])
        var query = Substring("")
        if let mark = rest.firstIndex(of: "?") { query = rest[rest.index(after: mark)...]; rest = rest[..<mark] }
        guard let slash = rest.firstIndex(of: "/") else { throw bad("no database name") }
        let authority = rest[..<slash]
        let database = String(rest[rest.index(after: slash)...]).removingPercentEncoding ?? ""
        guard !database.isEmpty, !database.contains("/") else { throw bad("no database name") }
        guard let at = authority.lastIndex(of: "@") else { throw bad("no user") }
        let credentials = authority[..<at], hostList = authority[authority.index(after: at)...]
        let colon = credentials.firstIndex(of: ":")
        guard let user = String(credentials[..<(colon ?? credentials.endIndex)]).removingPercentEncoding, !user.isEmpty else { throw bad("no user") }
        password = colon.flatMap { String(credentials[credentials.index(after: $0)...]).removingPercentEncoding }
        var servers: [Server] = []
        for item in hostList.split(separator: ",", omittingEmptySubsequences: false) {
            var host = item, portText: Substring?
            if item.hasPrefix("["), let close = item.firstIndex(of: "]") {  // [IPv6]:port
                host = item[item.index(after: item.startIndex)..<close]
                let after = item[item.index(after: close)...]
                if after.hasPrefix(":") { portText = after.dropFirst() } else if !after.isEmpty { throw bad("\(item) is not host[:port]") }
            } else if let c = item.lastIndex(of: ":") {
                host = item[..<c]
                portText = item[item.index(after: c)...]
            }
            guard !host.isEmpty else { throw bad("no host") }
            var port = 5432
            if let portText, !portText.isEmpty {
                guard let number = Int(portText), (1...65535).contains(number) else { throw bad("port \(portText) is out of range") }
                port = number
            }
            servers.append(Server(host: String(host), port: port))
        }
        sessionAttributes = .any
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.first == "target_session_attrs" else { continue }  // other parameters: ignored, as before
            let value = parts.count == 2 ? String(parts[1]).removingPercentEncoding ?? "" : ""
            guard let attributes = SessionAttributes(rawValue: value) else {
                throw bad("target_session_attrs=\(value) is none of \(SessionAttributes.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            sessionAttributes = attributes
        }
        self.user = user
        self.servers = servers
        self.database = database
    }

    /// The URL without its password, for messages and logs.
    public var description: String {
        "postgresql://\(user)@\(servers.map(\.description).joined(separator: ","))/\(database)"
            + (sessionAttributes == .any ? "" : "?target_session_attrs=\(sessionAttributes.rawValue)")
    }

    /// Any text that may be a URL with a password, with the password taken out.
    public static func redacted(_ text: String) -> String {
        guard let scheme = text.range(of: "://"), let at = text.range(of: "@", options: .backwards),
              scheme.upperBound <= at.lowerBound else { return text }
        let credentials = text[scheme.upperBound..<at.lowerBound]
        guard let colon = credentials.firstIndex(of: ":") else { return text }
        return String(text[..<colon]) + String(text[at.lowerBound...])
    }
}

/// The database a PostGIS store lives in. Connections are opened when needed and kept (at most
/// `maxIdle`). An error is either the database refusing a statement (a store error; the
/// connection is fine and goes back) or the database not being there to answer: down, starting
/// up, shutting down, a terminated backend, a lost connection (`databaseUnavailable`, 503 with
/// Retry-After; `classify` decides which, one place for both connecting and running). On the
/// second kind the connection and every idle one are dropped (after a restart they are all
/// dead), and a read that met it on a kept connection runs once more on a new one: a restart the
/// server is already back from costs no failed request.
public final class PostGISDatabase: @unchecked Sendable {
    public let url: PostGISURL
    public var location: String { url.description }
    let logger: Logger
    private let idle = Locked<[PostgresConnection]>([])
    private let maxIdle = 8
    private static let ids = Locked(0)
    /// How long connecting waits for a server of the kind asked for (`failoverWait` for the
    /// primary; none for one standby of `--db-read`, whose reads go to the primary at once).
    let serverWait: Double
    /// The hot standbys the answers' reads go to (`--db-read`, PostGISStandbys.swift); nil:
    /// every statement runs here.
    public private(set) var standbys: Standbys?
    /// Layers whose table is partitioned by `vltava_grid_key(geom, N)` (Benchmarks/partition-layer.sql):
    /// N, the grid's cell in thousandths of a degree, by layer name; read with the catalogue.
    let grids = Locked<[String: Int]>([:])

    /// `readURL`: hot standbys for the answers' reads (each of its servers a pool of its own),
    /// used while they have replayed what this database had written `maxReplicaLag` seconds
    /// before (PostGISStandbys.swift).
    public init(url: PostGISURL, readURL: PostGISURL? = nil, maxReplicaLag: Double = Standbys.defaultMaxLag) {
        self.url = url
        var logger = Logger(label: "vltava.postgis")
        logger.logLevel = .critical
        self.logger = logger
        serverWait = PostGISDatabase.failoverWait
        if let readURL {
            standbys = Standbys(readURL, maxLag: maxReplicaLag, primary: self)
        }
    }

    /// One standby's pool: no wait for a server of a kind, the standby is the only one.
    init(standby url: PostGISURL) {
        self.url = url
        var logger = Logger(label: "vltava.postgis")
        logger.logLevel = .critical
        self.logger = logger
        serverWait = 0
    }

    public convenience init(_ text: String, read readText: String? = nil, maxReplicaLag: Double = Standbys.defaultMaxLag) throws(EngineError) {
        self.init(url: try PostGISURL(text), readURL: try readText.map { text throws(EngineError) in try PostGISURL(text) }, maxReplicaLag: maxReplicaLag)
    }

    deinit {
        for connection in idle.withLock({ $0 }) { PostGISDatabase.discard(connection) }
    }

    /// Runs `body` on a pooled connection; a connection that failed is closed, not returned.
    /// `retryingOnce`: the body may run again (it reads, or its transaction cannot have
    /// committed), so when a kept connection turns out dead, or on a server that no longer takes
    /// writes, it runs again on a new one. `deadline` bounds the wait for a server (`open`).
    public func withConnection<T>(retryingOnce: Bool = false, deadline: Deadline = .none,
                                  _ body: (PostgresConnection) throws -> T) throws(EngineError) -> T {
        var (connection, kept) = try take(deadline: deadline)
        while true {
            do {
                let result = try body(connection)
                give(connection)
                return result
            } catch {
                let failure = classify(error)
                guard case .databaseUnavailable = failure else {
                    give(connection)
                    throw failure
                }
                PostGISDatabase.discard(connection)
                for stale in idle.withLock({ list in defer { list.removeAll() }; return list }) { PostGISDatabase.discard(stale) }
                // A new connection that fails says the database is down now: no second try then.
                // Nor after a COMMIT cut short: the transaction may have committed.
                guard retryingOnce && kept && !(error is CommitUncertain) else { throw failure }
                kept = false
                connection = try open(deadline: deadline)
            }
        }
    }

    /// What a transaction threw when its COMMIT failed: it may have committed or not.
    struct CommitUncertain: Error {
        let underlying: any Error
    }

    /// SQLSTATEs that say the server is not there to answer rather than that the statement is
    /// wrong: class 08 (connection exceptions), 57P01 (terminating connection: a fast or smart
    /// shutdown), 57P02 (crash shutdown), 57P03 (cannot connect now: starting up or shutting
    /// down), 53300 (too many connections), 25006 (read_only_sql_transaction: a write reached a
    /// standby, or a primary that was demoted; after a failover the next connection finds the
    /// new primary).
    static func unavailableState(_ state: String) -> Bool {
        state.hasPrefix("08") || ["57P01", "57P02", "57P03", "53300", "25006"].contains(state)
    }

    /// The one classification of what connecting or running a statement threw.
    func classify(_ error: any Error) -> EngineError {
        if let error = error as? EngineError { return error }
        if let uncertain = error as? CommitUncertain {
            // Never a false "ok", and never a plain failure either: the client must look.
            guard case .databaseUnavailable = classify(uncertain.underlying) else { return classify(uncertain.underlying) }
            return .databaseUnavailable("the database at \(location) went away while COMMIT was under way (\(PostGISDatabase.message(uncertain.underlying))): "
                                        + "the batch may or may not have been applied; read it back (the change feed, or the features) before sending it again")
        }
        // A write the store's checks refused (PostGISWrites.swift): the batch's own problem.
        if let error = error as? StoreError { return .write(code: error.code, category: error.category, message: error.description) }
        let message = PostGISDatabase.message(error)
        if let error = error as? PSQLError {
            switch error.code {
            case .authMechanismRequiresPassword:
                return .store("\(location): the server asks for a password and none was given: put it in the URL, in PGPASSWORD, or in "
                              + "the password file (PGPASSFILE, else ~/.pgpass; ignored when others than its owner may read it)")
            case .server where !PostGISDatabase.unavailableState(error.serverInfo?[.sqlState] ?? ""),
                 // What the URL or the statement says, not the server's state: the same on the next try.
                 .sslUnsupported, .unsupportedAuthMechanism, .saslError, .tooManyParameters:
                return .store("\(location): \(message)")
            default: break
            }
        }
        return .databaseUnavailable("the database at \(location) cannot be reached: \(message); the next request tries again")
    }

    /// Whether the database answers `SELECT 1` within `seconds` (readiness). The statement runs
    /// on a thread of its own, so a connection that hangs holds that thread, not the caller.
    public func ping(timeout seconds: Double) throws(EngineError) {
        let outcome = Locked<Result<Void, EngineError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async { [self] in
            let result = Result { () throws(EngineError) in _ = try rows("SELECT 1", [], deadline: .none) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        guard done.wait(timeout: .now() + seconds) == .success, let result = outcome.withLock({ $0 }) else {
            throw .databaseUnavailable("the database at \(location) did not answer SELECT 1 within \(seconds) s")
        }
        try result.get()
    }

    public func rows(_ sql: String, _ parameters: [AttributeValue], deadline: Deadline) throws(EngineError) -> [[AttributeValue]] {
        try deadline.check()
        // Every statement `rows` runs is a read (writes go through `execute`): safe to run again.
        return try withConnection(retryingOnce: true, deadline: deadline) { connection in
            try self.rows(connection, sql, parameters)
        }
    }

    /// The rows of a statement run on `connection` (inside a transaction that connection holds).
    func rows(_ connection: PostgresConnection, _ sql: String, _ parameters: [AttributeValue]) throws -> [[AttributeValue]] {
        try run(connection, sql, parameters).rows.map { row in row.map(PostGISDatabase.value) }
    }

    /// Runs one statement whose rows are not needed (DDL, inserts).
    public func execute(_ connection: PostgresConnection, _ sql: String, _ parameters: [AttributeValue] = []) throws {
        _ = try run(connection, sql, parameters)
    }

    /// The connection closed under a statement (`classify`: unavailable).
    struct ConnectionClosed: Error, CustomStringConvertible {
        var description: String { "the connection closed under the statement" }
    }

    /// One statement, waited for until it answers or its connection closes, whichever comes
    /// first: a statement sent as the server's end went away (a primary's kill -9) never
    /// answered, and its write held the engine's write lock for good.
    private func run(_ connection: PostgresConnection, _ sql: String, _ parameters: [AttributeValue]) throws -> PostgresQueryResult {
        let answered = connection.eventLoop.makePromise(of: PostgresQueryResult.self)
        let done = Locked(false)
        let complete: @Sendable (Result<PostgresQueryResult, any Error>) -> Void = { result in
            guard done.withLock({ finished in defer { finished = true }; return !finished }) else { return }
            answered.completeWith(result)
        }
        connection.query(PostgresQuery(unsafeSQL: sql, binds: PostGISDatabase.bindings(parameters)), logger: logger).whenComplete(complete)
        connection.closeFuture.whenComplete { _ in complete(.failure(ConnectionClosed())) }
        return try answered.futureResult.wait()
    }

    /// Listens on `channel` on a connection of its own until that connection closes:
    /// `connected` once listening, `notified` with each notification's payload.
    func listen(channel: String, connected: () -> Void, notified: @escaping @Sendable (String) -> Void) throws {
        let connection = try open(deadline: .none)
        defer { PostGISDatabase.discard(connection) }
        connection.addListener(channel: channel) { _, notification in notified(notification.payload) }
        try execute(connection, "LISTEN " + channel)
        connected()
        try connection.closeFuture.wait()
    }

    /// An idle connection (kept: true) or a new one.
    private func take(deadline: Deadline) throws(EngineError) -> (connection: PostgresConnection, kept: Bool) {
        while let connection = idle.withLock({ $0.popLast() }) {
            if !connection.isClosed { return (connection, true) }
        }
        return (try open(deadline: deadline), false)
    }

    /// How long connecting keeps trying while no server of the URL is of the kind asked for
    /// (a failover: the primary gone, the standby not yet promoted), unless the request's
    /// deadline ends sooner. Then 503 with Retry-After, and the client's next try starts again.
    static let failoverWait = 2.0

    /// A new connection to the first server of the URL, in order, whose session is of the kind
    /// `target_session_attrs` asks for, as libpq picks one. None: tried again with back-off
    /// (50 ms, doubling) for up to `failoverWait` seconds within `deadline`.
    private func open(deadline: Deadline) throws(EngineError) -> PostgresConnection {
        let start = DispatchTime.now().uptimeNanoseconds
        var pause = 0.05
        while true {
            do throws(EngineError) {
                return try openOnce()
            } catch {
                guard case .databaseUnavailable = error else { throw error }
                let waited = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                let left = min(serverWait - waited,
                               deadline.end == .max ? .infinity : (Double(deadline.end) - Double(DispatchTime.now().uptimeNanoseconds)) / 1e9)
                guard left > pause, !deadline.hasPassed else { throw error }
                usleep(UInt32(pause * 1e6))
                pause = min(pause * 2, 0.5)
            }
        }
    }

    /// One pass over the servers (two for prefer-standby: standbys, then any).
    private func openOnce() throws(EngineError) -> PostgresConnection {
        let passes: [PostGISURL.SessionAttributes] = url.sessionAttributes == .preferStandby ? [.standby, .any] : [url.sessionAttributes]
        var why: [String] = [], answered = false
        for wanted in passes {
            for server in url.servers {
                let connection: PostgresConnection
                do {
                    connection = try connect(server)
                } catch {
                    // Refused by the server (a wrong password, an unknown database or user) is
                    // the URL's problem, the same on every server: said at once. Starting up,
                    // shutting down or not listening: the next server is tried.
                    guard case .databaseUnavailable = classify(error) else { throw classify(error) }
                    why.append(url.servers.count == 1 ? PostGISDatabase.message(error) : "\(server): \(PostGISDatabase.message(error))")
                    continue
                }
                if wanted == .any { return connection }
                do {
                    let state = try rows(connection, "SELECT pg_is_in_recovery(), current_setting('transaction_read_only')", [])
                    guard case .bool(let recovering)? = state.first?.first, let readOnly = state.first?.last?.stringValue else {
                        throw EngineError.store("\(server): pg_is_in_recovery() gave no answer")
                    }
                    let fits = switch wanted {
                    case .readWrite: readOnly == "off"
                    case .readOnly: readOnly == "on"
                    case .primary: !recovering
                    case .standby, .preferStandby: recovering
                    case .any: true
                    }
                    if fits { return connection }
                    why.append("\(server) is \(recovering ? "a standby" : readOnly == "on" ? "read-only" : "a primary")")
                    answered = true
                } catch {
                    why.append("\(server): \(PostGISDatabase.message(error))")
                }
                PostGISDatabase.discard(connection)
            }
        }
        guard answered else {
            throw .databaseUnavailable("the database at \(location) cannot be reached: \(why.joined(separator: "; ")); the next request tries again")
        }
        throw .databaseUnavailable("no server of \(location) is \(url.sessionAttributes.rawValue) now (\(why.joined(separator: "; "))); the next request tries again")
    }

    private func connect(_ server: PostGISURL.Server) throws -> PostgresConnection {
        let id = PostGISDatabase.ids.withLock { $0 += 1; return $0 }
        // A URL without a password: libpq's PGPASSWORD or password file (PasswordFile.swift).
        var configuration = PostgresConnection.Configuration(host: server.host, port: server.port, username: url.user,
                                                             password: url.password ?? PasswordFile.password(for: url, on: server),
                                                             database: url.database, tls: .disable)
        configuration.options.connectTimeout = .seconds(5)
        // Time-series times are text ('2019-04-14 21:00:00.0 UTC'); a text without a zone reads as UTC, as UTCTime does.
        // No JIT: Vltava's statements are index probes, and PostgreSQL's guess of a HISTORY
        // window's rows (a third of the table) made it compile one for 0.4 s of a 0.45 s answer.
        configuration.options.additionalStartupParameters = [("TimeZone", "UTC"), ("jit", "off")]
        return try PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: id, logger: logger).wait()
    }

    private func give(_ connection: PostgresConnection) {
        guard !connection.isClosed else { return }
        let kept = idle.withLock { list -> Bool in
            guard list.count < maxIdle else { return false }
            list.append(connection)
            return true
        }
        if !kept { PostGISDatabase.discard(connection) }
    }

    /// Closes a connection, keeping it alive until it has closed (postgres-nio requires that).
    static func discard(_ connection: PostgresConnection) {
        let closing: EventLoopFuture<Void> = connection.close()
        closing.whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    /// One line: the server's own message when it sent one, else the error's kind.
    static func message(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let server = error.serverInfo, let text = server[.message] {
                return text + (server[.sqlState].map { " (SQLSTATE \($0))" } ?? "")
            }
            if let underlying = error.underlying { return "\(underlying)".replacingOccurrences(of: "\n", with: " ") }
            return "\(error.code)"
        }
        return "\(error)".replacingOccurrences(of: "\n", with: " ")
    }

    static func bindings(_ values: [AttributeValue]) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .null: bindings.appendNull()
            case .bool(let b): bindings.append(b)
            case .integer(let i): bindings.append(i)
            case .real(let d): bindings.append(d)
            case .text(let s), .json(let s): bindings.append(s)
            }
        }
        return bindings
    }

    /// A bytea parameter (a geometry's WKB) next to the others.
    static func value(_ cell: PostgresCell) -> AttributeValue {
        guard cell.bytes != nil else { return .null }
        switch cell.dataType {
        case .int2, .int4, .int8:
            return (try? cell.decode(Int64.self)).map { .integer($0) } ?? .null
        case .float4, .float8, .numeric:
            return (try? cell.decode(Double.self)).map { .real($0) } ?? .null
        case .bool:
            return (try? cell.decode(Bool.self)).map { .bool($0) } ?? .null
        case .bytea:
            // Geometries come as WKB: hex text, decoded by the caller.
            return (try? cell.decode([UInt8].self)).map { .text(Hex.encode($0)) } ?? .null
        default:
            return (try? cell.decode(String.self)).map { .text($0) } ?? .null
        }
    }
}
