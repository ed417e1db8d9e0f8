// SEARCH: places by name as people type them (docs/QUERY_LANGUAGE.md, "SEARCH"). The statement's
// syntax, parsing, planning and running in one place; the matching and ranking are the
// Engine's (`Snapshot.search`).

import Engine
import Geometry
import Support

/// `SEARCH 'text' | $n [IN layer, …] [NEAR POINT(lon lat) | NEAR $n] [LIMIT n]` (the clauses in
/// any order, each once)
struct SearchStatement: StatementSyntax, Equatable {
    var text: String
    var layers: [Name]?
    var near: PointLiteral?
    var limit: Int?
    var position: SourcePosition

    func plan(_ planner: Planner, at position: SourcePosition) throws(QueryError) -> any StatementPlan {
        var options = SearchOptions(layers: try layers?.map { name throws(QueryError) in try planner.layer(name).name }, near: near?.point)
        if let limit { options.limit = limit }
        return SearchPlan(snapshot: planner.snapshot, text: text, options: options, position: position)
    }
}

extension Parser {
    mutating func search(at start: SourcePosition) throws(QueryError) -> SearchStatement {
        let text = try self.text("the text to search for", kind: "text (what the user typed)",
                                 missing: "the text to search for, a string or a parameter, after SEARCH",
                                 hint: "SEARCH 'gori' IN pens, pavilions NEAR POINT(14.4085 50.1170)") ?? "?"
        var statement = SearchStatement(text: text, position: start)
        try clauses(["IN", "NEAR", "LIMIT"], of: "SEARCH") { (parser, keyword) throws(QueryError) in
            switch keyword {
            case "IN":
                var layers = [try parser.name("a layer after IN")]
                while parser.accept(symbol: ",") { layers.append(try parser.name("a layer after ','")) }
                statement.layers = layers
            case "NEAR": statement.near = try parser.point()
            default: statement.limit = try parser.integer("the number of results after LIMIT", in: 1...Parser.unbounded).0
            }
        }
        return statement
    }
}

struct SearchPlan: StatementPlan {
    var snapshot: Snapshot
    var text: String
    var options: SearchOptions
    var position: SourcePosition

    var explanation: [String] {
        let layers = options.layers ?? snapshot.layers.filter { !$0.readsStore && !$0.nameColumns.isEmpty }.map(\.name)
        return ["1. " + layers.joined(separator: ", ") + ": each layer's name index (built on its first search), every typed word looked up "
                    + "whole, by its beginning, by its Czech stem and within 1 typo (4–7 letters) or 2 (8 or more)",
                "2. features meeting every word, ranked by typos, " + (options.near == nil ? "" : "then distance, ")
                    + "then how closely the words met; the first \(options.limit)"]
    }

    func run(_ runner: Runner) throws(QueryError) -> QueryResult {
        let hits: [SearchHit]
        do {
            hits = try snapshot.search(text, options: options, deadline: runner.deadline)
        } catch {
            throw Runner.engineError(error, at: position)
        }
        let columns = ["layer", "fid", "name", "matched", "distance_m", "linked"]
        let values: [[JSONValue]] = hits.map { hit in
            let matched = hit.matches.map { match in
                JSONValue.object(JSONObject([("typed", .string(match.typed)), ("word", .string(match.word)), ("how", .string(match.kind.rawValue)),
                                             ("edits", .integer(Int64(match.edits)))]))
            }
            let linked = hit.linked.map { link in
                JSONValue.object(JSONObject([("layer", .string(link.layer.name)), ("fid", .integer(link.layer.fids[link.index])),
                                             ("distance_m", link.metres.map(JSONValue.double) ?? .null)]))
            }
            return [.string(hit.layer.name), .integer(hit.layer.fids[hit.index]), .string(hit.name), .array(matched),
                    hit.metres.map(JSONValue.double) ?? .null, .array(linked)]
        }
        return QueryResult(body: .rows(.init(columns: columns, values: values, geometries: hits.map { $0.layer.geometries[$0.index] })))
    }
}
