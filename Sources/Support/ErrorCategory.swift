// The one classification of errors. Each error type that can reach a client says which kind
// of failure each of its cases is; the HTTP API's status (`APIError.status(for:)` in Server),
// the query language's `QueryError.kind` and the CLI's exit code (`ExitStatus` in VltavaCLI)
// each derive from the category in one table, so one failure never answers two ways.
// It lives in Support, the module every other one imports.

/// What kind of failure an error is, whoever reports it.
public enum ErrorCategory: String, Sendable, CaseIterable {
    /// The text is not a valid statement or request (HTTP 400).
    case syntax
    /// A value out of range or of the wrong kind, e.g. a latitude of 114 (400).
    case invalid
    /// A layer, tile set, feature, venue or file that does not exist (404).
    case notFound
    /// Well-formed but impossible, e.g. no route between the points (422).
    case impossible
    /// A limit on result size or work was hit (422).
    case limit
    /// Something the answer needs cannot be reached now (a database, a tile set's file); the
    /// same request may work later (503).
    case unavailable
    /// The store or a file it names is broken, or the program is (500).
    case `internal`
}

/// An error that states its category and a stable, machine-readable code (`unknown_layer`,
/// `NoRoute`, …) for JSON answers.
public protocol CategorizedError: Error, CustomStringConvertible {
    var category: ErrorCategory { get }
    var code: String { get }
}
