// Vltava as a Swift library: the engine in-process, for a backend that would rather call it
// than run a second server (docs/EMBEDDING.md). The shape follows GRDB's: open an engine on a
// store, read against one snapshot in a closure, run statements with bound parameters and
// decode their rows into your own `Decodable` types, call typed operations for the common
// questions, reload when the store changes.
//
// This module re-exports the three it is made of — Engine (the engine, its snapshot, layers,
// operations and answers), QueryLanguage (statements, bound values, results) and Geometry (the
// value types: Point, BBox, Geometry) — and adds only the query and decoding calls below.

@_exported import Engine
@_exported import Geometry
@_exported import QueryLanguage
import Foundation
import PostGIS
import Support

extension Engine {
    /// Opens the store at `path` (a GeoPackage file, or a `postgresql://user@host:port/db` URL
    /// of a PostGIS store that `vltava push` filled) and loads its first snapshot.
    public convenience init(path: String, limits: EngineLimits = EngineLimits()) throws(EngineError) {
        try self.init(source: StoreLocation.source(path), limits: limits)
    }

    /// Runs one statement on the current snapshot, with `parameters` bound to `$1, $2, …`.
    /// INSERT, UPDATE and DELETE write through the engine: durable and visible to the next
    /// read when this returns.
    public func query(_ text: String, _ parameters: [any QueryArgument] = []) throws(QueryError) -> QueryResult {
        let count = try Query.prepare(text).statementCount
        guard count == 1, let only = try Query.run(text, parameters, on: self).first else {
            throw QueryError(kind: .invalid, code: "several_statements", message: "query takes one statement; the text holds \(count)", line: 1, column: 1,
                             hint: "run scripts with Query.run")
        }
        return only
    }

    /// Runs one statement and decodes each row into `T` (columns by name, as `Decodable` keys).
    public func fetch<T: Decodable>(_ type: T.Type, _ text: String, _ parameters: [any QueryArgument] = []) throws -> [T] {
        try query(text, parameters).decode(type)
    }
}

extension Snapshot {
    /// Runs one statement on this snapshot. Text with several statements is an error here: use
    /// `Query.run` for scripts.
    public func query(_ text: String, _ parameters: [any QueryArgument] = []) throws(QueryError) -> QueryResult {
        let results = try Query.run(text, parameters, on: self)
        guard results.count == 1, let only = results.first else {
            throw QueryError(kind: .invalid, code: "several_statements", message: "query takes one statement; the text holds \(results.count)", line: 1, column: 1,
                             hint: "run scripts with Query.run")
        }
        return only
    }

    /// Runs one statement and decodes each row into `T`.
    public func fetch<T: Decodable>(_ type: T.Type, _ text: String, _ parameters: [any QueryArgument] = []) throws -> [T] {
        try query(text, parameters).decode(type)
    }
}

extension QueryResult {
    /// The rows as `T`s: each row is a JSON object of its columns (numbers, text, booleans,
    /// null; JSON columns as nested values), decoded with Foundation's `JSONDecoder`. A route
    /// or an EXPLAIN decodes as one object.
    public func decode<T: Decodable>(_ type: T.Type, using decoder: JSONDecoder = JSONDecoder()) throws -> [T] {
        switch json() {
        case .object(let answer):
            if case .array(let rows)? = answer["rows"] {
                return try decoder.decode([T].self, from: Data(JSONWriter.encode(.array(rows))))
            }
            return [try decoder.decode(T.self, from: Data(JSONWriter.encode(.object(answer))))]
        default:
            return []
        }
    }
}
