// Live layers, fences and their events over HTTP (docs/HTTP_API.md, "Live layers and fences"):
//
//   PUT    /v1/live/{layer}                 declare a live layer (history, ttl_s, durable)
//   GET    /v1/live                         the live layers
//   DELETE /v1/live/{layer}
//   POST   /v1/live/{layer}/positions       a batch of positions; fences are evaluated on it
//   GET    /v1/live/{layer}/objects[/{id}]  where the objects are (GeoJSON), with their history
//   DELETE /v1/live/{layer}/objects/{id}
//   PUT    /v1/fences/{name}, GET /v1/fences[/{name}], DELETE /v1/fences/{name}
//   GET    /v1/events, /v1/fences/{name}/events   the events; Server-Sent Events with
//          Accept: text/event-stream, resumed after Last-Event-ID
//
// Changing anything needs a write token, as writes do (a token limited to some layers may
// send positions to those live layers; fences need a token for every layer). Positions are
// memory (Sources/Live): they answer at once, with no store write.

import Engine
import Foundation
import Geometry
import Hummingbird
import ServiceLifecycle
import Support

extension Endpoints {
    /// Bytes of a positions batch: 10,000 positions with a few fields each.
    static let maxPositionsBodyBytes = 8 << 20
    /// The members a position may have (one array for every position, not one built per member).
    static let positionMembers = ["id", "position", "time", "fields", "ttl_s"]

    // MARK: - Live layers

    func declareLiveLayer(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try Parameters(request, allowed: [])
        let name = try request.pathParameter("layer", context)
        try authorizeWrite(request, layers: [name])
        let body = try await Endpoints.readBody(request, limit: 1 << 16, timeout: configuration.requestTimeout)
        let json = try Endpoints.parseJSON(body.isEmpty ? "{}" : body)
        let settings = try engine { () throws(EngineError) in try LiveLayerSettings.parse(json) }
        try await state.writing { host in try engine { () throws(EngineError) in try host.declareLiveLayer(name, settings: settings) } }
        return try liveLayers(request, only: name)
    }

    func listLiveLayers(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try Parameters(request, allowed: [])
        return try liveLayers(request, only: nil)
    }

    private func liveLayers(_ request: Request, only: String?) throws -> Response {
        let hub = try state.host().live
        let names = only.map { [$0] } ?? hub.layerNames
        return Reply.json(request: request) { w in
            if only == nil { w.beginObject(); w.key("layers"); w.beginArray() }
            for name in names {
                guard let layer = hub.layer(name) else { continue }
                w.beginObject()
                w.key("name"); w.string(layer.name)
                w.key("objects"); w.integer(Int64(layer.objects.count))
                w.key("history")
                switch layer.settings.history {
                case .none: w.string("none")
                case .last(let n): w.beginObject(); w.key("last"); w.integer(Int64(n)); w.endObject()
                case .window(let seconds): w.beginObject(); w.key("seconds"); w.number(seconds); w.endObject()
                }
                w.key("ttl_s"); if let ttl = layer.settings.ttlSeconds { w.number(ttl) } else { w.null() }
                w.key("durable"); w.bool(layer.settings.durable)
                w.endObject()
            }
            if only == nil { w.endArray(); w.endObject() }
        }
    }

    func dropLiveLayer(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try Parameters(request, allowed: [])
        let name = try request.pathParameter("layer", context)
        try authorizeWrite(request, layers: [name])
        let dropped = try await state.writing { host in try engine { () throws(EngineError) in try host.dropLiveLayer(name) } }
        guard dropped else { throw APIError(.notFound, code: "unknown_live_layer", detail: "no live layer named \(Quote.input(name))") }
        return Response(status: .noContent)
    }

    // MARK: - Positions

