// P1: reading and writing PMTiles archives (Sources/VectorTiles/PMTiles*.swift), in process,
// one thread:
//
//   vltava-bench pmtiles ARCHIVE [ROUNDS]
//
// opens ARCHIVE (timed), lists its tiles, reads every tile ROUNDS times (default 10) by its
// z/x/y, as the server does, and prints the best round; then writes those tiles to a new
// archive beside it with PMTilesWriter (best of three) and checks that it reads back the same:
//   PMTILES id=P1 impl=vltava tiles=… open_s=… read_s=… tiles_per_s=… bytes=… write_s=… written_bytes=…
// Tests/Clients/pmtiles_reference.py time ARCHIVE ROUNDS times the reference reader (PyPI
// pmtiles) on the same archive, for comparison.

import Foundation
import Support
import VectorTiles

func runPMTiles(_ arguments: [String]) throws -> String {
    guard let path = arguments.first else { throw BenchError(description: "usage: vltava-bench pmtiles ARCHIVE [ROUNDS]") }
    let rounds = arguments.count > 1 ? max(1, Int(arguments[1]) ?? 10) : 10
    var archive: PMTiles?
    let open = try seconds { archive = try PMTiles(path: path) }
    guard let archive else { throw BenchError(description: "\(path) did not open") }
    let addresses = try archive.tileAddresses()
    var best = Double.infinity
    var bytes = 0
    for _ in 0..<rounds {
        var total = 0
        let time = try seconds {
            for a in addresses { total += try archive.tile(z: a.z, x: a.x, y: a.y)?.count ?? 0 }
        }
        best = min(best, time)
        bytes = total
    }

    // Writing: the tiles in tile id order (as `vltava tiles export` gives them), read first.
    let ordered = addresses.sorted { (PMTilesTileID.id(z: $0.z, x: $0.x, y: $0.y) ?? 0) < (PMTilesTileID.id(z: $1.z, x: $1.x, y: $1.y) ?? 0) }
    var tiles: [(z: Int, x: Int, y: Int, bytes: [UInt8])] = []
    for a in ordered { if let tile = try archive.tile(z: a.z, x: a.x, y: a.y) { tiles.append((a.z, a.x, a.y, tile)) } }
    let copy = path + ".bench-copy.pmtiles"
    defer { try? FileManager.default.removeItem(atPath: copy) }
    var bestWrite = Double.infinity
    var summary: PMTilesWriter.Summary?
    for _ in 0..<3 {
        bestWrite = min(bestWrite, try seconds {
            summary = try PMTilesWriter.write(tiles, to: copy, tileType: archive.header.tileType, tileCompression: archive.header.tileCompression,
                                              metadata: JSONObject([("name", .string(archive.name))]), bounds: archive.bounds, center: archive.center)
        })
    }
    let reread = try PMTiles(path: copy)
    for tile in tiles where try reread.tile(z: tile.z, x: tile.x, y: tile.y) != tile.bytes {
        throw BenchError(description: "tile \(tile.z)/\(tile.x)/\(tile.y) differs in the written archive")
    }
    func g(_ v: Double) -> String { String(format: "%.6g", v) }
    return "PMTILES id=P1 impl=vltava tiles=\(addresses.count) open_s=\(g(open)) read_s=\(g(best)) tiles_per_s=\(g(Double(addresses.count) / best)) "
        + "bytes=\(bytes) write_s=\(g(bestWrite)) written_bytes=\(summary?.fileBytes ?? 0) leaves=\(summary?.leafDirectories ?? 0)"
}
