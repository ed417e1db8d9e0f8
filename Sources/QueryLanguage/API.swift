// The public face of the query language: run statement text on a snapshot, get results that
// render as a table, JSON or GeoJSON, or a `QueryError` that points at the offending token.

import Engine
import Foundation
import Geometry
import Support

/// An error in a query or in running it, with where it applies (1-based line and column).
public struct QueryError: CategorizedError, Equatable, Sendable {
    /// What went wrong: the category every error states (`ErrorCategory`), which the HTTP API
    /// maps onto its status and the CLI onto its exit code.
    public typealias Kind = ErrorCategory

    public let kind: Kind
    /// Stable and machine-readable: `syntax_error`, `unknown_layer`, `NoRoute`, …
    public let code: String
    public let message: String
    public let line: Int
    public let column: Int
    /// How many characters the offending token spans (for the caret line).
    public let length: Int
    public let hint: String?

    public init(kind: Kind, code: String, message: String, line: Int, column: Int, length: Int = 1, hint: String? = nil) {
        self.kind = kind
        self.code = code
        self.message = message
        self.line = line
        self.column = column
        self.length = max(1, length)
        self.hint = hint
    }

    public var category: ErrorCategory { kind }

    public var description: String {
        "line \(line), column \(column): \(message)" + (hint.map { " — \($0)" } ?? "")
    }
}

extension QueryError {
    /// The error as a person reads it in a terminal: the message, the offending line of the
    /// query with a caret under the token, and the hint.
    public func rendered(in source: String, origin: String? = nil) -> String {
        var out = "error: \(message) (\(origin.map { "\($0):" } ?? "")line \(line), column \(column))"
        // Lines split on the scalar "\n", as the lexer counts them ("\r\n" is one Character
        // in Swift, so splitting Characters would miss it).
        let lines = source.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
        if line >= 1 && line <= lines.count {
            let text = String(String.UnicodeScalarView(lines[line - 1])).replacingOccurrences(of: "\r", with: "")
            let width = text.unicodeScalars.count
            let start = min(max(column - 1, 0), width)
            out += "\n  " + text
            out += "\n  " + String(repeating: " ", count: start) + String(repeating: "^", count: max(1, min(length, max(1, width - start))))
        }
        if let hint { out += "\n  hint: \(hint)" }
        return out
    }
}

extension Query {
    /// Every keyword of the language, for completion in the REPL: the statements, their clauses
    /// and the words inside them.
    public static let keywords: [String] = Set(Parser.statementKeywords).union(Parser.findClauses)
        .union(Parser.routeClauses).union(Parser.locateClauses)
        .union(["INTO", "VALUES", "SET", "GEOMETRY"])
        .union(["AND", "OR", "NOT", "IN", "IS", "NULL", "TRUE", "FALSE", "BY", "TO", "OF", "ON", "FROM", "ASC", "DESC",
                "POINT", "BBOX", "ZOOM", "LAYER", "LAYERS", "SCAN", "LATEST", "HISTORY", "MEASURES", "FRESH",
                "COUNT", "SUM", "AVG", "MIN", "MAX", "ANY", "ALL", "NULLS", "FIRST", "LAST", "WKT", "WKB", "CZECH", "REACH", "THROUGH", "BEST"])
        .sorted()
}