    /// POST {"positions": [{"id": "phone-1", "position": [lon, lat], "time": "…"?, "fields": {…}?,
    /// "ttl_s": N?}, …]}: applied in order, all or none; the answer lists the events they made
    /// (`?events=false`: only how many, for feeds that read them from a stream or a webhook).
    func postPositions(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Parameters(request, allowed: ["events"])
        let listEvents = try parameters.bool("events") ?? true
        let name = try request.pathParameter("layer", context)
        try authorizeWrite(request, layers: [name])
        let host = try state.host()
        let body = try await Endpoints.readBody(request, limit: Endpoints.maxPositionsBodyBytes, timeout: configuration.requestTimeout)
        let updates = try Endpoints.parsePositions(body, now: Date().timeIntervalSince1970, maxCount: host.limits.live.maxUpdatesPerBatch)
        let receipt = try engine { () throws(EngineError) in try host.updatePositions(name, updates) }
        return Reply.json(request: request) { w in
            w.beginObject()
            w.key("updated"); w.integer(Int64(updates.count - receipt.stale))
            w.key("stale"); w.integer(Int64(receipt.stale))
            if listEvents {
                w.key("events")
                w.beginArray()
                for event in receipt.events { Output.fenceEvent(&w, event) }
                w.endArray()
            } else {
                w.key("event_count"); w.integer(Int64(receipt.events.count))
            }
            w.endObject()
        }
    }

    static func parsePositions(_ body: String, now: Double, maxCount: Int) throws(APIError) -> [PositionUpdate] {
        guard case .object(let object) = try parseJSON(body), case .array(let items)? = object["positions"] else {
            throw APIError(.badRequest, code: "invalid_body", detail: "expected {\"positions\": [{\"id\": …, \"position\": [lon, lat]}, …]}")
        }
        guard !items.isEmpty else { throw APIError(.badRequest, code: "invalid_body", detail: "the body has no position") }
        guard items.count <= maxCount else {
            throw APIError(.contentTooLarge, code: "too_many_positions", detail: "\(items.count) positions; at most \(maxCount) a request")
        }
        var updates: [PositionUpdate] = []
        updates.reserveCapacity(items.count)
        for (n, item) in items.enumerated() {
            func invalid(_ message: String) -> APIError {
                APIError(.badRequest, code: "invalid_position", detail: "position \(n + 1): \(message)")
            }
            guard case .object(let p) = item else { throw invalid("expected an object") }
            let id: String
            switch p["id"] {
            case .string(let text)?: id = text
            case .integer(let number)?: id = String(number)
            default: throw invalid("id: expected a string")
            }
            guard case .array(let pair)? = p["position"], pair.count == 2, let lon = pair[0].number, let lat = pair[1].number else {
                throw invalid("position: expected [lon, lat]")
            }
            let point: Point
            do {
                point = try Point.checked(lon: lon, lat: lat)
            } catch {
                throw invalid("position: \(error)")
            }
            var time = now
            switch p["time"] {
            case nil: break
            case .string(let text)?:
                guard let parsed = Endpoints.parseTime(text) else { throw invalid("time: \(Quote.input(text)) is not an ISO 8601 time such as 2026-06-20T14:00:00Z") }
                time = parsed
            case let value?:
                // Seconds since 1970, years 1970 to 2200.
                guard let seconds = value.number, seconds >= 0, seconds < 7_258_118_400 else { throw invalid("time: expected an ISO 8601 time or seconds since 1970") }
                time = seconds
            }
            var fields: JSONObject?
            if let given = p["fields"] {
                guard case .object(let values) = given else { throw invalid("fields: expected an object") }
                fields = values
            }
            var ttl: Double?
            if let given = p["ttl_s"] {
                guard let seconds = given.number, seconds.isFinite, seconds >= 0, seconds <= 366 * 86_400 else { throw invalid("ttl_s: expected seconds from 0 (never) to a year") }
                ttl = seconds
            }
            if let unknown = p.keys.first(where: { !Endpoints.positionMembers.contains($0) }) {
                throw invalid("unknown member \(Quote.input(unknown)); a position has id, position, time, fields, ttl_s")
            }
            updates.append(PositionUpdate(id: id, point: point, time: time, fields: fields, ttlSeconds: ttl))
        }
        return updates
    }

    /// An ISO 8601 time with an optional fraction of a second, as seconds since 1970.
    static func parseTime(_ text: String) -> Double? {
        var whole = text
        var fraction = 0.0
        if let dot = text.firstIndex(of: "."), let end = text[dot...].firstIndex(where: { !$0.isNumber && $0 != "." }) {
            fraction = Double("0" + text[dot..<end]) ?? 0
            whole = String(text[..<dot]) + String(text[end...])
        }
        return UTCTime.parse(whole).map { Double($0.seconds) + fraction }
    }

