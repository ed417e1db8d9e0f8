// Fences in the language (docs/QUERY_LANGUAGE.md, "Fences"): listed, added or replaced, and
// dropped, with the same definitions as PUT /v1/fences/{name} and `vltava fences`:
//
//   SHOW FENCES
//   CREATE FENCE gorillas AS '{"watch": {"layer": "visitors"}, "area": {"layer": "pens", "match": {"name": "gorily"}, "within_m": 50}}'
//   CREATE FENCE gorillas AS $1
//   DROP FENCE gorillas
//
// A definition is JSON text, a string or a bound parameter, parsed and checked by the engine
// (`FenceDefinition.parse`, `Engine.putFence`): one reader of definitions. Fences live in the
// engine (the store keeps them), not in a snapshot, so these statements run through an engine,
// as writes do; over HTTP, adding and dropping need a token for every layer.

import Engine
import Geometry
import Support

enum FenceStatement: Sendable, Equatable {
    case show
    /// `CREATE FENCE name AS definition`: adds or replaces, as PUT does.
    case put(name: Name, definition: String, at: SourcePosition)
    case drop(Name)

    /// Adding and dropping change the store; listing does not.
    var changes: Bool { if case .show = self { false } else { true } }
}

extension Parser {
    /// After CREATE: `FENCE name AS 'json' | $n`.
    mutating func createFence() throws(QueryError) -> FenceStatement {
        try expect("FENCE", "after CREATE (CREATE FENCE name AS '{…}')")
        let name = try name("the fence's name after CREATE FENCE")
        try expect("AS", "and the definition after the fence's name (CREATE FENCE name AS '{…}')")
        let position = tokens[index].position
        switch tokens[index].kind {
        case .string(let text):
            index += 1
            return .put(name: name, definition: text, at: position)
        case .parameter(let n):
            let (value, at) = try boundValue(n, "the fence's definition")
            switch value {
            case nil: return .put(name: name, definition: "{}", at: at)
            case .text(let text)?: return .put(name: name, definition: text, at: at)
            case let other?: throw wrongKind(n, other, expected: "JSON text (a fence's definition)", at: at)
            }
        default:
            throw error(expected: "the fence's definition as JSON text ('{\"watch\": …, \"area\": …}') or a parameter")
        }
    }

    /// After DROP: `FENCE name`.
    mutating func dropFence() throws(QueryError) -> FenceStatement {
        try expect("FENCE", "after DROP (DROP FENCE name)")
        return .drop(try name("the fence's name after DROP FENCE"))
    }
}

extension Query {
    /// Whether the text lists, adds or drops fences, and whether it changes them (the HTTP API
    /// runs such a text through the engine, and authorises a change before anything runs).
    public static func fenceStatements(_ text: String) throws(QueryError) -> (any: Bool, changes: Bool) {
        let fences = try Parser.parse(text, parameters: nil).statements.compactMap { statement, _ in
            if case .fence(let fence) = statement { fence } else { nil }
        }
        return (!fences.isEmpty, fences.contains(where: \.changes))
    }

    /// A fence statement's answer, through `engine`: the fences as rows (name, running, problem,
    /// definition), or the one kept or dropped.
    static func result(of fence: FenceStatement, at position: SourcePosition, on engine: Engine?) throws(QueryError) -> QueryResult {
        guard let engine else {
            throw QueryError(kind: .impossible, code: "read_only", message: "fences live in an engine; this statement runs on a snapshot",
                             line: position.line, column: position.column, length: position.length,
                             hint: "in Swift, Query.run(_:on: engine); over HTTP, POST /v1/query (a token for every layer to change them)")
        }
        let columns = ["name", "running", "problem", "definition"]
        func row(_ status: FenceStatus) -> [JSONValue] {
            [.string(status.definition.name), .bool(status.problem == nil), status.problem.map { .string($0) } ?? .null,
             .string(JSON.serialize(status.definition.json))]
        }
        do {
            switch fence {
            case .show:
                let rows = engine.fences.map(row)
                return QueryResult(body: .rows(.init(columns: columns, values: rows, geometries: rows.map { _ in nil })))
            case .put(let name, let definition, let at):
                let json: JSONValue
                do {
                    json = try JSON.parse(definition)
                } catch {
                    throw QueryError(kind: .invalid, code: "invalid_value", message: "the fence's definition is not JSON: \(error)",
                                     line: at.line, column: at.column, length: at.length, hint: "CREATE FENCE name AS '{\"watch\": {\"layer\": …}, \"area\": …}'")
                }
                let status = try engine.putFence(try FenceDefinition.parse(name: name.text, json))
                return QueryResult(body: .rows(.init(columns: columns, values: [row(status)], geometries: [nil])))
            case .drop(let name):
                guard try engine.deleteFence(name.text) else {
                    throw QueryError(kind: .notFound, code: "unknown_fence", message: "no fence named \(Quote.input(name.text))",
                                     line: name.position.line, column: name.position.column, length: name.position.length,
                                     hint: engine.fences.isEmpty ? "there are no fences" : "fences: \(engine.fences.map(\.definition.name).joined(separator: ", "))")
                }
                return QueryResult(body: .rows(.init(columns: ["name", "dropped"], values: [[.string(name.text), .bool(true)]], geometries: [nil])))
            }
        } catch {
            throw Runner.queryError(error, at: position)
        }
    }
}
