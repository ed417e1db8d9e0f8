// POST /v1/locate: where am I inside? The body is the phone's scan as `{beacon: rssi}` (dBm),
// the query names the venue (optional when the store has one) and the method. Locating takes
// microseconds, so it answers on the request's own task, as the other light endpoints do.

import Engine
import Foundation
import Geometry
import Hummingbird
import Support

extension Endpoints {
    func locate(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Parameters(request, allowed: ["venue", "k", "method", "fingerprints", "geometry", "live", "id"])
        var options = LocateOptions()
        if let name = parameters.string("method") {
            guard let method = LocateMethod(rawValue: name) else { throw APIError.invalidParameter("method", "\(Quote.input(name)) is not knn, wknn, gaussian or ensemble") }
            options.method = method
        }
        if let name = parameters.string("fingerprints") {
            guard let kind = FingerprintKind(rawValue: name) else {
                throw APIError.invalidParameter("fingerprints", "\(Quote.input(name)) is not scans, mean or median")
            }
            options.fingerprints = kind
        }
        if parameters.string("k") != nil { options.k = try parameters.int("k", default: 0, range: nil) }  // checked by `locate`
        let geoJSON = try parameters.bool("geometry") ?? false
        let text = try await Endpoints.readBody(request, limit: configuration.maxBodyBytes, timeout: configuration.requestTimeout)
        let readings = try Endpoints.scan(text)
        let snapshot = try state.snapshot()
        let venue = try engine { () throws(EngineError) in try snapshot.onlyOrNamedVenue(parameters.string("venue")) }
        let location = try engine { () throws(EngineError) in try snapshot.locate(readings, in: venue, options: options) }
        let live = try placeInLiveLayer(parameters, request, venue: venue, positions: [(location.position, nil)])
        if geoJSON && live != nil { throw APIError.invalidParameter("geometry", "a placement in a live layer answers JSON: leave out geometry or live") }
        return Reply.json(contentType: geoJSON ? Reply.geoJSON : Reply.json, request: request) { w in
            geoJSON ? Output.locationFeature(&w, location) : Output.location(&w, location, live: live)
        }
    }

    /// The body `{"b3001": -78, "b3006": -77}` as readings, in the body's order. A beacon named
    /// twice is the engine's `duplicate_beacon`, which the merged JSON object would hide.
    /// POST /v1/locate/track: a walking phone's scans, located together (`Snapshot.locateTrack`).
    /// The body is `{"scans": [{"time": seconds, "readings": {beacon: rssi}}, …]}`; the answer a
    /// position per scan. Its cost grows with scans × cells², so it runs on the work pool.
    func locateTrack(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Parameters(request, allowed: ["venue", "k", "speed", "interval", "smooth", "live", "id"])
        var options = TrackOptions()
        options.k = try parameters.int("k", default: options.k, range: nil)  // checked by `locateTrack`
        options.speed = try parameters.double("speed") ?? options.speed
        options.interval = try parameters.double("interval") ?? options.interval
        options.smooth = try parameters.bool("smooth") ?? options.smooth
        // A walk's scans outgrow a query's body: as much as a write batch.
        let text = try await Endpoints.readBody(request, limit: Endpoints.maxWriteBodyBytes, timeout: configuration.requestTimeout)
        let scans = try Endpoints.track(text)
        let snapshot = try state.snapshot()
        let venue = try engine { () throws(EngineError) in try snapshot.onlyOrNamedVenue(parameters.string("venue")) }
        let settings = options
        let track = try await heavyWork(context, snapshot) { budget in
            try engine { () throws(EngineError) in try snapshot.locateTrack(scans, in: venue, options: settings, deadline: budget.deadline) }
        }
        let live = try placeInLiveLayer(parameters, request, venue: venue, positions: Array(zip(track.positions, track.times)))
        return Reply.json(request: request) { w in Output.track(&w, track, live: live) }
    }

