// What the engine, the server and the CLI need of a tile set file, whichever format holds it:
// an MBTiles file (MBTiles.swift) or a PMTiles archive (PMTilesReader.swift). Each reads its
// own format and checks its own metadata; what follows from those (whether an address is
// inside the set, its TileJSON, what its tiles hold) is worked out here, once for both.

import Foundation
import Geometry
import Support

public protocol TileArchive: AnyObject, Sendable {
    /// The file it was opened from.
    var path: String { get }
    /// The format's name: `MBTiles` or `PMTiles`.
    var formatName: String { get }
    /// Its metadata as text: MBTiles' `metadata` rows; a PMTiles archive's JSON metadata (a
    /// value that is not a string as JSON text) with its header's zooms, bounds, center and format.
    var metadata: [String: String] { get }
    /// [west, south, east, north], when the set has usable ones.
    var bounds: [Double]? { get }
    var center: TileCenter? { get }
    /// Whole numbers of 0…30, the min not above the max, or nil.
    var minZoom: Int? { get }
    var maxZoom: Int? { get }
    /// What was set aside at open (unusable metadata): the set is served without it.
    var warnings: [String] { get }
    /// What the tiles hold (declared, or read from the first tiles once).
    var contents: TileSetContents { get }
    /// The stored bytes of tile z/x/y (XYZ addressing, compressed as stored), or nil when the
    /// set has no such tile.
    func tile(z: Int, x: Int, y: Int) throws -> [UInt8]?
    /// Every tile's address, in (z, x, y) order.
    func tileAddresses() throws -> [(z: Int, x: Int, y: Int)]
}

/// A center: a position and the zoom to show it at.
public struct TileCenter: Sendable, Equatable {
    public var lon: Double
    public var lat: Double
    public var zoom: Int

    public init(lon: Double, lat: Double, zoom: Int) {
        (self.lon, self.lat, self.zoom) = (lon, lat, zoom)
    }
}

public enum TileArchives {
    /// Opens a tile set file by its extension: `.pmtiles` as a PMTiles archive, anything else
    /// (`.mbtiles`) as MBTiles, each with its format's own errors.
    public static func open(_ path: String) throws -> any TileArchive {
        isPMTiles(path) ? try PMTiles(path: path) : try MBTiles(path: path)
    }

    /// Whether a path names a PMTiles archive (by its extension, as `open` decides).
    public static func isPMTiles(_ path: String) -> Bool { path.lowercased().hasSuffix(".pmtiles") }

    /// Whether a path names a tile set file of either format.
    public static func isTileSet(_ path: String) -> Bool { isPMTiles(path) || path.lowercased().hasSuffix(".mbtiles") }
}

extension TileArchive {
    public var name: String { metadata["name"] ?? ((path as NSString).lastPathComponent as NSString).deletingPathExtension }

    /// Whether tile z/x/y lies in the set's zoom range and meets its bounds: a tile missing
    /// there is an empty part of a sparse set (tile servers answer 204), not a wrong address.
    public func covers(z: Int, x: Int, y: Int) -> Bool {
        if let minZoom, z < minZoom { return false }
        if let maxZoom, z > maxZoom { return false }
        guard let b = bounds, b.count == 4 else { return true }
        let box = TileProjection(z: z, x: x, y: y).lonLatBox(margin: 0)
        let meetsLatitudes = box.minLat <= b[3] && box.maxLat >= b[1]
        // WEST > EAST: the bounds cross the antimeridian.
        let meetsLongitudes = b[0] <= b[2] ? box.minLon <= b[2] && box.maxLon >= b[0] : box.maxLon >= b[0] || box.minLon <= b[2]
        return meetsLatitudes && meetsLongitudes
    }

