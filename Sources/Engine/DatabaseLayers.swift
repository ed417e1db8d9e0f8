// Feature layers of a PostGIS store too large to hold: a layer with more rows than
// `EngineLimits.maxRowsLoadedPerLayer` stays in PostgreSQL, and its snapshot layer holds none of
// them (`Layer.storage` is `.database`). An answer on it first fetches, in one statement (NEAREST: again
// with more candidates until the answer is certain), the rows it may consist of, picked by
// PostGIS through the layer's GiST indexes, and gets them as a layer of their own. The engine's
// own operation then runs on that layer as on any other. The fetch is a superset of the answer
// by the same rules as the query language's pushdown (QueryLanguage/Pushdown.swift):
//
// - CONTAINING: `ST_Covers` counts the boundary in, a superset of the engine's half-open rule.
// - NEAREST k: a KNN `ORDER BY geom::geography <-> point` fetches c candidates. Every row not
//   fetched is at least `last` sphere metres away (the last candidate's), and the engine's metre
//   differs from PostGIS's by at most `slack(last)`; so once `last - slack(last)` is beyond the
//   engine's k-th distance among the candidates, no row left behind can enter the top k.
//   Otherwise the fetch repeats with 4× the candidates.
// - WITHIN d: `ST_DWithin` on the sphere with d + slack(d).
// - INTERSECTING: `geom && envelope` (PostGIS compares float4-rounded boxes, slightly larger).
//
// A condition (the query language's WHERE, compiled to SQL) applies in the same statement, before
// any limit. A fetch never holds more than `limits.maxRows` rows: past that it is
// `too_many_rows`, as the same answer on a loaded layer would be, so a process never holds more
// of such a layer than one answer's worth.

import Geometry
import Store
import Support

/// What an answer asks of a layer kept in the database: which of its rows to fetch.
public enum DatabaseSelection: Sendable, Equatable {
    /// The features that may contain the point.
    case containing(Point)
    /// The feature with this fid.
    case feature(fid: Int64)
    /// Enough of the features nearest to the point that the k nearest (within `within` metres,
    /// when given) are among them.
    case nearest(k: Int, to: Point, within: Double?)
    /// The features within `metres` of the point.
    case within(metres: Double, of: Point)
    /// The features whose bounding box may meet `box`.
    case intersecting(BBox)
    /// Every feature meeting the condition, in `order` (fid order when empty; the fid breaks
    /// ties), after the first `offset` and at most `limit` of them, where the store can order
    /// and count as the engine does.
    case all(order: [StoreOrder] = [], limit: Int?, offset: Int = 0)

    /// Metres by which the engine's distance and PostGIS's sphere distance may differ at
    /// `metres`: points are both haversine on nearly the same radius (6,371,008.8 m against
    /// PostGIS's 6,371,008.7714 m: 5e-9 relative); lines and polygons are measured by the engine
    /// to the nearest point of each segment on a local projection, within 0.5 %.
    public static func slack(_ metres: Double, points: Bool) -> Double {
        points ? metres * 1e-6 + 0.01 : metres * 0.005 + 0.5
    }
}

/// A WHERE a database store checks itself, in the store's terms: the query language's WHERE or
/// property filters on a layer's own columns (QueryLanguage/Pushdown.swift lowers them). Values
/// that are missing compare false, as in the engine, so `not` of a comparison with a missing
/// value holds; text compares by code point, as Swift strings do.
public indirect enum StoreCondition: Sendable {
    case constant(Bool)
    case and([StoreCondition])
    case or([StoreCondition])
    case not(StoreCondition)
    /// The feature's fid against a number.
    case fid(StoreComparison, Double)
    /// A numeric column against a number.
    case number(column: String, StoreComparison, Double)
    /// A text column (or a date-time or blob one) against text.
    case text(column: String, StoreComparison, String)
    /// A boolean column against true or false.
    case boolean(column: String, StoreComparison, Bool)
    case isNull(column: String, negated: Bool)
    /// The feature's station measures `column` of the layer's series (TimeSeries.swift, rule 2).
    case measures(TimeSeries, column: String)
    /// The feature's station's last observation ends within `hours` of the newest one of the
    /// whole series (`TimeSeries.isStale`).
    case fresh(TimeSeries, hours: Double)
    /// A text column LIKE a pattern (`%`, `_`, `\` escapes; Unicode scalars, case counts).
    case like(column: String, pattern: String, negated: Bool)
    /// A text column's instant (ISO 8601, UTC, as `UTCTime.parse` reads it) against an instant.
    case instant(column: String, StoreComparison, UTCTime)
    /// The feature's geometry in `relation` to a constant one (lon/lat, planar).
    case spatial(SpatialRelation, Geometry)
    /// The feature's geometry, transformed into EPSG:`srid` (x, y as PostGIS orders them),
    /// meets `box` given in that CRS: OGC API – Features' `bbox-crs`, exactly.
    case projectedBox(srid: Int32, BBox)
}