    /// POST /v1/venues/{venue}/scans: a surveyor's app uploads scans as it walks. Each scan
    /// names where it was taken (`x`, `y`, optionally `floor` and `label`), its `time` (seconds
    /// or ISO text) and its `readings`; they are added to the venue's survey in one transaction
    /// (new points and beacons with them) and located by the next request. Needs a write token
    /// that covers the venue's name.
    func appendScans(_ request: Request, _ context: APIContext) async throws -> Response {
        try Endpoints.check(grant: try writeGrant(request), covers: [try request.pathParameter("venue", context)])
        let name = try request.pathParameter("venue", context)
        let snapshot = try state.snapshot()
        let known = try engine { () throws(EngineError) in try snapshot.venue(name) }
        let text = try await Endpoints.readBody(request, limit: Endpoints.maxWriteBodyBytes, timeout: configuration.requestTimeout)
        let part = try Endpoints.survey(text, venue: known.name, limits: snapshot.limits)
        let venue = try await state.appendSurvey(part)
        return Reply.json(status: .created, request: request) { w in
            w.beginObject()
            w.key("venue"); w.string(venue.name)
            w.key("added"); w.integer(Int64(part.scans.count))
            w.key("scans"); w.integer(Int64(venue.venue.scans.count))
            w.key("points"); w.integer(Int64(venue.venue.points.count))
            w.key("beacons"); w.integer(Int64(venue.venue.beacons.count))
            w.endObject()
        }
    }

    /// The body of POST …/scans as a venue's new survey part; every problem names its scan.
    static func survey(_ text: String, venue: String, limits: EngineLimits) throws -> Venue {
        let shape = "send {\"scans\": [{\"x\": 1.5, \"y\": 2, \"floor\": 0, \"time\": \"2026-11-28T10:00:00\", \"readings\": {\"b3001\": -78}}, …]}"
        func bad(_ detail: String) -> APIError { APIError(.badRequest, code: "invalid_body", detail: detail) }
        let parsed: (value: JSONValue, duplicateKeys: [String])
        do {
            parsed = try JSON.parseReportingDuplicates(text)
        } catch {
            throw bad("the body is not JSON: \(error); \(shape)")
        }
        if let duplicate = parsed.duplicateKeys.first { throw bad("\(Quote.input(duplicate)) appears twice in one object: send each beacon once") }
        guard case .object(let object) = parsed.value, case .array(let items)? = object["scans"], !items.isEmpty else { throw bad("the body has no array \"scans\" of scans: \(shape)") }
        guard items.count <= limits.maxTrackScans else { throw bad("at most \(limits.maxTrackScans) scans in one upload, got \(items.count)") }
        var part = Venue(name: venue)
        var beaconIndex: [String: Int] = [:]
        var pointIndex: [String: Int] = [:]
        for (i, item) in items.enumerated() {
            let at = "scan \(i + 1)"
            guard case .object(let scan) = item, case .object(let readings)? = scan["readings"] else { throw bad("\(at) is not {\"x\": …, \"y\": …, \"readings\": {beacon: rssi}}") }
            guard let x = scan["x"]?.number, let y = scan["y"]?.number, x.isFinite, y.isFinite, abs(x) <= 1e7, abs(y) <= 1e7 else {
                throw bad("\(at): x and y must be numbers (the venue's frame)")
            }
            var floor = 0
            if let value = scan["floor"], value != .null {
                guard case .integer(let number) = value, abs(number) <= 1000 else { throw bad("\(at): the floor must be a whole number from -1000 to 1000") }
                floor = Int(number)
            }
            var time: SurveyTime?
            switch scan["time"] {
            case nil, .null?: break
            case .string(let iso)?:
                guard let parsed = SurveyTime.parse(iso) else { throw bad("\(at): \(Quote.input(iso)) is not a time (2026-11-28T10:00:00, or seconds)") }
                time = parsed
            case let value?:
                guard let seconds = value.number, seconds.isFinite, abs(seconds) < 1e11 else { throw bad("\(at): the time must be ISO text or Unix seconds") }
                time = SurveyTime(seconds: seconds)
            }
            guard readings.count > 0, readings.count <= limits.maxScanReadings else { throw bad("\(at): 1 to \(limits.maxScanReadings) readings") }
            var scanReadings: [Reading] = []
            for (beacon, value) in readings {
                guard !beacon.isEmpty, beacon.utf8.count <= 200 else { throw bad("\(at): a beacon id is 1 to 200 bytes") }
                guard let rssi = value.number, ScanError.rssiRange.contains(rssi) else {
                    throw APIError.engine(.invalidArgument(parameter: "scans", message: "\(at), beacon \(Quote.input(beacon)): the strength must be a number of dBm from -200 to 0"))
                }
                let index: Int
                if let known = beaconIndex[beacon] {
                    index = known
                } else {
                    index = part.beacons.count
                    beaconIndex[beacon] = index
                    part.beacons.append(Beacon(id: beacon))
                }
                scanReadings.append(Reading(beacon: index, rssi: rssi, time: time))
            }
            let label: String
            if case .string(let given)? = scan["label"] {
                guard !given.isEmpty, given.utf8.count <= 200 else { throw bad("\(at): a label is 1 to 200 bytes") }
                label = given
            } else {
                label = "\(Rounding.metres(x)) \(Rounding.metres(y))"
            }
            let key = "\(floor)\u{1F}\(label)"
            let point: Int
            if let known = pointIndex[key] {
                guard part.points[known].x == x && part.points[known].y == y else { throw bad("\(at): point \(Quote.input(label)) is at another position in an earlier scan") }
                point = known
            } else {
                point = part.points.count
                pointIndex[key] = point
                part.points.append(ReferencePoint(label: label, floor: floor, x: x, y: y))
                if part.floor(floor) == nil { part.floors.append(Floor(number: floor)) }
            }
            part.scans.append(Scan(point: point, time: time, readings: scanReadings))
        }
        return part
    }

