// What can I reach in 10 minutes: the isochrone operation. The caller says where, how long or
// how far, on which profile and at what speed, and which areas to keep out of; the network's
// router searches once and draws each limit's polygon (Routing/Isochrone.swift says how).

import Foundation
import Geometry
import Routing
import Support

public struct IsochroneRequest: Sendable {
    /// How far to reach: seconds of walking at the speed, or metres.
    public enum Limit: Sendable, Equatable {
        case seconds(Double)
        case metres(Double)
    }

    public var from: Point
    public var limit: Limit
    /// Equal bands of the limit: 3 of 15 minutes are 5, 10 and 15 minutes (GraphHopper's
    /// `buckets`).
    public var buckets: Int
    public var profile: WalkingProfile
    /// km/h; nil: the profile's.
    public var speedKmh: Double?
    /// How far the start may lie from the network; nil: the default.
    public var maxSnapMetres: Double?
    /// Polygons the walk never enters.
    public var avoid: [Geometry]
    /// How far the polygon reaches beside a reached path, metres: its boundary tolerance.
    public var bufferMetres: Double

    public static let defaultBufferMetres = 15.0

    public init(from: Point, limit: Limit, buckets: Int = 1, profile: WalkingProfile = .foot, speedKmh: Double? = nil,
                maxSnapMetres: Double? = nil, avoid: [Geometry] = [], bufferMetres: Double = IsochroneRequest.defaultBufferMetres) {
        self.from = from
        self.limit = limit
        self.buckets = buckets
        self.profile = profile
        self.speedKmh = speedKmh
        self.maxSnapMetres = maxSnapMetres
        self.avoid = avoid
        self.bufferMetres = bufferMetres
    }
}

public struct IsochroneAnswer: Sendable {
    public struct Band: Sendable {
        /// The band's limit, in seconds at the answer's speed and in metres walked.
        public let seconds: Double
        public let metres: Double
        /// The area reached within it (polygon or multipolygon, lon/lat).
        public let area: Geometry
    }

    /// Where the start joined the network.
    public let start: Waypoint
    /// Smallest first.
    public let bands: [Band]
    /// Network nodes within the largest limit.
    public let reachedNodes: Int
    public let network: String
    public let profile: WalkingProfile
    public let speedKmh: Double
}

extension Snapshot {
    /// The areas reachable from a point within each band of the limit.
    public func isochrone(_ request: IsochroneRequest, on network: Network? = nil, deadline: Deadline = .none) throws(EngineError) -> IsochroneAnswer {
        try deadline.check()
        var network = try resolve(network)
        if request.profile == .any, let anyVariant = network.anyVariant { network = anyVariant }
        try Check.position(request.from, parameter: "point")
        let speed = try limits.speed(request.speedKmh, profile: request.profile)
        let metresPerSecond = speed / 3.6
        let largest: Double
        switch request.limit {
        case .seconds(let s):
            guard s.isFinite, s > 0, s <= limits.maxIsochroneSeconds else {
                throw .invalidArgument(parameter: "time_limit", message: "must be more than 0 and at most \(Int(limits.maxIsochroneSeconds)) seconds, got \(s)")
            }
            largest = s * metresPerSecond
        case .metres(let m):
            guard m.isFinite, m > 0, m <= limits.maxIsochroneMetres else {
                throw .invalidArgument(parameter: "distance_limit", message: "must be more than 0 and at most \(Rounding.wholeMetres(limits.maxIsochroneMetres)) metres, got \(m)")
            }
            largest = m
        }
        guard (1...20).contains(request.buckets) else {
            throw .invalidArgument(parameter: "buckets", message: "must be 1 to 20, got \(request.buckets)")
        }
        guard request.bufferMetres.isFinite, (1...200).contains(request.bufferMetres) else {
            throw .invalidArgument(parameter: "buffer", message: "must be 1 to 200 metres, got \(request.bufferMetres)")
        }
        guard request.avoid.count <= limits.maxRows else { throw .tooManyRows(count: request.avoid.count, limit: limits.maxRows) }
        let snap = try limits.snapRadius(request.maxSnapMetres)
        let avoid = try Router.Avoid.areas(request.avoid)
        let limits = self.limits
        let reach: Reach
        do {
            reach = try network.withRouter(profile: request.profile, metresPerSecond: metresPerSecond, maxSnapMetres: snap, deadline: deadline) { router throws(RouteError) in
                router.maxSettled = limits.maxSettledNodes
                router.maxSeconds = min(limits.maxRouteSeconds, deadline.remainingSeconds)
                return try router.reach(from: request.from, within: largest, avoiding: avoid)
            }
        } catch {
            if case .tooMuchWork = error, deadline.hasPassed { throw .deadlineExceeded(seconds: deadline.seconds) }
            throw .route(error)
        }
        var bands: [IsochroneAnswer.Band] = []
        for k in 1...request.buckets {
            try deadline.check()
            let metres = largest * Double(k) / Double(request.buckets)
            do {
                let area = try reach.polygon(within: metres, graph: network.graph, bufferMetres: request.bufferMetres)
                bands.append(.init(seconds: metres / metresPerSecond, metres: metres, area: area))
            } catch {
                throw .store("the isochrone's polygon could not be drawn: \(error)")
            }
        }
        return IsochroneAnswer(start: reach.start, bands: bands, reachedNodes: reach.nodes.count, network: network.layerName,
                               profile: request.profile, speedKmh: speed)
    }
}

