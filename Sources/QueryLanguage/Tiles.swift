// TILE and FIND … OF a tile set: what the map holds, read from a registered MBTiles set
// (docs/QUERY_LANGUAGE.md, "Tiles"). The statements' syntax, parsing, planning and running, in
// one place; decoding the tiles is the VectorTiles module's.

import Engine
import Geometry
import Store
import Support
import VectorTiles

/// `TILE z/x/y OF tileset [LAYER name] [WHERE …] [LIMIT n] [RETURN …]`
struct TileStatement: Sendable, Equatable {
    var z: Int, x: Int, y: Int
    var position: SourcePosition
    var tileSet: Name
    var layer: Name?
    var filter: Expression?
    var limit: Int?
    var fields: [FieldExpression] = []
}

extension Parser {
    mutating func tile() throws(QueryError) -> TileStatement {
        let start = tokens[index].position
        let (z, _) = try integer("the zoom of z/x/y", in: 0...30)
        try expect(symbol: "/", "between z and x (TILE z/x/y)")
        let (x, _) = try integer("the column x of z/x/y", in: 0...Int(1 << 30))
        try expect(symbol: "/", "between x and y (TILE z/x/y)")
        let (y, yPosition) = try integer("the row y of z/x/y", in: 0...Int(1 << 30))
        let size = 1 << z
        let end = yPosition.column + yPosition.length
        let position = SourcePosition(line: start.line, column: start.column, length: max(1, end - start.column))
        guard x < size, y < size else {
            throw invalid("tile \(z)/\(x)/\(y) does not exist: at zoom \(z), x and y run from 0 to \(size - 1)", at: position)
        }
        try expect("OF", "and a tile set after the tile (TILE z/x/y OF tileset)")
        var statement = TileStatement(z: z, x: x, y: y, position: position, tileSet: try name("a tile set name after OF"))
        if accept("LAYER") { statement.layer = try name("a tile layer name after LAYER") }
        if accept("WHERE") { statement.filter = try expression() }
        if accept("LIMIT") { statement.limit = try integer("a row count after LIMIT", in: 0...1_000_000).0 }
        if accept("RETURN") {
            repeat { statement.fields.append(try fieldExpression()) } while accept(symbol: ",")
        }
        return statement
    }
}

struct TilesPlan: Sendable {
    var snapshot: Snapshot
    var limit: Int?
    var tileSet: any TileArchive
    var tileSetName: String
    var layers: [String]?
    var point: PointLiteral
    var zoom: Int
    var filter: Expression?
    var fields: [FieldExpression]
}

extension Planner {
    func tileSet(_ name: Name) throws(QueryError) -> any TileArchive {
        if let reason = snapshot.unavailableTileSets[name.text] {
            throw Runner.engineError(.tileSetUnavailable(name.text, reason: reason), at: name.position)
        }
        guard let tiles = snapshot.tileSets[name.text] else {
            let known = snapshot.tileSets.keys.sorted()
            let hint = Suggestion.closest(to: name.text, in: known).map { "did you mean '\($0)'?" }
                ?? (known.isEmpty ? "the store has no tile sets; register one with vltava import FILE.mbtiles --layer NAME (or FILE.pmtiles)" : "tile sets: \(known.joined(separator: ", "))")
            throw QueryError(kind: .notFound, code: "unknown_tileset", message: "unknown tile set \(Quote.input(name.text))", line: name.position.line,
                             column: name.position.column, length: name.position.length, hint: hint)
        }
        return tiles
    }

    func planTiles(_ find: Find) throws(QueryError) -> TilesPlan {
        guard let name = find.tileSet else { throw Planner.error(.syntax, "syntax_error", "missing tile set", at: find.layers[0].position) }
        let tiles = try tileSet(name)
        guard case .atZoom(let point, let zoom)? = find.spatial else {
            throw Planner.error(.syntax, "syntax_error", "FIND … OF a tile set needs AT POINT(lon lat) ZOOM z", at: name.position,
                                hint: "FIND * OF \(name.text) AT POINT(14.4049 50.1154) ZOOM 16")
        }
        guard find.linked == nil, find.order.isEmpty else {
            throw Planner.error(.syntax, "syntax_error", "FIND … OF a tile set takes AT … ZOOM, WHERE, LIMIT and RETURN only", at: name.position)
        }
        let layers = find.layers.first?.text == "*" ? nil : find.layers.map(\.text)
        try Planner.refuseReferences(find.fields, find.filter)
        return TilesPlan(snapshot: snapshot, limit: find.limit, tileSet: tiles, tileSetName: name.text, layers: layers, point: point, zoom: zoom, filter: find.filter, fields: find.fields)
    }
}

extension Runner {
    func tilesAt(_ plan: TilesPlan, at position: SourcePosition) throws(QueryError) -> QueryResult {
        var found: [TileFeature]
        do {
            found = try plan.snapshot.tileFeatures(plan.tileSet, at: plan.point.point, zoom: plan.zoom)
        } catch {
            throw Runner.engineError(error, at: position)
        }
        if let layers = plan.layers { found = found.filter { layers.contains($0.layer) } }
        return try tileRows(found, filter: plan.filter, fields: plan.fields, limit: plan.limit, maxRows: plan.snapshot.limits.maxRows, at: position)
    }

