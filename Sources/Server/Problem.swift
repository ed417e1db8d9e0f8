// Every error the API answers is an RFC 9457 problem document (`application/problem+json`)
// with a stable machine-readable `code`, a `detail` a person understands, and where it applies
// (`parameter`, or `line`/`column` in a query). Every error states its category
// (`ErrorCategory`, in Geometry); the one table from category to HTTP status is
// `APIError.status(for:)`, so an error answers the same from an endpoint and from /v1/query,
// and docs/HTTP_API.md lists it once.

import Engine
import Geometry
import Hummingbird
import QueryLanguage
import Store
import Support

public struct APIError: Error, Sendable {
    public var status: HTTPResponse.Status
    /// Stable and machine-readable: `invalid_parameter`, `unknown_layer`, `NoRoute`, …
    public var code: String
    public var detail: String
    /// Extension members: `parameter`, `line`, `column`, `hint`, …
    public var extra: JSONObject
    public var headers: HTTPFields

    /// The longest `detail` (and `hint`) a problem carries. The places that quote what a
    /// request sent cut the quote to `Quote.maxCharacters`; this is the backstop for any that
    /// do not, so no error answer can echo a whole body or a 100 KB parameter.
    static let maxDetailCharacters = 1000

    public init(_ status: HTTPResponse.Status, code: String, detail: String, extra: JSONObject = JSONObject(), headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.detail = Quote.capped(detail, limit: APIError.maxDetailCharacters)
        self.extra = extra
        self.headers = headers
    }

    /// The problem document. `type` is a URN per code: stable, and RFC 9457 allows a type
    /// that does not resolve; the codes are documented in docs/HTTP_API.md.
    public var document: JSONValue {
        var object = JSONObject()
        object["type"] = .string("urn:vltava:problem:\(code)")
        object["title"] = .string(status.reasonPhrase)
        object["status"] = .integer(Int64(status.code))
        object["code"] = .string(code)
        // `detail` may have been changed after init (a leg's, a place's): capped again here.
        object["detail"] = .string(Quote.capped(detail, limit: APIError.maxDetailCharacters))
        for (key, value) in extra { object[key] = value }
        return .object(object)
    }

    // MARK: - Common problems

    /// `name` may be what the client sent (an unknown `attr.NAME`): it is quoted short.
    static func invalidParameter(_ name: String, _ message: String) -> APIError {
        let name = Quote.capped(name)
        return APIError(.badRequest, code: "invalid_parameter", detail: "\(name): \(message)", extra: JSONObject([("parameter", .string(name))]))
    }

    static func missingParameter(_ name: String, _ what: String) -> APIError {
        APIError(.badRequest, code: "missing_parameter", detail: "\(name) is required: \(what)", extra: JSONObject([("parameter", .string(name))]))
    }

    /// The heavy endpoints' pool and its queue are full (`WorkPool`): try again shortly.
    static func busy() -> APIError {
        APIError(.serviceUnavailable, code: "busy", detail: "the server is busy with other heavy requests (queries, routes, tiles); try again in a moment",
                 headers: [.retryAfter: "1"])
    }

    static func loading() -> APIError {
        APIError(.serviceUnavailable, code: "snapshot_loading", detail: "the data is still loading; try again in a moment",
                 headers: [.retryAfter: "1"])
    }

    static func internalError(_ detail: String) -> APIError {
        APIError(.internalServerError, code: "internal_error", detail: detail)
    }

    // MARK: - Mapping the lower layers' errors

    /// The one table from an error's category to its HTTP status.
    static func status(for category: ErrorCategory) -> HTTPResponse.Status {
        switch category {
        case .syntax, .invalid: .badRequest
        case .notFound: .notFound
        case .impossible, .limit: .unprocessableContent
        case .unavailable: .serviceUnavailable
        case .internal: .internalServerError
        }
    }

    /// What a response of that category says besides its status: an unavailable store or
    /// database (restarting, a tile set's file being replaced) may be asked again in a second;
    /// `/readyz` says when it is back.
    static func headers(for category: ErrorCategory) -> HTTPFields {
        category == .unavailable ? [.retryAfter: "1"] : [:]
    }

