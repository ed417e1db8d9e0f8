// The query language over HTTP (/v1/query): statements with bound parameters, answered as JSON,
// GeoJSON or CSV.

import Engine
import Foundation
import Geometry
import Hummingbird
import QueryLanguage
import Store
import Support
import VectorTiles

extension Endpoints {
    // MARK: - Query

    func query(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Parameters(request, allowed: ["format"])
        let format: AnswerFormat
        if let given = parameters.string("format") {
            guard let known = AnswerFormat(rawValue: given) else { throw APIError.invalidParameter("format", "\(Quote.input(given)) is not json, geojson or csv") }
            format = known
        } else {
            let accept = request.headers[.accept] ?? ""
            format = accept.contains(Reply.geoJSON) ? .geojson : accept.contains(Reply.csv) ? .csv : .json
        }
        var text = try await Endpoints.readBody(request, limit: configuration.maxBodyBytes, timeout: configuration.requestTimeout)
        var bound: [QueryValue] = []
        if (request.headers[.contentType] ?? "").hasPrefix("application/json") {
            guard case .object(let object)? = try? JSON.parse(text), let query = object["query"]?.string else {
                throw APIError(.badRequest, code: "invalid_body", detail: "a JSON body must be an object with the query text in \"query\"; or send the text as text/plain")
            }
            text = query
            bound = try object["params"].map(Endpoints.boundParameters) ?? []
        }
        guard !text.allSatisfy(\.isWhitespace) else {
            throw APIError(.badRequest, code: "empty_query", detail: "the body holds no query; send statements such as SHOW LAYERS")
        }
        let snapshot = try state.snapshot()
        let query = text, values = bound
        let contentType = switch format {
        case .json: Reply.json
        case .geojson: Reply.geoJSON
        case .csv: Reply.csvWithHeader
        }
        // INSERT, UPDATE and DELETE need a write token for their layers, checked before any
        // statement runs; a text that writes (or names fences) runs on the writes' thread,
        // through the engine.
        let written: [String]
        let fences: (any: Bool, changes: Bool)
        do { (written, fences) = (try Query.writtenLayers(query), try Query.fenceStatements(query)) } catch { throw APIError.query(error) }
        // Fences live in the engine: a text that names them runs through it too, and adding or
        // dropping one needs a token for every layer, as PUT /v1/fences does.
        if fences.changes, try writeGrant(request) != nil {
            throw APIError(.forbidden, code: "forbidden", detail: "fences need a token that covers every layer (or the admin token)")
        }
        if !written.isEmpty || fences.any {
            if !written.isEmpty { try authorizeWrite(request, layers: written.map { (try? snapshot.layer($0).name) ?? $0 }) }
            let departure = connections.departure(of: context.channel)
            let body = try await state.writing { host in
                var budget = RequestBudget(limits: snapshot.limits, cancellation: departure)
                do {
                    return try Query.answer(query, values, on: host.snapshot, writingTo: host, format: format, budget: &budget)
                } catch let error as QueryError {
                    throw APIError.query(error)
                }
            }
            return Reply.bytes(body, contentType: contentType, compressible: true, request: request)
        }
        return try await heavyWork(context, snapshot) { budget in
            var budget = budget
            let body: [UInt8]
            do {
                body = try Query.answer(query, values, on: snapshot, format: format, budget: &budget)
            } catch let error as QueryError {
                throw APIError.query(error)
            }
            return Reply.bytes(body, contentType: contentType, compressible: true, request: request)
        }
    }

    /// A JSON body's `"params"`: the values of `$1`, `$2`, … (or the `?`s) in order. A point is
    /// `{"lon": 14.42, "lat": 50.09}`; names are never parameters (quote them: `"typ stanice"`).
    static func boundParameters(_ json: JSONValue) throws -> [QueryValue] {
        guard case .array(let values) = json else {
            throw APIError(.badRequest, code: "invalid_body", detail: "\"params\" must be an array: the values of $1, $2, … in order")
        }
        return try values.enumerated().map { index, value in
            switch value {
            case .null: return .null
            case .bool(let b): return .bool(b)
            case .integer(let number): return .number(Double(number))
            case .double(let number): return .number(number)
            case .string(let text): return .text(text)
            case .object(let object):
                if object.keys.count == 2, let lon = object["lon"]?.number, let lat = object["lat"]?.number {
                    return .point(Point(lon: lon, lat: lat))
                }
                fallthrough
            case .array:
                throw APIError(.badRequest, code: "invalid_body",
                               detail: "params[\(index)] (the value of $\(index + 1)) is not a number, text, true, false, null or a point {\"lon\": …, \"lat\": …}")
            }
        }
    }
}

// MARK: - Routes, with their OpenAPI operations (served whole at /openapi.json)

extension Endpoints {
    /// Statements of the query language.
    static let queryRoutes: [Route] = [
        Route(.post, "/v1/query", { try await $0.query($1, $2) }, openAPI: #"""
            {
              "summary": "Run query-language statements",
              "description": "Writes (the INSERT/UPDATE/DELETE statements) need a write token for the layers they write (Authorization: Bearer …), checked before any statement runs; EXPLAIN of a write plans it without writing. A write answers its changes as rows: sequence, layer, fid, change.",
              "parameters": [
                {"name": "format", "in": "query", "schema": {"type": "string", "enum": ["json", "geojson", "csv"]}, "description": "Answer format; default from the Accept header (application/geo+json picks geojson, text/csv picks csv), else json. CSV (RFC 4180, header line, CRLF) holds one statement's rows."}
              ],
              "requestBody": {
                "required": true,
                "content": {
                  "text/plain": {"schema": {"$ref": "#/components/schemas/QueryText"}, "example": "FIND districts CONTAINING POINT(14.4208 50.0880)"},
                  "application/json": {"schema": {"type": "object", "required": ["query"], "properties": {"query": {"$ref": "#/components/schemas/QueryText"}, "params": {"type": "array", "description": "The values of $1, $2, … (or the ?s) in order: numbers, text, true/false, null, or a point {\"lon\": …, \"lat\": …}. Names are never parameters: quote them (\"typ stanice\").", "items": {"nullable": true, "oneOf": [{"type": "number"}, {"type": "string"}, {"type": "boolean"}, {"type": "object", "required": ["lon", "lat"], "additionalProperties": false, "properties": {"lon": {"type": "number"}, "lat": {"type": "number"}}}]}}}}, "example": {"query": "FIND stations WHERE code = $1 RETURN code, name", "params": ["AREPA"]}}
                }
              },
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "One statement: its result; several: an array of results. A rows answer has count, rows, and warnings when there are any (a point that looks swapped).", "content": {"application/json": {"schema": {}}, "application/geo+json": {"schema": {}}, "text/csv": {"schema": {"type": "string"}}}},
                "400": {"$ref": "#/components/responses/QueryProblem"},
                "401": {"$ref": "#/components/responses/Problem"},
                "403": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/QueryProblem"},
                "408": {"$ref": "#/components/responses/Problem"},
                "413": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/QueryProblem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
    ]
}
