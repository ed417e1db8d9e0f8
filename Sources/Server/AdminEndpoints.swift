// Operating the server: liveness and readiness, Prometheus metrics, the OpenAPI document, and
// reloads with the admin token.

import Engine
import Foundation
import Geometry
import Hummingbird
import QueryLanguage
import Store
import Support
import VectorTiles

extension Endpoints {
    // MARK: - Operations

    func health(_ request: Request, _ context: APIContext) throws -> Response {
        Reply.bytes(Endpoints.healthBody(try state.snapshot()), contentType: Reply.json, compressible: true, request: request)
    }

    /// `/healthz`'s answer: the router's and the event loop's (FastPath.swift) one place.
    static func healthBody(_ snapshot: Snapshot) -> [UInt8] {
        var w = JSONWriter(reservingCapacity: 256)
        w.beginObject()
        w.key("status"); w.string("ok")
        // Whole seconds, as Foundation's ISO 8601 style writes them, without a formatter per request.
        w.key("loaded_at"); w.string(UTCTime(seconds: Int64(snapshot.loadedAt.timeIntervalSince1970.rounded(.down))).iso)
        w.key("load_seconds"); w.number((snapshot.loadSeconds * 1000).rounded() / 1000)
        w.key("layers"); w.integer(Int64(snapshot.layers.count))
        w.key("tilesets"); w.integer(Int64(snapshot.tileSets.count))
        w.key("warnings"); w.integer(Int64(snapshot.warnings.count))
        w.endObject()
        return w.bytes
    }

    /// `/readyz`: 200 when data requests can be answered, else the problem that says why
    /// (503 `snapshot_loading`, `snapshot_unavailable`, `database_unavailable`).
    func readiness(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try Parameters(request, allowed: [])
        switch await state.ready() {
        case .success:
            return Reply.json(request: request) { w in
                w.beginObject()
                w.key("status"); w.string("ready")
                w.endObject()
            }
        case .failure(let problem):
            throw problem
        }
    }

    func metricsText(_ request: Request, _ context: APIContext) throws -> Response {
        let snapshot = state.currentSnapshot
        var text = metrics.render(snapshotLoadedAt: snapshot?.loadedAt, snapshotLoadSeconds: snapshot?.loadSeconds)
        text += Endpoints.capacityMetrics(connections: connections.counts, heavy: heavy.counts)
        text += state.currentSource?.metrics() ?? ""
        return Reply.text(text, contentType: "text/plain; version=0.0.4; charset=utf-8", request: request)
    }

    /// The connection limits' and the heavy pool's gauges and counters.
    static func capacityMetrics(connections: (open: Int, peak: Int, totals: ConnectionLimiter.Counts), heavy: (queued: Int, running: Int, refused: Int)) -> String {
        func header(_ name: String, _ type: String, _ help: String) -> String { "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n" }
        var out = header("vltava_connections_open", "gauge", "Connections open now.")
        out += "vltava_connections_open \(connections.open)\n"
        out += header("vltava_connections_open_peak", "gauge", "The most connections open at once since the start.")
        out += "vltava_connections_open_peak \(connections.peak)\n"
        out += header("vltava_connections_closed_total", "counter", "Connections the server closed for its limits, by reason.")
        out += "vltava_connections_closed_total{reason=\"evicted\"} \(connections.totals.evicted)\n"
        out += "vltava_connections_closed_total{reason=\"header_timeout\"} \(connections.totals.headerTimeouts)\n"
        out += "vltava_connections_closed_total{reason=\"refused\"} \(connections.totals.refused)\n"
        out += header("vltava_heavy_running", "gauge", "Heavy requests (query, schedule check, route, tiles) working now.")
        out += "vltava_heavy_running \(heavy.running)\n"
        out += header("vltava_heavy_queued", "gauge", "Heavy requests waiting for a thread.")
        out += "vltava_heavy_queued \(heavy.queued)\n"
        out += header("vltava_heavy_busy_total", "counter", "Heavy requests answered 503 busy.")
        out += "vltava_heavy_busy_total \(heavy.refused)\n"
        return out
    }

    /// As `application/vnd.oai.openapi+json;version=3.0` to a client that asks for it (OGC
    /// API's `service-desc`), else as `application/json`.
    func openAPI(_ request: Request, _ context: APIContext) throws -> Response {
        let openAPIType = (request.headers[.accept] ?? "").contains("application/vnd.oai.openapi+json")
        return Reply.bytes(Array(OpenAPI.document.utf8), contentType: openAPIType ? Endpoints.openAPIMediaType : Reply.json,
                           compressible: true, request: request)
    }

