// How a statement joins the language without touching the shared files: it is a
// `StatementSyntax` (parsed from its keyword, planned on a snapshot) whose plan is a
// `StatementPlan` (run, and described by EXPLAIN), all in one file of its own (Search.swift is
// one). The one line it adds is its keyword's entry in `Parser.statementParsers` below.

import Engine

/// A statement's syntax tree, as its parser made it.
protocol StatementSyntax: Sendable {
    func plan(_ planner: Planner, at position: SourcePosition) throws(QueryError) -> any StatementPlan
    /// For `Statement`'s equality (the parser's tests compare trees).
    func isEqual(to other: any StatementSyntax) -> Bool
}

extension StatementSyntax where Self: Equatable {
    func isEqual(to other: any StatementSyntax) -> Bool { (other as? Self) == self }
}

/// A planned statement, bound to its snapshot.
protocol StatementPlan: Sendable {
    func run(_ runner: Runner) throws(QueryError) -> QueryResult
    /// EXPLAIN's lines.
    var explanation: [String] { get }
}

extension Parser {
    /// The statements that are a `StatementSyntax`, by their first keyword (consumed before the
    /// call, which gets its position).
    static let statementParsers: [String: @Sendable (inout Parser, SourcePosition) throws(QueryError) -> any StatementSyntax] = [
        "SEARCH": { (parser, start) throws(QueryError) in try parser.search(at: start) },
    ]
}
