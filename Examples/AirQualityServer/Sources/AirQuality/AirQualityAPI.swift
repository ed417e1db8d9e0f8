// The air-quality app's API over a Vltava store: the stations, one station's latest values and
// history, and the nearest stations to a point. Every handler reads one snapshot of the engine,
// so a reload between two reads of a request cannot mix two versions of the data.

import Foundation
import Hummingbird
import Vltava

struct StationSummary: ResponseCodable { var code: String, name: String, lon: Double, lat: Double }
struct Value: ResponseCodable { var value: Double, end: String }
struct StationDetail: ResponseCodable { var code: String, name: String, lon: Double, lat: Double, latest: [String: Value], observed_until: String? }
struct Hour: ResponseCodable { var end: String, values: [String: Double] }
struct History: ResponseCodable { var code: String, hours: Int, observations: [Hour] }
struct NearestRequest: Decodable { var lon: Double, lat: Double, k: Int? }
/// A row of the FIND below, decoded by its column names.
struct NearStation: ResponseCodable { var code: String, name: String, distance_m: Double }

/// An RFC 9457 problem document, as the Vltava HTTP API answers errors.
struct Problem: HTTPResponseError, Encodable {
    var status: HTTPResponse.Status
    var code: String
    var detail: String

    init(_ status: HTTPResponse.Status, _ code: String, _ detail: String) { (self.status, self.code, self.detail) = (status, code, detail) }

    enum CodingKeys: String, CodingKey { case type, title, status, code, detail }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode("urn:air-quality:problem:\(code)", forKey: .type)
        try c.encode(status.reasonPhrase, forKey: .title)
        try c.encode(status.code, forKey: .status)
        try c.encode(code, forKey: .code)
        try c.encode(detail, forKey: .detail)
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(status: status, headers: [.contentType: "application/problem+json"], body: .init(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(self))))
    }
}

public func router(engine: Engine) -> Router<BasicRequestContext> {
    let router = Router()
    // Which layer holds the stations is the snapshot's decision: the point layer with a time series.
    @Sendable func stations(_ snapshot: Snapshot) throws -> Stations {
        guard let stations = snapshot.stations else { throw Problem(.notFound, "no_stations", "the store has no stations with observations") }
        return stations
    }
    @Sendable func summary(_ stations: Stations, _ index: Int) -> StationSummary? {
        guard let code = stations.key(index), case .point(let p)? = stations.layer.geometries[index] else { return nil }
        return StationSummary(code: code, name: stations.layer.properties[index]["name"]?.stringValue ?? "", lon: p.lon, lat: p.lat)
    }
    @Sendable func station(_ snapshot: Snapshot, _ code: String) throws -> (Stations, StationSummary) {
        let stations = try stations(snapshot)
        guard let found = (0..<stations.layer.count).first(where: { stations.key($0) == code }).flatMap({ summary(stations, $0) }) else {
            throw Problem(.notFound, "unknown_station", "no station has the code '\(code)'")
        }
        return (stations, found)
    }

    router.get("stations") { _, _ -> [StationSummary] in
        try engine.read { snapshot in
            let stations = try stations(snapshot)
            return (0..<stations.layer.count).compactMap { summary(stations, $0) }
        }
    }
    router.get("stations/:code") { _, context -> StationDetail in
        try engine.read { snapshot in
            let (stations, s) = try station(snapshot, try context.parameters.require("code"))
            let latest = stations.series.latest(of: s.code)
            return StationDetail(code: s.code, name: s.name, lon: s.lon, lat: s.lat,
                                 latest: latest.values.mapValues { Value(value: $0.value, end: $0.end.iso) }, observed_until: latest.lastEnd?.iso)
        }
    }
    router.get("stations/:code/history") { request, context -> History in
        let text = request.uri.queryParameters.get("hours") ?? "24"
        guard let hours = Int(text), (1...24 * 31).contains(hours) else {
            throw Problem(.badRequest, "invalid_parameter", "hours must be a whole number from 1 to 744, got '\(text)'")
        }
        return try engine.read { snapshot in
            let (stations, s) = try station(snapshot, try context.parameters.require("code"))
            let columns = stations.series.columns
            // Each hour's measured values by column; a missing value (see TimeSeries) is left out.
            let observations = stations.series.history(of: s.code, hours: hours).map { o in
                Hour(end: o.end.iso, values: Dictionary(uniqueKeysWithValues: zip(columns, o.values).compactMap { c, v in v.map { (c, $0) } }))
            }
            return History(code: s.code, hours: hours, observations: observations)
        }
    }
    router.post("stations/nearest") { request, context -> [NearStation] in
        guard let body = try? await request.decode(as: NearestRequest.self, context: context) else {
            throw Problem(.badRequest, "invalid_body", #"the body must be JSON: {"lon": 14.42, "lat": 50.09, "k": 3}"#)
        }
        do {
            return try engine.fetch(NearStation.self, "FIND stations NEAREST $1 TO $2 RETURN code, name, distance_m",
                                    [body.k ?? 3, Point(lon: body.lon, lat: body.lat)])
        } catch let error as QueryError {
            throw Problem(.badRequest, error.code, error.message)
        }
    }
    return router
}
