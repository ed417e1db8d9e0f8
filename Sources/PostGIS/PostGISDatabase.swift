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

/// `postgresql://user[:password]@host[:port]/database` (also `postgres://`).
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
/// `maxIdle`); one that fails is dropped, so after a restart of PostgreSQL or a terminated
/// backend the request that meets it answers `databaseUnavailable` (503), and the next opens a
/// fresh connection.
public final class PostGISDatabase: SQLDatabase, @unchecked Sendable {
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
    public func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws(EngineError) -> T {
        let connection = try take()
        do {
            let result = try body(connection)
            give(connection)
            return result
        } catch let error as PSQLError where error.code == .server {
            // The server refused the statement (a bad query, a constraint): the connection is fine.
            give(connection)
            throw .store("\(location): \(PostGISDatabase.message(error))")
        } catch let error as EngineError {
            give(connection)
            throw error
        } catch {
            PostGISDatabase.discard(connection)
            throw .databaseUnavailable("the database at \(location) cannot be reached: \(PostGISDatabase.message(error)); the next request tries again")
        }
    }

    public func rows(_ sql: String, _ parameters: [AttributeValue], deadline: Deadline) throws(EngineError) -> [[AttributeValue]] {
        try deadline.check()
        return try withConnection { connection in
            let result = try connection.query(PostgresQuery(unsafeSQL: sql, binds: PostGISDatabase.bindings(parameters)), logger: logger).wait()
            return result.rows.map { row in row.map(PostGISDatabase.value) }
        }
    }

    /// Runs one statement whose rows are not needed (DDL, inserts).
    public func execute(_ connection: PostgresConnection, _ sql: String, _ parameters: [AttributeValue] = []) throws {
        _ = try connection.query(PostgresQuery(unsafeSQL: sql, binds: PostGISDatabase.bindings(parameters)), logger: logger).wait()
    }

    /// Listens on `channel` on a connection of its own until that connection closes:
    /// `connected` once listening, `notified` for each notification.
    func listen(channel: String, connected: () -> Void, notified: @escaping @Sendable () -> Void) throws {
        let connection = try open()
        defer { PostGISDatabase.discard(connection) }
        connection.addListener(channel: channel) { _, _ in notified() }
        try execute(connection, "LISTEN " + channel)
        connected()
        try connection.closeFuture.wait()
    }

    private func take() throws(EngineError) -> PostgresConnection {
        while let connection = idle.withLock({ $0.popLast() }) {
            if !connection.isClosed { return connection }
        }
        return try open()
    }

    private func open() throws(EngineError) -> PostgresConnection {
        let id = PostGISDatabase.ids.withLock { $0 += 1; return $0 }
        var configuration = PostgresConnection.Configuration(host: url.host, port: url.port, username: url.user, password: url.password,
                                                             database: url.database, tls: .disable)
        configuration.options.connectTimeout = .seconds(5)
        // Time-series times are text ('2019-04-14 21:00:00.0 UTC'); a text without a zone reads as UTC, as UTCTime does.
        // No JIT: Vltava's statements are index probes, and PostgreSQL's guess of a HISTORY
        // window's rows (a third of the table) made it compile one for 0.4 s of a 0.45 s answer.
        configuration.options.additionalStartupParameters = [("TimeZone", "UTC"), ("jit", "off")]
        do {
            return try PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: id, logger: logger).wait()
        } catch let error as PSQLError where error.code == .server {
            // Refused by the server: a wrong password, an unknown database or user.
            throw .store("cannot open \(location): \(PostGISDatabase.message(error))")
        } catch {
            throw .databaseUnavailable("the database at \(location) cannot be reached: \(PostGISDatabase.message(error))")
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
