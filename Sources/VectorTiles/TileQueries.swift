// Queries over a tile set: a tile's features in lon/lat whatever its encoding (MVT, Tilezen's
// layered GeoJSON, TopoJSON), and the features at a point at a zoom.

import Foundation
import Geometry
import Support

/// A feature of a tile, with the layer it came from.
public struct TileFeature: Sendable, Equatable {
    public var layer: String
    public var feature: Feature
}

public enum TileDecoder {
    /// The features of a tile's stored bytes, in lon/lat; only `layer` when given.
    public static func features(of stored: [UInt8], z: Int, x: Int, y: Int, layer: String? = nil) throws(MVTError) -> [TileFeature] {
        let encoding = TileEncoding.detect(stored)
        var bytes = stored
        if encoding.compression != .none {
            do {
                bytes = try Decompression.inflate(stored)
            } catch {
                throw MVTError(message: error.description)
            }
        }
        switch encoding.format {
        case .mvt:
            let tile = try MVTTile(bytes: bytes)
            var out: [TileFeature] = []
            for name in tile.layerNames where layer == nil || name == layer {
                guard let decoded = try tile.layer(named: name) else { continue }
                for feature in try decoded.features(z: z, x: x, y: y) { out.append(TileFeature(layer: name, feature: feature)) }
            }
            return out
        case .geojson:
            return try layeredGeoJSON(bytes, layer: layer)
        case .topojson:
            return try TopoJSON.features(bytes, layer: layer)
        case .png, .jpeg, .webp:
            throw MVTError(message: "a raster tile (\(encoding.format.rawValue)) has no features")
        case .unknown:
            throw MVTError(message: "unrecognised tile encoding (not MVT, GeoJSON, TopoJSON or a known image)")
        }
    }

    /// Tilezen's layered GeoJSON: {"water": FeatureCollection, "roads": …}, or a plain
    /// FeatureCollection (one layer named "features").
    static func layeredGeoJSON(_ bytes: [UInt8], layer: String?) throws(MVTError) -> [TileFeature] {
        let root: JSONValue
        do {
            root = try JSON.parse(bytes)
        } catch {
            throw MVTError(message: "GeoJSON tile: \(error)")
        }
        guard case .object(let object) = root else { throw MVTError(message: "GeoJSON tile: not an object") }
        var collections: [(String, JSONValue)] = []
        if object["type"]?.string == "FeatureCollection" {
            collections = [("features", root)]
        } else {
            collections = object.map { ($0.0, $0.1) }
        }
        var out: [TileFeature] = []
        for (name, collection) in collections where layer == nil || name == layer {
            guard case .object(let members) = collection, case .array(let items)? = members["features"] else { continue }
            for (i, item) in items.enumerated() {
                do {
                    out.append(TileFeature(layer: name, feature: try GeoJSON.feature(from: item)))
                } catch {
                    throw MVTError(message: "GeoJSON tile, layer \(name), feature \(i): \(error)")
                }
            }
        }
        return out
    }
}

extension TileArchive {
    /// The features of tile z/x/y in lon/lat, or nil when the set has no such tile.
    public func features(z: Int, x: Int, y: Int, layer: String? = nil) throws -> [TileFeature]? {
        guard let stored = try tile(z: z, x: x, y: y) else { return nil }
        return try TileDecoder.features(of: stored, z: z, x: x, y: y, layer: layer)
    }

    /// The features at a point at a zoom: polygons that contain it, and points and lines within
    /// `tolerancePixels` (of a 256-pixel tile) of it. Empty when the set has no tile there.
    public func features(atLon lon: Double, lat: Double, zoom: Int, tolerancePixels: Double = 8, layer: String? = nil) throws -> [TileFeature] {
        let (x, y) = TileMath.tile(lon: lon, lat: lat, zoom: zoom)
        guard let all = try features(z: zoom, x: x, y: y, layer: layer) else { return [] }
        // A pixel's ground size at this zoom and latitude (Web Mercator, 256-px tiles).
        let metresPerPixel = 2 * Double.pi * 6_378_137 * cos(lat * .pi / 180) / (256 * pow(2, Double(zoom)))
        let tolerance = tolerancePixels * metresPerPixel
        return all.filter { item in
            guard let geometry = item.feature.geometry else { return false }
            // Polygons by the engine's boundary rule, not "distance 0": a point on the edge two
            // polygons share is at distance 0 from both but inside only one.
            if geometry.isPolygonal { return geometry.contains(lon: lon, lat: lat) }
            return geometry.distance(toLon: lon, lat: lat) <= tolerance
        }
    }
}

public enum TileMath {
    /// The XYZ tile containing a lon/lat point at a zoom (Web Mercator).
    public static func tile(lon: Double, lat: Double, zoom: Int) -> (x: Int, y: Int) {
        let n = Double(1 << max(0, min(zoom, 30)))
        // Clamped first, so that any Double (a NaN, 1e308) gives a tile rather than trapping in
        // the conversion to Int: `min`/`max` turn NaN into the bound.
        let clampedLon = max(-180, min(180, lon))
        let clampedLat = max(-85.05112878, min(85.05112878, lat))
        let x = Int(((clampedLon + 180) / 360 * n).rounded(.down))
        let phi = clampedLat * .pi / 180
        let y = Int(((1 - log(tan(phi) + 1 / cos(phi)) / .pi) / 2 * n).rounded(.down))
        let last = Int(n) - 1
        return (max(0, min(last, x)), max(0, min(last, y)))
    }
}

