// OGC API – EDR (Environmental Data Retrieval) 1.1 under /ogc, beside OGC API – Features: every
// point layer with a time series (the air-quality stations) is also an EDR collection, with
// position, radius, area and locations queries. Each parses its request here and asks the
// Engine's one operation (`Snapshot.environmentalData`, EnvironmentalData.swift); the answer
// is CoverageJSON or EDR GeoJSON (EDROutput.swift). A query that selects no observation is 204,
// as the standard requires.

import Engine
import Geometry
import Hummingbird
import Support

extension Endpoints {
    static let edrConformanceClasses = [
        "http://www.opengis.net/spec/ogcapi-edr-1/1.1/conf/core",
        "http://www.opengis.net/spec/ogcapi-edr-1/1.1/conf/collections",
        "http://www.opengis.net/spec/ogcapi-edr-1/1.1/conf/json",
        "http://www.opengis.net/spec/ogcapi-edr-1/1.1/conf/edr-geojson",
        "http://www.opengis.net/spec/ogcapi-edr-1/1.1/conf/covjson",
        "http://www.opengis.net/spec/ogcapi-edr-1/1.1/conf/queries",
        "http://www.opengis.net/spec/ogcapi-edr-1/1.1/conf/oas30",
    ]

    /// The four queries, by the path segment that names them.
    enum EDRQuery: String, CaseIterable {
        case position, radius, area, locations
    }

    enum EDRFormat { case coverageJSON, geoJSON }

    /// position, radius, area, and locations with an id: a station layer's observations.
    func edrData(_ request: Request, _ context: APIContext, _ query: EDRQuery) async throws -> Response {
        let snapshot = try state.snapshot()
        let name = try request.pathParameter("collection", context)
        var allowed = ["datetime", "parameter-name", "crs"]
        if query != .locations { allowed.append("coords") }
        if query == .radius { allowed += ["within", "within-units"] }
        let parameters = try Endpoints.edrParameters(request, allowed: allowed)
        let format = try Endpoints.edrFormat(parameters, default: .coverageJSON)
        let selection: StationSelection
        switch query {
        case .position:
            selection = .nearest(try Endpoints.edrPositions(parameters))
        case .radius:
            let positions = try Endpoints.edrPositions(parameters)
            guard positions.count == 1 else { throw APIError.invalidParameter("coords", "a radius query takes one POINT") }
            guard let within = try parameters.double("within") else {
                throw APIError.missingParameter("within", "the radius, in within-units, e.g. within=2&within-units=km")
            }
            guard let unit = parameters.string("within-units") else {
                throw APIError.missingParameter("within-units", "the radius's unit: \(EDRUnits.names.joined(separator: ", "))")
            }
            guard let metres = EDRUnits.metres[unit.lowercased()] else {
                throw APIError.invalidParameter("within-units", "\(Quote.input(unit)) is not one of \(EDRUnits.names.joined(separator: ", "))")
            }
            // Checked here: the engine's own word for it is the HTTP API's within_m.
            guard within >= 0, (within * metres).isFinite else {
                throw APIError.invalidParameter("within", "must be a distance of 0 or more, got \(within)")
            }
            selection = .within(metres: within * metres, of: positions[0])
        case .area:
            selection = .inside(try Endpoints.edrGeometry(parameters))
        case .locations:
            selection = .station(try request.pathParameter("locationId", context))
        }
        return try await edrAnswer(request, context, snapshot, collection: name, selection, parameters) { data, collection in
            guard data.places.contains(where: { !$0.observations.isEmpty }) else { return Response(status: .noContent) }
            switch format {
            case .coverageJSON:
                return try Reply.json(contentType: Output.coverageJSONType, request: request, limit: snapshot.limits.maxResponseBytes) { w in
                    Output.coverageJSON(&w, data, single: query == .locations)
                }
            case .geoJSON:
                return try Reply.json(contentType: Reply.geoJSON, request: request, limit: snapshot.limits.maxResponseBytes) { w in
                    Output.edrObservations(&w, data, locationURL: { collection + "/locations/" + Endpoints.pathEncoded($0) })
                }
            }
        }
    }

    /// /locations: the stations, with the interval their observations cover.
    func edrLocations(_ request: Request, _ context: APIContext) async throws -> Response {
        let snapshot = try state.snapshot()
        let name = try request.pathParameter("collection", context)
        let parameters = try Endpoints.edrParameters(request, allowed: ["datetime", "parameter-name"])
        _ = try Endpoints.edrFormat(parameters, default: .geoJSON, only: .geoJSON)
        return try await edrAnswer(request, context, snapshot, collection: name, .all, parameters) { data, collection in
            try Reply.json(contentType: Reply.geoJSON, request: request, limit: snapshot.limits.maxResponseBytes) { w in
                Output.edrLocations(&w, data, locationURL: { collection + "/locations/" + Endpoints.pathEncoded($0) })
            }
        }
    }

