import Geometry
import Routing
import Support

/// A route's answer and its errors come from the Routing module; the Engine's users name them
/// through the Engine, which owns every router.
public typealias Route = Routing.Route
public typealias Waypoint = Routing.Waypoint
public typealias RouteError = Routing.RouteError

/// Errors of engine operations. Every case says what is wrong in words a user understands, and
/// has a stable machine-readable `code` for JSON answers and a `category` (HTTP status, query
/// error kind, exit code).
public enum EngineError: CategorizedError, Equatable, Sendable {
    case unknownLayer(String, known: [String])
    case invalidArgument(parameter: String, message: String)
    case unsupportedGeometry(layer: String, operation: String, needs: String, has: String)
    case unknownFeature(layer: String, fid: Int64)
    case store(String)
    case unknownTileSet(String, known: [String])
    case tiles(String)
    /// A registered tile set whose file could not be opened at load (moved, deleted, not
    /// MBTiles): that tile set alone is out of service.
    case tileSetUnavailable(String, reason: String)
    /// No route (or no snap, or too much work): the OSRM codes of `RouteError`.
    case route(RouteError)
    /// The answer would exceed `EngineLimits.maxRows`.
    case tooManyRows(count: Int, limit: Int)
    /// The answers of one request together exceed `EngineLimits.maxRowsPerRequest`.
    case tooManyRowsInRequest(count: Int, limit: Int)
    /// The answer's body passed `EngineLimits.maxResponseBytes`; writing stopped there.
    case responseTooLarge(limit: Int)
    /// The request's work ran past `EngineLimits.maxRequestSeconds`.
    case deadlineExceeded(seconds: Double)
    /// An operation on time series (the air report) when the store has none.
    case noTimeSeries
    /// A station key a time series does not know (the message names the closest one).
    case unknownStation(String)
    /// A venue name that the store does not have.
    case unknownVenue(String, known: [String])
    /// A scan that cannot be located: a strength out of range, a beacon twice, no known beacon.
    case scan(ScanError)
    /// A leg of a schedule failed: which one, between which events, and why.
    indirect case leg(index: Int, from: String, to: String, EngineError)
    /// The store's database cannot be reached (the message names its URL, never a password):
    /// the HTTP API answers 503, and the next request tries again.
    case databaseUnavailable(String)
    /// A statement the PostGIS store cannot compile to SQL yet: refused rather than answered
    /// differently from the GeoPackage store.
    case notSupportedOnPostGIS(String)
    /// A write refused, with nothing written (the store's code and category: `bad_write`,
    /// `unknown_feature`, `feature_exists`…), or a store that takes no writes.
    case write(code: String, category: ErrorCategory, message: String)

    public var code: String {
        switch self {
        case .unknownLayer: "unknown_layer"
        case .invalidArgument: "invalid_argument"
        case .unsupportedGeometry: "unsupported_geometry"
        case .unknownFeature: "unknown_feature"
        case .store: "store_error"
        case .unknownTileSet: "unknown_tileset"
        case .tiles: "tiles_error"
        case .tileSetUnavailable: "tileset_unavailable"
        case .route(let error): error.code
        case .tooManyRows, .tooManyRowsInRequest: "too_many_rows"
        case .responseTooLarge: "response_too_large"
        case .deadlineExceeded: "deadline_exceeded"
        case .noTimeSeries: "no_time_series"
        case .unknownStation: "unknown_location"
        case .unknownVenue: "unknown_venue"
        case .scan(let error): error.code
        case .leg(_, _, _, let inner): inner.code
        case .databaseUnavailable: "database_unavailable"
        case .notSupportedOnPostGIS: "not_supported_on_postgis"
        case .write(let code, _, _): code
        }
    }

    public var category: ErrorCategory {
        switch self {
        case .unknownLayer, .unknownFeature, .unknownTileSet, .unknownVenue, .noTimeSeries, .unknownStation: .notFound
        case .invalidArgument, .unsupportedGeometry: .invalid
        case .tooManyRows, .tooManyRowsInRequest, .responseTooLarge, .deadlineExceeded: .limit
        case .notSupportedOnPostGIS: .impossible
        // The store's file or its tile set's is missing or cannot be read; a reload may bring
        // it back.
        case .tileSetUnavailable, .databaseUnavailable: .unavailable
        // The store or a tile in it cannot be read: not the request's fault.
        case .store, .tiles: .internal
        case .route(let error): error.category
        case .scan(let error): error.category
        case .leg(_, _, _, let inner): inner.category
        case .write(_, let category, _): category
        }
    }

