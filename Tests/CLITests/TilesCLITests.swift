import Foundation
import Geometry
import Support
import TestSupport
import Testing

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
}
