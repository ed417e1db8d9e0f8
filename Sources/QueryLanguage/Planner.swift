// The planner: a parsed statement → a plan bound to one snapshot. Names are resolved, fields
// typed and WHERE compiled into closures here, so running a plan does no lookups by name and
// reports every mistake with its position before any work starts.

import Foundation
import Engine
import Geometry
import Store
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
        case describeTileSet(String, MBTiles)
        case find(FindPlan)
        case tilesAt(TilesPlan)
        case route(RoutePlan)
        case tile(TileStatement, MBTiles, Snapshot)
        case locate(LocatePlan)
        /// Made only through an engine (`Query.result(of:…)`); planned here for EXPLAIN.
        case write(WritePlan)
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

    // MARK: FIND

    func planFind(_ find: Find) throws(QueryError) -> FindPlan {
        var layers: [Layer] = []
        for name in find.layers {
            let layer = try self.layer(name)
            guard !layers.contains(where: { $0 === layer }) else {
                throw Planner.error(.syntax, "duplicate_layer", "layer '\(layer.name)' is named twice", at: name.position)
            }
            try checkSpatial(find.spatial, on: layer, name: name)
            layers.append(layer)
        }
        let hasDistance: Bool
        switch find.spatial {
        case .nearest?, .within?, .nearestFeatures?, .withinFeatures?, .withinReach?: hasDistance = true
        default: hasDistance = false
        }
        // `WITHIN d OF (pavilions WHERE …)`: the selected features' geometries, measured from.
        var targets: [Geometry] = []
        switch find.spatial {
        case .nearestFeatures(_, let selection, _)?, .withinFeatures(_, let selection)?: targets = try inMemory.select(selection)
        default: break
        }
        // Fields the WHERE, ORDER BY and RETURN name must exist in at least one layer.
        var named: [FieldExpression] = find.fields + find.order.map(\.field) + find.groupBy
        if let filter = find.filter { Planner.fields(in: filter, into: &named) }
        if let having = find.having { Planner.fields(in: having, into: &named) }
        for field in named { try checkField(field, in: layers, hasDistance: hasDistance) }

        // Every column of the layers: without RETURN, or where RETURN says * (listed only then:
        // it is quadratic in the columns, and most statements name their fields).
        var all: [String] = []
        if find.fields.isEmpty || find.fields.contains(where: { if case .star = $0 { true } else { false } }) {
            all = layers.count > 1 ? ["layer", "fid"] : ["fid"]
            for layer in layers {
                for column in layer.info.columns where !all.contains(column.name) { all.append(column.name) }
            }
            if hasDistance { all.append("distance_m") }
        }
        var fields = all.isEmpty ? find.fields : try expandStar(find.fields, into: all, grouped: !find.groupBy.isEmpty)
        // A grouped FIND without RETURN answers its groups and their sizes.
        if fields.isEmpty && Planner.isGrouped(find) { fields = find.groupBy + [.aggregate(.count, nil, position: find.layers[0].position)] }
        let columns = fields.isEmpty ? all : fields.map(\.label)
        let link = try find.linked.map { selection throws(QueryError) in try inMemory.planLink(selection, for: layers) }

        let groups = try planGroups(find, fields: fields, layers: layers)
        let grouped = groups != nil
        if let limit = find.limit, limit > limits.maxRows {
            throw Planner.error(.limit, "limit_exceeded", "LIMIT \(limit) is above the largest answer allowed, \(limits.maxRows) rows",
                                at: find.limitPosition ?? SourcePosition(line: 1, column: 1, length: 1))
        }
        // Rows fetched for this answer, and whether SQL applied the whole WHERE to them.
        let whereApplied = Dictionary(fetched.values.map { (ObjectIdentifier($0.rows), $0.whereApplied) }, uniquingKeysWith: { a, _ in a })
        var pushed: [PushedSelection?]?
        if snapshot.database != nil {
            var selections: [PushedSelection?] = []
            for layer in layers {
                selections.append(whereApplied[ObjectIdentifier(layer)] != nil ? nil
                                  : try Pushdown.compile(find, layer: layer, layerCount: layers.count, snapshot: snapshot))
            }
            pushed = selections
        }
        var sources: [Source] = []
        var sqlDecides = self
        sqlDecides.wherePushedDown = true
        for (n, layer) in layers.enumerated() {
            // Where SQL decides the whole WHERE, its predicate is compiled but never called, and
            // rows fetched with it applied need none. Where SQL checked only part of it
            // (`relaxed`), the engine's predicate decides, compiled as anywhere outside a FIND
            // (series read for every station). On a GeoPackage, the engine decides as always.
            let pushedDown = pushed?[n].map { !$0.relaxed } ?? false
            let where_ = whereApplied[ObjectIdentifier(layer)] == true ? nil : find.filter
            let predicates = pushedDown ? sqlDecides : snapshot.database != nil ? inMemory : self
            var filter: Predicate? = try where_.map { expression throws(QueryError) in try predicates.compile(expression, on: layer) }
            if let link = link?.filters[ObjectIdentifier(layer)] {
                let inner = filter
                filter = inner.map { inner in { @Sendable i in link(i) && inner(i) } } ?? link
            }
            let fields: [FieldExpression] = fields.isEmpty ? columns.map { .attribute(Name(text: $0, position: SourcePosition(line: 0, column: 0, length: 0))) } : fields
            sources.append(Source(layer: layer, filter: filter,
                                  accessors: grouped ? [] : try fields.map { field throws(QueryError) in try accessor(field, on: layer) },
                                  orderAccessors: grouped ? [] : try find.order.map { key throws(QueryError) in try accessor(key.field, on: layer) }))
        }
        return FindPlan(snapshot: snapshot, sources: sources, spatial: find.spatial, targets: targets, columns: columns,
                        order: find.order.map { ($0.descending, $0.field.label == "distance_m", $0.nullsFirst) },
                        limit: find.limit, linkNote: link?.note, groups: groups, warnings: spatialWarnings(find.spatial), pushed: pushed,
                        refetch: layers.contains(where: \.fetchesRows) ? find : nil, series: answers.isEmpty ? nil : answers)
    }

    func checkSpatial(_ spatial: Spatial?, on layer: Layer, name: Name) throws(QueryError) {
        guard let spatial else { return }
        let clause: String
        switch spatial {
        case .containing:
            guard layer.family == .polygons || layer.family == .mixed else {
                clause = "CONTAINING needs polygons; '\(layer.name)' holds \(layer.family == .table ? "no geometries (it is a table)" : layer.family.rawValue)"
                break
            }
            return
        case .nearest, .within, .intersecting, .nearestFeatures, .withinFeatures, .withinReach:
            guard layer.family == .table else { return }
            clause = "'\(layer.name)' is a table without geometries"
        case .atZoom:
            clause = "AT … ZOOM applies to tile sets: FIND layer OF tileset AT POINT(lon lat) ZOOM z"
        }
        throw Planner.error(.invalid, "unsupported_geometry", clause, at: name.position,
                            hint: layer.family == .table ? "find its features through LINKED TO (layer WHERE …)" : nil)
    }

    static func fields(in expression: Expression, into fields: inout [FieldExpression]) {
        switch expression {
        case .and(let terms), .or(let terms):
            for term in terms { Planner.fields(in: term, into: &fields) }
        case .not(let a): Planner.fields(in: a, into: &fields)
        case .compare(let field, _, _, _), .isIn(let field, _, _), .isNull(let field, _), .matches(let field, _), .matchesCzech(let field, _):
            fields.append(field)
        case .measures, .fresh: break
        }
    }

    static let pseudoFields = ["fid", "layer", "distance_m"]

    func checkField(_ field: FieldExpression, in layers: [Layer], hasDistance: Bool) throws(QueryError) {
        switch field {
        case .reference(let reference, let inner):
            return try checkReference(reference, inner)
        case .aggregate(_, let argument?, _), .quantified(_, let argument, _):
            return try checkField(argument, in: layers, hasDistance: hasDistance)
        case .geometryText(_, let position):
            guard layers.contains(where: { $0.family != .table }) else {
                throw Planner.error(.invalid, "unsupported_geometry", "\(layers.map { "'\($0.name)'" }.joined(separator: ", ")) has no geometries", at: position)
            }
            return
        default: break
        }
        guard case .attribute(let name) = field else { return }
        if name.text == "distance_m" {
            guard hasDistance else {
                throw Planner.error(.invalid, "unknown_field", "distance_m exists only with NEAREST or WITHIN", at: name.position)
            }
            return
        }
        if Planner.pseudoFields.contains(name.text) { return }
        guard !layers.contains(where: { layer in layer.info.columns.contains { $0.name == name.text } }) else { return }
        let all = layers.flatMap { $0.info.columns.map(\.name) }
        let hint = Suggestion.closest(to: name.text, in: all + Planner.pseudoFields).map { "did you mean '\($0)'?" }
            ?? "fields of \(layers.map { "'\($0.name)'" }.joined(separator: ", ")): \(Array(Set(all)).sorted().prefix(12).joined(separator: ", "))"
        throw Planner.error(.invalid, "unknown_field", "no field \(Quote.input(name.text)) in \(layers.map { "'\($0.name)'" }.joined(separator: " or "))", at: name.position, hint: hint)
    }

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

    // MARK: WHERE

    func compile(_ expression: Expression, on layer: Layer) throws(QueryError) -> Predicate {
        switch expression {
        case .and(let terms):
            var all: [Predicate] = []
            for term in terms { all.append(try compile(term, on: layer)) }
            let predicates = all
            return { i in predicates.allSatisfy { $0(i) } }
        case .or(let terms):
            var any: [Predicate] = []
            for term in terms { any.append(try compile(term, on: layer)) }
            let predicates = any
            return { i in predicates.contains { $0(i) } }
        case .not(let a):
            let x = try compile(a, on: layer)
            return { !x($0) }
        case .compare(let field, let comparison, let literal, _):
            try checkComparison(field, literal, comparison, on: layer)
            if case .quantified(let quantifier, let list, _) = field {
                return try quantifiedPredicate(quantifier, list, comparison, literal, on: layer)
            }
            let value = try accessor(field, on: layer)
            return { Planner.compare(value($0), comparison, literal) }
        case .isIn(let field, let literals, let negated):
            for literal in literals { try checkComparison(field, literal, .equal, on: layer) }
            let value = try accessor(field, on: layer)
            return { i in
                let v = value(i)
                return literals.contains { Planner.compare(v, .equal, $0) } != negated
            }
        case .isNull(let field, let negated):
            let value = try accessor(field, on: layer)
            return { value($0).isNull != negated }
        case .matches(let field, let pattern):
            try checkMatch(field, on: layer)
            let value = try accessor(field, on: layer)
            let folded = TextFold.fold(pattern)
            return { i in value(i).stringValue.map { TextFold.fold($0).contains(folded) } ?? false }
        case .matchesCzech(let field, let text):
            try checkMatch(field, on: layer)
            let value = try accessor(field, on: layer)
            let pattern = CzechStemmer.Pattern(text)
            return { i in value(i).stringValue.map { pattern.matches($0) } ?? false }
        case .measures(let column):
            let (stored, keyOf, _) = try timeSeries(column, on: layer)
            if wherePushedDown { return { _ in false } }  // never called: the database decides (Pushdown.swift)
            let series = snapshot.readsSeriesFromStore ? try everyStation(stored, on: layer, needs: SeriesNeeds(columns: [column.text]), at: column.position) : stored
            let name = column.text
            return { i in keyOf(i).map { series.measures($0, name) } ?? false }
        case .fresh(let hours, let position):
            guard let stored = snapshot.timeSeriesByLayer[layer.name] else {
                throw Planner.error(.invalid, "no_time_series", "'\(layer.name)' has no time series", at: position, hint: timeSeriesHint)
            }
            if wherePushedDown { return { _ in false } }  // never called: the database decides (Pushdown.swift)
            // The newest observation of every key of the table counts (not only the layer's).
            if snapshot.readsSeriesFromStore {
                throw Runner.engineError(.notSupportedOnPostGIS("FRESH outside a FIND's WHERE (a route's FROM or TO)"), at: position)
            }
            let series = stored
            let newest = series.keys.compactMap { series.observations(of: $0).last?.end }.max() ?? UTCTime(seconds: 0)
            let maxAge = Int64(hours * 3600)
            let key = series.link.layerKeyColumn
            return { i in
                guard let code = layer.properties[i][key]?.stringValue else { return false }
                return !series.isStale(code, now: newest, maxAge: maxAge)
            }
        }
    }

    static func compare(_ value: AttributeValue, _ comparison: Comparison, _ literal: Literal) -> Bool {
        let order: Int
        switch (value, literal) {
        case (.integer, .number(let n)), (.real, .number(let n)):
            guard let v = value.doubleValue else { return false }
            order = v < n ? -1 : v > n ? 1 : 0
        case (.bool(let b), .bool(let l)):
            order = b == l ? 0 : (!b ? -1 : 1)
        case (.integer(let i), .bool(let l)):
            order = (i != 0) == l ? 0 : 1
        case (.text(let s), .text(let l)), (.json(let s), .text(let l)):
            order = s < l ? -1 : s > l ? 1 : 0
        default:
            return false
        }
        switch comparison {
        case .equal: return order == 0
        case .notEqual: return order != 0
        case .less: return order < 0
        case .lessOrEqual: return order <= 0
        case .greater: return order > 0
        case .greaterOrEqual: return order >= 0
        }
    }

    // MARK: LINKED TO

    /// Two layers are linked when one holds lists of the other's feature ids (the animals'
    /// `location_ids` name pens and pavilions). The link works both ways.
    func planLink(_ selection: Selection, for layers: [Layer]) throws(QueryError) -> (filters: [ObjectIdentifier: Predicate], note: String) {
        let other = try layerInMemory(selection.layer)
        let otherFilter = try selection.filter.map { expression throws(QueryError) in try inMemory.compile(expression, on: other) }
        let selected = (0..<other.count).filter { otherFilter?($0) ?? true }
        var filters: [ObjectIdentifier: Predicate] = [:]
        var notes: [String] = []
        for layer in layers {
            if let (column, lists) = other.idList {
                // The other side lists our ids: keep our features it names.
                var ids = Set<Int64>()
                for i in selected { ids.formUnion(lists[i]) }
                let wanted = ids
                filters[ObjectIdentifier(layer)] = { wanted.contains(layer.fids[$0]) }
                notes.append("\(other.name).\(column) → \(layer.name).fid")
            } else if let (column, lists) = layer.idList {
                // We list the other side's ids: keep our features that name a selected one.
                let wanted = Set(selected.map { other.fids[$0] })
                filters[ObjectIdentifier(layer)] = { i in lists[i].contains { wanted.contains($0) } }
                notes.append("\(layer.name).\(column) → \(other.name).fid")
            } else {
                throw Planner.error(.invalid, "not_linked", "'\(layer.name)' and '\(other.name)' are not linked: neither holds a list of the other's feature ids",
                                    at: selection.layer.position)
            }
        }
        return (filters, notes.joined(separator: ", "))
    }

    var networkHint: String {
        let lines = snapshot.layers.filter { $0.family == .lines }.map(\.name)
        return lines.isEmpty ? "the store has no line layers" : "networks: \(lines.joined(separator: ", "))"
    }

    func select(_ selection: Selection) throws(QueryError) -> [Geometry] {
        let (layer, indices) = try selectIndices(selection)
        return indices.compactMap { layer.geometries[$0] }
    }

    /// The selection's layer and the indices of its features that match, in load order.
    func selectIndices(_ selection: Selection) throws(QueryError) -> (Layer, [Int]) {
        let layer = try layerInMemory(selection.layer)
        guard layer.family != .table else {
            throw Planner.error(.invalid, "unsupported_geometry", "'\(layer.name)' is a table without geometries", at: selection.layer.position)
        }
        let planner = inMemory
        var filter = try selection.filter.map { expression throws(QueryError) in try planner.compile(expression, on: layer) }
        if let linked = selection.linked.first, let link = try planner.planLink(linked, for: [layer]).filters[ObjectIdentifier(layer)] {
            let inner = filter
            filter = { i in link(i) && (inner?(i) ?? true) }
        }
        return (layer, layer.indices.filter { filter?($0) ?? true })
    }

    // MARK: EXPLAIN

    func describe(_ statement: Statement, _ planned: PlannedStatement) -> [String] {
        switch planned.step {
        case .find(let plan):
            var lines: [String] = []
            for (n, source) in plan.sources.enumerated() {
                let layer = source.layer
                let access: String
                switch plan.spatial {
                case .containing?: access = "point-in-polygon on the polygon grid index (exact test on flat rings, half-open boundary rule), smallest area first"
                case .nearest(let k, _, let within)?:
                    access = (layer.family == .points ? "best-first k-nearest on the k-d tree of unit vectors (exact chord distance)"
                                                      : "best-first k-nearest on the packed Hilbert R-tree (exact distance to each geometry)")
                        + ", k = \(k)" + (within.map { ", within \(Parser.format($0)) m" } ?? "")
                case .within(let metres, _)?:
                    access = (layer.family == .points ? "k-d tree" : "packed Hilbert R-tree") + " range search, \(Parser.format(metres)) m, nearest first"
                case .nearestFeatures(let k, let selection, let within)?:
                    access = "best-first k-nearest on the packed Hilbert R-tree, measured to the nearest point of \(plan.targets.count) '\(selection.layer.text)' feature\(plan.targets.count == 1 ? "" : "s")"
                        + ", k = \(k)" + (within.map { ", within \(Parser.format($0)) m" } ?? "")
                case .withinFeatures(let metres, let selection)?:
                    access = "packed Hilbert R-tree range search, \(Parser.format(metres)) m of the nearest point of \(plan.targets.count) '\(selection.layer.text)' feature\(plan.targets.count == 1 ? "" : "s"), nearest first"
                case .withinReach(let limit, _, _)?:
                    let bound: String
                    switch limit {
                    case .seconds(let s): bound = "\(Parser.format(s)) s on foot"
                    case .metres(let m): bound = "\(Parser.format(m)) m on foot"
                    }
                    access = "a walk within \(bound): one bounded Dijkstra over the walking network, each feature joined to its nearest path, nearest first"
                case .intersecting?: access = "packed Hilbert R-tree bounding-box search"
                case .atZoom?, nil: access = "full scan in load order (no spatial clause)"
                }
                lines.append("\(n + 1). \(layer.name) (\(layer.rowCount) \(layer.family == .table ? "rows" : "features, \(layer.family.rawValue)")): \(access)")
            }
            if let note = plan.linkNote { lines.append("   link: \(note)") }
            if case .find(let find) = statement {
                lines.append("   where: " + (find.filter == nil ? "none" : "compiled per layer, tested on the index's candidates"))
                if let groups = plan.groups {
                    let keys = find.groupBy.isEmpty ? "one group of every row" : "groups by " + find.groupBy.map(Planner.written).joined(separator: ", ") + " (hashed)"
                    lines.append("   group: \(keys), \(groups.aggregates.count) aggregate\(groups.aggregates.count == 1 ? "" : "s") accumulated in one pass"
                                 + (find.having == nil ? "" : ", HAVING tested per group"))
                }
                lines.append("   order: " + (find.order.isEmpty ? (plan.groups == nil ? "the spatial clause's order, else load order" : "the group keys") : find.order.map { $0.field.label + ($0.descending ? " DESC" : "") }.joined(separator: ", ")))
                lines.append("   limit: " + (find.limit.map(String.init) ?? "none (at most \(limits.maxRows) rows)"))
            }
            return lines
        case .tilesAt(let plan):
            return ["1. tile set \(plan.tileSetName): the tile at zoom \(plan.zoom) holding the point, decoded, then features containing it (polygons) or within 8 pixels (points, lines)"]
        case .route(let plan) where plan.trip != nil:
            let count = plan.trip?.request.points.count ?? 0
            return ["1. network \(plan.network.layerName): \(plan.network.graph.nodeCount) nodes, \(plan.network.graph.edgeCount) directed edges",
                    "   table: \(count) × \(count) walking distances between the start, the stops and the end, on the contraction hierarchy (buckets)",
                    "   order: " + (count <= TripRequest.exactLimit ? "Held–Karp dynamic programming over subsets (exact)"
                                                                   : "nearest neighbour, then 2-opt and Or-opt with restarts (a heuristic, with a lower bound)"),
                    "   legs: one route per pair of consecutive stops, as ROUTE walks them"]
        case .route(let plan):
            return ["1. network \(plan.network.layerName): \(plan.network.graph.nodeCount) nodes, \(plan.network.graph.edgeCount) directed edges",
                    "   snap: each end to the nearest point of the nearest path (R-tree over edges), at most \(Rounding.wholeMetres(limits.defaultSnapMetres)) m",
                    // AVOID changes edge weights per query, which the hierarchy cannot take: A* then.
                    (plan.request.avoid.isEmpty
                        ? "   search: contraction hierarchy (\(plan.network.hierarchy(for: plan.request.profile).shortcutCount) shortcuts), both ends upwards, shortcuts unpacked"
                        : "   search: A* with ALT landmark bounds, edges inside the AVOID polygons forbidden")
                        + (plan.request.profile.avoidsSteps ? ", profile \(plan.request.profile.rawValue): the \(plan.network.steps.count) step edges " + (plan.request.avoid.isEmpty ? "left out of it" : "forbidden") : "")]
        case .tile(let tile, _, _):
            return ["1. tile \(tile.z)/\(tile.x)/\(tile.y): one row of the MBTiles tiles table (TMS row flipped), decoded"]
        case .locate(let plan):
            let venue = plan.venue
            let kind = plan.options.fingerprints
            let space = venue.locator.space
            let head = "1. venue \(venue.name): \(venue.venue.beacons.count) beacons, \(venue.venue.scans.count) survey scans at \(venue.venue.points.count) points; \(venue.venue.model.representation.rawValue), unheard = \(space.unheard) dBm"
            let (method, k) = plan.options.resolved(for: venue.venue)
            if let track = plan.track {
                return [head, "   track: \(track.scans.count) scans, a hidden Markov model over \(venue.locator.cells.cells.count) cells, moves of about \(track.options.speed) frame units a second",
                        "   estimate: forward-backward, each scan from its \(track.options.k) most probable cells"]
            }
            switch method {
            case .gaussian:
                return [head, "   model: a Gaussian per beacon and cell with P(heard), \(venue.locator.cells.cells.count) cells" + (venue.locator.cells.side.map { " of \($0) (frame units)" } ?? " (the points)"),
                        "   estimate: the \(k) likeliest cells, weighted by likelihood"]
            case .knn, .wknn:
                return [head, "   fingerprints: \(kind.rawValue), \(venue.distinctFingerprints(kind)) distinct vectors in a k-d tree (Euclidean)",
                        "   estimate: \(method == .wknn ? "weighted by 1/signal distance" : "mean") of the \(k) nearest"]
            case .ensemble:
                return [head, "   estimate: per axis the median of wknn over the scans, wknn over the points' mean fingerprints and the gaussian, k = \(k)"]
            }
        case .showLayers, .describeLayer, .describeTileSet:
            return ["1. read from the loaded snapshot; no index"]
        case .write(let plan):
            return plan.lines
        case .explain:
            return []
        }
    }
}

/// Case- and diacritics-insensitive text for `~`: 'Břevnov' and 'BREVNOV' both fold to 'brevnov'.
enum TextFold {
    /// The same fold as `~ CZECH` (a table for Latin letters, built once).
    static func fold(_ text: String) -> String { CzechStemmer.fold(text) }
}
