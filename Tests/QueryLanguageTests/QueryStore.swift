import Engine
import Foundation
import TestSupport

/// The demo store, built once for all query-language tests.
enum QueryStore {
    static let snapshot: Result<Snapshot, any Error> = Result {
        let path = try Fixtures.temporaryDirectory("query").appendingPathComponent("demo.gpkg").path
        try DemoFixtureStore.build(at: path)
        return try Snapshot.load(storePath: path)
    }

    static func get() throws -> Snapshot { try snapshot.get() }
}
