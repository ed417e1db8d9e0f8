// One call per screen of an app: a walking route between two points (/v1/route), "where am I and
// what is the air like" (/v1/here), and the air at a point (/v1/air).

import Engine
import Foundation
import Geometry
import Hummingbird
import QueryLanguage
import Store
import Support
import VectorTiles

extension Endpoints {
    // MARK: - Route

    func route(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Parameters(request, allowed: ["from", "to", "network", "profile", "max_snap_m", "departure"])
        let from = try parameters.pair("from"), to = try parameters.pair("to")
        let profileName = parameters.string("profile") ?? "foot"
        guard let profile = WalkingProfile(rawValue: profileName) else {
            throw APIError.invalidParameter("profile", "unknown profile \(Quote.input(profileName)) (profiles: \(WalkingProfile.names))")
        }
        let maxSnap = try parameters.double("max_snap_m")
        let network = parameters.string("network")
        let departure = try parameters.string("departure").map { text throws(APIError) in
            guard let date = RouteRequest.departure(parsing: text) else {
                throw APIError.invalidParameter("departure", "\(Quote.input(text)) is not a time: e.g. 2026-11-28T13:55:00%2B01:00, or 2026-11-28T13:55 in Prague")
            }
            return date
        }
        let snapshot = try state.snapshot()
        return try await heavyWork(context, snapshot) { budget in
            let answer = try engine { () throws(EngineError) in
                try snapshot.route(RouteRequest(from: .point(from), to: .point(to), profile: profile, maxSnapMetres: maxSnap, departure: departure),
                                   on: snapshot.network(network), deadline: budget.deadline)
            }
            return try Reply.json(request: request, limit: snapshot.limits.maxResponseBytes) { w in Output.route(&w, answer) }
        }
    }

    // MARK: - Here

    /// The home screen of an app in one call: what contains the point, the nearest station with
    /// its latest values, and whether the point is inside the mapped area at all.
    func here(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Parameters(request, allowed: ["lon", "lat", "area"])
        let point = try parameters.position()
        let snapshot = try state.snapshot()
        let areaName = parameters.string("area") ?? configuration.areaLayer
        return try await readsDatabase(context, snapshot) {
            let answer = try engine { () throws(EngineError) in
                let area = try areaName.map { name throws(EngineError) in try snapshot.layer(name) }
                return try snapshot.here(at: point, area: area)
            }
            return Reply.json(request: request) { w in Output.here(&w, answer) }
        }
    }

    // MARK: - Air

    /// "What is the air like where I am?" for the air-quality app (`Snapshot.air`).
    func air(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Parameters(request, allowed: ["lon", "lat"])
        let point = try parameters.position()
        let snapshot = try state.snapshot()
        let districts = try? snapshot.layer(configuration.districtLayer)
        return try await readsDatabase(context, snapshot) {
            let report = try engine { () throws(EngineError) in try snapshot.air(at: point, districts: districts) }
            return Reply.json(request: request) { w in Output.air(&w, report) }
        }
    }
}

// MARK: - Routes, with their OpenAPI operations (served whole at /openapi.json)

extension Endpoints {
    /// One call per screen of an app.
    static let appRoutes: [Route] = [
        Route(.get, "/v1/route", { try await $0.route($1, $2) }, openAPI: #"""
            {
              "summary": "A walking route between two points, in OSRM's shape",
              "parameters": [
                {"name": "from", "in": "query", "required": true, "schema": {"$ref": "#/components/schemas/LonLat"}, "example": "14.4109,50.1167", "description": "LON,LAT"},
                {"name": "to", "in": "query", "required": true, "schema": {"$ref": "#/components/schemas/LonLat"}, "example": "14.40519,50.11576", "description": "LON,LAT"},
                {"name": "network", "in": "query", "schema": {"type": "string"}, "description": "A line layer; optional when the store has exactly one."},
                {"name": "profile", "in": "query", "schema": {"type": "string", "enum": ["foot", "wheelchair", "any"], "default": "foot"}, "description": "foot: every path pedestrians may use (OSM's walking rule on OSM tags), 5 km/h. wheelchair: foot but step-free (never a path tagged steps), 4 km/h; 422 NoRoute when only steps connect the points. any: every line both ways, 5 km/h."},
                {"name": "max_snap_m", "in": "query", "schema": {"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 5000, "default": 500}},
                {"name": "departure", "in": "query", "schema": {"type": "string"}, "example": "2026-11-28T13:55:00+01:00", "description": "When the walk starts (ISO 8601, or a local time in Prague): paths with opening_hours are taken only while open when the walk reaches them; the answer lists those kept off (closed)."}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "code Ok, routes[0] with distance (m), duration (s), geometry (GeoJSON LineString), waypoints with their snap distance.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Route"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/v1/here", { try await $0.here($1, $2) }, openAPI: #"""
            {
              "summary": "Everything about a point: containing features of every polygon layer, the nearest station with its latest values, inside the mapped area or not",
              "parameters": [
                {"$ref": "#/components/parameters/lon"},
                {"$ref": "#/components/parameters/lat"},
                {"name": "area", "in": "query", "schema": {"type": "string"}, "description": "The layer that defines the mapped area; default --area-layer, else the polygon layer with the largest extent."}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "query, area, containing, nearest_station.", "content": {"application/json": {"schema": {"type": "object"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/v1/air", { try await $0.air($1, $2) }, openAPI: #"""
            {
              "summary": "The air where a point is: per pollutant the nearest station that measures it with its latest value, the index of the nearest station that has one, the district, and the data's age",
              "parameters": [
                {"$ref": "#/components/parameters/lon"},
                {"$ref": "#/components/parameters/lat"}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "query, district, index, pollutants, observed_until, age_s.", "content": {"application/json": {"schema": {"type": "object"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
    ]
}
