// OSRM's three services as engine operations, for routing clients that speak OSRM's API: a route
// through several points in order, leg by leg through `Network.route` (the one route operation),
// with turn-by-turn steps named from the network's lines (OSM `name` tags); a table of walking
// distances and times, one search per source rather than one route per pair; and the nearest
// points of the network. The HTTP API's /route/v1, /table/v1 and /nearest/v1 parse a request,
// call one of these, and render the answer through `Output`.

import Foundation
import Geometry
import Routing
import Support

/// One step of a leg: a maneuver, then travel along one named way (or one stretch of unnamed
/// paths) to the next maneuver. The last step of a leg is the arrival, of no length.
public struct Step: Sendable {
    public enum Maneuver: String, Sendable {
        case depart, turn, arrive
        /// No turn: the way's name changes.
        case newName = "new name"
    }

    public let maneuver: Maneuver
    /// OSRM's direction of a turn (`straight`, `slight right`, `right`, `sharp right`, `uturn`,
    /// and the lefts); nil for departure and arrival.
    public let modifier: String?
    /// Where the maneuver takes place.
    public let location: Point
    /// Degrees clockwise from north of travel into and out of the maneuver, 0–359 (0 before a
    /// departure and after an arrival, as OSRM writes them).
    public let bearingBefore: Int
    public let bearingAfter: Int
    /// The way travelled after the maneuver ("" for paths without a name).
    public let name: String
    /// From the maneuver to the next one.
    public let geometry: LineString
    public let metres: Double
    public let seconds: Double
}

/// A route between two consecutive points of a request, with its steps.
public struct Leg: Sendable {
    public let answer: RouteAnswer
    /// Per segment of `answer.route.geometry` (each pair of consecutive coordinates): the name
    /// of the way and its great-circle metres.
    public let segmentNames: [String]
    public let segmentMetres: [Double]
    public let steps: [Step]
    /// The names of the (at most) two ways that carry most of the leg, in the order walked.
    public let summary: String
}

/// A route through `points` in order: one leg between each two.
public struct LegsRequest: Sendable {
    public var points: [Point]
    public var profile: WalkingProfile
    /// km/h; nil: the profile's.
    public var speedKmh: Double?
    /// Per point, how far it may lie from the network (nil: the default); empty for all
    /// defaults.
    public var snapMetres: [Double?]
    /// When the walk starts: each leg departs when the one before arrives (`RouteRequest`).
    public var departure: Date?

    public init(points: [Point], profile: WalkingProfile = .foot, speedKmh: Double? = nil, snapMetres: [Double?] = [], departure: Date? = nil) {
        self.points = points
        self.profile = profile
        self.speedKmh = speedKmh
        self.snapMetres = snapMetres
        self.departure = departure
    }
}

public struct LegsAnswer: Sendable {
    public let legs: [Leg]
    /// Where each point of the request joined the network, and the name of the way there.
    public let waypoints: [Waypoint]
    public let waypointNames: [String]
    public let network: String
    public let profile: WalkingProfile
    public let speedKmh: Double

    public var metres: Double { legs.reduce(0) { $0 + $1.answer.route.metres } }
    public var seconds: Double { legs.reduce(0) { $0 + $1.answer.route.seconds } }
    /// The whole route's line: the legs' lines joined at the points between them.
    public var geometry: LineString {
        var coordinates: [Double] = []
        for leg in legs {
            let line = leg.answer.route.geometry.coordinates
            coordinates += coordinates.isEmpty ? line[...] : line.dropFirst(2)
        }
        return LineString(coordinates: coordinates)
    }
}

/// Walking distances and times between points (OSRM's table service).
public struct TableRequest: Sendable {
    public var points: [Point]
    /// Indices into `points`; nil: every point.
    public var sources: [Int]?
    public var destinations: [Int]?
    public var profile: WalkingProfile
    /// Per point, as in `LegsRequest`.
    public var snapMetres: [Double?]
    /// Paths with opening hours closed at this moment are kept off (a table cannot follow
    /// each walk's own time); nil: every path is open.
    public var departure: Date?

    public init(points: [Point], sources: [Int]? = nil, destinations: [Int]? = nil, profile: WalkingProfile = .foot, snapMetres: [Double?] = [],
                departure: Date? = nil) {
        self.points = points
        self.sources = sources
        self.destinations = destinations
        self.profile = profile
        self.snapMetres = snapMetres
        self.departure = departure
    }
}

