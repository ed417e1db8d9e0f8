// FIND on a PostGIS store: the selection (spatial clause, WHERE, and where it is safe ORDER BY
// and LIMIT) pushed down to the database, in the store's terms (`DatabaseSelection`,
// `StoreCondition`, Engine/Database.swift), which the PostGIS module writes as SQL with every
// value a bound parameter (PostGIS/PostGISFetch.swift). The rows it selects come back as fids,
// and the answer's values are read from the snapshot by fid, through the same accessors and the
// same output path as on a GeoPackage. So the two stores answer alike by construction wherever
// the selection agrees, and the selection is made to agree:
//
// - CONTAINING: `ST_Covers(geom, point)` picks the candidates (it counts the boundary in, a
//   superset of the engine's half-open rule, under which a point on an edge two polygons share
//   lies in exactly one of them). The engine's rule (`Geometry.contains(lon:lat:)`) decides each
//   candidate, as a GiST recheck would.
// - NEAREST k: the database's KNN order (sphere metres, GiST-assisted) fetches candidates, the
//   engine's great-circle metres re-rank them. The WHERE applies before the candidate limit.
//   Exactness: every feature not fetched is at least as far, by the database's metric, as the
//   last one fetched (`last`); the engine's metre differs from it by at most `slack(last)`; so
//   when `last - slack(last)` is beyond the k-th engine distance among those fetched, none left
//   behind can enter the top k. Otherwise the fetch repeats with 4× the candidates.
// - WITHIN d: the sphere's d + slack, then the engine's metres keep those within d, nearest
//   first: distances are the engine's own.
// - INTERSECTING: bounding boxes (PostGIS compares float4-rounded boxes, slightly larger), then
//   the engine's box test.
// - WHERE: comparisons, IN, IS NULL, AND/OR/NOT on a layer's columns and fid; MEASURES and FRESH
//   on the layer's time series.
// A term of the WHERE the store cannot check (`~`, `~ CZECH`, conditions on LATEST or another
// layer's feature) is relaxed: the store selects a superset, and the engine's own predicate
// decides on the rows it returns (`relaxed`). Anything else (LINKED TO, NEAREST/WITHIN … TO
// (layer …)) is refused with `not_supported_on_postgis`, naming it: never a different answer.
//
// A layer kept in the database (too large to load, Engine/DatabaseLayers.swift) has no rows to
// read by fid: the same selection fetches the rows themselves, and the runner plans the FIND
// again over them (`Runner.find`).

import Engine
import Geometry
import Store
import Support

/// One layer's selection, pushed down to the database store.
struct PushedSelection: Sendable {
    var selection: DatabaseSelection
    var condition: StoreCondition?
    /// A layer kept in the database: the rows to fetch (`Snapshot.rows(of:for:)`), not fids.
    var fetchesRows: Bool
    /// The store checks only part of the WHERE (`Pushdown.relax`): it selects a superset, and
    /// the engine's own predicate decides on the rows it returns.
    var relaxed: Bool

    /// The fetch, with `candidates` as its limit (NEAREST's, raised when a fetch was not enough).
    func fetch(_ layer: Layer, candidates: Int? = nil) -> LayerFetch {
        LayerFetch(layer: layer.info, points: layer.family == .points, selection: selection, condition: condition, limit: candidates)
    }
}

struct Pushdown {
    let snapshot: Snapshot
    let layer: Layer
    /// Whether a term of the WHERE had no form the store checks (`~`, `~ CZECH`, a condition on
    /// LATEST or on another layer's feature, …): it became `true` (`false` under an odd number
    /// of NOTs), so the store keeps every row the whole WHERE could keep, and the engine's
    /// compiled predicate runs on what it returns. No ORDER BY or LIMIT is pushed then.
    var relaxed = false

    static func refuse(_ what: String, at position: SourcePosition) -> QueryError {
        Runner.engineError(.notSupportedOnPostGIS(what), at: position)
    }

