// The store's layers: what they are (/v1/layers), and the two hot questions on one layer,
// containing and nearest (docs/HTTP_API.md).

import Engine
import Foundation
import Geometry
import Hummingbird
import QueryLanguage
import Store
import VectorTiles

extension Endpoints {
    // MARK: - Layers

    func layers(_ request: Request, _ context: APIContext) throws -> Response {
        _ = try Parameters(request, allowed: [])
        let snapshot = try state.snapshot()
        return Reply.json(request: request) { w in
            w.beginObject()
            w.key("layers")
            w.beginArray()
            for layer in snapshot.layers {
                w.beginObject()
                w.key("name"); w.string(layer.name)
                w.key("kind"); w.string(layer.info.kind.rawValue)
                w.key("family"); w.string(layer.family.rawValue)
                w.key("geometry_type"); if let type = layer.info.geometryType { w.string(type) } else { w.null() }
                w.key("count"); w.integer(Int64(layer.rowCount))
                w.key("bounds"); Output.bounds(&w, layer.bounds)
                w.key("columns")
                w.beginArray()
                for column in layer.info.columns where column.name != layer.info.geometryColumn {
                    w.beginObject()
                    w.key("name"); w.string(column.name)
                    w.key("type"); w.string(column.typeDescription)
                    w.endObject()
                }
                w.endArray()
                if let series = snapshot.timeSeriesByLayer[layer.name] {
                    w.key("time_series")
                    w.beginObject()
                    w.key("table"); w.string(series.table)
                    w.key("columns"); w.beginArray(); for column in series.columns { w.string(column) }; w.endArray()
                    w.endObject()
                }
                if let link = layer.info.timeSeries { w.key("time_series_of"); w.string(link.keyLayer) }
                w.endObject()
            }
            w.endArray()
            w.key("tilesets")
            w.beginArray()
            for name in snapshot.tileSets.keys.sorted() {
                w.beginObject()
                w.key("name"); w.string(name)
                w.key("tilejson"); w.string("/v1/tiles/\(Endpoints.pathEncoded(name)).json")
                w.endObject()
            }
            w.endArray()
            w.endObject()
        }
    }

    // MARK: - Containing

    func containing(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Parameters(request, allowed: ["lon", "lat", "geometry"])
        let point = try parameters.position()
        let mode = GeometryMode(try parameters.bool("geometry"))
        let snapshot = try state.snapshot()
        let name = try request.pathParameter("layer", context)
        var layer = try engine { () throws(EngineError) in try snapshot.layer(name) }
        if layer.fetchesRows {
            // Its polygons around the point, fetched on the heavy-work pool (the hot path, a
            // layer in memory, stays free of the hop).
            let kept = layer
            layer = try await heavyWork(context, snapshot) { budget in
                try engine { () throws(EngineError) in try snapshot.rows(of: kept, for: .containing(point), deadline: budget.deadline) }
            }
        }
        let body = try Endpoints.containingBody(snapshot, layer, point, mode)
        return Reply.bytes(body, contentType: Reply.geoJSON, compressible: true, request: request)
    }

    /// containing's answer on a layer whose rows are in memory: the router's and the event
    /// loop's (FastPath.swift) one place.
    static func containingBody(_ snapshot: Snapshot, _ layer: Layer, _ point: Point, _ mode: GeometryMode) throws(APIError) -> [UInt8] {
        let matches = try engine { () throws(EngineError) in try snapshot.containing(layer, at: point) }
        return try Reply.limited(snapshot.limits.maxResponseBytes) { w in
            Output.collection(&w, layer: layer, query: point, distances: false, warnings: snapshot.coordinateWarnings(point)) { w in
                for match in matches { Output.match(&w, layer, match, geometry: mode) }
            }
        }
    }

    // MARK: - Nearest

