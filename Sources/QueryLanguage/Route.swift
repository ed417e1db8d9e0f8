// ROUTE: how do I get there, walking along a line layer (docs/QUERY_LANGUAGE.md, "ROUTE"). The
// statement's syntax, parsing, planning and running, in one place; the search itself is the
// engine's (`Snapshot.route`, Engine/Routes.swift).

import Engine
import Foundation
import Geometry
import Support

/// `ROUTE FROM target [THROUGH stop, … IN BEST ORDER] [TO target] ON network [AVOID area]
/// [SPEED n KM/H] [PROFILE name]` (the clauses after ON in any order, each once). TO may be left
/// out only after THROUGH: the trip then comes back to its start.
struct RouteStatement: Sendable, Equatable {
    enum Target: Sendable, Equatable {
        case point(PointLiteral)
        case features(Selection)
    }
    /// What AVOID keeps the route out of: a polygon layer's features, or what a walk reaches.
    enum Avoid: Sendable, Equatable {
        case features(Selection)
        case reach(IsochroneRequest.Limit, from: PointLiteral, position: SourcePosition)
    }
    var from: Target
    /// nil: back to the start (a round trip through `through`).
    var to: Target?
    /// THROUGH's stops, visited in the shortest order (a trip); each point, or every feature
    /// of a parenthesised selection.
    var through: [Target] = []
    var throughPosition: SourcePosition?
    var network: Name
    var avoid: Avoid?
    var speedKmh: Double?
    /// `PROFILE wheelchair`: checked against the profiles by the planner.
    var profile: Name?
    /// `AT '2026-11-28 13:55'`: when the walk starts (paths with opening hours).
    var departure: Date?
    var fromPosition: SourcePosition
    var toPosition: SourcePosition
}

extension Parser {
    mutating func route() throws(QueryError) -> RouteStatement {
        try expect("FROM", "after ROUTE")
        let fromPosition = tokens[index].position
        let from = try routeTarget()
        var through: [RouteStatement.Target] = []
        var throughPosition: SourcePosition?
        if isKeyword("THROUGH") {
            throughPosition = tokens[index].position
            index += 1
            repeat {
                if isKeyword("POINT") { through.append(.point(try point())); continue }
                if case .parameter = tokens[index].kind { through.append(.point(try point())); continue }
                // Parenthesised, so that the selection's WHERE ends where the stops do.
                through.append(.features(try selection(parenthesised: true, what: "THROUGH (layer WHERE …)", noun: "stops")))
            } while accept(symbol: ",")
            guard accept("IN") else {
                throw error(expected: "IN BEST ORDER after THROUGH's stops", hint: "a route through stops visits them in the shortest order: … THROUGH (pens WHERE …) IN BEST ORDER TO …")
            }
            try expect("BEST", "after IN (THROUGH … IN BEST ORDER)")
            try expect("ORDER", "after IN BEST")
        }
        var to: RouteStatement.Target?
        var hasTo = true
        if through.isEmpty { try expect("TO", "after the start (ROUTE FROM … TO …)") } else { hasTo = accept("TO") }
        let toPosition = tokens[index].position
        if hasTo { to = try routeTarget() }
        try expect("ON", to == nil ? "and a network layer after the stops (… IN BEST ORDER [TO …] ON paths)" : "and a network layer after the destination (… ON paths)")
        var statement = RouteStatement(from: from, to: to, through: through, throughPosition: throughPosition,
                                       network: try name("a network (line layer) after ON"), fromPosition: fromPosition, toPosition: toPosition)
        try clauses(Parser.routeClauses, of: "ROUTE") { (parser, keyword) throws(QueryError) in
            switch keyword {
            case "AVOID":
                if parser.isKeyword("REACH") {
                    let at = parser.tokens[parser.index].position
                    parser.index += 1
                    let limit = try parser.reachLimit()
                    try parser.expect("FROM", "after AVOID REACH and its time or distance")
                    statement.avoid = .reach(limit, from: try parser.point(), position: at)
                } else {
                    statement.avoid = .features(try parser.selection(parenthesised: false))
                }
            case "SPEED":
                let (speed, position) = try parser.number("a walking speed after SPEED")
                guard speed > 0, speed <= 100 else { throw parser.invalid("the speed must be more than 0 and at most 100 km/h", at: position) }
                try parser.expectUnit(["KM/H"], after: position, what: "km/h")
                statement.speedKmh = speed
            case "AT":
                statement.departure = try parser.departure()
            default:  // PROFILE
                statement.profile = try parser.name("a profile after PROFILE (foot, wheelchair or any)")
            }
        }
        return statement
    }