    public var description: String {
        switch self {
        case .unknownLayer(let name, let known):
            var message = "unknown layer \(Quote.input(name))"
            if let suggestion = Suggestion.closest(to: name, in: known) { message += " — did you mean '\(suggestion)'?" }
            return message
        case .invalidArgument(let parameter, let message):
            return "\(parameter): \(message)"
        case .unsupportedGeometry(let layer, let operation, let needs, let has):
            return "\(operation) needs a layer of \(needs); '\(layer)' has \(has)"
        case .unknownFeature(let layer, let fid):
            return "layer \(Quote.input(layer)) has no feature \(fid)"
        case .store(let message), .tiles(let message), .unknownStation(let message):
            return message
        case .tileSetUnavailable(let name, let reason):
            return "tile set \(Quote.input(name)) is unavailable: \(reason)"
        case .route(let error):
            return error.description
        case .tooManyRows(let count, let limit):
            return "the answer has \(count == limit + 1 ? "more than \(limit)" : "\(count)") rows, more than the limit of \(limit)"
        case .tooManyRowsInRequest(let count, let limit):
            return "the statements of this request answer \(count) rows in all, more than the limit of \(limit) per request"
        case .responseTooLarge(let limit):
            return "the answer is larger than the limit of \(limit) bytes per response"
        case .deadlineExceeded(let seconds):
            return "the request needs more than \(Rounding.seconds(seconds)) s of work, the limit per request"
        case .leg(_, let from, let to, let inner):
            // Event names come from the request: quoted short.
            return "leg from \(Quote.input(from, marks: false)) to \(Quote.input(to, marks: false)): \(inner)"
        case .noTimeSeries:
            return "the store has no point layer with a time series (import observations with --time-series-of)"
        case .unknownTileSet(let name, let known):
            var message = "unknown tile set \(Quote.input(name))"
            if let suggestion = Suggestion.closest(to: name, in: known) { message += " — did you mean '\(suggestion)'?" }
            return message
        case .unknownVenue(let name, let known):
            var message = "unknown venue \(Quote.input(name))"
            if let suggestion = Suggestion.closest(to: name, in: known) { message += " — did you mean '\(suggestion)'?" }
            else if known.isEmpty { message += " (the store has no venues: import a survey with vltava indoor import)" }
            else { message += " (venues: \(known.joined(separator: ", ")))" }
            return message
        case .scan(let error):
            return error.description
        case .databaseUnavailable(let message):
            return message
        case .notSupportedOnPostGIS(let what):
            return "\(what) is not supported on a PostGIS store yet"
        case .write(_, _, let message):
            return message
        }
    }
}

/// Checks of the values an operation is given, shared by every operation (and by the PostGIS
/// store's pushed-down FINDs, so both refuse the same values the same way).
public enum Check {
    /// A position, through Geometry's one rule; `parameter` names it in the error when the
    /// caller has a single name for both coordinates ("from", "to").
    public static func position(_ point: Point, parameter: String? = nil) throws(EngineError) {
        do {
            _ = try Point.checked(lon: point.lon, lat: point.lat)
        } catch {
            throw .invalidArgument(parameter: parameter ?? error.axis.rawValue, message: error.description)
        }
    }

    public static func k(_ k: Int, limits: EngineLimits) throws(EngineError) {
        guard k >= 1 && k <= limits.maxRows else {
            throw .invalidArgument(parameter: "k", message: "must be between 1 and \(limits.maxRows), got \(k)")
        }
    }

    public static func distance(_ metres: Double, parameter: String = "distance") throws(EngineError) {
        guard !metres.isNaN else { throw .invalidArgument(parameter: parameter, message: "distance is not a number") }
        guard metres >= 0 else { throw .invalidArgument(parameter: parameter, message: "distance must not be negative, got \(metres) m") }
    }
}
