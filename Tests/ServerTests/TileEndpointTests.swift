import Foundation
@testable import Server
import Geometry
import Support
import TestSupport
import Testing
import VectorTiles

/// Tiles as map clients ask for them: extension URLs, Accept-Encoding, the store's layers as
/// vector tiles, the GeoJSON form, and TileJSON that validates against the official schema.
@Suite(.validatesStores) struct TileEndpointTests {
    /// Every TileJSON the server writes — each tile set's and each feature layer's — validates
    /// against TileJSON 3.0.0's own JSON schema (Fixtures/tilejson, checked with Python's
    /// jsonschema), among them world_cities, whose metadata says `version: 2` (not semver:
    /// written as 2.0.0). The same document with the version as stored fails, so the check
    /// bites.
    @Test func everyTileJSONValidatesAgainstTheSchema() async throws {
        let server = try await RunningServer.shared.value
        let layers = try await get(server.port, "/v1/layers").json
        let sets = layers["tilesets"]?.items.compactMap { $0["name"]?.string } ?? []
        let featureLayers = layers["layers"]?.items.filter { $0["kind"] == .string("features") }.compactMap { $0["name"]?.string } ?? []
        #expect(sets.sorted() == ["geography", "world_cities", "zoo_map"])
        #expect(featureLayers == ["districts", "districts_sjtsk", "parking", "paths", "pavilions", "pens", "stations"])
        let directory = try Fixtures.temporaryDirectory("tilejson")
        defer { try? FileManager.default.removeItem(at: directory) }
        var documents: [String: JSONValue] = [:]
        for name in sets + featureLayers {
            let answer = try await get(server.port, "/v1/tiles/\(name).json")
            #expect(answer.status == 200, "\(name): \(answer.text)")
            documents[name] = answer.json
            try Data(answer.body).write(to: directory.appendingPathComponent("\(name).json"))
        }
        // The negative control: world_cities with its metadata's version as it is.
        guard case .object(var copied)? = documents["world_cities"] else { Issue.record("no world_cities TileJSON"); return }
        #expect(copied["version"] == .string("2.0.0"))
        copied["version"] = .string("2")
        try Data(JSONWriter.encode(.object(copied))).write(to: directory.appendingPathComponent("version-as-stored.json"))

        let script = """
            import json, sys, jsonschema
            schema = json.load(open(sys.argv[1]))
            validator = jsonschema.validators.validator_for(schema)(schema)
            for path in sorted(sys.argv[2:]):
                errors = [e.message for e in validator.iter_errors(json.load(open(path)))]
                print(path.rsplit("/", 1)[-1], "valid" if not errors else "invalid: " + "; ".join(sorted(errors)))
            """
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).map { directory.appendingPathComponent($0).path }
        let run = try Fixtures.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, Fixtures.path("tilejson/schema-3.0.0.json")] + files)
        #expect(run.status == 0, "\(run.stderr)")
        let verdicts = Dictionary(uniqueKeysWithValues: run.stdout.split(separator: "\n").map { line in
            let parts = line.split(separator: " ", maxSplits: 1)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        })
        var expected = Dictionary(uniqueKeysWithValues: (sets + featureLayers).map { ("\($0).json", "valid") })
        expected["version-as-stored.json"] = "invalid: '2' does not match '\\\\d+\\\\.\\\\d+\\\\.\\\\d+\\\\w?[\\\\w\\\\d]*'"
        #expect(verdicts == expected)

        // What the documents say: a layer's one vector layer with typed fields, its zooms and
        // bounds; the zoo's layers read from its tiles (its metadata has none); images none.
        let districts = try #require(documents["districts"])
        #expect(districts["tiles"] == .array([.string("http://127.0.0.1:\(server.port)/v1/tiles/districts/{z}/{x}/{y}.mvt")]))
        #expect(districts["vector_layers"]?[0]?["id"] == .string("districts"))
        #expect(districts["vector_layers"]?[0]?["fields"]?["NAZEV_MC"] == .string("String"))
        #expect(districts["vector_layers"]?[0]?["fields"]?["KOD_MC"] == .string("Number"))
        #expect(districts["minzoom"] == .integer(0) && districts["maxzoom"] == .integer(18))
        #expect(districts["bounds"] == .array([.double(14.2244370110001), .double(49.941900069), .double(14.7067875710001), .double(50.177425025)]))
        #expect(documents["pens"]?["vector_layers"]?[0]?["fields"]?["is_animal_pen"] == .string("Boolean"))
        #expect(documents["pens"]?["vector_layers"]?[0]?["fields"]?["animals"] == .string("String"))
        let zoo = try #require(documents["zoo_map"])
        #expect(zoo["vector_layers"]?.items.compactMap { $0["id"]?.string } == ["water", "buildings", "transit", "pois", "roads", "earth", "landuse", "places"])
        #expect(zoo["vector_layers"]?[1]?["fields"]?["height"] == .string("Number"))
        #expect(zoo["vector_layers"]?[1]?["minzoom"] == .integer(15) && zoo["vector_layers"]?[1]?["maxzoom"] == .integer(16))
        #expect(documents["geography"]?["vector_layers"] == .array([]))
        #expect(documents["world_cities"]?["vector_layers"]?[0]?["id"] == .string("cities"))
    }

    /// `/16/35388/22194.pbf` and `.mvt` are the MVT form (the zoo's GeoJSON transcoded, every
    /// feature kept), `.json` a GeoJSON FeatureCollection whose features name their tile layer
    /// in `tile_layer` and keep their own OSM `layer` tag.
    @Test func extensionsPickTheForm() async throws {
        let server = try await RunningServer.shared.value
        let pbf = try await get(server.port, "/v1/tiles/zoo_map/16/35388/22194.pbf")
        #expect(pbf.status == 200 && pbf.header("Content-Type") == "application/vnd.mapbox-vector-tile")
        let mvt = try await get(server.port, "/v1/tiles/zoo_map/16/35388/22194.mvt")
        #expect(mvt.body == pbf.body)
        #expect(MVTConformance.problems(in: mvt.body, encoder: .init(positions: -64...4160)) == [])
        // The stored GeoJSON, counted per layer in Python: the same features in the MVT.
        let stored = try Fixtures.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", """
            import json, sqlite3, sys
            tile = sqlite3.connect(sys.argv[1]).execute("SELECT tile_data FROM tiles WHERE zoom_level = 16 AND tile_column = 35388 AND tile_row = 43341").fetchone()[0]
            print(" ".join(f"{name}={len(c['features'])}" for name, c in json.loads(tile).items() if c['features']))
            """, Fixtures.path("zoo/zoo-prague-geojson-tiles.mbtiles")])
        let counts = try MVTTile(bytes: mvt.body).layers().map { "\($0.name)=\($0.features.count)" }.joined(separator: " ")
        #expect(counts == stored.stdout.trimmingCharacters(in: .whitespacesAndNewlines))

        let json = try await get(server.port, "/v1/tiles/zoo_map/15/17695/11097.json")
        #expect(json.status == 200 && json.header("Content-Type") == "application/geo+json")
        #expect(json.json["type"] == .string("FeatureCollection"))
        let features = json.json["features"]?.items ?? []
        #expect(features.count == 476)
        #expect(features.allSatisfy { $0["type"] == .string("Feature") && $0["tile_layer"]?.string != nil && $0["properties"]?["tile_layer"] == nil })
        // Building 74572039 is a bridge-level building: OSM layer 1, in the tile layer buildings.
        let building = try #require(features.first { $0["properties"]?["id"] == .integer(74_572_039) })
        #expect(building["properties"]?["layer"]?.number == 1 && building["tile_layer"] == .string("buildings"))
        // Bad extensions; images have only their stored form.
        let bad = try await get(server.port, "/v1/tiles/zoo_map/16/35388/22194.png")
        #expect(bad.status == 400 && bad.object["code"] == .string("invalid_parameter") && bad.object["parameter"] == .string("y"))
        let image = try await get(server.port, "/v1/tiles/geography/1/1/0.mvt")
        #expect(image.status == 400 && image.object["code"] == .string("invalid_parameter"), "\(image.text)")
    }

    /// Stored gzip goes out as gzip only to a client that accepts it: `identity`, `gzip;q=0` or
    /// no Accept-Encoding get the inflated tile. Encoded tiles are gzipped on request.
    @Test func acceptEncodingIsHonoured() async throws {
        let server = try await RunningServer.shared.value
        let stored = try #require(try MBTiles(path: Fixtures.path("mbtiles/mbtileserver-world_cities.mbtiles")).tile(z: 1, x: 0, y: 0))
        #expect(Array(stored.prefix(2)) == [0x1F, 0x8B])
        let inflated = try Decompression.inflate(stored)
        for accept in [nil, "identity", "gzip;q=0", "br, deflate"] {
            let answer = try await get(server.port, "/v1/tiles/world_cities/1/0/0.pbf", headers: accept.map { [("Accept-Encoding", $0)] } ?? [])
            #expect(answer.status == 200 && answer.header("Content-Encoding") == nil && answer.body == inflated, "\(accept ?? "none")")
            #expect(answer.header("Vary") == "Accept-Encoding")
        }
        for accept in ["gzip", "deflate, gzip;q=0.5", "*"] {
            let answer = try await get(server.port, "/v1/tiles/world_cities/1/0/0", headers: [("Accept-Encoding", accept)])
            #expect(answer.header("Content-Encoding") == "gzip" && answer.body == stored, "\(accept)")
        }
        let plain = try await get(server.port, "/v1/tiles/districts/11/1106/693.mvt")
        let gzipped = try await get(server.port, "/v1/tiles/districts/11/1106/693.mvt", headers: [("Accept-Encoding", "gzip")])
        #expect(plain.header("Content-Encoding") == nil && gzipped.header("Content-Encoding") == "gzip")
        #expect(try Decompression.inflate(gzipped.body) == plain.body)
    }

    /// A feature layer as vector tiles: one MVT layer named after it, features by fid with
    /// their attributes; its GeoJSON form; unknown names and tables refused.
    @Test func storeLayersAsVectorTiles() async throws {
        let server = try await RunningServer.shared.value
        // Tile 14/8848/5550 holds the Old Town: Praha 1 (fid 20) and the districts around it.
        let tile = try await get(server.port, "/v1/tiles/districts/14/8848/5550.mvt")
        #expect(tile.status == 200 && tile.header("Content-Type") == "application/vnd.mapbox-vector-tile")
        #expect(MVTConformance.problems(in: tile.body, encoder: .init(positions: -64...4160)) == [])
        let layer = try #require(try MVTTile(bytes: tile.body).layers().first)
        #expect(layer.name == "districts")
        let praha1 = try #require(layer.features.first { $0.id == 20 })
        #expect(layer.properties(of: praha1)["NAZEV_MC"] == .text("Praha 1") && layer.properties(of: praha1)["KOD_MC"] == .integer(500_054))
        #expect(praha1.type == .polygon)
        // The point 14.4208, 50.088 (in Praha 1) lies in the tile: the decoded polygon has it.
        let decoded = try layer.features(z: 14, x: 8848, y: 5550)
        let inside = decoded.filter { $0.geometry?.contains(lon: 14.4208, lat: 50.088) ?? false }
        #expect(inside.map(\.id) == [.integer(20)])

        let json = try await get(server.port, "/v1/tiles/districts/14/8848/5550.json")
        let features = json.json["features"]?.items ?? []
        #expect(features.count == layer.features.count)
        #expect(features.allSatisfy { $0["tile_layer"] == .string("districts") })
        #expect(features.first { $0["id"] == .integer(20) }?["properties"]?["NAZEV_MC"] == .string("Praha 1"))

        // Outside the layer: an empty tile, not a 404 (a layer has every tile).
        let empty = try await get(server.port, "/v1/tiles/districts/14/0/0.mvt")
        #expect(empty.status == 200 && empty.body.isEmpty)
        let unknown = try await get(server.port, "/v1/tiles/districs/14/8848/5550.mvt")
        #expect(unknown.status == 404 && unknown.object["detail"] == .string("unknown tile set 'districs' — did you mean 'districts'?"))
        let table = try await get(server.port, "/v1/tiles/observations/14/8848/5550.mvt")
        #expect(table.status == 400 && table.object["code"] == .string("unsupported_geometry"))
        #expect(try await get(server.port, "/v1/tiles/observations.json").status == 400)
    }

    /// A PMTiles archive serves as the MBTiles file it was exported from: registered by
    /// `vltava import` beside it, the same TileJSON (but its name in the URL), the same bytes
    /// for every tile, 204 for a tile missing inside its zooms and bounds, 404 outside them.
    @Test func aPMTilesArchiveServesAsItsMBTilesFile() async throws {
        let directory = try Fixtures.temporaryDirectory("pmtiles-server")
        let mbtiles = Fixtures.path("mbtiles/mbtileserver-world_cities.mbtiles")
        let archive = directory.appendingPathComponent("cities.pmtiles").path
        let store = directory.appendingPathComponent("store.gpkg").path
        let export = try CLI.run(["tiles", "export", mbtiles, "--pmtiles", archive])
        #expect(export.status == 0, "\(export.stderr)")
        for (file, name) in [(mbtiles, "cities_mb"), (archive, "cities_pm")] {
            let imported = try CLI.run(["import", file, "--layer", name, "--db", store])
            #expect(imported.status == 0, "\(imported.stderr)")
        }
        let server = await RunningServer.start(store: store)
        defer { server.stop() }
        try await server.ready()

        let fromMBTiles = try await get(server.port, "/v1/tiles/cities_mb.json").json
        let fromPMTiles = try await get(server.port, "/v1/tiles/cities_pm.json").json
        #expect(fromPMTiles["tiles"]?[0]?.string?.hasSuffix("/v1/tiles/cities_pm/{z}/{x}/{y}.mvt") == true)
        guard case .object(var mb) = fromMBTiles, case .object(var pm) = fromPMTiles else { Issue.record("no TileJSON"); return }
        (mb["tiles"], pm["tiles"]) = (nil, nil)
        #expect(pm == mb && pm["vector_layers"]?[0]?["id"] == .string("cities"))

        let set = try MBTiles(path: mbtiles)
        for a in try set.tileAddresses() {
            let answer = try await get(server.port, "/v1/tiles/cities_pm/\(a.z)/\(a.x)/\(a.y)", headers: [("Accept-Encoding", "gzip")])
            let stored = try set.tile(z: a.z, x: a.x, y: a.y)
            #expect(answer.status == 200 && answer.header("Content-Encoding") == "gzip" && answer.body == stored, "\(a.z)/\(a.x)/\(a.y)")
        }
        let vienna = try await get(server.port, "/v1/tiles/cities_pm/6/34/22.json").json
        #expect(vienna["features"]?.items.contains { $0["properties"]?["name"] == .string("Vienna") } == true)
        // 6/32/32 (the Gulf of Guinea) is inside the zooms and bounds but has no city; 6/0/31
        // is west of the bounds, z7 past the zooms.
        #expect(try await get(server.port, "/v1/tiles/cities_pm/6/32/32").status == 204)
        #expect(try await get(server.port, "/v1/tiles/cities_pm/6/0/31").status == 404)
        #expect(try await get(server.port, "/v1/tiles/cities_pm/7/0/0").status == 404)
        let query = try await post(server.port, "/v1/query", body: "SHOW LAYERS").json
        #expect(query["rows"]?.items.contains { $0["name"] == .string("cities_pm") && $0["notes"] == .string("PMTiles pbf, zoom 0–6") } == true, "\(query)")
    }
}
