// OGC API – Tiles under /ogc: the WebMercatorQuad definition against the formula, each feature
// layer's tile sets and their links, tiles byte-identical to /v1/tiles, the errors; and GDAL
// (a client nobody here wrote) following the links and reading a tile.

import Foundation
import Support
import TestSupport
import Testing

@Suite(.validatesStores) struct OGCTileEndpointTests {
    /// The gorillas' pen (fid 4791797957, 14.40518699 50.11575607) lies in XYZ tile 16/35390/22193.
    static let gorillaTile = (z: 16, x: 35390, y: 22193)

    /// Scale denominators: the equator (2π × 6378137 m) over 256 pixels of 0.28 mm at z0,
    /// halving each zoom; the origin, CRS and axes of the standard's WebMercatorQuad.
    @Test func theTileMatrixSetIsWebMercatorQuad() async throws {
        let server = try await RoutedServer.shared.value
        let list = try await get(server, "/ogc/tileMatrixSets")
        #expect(list.status == 200 && list.json["tileMatrixSets"]?.items.map { $0["id"] } == [.string("WebMercatorQuad")])
        #expect(list.json["tileMatrixSets"]?[0]?["links"]?[0]?["href"]?.string?.hasSuffix("/ogc/tileMatrixSets/WebMercatorQuad") == true)
        let tms = try await get(server, "/ogc/tileMatrixSets/WebMercatorQuad")
        #expect(tms.status == 200 && tms.header("Content-Type") == "application/json")
        #expect(tms.json["crs"] == .string("http://www.opengis.net/def/crs/EPSG/0/3857"))
        #expect(tms.json["uri"] == .string("http://www.opengis.net/def/tilematrixset/OGC/1.0/WebMercatorQuad"))
        #expect(tms.json["orderedAxes"] == .array([.string("X"), .string("Y")]))
        let matrices = tms.json["tileMatrices"]?.items ?? []
        #expect(matrices.count == 25 && matrices.map { $0["id"]?.string } == (0...24).map { String($0) })
        let formula = { (z: Int) in 2 * Double.pi * 6_378_137 / 256 / 0.000_28 / Double(1 << z) }
        #expect(matrices.first?["scaleDenominator"]?.number == 559_082_264.028_717_8)
        #expect(matrices.first?["scaleDenominator"]?.number == formula(0))
        #expect(matrices[16]["scaleDenominator"]?.number == formula(16))
        #expect(abs((matrices[16]["scaleDenominator"]?.number ?? 0) - 8530.918335399136) < 1e-9)
        #expect(matrices[16]["matrixWidth"] == .integer(65536) && matrices[16]["tileWidth"] == .integer(256))
        #expect(matrices[16]["pointOfOrigin"] == .array([.double(-20037508.342789244), .double(20037508.342789244)]))
        #expect(abs((matrices[0]["cellSize"]?.number ?? 0) - 156543.03392804097) < 1e-9)
        // Another set, or a table's tiles: nothing there.
        #expect(try await get(server, "/ogc/tileMatrixSets/WorldCRS84Quad").status == 404)
    }

