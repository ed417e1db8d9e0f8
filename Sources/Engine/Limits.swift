// Every limit and default of a request, in one value. The CLI, the query language, the HTTP API
// and the library all read them from here, so the same question gets the same bounds and the
// same error whichever way it arrives. docs/ARCHITECTURE.md ("Limits") lists them.

/// What one operation may cost, and the defaults it starts from. Hitting a limit is an error
/// that names it, never a silent cut.
public struct EngineLimits: Sendable, Equatable {
    /// Rows in one answer: k of NEAREST, the features of WITHIN and INTERSECTING, FIND's rows,
    /// a tile's features, the features a route target or AVOID selects.
    public var maxRows: Int = 10_000
    /// How far a route's ends may lie from the network when the request says nothing.
    public var defaultSnapMetres: Double = 500
    /// The largest snap radius a request may ask for.
    public var maxSnapMetres: Double = 5_000
    /// Nodes one route search may settle before it gives up (`TooMuchWork`).
    public var maxSettledNodes: Int = 5_000_000
    /// Seconds one route search may run before it gives up (`TooMuchWork`).
    public var maxRouteSeconds: Double = 5
    /// Walking speeds a request may set, in km/h.
    public var speedsKmh: ClosedRange<Double> = 0.5...30

    public init() {}
}
