import Foundation
import Geometry
import SQLite
import Support
import TestSupport
import Testing
import VectorTiles

/// The features of a tile at a point take polygons by the engine's boundary rule: a point on
/// the edge two squares share is in exactly one (its distance to both is 0).
@Suite(.validatesStores) struct TileBoundaryRuleTests {
    typealias S = AdjacentSquares

    /// An MBTiles file with one GeoJSON tile at zoom 8, holding the two squares (and the
    /// slanted pair), where the point on their shared edge falls.
    static func tileSet() throws -> MBTiles {
        let path = try Fixtures.temporaryDirectory("tiles").appendingPathComponent("squares.mbtiles").path
        let database = try Database(path: path, mode: .readWriteCreate)
        try database.execute("CREATE TABLE metadata (name TEXT, value TEXT)")
        try database.execute("CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB)")
        func feature(_ name: String, _ polygon: Polygon) -> JSONValue {
            GeoJSON.encode(Feature(geometry: .polygon(polygon), properties: Attributes([("name", .text(name))])))
        }
        let collection = JSONValue.object(JSONObject([
            ("type", .string("FeatureCollection")),
            ("features", .array([feature("west", S.west), feature("east", S.east),
                                 feature("slanted west", S.slantedWest), feature("slanted east", S.slantedEast)])),
        ]))
        let (x, y) = TileMath.tile(lon: S.onSharedEdge.lon, lat: S.onSharedEdge.lat, zoom: 8)
        let insert = try database.prepare("INSERT INTO tiles VALUES (?, ?, ?, ?)")
        try insert.run([.integer(8), .integer(Int64(x)), .integer(Int64(255 - y)), .blob(Array(JSON.serialize(collection).utf8))])
        return try MBTiles(path: path)
    }

    @Test func aPointOnASharedEdgeIsInOneSquareOfTheTile() throws {
        let set = try Self.tileSet()
        let p = S.onSharedEdge
        // The tile of every point used here is the one stored.
        #expect(TileMath.tile(lon: p.lon, lat: p.lat, zoom: 8) == TileMath.tile(lon: 14.748, lat: 50.28, zoom: 8))
        let found = try set.features(atLon: p.lon, lat: p.lat, zoom: 8).compactMap { $0.feature.properties["name"]?.stringValue }
        // (The slanted pair overlaps the squares; the point is well inside its west member.)
        #expect(found == ["east", "slanted west"])
        var west: Set<Int> = []
        for (i, q) in S.onSlantedEdge.enumerated() {
            let names = try set.features(atLon: q.lon, lat: q.lat, zoom: 8).compactMap { $0.feature.properties["name"]?.stringValue }
            let slanted = names.filter { $0.hasPrefix("slanted") }
            #expect(slanted.count == 1, "k = \(i + 1): \(names)")
            if slanted == ["slanted west"] { west.insert(i + 1) }
        }
        #expect(west == S.slantedWestKs)
    }
}