extension Snapshot {
    /// The features of `layer` that a walk on foot from `from` reaches within `limit`, over the
    /// default network (`FIND … WITHIN REACH 15 min FROM POINT(…)`): each feature joins the
    /// network where a route to it would end (its point, or its box's centre, snapped to the
    /// nearest path within the default radius), and is reached when the walk there fits. Each
    /// match's metres are the walk's, as a route's would be.
    public func withinReach(_ layer: Layer, limit: IsochroneRequest.Limit, from: Point, filter: FeatureFilter? = nil,
                            deadline: Deadline = .none) throws(EngineError) -> [Match] {
        try deadline.check()
        try Check.position(from, parameter: "point")
        let network = try resolve(nil)
        let metresPerSecond = WalkingProfile.foot.kmh / 3.6
        let bound: Double
        switch limit {
        case .seconds(let s):
            guard s.isFinite, s >= 0, s <= limits.maxIsochroneSeconds else {
                throw .invalidArgument(parameter: "REACH", message: "must be 0 to \(Int(limits.maxIsochroneSeconds / 60)) min, got \(s) s")
            }
            bound = s * metresPerSecond
        case .metres(let m):
            guard m.isFinite, m >= 0, m <= limits.maxIsochroneMetres else {
                throw .invalidArgument(parameter: "REACH", message: "must be 0 to \(Rounding.wholeMetres(limits.maxIsochroneMetres)) m, got \(m) m")
            }
            bound = m
        }
        let limits = self.limits
        do {
            let (reach, joins) = try network.withRouter(profile: .foot, metresPerSecond: metresPerSecond, maxSnapMetres: limits.defaultSnapMetres,
                                                        deadline: deadline) { router throws(RouteError) -> (Reach, [(Int, Waypoint)]) in
                router.maxSettled = limits.maxSettledNodes
                router.maxSeconds = min(limits.maxRouteSeconds, deadline.remainingSeconds)
                let reach = try router.reach(from: from, within: bound)
                var joins: [(Int, Waypoint)] = []
                for (n, i) in layer.indices.enumerated() where filter?(i) ?? true {
                    if n & 4095 == 4095, deadline.hasPassed { throw .tooMuchWork(settled: reach.nodes.count) }
                    guard let geometry = layer.geometries[i], let point = RoutePlace.start(of: geometry),
                          let joined = router.nearest(to: point, count: 1, maxMetres: limits.defaultSnapMetres).first else { continue }
                    joins.append((i, joined))
                }
                return (reach, joins)
            }
            let costs = reach.nodeCosts()
            return joins.compactMap { i, joined in
                reach.cost(to: joined, costs: costs, graph: network.graph).map { Match(index: i, fid: layer.fids[i], metres: $0) }
            }.sorted { ($0.metres ?? 0, $0.index) < ($1.metres ?? 0, $1.index) }
        } catch {
            if case .tooMuchWork = error, deadline.hasPassed { throw .deadlineExceeded(seconds: deadline.seconds) }
            throw .route(error)
        }
    }
}
