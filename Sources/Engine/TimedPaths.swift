// Paths with opening hours: a line of a network may carry OSM's `opening_hours` (a pavilion's
// passage that closes at 18:00, a festival's side gate that opens at 14:00). A route with a
// departure time keeps off such a path when it is closed at the moment the walk reaches it.
//
// The search itself stays time-independent (the hierarchy and A* are what they were): the route
// is found without the closures, the timed paths it uses are checked at the time the walk reaches
// each one, and a path found closed then is taken out and the route searched again, until the
// route uses only open paths (at most `maxRounds` times). A path that opens while the walker is
// on the way is taken when the walk reaches it open; a walker does not wait at a closed gate.
// Tables (and so a trip's order) take the paths closed at the departure itself; a trip's legs are
// then walked at their own times. Places have hours too: a route to the nearest of some features
// goes to the nearest one open when the walk arrives (`closedPlace`).

import Foundation
import Geometry
import Routing

public typealias LocalTime = Routing.LocalTime

/// A timed path (or a place) a route kept off: closed when the walk would have reached it.
public struct ClosedPath: Sendable, Equatable {
    /// The line's `name`, else `fid N`.
    public let name: String
    public let openingHours: String
    /// When the walk would have reached it.
    public let reachedAt: Date
    /// When it opens next, within a week; nil when it does not.
    public let opensAt: Date?
}

extension RouteRequest {
    /// A departure as a request writes it: ISO 8601 with an offset or `Z`, or a local time in
    /// Prague (`2026-11-28 13:55`); nil when it is neither.
    public static func departure(parsing text: String) -> Date? { TimedPaths.departure(text) }
    /// The zone opening hours are read in, and a departure without an offset.
    public static var openingHoursZone: TimeZone { TimedPaths.zone }
}

/// The timed lines of a network, each with its parsed hours and its edges.
struct TimedPaths: Sendable {
    struct Line: Sendable {
        let name: String
        let hours: OpeningHours
        let edges: [(Int, Int)]
    }

    let lines: [Line]
    /// Edge key (`EdgeNames.key`) → index into `lines`.
    private let byEdge: [UInt64: Int32]
    /// The lines whose `opening_hours` could not be read (`fid N: why`): they are taken as
    /// always open, and a route at a time says so.
    let unreadable: [String]

    /// The zone opening hours are read in: the venues are in Prague (and Andorra, an hour
    /// alike). A departure without an offset is a time in this zone too.
    static let zone = TimeZone(identifier: "Europe/Prague") ?? TimeZone(secondsFromGMT: 3600) ?? .current
    /// Route searches a walk at a time may take before it gives up on finding an open way.
    static let maxRounds = 32

    static let empty = TimedPaths(lines: [], byEdge: [:], unreadable: [])

    private init(lines: [Line], byEdge: [UInt64: Int32], unreadable: [String]) {
        self.lines = lines
        self.byEdge = byEdge
        self.unreadable = unreadable
    }

    init(_ source: Network.Lines, _ lineNodes: [[Int32]]) {
        var lines: [Line] = [], byEdge: [UInt64: Int32] = [:], unreadable: [String] = []
        for (l, text) in source.openingHours.enumerated() where !text.isEmpty {
            let hours: OpeningHours
            do {
                hours = try OpeningHours(parsing: text)
            } catch {
                unreadable.append("fid \(source.fids[l]): \(error)")
                continue
            }
            let nodes = lineNodes[l]
            let edges = zip(nodes, nodes.dropFirst()).filter { $0 != $1 }.map { (Int($0), Int($1)) }
            for (u, v) in edges { byEdge[EdgeNames.key(u, v)] = Int32(lines.count) }
            lines.append(Line(name: source.names[l].isEmpty ? "fid \(source.fids[l])" : source.names[l], hours: hours, edges: edges))
        }
        self.init(lines: lines, byEdge: byEdge, unreadable: unreadable)
    }

    var isEmpty: Bool { lines.isEmpty }

    func line(_ u: Int, _ v: Int) -> Int? { byEdge[EdgeNames.key(u, v)].map(Int.init) }

    /// The edges of every timed line closed at `date` (for tables, which cannot follow a walk's
    /// time), and those lines.
    func closed(at date: Date) -> [Int] {
        let local = LocalTime(date, in: TimedPaths.zone)
        return lines.indices.filter { !lines[$0].hours.isOpen(at: local) }
    }

