// In which order should I go: the trip operation. The stops' walking distances come from the
// network's many-to-many table (the contraction hierarchy's buckets), `TripSolver` orders them
// (exact up to 12 stops, a heuristic with a lower bound beyond), and the route through the
// stops in that order is walked leg by leg as OSRM's route service does.

import Foundation
import Geometry
import Routing
import Support

public typealias TripShape = Routing.TripShape

public struct TripRequest: Sendable {
    public var points: [Point]
    public var shape: TripShape
    public var profile: WalkingProfile
    /// km/h; nil: the profile's.
    public var speedKmh: Double?
    /// Per point, how far it may lie from the network (nil: the default); empty for all.
    public var snapMetres: [Double?]
    /// When the trip starts: the order is chosen on the paths open then, and each leg walked
    /// at its own time (`RouteRequest.departure`).
    public var departure: Date?
    /// Each point's name and opening hours (empty: none): with a departure, the answer says
    /// which stop the walk reaches closed.
    public var places: [PlaceHours] = []
    /// What each point is called in an error that names it (the language's stop names); empty:
    /// `coordinate i`, counted from 0 as OSRM's clients count.
    public var names: [String] = []
    /// Up to this many points the order is proven shortest; beyond, a heuristic's.
    public static let exactLimit = TripSolver.exactLimit

    public init(points: [Point], shape: TripShape = TripShape(), profile: WalkingProfile = .foot, speedKmh: Double? = nil, snapMetres: [Double?] = []) {
        self.points = points
        self.shape = shape
        self.profile = profile
        self.speedKmh = speedKmh
        self.snapMetres = snapMetres
    }
}

public struct TripAnswer: Sendable {
    /// The request's points in visiting order (indices into them).
    public let order: [Int]
    /// The walk through them in that order, back to the first for a round trip.
    public let route: LegsAnswer
    /// Whether the order is proven shortest; else the heuristic's, with `lowerBoundMetres`.
    public let exact: Bool
    public let lowerBoundMetres: Double
    /// With a departure and places: the stops the walk reaches while they are closed, in the
    /// order walked (the order stays the shortest; the stops are the caller's).
    public var closedStops: [ClosedPath] = []
}

extension Snapshot {
    /// The shortest trip through the request's points, 2 to `maxRoutePoints` of them.
    public func trip(_ request: TripRequest, on network: Network? = nil, deadline: Deadline = .none) throws(EngineError) -> TripAnswer {
        let count = request.points.count
        guard count >= 2 else { throw .invalidArgument(parameter: "coordinates", message: "a trip needs at least 2 points, got \(count)") }
        guard count <= min(limits.maxRoutePoints, limits.maxTableSize) else {
            throw .route(.tooManyPoints(what: "points in a trip", count: count, limit: min(limits.maxRoutePoints, limits.maxTableSize)))
        }
        let network = try resolve(network)
        let table = try self.table(TableRequest(points: request.points, profile: request.profile, snapMetres: request.snapMetres, departure: request.departure), on: network, deadline: deadline)
        let matrix = table.metres.map { row in row.map { $0 ?? .infinity } }
        guard let solved = TripSolver.solve(matrix, shape: request.shape, shouldStop: { deadline.hasPassed }) else {
            try deadline.check()
            // Name what the first point cannot reach, or what cannot reach it.
            let cut = (1..<count).filter { table.metres[0][$0] == nil || table.metres[$0][0] == nil }
            let names = cut.prefix(5).map { request.names.indices.contains($0) ? request.names[$0] : "coordinate \($0)" }
            let list = names.joined(separator: ", ") + (cut.count > 5 ? " and \(cut.count - 5) more" : "")
            throw .route(.noRoute(reason: cut.isEmpty ? "no trip visits every point: some of them lie in parts of the network that no path joins"
                                                      : "no trip visits every point: no path joins \(list) with the first point, both ways"))
        }
        var ordered = solved.order
        if request.shape.roundTrip { ordered.append(ordered[0]) }
        var legs = LegsRequest(points: ordered.map { request.points[$0] }, profile: request.profile, speedKmh: request.speedKmh,
                               snapMetres: request.snapMetres.isEmpty ? [] : ordered.map { request.snapMetres.indices.contains($0) ? request.snapMetres[$0] : nil })
        legs.departure = request.departure
        let route = try self.legs(through: legs, on: network, deadline: deadline)
        var answer = TripAnswer(order: solved.order, route: route, exact: solved.exact, lowerBoundMetres: solved.lowerBound)
        if let departure = request.departure, request.places.count == count {
            var arrival = departure
            for (leg, stop) in zip(route.legs, ordered.dropFirst()) {
                arrival = arrival.addingTimeInterval(leg.answer.route.seconds)
                if let closed = TimedPaths.closedPlace(request.places[stop], at: arrival) { answer.closedStops.append(closed) }
            }
        }
        return answer
    }
}
