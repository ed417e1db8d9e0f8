// FIND on a PostGIS store: the selection (spatial clause, WHERE, and where it is safe ORDER BY
// and LIMIT) compiled to SQL, every value a bound parameter, run in PostgreSQL; the rows it
// selects come back as fids, and the answer's values are read from the snapshot by fid, through
// the same accessors and the same output path as on a GeoPackage. So the two stores answer
// alike by construction wherever the selection agrees, and the selection is made to agree:
//
// - CONTAINING: `ST_Covers(geom, point)` picks the candidates (it counts the boundary in, a
//   superset of the engine's half-open rule, under which a point on an edge two polygons share
//   lies in exactly one of them; `ST_Contains` would leave boundary points out). The engine's
//   rule (`Geometry.contains(lon:lat:)`) decides each candidate, as a GiST recheck would.
// - NEAREST k: KNN `ORDER BY geom::geography <-> point` (sphere metres, GiST-assisted) fetches
//   candidates, the engine's great-circle metres re-rank them. The SQL's WHERE applies before
//   its LIMIT. Exactness: every feature not fetched is at least as far, by the SQL's metric, as
//   the last one fetched (`last`); the engine's metre differs from it by at most `slack(last)`;
//   so when `last - slack(last)` is beyond the k-th engine distance among those fetched, none
//   left behind can enter the top k. Otherwise the fetch repeats with 4× the candidates.
// - WITHIN d: `ST_DWithin(geom::geography, point, d + slack, false)` (sphere), then the engine's
//   metres keep those within d, nearest first: distances are the engine's own.
// - INTERSECTING: `geom && envelope` (PostGIS compares float4-rounded boxes, slightly larger),
//   then the engine's box test.
// - WHERE: comparisons, IN, IS NULL, AND/OR/NOT on a layer's columns and fid; MEASURES and
//   FRESH as subqueries on the time-series table. Missing values compare false, as in the engine
//   (`COALESCE(…, false)`, so NOT of a comparison with a missing value is true in both); text
//   compares by code point (`COLLATE "C"`), as Swift strings do.
// A term of the WHERE with no SQL form (`~`, `~ CZECH`, conditions on LATEST or another layer's
// feature) is relaxed: SQL selects a superset, and the engine's own predicate decides on the rows
// it returns (`relaxed`). Anything else (LINKED TO, NEAREST/WITHIN … TO (layer …)) is refused
// with `not_supported_on_postgis`, naming it: never a different answer.
//
// A layer kept in the database (too large to load, Engine/DatabaseLayers.swift) has no rows to
// read by fid: its selection is a `DatabaseFetch` instead, the same spatial clause and WHERE,
// and the runner fetches the rows themselves, then plans the FIND again over them (`Runner.find`).

import Engine
import Geometry
import Store

/// One layer's selection as SQL.
struct PushedSelection: Sendable {
    var sql: String
    var parameters: [AttributeValue]
    /// `$n` of the candidate count in NEAREST's SQL (raised when a fetch was not enough).
    var candidateParameter: Int?
    /// Whether the SQL applies the FIND's ORDER BY and LIMIT itself.
    var ordersAndLimits = false
    /// A layer kept in the database: the rows to fetch (`Snapshot.rows(of:for:)`), not fids.
    var fetch: DatabaseFetch? = nil
    /// The SQL checks only part of the WHERE (`SQLPushdown.relaxed`): it selects a superset, and
    /// the engine's own predicate decides on the rows it returns.
    var relaxed = false
}

/// The rows of a layer kept in the database that one FIND may answer with.
struct DatabaseFetch: Sendable {
    var selection: DatabaseSelection
    var condition: SQLCondition?
}

