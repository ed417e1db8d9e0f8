// Webhooks over HTTP: where fence events are delivered (Webhooks.swift delivers them).

import Engine
import Foundation
import Geometry
import Hummingbird
import ServiceLifecycle
import Support

extension Endpoints {
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
}

// MARK: - Routes, with their OpenAPI operations (served whole at /openapi.json)

extension Endpoints {
    /// Webhooks.
    static let webhookRoutes: [Route] = [
        Route(.get, "/v1/webhooks", { try await $0.listWebhooks($1, $2) }, openAPI: #"""
            {
              "summary": "The webhooks, with how their delivery goes",
              "description": "Never their secrets.",
              "security": [{"bearer": []}],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "webhooks: name, url, fences, delivered, attempts, last_event_id, last_error, dead_letters.", "content": {"application/json": {"schema": {"type": "object"}}}},
                "401": {"$ref": "#/components/responses/Problem"},
                "403": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.put, "/v1/webhooks/{name}", { try await $0.putWebhook($1, $2) }, openAPI: #"""
            {
              "summary": "Add or replace a webhook",
              "description": "Each event of its fences is POSTed alone, in order, with Vltava-Event-Id and Vltava-Signature: sha256=HMAC-SHA256(secret, body); retried with back-off, then a dead letter.",
              "security": [{"bearer": []}],
              "parameters": [
                {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}
              ],
              "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object"}, "example": {"url": "https://app.example/hooks/vltava", "secret": "a-secret-of-16-bytes-or-more", "fences": ["gorillas"]}}}},
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "The webhook (without its secret).", "content": {"application/json": {"schema": {"type": "object"}}}},
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
        Route(.get, "/v1/webhooks/{name}", { try await $0.getWebhook($1, $2) }, openAPI: #"""
            {
              "summary": "One webhook and its delivery",
              "security": [{"bearer": []}],
              "parameters": [
                {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "name, url, fences, delivered, attempts, last_event_id, last_error, dead_letters.", "content": {"application/json": {"schema": {"type": "object"}}}},
                "401": {"$ref": "#/components/responses/Problem"},
                "403": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.delete, "/v1/webhooks/{name}", { try await $0.deleteWebhook($1, $2) }, openAPI: #"""
            {
              "summary": "Delete a webhook",
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
    ]
}
