import Foundation
import Geometry
import TestSupport
import Testing
@testable import VectorTiles

@Suite(.validatesStores) struct MBTilesTests {
    static func open(_ name: String) throws -> MBTiles { try MBTiles(path: Fixtures.path(name)) }

    @Test func worldCities() throws {
        let set = try Self.open("mbtiles/mbtileserver-world_cities.mbtiles")
        let addresses = try set.tileAddresses()
        #expect(addresses.count == 196)
        #expect(set.metadata["format"] == "pbf")
        // Every zoom holds all 68 cities (checked with mapbox-vector-tile in Python).
        var namesByZoom: [Int: Set<String>] = [:]
        for (z, x, y) in addresses {
            let stored = try #require(try set.tile(z: z, x: x, y: y))
            #expect(TileEncoding.detect(stored) == TileEncoding(compression: .gzip, format: .mvt))
            for item in try #require(try set.features(z: z, x: x, y: y)) {
                #expect(item.layer == "cities")
                if case .text(let name)? = item.feature.properties["name"] { namesByZoom[z, default: []].insert(name) }
            }
        }
        #expect(namesByZoom.keys.sorted() == Array(0...6))
        #expect(namesByZoom.values.allSatisfy { $0.count == 68 })
    }

    /// Vienna at z6 (tile 34/22, position 3724, 792 of 4096): the same lon/lat as Python's
    /// mapbox-vector-tile decoder gives through the standard Web Mercator formulas; at z0 it is
    /// within one tile unit (360° / 4096) of that.
    @Test func viennaDecodesToItsCoordinates() throws {
        let set = try Self.open("mbtiles/mbtileserver-world_cities.mbtiles")
        func vienna(_ z: Int, _ x: Int, _ y: Int) throws -> Point? {
            let features = try #require(try set.features(z: z, x: x, y: y))
            guard case .point(let p)? = features.first(where: { $0.feature.properties["name"] == .text("Vienna") })?.feature.geometry else { return nil }
            return p
        }
        let z6 = try #require(try vienna(6, 34, 22))
        #expect(abs(z6.lon - 16.3641357421875) < 1e-9 && abs(z6.lat - 48.20271028869972) < 1e-9)
        let z0 = try #require(try vienna(0, 0, 0))
        #expect(abs(z0.lon - z6.lon) < 360.0 / 4096 && abs(z0.lat - z6.lat) < 360.0 / 4096)
    }

    @Test func missingTileIsNilNotAnError() throws {
        let set = try Self.open("mbtiles/mbtileserver-world_cities.mbtiles")
        #expect(try set.tile(z: 6, x: 0, y: 0) == nil)
        #expect(try set.tile(z: 7, x: 0, y: 0) == nil)
        #expect(try set.tile(z: 3, x: 99, y: 0) == nil)  // outside the zoom's range
        #expect(try set.features(atLon: 14.42, lat: 50.09, zoom: 12).isEmpty)
    }

    @Test func tileJSON() throws {
        let set = try Self.open("mbtiles/mbtileserver-world_cities.mbtiles")
        guard case .object(let doc) = set.tileJSON(tilesURL: "http://localhost/v1/tiles/cities/{z}/{x}/{y}") else { Issue.record("not an object"); return }
        #expect(doc["tilejson"] == .string("3.0.0"))
        #expect(doc["minzoom"] == .integer(0) && doc["maxzoom"] == .integer(6))
        #expect(doc["center"] == .array([.double(-75.9375), .double(38.788894), .integer(6)]))
        guard case .array(let layers)? = doc["vector_layers"], case .object(let cities)? = layers.first else { Issue.record("no vector_layers"); return }
        #expect(cities["id"] == .string("cities"))

        // Without a center row, the middle of the bounds at the lowest zoom.
        let noCenter = try Self.open("mbtiles/mbtileserver-world_cities_missing_center.mbtiles")
        guard case .object(let doc2) = noCenter.tileJSON(tilesURL: "x") else { Issue.record("not an object"); return }
        #expect(doc2["center"] == .array([.double((-123.12359 + 174.763027) / 2), .double((-37.818085 + 59.352706) / 2), .integer(0)]))
    }

    /// TileJSON's `version` must be semver (the schema's pattern): world_cities' metadata says
    /// `2`, which is written `2.0.0`; what cannot be made one is left out.
    @Test func versionAsSemver() throws {
        let set = try Self.open("mbtiles/mbtileserver-world_cities.mbtiles")
        #expect(set.metadata["version"] == "2")
        guard case .object(let doc) = set.tileJSON(tilesURL: "x") else { Issue.record("not an object"); return }
        #expect(doc["version"] == .string("2.0.0"))
        let cases: [(String, String?)] = [("2", "2.0.0"), ("1.1", "1.1.0"), (" 1.0.0 ", "1.0.0"), ("1.2.3-beta.1", "1.2.3-beta.1"),
                                          ("v2", nil), ("", nil), ("1.x", nil), ("1.2.3 4", nil), ("2.", nil), ("1234567890", nil)]
        for (text, expected) in cases { #expect(MBTiles.semanticVersion(text) == expected, "\(text)") }
    }

    /// What the tiles hold, read from them when the metadata says nothing: the zoo's 22
    /// GeoJSON tiles give eight layers, each at z15–16, with fields typed by their values; a
    /// raster set has no vector layers.
    @Test func contentsFromTheTiles() throws {
        let zoo = try Self.open("zoo/zoo-prague-geojson-tiles.mbtiles")
        #expect(zoo.metadata["json"] == nil && !zoo.contents.isRaster)
        let layers = zoo.contents.vectorLayers
        #expect(layers.compactMap { if case .object(let o) = $0 { o["id"]?.string } else { nil } }
                == ["water", "buildings", "transit", "pois", "roads", "earth", "landuse", "places"])
        guard case .object(let roads)? = layers.first(where: { if case .object(let o) = $0 { o["id"] == .string("roads") } else { false } }),
              case .object(let fields)? = roads["fields"] else { Issue.record("no roads"); return }
        #expect(fields["name"] == .string("String") && fields["is_bridge"] == .string("Boolean") && fields["min_zoom"] == .string("Number"))
        #expect(roads["minzoom"] == .integer(15) && roads["maxzoom"] == .integer(16))
        let png = try Self.open("mbtiles/mbtileserver-geography-class-png.mbtiles")
        #expect(png.contents.isRaster && png.contents.vectorLayers.isEmpty)
    }

    /// A center that is not finite numbers in range (any tool may write one) is set aside at
    /// open with a warning, and TileJSON takes the middle of the bounds as for a missing one;
    /// a NaN, infinite or huge zoom used to trap in `Int64(center[2])` (issue 19).
    @Test(arguments: [
        ("-75.9375,38.788894,nan", "the zoom nan is not a finite number"),
        ("-75.9375,38.788894,inf", "the zoom inf is not a finite number"),
        ("-75.9375,38.788894,1e19", "the zoom 1e+19 is outside 0…30"),
        ("-75.9375,inf,6", "the latitude inf is not a finite number"),
        ("nan,38.788894,6", "the longitude nan is not a finite number"),
        ("-75.9375,38.788894", "it is not three numbers LON,LAT,ZOOM"),
    ])
    func unusableCenterIsSetAside(center: String, reason: String) throws {
        let path = try RawStoreEdits.copy(ofFixture: "mbtiles/mbtileserver-world_cities.mbtiles", as: "bad-center.mbtiles")
        try RawStoreEdits.setMBTilesMetadata("center", to: center, in: path)
        let set = try MBTiles(path: path)
        #expect(set.warnings == ["metadata center '\(center)' ignored: \(reason)"])
        #expect(set.center == nil)
        guard case .object(let doc) = set.tileJSON(tilesURL: "x") else { Issue.record("not an object"); return }
        #expect(doc["center"] == .array([.double((-123.12359 + 174.763027) / 2), .double((-37.818085 + 59.352706) / 2), .integer(0)]))
    }

    /// Issue 30: zooms that TileJSON forbids (outside 0…30, or a minzoom above the maxzoom)
    /// are set aside at open with a warning, and the tiles' own zooms (0…6 here) take their
    /// place. Before, TileJSON carried a minzoom of -2^63, or 20 over a maxzoom of 2.
    @Test(arguments: [
        (["minzoom": "-9223372036854775808"], "metadata minzoom '-9223372036854775808' ignored: it is not a whole number of 0…30"),
        (["maxzoom": "31"], "metadata maxzoom '31' ignored: it is not a whole number of 0…30"),
        (["minzoom": "2.5"], "metadata minzoom '2.5' ignored: it is not a whole number of 0…30"),
        (["minzoom": "20", "maxzoom": "2"], "metadata minzoom 20 and maxzoom 2 ignored: the minzoom is above the maxzoom"),
        // A minzoom kept but above the tiles' maxzoom taken for a bad one: the tiles' range.
        (["minzoom": "9", "maxzoom": "x"], "metadata maxzoom 'x' ignored: it is not a whole number of 0…30"),
    ])
    func invalidZoomsAreTakenFromTheTiles(metadata: [String: String], reason: String) throws {
        let path = try RawStoreEdits.copy(ofFixture: "mbtiles/mbtileserver-world_cities.mbtiles", as: "bad-zooms.mbtiles")
        for (name, value) in metadata { try RawStoreEdits.setMBTilesMetadata(name, to: value, in: path) }
        let set = try MBTiles(path: path)
        #expect(set.warnings == [reason + "; the tiles' zooms 0…6 are used"])
        #expect(set.minZoom == 0 && set.maxZoom == 6)
        guard case .object(let doc) = set.tileJSON(tilesURL: "x") else { Issue.record("not an object"); return }
        #expect(doc["minzoom"] == .integer(0) && doc["maxzoom"] == .integer(6))
        // Every tile is inside the zooms again (with 20 over 2, none was).
        #expect(set.covers(z: 3, x: 4, y: 3))
    }

    /// With no tiles to take them from, zooms set aside are left out of TileJSON.
    @Test func invalidZoomsOfASetWithoutTilesAreLeftOut() throws {
        let path = try RawStoreEdits.copy(ofFixture: "mbtiles/mbtileserver-world_cities.mbtiles", as: "no-tiles.mbtiles")
        try RawStoreEdits.execute("DELETE FROM tiles", in: path)
        try RawStoreEdits.setMBTilesMetadata("minzoom", to: "-1", in: path)
        let set = try MBTiles(path: path)
        #expect(set.warnings == ["metadata minzoom '-1' ignored: it is not a whole number of 0…30; the set has no tiles to take them from"])
        #expect(set.minZoom == nil && set.maxZoom == 6)
        guard case .object(let doc) = set.tileJSON(tilesURL: "x") else { Issue.record("not an object"); return }
        #expect(doc["minzoom"] == nil && doc["maxzoom"] == .integer(6))
        #expect(try Self.open("mbtiles/mbtileserver-world_cities.mbtiles").minZoom == 0)
    }

    /// Bounds too; with neither, TileJSON has no center at all.
    @Test func unusableBoundsAreSetAside() throws {
        let path = try RawStoreEdits.copy(ofFixture: "mbtiles/mbtileserver-world_cities_missing_center.mbtiles", as: "bad-bounds.mbtiles")
        try RawStoreEdits.setMBTilesMetadata("bounds", to: "-123.12359,-37.818085,inf,59.352706", in: path)
        let set = try MBTiles(path: path)
        #expect(set.warnings == ["metadata bounds '-123.12359,-37.818085,inf,59.352706' ignored: the longitude inf is not a finite number"])
        guard case .object(let doc) = set.tileJSON(tilesURL: "x") else { Issue.record("not an object"); return }
        #expect(doc["bounds"] == nil && doc["center"] == nil)
        #expect(try Self.open("mbtiles/mbtileserver-world_cities.mbtiles").warnings.isEmpty)
        #expect(try Self.open("mbtiles/mbtileserver-world_cities.mbtiles").center == MBTiles.Center(lon: -75.9375, lat: 38.788894, zoom: 6))
    }

    @Test func brokenFilesGiveClearErrors() throws {
        do {
            _ = try Self.open("mbtiles/mbtileserver-invalid.mbtiles")
            Issue.record("opened an invalid file")
        } catch {
            // An empty SQLite database: no tables at all.
            #expect("\(error)" == "mbtileserver-invalid.mbtiles: not an MBTiles file: it has no tiles table or view")
        }
        do {
            _ = try MBTiles(path: "/no/such.mbtiles")
            Issue.record("opened a missing file")
        } catch {
            #expect("\(error)" == "such.mbtiles: no such file")
        }
        // Tiles of 0xFF bytes: the set opens, and decoding a tile says what is wrong.
        let badTiles = try Self.open("mbtiles/mbtileserver-invalid-tile-format.mbtiles")
        let stored = try #require(try badTiles.tile(z: 0, x: 0, y: 0))
        #expect(TileEncoding.detect(stored).format == .unknown)
        #expect(throws: MVTError.self) { try badTiles.features(z: 0, x: 0, y: 0) }
    }

    /// The older view-based schema (map + images behind a tiles view) with PNG tiles.
    @Test func rasterSetInTheViewSchema() throws {
        let set = try Self.open("mbtiles/mbtileserver-geography-class-png.mbtiles")
        let first = try #require(try set.tileAddresses().first)
        let stored = try #require(try set.tile(z: first.z, x: first.x, y: first.y))
        #expect(TileEncoding.detect(stored) == TileEncoding(compression: .none, format: .png))
        #expect(TileEncoding.detect(stored).format.contentType == "image/png")
        #expect(throws: MVTError.self) { try set.features(z: first.z, x: first.x, y: first.y) }
    }

    /// The zoo's file says MVT in its metadata but holds uncompressed Tilezen GeoJSON.
    @Test func zooGeoJSONTilesAreDetectedFromTheBytes() throws {
        let set = try Self.open("zoo/zoo-prague-geojson-tiles.mbtiles")
        #expect(set.metadata["format"] == "application/vnd.mapbox-vector-tile")
        let addresses = try set.tileAddresses()
        #expect(addresses.count == 22)
        var layers: Set<String> = []
        for (z, x, y) in addresses {
            let stored = try #require(try set.tile(z: z, x: x, y: y))
            #expect(TileEncoding.detect(stored) == TileEncoding(compression: .none, format: .geojson))
            for item in try #require(try set.features(z: z, x: x, y: y)) { layers.insert(item.layer) }
        }
        #expect(layers.isSuperset(of: ["water", "buildings", "pois", "roads", "landuse"]))
        // Inside the gorilla pavilion (a point shapely picks inside its OSM polygon), at zoom 16:
        // the tile's building polygon of that name, and Tilezen's label point for it 0.4 mm
        // away, within the 8-pixel tolerance for points (as shapely finds them in the same tile).
        let here = try set.features(atLon: 14.404891514, lat: 50.115400110, zoom: 16, layer: "buildings")
        #expect(here.map { $0.feature.properties["name"] } == [.text("Pavilon goril"), .text("Pavilon goril")])
        #expect(here.map { $0.feature.geometry?.typeName } == ["Polygon", "Point"])
    }

    @Test func zooTopoJSONTiles() throws {
        let set = try Self.open("zoo/zoo-prague-topojson-tiles.mbtiles")
        let addresses = try set.tileAddresses()
        #expect(addresses.count == 16)
        let (z, x, y) = try #require(addresses.first)
        let stored = try #require(try set.tile(z: z, x: x, y: y))
        #expect(TileEncoding.detect(stored).format == .topojson)
        let features = try #require(try set.features(z: z, x: x, y: y))
        #expect(Set(features.map(\.layer)).isSuperset(of: ["water", "buildings", "roads"]))
        // Every position decodes near the zoo (the tiles reach a little beyond it).
        var box = BBox.empty
        for item in features { if let g = item.feature.geometry { box.extend(g.bbox) } }
        #expect(box.minLon > 14.38 && box.maxLon < 14.43 && box.minLat > 50.10 && box.maxLat < 50.13, "\(box)")
    }

    @Test func tileMath() {
        #expect(TileMath.tile(lon: 16.3641, lat: 48.2027, zoom: 6) == (34, 22))
        #expect(TileMath.tile(lon: 14.4057, lat: 50.1160, zoom: 16) == (35390, 22193))
        #expect(TileMath.tile(lon: 180, lat: -90, zoom: 2) == (3, 3))
    }
}