    func tile(_ tile: TileStatement, _ tiles: any TileArchive, _ snapshot: Snapshot) throws(QueryError) -> QueryResult {
        let found: [TileFeature]?
        do {
            found = try snapshot.tileFeatures(tiles, z: tile.z, x: tile.x, y: tile.y, layer: tile.layer?.text)
        } catch {
            throw Runner.engineError(error, at: tile.position)
        }
        guard let found else {
            throw Planner.error(.notFound, "unknown_tile", "tile set \(Quote.input(tile.tileSet.text)) has no tile \(tile.z)/\(tile.x)/\(tile.y)", at: tile.position,
                                hint: tiles.minZoom.map { min in "its zooms run from \(min) to \(tiles.maxZoom ?? min)" })
        }
        return try tileRows(found, filter: tile.filter, fields: tile.fields, limit: tile.limit, maxRows: snapshot.limits.maxRows, at: tile.position)
    }

    /// Tile features as rows: tile_layer, id, geometry type and properties. WHERE and RETURN
    /// read the properties by name (a tile has no schema to check them against); the tile layer's
    /// name is `tile_layer`, so a feature's own `layer` property (OSM's) stays readable.
    func tileRows(_ features: [TileFeature], filter: Expression?, fields: [FieldExpression], limit: Int?, maxRows: Int,
                  at position: SourcePosition) throws(QueryError) -> QueryResult {
        func value(_ field: FieldExpression, _ item: TileFeature) -> AttributeValue {
            guard case .attribute(let name) = field else { return .null }
            switch name.text {
            case "tile_layer": return .text(item.layer)
            case "type": return .text(item.feature.geometry?.typeName ?? "none")
            case "id", "fid":
                if case .integer(let i)? = item.feature.id { return .integer(i) }
                // GeoJSON tiles keep the OSM id among the properties.
                return item.feature.id.map { .text($0.description) } ?? item.feature.properties[name.text] ?? .null
            default: return item.feature.properties[name.text] ?? .null
            }
        }
        func test(_ expression: Expression, _ item: TileFeature) throws(QueryError) -> Bool {
            switch expression {
            case .and(let terms):
                for term in terms where !(try test(term, item)) { return false }
                return true
            case .or(let terms):
                for term in terms where try test(term, item) { return true }
                return false
            case .not(let a):
                let inner = try test(a, item)
                return !inner
            case .compare(let field, let comparison, let literal, _): return Planner.compare(value(field, item), comparison, literal)
            case .isIn(let field, let literals, let negated):
                let v = value(field, item)
                return literals.contains { Planner.compare(v, .equal, $0) } != negated
            case .isNull(let field, let negated): return value(field, item).isNull != negated
            case .matches(let field, let pattern):
                return value(field, item).stringValue.map { TextFold.fold($0).contains(TextFold.fold(pattern)) } ?? false
            case .matchesCzech(let field, let text):
                return value(field, item).stringValue.map { CzechStemmer.Pattern(text).matches($0) } ?? false
            case .like(let field, let pattern, let negated):
                return value(field, item).stringValue.map { LikePattern(pattern).matches($0) != negated } ?? false
            case .instant(let field, let comparison, let time):
                return value(field, item).stringValue.flatMap(UTCTime.parse).map { comparison.holds($0, time) } ?? false
            case .spatial:
                throw Planner.error(.invalid, "unsupported_condition", "a tile's features are tested by their properties", at: position)
            case .measures(let name):
                throw Planner.error(.invalid, "no_time_series", "tile features have no time series", at: name.position)
            case .fresh(_, let position):
                throw Planner.error(.invalid, "no_time_series", "tile features have no time series", at: position)
            }
        }
        // RETURN * is every column; a tile's rows have properties, not aggregates or geometry text.
        let fields = fields.allSatisfy { if case .star = $0 { true } else { false } } ? [] : fields
        if let other = fields.first(where: { if case .attribute = $0 { false } else { true } }) {
            throw Planner.error(.invalid, "unsupported_field", "\(Planner.written(other)) does not apply to a tile's features: RETURN names their properties",
                                at: other.position, hint: "aggregates and WKT work in FIND over a layer of the store")
        }
        var kept: [TileFeature] = []
        for (i, item) in features.enumerated() {
            try checkDeadline(i, at: position)
            if try filter.map({ expression throws(QueryError) in try test(expression, item) }) ?? true { kept.append(item) }
        }
        if let limit, kept.count > limit { kept.removeLast(kept.count - limit) }
        guard kept.count <= maxRows else { throw Runner.engineError(.tooManyRows(count: kept.count, limit: maxRows), at: position) }
        let columns: [String]
        let values: [[JSONValue]]
        if fields.isEmpty {
            columns = ["tile_layer", "id", "type", "properties"]
            values = kept.map { item in
                [.string(item.layer), Runner.json(value(.attribute(Name(text: "id", position: .init(line: 0, column: 0, length: 0))), item)),
                 .string(item.feature.geometry?.typeName ?? "none"),
                 .object(JSONObject(item.feature.properties.map { ($0.0, Runner.json($0.1)) }))]
            }
        } else {
            columns = fields.map(\.label)
            values = kept.map { item in fields.map { Runner.json(value($0, item)) } }
        }
        return QueryResult(body: .rows(.init(columns: columns, values: values, geometries: kept.map(\.feature.geometry))))
    }
}
