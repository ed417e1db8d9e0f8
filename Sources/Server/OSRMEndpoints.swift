// OSRM's HTTP API for walking, so OSRM clients (routingpy, Leaflet Routing Machine, OSRM's own
// libraries) plug in: /route/v1, /table/v1, /nearest/v1, /trip/v1 and /match/v1, with OSRM's options, units (metres,
// seconds) and codes. Errors are 400 with OSRM's `code` and `message` (as OSRM answers them),
// written as problem documents like every other error here, so both kinds of client read them.
//
// Profiles are the engine's: `foot` (also `walking`, `walk`, `pedestrian`, what OSRM clients
// send) and `wheelchair`. Every coordinate snaps within 500 m, or its `radiuses` entry (at most
// 5,000 m; `unlimited` is 5,000 m). The network is the store's only line layer, or `network=`.

import Engine
import Foundation
import Geometry
import Hummingbird
import Store
import Support

extension Endpoints {
    /// Profile names OSRM clients send, onto the engine's profiles.
    static let osrmProfiles: [String: WalkingProfile] = ["foot": .foot, "walking": .foot, "walk": .foot, "pedestrian": .foot, "wheelchair": .wheelchair]

    func osrmRoute(_ request: Request, _ context: APIContext) async throws -> Response {
        try await Endpoints.osrm {
            let call = try OSRMCall(request, context, allowed: ["alternatives", "steps", "geometries", "overview", "annotations", "continue_straight",
                                                                "radiuses", "hints", "generate_hints", "skip_waypoints", "bearings", "network", "departure"])
            let options = try call.routeOptions()
            // One route is searched: alternatives=true is allowed and answers that one (OSRM
            // too gives no guarantee of alternatives); continue_straight changes nothing on foot.
            _ = try call.alternatives()
            _ = try call.bool("continue_straight", also: ["default"])
            let skipWaypoints = try call.bool("skip_waypoints") ?? false
            let chosen = options
            let snapshot = try state.snapshot()
            let legs = LegsRequest(points: call.points, profile: call.profile, snapMetres: try call.radiuses(unlimited: snapshot.limits.maxSnapMetres),
                                   departure: try call.departure())
            let network = call.network
            return try await heavyWork(context, snapshot) { budget in
                let answer = try engine { () throws(EngineError) in
                    try snapshot.route(through: legs, on: network.map { name throws(EngineError) in try snapshot.network(name) }, deadline: budget.deadline)
                }
                return try Reply.json(request: request, limit: snapshot.limits.maxResponseBytes) { w in
                    Output.osrmRoute(&w, answer, chosen, waypoints: !skipWaypoints)
                }
            }
        }
    }

    func osrmTable(_ request: Request, _ context: APIContext) async throws -> Response {
        try await Endpoints.osrm {
            let call = try OSRMCall(request, context, allowed: ["sources", "destinations", "annotations", "radiuses", "hints", "generate_hints",
                                                                "skip_waypoints", "bearings", "network", "departure"])
            let sources = try call.indices("sources"), destinations = try call.indices("destinations")
            let annotations = (call.parameters.string("annotations") ?? "duration").split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard annotations.allSatisfy({ $0 == "duration" || $0 == "distance" }) else {
                throw OSRMCall.error("InvalidQuery", "annotations=\(Quote.input(annotations.joined(separator: ","))): the table gives duration, distance or duration,distance")
            }
            let durations = annotations.contains("duration"), distances = annotations.contains("distance")
            let hints = try call.bool("generate_hints") ?? true
            let skipWaypoints = try call.bool("skip_waypoints") ?? false
            let snapshot = try state.snapshot()
            let table = TableRequest(points: call.points, sources: sources, destinations: destinations, profile: call.profile,
                                     snapMetres: try call.radiuses(unlimited: snapshot.limits.maxSnapMetres), departure: try call.departure())
            let network = call.network
            return try await heavyWork(context, snapshot) { budget in
                let answer = try engine { () throws(EngineError) in
                    try snapshot.table(table, on: network.map { name throws(EngineError) in try snapshot.network(name) }, deadline: budget.deadline)
                }
                return try Reply.json(request: request, limit: snapshot.limits.maxResponseBytes) { w in
                    Output.osrmTable(&w, answer, durations: durations, distances: distances, hints: hints, waypoints: !skipWaypoints)
                }
            }
        }
    }

