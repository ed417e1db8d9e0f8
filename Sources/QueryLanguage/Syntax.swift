import Engine
import Geometry
import Support

// The syntax tree: what the parser hands the planner. Every node that a later error can be
// about keeps its source position.

struct Name: Sendable, Equatable {
    var text: String
    var position: SourcePosition
}

struct PointLiteral: Sendable, Equatable {
    var lon: Double
    var lat: Double
    var position: SourcePosition

    var point: Point { Point(lon: lon, lat: lat) }
}

enum Statement: Sendable, Equatable {
    case showLayers
    case describe(Name)
    case find(Find)
    case route(RouteStatement)
    case tile(TileStatement)
    case locate(LocateStatement)
    /// INSERT, UPDATE, DELETE (Writes.swift).
    case write(WriteStatement)
    /// SHOW FENCES, CREATE FENCE, DROP FENCE (Fences.swift).
    case fence(FenceStatement)
    /// A statement in a file of its own (Statements.swift): SEARCH.
    case other(any StatementSyntax)
    indirect case explain(Statement)

    static func == (a: Statement, b: Statement) -> Bool {
        switch (a, b) {
        case (.showLayers, .showLayers): true
        case (.describe(let x), .describe(let y)): x == y
        case (.find(let x), .find(let y)): x == y
        case (.route(let x), .route(let y)): x == y
        case (.tile(let x), .tile(let y)): x == y
        case (.locate(let x), .locate(let y)): x == y
        case (.write(let x), .write(let y)): x == y
        case (.fence(let x), .fence(let y)): x == y
        case (.other(let x), .other(let y)): x.isEqual(to: y)
        case (.explain(let x), .explain(let y)): x == y
        default: false
        }
    }
}

/// `FIND layers [OF tileset] [spatial] [LINKED TO (…)] [WHERE …] [ORDER BY …] [LIMIT n] [RETURN …]`
struct Find: Sendable, Equatable {
    var layers: [Name]
    /// `OF tileset`: the layers are layers of a tile set (`*` for all of them).
    var tileSet: Name?
    var spatial: Spatial?
    var linked: Selection?
    var filter: Expression?
    var order: [OrderKey] = []
    var limit: Int?
    var limitPosition: SourcePosition?
    var fields: [FieldExpression] = []
    /// `GROUP BY field, …` and `HAVING condition` (Aggregates.swift).
    var groupBy: [FieldExpression] = []
    var having: Expression?
}

enum Spatial: Sendable, Equatable {
    case containing(PointLiteral)
    case nearest(k: Int, point: PointLiteral, withinMetres: Double?)
    case within(metres: Double, point: PointLiteral)
    /// `WITHIN d OF (layer WHERE …)`: measured to the nearest point of each selected feature.
    case withinFeatures(metres: Double, Selection)
    /// `WITHIN REACH 15 min FROM POINT(…)` (or `2 km`): what a walk from the point reaches.
    case withinReach(IsochroneRequest.Limit, from: PointLiteral, position: SourcePosition)
    /// `NEAREST k TO (layer WHERE …)`
    case nearestFeatures(k: Int, Selection, withinMetres: Double?)
    case intersecting(minLon: Double, minLat: Double, maxLon: Double, maxLat: Double, position: SourcePosition)
    /// `AT point ZOOM z`, for tile sets.
    case atZoom(PointLiteral, zoom: Int)
}

/// `(layer [WHERE …])`: the other side of a join, or a route's target.
struct Selection: Sendable, Equatable {
    var layer: Name
    var filter: Expression?
    /// `LINKED TO (…)` on a route's target: at most one (an array, since a struct cannot hold
    /// an optional of itself).
    var linked: [Selection] = []
}

struct OrderKey: Sendable, Equatable {
    var field: FieldExpression
    var descending: Bool
    /// `NULLS FIRST` / `NULLS LAST`; missing values go last by default, in both directions.
    var nullsFirst: Bool = false
}

