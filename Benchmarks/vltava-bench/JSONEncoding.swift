// J1: the 57 Prague districts as a GeoJSON FeatureCollection (geometry and properties), encoded
//   tree:   the old path: a JSONValue tree per feature (one .double per coordinate, as
//           GeoJSON.encode built it before JSONWriter), then serialised;
//   writer: JSONWriter straight from the flat coordinate arrays.
// Both must give the same bytes. Not a shared workload; it prints its own lines:
//   JSON id=J1 path=… mb_s=… allocs_per_feature=… alloc_bytes_per_feature=… bytes=… features=57
// mb_s: output bytes (10^6) per second, best of 5 rounds. allocs_per_feature: malloc, calloc
// and realloc calls counted by Benchmarks/CMallocCount (a real per-call count, not mallinfo),
// over one encoding of the collection, divided by 57; alloc_bytes_per_feature: the bytes
// those calls asked for. Run from the repository root (it reads Fixtures/).

import CMallocCount
import Foundation
import Geometry
import Support

func runJSONEncoding() throws -> String {
    let path = FileManager.default.currentDirectoryPath + "/Fixtures/prague/districts.wgs84.geojson"
    guard let data = FileManager.default.contents(atPath: path) else { throw BenchError(description: "cannot read \(path) (run from the repository root)") }
    let features = try GeoJSON.parseDocument([UInt8](data)).features
    guard features.count == 57 else { throw BenchError(description: "expected 57 districts, found \(features.count)") }

    let tree = encodeAsTree(features)
    let writer = encodeWithWriter(features)
    guard tree == writer else { throw BenchError(description: "the two paths wrote different bytes") }
    // The counter must see Swift's allocations, or the figures below would be zeros, not facts.
    // (The arrays are kept so the optimiser cannot put them on the stack.)
    let before = vltava_malloc_calls()
    let kept = (0..<100).map { [UInt8](repeating: 0, count: 64 + $0) }
    let counting = vltava_malloc_calls() - before >= UInt64(kept.count)

    let iterations = ProcessInfo.processInfo.environment["VLTAVA_J1_ITERATIONS"].flatMap { Int($0) } ?? 50
    var lines: [String] = []
    for (name, encode) in [("tree", encodeAsTree), ("writer", encodeWithWriter)] as [(String, ([Feature]) -> [UInt8])] {
        // Output sizes are summed and checked, so no encoding can be optimised away.
        var written = 0
        let calls = vltava_malloc_calls(), requested = vltava_malloc_bytes()
        written += encode(features).count
        let allocs = Double(vltava_malloc_calls() - calls) / Double(features.count)
        let allocBytes = Double(vltava_malloc_bytes() - requested) / Double(features.count)
        var best = Double.infinity
        for _ in 0..<5 {
            best = min(best, seconds { for _ in 0..<iterations { written += encode(features).count } })
        }
        guard written == tree.count * (1 + 5 * iterations) else { throw BenchError(description: "\(name): wrote \(written) bytes") }
        let mbs = Double(tree.count * iterations) / best / 1e6
        lines.append(String(format: "JSON id=J1 path=%@ mb_s=%.1f allocs_per_feature=%@ alloc_bytes_per_feature=%@ bytes=%d features=%d",
                            name, mbs, counting ? String(format: "%.1f", allocs) : "n/a",
                            counting ? String(format: "%.0f", allocBytes) : "n/a", tree.count, features.count))
    }
    return lines.joined(separator: "\n")
}

private func encodeWithWriter(_ features: [Feature]) -> [UInt8] {
    var w = JSONWriter()
    w.beginObject()
    w.key("type")
    w.string("FeatureCollection")
    w.key("features")
    w.beginArray()
    for feature in features {
        w.beginObject()
        w.key("type")
        w.string("Feature")
        switch feature.id {
        case .integer(let i)?: w.key("id"); w.integer(i)
        case .string(let s)?: w.key("id"); w.string(s)
        case nil: break
        }
        w.key("geometry")
        if let g = feature.geometry { w.geometry(g) } else { w.null() }
        w.key("properties")
        w.beginObject()
        for (name, value) in feature.properties {
            w.key(name)
            switch value {
            case .null: w.null()
            case .bool(let b): w.bool(b)
            case .integer(let i): w.integer(i)
            case .real(let d): w.number(d)
            case .text(let s): w.string(s)
            case .json: w.value(GeoJSON.json(value))
            }
        }
        w.endObject()
        w.endObject()
    }
    w.endArray()
    w.endObject()
    return w.bytes
}

/// The old path, kept here so "before" stays measurable: GeoJSON.encode(feature) as it was when
/// it built the geometry as a JSONValue tree, one .double per coordinate.
private func encodeAsTree(_ features: [Feature]) -> [UInt8] {
    func tree(_ geometry: Geometry) -> JSONValue {
        func positions(_ flat: [Double]) -> JSONValue {
            var items: [JSONValue] = []
            items.reserveCapacity(flat.count / 2)
            var i = 0
            while i + 1 < flat.count {
                items.append(.array([.double(flat[i]), .double(flat[i + 1])]))
                i += 2
            }
            return .array(items)
        }
        func rings(_ polygon: Polygon) -> JSONValue {
            .array((0..<polygon.ringCount).map { positions(Array(polygon.ring($0))) })
        }
        let type: JSONValue = .string(geometry.typeName)
        switch geometry {
        case .point(let p):
            return .object(JSONObject([("type", type), ("coordinates", .array([.double(p.lon), .double(p.lat)]))]))
        case .lineString(let l):
            return .object(JSONObject([("type", type), ("coordinates", positions(l.coordinates))]))
        case .multiPoint(let m):
            return .object(JSONObject([("type", type), ("coordinates", positions(m.coordinates))]))
        case .polygon(let p):
            return .object(JSONObject([("type", type), ("coordinates", rings(p))]))
        case .multiLineString(let m):
            let lines: [JSONValue] = (0..<m.lineCount).map { positions(m.line($0).coordinates) }
            return .object(JSONObject([("type", type), ("coordinates", .array(lines))]))
        case .multiPolygon(let m):
            return .object(JSONObject([("type", type), ("coordinates", .array(m.polygons.map(rings)))]))
        case .collection(let parts):
            return .object(JSONObject([("type", type), ("geometries", .array(parts.map(tree)))]))
        }
    }
    let items: [JSONValue] = features.map { feature in
        var object = JSONObject()
        object["type"] = .string("Feature")
        switch feature.id {
        case .integer(let i)?: object["id"] = .integer(i)
        case .string(let s)?: object["id"] = .string(s)
        case nil: break
        }
        object["geometry"] = feature.geometry.map(tree) ?? .null
        var properties = JSONObject()
        for (name, value) in feature.properties { properties[name] = GeoJSON.json(value) }
        object["properties"] = .object(properties)
        return .object(object)
    }
    return JSONWriter.encode(.object(JSONObject([("type", .string("FeatureCollection")), ("features", .array(items))])))
}
