// Runs a planned statement on its snapshot through the Engine's operations, and shapes the rows.

import Foundation
import Engine
import Geometry
import Store
import Support
import VectorTiles

/// Counts filter calls during one EXPLAIN run.
final class CandidateCounter: Sendable {
    private let calls = Locked(0)
    func count() { calls.withLock { $0 += 1 } }
    var total: Int { calls.withLock { $0 } }
}

struct Runner {
    /// The request's deadline: checked in the long loops (every few thousand features or rows,
    /// where a clock read costs nothing in comparison) and handed to route searches.
    var deadline: Deadline = .none

    /// Every `stride` iterations of a loop over features or rows, the deadline is read.
    static let stride = 4096

    func checkDeadline(_ i: Int, at position: SourcePosition) throws(QueryError) {
        guard i & (Runner.stride - 1) == 0 else { return }
        do { try deadline.check() } catch { throw Runner.engineError(error, at: position) }
    }

    /// The statement's answer, refused when the deadline passed while it was made: a join or
    /// a filter that found the deadline passed gives up (a missing value), so an answer made
    /// past it may be incomplete, and the check here is the one that keeps it from the caller.
    func run(_ statement: PlannedStatement) throws(QueryError) -> QueryResult {
        let result = try answer(statement)
        do { try deadline.check() } catch { throw Runner.engineError(error, at: statement.position) }
        return result
    }

    private func answer(_ statement: PlannedStatement) throws(QueryError) -> QueryResult {
        switch statement.step {
        case .showLayers(let snapshot): return showLayers(snapshot)
        case .describeLayer(let layer, let series): return describe(layer, series)
        case .describeTileSet(let name, let tiles): return describe(name, tiles)
        case .find(let plan): return try find(plan, at: statement.position)
        case .tilesAt(let plan): return try tilesAt(plan, at: statement.position)
        case .route(let plan): return try route(plan)
        case .tile(let tile, let tiles, let snapshot): return try self.tile(tile, tiles, snapshot)
        case .locate(let plan): return try locate(plan)
        case .other(let plan): return try plan.run(self)
        case .write: throw Query.readOnly(at: statement.position)
        case .explain(let inner, let lines):
            var plan = lines
            if case .find(let find) = inner.step, find.pushed != nil, let database = find.snapshot.database {
                // On PostGIS: the SQL of each layer and PostgreSQL's plan for it, then a run.
                plan = ["1. " + find.sources.map(\.layer.name).joined(separator: ", ") + ": selected in PostgreSQL (\(database.location)), values read from the snapshot by fid"]
                do { plan += try pushedPlan(find, database: database) } catch { throw Runner.engineError(error, at: inner.position) }
                // The series statement is shown as the run made it, for the stations it selected.
                func run() throws(QueryError) -> (QueryResult, [String]) {
                    let result = try self.find(find, at: inner.position, locked: true)
                    do { return (result, try seriesPlan(find, database: database)) } catch { throw Runner.engineError(error, at: inner.position) }
                }
                let (result, series): (QueryResult, [String])
                if let answers = find.series {
                    (result, series) = try answers.running.withLock { _ throws(QueryError) in try run() }
                } else {
                    (result, series) = try run()
                }
                plan += series
                plan.append("ran: \(result.count) row\(result.count == 1 ? "" : "s") kept")
            } else if case .find(var find) = inner.step {
                // Count the features each index search hands to the WHERE (for nearest: every
                // candidate it reached in distance order), as opposed to the rows it kept.
                let counter = CandidateCounter()
                for s in find.sources.indices {
                    let filter = find.sources[s].filter
                    find.sources[s].filter = { i in counter.count(); return filter?(i) ?? true }
                }
                let stats = find.sources.map { _ in SearchStats() }
                let result = try self.find(find, at: inner.position, stats: stats)
                plan.append("ran: " + visitedNodes(find, stats)
                            + "\(counter.total) feature\(counter.total == 1 ? "" : "s") reached the WHERE test, \(result.count) row\(result.count == 1 ? "" : "s") kept")
            } else if case .write = inner.step {
                plan.append("not run: EXPLAIN does not write")
            } else {
                let result = try run(inner)
                switch result.body {
                case .route(let answer): plan.append("ran: \(answer.route.settled) nodes settled, \(answer.route.nodeIDs.count) nodes on the route")
                case .trip(let trip): plan.append("ran: \(trip.answer.route.legs.count) legs, the order " + (trip.answer.exact ? "exact" : "a heuristic's"))
                default: plan.append("ran: \(result.count) row\(result.count == 1 ? "" : "s")")
                }
            }
            return QueryResult(body: .plan(plan))
        }
    }