struct SQLPushdown {
    let snapshot: Snapshot
    let layer: Layer
    var parameters: [AttributeValue] = []
    /// Whether a term of the WHERE had no SQL form (`~`, `~ CZECH`, a condition on LATEST or on
    /// another layer's feature, …): it became `true` (`false` under an odd number of NOTs), so
    /// the SQL keeps every row the whole WHERE could keep, and the engine's compiled predicate
    /// runs on what it returns. No ORDER BY or LIMIT goes to SQL then.
    var relaxed = false

    static func refuse(_ what: String, at position: SourcePosition) -> QueryError {
        Runner.engineError(.notSupportedOnPostGIS(what), at: position)
    }

    mutating func bind(_ value: AttributeValue) -> String {
        parameters.append(value)
        return "$\(parameters.count)"
    }

    mutating func point(_ p: PointLiteral) -> String {
        let lon = bind(.real(p.lon)), lat = bind(.real(p.lat))
        return "ST_SetSRID(ST_MakePoint(\(lon), \(lat)), 4326)::geography"
    }

    /// The selection of one layer of `find`, or the error naming what cannot be pushed down.
    static func compile(_ find: Find, layer: Layer, layerCount: Int, snapshot: Snapshot) throws(QueryError) -> PushedSelection {
        let at = find.layers[0].position
        if let linked = find.linked { throw refuse("LINKED TO", at: linked.layer.position) }
        if layer.keptInDatabase { return try fetch(find, layer: layer, layerCount: layerCount, snapshot: snapshot) }
        if layer.rowsInDatabase {
            throw refuse("FIND on the time-series table '\(layer.name)' (its rows are read per answer: ask its stations' layer for LATEST or HISTORY)", at: at)
        }
        var compiler = SQLPushdown(snapshot: snapshot, layer: layer)
        let table = SQL.identifier(layer.name)
        var conditions: [String] = []
        if let filter = find.filter { conditions.append(try compiler.condition(filter, at: at)) }
        let relaxed = compiler.relaxed
        var select = "t.fid"
        var order = "t.fid"
        var limit = ""
        var candidateParameter: Int?
        var ordersAndLimits = false
        switch find.spatial {
        case .containing(let p)?:
            let lon = compiler.bind(.real(p.lon)), lat = compiler.bind(.real(p.lat))
            conditions.insert("ST_Covers(t.geom, ST_SetSRID(ST_MakePoint(\(lon), \(lat)), 4326))", at: 0)
        case .nearest(_, let p, let within)?:
            let point = compiler.point(p)
            select += ", ST_Distance(t.geom::geography, \(point), false)"
            if let within {
                let points = layer.family == .points
                conditions.insert("ST_DWithin(t.geom::geography, \(point), \(compiler.bind(.real(within + DatabaseSelection.slack(within, points: points)))), false)", at: 0)
            }
            order = "t.geom::geography <-> \(point), t.fid"
            limit = " LIMIT " + compiler.bind(.integer(0))
            candidateParameter = compiler.parameters.count
        case .within(let metres, let p)?:
            let point = compiler.point(p)
            let points = layer.family == .points
            conditions.insert("ST_DWithin(t.geom::geography, \(point), \(compiler.bind(.real(metres + DatabaseSelection.slack(metres, points: points)))), false)", at: 0)
        case .intersecting(let minLon, let minLat, let maxLon, let maxLat, _)?:
            let corners = [minLon, minLat, maxLon, maxLat].map { compiler.bind(.real($0)) }
            conditions.insert("t.geom && ST_MakeEnvelope(\(corners.joined(separator: ", ")), 4326)", at: 0)
        case .nearestFeatures(_, let selection, _)?:
            throw refuse("NEAREST k TO (layer …)", at: selection.layer.position)
        case .withinFeatures(_, let selection)?:
            throw refuse("WITHIN d OF (layer …)", at: selection.layer.position)
        case .atZoom?:
            throw refuse("AT … ZOOM", at: at)
        case nil:
            // No spatial clause, one layer, ORDER BY numeric columns: ORDER BY and LIMIT run in
            // PostgreSQL too (fid breaks ties). Text keys sort ignoring case and diacritics in
            // the engine, which no PostgreSQL collation here matches: those sort after the fetch.
            if layerCount == 1, !relaxed, find.groupBy.isEmpty, find.having == nil, let keys = compiler.numericOrder(find.order) {
                if !keys.isEmpty { order = keys + ", t.fid" }
                if let n = find.limit { limit = " LIMIT " + compiler.bind(.integer(Int64(n))) }
                ordersAndLimits = true
            }
        }
        let whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        return PushedSelection(sql: "SELECT \(select) FROM \(table) AS t\(whereClause) ORDER BY \(order)\(limit)",
                               parameters: compiler.parameters, candidateParameter: candidateParameter, ordersAndLimits: ordersAndLimits,
                               relaxed: relaxed)
    }

