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
    /// 20 traces at σ = 10 m on Andorra, 60 on the zoo (the benchmark runs 500, and 5 and 20 m too). The
    /// zoo's paths run a few metres apart in places (a path and the pavement beside it, pen
    /// walkways), closer than 10 m of noise can tell apart: there the share is lower, and the
    /// issue's target of 95% is asked. The matched walk is at most a fifth longer than the
    /// route (it follows some of the noise).
    @Test func tracesAreMatchedOnTheZooAndAndorra() throws {
        let (andorra, _) = try ContractionHierarchyTests.andorra.get()
        let zoo = try ZooNetwork.graph.get()
        var lines: [String] = []
        for (name, graph, floor, count) in [("Andorra", andorra, 0.98, 20), ("zoo", zoo, 0.95, 60)] {
            let router = try Router(graph: graph)
            let (share, lengthRatio) = try SimulatedTraces.evaluate(graph: graph, router: router, sigma: 10, count: count, seed: 10)
            #expect(share >= floor, "\(name), σ = 10 m: \(share)")
            #expect(lengthRatio <= 1.2, "\(name), σ = 10 m: the walk is \(lengthRatio) times the route")
            lines.append(String(format: "%@: σ 10 m %.1f%% (walk ×%.2f)", name, share * 100, lengthRatio))
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
