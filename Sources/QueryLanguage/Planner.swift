// The planner: a parsed statement → a plan bound to one snapshot. Names are resolved, fields
// typed and WHERE compiled into closures here, so running a plan does no lookups by name and
// reports every mistake with its position before any work starts.

import Foundation
import Engine
import Geometry
import Store
import Support
import VectorTiles

/// A compiled condition over one layer's feature indices.
typealias Predicate = @Sendable (Int) -> Bool
/// A compiled field over one layer's feature indices.
typealias Accessor = @Sendable (Int) -> AttributeValue

public enum Query {
    /// Parses, plans and runs every statement of `text` on `snapshot`, with `parameters` bound
    /// to its `$1, $2, …` (or `?`, in order).
    public static func run(_ text: String, _ parameters: [any QueryArgument] = [], on snapshot: Snapshot) throws(QueryError) -> [QueryResult] {
        var results: [QueryResult] = []
        for statement in try plan(text, parameters, on: snapshot) { results.append(try statement.run()) }
        return results
    }

    /// Parses and plans every statement without running it.
    public static func plan(_ text: String, _ parameters: [any QueryArgument] = [], on snapshot: Snapshot) throws(QueryError) -> [PlannedStatement] {
        var planned: [PlannedStatement] = []
        for (statement, position) in try Parser.parse(text, parameters: parameters.map(\.queryValue)).statements {
            planned.append(try Planner(snapshot: snapshot).plan(statement, at: position))
        }
        return planned
    }

    /// The answer to every statement of `text` as one JSON body (one statement: its answer;
    /// several: an array, or as GeoJSON one FeatureCollection whose features say their
    /// statement), within `budget`: at most `maxStatements` statements (refused before
    /// any runs), the deadline checked before each statement and inside it, the rows of all
    /// answers counted together, and the body's size checked row by row while it is written, so
    /// a body too large is abandoned early rather than built. Each statement's rows are written
    /// and let go before the next one runs, so a request holds one answer in memory at a time.
    public static func answer(_ text: String, _ parameters: [any QueryArgument] = [], on snapshot: Snapshot, geoJSON: Bool,
                              budget: inout RequestBudget) throws(QueryError) -> [UInt8] {
        try answer(text, parameters, on: snapshot, format: geoJSON ? .geojson : .json, budget: &budget)
    }

    /// The same, in `format`: JSON, GeoJSON, or CSV (one statement's table; CSVOutput.swift).
    /// With `engine`, INSERT, UPDATE and DELETE write through it (Writes.swift), and each
    /// statement is planned when its turn comes, on the snapshot the writes before it made;
    /// without, they are refused (`read_only`), and every statement is planned before any runs.
    public static func answer(_ text: String, _ parameters: [any QueryArgument] = [], on snapshot: Snapshot, writingTo engine: Engine? = nil,
                              format: AnswerFormat, budget: inout RequestBudget) throws(QueryError) -> [UInt8] {
        let geoJSON = format == .geojson
        let parsed = try Parser.parse(text, parameters: parameters.map(\.queryValue)).statements
        if format == .csv { return try answerCSV(parsed, on: snapshot, writingTo: engine, budget: &budget) }
        let maxStatements = budget.limits.maxStatements
        if parsed.count > maxStatements {
            let first = parsed[maxStatements].1
            throw QueryError(kind: .limit, code: "too_many_statements",
                             message: "the request holds \(parsed.count) statements, more than the limit of \(maxStatements) per request",
                             line: first.line, column: first.column, length: first.length,
                             hint: "send at most \(maxStatements) statements per request; the one here is number \(maxStatements + 1)")
        }
        let writes = engine != nil && parsed.contains { statement, _ in
            switch statement {
            case .write, .fence: true
            default: false
            }
        }
        var planned: [PlannedStatement] = []
        if !writes {
            for (statement, position) in parsed { planned.append(try Planner(snapshot: snapshot, deadline: budget.deadline).plan(statement, at: position)) }
        }
        // Several statements: a JSON array of their answers, or as GeoJSON one
        // FeatureCollection of all their features, each marked with its statement's number.
        let several = parsed.count > 1
        var w = JSONWriter(reservingCapacity: 4096)
        if several { geoJSON ? QueryResult.beginCollection(&w) : w.beginArray() }
        for (number, (statement, position)) in zip(1..., parsed) {
            do { try budget.deadline.check() } catch { throw Runner.engineError(error, at: position) }
            let result = writes ? try Query.result(of: statement, at: position, on: snapshot, writingTo: engine, deadline: budget.deadline)
                                : try planned[number - 1].run(deadline: budget.deadline)
            do {
                try budget.answered(rows: result.count)
                if several && geoJSON {
                    try result.writeFeatures(&w, statement: number, budget: budget)
                } else {
                    try result.write(&w, geoJSON: geoJSON, budget: budget)
                }
            } catch {
                throw Runner.engineError(error, at: position)
            }
        }
        if several { geoJSON ? QueryResult.endCollection(&w) : w.endArray() }
        return w.bytes
    }