    /// GET /v1/venues: each venue with its floors (and their frames on the globe), its beacons
    /// and its reference points, in the floor's frame and, on a georeferenced floor, as lon/lat
    /// (what the map page draws). Venues are small (a survey's points and beacons).
    func listVenues(_ request: Request, _ context: APIContext) throws -> Response {
        _ = try Parameters(request, allowed: [])
        let snapshot = try state.snapshot()
        return Reply.json(request: request) { w in
            w.beginObject()
            w.key("venues")
            w.beginArray()
            for indoor in snapshot.venues {
                let venue = indoor.venue
                var frames: [Int: (Double, Double) -> Point] = [:]
                for floor in venue.floors { if let frame = floor.frame { frames[floor.number] = { x, y in frame.lonLat(x: x, y: y) } } }
                w.beginObject()
                w.key("name"); w.string(venue.name)
                w.key("title"); w.string(venue.title)
                w.key("units"); w.string(Output.frameUnits(venue))
                w.key("scans"); w.integer(Int64(venue.scans.count))
                w.key("floors")
                w.beginArray()
                let numbers = Set(venue.floors.map(\.number)).union(venue.points.map(\.floor)).sorted()
                for number in numbers {
                    let floor = venue.floor(number)
                    w.beginObject()
                    w.key("floor"); w.integer(Int64(number))
                    w.key("name"); w.string(floor?.name ?? "")
                    if let frame = floor?.frame {
                        w.key("origin"); w.beginArray(); w.coordinate(frame.origin.lon); w.coordinate(frame.origin.lat); w.endArray()
                        w.key("rotation_deg"); w.number(frame.rotationDegrees)
                    } else {
                        w.key("origin"); w.null()
                        w.key("rotation_deg"); w.null()
                    }
                    w.endObject()
                }
                w.endArray()
                // Beacons and reference points alike: a name, then where (Endpoints.venuePlace).
                func places(_ key: String, _ nameKey: String, _ all: [(name: String, floor: Int?, x: Double?, y: Double?)]) {
                    w.key(key)
                    w.beginArray()
                    for place in all {
                        w.beginObject()
                        w.key(nameKey); w.string(place.name)
                        Endpoints.venuePlace(&w, frames, place.floor, place.x, place.y)
                        w.endObject()
                    }
                    w.endArray()
                }
                places("beacons", "id", venue.beacons.map { ($0.id, $0.floor, $0.x, $0.y) })
                places("points", "label", venue.points.map { ($0.label, $0.floor, $0.x, $0.y) })
                w.endObject()
            }
            w.endArray()
            w.endObject()
        }
    }

