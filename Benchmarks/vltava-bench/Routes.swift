// W6–W7: shortest-path length for every pair, by A* (the reference) and by the contraction
// hierarchy, on the graph built from nodes.csv and edges.csv; and T2, a 1,000 × 1,000 walking
// table on the W7 network (Andorra) through the hierarchy, checked against one Dijkstra per
// source on a sample of rows. Lines printed:
//
//   RESULT workload=W7 impl=vltava-astar build_s=… query_s=… …   (build_s: graph and landmarks)
//   RESULT workload=W7 impl=vltava-ch build_s=… query_s=… …      (build_s: the hierarchy alone)
//   CH id=W7 build_s=… shortcuts=… memory_bytes=… query_us=… path_query_us=… astar_query_us=…
//      speedup_vs_astar=… settled_median=… length_max_diff_m=… path_same_as_dijkstra=2000/2000
//      path_max_diff_m=0 same_nodes=…/…
//
// The RESULT lines time lengths only (`Search.metres`, `HierarchySearch.metres`), as Boost's
// A* anchor does; path_query_us also unpacks every path and sums its edges in order, which
// makes its lengths Dijkstra's bit for bit (path_same_as_dijkstra).
//   TABLE id=T2 size=1000x1000 ch_s=… dijkstra_rows=100 dijkstra_s_per_1000_rows=… equal_mm=100000/100000
//
//   swift run -c release vltava-bench WORKDIR --only W7,T2

import Foundation
import Geometry
import Routing
import Support

/// A workload's graph and pairs, parsed.
struct RouteWorkload {
    var lons: [Double] = [], lats: [Double] = []
    var edges: [Graph.Edge] = []
    var pairs: [(Int, Int)] = []

    init(dir: String) throws {
        func rows(_ file: String) throws -> [[Substring]] {
            guard let data = FileManager.default.contents(atPath: "\(dir)/\(file)") else { throw BenchError(description: "cannot read \(dir)/\(file)") }
            return String(decoding: data, as: UTF8.self).split(separator: "\n").dropFirst().map { $0.split(separator: ",") }
        }
        let nodes = try rows("nodes.csv")
        lons = [Double](repeating: 0, count: nodes.count)
        lats = lons
        for row in nodes {
            guard row.count >= 3, let i = Int(row[0]), let lon = Double(row[1]), let lat = Double(row[2]), i < nodes.count else { throw BenchError(description: "bad node row \(row)") }
            lons[i] = lon
            lats[i] = lat
        }
        edges = try rows("edges.csv").compactMap { row -> Graph.Edge? in
            guard row.count >= 3, let u = Int(row[0]), let v = Int(row[1]), let m = Double(row[2]) else { return nil }
            return Graph.Edge(u: u, v: v, metres: m)
        }
        pairs = try rows("pairs.csv").compactMap { row -> (Int, Int)? in
            guard row.count >= 2, let s = Int(row[0]), let t = Int(row[1]) else { return nil }
            return (s, t)
        }
    }
}

/// benchlib.route_checksum: sums of reachable lengths, weighted 1 + (i mod 10), unreachable count.
func routeChecksum(_ answers: [Double]) -> String {
    var sum = 0.0, weighted = 0.0, unreachable = 0
    for (i, d) in answers.enumerated() {
        if d.isFinite { sum += d; weighted += d * Double(1 + i % 10) } else { unreachable += 1 }
    }
    return String(format: "sum_m=%.3f;wsum_m=%.3f;unreachable=%d", sum, weighted, unreachable)
}

