// Simulated walks for map matching: a random route of a network walked at 1.4 m/s, a GPS fix
// every 1–10 s with Gaussian noise of σ metres, and the share of the route's length whose edges
// a match walks. Used by RoutingTests/MatchingTests.swift and by `vltava-bench` (R3).

import Foundation
import Geometry
import Routing

public enum SimulatedTraces {
    /// A trace along `route`'s line: fixes every 1–10 s at 1.4 m/s, each moved by a Gaussian
    /// error of `sigma` metres, with times and `sigma` as their accuracy.
    public static func trace(along line: [Double], sigma: Double, using random: inout SplitMix) -> [TraceFix] {
        var fixes: [TraceFix] = []
        var time = 0.0, carried = 0.0
        let metresPerDegreeLat = Geodesy.earthRadius * .pi / 180
        func gaussian() -> Double {
            let u1 = Double.random(in: Double.ulpOfOne..<1, using: &random), u2 = Double.random(in: 0..<1, using: &random)
            return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
        }
        func fix(_ lon: Double, _ lat: Double) {
            let metresPerDegreeLon = metresPerDegreeLat * cos(lat * .pi / 180)
            fixes.append(TraceFix(point: Point(lon: lon + sigma * gaussian() / metresPerDegreeLon, lat: lat + sigma * gaussian() / metresPerDegreeLat),
                                  time: time, accuracy: sigma))
        }
        var next = 0.0
        fix(line[0], line[1])
        var i = 0
        while i + 3 < line.count {
            let (ax, ay, bx, by) = (line[i], line[i + 1], line[i + 2], line[i + 3])
            let length = Geodesy.haversine(lon1: ax, lat1: ay, lon2: bx, lat2: by)
            while next <= carried + length {
                if next > 0 {
                    let f = length > 0 ? (next - carried) / length : 0
                    fix(ax + f * (bx - ax), ay + f * (by - ay))
                }
                let seconds = Double.random(in: 1...10, using: &random)
                time += seconds
                next += 1.4 * seconds
            }
            carried += length
            i += 2
        }
        return fixes
    }

    /// The share of the route's edge length that the matchings walk.
    public static func matchedShare(graph: Graph, truth: [Int], result: MatchResult) -> Double {
        func key(_ u: Int, _ v: Int) -> UInt64 { UInt64(min(u, v)) << 32 | UInt64(max(u, v)) }
        var walked = Set<UInt64>()
        for matching in result.matchings {
            for edge in matching.edges { walked.insert(key(edge.u, edge.v)) }
        }
        var total = 0.0, right = 0.0
        for (u, v) in zip(truth, truth.dropFirst()) {
            let metres = Geodesy.haversine(lon1: graph.lons[u], lat1: graph.lats[u], lon2: graph.lons[v], lat2: graph.lats[v])
            total += metres
            if walked.contains(key(u, v)) { right += metres }
        }
        return total > 0 ? right / total : 1
    }

    /// Mean matched share and mean ratio of the walk's length to the route's, over `count`
    /// random routes of at least 300 m.
    public static func evaluate(graph: Graph, router: Router, sigma: Double, count: Int, seed: UInt64, options: MatchOptions = MatchOptions()) throws -> (share: Double, lengthRatio: Double) {
        var random = SplitMix(state: seed)
        let largest = graph.lons.indices.filter { graph.component[$0] == 0 }
        var shares: [Double] = []
        var lengthRatio = 0.0
        while shares.count < count {
            let a = largest[Int.random(in: 0..<largest.count, using: &random)], b = largest[Int.random(in: 0..<largest.count, using: &random)]
            let route = try router.route(from: Point(lon: graph.lons[a], lat: graph.lats[a]), to: Point(lon: graph.lons[b], lat: graph.lats[b]))
            guard route.metres >= 300, route.nodes.count >= 2 else { continue }
            let fixes = trace(along: route.geometry.coordinates, sigma: sigma, using: &random)
            guard fixes.count >= 2 else { continue }
            let result = try router.match(fixes, options: options)
            shares.append(matchedShare(graph: graph, truth: route.nodes, result: result))
            lengthRatio += result.matchings.reduce(0) { $0 + $1.metres } / route.metres
        }
        return (shares.reduce(0, +) / Double(shares.count), lengthRatio / Double(count))
    }

}
