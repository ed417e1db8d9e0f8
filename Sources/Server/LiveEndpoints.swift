// Live layers, fences and their events over HTTP (docs/HTTP_API.md, "Live layers and fences"):
//
//   PUT    /v1/live/{layer}                 declare a live layer (history, ttl_s)
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

extension Endpoints {
    /// Bytes of a positions batch: 10,000 positions with a few fields each.
    static let maxPositionsBodyBytes = 8 << 20

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
            if let unknown = p.keys.first(where: { !["id", "position", "time", "fields", "ttl_s"].contains($0) }) {
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
        let hub = try state.host().live
        guard hub.layer(name) != nil else { throw Endpoints.unknownLiveLayer(name) }
        guard hub.remove(name, id: id) else {
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
    private func authorizeFences(_ request: Request) throws(APIError) {
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

    // MARK: - Webhooks

    func putWebhook(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try Parameters(request, allowed: [])
        let name = try request.pathParameter("name", context)
        try authorizeFences(request)
        let body = try await Endpoints.readBody(request, limit: 1 << 16, timeout: configuration.requestTimeout)
        let json = try Endpoints.parseJSON(body)
        let webhook = try engine { () throws(EngineError) in try WebhookDefinition.parse(name: name, json) }
        let host = try await state.writing { host in
            try engine { () throws(EngineError) in try host.putWebhook(webhook) }
            return host
        }
        state.webhooks.reconcile(host)
        return webhookResponse(request, webhook)
    }

    func listWebhooks(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try Parameters(request, allowed: [])
        try authorizeFences(request)
        let webhooks = try state.host().webhooks
        return Reply.json(request: request) { w in
            w.beginObject()
            w.key("webhooks")
            w.beginArray()
            for webhook in webhooks { webhookObject(&w, webhook) }
            w.endArray()
            w.endObject()
        }
    }

    func getWebhook(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try Parameters(request, allowed: [])
        let name = try request.pathParameter("name", context)
        try authorizeFences(request)
        guard let webhook = try state.host().webhooks.first(where: { $0.name == name }) else { throw Endpoints.unknownWebhook(name) }
        return webhookResponse(request, webhook)
    }

    func deleteWebhook(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try Parameters(request, allowed: [])
        let name = try request.pathParameter("name", context)
        try authorizeFences(request)
        let (host, deleted) = try await state.writing { host in (host, try engine { () throws(EngineError) in try host.deleteWebhook(name) }) }
        guard deleted else { throw Endpoints.unknownWebhook(name) }
        state.webhooks.reconcile(host)
        return Response(status: .noContent)
    }

    private func webhookResponse(_ request: Request, _ webhook: WebhookDefinition) -> Response {
        Reply.json(request: request) { w in webhookObject(&w, webhook) }
    }

    /// A webhook as listed: never its secret; with how its delivery goes.
    private func webhookObject(_ w: inout JSONWriter, _ webhook: WebhookDefinition) {
        w.beginObject()
        w.key("name"); w.string(webhook.name)
        w.key("url"); w.string(webhook.url.absoluteString)
        w.key("fences")
        if let fences = webhook.fences { w.beginArray(); for fence in fences.sorted() { w.string(fence) }; w.endArray() } else { w.null() }
        if let status = state.webhooks.status(webhook.name) {
            w.key("delivered"); w.integer(Int64(status.delivered))
            w.key("attempts"); w.integer(Int64(status.attempts))
            w.key("last_event_id"); w.integer(status.cursor)
            w.key("last_error"); if let error = status.lastError { w.string(error) } else { w.null() }
            w.key("dead_letters")
            w.beginArray()
            for letter in status.deadLetters {
                w.beginObject()
                w.key("event_id"); if let id = letter.eventID { w.integer(id) } else { w.null() }
                w.key("reason"); w.string(letter.reason)
                w.key("at"); w.string(Output.isoMilliseconds(letter.at))
                w.endObject()
            }
            w.endArray()
        }
        w.endObject()
    }

    static func unknownWebhook(_ name: String) -> APIError {
        APIError(.notFound, code: "unknown_webhook", detail: "no webhook named \(Quote.input(name))")
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

    static func parseJSON(_ body: String) throws(APIError) -> JSONValue {
        do {
            return try JSON.parse(body)
        } catch {
            throw APIError(.badRequest, code: "invalid_json", detail: "the body is not JSON: \(error)")
        }
    }
}
