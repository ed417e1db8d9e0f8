// POST /v1/locate: where am I inside? The body is the phone's scan as `{beacon: rssi}` (dBm),
// the query names the venue (optional when the store has one) and the method. Locating takes
// microseconds, so it answers on the request's own task, as the other light endpoints do.

import Engine
import Geometry
import Hummingbird

extension Endpoints {
    func locate(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Parameters(request, allowed: ["venue", "k", "method", "fingerprints", "geometry"])
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
        options.k = try parameters.int("k", default: LocateOptions.defaultK(options.method), range: nil)  // checked by `locate`
        let geoJSON = try parameters.bool("geometry") ?? false
        let text = try await Endpoints.readBody(request, limit: configuration.maxBodyBytes, timeout: configuration.requestTimeout)
        let readings = try Endpoints.scan(text)
        let snapshot = try state.snapshot()
        let venue = try engine { () throws(EngineError) in try snapshot.onlyOrNamedVenue(parameters.string("venue")) }
        let location = try engine { () throws(EngineError) in try snapshot.locate(readings, in: venue, options: options) }
        return Reply.json(contentType: geoJSON ? Reply.geoJSON : Reply.json, request: request) { w in
            geoJSON ? Output.locationFeature(&w, location) : Output.location(&w, location)
        }
    }

    /// The body `{"b3001": -78, "b3006": -77}` as readings, in the body's order. A beacon named
    /// twice is the engine's `duplicate_beacon`, which the merged JSON object would hide.
    /// POST /v1/locate/track: a walking phone's scans, located together (`Snapshot.locateTrack`).
    /// The body is `{"scans": [{"time": seconds, "readings": {beacon: rssi}}, …]}`; the answer a
    /// position per scan. Its cost grows with scans × cells², so it runs on the work pool.
    func locateTrack(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Parameters(request, allowed: ["venue", "k", "speed", "interval", "smooth"])
        var options = TrackOptions()
        options.k = try parameters.int("k", default: options.k, range: nil)  // checked by `locateTrack`
        options.speed = try parameters.double("speed") ?? options.speed
        options.interval = try parameters.double("interval") ?? options.interval
        options.smooth = try parameters.bool("smooth") ?? options.smooth
        let text = try await Endpoints.readBody(request, limit: configuration.maxBodyBytes, timeout: configuration.requestTimeout)
        let scans = try Endpoints.track(text)
        let snapshot = try state.snapshot()
        let venue = try engine { () throws(EngineError) in try snapshot.onlyOrNamedVenue(parameters.string("venue")) }
        let settings = options
        return try await heavyWork(context, snapshot) { budget in
            let track = try engine { () throws(EngineError) in try snapshot.locateTrack(scans, in: venue, options: settings, deadline: budget.deadline) }
            return Reply.json(request: request) { w in Output.track(&w, track) }
        }
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