    /// A beacon's or point's floor and x, y, with its lon, lat when its floor is on the globe.
    static func venuePlace(_ w: inout JSONWriter, _ frames: [Int: (Double, Double) -> Point], _ floor: Int?, _ x: Double?, _ y: Double?) {
        w.key("floor"); if let floor { w.integer(Int64(floor)) } else { w.null() }
        w.key("x"); if let x { w.number(Rounding.metres(x)) } else { w.null() }
        w.key("y"); if let y { w.number(Rounding.metres(y)) } else { w.null() }
        if let floor, let x, let y, let lonLat = frames[floor] {
            let p = lonLat(x, y)
            w.key("lon"); w.coordinate(p.lon)
            w.key("lat"); w.coordinate(p.lat)
        } else {
            w.key("lon"); w.null()
            w.key("lat"); w.null()
        }
    }

    /// With `live=LAYER&id=OBJECT`: the located positions go into that live layer as that
    /// object (a write: a token covering the layer), and its fences fire (`Engine.placeInLiveLayer`).
    func placeInLiveLayer(_ parameters: Parameters, _ request: Request, venue: IndoorVenue,
                          positions: [(position: Position, time: Double?)]) throws -> LivePlacement? {
        guard let layer = parameters.string("live") else {
            if parameters.string("id") != nil { throw APIError.invalidParameter("id", "id names the object of a live layer: give live=LAYER too") }
            return nil
        }
        guard let id = parameters.string("id") else { throw APIError.invalidParameter("id", "name the phone's object in live layer \(Quote.input(layer)): id=…") }
        try authorizeWrite(request, layers: [layer])
        let host = try state.host()
        let now = Date().timeIntervalSince1970
        return try engine { () throws(EngineError) in try host.placeInLiveLayer(layer, id: id, venue: venue, positions: positions, now: now) }
    }

    static func track(_ text: String) throws -> [(time: Double?, readings: [(beacon: String, rssi: Double)])] {
        let shape = "send the track as {\"scans\": [{\"time\": 1628008099.98, \"readings\": {\"b3001\": -78}}, …]}"
        let parsed: JSONValue
        do {
            parsed = try JSON.parse(text)
        } catch {
            throw APIError(.badRequest, code: "invalid_body", detail: "the body is not JSON: \(error); \(shape)")
        }
        guard case .object(let object) = parsed, case .array(let items)? = object["scans"] else {
            throw APIError(.badRequest, code: "invalid_body", detail: "the body has no array \"scans\": \(shape)")
        }
        var scans: [(time: Double?, readings: [(beacon: String, rssi: Double)])] = []
        for (i, item) in items.enumerated() {
            guard case .object(let scan) = item, case .object(let readings)? = scan["readings"] else {
                throw APIError(.badRequest, code: "invalid_body", detail: "scan \(i + 1) is not {\"time\": …, \"readings\": {beacon: rssi}}: \(shape)")
            }
            var time: Double?
            if let value = scan["time"], value != .null {
                guard let seconds = value.number else { throw APIError(.badRequest, code: "invalid_body", detail: "scan \(i + 1): the time must be a number of seconds") }
                time = seconds
            }
            var pairs: [(beacon: String, rssi: Double)] = []
            for (beacon, value) in readings {
                guard let rssi = value.number else {
                    throw APIError(.badRequest, code: "invalid_body", detail: "scan \(i + 1), beacon \(Quote.input(beacon)): the strength must be a number of dBm")
                }
                pairs.append((beacon, rssi))
            }
            scans.append((time, pairs))
        }
        return scans
    }

