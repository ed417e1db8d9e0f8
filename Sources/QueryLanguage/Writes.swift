// INSERT, UPDATE and DELETE: the language's writes (docs/QUERY_LANGUAGE.md, "Writes").
//
//   INSERT INTO stages (name, geom) VALUES ('Main stage', POINT(14.42 50.09)), ($1, $2)
//   UPDATE stages SET name = $1 WHERE fid = $2
//   DELETE FROM stages WHERE name ~ 'test'
//
// A statement becomes one write batch (Store/Writes.swift): all of it or nothing, checked as an
// import checks a feature, numbered in the change feed. UPDATE and DELETE select their features
// with the WHERE of a FIND, on the snapshot the batch is applied over, under the engine's update
// lock (`Engine.write(building:)`), so no write in between can slip past the selection. Values
// are literals or bound parameters, never pasted text. EXPLAIN plans a write without making it.

import Engine
import Geometry
import Store
import Support

// MARK: - Syntax

enum WriteStatement: Sendable, Equatable {
    /// `INSERT INTO layer (column, …) VALUES (value, …), …`
    case insert(layer: Name, columns: [Name], rows: [[WriteValue]], position: SourcePosition)
    /// `UPDATE layer SET column = value, … WHERE condition`
    case update(layer: Name, assignments: [Assignment], filter: Expression)
    /// `DELETE FROM layer WHERE condition`
    case delete(layer: Name, filter: Expression)

    var layer: Name {
        switch self {
        case .insert(let layer, _, _, _), .update(let layer, _, _), .delete(let layer, _): layer
        }
    }
}

struct Assignment: Sendable, Equatable {
    var column: Name
    var value: WriteValue
}

/// A value written into a column: a literal (or a parameter bound to one), or a geometry.
enum WriteValue: Sendable, Equatable {
    case literal(Literal, SourcePosition)
    case geometry(Geometry, SourcePosition)

    var position: SourcePosition {
        switch self {
        case .literal(_, let position), .geometry(_, let position): position
        }
    }
}

extension Parser {
    static let writeKeywords = ["INSERT", "UPDATE", "DELETE"]

    mutating func writeStatement(_ keyword: String) throws(QueryError) -> WriteStatement {
        let start = advance().position
        switch keyword {
        case "INSERT":
            try expect("INTO", "after INSERT")
            let layer = try name("a layer name after INSERT INTO")
            try expect(symbol: "(", "before the column names (INSERT INTO layer (name, geom) VALUES (…))")
            var columns: [Name] = []
            repeat { columns.append(try name("a column name")) } while accept(symbol: ",")
            try expect(symbol: ")", "after the column names")
            try expect("VALUES", "after the column names")
            var rows: [[WriteValue]] = []
            repeat {
                let open = tokens[index].position
                try expect(symbol: "(", "before a row's values")
                var row: [WriteValue] = []
                repeat { row.append(try writeValue()) } while accept(symbol: ",")
                try expect(symbol: ")", "after a row's values")
                guard row.count == columns.count else {
                    throw invalid("this row has \(row.count) value\(row.count == 1 ? "" : "s") for \(columns.count) column\(columns.count == 1 ? "" : "s")", at: open,
                                  hint: "give one value per column named: (\(columns.map(\.text).joined(separator: ", ")))")
                }
                rows.append(row)
            } while accept(symbol: ",")
            return .insert(layer: layer, columns: columns, rows: rows, position: start)
        case "UPDATE":
            let layer = try name("a layer name after UPDATE")
            try expect("SET", "after the layer name (UPDATE layer SET column = value WHERE …)")
            var assignments: [Assignment] = []
            repeat {
                let column = try name("a column name after SET")
                try expect(symbol: "=", "after the column name")
                assignments.append(Assignment(column: column, value: try writeValue()))
            } while accept(symbol: ",")
            try expect("WHERE", "after the assignments: an UPDATE names the features it changes (WHERE fid = 3)")
            return .update(layer: layer, assignments: assignments, filter: try expression())
        default:  // DELETE
            try expect("FROM", "after DELETE")
            let layer = try name("a layer name after DELETE FROM")
            try expect("WHERE", "after the layer name: a DELETE names the features it removes (WHERE fid = 3)")
            return .delete(layer: layer, filter: try expression())
        }
    }