    /// Disabled (404 `admin_disabled`) unless a token is configured; then it needs
    /// `Authorization: Bearer TOKEN` (401 otherwise).
    func reload(_ request: Request, _ context: APIContext) async throws -> Response {
        guard let token = configuration.adminToken, !token.isEmpty else {
            throw APIError(.notFound, code: "admin_disabled", detail: "the admin API is disabled: start the server with --admin-token-file, VLTAVA_ADMIN_TOKEN or --admin-token")
        }
        let given = request.headers[.authorization] ?? ""
        guard given.hasPrefix("Bearer "), Endpoints.constantTimeEqual(Array(given.utf8.dropFirst(7)), Array(token.utf8)) else {
            throw APIError(.unauthorized, code: "unauthorized", detail: "send Authorization: Bearer TOKEN with the admin token",
                           headers: [.wwwAuthenticate: "Bearer realm=\"vltava-admin\""])
        }
        let snapshot: Snapshot
        do {
            snapshot = try await state.reload()
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError(.internalServerError, code: "reload_failed", detail: "the reload failed and the previous data stays: \(error)")
        }
        context.logger.info("snapshot reloaded", metadata: ["layers": "\(snapshot.layers.count)", "load_seconds": "\(snapshot.loadSeconds)"])
        context.logger.logWarnings(of: snapshot)
        return Reply.json(request: request) { w in
            w.beginObject()
            w.key("status"); w.string("reloaded")
            // Whole seconds, as Foundation's ISO 8601 style writes them, without a formatter per request.
        w.key("loaded_at"); w.string(UTCTime(seconds: Int64(snapshot.loadedAt.timeIntervalSince1970.rounded(.down))).iso)
            w.key("load_seconds"); w.number((snapshot.loadSeconds * 1000).rounded() / 1000)
            w.key("layers"); w.integer(Int64(snapshot.layers.count))
            w.key("warnings"); w.integer(Int64(snapshot.warnings.count))
            w.endObject()
        }
    }
}

// MARK: - Routes, with their OpenAPI operations (served whole at /openapi.json)

extension Endpoints {
    /// Operating the server.
    static let adminRoutes: [Route] = [
        Route(.post, "/v1/admin/reload", { try await $0.reload($1, $2) }, openAPI: #"""
            {
              "summary": "Reload the snapshot from the store",
              "description": "Disabled (404 admin_disabled) unless the server has an admin token; then requires Authorization: Bearer TOKEN.",
              "security": [{"bearer": []}],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "status reloaded, loaded_at, load_seconds, layers, warnings (features left out; the log names them).", "content": {"application/json": {"schema": {"type": "object"}}}},
                "401": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "500": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/healthz", { try $0.health($1, $2) }, openAPI: #"""
            {
              "summary": "Health: 200 once the snapshot is loaded",
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "status ok, loaded_at, load_seconds, layers, tilesets, warnings (features left out at load; the log names them).", "content": {"application/json": {"schema": {"type": "object"}}}},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/readyz", { try await $0.readiness($1, $2) }, openAPI: #"""
            {
              "summary": "Readiness: 200 when data requests can be answered (the one for a load balancer to probe)",
              "description": "A snapshot is loaded and its store answers: a GeoPackage once loaded, a PostGIS store when its database answers a trivial statement within 1 s (the answer is kept for 250 ms). /healthz is the process's liveness and stays 200 while the database is down.",
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "status ready.", "content": {"application/json": {"schema": {"type": "object"}}}},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/metrics", { try $0.metricsText($1, $2) }, openAPI: #"""
            {
              "summary": "Prometheus text format: requests and latency histograms per route, reloads",
              "responses": {"414": {"$ref": "#/components/responses/Problem"}, "200": {"description": "Metrics.", "content": {"text/plain": {"schema": {"type": "string"}}}}}
            }
            """#),
        Route(.get, "/openapi.json", { try $0.openAPI($1, $2) }, openAPI: #"""
            {
              "summary": "This document",
              "responses": {"414": {"$ref": "#/components/responses/Problem"}, "200": {"description": "OpenAPI 3.0; as application/vnd.oai.openapi+json;version=3.0 when the Accept header asks for it.", "content": {"application/json": {"schema": {"type": "object"}}, "application/vnd.oai.openapi+json;version=3.0": {"schema": {"type": "object"}}}}}
            }
            """#),
    ]
}