    static func scan(_ text: String) throws -> [(beacon: String, rssi: Double)] {
        let parsed: (value: JSONValue, duplicateKeys: [String])
        do {
            parsed = try JSON.parseReportingDuplicates(text)
        } catch {
            throw APIError(.badRequest, code: "invalid_body", detail: "the body is not JSON: \(error); send the scan as {\"beacon\": rssi, …}")
        }
        guard case .object(let object) = parsed.value else {
            throw APIError(.badRequest, code: "invalid_body", detail: "the body must be a JSON object of beacons and their strengths in dBm: {\"b3001\": -78, \"b3006\": -77}")
        }
        if let duplicate = parsed.duplicateKeys.first { throw APIError.engine(.scan(.duplicateBeacon(duplicate))) }
        var readings: [(beacon: String, rssi: Double)] = []
        for (beacon, value) in object {
            guard let rssi = value.number else {
                throw APIError(.badRequest, code: "invalid_body", detail: "beacon \(Quote.input(beacon)): the strength must be a number of dBm",
                               extra: JSONObject([("beacon", .string(Quote.capped(beacon)))]))
            }
            readings.append((beacon, rssi))
        }
        return readings
    }
}

// MARK: - Routes, with their OpenAPI operations (served whole at /openapi.json)

extension Endpoints {
    /// Indoor positioning, and survey uploads.
    static let locateRoutes: [Route] = [
        Route(.post, "/v1/locate", { try await $0.locate($1, $2) }, openAPI: #"""
            {
              "summary": "Where am I inside a venue: a beacon scan located by its fingerprints (a probabilistic model, or kNN in signal space)",
              "parameters": [
                {"name": "venue", "in": "query", "schema": {"type": "string"}, "example": "wmu_library", "description": "The venue; optional when the store has exactly one."},
                {"name": "k", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 100}, "description": "How many nearest fingerprints (knn, wknn, ensemble; default 3) or likeliest cells (gaussian; default 10) the estimate uses."},
                {"name": "method", "in": "query", "schema": {"type": "string", "enum": ["knn", "wknn", "gaussian", "ensemble"], "default": "gaussian"}, "description": "knn: mean of the neighbours' points; wknn: weighted by 1/signal distance; gaussian: the k likeliest cells of the probabilistic model; ensemble: per axis the median of wknn, wknn on mean fingerprints and gaussian."},
                {"name": "fingerprints", "in": "query", "schema": {"type": "string", "enum": ["scans", "mean", "median"], "default": "scans"}, "description": "Every survey scan, or one per reference point (mean or median per beacon)."},
                {"name": "live", "in": "query", "schema": {"type": "string", "minLength": 1}, "description": "A live layer to place the located phone in (its fences fire); needs a write token and a venue on the globe."},
                {"name": "id", "in": "query", "schema": {"type": "string", "minLength": 1, "maxLength": 200}, "description": "The phone's object in the live layer (with live)."},
                {"name": "geometry", "in": "query", "schema": {"type": "boolean", "default": false}, "description": "true: answer a GeoJSON Feature (a Point when the floor is georeferenced)."}
              ],
              "requestBody": {
                "required": true,
                "content": {
                  "application/json": {"schema": {"type": "object", "minProperties": 1, "maxProperties": 1000, "additionalProperties": {"type": "number", "minimum": -200, "maximum": 0}}, "example": {"b3001": -78, "b3006": -77}}
                }
              },
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "venue, floor, floor_name, x, y (the floor's frame), lon/lat (null unless georeferenced), point (nearest reference point), spread (error estimate), method, k, fingerprints, neighbours (point, floor, x, y, signal_distance in dB, weight), ignored_beacons.", "content": {"application/json": {"schema": {"type": "object"}}, "application/geo+json": {"schema": {"type": "object"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "401": {"$ref": "#/components/responses/Problem"},
                "403": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "408": {"$ref": "#/components/responses/Problem"},
                "413": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.post, "/v1/locate/track", { try await $0.locateTrack($1, $2) }, openAPI: #"""
            {
              "summary": "A walking phone's scans located together: a hidden Markov model over the venue's cells, moves bounded by walking speed",
              "parameters": [
                {"name": "venue", "in": "query", "schema": {"type": "string"}, "example": "wmu_library", "description": "The venue; optional when the store has exactly one."},
                {"name": "k", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 5}, "description": "How many of the most probable cells each position is the weighted mean of."},
                {"name": "speed", "in": "query", "schema": {"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 1000, "default": 1.5}, "description": "Walking speed, frame units a second."},
                {"name": "interval", "in": "query", "schema": {"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 86400, "default": 1}, "description": "Seconds between scans that have no time."},
                {"name": "live", "in": "query", "schema": {"type": "string", "minLength": 1}, "description": "A live layer to place the located phone in (its fences fire); needs a write token and a venue on the globe."},
                {"name": "id", "in": "query", "schema": {"type": "string", "minLength": 1, "maxLength": 200}, "description": "The phone's object in the live layer (with live)."},
                {"name": "smooth", "in": "query", "schema": {"type": "boolean", "default": true}, "description": "true: each position from the whole track (forward-backward); false: from the scans up to it (forward only)."}
              ],
              "requestBody": {
                "required": true,
                "content": {
                  "application/json": {"schema": {"type": "object", "required": ["scans"], "properties": {"scans": {"type": "array", "minItems": 1, "maxItems": 10000, "items": {"type": "object", "required": ["readings"], "properties": {"time": {"type": "number", "nullable": true}, "readings": {"type": "object", "minProperties": 1, "maxProperties": 1000, "additionalProperties": {"type": "number", "minimum": -200, "maximum": 0}}}}}}}, "example": {"scans": [{"time": 0, "readings": {"b3001": -78}}, {"time": 1, "readings": {"b3001": -75, "b3006": -80}}]}}
                }
              },
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "venue, units, smooth, speed, k, positions (per scan in the order sent: time, floor, x, y, lon/lat or null, point, spread), ignored_beacons.", "content": {"application/json": {"schema": {"type": "object"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "401": {"$ref": "#/components/responses/Problem"},
                "403": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "408": {"$ref": "#/components/responses/Problem"},
                "413": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/v1/venues", { try $0.listVenues($1, $2) }, openAPI: #"""
            {
              "summary": "The indoor venues: floors (with their frame on the globe), beacons and reference points, in the floor's frame and as lon/lat on a georeferenced floor",
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "venues: name, title, units, scans (how many), floors (floor, name, origin [lon, lat] or null, rotation_deg), beacons (id, floor, x, y, lon, lat; null where unknown), points (label, floor, x, y, lon, lat).", "content": {"application/json": {"schema": {"type": "object", "required": ["venues"], "properties": {"venues": {"type": "array", "items": {"type": "object"}}}}}}},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.post, "/v1/venues/{venue}/scans", { try await $0.appendScans($1, $2) }, openAPI: #"""
            {
              "summary": "Add survey scans to an indoor venue as a surveyor walks: durable when answered, located by the next request (needs a write token covering the venue)",
              "parameters": [{"name": "venue", "in": "path", "required": true, "schema": {"type": "string"}, "example": "wmu_library"}],
              "requestBody": {
                "required": true,
                "content": {
                  "application/json": {"schema": {"type": "object", "required": ["scans"], "properties": {"scans": {"type": "array", "minItems": 1, "maxItems": 10000, "items": {"type": "object", "required": ["x", "y", "readings"], "properties": {"x": {"type": "number"}, "y": {"type": "number"}, "floor": {"type": "integer"}, "label": {"type": "string"}, "time": {"description": "ISO text (2026-11-28T10:00:00) or Unix seconds", "nullable": true}, "readings": {"type": "object", "minProperties": 1, "maxProperties": 1000, "additionalProperties": {"type": "number", "minimum": -200, "maximum": 0}}}}}}}, "example": {"scans": [{"x": 9, "y": 6, "floor": 1, "label": "I06", "time": "2026-11-28T10:00:00", "readings": {"b3002": -75, "b3005": -79}}]}}
                }
              },
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "201": {"description": "venue, added (scans), scans, points, beacons (the venue's totals now).", "content": {"application/json": {"schema": {"type": "object"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "401": {"$ref": "#/components/responses/Problem"},
                "403": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "408": {"$ref": "#/components/responses/Problem"},
                "413": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
    ]
}
