// How do I get there: every route form goes through `Snapshot.route` — to a point, to the
// nearest of some features, around areas to avoid, by a profile, at a speed — and so does the
// festival schedule check, which is a route per pair of events. The callers (the language, the
// HTTP API, the CLI, the library) only say what they want; the router, its limits, the snap
// radius and the AVOID index are set here.

import Foundation
import Geometry
import Routing
import SpatialIndex
import Store
import Support

/// One end of a route: a position, or features (a route goes to the nearest of them; a route
/// from features starts at the one feature's representative point).
public enum RoutePlace: Sendable {
    case point(Point)
    case features([Geometry])

    /// Where a route from a feature starts: a point feature's place, else its box's centre
    /// (the route then joins the network at the path nearest to it).
    public static func start(of geometry: Geometry) -> Point? {
        if case .point(let p) = geometry { return p }
        let box = geometry.bbox
        guard !box.isEmpty else { return nil }
        return Point(lon: (box.minLon + box.maxLon) / 2, lat: (box.minLat + box.maxLat) / 2)
    }
}

/// What a route asks for. Unset values take the profile's speed and the limits' snap radius.
public struct RouteRequest: Sendable {
    public var from: RoutePlace
    public var to: RoutePlace
    public var profile: WalkingProfile
    /// km/h; nil: the profile's.
    public var speedKmh: Double?
    /// How far an end may lie from the network; nil: `EngineLimits.defaultSnapMetres`.
    public var maxSnapMetres: Double?
    /// How far the destination may lie from the network, when it differs from the start's
    /// (OSRM's per-coordinate `radiuses`); nil: `maxSnapMetres`.
    public var endSnapMetres: Double?
    /// Polygons the route must not enter (AVOID).
    public var avoid: [Geometry]
    /// When the walk starts: paths with opening hours are taken only when open as the walk
    /// reaches them (TimedPaths.swift); nil: every path is open.
    public var departure: Date?
    /// For a route to features: each one's name and opening hours, in the features' order
    /// (empty: none have hours). With a departure, a place closed when the walk would arrive is
    /// not gone to: the route goes to the nearest one open then.
    public var places: [PlaceHours] = []

    public init(from: RoutePlace, to: RoutePlace, profile: WalkingProfile = .foot, speedKmh: Double? = nil,
                maxSnapMetres: Double? = nil, endSnapMetres: Double? = nil, avoid: [Geometry] = [], departure: Date? = nil) {
        self.from = from
        self.to = to
        self.profile = profile
        self.speedKmh = speedKmh
        self.maxSnapMetres = maxSnapMetres
        self.endSnapMetres = endSnapMetres
        self.avoid = avoid
        self.departure = departure
    }
}

/// A place a route may go to, with its opening hours (OSM's `opening_hours`; nil: always open).
public struct PlaceHours: Sendable {
    public var name: String
    public var hours: OpeningHours?
    /// Why its `opening_hours` could not be read (it is then taken as always open).
    public var problem: String?

    public init(name: String, hours: OpeningHours?) {
        self.name = name
        self.hours = hours
    }

    /// A place with its `opening_hours` as written (nil or empty: none).
    public init(name: String, openingHours text: String?) {
        self.name = name
        guard let text, !text.isEmpty else { return }
        do {
            hours = try OpeningHours(parsing: text)
        } catch {
            problem = "\(name): \(error)"
        }
    }
}

public typealias OpeningHours = Routing.OpeningHours

/// A route with what it was walked by.
public struct RouteAnswer: Sendable {
    public let route: Route
    /// The line layer walked along.
    public let network: String
    public let profile: WalkingProfile
    public let speedKmh: Double
    /// Step edges the profile kept off (0 for `foot`), for EXPLAIN.
    public let forbiddenEdges: Int
    /// The request's departure, when it had one.
    public var departure: Date? = nil
    /// The timed paths the route kept off, closed when the walk would have reached them, in
    /// the order found; then the places it did not go to, closed when it would have arrived.
    public var closedPaths: [ClosedPath] = []
    /// Lines whose opening hours could not be read, taken as always open (with a departure).
    public var unreadableHours: [String] = []
}

extension Snapshot {
    /// The route over `network` (nil: the default network), within this snapshot's limits and
    /// the request's `deadline`.
    public func route(_ request: RouteRequest, on network: Network? = nil, deadline: Deadline = .none) throws(EngineError) -> RouteAnswer {
        try resolve(network).route(request, limits: limits, deadline: deadline)
    }
}

