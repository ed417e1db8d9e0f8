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

/// `postgresql://user[:password]@host[:port]/database` (also `postgres://`). Without a password
/// in it, the connection takes libpq's: PGPASSWORD, else the password file (PasswordFile.swift).
public struct PostGISURL: Sendable, CustomStringConvertible {
    public var user: String
    public var password: String?
    public var host: String
    public var port: Int
    public var database: String

    /// Whether `location` names a PostgreSQL database rather than a GeoPackage file.
    public static func isDatabase(_ location: String) -> Bool {
        location.hasPrefix("postgresql://") || location.hasPrefix("postgres://")
    }

    public init(_ text: String) throws(EngineError) {
        // The message never repeats the password: the URL as given goes through `redacted`.
        func bad(_ why: String) -> EngineError { .store("\(PostGISURL.redacted(text)): \(why) (expected postgresql://user[:password]@host[:port]/database)") }
        guard PostGISURL.isDatabase(text), let components = URLComponents(string: text) else { throw bad("not a PostgreSQL URL") }
        guard let host = components.host, !host.isEmpty else { throw bad("no host") }
        guard let user = components.user, !user.isEmpty else { throw bad("no user") }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else { throw bad("no database name") }
        let port = components.port ?? 5432
        guard (1...65535).contains(port) else { throw bad("port \(port) is out of range") }
        self.user = components.percentEncodedUser.flatMap { $0.removingPercentEncoding } ?? user
        password = components.percentEncodedPassword.flatMap { $0.removingPercentEncoding }
        self.host = host
        self.port = port
        self.database = database
    }

    /// The URL without its password, for messages and logs.
    public var description: String { "postgresql://\(user)@\(host):\(port)/\(database)" }

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

    public init(url: PostGISURL) {
        self.url = url
        var logger = Logger(label: "vltava.postgis")
        logger.logLevel = .critical
        self.logger = logger
    }

    public convenience init(_ text: String) throws(EngineError) {
        self.init(url: try PostGISURL(text))
    }

    deinit {
        for connection in idle.withLock({ $0 }) { PostGISDatabase.discard(connection) }
    }

    /// Runs `body` on a pooled connection; a connection that failed is closed, not returned.
    /// `retryingOnce`: the body only reads, so when a kept connection turns out dead it runs
    /// again on a new one.
    public func withConnection<T>(retryingOnce: Bool = false, _ body: (PostgresConnection) throws -> T) throws(EngineError) -> T {
        var (connection, kept) = try take()
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
                guard retryingOnce && kept else { throw failure }
                kept = false
                connection = try open()
            }
        }
    }

    /// SQLSTATEs that say the server is not there to answer rather than that the statement is
    /// wrong: class 08 (connection exceptions), 57P01 (terminating connection: a fast or smart
    /// shutdown), 57P02 (crash shutdown), 57P03 (cannot connect now: starting up or shutting
    /// down), 53300 (too many connections).
    static func unavailableState(_ state: String) -> Bool {
        state.hasPrefix("08") || ["57P01", "57P02", "57P03", "53300"].contains(state)
    }

    /// The one classification of what connecting or running a statement threw.
    func classify(_ error: any Error) -> EngineError {
        if let error = error as? EngineError { return error }
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
        return try withConnection(retryingOnce: true) { connection in
            let result = try connection.query(PostgresQuery(unsafeSQL: sql, binds: PostGISDatabase.bindings(parameters)), logger: logger).wait()
            return result.rows.map { row in row.map(PostGISDatabase.value) }
        }
    }

    /// The rows of a statement run on `connection` (inside a transaction that connection holds).
    func rows(_ connection: PostgresConnection, _ sql: String, _ parameters: [AttributeValue]) throws -> [[AttributeValue]] {
        let result = try connection.query(PostgresQuery(unsafeSQL: sql, binds: PostGISDatabase.bindings(parameters)), logger: logger).wait()
        return result.rows.map { row in row.map(PostGISDatabase.value) }
    }

    /// Runs one statement whose rows are not needed (DDL, inserts).
    public func execute(_ connection: PostgresConnection, _ sql: String, _ parameters: [AttributeValue] = []) throws {
        _ = try connection.query(PostgresQuery(unsafeSQL: sql, binds: PostGISDatabase.bindings(parameters)), logger: logger).wait()
    }

    /// Listens on `channel` on a connection of its own until that connection closes:
    /// `connected` once listening, `notified` with each notification's payload.
    func listen(channel: String, connected: () -> Void, notified: @escaping @Sendable (String) -> Void) throws {
        let connection = try open()
        defer { PostGISDatabase.discard(connection) }
        connection.addListener(channel: channel) { _, notification in notified(notification.payload) }
        try execute(connection, "LISTEN " + channel)
        connected()
        try connection.closeFuture.wait()
    }

    /// An idle connection (kept: true) or a new one.
    private func take() throws(EngineError) -> (connection: PostgresConnection, kept: Bool) {
        while let connection = idle.withLock({ $0.popLast() }) {
            if !connection.isClosed { return (connection, true) }
        }
        return (try open(), false)
    }

    private func open() throws(EngineError) -> PostgresConnection {
        let id = PostGISDatabase.ids.withLock { $0 += 1; return $0 }
        // A URL without a password: libpq's PGPASSWORD or password file (PasswordFile.swift).
        var configuration = PostgresConnection.Configuration(host: url.host, port: url.port, username: url.user,
                                                             password: url.password ?? PasswordFile.password(for: url),
                                                             database: url.database, tls: .disable)
        configuration.options.connectTimeout = .seconds(5)
        // Time-series times are text ('2019-04-14 21:00:00.0 UTC'); a text without a zone reads as UTC, as UTCTime does.
        // No JIT: Vltava's statements are index probes, and PostgreSQL's guess of a HISTORY
        // window's rows (a third of the table) made it compile one for 0.4 s of a 0.45 s answer.
        configuration.options.additionalStartupParameters = [("TimeZone", "UTC"), ("jit", "off")]
        do {
            return try PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: id, logger: logger).wait()
        } catch {
            // Refused by the server (a wrong password, an unknown database or user) is a store
            // error naming the URL; starting up, shutting down or not listening is unavailable.
            throw classify(error)
        }
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
