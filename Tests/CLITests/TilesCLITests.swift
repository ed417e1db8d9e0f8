import Foundation
import Geometry
import Support
import TestSupport
import Testing
import Engine
import VectorTiles

@Suite(.validatesStores) struct TilesCLITests {
    @Test func infoTellsTheRealEncoding() throws {
        let info = try CLI.run(["tiles", "info", Fixtures.path("zoo/zoo-prague-geojson-tiles.mbtiles")])
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout.hasPrefix("zoo_prague_map: 22 tiles\n"))
        #expect(info.stdout.contains("encoding: geojson, compression none (metadata says 'application/vnd.mapbox-vector-tile')"))
        #expect(info.stdout.contains("\"tilejson\": \"3.0.0\""))
    }

    @Test func getDecodesATileToGeoJSON() throws {
        let get = try CLI.run(["tiles", "get", Fixtures.path("mbtiles/mbtileserver-world_cities.mbtiles"), "6/34/22", "--layer", "cities"])
        #expect(get.status == 0, "\(get.stderr)")
        let features = try GeoJSON.parseDocument(Array(get.stdout.utf8)).features
        let vienna = try #require(features.first { $0.properties["name"] == .text("Vienna") })
        #expect(vienna.geometry == .point(Point(lon: 16.3641357421875, lat: 48.20271028869972)))
        // The tile layer is a member of each Feature beside its properties, never a property.
        #expect(vienna.properties["layer"] == nil && vienna.properties["tile_layer"] == nil)
        let json = try JSON.parse(get.stdout)
        let members = json["features"]?.items ?? []
        #expect(members.count == features.count && members.allSatisfy { $0["tile_layer"] == .string("cities") })
    }

    /// A feature's own `layer` property (OSM's tag, here 1 on a bridge-level building) survives.
    @Test func getKeepsTheFeaturesOwnLayer() throws {
        let get = try CLI.run(["tiles", "get", Fixtures.path("zoo/zoo-prague-geojson-tiles.mbtiles"), "15/17695/11097"])
        #expect(get.status == 0, "\(get.stderr)")
        let features = try JSON.parse(get.stdout)["features"]?.items ?? []
        #expect(features.count == 476)
        let building = try #require(features.first { $0["properties"]?["id"] == .integer(74_572_039) })
        #expect(building["properties"]?["layer"]?.number == 1 && building["tile_layer"] == .string("buildings"))
    }

    @Test func atListsWhatIsThere() throws {
        let at = try CLI.run(["tiles", "at", Fixtures.path("zoo/zoo-prague-geojson-tiles.mbtiles"), "14.404891514,50.115400110", "--zoom", "16", "--layer", "buildings"])
        #expect(at.status == 0, "\(at.stderr)")
        #expect(at.stdout == """
            layer      geometry  name           kind
            ---------  --------  -------------  --------
            buildings  Polygon   Pavilon goril  building
            buildings  Point     Pavilon goril  building

            """)
    }

    /// A center of NaN, inf or 1e19 killed `vltava tiles info` (issue 19); now it is set
    /// aside with a warning, and `vltava import` registers such a set with the same warning.
    @Test(arguments: [("nan", "the zoom nan is not a finite number"), ("inf", "the zoom inf is not a finite number"), ("1e19", "the zoom 1e+19 is outside 0…30")])
    func unusableCenterIsAWarning(zoom: String, reason: String) throws {
        let file = try RawStoreEdits.copy(ofFixture: "mbtiles/mbtileserver-world_cities.mbtiles", as: "cities.mbtiles")
        try RawStoreEdits.setMBTilesMetadata("center", to: "-75.9375,38.788894,\(zoom)", in: file)
        let warning = "warning: metadata center '-75.9375,38.788894,\(zoom)' ignored: \(reason)\n"
        let info = try CLI.run(["tiles", "info", file])
        #expect(info.status == 0)
        #expect(info.stderr == warning)
        #expect(info.stdout.hasPrefix("Major cities from Natural Earth data: 196 tiles\n") && info.stdout.contains("\"tilejson\": \"3.0.0\""))
        let db = try Fixtures.temporaryDirectory("tiles-import").appendingPathComponent("s.gpkg").path
        let imported = try CLI.run(["import", file, "--layer", "cities", "--db", db])
        #expect(imported.status == 0)
        #expect(imported.stderr == warning)
        #expect(imported.stdout == "registered tile set 'cities' (\(file); the tiles stay in that file), 1 warning(s)\n")
    }

    /// A point west of Greenwich was read as options (-7, -5, …) and refused (issue 19).
    @Test func aNegativeLongitudeIsAPoint() throws {
        let file = Fixtures.path("mbtiles/mbtileserver-world_cities.mbtiles")
        let expected = """
            layer   geometry  name              kind
            ------  --------  ----------------  ----
            cities  Point     Washington, D.C.

            """
        for arguments in [[file, "-77.0365,38.8977", "--zoom", "6"], [file, "--zoom", "6", "-77.0365,38.8977"]] {
            let at = try CLI.run(["tiles", "at"] + arguments)
            #expect(at.status == 0, "\(at.stderr)")
            #expect(at.stdout == expected)
        }
        let none = try CLI.run(["tiles", "at", file, "--zoom", "6"])
        #expect(none.status == 1 && none.stderr.contains("expected a point as LON,LAT after the file"))
        let two = try CLI.run(["tiles", "at", file, "-75.9,38.8", "1,2", "--zoom", "6"])
        #expect(two.status == 1 && two.stderr.contains("expected one point as LON,LAT after the file; got -75.9,38.8 1,2"))
    }

    @Test func errorsAreClear() throws {
        let swapped = try CLI.run(["tiles", "at", Fixtures.path("zoo/zoo-prague-geojson-tiles.mbtiles"), "50.1154,114.4", "--zoom", "16"])
        #expect(swapped.status != 0)
        #expect(swapped.stderr.contains("latitude 114.4 is outside -90…90 — did you swap longitude and latitude?"))
        let missing = try CLI.run(["tiles", "get", Fixtures.path("mbtiles/mbtileserver-world_cities.mbtiles"), "6/0/0"])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("has no tile 6/0/0"))
        let broken = try CLI.run(["tiles", "info", Fixtures.path("mbtiles/mbtileserver-invalid.mbtiles")])
        #expect(broken.status != 0)
        #expect(broken.stderr.contains("not an MBTiles file"))
    }

    // MARK: - PMTiles

    /// `tiles export` of world_cities, then the archive through every tiles command and as a
    /// registered set in the language: what the MBTiles file gives.
    @Test func exportAnMBTilesFileAndUseTheArchive() throws {
        let directory = try Fixtures.temporaryDirectory("pmtiles-cli")
        let mbtiles = Fixtures.path("mbtiles/mbtileserver-world_cities.mbtiles")
        let archive = directory.appendingPathComponent("cities.pmtiles").path
        let export = try CLI.run(["tiles", "export", mbtiles, "--pmtiles", archive])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stdout.hasPrefix("wrote \(archive): 196 tiles (196 directory entries, 196 distinct), 0 leaf directories, 19533 bytes, in "))
        #expect(try Self.allTiles(PMTiles(path: archive)) == Self.allTiles(MBTiles(path: mbtiles)))

        for (from, to) in [(mbtiles, archive)] {
            let info = (try CLI.run(["tiles", "info", from]), try CLI.run(["tiles", "info", to]))
            #expect(info.1.status == 0 && info.1.stdout.hasPrefix("Major cities from Natural Earth data: 196 tiles\n"))
            #expect(info.1.stdout.contains("encoding: mvt, compression gzip (metadata says 'pbf')"))
            // The same TileJSON, printed last.
            #expect(info.0.stdout.split(separator: "\n{").last == info.1.stdout.split(separator: "\n{").last)
            let at = (try CLI.run(["tiles", "at", from, "-77.0365,38.8977", "--zoom", "6"]), try CLI.run(["tiles", "at", to, "-77.0365,38.8977", "--zoom", "6"]))
            #expect(at.1.status == 0 && at.1.stdout == at.0.stdout && at.1.stdout.contains("Washington, D.C."))
            let get = (try CLI.run(["tiles", "get", from, "6/34/22"]), try CLI.run(["tiles", "get", to, "6/34/22"]))
            #expect(get.1.status == 0 && get.1.stdout == get.0.stdout && get.1.stdout.contains("Vienna"))
        }

        let db = directory.appendingPathComponent("s.gpkg").path
        let imported = try CLI.run(["import", archive, "--layer", "cities", "--db", db])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout == "registered tile set 'cities' (\(archive); the tiles stay in that file)\n")
        let show = try CLI.run(["query", "SHOW LAYERS", "--format", "csv", "--db", db])
        #expect(show.stdout.contains("cities,tiles,,\"PMTiles pbf, zoom 0–6\""), "\(show.stdout)")
        let tile = try CLI.run(["query", "TILE 6/34/22 OF cities WHERE name = 'Vienna' RETURN tile_layer, name", "--format", "csv", "--db", db])
        #expect(tile.status == 0 && tile.stdout == "tile_layer,name\r\ncities,Vienna\r\n", "\(tile.stderr)")
        let explain = try CLI.run(["query", "EXPLAIN TILE 6/34/22 OF cities", "--db", db])
        #expect(explain.stdout.contains("its tile id found in the PMTiles directories"), "\(explain.stdout)")
    }

    /// `tiles export --layer`: every tile of the zooms over the layers' extent, each the bytes
    /// the engine encodes for /v1/tiles (two store layers one after another), gzipped; the
    /// empty ones left out.
    @Test func exportStoreLayersAsTheEngineEncodesThem() throws {
        let directory = try Fixtures.temporaryDirectory("pmtiles-cli")
        let db = directory.appendingPathComponent("s.gpkg").path
        for (file, layer) in [("zoo/pavilions-and-pens.geojson", "zoo"), ("prague/districts.wgs84.geojson", "districts")] {
            let imported = try CLI.run(["import", Fixtures.path(file), "--layer", layer, "--db", db])
            #expect(imported.status == 0, "\(imported.stderr)")
        }
        let archive = directory.appendingPathComponent("prague.pmtiles").path
        let export = try CLI.run(["tiles", "export", "--layer", "districts", "--layer", "zoo", "--pmtiles", archive, "--min-zoom", "8", "--max-zoom", "12", "--db", db])
        #expect(export.status == 0, "\(export.stderr)")

        let set = try PMTiles(path: archive)
        #expect(set.minZoom == 8 && set.maxZoom == 12 && set.header.tileType == .mvt && set.header.tileCompression == .gzip)
        #expect(set.contents.vectorLayers.compactMap { $0["id"]?.string } == ["districts", "zoo"])
        let snapshot = try Snapshot.load(storePath: db)
        let layers = try ["districts", "zoo"].map { name -> Layer in
            guard case .layer(let layer) = try snapshot.tileSource(name) else { throw CocoaError(.featureUnsupported) }
            return layer
        }
        var stored = 0, withBoth = 0
        for z in 8...12 {
            // Two tiles past the districts' extent each way: the zoo lies inside it, and a
            // tile's buffer reaches at most into the next tile.
            let northWest = TileMath.tile(lon: layers[0].bounds.minLon, lat: layers[0].bounds.maxLat, zoom: z)
            let southEast = TileMath.tile(lon: layers[0].bounds.maxLon, lat: layers[0].bounds.minLat, zoom: z)
            for x in (northWest.x - 2)...(southEast.x + 2) {
                for y in (northWest.y - 2)...(southEast.y + 2) {
                    let parts = try layers.map { try snapshot.vectorTile($0, z: z, x: x, y: y) }
                    let expected = Array(parts.joined())
                    if let tile = try set.tile(z: z, x: x, y: y) {
                        stored += 1
                        let inflated = try Decompression.inflate(tile)
                        #expect(inflated == expected, "\(z)/\(x)/\(y): \(inflated.count) bytes stored, \(expected.count) encoded")
                    } else {
                        #expect(expected.isEmpty, "\(z)/\(x)/\(y) left out")
                    }
                    if parts.allSatisfy({ !$0.isEmpty }) { withBoth += 1 }
                }
            }
        }
        #expect(stored == (try set.tileAddresses().count) && stored > 30 && withBoth > 4, "\(stored) stored, \(withBoth) with both")
    }

    @Test func exportAndPMTilesErrorsAreClear() throws {
        let directory = try Fixtures.temporaryDirectory("pmtiles-cli")
        let none = try CLI.run(["tiles", "export", "--pmtiles", directory.appendingPathComponent("x.pmtiles").path])
        #expect(none.status != 0 && none.stderr.contains("give a tile set file or --layer NAME (one or the other) to export"))
        let wrongName = try CLI.run(["tiles", "export", Fixtures.path("mbtiles/mbtileserver-world_cities.mbtiles"), "--pmtiles", directory.appendingPathComponent("x.mbtiles").path])
        #expect(wrongName.status != 0 && wrongName.stderr.contains("the archive's name must end in .pmtiles"))
        let bad = directory.appendingPathComponent("bad.pmtiles")
        try Data("PMTiles\u{3}".utf8).write(to: bad)
        let info = try CLI.run(["tiles", "info", bad.path])
        #expect(info.status != 0 && info.stderr.contains("bad.pmtiles: truncated header: 8 of its 127 bytes"), "\(info.stderr)")
        let imported = try CLI.run(["import", bad.path, "--layer", "bad", "--db", directory.appendingPathComponent("s.gpkg").path])
        #expect(imported.status != 0 && imported.stderr.contains("bad.pmtiles: truncated header: 8 of its 127 bytes"), "\(imported.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("s.gpkg").path))
    }

    static func allTiles(_ set: any TileArchive) throws -> [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        for a in try set.tileAddresses() { out["\(a.z)/\(a.x)/\(a.y)"] = try set.tile(z: a.z, x: a.x, y: a.y) }
        return out
    }
}