    // MARK: - Objects

    func liveObjects(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Parameters(request, allowed: ["limit"])
        let limit = try parameters.int("limit", default: 1000, range: 1...10_000)
        let name = try request.pathParameter("layer", context)
        guard let layer = try state.host().live.layer(name) else { throw Endpoints.unknownLiveLayer(name) }
        let objects = layer.objects.keys.sorted().prefix(limit).compactMap { layer.objects[$0] }
        return Reply.json(contentType: Reply.geoJSON, request: request) { w in
            w.beginObject()
            w.key("type"); w.string("FeatureCollection")
            w.key("numberMatched"); w.integer(Int64(layer.objects.count))
            w.key("features")
            w.beginArray()
            for object in objects { Endpoints.liveObject(&w, object, history: false) }
            w.endArray()
            w.endObject()
        }
    }

    func liveObject(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try Parameters(request, allowed: [])
        let name = try request.pathParameter("layer", context)
        let id = try request.pathParameter("id", context)
        let hub = try state.host().live
        guard hub.layer(name) != nil else { throw Endpoints.unknownLiveLayer(name) }
        guard let object = hub.object(name, id: id) else {
            throw APIError(.notFound, code: "unknown_object", detail: "the live layer \(Quote.input(name)) has no object \(Quote.input(id))")
        }
        return Reply.json(contentType: Reply.geoJSON, request: request) { w in Endpoints.liveObject(&w, object, history: true) }
    }

    func deleteLiveObject(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try Parameters(request, allowed: [])
        let name = try request.pathParameter("layer", context)
        let id = try request.pathParameter("id", context)
        try authorizeWrite(request, layers: [name])
        let engine = try state.host()
        guard engine.live.layer(name) != nil else { throw Endpoints.unknownLiveLayer(name) }
        guard try engine.removeLiveObject(name, id: id) else {
            throw APIError(.notFound, code: "unknown_object", detail: "the live layer \(Quote.input(name)) has no object \(Quote.input(id))")
        }
        return Response(status: .noContent)
    }

    /// An object as a GeoJSON Feature: its id, time, fields and expiry, and with `history`
    /// its earlier positions, oldest first.
    static func liveObject(_ w: inout JSONWriter, _ object: LiveObject, history: Bool) {
        w.beginObject()
        w.key("type"); w.string("Feature")
        w.key("id"); w.string(object.id)
        w.key("geometry"); w.geometry(.point(object.point))
        w.key("properties")
        w.beginObject()
        w.key("time"); w.string(Output.isoMilliseconds(object.time))
        if let expires = object.expires { w.key("expires"); w.string(Output.isoMilliseconds(expires)) }
        if let fields = object.fields { w.key("fields"); w.value(.object(fields)) }
        if history {
            w.key("history")
            w.beginArray()
            for fix in object.history {
                w.beginObject()
                w.key("position"); w.beginArray(); w.coordinate(fix.point.lon); w.coordinate(fix.point.lat); w.endArray()
                w.key("time"); w.string(Output.isoMilliseconds(fix.time))
                w.endObject()
            }
            w.endArray()
        }
        w.endObject()
        w.endObject()
    }

    static func unknownLiveLayer(_ name: String) -> APIError {
        APIError(.notFound, code: "unknown_live_layer", detail: "no live layer named \(Quote.input(name))")
    }

    static func parseJSON(_ body: String) throws(APIError) -> JSONValue {
        do {
            return try JSON.parse(body)
        } catch {
            throw APIError(.badRequest, code: "invalid_json", detail: "the body is not JSON: \(error)")
        }
    }
}

// MARK: - Routes, with their OpenAPI operations (served whole at /openapi.json)