    func osrmNearest(_ request: Request, _ context: APIContext) async throws -> Response {
        try await Endpoints.osrm {
            let call = try OSRMCall(request, context, allowed: ["number", "radiuses", "hints", "generate_hints", "bearings", "network"])
            guard call.points.count == 1 else {
                throw OSRMCall.error("InvalidOptions", "the nearest service takes exactly 1 coordinate, got \(call.points.count)")
            }
            let number = try call.parameters.int("number", default: 1, range: 1...10_000)
            let hints = try call.bool("generate_hints") ?? true
            let snapshot = try state.snapshot()
            let radius = try call.radiuses(unlimited: snapshot.limits.maxSnapMetres).first ?? nil
            let points = try engine { () throws(EngineError) in
                try snapshot.nearestOnNetwork(call.points[0], count: number, profile: call.profile, maxSnapMetres: radius,
                                              on: call.network.map { name throws(EngineError) in try snapshot.network(name) })
            }
            return Reply.json(request: request) { w in Output.osrmNearest(&w, points, hints: hints) }
        }
    }

    /// OSRM's trip service: the shortest round trip (or open path, `roundtrip=false`) through
    /// the coordinates, from the first (`source=first`) and/or to the last (`destination=last`).
    func osrmTrip(_ request: Request, _ context: APIContext) async throws -> Response {
        try await Endpoints.osrm {
            let call = try OSRMCall(request, context, allowed: ["roundtrip", "source", "destination", "steps", "geometries", "overview", "annotations",
                                                                "radiuses", "hints", "generate_hints", "bearings", "network", "departure"])
            let options = try call.routeOptions()
            var shape = TripShape(roundTrip: try call.bool("roundtrip") ?? true)
            shape.fixedFirst = try call.word("source", "first")
            shape.fixedLast = try call.word("destination", "last")
            let snapshot = try state.snapshot()
            var tripRequest = TripRequest(points: call.points, shape: shape, profile: call.profile, snapMetres: try call.radiuses(unlimited: snapshot.limits.maxSnapMetres))
            tripRequest.departure = try call.departure()
            let trip = tripRequest
            let network = call.network
            return try await heavyWork(context, snapshot) { budget in
                let answer = try engine { () throws(EngineError) in
                    try snapshot.trip(trip, on: network.map { name throws(EngineError) in try snapshot.network(name) }, deadline: budget.deadline)
                }
                return try Reply.json(request: request, limit: snapshot.limits.maxResponseBytes) { w in Output.osrmTrip(&w, answer, options) }
            }
        }
    }