    // MARK: SHOW, DESCRIBE

    func showLayers(_ snapshot: Snapshot) -> QueryResult {
        var rows: [[JSONValue]] = []
        for layer in snapshot.layers {
            var notes: [String] = []
            if let series = snapshot.timeSeriesByLayer[layer.name] { notes.append("time series in '\(series.table)': \(series.columns.joined(separator: ", "))") }
            if let link = layer.info.timeSeries { notes.append("time series of '\(link.keyLayer)'") }
            if layer.family == .lines, let network = try? snapshot.network(layer.name) { notes.append("walking network: \(network.graph.nodeCount) nodes") }
            if let (column, _) = layer.idList { notes.append("links by \(column)") }
            rows.append([.string(layer.name), .string(layer.family.rawValue), .integer(Int64(layer.rowCount)), .string(notes.joined(separator: "; "))])
        }
        for name in snapshot.tileSets.keys.sorted() {
            guard let tiles = snapshot.tileSets[name] else { continue }
            let zooms = "zoom \(tiles.minZoom.map(String.init) ?? "?")–\(tiles.maxZoom.map(String.init) ?? "?")"
            rows.append([.string(name), .string("tiles"), .null, .string("\(tiles.formatName) \(tiles.metadata["format"] ?? "?"), \(zooms)")])
        }
        return QueryResult(body: .rows(.init(columns: ["name", "kind", "count", "notes"], values: rows, geometries: rows.map { _ in nil })))
    }

    func describe(_ layer: Layer, _ series: TimeSeries?) -> QueryResult {
        var rows: [[JSONValue]] = [[.string("fid"), .string("INTEGER"), .string("feature id")]]
        if layer.family != .table {
            rows.append([.string("geom"), .string(layer.info.geometryType ?? "GEOMETRY"), .string("EPSG:4326 lon/lat; \(layer.family.rawValue)")])
        }
        for column in layer.info.columns { rows.append([.string(column.name), .string(column.typeDescription), .string("")]) }
        if let series {
            for column in series.columns {
                rows.append([.string("LATEST(\(column))"), .string("REAL"), .string("newest value in '\(series.table)'; also HISTORY(\(column), n h), MEASURES(\(column))")])
            }
            rows.append([.string("OBSERVED_AT"), .string("TEXT"), .string("end of the newest observation, UTC")])
        }
        return QueryResult(body: .rows(.init(columns: ["field", "type", "notes"], values: rows, geometries: rows.map { _ in nil })))
    }

    func describe(_ name: String, _ tiles: any TileArchive) -> QueryResult {
        let keys = ["name", "format", "minzoom", "maxzoom", "bounds", "center", "attribution"]
        let rows: [[JSONValue]] = keys.compactMap { key in tiles.metadata[key].map { [.string(key), .string($0)] } }
        return QueryResult(body: .rows(.init(columns: ["metadata", "value"], values: rows, geometries: rows.map { _ in nil })))
    }

    // MARK: FIND

    struct Hit {
        var source: Int
        var index: Int
        var metres: Double?
    }

    /// Whatever an engine operation with a query inside threw, as a query error at `position`:
    /// the query's own error as it is, the engine's classified, anything else a store error.
    static func queryError(_ error: any Error, at position: SourcePosition) -> QueryError {
        switch error {
        case let error as QueryError: error
        case let error as EngineError: engineError(error, at: position)
        default: engineError(.store("\(error)"), at: position)
        }
    }

