// F1: position updates with fence evaluation through the library, on the workload that
// Benchmarks/fences-vs-redis.py makes (it runs this beside Redis and the HTTP server):
//
//   vltava-bench fences FENCES.json BODIES.ndjson STORE.gpkg
//
// FENCES.json: {name: definition}; BODIES.ndjson: one POST body per line
// ({"positions": [{"id", "position", "time"}, …]}), parsed before the clock starts. The store is
// copied, the live layer `visitors` and the fences declared, then every batch goes through
// `Engine.updatePositions` in order. Prints one line: updates, seconds, rate, events, and the
// events per fence as JSON (the script checks them against its replay).

import Engine
import Foundation
import Geometry
import Support

func runFenceUpdates(_ arguments: [String]) throws -> String {
    guard arguments.count == 3 else { throw BenchError(description: "usage: vltava-bench fences FENCES.json BODIES.ndjson STORE.gpkg") }
    let store = FileManager.default.temporaryDirectory.appendingPathComponent("vltava-bench-f1-\(getpid()).gpkg").path
    try? FileManager.default.removeItem(atPath: store)
    try FileManager.default.copyItem(atPath: arguments[2], toPath: store)
    defer { for suffix in ["", "-wal", "-shm", "-writer"] { try? FileManager.default.removeItem(atPath: store + suffix) } }
    let engine = try Engine(storePath: store)
    try engine.declareLiveLayer("visitors", settings: LiveLayerSettings())
    guard case .object(let fences) = try JSON.parse(String(contentsOfFile: arguments[0], encoding: .utf8)) else { throw BenchError(description: "FENCES.json: not an object") }
    for (name, definition) in fences { try engine.putFence(try FenceDefinition.parse(name: name, definition)) }

    var batches: [[PositionUpdate]] = []
    for line in try String(contentsOfFile: arguments[1], encoding: .utf8).split(separator: "\n") {
        guard case .object(let body) = try JSON.parse(String(line)), case .array(let items)? = body["positions"] else { throw BenchError(description: "BODIES: a line without positions") }
        batches.append(try items.map { item in
            guard case .object(let p) = item, let id = p["id"]?.string, case .array(let xy)? = p["position"], xy.count == 2,
                  let lon = xy[0].number, let lat = xy[1].number, let time = p["time"]?.number else { throw BenchError(description: "BODIES: a position without id, position or time") }
            return PositionUpdate(id: id, point: Point(lon: lon, lat: lat), time: time)
        })
    }
    var perFence: [String: Int] = [:]
    var events = 0
    let start = DispatchTime.now().uptimeNanoseconds
    for batch in batches {
        let receipt = try engine.updatePositions("visitors", batch)
        events += receipt.events.count
        for event in receipt.events { perFence[event.fence, default: 0] += 1 }
    }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    let updates = batches.reduce(0) { $0 + $1.count }
    let counts = JSON.serialize(.object(JSONObject(perFence.keys.sorted().map { ($0, .integer(Int64(perFence[$0] ?? 0))) })))
    return String(format: "FENCES id=F1 updates=%d batches=%d seconds=%.4f updates_s=%.0f events=%d per_fence=", updates, batches.count, seconds,
                  Double(updates) / seconds, events) + counts
}
