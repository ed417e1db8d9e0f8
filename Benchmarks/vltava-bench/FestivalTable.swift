// T1: the festival app's question, the walking times between every pair of 10 stages, as one
// table (OSRM's table service: one search per source, `Snapshot.table`) against 100 single
// routes (`Snapshot.route`, A* per pair). Not a shared workload; it prints its own line:
//   TABLE id=T1 table_10x10_ms=… routes_100_ms=… speedup=… equal=100/100
//
//   swift run -c release vltava-bench WORKDIR --only T1   (WORKDIR is not read)

import Engine
import Foundation
import Geometry
import Store
import Support
import ZooPraha

func runFestivalTable() throws -> String {
    let fixtures = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Fixtures")
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("vltava-bench-t1-\(getpid()).gpkg").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    let store = try GeoPackage(path: path, mode: .readWrite)
    _ = try Importer.importFile(fixtures.appendingPathComponent("zoo/paths-graph.json").path, into: store, options: ImportOptions(layer: "paths"),
                                formats: ImportFormat.builtIn + ZooPraha.formats)
    let snapshot = try Snapshot.load(storePath: path)
    // Ten pens of the zoo as stages (as in ServerTests/StandardClientTests.swift).
    let stages = [(14.41065, 50.116017), (14.406937, 50.119896), (14.404921, 50.118809), (14.402208, 50.119129), (14.404378, 50.117699),
                  (14.407006, 50.116108), (14.408996, 50.115365), (14.409289, 50.116703), (14.406123, 50.117445), (14.405187, 50.115756)]
        .map { Point(lon: $0.0, lat: $0.1) }
    var table: TableAnswer?
    var routes: [[Double]] = []
    // Best of 20 rounds each: the machine's other load only adds.
    var tableBest = Double.infinity, routesBest = Double.infinity
    for _ in 0..<20 {
        tableBest = min(tableBest, try seconds { table = try snapshot.table(TableRequest(points: stages)) })
        routesBest = min(routesBest, try seconds {
            routes = try stages.map { a in try stages.map { b in try snapshot.route(RouteRequest(from: .point(a), to: .point(b))).route.metres } }
        })
    }
    let metres = table?.metres ?? []
    var equal = 0
    for i in stages.indices {
        for j in stages.indices where metres[i][j].map(Rounding.metres) == Rounding.metres(routes[i][j]) { equal += 1 }
    }
    return String(format: "TABLE id=T1 table_10x10_ms=%.3f routes_100_ms=%.3f speedup=%.1f equal=%d/100",
                  tableBest * 1000, routesBest * 1000, routesBest / tableBest, equal)
}