    func nearest(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Parameters(request, allowed: ["lon", "lat", "k", "within_m", "where", "geometry"], attributes: true)
        let point = try parameters.position()
        let k = try parameters.int("k", default: 1, range: nil)  // checked by `nearest` (`Check.k`)
        let within = try parameters.double("within_m")
        let mode = GeometryMode(try parameters.bool("geometry"))
        let snapshot = try state.snapshot()
        let name = try request.pathParameter("layer", context)
        let kept = try engine { () throws(EngineError) in try snapshot.layer(name) }
        let measured = parameters.string("where").map { $0.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) } } ?? []
        let stations = snapshot.stations.flatMap { $0.layer === kept ? $0 : nil }
        let attributes = parameters.attributes
        return try await readsDatabase(context, snapshot) {
            if !(measured.isEmpty && attributes.isEmpty) {
                // Filtered after the fetch, the nearest rows fetched might not hold the k nearest that pass.
                try engine { () throws(EngineError) in
                    try kept.requireRows(for: "with where= or attribute filters on /nearest (ask POST /v1/query: FIND \(kept.name) NEAREST k TO POINT(…) WHERE …)")
                }
            }
            let layer = try engine { () throws(EngineError) in try snapshot.rows(of: kept, for: .nearest(k: k, to: point, within: within)) }
            let filter: FeatureFilter?
            do throws(FilterError) {
                filter = try Query.filter(on: layer, in: snapshot, measuring: measured, equal: attributes)
            } catch {
                throw APIError.invalidParameter(error.parameter, error.message)
            }
            let body = try Endpoints.nearestBody(snapshot, layer, stations, point, k: k, within: within, filter: filter, mode)
            return Reply.bytes(body, contentType: Reply.geoJSON, compressible: true, request: request)
        }
    }

    /// nearest's answer on `layer`'s rows (with the stations' latest readings when it is their
    /// layer): the router's and the event loop's (FastPath.swift) one place.
    static func nearestBody(_ snapshot: Snapshot, _ layer: Layer, _ stations: Stations?, _ point: Point, k: Int, within: Double?,
                            filter: FeatureFilter?, _ mode: GeometryMode) throws(APIError) -> [UInt8] {
        let matches = try engine { () throws(EngineError) in try snapshot.nearest(layer, to: point, k: k, within: within, filter: filter) }
        let readings = try stations.map { stations throws(APIError) in try engine { () throws(EngineError) in try snapshot.readings(stations, matches) } }
        return try Reply.limited(snapshot.limits.maxResponseBytes) { w in
            Output.collection(&w, layer: layer, query: point, distances: true, warnings: snapshot.coordinateWarnings(point)) { w in
                for (n, match) in matches.enumerated() {
                    Output.match(&w, layer, match, geometry: mode, reading: readings?[n])
                }
            }
        }
    }
}

// MARK: - Routes, with their OpenAPI operations (served whole at /openapi.json)

extension Endpoints {
    /// The layers, and containing and nearest on one layer.
    static let layerRoutes: [Route] = [
        Route(.get, "/v1/layers", { try $0.layers($1, $2) }, openAPI: #"""
            {
              "summary": "The layers and tile sets of the store",
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "Layers with kind, family, count, bounds and columns; tile sets with their TileJSON URL.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Layers"}}}},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/v1/layers/{layer}/containing", { try await $0.containing($1, $2) }, openAPI: #"""
            {
              "summary": "Features of a polygon layer that contain a point, smallest first",
              "parameters": [
                {"$ref": "#/components/parameters/layer"},
                {"$ref": "#/components/parameters/lon"},
                {"$ref": "#/components/parameters/lat"},
                {"$ref": "#/components/parameters/geometry"}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "A GeoJSON FeatureCollection.", "content": {"application/geo+json": {"schema": {"$ref": "#/components/schemas/FeatureCollection"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/v1/layers/{layer}/nearest", { try await $0.nearest($1, $2) }, openAPI: #"""
            {
              "summary": "The k features nearest to a point, nearest first",
              "parameters": [
                {"$ref": "#/components/parameters/layer"},
                {"$ref": "#/components/parameters/lon"},
                {"$ref": "#/components/parameters/lat"},
                {"name": "k", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 1}},
                {"name": "within_m", "in": "query", "schema": {"type": "number", "minimum": 0}, "description": "Only features within this many metres."},
                {"name": "where", "in": "query", "schema": {"type": "string"}, "example": "no2", "description": "Comma-separated time-series columns: only features whose time series measures all of them."},
                {"name": "attr", "in": "query", "style": "deepObject", "explode": true, "schema": {"type": "object", "additionalProperties": {"type": "string"}}, "description": "attr.NAME=value: only features whose attribute NAME equals value."},
                {"$ref": "#/components/parameters/geometry"}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "A GeoJSON FeatureCollection; each Feature has distance_m, and latest/observed_until when the layer has a time series.", "content": {"application/geo+json": {"schema": {"$ref": "#/components/schemas/FeatureCollection"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
    ]
}
