import Engine
import Foundation
import Geometry
import TestSupport
import Testing

/// Store management end to end through the CLI and `vltava serve`: a missing tile-set file
/// takes out that tile set alone; drop and rename; a failed import leaves no new file; every
/// layer's export imports again.
@Suite(.validatesStores) struct StoreManagementTests {
    @Test func aMissingTileSetFileTakesOutThatTileSetAlone() async throws {
        let store = try await DemoStore.copy()
        let directory = (store as NSString).deletingLastPathComponent
        let cities = (directory as NSString).appendingPathComponent("cities.mbtiles")
        try FileManager.default.copyItem(atPath: Fixtures.path("mbtiles/mbtileserver-world_cities.mbtiles"), toPath: cities)
        let registered = try await offPool { try CLI.run(["import", cities, "--layer", "cities", "--db", store]) }
        #expect(registered.status == 0, "\(registered.stderr)")
        try FileManager.default.removeItem(atPath: cities)

        let server = try await ServedStore(store: store)
        let health = try await server.ready()
        #expect(health.status == 200, "\(health.text)")
        #expect(health.object["warnings"] == .integer(1))
        let log = try await server.stderr(containing: "tile set 'cities' is unavailable")
        #expect(log.contains("tile set 'cities' is unavailable (everything else serves): cities.mbtiles: no such file"), "\(log)")

        // That tile set: 503 with its own code. Everything else: served.
        let gone = try await get(server.port, "/v1/tiles/cities/0/0/0")
        #expect(gone.status == 503)
        #expect(gone.object["code"] == .string("tileset_unavailable"))
        #expect(gone.object["detail"] == .string("tile set 'cities' is unavailable: cities.mbtiles: no such file"))
        #expect(try await get(server.port, "/v1/tiles/zoo_map/16/35389/22192").status == 200)
        #expect(try await BadStoreTests.nearest(server.port) == ["AKALA 0.0", "AREPA 1143.946", "ARIEA 1419.146"])
        let query = try await post(server.port, "/v1/query", body: "FIND stations WHERE code = 'AKALA' RETURN code")
        #expect(query.text == #"{"count":1,"rows":[{"code":"AKALA"}]}"#)
        let tile = try await post(server.port, "/v1/query", body: "TILE 0/0/0 OF cities")
        // The same 503 as the endpoint: one classification of errors (ErrorCategory).
        #expect(tile.status == 503 && tile.object["code"] == .string("tileset_unavailable"), "\(tile.text)")
    }

    @Test func dropAndRenameFromTheCommandLine() async throws {
        let store = try await DemoStore.copy()
        let result = try await offPool { () throws -> [CLI.Result] in
            [try CLI.run(["rename", "parking", "parking_zones", "--db", store]),
             try CLI.run(["rename", "zoo_map", "zoo_tiles", "--db", store]),
             try CLI.run(["drop", "pens", "--db", store]),
             try CLI.run(["drop", "pens", "--db", store]),
             try CLI.run(["query", "FIND parking_zones WHERE fid = 7 RETURN fid", "--db", store, "--format", "json"]),
             try CLI.run(["query", "TILE 16/35389/22192 OF zoo_tiles", "--db", store])]
        }
        #expect(result[0].stdout == "renamed 'parking' to 'parking_zones'\n")
        #expect(result[1].stdout == "renamed 'zoo_map' to 'zoo_tiles'\n")
        #expect(result[2].stdout == "dropped 'pens'\n")
        #expect(result[3].status != 0)
        #expect(result[3].stderr.contains("unknown layer 'pens'"), "\(result[3].stderr)")
        #expect(result[4].status == 0, "\(result[4].stderr)")
        #expect(result[4].stdout.contains(#""fid": 7"#), "\(result[4].stdout)")
        #expect(result[5].status == 0, "\(result[5].stderr)")
        #expect(try GeoPackageValidator.problems(store) == nil)
    }

    @Test func aFailedImportIntoANewStoreLeavesNoFile() async throws {
        let db = try Fixtures.temporaryDirectory("mgmt").appendingPathComponent("new.gpkg").path
        let bad = try Fixtures.temporaryDirectory("mgmt").appendingPathComponent("bad.geojson").path
        try Data(#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[14.4,95]},"properties":{}}]}"#.utf8).write(to: URL(fileURLWithPath: bad))
        let failed = try await offPool { try CLI.run(["import", bad, "--layer", "x", "--db", db]) }
        #expect(failed.status != 0)
        #expect(failed.stderr.contains("feature 0: latitude 95 is outside -90…90"), "\(failed.stderr)")
        for suffix in ["", "-wal", "-shm"] { #expect(!FileManager.default.fileExists(atPath: db + suffix)) }
        // Into an existing store, the store stays (unchanged).
        let existing = try await DemoStore.copy()
        let again = try await offPool { try CLI.run(["import", bad, "--layer", "x", "--db", existing]) }
        #expect(again.status != 0)
        #expect(FileManager.default.fileExists(atPath: existing))
    }

    /// `vltava export` of every layer of the demo store (tables, a time series, lines with node
    /// ids, mixed geometries), imported into a new store as GeoJSON and exported again, gives
    /// the same bytes.
    @Test func everyLayersExportImportsAgain() async throws {
        let store = try await DemoStore.path()
        let db = try Fixtures.temporaryDirectory("mgmt").appendingPathComponent("again.gpkg").path
        let layers = ["animals", "districts", "districts_sjtsk", "observations", "parking", "paths", "pavilions", "pens", "stations"]
        let outcomes = try await offPool { () throws -> [(String, String, String)] in
            try layers.map { layer in
                let exported = try CLI.run(["export", layer, "--db", store])
                let file = (db as NSString).deletingLastPathComponent + "/\(layer).geojson"
                try Data(exported.stdout.utf8).write(to: URL(fileURLWithPath: file))
                let imported = try CLI.run(["import", file, "--layer", layer, "--format", "geojson", "--db", db])
                let again = try CLI.run(["export", layer, "--db", db])
                return (exported.stdout, again.stdout, imported.stdout + imported.stderr)
            }
        }
        for (layer, (first, second, log)) in zip(layers, outcomes) {
            #expect(first.count > 100 && first == second, "\(layer): \(log)")
        }
        #expect(outcomes[0].2 == "imported 605 rows into layer 'animals' (geojson)\n")
        #expect(outcomes[3].2 == "imported 816 rows into layer 'observations' (geojson)\n")
        #expect(try GeoPackageValidator.problems(db) == nil)
    }
}
