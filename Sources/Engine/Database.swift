// The seam between the engine and a store that is a database (PostGIS, Sources/PostGIS).
//
// A snapshot is built by a `SnapshotSource`: the GeoPackage file (this module), or a PostGIS
// database (the PostGIS module, which knows `postgresql://` URLs). A snapshot built from a
// database keeps it as a `DatabaseStore`. The engine and the query language decide what an
// answer needs from it and why that is enough (DatabaseLayers.swift, DatabaseItems.swift,
// SeriesFetch.swift, QueryLanguage/Pushdown.swift), in the store's terms (`LayerFetch`,
// `StoreCondition`); the store writes the statements, every value a bound parameter, and runs
// them. Only the PostGIS module (and the Store module, for the GeoPackage) writes SQL.

import Geometry
import Store
import Support

/// Builds snapshots: the engine's one way to (re)load its data.
public protocol SnapshotSource: Sendable {
    /// The store as a user may see it: a file path, or a URL without its password.
    var location: String { get }
    func loadSnapshot(tileSets: [String: String], limits: EngineLimits) throws(EngineError) -> Snapshot
    /// Calls `changed` whenever the store's data changes, for as long as the process runs
    /// (PostGIS: LISTEN/NOTIFY), saying what changed. Returns false when the source cannot tell
    /// (a GeoPackage file: reload on request or SIGHUP).
    func watchChanges(_ changed: @escaping @Sendable (StoreChange) -> Void) -> Bool
    /// Throws when a loaded snapshot cannot answer now because the store is not there
    /// (PostGIS: the database does not answer a cheap statement within `timeout` seconds).
    /// A file is ready once loaded: the default does nothing.
    func checkReady(timeout: Double) throws(EngineError)
    /// The store's writer (Writes.swift). The default: the store takes no writes.
    func openWriter() throws(EngineError) -> any StoreWriter
    /// The change feed after `sequence`, read without becoming the store's writer. The
    /// default: a store without a feed.
    func changes(since sequence: Int64, limit: Int) throws(EngineError) -> [Change]
    /// The feed's last sequence number (0: none yet).
    func lastSequence() throws(EngineError) -> Int64
    /// The features `fids` of each layer as the store holds them now (nil: gone), in EPSG:4326,
    /// for a snapshot catching up with another process's writes (`Engine.catchUp`). The
    /// default: nil, the source cannot (reload instead).
    func currentFeatures(_ fids: [String: Set<Int64>], of layers: [String: LayerInfo]) throws(EngineError) -> [String: [Int64: StoredFeature?]]?
    /// The live layers and fences declared in the store (LiveLayers.swift). The default: none.
    func liveDefinitions() throws(EngineError) -> [LiveDefinition]
    /// Durable live layers' objects as the store kept them. The default: none.
    func livePositions() throws(EngineError) -> [StoredPosition]
    /// The layers' descriptions with their row counts and extents (`vltava layers`).
    func layerInfos() throws(EngineError) -> [LayerInfo]
    /// Calls `body` with each of a layer's features in fid order, holding at most `pageSize` of
    /// them at a time (`vltava export`), so a layer of any size passes through. A feature the
    /// store cannot read stops it with an error naming the layer and fid.
    func forEachFeature(of layer: String, pageSize: Int, _ body: (StoredFeature) -> Void) throws(EngineError)
    /// The store's own lines for GET /metrics (Prometheus text; PostGIS with `--db-read`: reads
    /// by host, standby lag). The default: none.
    func metrics() -> String
}

/// What a store's change notification says.
public enum StoreChange: Sendable {
    /// Rows of layers changed, each numbered in the change feed: a snapshot catches up.
    case rows
    /// Layers were added, replaced, dropped or renamed, or what changed is unknown: reload.
    case layers
}

extension SnapshotSource {
    /// `forEachFeature` a page of 10,000 at a time.
    public func forEachFeature(of layer: String, _ body: (StoredFeature) -> Void) throws(EngineError) {
        try forEachFeature(of: layer, pageSize: 10_000, body)
    }
    /// One layer's features, in fid order.
    public func features(of layer: String) throws(EngineError) -> [StoredFeature] {
        var features: [StoredFeature] = []
        try forEachFeature(of: layer) { features.append($0) }
        return features
    }
    public func watchChanges(_ changed: @escaping @Sendable (StoreChange) -> Void) -> Bool { false }
    public func lastSequence() throws(EngineError) -> Int64 { 0 }
    public func currentFeatures(_ fids: [String: Set<Int64>], of layers: [String: LayerInfo]) throws(EngineError) -> [String: [Int64: StoredFeature?]]? { nil }
    public func checkReady(timeout: Double) throws(EngineError) {}
    public func liveDefinitions() throws(EngineError) -> [LiveDefinition] { [] }
    public func livePositions() throws(EngineError) -> [StoredPosition] { [] }
    public func metrics() -> String { "" }
    public func openWriter() throws(EngineError) -> any StoreWriter {
        throw .write(code: "read_only", category: .impossible, message: "the store at \(location) takes no writes")
    }
    public func changes(since sequence: Int64, limit: Int) throws(EngineError) -> [Change] {
        throw .write(code: "read_only", category: .impossible, message: "the store at \(location) has no change feed yet")
    }
}