    /// Any categorised error (a store's, an indoor import's) with its code and message.
    static func categorized(_ error: some CategorizedError) -> APIError {
        APIError(status(for: error.category), code: error.code, detail: error.description, headers: headers(for: error.category))
    }

    /// Engine errors: the status of their category, with the members that name what they are
    /// about (`layer`, `tileset`, `venue`, `limit`, …); a bad value names the parameter as the
    /// API calls it (the engine's `within` is `within_m`).
    static func engine(_ error: EngineError) -> APIError {
        let apiNames = ["within": "within_m", "speed": "speed_kmh"]
        var problem = categorized(error)
        switch error {
        case .unknownLayer(let name, _):
            problem.extra["layer"] = .string(Quote.capped(name))
        case .unknownTileSet(let name, _), .tileSetUnavailable(let name, _):
            problem.extra["tileset"] = .string(Quote.capped(name))
        case .invalidArgument(let parameter, let message):
            let name = apiNames[parameter] ?? parameter
            problem.code = "invalid_parameter"
            problem.detail = "\(name): \(message)"
            problem.extra["parameter"] = .string(name)
        case .unsupportedGeometry(let layer, _, _, _):
            problem.extra["layer"] = .string(layer)
        case .tooManyRows(_, let limit), .tooManyRowsInRequest(_, let limit), .responseTooLarge(let limit):
            problem.extra["limit"] = .integer(Int64(limit))
        case .deadlineExceeded(let seconds):
            problem.extra["limit_s"] = .double(seconds)
        case .route(let route):
            return APIError.route(route)
        case .unknownVenue(let name, _):
            problem.extra["venue"] = .string(Quote.capped(name))
        case .scan(let scan):
            if let beacon = scan.beacon { problem.extra["beacon"] = .string(Quote.capped(beacon)) }
            if case .tooManyReadings(_, let limit) = scan { problem.extra["limit"] = .integer(Int64(limit)) }
        case .leg(let index, _, _, let inner):
            problem = engine(inner)
            problem.detail = error.description
            problem.extra["leg"] = .integer(Int64(index))
        case .unknownFeature, .noTimeSeries, .unknownStation, .store, .tiles, .databaseUnavailable, .notSupportedOnPostGIS, .write:
            break
        }
        return problem
    }

    /// Routing errors: the OSRM codes, with the end or coordinate that failed.
    static func route(_ error: RouteError) -> APIError {
        var problem = categorized(error)
        switch error {
        case .noSegment(let waypoint, let nearest, let max):
            problem.extra["parameter"] = .string(waypoint == 0 ? "from" : "to")
            problem.extra["max_snap_m"] = .double(max)
            if let nearest { problem.extra["nearest_m"] = .double(Rounding.metres(nearest)) }
        case .noSegmentAt(let coordinate, let nearest, let max):
            problem.extra["coordinate"] = .integer(Int64(coordinate))
            problem.extra["max_snap_m"] = .double(max)
            if let nearest { problem.extra["nearest_m"] = .double(Rounding.metres(nearest)) }
        case .noTarget(let waypoint):
            problem.extra["parameter"] = .string(waypoint == 0 ? "from" : "to")
        case .invalidPoint, .noRoute, .tooMuchWork, .tooManyPoints:
            break
        }
        return problem
    }

    /// Query errors keep their position in the text.
    static func query(_ error: QueryError) -> APIError {
        var extra = JSONObject([("line", .integer(Int64(error.line))), ("column", .integer(Int64(error.column))),
                                ("length", .integer(Int64(error.length)))])
        if let hint = error.hint { extra["hint"] = .string(Quote.capped(hint, limit: APIError.maxDetailCharacters)) }
        return APIError(status(for: error.kind), code: error.code, detail: error.message, extra: extra, headers: headers(for: error.kind))
    }
}

/// Hummingbird renders an `HTTPResponseError` itself wherever one escapes; ours renders as the
/// same problem document the problem middleware writes, so no path answers differently.
extension APIError: HTTPResponseError {
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        Reply.problem(self, request: request)
    }
}