    /// A literal, NULL, `POINT(lon lat)`, `GEOMETRY('wkt')`, or a parameter bound to any of
    /// them (a point binds as a point; WKT text inside GEOMETRY(…)).
    mutating func writeValue() throws(QueryError) -> WriteValue {
        let start = tokens[index].position
        if case .parameter(let n) = tokens[index].kind, case .point? = parameters?[safe: n - 1] {
            let point = try self.point()
            return .geometry(.point(point.point), point.position)
        }
        if isKeyword("POINT") {
            let point = try self.point()
            return .geometry(.point(point.point), point.position)
        }
        if accept("GEOMETRY") {
            try expect(symbol: "(", "after GEOMETRY")
            let text: String, position: SourcePosition
            switch tokens[index].kind {
            case .string(let wkt): text = wkt; position = advance().position
            case .parameter(let n):
                let (value, at) = try boundValue(n, "the geometry's WKT text")
                switch value {
                case nil: text = "POINT (0 0)"
                case .text(let wkt)?: text = wkt
                case let other?: throw wrongKind(n, other, expected: "WKT text (GEOMETRY($n) takes text such as 'POLYGON((…))')", at: at)
                }
                position = at
            default: throw error(expected: "WKT text in quotes, GEOMETRY('POLYGON((14.41 50.11, …))')")
            }
            try expect(symbol: ")", "to close GEOMETRY(…)")
            do {
                return .geometry(try WKT.decode(text), position)
            } catch {
                throw invalid("not a geometry: \(error)", at: position, hint: "WKT in EPSG:4326, longitude first: 'POLYGON((14.41 50.11, 14.42 50.11, 14.42 50.12, 14.41 50.11))'")
            }
        }
        return .literal(try literal(), start)
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}

// MARK: - Plan

/// A write statement planned on a snapshot: the batch that makes it.
struct WritePlan: Sendable {
    var batch: WriteBatch
    /// What EXPLAIN shows.
    var lines: [String]
}

extension Planner {
    func planWrite(_ statement: WriteStatement, at position: SourcePosition) throws(QueryError) -> WritePlan {
        let layer = try layerInMemory(statement.layer)
        let geometryColumn = layer.info.geometryColumn
        // A column of the layer by name (as stored, else ignoring case), or its geometry.
        func column(_ name: Name) throws(QueryError) -> String? {
            if let geometryColumn, name.text.lowercased() == geometryColumn.lowercased() || name.text.lowercased() == "geom" { return nil }
            if let found = layer.info.columns.first(where: { $0.name == name.text }) ?? layer.info.columns.first(where: { $0.name.lowercased() == name.text.lowercased() }) {
                return found.name
            }
            let known = (geometryColumn.map { [$0] } ?? []) + layer.info.columns.map(\.name)
            throw Planner.error(.notFound, "unknown_field", "layer '\(layer.name)' has no column \(Quote.input(name.text))", at: name.position,
                                hint: Suggestion.closest(to: name.text, in: known).map { "did you mean '\($0)'?" } ?? "its columns: \(known.joined(separator: ", "))")
        }
        func set(_ feature: inout Feature, _ name: Name, _ value: WriteValue) throws(QueryError) {
            let target = try column(name)
            switch (target, value) {
            case (nil, .geometry(let geometry, _)): feature.geometry = geometry
            case (nil, .literal(let literal, let at)):
                if case .null = literal {
                    throw Planner.error(.invalid, "invalid_value", "the geometry cannot be NULL: a feature of '\(layer.name)' has one", at: at)
                }
                throw Planner.error(.invalid, "invalid_value", "'\(name.text)' takes a geometry", at: at, hint: "POINT(lon lat), or GEOMETRY('wkt') for any other")
            case (let column?, .literal(let literal, _)): feature.properties[column] = Planner.attribute(literal)
            case (let column?, .geometry(_, let at)):
                throw Planner.error(.invalid, "invalid_value", "'\(column)' is not the geometry column\(geometryColumn.map { " ('\($0)')" } ?? ": '\(layer.name)' has none")", at: at)
            }
        }

        var batch = WriteBatch()
        switch statement {
        case .insert(_, let columns, let rows, _):
            var seen: Set<String> = []
            for name in columns where !seen.insert(name.text.lowercased()).inserted {
                throw Planner.error(.invalid, "invalid_value", "the column \(Quote.input(name.text)) is named twice", at: name.position)
            }
            for row in rows {
                var feature = Feature(geometry: nil)
                for (name, value) in zip(columns, row) {
                    if name.text.lowercased() == "fid" {
                        guard case .literal(.number(let number), _) = value, let fid = Int64(exactly: number), fid > 0 else {
                            throw Planner.error(.invalid, "invalid_value", "fid takes a whole number above 0 (the feature's id)", at: value.position)
                        }
                        feature.id = .integer(fid)
                        continue
                    }
                    try set(&feature, name, value)
                }
                batch.insert(feature, into: layer.name)
            }
            let count = rows.count
            return WritePlan(batch: batch, lines: [
                "1. insert \(count) feature\(count == 1 ? "" : "s") into \(layer.name): one batch, one transaction, each feature checked as an import checks it"])
        case .update(_, let assignments, let filter):
            var change = Feature(geometry: nil)
            for assignment in assignments {
                guard assignment.column.text.lowercased() != "fid" else {
                    throw Planner.error(.invalid, "invalid_value", "a feature's fid does not change", at: assignment.column.position, hint: "insert a copy and delete the old one")
                }
                try set(&change, assignment.column, assignment.value)
            }
            let fids = try selectedFids(filter, of: layer, verb: "UPDATE", at: position)
            for fid in fids { batch.update(fid, in: layer.name, properties: change.properties, geometry: change.geometry) }
            let columns = assignments.map(\.column.text).joined(separator: ", ")
            return WritePlan(batch: batch, lines: [
                "1. \(layer.name): the WHERE tested on each of its \(layer.count) features (no index): \(fids.count) selected",
                "2. update \(fids.count) feature\(fids.count == 1 ? "" : "s") (\(columns)): one batch, one transaction"])
        case .delete(_, let filter):
            let fids = try selectedFids(filter, of: layer, verb: "DELETE", at: position)
            for fid in fids { batch.delete(fid, from: layer.name) }
            return WritePlan(batch: batch, lines: [
                "1. \(layer.name): the WHERE tested on each of its \(layer.count) features (no index): \(fids.count) selected",
                "2. delete \(fids.count) feature\(fids.count == 1 ? "" : "s"): one batch, one transaction"])
        }
    }

