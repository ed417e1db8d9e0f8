// Fuzzes the snapshot's load from a GeoPackage another tool wrote (Sources/Engine/Layer.swift,
// SnapshotFile.swift, the indexes of SpatialIndex, the layer TileJSON of Tiles.swift): the
// input's coordinates are written as raw geometry blobs into a real store, past every check of
// the importers, which is then loaded as `vltava serve` loads it (in memory, or mapped from the
// snapshot file on every other input), and queried. A coordinate that is NaN, infinite or out
// of WGS 84's range (a finite 1e308 trapped the polygon index and the TileJSON zoom, issue 30)
// must leave its feature out with a warning; the load never fails and nothing traps.
//
// Input: lines of a kind and numbers (any text `Double` reads: `1e308`, `-nan`, `inf`,
// `0x1p1023`), e.g. `A 14.40 50.08 14.43 50.08 14.43 50.10`: `P lon lat` a point, `L` a line,
// `A` a polygon's ring (closed here). At most 64 lines of 64 numbers are read.

import Engine
import Foundation
import Geometry
import SQLite
@testable import Store

/// The store, made once with the importer (its three layers, catalog and schema as Vltava
/// writes them), then rewritten by each input through one connection kept open.
let path = FuzzSupport.scratchDirectory("vltava-fuzz-snapshot") + "/fuzz.gpkg"
let layers = ["points", "lines", "areas"]
nonisolated(unsafe) let writer: Database = {
    do {
        let store = try GeoPackage(path: path, mode: .readWrite)
        let seeds = [
            #"{"type":"Feature","properties":{"name":"p"},"geometry":{"type":"Point","coordinates":[14.42,50.09]}}"#,
            #"{"type":"Feature","properties":{"name":"l"},"geometry":{"type":"LineString","coordinates":[[14.42,50.09],[14.43,50.1]]}}"#,
            #"{"type":"Feature","properties":{"name":"a"},"geometry":{"type":"Polygon","coordinates":[[[14.4,50.08],[14.43,50.08],[14.43,50.1],[14.4,50.08]]]}}"#,
        ]
        for (layer, feature) in zip(layers, seeds) {
            let file = (path as NSString).deletingLastPathComponent + "/\(layer).geojson"
            try Data(#"{"type":"FeatureCollection","features":["# .utf8 + Data(feature.utf8) + Data("]}".utf8)).write(to: URL(fileURLWithPath: file))
            _ = try Importer.importFile(file, into: store, options: ImportOptions(layer: layer))
        }
        let database = try Database(path: path, mode: .readWrite)
        // The GeoPackage R-tree's triggers would index the fuzzed envelopes; Vltava never reads
        // that R-tree, and a NaN box is SQLite's constraint error, not the engine's concern.
        let triggers = try database.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        var names: [String] = []
        while try triggers.step() { names.append(triggers.text(0) ?? "") }
        for name in names { try database.execute("DROP TRIGGER \"\(name)\"") }
        return database
    } catch {
        FuzzSupport.fail("cannot create the store \(path): \(error)")
    }
}()
nonisolated(unsafe) let inserts: [Statement] = layers.map { layer in
    do { return try writer.prepare("INSERT INTO \"\(layer)\" (geom, name) VALUES (?, ?)") } catch { FuzzSupport.fail("\(layer): \(error)") }
}

/// The input's geometries by layer (0 points, 1 lines, 2 areas).
func geometries(_ bytes: [UInt8]) -> [(layer: Int, geometry: Geometry)] {
    var out: [(Int, Geometry)] = []
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n").prefix(64) {
        let words = line.split(separator: " ")
        guard let kind = words.first else { continue }
        let numbers = words.dropFirst().prefix(64).compactMap { Double($0) }
        switch kind {
        case "P" where numbers.count >= 2:
            out.append((0, .point(Point(lon: numbers[0], lat: numbers[1]))))
        case "L" where numbers.count >= 4:
            out.append((1, .lineString(LineString(coordinates: Array(numbers.prefix(numbers.count & ~1))))))
        case "A" where numbers.count >= 6:
            let ring = Array(numbers.prefix(numbers.count & ~1))
            out.append((2, .polygon(Polygon(rings: [ring + ring.prefix(2)]))))
        default:
            continue
        }
    }
    return out
}

func write(_ features: [(layer: Int, geometry: Geometry)]) {
    do {
        try writer.transaction {
            for layer in layers { try writer.execute("DELETE FROM \"\(layer)\"") }
            for (n, feature) in features.enumerated() {
                try inserts[feature.layer].run([.blob(GeoPackageBinary.encode(feature.geometry, srsID: 4326)), .text("f\(n)")])
            }
        }
    } catch {
        FuzzSupport.fail("cannot write the store: \(error)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let features = geometries(FuzzSupport.bytes(start, count))
    write(features)
    let snapshot: Snapshot
    do {
        // Odd-length inputs map the polygon layer from the snapshot file, as a large layer is.
        snapshot = try Snapshot.load(storePath: path, mappedLayerMinimumFeatures: count % 2 == 1 ? 1 : Int.max)
    } catch {
        FuzzSupport.fail("the store did not load: \(error)")
    }
    var kept = 0
    for name in layers {
        let layer: Layer
        do { layer = try snapshot.layer(name) } catch { FuzzSupport.fail("layer \(name) is missing: \(error)") }
        kept += layer.count
        let b = layer.bounds
        if !b.isEmpty, !(b.minLon >= -180 && b.maxLon <= 180 && b.minLat >= -90 && b.maxLat <= 90) {
            FuzzSupport.fail("layer \(name) holds a position out of range: \(b)")
        }
        if case .object(let doc) = snapshot.tileJSON(.layer(layer), tilesURL: "x"), case .array(let center)? = doc["center"] {
            guard case .integer(let zoom)? = center.last, Snapshot.layerTileZooms.contains(Int(zoom)) else {
                FuzzSupport.fail("layer \(name): TileJSON center \(center) has no zoom within \(Snapshot.layerTileZooms)")
            }
        }
    }
    // Every feature written is either in its layer or left out with a warning.
    let leftOut = snapshot.warnings.filter { $0.contains(" left out: ") }.count
    guard kept + leftOut == features.count else {
        FuzzSupport.fail("\(features.count) features written, \(kept) loaded and \(leftOut) left out: \(snapshot.warnings)")
    }
    // Queries at the first point written (when it is a position) and in Prague.
    var probes = [Point(lon: 14.42, lat: 50.09)]
    if let first = features.first, case .point(let p) = first.geometry, (try? Point.checked(lon: p.lon, lat: p.lat)) != nil { probes.append(p) }
    for probe in probes {
        _ = try? snapshot.containing(snapshot.layer("areas"), at: probe)
        _ = try? snapshot.nearest(snapshot.layer("points"), to: probe, k: 3)
        _ = try? snapshot.nearest(snapshot.layer("lines"), to: probe, k: 3)
    }
    return 0
}
