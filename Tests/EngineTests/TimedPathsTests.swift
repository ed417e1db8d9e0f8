@testable import Engine
import Foundation
import Geometry
import Routing
import SQLite
import Support
import TestSupport
import Testing

/// Paths with opening hours, on the zoo's real paths: the demo store with an `opening_hours`
/// column given to the lines the way from the entrance to the gorillas takes (as the zoo would
/// declare a passage's hours). Routes at a time are checked against the router kept off exactly
/// those edges, and the times a walk reaches a path against the metres along the route.
@Suite(.validatesStores) struct TimedPathsTests {
    static let entrance = Point(lon: 14.4109, lat: 50.1167), gorillas = Point(lon: 14.40519, lat: 50.11576)
    static let hours = "Mo-Fr 10:00-16:00; Sa,Su 09:00-18:00"

    /// The store, the fids given hours, and its snapshot.
    static let store: Result<(snapshot: Snapshot, fids: [Int64]), any Error> = Result {
        let path = try Fixtures.temporaryDirectory("timed-paths").appendingPathComponent("timed.gpkg").path
        try DemoFixtureStore.build(at: path)
        let plain = try Snapshot.load(storePath: path)
        let network = try plain.network("paths")
        let route = try plain.route(RouteRequest(from: .point(entrance), to: .point(gorillas)))
        // The lines carrying the middle third of the route's edges.
        let nodes = route.route.nodes
        let middle = Array(zip(nodes, nodes.dropFirst()))[(nodes.count / 3)..<(2 * nodes.count / 3)]
        let layer = try plain.layer("paths")
        var fids: [Int64] = []
        for i in layer.indices {
            guard case .lineString(let line)? = layer.geometries[i] else { continue }
            let c = line.coordinates
            var points = Set<[Double]>()
            for k in stride(from: 0, to: c.count - 1, by: 2) { points.insert([c[k], c[k + 1]]) }
            if middle.contains(where: { u, v in
                points.contains([network.graph.lons[u], network.graph.lats[u]]) && points.contains([network.graph.lons[v], network.graph.lats[v]])
            }) { fids.append(layer.fids[i]) }
        }
        let db = try Database(path: path, mode: .readWrite)
        try db.execute("ALTER TABLE paths ADD COLUMN opening_hours TEXT")
        let update = try db.prepare("UPDATE paths SET opening_hours = ? WHERE fid = ?")
        for fid in fids { try update.run([.text(hours), .integer(fid)]) }
        // The sea lions' pen, the nearest to the entrance, opens at 09:00.
        try db.execute("ALTER TABLE pens ADD COLUMN opening_hours TEXT")
        try db.execute("UPDATE pens SET opening_hours = 'Mo-Su 09:00-17:00' WHERE name = 'lachtani'")
        return (try Snapshot.load(storePath: path), fids)
    }