    /// The fetch of a layer kept in the database: its WHERE as a condition of its own, its
    /// spatial clause as a `DatabaseSelection` (WITHIN d with a LIMIT is its nearest LIMIT within
    /// d, as the engine runs it), and without one, ORDER BY and LIMIT where they run in SQL.
    static func fetch(_ find: Find, layer: Layer, layerCount: Int, snapshot: Snapshot) throws(QueryError) -> PushedSelection {
        let at = find.layers[0].position
        var compiler = SQLPushdown(snapshot: snapshot, layer: layer)
        let condition = try find.filter.map { filter throws(QueryError) in try compiler.condition(filter, at: at) }
        let relaxed = compiler.relaxed
        let selection: DatabaseSelection
        switch find.spatial {
        case .containing(let p)?: selection = .containing(p.point)
        case .nearest(let k, let p, let within)?:
            // The k nearest that pass a check SQL cannot make might lie beyond any fetch.
            if relaxed { throw refuse("NEAREST on '\(layer.name)', which stays in PostgreSQL, with a condition PostgreSQL cannot check (`~`, LATEST, another layer's field)", at: at) }
            selection = .nearest(k: k, to: p.point, within: within)
        case .within(let metres, let p)?:
            selection = find.limit.flatMap { relaxed ? nil : .nearest(k: $0, to: p.point, within: metres) } ?? .within(metres: metres, of: p.point)
        case .intersecting(let minLon, let minLat, let maxLon, let maxLat, _)?:
            selection = .intersecting(BBox(minLon: minLon, minLat: minLat, maxLon: maxLon, maxLat: maxLat))
        case .nearestFeatures(_, let selection, _)?: throw refuse("NEAREST k TO (layer …)", at: selection.layer.position)
        case .withinFeatures(_, let selection)?: throw refuse("WITHIN d OF (layer …)", at: selection.layer.position)
        case .atZoom?: throw refuse("AT … ZOOM", at: at)
        case nil:
            if layerCount == 1, !relaxed, find.groupBy.isEmpty, find.having == nil, let keys = compiler.numericOrder(find.order) {
                selection = .all(order: keys.isEmpty ? nil : keys, limit: find.limit)
            } else {
                selection = .all(order: nil, limit: nil)
            }
        }
        let fetch = DatabaseFetch(selection: selection, condition: condition.map { SQLCondition(sql: $0, parameters: compiler.parameters) })
        return PushedSelection(sql: "", parameters: [], fetch: fetch, relaxed: relaxed)
    }

    /// `ORDER BY` keys that are all numeric columns or fid, as SQL; nil when any is not.
    func numericOrder(_ keys: [OrderKey]) -> String? {
        var parts: [String] = []
        for key in keys {
            guard case .attribute(let name) = key.field else { return nil }
            let column: String
            if name.text == "fid" {
                column = "t.fid"
            } else if let info = layer.info.columns.first(where: { $0.name == name.text }), !info.isJSON,
                      info.type == .integer || info.type == .real {
                column = "t." + SQL.identifier(name.text)
            } else {
                return nil
            }
            parts.append(column + (key.descending ? " DESC" : " ASC") + (key.nullsFirst ? " NULLS FIRST" : " NULLS LAST"))
        }
        return parts.joined(separator: ", ")
    }

