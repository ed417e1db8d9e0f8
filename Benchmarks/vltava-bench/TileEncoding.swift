// T1: encoding a store layer's vector tiles (`Snapshot.vectorTile`), in process, one thread:
//
//   vltava-bench tiles STORE LAYER ZMIN ZMAX TILES.csv [PASSES]
//
// lists every tile over the layer's bounds from ZMIN to ZMAX into TILES.csv (`z,x,y` lines, so
// that Benchmarks/tiles-vs-postgis.sh hands PostGIS the same tiles), encodes them all PASSES
// times (default 5) and prints the best pass:
//   TILES id=T1 impl=vltava layer=… tiles=… seconds=… tiles_per_s=… nonempty=… features=… bytes=…
// `features` counts the features of every tile (decoded after the timing), `bytes` the tiles'
// sizes: the same totals from PostGIS say both cut the same data.

import Engine
import Foundation
import VectorTiles

func runTileEncoding(_ arguments: [String]) throws -> String {
    guard arguments.count >= 5, let zMin = Int(arguments[2]), let zMax = Int(arguments[3]), (0...30).contains(zMin), zMin <= zMax, zMax <= 30 else {
        throw BenchError(description: "usage: vltava-bench tiles STORE LAYER ZMIN ZMAX TILES.csv [PASSES]")
    }
    let passes = arguments.count > 5 ? max(1, Int(arguments[5]) ?? 5) : 5
    let snapshot = try Snapshot.load(storePath: arguments[0])
    let layer = try snapshot.layer(arguments[1])
    var tiles: [(z: Int, x: Int, y: Int)] = []
    for z in zMin...zMax {
        let (x0, y0) = TileMath.tile(lon: layer.bounds.minLon, lat: layer.bounds.maxLat, zoom: z)
        let (x1, y1) = TileMath.tile(lon: layer.bounds.maxLon, lat: layer.bounds.minLat, zoom: z)
        for x in x0...x1 { for y in y0...y1 { tiles.append((z, x, y)) } }
    }
    try tiles.map { "\($0.z),\($0.x),\($0.y)\n" }.joined().write(toFile: arguments[4], atomically: true, encoding: .utf8)

    var best = Double.infinity
    var encoded: [[UInt8]] = []
    for _ in 0..<passes {
        var out: [[UInt8]] = []
        out.reserveCapacity(tiles.count)
        let time = try seconds {
            for tile in tiles { out.append(try snapshot.vectorTile(layer, z: tile.z, x: tile.x, y: tile.y)) }
        }
        best = min(best, time)
        encoded = out
    }
    var features = 0
    for bytes in encoded { features += try MVTTile(bytes: bytes).layers().reduce(0) { $0 + $1.features.count } }
    let nonEmpty = encoded.filter { !$0.isEmpty }.count
    let bytes = encoded.reduce(0) { $0 + $1.count }
    func g(_ v: Double) -> String { String(format: "%.6g", v) }
    return "TILES id=T1 impl=vltava layer=\(layer.name) tiles=\(tiles.count) seconds=\(g(best)) tiles_per_s=\(g(Double(tiles.count) / best)) "
        + "nonempty=\(nonEmpty) features=\(features) bytes=\(bytes)"
}
