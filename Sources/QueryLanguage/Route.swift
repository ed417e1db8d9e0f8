// ROUTE: how do I get there, walking along a line layer (docs/QUERY_LANGUAGE.md, "ROUTE"). The
// statement's syntax, parsing, planning and running, in one place; the search itself is the
// engine's (`Snapshot.route`, Engine/Routes.swift).

import Engine
import Geometry

/// `ROUTE FROM target TO target ON network [AVOID layer [WHERE …]] [SPEED n KM/H] [PROFILE name]`
/// (the clauses after ON in any order, each once)
struct RouteStatement: Sendable, Equatable {
    enum Target: Sendable, Equatable {
        case point(PointLiteral)
        case features(Selection)
    }
    var from: Target
    var to: Target
    var network: Name
    var avoid: Selection?
    var speedKmh: Double?
    /// `PROFILE wheelchair`: checked against the profiles by the planner.
    var profile: Name?
    var fromPosition: SourcePosition
    var toPosition: SourcePosition
}

extension Parser {
    mutating func route() throws(QueryError) -> RouteStatement {
        try expect("FROM", "after ROUTE")
        let fromPosition = tokens[index].position
        let from = try routeTarget()
        try expect("TO", "after the start (ROUTE FROM … TO …)")
        let toPosition = tokens[index].position
        let to = try routeTarget()
        try expect("ON", "and a network layer after the destination (… ON paths)")
        var statement = RouteStatement(from: from, to: to, network: try name("a network (line layer) after ON"),
                                       fromPosition: fromPosition, toPosition: toPosition)
        try clauses(Parser.routeClauses, of: "ROUTE") { (parser, keyword) throws(QueryError) in
            switch keyword {
            case "AVOID":
                statement.avoid = try parser.selection(parenthesised: false)
            case "SPEED":
                let (speed, position) = try parser.number("a walking speed after SPEED")
                guard speed > 0, speed <= 100 else { throw parser.invalid("the speed must be more than 0 and at most 100 km/h", at: position) }
                try parser.expectUnit(["KM/H"], after: position, what: "km/h")
                statement.speedKmh = speed
            default:  // PROFILE
                statement.profile = try parser.name("a profile after PROFILE (foot, wheelchair or any)")
            }
        }
        return statement
    }

    mutating func routeTarget() throws(QueryError) -> RouteStatement.Target {
        if isKeyword("POINT") { return .point(try point()) }
        if case .parameter = tokens[index].kind { return .point(try point()) }
        // `pens LINKED TO (animals WHERE …) [WHERE …]` or `pens WHERE … LINKED TO (…)`.
        var selection = Selection(layer: try name("a layer name"))
        while true {
            if selection.filter == nil && accept("WHERE") {
                selection.filter = try expression()
            } else if selection.linked.isEmpty && isKeyword("LINKED") {
                index += 1
                try expect("TO", "after LINKED")
                selection.linked = [try self.selection(parenthesised: true, what: "LINKED TO (layer WHERE …)", noun: "linked selection")]
            } else {
                return .features(selection)
            }
        }
    }
}

struct RoutePlan: Sendable {
    var snapshot: Snapshot
    var network: Network
    var request: RouteRequest
    var position: SourcePosition
    var fromPosition: SourcePosition
    var toPosition: SourcePosition
    var avoidPosition: SourcePosition?
}

extension Planner {
    func planRoute(_ route: RouteStatement) throws(QueryError) -> RoutePlan {
        let network: Network
        do {
            network = try snapshot.network(route.network.text)
        } catch {
            if case .unknownLayer = error { _ = try layer(route.network) }
            throw Planner.error(.invalid, "not_a_network", "\(Quote.input(route.network.text)) is not a network: ROUTE walks along a line layer",
                                at: route.network.position, hint: networkHint)
        }
        func place(_ target: RouteStatement.Target) throws(QueryError) -> RoutePlace {
            switch target {
            case .point(let p): .point(Point(lon: p.lon, lat: p.lat))
            case .features(let selection): .features(try select(selection))
            }
        }
        let from = try place(route.from), to = try place(route.to)
        var avoid: [Geometry] = []
        if let selection = route.avoid {
            let layer = try layerInMemory(selection.layer)
            guard layer.family == .polygons else {
                throw Planner.error(.invalid, "unsupported_geometry", "AVOID needs a polygon layer; '\(layer.name)' holds \(layer.family.rawValue)", at: selection.layer.position)
            }
            avoid = try select(selection)
        }
        var profile = WalkingProfile.foot
        if let name = route.profile {
            guard let known = WalkingProfile(rawValue: name.text.lowercased()) else {
                var hint = "profiles: \(WalkingProfile.names)"
                if let suggestion = Suggestion.closest(to: name.text, in: WalkingProfile.allCases.map(\.rawValue)) { hint = "did you mean '\(suggestion)'? " + hint }
                throw Planner.error(.invalid, "unknown_profile", "unknown profile \(Quote.input(name.text))", at: name.position, hint: hint)
            }
            profile = known
        }
        return RoutePlan(snapshot: snapshot, network: network, request: RouteRequest(from: from, to: to, profile: profile, speedKmh: route.speedKmh, avoid: avoid),
                         position: route.network.position, fromPosition: route.fromPosition, toPosition: route.toPosition,
                         avoidPosition: route.avoid?.layer.position)
    }
}

extension Runner {
    func route(_ plan: RoutePlan) throws(QueryError) -> QueryResult {
        do {
            return QueryResult(body: .route(try plan.snapshot.route(plan.request, on: plan.network, deadline: deadline)))
        } catch {
            // Point the error at the end it is about.
            var position = plan.position
            switch error {
            case .invalidArgument(let parameter, _) where parameter == "from": position = plan.fromPosition
            case .invalidArgument(let parameter, _) where parameter == "to": position = plan.toPosition
            case .route(let route) where route.waypoint != nil: position = route.waypoint == 0 ? plan.fromPosition : plan.toPosition
            case .tooManyRows: position = plan.avoidPosition ?? plan.toPosition
            default: break
            }
            var mapped = Runner.engineError(error, at: position)
            if case .invalidArgument(let parameter, _) = error, parameter == "from" {
                mapped = QueryError(kind: mapped.kind, code: "ambiguous_start", message: mapped.message, line: position.line, column: position.column,
                                    length: position.length, hint: "narrow it with WHERE, e.g. WHERE name = '…'")
            }
            throw mapped
        }
    }
}
