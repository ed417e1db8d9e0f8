// Fences and their events over HTTP (docs/HTTP_API.md, "Live layers and fences"): declare,
// list and drop fences (a token for every layer), and read the events, or follow them as
// Server-Sent Events resumed after Last-Event-ID.

import Engine
import Foundation
import Geometry
import Hummingbird
import ServiceLifecycle
import Support

extension Endpoints {
    // MARK: - Fences

    func putFence(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try Parameters(request, allowed: [])
        let name = try request.pathParameter("name", context)
        try authorizeFences(request)
        let body = try await Endpoints.readBody(request, limit: Endpoints.maxWriteBodyBytes, timeout: configuration.requestTimeout)
        let json = try Endpoints.parseJSON(body)
        let definition = try engine { () throws(EngineError) in try FenceDefinition.parse(name: name, json) }
        let status = try await state.writing { host in try engine { () throws(EngineError) in try host.putFence(definition) } }
        return Reply.json(request: request) { w in Endpoints.fence(&w, status) }
    }

    func listFences(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try Parameters(request, allowed: [])
        let fences = try state.host().fences
        return Reply.json(request: request) { w in
            w.beginObject()
            w.key("fences")
            w.beginArray()
            for fence in fences { Endpoints.fence(&w, fence) }
            w.endArray()
            w.endObject()
        }
    }

    func getFence(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try Parameters(request, allowed: [])
        let name = try request.pathParameter("name", context)
        guard let fence = try state.host().fences.first(where: { $0.definition.name == name }) else { throw Endpoints.unknownFence(name) }
        return Reply.json(request: request) { w in Endpoints.fence(&w, fence) }
    }

    func deleteFence(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try Parameters(request, allowed: [])
        let name = try request.pathParameter("name", context)
        try authorizeFences(request)
        let deleted = try await state.writing { host in try engine { () throws(EngineError) in try host.deleteFence(name) } }
        guard deleted else { throw Endpoints.unknownFence(name) }
        return Response(status: .noContent)
    }

    /// Fences watch any layer and fire on the stations' series: they need a token for every layer.
    func authorizeFences(_ request: Request) throws(APIError) {
        guard try writeGrant(request) == nil else {
            throw APIError(.forbidden, code: "forbidden", detail: "fences need the admin token or a write token for every layer")
        }
    }

    static func fence(_ w: inout JSONWriter, _ fence: FenceStatus) {
        w.beginObject()
        w.key("name"); w.string(fence.definition.name)
        w.key("definition"); w.value(fence.definition.json)
        w.key("running"); w.bool(fence.problem == nil)
        if let problem = fence.problem { w.key("problem"); w.string(problem) }
        w.endObject()
    }

    static func unknownFence(_ name: String) -> APIError {
        APIError(.notFound, code: "unknown_fence", detail: "no fence named \(Quote.input(name))")
    }

    // MARK: - Events

    /// GET /v1/events?fences=a,b&after=ID&limit=N: the events after ID, oldest first (JSON),
    /// or with `Accept: text/event-stream` as Server-Sent Events that stay open.
    func events(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Parameters(request, allowed: ["fences", "after", "limit"])
        let names = parameters.string("fences").map { Set($0.split(separator: ",").map(String.init)) }
        return try await events(request, fences: names, parameters: parameters)
    }

    func fenceEvents(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Parameters(request, allowed: ["after", "limit"])
        let name = try request.pathParameter("name", context)
        guard try state.host().fences.contains(where: { $0.definition.name == name }) else { throw Endpoints.unknownFence(name) }
        return try await events(request, fences: [name], parameters: parameters)
    }

    private func events(_ request: Request, fences: Set<String>?, parameters: Parameters) async throws -> Response {
        let hub = try state.host().live
        var after: Int64?
        if let text = parameters.string("after") {
            guard let id = Int64(text), id >= 0 else {
                throw APIError(.badRequest, code: "invalid_parameter", detail: "after: \(Quote.input(text)) is not an event id",
                               extra: JSONObject([("parameter", .string("after"))]))
            }
            after = id
        }
        let limit = try parameters.int("limit", default: 1000, range: 1...10_000)
        if (request.headers[.accept] ?? "").contains("text/event-stream") {
            if let id = try Endpoints.lastEventID(request) { after = id }
            // A new stream without an id starts now; with one, it resumes after it.
            return eventStream(hub, after: after ?? hub.lastEventID, fences: fences)
        }
        let page = hub.events(after: after ?? 0, fences: fences, limit: limit)
        return Reply.json(request: request) { w in
            w.beginObject()
            w.key("events")
            w.beginArray()
            for event in page.events { Output.fenceEvent(&w, event) }
            w.endArray()
            w.key("last"); w.integer(page.last)
            w.key("missed"); w.bool(page.missed)
            w.endObject()
        }
    }

