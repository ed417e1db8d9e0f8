// vltava-bench: runs the shared workloads (../shared/bench/README.md) on the files that
// gen_workloads.py writes, and prints one RESULT line per workload in the anchors' format, so
// `anchors.py WORKDIR --verify results.txt` checks the answers and prints the ratios.
//
//   swift run -c release vltava-bench WORKDIR [--only W1,W4]
//
// `vltava-bench tiles …` runs the tile-encoding benchmark instead (TileEncoding.swift; driven
// by Benchmarks/tiles-vs-postgis.sh), `vltava-bench fences …` position updates through the
// library (Fences.swift; driven by Benchmarks/fences-vs-redis.py), `vltava-bench writes …`
// durable write batches through the library (Writes.swift; driven by
// Benchmarks/write-throughput.py), `vltava-bench pmtiles …` reading and writing a PMTiles
// archive (PMTiles.swift).

import Foundation

let workloads: [(id: String, run: (String) throws -> String)] = [
    ("W1", { try runPointInPolygon(workdir: $0, id: "W1", folder: "W1-pip-districts") }),
    ("W2", { try runPointInPolygon(workdir: $0, id: "W2", folder: "W2-pip-parking") }),
    ("W3", { try runPointInPolygon(workdir: $0, id: "W3", folder: "W3-pip-synthetic-200k") }),
    ("W4", { try runNearest(workdir: $0, id: "W4", folder: "W4-knn-stations") }),
    ("W5", { try runNearest(workdir: $0, id: "W5", folder: "W5-knn-100k") }),
    ("W6", { try runRoutes(workdir: $0, id: "W6", folder: "W6-route-zoo") }),
    ("W7", { try runRoutes(workdir: $0, id: "W7", folder: "W7-route-andorra") }),
    ("W8", { try runDecodeTiles(workdir: $0) }),
    ("Q1", { _ in try runQueryOverhead() }),
    ("J1", { _ in try runJSONEncoding() }),
    ("T1", { _ in try runFestivalTable() }),
    ("T2", { try runAndorraTable(workdir: $0) }),
    ("L1", { _ in try runIndoorLocate() }),
    ("R1", { _ in try runIsochrones() }),
    ("R2", { _ in try runTrips() }),
    ("R3", { _ in try runMatching() }),
    ("S1", { _ in try runSearch() }),
]

var arguments = Array(CommandLine.arguments.dropFirst())
/// The benchmarks run as `vltava-bench NAME ARGUMENTS…`, driven by their scripts: the name, the
/// id their errors are reported under, and the run, which prints one line.
let subcommands: [(name: String, id: String, run: ([String]) throws -> String)] = [
    ("fences", "F1", runFenceUpdates),
    ("writes", "X1", runWrites),
    ("pmtiles", "P1", runPMTiles),
    ("tiles", "T1", runTileEncoding),
]
if let name = arguments.first, let subcommand = subcommands.first(where: { $0.name == name }) {
    do {
        print(try subcommand.run(Array(arguments.dropFirst())))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("\(subcommand.id): \(error)\n".utf8))
        exit(1)
    }
}
var only: Set<String>?
if let flag = arguments.firstIndex(of: "--only"), flag + 1 < arguments.count {
    only = Set(arguments[flag + 1].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).uppercased() })
    arguments.removeSubrange(flag...(flag + 1))
}
guard arguments.count == 1 else {
    FileHandle.standardError.write(Data("usage: vltava-bench WORKDIR [--only W1,W4]\n".utf8))
    exit(2)
}
let workdir = arguments[0]
var failed = false
for workload in workloads where only?.contains(workload.id) ?? true {
    let folder = URL(fileURLWithPath: workdir)
    do {
        print(try workload.run(folder.path))
    } catch {
        FileHandle.standardError.write(Data("\(workload.id): \(error)\n".utf8))
        failed = true
    }
}
exit(failed ? 1 : 0)