    /// OSRM's match service: the paths a trace walked, with `timestamps` (seconds) and
    /// `radiuses` (each fix's accuracy, metres: the model's σ).
    func osrmMatch(_ request: Request, _ context: APIContext) async throws -> Response {
        try await Endpoints.osrm {
            let call = try OSRMCall(request, context, allowed: ["timestamps", "radiuses", "gaps", "tidy", "steps", "geometries", "overview", "annotations",
                                                                "hints", "generate_hints", "bearings", "network", "waypoints"])
            var routeOptions = try call.routeOptions()
            routeOptions.steps = false
            let options = routeOptions
            let snapshot = try state.snapshot()
            let accuracies = try call.radiuses(unlimited: snapshot.limits.maxSnapMetres)
            let times = try call.timestamps()
            var matchOptions = MatchOptions()
            if let gaps = call.parameters.string("gaps") {
                guard gaps == "split" || gaps == "ignore" else { throw OSRMCall.error("InvalidQuery", "gaps=\(Quote.input(gaps)): expected split or ignore") }
                if gaps == "ignore" { matchOptions.maxGapSeconds = .infinity }
            }
            // tidy=true is accepted: the model already drops fixes it cannot place.
            _ = try call.bool("tidy")
            guard call.parameters.string("waypoints") == nil else {
                throw OSRMCall.error("InvalidOptions", "waypoints is not supported: every matched point is a waypoint")
            }
            let fixes = call.points.indices.map { i in
                TraceFix(point: call.points[i], time: times.isEmpty ? nil : times[i], accuracy: i < accuracies.count ? accuracies[i] : nil)
            }
            let match = MatchRequest(fixes: fixes, profile: call.profile, options: matchOptions)
            let network = call.network
            return try await heavyWork(context, snapshot) { budget in
                let answer = try engine { () throws(EngineError) in
                    try snapshot.match(match, on: network.map { name throws(EngineError) in try snapshot.network(name) }, deadline: budget.deadline)
                }
                guard !answer.matchings.isEmpty else {
                    throw OSRMCall.error("NoMatch", "no two consecutive points of the trace could be matched to the network")
                }
                return try Reply.json(request: request, limit: snapshot.limits.maxResponseBytes) { w in Output.osrmMatch(&w, answer, options) }
            }
        }
    }

    /// Runs an OSRM endpoint, answering its errors as OSRM does: status 400 with OSRM's code
    /// and a `message` (the server's own 503s stay as they are).
    static func osrm(_ body: () async throws -> Response) async throws -> Response {
        do {
            return try await body()
        } catch var error as APIError {
            guard error.status != .serviceUnavailable else { throw error }
            switch error.code {
            case "unknown_parameter", "missing_parameter": error.code = "InvalidQuery"
            case "invalid_parameter", "invalid_argument", "unknown_layer", "unsupported_geometry": error.code = "InvalidOptions"
            case "too_many_rows", "response_too_large", "deadline_exceeded": error.code = "TooBig"
            default: break
            }
            error.status = .badRequest
            error.extra["message"] = .string(error.detail)
            throw error
        }
    }
}

/// An OSRM request's path (profile, coordinates) and options, parsed.
struct OSRMCall {
    let parameters: Parameters
    let profile: WalkingProfile
    let points: [Point]
    let network: String?

    init(_ request: Request, _ context: APIContext, allowed: [String]) throws {
        parameters = try Parameters(request, allowed: allowed)
        if parameters.string("bearings") != nil {
            throw OSRMCall.error("InvalidOptions", "bearings are not supported: paths are walked both ways")
        }
        let profileName = try request.pathParameter("profile", context)
        guard let profile = Endpoints.osrmProfiles[profileName.lowercased()] else {
            throw OSRMCall.error("InvalidOptions", "profile \(Quote.input(profileName)): this server routes on foot; profiles: foot (also walking, walk, pedestrian), wheelchair")
        }
        self.profile = profile
        points = try OSRMCall.coordinates(try request.pathParameter("coordinates", context))
        network = parameters.string("network")
    }

    static func error(_ code: String, _ message: String) -> APIError {
        APIError(.badRequest, code: code, detail: message, extra: JSONObject([("message", .string(message))]))
    }

