// Fuzzes vector-tile decoding (Sources/VectorTiles): the stored bytes of a tile, sniffed and
// inflated as a tile set's tile is, then decoded to lon/lat features by TileDecoder (MVT,
// layered GeoJSON or TopoJSON), and, for MVT, every other way in: the lazy layer index, whole
// layers, the in-place feature walk (tags and geometry commands) and the vertex count.
// Any bytes must end in features or an error. Features that decode are encoded again
// (MVTLayerEncoder, as a tile set's GeoJSON tiles are transcoded), and the tile written must
// keep every rule of MVTConformance's encoder rules, whatever geometry came in.

import Geometry
import Support
import VectorTiles

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = FuzzSupport.bytes(start, count)
    // Two addresses: the whole world at z0 and a Prague tile at z14, so the transform is fuzzed
    // at both ends of the zoom range with the tile's own extent.
    for (z, x, y) in [(0, 0, 0), (14, 8858, 5548)] {
        guard let features = try? TileDecoder.features(of: bytes, z: z, x: x, y: y) else { break }
        var writer = JSONWriter()
        for item in features { if let geometry = item.feature.geometry { writer.geometry(geometry) } }
        var layers: [MVTLayerEncoder] = []
        for item in features {
            guard let geometry = item.feature.geometry else { continue }
            if layers.last?.name != item.layer, !layers.contains(where: { $0.name == item.layer }) {
                layers.append(MVTLayerEncoder(name: item.layer, z: z, x: x, y: y))
            }
            guard let i = layers.firstIndex(where: { $0.name == item.layer }) else { continue }
            layers[i].add(id: nil, geometry: geometry, properties: item.feature.properties)
        }
        let encoded = MVTEncoder.tile(layers)
        let problems = MVTConformance.problems(in: encoded, encoder: .init(positions: -64...4160))
        if !problems.isEmpty { FuzzSupport.fail("re-encoded tile breaks the rules: \(problems.prefix(3))") }
    }
    guard let tile = try? MVTTile(bytes: bytes) else { return 0 }
    if let layers = try? tile.layers() {
        for layer in layers {
            for feature in layer.features { _ = layer.properties(of: feature) }
        }
    }
    _ = try? tile.countFeaturesAndVertices()
    var positions: [Int64] = []
    _ = try? tile.forEachFeature { (layer, feature) throws(MVTError) in
        try feature.forEachTag { key, value in
            // What a reader of the view does with a pair: look both up, out of range or not.
            _ = layer.keys.indices.contains(key) ? layer.keys[key] : nil
            _ = layer.values.indices.contains(value) ? layer.values[value] : nil
        }
        _ = try feature.decodeGeometry(into: &positions)
    }
    return 0
}