    static func prague(_ text: String) throws -> Date { try #require(RouteRequest.departure(parsing: text)) }

    @Test func aClosedPathIsKeptOffAndNamed() throws {
        let (snapshot, fids) = try Self.store.get()
        #expect(!fids.isEmpty)
        let network = try snapshot.network("paths")
        #expect(network.timed.lines.count == fids.count && network.timed.unreadable.isEmpty)
        let plain = try snapshot.route(RouteRequest(from: .point(Self.entrance), to: .point(Self.gorillas)))
        // Open (a Saturday at noon): the same route, nothing kept off.
        let open = try snapshot.route(RouteRequest(from: .point(Self.entrance), to: .point(Self.gorillas), departure: try Self.prague("2026-11-28 12:00")))
        #expect(open.route.nodes == plain.route.nodes && open.closedPaths.isEmpty)
        // Closed (a Monday at 08:00, two hours before they open): the route the router gives
        // with every timed edge forbidden, to the millimetre.
        let closed = try snapshot.route(RouteRequest(from: .point(Self.entrance), to: .point(Self.gorillas), departure: try Self.prague("2026-11-30 08:00")))
        let reference = try Router(graph: network.graph)
        reference.metresPerSecond = 5 / 3.6
        let around = try reference.route(from: Self.entrance, to: Self.gorillas,
                                         avoiding: Router.Avoid(polygons: nil, factor: nil, closed: network.timed.edgeSet(Array(network.timed.lines.indices), nodeCount: network.graph.nodeCount)))
        #expect(abs(closed.route.metres - around.metres) < 0.001, "\(closed.route.metres) against \(around.metres)")
        #expect(closed.route.metres > plain.route.metres)
        for (u, v) in zip(closed.route.nodes, closed.route.nodes.dropFirst()) { #expect(network.timed.line(u, v) == nil) }
        let first = try #require(closed.closedPaths.first)
        #expect(first.openingHours == Self.hours)
        // Reached after walking the plain route up to the timed path, at 5 km/h.
        let reached = first.reachedAt.timeIntervalSince(try Self.prague("2026-11-30 08:00"))
        #expect(reached > 0 && reached < plain.route.seconds)
        let ten = try Self.prague("2026-11-30 10:00")
        #expect(first.opensAt == ten)
    }

    /// A path that opens while the walker is on the way is taken: departing a minute before it
    /// opens, the walk reaches it after it has.
    @Test func aPathThatOpensOnTheWayIsTaken() throws {
        let (snapshot, _) = try Self.store.get()
        let plain = try snapshot.route(RouteRequest(from: .point(Self.entrance), to: .point(Self.gorillas)))
        let justBefore = try snapshot.route(RouteRequest(from: .point(Self.entrance), to: .point(Self.gorillas), departure: try Self.prague("2026-11-30 09:59")))
        #expect(justBefore.route.nodes == plain.route.nodes && justBefore.closedPaths.isEmpty)
        // Departing 10 minutes before, it would get there closed.
        let early = try snapshot.route(RouteRequest(from: .point(Self.entrance), to: .point(Self.gorillas), departure: try Self.prague("2026-11-30 09:50")))
        #expect(!early.closedPaths.isEmpty && early.route.metres > plain.route.metres)
    }

    /// Tables take the paths closed at the departure; the festival schedule walks each leg at
    /// the end of the event before it.
    @Test func tablesAndTheScheduleKeepOffClosedPaths() throws {
        let (snapshot, _) = try Self.store.get()
        let closedAt = try Self.prague("2026-11-30 08:00")
        let table = try snapshot.table(TableRequest(points: [Self.entrance, Self.gorillas], departure: closedAt))
        let around = try snapshot.route(RouteRequest(from: .point(Self.entrance), to: .point(Self.gorillas), departure: closedAt))
        #expect(abs((table.metres[0][1] ?? 0) - around.route.metres) < 0.001)
        let free = try snapshot.table(TableRequest(points: [Self.entrance, Self.gorillas]))
        #expect((free.metres[0][1] ?? 0) < around.route.metres)
        func utc(_ date: Date) -> UTCTime { UTCTime(seconds: Int64(date.timeIntervalSince1970)) }
        let events = [ScheduleEvent(name: "gate", place: .point(Self.entrance), start: utc(closedAt.addingTimeInterval(-3600)), end: utc(closedAt)),
                      ScheduleEvent(name: "gorillas", place: .point(Self.gorillas), start: utc(closedAt.addingTimeInterval(3600)), end: utc(closedAt.addingTimeInterval(7200)))]
        let check = try snapshot.checkSchedule(events)
        #expect(abs(check.legs[0].walk.route.metres - around.route.metres) < 0.001 && !check.legs[0].walk.closedPaths.isEmpty)
    }

    /// A route to the nearest of some places goes to the nearest one open when it arrives.
    @Test func aPlaceClosedOnArrivalIsNotGoneTo() throws {
        let (snapshot, _) = try Self.store.get()
        let pens = try snapshot.layer("pens")
        let chosen = pens.indices.filter { ["lachtani", "tučňáci"].contains(pens.properties[$0]["name"]?.stringValue ?? "") }
        #expect(chosen.count == 2)
        let targets = chosen.compactMap { pens.geometries[$0] }
        let places = chosen.map { PlaceHours(name: pens.properties[$0]["name"]?.stringValue ?? "", openingHours: pens.properties[$0]["opening_hours"]?.stringValue) }
        #expect(places.map { $0.hours?.text } == places.map { $0.name == "lachtani" ? "Mo-Su 09:00-17:00" : nil })
        func route(_ time: String) throws -> RouteAnswer {
            var request = RouteRequest(from: .point(Self.entrance), to: .features(targets), departure: try Self.prague(time))
            request.places = places
            return try snapshot.route(request)
        }
        let seaLions = try #require(chosen.first { pens.properties[$0]["name"]?.stringValue == "lachtani" }.flatMap { pens.geometries[$0] })
        let penguins = try #require(chosen.first { pens.properties[$0]["name"]?.stringValue == "tučňáci" }.flatMap { pens.geometries[$0] })
        // Each alone, at the same departure (the timed paths apply to them too).
        let toSeaLions = try snapshot.route(RouteRequest(from: .point(Self.entrance), to: .features([seaLions]), departure: try Self.prague("2026-11-30 08:00")))
        let toPenguins = try snapshot.route(RouteRequest(from: .point(Self.entrance), to: .features([penguins]), departure: try Self.prague("2026-11-30 08:00")))
        #expect(toSeaLions.route.metres < toPenguins.route.metres)
        // Open: the nearest, the sea lions.
        let open = try route("2026-11-30 12:00")
        #expect(abs(open.route.metres - toSeaLions.route.metres) < 0.001 && open.closedPaths.isEmpty)
        // Before 09:00: the penguins, and the answer says the sea lions were closed on arrival.
        let early = try route("2026-11-30 08:00")
        let eight = try Self.prague("2026-11-30 08:00")
        #expect(abs(early.route.metres - toPenguins.route.metres) < 0.001)
        let closed = try #require(early.closedPaths.first)
        let nine = try Self.prague("2026-11-30 09:00")
        #expect(closed.name == "lachtani" && closed.opensAt == nine)
        #expect(abs(closed.reachedAt.timeIntervalSince(eight) - toSeaLions.route.seconds) < 0.001)
    }

    /// A trip says which stop the walk reaches closed, at the time its legs add up to.
    @Test func aTripNamesTheStopItReachesClosed() throws {
        let (snapshot, _) = try Self.store.get()
        let seaLions = Point(lon: 14.41064991, lat: 50.11601702)
        var request = TripRequest(points: [Self.entrance, Self.gorillas, seaLions], shape: TripShape(roundTrip: true, fixedFirst: true))
        request.departure = try Self.prague("2026-11-29 08:30")  // a Sunday: the timed paths are closed until 09:00 too
        request.places = [PlaceHours(name: "entrance", hours: nil), PlaceHours(name: "gorily", hours: nil),
                          PlaceHours(name: "lachtani", openingHours: "Mo-Su 09:00-17:00")]
        let trip = try snapshot.trip(request)
        let atSeaLions = zip(trip.route.legs, trip.order.dropFirst()).prefix { $0.1 != 2 }.count
        let arrival = try #require(request.departure).addingTimeInterval(trip.route.legs[...atSeaLions].reduce(0) { $0 + $1.answer.route.seconds })
        let nine = try Self.prague("2026-11-29 09:00")
        try #require(arrival < nine, "the walk reaches the sea lions at \(arrival)")
        #expect(trip.closedStops.map(\.name) == ["lachtani"])
        #expect(abs((trip.closedStops.first?.reachedAt.timeIntervalSince(arrival) ?? 99)) < 0.001 && trip.closedStops.first?.opensAt == nine)
        // At noon every stop is open.
        request.departure = try Self.prague("2026-11-29 12:00")
        #expect(try snapshot.trip(request).closedStops.isEmpty)
    }

    @Test func departuresAreReadInPraguesTime() throws {
        #expect(RouteRequest.departure(parsing: "2026-11-28 13:55") == Date(timeIntervalSince1970: 1_795_870_500))  // 12:55 UTC in winter
        #expect(RouteRequest.departure(parsing: "2026-07-01T13:55") == Date(timeIntervalSince1970: 1_782_906_900))  // 11:55 UTC in summer
        #expect(RouteRequest.departure(parsing: "2026-11-28T12:55:00Z") == Date(timeIntervalSince1970: 1_795_870_500))
        #expect(RouteRequest.departure(parsing: "2026-11-28T13:55:00+01:00") == Date(timeIntervalSince1970: 1_795_870_500))
        #expect(RouteRequest.departure(parsing: "2026-11-28T12:55Z") == Date(timeIntervalSince1970: 1_795_870_500))
        #expect(RouteRequest.departure(parsing: "2026-11-28T13:55+01:00") == Date(timeIntervalSince1970: 1_795_870_500))
        for bad in ["", "tomorrow", "2026-13-01 10:00", "2026-11-28 25:00", "2026-11-28", "1e309", "2026-11-28 10:00:61"] {
            #expect(RouteRequest.departure(parsing: bad) == nil, "\(bad)")
        }
    }
}