extension Network {
    /// The route over this network. Errors name the parameter at fault (`from`, `to`,
    /// `speed`, `max_snap_m`) or carry the router's OSRM code; `deadlineExceeded` when the
    /// request's deadline, not the search's own bound, stopped it.
    public func route(_ request: RouteRequest, limits: EngineLimits, deadline: Deadline = .none) throws(EngineError) -> RouteAnswer {
        if request.profile == .any, let anyVariant { return try anyVariant.route(request, limits: limits, deadline: deadline) }
        try deadline.check()
        let network = self
        let speed = try limits.speed(request.speedKmh, profile: request.profile)
        let snap = try limits.snapRadius(request.maxSnapMetres)
        let endSnap = try request.endSnapMetres.map { metres throws(EngineError) in try limits.snapRadius(metres) }
        let start: Point
        switch request.from {
        case .point(let p):
            try Check.position(p, parameter: "from")
            start = p
        case .features(let geometries):
            guard !geometries.isEmpty else { throw .route(.noTarget(waypoint: 0)) }
            guard geometries.count == 1, let only = geometries.first.flatMap(RoutePlace.start(of:)) else {
                throw .invalidArgument(parameter: "from", message: "the start matched \(geometries.count) features; a route starts at one")
            }
            start = only
        }
        if case .point(let p) = request.to { try Check.position(p, parameter: "to") }
        if case .features(let targets) = request.to, targets.isEmpty {
            throw .route(.noTarget(waypoint: 1))
        }
        for list in [request.avoid, { if case .features(let g) = request.to { g } else { [] } }()] where list.count > limits.maxRows {
            throw .tooManyRows(count: list.count, limit: limits.maxRows)
        }
        let areas = try Router.Avoid.areas(request.avoid)
        let timed = request.departure == nil ? TimedPaths.empty : network.timed
        var targets: [Geometry] = [], places = request.places
        if case .features(let features) = request.to { targets = features }
        if places.count != targets.count { places = [] }
        do {
            var closedLines: [Int] = [], closedPaths: [ClosedPath] = []
            let route = try network.withRouter(profile: request.profile, metresPerSecond: speed / 3.6, maxSnapMetres: snap, deadline: deadline) { router throws(RouteError) in
                router.maxEndSnapMetres = endSnap
                router.maxSettled = limits.maxSettledNodes
                // The search keeps to its own bound and to what is left of the request's.
                router.maxSeconds = min(limits.maxRouteSeconds, deadline.remainingSeconds)
                var avoid = areas
                for _ in 0..<TimedPaths.maxRounds {
                    let route: Route
                    switch request.to {
                    case .point(let end): route = try router.route(from: start, to: end, avoiding: avoid)
                    case .features: route = try router.route(from: start, toFeatures: targets, avoiding: avoid)
                    }
                    guard let departure = request.departure else { return route }
                    if let (line, at) = timed.firstClosed(on: route, departure: departure, metresPerSecond: speed / 3.6, graph: network.graph) {
                        // Closed when the walk gets there: searched again without it.
                        closedLines.append(line)
                        closedPaths.append(timed.closedPath(line, reachedAt: at))
                        avoid = Router.Avoid(polygons: areas?.polygons, factor: nil, closed: timed.edgeSet(closedLines, nodeCount: network.graph.nodeCount))
                        continue
                    }
                    if let (k, closed) = TimedPaths.closedPlace(arrivedAtBy: route, targets: targets, places: places, departure: departure) {
                        // The place is closed on arrival: to the nearest of the others.
                        closedPaths.append(closed)
                        targets.remove(at: k)
                        places.remove(at: k)
                        guard !targets.isEmpty else { throw .noRoute(reason: "every place is closed when the walk would arrive") }
                        continue
                    }
                    return route
                }
                throw .noRoute(reason: "no way through paths open when the walk reaches them was found in \(TimedPaths.maxRounds) searches")
            }
            var answer = RouteAnswer(route: route, network: network.layerName, profile: request.profile, speedKmh: speed,
                                     forbiddenEdges: request.profile.avoidsSteps ? network.steps.count : 0)
            answer.departure = request.departure
            answer.closedPaths = closedPaths
            if request.departure != nil { answer.unreadableHours = network.timed.unreadable + request.places.compactMap(\.problem) }
            return answer
        } catch {
            if case .tooMuchWork = error, deadline.hasPassed { throw .deadlineExceeded(seconds: deadline.seconds) }
            throw .route(error)
        }
    }
}

extension Router.Avoid {
    /// The areas a walk keeps out of (AVOID), indexed; nil when there are none.
    static func areas(_ polygons: [Geometry]) throws(EngineError) -> Router.Avoid? {
        guard !polygons.isEmpty else { return nil }
        do {
            return Router.Avoid(polygons: try PolygonIndex(geometries: polygons), factor: nil)
        } catch {
            // Loaded layers hold finite coordinates only; this is the index's own defence.
            throw .invalidArgument(parameter: "avoid", message: "\(error)")
        }
    }
}