/// The GeoPackage file at `path`.
public struct GeoPackageSource: SnapshotSource {
    public let path: String
    public init(path: String) { self.path = path }
    public var location: String { path }
    public func loadSnapshot(tileSets: [String: String], limits: EngineLimits) throws(EngineError) -> Snapshot {
        try Snapshot.load(storePath: path, tileSets: tileSets, limits: limits)
    }
    public func openWriter() throws(EngineError) -> any StoreWriter {
        try GeoPackageStoreWriter(path: path)
    }
    public func changes(since sequence: Int64, limit: Int) throws(EngineError) -> [Change] {
        do {
            return try GeoPackage(path: path, mode: .readOnly).changes(since: sequence, limit: limit)
        } catch {
            throw .store(error.description)
        }
    }
    public func lastSequence() throws(EngineError) -> Int64 {
        do {
            return try GeoPackage(path: path, mode: .readOnly).lastSequence()
        } catch {
            throw .store(error.description)
        }
    }
    public func liveDefinitions() throws(EngineError) -> [LiveDefinition] {
        do {
            return try GeoPackage(path: path, mode: .readOnly).liveDefinitions()
        } catch {
            throw .store(error.description)
        }
    }
    public func livePositions() throws(EngineError) -> [StoredPosition] {
        do {
            return try GeoPackage(path: path, mode: .readOnly).livePositions()
        } catch {
            throw .store(error.description)
        }
    }
    public func layerInfos() throws(EngineError) -> [LayerInfo] {
        do { return try GeoPackage(path: path).layers() } catch { throw .store("\(error)") }
    }
    public func forEachFeature(of layer: String, pageSize: Int, _ body: (StoredFeature) -> Void) throws(EngineError) {
        do {
            let problems = try GeoPackage(path: path).forEachFeature(of: layer) { feature in
                body(feature)
                return true
            }
            if let problem = problems.first { throw StoreError.badFeature(layer: layer, fid: problem.fid, reason: problem.reason) }
        } catch {
            throw .store("\(error)")
        }
    }
}

/// What the engine asks of a store whose layers or time series stay in a database. Errors:
/// `.databaseUnavailable` when the database cannot be reached (the HTTP API answers 503, and
/// the next request tries again), `.store` for anything else.
public protocol DatabaseStore: Sendable {
    /// The database's URL without its password.
    var location: String { get }
    /// The rows of a layer kept in the database that `fetch` selects, decoded as features, in
    /// the selection's order: nearest first for `.nearest`, fid order otherwise.
    func features(_ fetch: LayerFetch, deadline: Deadline) throws(EngineError) -> FetchedRows
    /// The fids alone, in the same order, each with the database's sphere metres for
    /// `.nearest`: a layer the snapshot holds reads the rest by fid.
    func fids(_ fetch: LayerFetch, deadline: Deadline) throws(EngineError) -> [(fid: Int64, metres: Double?)]
    /// How many rows `fetch` selects, its limit set aside (for the error that says how many).
    func count(_ fetch: LayerFetch, deadline: Deadline) throws(EngineError) -> Int
    /// The rows of `series` that `needs` asks for about the stations `keys` (SeriesFetch.swift
    /// says which), each as the table's columns by name, in fid order.
    func seriesRows(_ series: TimeSeries, keys: [String], needs: SeriesNeeds, deadline: Deadline) throws(EngineError) -> [Attributes]
    /// The first start and last end among the series' observations; nil when it has none.
    func seriesExtent(_ series: TimeSeries, deadline: Deadline) throws(EngineError) -> TimeRange?
    /// The statement `features(fetch)` (or `fids(fetch)`) runs and the database's plan for it,
    /// for EXPLAIN.
    func explain(_ fetch: LayerFetch, fidsOnly: Bool, deadline: Deadline) throws(EngineError) -> (statement: String, plan: [String])
    /// The statement `seriesRows` runs and the database's plan for it, for EXPLAIN.
    func explainSeries(_ series: TimeSeries, keys: [String], needs: SeriesNeeds, deadline: Deadline) throws(EngineError) -> (statement: String, plan: [String])
}

/// One fetch from a layer kept in the database: the rows `selection` may hold that `condition`
/// keeps, past fid `after`, at most `limit` of them.
public struct LayerFetch: Sendable {
    public var layer: LayerInfo
    /// Whether the layer holds points: the slack between the engine's metres and the database's
    /// is smaller for points (`DatabaseSelection.slack`).
    public var points: Bool
    public var selection: DatabaseSelection
    public var condition: StoreCondition?
    public var after: Int64?
    public var limit: Int?

    public init(layer: LayerInfo, points: Bool, selection: DatabaseSelection, condition: StoreCondition? = nil, after: Int64? = nil, limit: Int? = nil) {
        self.layer = layer
        self.points = points
        self.selection = selection
        self.condition = condition
        self.after = after
        self.limit = limit
    }
}

/// The rows of a fetch, as features.
public struct FetchedRows: Sendable {
    public var features: [StoredFeature]
    /// For `.nearest`: the database's sphere metres to the last row fetched.
    public var lastMetres: Double?

    public init(features: [StoredFeature], lastMetres: Double?) {
        self.features = features
        self.lastMetres = lastMetres
    }
}
