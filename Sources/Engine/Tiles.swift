// What the map holds: a tile set's stored tiles and their decoded features, with the same row
// limit as every other answer.

import Foundation
import Geometry
import Support
import VectorTiles

public typealias TileFeature = VectorTiles.TileFeature

extension Snapshot {
    /// The stored bytes of tile z/x/y (XYZ numbering), or nil when the set has none there.
    public func tileBytes(_ set: any TileArchive, z: Int, x: Int, y: Int) throws(EngineError) -> [UInt8]? {
        do {
            return try set.tile(z: z, x: x, y: y)
        } catch {
            throw .tiles("\(error)")
        }
    }

    /// The decoded features of tile z/x/y (optionally one layer's), or nil when there is no
    /// such tile.
    public func tileFeatures(_ set: any TileArchive, z: Int, x: Int, y: Int, layer: String? = nil) throws(EngineError) -> [TileFeature]? {
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
    public func tileFeatures(_ set: any TileArchive, at point: Point, zoom: Int) throws(EngineError) -> [TileFeature] {
        try Check.position(point)
        guard (0...30).contains(zoom) else { throw .invalidArgument(parameter: "zoom", message: "must be between 0 and 30, got \(zoom)") }
        do {
            return try set.features(atLon: point.lon, lat: point.lat, zoom: zoom)
        } catch {
            throw .tiles("\(error)")
        }
    }
}

// MARK: - Tiles of any source, in the form asked for

/// What a name under `/v1/tiles/` stands for: a registered tile set, or a feature layer of the
/// store, cut into vector tiles on request.
public enum TileSource: Sendable {
    case tileSet(name: String, any TileArchive)
    case layer(Layer)

    public var name: String {
        switch self {
        case .tileSet(let name, _): name
        case .layer(let layer): layer.name
        }
    }

    /// Whether its tiles are images (a raster tile set).
    public var isRaster: Bool {
        if case .tileSet(_, let set) = self { return set.contents.isRaster }
        return false
    }
}

/// The form a tile is asked for in.
public enum TileForm: String, Sendable {
    /// What a map client wants: images as stored, vector tiles as MVT (`mvt`).
    case automatic
    /// Mapbox Vector Tile: stored MVT as it is (compressed or not), GeoJSON and TopoJSON tiles
    /// transcoded, a layer's features encoded.
    case mvt
    /// A GeoJSON FeatureCollection of the tile's features, each with its tile layer in the
    /// member `tile_layer` beside its properties.
    case geoJSON
}

/// A tile's bytes and what they are (their compression and format).
public struct TileBody: Sendable {
    public var bytes: [UInt8]
    public var encoding: TileEncoding
}

extension Snapshot {
    /// The zooms a layer's TileJSON announces. Any zoom of 0–30 is served; at z18 a tile unit
    /// is under 4 cm, finer than the data, so clients zoom the z18 tiles beyond.
    public static let layerTileZooms = 0...18

    /// The name a tile's GeoJSON form gives each feature's tile layer (a Feature member beside
    /// `properties`) and its rows in the language. Not `layer`: OSM features carry their own
    /// `layer` tag (bridges, tunnels), which stays as it is.
    public static let tileLayerProperty = "tile_layer"

    /// The tile set of that name, else the feature layer of that name (case-insensitive), else
    /// an error suggesting the closest of both.
    public func tileSource(_ name: String) throws(EngineError) -> TileSource {
        if let set = tileSets[name] { return .tileSet(name: name, set) }
        if let reason = unavailableTileSets[name] { throw .tileSetUnavailable(name, reason: reason) }
        if let layer = layersByName[name.lowercased()] {
            guard layer.family != .table else {
                throw .unsupportedGeometry(layer: layer.name, operation: "vector tiles", needs: "geometries", has: "none (it is a table)")
            }
            return .layer(layer)
        }
        throw .unknownTileSet(name, known: tileSets.keys.sorted() + layers.filter { $0.family != .table }.map(\.name))
    }

    /// Tile z/x/y of a feature layer as MVT: the features whose boxes meet the tile and its
    /// buffer (through the layer's R-tree, in load order), clipped, simplified and encoded by
    /// `MVTLayerEncoder`; the tile's one layer is named after the store layer, each feature's
    /// id is its fid and its attributes are its columns. Empty when nothing is there.
    public func vectorTile(_ layer: Layer, z: Int, x: Int, y: Int, options: MVTEncodingOptions = MVTEncodingOptions(),
                           deadline: Deadline = .none) throws(EngineError) -> [UInt8] {
        try Check.tile(z: z, x: x, y: y)
        try deadline.check()
        guard let tree = layer.tree else {
            throw .unsupportedGeometry(layer: layer.name, operation: "vector tiles", needs: "geometries", has: "none (it is a table)")
        }
        var encoder = MVTLayerEncoder(name: layer.name, z: z, x: x, y: y, options: options)
        var candidates: [Int] = []
        _ = tree.search(encoder.searchBox) { candidates.append($0) }
        layer.sortInLoadOrder(&candidates)
        for (n, index) in candidates.enumerated() {
            if n & 1023 == 1023 { try deadline.check() }
            guard let geometry = layer.geometries[index] else { continue }
            encoder.add(id: layer.fids[index], geometry: geometry, properties: layer.properties[index])
            if encoder.featureCount > limits.maxRows { throw .tooManyRows(count: limits.maxRows + 1, limit: limits.maxRows) }
        }
        let bytes = MVTEncoder.tile([encoder])
        guard bytes.count <= limits.maxResponseBytes else { throw .responseTooLarge(limit: limits.maxResponseBytes) }
        return bytes
    }

