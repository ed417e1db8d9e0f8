// The engine as its users hold it: opened on a store, it keeps the current snapshot and swaps in
// a new one on reload. Readers take the snapshot once and keep it for the whole of their work,
// so a reload never mixes two versions of the data in one answer.

import Geometry
import Live
import Store
import Support

public final class Engine: Sendable {
    private let current: Locked<Snapshot>
    /// Held for the whole of a write or a reload, so they run one at a time (Writes.swift);
    /// the store's writer is opened on the first write and kept.
    let updates = Locked<(any StoreWriter)?>(nil)
    /// The last change of the store's feed the snapshot holds, with every one before it
    /// (`catchUp`). Changed only under `updates`.
    let held = Locked<Int64>(0)
    /// Where the snapshots are loaded from: the GeoPackage's path, or a database's URL without
    /// its password.
    public let storePath: String
    /// What builds the snapshots.
    public let source: any SnapshotSource
    /// Extra MBTiles files by name, besides those registered in the store.
    public let tileSetPaths: [String: String]
    public let limits: EngineLimits
    /// The live layers' objects, the fences and their events (LiveLayers.swift).
    public let live: LiveHub
    let fenceBook = Locked(FenceBook())

    /// Opens the store at `storePath` and loads its first snapshot.
    public convenience init(storePath: String, tileSets: [String: String] = [:], limits: EngineLimits = EngineLimits()) throws(EngineError) {
        try self.init(source: GeoPackageSource(path: storePath), tileSets: tileSets, limits: limits)
    }

    /// Opens the store `source` builds (a GeoPackage, a PostGIS database) and loads its first snapshot.
    public init(source: any SnapshotSource, tileSets: [String: String] = [:], limits: EngineLimits = EngineLimits()) throws(EngineError) {
        self.source = source
        storePath = source.location
        tileSetPaths = tileSets
        self.limits = limits
        // The feed's position is read before the load: a change committed meanwhile is in
        // the snapshot or not, and `catchUp` applies it again either way (it reads rows as they are).
        held.withLock { $0 = (try? source.lastSequence()) ?? 0 }
        current = Locked(try source.loadSnapshot(tileSets: tileSets, limits: limits))
        live = LiveHub(limits: limits.live)
        loadLiveDefinitions()
    }

    /// The store's current snapshot, without the live layers (LiveSnapshot.swift has `snapshot`).
    var storeSnapshot: Snapshot { current.withLock { $0 } }
    let liveView = Locked<LiveView?>(nil)

    /// Runs `body` on the current snapshot: everything it reads comes from one version of the
    /// data, whatever reloads happen meanwhile.
    public func read<T, E: Error>(_ body: (Snapshot) throws(E) -> T) throws(E) -> T {
        try body(snapshot)
    }

    /// Builds a new snapshot from the store and swaps it in. If loading fails, the old snapshot
    /// stays and the error is thrown.
    @discardableResult
    public func reload() throws(EngineError) -> Snapshot {
        try updates.withLock { _ throws(EngineError) in
            let sequence = (try? source.lastSequence()) ?? 0
            let fresh = try source.loadSnapshot(tileSets: tileSetPaths, limits: limits)
            swap(fresh)
            held.withLock { $0 = sequence }
            // Fences on layers take their features from the new snapshot.
            try? install(fresh, changed: [])
            return fresh
        }
    }

    /// Brings the snapshot up to the changes other processes made to the store (another
    /// replica's writes, an UPDATE in psql): the feed after the last change it holds, each
    /// changed feature read as the store has it now and applied as this process's own writes
    /// are, so only the changed layers are rebuilt (Writes.swift). Returns false, changing
    /// nothing, when a reload is needed instead: a layer the snapshot lacks, a layer created,
    /// or a source that cannot read features back.
    @discardableResult
    public func catchUp() throws(EngineError) -> Bool {
        try updates.withLock { _ throws(EngineError) -> Bool in
            while true {
                let since = held.withLock { $0 }
                let changes = try source.changes(since: since, limit: 10_000)
                guard let last = changes.last else { return true }
                let current = storeSnapshot
                var touched: [String: Set<Int64>] = [:]
                var layers: [String: LayerInfo] = [:]
                for change in changes {
                    guard change.kind != .created, let fid = change.fid, let layer = try? current.layer(change.layer) else { return false }
                    touched[layer.name, default: []].insert(fid)
                    layers[layer.name] = layer.info
                }
                guard let features = try source.currentFeatures(touched, of: layers) else { return false }
                let fresh = try current.applying(AppliedBatch(changes: changes, layers: layers, features: features, warnings: [], sequence: last.sequence))
                swap(fresh)
                held.withLock { $0 = last.sequence }
                liveAfterWrite(fresh, changedLayers: Set(layers.keys))
            }
        }
    }

    /// Runs `body` with the store's writer (opened now if it is not yet), holding the update
    /// lock: no other write or reload runs meanwhile.
    func updating<T>(_ body: (any StoreWriter) throws(EngineError) -> T) throws(EngineError) -> T {
        try updates.withLock { (writer: inout (any StoreWriter)?) throws(EngineError) -> T in
            if let writer { return try body(writer) }
            let opened = try source.openWriter()
            writer = opened
            return try body(opened)
        }
    }

    /// Makes `fresh` the snapshot every later read takes.
    func swap(_ fresh: Snapshot) {
        current.withLock { $0 = fresh }
    }
}
