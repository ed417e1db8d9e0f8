// GraphHopper's isochrone service, so its clients and the map page ask "what can I reach in 10
// minutes" in a shape they know: `GET /isochrone?point=LAT,LON&time_limit=SECONDS&buckets=N`
// (or `distance_limit=METRES`), answering `polygons` (GeoJSON Features, one per bucket) and
// `info`. The polygons follow the reached paths (Routing/Isochrone.swift).

import Dispatch
import Engine
import Geometry
import Hummingbird
import Support

extension Endpoints {
    /// Profile names GraphHopper clients send (`profile`, or the older `vehicle`).
    static let isochroneProfiles: [String: WalkingProfile] = ["foot": .foot, "walk": .foot, "walking": .foot, "hike": .foot, "wheelchair": .wheelchair]

    func isochrone(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Parameters(request, allowed: ["point", "time_limit", "distance_limit", "buckets", "profile", "vehicle", "reverse_flow",
                                                           "speed_kmh", "network", "type", "debug", "key"])
        // GraphHopper clients send these: its JSON is the only type, and the key is its API's.
        if let type = parameters.string("type"), type != "json" { throw APIError.invalidParameter("type", "\(Quote.input(type)): only json") }
        _ = try parameters.bool("debug")
        guard let pointText = parameters.string("point") else { throw APIError.missingParameter("point", "the start as LAT,LON") }
        let parts = pointText.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2, let lat = Parameters.number(String(parts[0])), let lon = Parameters.number(String(parts[1])) else {
            throw APIError.invalidParameter("point", "\(Quote.input(pointText)) is not LAT,LON (GraphHopper's order: latitude first)")
        }
        let profileName = parameters.string("profile") ?? parameters.string("vehicle") ?? "foot"
        guard let profile = Endpoints.isochroneProfiles[profileName.lowercased()] else {
            throw APIError.invalidParameter("profile", "\(Quote.input(profileName)): this server walks; profiles: foot, wheelchair")
        }
        if try parameters.bool("reverse_flow") == true {
            throw APIError.invalidParameter("reverse_flow", "true is not supported: the area is what is reachable from the point")
        }
        let limit: IsochroneRequest.Limit
        // distance_limit, when given, is asked instead of time_limit (GraphHopper's rule).
        if let metres = try parameters.double("distance_limit") {
            _ = try parameters.double("time_limit")
            limit = .metres(metres)
        } else {
            limit = .seconds(try parameters.double("time_limit") ?? 600)
        }
        let isochrone = IsochroneRequest(from: Point(lon: lon, lat: lat), limit: limit,
                                         buckets: try parameters.int("buckets", default: 1, range: nil), profile: profile,
                                         speedKmh: try parameters.double("speed_kmh"))
        let network = parameters.string("network")
        let snapshot = try state.snapshot()
        return try await heavyWork(context, snapshot) { budget in
            let started = DispatchTime.now().uptimeNanoseconds
            let answer = try engine { () throws(EngineError) in
                try snapshot.isochrone(isochrone, on: network.map { name throws(EngineError) in try snapshot.network(name) }, deadline: budget.deadline)
            }
            let took = Int((DispatchTime.now().uptimeNanoseconds - started) / 1_000_000)
            return try Reply.json(request: request, limit: snapshot.limits.maxResponseBytes) { w in
                Output.graphHopperIsochrone(&w, answer, tookMilliseconds: took)
            }
        }
    }
}

// MARK: - Routes, with their OpenAPI operations (served whole at /openapi.json)

extension Endpoints {
    /// GraphHopper's isochrone.
    static let isochroneRoutes: [Route] = [
        Route(.get, "/isochrone", { try await $0.isochrone($1, $2) }, openAPI: #"""
            {
              "tags": ["Routing"],
              "summary": "GraphHopper's isochrone: the area reachable on foot within a time or a distance, one polygon per bucket, following the paths",
              "parameters": [
                {"name": "point", "in": "query", "required": true, "schema": {"type": "string", "pattern": "^[-+]?(90(\\.0+)?|[0-8]?[0-9](\\.[0-9]+)?),[-+]?(180(\\.0+)?|(1[0-7][0-9]|[0-9]{1,2})(\\.[0-9]+)?)$"}, "example": "50.1167,14.4109", "description": "LAT,LON (GraphHopper's order)."},
                {"name": "time_limit", "in": "query", "schema": {"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 10800, "default": 600}, "description": "Seconds of walking."},
                {"name": "distance_limit", "in": "query", "schema": {"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 50000}, "description": "Metres; when given, it is asked instead of time_limit."},
                {"name": "buckets", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 20, "default": 1}},
                {"name": "profile", "in": "query", "schema": {"type": "string", "enum": ["foot", "walk", "walking", "hike", "wheelchair"], "default": "foot"}},
                {"name": "vehicle", "in": "query", "schema": {"type": "string", "enum": ["foot", "walk", "walking", "hike", "wheelchair"]}, "description": "The older name of profile."},
                {"name": "speed_kmh", "in": "query", "schema": {"type": "number", "minimum": 0.5, "maximum": 30}},
                {"name": "reverse_flow", "in": "query", "schema": {"type": "string", "enum": ["false"]}},
                {"name": "type", "in": "query", "schema": {"type": "string", "enum": ["json"]}},
                {"name": "debug", "in": "query", "schema": {"type": "string", "enum": ["true", "false"]}},
                {"name": "key", "in": "query", "schema": {"type": "string"}, "description": "Accepted and ignored (GraphHopper's API key)."},
                {"name": "network", "in": "query", "schema": {"type": "string"}}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "polygons: one GeoJSON Feature per bucket, smallest first, properties bucket (from 0), time (s), distance (m); info: copyrights, took (ms), network, profile, reached_nodes.", "content": {"application/json": {"schema": {"type": "object", "required": ["polygons"]}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
    ]
}