extension Endpoints {
    /// Live layers, their positions and objects.
    static let liveRoutes: [Route] = [
        Route(.get, "/v1/live", { try await $0.listLiveLayers($1, $2) }, openAPI: #"""
            {
              "summary": "The live layers",
              "description": "Each with its object count, history, ttl_s and durable.",
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "layers", "content": {"application/json": {"schema": {"type": "object"}}}},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.put, "/v1/live/{layer}", { try await $0.declareLiveLayer($1, $2) }, openAPI: #"""
            {
              "summary": "Declare a live layer (or change its settings)",
              "description": "Kept in the store. Needs a write token covering the layer.",
              "security": [{"bearer": []}],
              "parameters": [
                {"name": "layer", "in": "path", "required": true, "schema": {"type": "string"}}
              ],
              "requestBody": {"required": false, "description": "Without a body: no history, no TTL.", "content": {"application/json": {"schema": {"type": "object"}, "example": {"history": {"last": 10}, "ttl_s": 600}}}},
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "The layer: name, objects, history, ttl_s, durable.", "content": {"application/json": {"schema": {"type": "object"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "401": {"$ref": "#/components/responses/Problem"},
                "403": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "413": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.delete, "/v1/live/{layer}", { try await $0.dropLiveLayer($1, $2) }, openAPI: #"""
            {
              "summary": "Drop a live layer and its objects",
              "security": [{"bearer": []}],
              "parameters": [
                {"name": "layer", "in": "path", "required": true, "schema": {"type": "string"}}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "204": {"description": "Deleted."},
                "400": {"$ref": "#/components/responses/Problem"},
                "401": {"$ref": "#/components/responses/Problem"},
                "403": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "413": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.post, "/v1/live/{layer}/positions", { try await $0.postPositions($1, $2) }, openAPI: #"""
            {
              "summary": "Send positions; every fence watching the layer is evaluated",
              "description": "Applied in order, all or none; a position older than its object's is stale and left out. Memory only: nothing is written to the store.",
              "security": [{"bearer": []}],
              "parameters": [
                {"name": "layer", "in": "path", "required": true, "schema": {"type": "string"}},
                {"name": "events", "in": "query", "schema": {"type": "boolean", "default": true}, "description": "false: only event_count, not the events."}
              ],
              "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object"}, "example": {"positions": [{"id": "phone-1", "position": [14.40519, 50.1160], "time": "2026-06-20T14:00:00Z", "fields": {"group": "A"}}]}}}},
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "updated, stale, and the events made (or event_count).", "content": {"application/json": {"schema": {"type": "object"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "401": {"$ref": "#/components/responses/Problem"},
                "403": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "413": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/v1/live/{layer}/objects", { try await $0.liveObjects($1, $2) }, openAPI: #"""
            {
              "summary": "The objects of a live layer, as GeoJSON",
              "parameters": [
                {"name": "layer", "in": "path", "required": true, "schema": {"type": "string"}},
                {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 1000}}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "A FeatureCollection: each object's position, time, expires, fields; numberMatched.", "content": {"application/geo+json": {"schema": {"type": "object"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/v1/live/{layer}/objects/{id}", { try await $0.liveObject($1, $2) }, openAPI: #"""
            {
              "summary": "One object, with its history",
              "parameters": [
                {"name": "layer", "in": "path", "required": true, "schema": {"type": "string"}},
                {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "A Feature; properties.history lists earlier positions, oldest first.", "content": {"application/geo+json": {"schema": {"type": "object"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.delete, "/v1/live/{layer}/objects/{id}", { try await $0.deleteLiveObject($1, $2) }, openAPI: #"""
            {
              "summary": "Remove an object",
              "description": "Its fences send exit with reason deleted.",
              "security": [{"bearer": []}],
              "parameters": [
                {"name": "layer", "in": "path", "required": true, "schema": {"type": "string"}},
                {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "204": {"description": "Deleted."},
                "400": {"$ref": "#/components/responses/Problem"},
                "401": {"$ref": "#/components/responses/Problem"},
                "403": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "413": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
    ]
}

/// The body of `POST /v1/live/{layer}/positions`, read by the endpoint's own reader, for
/// `vltava positions`: with no count limit (the caller sends them in batches).
public enum PositionsBody {
    public static func parse(_ body: String, now: Double) throws(APIError) -> [PositionUpdate] {
        try Endpoints.parsePositions(body, now: now, maxCount: .max)
    }
}