public enum StoreComparison: Sendable {
    case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual
}

/// One key of a fetch's order; the fid breaks ties after the last.
public struct StoreOrder: Sendable, Equatable {
    /// A numeric column, or nil for the fid.
    public var column: String?
    public var descending: Bool
    public var nullsFirst: Bool

    public init(column: String?, descending: Bool, nullsFirst: Bool) {
        self.column = column
        self.descending = descending
        self.nullsFirst = nullsFirst
    }
}

extension Snapshot {
    /// The layer an operation on `layer` runs on: `layer` itself when its rows are in memory;
    /// for a layer kept in the database, the rows `selection` may answer with (meeting
    /// `condition` too), fetched now, as a layer of their own. The engine's operation on that
    /// layer gives the answer the whole layer would.
    public func rows(of layer: Layer, for selection: DatabaseSelection, where condition: StoreCondition? = nil,
                     deadline: Deadline = .none) throws(EngineError) -> Layer {
        guard layer.storage == .database else { return layer }
        guard let database else { throw .store("'\(layer.name)' is kept in a database this snapshot does not have") }
        let points = layer.family == .points
        func fetch(_ candidates: Int?) -> LayerFetch {
            LayerFetch(layer: layer.info, points: points, selection: selection, condition: condition, limit: candidates)
        }
        switch selection {
        case .nearest(let k, let point, let within):
            try Check.position(point)
            try Check.k(k, limits: limits)
            if let within { try Check.distance(within, parameter: "within") }
            var candidates = k * 4 + 16
            while true {
                let rows = try database.features(fetch(candidates), deadline: deadline)
                let fetched = try fetchedLayer(layer, rows.features)
                let ranked = try search(fetched, point, k: k, within: within ?? .infinity, filter: nil, stats: nil)
                let last = rows.lastMetres ?? 0
                let kth = ranked.count >= k ? ranked[k - 1].metres ?? .infinity : .infinity
                if rows.features.count < candidates || last - DatabaseSelection.slack(last, points: points) > kth { return fetched }
                // Never more than a bounded fetch per answer, nor a guess: past the bound, an error.
                guard candidates * 4 <= 16 * limits.maxRows + 64 else {
                    throw .invalidArgument(parameter: "k", message: "the \(k) nearest of '\(layer.name)' are not certain within "
                                           + "\(candidates) rows fetched from PostgreSQL; ask for fewer")
                }
                candidates *= 4
                try deadline.check()
            }
        case .containing(let point), .within(_, let point):
            try Check.position(point)
        case .intersecting(let box):
            try Check.position(Point(lon: box.minLon, lat: box.minLat), parameter: "bbox")
            try Check.position(Point(lon: box.maxLon, lat: box.maxLat), parameter: "bbox")
        case .all, .feature:
            break
        }
        if case .within(let metres, _) = selection { try Check.distance(metres, parameter: "within") }
        let rows = try database.features(fetch(limits.maxRows + 1), deadline: deadline).features
        if rows.count > limits.maxRows {
            // How many there are, for the error: the same selection, counted.
            throw .tooManyRows(count: max(try database.count(fetch(nil), deadline: deadline), rows.count), limit: limits.maxRows)
        }
        return try fetchedLayer(layer, rows)
    }

    /// Fetched rows as a layer of their own, in fid order: the order the whole layer loads in,
    /// so that ties (equal distances) fall as they would there.
    private func fetchedLayer(_ layer: Layer, _ features: [StoredFeature]) throws(EngineError) -> Layer {
        try Layer(info: layer.info, features: features.sorted { $0.fid < $1.fid }, family: layer.family)
    }

    /// Refuses an operation on a layer kept in the database, whose rows this snapshot does not
    /// hold: the caller fetches the rows first (`rows(of:for:)`).
    func requireRows(_ layer: Layer, _ operation: String) throws(EngineError) {
        guard layer.storage == .database else { return }
        throw .notSupportedOnPostGIS("\(operation) on '\(layer.name)', which stays in PostgreSQL (\(layer.rowCount) rows, more than the "
                                     + "\(limits.maxRowsLoadedPerLayer) a snapshot loads): ask FIND \(layer.name) … with CONTAINING, NEAREST, WITHIN or INTERSECTING")
    }
}
