// Every limit and default of a request, in one value. The CLI, the query language, the HTTP API
// and the library all read them from here, so the same question gets the same bounds and the
// same error whichever way it arrives. docs/ARCHITECTURE.md ("Limits") lists them.
//
// Two kinds of limit live here. Per operation (rows, snap radius, route search) bound one
// answer. Per request (statements, rows in all, response bytes, seconds of work) bound what one
// request may cost however many operations it holds: the size of a body bounds its text, not
// its work (400 TILE statements in 12 KB took 21 s and answered 150 MB). A caller applies the
// per-request limits through a `RequestBudget`; the HTTP API gives every request one. How many
// requests run at once and how many connections are held are the server's business
// (`ServerConfiguration`), not the engine's.

import Dispatch
import Foundation

/// What one operation and one request may cost, and the defaults they start from. Hitting a
/// limit is an error that names it, never a silent cut.
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
    /// Points of one route through several (OSRM's route service), each leg a search.
    public var maxRoutePoints: Int = 100
    /// A distance table holds at most this squared cells (sources × destinations): OSRM's
    /// default `--max-table-size`, and its rule.
    public var maxTableSize: Int = 100
    /// Fingerprints one locate may average (its k).
    public var maxLocateK: Int = 100
    /// Beacons in one scan sent to be located.
    public var maxScanReadings: Int = 1000

    /// On a PostGIS store, a feature layer with more rows than this stays in PostgreSQL: the
    /// snapshot holds none of its rows, and each answer fetches those it needs
    /// (DatabaseLayers.swift). Lines (a network routes in memory) and point layers with a time
    /// series always load.
    public var maxRowsLoadedPerLayer: Int = 250_000

    // Per request (`RequestBudget`).

    /// Statements in one request (one /v1/query body).
    public var maxStatements: Int = 20
    /// Rows in all the answers of one request together; each answer also keeps to `maxRows`.
    public var maxRowsPerRequest: Int = 10_000
    /// Bytes of one answer's body (before gzip): writing stops as soon as it is passed, so an
    /// answer too large is refused rather than built.
    public var maxResponseBytes: Int = 16 * 1024 * 1024
    /// Seconds of work for one request, from when its work starts (a queued request's wait is
    /// not counted). Checked between statements, inside the long loops, and handed to every
    /// route search as its own time bound.
    public var maxRequestSeconds: Double = 5

    public init() {}
}

/// A moment by which a request's work must be done, on the monotonic clock.
public struct Deadline: Sendable, Equatable {
    /// `DispatchTime.uptimeNanoseconds` of the end; `UInt64.max` for none.
    public let end: UInt64
    /// The allowance it was made with, for the error message.
    public let seconds: Double

    /// No deadline: the CLI and the library unless they ask for one.
    public static let none = Deadline(end: .max, seconds: .infinity)

    init(end: UInt64, seconds: Double) {
        self.end = end
        self.seconds = seconds
    }

    /// `seconds` from now (0 or less: already passed; NaN counts as 0; +∞: no deadline).
    public static func after(seconds: Double) -> Deadline {
        if seconds == .infinity { return .none }
        let clamped = seconds.isNaN ? 0 : min(max(seconds, 0), 86_400)
        return Deadline(end: DispatchTime.now().uptimeNanoseconds &+ UInt64(clamped * 1e9), seconds: clamped)
    }

    public var hasPassed: Bool { end != .max && DispatchTime.now().uptimeNanoseconds >= end }

    /// Seconds left (0 once passed; `.infinity` without a deadline).
    public var remainingSeconds: Double {
        guard end != .max else { return .infinity }
        let now = DispatchTime.now().uptimeNanoseconds
        return now >= end ? 0 : Double(end - now) / 1e9
    }

    /// Throws `deadlineExceeded` once the deadline has passed.
    public func check() throws(EngineError) {
        if hasPassed { throw .deadlineExceeded(seconds: seconds) }
    }
}

/// What is left of one request's allowance: its deadline and the rows answered so far. Made
/// when the request's work starts, and carried through every statement it runs.
public struct RequestBudget: Sendable {
    public let limits: EngineLimits
    public let deadline: Deadline
    /// Rows answered so far, over every statement.
    public private(set) var rows = 0

    public init(limits: EngineLimits) {
        self.limits = limits
        deadline = .after(seconds: limits.maxRequestSeconds)
    }

    /// Counts an answer's rows against `maxRowsPerRequest`.
    public mutating func answered(rows count: Int) throws(EngineError) {
        rows += count
        guard rows <= limits.maxRowsPerRequest else { throw .tooManyRowsInRequest(count: rows, limit: limits.maxRowsPerRequest) }
    }

    /// Throws `responseTooLarge` once a body has grown past `maxResponseBytes`.
    public func check(responseBytes count: Int) throws(EngineError) {
        guard count <= limits.maxResponseBytes else { throw .responseTooLarge(limit: limits.maxResponseBytes) }
    }
}