    /// The selection of one layer of `find`, or the error naming what cannot be pushed down.
    static func compile(_ find: Find, layer: Layer, layerCount: Int, snapshot: Snapshot) throws(QueryError) -> PushedSelection {
        let at = find.layers[0].position
        if let linked = find.linked { throw refuse("LINKED TO", at: linked.layer.position) }
        do { try layer.requireFeatures(for: "FIND") } catch { throw Runner.engineError(error, at: at) }
        var pushdown = Pushdown(snapshot: snapshot, layer: layer)
        let condition = try find.filter.map { filter throws(QueryError) in try pushdown.condition(filter, at: at) }
        let relaxed = pushdown.relaxed
        let kept = layer.fetchesRows
        let selection: DatabaseSelection
        switch find.spatial {
        case .containing(let p)?: selection = .containing(p.point)
        case .nearest(let k, let p, let within)?:
            // The k nearest of a kept layer that pass a check the store cannot make might lie
            // beyond any fetch (on a loaded layer the candidates are fetched again, 4× as many).
            if kept && relaxed { throw refuse("NEAREST on '\(layer.name)', which stays in PostgreSQL, with a condition PostgreSQL cannot check (`~`, LATEST, another layer's field)", at: at) }
            selection = .nearest(k: k, to: p.point, within: within)
        case .within(let metres, let p)?:
            // On a kept layer WITHIN d with a LIMIT is its nearest LIMIT within d, as the engine runs it.
            selection = (kept ? find.limit : nil).flatMap { relaxed ? nil : .nearest(k: $0, to: p.point, within: metres) } ?? .within(metres: metres, of: p.point)
        case .intersecting(let minLon, let minLat, let maxLon, let maxLat, _)?:
            selection = .intersecting(BBox(minLon: minLon, minLat: minLat, maxLon: maxLon, maxLat: maxLat))
        case .nearestFeatures(_, let selection, _)?: throw refuse("NEAREST k TO (layer …)", at: selection.layer.position)
        case .withinFeatures(_, let selection)?: throw refuse("WITHIN d OF (layer …)", at: selection.layer.position)
        case .withinReach(_, _, let position)?: throw refuse("WITHIN REACH", at: position)
        case .atZoom?: throw refuse("AT … ZOOM", at: at)
        case nil:
            // No spatial clause, one layer, ORDER BY numeric columns: ORDER BY and LIMIT run in
            // the database too (fid breaks ties). Text keys sort ignoring case and diacritics in
            // the engine, which no PostgreSQL collation here matches: those sort after the fetch.
            if layerCount == 1, !relaxed, find.groupBy.isEmpty, find.having == nil, let keys = pushdown.numericOrder(find.order) {
                selection = .all(order: keys, limit: find.limit)
            } else {
                selection = .all(limit: nil)
            }
        }
        return PushedSelection(selection: selection, condition: condition, fetchesRows: kept, relaxed: relaxed)
    }

    /// `ORDER BY` keys that are all numeric columns or fid; nil when any is not.
    func numericOrder(_ keys: [OrderKey]) -> [StoreOrder]? {
        var order: [StoreOrder] = []
        for key in keys {
            guard case .attribute(let name) = key.field else { return nil }
            let column: String?
            if name.text == "fid" {
                column = nil
            } else if let info = layer.info.columns.first(where: { $0.name == name.text }), !info.isJSON,
                      info.type == .integer || info.type == .real {
                column = name.text
            } else {
                return nil
            }
            order.append(StoreOrder(column: column, descending: key.descending, nullsFirst: key.nullsFirst))
        }
        return order
    }

    // MARK: WHERE

    /// A term the store cannot check, as its superset: `true` where the term counts for a row
    /// (`positive`), `false` under an odd number of NOTs.
    mutating func relax(_ positive: Bool) -> StoreCondition {
        relaxed = true
        return .constant(positive)
    }

    /// `positive`: whether the expression sits under an even number of NOTs.
    mutating func condition(_ expression: Expression, at position: SourcePosition, positive: Bool = true) throws(QueryError) -> StoreCondition {
        switch expression {
        case .and(let terms):
            var parts: [StoreCondition] = []
            for term in terms { parts.append(try condition(term, at: position, positive: positive)) }
            return .and(parts)
        case .or(let terms):
            var parts: [StoreCondition] = []
            for term in terms { parts.append(try condition(term, at: position, positive: positive)) }
            return .or(parts)
        case .not(let inner):
            return .not(try condition(inner, at: position, positive: !positive))
        case .compare(let field, let comparison, let literal, let where_):
            return try compare(field, comparison, literal, at: where_, positive: positive)
        case .isIn(let field, let literals, let negated):
            var parts: [StoreCondition] = []
            for literal in literals { parts.append(try compare(field, .equal, literal, at: field.position, positive: negated ? !positive : positive)) }
            return negated ? .not(.or(parts)) : .or(parts)
        case .isNull(let field, let negated):
            guard case .attribute(let name) = field else { return relax(positive) }
            switch name.text {
            case "fid", "layer": return .constant(negated)
            default:
                guard layer.info.columns.contains(where: { $0.name == name.text }) else { return .constant(!negated) }
                return .isNull(column: name.text, negated: negated)
            }
        case .matches, .matchesCzech:
            return relax(positive)
        case .like(let field, let pattern, let negated):
            guard case .attribute(let name) = field, let column = layer.info.columns.first(where: { $0.name == name.text }) else { return relax(positive) }
            guard column.type == .text || column.type == .dateTime || column.isJSON else { return .constant(false) }
            return .like(column: name.text, pattern: pattern, negated: negated)
        case .instant(let field, let comparison, let time):
            guard case .attribute(let name) = field, let column = layer.info.columns.first(where: { $0.name == name.text }) else { return relax(positive) }
            guard column.type == .text || column.type == .dateTime else { return .constant(false) }
            return .instant(column: name.text, Pushdown.storeComparison(comparison), time)
        case .spatial(_, let relation, let shape):
            return .spatial(relation, shape)
        case .measures(let column):
            let series = try timeSeries(column.position)
            guard series.columns.contains(column.text) else {
                throw Pushdown.refuse("MEASURES of \(Quote.input(column.text))", at: column.position)
            }
            return .measures(series, column: column.text)
        case .fresh(let hours, let where_):
            return .fresh(try timeSeries(where_), hours: hours)
        }
    }

