// W1–W3 (point in polygon) and W4–W5 (k nearest stations) on the engine's own indexes.

import Foundation
import Geometry
import Routing
import SpatialIndex
import VectorTiles
import Wire

/// W1–W3: the smallest index of a polygon containing each point, or -1. The layer is streamed
/// feature by feature into the index builder and the points are read in chunks, so the peak
/// memory is the index itself (W3: 3.48 M vertices), not the 100 MB GeoJSON text or its tree.
/// build_s counts the builder's work only, not JSON parsing, as the anchors count theirs.
func runPointInPolygon(workdir: String, id: String, folder: String) throws -> String {
    let dir = "\(workdir)/\(folder)"
    var builder = PolygonIndex.Builder()
    var build = 0.0
    try GeoJSONStream.read(path: "\(dir)/polygons.geojson") { _, feature in
        let geometry = feature.geometry ?? .collection([])
        build += try seconds { try builder.add(geometry) }
    }
    var index: PolygonIndex?
    build += seconds { index = builder.build() }
    guard let index else { throw BenchError(description: "no index") }
    // Answers go into the checksum chunk by chunk (outside the timed part), not into memory.
    var hash = SHA256()
    var answers = [Int32](repeating: -1, count: 32_768)
    var total = 0
    var query = 0.0
    try forEachChunk(of: "\(dir)/points.lonlat.f64") { points in
        let n = points.count / 2
        // Through buffer pointers, as W4's loop does: an array captured by the closure pays a
        // uniqueness check per store, the harness's cost rather than the index's.
        query += answers.withUnsafeMutableBufferPointer { out in
            points.withUnsafeBufferPointer { xy in
                seconds {
                    for i in 0..<n { out[i] = Int32(truncatingIfNeeded: index.firstContainingIndex(lon: xy[2 * i], lat: xy[2 * i + 1])) }
                }
            }
        }
        for i in 0..<n { hash.update(answers[i]) }
        total += n
    }
    return resultLine(id: id, impl: "vltava-polygon-index", build: build, query: query, queries: total, checksum: hash.finish())
}

/// W4–W5: the 3 nearest stations of each query, nearest first. build_s counts the index's
/// construction from the positions (unit vectors and tree), as the anchors count cKDTree's.
func runNearest(workdir: String, id: String, folder: String) throws -> String {
    let dir = "\(workdir)/\(folder)"
    let stations = try readFloat64("\(dir)/stations.lonlat.f64")
    let queries = try readFloat64("\(dir)/queries.lonlat.f64")
    let n = queries.count / 2
    let k = 3
    var index: PointIndex?
    let build = try seconds {
        index = try PointIndex(lons: stride(from: 0, to: stations.count, by: 2).map { stations[$0] },
                           lats: stride(from: 1, to: stations.count, by: 2).map { stations[$0] })
    }
    guard let index else { throw BenchError(description: "no index") }
    var answers = [Int32](repeating: -1, count: n * k)
    // All queries in one call, as cKDTree's `query` takes them (the index sorts a large batch
    // by position first; see PointIndex.nearestIndices(k:queries:into:)).
    let query = seconds {
        answers.withUnsafeMutableBufferPointer { all in
            queries.withUnsafeBufferPointer { queries in index.nearestIndices(k: k, queries: queries, into: all) }
        }
    }
    return resultLine(id: id, impl: "vltava-point-index", build: build, query: query, queries: n, checksum: checksum(answers))
}

/// W8: decode every tile of both MBTiles files, as the anchors do: inflate, then every
/// feature of every layer: its tags resolved against the layer's keys and values, and its
/// geometry decoded to tile-coordinate positions (MoveTo/LineTo; ClosePath adds none).
func runDecodeTiles(workdir: String) throws -> String {
    let dir = "\(workdir)/W8-mvt-decode"
    var blobs: [[UInt8]] = []
    for file in ["andorra-z14.mbtiles", "world_cities.mbtiles"] {
        let set = try MBTiles(path: "\(dir)/\(file)")
        for (z, x, y) in try set.tileAddresses() {
            guard let bytes = try set.tile(z: z, x: x, y: y) else { continue }
            blobs.append(bytes)
        }
    }
    var features = 0, vertices = 0, tags = 0
    let inflater = try Inflater()
    var positions: [Int64] = []
    positions.reserveCapacity(4096)
    let query = try seconds {
        for blob in blobs {
            let raw = blob.starts(with: [0x1F, 0x8B]) ? try inflater.inflate(blob, limit: Decompression.defaultLimit) : blob
            try MVTTile(bytes: raw).forEachFeature { layer, feature throws(MVTError) in
                features += 1
                vertices += try feature.decodeGeometry(into: &positions)
                try feature.forEachTag { key, value in
                    if key < layer.keys.count && value < layer.values.count { tags += 1 }
                }
            }
        }
    }
    guard tags > 0 else { throw BenchError(description: "no tags decoded") }
    return resultLine(id: "W8", impl: "vltava-mvt", build: 0, query: query, queries: blobs.count,
                      checksum: "tiles=\(blobs.count);features=\(features);vertices=\(vertices)")
}