public struct TableAnswer: Sendable {
    public let sources: [Waypoint]
    public let destinations: [Waypoint]
    public let sourceNames: [String]
    public let destinationNames: [String]
    /// `metres[i][j]` from source i to destination j; nil when no path joins them.
    public let metres: [[Double?]]
    public let network: String
    public let profile: WalkingProfile
    public let speedKmh: Double

    public var seconds: [[Double?]] { metres.map { row in row.map { $0.map { $0 / (speedKmh / 3.6) } } } }
}

/// A point of the network near a position (OSRM's nearest service).
public struct NetworkPoint: Sendable {
    public let waypoint: Waypoint
    /// The name of the way there ("" when it has none).
    public let name: String
    /// The source ids (OSM node ids) of the ends of the edge it lies on.
    public let nodeIDs: (Int64, Int64)
}

extension Snapshot {
    /// The route through the request's points in order, leg by leg; the legs share `deadline`.
    /// A point farther from the network than its radius is `noSegmentAt` naming it.
    public func route(through request: LegsRequest, on network: Network? = nil, deadline: Deadline = .none) throws(EngineError) -> LegsAnswer {
        let network = try resolve(network)
        let count = request.points.count
        guard count >= 2 else { throw .invalidArgument(parameter: "coordinates", message: "a route needs at least 2 points, got \(count)") }
        guard count <= limits.maxRoutePoints else { throw .route(.tooManyPoints(what: "points in a route", count: count, limit: limits.maxRoutePoints)) }
        return try legs(through: request, on: network, deadline: deadline)
    }

    /// The legs of a route through points in order (a trip's too, which may have one more
    /// point than a route: its way back).
    func legs(through request: LegsRequest, on network: Network, deadline: Deadline) throws(EngineError) -> LegsAnswer {
        let count = request.points.count
        func radius(_ i: Int) -> Double? { i < request.snapMetres.count ? request.snapMetres[i] : nil }
        var legs: [Leg] = []
        for i in 0..<(count - 1) {
            let walked = legs.reduce(0) { $0 + $1.answer.route.seconds }
            let leg = RouteRequest(from: .point(request.points[i]), to: .point(request.points[i + 1]), profile: request.profile, speedKmh: request.speedKmh,
                                   maxSnapMetres: radius(i), endSnapMetres: radius(i + 1) ?? limits.defaultSnapMetres,
                                   departure: request.departure?.addingTimeInterval(walked))
            do {
                legs.append(network.leg(try network.route(leg, limits: limits, deadline: deadline)))
            } catch {
                if case .route(.noSegment(let end, let nearest, let max)) = error {
                    throw .route(.noSegmentAt(coordinate: i + end, nearestMetres: nearest, maxSnapMetres: max))
                }
                throw error
            }
        }
        let waypoints = [legs[0].answer.route.waypoints[0]] + legs.map { $0.answer.route.waypoints[1] }
        let first = legs[0].answer
        return LegsAnswer(legs: legs, waypoints: waypoints, waypointNames: waypoints.map(network.name(of:)), network: first.network,
                          profile: first.profile, speedKmh: first.speedKmh)
    }