    /// Checks the text's syntax once, for running many times with different values and on
    /// whatever snapshot is current then (a prepared query outlives reloads: names are
    /// resolved when it runs).
    public static func prepare(_ text: String) throws(QueryError) -> PreparedQuery {
        let parsed = try Parser.parse(text, parameters: nil)
        return PreparedQuery(text: text, parameterCount: parsed.parameterCount, statementCount: parsed.statements.count)
    }
}

extension Query {
    /// A route's place given on its own (`POINT(14.41 50.12)` or `pavilions WHERE name = '…'`),
    /// resolved on `snapshot`. Anything after the place is a syntax error.
    public static func place(_ text: String, on snapshot: Snapshot) throws(QueryError) -> RoutePlace {
        switch try Parser.parsePlace(text) {
        case .point(let p): .point(p.point)
        case .features(let selection): .features(try Planner(snapshot: snapshot).select(selection))
        }
    }
}

/// Statement text whose syntax has been checked, with the number of parameters it takes.
public struct PreparedQuery: Sendable {
    public let text: String
    public let parameterCount: Int
    public let statementCount: Int

    public func run(_ parameters: [any QueryArgument] = [], on snapshot: Snapshot) throws(QueryError) -> [QueryResult] {
        guard parameters.count == parameterCount else {
            throw QueryError(kind: .invalid, code: "parameter_count",
                             message: "the statement takes \(parameterCount) parameter\(parameterCount == 1 ? "" : "s"), \(parameters.count) given", line: 1, column: 1)
        }
        return try Query.run(text, parameters, on: snapshot)
    }
}

/// A statement ready to run on its snapshot.
public struct PlannedStatement: Sendable {
    let step: Step
    let position: SourcePosition

    enum Step: Sendable {
        case showLayers(Snapshot)
        case describeLayer(Layer, TimeSeries?)
        case describeTileSet(String, any TileArchive)
        case find(FindPlan)
        case tilesAt(TilesPlan)
        case route(RoutePlan)
        case tile(TileStatement, any TileArchive, Snapshot)
        case locate(LocatePlan)
        /// Made only through an engine (`Query.result(of:…)`); planned here for EXPLAIN.
        case write(WritePlan)
        case other(any StatementPlan)
        indirect case explain(PlannedStatement, [String])
    }

    public func run() throws(QueryError) -> QueryResult {
        try Runner().run(self)
    }

    /// Runs the statement within `deadline` (checked in its long loops and by route searches).
    /// Feature references search within the deadline the statement was planned with
    /// (`Query.answer` plans and runs with the same one).
    public func run(deadline: Deadline) throws(QueryError) -> QueryResult {
        try Runner(deadline: deadline).run(self)
    }
}

/// One layer of a FIND, with its compiled filter.
struct Source: Sendable {
    var layer: Layer
    var filter: Predicate?
    /// Output columns: how to read each one from this layer.
    var accessors: [Accessor]
    var orderAccessors: [Accessor]
}

struct FindPlan: Sendable {
    var snapshot: Snapshot
    var sources: [Source]
    var spatial: Spatial?
    /// The geometries a `WITHIN d OF (…)` or `NEAREST k TO (…)` measures from.
    var targets: [Geometry] = []
    var columns: [String]
    /// Per ORDER BY key: its direction, and whether it is the distance (which the search gives,
    /// not an accessor).
    var order: [(descending: Bool, byDistance: Bool, nullsFirst: Bool)]
    var limit: Int?
    var linkNote: String?
    /// GROUP BY, HAVING and aggregates over rows (Aggregates.swift); nil for a plain FIND.
    var groups: GroupPlan? = nil
    /// Said with the answer (swapped coordinates).
    var warnings: [String] = []
    /// On a PostGIS store: each source's selection, pushed down to the database (Pushdown.swift);
    /// nil for rows fetched for this answer from a layer kept in the database, which are
    /// selected in memory.
    var pushed: [PushedSelection?]? = nil
    /// The FIND itself, when a layer is kept in the database: the runner fetches its rows and
    /// plans the FIND again over them (`Runner.find`).
    var refetch: Find? = nil
    /// On a PostGIS store: the time series the rows read, fetched for the selected rows.
    var series: AnswerSeriesSet? = nil
}

struct Planner {
    let snapshot: Snapshot
    /// On a PostGIS store: the series the planned FIND's rows read, filled by the runner.
    let answers = AnswerSeriesSet()
    /// The FIND's WHERE runs in the database (Pushdown.swift): its compiled predicates are never called.
    var wherePushedDown = false
    /// Planning a FIND's own rows: the runner fetches the series they read once it has selected
    /// them (`answers`). Elsewhere (a route's FROM/TO, LINKED TO's other side, a reference to
    /// another layer's feature) a series on a PostGIS store is read for every station at once.
    var fillsSeries = false