    /// The fids of the features `filter` selects, in fid order; at most `maxRows` of them.
    private func selectedFids(_ filter: Expression, of layer: Layer, verb: String, at position: SourcePosition) throws(QueryError) -> [Int64] {
        let predicate = try inMemory.compile(filter, on: layer)
        let runner = Runner(deadline: deadline)
        var fids: [Int64] = []
        for (n, i) in layer.indices.enumerated() {
            try runner.checkDeadline(n, at: position)
            if predicate(i) { fids.append(layer.fids[i]) }
        }
        guard fids.count <= limits.maxRows else {
            throw Planner.error(.limit, "too_many_rows", "the \(verb) selects \(fids.count) features, more than the \(limits.maxRows) one statement may change", at: position,
                                hint: "narrow the WHERE, or change them in several statements")
        }
        return fids.sorted()
    }

    /// A literal as the value a feature holds: a whole number as an integer (a REAL column
    /// takes it as well), any other as a real.
    static func attribute(_ literal: Literal) -> AttributeValue {
        switch literal {
        case .number(let number):
            if number == number.rounded(), abs(number) < 9_007_199_254_740_992, let integer = Int64(exactly: number) { return .integer(integer) }
            return .real(number)
        case .text(let text): return .text(text)
        case .bool(let bool): return .bool(bool)
        case .null: return .null
        }
    }
}

// MARK: - Run

extension Query {
    /// Runs every statement of `text` on `engine`: reads on its current snapshot, writes through
    /// its store's writer, each statement seeing what the ones before it wrote.
    public static func run(_ text: String, _ parameters: [any QueryArgument] = [], on engine: Engine) throws(QueryError) -> [QueryResult] {
        var results: [QueryResult] = []
        for (statement, position) in try Parser.parse(text, parameters: parameters.map(\.queryValue)).statements {
            results.append(try result(of: statement, at: position, on: engine.snapshot, writingTo: engine, deadline: .none))
        }
        return results
    }

    /// The names of the layers the text's INSERT, UPDATE and DELETE statements write (not
    /// EXPLAIN's, which write nothing), as written: the HTTP API authorises them before
    /// anything runs. Empty for a text that only reads.
    public static func writtenLayers(_ text: String) throws(QueryError) -> [String] {
        try Parser.parse(text, parameters: nil).statements.compactMap { statement, _ in
            if case .write(let write) = statement { write.layer.text } else { nil }
        }
    }

    /// One statement's answer: a write through `engine`, when there is one, else refused; any
    /// other statement planned on the engine's current snapshot (so it sees the writes before
    /// it), or on `snapshot`.
    static func result(of statement: Statement, at position: SourcePosition, on snapshot: Snapshot, writingTo engine: Engine?,
                       deadline: Deadline) throws(QueryError) -> QueryResult {
        if case .fence(let fence) = statement { return try result(of: fence, at: position, on: engine) }
        guard case .write(let write) = statement else {
            return try Planner(snapshot: engine?.snapshot ?? snapshot, deadline: deadline).plan(statement, at: position).run(deadline: deadline)
        }
        guard let engine else { throw readOnly(at: position) }
        let receipt: WriteReceipt?
        do {
            receipt = try engine.write { (snapshot: Snapshot) throws(QueryError) -> WriteBatch in
                try Planner(snapshot: snapshot, deadline: deadline).planWrite(write, at: position).batch
            }
        } catch {
            throw Runner.queryError(error, at: position)
        }
        let changes = receipt?.changes ?? []
        let values: [[JSONValue]] = changes.map { change in
            [.integer(change.sequence), .string(change.layer), change.fid.map { .integer($0) } ?? .null, .string(change.kind.rawValue)]
        }
        var result = QueryResult(body: .rows(.init(columns: ["sequence", "layer", "fid", "change"], values: values, geometries: values.map { _ in nil })))
        result.warnings = receipt?.warnings ?? []
        return result
    }

    static func readOnly(at position: SourcePosition) -> QueryError {
        QueryError(kind: .impossible, code: "read_only", message: "INSERT, UPDATE and DELETE write through an engine; this statement runs on a snapshot",
                   line: position.line, column: position.column, length: position.length,
                   hint: "in Swift, Query.run(_:on: engine) or engine.query(…); over HTTP, POST /v1/query with a write token")
    }
}
