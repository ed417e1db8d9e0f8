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
        options.k = try parameters.int("k", default: options.k, range: nil)  // checked by `locate`
        if let name = parameters.string("method") {
            guard let method = LocateMethod(rawValue: name) else { throw APIError.invalidParameter("method", "\(Quote.input(name)) is not knn or wknn") }
            options.method = method
        }
        if let name = parameters.string("fingerprints") {
            guard let kind = FingerprintKind(rawValue: name) else {
                throw APIError.invalidParameter("fingerprints", "\(Quote.input(name)) is not scans, mean or median")
            }
            options.fingerprints = kind
        }
        let geoJSON = try parameters.bool("geometry") ?? false
        let text = try await Endpoints.readBody(request, limit: configuration.maxBodyBytes, timeout: configuration.requestTimeout)
        let readings = try Endpoints.scan(text)
        let snapshot = try state.snapshot()
        let venue = try engine { () throws(EngineError) in
            if let name = parameters.string("venue") { return try snapshot.venue(name) }
            guard snapshot.venues.count == 1, let only = snapshot.venues.first else {
                throw .invalidArgument(parameter: "venue", message: snapshot.venues.isEmpty
                    ? "the store has no venues (import a survey with vltava indoor import)"
                    : "name the venue (venues: \(snapshot.venueNames.joined(separator: ", ")))")
            }
            return only
        }
        let location = try engine { () throws(EngineError) in try snapshot.locate(readings, in: venue, options: options) }
        return Reply.json(contentType: geoJSON ? Reply.geoJSON : Reply.json, request: request) { w in
            geoJSON ? Output.locationFeature(&w, location) : Output.location(&w, location)
        }
    }

    /// The body `{"b3001": -78, "b3006": -77}` as readings, in the body's order. A beacon named
    /// twice is the engine's `duplicate_beacon`, which the merged JSON object would hide.
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