    /// Tile z/x/y of a source in a form, or nil when a tile set has no such tile. Images have
    /// only their stored form.
    public func tile(_ source: TileSource, z: Int, x: Int, y: Int, form: TileForm, deadline: Deadline = .none) throws(EngineError) -> TileBody? {
        try Check.tile(z: z, x: x, y: y)
        let plainMVT = TileEncoding(compression: .none, format: .mvt)
        switch source {
        case .layer(let layer):
            let mvt = try vectorTile(layer, z: z, x: x, y: y, deadline: deadline)
            guard form == .geoJSON else { return TileBody(bytes: mvt, encoding: plainMVT) }
            return TileBody(bytes: try geoJSON(mvtFeatures(mvt, z: z, x: x, y: y)), encoding: TileEncoding(compression: .none, format: .geojson))
        case .tileSet(_, let set):
            guard let stored = try tileBytes(set, z: z, x: x, y: y) else { return nil }
            let encoding = TileEncoding.detect(stored)
            // Images, and bytes of no format we know, go out only as they are.
            if encoding.format.isRaster || encoding.format == .unknown {
                guard form == .automatic else {
                    let what = encoding.format == .unknown ? "of an unknown format" : "an image (\(encoding.format.rawValue))"
                    throw .invalidArgument(parameter: "format", message: "tile \(z)/\(x)/\(y) of '\(source.name)' is \(what): it has no \(form == .mvt ? "vector tile" : "GeoJSON") form")
                }
                return TileBody(bytes: stored, encoding: encoding)
            }
            if encoding.format == .mvt && form != .geoJSON { return TileBody(bytes: stored, encoding: encoding) }
            let key = TranscodedTiles.Key(set: source.name, z: z, x: x, y: y)
            if form != .geoJSON, let kept = transcodedTiles[key] { return TileBody(bytes: kept, encoding: plainMVT) }
            let features: [TileFeature]
            do {
                features = try TileDecoder.features(of: stored, z: z, x: x, y: y)
            } catch {
                throw .tiles("tile \(z)/\(x)/\(y) of '\(source.name)': \(error)")
            }
            guard features.count <= limits.maxRows else { throw .tooManyRows(count: features.count, limit: limits.maxRows) }
            if form == .geoJSON {
                return TileBody(bytes: try geoJSON(features), encoding: TileEncoding(compression: .none, format: .geojson))
            }
            let mvt = Snapshot.transcode(features, z: z, x: x, y: y)
            transcodedTiles[key] = mvt
            return TileBody(bytes: mvt, encoding: plainMVT)
        }
    }

    /// Decoded features (of a GeoJSON or TopoJSON tile) as MVT, one layer per tile layer in
    /// the order they first appear.
    static func transcode(_ features: [TileFeature], z: Int, x: Int, y: Int) -> [UInt8] {
        var encoders: [MVTLayerEncoder] = []
        var position: [String: Int] = [:]
        for item in features {
            guard let geometry = item.feature.geometry else { continue }
            let i = position[item.layer] ?? encoders.count
            if i == encoders.count {
                position[item.layer] = i
                encoders.append(MVTLayerEncoder(name: item.layer, z: z, x: x, y: y))
            }
            let id: Int64? = if case .integer(let n)? = item.feature.id { n } else { nil }
            encoders[i].add(id: id, geometry: geometry, properties: item.feature.properties)
        }
        return MVTEncoder.tile(encoders)
    }

    /// An MVT tile's features in lon/lat (the encoder's own output, so an error is a bug).
    func mvtFeatures(_ bytes: [UInt8], z: Int, x: Int, y: Int) throws(EngineError) -> [TileFeature] {
        do {
            return try TileDecoder.features(of: bytes, z: z, x: x, y: y)
        } catch {
            throw .tiles("tile \(z)/\(x)/\(y): \(error)")
        }
    }