    /// `lon,lat;lon,lat…`, `polyline(…)` or `polyline6(…)`, with an optional `.json` suffix.
    static func coordinates(_ text: String) throws(APIError) -> [Point] {
        var text = Substring(text)
        if text.hasSuffix(".json") { text = text.dropLast(5) }
        var pairs: [(Double, Double)] = []
        if let precision = [("polyline6(", 6), ("polyline(", 5)].first(where: { text.hasPrefix($0.0) }), text.hasSuffix(")") {
            guard let flat = Polyline.decode(String(text.dropFirst(precision.0.count).dropLast()), precision: precision.1), !flat.isEmpty else {
                throw error("InvalidUrl", "\(Quote.input(String(text))) is not an encoded polyline")
            }
            pairs = stride(from: 0, to: flat.count, by: 2).map { (flat[$0], flat[$0 + 1]) }
        } else {
            for pair in text.split(separator: ";", omittingEmptySubsequences: false) {
                let parts = pair.split(separator: ",", omittingEmptySubsequences: false)
                guard parts.count == 2, let lon = Parameters.number(String(parts[0])), let lat = Parameters.number(String(parts[1])) else {
                    throw error("InvalidUrl", "coordinates: \(Quote.input(String(pair))) is not LON,LAT (coordinates are LON,LAT;LON,LAT…)")
                }
                pairs.append((lon, lat))
            }
        }
        var points: [Point] = []
        for (i, (lon, lat)) in pairs.enumerated() {
            do {
                points.append(try Point.checked(lon: lon, lat: lat))
            } catch {
                throw OSRMCall.error("InvalidOptions", "coordinate \(i): \(error.description)")
            }
        }
        return points
    }

    /// `true`/`false` (and any extra words allowed), nil when absent.
    func bool(_ name: String, also extra: [String] = []) throws(APIError) -> Bool? {
        guard let text = parameters.string(name) else { return nil }
        switch text {
        case "true": return true
        case "false": return false
        case let word where extra.contains(word): return nil
        default: throw OSRMCall.error("InvalidQuery", "\(name)=\(Quote.input(text)): expected true or false")
        }
    }