@Suite(.validatesStores) struct BrokenTileTests {
    /// A copy of world_cities cut to its first 16 KiB: opening or reading says so.
    @Test func truncatedFile() throws {
        let bytes = try Data(contentsOf: Fixtures.url("mbtiles/mbtileserver-world_cities.mbtiles"))
        let url = try Fixtures.temporaryDirectory("tiles").appendingPathComponent("truncated.mbtiles")
        try bytes.prefix(16 * 1024).write(to: url)
        do {
            let set = try MBTiles(path: url.path)
            for (z, x, y) in try set.tileAddresses() { _ = try set.features(z: z, x: x, y: y) }
            Issue.record("a truncated file read cleanly")
        } catch {
            let message = "\(error)"
            #expect(message.hasPrefix("truncated.mbtiles: "), "\(message)")
            #expect(message.contains("malformed") || message.contains("not an MBTiles file"), "\(message)")
        }
    }

    /// Random bytes, raw and gzipped: a clear error, never a crash.
    @Test func randomBytes() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let bytes = (0..<Int.random(in: 1..<512, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = try? TileDecoder.features(of: bytes, z: 14, x: 8800, y: 5900)
        }
        let garbage: [UInt8] = [0x1A, 0xFF, 0xFF, 0xFF, 0x0F, 0x01, 0x02]
        #expect(throws: MVTError.self) { try TileDecoder.features(of: garbage, z: 0, x: 0, y: 0) }
    }

    /// 100 MiB of zeros gzipped to about 100 KiB: decoding stops at the 64 MiB limit.
    @Test func gzipBomb() throws {
        let dir = try Fixtures.temporaryDirectory("tiles")
        let zeros = dir.appendingPathComponent("zeros")
        FileManager.default.createFile(atPath: zeros.path, contents: nil)
        let handle = try FileHandle(forWritingTo: zeros)
        let block = Data(count: 1 << 20)
        for _ in 0..<100 { handle.write(block) }
        try handle.close()
        #expect(try Fixtures.run(URL(fileURLWithPath: "/usr/bin/env"), ["gzip", "-9", zeros.path]).status == 0)
        let bomb = [UInt8](try Data(contentsOf: dir.appendingPathComponent("zeros.gz")))
        #expect(bomb.count < 200_000)
        #expect(TileEncoding.detect(bomb).compression == .gzip)
        do {
            _ = try TileDecoder.features(of: bomb, z: 0, x: 0, y: 0)
            Issue.record("the bomb decoded")
        } catch {
            #expect(error.description == "invalid vector tile: the tile inflates to more than 67108864 bytes")
        }
    }
}