    /// The one way every EDR query reaches the Engine: `datetime` and `parameter-name` read,
    /// the operation run as heavy work within the request's budget, and `write` handed the
    /// answer and the collection's URL.
    private func edrAnswer(_ request: Request, _ context: APIContext, _ snapshot: Snapshot, collection name: String,
                           _ selection: StationSelection, _ parameters: Parameters,
                           write: @escaping @Sendable (EnvironmentalData, String) throws -> Response) async throws -> Response {
        let time = try parameters.string("datetime").map(Endpoints.datetime)
        let names = try parameters.string("parameter-name").map(Endpoints.edrParameterNames)
        let base = baseURL(request, context) + Endpoints.ogcPrefix + "/collections/"
        return try await heavyWork(context, snapshot) { budget in
            let data = try engine { () throws(EngineError) in
                let stations = try snapshot.stations(try snapshot.layer(name))
                return try snapshot.environmentalData(stations, EnvironmentalRequest(selection: selection, time: time, parameters: names),
                                                      deadline: budget.deadline)
            }
            return try write(data, base + Endpoints.pathEncoded(data.stations.layer.name))
        }
    }

    /// The request's parameters, and an Accept header (if any) that takes JSON (406 otherwise).
    static func edrParameters(_ request: Request, allowed: [String]) throws -> Parameters {
        // OWSLib (0.35) sends `parameter_names` where the standard says `parameter-name`.
        var parameters = try Parameters(request, allowed: ["f"] + allowed + (allowed.contains("parameter-name") ? ["parameter_names"] : []))
        try parameters.alias("parameter_names", for: "parameter-name")
        if parameters.string("f") == nil, let accept = request.headers[.accept], !Endpoints.acceptsJSON(accept) {
            throw APIError(.notAcceptable, code: "not_acceptable",
                           detail: "Accept: \(Quote.input(accept)): EDR answers CoverageJSON (application/prs.coverage+json) or GeoJSON")
        }
        // CRS84 only: EPSG:4326 would put latitude first (OGCCRS.swift), and coords are read
        // longitude first.
        if let crs = parameters.string("crs"), (try? OGCCRS(crs, parameter: "crs")) != .crs84 {
            throw APIError.invalidParameter("crs", "\(Quote.input(crs)) is not offered: coordinates are CRS84 (longitude, latitude)")
        }
        return parameters
    }

    /// `f`: CoverageJSON or GeoJSON (either case; `json` is the query's default).
    static func edrFormat(_ parameters: Parameters, default fallback: EDRFormat, only: EDRFormat? = nil) throws(APIError) -> EDRFormat {
        guard let f = parameters.string("f") else { return fallback }
        let format: EDRFormat? = switch f.lowercased() {
        case "coveragejson", "covjson": .coverageJSON
        case "geojson": .geoJSON
        case "json": fallback
        default: nil
        }
        guard let format, only.map({ $0 == format }) ?? true else {
            let offered = only == .geoJSON ? "GeoJSON" : "CoverageJSON or GeoJSON"
            throw APIError(.notAcceptable, code: "not_acceptable", detail: "f=\(Quote.input(f)): this query answers \(offered)",
                           extra: JSONObject([("parameter", .string("f"))]))
        }
        return format
    }

    /// `coords`: a WKT POINT or MULTIPOINT, as positions.
    static func edrPositions(_ parameters: Parameters) throws(APIError) -> [Point] {
        switch try edrGeometry(parameters) {
        case .point(let p): return [p]
        case .multiPoint(let m) where m.pointCount > 0:
            return (0..<m.pointCount).map { Point(lon: m.coordinates[2 * $0], lat: m.coordinates[2 * $0 + 1]) }
        case let other: throw .invalidParameter("coords", "a position is a WKT POINT or MULTIPOINT, not a \(other.typeName)")
        }
    }

    static func edrGeometry(_ parameters: Parameters) throws(APIError) -> Geometry {
        guard let text = parameters.string("coords") else {
            throw .missingParameter("coords", "a WKT geometry in CRS84, e.g. POINT(14.4208 50.0880)")
        }
        do {
            // OWSLib's POINT(14.42+50.08) arrives with its space (Parameters.pairs).
            return try WKT.decode(text)
        } catch {
            throw .invalidParameter("coords", "\(error)")
        }
    }

