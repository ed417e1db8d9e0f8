// The standard APIs against clients nobody on the project wrote, over real HTTP on loopback:
// GDAL's OAPIF driver (ogrinfo, ogr2ogr) reads OGC API – Features; routingpy's OSRM client and
// the `polyline` decoder (PyPI, scripts/install-deps.sh --test) drive the OSRM API, and its
// GraphHopper client the isochrone. What they
// read is checked against the store itself, GEOS, and /v1/route.

import Engine
import Foundation
import Geometry
import Store
import Support
import TestSupport
import Testing

@Suite(.validatesStores) struct StandardClientTests {
    static let ogrinfo = URL(fileURLWithPath: "/usr/bin/ogrinfo")
    static let ogr2ogr = URL(fileURLWithPath: "/usr/bin/ogr2ogr")

    /// Ten festival stages on the zoo's paths: pens of the zoo (sea lions, meerkats, hyenas,
    /// elks, …, gorillas), to the 6 decimals routingpy sends.
    static let stages: [(Double, Double)] = [
        (14.41065, 50.116017), (14.406937, 50.119896), (14.404921, 50.118809), (14.402208, 50.119129), (14.404378, 50.117699),
        (14.407006, 50.116108), (14.408996, 50.115365), (14.409289, 50.116703), (14.406123, 50.117445), (14.405187, 50.115756),
    ]

    // MARK: - GDAL's OAPIF driver

    @Test func gdalListsEveryCollection() async throws {
        let server = try await RunningServer.shared.value
        let url = "OAPIF:http://127.0.0.1:\(server.port)/ogc"
        let list = try await offPool { try Fixtures.run(Self.ogrinfo, ["-ro", "-so", url]) }
        #expect(list.status == 0, "\(list.stderr)")
        // Every layer of the store, in name order, with its geometry type (tables have none).
        let expected = ["1: animals (title: animals)", "2: districts (title: districts) (Polygon)", "3: districts_sjtsk (title: districts_sjtsk) (Polygon)",
                        "4: observations (title: observations)", "5: parking (title: parking) (Polygon)", "6: paths (title: paths) (Line String)",
                        "7: pavilions (title: pavilions) (Polygon)", "8: pens (title: pens) (Point)", "9: stations (title: stations) (Point)"]
        let lines = list.stdout.split(separator: "\n").map(String.init).filter { $0.first?.isNumber == true }
        #expect(lines == expected, "\(list.stdout)")
        let districts = try await offPool { try Fixtures.run(Self.ogrinfo, ["-ro", "-so", url, "districts"]) }
        #expect(districts.stdout.contains("Feature Count: 57"), "\(districts.stdout)")
        #expect(districts.stdout.contains("Extent: (14.224437, 49.941900) - (14.706788, 50.177425)"), "\(districts.stdout)")
    }

    /// `ogr2ogr -f GPKG` copies the 57 districts page by page (GDAL asks 10 at a time and follows
    /// the `next` links) with every attribute and every coordinate of the store.
    @Test func gdalCopiesTheDistricts() async throws {
        let server = try await RunningServer.shared.value
        let before = try await itemsRequests(server.port)
        let out = try Fixtures.temporaryDirectory("oapif").appendingPathComponent("districts.gpkg").path
        let copy = try await offPool { try Fixtures.run(Self.ogr2ogr, ["-f", "GPKG", out, "OAPIF:http://127.0.0.1:\(server.port)/ogc", "districts"]) }
        #expect(copy.status == 0, "\(copy.stderr)")
        let copied = try GeoPackage(path: out, mode: .readOnly).readFeatures(of: "districts").features
        let original = try GeoPackage(path: try await DemoStore.path(), mode: .readOnly).readFeatures(of: "districts").features
        #expect(copied.count == 57 && original.count == 57)
        let byFID = Dictionary(uniqueKeysWithValues: original.map { ($0.fid, $0.feature) })
        var compared = 0
        for feature in copied {
            guard let source = byFID[feature.fid] else { Issue.record("fid \(feature.fid) is not in the store"); continue }
            #expect(feature.feature.properties.names.sorted() == source.properties.names.sorted(), "fid \(feature.fid)")
            for (name, value) in source.properties {
                #expect(feature.feature.properties[name] == value, "fid \(feature.fid): \(name)")
            }
            let a = Self.coordinates(feature.feature.geometry), b = Self.coordinates(source.geometry)
            #expect(a.count == b.count && a.count > 0, "fid \(feature.fid)")
            #expect(zip(a, b).allSatisfy { abs($0 - $1) <= 1e-9 }, "fid \(feature.fid)")
            compared += 1
        }
        #expect(compared == 57)
        // At 10 a page, 57 features are 6 pages (the metrics count every items request).
        #expect(try await itemsRequests(server.port) - before >= 6)
    }

