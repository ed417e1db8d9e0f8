import Engine
import Geometry
import QueryLanguage
import Foundation
import Support
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

    /// The rows of a statement's first answer, as JSON objects; an answer without rows throws.
    static func rows(_ query: String, _ snapshot: Snapshot) throws -> [JSONObject] {
        guard let result = try Query.run(query, on: snapshot).first, case .object(let answer) = result.json(),
              case .array(let rows)? = answer["rows"] else { throw NoRows(query: query) }
        return rows.compactMap { if case .object(let row) = $0 { row } else { nil } }
    }

    struct NoRows: Error, CustomStringConvertible {
        let query: String
        var description: String { "no rows answered for \(query)" }
    }
}
