// Search as people type (docs/HTTP_API.md, "Search"): `GET /v1/search?q=gori&lon=…&lat=…`, one
// request per keystroke. The matching and ranking are the Engine's (`Snapshot.search`).

import Engine
import Hummingbird
import Support

extension Endpoints {
    func search(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Parameters(request, allowed: ["q", "lon", "lat", "layers", "limit", "geometry"])
        guard let text = parameters.string("q") else { throw APIError.missingParameter("q", "what the user typed, e.g. gori") }
        var options = SearchOptions()
        if parameters.string("lon") != nil || parameters.string("lat") != nil { options.near = try parameters.position() }
        options.layers = parameters.string("layers").map { $0.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) } }
        options.limit = try parameters.int("limit", default: 10, range: nil)  // checked by `search`
        let mode = GeometryMode(try parameters.bool("geometry"))
        let snapshot = try state.snapshot()
        let asked = options
        // On the heavy pool: a layer's first search builds its index, and every search keeps
        // the request's deadline.
        return try await heavyWork(context, snapshot) { budget in
            let hits = try engine { () throws(EngineError) in try snapshot.search(text, options: asked, deadline: budget.deadline) }
            return try Reply.json(contentType: Reply.geoJSON, request: request, limit: snapshot.limits.maxResponseBytes) { w in
                Output.searchHits(&w, text, hits, geometry: mode)
            }
        }
    }
}

// MARK: - Routes, with their OpenAPI operations (served whole at /openapi.json)

extension Endpoints {
    /// Search.
    static let searchRoutes: [Route] = [
        Route(.get, "/v1/search", { try await $0.search($1, $2) }, openAPI: #"""
            {
              "summary": "Features by name as people type: by a word's beginning, without diacritics, by Czech word forms, despite typos; nearest first among equal matches",
              "parameters": [
                {"name": "q", "in": "query", "required": true, "schema": {"type": "string"}, "example": "gori", "description": "What the user typed; every word must meet a word of the name."},
                {"name": "lon", "in": "query", "schema": {"type": "number", "minimum": -180, "maximum": 180}, "example": 14.4085, "description": "The user's position (with lat): equal matches nearest first."},
                {"name": "lat", "in": "query", "schema": {"type": "number", "minimum": -90, "maximum": 90}, "example": 50.117},
                {"name": "layers", "in": "query", "schema": {"type": "string"}, "example": "pens,pavilions,animals", "description": "Comma-separated layers; default every layer with a name column (name, *_name, name_*, nazev*)."},
                {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 10}},
                {"$ref": "#/components/parameters/geometry"}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "A GeoJSON FeatureCollection, best first; each Feature's properties: layer, fid, name, column, edits, matched (typed, word, how: exact|prefix|stem|typo, edits), distance_m, linked (layer, fid, name, distance_m).", "content": {"application/geo+json": {"schema": {"$ref": "#/components/schemas/FeatureCollection"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
    ]
}