func runRoutes(workdir: String, id: String, folder: String) throws -> String {
    let w = try RouteWorkload(dir: "\(workdir)/\(folder)")
    var graph: Graph?
    let build = seconds { graph = Graph(lons: w.lons, lats: w.lats, edges: w.edges) }
    guard let graph else { throw BenchError(description: "no graph") }
    let pairs = w.pairs
    // A*, the reference.
    let search = Search(graph: graph)
    var astar = [Double](repeating: .infinity, count: pairs.count)
    // Best of 3 passes: the machine's other load only adds.
    var astarQuery = Double.infinity
    for _ in 0..<3 {
        astarQuery = min(astarQuery, seconds {
            for (i, (s, t)) in pairs.enumerated() { astar[i] = (try? search.metres(from: s, to: t)) ?? .infinity }
        })
    }
    // The hierarchy: its build, then every pair with its path unpacked (the lengths are summed
    // along the unpacked path, so unpacking is part of every query).
    var hierarchy: ContractionHierarchy?
    let chBuild = seconds { hierarchy = ContractionHierarchy(graph: graph) }
    guard let hierarchy else { throw BenchError(description: "no hierarchy") }
    let chSearch = HierarchySearch(hierarchy: hierarchy)
    // Lengths only, as the A* line (and Boost's A*) answers them.
    var ch = [Double](repeating: .infinity, count: pairs.count)
    var chQuery = Double.infinity
    for _ in 0..<3 {
        chQuery = min(chQuery, seconds {
            for (i, (s, t)) in pairs.enumerated() { ch[i] = (try? chSearch.metres(from: s, to: t)) ?? .infinity }
        })
    }
    // Whole paths, shortcuts unpacked, lengths summed along them in path order.
    var chPaths = [Double](repeating: .infinity, count: pairs.count)
    var chNodes = [[Int]](repeating: [], count: pairs.count)
    var settled = [Int](repeating: 0, count: pairs.count)
    var chPathQuery = Double.infinity
    for _ in 0..<3 {
        chPathQuery = min(chPathQuery, seconds {
            for (i, (s, t)) in pairs.enumerated() {
                if let path = try? chSearch.shortestPath(from: [(s, 0)], to: [(t, 0)]) {
                    chPaths[i] = path.metres
                    chNodes[i] = path.nodes
                }
                settled[i] = chSearch.settled
            }
        })
    }
    // Against plain Dijkstra, pair by pair: the same length (bit for bit), and the same nodes.
    var same = 0, sameNodes = 0, maxDiff = 0.0, maxLengthDiff = 0.0
    for (i, (s, t)) in pairs.enumerated() {
        let d = try? search.shortestPath(from: [(s, 0)], to: [(t, 0)], heuristic: false)
        let dm = d?.metres ?? .infinity
        if dm == chPaths[i] { same += 1 } else if dm.isFinite && chPaths[i].isFinite { maxDiff = max(maxDiff, abs(dm - chPaths[i])) } else { maxDiff = .infinity }
        if dm.isFinite && ch[i].isFinite { maxLengthDiff = max(maxLengthDiff, abs(dm - ch[i])) } else if dm.isFinite != ch[i].isFinite { maxLengthDiff = .infinity }
        if d?.nodes == chNodes[i] { sameNodes += 1 }
    }
    settled.sort()
    let median = settled.isEmpty ? 0 : settled[settled.count / 2]
    let n = Double(max(1, pairs.count))
    let info = String(format: "CH id=%@ build_s=%.4f nodes=%d arcs=%d shortcuts=%d memory_bytes=%d query_us=%.2f path_query_us=%.2f astar_query_us=%.2f speedup_vs_astar=%.1f settled_median=%d length_max_diff_m=%.3g path_same_as_dijkstra=%d/%d path_max_diff_m=%.3g same_nodes=%d/%d",
                      id, chBuild, hierarchy.nodeCount, hierarchy.originalArcCount, hierarchy.shortcutCount, hierarchy.memoryBytes,
                      chQuery / n * 1e6, chPathQuery / n * 1e6, astarQuery / n * 1e6, astarQuery / chQuery, median, maxLengthDiff, same, pairs.count, maxDiff, sameNodes, pairs.count)
    return [resultLine(id: id, impl: "vltava-astar", build: build, query: astarQuery, queries: pairs.count, checksum: routeChecksum(astar)),
            resultLine(id: id, impl: "vltava-ch", build: chBuild, query: chQuery, queries: pairs.count, checksum: routeChecksum(ch)),
            info].joined(separator: "\n")
}

/// T2: a 1,000 × 1,000 table between the first 1,000 distinct sources of W7's pairs, as points
/// at their nodes, through `Router.table` on the hierarchy; 100 rows again by one Dijkstra per
/// source (the router without a hierarchy) for the check and the comparison.
func runAndorraTable(workdir: String) throws -> String {
    let w = try RouteWorkload(dir: "\(workdir)/W7-route-andorra")
    let graph = Graph(lons: w.lons, lats: w.lats, edges: w.edges)
    var seen = Set<Int>(), nodes: [Int] = []
    for (s, _) in w.pairs where nodes.count < 1_000 && seen.insert(s).inserted { nodes.append(s) }
    let points = nodes.map { Point(lon: graph.lons[$0], lat: graph.lats[$0]) }
    let router = try Router(graph: graph)
    router.hierarchy = ContractionHierarchy(graph: graph)
    let radii = [Double](repeating: 500, count: points.count)
    var table: DistanceTable?
    var chBest = Double.infinity
    for _ in 0..<3 {
        chBest = min(chBest, try seconds { table = try router.table(sources: points, sourceSnapMetres: radii, destinations: points, destinationSnapMetres: radii) })
    }
    router.hierarchy = nil
    let rows = 100
    var reference: DistanceTable?
    let dijkstra = try seconds {
        reference = try router.table(sources: Array(points.prefix(rows)), sourceSnapMetres: Array(radii.prefix(rows)), destinations: points, destinationSnapMetres: radii)
    }
    var equal = 0, maxDiff = 0.0
    for i in 0..<rows {
        for j in points.indices {
            let a = table?.metres[i][j] ?? nil, b = reference?.metres[i][j] ?? nil
            if a.map(Rounding.metres) == b.map(Rounding.metres) { equal += 1 }
            if let a, let b { maxDiff = max(maxDiff, abs(a - b)) }
        }
    }
    return String(format: "TABLE id=T2 size=%dx%d ch_s=%.4f dijkstra_rows=%d dijkstra_s_per_1000_rows=%.3f speedup=%.1f equal_mm=%d/%d max_diff_m=%.3g",
                  points.count, points.count, chBest, rows, dijkstra * 1000 / Double(rows), dijkstra * 1000 / Double(rows) / chBest, equal, rows * points.count, maxDiff)
}