    func choice<T: RawRepresentable & CaseIterable>(_ name: String, _ type: T.Type) throws(APIError) -> T? where T.RawValue == String {
        guard let text = parameters.string(name) else { return nil }
        guard let value = T(rawValue: text) else {
            throw OSRMCall.error("InvalidQuery", "\(name)=\(Quote.input(text)): expected one of \(T.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return value
    }

    /// The options of a Route object: steps, geometries, overview, annotations, hints.
    func routeOptions() throws(APIError) -> OSRMRouteOptions {
        var options = OSRMRouteOptions()
        options.steps = try bool("steps") ?? false
        options.geometries = try choice("geometries", RouteGeometryFormat.self) ?? .polyline
        options.overview = try choice("overview", RouteOverview.self) ?? .simplified
        options.annotations = try annotations()
        options.hints = try bool("generate_hints") ?? true
        return options
    }

    /// A trip's `source` (any, first) or `destination` (any, last): whether it is fixed.
    /// `departure=`: when the walk starts (ISO 8601, or a local time in Prague), so that paths
    /// with opening hours are taken only while open; nil when absent.
    func departure() throws(APIError) -> Date? {
        guard let text = parameters.string("departure") else { return nil }
        guard let date = RouteRequest.departure(parsing: text) else {
            throw OSRMCall.error("InvalidValue", "departure=\(Quote.input(text)): expected a time, e.g. 2026-11-28T13:55:00%2B01:00 or 2026-11-28T13:55 (Prague)")
        }
        return date
    }

    func word(_ name: String, _ fixed: String) throws(APIError) -> Bool {
        guard let text = parameters.string(name) else { return false }
        guard text == "any" || text == fixed else { throw OSRMCall.error("InvalidQuery", "\(name)=\(Quote.input(text)): expected any or \(fixed)") }
        return text == fixed
    }

    /// `timestamps=t;t;…`: seconds (Unix time), one per coordinate, not going back; empty
    /// when absent.
    func timestamps() throws(APIError) -> [Double] {
        guard let text = parameters.string("timestamps") else { return [] }
        let items = text.split(separator: ";", omittingEmptySubsequences: false)
        guard items.count == points.count else {
            throw OSRMCall.error("InvalidOptions", "timestamps has \(items.count) entries for \(points.count) coordinates")
        }
        var times: [Double] = []
        for item in items {
            guard let seconds = Int64(item), seconds >= 0 else {
                throw OSRMCall.error("InvalidQuery", "timestamps: \(Quote.input(String(item))) is not a whole number of seconds ≥ 0")
            }
            if let before = times.last, Double(seconds) < before {
                throw OSRMCall.error("InvalidOptions", "timestamps: \(seconds) comes after \(Int64(before)); times must not go back")
            }
            times.append(Double(seconds))
        }
        return times
    }

    /// `alternatives=true|false|N`.
    func alternatives() throws(APIError) -> Int {
        guard let text = parameters.string("alternatives") else { return 0 }
        if text == "false" { return 0 }
        if text == "true" { return 1 }
        guard let n = Int(text), n >= 0 else { throw OSRMCall.error("InvalidQuery", "alternatives=\(Quote.input(text)): expected true, false or a number") }
        return n
    }

    /// `annotations=true|false|distance,duration,…`: the per-segment lists each leg carries.
    func annotations() throws(APIError) -> [String] {
        let all = ["distance", "duration", "datasources", "nodes", "weight", "speed"]
        guard let text = parameters.string("annotations"), text != "false" else { return [] }
        if text == "true" { return all }
        let names = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard names.allSatisfy(all.contains) else {
            throw OSRMCall.error("InvalidQuery", "annotations=\(Quote.input(text)): expected true, false or a list of \(all.joined(separator: ", "))")
        }
        return all.filter(names.contains)
    }

    /// `radiuses=r;r;…`, one per coordinate (empty: the default; `unlimited`: the largest).
    func radiuses(unlimited: Double) throws(APIError) -> [Double?] {
        guard let text = parameters.string("radiuses") else { return [] }
        let items = text.split(separator: ";", omittingEmptySubsequences: false)
        guard items.count == points.count else {
            throw OSRMCall.error("InvalidOptions", "radiuses has \(items.count) entries for \(points.count) coordinates")
        }
        return try items.map { item throws(APIError) -> Double? in
            if item.isEmpty { return nil }
            if item == "unlimited" { return unlimited }
            guard let metres = Parameters.number(String(item)), metres >= 0 else {
                throw OSRMCall.error("InvalidQuery", "radiuses: \(Quote.input(String(item))) is not a number of metres ≥ 0 or unlimited")
            }
            guard metres <= unlimited else {
                throw OSRMCall.error("InvalidOptions", "radiuses: \(Quote.input(String(item))) m is more than \(Rounding.wholeMetres(unlimited)) m, the largest (unlimited)")
            }
            // OSRM's 0 means "exactly here"; a snap needs some room.
            return max(metres, 0.001)
        }
    }

    /// `sources`/`destinations`: `all` (nil) or indices `i;j;…`.
    func indices(_ name: String) throws(APIError) -> [Int]? {
        guard let text = parameters.string(name), text != "all" else { return nil }
        return try text.split(separator: ";", omittingEmptySubsequences: false).map { item throws(APIError) -> Int in
            guard let index = Int(item), index >= 0 else {
                throw OSRMCall.error("InvalidQuery", "\(name): \(Quote.input(String(item))) is not an index of the coordinates")
            }
            return index
        }
    }
}

// MARK: - Routes, with their OpenAPI operations (served whole at /openapi.json)

extension Endpoints {
    /// OSRM's HTTP API for walking.
    static let osrmRoutes: [Route] = [
        Route(.get, "/route/v1/{profile}/{coordinates}", { try await $0.osrmRoute($1, $2) }, openAPI: #"""
            {
              "tags": ["OSRM"],
              "summary": "OSRM's route service: a walking route through the coordinates in order, one leg between each two",
              "parameters": [
                {"$ref": "#/components/parameters/osrmProfile"},
                {"$ref": "#/components/parameters/osrmCoordinates"},
                {"name": "steps", "in": "query", "schema": {"type": "boolean", "default": false}},
                {"name": "geometries", "in": "query", "schema": {"type": "string", "enum": ["polyline", "polyline6", "geojson"], "default": "polyline"}},
                {"name": "overview", "in": "query", "schema": {"type": "string", "enum": ["full", "simplified", "false"], "default": "simplified"}},
                {"name": "annotations", "in": "query", "schema": {"type": "string"}, "description": "true, false, or a list of distance, duration, datasources, nodes, weight, speed."},
                {"name": "alternatives", "in": "query", "schema": {"type": "string"}, "description": "Accepted; one route is answered."},
                {"name": "continue_straight", "in": "query", "schema": {"type": "string", "enum": ["default", "true", "false"]}, "description": "Accepted; changes nothing on foot."},
                {"$ref": "#/components/parameters/osrmRadiuses"},
                {"$ref": "#/components/parameters/osrmHints"},
                {"$ref": "#/components/parameters/osrmGenerateHints"},
                {"$ref": "#/components/parameters/osrmSkipWaypoints"},
                {"$ref": "#/components/parameters/osrmBearings"},
                {"$ref": "#/components/parameters/osrmNetwork"},
                {"$ref": "#/components/parameters/osrmDeparture"}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "code Ok, routes[0] (distance m, duration s, weight = duration, weight_name, geometry, legs with steps, summary and annotation), waypoints (hint, distance, name, location).", "content": {"application/json": {"schema": {"type": "object"}}}},
                "400": {"$ref": "#/components/responses/OSRMError"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/table/v1/{profile}/{coordinates}", { try await $0.osrmTable($1, $2) }, openAPI: #"""
            {
              "tags": ["OSRM"],
              "summary": "OSRM's table service: walking durations and distances between sources and destinations, one search per source",
              "parameters": [
                {"$ref": "#/components/parameters/osrmProfile"},
                {"$ref": "#/components/parameters/osrmCoordinates"},
                {"name": "sources", "in": "query", "schema": {"type": "string", "default": "all"}, "example": "0;2", "description": "all, or indices of the coordinates separated by ;"},
                {"name": "destinations", "in": "query", "schema": {"type": "string", "default": "all"}},
                {"name": "annotations", "in": "query", "schema": {"type": "string", "enum": ["duration", "distance", "duration,distance", "distance,duration"], "default": "duration"}},
                {"$ref": "#/components/parameters/osrmRadiuses"},
                {"$ref": "#/components/parameters/osrmHints"},
                {"$ref": "#/components/parameters/osrmGenerateHints"},
                {"$ref": "#/components/parameters/osrmSkipWaypoints"},
                {"$ref": "#/components/parameters/osrmBearings"},
                {"$ref": "#/components/parameters/osrmNetwork"},
                {"$ref": "#/components/parameters/osrmDeparture"}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "code Ok, durations (s) and/or distances (m) by source row, null where no path joins a pair; sources and destinations as waypoints.", "content": {"application/json": {"schema": {"type": "object"}}}},
                "400": {"$ref": "#/components/responses/OSRMError"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/nearest/v1/{profile}/{coordinates}", { try await $0.osrmNearest($1, $2) }, openAPI: #"""
            {
              "tags": ["OSRM"],
              "summary": "OSRM's nearest service: the points of the nearest edges of the network, nearest first",
              "parameters": [
                {"$ref": "#/components/parameters/osrmProfile"},
                {"$ref": "#/components/parameters/osrmCoordinates"},
                {"name": "number", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 1}},
                {"$ref": "#/components/parameters/osrmRadiuses"},
                {"$ref": "#/components/parameters/osrmHints"},
                {"$ref": "#/components/parameters/osrmGenerateHints"},
                {"$ref": "#/components/parameters/osrmBearings"},
                {"$ref": "#/components/parameters/osrmNetwork"}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "code Ok, waypoints with nodes (the OSM ids of the edge's ends), hint, distance, name, location.", "content": {"application/json": {"schema": {"type": "object"}}}},
                "400": {"$ref": "#/components/responses/OSRMError"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/trip/v1/{profile}/{coordinates}", { try await $0.osrmTrip($1, $2) }, openAPI: #"""
            {
              "tags": ["OSRM"],
              "summary": "OSRM's trip service: the shortest round trip or open path through the coordinates (exact up to 12, a heuristic beyond)",
              "parameters": [
                {"$ref": "#/components/parameters/osrmProfile"},
                {"$ref": "#/components/parameters/osrmCoordinates"},
                {"name": "roundtrip", "in": "query", "schema": {"type": "string", "enum": ["true", "false"], "default": "true"}},
                {"name": "source", "in": "query", "schema": {"type": "string", "enum": ["any", "first"], "default": "any"}},
                {"name": "destination", "in": "query", "schema": {"type": "string", "enum": ["any", "last"], "default": "any"}},
                {"name": "steps", "in": "query", "schema": {"type": "boolean", "default": false}},
                {"name": "geometries", "in": "query", "schema": {"type": "string", "enum": ["polyline", "polyline6", "geojson"], "default": "polyline"}},
                {"name": "overview", "in": "query", "schema": {"type": "string", "enum": ["full", "simplified", "false"], "default": "simplified"}},
                {"name": "annotations", "in": "query", "schema": {"type": "string"}},
                {"$ref": "#/components/parameters/osrmRadiuses"},
                {"$ref": "#/components/parameters/osrmHints"},
                {"$ref": "#/components/parameters/osrmGenerateHints"},
                {"$ref": "#/components/parameters/osrmBearings"},
                {"$ref": "#/components/parameters/osrmNetwork"},
                {"$ref": "#/components/parameters/osrmDeparture"}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "code Ok, trips[0] (a route through the points in the best order, legs between them), waypoints in the request's order with waypoint_index (the place in the trip) and trips_index.", "content": {"application/json": {"schema": {"type": "object"}}}},
                "400": {"$ref": "#/components/responses/OSRMError"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/match/v1/{profile}/{coordinates}", { try await $0.osrmMatch($1, $2) }, openAPI: #"""
            {
              "tags": ["OSRM"],
              "summary": "OSRM's match service: the paths a GPS trace walked (hidden Markov model)",
              "parameters": [
                {"$ref": "#/components/parameters/osrmProfile"},
                {"$ref": "#/components/parameters/osrmCoordinates"},
                {"name": "timestamps", "in": "query", "schema": {"type": "string"}, "example": "1700000000;1700000005", "description": "Seconds, one per coordinate, never going back."},
                {"name": "gaps", "in": "query", "schema": {"type": "string", "enum": ["split", "ignore"], "default": "split"}, "description": "split: more than 60 s between fixes starts a new matching."},
                {"name": "tidy", "in": "query", "schema": {"type": "string", "enum": ["true", "false"]}, "description": "Accepted: fixes within 3σ of the last one taken are always left out."},
                {"name": "geometries", "in": "query", "schema": {"type": "string", "enum": ["polyline", "polyline6", "geojson"], "default": "polyline"}},
                {"name": "overview", "in": "query", "schema": {"type": "string", "enum": ["full", "simplified", "false"], "default": "simplified"}},
                {"name": "steps", "in": "query", "schema": {"type": "string", "enum": ["true", "false"]}, "description": "Accepted; matchings have no steps."},
                {"name": "annotations", "in": "query", "schema": {"type": "string"}},
                {"$ref": "#/components/parameters/osrmRadiuses"},
                {"$ref": "#/components/parameters/osrmHints"},
                {"$ref": "#/components/parameters/osrmGenerateHints"},
                {"$ref": "#/components/parameters/osrmBearings"},
                {"$ref": "#/components/parameters/osrmNetwork"}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "code Ok, tracepoints (null for a fix left out; else matchings_index, waypoint_index, alternatives_count, location, distance), matchings (confidence, geometry, legs, distance, duration).", "content": {"application/json": {"schema": {"type": "object"}}}},
                "400": {"$ref": "#/components/responses/OSRMError"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
    ]
}