    // MARK: WHERE

    /// A term without an SQL form, as the SQL's superset of it: `true` where the term counts
    /// for a row (`positive`), `false` under an odd number of NOTs.
    mutating func relax(_ positive: Bool) -> String {
        relaxed = true
        return positive ? "true" : "false"
    }

    /// `positive`: whether the expression sits under an even number of NOTs.
    mutating func condition(_ expression: Expression, at position: SourcePosition, positive: Bool = true) throws(QueryError) -> String {
        switch expression {
        case .and(let terms):
            var parts: [String] = []
            for term in terms { parts.append(try condition(term, at: position, positive: positive)) }
            return "(" + parts.joined(separator: " AND ") + ")"
        case .or(let terms):
            var parts: [String] = []
            for term in terms { parts.append(try condition(term, at: position, positive: positive)) }
            return "(" + parts.joined(separator: " OR ") + ")"
        case .not(let inner):
            return "(NOT \(try condition(inner, at: position, positive: !positive)))"
        case .compare(let field, let comparison, let literal, let where_):
            return try compare(field, comparison, literal, at: where_, positive: positive)
        case .isIn(let field, let literals, let negated):
            var parts: [String] = []
            for literal in literals { parts.append(try compare(field, .equal, literal, at: field.position, positive: negated ? !positive : positive)) }
            let any = parts.isEmpty ? "false" : "(" + parts.joined(separator: " OR ") + ")"
            return negated ? "(NOT \(any))" : any
        case .isNull(let field, let negated):
            guard case .attribute(let name) = field else { return relax(positive) }
            let column: String
            switch name.text {
            case "fid": return negated ? "true" : "false"
            case "layer": return negated ? "true" : "false"
            default:
                guard layer.info.columns.contains(where: { $0.name == name.text }) else { return negated ? "false" : "true" }
                column = "t." + SQL.identifier(name.text)
            }
            return "(\(column) IS \(negated ? "NOT " : "")NULL)"
        case .matches, .matchesCzech:
            return relax(positive)
        case .measures(let column):
            let (series, key) = try timeSeries(column.position)
            guard series.columns.contains(column.text) else {
                throw SQLPushdown.refuse("MEASURES of \(Quote.input(column.text))", at: column.position)
            }
            let s = SQL.identifier(series.table)
            // Rule 2 of TimeSeries.swift over the observations the engine reads (times it can parse).
            let (start, end) = (SQL.identifier(series.link.startColumn), SQL.identifier(series.link.endColumn))
            return "EXISTS (SELECT 1 FROM \(s) AS s WHERE s.\(SQL.identifier(series.link.keyColumn)) = \(key) AND s.\(SQL.identifier(column.text)) <> 0 "
                + "AND vltava_utc(s.\(start)) IS NOT NULL AND vltava_utc(s.\(end)) IS NOT NULL)"
        case .fresh(let hours, let where_):
            let (series, key) = try timeSeries(where_)
            let s = SQL.identifier(series.table)
            let end = SQL.identifier(series.link.endColumn)
            let keyColumn = SQL.identifier(series.link.keyColumn)
            let start = SQL.identifier(series.link.startColumn)
            // The engine's rule (TimeSeries.isStale): fresh when the end of the station's last
            // observation (newest start, then highest fid) is at most `hours` (whole seconds)
            // before the newest such end of any key of the table. Times as the engine reads them
            // (`vltava_utc`, Engine/SeriesFetch.swift); the keys are walked through the key index
            // (a loose index scan), each one's last observation through (key, start, fid).
            let maxAge = bind(.integer(Int64(hours * 3600)))
            let observation = "vltava_utc(r.\(start)) IS NOT NULL AND vltava_utc(r.\(end)) IS NOT NULL"
            func lastEnd(of keyValue: String) -> String {
                "(SELECT vltava_utc(r.\(end)) FROM \(s) AS r WHERE r.\(keyColumn) = \(keyValue) AND \(observation) ORDER BY vltava_utc(r.\(start)) DESC, r.fid DESC LIMIT 1)"
            }
            let newest = "(WITH RECURSIVE k(v) AS ((SELECT r.\(keyColumn) FROM \(s) AS r WHERE r.\(keyColumn) IS NOT NULL ORDER BY 1 LIMIT 1) "
                + "UNION ALL SELECT (SELECT r.\(keyColumn) FROM \(s) AS r WHERE r.\(keyColumn) > k.v ORDER BY 1 LIMIT 1) FROM k WHERE k.v IS NOT NULL) "
                + "SELECT max(\(lastEnd(of: "k.v"))) FROM k WHERE k.v IS NOT NULL)"
            return "COALESCE(\(lastEnd(of: key)) >= \(newest) - \(maxAge), false)"
        }
    }

