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
import Live
import Support
import Synchronization

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
    /// Fixes of one trace to be map-matched.
    public var maxTracePoints: Int = 10_000
    /// The largest isochrone: 3 hours of walking, or 50 km.
    public var maxIsochroneSeconds: Double = 3 * 3600
    public var maxIsochroneMetres: Double = 50_000
    /// A distance table holds at most this squared cells (sources × destinations): OSRM's
    /// default `--max-table-size`, and its rule.
    public var maxTableSize: Int = 100
    /// Fingerprints one locate may average (its k).
    public var maxLocateK: Int = 100
    /// Beacons in one scan sent to be located.
    public var maxScanReadings: Int = 1000
    /// Scans in one track sent to be located (a walk of 50 minutes at 3 scans a second).
    public var maxTrackScans: Int = 10_000

    /// On a PostGIS store, a feature layer with more rows than this stays in PostgreSQL: the
    /// snapshot holds none of its rows, and each answer fetches those it needs
    /// (DatabaseLayers.swift). Lines (a network routes in memory) and point layers with a time
    /// series always load.
    public var maxRowsLoadedPerLayer: Int = 250_000
    /// A write rebuilds a changed layer of at most this many features whole (fresh indexes,
    /// exact extent); a larger one keeps its indexes, with the written features searched beside
    /// them (LayerChanges.swift), so a write costs what it writes.
    public var maxFeaturesRebuiltPerWrite: Int = 1_000

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
    /// Live layers, fences and events (Sources/Live): objects per layer, fences, areas,
    /// positions per batch, events kept for streams.
    public var live = LiveLimits()

    public init() {}
}

public typealias LiveLimits = Live.LiveLimits

/// What is left of one request's allowance: its deadline and the rows answered so far. Made
/// when the request's work starts, and carried through every statement it runs.
extension Deadline {
    /// Throws `deadlineExceeded` once the deadline has passed or the request was cancelled.
    public func check() throws(EngineError) {
        if hasPassed { throw .deadlineExceeded(seconds: seconds) }
    }
}

public struct RequestBudget: Sendable {
    public let limits: EngineLimits
    public let deadline: Deadline
    /// Rows answered so far, over every statement.
    public private(set) var rows = 0

    /// Starts the request's allowance now; `cancellation` ends it early (the client left).
    public init(limits: EngineLimits, cancellation: Cancellation? = nil) {
        self.limits = limits
        deadline = .after(seconds: limits.maxRequestSeconds, cancellation: cancellation)
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