    func geoJSON(_ features: [TileFeature]) throws(EngineError) -> [UInt8] {
        var w = JSONWriter(reservingCapacity: 4096)
        Output.tileCollection(&w, features)
        guard w.bytes.count <= limits.maxResponseBytes else { throw .responseTooLarge(limit: limits.maxResponseBytes) }
        return w.bytes
    }

    /// TileJSON 3.0.0 for a source, with `tilesURL` as its URL template. A layer's describes
    /// its one vector layer (fields typed `String`, `Number` or `Boolean` from its columns),
    /// its bounds, a center in the middle of them and `layerTileZooms`.
    public func tileJSON(_ source: TileSource, tilesURL: String) -> JSONValue {
        switch source {
        case .tileSet(_, let set):
            return set.tileJSON(tilesURL: tilesURL)
        case .layer(let layer):
            let zooms = Snapshot.layerTileZooms
            var fields = JSONObject()
            for column in layer.info.columns where column.name != layer.info.geometryColumn {
                let type = switch column.type {
                case .integer, .real: column.isJSON ? "String" : "Number"
                case .boolean: column.isJSON ? "String" : "Boolean"
                case .text, .dateTime, .blob: "String"
                }
                fields[column.name] = .string(type)
            }
            var object = JSONObject()
            object["tilejson"] = .string("3.0.0")
            object["name"] = .string(layer.name)
            object["tiles"] = .array([.string(tilesURL)])
            object["vector_layers"] = .array([.object(JSONObject([("id", .string(layer.name)), ("fields", .object(fields)),
                                                                  ("minzoom", .integer(Int64(zooms.lowerBound))), ("maxzoom", .integer(Int64(zooms.upperBound)))]))])
            object["minzoom"] = .integer(Int64(zooms.lowerBound))
            object["maxzoom"] = .integer(Int64(zooms.upperBound))
            // When the layer's data last changed (an extra key, as TileJSON 3.0 allows): a
            // client that caches the tiles knows when to look again.
            if let lastChange = layer.info.lastChange { object["updated"] = .string(lastChange) }
            let b = layer.bounds
            // A loaded layer's features are within ±180/±90 (`Layer.refusal`); a layer kept in
            // the database has the extent the database gave. An empty layer has no bounds and
            // so no center.
            if !b.isEmpty && b.isFinite {
                object["bounds"] = .array([.double(b.minLon), .double(b.minLat), .double(b.maxLon), .double(b.maxLat)])
                // The zoom at which the bounds fit one 256-pixel tile's width, within the zooms;
                // clamped as a Double, since a span past 360° (or an overflow to infinity) has a
                // log below 0 or of -infinity, which no Int holds; a NaN bound (a database's extent
                // is not checked at load) takes the lowest zoom.
                let span = max(b.maxLon - b.minLon, 1e-9)
                let fit = log2(360 / span).rounded(.down)
                let zoom = fit.isNaN ? zooms.lowerBound : Int(min(max(fit, Double(zooms.lowerBound)), Double(zooms.upperBound)))
                object["center"] = .array([.double((b.minLon + b.maxLon) / 2), .double((b.minLat + b.maxLat) / 2), .integer(Int64(zoom))])
            }
            return .object(object)
        }
    }
}

extension Check {
    /// A tile address: z 0–30, x and y below 2^z.
    static func tile(z: Int, x: Int, y: Int) throws(EngineError) {
        guard (0...30).contains(z) else { throw .invalidArgument(parameter: "z", message: "must be between 0 and 30, got \(z)") }
        let limit = 1 << z
        guard (0..<limit).contains(x) else { throw .invalidArgument(parameter: "x", message: "must be below \(limit), got \(x)") }
        guard (0..<limit).contains(y) else { throw .invalidArgument(parameter: "y", message: "must be below \(limit), got \(y)") }
    }
}

/// Transcoded tiles by set and address, at most `capacity` bytes of them; past that the oldest
/// go first. Shared by the requests of one snapshot.
final class TranscodedTiles: Sendable {
    struct Key: Hashable, Sendable {
        var set: String
        var z: Int, x: Int, y: Int
    }

    /// 64 MB: about 8,000 zoo tiles, every tile of its offline map to z18.
    let capacity = 64 << 20
    private let state = Locked<(tiles: [Key: [UInt8]], order: [Key], bytes: Int)>(([:], [], 0))

    subscript(key: Key) -> [UInt8]? {
        get { state.withLock { $0.tiles[key] } }
        set {
            guard let newValue, newValue.count <= capacity else { return }
            state.withLock { cache in
                guard cache.tiles[key] == nil else { return }
                cache.tiles[key] = newValue
                cache.order.append(key)
                cache.bytes += newValue.count
                while cache.bytes > capacity, !cache.order.isEmpty {
                    let oldest = cache.order.removeFirst()
                    cache.bytes -= cache.tiles.removeValue(forKey: oldest)?.count ?? 0
                }
            }
        }
    }
}
