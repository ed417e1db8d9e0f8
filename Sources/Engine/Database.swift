// The seam between the engine and a store that is a database (PostGIS, Sources/PostGIS).
//
// A snapshot is built by a `SnapshotSource`: the GeoPackage file (this module), or a PostGIS
// database (the PostGIS module, which knows `postgresql://` URLs). A snapshot built from a
// database keeps the database's `SQLDatabase`: the query language (QueryLanguage/SQLPushdown.swift)
// compiles a FIND's selection (spatial clause, WHERE, ORDER BY, LIMIT, the time-series
// conditions) to SQL with bound parameters and runs it there, and reads the answer's values
// from the snapshot by fid. The engine writes two statements itself, for what the snapshot does
// not hold: the fetch of the time-series rows an answer needs (SeriesFetch.swift), and the fetch
// of the rows of a layer too large to load (DatabaseLayers.swift).

import Geometry

/// Builds snapshots: the engine's one way to (re)load its data.
public protocol SnapshotSource: Sendable {
    /// The store as a user may see it: a file path, or a URL without its password.
    var location: String { get }
    func loadSnapshot(tileSets: [String: String], limits: EngineLimits) throws(EngineError) -> Snapshot
    /// Calls `changed` whenever the store's data changes, for as long as the process runs
    /// (PostGIS: LISTEN/NOTIFY). Returns false when the source cannot tell (a GeoPackage file:
    /// reload on request or SIGHUP).
    func watchChanges(_ changed: @escaping @Sendable () -> Void) -> Bool
    /// Throws when a loaded snapshot cannot answer now because the store is not there
    /// (PostGIS: the database does not answer a cheap statement within `timeout` seconds).
    /// A file is ready once loaded: the default does nothing.
    func checkReady(timeout: Double) throws(EngineError)
}

extension SnapshotSource {
    public func watchChanges(_ changed: @escaping @Sendable () -> Void) -> Bool { false }
    public func checkReady(timeout: Double) throws(EngineError) {}
}

/// The GeoPackage file at `path`.
public struct GeoPackageSource: SnapshotSource {
    public let path: String
    public init(path: String) { self.path = path }
    public var location: String { path }
    public func loadSnapshot(tileSets: [String: String], limits: EngineLimits) throws(EngineError) -> Snapshot {
        try Snapshot.load(storePath: path, tileSets: tileSets, limits: limits)
    }
}

/// A database a snapshot's queries run in: one statement at a time, every value a bound
/// parameter (`$1`, `$2`, … in the text). Errors: `.databaseUnavailable` when the database
/// cannot be reached (the HTTP API answers 503, and the next request tries again), `.store`
/// for anything else.
public protocol SQLDatabase: Sendable {
    /// The database's URL without its password.
    var location: String { get }
    /// Runs one statement and returns its rows, each value decoded by its column's type
    /// (integers, reals, text, booleans; anything else as text). The statement only reads, so
    /// the database may run it again on a new connection when the one it met was lost.
    func rows(_ sql: String, _ parameters: [AttributeValue], deadline: Deadline) throws(EngineError) -> [[AttributeValue]]
}
