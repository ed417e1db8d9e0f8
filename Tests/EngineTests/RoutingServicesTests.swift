@testable import Engine
import Foundation
import Geometry
import Routing
import Support
import TestSupport
import Testing

/// OSRM's services as engine operations, checked against the engine's one route operation: the
/// table (one search per source) gives each pair the distance `route` gives it, for both
/// profiles; a route through points is its legs; the steps add up and name the streets.
@Suite(.validatesStores) struct RoutingServicesTests {
    /// The main entrance and nine pens of the zoo.
    static let points: [Point] = [
        (14.4109, 50.1167), (14.41064991, 50.11601702), (14.40693735, 50.1198958), (14.40492117, 50.11880879), (14.40220799, 50.11912858),
        (14.40437796, 50.117699), (14.40700589, 50.11610751), (14.40899602, 50.11536546), (14.40928941, 50.11670306), (14.40518699, 50.11575607),
    ].map { Point(lon: $0.0, lat: $0.1) }

    @Test(arguments: [WalkingProfile.foot, .wheelchair])
    func tableEqualsRoutes(profile: WalkingProfile) throws {
        let snapshot = try DemoStore.get()
        let table = try snapshot.table(TableRequest(points: Self.points, profile: profile))
        #expect(table.metres.count == 10 && table.metres.allSatisfy { $0.count == 10 })
        var reachable = 0
        for (i, a) in Self.points.enumerated() {
            for (j, b) in Self.points.enumerated() {
                let cell = table.metres[i][j]
                do {
                    let route = try snapshot.route(RouteRequest(from: .point(a), to: .point(b), profile: profile))
                    #expect(cell.map(Rounding.metres) == Rounding.metres(route.route.metres), "\(profile) \(i)→\(j)")
                    #expect(table.seconds[i][j].map(Rounding.seconds) == Rounding.seconds(route.route.seconds))
                    reachable += 1
                } catch {
                    // No route (a wheelchair cannot reach the pen): a null cell.
                    guard case .route(.noRoute) = error else { Issue.record("\(i)→\(j): \(error)"); continue }
                    #expect(cell == nil, "\(profile) \(i)→\(j)")
                }
            }
        }
        #expect(reachable >= (profile == .foot ? 100 : 50))
    }

