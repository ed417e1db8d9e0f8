import Engine
import Foundation
import Geometry
import QueryLanguage
import TestSupport
import Testing

/// `ROUTE FROM … THROUGH (…) IN BEST ORDER [TO …]` against every order enumerated over the
/// engine's own routes, and `AVOID REACH …` against AVOID given the isochrone's polygon.
@Suite struct RouteThroughTests {
    static let entrance = Point(lon: 14.4109, lat: 50.1167)
    static let pens = ["lachtani", "tučňáci", "gorily", "tygři", "pandy červené", "varani"]

    /// The shortest walk over the points by brute force: the first fixed, the last fixed when
    /// `open`, else back to the first; metres of each leg by `Snapshot.route`.
    func shortest(_ points: [Point], open: Bool, _ snapshot: Snapshot) throws -> Double {
        let n = points.count
        var metres = [[Double]](repeating: [Double](repeating: 0, count: n), count: n)
        for i in 0..<n { for j in 0..<n where i != j {
            metres[i][j] = try snapshot.route(RouteRequest(from: .point(points[i]), to: .point(points[j]))).route.metres
        } }
        let middle = Array(1..<(open ? n - 1 : n))
        var best = Double.infinity
        func permute(_ rest: [Int], _ walked: [Int], _ cost: Double) {
            guard !rest.isEmpty else {
                let end = open ? metres[walked.last ?? 0][n - 1] : metres[walked.last ?? 0][0]
                best = min(best, cost + end)
                return
            }
            for (k, next) in rest.enumerated() {
                var left = rest
                left.remove(at: k)
                permute(left, walked + [next], cost + metres[walked.last ?? 0][next])
            }
        }
        permute(middle, [0], 0)
        return best
    }

    func stopPoints(_ names: [String], _ snapshot: Snapshot) throws -> [Point] {
        let pens = try snapshot.layer("pens")
        return names.flatMap { name in
            pens.indices.filter { pens.properties[$0]["name"]?.stringValue == name }.compactMap { i -> Point? in
                if case .point(let p)? = pens.geometries[i] { p } else { nil }
            }
        }
    }

    @Test func theBestOrderIsTheShortestOfEveryOrder() throws {
        let snapshot = try QueryStore.get()
        let list = Self.pens.map { "'\($0)'" }.joined(separator: ", ")
        let stops = try stopPoints(Self.pens, snapshot)
        #expect(stops.count == 7)  // two tiger pens
        // A round trip from the entrance, and an open walk to the gate by the river.
        let exit = Point(lon: 14.4055, lat: 50.1185)
        for open in [false, true] {
            let statement = "ROUTE FROM POINT(14.4109 50.1167) THROUGH (pens WHERE name IN (\(list))) IN BEST ORDER"
                + (open ? " TO POINT(14.4055 50.1185)" : "") + " ON paths"
            let answer = try #require(try Query.run(statement, on: snapshot).first).json()
            guard case .object(let top) = answer, case .array(let trips)? = top["trips"], case .object(let trip)? = trips.first,
                  let metres = trip["distance"]?.number, case .array(let waypoints)? = top["waypoints"] else {
                Issue.record("not a trip: \(answer)"); continue
            }
            #expect(waypoints.count == 1 + stops.count + (open ? 1 : 0))
            let expected = try shortest([Self.entrance] + stops + (open ? [exit] : []), open: open, snapshot)
            #expect(abs(metres - expected) < 0.01, "\(open ? "open" : "round") trip: \(metres) m against \(expected) m by enumeration")
        }
        let text = try #require(try Query.run("ROUTE FROM POINT(14.4109 50.1167) THROUGH (pens WHERE name IN ('lachtani', 'gorily')) IN BEST ORDER ON paths", on: snapshot).first).table()
        #expect(text == """
            1238.0 m, 14.9 min on foot at 5.0 km/h through 2 stops in the shortest order (great-circle metres, R = 6,371,008.8 m)
            from POINT(14.410900 50.116700), joins the network 12.8 m away
            1. gorily: 559.6 m, 6.7 min
            2. lachtani: 568.0 m, 6.8 min
            back to the start: 110.4 m, 1.3 min
            the order is the shortest (Held–Karp, exact)
            """)
    }

    @Test func avoidReachKeepsOutOfWhatTheWalkReaches() throws {
        let snapshot = try QueryStore.get()
        let from = Point(lon: 14.4109, lat: 50.1167), to = Point(lon: 14.40519, lat: 50.11576)
        let area = try snapshot.isochrone(IsochroneRequest(from: Point(lon: 14.4080, lat: 50.1166), limit: .seconds(120))).bands.map(\.area)
        let direct = try snapshot.route(RouteRequest(from: .point(from), to: .point(to))).route.metres
        let around = try snapshot.route(RouteRequest(from: .point(from), to: .point(to), avoid: area)).route.metres
        let answer = try #require(try Query.run("ROUTE FROM POINT(14.4109 50.1167) TO POINT(14.40519 50.11576) ON paths AVOID REACH 2 min FROM POINT(14.4080 50.1166)", on: snapshot).first).json()
        guard case .object(let top) = answer, case .array(let routes)? = top["routes"], case .object(let route)? = routes.first,
              let metres = route["distance"]?.number else { Issue.record("not a route: \(answer)"); return }
        #expect(abs(metres - around) < 0.001)
        #expect(around > direct + 100, "\(around) m around, \(direct) m straight through")
        // The same area by distance: 2 min at 5 km/h is 166.67 m.
        let byDistance = try #require(try Query.run("ROUTE FROM POINT(14.4109 50.1167) TO POINT(14.40519 50.11576) ON paths AVOID REACH 166.666667 m FROM POINT(14.4080 50.1166)", on: snapshot).first).json()
        guard case .object(let top2) = byDistance, case .array(let routes2)? = top2["routes"], case .object(let route2)? = routes2.first else { Issue.record("\(byDistance)"); return }
        #expect(abs((route2["distance"]?.number ?? 0) - around) < 0.01)
    }

    @Test func badTripsAreRefusedWithTheirReason() throws {
        let snapshot = try QueryStore.get()
        func failure(_ statement: String) -> (code: String, message: String, column: Int) {
            do {
                _ = try Query.run(statement, on: snapshot)
                return ("", "answered", 0)
            } catch {
                return (error.code, error.message, error.column)
            }
        }
        let start = "ROUTE FROM POINT(14.4109 50.1167) "
        #expect(failure(start + "THROUGH (pens WHERE name = 'gorily') ON paths").code == "syntax_error")
        #expect(failure(start + "THROUGH (pens WHERE name = 'nobody') IN BEST ORDER ON paths") == ("NoTarget", "THROUGH's stops matched no feature of 'pens'", 35))
        #expect(failure(start + "THROUGH (pens WHERE name = 'gorily') IN BEST ORDER ON paths AVOID pavilions").code == "not_supported")
        #expect(failure("ROUTE FROM pens THROUGH (pens WHERE name = 'gorily') IN BEST ORDER ON paths").code == "ambiguous_start")
        #expect(failure(start + "TO POINT(14.40519 50.11576) ON paths AVOID REACH 2 parsecs FROM POINT(14.4 50.1)").code == "syntax_error")
        let cut = failure(start + "THROUGH (pens WHERE name = 'gorily'), POINT(14.4040 50.1150) IN BEST ORDER ON paths")
        #expect(cut.code == "NoRoute" && cut.message.contains("no path joins POINT(14.404000 50.115000) with the first point"), "\(cut)")
    }
}
