// X1: durable writes through the library, on the rows Benchmarks/write-throughput.py makes (it
// runs this in the same run as the HTTP server and PostGIS):
//
//   vltava-bench writes STORE.gpkg ROWS.json ROWS_PER_BATCH SECONDS
//
// ROWS.json: [[GeoJSON point, name, value], …], turned into features before the clock starts.
// The store is copied; a layer `x1` (a point, a TEXT and an INTEGER column, as the script's)
// is created, then batches of ROWS_PER_BATCH inserts cycle through the rows for SECONDS, each
// through `Engine.write`: one transaction, synced before it returns, and a snapshot holding it
// swapped in, as a server's write. One writer: the library has no group commit of its own (a
// server groups the batches that arrive together). Prints one line: rows, commits, seconds,
// rows/s.

import Engine
import Foundation
import Geometry
import Support

func runWrites(_ arguments: [String]) throws -> String {
    guard arguments.count == 4, let size = Int(arguments[2]), size > 0, let seconds = Double(arguments[3]), seconds > 0, seconds <= 86_400 else {
        throw BenchError(description: "usage: vltava-bench writes STORE.gpkg ROWS.json ROWS_PER_BATCH SECONDS (at most a day)")
    }
    let store = FileManager.default.temporaryDirectory.appendingPathComponent("vltava-bench-x1-\(getpid()).gpkg").path
    try? FileManager.default.removeItem(atPath: store)
    try FileManager.default.copyItem(atPath: arguments[0], toPath: store)
    defer { for suffix in ["", "-wal", "-shm", "-writer"] { try? FileManager.default.removeItem(atPath: store + suffix) } }

    guard case .array(let items) = try JSON.parse(String(contentsOfFile: arguments[1], encoding: .utf8)) else { throw BenchError(description: "ROWS.json: not an array") }
    let features = try items.map { item -> Feature in
        guard case .array(let row) = item, row.count == 3, let geometry = row[0].string, let name = row[1].string, case .integer(let value) = row[2],
              case .object(let point) = try JSON.parse(geometry), case .array(let xy)? = point["coordinates"], xy.count == 2,
              let lon = xy[0].number, let lat = xy[1].number else { throw BenchError(description: "ROWS.json: a row is not [point, name, value]") }
        return Feature(geometry: .point(Point(lon: lon, lat: lat)), properties: Attributes([("name", .text(name)), ("value", .integer(value))]))
    }
    guard features.count >= size else { throw BenchError(description: "ROWS.json: fewer rows than a batch") }
    let batches = stride(from: 0, to: features.count - size + 1, by: size).map { start in
        WriteBatch(features[start..<(start + size)].map { .change(layer: "x1", .insert($0)) })
    }

    let engine = try Engine(storePath: store)
    try engine.write(WriteBatch([.create(LayerSchema(name: "x1", geometryType: "POINT", columns: [
        ColumnInfo(name: "name", type: .text), ColumnInfo(name: "value", type: .integer),
    ]))]))
    var rows = 0, commits = 0
    let start = DispatchTime.now().uptimeNanoseconds
    let end = start + UInt64(seconds * 1e9)
    var now = start
    while now < end {
        rows += try engine.write(batches[commits % batches.count]).changes.count
        commits += 1
        now = DispatchTime.now().uptimeNanoseconds
    }
    let elapsed = Double(now - start) / 1e9
    return String(format: "WRITES id=X1 rows_per_batch=%d rows=%d commits=%d seconds=%.3f rows_s=%.0f", size, rows, commits, elapsed, Double(rows) / elapsed)
}
