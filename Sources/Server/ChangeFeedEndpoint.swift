// The change feed (/v1/changes): the changes after a sequence number, as JSON, or live as
// Server-Sent Events resumed after Last-Event-ID.

import Engine
import Foundation
import Geometry
import Hummingbird
import ServiceLifecycle
import Store
import Support

extension Endpoints {
    // MARK: - The change feed

    /// GET /v1/changes?since=N&limit=M: the changes after N, oldest first; with `Accept:
    /// text/event-stream`, the same as Server-Sent Events, live (`changeStream`).
    func changes(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Parameters(request, allowed: ["since", "limit"])
        let since = try parameters.int("since", default: 0, range: 0...Int.max)
        let limit = try parameters.int("limit", default: 1000, range: 1...10_000)
        if (request.headers[.accept] ?? "").contains("text/event-stream") {
            // A reconnecting client resumes after the last event it saw.
            let resume = try Endpoints.lastEventID(request) ?? Int64(since)
            _ = try state.snapshot()
            return changeStream(after: resume)
        }
        let changes = try await state.changes(since: Int64(since), limit: limit)
        return Reply.json(request: request) { w in
            w.beginObject()
            w.key("changes")
            w.beginArray()
            for change in changes { Endpoints.change(&w, change) }
            w.endArray()
            w.key("last"); w.integer(changes.last?.sequence ?? Int64(since))
            w.endObject()
        }
    }

    /// The `Last-Event-ID` a reconnecting EventSource sends (nil: none), for the change feed
    /// and the fences' events alike.
    static func lastEventID(_ request: Request) throws(APIError) -> Int64? {
        guard let last = request.headers.first(where: { $0.name.canonicalName == "last-event-id" })?.value else { return nil }
        guard let id = Int64(last.trimmingCharacters(in: .whitespaces)), id >= 0 else {
            throw APIError(.badRequest, code: "invalid_parameter", detail: "Last-Event-ID: \(Quote.input(last)) is not an event id",
                           extra: JSONObject([("parameter", .string("Last-Event-ID"))]))
        }
        return id
    }

    /// The change feed as Server-Sent Events: every change after `sequence`, each an event
    /// whose `id` is its sequence number (so a client's `Last-Event-ID` resumes exactly after
    /// it), then each new one as writes commit, until the client leaves. The events are read
    /// from the store's change table, so a stream misses nothing a commit holds, whatever
    /// wakes it. A graceful shutdown (SIGTERM) ends every stream, so the server stops rather
    /// than wait for clients that never leave; they reconnect to another replica and resume.
    func changeStream(after sequence: Int64) -> Response {
        let state = self.state
        let body = ResponseBody { writer in
            let (wakes, token) = state.changeSignal.subscribe(heartbeat: Endpoints.heartbeat)
            defer { state.changeSignal.cancel(token) }
            try await withGracefulShutdownHandler {
                try await Endpoints.stream(changesAfter: sequence, state: state, wakes: wakes, to: &writer)
            } onGracefulShutdown: {
                state.changeSignal.cancel(token)
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"], body: body)
    }

    /// The events of a stream until its wakes end (the client left, or the server stops).
    static func stream(changesAfter sequence: Int64, state: EngineState, wakes: AsyncStream<ChangeSignal.Wake>,
                       to writer: inout any ResponseBodyWriter) async throws {
        var last = sequence
        var wake = wakes.makeAsyncIterator()
        try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
        while true {
            let changes = try await state.changes(since: last, limit: 1000)
            if let newest = changes.last {
                var text = ""
                for change in changes {
                    var w = JSONWriter(reservingCapacity: 128)
                    Endpoints.change(&w, change)
                    text += "id: \(change.sequence)\nevent: change\ndata: \(String(decoding: w.bytes, as: UTF8.self))\n\n"
                }
                try await writer.write(ByteBuffer(string: text))
                last = newest.sequence
                continue
            }
            guard let woken = await wake.next() else { break }
            if woken == .heartbeat { try await writer.write(ByteBuffer(string: ": keep-alive\n\n")) }
        }
    }

    static func change(_ w: inout JSONWriter, _ change: Change) {
        w.beginObject()
        w.key("sequence"); w.integer(change.sequence)
        w.key("layer"); w.string(change.layer)
        w.key("fid"); if let fid = change.fid { w.integer(fid) } else { w.null() }
        w.key("change"); w.string(change.kind.rawValue)
        w.key("at"); w.string(change.at)
        w.endObject()
    }
}

// MARK: - Routes, with their OpenAPI operations (served whole at /openapi.json)

extension Endpoints {
    /// The change feed.
    static let changeRoutes: [Route] = [
        Route(.get, "/v1/changes", { try await $0.changes($1, $2) }, openAPI: #"""
            {
              "summary": "The change feed: every write's changes after a sequence number, oldest first",
              "description": "With Accept: text/event-stream, the same as Server-Sent Events that stay open: each change an event whose id is its sequence number, resumed after a Last-Event-ID header (docs/HTTP_API.md).",
              "parameters": [
                {"name": "since", "in": "query", "schema": {"type": "integer", "minimum": 0, "default": 0}},
                {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 1000}}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "changes (sequence, layer, fid, change, at) and last, the sequence to ask after next.", "content": {"application/json": {"schema": {"type": "object"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
    ]
}
