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

    /// An engine over the store at `location`.
    public static func engine(_ location: String, tileSets: [String: String] = [:], limits: EngineLimits = EngineLimits()) throws(EngineError) -> Engine {
        try Engine(source: source(location), tileSets: tileSets, limits: limits)
    }

    /// One snapshot of the store at `location`.
    public static func snapshot(_ location: String, limits: EngineLimits = EngineLimits()) throws(EngineError) -> Snapshot {
        try source(location).loadSnapshot(tileSets: [:], limits: limits)
    }
}