    /// The engine's routes and tables run on the network's contraction hierarchies (one per
    /// profile: the step-free one for wheelchairs); a router without one (A*, and one Dijkstra
    /// per source for the table) answers the same nodes and lengths, bit for bit for routes.
    @Test(arguments: [WalkingProfile.foot, .wheelchair])
    func hierarchyAnswersAsAStar(profile: WalkingProfile) throws {
        let snapshot = try DemoStore.get()
        let network = try snapshot.network(nil)
        #expect(network.steps.count == 81)
        // The step-free hierarchy is another one, built without the 81 step edges.
        #expect(network.hierarchy(for: .wheelchair) !== network.hierarchy(for: .foot))
        #expect(network.hierarchy(for: .wheelchair).originalArcCount == network.hierarchy(for: .foot).originalArcCount - 2 * 81)
        let reference = try Router(graph: network.graph)
        if profile.avoidsSteps { reference.forbidden = Router.Forbidden(edges: network.steps, what: "steps") }
        let radii = [Double](repeating: snapshot.limits.defaultSnapMetres, count: Self.points.count)
        let table = try snapshot.table(TableRequest(points: Self.points, profile: profile))
        let expected = try reference.table(sources: Self.points, sourceSnapMetres: radii, destinations: Self.points, destinationSnapMetres: radii)
        var routes = 0
        for (i, a) in Self.points.enumerated() {
            for (j, b) in Self.points.enumerated() {
                #expect(table.metres[i][j].map(Rounding.metres) == expected.metres[i][j].map(Rounding.metres), "\(profile) \(i)→\(j)")
                guard let aStar = try? reference.route(from: a, to: b) else { continue }
                let route = try snapshot.route(RouteRequest(from: .point(a), to: .point(b), profile: profile)).route
                #expect(route.nodes == aStar.nodes, "\(profile) \(i)→\(j)")
                #expect(route.metres == aStar.metres, "\(profile) \(i)→\(j)")
                routes += 1
            }
        }
        #expect(routes >= (profile == .foot ? 100 : 50))
        // The entrance to the sea lions: 165.696 m without steps (as /route/v1/wheelchair answers).
        if profile == .wheelchair { #expect(table.metres[0][1].map(Rounding.metres) == 165.696) }
    }

    /// Subsets of sources and destinations, the table size limit, an index out of range.
    @Test func tableSourcesDestinationsAndLimits() throws {
        let snapshot = try DemoStore.get()
        let full = try snapshot.table(TableRequest(points: Self.points))
        let part = try snapshot.table(TableRequest(points: Self.points, sources: [3, 0], destinations: [9, 2, 2]))
        #expect(part.metres == [[full.metres[3][9], full.metres[3][2], full.metres[3][2]], [full.metres[0][9], full.metres[0][2], full.metres[0][2]]])
        #expect(throws: EngineError.route(.tooManyPoints(what: "cells in a table (101 sources × 101 destinations)", count: 10_201, limit: 10_000))) {
            try snapshot.table(TableRequest(points: Array(repeating: Self.points[0], count: 101)))
        }
        #expect(throws: EngineError.invalidArgument(parameter: "sources", message: "index 10 is not one of the 10 coordinates (0 to 9)")) {
            try snapshot.table(TableRequest(points: Self.points, sources: [10]))
        }
        let far = #expect(throws: EngineError.self) { try snapshot.table(TableRequest(points: [Self.points[0], Point(lon: 14.1, lat: 50.1)])) }
        #expect(far?.description == "coordinate 1 is not within 500 m of the network (the nearest path is 20846 m away)")
    }

    /// A route through three points is two legs, each the route between its points; its
    /// steps add up to each leg and follow the street names of the lines walked.
    @Test func routeThroughPointsIsItsLegs() throws {
        let snapshot = try DemoStore.get()
        let through = [Point(lon: 14.4109, lat: 50.1167), Point(lon: 14.41284378, lat: 50.11993197), Point(lon: 14.41094662, lat: 50.12058628)]
        let answer = try snapshot.route(through: LegsRequest(points: through))
        #expect(answer.legs.count == 2 && answer.waypoints.count == 3)
        for (k, leg) in answer.legs.enumerated() {
            let single = try snapshot.route(RouteRequest(from: .point(through[k]), to: .point(through[k + 1])))
            #expect(leg.answer.route.metres == single.route.metres)
            // Steps are measured along their lines; the route's partial edges by fraction: the
            // two agree far below the millimetre the answers are written to.
            #expect(abs(leg.steps.reduce(0) { $0 + $1.metres } - single.route.metres) < 1e-5)
            #expect(abs(leg.segmentMetres.reduce(0, +) - single.route.metres) < 1e-5)
            #expect(leg.steps.first?.maneuver == .depart && leg.steps.last?.maneuver == .arrive && leg.steps.last?.metres == 0)
            // Consecutive steps join: each starts where the one before ends.
            for (a, b) in zip(leg.steps, leg.steps.dropFirst()) {
                #expect(Array(a.geometry.coordinates.suffix(2)) == [b.location.lon, b.location.lat])
            }
        }
        #expect(answer.legs.map { $0.steps.map(\.name) } == [["", "Trojská", "Trojská"], ["Trojská", "Na Salabce", "Na Salabce"]])
        #expect(answer.legs.map(\.summary) == ["Trojská", "Trojská, Na Salabce"])
        #expect(answer.waypointNames == ["", "Trojská", "Jiřího Jandy"])
        #expect(answer.geometry.pointCount == answer.legs.reduce(0) { $0 + $1.answer.route.geometry.pointCount } - 1)
        // A point far from the paths is named by its place in the request.
        let far = #expect(throws: EngineError.self) { try snapshot.route(through: LegsRequest(points: through.prefix(2) + [Point(lon: 14.1, lat: 50.1)])) }
        #expect(far?.description == "coordinate 2 is not within 500 m of the network (the nearest path is 20846 m away)")
    }

    /// OSRM's turn modifiers by the change of bearing (clockwise is right).
    @Test func turnModifiers() {
        #expect(Network.turn(from: 0, to: 10).modifier == "straight")
        #expect(Network.turn(from: 350, to: 40).modifier == "slight right")
        #expect(Network.turn(from: 90, to: 180).modifier == "right")
        #expect(Network.turn(from: 90, to: 0).modifier == "left")
        #expect(Network.turn(from: 0, to: 200).modifier == "sharp left")
        #expect(Network.turn(from: 0, to: 178).modifier == "uturn")
        #expect(Network.degrees(359.6) == 0 && Network.degrees(-0.4) == 0)
    }
}