    /// An engine error as a query error at `position`: its category is the kind (one
    /// classification, `ErrorCategory`), with the hint that fits a statement.
    static func engineError(_ error: EngineError, at position: SourcePosition) -> QueryError {
        var hint: String?
        switch error {
        case .tooManyRows: hint = "add LIMIT n or narrow the WHERE"
        case .tooManyRowsInRequest: hint = "add LIMIT n, or send the statements in separate requests"
        case .responseTooLarge: hint = "ask for fewer rows (LIMIT n) or fewer fields (RETURN …), or send the statements in separate requests"
        case .deadlineExceeded: hint = "ask for less: a nearer target, a LIMIT, fewer statements per request"
        case .leg(_, _, _, let inner): return engineError(inner, at: position)
        default: break
        }
        return QueryError(kind: error.category, code: error.code, message: error.description, line: position.line, column: position.column,
                          length: position.length, hint: hint)
    }

    /// "9 index nodes visited, " (per layer when there are several), or "no index, " without
    /// a spatial clause.
    private func visitedNodes(_ plan: FindPlan, _ stats: [SearchStats]) -> String {
        switch plan.spatial {
        case .atZoom?, nil: return "no index, "
        default:
            let total = stats.reduce(0) { $0 + $1.nodesVisited }
            let each = stats.count > 1 ? " (" + zip(plan.sources, stats).map { "\($0.layer.name) \($1.nodesVisited)" }.joined(separator: ", ") + ")" : ""
            return "\(total) index node\(total == 1 ? "" : "s") visited\(each), "
        }
    }