    /// Several statements asked for as GeoJSON are one FeatureCollection (a JSON array is not
    /// GeoJSON), whose features say their statement: GDAL reads it as one layer.
    @Test func gdalReadsSeveralStatementsAsOneCollection() async throws {
        let server = try await RunningServer.shared.value
        let text = "FIND pavilions CONTAINING POINT(14.40497 50.11545) RETURN fid, name; FIND pens NEAREST 2 TO POINT(14.40497 50.11545) RETURN fid, name, distance_m"
        let answer = try await post(server.port, "/v1/query?format=geojson", body: text)
        #expect(answer.status == 200 && answer.header("Content-Type") == "application/geo+json")
        #expect(answer.json["type"] == .string("FeatureCollection"))
        let features = answer.json["features"]?.items ?? []
        #expect(features.compactMap { $0["properties"]?["statement"]?.number } == [1, 2, 2])
        #expect(features.compactMap { $0["id"]?.number } == [30000629, 4791797957, 4639672111])
        let file = try Fixtures.temporaryDirectory("ogr").appendingPathComponent("statements.geojson")
        try Data(answer.body).write(to: file)
        let info = try await offPool { try Fixtures.run(Self.ogrinfo, ["-ro", "-al", file.path]) }
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout.contains("Feature Count: 3"), "\(info.stdout)")
        #expect(info.stdout.contains("statement (Integer) = 2") && info.stdout.contains("name (String) = Pavilon goril"))
        #expect(info.stdout.contains("distance_m (Real) = 37.385"), "\(info.stdout)")
        // EXPLAIN answers a plan, which no GeoJSON holds: refused, as JSON it is answered.
        let plan = try await post(server.port, "/v1/query?format=geojson", body: "EXPLAIN FIND districts CONTAINING POINT(14.4208 50.0880)")
        #expect(plan.status == 400 && plan.json["detail"]?.string?.contains("format=json") == true)
        #expect(try await post(server.port, "/v1/query?format=json", body: "EXPLAIN FIND districts CONTAINING POINT(14.4208 50.0880)").status == 200)
    }

    static func coordinates(_ geometry: Geometry?) -> [Double] {
        var all: [Double] = []
        geometry?.forEachCoordinateArray { all += $0 }
        return all
    }

    /// GDAL 3.6 (Debian 12's) with `-where` and `-t_srs EPSG:5514`: it knows only the drafts'
    /// `cql-text` (named in an OpenAPI `filter-lang` enum of `/collections/{id}/items`) and no
    /// Part 2, so it reads every page and filters and projects itself. Its answers are the
    /// server's own: the features the CQL2 filter selects, and the coordinates `crs=EPSG:5514`
    /// gives, within a micrometre (both through PROJ).
    @Test func gdalWhereAndSJTSKAgreeWithTheServer() async throws {
        let server = try await RunningServer.shared.value
        let out = try Fixtures.temporaryDirectory("oapif-where").appendingPathComponent("districts.json").path
        let copy = try await offPool {
            try Fixtures.run(Self.ogr2ogr, ["-f", "GeoJSON", "-lco", "RFC7946=NO", "-lco", "COORDINATE_PRECISION=6", "-t_srs", "EPSG:5514", out,
                                            "OAPIF:http://127.0.0.1:\(server.port)/ogc", "districts", "-where", "KOD_MC > 547000 AND NAZEV_MC LIKE 'Praha-%'"])
        }
        #expect(copy.status == 0, "\(copy.stderr)")
        let gdal = try JSON.parse(String(contentsOfFile: out, encoding: .utf8))
        let filter = "KOD_MC > 547000 AND NAZEV_MC LIKE 'Praha-%'".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let ours = try await get(server.port, "/ogc/collections/districts/items?limit=100&crs=EPSG:5514&filter=\(filter)").json
        func byName(_ document: JSONValue) -> [String: [[Double]]] {
            var result: [String: [[Double]]] = [:]
            for feature in document["features"]?.items ?? [] {
                guard case .string(let name)? = feature["properties"]?["NAZEV_MC"] else { continue }
                var points: [[Double]] = []
                func walk(_ value: JSONValue) {
                    let items = value.items
                    if items.count >= 2, let x = items[0].number, let y = items[1].number { points.append([x, y]) } else { items.forEach(walk) }
                }
                walk(feature["geometry"]?["coordinates"] ?? .null)
                result[name] = points
            }
            return result
        }
        let (theirs, mine) = (byName(gdal), byName(ours))
        #expect(Set(theirs.keys) == Set(mine.keys) && mine.count == 13, "\(theirs.keys.sorted()) \(mine.keys.sorted())")
        var worst = 0.0, vertices = 0
        for (name, points) in mine {
            guard let other = theirs[name], other.count == points.count else { Issue.record("\(name): vertex counts differ"); continue }
            for (a, b) in zip(points, other) {
                worst = max(worst, ((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1])).squareRoot())
                vertices += 1
            }
        }
        // GDAL writes 6 decimals (a micrometre); the two agree to that.
        #expect(worst <= 1e-6 && vertices > 5_000, "\(worst) m over \(vertices) vertices")
    }

    func itemsRequests(_ port: Int) async throws -> Int {
        let metrics = try await get(port, "/metrics").text
        let prefix = "vltava_http_requests_total{route=\"/ogc/collections/{collection}/items\",method=\"GET\",status=\"200\"}"
        return metrics.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { $0.split(separator: " ").last.flatMap { Int($0) } } ?? 0
    }

    // MARK: - OGC API's parameters, against the store

    /// bbox selects the parking zones whose geometry meets the box, as GEOS says, and the pages
    /// of that selection, followed by their `next` links, hold each of them once.
    @Test func bboxAndPagingAgreeWithGEOS() async throws {
        let server = try await RunningServer.shared.value
        let box = BBox(minLon: 14.40, minLat: 50.07, maxLon: 14.43, maxLat: 50.09)
        let parking = try GeoPackage(path: try await DemoStore.path(), mode: .readOnly).readFeatures(of: "parking").features
        let geos = try GEOSContext()
        let boxPolygon = Geometry.polygon(Polygon(rings: [[box.minLon, box.minLat, box.maxLon, box.minLat, box.maxLon, box.maxLat, box.minLon, box.maxLat, box.minLon, box.minLat]]))
        let expected = Set(try parking.filter { try geos.intersects($0.feature.geometry ?? .collection([]), boxPolygon) }.map(\.fid))
        #expect(expected.count > 100)
        var target: String? = "/ogc/collections/parking/items?bbox=14.40,50.07,14.43,50.09&limit=100"
        var seen: [Int64] = []
        var pages = 0
        while let next = target, pages < 50 {
            let page = try await get(server.port, next)
            #expect(page.status == 200 && page.header("Content-Type") == "application/geo+json")
            #expect(page.json["numberMatched"] == .integer(Int64(expected.count)))
            let features = page.json["features"]?.items ?? []
            #expect(page.json["numberReturned"] == .integer(Int64(features.count)))
            seen += features.compactMap { $0["id"]?.number.map { Int64($0) } }
            target = page.json["links"]?.items.first { $0["rel"]?.string == "next" }?["href"]?.string.map { String($0.drop { $0 != "/" }.dropFirst(2).drop { $0 != "/" }) }
            pages += 1
        }
        #expect(pages == (expected.count + 99) / 100)
        #expect(seen.count == expected.count && Set(seen) == expected)
        // `after` (the keyset form a layer kept in PostgreSQL links with) on a loaded layer: the
        // box's features past a fid, in order, with the offset still counting from there.
        let middle = seen.sorted()[seen.count / 2]
        let past = try await get(server.port, "/ogc/collections/parking/items?bbox=14.40,50.07,14.43,50.09&after=\(middle)&offset=2&limit=1000")
        let rest = seen.sorted().filter { $0 > middle }
        #expect(past.status == 200 && past.json["numberMatched"] == .integer(Int64(rest.count)))
        #expect((past.json["features"]?.items ?? []).compactMap { $0["id"]?.number.map { Int64($0) } } == Array(rest.dropFirst(2)))
        #expect(try await get(server.port, "/ogc/collections/parking/items?after=x").status == 400)
    }

    /// datetime on the time series (observations: by each row's hour; stations: those with an
    /// observation then), a property filter, one item by id, and the errors.
    @Test func datetimePropertiesAndOneItem() async throws {
        let server = try await RunningServer.shared.value
        // The hour ending 2019-04-16T21:00Z, the last of the data: one row per reporting station.
        let hour = try await get(server.port, "/ogc/collections/observations/items?datetime=2019-04-16T20:30:00Z&limit=100")
        let rows = hour.json["features"]?.items ?? []
        #expect(hour.status == 200 && rows.count == 17 && rows.allSatisfy { $0["properties"]?["interval_end"]?.string == "2019-04-16T21:00:00Z" })
        // Open intervals: after the data ends, no station has an observation.
        let after = try await get(server.port, "/ogc/collections/stations/items?datetime=2019-04-17T00:00:00Z/..")
        #expect(after.json["numberMatched"] == .integer(0))
        let during = try await get(server.port, "/ogc/collections/stations/items?datetime=../2019-04-15T00:00:00Z&limit=50")
        #expect(during.json["numberMatched"] == .integer(17))
        // A property filter, through the same compiler as attr.NAME.
        let urban = try await get(server.port, "/ogc/collections/stations/items?classif=urban&limit=50")
        let codes = (urban.json["features"]?.items ?? []).compactMap { $0["properties"]?["code"]?.string }
        #expect(codes.contains("AREPA") && urban.json["numberMatched"] == .integer(Int64(codes.count)))
        // One item, with its links.
        let gorillas = try await get(server.port, "/ogc/collections/pens/items/4791797957")
        #expect(gorillas.json["properties"]?["name"] == .string("gorily"))
        #expect(gorillas.json["geometry"]?["coordinates"] == .array([.double(14.40518699), .double(50.11575607)]))
        #expect(gorillas.json["links"]?.items.contains { $0["rel"]?.string == "collection" } == true)
        // Errors: a time on a layer without one, an unknown column, a malformed box, HTML.
        #expect(try await get(server.port, "/ogc/collections/districts/items?datetime=2019-04-16").status == 400)
        let typo = try await get(server.port, "/ogc/collections/stations/items?clasif=urban")
        #expect(typo.status == 400 && typo.json["detail"]?.string?.contains("did you mean 'classif'") == true)
        #expect(try await get(server.port, "/ogc/collections/districts/items?bbox=14.4,50.1").status == 400)
        #expect(try await get(server.port, "/ogc/collections/pens/items/1").status == 404)
        #expect(try await get(server.port, "/ogc/collections?f=html").status == 406)
        #expect(try await get(server.port, "/ogc", headers: [("Accept", "text/html")]).status == 406)
        #expect(try await get(server.port, "/ogc", headers: [("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")]).status == 200)
        let conformance = try await get(server.port, "/ogc/conformance")
        #expect(conformance.json["conformsTo"]?.items.count == 29)
        let service = try await get(server.port, "/openapi.json", headers: [("Accept", "application/vnd.oai.openapi+json;version=3.0")])
        #expect(service.header("Content-Type") == "application/vnd.oai.openapi+json;version=3.0" && service.json["openapi"] == .string("3.0.3"))
    }

    /// The served document is valid OpenAPI 3.0 (OGC's OpenAPI 3.0 class), as
    /// openapi-spec-validator (PyPI) judges it, and describes the OGC and OSRM paths.
    @Test func theServiceDescriptionIsValidOpenAPI30() async throws {
        let server = try await RunningServer.shared.value
        let document = try await get(server.port, "/openapi.json")
        let file = try Fixtures.temporaryDirectory("openapi").appendingPathComponent("openapi.json")
        try Data(document.body).write(to: file)
        let check = "import json, sys; from openapi_spec_validator import validate; validate(json.load(open(sys.argv[1]))); print('valid')"
        let run = try await offPool { try Fixtures.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", check, file.path]) }
        #expect(run.status == 0 && run.stdout == "valid\n", "\(run.stderr)")
        for path in ["/ogc", "/ogc/conformance", "/ogc/collections", "/ogc/collections/{collection}", "/ogc/collections/{collection}/items",
                     "/ogc/collections/{collection}/items/{featureId}", "/route/v1/{profile}/{coordinates}", "/table/v1/{profile}/{coordinates}",
                     "/nearest/v1/{profile}/{coordinates}"] {
            #expect(document.json["paths"]?[path]?["get"] != nil, "\(path)")
        }
    }

    /// Schemathesis (PyPI) over the whole served document, as scripts/schemathesis.sh runs it:
    /// every operation (the /v1 API, OGC API – Features, OSRM), positive and negative data, every
    /// check, the stateful phase, on a server of its own whose admin token schemathesis sends, so
    /// the writes change its throwaway store as the run goes. A short run (8
    /// cases per operation and phase); the long one runs outside CI. Finds nothing: no 5xx, no
    /// undocumented status, no schema-valid request refused beyond scripts/schemathesis.toml.
    @Test func schemathesisFindsNothing() async throws {
        let script = Fixtures.root.appendingPathComponent("scripts/schemathesis.sh")
        let run = try await offPool { try Fixtures.run(script, ["--binary", CLI.binary.path, "--max-examples", "8"], timeout: 1200) }
        #expect(run.status == 0, "\(run.stdout.suffix(6000))\n\(run.stderr.suffix(2000))")
        // Every operation schemathesis selected was tested (it counts 56 of the 57 the router
        // has; which one it folds away is its business, the route test checks the document).
        #expect(run.stdout.contains("Selected: 71/71\n") && run.stdout.contains("Tested: 71\n"), "\(run.stdout.suffix(3000))")
        #expect(!run.stdout.contains("Failures:"), "\(run.stdout.suffix(6000))")
    }

    /// The document says what the server accepts: each form here is refused by the server, and
    /// the schema excludes it too (schemathesis counts a schema-valid request that is refused),
    /// or documents the status the server answers.
    @Test func theServiceDescriptionSaysWhatIsAccepted() async throws {
        let server = try await RunningServer.shared.value
        let paths = try await get(server.port, "/openapi.json").json["paths"]
        let schemas = try await get(server.port, "/openapi.json").json["components"]?["schemas"]
        func parameter(_ path: String, _ name: String, method: String = "get") -> JSONValue? {
            paths?[path]?[method]?["parameters"]?.items.first { $0["name"]?.string == name }?["schema"]
        }
        // A repeated f on the five OGC documents: 400, now documented.
        for path in ["/ogc", "/ogc/conformance", "/ogc/collections", "/ogc/collections/{collection}", "/ogc/collections/{collection}/items/{featureId}"] {
            let target = path.replacingOccurrences(of: "{collection}", with: "pens").replacingOccurrences(of: "{featureId}", with: "4791797957")
            let answer = try await get(server.port, target + "?f=json&f=json")
            #expect(answer.status == 400, "\(target)")
            #expect(paths?[path]?["get"]?["responses"]?["400"] != nil, "\(path)")
        }
        // Tiles: x and y below 2^z (at z 30, 2^30); y's digits at most 10.
        #expect(try await get(server.port, "/v1/tiles/zoo_map/1/2/0").status == 400)
        #expect(parameter("/v1/tiles/{tileset}/{z}/{x}/{y}", "x")?["maximum"] == .integer(1_073_741_823))
        #expect(parameter("/v1/tiles/{tileset}/{z}/{x}/{y}", "y")?["pattern"] == .string("^[0-9]{1,10}(\\.(mvt|pbf|json))?$"))
        // An empty (or blank) query, as text or as JSON.
        #expect(try await post(server.port, "/v1/query", body: " ").status == 400)
        #expect(try await post(server.port, "/v1/query", body: #"{"query": ""}"#, headers: [("Content-Type", "application/json")]).status == 400)
        #expect(schemas?["QueryText"]?["minLength"] == .integer(1) && schemas?["QueryText"]?["pattern"] == .string("\\S"))
        let query = paths?["/v1/query"]?["post"]?["requestBody"]?["content"]
        #expect(query?["text/plain"]?["schema"]?["$ref"] == .string("#/components/schemas/QueryText"))
        #expect(query?["application/json"]?["schema"]?["properties"]?["query"]?["$ref"] == .string("#/components/schemas/QueryText"))
        // A parameter that is an array or an object other than a point.
        #expect(try await post(server.port, "/v1/query", body: #"{"query": "SHOW LAYERS", "params": [[1]]}"#, headers: [("Content-Type", "application/json")]).status == 400)
        #expect(query?["application/json"]?["schema"]?["properties"]?["params"]?["items"]?["oneOf"]?.items.count == 4)
        // A scan with no beacon, or more than 1,000.
        #expect([400, 422].contains(try await post(server.port, "/v1/locate", body: "{}", headers: [("Content-Type", "application/json")]).status))
        let scan = paths?["/v1/locate"]?["post"]?["requestBody"]?["content"]?["application/json"]?["schema"]
        #expect(scan?["minProperties"] == .integer(1) && scan?["maxProperties"] == .integer(1000))
        // A schedule's speed outside 0.5–30 km/h, and an empty place.
        let plan = #"{"speed_kmh": 100, "events":[{"place":"POINT(14.4109 50.1167)","start":"2026-06-20T14:00:00Z","end":"2026-06-20T14:10:00Z"},"#
            + #"{"place":"POINT(14.40519 50.11576)","start":"2026-06-20T14:30:00Z","end":"2026-06-20T14:40:00Z"}]}"#
        #expect([400, 422].contains(try await post(server.port, "/v1/schedule/check", body: plan, headers: [("Content-Type", "application/json")]).status))
        let events = paths?["/v1/schedule/check"]?["post"]?["requestBody"]?["content"]?["application/json"]?["schema"]?["properties"]
        #expect(events?["speed_kmh"]?["minimum"] == .double(0.5) && events?["speed_kmh"]?["maximum"] == .integer(30))
        #expect(events?["events"]?["items"]?["properties"]?["place"]?["minLength"] == .integer(1))
        // A route's ends that are not LON,LAT.
        #expect(try await get(server.port, "/v1/route?from=here&to=14.40519,50.11576").status == 400)
        #expect(parameter("/v1/route", "from")?["$ref"] == .string("#/components/schemas/LonLat"))
        // OGC items: an offset past 2^31 − 1, a bbox of 5 numbers.
        #expect(try await get(server.port, "/ogc/collections/pens/items?offset=3000000000").status == 400)
        #expect(parameter("/ogc/collections/{collection}/items", "offset")?["maximum"] == .integer(2_147_483_647))
        #expect(try await get(server.port, "/ogc/collections/pens/items?bbox=14,50,15,51,0").status == 400)
        #expect(parameter("/ogc/collections/{collection}/items", "bbox")?["oneOf"]?.items.count == 2)
        // nearest's k: the server's limit is the rows of an answer, 10,000.
        #expect(try await get(server.port, "/v1/layers/districts/nearest?lon=14.42&lat=50.08&k=10001").status == 400)
        #expect(parameter("/v1/layers/{layer}/nearest", "k")?["maximum"] == .integer(10_000))
    }

    // MARK: - routingpy's OSRM client

    /// routingpy's table of the 10 stages and its routes equal /v1/route's: the 100 distances
    /// and durations, a route's distance, and its polyline decoded by the `polyline` package.
    @Test func routingpyTableAndRoutesEqualSingleRoutes() async throws {
        let server = try await RunningServer.shared.value
        let through: [(Double, Double)] = [(14.4109, 50.1167), (14.412844, 50.119932), (14.410947, 50.120586)]
        func list(_ points: [(Double, Double)]) -> JSONValue { .array(points.map { .array([.double($0.0), .double($0.1)]) }) }
        let arguments = JSON.serialize(.object(JSONObject([("stages", list(Self.stages)), ("route", list(through))])))
        let script = Fixtures.root.appendingPathComponent("Tests/Clients/osrm_client.py").path
        let run = try await offPool { try Fixtures.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script, "http://127.0.0.1:\(server.port)", arguments]) }
        #expect(run.status == 0, "\(run.stderr)")
        let answer = (try? JSON.parse(run.stdout)) ?? .null

        // The 10×10 table against 100 single routes.
        let table = answer["table"]
        #expect(table?["code"] == .string("Ok") && table?["sources"] == .integer(10) && table?["destinations"] == .integer(10))
        var checked = 0
        for (i, a) in Self.stages.enumerated() {
            for (j, b) in Self.stages.enumerated() {
                let single = try await get(server.port, "/v1/route?from=\(a.0),\(a.1)&to=\(b.0),\(b.1)")
                let route = single.json["routes"]?[0]
                #expect(single.status == 200)
                #expect(table?["distances"]?[i]?[j]?.number == route?["distance"]?.number, "\(i)→\(j)")
                #expect(table?["durations"]?[i]?[j]?.number == route?["duration"]?.number, "\(i)→\(j)")
                if i != j { #expect((route?["distance"]?.number ?? 0) > 50) }
                checked += 1
            }
        }
        #expect(checked == 100)

        // A route through three points: each leg equals /v1/route between its points, the
        // steps add up to their leg and name the streets, the polyline decodes to the legs' lines.
        let raw = answer["route"]?["raw"]
        #expect(raw?["code"] == .string("Ok") && raw?["waypoints"]?.items.count == 3)
        let legs = raw?["routes"]?[0]?["legs"]?.items ?? []
        #expect(legs.count == 2)
        var line: [Double] = []
        for (k, leg) in legs.enumerated() {
            let (a, b) = (through[k], through[k + 1])
            let single = try await get(server.port, "/v1/route?from=\(a.0),\(a.1)&to=\(b.0),\(b.1)").json["routes"]?[0]
            #expect(leg["distance"]?.number == single?["distance"]?.number && leg["duration"]?.number == single?["duration"]?.number)
            let steps = leg["steps"]?.items ?? []
            let stepMetres = steps.compactMap { $0["distance"]?.number }.reduce(0, +)
            #expect(abs(stepMetres - (leg["distance"]?.number ?? 0)) < 0.005)
            #expect(steps.first?["maneuver"]?["type"] == .string("depart") && steps.last?["maneuver"]?["type"] == .string("arrive"))
            let coordinates = single?["geometry"]?["coordinates"]?.items.flatMap { $0.items.compactMap(\.number) } ?? []
            line += line.isEmpty ? coordinates : Array(coordinates.dropFirst(2))
        }
        let names = legs.flatMap { ($0["steps"]?.items ?? []).compactMap { $0["name"]?.string } }
        #expect(names.contains("Trojská") && names.contains("Na Salabce"), "\(names)")
        #expect(legs.last?["summary"] == .string("Trojská, Na Salabce"))
        let routeMetres = raw?["routes"]?[0]?["distance"]?.number ?? 0
        #expect(abs(routeMetres - legs.compactMap { $0["distance"]?.number }.reduce(0, +)) < 0.002)
        #expect(answer["route"]?["client_distance"]?.number == routeMetres.rounded(.towardZero))
        let decoded = answer["route"]?["decoded"]?.items.flatMap { $0.items.compactMap(\.number) } ?? []
        #expect(decoded.count == line.count && decoded.count > 20)
        #expect(zip(decoded, line).allSatisfy { abs($0 - $1) <= 0.5e-5 + 1e-12 })

        // The GeoJSON geometry of a pair is /v1/route's line, coordinate for coordinate.
        let (a, b) = (Self.stages[0], Self.stages[1])
        let single = try await get(server.port, "/v1/route?from=\(a.0),\(a.1)&to=\(b.0),\(b.1)").json["routes"]?[0]
        #expect(answer["pair"]?["geometry"] == single?["geometry"]?["coordinates"])
        #expect(answer["pair"]?["raw"]?["routes"]?[0]?["distance"] == single?["distance"])
    }

    /// The isochrone through routingpy's GraphHopper client, and OSRM's trip and match built as
    /// OSRM's documentation shows (tests/Clients/routing_services.py):
    /// - the 5- and 10-minute polygons hold every stage /v1/route reaches in 90% of the time
    ///   and none it needs 110% for (the buffer is 15 m, about 11 s of walking);
    /// - the round trip from the first stage is as short as the best of the 362,880 orders
    ///   the client tries on OSRM's own table;
    /// - a trace along a route, a fix every 10 m, is matched to that route's length.
    @Test func isochroneTripAndMatchForTheirClients() async throws {
        let server = try await RunningServer.shared.value
        let start = Self.stages[0]
        let route = try await get(server.port, "/v1/route?from=\(Self.stages[0].0),\(Self.stages[0].1)&to=\(Self.stages[1].0),\(Self.stages[1].1)").json["routes"]?[0]
        let line = (route?["geometry"]?["coordinates"]?.items ?? []).compactMap { p -> (Double, Double)? in
            guard let lon = p[0]?.number, let lat = p[1]?.number else { return nil }
            return (lon, lat)
        }
        // A fix every 10 m along the route's line, 7 s apart.
        var trace: [JSONValue] = []
        var carried = 0.0, next = 0.0
        for (a, b) in zip(line, line.dropFirst()) {
            let length = Geodesy.haversine(lon1: a.0, lat1: a.1, lon2: b.0, lat2: b.1)
            while next <= carried + length {
                let f = length > 0 ? (next - carried) / length : 0
                trace.append(.array([.double(a.0 + f * (b.0 - a.0)), .double(a.1 + f * (b.1 - a.1)), .integer(1_700_000_000 + Int64(trace.count) * 7)]))
                next += 10
            }
            carried += length
        }
        let arguments = JSON.serialize(.object(JSONObject([
            ("start", .array([.double(start.0), .double(start.1)])),
            ("stages", .array(Self.stages.map { .array([.double($0.0), .double($0.1)]) })),
            ("trace", .array(trace)),
        ])))
        let script = Fixtures.root.appendingPathComponent("Tests/Clients/routing_services.py").path
        let run = try await offPool { try Fixtures.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script, "http://127.0.0.1:\(server.port)", arguments]) }
        #expect(run.status == 0, "\(run.stderr)")
        let answer = (try? JSON.parse(run.stdout)) ?? .null

        // The isochrone: two buckets of 600 s as routingpy reads them, and the stages.
        let parsed = answer["isochrones"]?.items ?? []
        #expect(parsed.map { $0["interval"] } == [.integer(300), .integer(600)])
        #expect(parsed.allSatisfy { ($0["points"]?.number ?? 0) > 20 })
        // Each stage where it joins the paths (a pen may lie 30 m off them, beyond the buffer).
        var inside = 0, outside = 0
        for (bucket, limit) in [(0, 300.0), (1, 600.0)] {
            let area = try GeoJSON.geometry(from: answer["isochrone_raw"]?["polygons"]?[bucket]?["geometry"] ?? .null)
            for stage in Self.stages {
                let walkAnswer = try await get(server.port, "/v1/route?from=\(start.0),\(start.1)&to=\(stage.0),\(stage.1)")
                let walk = walkAnswer.json["routes"]?[0]
                let seconds = try #require(walk?["duration"]?.number)
                let end = walkAnswer.json["waypoints"]?[1]?["location"]
                let (lon, lat) = (try #require(end?[0]?.number), try #require(end?[1]?.number))
                if seconds <= 0.9 * limit { #expect(area.contains(lon: lon, lat: lat), "\(stage): \(seconds) s, \(limit) s"); inside += 1 }
                if seconds >= 1.1 * limit { #expect(!area.contains(lon: lon, lat: lat), "\(stage): \(seconds) s, \(limit) s"); outside += 1 }
            }
        }
        #expect(inside >= 3 && outside >= 3, "\(inside) stages inside, \(outside) outside")

        // The trip: every stage once, from the first, as short as the best order.
        let trip = answer["trip"]
        #expect(trip?["code"] == .string("Ok"))
        let waypoints = trip?["waypoints"]?.items ?? []
        #expect(waypoints.compactMap { $0["waypoint_index"]?.number.map(Int.init) }.sorted() == Array(0..<10))
        #expect(waypoints.first?["waypoint_index"] == .integer(0) && waypoints.allSatisfy { $0["trips_index"] == .integer(0) })
        #expect(trip?["trips"]?[0]?["legs"]?.items.count == 10)
        let best = try #require(answer["best_round_trip"]?.number)
        let distance = try #require(trip?["trips"]?[0]?["distance"]?.number)
        #expect(abs(distance - best) < 0.02, "the trip is \(distance) m, the best order \(best) m")

        // The match: one matching, the route's length, first and last fix placed.
        let match = answer["match"]
        #expect(match?["code"] == .string("Ok") && match?["matchings"]?.items.count == 1)
        #expect(match?["tracepoints"]?.items.count == trace.count)
        #expect(match?["tracepoints"]?[0] != .null && match?["tracepoints"]?[trace.count - 1] != .null)
        let matched = try #require(match?["matchings"]?[0]?["distance"]?.number)
        let routeMetres = try #require(route?["distance"]?.number)
        #expect(abs(matched - routeMetres) < 10, "matched \(matched) m of a \(routeMetres) m route")
        #expect((match?["matchings"]?[0]?["confidence"]?.number ?? 0) > 0.5)
    }

    /// OSRM's own codes and status 400 for what it refuses, and the nearest service.
    @Test func osrmCodesAndNearest() async throws {
        let server = try await RunningServer.shared.value
        func code(_ target: String) async throws -> (Int, String?) {
            let answer = try await get(server.port, target)
            return (answer.status, answer.json["code"]?.string)
        }
        let two = "14.4109,50.1167;14.40519,50.11576"
        #expect(try await code("/route/v1/foot/\(two)") == (200, "Ok"))
        #expect(try await code("/route/v1/foot/14.4109,50.1167;14.1,50.1") == (400, "NoSegment"))
        #expect(try await code("/route/v1/foot/14.4109,50.1167") == (400, "InvalidOptions"))
        #expect(try await code("/route/v1/foot/\(two)?geometries=wkt") == (400, "InvalidQuery"))
        #expect(try await code("/route/v1/foot/\(two)?lol=1") == (400, "InvalidQuery"))
        #expect(try await code("/route/v1/foot/14.4109;50.1167") == (400, "InvalidUrl"))
        #expect(try await code("/route/v1/driving/\(two)") == (400, "InvalidOptions"))
        #expect(try await code("/route/v1/foot/\(two)?radiuses=10") == (400, "InvalidOptions"))
        // The wheelchair profile: only steps join the entrance to the sea lions by the short way.
        let wheelchair = try await get(server.port, "/route/v1/wheelchair/14.4109,50.1167;14.41064991,50.11601702?overview=false")
        #expect(wheelchair.json["routes"]?[0]?["distance"] == .double(165.696))
        let table = try await get(server.port, "/table/v1/foot/\(two)?sources=0&destinations=1&annotations=distance")
        #expect(table.json["distances"] == .array([.array([.double(559.557)])]) && table.json["durations"] == nil)
        // Between two pieces of the network no path joins: NoRoute, and a null cell in a table.
        let graph = try Snapshot.load(storePath: try await DemoStore.path()).network("paths").graph
        let (main, piece) = (try #require((0..<graph.nodeCount).first { graph.component[$0] == 0 }), try #require((0..<graph.nodeCount).first { graph.component[$0] == 1 }))
        let apart = "\(graph.lons[main]),\(graph.lats[main]);\(graph.lons[piece]),\(graph.lats[piece])"
        #expect(try await code("/route/v1/foot/\(apart)") == (400, "NoRoute"))
        let cells = try await get(server.port, "/table/v1/foot/\(apart)?annotations=distance").json["distances"]
        #expect(cells?[0]?[1] == .null && cells?[1]?[0] == .null && cells?[0]?[0] == .double(0))
        // 101 × 101 cells is over OSRM's default table size of 100 × 100.
        let many = Array(repeating: "14.4109,50.1167", count: 101).joined(separator: ";")
        #expect(try await code("/table/v1/foot/\(many)") == (400, "TooBig"))
        // The nearest service: the three nearest edges to a crossing of named streets, nearest
        // first, each with its OSM nodes.
        let nearest = try await get(server.port, "/nearest/v1/foot/14.41284378,50.11993197?number=3")
        let waypoints = nearest.json["waypoints"]?.items ?? []
        #expect(waypoints.count == 3 && waypoints.allSatisfy { $0["nodes"]?.items.count == 2 })
        #expect(Set(waypoints.compactMap { $0["name"]?.string }) == ["Trojská", "Nádvorní"])
        let distances = waypoints.compactMap { $0["distance"]?.number }
        #expect(distances == distances.sorted())
    }
}