    func timeSeries(_ position: SourcePosition) throws(QueryError) -> (TimeSeries, String) {
        guard let series = snapshot.timeSeriesByLayer[layer.name] else {
            throw Planner.error(.invalid, "no_time_series", "'\(layer.name)' has no time series", at: position)
        }
        let key = series.link.layerKeyColumn
        guard let column = layer.info.columns.first(where: { $0.name == key }), column.type == .text || column.isJSON else {
            throw SQLPushdown.refuse("a time series keyed by a non-text column", at: position)
        }
        return (series, "t." + SQL.identifier(key))
    }

    mutating func compare(_ field: FieldExpression, _ comparison: Comparison, _ literal: Literal, at position: SourcePosition,
                          positive: Bool) throws(QueryError) -> String {
        guard case .attribute(let name) = field else { return relax(positive) }
        let op = comparison.rawValue
        if name.text == "fid" {
            guard case .number(let n) = literal else { return relax(positive) }
            return "(t.fid::float8 \(op) \(bind(.real(n))))"
        }
        if name.text == "layer" { return relax(positive) }
        guard let column = layer.info.columns.first(where: { $0.name == name.text }) else {
            return "false"  // not a column of this layer: missing, and missing compares false
        }
        let sql = "t." + SQL.identifier(name.text)
        switch (literal, column.isJSON ? ColumnType.text : column.type) {
        case (.null, _):
            return "false"
        case (.number(let n), .integer), (.number(let n), .real):
            return "COALESCE(\(sql)::float8 \(op) \(bind(.real(n))), false)"
        case (.text(let s), .text), (.text(let s), .dateTime), (.text(let s), .blob):
            return "COALESCE(\(sql) COLLATE \"C\" \(op) \(bind(.text(s))) COLLATE \"C\", false)"
        case (.bool(let b), .boolean):
            return "COALESCE(\(sql)::int \(op) \(bind(.integer(b ? 1 : 0))), false)"
        case (.text, .integer), (.text, .real), (.number, .text), (.number, .dateTime), (.number, .blob), (.text, .boolean), (.number, .boolean):
            return "false"  // the engine compares values of different kinds as false
        default:
            return relax(positive)
        }
    }
}