    /// Rows fetched for this answer from layers kept in the database, by the kept layer: FIND
    /// reads them in its place (`Runner.find`); `whereApplied` when SQL checked the whole WHERE.
    var fetched: [ObjectIdentifier: (rows: Layer, whereApplied: Bool)] = [:]
    /// The request's deadline, for what the plan does per row beyond reading a value: a
    /// feature reference's search (FeatureReference.swift) gives up once it has passed. The
    /// runner refuses an answer made past its deadline, so such a missing value never shows.
    var deadline: Deadline = .none

    /// This planner for conditions and fields evaluated here, on the snapshot.
    var inMemory: Planner {
        var planner = self
        planner.wherePushedDown = false
        planner.fillsSeries = false
        return planner
    }
    var limits: EngineLimits { snapshot.limits }

    func plan(_ statement: Statement, at position: SourcePosition) throws(QueryError) -> PlannedStatement {
        let step: PlannedStatement.Step
        switch statement {
        case .showLayers:
            step = .showLayers(snapshot)
        case .describe(let name):
            if let tiles = snapshot.tileSets[name.text] {
                step = .describeTileSet(name.text, tiles)
            } else {
                let layer = try self.layer(name)
                step = .describeLayer(layer, snapshot.timeSeriesByLayer[layer.name])
            }
        case .find(let find):
            var finder = self
            finder.fillsSeries = true
            step = find.tileSet == nil ? .find(try finder.planFind(find)) : .tilesAt(try planTiles(find))
        case .route(let route):
            step = .route(try planRoute(route))
        case .tile(let tile):
            try Planner.refuseReferences(tile.fields, tile.filter)
            step = .tile(tile, try tileSet(tile.tileSet), snapshot)
        case .locate(let locate):
            step = .locate(try planLocate(locate))
        case .write(let write):
            step = .write(try planWrite(write, at: position))
        case .other(let syntax):
            step = .other(try syntax.plan(self, at: position))
        case .fence:
            // Fences run through an engine (Fences.swift), not on a snapshot's plan.
            throw QueryError(kind: .impossible, code: "read_only", message: "fence statements run through an engine and have no plan on a snapshot",
                             line: position.line, column: position.column, length: position.length, hint: "run it without EXPLAIN")
        case .explain(let inner):
            let planned = try plan(inner, at: position)
            step = .explain(planned, describe(inner, planned))
        }
        return PlannedStatement(step: step, position: position)
    }

    // MARK: Names

    /// A layer of the snapshot, or the rows fetched from it for this answer.
    func layer(_ name: Name) throws(QueryError) -> Layer {
        do {
            let layer = try snapshot.layer(name.text)
            return fetched[ObjectIdentifier(layer)]?.rows ?? layer
        } catch {
            var known = snapshot.layerNames
            known += snapshot.tileSets.keys.sorted()
            let hint = Suggestion.closest(to: name.text, in: known).map { "did you mean '\($0)'?" } ?? "SHOW LAYERS lists them"
            throw QueryError(kind: .notFound, code: "unknown_layer", message: "unknown layer \(Quote.input(name.text))", line: name.position.line,
                             column: name.position.column, length: name.position.length, hint: hint)
        }
    }

    /// A layer whose rows are read here, outside a FIND of its own (a route's place, LINKED TO's
    /// other side, a feature reference): not one kept in the database.
    func layerInMemory(_ name: Name) throws(QueryError) -> Layer {
        let layer = try self.layer(name)
        do { try layer.requireRows(for: "outside a FIND of its own") } catch { throw Runner.engineError(error, at: name.position) }
        return layer
    }

    static func error(_ kind: QueryError.Kind, _ code: String, _ message: String, at position: SourcePosition, hint: String? = nil) -> QueryError {
        QueryError(kind: kind, code: code, message: message, line: position.line, column: position.column, length: position.length, hint: hint)
    }

    static let pseudoFields = ["fid", "layer", "distance_m"]

    // MARK: Fields