/// TopoJSON (the 2013 spec): shared arcs, optionally quantized and delta-encoded with a
/// transform; geometry objects reference arcs by index (~i for reversed).
enum TopoJSON {
    static func features(_ bytes: [UInt8], layer: String?) throws(MVTError) -> [TileFeature] {
        let root: JSONValue
        do {
            root = try JSON.parse(bytes)
        } catch {
            throw MVTError(message: "TopoJSON tile: \(error)")
        }
        guard case .object(let topology) = root, case .object(let objects)? = topology["objects"], case .array(let rawArcs)? = topology["arcs"] else {
            throw MVTError(message: "TopoJSON tile: no objects or arcs")
        }
        var scale = (1.0, 1.0), translate = (0.0, 0.0), quantized = false
        if case .object(let transform)? = topology["transform"],
           case .array(let s)? = transform["scale"], case .array(let t)? = transform["translate"], s.count == 2, t.count == 2,
           let sx = s[0].number, let sy = s[1].number, let tx = t[0].number, let ty = t[1].number {
            scale = (sx, sy)
            translate = (tx, ty)
            quantized = true
        }
        func position(_ value: JSONValue) -> (Double, Double)? {
            guard case .array(let p) = value, p.count >= 2, let a = p[0].number, let b = p[1].number else { return nil }
            return (a, b)
        }
        // Decode every arc once into lon/lat.
        var arcs: [[Double]] = []
        for raw in rawArcs {
            guard case .array(let points) = raw else { throw MVTError(message: "TopoJSON tile: an arc is not an array") }
            var flat: [Double] = []
            var x = 0.0, y = 0.0
            for point in points {
                guard let (a, b) = position(point) else { throw MVTError(message: "TopoJSON tile: a bad arc position") }
                if quantized {
                    x += a
                    y += b
                    flat += [x * scale.0 + translate.0, y * scale.1 + translate.1]
                } else {
                    flat += [a, b]
                }
            }
            arcs.append(flat)
        }
        func arc(_ index: Int) throws(MVTError) -> [Double] {
            let i = index >= 0 ? index : ~index
            guard i < arcs.count else { throw MVTError(message: "TopoJSON tile: arc \(i) of \(arcs.count)") }
            if index >= 0 { return arcs[i] }
            var reversed: [Double] = []
            var k = arcs[i].count - 2
            while k >= 0 {
                reversed += [arcs[i][k], arcs[i][k + 1]]
                k -= 2
            }
            return reversed
        }
        /// Arcs joined into one line: each arc after the first drops its shared first position.
        func line(_ value: JSONValue) throws(MVTError) -> [Double] {
            guard case .array(let indices) = value else { throw MVTError(message: "TopoJSON tile: arcs are not an array") }
            var flat: [Double] = []
            for item in indices {
                guard case .integer(let index) = item else { throw MVTError(message: "TopoJSON tile: an arc index is not an integer") }
                let coordinates = try arc(Int(index))
                flat += flat.isEmpty ? coordinates : Array(coordinates.dropFirst(2))
            }
            return flat
        }
        func lines(_ value: JSONValue) throws(MVTError) -> [[Double]] {
            guard case .array(let items) = value else { throw MVTError(message: "TopoJSON tile: arcs are not an array") }
            var out: [[Double]] = []
            for item in items { out.append(try line(item)) }
            return out
        }
        func point(_ value: JSONValue) -> [Double]? {
            guard let (a, b) = position(value) else { return nil }
            return quantized ? [a * scale.0 + translate.0, b * scale.1 + translate.1] : [a, b]
        }
        func geometry(_ object: JSONObject) throws(MVTError) -> Geometry? {
            let arcsValue = object["arcs"] ?? .null
            switch object["type"]?.string {
            case "Point":
                guard let p = object["coordinates"].flatMap(point) else { return nil }
                return .point(Point(lon: p[0], lat: p[1]))
            case "MultiPoint":
                guard case .array(let items)? = object["coordinates"] else { return nil }
                return .multiPoint(MultiPoint(coordinates: items.compactMap(point).flatMap { $0 }))
            case "LineString": return .lineString(LineString(coordinates: try line(arcsValue)))
            case "MultiLineString": return .multiLineString(MultiLineString(lines: try lines(arcsValue)))
            case "Polygon": return .polygon(Polygon(rings: try lines(arcsValue)))
            case "MultiPolygon":
                guard case .array(let items) = arcsValue else { return nil }
                var polygons: [Polygon] = []
                for item in items { polygons.append(Polygon(rings: try lines(item))) }
                return .multiPolygon(MultiPolygon(polygons: polygons))
            default: return nil
            }
        }
        var out: [TileFeature] = []
        for (name, value) in objects where layer == nil || name == layer {
            guard case .object(let object) = value else { continue }
            var members: [JSONValue] = [value]
            if object["type"]?.string == "GeometryCollection", case .array(let items)? = object["geometries"] { members = items }
            for member in members {
                guard case .object(let m) = member, let g = try geometry(m) else { continue }
                var properties = Attributes()
                if case .object(let p)? = m["properties"] { for (k, v) in p { properties[k] = GeoJSON.attribute(v) } }
                let id: FeatureID? = switch m["id"] {
                case .integer(let i)?: .integer(i)
                case .string(let s)?: .string(s)
                default: nil
                }
                out.append(TileFeature(layer: name, feature: Feature(id: id, geometry: g, properties: properties)))
            }
        }
        return out
    }
}