    /// Walking distances (and times at the profile's speed) from every source to every
    /// destination: each point snaps once, then one search per source. At most
    /// `maxTableSize`² cells (OSRM's rule for its table size); unreachable pairs are nil.
    public func table(_ request: TableRequest, on network: Network? = nil, deadline: Deadline = .none) throws(EngineError) -> TableAnswer {
        try deadline.check()
        let network = try resolve(network)
        let points = request.points
        guard !points.isEmpty else { throw .invalidArgument(parameter: "coordinates", message: "a table needs at least 1 point") }
        for (name, list) in [("sources", request.sources), ("destinations", request.destinations)] {
            if let bad = list?.first(where: { !points.indices.contains($0) }) {
                throw .invalidArgument(parameter: name, message: "index \(bad) is not one of the \(points.count) coordinates (0 to \(points.count - 1))")
            }
        }
        let sources = request.sources ?? Array(points.indices), destinations = request.destinations ?? Array(points.indices)
        let cells = sources.count * destinations.count
        guard cells <= limits.maxTableSize * limits.maxTableSize else {
            throw .route(.tooManyPoints(what: "cells in a table (\(sources.count) sources × \(destinations.count) destinations)", count: cells,
                                        limit: limits.maxTableSize * limits.maxTableSize))
        }
        for (i, p) in points.enumerated() { try Check.position(p, parameter: "coordinate \(i)") }
        var radii: [Double] = []
        for i in points.indices { radii.append(try limits.snapRadius(i < request.snapMetres.count ? request.snapMetres[i] : nil)) }
        let limits = self.limits
        do {
            let table = try network.withRouter(profile: request.profile, metresPerSecond: request.profile.kmh / 3.6, maxSnapMetres: limits.defaultSnapMetres,
                                                 deadline: deadline) { router throws(RouteError) in
                router.maxSettled = limits.maxSettledNodes
                router.maxSeconds = min(limits.maxRouteSeconds, deadline.remainingSeconds)
                let closed = request.departure.map { network.timed.edgeSet(network.timed.closed(at: $0), nodeCount: network.graph.nodeCount) } ?? .empty
                return try router.table(sources: sources.map { points[$0] }, sourceSnapMetres: sources.map { radii[$0] },
                                        destinations: destinations.map { points[$0] }, destinationSnapMetres: destinations.map { radii[$0] },
                                        closed: closed, shouldStop: { deadline.hasPassed })
            }
            return TableAnswer(sources: table.sources, destinations: table.destinations,
                               sourceNames: table.sources.map(network.name(of:)), destinationNames: table.destinations.map(network.name(of:)),
                               metres: table.metres, network: network.layerName, profile: request.profile, speedKmh: request.profile.kmh)
        } catch {
            if case .tooMuchWork = error, deadline.hasPassed { throw .deadlineExceeded(seconds: deadline.seconds) }
            // The router numbers the destinations after the sources; say which coordinate.
            if case .noSegmentAt(let index, let nearest, let max) = error {
                let coordinate = index < sources.count ? sources[index] : destinations[index - sources.count]
                throw .route(.noSegmentAt(coordinate: coordinate, nearestMetres: nearest, maxSnapMetres: max))
            }
            throw .route(error)
        }
    }

    /// The `count` points of the network nearest to `point` (one per edge, nearest first)
    /// within `maxSnapMetres` (nil: the default radius); `noSegmentAt` when there is none.
    public func nearestOnNetwork(_ point: Point, count: Int, profile: WalkingProfile = .foot, maxSnapMetres: Double? = nil,
                                 on network: Network? = nil) throws(EngineError) -> [NetworkPoint] {
        try Check.position(point)
        guard count >= 1 && count <= limits.maxRows else {
            throw .invalidArgument(parameter: "number", message: "must be between 1 and \(limits.maxRows), got \(count)")
        }
        let network = try resolve(network)
        let radius = try limits.snapRadius(maxSnapMetres)
        let found = network.withRouter(profile: profile, metresPerSecond: profile.kmh / 3.6, maxSnapMetres: radius) { router in
            router.nearest(to: point, count: count, maxMetres: radius)
        }
        guard !found.isEmpty else {
            let nearest = network.withRouter(profile: profile, metresPerSecond: profile.kmh / 3.6, maxSnapMetres: radius) { router in
                router.nearest(to: point, count: 1, maxMetres: .infinity).first?.snapMetres
            }
            throw .route(.noSegmentAt(coordinate: 0, nearestMetres: nearest, maxSnapMetres: radius))
        }
        let ids = network.graph.nodeIDs
        return found.map { NetworkPoint(waypoint: $0, name: network.name(of: $0), nodeIDs: (ids[$0.edgeStart], ids[$0.edgeEnd])) }
    }
}

extension Network {
    /// The name of the way a waypoint joined.
    func name(of waypoint: Waypoint) -> String { names.name(waypoint.edgeStart, waypoint.edgeEnd) }

    /// A route as a leg: each segment of its line named from the edge it runs along, and the
    /// segments grouped into steps wherever the name changes.
    func leg(_ answer: RouteAnswer) -> Leg {
        let route = answer.route
        let flat = route.geometry.coordinates
        let segmentCount = max(0, route.geometry.pointCount - 1)
        // The line is the start's snapped point, the nodes passed, the end's snapped point: the
        // first segment lies on the start's edge, the last on the end's, the others between nodes.
        var segmentNames: [String] = []
        var segmentMetres: [Double] = []
        for s in 0..<segmentCount {
            let name: String
            if s == 0 {
                name = self.name(of: route.waypoints[0])
            } else if s == segmentCount - 1 {
                name = self.name(of: route.waypoints[1])
            } else {
                name = names.name(route.nodes[s - 1], route.nodes[s])
            }
            segmentNames.append(name)
            segmentMetres.append(Geodesy.haversine(lon1: flat[2 * s], lat1: flat[2 * s + 1], lon2: flat[2 * s + 2], lat2: flat[2 * s + 3]))
        }
        let steps = Network.steps(flat, segmentNames, segmentMetres, metresPerSecond: answer.speedKmh / 3.6)
        return Leg(answer: answer, segmentNames: segmentNames, segmentMetres: segmentMetres, steps: steps,
                   summary: Network.summary(steps))
    }

