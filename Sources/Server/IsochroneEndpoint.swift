// GraphHopper's isochrone service, so its clients and the map page ask "what can I reach in 10
// minutes" in a shape they know: `GET /isochrone?point=LAT,LON&time_limit=SECONDS&buckets=N`
// (or `distance_limit=METRES`), answering `polygons` (GeoJSON Features, one per bucket) and
// `info`. The polygons follow the reached paths (Routing/Isochrone.swift).

import Dispatch
import Engine
import Geometry
import Hummingbird

extension Endpoints {
    /// Profile names GraphHopper clients send (`profile`, or the older `vehicle`).
    static let isochroneProfiles: [String: WalkingProfile] = ["foot": .foot, "walk": .foot, "walking": .foot, "hike": .foot, "wheelchair": .wheelchair]

    func isochrone(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Parameters(request, allowed: ["point", "time_limit", "distance_limit", "buckets", "profile", "vehicle", "reverse_flow",
                                                           "speed_kmh", "network"])
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
        switch (try parameters.double("time_limit"), try parameters.double("distance_limit")) {
        case (_?, _?): throw APIError.invalidParameter("distance_limit", "give time_limit or distance_limit, not both")
        case (nil, let metres?): limit = .metres(metres)
        case (let seconds, nil): limit = .seconds(seconds ?? 600)
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
