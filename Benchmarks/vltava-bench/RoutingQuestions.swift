// R1–R3: routing's next questions (issue 33), timed in release on the bundled networks, each
// beside its own reference. Not shared workloads; each prints its own lines:
//
//   ISOCHRONE id=R1 network=andorra nodes=… limit=15min starts=50 dijkstra_ms_median=… isochrone_ms_median=…
//      isochrone_ms_p90=… reached_nodes_median=…
//   TRIP id=R2 stops=10 sets=100 trip_ms_median=… solve_ms_median=… exact=100/100
//   TRIP id=R2 stops=N sets=5 heuristic_ms_median=… gap_to_lower_bound_max=…%        (N = 20, 50, 100)
//   MATCH id=R3 network=… points=100 traces=50 match_ms_median=… match_ms_p90=…
//   MATCH id=R3 network=… sigma_m=… traces=500 matched_share=…% walk_over_route=…
//
// R1's Dijkstra is `Search.settle` with the same bound, alone: the isochrone's own search, so
// the rest of `Snapshot.isochrone` is the polygon. R2's trip is `Snapshot.trip` (the table on the hierarchy, the
// order, the legs); its solve is `TripSolver` on that table alone. R3's traces are walked and
// noised as in the tests (TestSupport/SimulatedTraces.swift).
//
//   swift run -c release vltava-bench WORKDIR --only R1,R2,R3   (WORKDIR is not read)

import Engine
import Foundation
import Geometry
import Routing
import Store
import TestSupport
import ZooPraha