    /// `stats`, one per source, collect what the index searches did (for EXPLAIN). A plan whose
    /// rows read series fetched per answer (PostGIS) runs once at a time (`locked`: the caller
    /// holds its turn already).
    func find(_ plan: FindPlan, at position: SourcePosition, stats: [SearchStats]? = nil, locked: Bool = false) throws(QueryError) -> QueryResult {
        if let find = plan.refetch {
            // Layers kept in the database: fetch the rows the answer may hold, then the same
            // FIND over them, in memory (Engine/DatabaseLayers.swift says why that is the answer).
            var planner = Planner(snapshot: plan.snapshot, deadline: deadline)
            planner.fillsSeries = true
            for (s, source) in plan.sources.enumerated() {
                guard let pushed = plan.pushed?[s], pushed.fetchesRows else { continue }
                do {
                    let rows = try plan.snapshot.rows(of: source.layer, for: pushed.selection, where: pushed.condition, deadline: deadline)
                    planner.fetched[ObjectIdentifier(source.layer)] = (rows, !pushed.relaxed)
                } catch {
                    throw Runner.engineError(error, at: position)
                }
            }
            return try self.find(try planner.planFind(find), at: position, stats: stats)
        }
        if let series = plan.series, !locked {
            return try series.running.withLock { _ throws(QueryError) in try find(plan, at: position, stats: stats, locked: true) }
        }
        var hits: [Hit] = []
        for (s, source) in plan.sources.enumerated() {
            let layer = source.layer
            let filter: FeatureFilter? = source.filter
            let stats = stats?[s]
            do {
                if let pushed = plan.pushed?[s], let database = plan.snapshot.database {
                    hits += try pushedHits(plan, source: s, pushed, database: database)
                    continue
                }
                var matches: [Match] = []
                let snapshot = plan.snapshot
                switch plan.spatial {
                case .containing(let p)?:
                    matches = try snapshot.containing(layer, at: p.point, filter: filter, stats: stats)
                case .nearest(let k, let p, let within)?:
                    matches = try snapshot.nearest(layer, to: p.point, k: k, within: within, filter: filter, stats: stats)
                case .within(let metres, let p)?:
                    matches = try snapshot.within(layer, metres: metres, of: p.point, limit: plan.limit, filter: filter, stats: stats)
                case .nearestFeatures(let k, _, let within)?:
                    matches = try snapshot.nearest(layer, to: plan.targets, k: k, within: within, filter: filter, stats: stats, deadline: deadline)
                case .withinFeatures(let metres, _)?:
                    matches = try snapshot.within(layer, metres: metres, of: plan.targets, limit: plan.limit, filter: filter, stats: stats, deadline: deadline)
                case .withinReach(let limit, let p, _)?:
                    matches = try snapshot.withinReach(layer, limit: limit, from: p.point, filter: filter, deadline: deadline)
                case .intersecting(let minLon, let minLat, let maxLon, let maxLat, _)?:
                    let box = BBox(minLon: minLon, minLat: minLat, maxLon: maxLon, maxLat: maxLat)
                    matches = try snapshot.intersecting(layer, box: box, limit: plan.order.isEmpty ? plan.limit : nil, filter: filter, stats: stats)
                case .atZoom?, nil:
                    for i in layer.indices {
                        if i & (Runner.stride - 1) == 0 { try deadline.check() }
                        if source.filter?(i) ?? true { hits.append(Hit(source: s, index: i, metres: nil)) }
                    }
                }
                hits += matches.map { Hit(source: s, index: $0.index, metres: $0.metres) }
            } catch {
                throw Runner.engineError(error, at: position)
            }
        }
        // Several layers: one answer, nearest first for distance queries.
        if plan.sources.count > 1 {
            switch plan.spatial {
            case .nearest(let k, _, _)?, .nearestFeatures(let k, _, _)?:
                hits.sort { ($0.metres ?? 0, $0.source) < ($1.metres ?? 0, $1.source) }
                if hits.count > k { hits.removeLast(hits.count - k) }
            case .within?, .withinFeatures?, .withinReach?:
                hits.sort { ($0.metres ?? 0, $0.source) < ($1.metres ?? 0, $1.source) }
            default:
                break
            }
        }
        // PostGIS: the series values the rows read, for the stations among them, in one statement.
        if plan.series != nil { try fetchSeries(plan, hits, at: position) }
        if let groups = plan.groups { return try groupRows(plan, groups, hits, at: position) }
        if !plan.order.isEmpty {
            let keyed = hits.map { hit in
                (hit, plan.order.indices.map { k in plan.order[k].byDistance ? hit.metres.map { AttributeValue.real($0) } ?? .null : plan.sources[hit.source].orderAccessors[k](hit.index) })
            }
            let keys = plan.order.map { (descending: $0.descending, nullsFirst: $0.nullsFirst) }
            hits = keyed.sorted { a, b in Runner.precedes(a.1, b.1, keys) }.map(\.0)
        }
        if let limit = plan.limit {
            if hits.count > limit { hits.removeLast(hits.count - limit) }
        } else if hits.count > plan.snapshot.limits.maxRows {
            throw Runner.engineError(.tooManyRows(count: hits.count, limit: plan.snapshot.limits.maxRows), at: position)
        }
        let distanceColumn = plan.columns.firstIndex(of: "distance_m")
        var values: [[JSONValue]] = []
        var geometries: [Geometry?] = []
        values.reserveCapacity(hits.count)
        for (i, hit) in hits.enumerated() {
            try checkDeadline(i, at: position)
            let source = plan.sources[hit.source]
            var row = source.accessors.map { Runner.json($0(hit.index)) }
            if let distanceColumn, let metres = hit.metres { row[distanceColumn] = .double(Rounding.metres(metres)) }
            values.append(row)
            geometries.append(source.layer.geometries[hit.index])
        }
        var walked = false
        if case .withinReach? = plan.spatial { walked = true }
        var result = QueryResult(body: .rows(.init(columns: plan.columns, values: values, geometries: geometries, walked: walked)))
        result.warnings = plan.warnings
        return result
    }

    /// Sort order for ORDER BY: numbers by value, text ignoring case and diacritics, missing last.
    static func order(_ a: AttributeValue, _ b: AttributeValue) -> Int {
        switch (a.isNull, b.isNull) {
        case (true, true): return 0
        case (true, false): return 1
        case (false, true): return -1
        default: break
        }
        if let x = a.doubleValue, let y = b.doubleValue { return x < y ? -1 : x > y ? 1 : 0 }
        if case .bool(let x) = a, case .bool(let y) = b { return x == y ? 0 : (!x ? -1 : 1) }
        let x = a.stringValue ?? "", y = b.stringValue ?? ""
        let fx = TextFold.fold(x), fy = TextFold.fold(y)
        if fx != fy { return fx < fy ? -1 : 1 }
        return x < y ? -1 : x > y ? 1 : 0
    }

    static func json(_ value: AttributeValue) -> JSONValue { GeoJSON.json(value) }

}