/// A field of a feature, or a function of its time series.
enum FieldExpression: Sendable, Equatable {
    case attribute(Name)
    /// `LATEST(no2)`: the newest value of a time-series column.
    case latest(Name, position: SourcePosition)
    /// `HISTORY(no2, 24 h)`: that column's values over the last hours of the series.
    case history(Name, hours: Int, position: SourcePosition)
    /// `OBSERVED_AT`: when the newest observation of the feature ended.
    case observedAt(SourcePosition)
    /// `(districts CONTAINING).NAZEV_MC`: a field of a feature of another layer.
    indirect case reference(FeatureReference, FieldExpression)
    /// `COUNT(*)` (argument nil), `COUNT(x)`, `SUM`, `AVG`, `MIN`, `MAX`: over the rows of a
    /// group, or over the values of a list (`AVG(HISTORY(no2, 24 h))`, one value per row).
    /// (Only the cases that hold a field are indirect: a boxed `.attribute` would cost every
    /// statement an allocation per field.)
    indirect case aggregate(AggregateFunction, FieldExpression?, position: SourcePosition)
    /// `ANY(list)` / `ALL(list)` on the left of a comparison.
    indirect case quantified(Quantifier, FieldExpression, position: SourcePosition)
    /// `WKT(geom)` / `WKB(geom)`: the feature's geometry as text (WKB as hex).
    case geometryText(GeometryTextFormat, position: SourcePosition)
    /// `RETURN *`: every column of the layers.
    case star(SourcePosition)

    var position: SourcePosition {
        switch self {
        case .attribute(let name), .latest(let name, _), .history(let name, _, _): name.position
        case .observedAt(let position), .aggregate(_, _, let position), .quantified(_, _, let position),
             .geometryText(_, let position), .star(let position): position
        case .reference(let reference, _): reference.position
        }
    }

    /// The column's name in answers.
    var label: String {
        switch self {
        case .attribute(let name): name.text
        case .latest(let name, _): "latest_\(name.text)"
        case .history(let name, let hours, _): "history_\(name.text)_\(hours)h"
        case .observedAt: "observed_at"
        case .reference(let reference, let field): reference.label + "." + field.label
        case .aggregate(let function, let argument, _): argument.map { "\(function.rawValue)_\($0.label)" } ?? function.rawValue
        case .quantified(let quantifier, let argument, _): "\(quantifier.rawValue)_\(argument.label)"
        case .geometryText(let format, _): format.rawValue
        case .star: "*"
        }
    }
}

enum Quantifier: String, Sendable, Equatable {
    case any, all
}

enum GeometryTextFormat: String, Sendable, Equatable {
    case wkt, wkb
}

enum Literal: Sendable, Equatable {
    case number(Double)
    case text(String)
    case bool(Bool)
    case null
}

indirect enum Expression: Sendable, Equatable {
    /// Flat lists, not nested pairs: a long chain of ORs stays one level deep.
    case and([Expression])
    case or([Expression])
    case not(Expression)
    case compare(FieldExpression, Comparison, Literal, position: SourcePosition)
    case isIn(FieldExpression, [Literal], negated: Bool)
    case isNull(FieldExpression, negated: Bool)
    /// `field ~ 'text'`: contains, ignoring case and diacritics.
    case matches(FieldExpression, String)
    /// `field ~ CZECH 'text'`: every word of the text matches a word of the field by its Czech
    /// stem (`CzechStemmer`), ignoring case and diacritics.
    case matchesCzech(FieldExpression, String)
    /// `MEASURES(no2)`: the feature's time series has at least one value of that column.
    case measures(Name)
    /// `FRESH(3 h)`: the feature's newest observation ends within that long of the newest
    /// observation in the whole series (the data's own clock).
    case fresh(hours: Double, position: SourcePosition)
    /// CQL2's `LIKE`: `%` any run of characters, `_` one, `\` the next literally; case counts,
    /// characters are Unicode scalars (as PostgreSQL's LIKE under COLLATE "C").
    case like(FieldExpression, pattern: String, negated: Bool)
    /// CQL2's spatial functions: `feature's geometry RELATION constant geometry` (lon/lat). The
    /// field is the geometry's name as the filter wrote it (checked against the layer's).
    case spatial(FieldExpression, SpatialRelation, Geometry)
    /// A field holding instants (ISO 8601 text, UTC) against an instant: CQL2's TIMESTAMP and
    /// DATE comparisons and its temporal functions, lowered to comparisons of endpoints.
    case instant(FieldExpression, Comparison, UTCTime)
}

enum Comparison: String, Sendable, Equatable {
    case equal = "=", notEqual = "<>", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
}
