import Engine
import Foundation
import Geometry
import QueryLanguage
import Support
import TestSupport
import Testing

/// `FIND … WITHIN REACH t FROM POINT(…)` against routes: a pen is in the answer exactly when
/// the engine's route from the point to it is at most the limit, and its `distance_m` is that
/// route's metres; the same pens by a time and by its distance at 5 km/h.
@Suite struct ReachTests {
    func rows(_ query: String, _ snapshot: Snapshot) throws -> [JSONObject] { try QueryStore.rows(query, snapshot) }

    @Test func thePensAWalkReachesAreThoseRoutesReach() throws {
        let snapshot = try QueryStore.get()
        let pens = try snapshot.layer("pens")
        let from = Point(lon: 14.40519, lat: 50.11576)  // the gorilla pen
        var checked = 0
        for minutes in [3.0, 8] {
            let found = try rows("FIND pens WITHIN REACH \(Int(minutes)) min FROM POINT(14.40519 50.11576) RETURN fid, distance_m", snapshot)
            var byFid: [Int64: Double] = [:]
            for row in found {
                guard case .integer(let fid)? = row["fid"], let metres = row["distance_m"]?.number else { continue }
                byFid[fid] = metres
            }
            let limit = minutes * 60 * 5 / 3.6
            for i in pens.indices {
                guard case .point(let pen)? = pens.geometries[i] else { continue }
                let route = try? snapshot.route(RouteRequest(from: .point(from), to: .point(pen)))
                let metres = route?.route.metres ?? .infinity
                // A pen on the limit itself (within a millimetre) may fall either way.
                guard abs(metres - limit) > 0.001 else { continue }
                if metres <= limit {
                    let answered = try #require(byFid[pens.fids[i]], "pen \(pens.fids[i]), \(metres) m by route, not in the \(minutes)-minute answer")
                    #expect(abs(answered - metres) < 0.01, "pen \(pens.fids[i]): \(answered) m against a route of \(metres) m")
                } else {
                    #expect(byFid[pens.fids[i]] == nil, "pen \(pens.fids[i]): in the answer, but its route is \(metres) m")
                }
                checked += 1
            }
            // By distance: the same pens.
            let byDistance = try rows("FIND pens WITHIN REACH \(String(format: "%.6f", limit)) m FROM POINT(14.40519 50.11576) RETURN fid", snapshot)
            #expect(Set(byDistance.compactMap { if case .integer(let fid)? = $0["fid"] { fid } else { nil } }) == Set(byFid.keys))
        }
        #expect(checked == 2 * pens.count)
    }

    @Test func reachIsCheckedAndExplained() throws {
        let snapshot = try QueryStore.get()
        #expect(throws: (any Error).self) { try Query.run("FIND pens WITHIN REACH 5 parsecs FROM POINT(14.4 50.1)", on: snapshot) }
        #expect(throws: (any Error).self) { try Query.run("FIND pens WITHIN REACH 500 h FROM POINT(14.4 50.1)", on: snapshot) }
        #expect(throws: (any Error).self) { try Query.run("FIND pens WITHIN REACH 5 min FROM POINT(14.4 95)", on: snapshot) }
        let explained = try #require(try Query.run("EXPLAIN FIND pens WITHIN REACH 5 min FROM POINT(14.40519 50.11576)", on: snapshot).first)
        #expect("\(explained.json())".contains("a walk within 300 s on foot"))
    }
}
