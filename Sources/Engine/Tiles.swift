// What the map holds: a tile set's stored tiles and their decoded features, with the same row
// limit as every other answer.

import Geometry
import VectorTiles

public typealias TileFeature = VectorTiles.TileFeature

extension Snapshot {
    /// The stored bytes of tile z/x/y (XYZ numbering), or nil when the set has none there.
    public func tileBytes(_ set: MBTiles, z: Int, x: Int, y: Int) throws(EngineError) -> [UInt8]? {
        do {
            return try set.tile(z: z, x: x, y: y)
        } catch {
            throw .tiles(error.description)
        }
    }

    /// The decoded features of tile z/x/y (optionally one layer's), or nil when there is no
    /// such tile.
    public func tileFeatures(_ set: MBTiles, z: Int, x: Int, y: Int, layer: String? = nil) throws(EngineError) -> [TileFeature]? {
        let found: [TileFeature]?
        do {
            found = try set.features(z: z, x: x, y: y, layer: layer)
        } catch {
            throw .tiles("tile \(z)/\(x)/\(y): \(error)")
        }
        return found
    }

    /// The features at a point at a zoom: polygons containing it, points and lines within 8
    /// pixels of it.
    public func tileFeatures(_ set: MBTiles, at point: Point, zoom: Int) throws(EngineError) -> [TileFeature] {
        try Check.position(point)
        guard (0...30).contains(zoom) else { throw .invalidArgument(parameter: "zoom", message: "must be between 0 and 30, got \(zoom)") }
        do {
            return try set.features(atLon: point.lon, lat: point.lat, zoom: zoom)
        } catch {
            throw .tiles("\(error)")
        }
    }
}
