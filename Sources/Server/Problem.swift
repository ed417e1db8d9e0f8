// Every error the API answers is an RFC 9457 problem document (`application/problem+json`)
// with a stable machine-readable `code`, a `detail` a person understands, and where it applies
// (`parameter`, or `line`/`column` in a query). The mapping from engine, routing and query
// errors onto HTTP statuses lives here and only here, so docs/HTTP_API.md can list it once.

import Engine
import Geometry
import Hummingbird
import QueryLanguage
import Store

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

    /// Engine errors: unknown names are 404, bad values 400 naming the parameter (as the API
    /// calls it: the engine's `within` is `within_m`), no route 422 with OSRM's codes, a limit
    /// 422 `too_many_rows`.
    static func engine(_ error: EngineError) -> APIError {
        let apiNames = ["within": "within_m", "speed": "speed_kmh"]
        switch error {
        case .unknownLayer(let name, _):
            return APIError(.notFound, code: error.code, detail: error.description, extra: JSONObject([("layer", .string(Quote.capped(name)))]))
        case .unknownTileSet(let name, _):
            return APIError(.notFound, code: error.code, detail: error.description, extra: JSONObject([("tileset", .string(Quote.capped(name)))]))
        case .tileSetUnavailable(let name, _):
            return APIError(.serviceUnavailable, code: error.code, detail: error.description, extra: JSONObject([("tileset", .string(Quote.capped(name)))]))
        case .unknownFeature:
            return APIError(.notFound, code: error.code, detail: error.description)
        case .invalidArgument(let parameter, let message):
            let name = apiNames[parameter] ?? parameter
            return APIError(.badRequest, code: "invalid_parameter", detail: "\(name): \(message)", extra: JSONObject([("parameter", .string(name))]))
        case .unsupportedGeometry(let layer, _, _, _):
            return APIError(.badRequest, code: error.code, detail: error.description, extra: JSONObject([("layer", .string(layer))]))
        case .noTimeSeries:
            return APIError(.notFound, code: error.code, detail: error.description)
        case .tooManyRows(_, let limit), .tooManyRowsInRequest(_, let limit), .responseTooLarge(let limit):
            return APIError(.unprocessableContent, code: error.code, detail: error.description, extra: JSONObject([("limit", .integer(Int64(limit)))]))
        case .deadlineExceeded(let seconds):
            return APIError(.unprocessableContent, code: error.code, detail: error.description, extra: JSONObject([("limit_s", .double(seconds))]))
        case .store, .tiles:
            return APIError(.internalServerError, code: error.code, detail: error.description)
        case .databaseUnavailable:
            return APIError(.serviceUnavailable, code: error.code, detail: error.description, headers: APIError.databaseRetry)
        case .notSupportedOnPostGIS:
            return APIError(.unprocessableContent, code: error.code, detail: error.description)
        case .route(let route):
            return APIError.route(route)
        case .unknownVenue(let name, _):
            return APIError(.notFound, code: error.code, detail: error.description, extra: JSONObject([("venue", .string(Quote.capped(name)))]))
        case .scan(let scan):
            var extra = JSONObject()
            if let beacon = scan.beacon { extra["beacon"] = .string(Quote.capped(beacon)) }
            switch scan {
            case .noKnownBeacon: return APIError(.unprocessableContent, code: error.code, detail: error.description, extra: extra)
            case .tooManyReadings(_, let limit):
                return APIError(.unprocessableContent, code: error.code, detail: error.description, extra: JSONObject([("limit", .integer(Int64(limit)))]))
            case .rssiOutOfRange, .duplicateBeacon: return APIError(.badRequest, code: error.code, detail: error.description, extra: extra)
            }
        case .leg(let index, _, _, let inner):
            var problem = engine(inner)
            problem.detail = error.description
            problem.extra["leg"] = .integer(Int64(index))
            return problem
        }
    }

    /// Routing errors: the OSRM codes, 422 when the request is fine but no route exists.
    static func route(_ error: RouteError) -> APIError {
        switch error {
        case .invalidPoint:
            return APIError(.badRequest, code: "InvalidValue", detail: error.description)
        case .noSegment(let waypoint, let nearest, let max):
            var extra = JSONObject([("parameter", .string(waypoint == 0 ? "from" : "to")), ("max_snap_m", .double(max))])
            if let nearest { extra["nearest_m"] = .double(Rounding.metres(nearest)) }
            return APIError(.unprocessableContent, code: error.code, detail: error.description, extra: extra)
        case .noSegmentAt(let coordinate, let nearest, let max):
            var extra = JSONObject([("coordinate", .integer(Int64(coordinate))), ("max_snap_m", .double(max))])
            if let nearest { extra["nearest_m"] = .double(Rounding.metres(nearest)) }
            return APIError(.unprocessableContent, code: error.code, detail: error.description, extra: extra)
        case .noRoute, .tooMuchWork, .noTarget, .tooManyPoints:
            return APIError(.unprocessableContent, code: error.code, detail: error.description)
        }
    }

    /// Query errors keep their position in the text.
    static func query(_ error: QueryError) -> APIError {
        let status: HTTPResponse.Status
        switch error.kind {
        case .syntax, .invalid: status = .badRequest
        case .notFound: status = .notFound
        case .impossible, .limit: status = .unprocessableContent
        case .unavailable: status = .serviceUnavailable
        }
        var extra = JSONObject([("line", .integer(Int64(error.line))), ("column", .integer(Int64(error.column))),
                                ("length", .integer(Int64(error.length)))])
        if let hint = error.hint { extra["hint"] = .string(Quote.capped(hint, limit: APIError.maxDetailCharacters)) }
        return APIError(status, code: error.code, detail: error.message, extra: extra,
                        headers: error.code == EngineError.databaseUnavailable("").code ? APIError.databaseRetry : [:])
    }

    /// A PostGIS store's database is down or restarting: a client may try again in a second
    /// (`/readyz` says when it is back).
    static let databaseRetry: HTTPFields = [.retryAfter: "1"]
}

/// Hummingbird renders an `HTTPResponseError` itself wherever one escapes; ours renders as the
/// same problem document the problem middleware writes, so no path answers differently.
extension APIError: HTTPResponseError {
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        Reply.problem(self, request: request)
    }
}
