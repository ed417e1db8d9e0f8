// A small Swift wrapper over the SQLite C API: a connection, prepared statements and typed
// column access, with errors that carry SQLite's own message. The store (GeoPackage) and the
// MBTiles reader both use it; neither needs more than this.

import CSQLite

/// SQLITE_TRANSIENT tells SQLite to copy bound text and blobs before `bind` returns.
private let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// SQLite's primary result code (SQLITE_CORRUPT, SQLITE_NOTADB, …).
    public let code: Int32
    public let message: String
    /// The statement that failed, if any.
    public let sql: String?

    public init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    public var description: String {
        if let sql { return "SQLite error \(code): \(message) (in: \(sql))" }
        return "SQLite error \(code): \(message)"
    }

    /// True when the file is not a database or is damaged.
    public var isCorruption: Bool { code == SQLITE_CORRUPT || code == SQLITE_NOTADB }
}

/// A value as SQLite stores it.
public enum SQLiteValue: Hashable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// One connection. Not thread-safe: use one per thread (SQLite itself is built serialized, but
/// a statement's state is per connection). Read-only connections can be opened by any number of
/// threads on the same file.
public final class Database {
    public enum Mode: Sendable {
        case readOnly
        /// Read-write, creating the file if it does not exist.
        case readWriteCreate
        /// Read-write on an existing file.
        case readWrite
    }

    public let path: String
    let handle: OpaquePointer

    public init(path: String, mode: Mode) throws(SQLiteError) {
        var flags: Int32 = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        switch mode {
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        case .readWrite: flags |= SQLITE_OPEN_READWRITE
        case .readWriteCreate: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        }
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open database"
            sqlite3_close_v2(db)
            throw SQLiteError(code: rc, message: "\(message): \(path)")
        }
        self.path = path
        self.handle = db
        sqlite3_busy_timeout(db, 5_000)
        sqlite3_extended_result_codes(db, 0)
        GeoPackageFunctions.register(on: db)
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    public var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    /// Runs one or more statements that return no rows.
    public func execute(_ sql: String) throws(SQLiteError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? lastErrorMessage
            sqlite3_free(errorMessage)
            throw SQLiteError(code: rc, message: message, sql: sql)
        }
    }

    public func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        try Statement(database: self, sql: sql)
    }

    /// Runs `body` inside a transaction: committed if it returns, rolled back if it throws,
    /// so a failed import leaves the file exactly as it was.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
    public var changes: Int { Int(sqlite3_changes(handle)) }

    var lastErrorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    func error(_ code: Int32, sql: String?) -> SQLiteError {
        SQLiteError(code: code, message: lastErrorMessage, sql: sql)
    }

    /// The first column of the first row, or nil when there is no row.
    public func scalar(_ sql: String, _ arguments: SQLiteValue...) throws(SQLiteError) -> SQLiteValue? {
        let statement = try prepare(sql)
        try statement.bind(arguments)
        return try statement.step() ? statement.value(0) : nil
    }

    /// Whether a table or view of this name exists.
    public func hasTable(_ name: String) throws(SQLiteError) -> Bool {
        try scalar("SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?", .text(name)) != nil
    }
}

public final class Statement {
    let database: Database
    let handle: OpaquePointer
    public let sql: String

    init(database: Database, sql: String) throws(SQLiteError) {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v2(database.handle, sql, -1, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else {
            throw database.error(rc, sql: sql)
        }
        self.database = database
        self.handle = stmt
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Resets the statement and binds `values` to parameters 1…n.
    /// Ends the current execution (releasing its read transaction) so the statement can run again.
    public func reset() {
        sqlite3_reset(handle)
    }

    public func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (i, value) in values.enumerated() {
            try bind(value, at: Int32(i + 1))
        }
    }

    public func bind(_ value: SQLiteValue, at index: Int32) throws(SQLiteError) {
        let rc: Int32
        switch value {
        case .null: rc = sqlite3_bind_null(handle, index)
        case .integer(let i): rc = sqlite3_bind_int64(handle, index, i)
        case .real(let d): rc = sqlite3_bind_double(handle, index, d)
        case .text(let s): rc = sqlite3_bind_text(handle, index, s, -1, SQLITE_TRANSIENT)
        case .blob(let bytes):
            rc = bytes.withUnsafeBytes { raw in
                // A zero-length blob must still be a blob, not NULL: sqlite3_bind_zeroblob does that.
                guard let base = raw.baseAddress, raw.count > 0 else { return sqlite3_bind_zeroblob(handle, index, 0) }
                return sqlite3_bind_blob(handle, index, base, Int32(raw.count), SQLITE_TRANSIENT)
            }
        }
        if rc != SQLITE_OK { throw database.error(rc, sql: sql) }
    }

    /// Advances to the next row. Returns false when there are no more rows.
    @discardableResult
    public func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = database.error(rc, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Binds, runs to completion and resets: for INSERT/UPDATE/DELETE.
    public func run(_ values: [SQLiteValue]) throws(SQLiteError) {
        try bind(values)
        while try step() {}
        sqlite3_reset(handle)
    }

    public func columnName(_ index: Int32) -> String {
        String(cString: sqlite3_column_name(handle, index))
    }

    public func isNull(_ index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }

    public func int64(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }
    public func double(_ index: Int32) -> Double { sqlite3_column_double(handle, index) }

    public func text(_ index: Int32) -> String? {
        guard let cString = sqlite3_column_text(handle, index) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: cString, count: count), as: UTF8.self)
    }

    public func blob(_ index: Int32) -> [UInt8]? {
        guard sqlite3_column_type(handle, index) != SQLITE_NULL else { return nil }
        let count = Int(sqlite3_column_bytes(handle, index))
        guard count > 0, let pointer = sqlite3_column_blob(handle, index) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Calls `body` with the blob's bytes without copying them; valid only inside `body`.
    public func withBlob<T>(_ index: Int32, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let pointer = sqlite3_column_blob(handle, index)
        let count = Int(sqlite3_column_bytes(handle, index))
        return try body(UnsafeRawBufferPointer(start: count > 0 ? pointer : nil, count: count))
    }

    public func value(_ index: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: .integer(int64(index))
        case SQLITE_FLOAT: .real(double(index))
        case SQLITE_TEXT: .text(text(index) ?? "")
        case SQLITE_BLOB: .blob(blob(index) ?? [])
        default: .null
        }
    }
}