    /// Events as Server-Sent Events: each an `event:` of its kind whose `id` is its number, so
    /// `Last-Event-ID` resumes exactly after it. A stream resuming after events no longer kept
    /// (or another run's) first gets a `missed` event saying from where it goes on. SIGTERM
    /// ends it, as the change feed's.
    func eventStream(_ hub: LiveHub, after id: Int64, fences: Set<String>?) -> Response {
        let signal = state.eventSignal
        let body = ResponseBody { writer in
            let (wakes, token) = signal.subscribe(heartbeat: Endpoints.heartbeat)
            defer { signal.cancel(token) }
            try await withGracefulShutdownHandler {
                var last = id
                var wake = wakes.makeAsyncIterator()
                try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
                while true {
                    let page = hub.events(after: last, fences: fences, limit: 1000)
                    var text = ""
                    if page.missed {
                        text += "event: missed\ndata: {\"after\":\(last),\"resumed_at\":\(page.events.first?.id ?? page.last)}\n\n"
                    }
                    for event in page.events {
                        var w = JSONWriter(reservingCapacity: 256)
                        Output.fenceEvent(&w, event)
                        text += "id: \(event.id)\nevent: \(event.kind)\ndata: \(String(decoding: w.bytes, as: UTF8.self))\n\n"
                    }
                    if !text.isEmpty { try await writer.write(ByteBuffer(string: text)) }
                    if page.last != last {
                        last = page.last
                        continue
                    }
                    guard let woken = await wake.next() else { break }
                    if woken == .heartbeat { try await writer.write(ByteBuffer(string: ": keep-alive\n\n")) }
                }
            } onGracefulShutdown: {
                signal.cancel(token)
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"], body: body)
    }
}

// MARK: - Routes, with their OpenAPI operations (served whole at /openapi.json)

extension Endpoints {
    /// Fences and their events.
    static let fenceRoutes: [Route] = [
        Route(.get, "/v1/fences", { try await $0.listFences($1, $2) }, openAPI: #"""
            {
              "summary": "The fences",
              "description": "Each with its definition and whether it runs (problem says why not).",
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "fences", "content": {"application/json": {"schema": {"type": "object"}}}},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.put, "/v1/fences/{name}", { try await $0.putFence($1, $2) }, openAPI: #"""
            {
              "summary": "Add or replace a fence",
              "description": "Kept in the store; needs the admin token or a write token for every layer. Areas: point with radius_m, geometry, layer (fids, match, within_m), reach (from, minutes or metres), near (another moving object, radius_m); or a threshold on a time series (place, column, at_least or rise_by, within_s). docs/HTTP_API.md.",
              "security": [{"bearer": []}],
              "parameters": [
                {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}
              ],
              "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object"}, "example": {"watch": {"layer": "visitors"}, "area": {"layer": "pens", "match": {"name": "gorily"}, "within_m": 50}, "hysteresis_m": 10, "dwell_s": 5}}}},
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "The fence: name, definition, running.", "content": {"application/json": {"schema": {"type": "object"}}}},
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
        Route(.get, "/v1/fences/{name}", { try await $0.getFence($1, $2) }, openAPI: #"""
            {
              "summary": "One fence",
              "parameters": [
                {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "name, definition, running, problem.", "content": {"application/json": {"schema": {"type": "object"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.delete, "/v1/fences/{name}", { try await $0.deleteFence($1, $2) }, openAPI: #"""
            {
              "summary": "Delete a fence",
              "security": [{"bearer": []}],
              "parameters": [
                {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}
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
        Route(.get, "/v1/fences/{name}/events", { try await $0.fenceEvents($1, $2) }, openAPI: #"""
            {
              "summary": "A fence's events",
              "description": "With Accept: text/event-stream, Server-Sent Events that stay open, resumed after Last-Event-ID; a stream that missed events gets an event named missed first.",
              "parameters": [
                {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}},
                {"name": "after", "in": "query", "schema": {"type": "integer", "minimum": 0}, "description": "The events after this id (0: every event kept)."},
                {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 1000}}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "events, last (the id to ask after next), missed.", "content": {"application/json": {"schema": {"type": "object"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/v1/events", { try await $0.events($1, $2) }, openAPI: #"""
            {
              "summary": "Every fence's events, or those of some fences",
              "description": "With Accept: text/event-stream, Server-Sent Events (see /v1/fences/{name}/events).",
              "parameters": [
                {"name": "fences", "in": "query", "schema": {"type": "string"}, "description": "Fence names, comma-separated."},
                {"name": "after", "in": "query", "schema": {"type": "integer", "minimum": 0}, "description": "The events after this id (0: every event kept)."},
                {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 1000}}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "events, last, missed.", "content": {"application/json": {"schema": {"type": "object"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
    ]
}