    /// `AT 'time'` or `AT $n` (text): ISO 8601 with an offset, or a local time in Prague.
    mutating func departure() throws(QueryError) -> Date {
        let text: String, position: SourcePosition
        switch tokens[index].kind {
        case .string(let string):
            position = tokens[index].position
            index += 1
            text = string
        case .parameter(let n):
            let (value, at) = try boundValue(n, "the departure time")
            position = at
            switch value {
            case nil: return Date(timeIntervalSince1970: 0)
            case .text(let string)?: text = string
            case let other?: throw wrongKind(n, other, expected: "text (a time, e.g. '2026-11-28 13:55')", at: at)
            }
        default:
            throw error(expected: "a time after AT, e.g. AT '2026-11-28 13:55'")
        }
        guard let date = RouteRequest.departure(parsing: text) else {
            throw invalid("\(Quote.input(text)) is not a time: write '2026-11-28 13:55' (Prague) or '2026-11-28T12:55:00Z'", at: position)
        }
        return date
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
    /// THROUGH … IN BEST ORDER: the trip instead of the route.
    var trip: TripPlan?
    var position: SourcePosition
    var fromPosition: SourcePosition
    var toPosition: SourcePosition
    var avoidPosition: SourcePosition?
}

/// A trip's stops: the start first, then THROUGH's, then the end when there is one, each with
/// the name it is shown by.
struct TripPlan: Sendable {
    var request: TripRequest
    var names: [String]
}

/// A trip as the language answers it: the engine's answer and the names of its stops, in the
/// request's order.
struct TripResult: Sendable {
    var answer: TripAnswer
    var names: [String]
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
        var profile = WalkingProfile.foot
        if let name = route.profile {
            guard let known = WalkingProfile(rawValue: name.text.lowercased()) else {
                var hint = "profiles: \(WalkingProfile.names)"
                if let suggestion = Suggestion.closest(to: name.text, in: WalkingProfile.allCases.map(\.rawValue)) { hint = "did you mean '\(suggestion)'? " + hint }
                throw Planner.error(.invalid, "unknown_profile", "unknown profile \(Quote.input(name.text))", at: name.position, hint: hint)
            }
            profile = known
        }
        func place(_ target: RouteStatement.Target) throws(QueryError) -> RoutePlace {
            switch target {
            case .point(let p): .point(Point(lon: p.lon, lat: p.lat))
            case .features(let selection): .features(try select(selection))
            }
        }
        let from = try place(route.from)
        var avoid: [Geometry] = []
        var avoidPosition: SourcePosition?
        switch route.avoid {
        case .features(let selection)?:
            let layer = try layerInMemory(selection.layer)
            guard layer.family == .polygons else {
                throw Planner.error(.invalid, "unsupported_geometry", "AVOID needs a polygon layer; '\(layer.name)' holds \(layer.family.rawValue)", at: selection.layer.position)
            }
            avoid = try select(selection)
            avoidPosition = selection.layer.position
        case .reach(let limit, let start, let position)?:
            // The area the walk reaches, as the isochrone draws it, on the route's own network.
            let request = IsochroneRequest(from: start.point, limit: limit, profile: profile, speedKmh: route.speedKmh)
            do {
                avoid = try snapshot.isochrone(request, on: network, deadline: deadline).bands.map(\.area)
            } catch {
                throw Runner.engineError(error, at: position)
            }
            avoidPosition = position
        case nil:
            break
        }
        var plan = RoutePlan(snapshot: snapshot, network: network,
                             request: RouteRequest(from: from, to: .point(Point(lon: 0, lat: 0)), profile: profile, speedKmh: route.speedKmh, avoid: avoid,
                                                   departure: route.departure),
                             position: route.network.position, fromPosition: route.fromPosition, toPosition: route.toPosition, avoidPosition: avoidPosition)
        if let to = route.to, route.through.isEmpty {
            plan.request.to = try place(to)
            if case .features(let selection) = to { plan.request.places = try places(selection).places }
            return plan
        }
        plan.trip = try planTrip(route, profile: profile)
        return plan
    }

