// OGC API – Features Part 2 on the demo store: items in S-JTSK (EPSG:5514) give back the
// coordinates of the city's own S-JTSK file, EPSG:4326 is latitude first, and a box in S-JTSK
// selects the districts shapely finds intersecting it in the original file.

import Foundation
import Support
import TestSupport
import Testing

@Suite(.validatesStores) struct OGCCRSTests {
    static let sjtsk = "http://www.opengis.net/def/crs/EPSG/0/5514"

    /// Every vertex of the 57 districts, asked for in EPSG:5514, lies within 1 cm of the same
    /// vertex in the IPR's S-JTSK file they were imported from (through WGS 84 and back).
    @Test func sjtskItemsAreTheSourceFilesCoordinates() async throws {
        let server = try await RoutedServer.shared.value
        let answer = try await get(server, "/ogc/collections/districts_sjtsk/items?limit=100&crs=\(Self.sjtsk)")
        #expect(answer.status == 200 && answer.header("Content-Crs") == "<\(Self.sjtsk)>")
        let source = try JSON.parse(Array(try Data(contentsOf: Fixtures.url("prague/districts.sjtsk-epsg5514.geojson"))))
        let features = answer.json["features"]?.items ?? []
        let originals = source["features"]?.items ?? []
        #expect(features.count == 57 && originals.count == 57)
        func flat(_ value: JSONValue?) -> [Double] {
            guard let value else { return [] }
            if let number = value.number { return [number] }
            return value.items.flatMap { flat($0) }
        }
        var vertices = 0, worst = 0.0
        for (feature, original) in zip(features, originals) {
            #expect(feature["properties"]?["KOD_MC"] == original["properties"]?["KOD_MC"])
            let (a, b) = (flat(feature["geometry"]?["coordinates"]), flat(original["geometry"]?["coordinates"]))
            #expect(a.count == b.count && !a.isEmpty)
            for (x, y) in zip(a, b) { worst = max(worst, abs(x - y)) }
            vertices += a.count / 2
        }
        #expect(worst < 0.01, "worst difference \(worst) m")
        #expect(vertices == 38_985)
        // One feature, the same.
        let one = try await get(server, "/ogc/collections/districts_sjtsk/items/1?crs=EPSG:5514")
        #expect(one.status == 200 && one.header("Content-Crs") == "<\(Self.sjtsk)>")
        #expect(one.json["geometry"] == features.first?["geometry"])
    }

    /// EPSG:4326 as its definition orders the axes: latitude, then longitude; CRS84 (the
    /// default) longitude first; the collection lists the three and stores CRS84.
    @Test func axisOrderIsTheAuthoritys() async throws {
        let server = try await RoutedServer.shared.value
        let lonLat = try await get(server, "/ogc/collections/stations/items/1")
        let latLon = try await get(server, "/ogc/collections/stations/items/1?crs=http://www.opengis.net/def/crs/EPSG/0/4326")
        #expect(lonLat.json["geometry"]?["coordinates"] == .array([.double(14.380116), .double(50.084385)]))
        #expect(latLon.json["geometry"]?["coordinates"] == .array([.double(50.084385), .double(14.380116)]))
        #expect(lonLat.header("Content-Crs") == "<http://www.opengis.net/def/crs/OGC/1.3/CRS84>")
        #expect(latLon.header("Content-Crs") == "<http://www.opengis.net/def/crs/EPSG/0/4326>")
        let collection = try await get(server, "/ogc/collections/districts")
        #expect(collection.json["crs"] == .array(["http://www.opengis.net/def/crs/OGC/1.3/CRS84", "http://www.opengis.net/def/crs/EPSG/0/4326", Self.sjtsk].map { .string($0) }))
        #expect(collection.json["storageCrs"] == .string("http://www.opengis.net/def/crs/OGC/1.3/CRS84"))
        let conformance = try await get(server, "/ogc/conformance").json["conformsTo"]?.items.compactMap(\.string) ?? []
        #expect(conformance.contains("http://www.opengis.net/spec/ogcapi-features-2/1.0/conf/crs"))
        // A box in EPSG:4326 is latitude first too: the same stations as the CRS84 box.
        let crs84 = try await get(server, "/ogc/collections/stations/items?limit=100&bbox=14.38,50.07,14.46,50.11")
        let epsg4326 = try await get(server, "/ogc/collections/stations/items?limit=100&bbox=50.07,14.38,50.11,14.46&bbox-crs=EPSG:4326")
        let ids = { (r: HTTPResponse) in r.json["features"]?.items.compactMap { $0["id"] } ?? [] }
        #expect(ids(crs84) == ids(epsg4326) && ids(crs84).count == 6)
    }

    /// 30 boxes in S-JTSK around Prague: the districts answered are those whose geometry in the
    /// original S-JTSK file intersects the box, as shapely (GEOS) decides.
    @Test func aBoxInSJTSKSelectsAsShapely() async throws {
        let server = try await RoutedServer.shared.value
        // Spread over the city by multiplying with primes: the same boxes on every run.
        let boxes: [[Double]] = (0..<30).map { i in
            let (x, y) = (-752_000 + Double(i * 7919 % 27_000), -1_057_000 + Double(i * 104_729 % 24_000))
            let (w, h) = (50 + Double(i * 3571 % 5950), 50 + Double(i * 2999 % 5950))
            return [x, y, x + w, y + h]
        }
        let script = """
            import json, sys
            from shapely.geometry import box, shape
            features = json.load(open(sys.argv[1]))["features"]
            for b in json.loads(sys.argv[2]):
                area = box(*b)
                print(",".join(str(f["properties"]["KOD_MC"]) for f in features if shape(f["geometry"]).intersects(area)))
            """
        let boxesJSON = JSONWriter.encode(.array(boxes.map { .array($0.map { .double($0) }) })).string
        let run = try await offPool {
            try Fixtures.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, Fixtures.path("prague/districts.sjtsk-epsg5514.geojson"), boxesJSON])
        }
        #expect(run.status == 0, "\(run.stderr)")
        let expected = run.stdout.split(separator: "\n", omittingEmptySubsequences: false).prefix(boxes.count).map(String.init)
        var nonEmpty = 0
        for (box, codes) in zip(boxes, expected) {
            let bbox = box.map { String($0) }.joined(separator: ",")
            let answer = try await get(server, "/ogc/collections/districts_sjtsk/items?limit=100&bbox=\(bbox)&bbox-crs=\(Self.sjtsk)")
            let got = (answer.json["features"]?.items ?? []).compactMap { $0["properties"]?["KOD_MC"]?.number.map { String(Int($0)) } }
            #expect(Set(got) == Set(codes.split(separator: ",").map(String.init)), "box \(bbox)")
            if !got.isEmpty { nonEmpty += 1 }
        }
        #expect(nonEmpty >= 20)
    }

    @Test func unknownCRSsAreRefused() async throws {
        let server = try await RoutedServer.shared.value
        for (target, words) in [("/ogc/collections/districts/items?crs=EPSG:3857", "crs: 'EPSG:3857' is not offered"),
                                ("/ogc/collections/districts/items?bbox-crs=EPSG:5514", "bbox-crs: goes with a bbox"),
                                ("/ogc/collections/districts/items/1?crs=urn:nothing", "crs: 'urn:nothing' is not offered")] {
            let answer = try await get(server, target)
            #expect(answer.status == 400 && answer.text.contains(words), "\(target): \(answer.text)")
        }
    }
}

extension [UInt8] {
    var string: String { String(decoding: self, as: UTF8.self) }
}