extension EngineLimits {
    /// A walking speed as asked (nil: the profile's), checked against the allowed range.
    func speed(_ kmh: Double?, profile: WalkingProfile) throws(EngineError) -> Double {
        let speed = kmh ?? profile.kmh
        guard speedsKmh.contains(speed) else {
            throw .invalidArgument(parameter: "speed", message: "must be between \(speedsKmh.lowerBound) and \(speedsKmh.upperBound) km/h, got \(speed)")
        }
        return speed
    }

    /// A snap radius as asked (nil: the default), checked: more than 0, at most the largest.
    func snapRadius(_ metres: Double?) throws(EngineError) -> Double {
        let snap = metres ?? defaultSnapMetres
        guard snap > 0 && snap <= maxSnapMetres else {
            throw .invalidArgument(parameter: "max_snap_m", message: "must be more than 0 and at most \(Rounding.wholeMetres(maxSnapMetres)) metres, got \(snap)")
        }
        return snap
    }
}

extension Snapshot {
    /// The given network, else the default one.
    func resolve(_ network: Network?) throws(EngineError) -> Network {
        if let network { return network }
        return try self.network(nil)
    }
}

// MARK: - The festival schedule

/// One event of a plan: where and when.
public struct ScheduleEvent: Sendable {
    public var name: String
    public var place: RoutePlace
    public var start: UTCTime
    public var end: UTCTime

    public init(name: String, place: RoutePlace, start: UTCTime, end: UTCTime) {
        self.name = name
        self.place = place
        self.start = start
        self.end = end
    }
}

/// Whether a plan leaves enough time to walk from each event to the next.
public struct ScheduleCheck: Sendable {
    public struct Leg: Sendable {
        public let from: String
        public let to: String
        public let walk: RouteAnswer
        /// Seconds between the end of one event and the start of the next.
        public let gapSeconds: Double
        /// The gap less the walk; negative when the walk does not fit.
        public var slackSeconds: Double { gapSeconds - walk.route.seconds }
        public var enoughTime: Bool { slackSeconds >= 0 }
    }

    public let network: String
    public let speedKmh: Double
    public let legs: [Leg]
    public var feasible: Bool { legs.allSatisfy(\.enoughTime) }
}

extension Snapshot {
    /// Plans of 2 to 20 events in time order; each leg walks from one event's place to the
    /// next's. A leg's error says which leg (`EngineError.leg`). The legs share `deadline`:
    /// 19 legs of a 5 s search each would otherwise be 95 s of work for one request.
    public func checkSchedule(_ events: [ScheduleEvent], on network: Network? = nil, speedKmh: Double = 5,
                              deadline: Deadline = .none) throws(EngineError) -> ScheduleCheck {
        guard (2...20).contains(events.count) else {
            throw .invalidArgument(parameter: "events", message: "a plan has 2 to 20 events, got \(events.count)")
        }
        for (i, event) in events.enumerated() {
            guard event.start <= event.end else { throw .invalidArgument(parameter: "events[\(i)]", message: "ends before it starts") }
            if i > 0, event.start < events[i - 1].end {
                throw .invalidArgument(parameter: "events[\(i)]", message: "starts before the event before it ends: list the events in time order")
            }
        }
        let network = try resolve(network)
        var legs: [ScheduleCheck.Leg] = []
        for (i, (a, b)) in zip(events, events.dropFirst()).enumerated() {
            do {
                // At the time the walk starts, so that paths closed then are kept off.
                let walk = try route(RouteRequest(from: a.place, to: b.place, speedKmh: speedKmh, departure: Date(timeIntervalSince1970: Double(a.end.seconds))),
                                     on: network, deadline: deadline)
                legs.append(.init(from: a.name, to: b.name, walk: walk, gapSeconds: Double(b.start.seconds - a.end.seconds)))
            } catch {
                throw .leg(index: i, from: a.name, to: b.name, error)
            }
        }
        return ScheduleCheck(network: network.layerName, speedKmh: speedKmh, legs: legs)
    }
}

// MARK: - OSM files

extension Network {
    /// A network read from an OpenStreetMap file (.osm.pbf, .osm, .osm.gz) with an OSM
    /// profile's highway filter, for routes over data that is not in the store.
    public static func fromOSM(path: String, profile: OSMProfile) throws(EngineError) -> Network {
        do {
            return try Network(layerName: path, graph: Graph.fromOSM(try OSMReader.read(path: path), profile: profile))
        } catch {
            throw .store("\(error)")
        }
    }
}

public typealias OSMProfile = Routing.OSMProfile
