// Opening a store by its location, a GeoPackage path or a `postgresql://` URL: the one place
// that knows both stores. The program's assembly (the CLI, and a library user through
// `Engine(path:)`) calls it; the Engine and the Server see only a `SnapshotSource`.

import Engine
import PostGIS

public enum StoreLocation {
    /// The snapshot source for `location`.
    public static func source(_ location: String) throws(EngineError) -> any SnapshotSource {
        PostGISURL.isDatabase(location) ? PostGISSource(database: try PostGISDatabase(location)) : GeoPackageSource(path: location)
    }

    /// A PostGIS store whose answers read from the hot standbys at `readLocation` while they
    /// are within `maxReplicaLag` seconds of the primary at `location` (PostGIS/PostGISStandbys.swift).
    public static func source(_ location: String, readingFrom readLocation: String, maxReplicaLag: Double) throws(EngineError) -> any SnapshotSource {
        guard PostGISURL.isDatabase(location), PostGISURL.isDatabase(readLocation) else {
            throw .store("reads from standbys need a PostgreSQL store and standby URL (postgresql://…), not \(PostGISURL.redacted(readLocation))")
        }
        return PostGISSource(database: try PostGISDatabase(location, read: readLocation, maxReplicaLag: maxReplicaLag))
    }

    /// An engine over the store at `location`.
    public static func engine(_ location: String, tileSets: [String: String] = [:], limits: EngineLimits = EngineLimits()) throws(EngineError) -> Engine {
        try Engine(source: source(location), tileSets: tileSets, limits: limits)
    }

    /// One snapshot of the store at `location`.
    public static func snapshot(_ location: String, limits: EngineLimits = EngineLimits()) throws(EngineError) -> Snapshot {
        try source(location).loadSnapshot(tileSets: [:], limits: limits)
    }
}
