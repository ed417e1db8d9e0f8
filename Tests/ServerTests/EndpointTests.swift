// Every endpoint over real HTTP on loopback, against the demo store, with specific values:
// the expected answers were checked against the data (the station coordinates in
// Fixtures/air/stations-prague.csv, the NetworkX route of RouteCLITests).

import Foundation
@testable import Server
import Geometry
import TestSupport
import Testing
import VectorTiles

@Suite(.validatesStores) struct EndpointTests {
    @Test func layersListTheStore() async throws {
        let server = try await RoutedServer.shared.value
        let response = try await get(server, "/v1/layers")
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "application/json")
        let layers = response.json["layers"]?.items ?? []
        #expect(layers.compactMap { $0["name"]?.string } == ["animals", "districts", "districts_sjtsk", "observations", "parking", "paths", "pavilions", "pens", "stations"])
        guard let districts = layers.first(where: { $0["name"]?.string == "districts" }) else { Issue.record("no districts"); return }
        #expect(districts["family"] == .string("polygons"))
        #expect(districts["count"] == .integer(57))
        let bounds = districts["bounds"]?.items.compactMap(\.number) ?? []
        #expect(bounds.count == 4 && abs(bounds[0] - 14.224437) < 1e-6 && abs(bounds[3] - 50.177425) < 1e-6)
        #expect(districts["columns"]?.items.contains { $0["name"]?.string == "NAZEV_MC" && $0["type"]?.string == "TEXT" } == true)
        let stations = layers.first { $0["name"]?.string == "stations" }
        #expect(stations?["time_series"]?["table"] == .string("observations"))
        #expect(stations?["count"] == .integer(17))
        let tileSets = response.json["tilesets"]?.items.compactMap { $0["name"]?.string }
        #expect(tileSets == ["geography", "world_cities", "zoo_map"])
    }

    /// The Old Town point of the design brief lies in Praha 1 (fid 20 in the districts file).
    @Test func containingDistrict() async throws {
        let server = try await RoutedServer.shared.value
        let response = try await get(server, "/v1/layers/districts/containing?lon=14.4208&lat=50.0880")
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "application/geo+json")
        let features = response.json["features"]?.items ?? []
        #expect(features.count == 1)
        #expect(features.first?["properties"]?["NAZEV_MC"] == .string("Praha 1"))
        #expect(features.first?["id"] == .integer(20))
        #expect(features.first?["geometry"] == .null)  // polygons only on request
        // With geometry=true the polygon comes along, and it does contain the point.
        let withGeometry = try await get(server, "/v1/layers/districts/containing?lon=14.4208&lat=50.0880&geometry=true")
        let polygon = try GeoJSON.geometry(from: withGeometry.json["features"]?[0]?["geometry"] ?? .null)
        guard case .polygon = polygon else { Issue.record("not a polygon: \(polygon)"); return }
        // The zoo: the gorilla pavilion; the sea: nothing.
        let pavilion = try await get(server, "/v1/layers/pavilions/containing?lon=14.404809&lat=50.115416")
        #expect(pavilion.json["features"]?[0]?["properties"]?["name"] == .string("Pavilon goril"))
        let nowhere = try await get(server, "/v1/layers/districts/containing?lon=0&lat=0")
        #expect(nowhere.status == 200 && nowhere.json["features"]?.items.isEmpty == true)
    }

    /// The nearest station to the Old Town point is AREPA (Praha 1-n. Republiky), 600.76 m away
    /// by haversine from the CSV's coordinates.
    @Test func nearestStation() async throws {
        let server = try await RoutedServer.shared.value
        let expected = Geodesy.haversine(lon1: 14.4208, lat1: 50.0880, lon2: 14.42922, lat2: 50.088066)
        let response = try await get(server, "/v1/layers/stations/nearest?lon=14.4208&lat=50.0880&k=3")
        #expect(response.status == 200)
        let features = response.json["features"]?.items ?? []
        #expect(features.compactMap { $0["properties"]?["code"]?.string } == ["AREPA", "AKALA", "ARIEA"])
        #expect(abs((features.first?["properties"]?["distance_m"]?.number ?? 0) - expected) < 0.001)
        #expect(abs(expected - 600.76) < 0.01)
        #expect(features.first?["geometry"]?["coordinates"] == .array([.double(14.42922), .double(50.088066)]))
        // Latest values from the time series: the last hour of the fixture.
        #expect(features.first?["properties"]?["observed_until"] == .string("2019-04-16T21:00:00Z"))
        #expect(features.first?["properties"]?["latest"]?["no2"]?["value"] == .double(32.9))
        #expect(features.first?["properties"]?["latest"]?["so2"] == nil)  // AREPA does not measure SO2
        // Within 500 m: nothing; within 1 km: AREPA alone.
        #expect(try await get(server, "/v1/layers/stations/nearest?lon=14.4208&lat=50.0880&k=3&within_m=500").json["features"]?.items.isEmpty == true)
        #expect(try await get(server, "/v1/layers/stations/nearest?lon=14.4208&lat=50.0880&k=3&within_m=1000").json["features"]?.items.count == 1)
        // Only stations that measure SO2: Riegrovy sady is the nearest of them.
        let so2 = try await get(server, "/v1/layers/stations/nearest?lon=14.4208&lat=50.0880&where=so2")
        #expect(so2.json["features"]?[0]?["properties"]?["code"] == .string("ARIEA"))
        #expect(so2.json["features"]?[0]?["properties"]?["latest"]?["so2"]?["value"] == .double(3.5))
        // Traffic stations measuring NO2: Karlín.
        let traffic = try await get(server, "/v1/layers/stations/nearest?lon=14.4208&lat=50.0880&where=no2&attr.classif=traffic")
        #expect(traffic.json["features"]?.items.compactMap { $0["properties"]?["code"]?.string } == ["AKALA"])
        // A pen in the zoo: the tigers, 22.7 m from the point.
        let pens = try await get(server, "/v1/layers/pens/nearest?lon=14.4035&lat=50.1166")
        #expect(pens.json["features"]?[0]?["properties"]?["name"] == .string("tygři"))
        #expect(abs((pens.json["features"]?[0]?["properties"]?["distance_m"]?.number ?? 0) - 22.737) < 0.001)
    }

    /// The zoo entrance to the gorillas: 559.557 m (NetworkX on the same graph), snapping
    /// 12.774 m and 18.709 m, in OSRM's shape.
    @Test func zooRoute() async throws {
        let server = try await RoutedServer.shared.value
        let response = try await get(server, "/v1/route?from=14.4109,50.1167&to=14.40519,50.11576&network=paths")
        #expect(response.status == 200)
        let answer = response.json
        #expect(answer["code"] == .string("Ok"))
        let route = answer["routes"]?[0]
        #expect(abs((route?["distance"]?.number ?? 0) - 559.557) < 0.001)
        #expect(abs((route?["duration"]?.number ?? 0) - 402.9) < 0.1)
        let line = try GeoJSON.geometry(from: route?["geometry"] ?? .null)
        guard case .lineString(let lineString) = line else { Issue.record("not a LineString"); return }
        #expect(abs(Geodesy.length(of: lineString.coordinates) - 559.557) < 0.01)
        let waypoints = answer["waypoints"]?.items ?? []
        #expect(waypoints.count == 2)
        #expect(abs((waypoints.first?["distance"]?.number ?? 0) - 12.774) < 0.001)
        #expect(abs((waypoints.last?["distance"]?.number ?? 0) - 18.709) < 0.001)
        // The store has one line layer, so the network may be left out.
        let implicit = try await get(server, "/v1/route?from=14.4109,50.1167&to=14.40519,50.11576")
        #expect(abs((implicit.json["routes"]?[0]?["distance"]?.number ?? 0) - 559.557) < 0.001)
        // Old Town is 3 km from the zoo's paths: NoSegment, 422, as a problem.
        let far = try await get(server, "/v1/route?from=14.4213,50.0875&to=14.40519,50.11576&network=paths")
        #expect(far.status == 422)
        #expect(far.header("Content-Type") == "application/problem+json")
        #expect(far.object["code"] == .string("NoSegment"))
        #expect(far.object["parameter"] == .string("from"))
    }

    /// Step-free: from the entrance to the sea lions' pen the foot route takes two flights of
    /// steps (110.416 m); the wheelchair route goes round them, 165.696 m at 4 km/h. Where only
    /// steps join the points it is a 422 NoRoute saying so, and an unknown profile is a 400
    /// that lists the profiles.
    @Test func wheelchairRoute() async throws {
        let server = try await RoutedServer.shared.value
        let seaLions = "/v1/route?from=14.4109,50.1167&to=14.41064991,50.11601702&network=paths"
        let foot = try await get(server, seaLions)
        #expect(foot.status == 200)
        #expect(abs((foot.json["routes"]?[0]?["distance"]?.number ?? 0) - 110.416) < 0.001)
        let response = try await get(server, seaLions + "&profile=wheelchair")
        #expect(response.status == 200)
        let answer = response.json
        #expect(answer["profile"] == .string("wheelchair"))
        let route = answer["routes"]?[0]
        #expect(abs((route?["distance"]?.number ?? 0) - 165.696) < 0.001)
        #expect(abs((route?["duration"]?.number ?? 0) - 149.1) < 0.1)
        let stairs = try await get(server, "/v1/route?from=14.396432,50.10957096&to=14.39647441,50.1094895&profile=wheelchair")
        #expect(stairs.status == 422)
        #expect(stairs.object["code"] == .string("NoRoute"))
        #expect(stairs.object["detail"] == .string("no route: no path without steps connects the two points: only paths with steps join them"))
        let bike = try await get(server, seaLions + "&profile=bike")
        #expect(bike.status == 400)
        #expect(bike.object["parameter"] == .string("profile"))
        #expect(bike.object["detail"]?.string?.hasSuffix("unknown profile 'bike' (profiles: foot, wheelchair, any)") == true)
    }

    @Test func hereOnTheHomeScreen() async throws {
        let server = try await RoutedServer.shared.value
        let response = try await get(server, "/v1/here?lon=14.4208&lat=50.0880")
        #expect(response.status == 200)
        let answer = response.json
        #expect(answer["area"]?["inside"] == .bool(true))
        #expect(answer["area"]?["reason"] == .null)
        let containing = answer["containing"]?.items ?? []
        #expect(containing.compactMap { $0["layer"]?.string } == ["districts", "districts_sjtsk", "parking", "pavilions"])
        #expect(containing.first?["features"]?[0]?["properties"]?["NAZEV_MC"] == .string("Praha 1"))
        let station = answer["nearest_station"]
        #expect(station?["properties"]?["code"] == .string("AREPA"))
        #expect(station?["properties"]?["layer"] == .string("stations"))
        #expect(abs((station?["properties"]?["distance_m"]?.number ?? 0) - 600.76) < 0.01)
        #expect(station?["properties"]?["latest"]?["pm10"]?["value"] == .double(43))
        // West of Prague: outside the mapped area, with how far.
        let outside = try await get(server, "/v1/here?lon=14.10&lat=50.0").json
        #expect(outside["area"]?["inside"] == .bool(false))
        #expect(outside["area"]?["reason"] == .string("outside_area"))
        #expect(abs((outside["area"]?["metres_outside"]?.number ?? 0) - 12_406.9) < 1)
        #expect(outside["nearest_station"]?["properties"]?["code"] == .string("ARERA"))
        // In the zoo, with the zoo's paths as the area.
        let zoo = try await get(server, "/v1/here?lon=14.404809&lat=50.115416&area=paths").json
        #expect(zoo["area"]?["layer"] == .string("paths") && zoo["area"]?["inside"] == .bool(true))
        #expect(zoo["containing"]?.items.first { $0["layer"]?.string == "pavilions" }?["features"]?[0]?["properties"]?["name"] == .string("Pavilon goril"))
    }

    @Test func tilesAndTileJSON() async throws {
        let server = try await RunningServer.shared.value
        // The zoo's tiles are GeoJSON whatever the metadata says: served as MVT, transcoded.
        let tile = try await get(server.port, "/v1/tiles/zoo_map/16/35389/22192")
        #expect(tile.status == 200)
        #expect(tile.header("Content-Type") == "application/vnd.mapbox-vector-tile")
        #expect(tile.header("Content-Encoding") == nil)
        #expect(try MVTTile(bytes: tile.body).layerNames == ["water", "buildings", "pois", "roads", "earth", "landuse"])
        // y is XYZ: the TMS row of the same tile is not a tile of the set.
        let tms = try await get(server.port, "/v1/tiles/zoo_map/16/35389/\((1 << 16) - 1 - 22192)")
        #expect(tms.status == 404 && tms.object["code"] == .string("tile_not_found"))
        // Gzip MVT: sent as stored to a client that accepts gzip.
        let mvt = try await get(server.port, "/v1/tiles/world_cities/0/0/0", headers: [("Accept-Encoding", "gzip")])
        #expect(mvt.status == 200)
        #expect(mvt.header("Content-Type") == "application/vnd.mapbox-vector-tile")
        #expect(mvt.header("Content-Encoding") == "gzip")
        #expect(Array(mvt.body.prefix(2)) == [0x1F, 0x8B])
        let png = try await get(server.port, "/v1/tiles/geography/1/1/0")
        #expect(png.header("Content-Type") == "image/png")
        #expect(Array(png.body.prefix(4)) == [0x89, 0x50, 0x4E, 0x47])
        // Uncompressed tiles are gzipped for clients that accept it.
        let gzipped = try await get(server.port, "/v1/tiles/zoo_map/16/35389/22192", headers: [("Accept-Encoding", "gzip")])
        #expect(gzipped.header("Content-Encoding") == "gzip")
        #expect(try Decompression.inflate(gzipped.body) == tile.body)
        // Revalidation: the ETag is a hash of the tile's bytes (the PNG's, 20,156 stored bytes:
        // FNV-1a eight bytes at a time, then MurmurHash3's finaliser, checked with Python); a
        // matching If-None-Match gets a bodiless 304, any other tag the tile. Encoded tiles
        // have theirs, the same gzipped or not.
        let etag = "W/\"1d9046e7f6cf749d\""
        #expect(png.header("ETag") == etag)
        #expect(tile.header("ETag") == gzipped.header("ETag") && tile.header("ETag") != etag)
        for ifNoneMatch in [etag, "\"other\", \(etag)", "*", String(etag.dropFirst(2))] {
            let cached = try await get(server.port, "/v1/tiles/geography/1/1/0", headers: [("If-None-Match", ifNoneMatch)])
            #expect(cached.status == 304 && cached.body.isEmpty && cached.header("ETag") == etag, "\(ifNoneMatch)")
            #expect(cached.header("Cache-Control") == "public, max-age=3600")
        }
        let changed = try await get(server.port, "/v1/tiles/geography/1/1/0", headers: [("If-None-Match", "W/\"0000000000000000\"")])
        #expect(changed.status == 200 && changed.body == png.body)
        let zooTag = try #require(tile.header("ETag"))
        #expect(try await get(server.port, "/v1/tiles/zoo_map/16/35389/22192", headers: [("If-None-Match", zooTag)]).status == 304)
        // TileJSON points at this server, vector tiles by their MVT URL.
        let tileJSON = try await get(server.port, "/v1/tiles/zoo_map.json")
        #expect(tileJSON.status == 200)
        #expect(tileJSON.json["tilejson"] == .string("3.0.0"))
        #expect(tileJSON.json["tiles"] == .array([.string("http://127.0.0.1:\(server.port)/v1/tiles/zoo_map/{z}/{x}/{y}.mvt")]))
        #expect(tileJSON.json["minzoom"] == .integer(15) && tileJSON.json["maxzoom"] == .integer(16))
        #expect(tileJSON.json["name"] == .string("zoo_prague_map"))
        #expect(try await get(server.port, "/v1/tiles/geography.json").json["tiles"] == .array([.string("http://127.0.0.1:\(server.port)/v1/tiles/geography/{z}/{x}/{y}")]))
        // Missing tile, unknown set.
        #expect(try await get(server.port, "/v1/tiles/zoo_map/16/0/0").object["code"] == .string("tile_not_found"))
        // A sparse set: world_cities has no tile 6/26/26 (the mid-Atlantic, no city), which lies in
        // its zooms and bounds: an empty tile, 204. Outside its bounds (6/0/0, north of Alaska) or
        // past its maxzoom 6, the address is wrong: 404.
        let empty = try await get(server.port, "/v1/tiles/world_cities/6/26/26")
        #expect(empty.status == 204 && empty.body.isEmpty && empty.header("Cache-Control") == "public, max-age=3600")
        #expect(try await get(server.port, "/v1/tiles/world_cities/6/0/0").object["code"] == .string("tile_not_found"))
        #expect(try await get(server.port, "/v1/tiles/world_cities/7/40/40").object["code"] == .string("tile_not_found"))
        let unknown = try await get(server.port, "/v1/tiles/zoo_mapp/16/35389/22192")
        #expect(unknown.status == 404)
        #expect(unknown.object["detail"] == .string("unknown tile set 'zoo_mapp' — did you mean 'zoo_map'?"))
    }

    /// Tile set names are keys of the snapshot's registered sets, never file paths.
    @Test func noPathTraversalThroughTiles() async throws {
        let server = try await RoutedServer.shared.value
        for target in ["/v1/tiles/..%2F..%2Fetc/0/0/0", "/v1/tiles/../../etc/passwd", "/v1/tiles/zoo_map/../../../etc/passwd",
                       "/v1/tiles/%2Fetc%2Fpasswd/0/0/0", "/v1/tiles/..%2F..%2F..%2Fetc%2Fpasswd.json", "/v1/tiles/%2e%2e/0/0/0",
                       "/v1/tiles/zoo_map/..%2F16/35389/22192", "/v1/tiles/%00/0/0/0"] {
            let response = try await get(server, target)
            #expect([400, 404].contains(response.status), "\(target): \(response.status)")
            #expect(!response.text.contains("root:"), "\(target)")
            #expect(response.header("Content-Type") == "application/problem+json", "\(target)")
        }
    }

    @Test func healthMetricsAndOpenAPI() async throws {
        let server = try await RunningServer.shared.value
        // HEAD, as load balancers probe: the GET answer's head without its body.
        let head = try await HTTPConnection.open(port: server.port).request("HEAD", "/healthz")
        #expect(head.status == 200 && head.body.isEmpty)
        let health = try await get(server.port, "/healthz")
        #expect(health.status == 200 && health.json["status"] == .string("ok") && health.json["layers"] == .integer(9))
        for _ in 0..<3 { _ = try await get(server.port, "/v1/layers/districts/containing?lon=14.4208&lat=50.0880") }
        _ = try await get(server.port, "/v1/layers/nope/containing?lon=14.4208&lat=50.0880")
        let metrics = try await get(server.port, "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
        let lines = metrics.text.split(separator: "\n").map(String.init)
        let ok = lines.first { $0.hasPrefix("vltava_http_requests_total{route=\"/v1/layers/{layer}/containing\",method=\"GET\",status=\"200\"}") }
        #expect((ok?.split(separator: " ").last.flatMap { Int($0) } ?? 0) >= 3)
        #expect(lines.contains { $0.hasPrefix("vltava_http_requests_total{route=\"/v1/layers/{layer}/containing\",method=\"GET\",status=\"404\"}") })
        #expect(lines.contains { $0.hasPrefix("vltava_http_request_duration_seconds_bucket{route=\"/v1/layers/{layer}/containing\",method=\"GET\",le=\"+Inf\"}") })
        #expect(lines.contains("# TYPE vltava_http_request_duration_seconds histogram"))
        #expect(lines.contains { $0.hasPrefix("vltava_snapshot_loaded_timestamp_seconds ") })
        // Every bucket line of a histogram is cumulative: never smaller than the one before.
        let buckets = lines.filter { $0.hasPrefix("vltava_http_request_duration_seconds_bucket{route=\"/v1/layers/{layer}/containing\"") }
            .compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }
        #expect(buckets.count == 15 && buckets == buckets.sorted())
    }

    /// The OpenAPI document lists exactly the router's routes, and every route is really
    /// registered (answers something other than "no such endpoint").
    @Test func openAPIMatchesTheRoutes() async throws {
        let server = try await RunningServer.shared.value
        let response = try await get(server.port, "/openapi.json")
        #expect(response.status == 200)
        let document = response.json
        #expect(document["openapi"] == .string("3.0.3"))
        guard case .object(let paths)? = document["paths"] else { Issue.record("no paths"); return }
        var documented: Set<String> = []
        for (path, item) in paths {
            guard case .object(let operations) = item else { continue }
            for method in operations.keys where ["get", "post", "put", "delete", "patch"].contains(method) { documented.insert("\(method.uppercased()) \(path)") }
        }
        let registered = Set(server.server.routes.map { "\($0.method) \($0.path)" })
        #expect(documented == registered)
        for route in server.server.routes {
            let target = route.path.replacingOccurrences(of: "{layer}", with: "districts").replacingOccurrences(of: "{tileset}", with: "zoo_map")
                .replacingOccurrences(of: "{z}", with: "16").replacingOccurrences(of: "{x}", with: "35389").replacingOccurrences(of: "{y}", with: "22192")
                .replacingOccurrences(of: "{collection}", with: "pens").replacingOccurrences(of: "{featureId}", with: "4791797957")
                .replacingOccurrences(of: "{profile}", with: "foot").replacingOccurrences(of: "{coordinates}", with: "14.4109,50.1167;14.40519,50.11576")
                .replacingOccurrences(of: "/map/{file}", with: "/map/map.js").replacingOccurrences(of: "/leaflet/images/{file}", with: "/leaflet/images/layers.png")
                .replacingOccurrences(of: "/leaflet/{file}", with: "/leaflet/leaflet.js").replacingOccurrences(of: "/maplibre/{file}", with: "/maplibre/maplibre-gl.js")
            let answer = try await HTTPConnection.open(port: server.port).request(route.method, target)
            #expect(!["not_found", "method_not_allowed"].contains(answer.object["code"]?.string ?? ""), "\(route.method) \(target)")
        }
    }

    @Test func corsAndGzip() async throws {
        let server = try await RunningServer.shared.value
        let preflight = try await HTTPConnection.open(port: server.port).request("OPTIONS", "/v1/layers/districts/containing", headers: [
            ("Origin", "https://app.example"), ("Access-Control-Request-Method", "GET"),
        ])
        #expect(preflight.status == 204)
        #expect(preflight.header("Access-Control-Allow-Origin") == "*")
        #expect(preflight.header("Access-Control-Allow-Methods")?.contains("GET") == true)
        let simple = try await get(server.port, "/v1/layers", headers: [("Origin", "https://app.example")])
        #expect(simple.header("Access-Control-Allow-Origin") == "*")
        // Problems carry CORS headers too, or a browser app could not read its errors.
        let problem = try await get(server.port, "/v1/layers/nope/containing?lon=1&lat=1", headers: [("Origin", "https://app.example")])
        #expect(problem.status == 404 && problem.header("Access-Control-Allow-Origin") == "*")
        let plain = try await get(server.port, "/v1/layers")
        let gzipped = try await get(server.port, "/v1/layers", headers: [("Accept-Encoding", "br, gzip;q=0.8")])
        #expect(plain.header("Content-Encoding") == nil)
        #expect(gzipped.header("Content-Encoding") == "gzip")
        #expect(gzipped.header("Vary") == "Accept-Encoding")
        #expect(gzipped.body.count < plain.body.count / 3)
        #expect(try Decompression.inflate(gzipped.body) == plain.body)
        let refused = try await get(server.port, "/v1/layers", headers: [("Accept-Encoding", "gzip;q=0")])
        #expect(refused.header("Content-Encoding") == nil)
    }
}