private var fixtures: URL { URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Fixtures") }

private func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
private func p90(_ values: [Double]) -> Double { values.sorted()[min(values.count - 1, values.count * 9 / 10)] }

/// Andorra's walking network (OSM's foot rule), as the store builds it from an imported file.
private func andorra() throws -> Graph {
    Graph.fromOSM(try OSMReader.read(path: fixtures.appendingPathComponent("osm/andorra.osm.pbf").path), profile: .foot)
}

/// The zoo's paths imported into a throwaway store, and its snapshot.
private func zooSnapshot() throws -> Snapshot {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("vltava-bench-r-\(getpid()).gpkg").path
    try? FileManager.default.removeItem(atPath: path)
    let store = try GeoPackage(path: path, mode: .readWrite)
    _ = try Importer.importFile(fixtures.appendingPathComponent("zoo/paths-graph.json").path, into: store, options: ImportOptions(layer: "paths"),
                                formats: ImportFormat.builtIn + ZooPraha.formats)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try Snapshot.load(storePath: path)
}

func runIsochrones() throws -> String {
    // Andorra imported into a store, as `vltava import andorra.osm.pbf` does: every vertex of a
    // way is a node, so the area follows the ways' shapes.
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("vltava-bench-r1-\(getpid()).gpkg").path
    try? FileManager.default.removeItem(atPath: path)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let store = try GeoPackage(path: path, mode: .readWrite)
    _ = try Importer.importFile(fixtures.appendingPathComponent("osm/andorra.osm.pbf").path, into: store, options: ImportOptions(layer: "andorra"),
                                formats: ImportFormat.builtIn + [.osm])
    let snapshot = try Snapshot.load(storePath: path)
    let graph = try snapshot.network("andorra").graph
    let search = Search(graph: graph)
    var random = SplitMix(state: 15)
    let largest = graph.lons.indices.filter { graph.component[$0] == 0 }
    var dijkstra: [Double] = [], total: [Double] = [], nodes: [Double] = []
    for _ in 0..<50 {
        let node = largest[Int.random(in: 0..<largest.count, using: &random)]
        let start = Point(lon: graph.lons[node], lat: graph.lats[node])
        // 15 minutes at 5 km/h: 1,250 m.
        dijkstra.append(try seconds { _ = try search.settle(from: [(node, 0)], within: 1250) } * 1000)
        var answer: IsochroneAnswer?
        total.append(try seconds { answer = try snapshot.isochrone(IsochroneRequest(from: start, limit: .seconds(900))) } * 1000)
        nodes.append(Double(answer?.reachedNodes ?? 0))
    }
    return String(format: "ISOCHRONE id=R1 network=andorra nodes=%d limit=15min starts=50 dijkstra_ms_median=%.3f isochrone_ms_median=%.3f isochrone_ms_p90=%.3f reached_nodes_median=%.0f",
                  graph.nodeCount, median(dijkstra), median(total), p90(total), median(nodes))
}

func runTrips() throws -> String {
    let snapshot = try zooSnapshot()
    let graph = try snapshot.network(nil).graph
    let largest = graph.lons.indices.filter { graph.component[$0] == 0 }
    var random = SplitMix(state: 10)
    func stops(_ count: Int) -> [Point] {
        (0..<count).map { _ in
            let node = largest[Int.random(in: 0..<largest.count, using: &random)]
            return Point(lon: graph.lons[node], lat: graph.lats[node])
        }
    }
    var lines: [String] = []
    var trip: [Double] = [], solve: [Double] = []
    var exact = 0
    for _ in 0..<100 {
        let points = stops(10)
        var answer: TripAnswer?
        trip.append(try seconds { answer = try snapshot.trip(TripRequest(points: points)) } * 1000)
        if answer?.exact == true { exact += 1 }
        let matrix = try snapshot.table(TableRequest(points: points)).metres.map { $0.map { $0 ?? .infinity } }
        solve.append(seconds { _ = TripSolver.solve(matrix, shape: TripShape()) } * 1000)
    }
    lines.append(String(format: "TRIP id=R2 stops=10 sets=100 trip_ms_median=%.3f solve_ms_median=%.3f exact=%d/100", median(trip), median(solve), exact))
    for count in [20, 50, 100] {
        var times: [Double] = [], gap = 0.0
        for _ in 0..<5 {
            let matrix = try snapshot.table(TableRequest(points: stops(count))).metres.map { $0.map { $0 ?? .infinity } }
            var order: TripOrder?
            times.append(seconds { order = TripSolver.solve(matrix, shape: TripShape()) } * 1000)
            if let order { gap = max(gap, order.cost / order.lowerBound - 1) }
        }
        lines.append(String(format: "TRIP id=R2 stops=%d sets=5 heuristic_ms_median=%.3f gap_to_lower_bound_max=%.1f%%", count, median(times), gap * 100))
    }
    return lines.joined(separator: "\n")
}

func runMatching() throws -> String {
    let zoo = try zooSnapshot().network(nil).graph
    var lines: [String] = []
    for (name, graph) in [("zoo", zoo), ("andorra", try andorra())] {
        let router = try Router(graph: graph)
        // Timing: 50 traces cut to their first 100 fixes (σ 10 m).
        var random = SplitMix(state: 100)
        let largest = graph.lons.indices.filter { graph.component[$0] == 0 }
        var times: [Double] = []
        while times.count < 50 {
            let a = largest[Int.random(in: 0..<largest.count, using: &random)], b = largest[Int.random(in: 0..<largest.count, using: &random)]
            guard let route = try? router.route(from: Point(lon: graph.lons[a], lat: graph.lats[a]), to: Point(lon: graph.lons[b], lat: graph.lats[b])) else { continue }
            let fixes = SimulatedTraces.trace(along: route.geometry.coordinates, sigma: 10, using: &random)
            guard fixes.count >= 100 else { continue }
            times.append(try seconds { _ = try router.match(Array(fixes.prefix(100))) } * 1000)
        }
        lines.append(String(format: "MATCH id=R3 network=%@ points=100 traces=50 match_ms_median=%.3f match_ms_p90=%.3f", name, median(times), p90(times)))
        for sigma in [5.0, 10, 20] {
            let (share, ratio) = try SimulatedTraces.evaluate(graph: graph, router: router, sigma: sigma, count: 500, seed: 500 + UInt64(sigma))
            lines.append(String(format: "MATCH id=R3 network=%@ sigma_m=%.0f traces=500 matched_share=%.1f%% walk_over_route=%.2f", name, sigma, share * 100, ratio))
        }
    }
    return lines.joined(separator: "\n")
}