    func accessor(_ field: FieldExpression, on layer: Layer) throws(QueryError) -> Accessor {
        switch field {
        case .attribute(let name):
            switch name.text {
            case "fid": return { .integer(layer.fids[$0]) }
            case "layer": return { _ in .text(layer.name) }
            case "distance_m": return { _ in .null }  // filled in by the executor
            default:
                guard let position = layer.info.columns.firstIndex(where: { $0.name == name.text }) else { return { _ in .null } }
                let column = name.text
                return { i in
                    let properties = layer.properties[i]
                    if position < properties.count, properties.names[position] == column { return properties.values[position] }
                    return properties[column] ?? .null
                }
            }
        case .latest(let column, _):
            let (stored, keyOf, index) = try timeSeries(column, on: layer)
            let series = try reader(stored, on: layer, at: column.position) { $0.add(column: column.text) }
            return { i in
                guard let key = keyOf(i) else { return .null }
                let observations = series().observations(of: key)
                return observations.last(where: { $0.values[index] != nil })?.values[index].map { .real($0) } ?? .null
            }
        case .history(let column, let hours, _):
            let (stored, keyOf, index) = try timeSeries(column, on: layer)
            let series = try reader(stored, on: layer, at: column.position) { $0.add(hours: hours, column: column.text) }
            return { i in
                guard let key = keyOf(i) else { return .null }
                let points: [JSONValue] = series().history(of: key, hours: hours).map { observation in
                    .array([.string(observation.end.iso), observation.values[index].map { .double($0) } ?? .null])
                }
                return .json(JSON.serialize(.array(points)))
            }
        case .reference(let reference, let inner):
            return try referenceAccessor(reference, inner, on: layer)
        case .observedAt(let position):
            guard let stored = snapshot.timeSeriesByLayer[layer.name] else {
                throw Planner.error(.invalid, "no_time_series", "'\(layer.name)' has no time series", at: position,
                                    hint: timeSeriesHint)
            }
            let key = stored.link.layerKeyColumn
            let series = try reader(stored, on: layer, at: position) { _ in }  // the last observation is always fetched
            return { i in
                guard let code = layer.properties[i][key]?.stringValue, let end = series().observations(of: code).last?.end else { return .null }
                return .text(end.iso)
            }
        case .aggregate, .quantified, .geometryText, .star:
            return try computedAccessor(field, on: layer)
        }
    }

    /// The series the rows of `layer` read: the snapshot's own, or on a PostGIS store the rows
    /// the runner fetches for the answer's stations (`needs` says what they must decide).
    func reader(_ stored: TimeSeries, on layer: Layer, at position: SourcePosition,
                _ needs: (inout SeriesNeeds) -> Void) throws(QueryError) -> @Sendable () -> TimeSeries {
        guard snapshot.readsSeriesFromStore, !wherePushedDown else { return { stored } }  // pushed WHERE: never called
        guard fillsSeries else {
            var wanted = SeriesNeeds()
            needs(&wanted)
            let series = try everyStation(stored, on: layer, needs: wanted, at: position)
            return { series }
        }
        let answer = answers.series(of: layer, stored)
        answer.need(needs)
        return { answer.series }
    }

    /// On a PostGIS store, a WHERE evaluated here rather than in SQL (a route's FROM/TO, the
    /// HTTP API's where=): the series of all the layer's stations, read now.
    func everyStation(_ stored: TimeSeries, on layer: Layer, needs: SeriesNeeds, at position: SourcePosition) throws(QueryError) -> TimeSeries {
        let key = stored.link.layerKeyColumn
        do {
            return try snapshot.series(stored, keys: layer.indices.compactMap { layer.properties[$0][key]?.stringValue }, needs: needs)
        } catch {
            throw Runner.engineError(error, at: position)
        }
    }

    var timeSeriesHint: String {
        let layers = snapshot.timeSeriesByLayer.keys.sorted()
        return layers.isEmpty ? "the store has no time series" : "time series belong to \(layers.joined(separator: ", "))"
    }

    func timeSeries(_ column: Name, on layer: Layer) throws(QueryError) -> (TimeSeries, @Sendable (Int) -> String?, Int) {
        guard let series = snapshot.timeSeriesByLayer[layer.name] else {
            throw Planner.error(.invalid, "no_time_series", "'\(layer.name)' has no time series", at: column.position, hint: timeSeriesHint)
        }
        guard let index = series.columns.firstIndex(of: column.text) else {
            let hint = Suggestion.closest(to: column.text, in: series.columns).map { "did you mean '\($0)'?" }
                ?? "its columns: \(series.columns.joined(separator: ", "))"
            throw Planner.error(.invalid, "unknown_field", "the time series of '\(layer.name)' has no column \(Quote.input(column.text))", at: column.position, hint: hint)
        }
        let key = series.link.layerKeyColumn
        return (series, { i in layer.properties[i][key]?.stringValue }, index)
    }

    var networkHint: String {
        let lines = snapshot.layers.filter { $0.family == .lines }.map(\.name)
        return lines.isEmpty ? "the store has no line layers" : "networks: \(lines.joined(separator: ", "))"
    }
}

/// Case- and diacritics-insensitive text for `~`: 'Břevnov' and 'BREVNOV' both fold to 'brevnov'.
enum TextFold {
    /// The same fold as `~ CZECH` (a table for Latin letters, built once).
    static func fold(_ text: String) -> String { CzechStemmer.fold(text) }
}