    /// The selection's features as places: their names and opening hours, in order.
    func places(_ selection: Selection) throws(QueryError) -> (layer: Layer, indices: [Int], places: [PlaceHours]) {
        let (layer, indices) = try selectIndices(selection)
        let places = indices.map { i in
            let properties = layer.properties[i]
            let name = properties["name"]?.stringValue ?? properties["nazev"]?.stringValue ?? "\(layer.name) #\(layer.fids[i])"
            return PlaceHours(name: name, openingHours: properties["opening_hours"]?.stringValue)
        }
        // The planner's `select` keeps features with a geometry only; so do these.
        let kept = indices.indices.filter { layer.geometries[indices[$0]] != nil }
        return (layer, kept.map { indices[$0] }, kept.map { places[$0] })
    }

    /// THROUGH's stops as points: the start and the end must each be one place; every feature of
    /// a stop's selection is a stop, at its representative point (`RoutePlace.start`).
    func planTrip(_ route: RouteStatement, profile: WalkingProfile) throws(QueryError) -> TripPlan {
        let throughPosition = route.throughPosition ?? route.fromPosition
        if route.avoid != nil {
            throw Planner.error(.invalid, "not_supported", "AVOID does not combine with THROUGH: a trip's walking distances come from the hierarchy, which cannot take per-query weights",
                                at: throughPosition, hint: "route each leg with ROUTE … TO … AVOID …")
        }
        var points: [Point] = [], names: [String] = [], places: [PlaceHours] = []
        func add(_ target: RouteStatement.Target, one: Bool, at position: SourcePosition, what: String) throws(QueryError) {
            switch target {
            case .point(let p):
                points.append(p.point)
                names.append(String(format: "POINT(%.6f %.6f)", p.lon, p.lat))
                places.append(PlaceHours(name: names[names.count - 1], hours: nil))
            case .features(let selection):
                let (layer, indices, found) = try self.places(selection)
                if indices.isEmpty {
                    throw Planner.error(.impossible, "NoTarget", "\(what) matched no feature of '\(layer.name)'", at: position)
                }
                if one && indices.count > 1 {
                    throw Planner.error(.invalid, "ambiguous_start", "\(indices.count) features of '\(layer.name)' match \(what); it must be one place", at: position,
                                        hint: "narrow it with WHERE, e.g. WHERE name = '…'")
                }
                for (i, place) in zip(indices, found) {
                    guard let geometry = layer.geometries[i], let point = RoutePlace.start(of: geometry) else { continue }
                    points.append(point)
                    names.append(place.name)
                    places.append(place)
                }
            }
        }
        try add(route.from, one: true, at: route.fromPosition, what: "the start")
        for stop in route.through { try add(stop, one: false, at: throughPosition, what: "THROUGH's stops") }
        if let to = route.to { try add(to, one: true, at: route.toPosition, what: "the end") }
        let shape = TripShape(roundTrip: route.to == nil, fixedFirst: true, fixedLast: route.to != nil)
        var request = TripRequest(points: points, shape: shape, profile: profile, speedKmh: route.speedKmh)
        request.departure = route.departure
        request.places = places
        request.names = names.map { $0.hasPrefix("POINT(") ? $0 : "'\($0)'" }
        return TripPlan(request: request, names: names)
    }
}

extension Runner {
    func route(_ plan: RoutePlan) throws(QueryError) -> QueryResult {
        do {
            if let trip = plan.trip {
                return QueryResult(body: .trip(TripResult(answer: try plan.snapshot.trip(trip.request, on: plan.network, deadline: deadline), names: trip.names)))
            }
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
