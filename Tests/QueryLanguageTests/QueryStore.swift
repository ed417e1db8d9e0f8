import Engine
import Foundation
import TestSupport

/// The demo store, built once for all query-language tests.
enum QueryStore {
    static let path: Result<String, any Error> = Result {
        let path = try Fixtures.temporaryDirectory("query").appendingPathComponent("demo.gpkg").path
        try DemoFixtureStore.build(at: path)
        return path
    }
    static let snapshot: Result<Snapshot, any Error> = Result { try Snapshot.load(storePath: try path.get()) }
    /// The same store with an answer limit of 1,000 rows (the parking layer has 1,548).
    static let smallLimits: Result<Snapshot, any Error> = Result {
        var limits = EngineLimits()
        limits.maxRows = 1000
        return try Snapshot.load(storePath: try path.get(), limits: limits)
    }

    static func get() throws -> Snapshot { try snapshot.get() }
}