    /// `parameter-name`: a comma-separated list.
    static func edrParameterNames(_ text: String) throws(APIError) -> [String] {
        let names = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !names.isEmpty else { throw .invalidParameter("parameter-name", "name at least one parameter") }
        return names
    }
}

// MARK: - Routes, with their OpenAPI operations

extension Endpoints {
    static func edrOperation(_ query: EDRQuery) -> String {
        let coords = #"{"name": "coords", "in": "query", "required": true, "schema": {"type": "string"}, "example": "\#(query == .area ? "POLYGON((14.38 50.07, 14.46 50.07, 14.46 50.11, 14.38 50.11, 14.38 50.07))" : "POINT(14.4208 50.088)")", "description": "WKT in CRS84 (\#(query == .area ? "POLYGON or MULTIPOLYGON" : query == .radius ? "POINT" : "POINT or MULTIPOINT"))."},"#
        let radius = #"{"name": "within", "in": "query", "required": true, "schema": {"type": "number", "minimum": 0}, "example": 2}, {"name": "within-units", "in": "query", "required": true, "schema": {"type": "string", "enum": ["km", "m", "mi"]}},"#
        let location = #"{"name": "locationId", "in": "path", "required": true, "schema": {"type": "string"}, "example": "ALIBA", "description": "A station's code."},"#
        return #"""
            {
              "tags": ["OGC API – EDR"],
              "summary": "\#(EDRUnits.descriptions[query.rawValue] ?? "")",
              "parameters": [
                {"$ref": "#/components/parameters/collection"},
                \#(query == .locations ? location : coords)
                \#(query == .radius ? radius : "")
                {"name": "datetime", "in": "query", "schema": {"type": "string"}, "example": "2019-04-15T12:00:00Z/2019-04-15T18:00:00Z", "description": "An instant or an interval (.. for an open end), UTC: only observations whose hour meets it."},
                {"name": "parameter-name", "in": "query", "schema": {"type": "string"}, "example": "no2,pm10", "description": "Comma-separated value columns (all when absent)."},
                {"name": "crs", "in": "query", "schema": {"type": "string", "enum": ["CRS84"]}},
                {"name": "f", "in": "query", "schema": {"type": "string", "enum": ["CoverageJSON", "GeoJSON", "json"]}, "description": "CoverageJSON (the default) or EDR GeoJSON (a feature per station and hour)."}
              ],
              "responses": {
                "200": {"description": "CoverageJSON: \#(query == .locations ? "a PointSeries Coverage" : "a CoverageCollection of PointSeries coverages, one per station"); or GeoJSON.", "content": {"application/prs.coverage+json": {"schema": {"type": "object"}}, "application/geo+json": {"schema": {"type": "object"}}}},
                "204": {"description": "No observation matches."},
                "400": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "406": {"$ref": "#/components/responses/Problem"},
                "414": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#
    }

    /// OGC API – EDR, part 1.
    static let edrRoutes: [Route] = [
        Route(.get, "/ogc/collections/{collection}/position", { try await $0.edrData($1, $2, .position) }, openAPI: edrOperation(.position)),
        Route(.get, "/ogc/collections/{collection}/radius", { try await $0.edrData($1, $2, .radius) }, openAPI: edrOperation(.radius)),
        Route(.get, "/ogc/collections/{collection}/area", { try await $0.edrData($1, $2, .area) }, openAPI: edrOperation(.area)),
        Route(.get, "/ogc/collections/{collection}/locations", { try await $0.edrLocations($1, $2) }, openAPI: #"""
            {
              "tags": ["OGC API – EDR"],
              "summary": "The stations of a layer with a time series, as EDR GeoJSON: each with its code (id), name (label), parameters and the interval of its observations",
              "parameters": [
                {"$ref": "#/components/parameters/collection"},
                {"name": "datetime", "in": "query", "schema": {"type": "string"}, "description": "Only observations meeting it count for each station's interval."},
                {"name": "parameter-name", "in": "query", "schema": {"type": "string"}},
                {"name": "f", "in": "query", "schema": {"type": "string", "enum": ["GeoJSON", "json"]}}
              ],
              "responses": {
                "200": {"description": "A GeoJSON FeatureCollection of the stations.", "content": {"application/geo+json": {"schema": {"type": "object"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "406": {"$ref": "#/components/responses/Problem"},
                "414": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/ogc/collections/{collection}/locations/{locationId}", { try await $0.edrData($1, $2, .locations) }, openAPI: edrOperation(.locations)),
    ]
}