    /// TileJSON 3.0.0 for this set, with `tilesURL` as its tile URL template. Every document
    /// validates against the spec's schema (Fixtures/tilejson): `vector_layers` is always there
    /// (empty for raster sets), and a `version` that is not a semver string is made one (`2` →
    /// `2.0.0`) or left out.
    public func tileJSON(tilesURL: String) -> JSONValue {
        var object = JSONObject()
        object["tilejson"] = .string("3.0.0")
        object["name"] = .string(name)
        for key in ["description", "attribution"] where metadata[key] != nil {
            object[key] = .string(metadata[key] ?? "")
        }
        if let version = metadata["version"].flatMap(MBTiles.semanticVersion) { object["version"] = .string(version) }
        object["tiles"] = .array([.string(tilesURL)])
        object["vector_layers"] = .array(contents.vectorLayers)
        if let minZoom { object["minzoom"] = .integer(Int64(minZoom)) }
        if let maxZoom { object["maxzoom"] = .integer(Int64(maxZoom)) }
        if let bounds { object["bounds"] = .array(bounds.map { .double($0) }) }
        // The center: from the metadata, else (none, or one set aside at open) the middle of
        // the bounds at the lowest zoom, else none.
        if let center {
            object["center"] = .array([.double(center.lon), .double(center.lat), .integer(Int64(center.zoom))])
        } else if let b = bounds {
            object["center"] = .array([.double((b[0] + b[2]) / 2), .double((b[1] + b[3]) / 2), .integer(Int64(minZoom ?? 0))])
        }
        return .object(object)
    }
}

extension TileSetContents {
    /// Tiles read to describe a set whose metadata does not: at most this many, and no more
    /// once this many bytes have been read (the zoo's first three tiles, 1.1 MB of GeoJSON,
    /// which take 0.1 s to decode in a release build).
    static let scanLimit = 256
    static let scanBytes = 1 << 20

    /// The `vector_layers` of a metadata JSON object when it has usable ones (each an `id` and
    /// `fields` of strings), else nil.
    static func declaredLayers(in json: JSONValue?) -> [JSONValue]? {
        guard case .object(let object)? = json, case .array(let layers)? = object["vector_layers"],
              layers.allSatisfy(MBTiles.isVectorLayer) else { return nil }
        return layers
    }

    /// What a set holds, from its first tiles (lowest zooms first, at most `scanLimit`; all of
    /// its tiles when `complete`) and the layers its metadata declares: images, the declared
    /// layers, or each layer found in the tiles with its fields' types (`String`, `Number`,
    /// `Boolean`, or `Mixed`) and the zooms it appears at (up to `maxZoom` when not every tile
    /// was read).
    static func described(sample: [(z: Int, x: Int, y: Int, bytes: [UInt8])], declared: [JSONValue]?, complete: Bool,
                          maxZoom: Int?) -> TileSetContents {
        let isRaster = sample.first.map { TileEncoding.detect($0.bytes).format.isRaster } ?? false
        if isRaster { return TileSetContents(isRaster: true, vectorLayers: []) }
        if let declared { return TileSetContents(isRaster: false, vectorLayers: declared) }
        var order: [String] = []
        var fields: [String: [(String, String)]] = [:]
        var zooms: [String: ClosedRange<Int>] = [:]
        var scanned = 0, bytes = 0
        for tile in sample where bytes < scanBytes {
            scanned += 1
            bytes += tile.bytes.count
            // A tile that does not decode adds nothing here; serving it reports the error.
            guard let features = try? TileDecoder.features(of: tile.bytes, z: tile.z, x: tile.x, y: tile.y) else { continue }
            for item in features {
                if zooms[item.layer] == nil { order.append(item.layer) }
                let seen = zooms[item.layer]
                zooms[item.layer] = min(seen?.lowerBound ?? tile.z, tile.z)...max(seen?.upperBound ?? tile.z, tile.z)
                var known = fields[item.layer] ?? []
                for (name, value) in item.feature.properties {
                    guard let type = MBTiles.fieldType(value) else { continue }
                    if let i = known.firstIndex(where: { $0.0 == name }) {
                        if known[i].1 != type { known[i].1 = "Mixed" }
                    } else {
                        known.append((name, type))
                    }
                }
                fields[item.layer] = known
            }
        }
        // A sample cut short may miss the higher zooms: those layers reach the set's maxzoom.
        let whole = complete && scanned == sample.count
        let layers: [JSONValue] = order.map { name in
            var fieldObject = JSONObject()
            for (field, type) in fields[name] ?? [] { fieldObject[field] = .string(type) }
            var layer = JSONObject()
            layer["id"] = .string(name)
            layer["fields"] = .object(fieldObject)
            if let range = zooms[name] {
                layer["minzoom"] = .integer(Int64(range.lowerBound))
                layer["maxzoom"] = .integer(Int64(whole ? range.upperBound : max(range.upperBound, maxZoom ?? range.upperBound)))
            }
            return .object(layer)
        }
        return TileSetContents(isRaster: false, vectorLayers: layers)
    }
}
