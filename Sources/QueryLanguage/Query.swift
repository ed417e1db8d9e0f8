import Engine
import Geometry

/// One statement's answer.
public struct QueryResult: Sendable {
    public func json() -> JSONValue { .object(JSONObject([])) }
    public func geoJSON() -> JSONValue { .object(JSONObject([])) }
    public func table() -> String { "" }
}

public enum Query {
    /// Parses, plans and runs every statement of `text` on `snapshot`.
    public static func run(_ text: String, on snapshot: Snapshot, limits: QueryLimits = QueryLimits()) throws(QueryError) -> [QueryResult] {
        throw QueryError(kind: .syntax, code: "not_implemented", message: "the query language is being built", line: 1, column: 1)
    }
}
