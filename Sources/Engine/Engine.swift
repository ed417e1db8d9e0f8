// The engine as its users hold it: opened on a store, it keeps the current snapshot and swaps in
// a new one on reload. Readers take the snapshot once and keep it for the whole of their work,
// so a reload never mixes two versions of the data in one answer.

import Geometry

public final class Engine: Sendable {
    private let current: Locked<Snapshot>
    /// The GeoPackage the snapshots are loaded from.
    public let storePath: String
    /// Extra MBTiles files by name, besides those registered in the store.
    public let tileSetPaths: [String: String]
    public let limits: EngineLimits

    /// Opens the store at `storePath` and loads its first snapshot.
    public init(storePath: String, tileSets: [String: String] = [:], limits: EngineLimits = EngineLimits()) throws(EngineError) {
        self.storePath = storePath
        tileSetPaths = tileSets
        self.limits = limits
        current = Locked(try Snapshot.load(storePath: storePath, tileSets: tileSets, limits: limits))
    }

    /// The current snapshot. Keep the reference for the whole of one answer.
    public var snapshot: Snapshot { current.withLock { $0 } }

    /// Runs `body` on the current snapshot: everything it reads comes from one version of the
    /// data, whatever reloads happen meanwhile.
    public func read<T, E: Error>(_ body: (Snapshot) throws(E) -> T) throws(E) -> T {
        try body(snapshot)
    }

    /// Builds a new snapshot from the store and swaps it in. If loading fails, the old snapshot
    /// stays and the error is thrown.
    @discardableResult
    public func reload() throws(EngineError) -> Snapshot {
        let fresh = try Snapshot.load(storePath: storePath, tileSets: tileSetPaths, limits: limits)
        current.withLock { $0 = fresh }
        return fresh
    }
}