    static func storeComparison(_ comparison: Comparison) -> StoreComparison {
        switch comparison {
        case .equal: .equal
        case .notEqual: .notEqual
        case .less: .less
        case .lessOrEqual: .lessOrEqual
        case .greater: .greater
        case .greaterOrEqual: .greaterOrEqual
        }
    }

    /// The layer's time series, which the store reads by the layer's text key.
    func timeSeries(_ position: SourcePosition) throws(QueryError) -> TimeSeries {
        guard let series = snapshot.timeSeriesByLayer[layer.name] else {
            throw Planner.error(.invalid, "no_time_series", "'\(layer.name)' has no time series", at: position)
        }
        let key = series.link.layerKeyColumn
        guard let column = layer.info.columns.first(where: { $0.name == key }), column.type == .text || column.isJSON else {
            throw Pushdown.refuse("a time series keyed by a non-text column", at: position)
        }
        return series
    }

    mutating func compare(_ field: FieldExpression, _ comparison: Comparison, _ literal: Literal, at position: SourcePosition,
                          positive: Bool) throws(QueryError) -> StoreCondition {
        guard case .attribute(let name) = field else { return relax(positive) }
        let op = Pushdown.storeComparison(comparison)
        if name.text == "fid" {
            guard case .number(let n) = literal else { return relax(positive) }
            return .fid(op, n)
        }
        if name.text == "layer" { return relax(positive) }
        guard let column = layer.info.columns.first(where: { $0.name == name.text }) else {
            return .constant(false)  // not a column of this layer: missing, and missing compares false
        }
        switch (literal, column.isJSON ? ColumnType.text : column.type) {
        case (.null, _):
            return .constant(false)
        case (.number(let n), .integer), (.number(let n), .real):
            return .number(column: name.text, op, n)
        case (.text(let text), .text), (.text(let text), .dateTime), (.text(let text), .blob):
            return .text(column: name.text, op, text)
        case (.bool(let b), .boolean):
            return .boolean(column: name.text, op, b)
        case (.text, .integer), (.text, .real), (.number, .text), (.number, .dateTime), (.number, .blob), (.text, .boolean), (.number, .boolean):
            return .constant(false)  // the engine compares values of different kinds as false
        default:
            return relax(positive)
        }
    }
}