    /// The first timed line the route reaches while it is closed, with when it reaches it: the
    /// walk enters each edge at the departure plus its metres so far at `metresPerSecond`.
    func firstClosed(on route: Route, departure: Date, metresPerSecond: Double, graph: Graph) -> (line: Int, at: Date)? {
        guard !isEmpty, route.nodes.count >= 2 else { return nil }
        let coordinates = route.geometry.coordinates
        // Metres from the start to the first node: along the first stretch of the line.
        var metres = coordinates.count >= 4
            ? Geodesy.haversine(lon1: coordinates[0], lat1: coordinates[1], lon2: graph.lons[route.nodes[0]], lat2: graph.lats[route.nodes[0]]) : 0
        for (u, v) in zip(route.nodes, route.nodes.dropFirst()) {
            if let l = line(u, v) {
                let at = departure.addingTimeInterval(metres / metresPerSecond)
                if !lines[l].hours.isOpen(at: LocalTime(at, in: TimedPaths.zone)) { return (l, at) }
            }
            metres += Geodesy.haversine(lon1: graph.lons[u], lat1: graph.lats[u], lon2: graph.lons[v], lat2: graph.lats[v])
        }
        return nil
    }

    /// What a route's answer says about a line it kept off.
    func closedPath(_ l: Int, reachedAt: Date) -> ClosedPath {
        let opens = lines[l].hours.nextChange(after: LocalTime(reachedAt, in: TimedPaths.zone), days: 7)
        return ClosedPath(name: lines[l].name, openingHours: lines[l].hours.text, reachedAt: reachedAt, opensAt: opens?.date(in: TimedPaths.zone))
    }

    /// The place a route to features arrives at (the target nearest to where it ends), when it
    /// is closed on arrival: its index among the targets and what the answer says of it.
    static func closedPlace(arrivedAtBy route: Route, targets: [Geometry], places: [PlaceHours], departure: Date) -> (Int, ClosedPath)? {
        guard !places.isEmpty, places.count == targets.count, route.waypoints.count == 2 else { return nil }
        let end = route.waypoints[1].location
        guard let k = targets.indices.min(by: { Geodesy.distance(from: end, to: targets[$0]) < Geodesy.distance(from: end, to: targets[$1]) }),
              let closed = closedPlace(places[k], at: departure.addingTimeInterval(route.seconds)) else { return nil }
        return (k, closed)
    }

    /// A place closed at `arrival`, as an answer names it; nil when open (or without hours).
    static func closedPlace(_ place: PlaceHours, at arrival: Date) -> ClosedPath? {
        guard let hours = place.hours else { return nil }
        let local = LocalTime(arrival, in: zone)
        guard !hours.isOpen(at: local) else { return nil }
        return ClosedPath(name: place.name, openingHours: hours.text, reachedAt: arrival, opensAt: hours.nextChange(after: local, days: 7)?.date(in: zone))
    }

    /// The edges of some lines, as a set the router keeps off.
    func edgeSet(_ closedLines: [Int], nodeCount: Int) -> EdgeSet {
        EdgeSet(pairs: closedLines.flatMap { lines[$0].edges }, nodeCount: nodeCount)
    }

    /// A departure as written: ISO 8601 with an offset or `Z`, or a local time in `zone`
    /// (`YYYY-MM-DD[ T]HH:MM[:SS]`); nil when it is neither.
    static func departure(_ text: String) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        var iso = trimmed.replacingOccurrences(of: " ", with: "T")
        // Minutes without seconds before the offset (`…T13:55Z`, `…T13:55+01:00`) are ISO too.
        if let clock = iso.range(of: #"T\d{2}:\d{2}(?=Z|[+-]\d{2})"#, options: .regularExpression) { iso.insert(contentsOf: ":00", at: clock.upperBound) }
        let formatter = ISO8601DateFormatter()
        for options: ISO8601DateFormatter.Options in [[.withInternetDateTime], [.withInternetDateTime, .withFractionalSeconds]] {
            formatter.formatOptions = options
            if let date = formatter.date(from: iso) { return date }
        }
        let parts = trimmed.split(whereSeparator: { $0 == "T" || $0 == " " })
        guard parts.count == 2 else { return nil }
        let day = parts[0].split(separator: "-").compactMap { Int($0) }, clock = parts[1].split(separator: ":").compactMap { Int($0) }
        guard day.count == 3, (2...3).contains(clock.count), parts[1].split(separator: ":").count == clock.count,
              (1...12).contains(day[1]), (1...31).contains(day[2]), (0...23).contains(clock[0]), (0...59).contains(clock[1]),
              clock.count == 2 || (0...59).contains(clock[2]), (1...9999).contains(day[0]) else { return nil }
        let local = LocalTime(year: day[0], month: day[1], day: day[2], minute: clock[0] * 60 + clock[1])
        return local.date(in: zone).map { $0.addingTimeInterval(Double(clock.count == 3 ? clock[2] : 0)) }
    }
}