    /// Collections link their tile sets (a table has none), the landing page the tile matrix
    /// sets, the conformance declares Tiles' classes, and a tile set links its scheme and
    /// templated MVT URL, with the rows and columns of the layer's bounds.
    @Test func tileSetsAreLinked() async throws {
        let server = try await RoutedServer.shared.value
        let vector = "http://www.opengis.net/def/rel/ogc/1.0/tilesets-vector"
        let pens = try await get(server, "/ogc/collections/pens")
        #expect(pens.json["links"]?.items.first { $0["rel"]?.string == vector }?["href"]?.string?.hasSuffix("/ogc/collections/pens/tiles") == true)
        let animals = try await get(server, "/ogc/collections/animals")
        #expect(animals.status == 200 && animals.json["links"]?.items.contains { $0["rel"]?.string == vector } == false)
        #expect(try await get(server, "/ogc/collections/animals/tiles").status == 404)
        let landing = try await get(server, "/ogc")
        #expect(landing.json["links"]?.items.first { $0["rel"]?.string == "http://www.opengis.net/def/rel/ogc/1.0/tiling-schemes" }?["href"]?.string?.hasSuffix("/ogc/tileMatrixSets") == true)
        let conformance = try await get(server, "/ogc/conformance").json["conformsTo"]?.items.compactMap(\.string) ?? []
        #expect(conformance.contains("http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/geodata-tilesets"))
        #expect(conformance.contains("http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/mvt") && conformance.count == 29)

        let list = try await get(server, "/ogc/collections/pens/tiles")
        #expect(list.status == 200 && list.json["tilesets"]?.items.count == 1)
        #expect(list.json["tilesets"]?[0]?["dataType"] == .string("vector"))
        #expect(list.json["tilesets"]?[0]?["links"]?[0]?["href"]?.string?.hasSuffix("/ogc/collections/pens/tiles/WebMercatorQuad") == true)
        let set = try await get(server, "/ogc/collections/pens/tiles/WebMercatorQuad")
        #expect(set.status == 200 && set.json["dataType"] == .string("vector"))
        #expect(set.json["tileMatrixSetURI"] == .string("http://www.opengis.net/def/tilematrixset/OGC/1.0/WebMercatorQuad"))
        #expect(set.json["crs"] == .string("http://www.opengis.net/def/crs/EPSG/0/3857"))
        let links = set.json["links"]?.items ?? []
        #expect(links.first { $0["rel"]?.string == "self" }?["href"]?.string?.hasSuffix("/ogc/collections/pens/tiles/WebMercatorQuad") == true)
        #expect(links.first { $0["rel"]?.string == "http://www.opengis.net/def/rel/ogc/1.0/tiling-scheme" }?["href"]?.string?.hasSuffix("/ogc/tileMatrixSets/WebMercatorQuad") == true)
        let item = links.first { $0["rel"]?.string == "item" }
        #expect(item?["href"]?.string?.hasSuffix("/ogc/collections/pens/tiles/WebMercatorQuad/{tileMatrix}/{tileRow}/{tileCol}") == true)
        #expect(item?["type"] == .string("application/vnd.mapbox-vector-tile") && item?["templated"] == .bool(true))
        // The pens lie in one tile at z0 and around the gorillas' tile at z16.
        let limits = set.json["tileMatrixSetLimits"]?.items ?? []
        #expect(limits.count == 25)
        #expect(limits.first.map { [$0["tileMatrix"], $0["minTileRow"], $0["maxTileRow"], $0["minTileCol"], $0["maxTileCol"]] }
                == [.string("0"), .integer(0), .integer(0), .integer(0), .integer(0)])
        let z16 = limits[16]
        let (row, col) = (Int64(Self.gorillaTile.y), Int64(Self.gorillaTile.x))
        func value(_ key: String) -> Int64? { if case .integer(let n)? = z16[key] { n } else { nil } }
        #expect((value("minTileRow") ?? .max) <= row && row <= (value("maxTileRow") ?? .min))
        #expect((value("minTileCol") ?? .max) <= col && col <= (value("maxTileCol") ?? .min))
    }

    /// The OGC address of a tile, {tileMatrix}/{tileRow}/{tileCol}, is /v1/tiles' z/x/y turned
    /// round, and its bytes are the same; addresses outside the matrix or the layer's limits
    /// are 404, what is not a number is 400.
    @Test func aTileIsTheV1Tile() async throws {
        let server = try await RoutedServer.shared.value
        let (z, x, y) = Self.gorillaTile
        let ogc = try await get(server, "/ogc/collections/pens/tiles/WebMercatorQuad/\(z)/\(y)/\(x)")
        let v1 = try await get(server, "/v1/tiles/pens/\(z)/\(x)/\(y).mvt")
        #expect(ogc.status == 200 && ogc.header("Content-Type") == "application/vnd.mapbox-vector-tile")
        #expect(v1.status == 200 && !ogc.body.isEmpty && ogc.body == v1.body)
        #expect(ogc.header("ETag") != nil && ogc.header("ETag") == v1.header("ETag"))
        // Column and row the other way round are another place: outside the pens, 404.
        #expect(try await get(server, "/ogc/collections/pens/tiles/WebMercatorQuad/\(z)/\(x)/\(y)").status == 404)
        for (path, status) in [("25/0/0", 404), ("1/2/0", 404), ("0/0/1", 404), ("x/0/0", 400), ("0/-1/0", 400), ("0/0/99999999999", 400), ("0/0/9999999999", 404)] {
            let answer = try await get(server, "/ogc/collections/pens/tiles/WebMercatorQuad/" + path)
            #expect(answer.status == status, "\(path): \(answer.text)")
            #expect(answer.header("Content-Type") == "application/problem+json", "\(path)")
        }
        #expect(try await get(server, "/ogc/collections/pens/tiles/WorldCRS84Quad/0/0/0").status == 404)
        #expect(try await get(server, "/ogc/collections/animals/tiles/WebMercatorQuad/0/0/0").status == 404)
        #expect(try await get(server, "/ogc/collections/nowhere/tiles/WebMercatorQuad/0/0/0").status == 404)
    }

    /// GDAL's OGCAPI driver follows the links of a collection to its tiles: the tile sets, the
    /// WebMercatorQuad tile set, and the tile matrix set, which it parses (the 1.0 names GDAL
    /// 3.6 reads beside the 2.0 ones). GDAL 3.6's driver goes no further for vector tiles (its
    /// tile set code builds no vector layers; OSGeo/gdal#7969), so the tile it would ask for next is read with
    /// GDAL's MVT driver, from the URL template the tile set gives, at its z/x/y: the same pens
    /// as the store has there.
    @Test func gdalFollowsTheLinksAndReadsATile() async throws {
        let server = try await RunningServer.shared.value
        let base = "http://127.0.0.1:\(server.port)/ogc"
        let open = try await offPool {
            try Fixtures.run(StandardClientTests.ogrinfo, ["-ro", "-so", "OGCAPI:\(base)/collections/pens"], environment: ["CPL_DEBUG": "ON"])
        }
        let fetched = open.stderr.split(separator: "\n").compactMap { line in
            line.hasPrefix("HTTP: Fetch(") ? String(line.dropFirst("HTTP: Fetch(".count).dropLast()) : nil
        }
        #expect(fetched == ["\(base)/collections/pens", "\(base)/collections/pens/tiles", "\(base)/collections/pens/tiles/WebMercatorQuad",
                            "\(base)/tileMatrixSets/WebMercatorQuad"], "\(open.stderr)")
        #expect(!open.stderr.contains("ERROR"), "\(open.stderr)")

        let set = try await get(server.port, "/ogc/collections/pens/tiles/WebMercatorQuad")
        let template = set.json["links"]?.items.first { $0["rel"]?.string == "item" }?["href"]?.string ?? ""
        let (z, x, y) = Self.gorillaTile
        let url = template.replacingOccurrences(of: "{tileMatrix}", with: "\(z)").replacingOccurrences(of: "{tileRow}", with: "\(y)")
            .replacingOccurrences(of: "{tileCol}", with: "\(x)")
        // /vsicurl without listing the "directory": the MVT driver would otherwise take the
        // path's last three numbers for a tile set's z/x/y; the open options place the tile.
        let read = try await offPool {
            try Fixtures.run(StandardClientTests.ogrinfo, ["-ro", "-al", "-oo", "Z=\(z)", "-oo", "X=\(x)", "-oo", "Y=\(y)",
                                                           "MVT:/vsicurl?url=\(url)&list_dir=no"])
        }
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout.contains("Layer name: pens"), "\(read.stdout)")
        // The gorillas, by fid, where the store has them: 14.40518699 50.11575607 in EPSG:3857
        // metres is (1603578.08, 6466346.94); the tile's 4096 units put it within 0.1 m.
        let gorillas = read.stdout.components(separatedBy: "\n\n").first { $0.contains("name (String) = gorily") } ?? ""
        #expect(gorillas.contains("mvt_id (Integer64) = 4791797957"), "\(read.stdout)")
        let point = gorillas.split(separator: "\n").first { $0.contains("POINT (") }.map { line in
            line.split(whereSeparator: { "() ".contains($0) }).compactMap { Double($0) }
        } ?? []
        #expect(point.count == 2 && abs(point[0] - 1_603_578.08) < 0.2 && abs(point[1] - 6_466_346.94) < 0.2, "\(gorillas)")
        // As many features as the tile's GeoJSON form (the /v1 path) has.
        let geoJSON = try await get(server.port, "/v1/tiles/pens/\(z)/\(x)/\(y).json")
        let count = geoJSON.json["features"]?.items.count ?? 0
        #expect(count > 0 && read.stdout.contains("Feature Count: \(count)\n"), "\(read.stdout)")
    }
}

extension OGCTileEndpointTests {
    /// The Tiles documents validate against OGC API – Tiles 1.0's own schemas
    /// (Fixtures/standards/tiles), and the broken copies do not, so the check bites.
    @Test func answersValidateAgainstTheStandardsSchemas() async throws {
        let server = try await RunningServer.shared.value
        let run = try await offPool {
            try Fixtures.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", Fixtures.root.appendingPathComponent("Tests/Clients/oas_schemas.py").path,
                                                                   "tiles", "http://127.0.0.1:\(server.port)/ogc", Fixtures.path("standards")])
        }
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.split(separator: "\n").map(String.init)
            == ["tileMatrixSets valid", "WebMercatorQuad valid", "districts.tilesets valid", "districts.tileset valid", "pens.tileset valid",
                "conformance valid", "landing valid", "broken-tileset invalid: 'crs' is a required property",
                "broken-matrix invalid: 'scaleDenominator' is a required property"], "\(run.stdout)")
    }
}