extension Runner {
    /// The hits of one layer, selected in the database by `pushed`.
    func pushedHits(_ plan: FindPlan, source s: Int, _ pushed: PushedSelection, database: any DatabaseStore) throws(EngineError) -> [Hit] {
        let layer = plan.sources[s].layer
        let snapshot = plan.snapshot
        /// The fids the store selects, as the layer's indices, each with the store's metres.
        func indices(candidates: Int? = nil) throws(EngineError) -> [(index: Int, storeMetres: Double?)] {
            try database.fids(pushed.fetch(layer, candidates: candidates), deadline: deadline).compactMap { row in
                layer.index(ofFID: row.fid).map { ($0, row.metres) }
            }
        }
        func metres(_ point: Point, _ index: Int) -> Double {
            guard let geometry = layer.geometries[index] else { return .infinity }
            if case .point(let q) = geometry {
                // The k-d tree's own metric: chord length on the unit sphere, as metres.
                let a = Geodesy.unitVector(lon: point.lon, lat: point.lat), b = Geodesy.unitVector(lon: q.lon, lat: q.lat)
                let (dx, dy, dz) = (a.x - b.x, a.y - b.y, a.z - b.z)
                return Geodesy.metres(fromChord: (dx * dx + dy * dy + dz * dz).squareRoot())
            }
            return Geodesy.distance(from: point, to: geometry)
        }
        let points = layer.family == .points
        // Where the store checked only part of the WHERE, the engine's predicate decides.
        let filter = pushed.relaxed ? plan.sources[s].filter : nil
        func keep(_ index: Int) -> Bool { filter?(index) ?? true }
        switch plan.spatial {
        case .containing(let p)?:
            try Check.position(p.point)
            let found = try indices().map(\.index).filter { keep($0) && layer.geometries[$0]?.contains(lon: p.lon, lat: p.lat) ?? false }
                .sorted { (layer.areas[$0], $0) < (layer.areas[$1], $1) }
            return found.map { Hit(source: s, index: $0, metres: nil) }
        case .nearest(let k, let p, let within)?:
            try Check.position(p.point)
            try Check.k(k, limits: snapshot.limits)
            if let within { try Check.distance(within, parameter: "within") }
            var candidates = k * 4 + 16
            while true {
                let rows = try indices(candidates: candidates)
                var ranked = rows.filter { keep($0.index) }.map { (index: $0.index, metres: metres(p.point, $0.index)) }
                    .filter { within == nil || $0.metres <= within ?? 0 }
                ranked.sort { ($0.metres, $0.index) < ($1.metres, $1.index) }
                let exhausted = rows.count < candidates
                let last = rows.last?.storeMetres ?? 0
                let kth = ranked.count >= k ? ranked[k - 1].metres : .infinity
                if exhausted || last - DatabaseSelection.slack(last, points: points) > kth {
                    return ranked.prefix(k).map { Hit(source: s, index: $0.index, metres: $0.metres) }
                }
                candidates *= 4
                try deadline.check()
            }
        case .within(let d, let p)?:
            try Check.position(p.point)
            try Check.distance(d, parameter: "within")
            if let limit = plan.limit { try Check.k(limit, limits: snapshot.limits) }
            var found = try indices().filter { keep($0.index) }
                .map { (index: $0.index, metres: metres(p.point, $0.index)) }.filter { $0.metres <= d }
            found.sort { ($0.metres, $0.index) < ($1.metres, $1.index) }
            if let limit = plan.limit, found.count > limit { found.removeLast(found.count - limit) }
            if plan.limit == nil && found.count > snapshot.limits.maxRows {
                throw .tooManyRows(count: found.count, limit: snapshot.limits.maxRows)
            }
            return found.map { Hit(source: s, index: $0.index, metres: $0.metres) }
        case .intersecting(let minLon, let minLat, let maxLon, let maxLat, _)?:
            try Check.position(Point(lon: minLon, lat: minLat), parameter: "bbox")
            try Check.position(Point(lon: maxLon, lat: maxLat), parameter: "bbox")
            guard minLon <= maxLon, minLat <= maxLat else {
                throw .invalidArgument(parameter: "bbox", message: "the minimum corner must be south-west of the maximum corner")
            }
            let box = BBox(minLon: minLon, minLat: minLat, maxLon: maxLon, maxLat: maxLat)
            var found = try indices().map(\.index)
                .filter { keep($0) && layer.geometries[$0]?.bbox.intersects(box) ?? false }.sorted()
            let limit = plan.order.isEmpty ? plan.limit : nil
            if let limit, found.count > limit { found.removeLast(found.count - limit) }
            if limit == nil && found.count > snapshot.limits.maxRows { throw .tooManyRows(count: found.count, limit: snapshot.limits.maxRows) }
            return found.map { Hit(source: s, index: $0, metres: nil) }
        case .atZoom?, .nearestFeatures?, .withinFeatures?, .withinReach?, nil:
            return try indices().filter { keep($0.index) }
                .map { Hit(source: s, index: $0.index, metres: nil) }
        }
    }

    /// The database's plan of each pushed selection, for EXPLAIN.
    func pushedPlan(_ plan: FindPlan, database: any DatabaseStore) throws(EngineError) -> [String] {
        var lines: [String] = []
        for (source, pushed) in zip(plan.sources, plan.pushed ?? []) {
            guard let pushed else { continue }
            let explained: (statement: String, plan: [String])
            if pushed.fetchesRows {
                // The rows fetched (NEAREST: its first fetch), then the FIND over them in memory.
                lines.append("   '\(source.layer.name)' stays in PostgreSQL (\(source.layer.rowCount) rows): its rows that may answer are fetched, then selected in memory")
                explained = try database.explain(pushed.fetch(source.layer, candidates: plan.snapshot.limits.maxRows + 1), fidsOnly: false, deadline: deadline)
            } else {
                let candidates = if case .nearest = pushed.selection { 16 } else { Int?.none }
                explained = try database.explain(pushed.fetch(source.layer, candidates: candidates), fidsOnly: true, deadline: deadline)
            }
            lines.append("   sql (\(source.layer.name)): \(explained.statement)")
            lines += explained.plan.map { "     " + $0 }
        }
        return lines
    }
}
