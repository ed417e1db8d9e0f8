// Where did I walk: the map-matching operation. A trace (fixes with optional times and
// accuracies) is matched to the network's paths by the router's hidden Markov model
// (Routing/Matching.swift); each matching comes back with its path, its length and the names
// of the ways walked.

import Geometry
import Routing
import Support

public typealias TraceFix = Routing.TraceFix
public typealias MatchOptions = Routing.MatchOptions

public struct MatchRequest: Sendable {
    public var fixes: [TraceFix]
    public var profile: WalkingProfile
    public var options: MatchOptions

    public init(fixes: [TraceFix], profile: WalkingProfile = .foot, options: MatchOptions = MatchOptions()) {
        self.fixes = fixes
        self.profile = profile
        self.options = options
    }
}

public struct MatchAnswer: Sendable {
    public let result: MatchResult
    /// Per matching, the names of the ways walked, in order, each once where it repeats.
    public let wayNames: [[String]]
    public let network: String
    public let profile: WalkingProfile
    public let speedKmh: Double

    public var matchings: [Matching] { result.matchings }
    /// Metres walked over every matching.
    public var metres: Double { result.matchings.reduce(0) { $0 + $1.metres } }
}

extension Snapshot {
    /// The paths a trace of 2 to `maxTracePoints` fixes walked.
    public func match(_ request: MatchRequest, on network: Network? = nil, deadline: Deadline = .none) throws(EngineError) -> MatchAnswer {
        try deadline.check()
        let count = request.fixes.count
        guard count >= 2 else { throw .invalidArgument(parameter: "coordinates", message: "a trace needs at least 2 points, got \(count)") }
        guard count <= limits.maxTracePoints else {
            throw .route(.tooManyPoints(what: "points in a trace", count: count, limit: limits.maxTracePoints))
        }
        for (i, fix) in request.fixes.enumerated() {
            try Check.position(fix.point, parameter: "coordinate \(i)")
            if let time = fix.time, !time.isFinite { throw .invalidArgument(parameter: "timestamps", message: "coordinate \(i): not a number") }
            if i > 0, let time = fix.time, let before = request.fixes[i - 1].time, time < before {
                throw .invalidArgument(parameter: "timestamps", message: "coordinate \(i): \(time) is earlier than the one before it (\(before)); times must not go back")
            }
            if let accuracy = fix.accuracy, !(accuracy.isFinite && accuracy >= 0 && accuracy <= limits.maxSnapMetres) {
                throw .invalidArgument(parameter: "radiuses", message: "coordinate \(i): must be 0 to \(Rounding.wholeMetres(limits.maxSnapMetres)) metres, got \(accuracy)")
            }
        }
        let network = try resolve(network)
        let limits = self.limits
        do {
            let result = try network.withRouter(profile: request.profile, metresPerSecond: request.profile.kmh / 3.6, maxSnapMetres: limits.defaultSnapMetres,
                                                 deadline: deadline) { router throws(RouteError) in
                router.maxSettled = limits.maxSettledNodes
                router.maxSeconds = min(limits.maxRouteSeconds, deadline.remainingSeconds)
                return try router.match(request.fixes, options: request.options)
            }
            let names = result.matchings.map { matching in
                var names: [String] = []
                for (u, v) in zip(matching.nodes, matching.nodes.dropFirst()) {
                    let name = network.names.name(u, v)
                    if !name.isEmpty && names.last != name { names.append(name) }
                }
                return names
            }
            return MatchAnswer(result: result, wayNames: names, network: network.layerName, profile: request.profile, speedKmh: request.profile.kmh)
        } catch {
            if case .tooMuchWork = error, deadline.hasPassed { throw .deadlineExceeded(seconds: deadline.seconds) }
            throw .route(error)
        }
    }
}
