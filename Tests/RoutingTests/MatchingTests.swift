import Foundation
import Geometry
import Routing
import SpatialIndex
import TestSupport
import Testing

/// Map matching against ground truth: walk a random route of the network, take a fix every
/// 1–10 s at 1.4 m/s with Gaussian noise of σ metres, match the trace, and measure the share of
/// the route's length whose edges the matched paths walk. (Benchmarks run 500 such traces on
/// the zoo and Andorra: `vltava-bench match`.)
@Suite struct MatchingTests {
    /// A trace along `route`'s line: fixes every 1–10 s at 1.4 m/s, each moved by a Gaussian
    /// error of `sigma` metres, with times and `sigma` as their accuracy.
    static func trace(along line: [Double], sigma: Double, using random: inout SplitMix) -> [TraceFix] {
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
    static func matchedShare(graph: Graph, truth: [Int], result: MatchResult) -> Double {
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
    static func evaluate(graph: Graph, router: Router, sigma: Double, count: Int, seed: UInt64, options: MatchOptions = MatchOptions()) throws -> (share: Double, lengthRatio: Double) {
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

    /// 20 traces per noise level on each network. The zoo's paths run a few metres apart in
    /// places (a path and the pavement beside it, pen walkways), closer than 10 m of noise can
    /// tell apart: there the share is lower. The matched walk is at most a fifth longer than
    /// the route at σ = 10 m (it follows some of the noise).
    @Test func tracesAreMatchedOnTheZooAndAndorra() throws {
        let (andorra, _) = try ContractionHierarchyTests.andorra.get()
        let zoo = try ZooNetwork.graph.get()
        var lines: [String] = []
        for (name, graph, floor) in [("Andorra", andorra, 0.95), ("zoo", zoo, 0.92)] {
            let router = try Router(graph: graph)
            var line = "\(name):"
            for sigma in [5.0, 10, 20] {
                let (share, lengthRatio) = try Self.evaluate(graph: graph, router: router, sigma: sigma, count: 20, seed: UInt64(sigma))
                line += String(format: " σ %.0f m %.1f%% (walk ×%.2f)", sigma, share * 100, lengthRatio)
                if sigma == 10 {
                    #expect(share >= floor, "\(name), σ = 10 m: \(share)")
                    #expect(lengthRatio <= 1.2, "\(name), σ = 10 m: the walk is \(lengthRatio) times the route")
                }
            }
            lines.append(line)
        }
        print("traces matched (share of route length): \(lines.joined(separator: "; "))")
    }

    /// A straight walk along one path, fixes exactly on it: one matching, every fix on it,
    /// the walked length the path's between the first and last fix.
    @Test func aCleanTraceMatchesItsPathExactly() throws {
        let metresPerDegree = Geodesy.earthRadius * .pi / 180
        let step = 50 / metresPerDegree
        // A path north, with a parallel one 60 m east joined at the ends.
        let lons = [14.4, 14.4, 14.4, 14.4, 14.4 + 60 / (metresPerDegree * cos(50 * .pi / 180)), 14.4 + 60 / (metresPerDegree * cos(50 * .pi / 180))]
        let lats = [50, 50 + step, 50 + 2 * step, 50 + 3 * step, 50, 50 + 3 * step]
        let graph = Graph(lons: lons, lats: lats, edges: [
            Graph.Edge(u: 0, v: 1, metres: 50), Graph.Edge(u: 1, v: 2, metres: 50), Graph.Edge(u: 2, v: 3, metres: 50),
            Graph.Edge(u: 0, v: 4, metres: 60), Graph.Edge(u: 4, v: 5, metres: 150), Graph.Edge(u: 5, v: 3, metres: 60),
        ])
        let router = try Router(graph: graph)
        let fixes = (0..<6).map { k in TraceFix(point: Point(lon: 14.4, lat: 50 + Double(k) * step / 2 + step / 4), time: Double(k) * 18, accuracy: 3) }
        let result = try router.match(fixes)
        #expect(result.matchings.count == 1)
        #expect(result.tracepoints.allSatisfy { $0?.matching == 0 })
        #expect(abs(result.matchings[0].metres - 125) < 0.01)
        #expect(result.matchings[0].nodes == [1, 2])
    }

    /// A jump no walker makes (2 km in 10 s) splits the trace; so does an hour's pause.
    @Test func impossibleJumpsAndLongGapsSplitTheTrace() throws {
        let metresPerDegree = Geodesy.earthRadius * .pi / 180
        let lats = (0...40).map { 50 + Double($0) * 100 / metresPerDegree }
        let graph = Graph(lons: lats.map { _ in 14.4 }, lats: lats, edges: (0..<40).map { Graph.Edge(u: $0, v: $0 + 1, metres: 100) })
        let router = try Router(graph: graph)
        let at = { (metres: Double, time: Double) in TraceFix(point: Point(lon: 14.4, lat: 50 + metres / metresPerDegree), time: time, accuracy: 2) }
        let jump = try router.match([at(0, 0), at(10, 8), at(20, 16), at(2020, 26), at(2030, 34)])
        #expect(jump.matchings.count == 2)
        #expect(jump.matchings.map(\.fixes) == [[0, 1, 2], [3, 4]])
        let pause = try router.match([at(0, 0), at(10, 8), at(20, 3608), at(30, 3616)])
        #expect(pause.matchings.map(\.fixes) == [[0, 1], [2, 3]])
        // A fix far from every path is left out, and the rest still match as one.
        var far = [at(0, 0), at(10, 8), at(20, 16)]
        far.insert(TraceFix(point: Point(lon: 14.41, lat: 50), time: 4, accuracy: 2), at: 1)
        let outlier = try router.match(far)
        #expect(outlier.tracepoints[1] == nil)
        #expect(outlier.matchings.map(\.fixes) == [[0, 2, 3]])
    }
}