extension Runner {
    /// The hits of one layer, selected in the database by `pushed`.
    func pushedHits(_ plan: FindPlan, source s: Int, _ pushed: PushedSelection, database: any SQLDatabase) throws(EngineError) -> [Hit] {
        let layer = plan.sources[s].layer
        let snapshot = plan.snapshot
        func indices(_ rows: [[AttributeValue]]) -> [(index: Int, sqlMetres: Double?)] {
            rows.compactMap { row in
                guard case .integer(let fid)? = row.first, let index = layer.index(ofFID: fid) else { return nil }
                return (index, row.count > 1 ? row[1].doubleValue : nil)
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
        // Where SQL checked only part of the WHERE, the engine's predicate decides.
        let filter = pushed.relaxed ? plan.sources[s].filter : nil
        func keep(_ index: Int) -> Bool { filter?(index) ?? true }
        switch plan.spatial {
        case .containing(let p)?:
            try Check.position(p.point)
            let found = indices(try database.rows(pushed.sql, pushed.parameters, deadline: deadline))
                .map(\.index).filter { keep($0) && layer.geometries[$0]?.contains(lon: p.lon, lat: p.lat) ?? false }
                .sorted { (layer.areas[$0], $0) < (layer.areas[$1], $1) }
            return found.map { Hit(source: s, index: $0, metres: nil) }
        case .nearest(let k, let p, let within)?:
            try Check.position(p.point)
            try Check.k(k, limits: snapshot.limits)
            if let within { try Check.distance(within, parameter: "within") }
            guard let slot = pushed.candidateParameter else { return [] }
            var parameters = pushed.parameters
            var candidates = k * 4 + 16
            while true {
                parameters[slot - 1] = .integer(Int64(candidates))
                let rows = indices(try database.rows(pushed.sql, parameters, deadline: deadline))
                var ranked = rows.filter { keep($0.index) }.map { (index: $0.index, metres: metres(p.point, $0.index)) }
                    .filter { within == nil || $0.metres <= within ?? 0 }
                ranked.sort { ($0.metres, $0.index) < ($1.metres, $1.index) }
                let exhausted = rows.count < candidates
                let last = rows.last?.sqlMetres ?? 0
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
            var found = indices(try database.rows(pushed.sql, pushed.parameters, deadline: deadline)).filter { keep($0.index) }
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
            var found = indices(try database.rows(pushed.sql, pushed.parameters, deadline: deadline)).map(\.index)
                .filter { keep($0) && layer.geometries[$0]?.bbox.intersects(box) ?? false }.sorted()
            let limit = plan.order.isEmpty ? plan.limit : nil
            if let limit, found.count > limit { found.removeLast(found.count - limit) }
            if limit == nil && found.count > snapshot.limits.maxRows { throw .tooManyRows(count: found.count, limit: snapshot.limits.maxRows) }
            return found.map { Hit(source: s, index: $0, metres: nil) }
        case .atZoom?, .nearestFeatures?, .withinFeatures?, nil:
            return indices(try database.rows(pushed.sql, pushed.parameters, deadline: deadline)).filter { keep($0.index) }
                .map { Hit(source: s, index: $0.index, metres: nil) }
        }
    }

    /// PostgreSQL's plan of each pushed selection, for EXPLAIN.
    func pushedPlan(_ plan: FindPlan, database: any DatabaseStore) throws(EngineError) -> [String] {
        var lines: [String] = []
        for (source, pushed) in zip(plan.sources, plan.pushed ?? []) {
            guard let pushed else { continue }
            let explained: (statement: String, plan: [String])
            if let fetch = pushed.fetch {
                // The rows fetched (NEAREST: its first fetch), then the FIND over them in memory.
                lines.append("   '\(source.layer.name)' stays in PostgreSQL (\(source.layer.rowCount) rows): its rows that may answer are fetched, then selected in memory")
                explained = try database.explain(LayerFetch(layer: source.layer.info, points: source.layer.family == .points, selection: fetch.selection,
                                                            condition: fetch.condition, limit: plan.snapshot.limits.maxRows + 1), deadline: deadline)
            } else {
                var parameters = pushed.parameters
                if let slot = pushed.candidateParameter { parameters[slot - 1] = .integer(16) }
                explained = (pushed.sql, try database.rows("EXPLAIN " + pushed.sql, parameters, deadline: deadline).map { $0.first?.stringValue ?? "" })
            }
            lines.append("   sql (\(source.layer.name)): \(explained.statement)")
            lines += explained.plan.map { "     " + $0 }
        }
        return lines
    }
}