    /// Consecutive segments of one name make one step; a segment too short to have a
    /// direction (a point snapped onto a node) joins the step it touches whatever its name.
    static func steps(_ flat: [Double], _ names: [String], _ metres: [Double], metresPerSecond: Double) -> [Step] {
        let count = names.count
        let point = { (i: Int) in Point(lon: flat[2 * i], lat: flat[2 * i + 1]) }
        func bearing(_ s: Int) -> Double {
            Geodesy.bearing(lon1: flat[2 * s], lat1: flat[2 * s + 1], lon2: flat[2 * s + 2], lat2: flat[2 * s + 3])
        }
        let moving = { (s: Int) in metres[s] > 0.001 }
        // Groups of segments [start, end): a new group where a moving segment's name differs
        // from the name of the current group's first moving segment.
        var groups: [Range<Int>] = []
        var start = 0
        var groupName: String?
        for s in 0..<count where moving(s) {
            if let current = groupName, names[s] != current {
                groups.append(start..<s)
                start = s
            }
            if groupName == nil || names[s] != groupName { groupName = names[s] }
        }
        if count > 0 { groups.append(start..<count) }
        var steps: [Step] = []
        var before: Double?
        for (g, range) in groups.enumerated() {
            let firstMoving = range.first(where: moving)
            let lastMoving = range.last(where: moving)
            let after = firstMoving.map(bearing)
            let name = firstMoving.map { names[$0] } ?? names[range.lowerBound]
            let length = range.reduce(0) { $0 + metres[$1] }
            var maneuver = Step.Maneuver.depart
            var modifier: String?
            if g > 0 {
                let turn = Network.turn(from: before ?? 0, to: after ?? before ?? 0)
                maneuver = turn.modifier == "straight" ? .newName : .turn
                modifier = turn.modifier
            }
            steps.append(Step(maneuver: maneuver, modifier: modifier, location: point(range.lowerBound),
                              bearingBefore: g == 0 ? 0 : Network.degrees(before ?? 0), bearingAfter: Network.degrees(after ?? 0), name: name,
                              geometry: LineString(coordinates: Array(flat[(2 * range.lowerBound)..<(2 * range.upperBound + 2)])),
                              metres: length, seconds: length / metresPerSecond))
            if let lastMoving { before = bearing(lastMoving) }
        }
        // Arrival: where the leg ends, no length, named as the way it arrives by.
        let end = point(count)
        steps.append(Step(maneuver: .arrive, modifier: nil, location: end, bearingBefore: Network.degrees(before ?? 0), bearingAfter: 0,
                          name: steps.last?.name ?? "", geometry: LineString(coordinates: [end.lon, end.lat, end.lon, end.lat]),
                          metres: 0, seconds: 0))
        return steps
    }

    /// OSRM's modifier for a change of bearing (clockwise is right).
    static func turn(from before: Double, to after: Double) -> (angle: Double, modifier: String) {
        var angle = (after - before).truncatingRemainder(dividingBy: 360)
        if angle > 180 { angle -= 360 }
        if angle <= -180 { angle += 360 }
        let side = angle > 0 ? "right" : "left"
        switch abs(angle) {
        case ..<20: return (angle, "straight")
        case ..<60: return (angle, "slight \(side)")
        case ..<140: return (angle, side)
        case ..<170: return (angle, "sharp \(side)")
        default: return (angle, "uturn")
        }
    }

    /// A bearing as OSRM writes it: whole degrees, 0–359.
    static func degrees(_ bearing: Double) -> Int {
        let rounded = Int(bearing.isFinite ? bearing.rounded() : 0)
        return ((rounded % 360) + 360) % 360
    }

    /// The names of the two named ways walked longest, in the order walked.
    static func summary(_ steps: [Step]) -> String {
        var metres: [String: Double] = [:], order: [String] = []
        for step in steps where !step.name.isEmpty {
            if metres[step.name] == nil { order.append(step.name) }
            metres[step.name, default: 0] += step.metres
        }
        let longest = Set(order.sorted { (metres[$0] ?? 0, $1) > (metres[$1] ?? 0, $0) }.prefix(2))
        return order.filter(longest.contains).joined(separator: ", ")
    }
}
