import Foundation
import Geometry
import Support
import TestSupport
import Testing

func fixtureFeatures(_ name: String) throws -> [Feature] {
    try GeoJSON.parseDocument([UInt8](Data(contentsOf: Fixtures.url(name)))).features
}

@Suite(.validatesStores) struct JSONTests {
    @Test func parsesValuesKeepingKeyOrderAndIntegers() throws {
        let value = try JSON.parse(#"{"b": [1, -2.5, 1e3, 9223372036854775807, 9223372036854775808], "a": {"x": null, "y": true}, "s": "Ž\u00e1\ud83d\ude00\n"}"#)
        guard case .object(let root) = value else { Issue.record("not an object"); return }
        #expect(root.keys == ["b", "a", "s"])
        #expect(root["b"] == .array([.integer(1), .double(-2.5), .double(1000), .integer(Int64.max), .double(9223372036854775808)]))
        #expect(root["a"] == .object(JSONObject([("x", .null), ("y", .bool(true))])))
        #expect(root["s"] == .string("Žá😀\n"))
        // Serialising and parsing again gives the same value.
        #expect(try JSON.parse(JSON.serialize(value)) == value)
        #expect(try JSON.parse(JSON.serialize(value, pretty: true)) == value)
    }

    @Test func errorsNameLineAndColumn() {
        let text = "{\"type\": \"FeatureCollection\",\n  \"features\": [\n    {\"type\": \"Feature\" \"geometry\": null}\n]}"
        #expect(throws: JSONError.self) { try JSON.parse(text) }
        do {
            _ = try JSON.parse(text)
        } catch {
            #expect(error.line == 3)
            #expect(error.column == 24)
            #expect(error.description == "line 3, column 24: unexpected '\"', expected ',' or '}' after an object member")
        }
        for (bad, line, column) in [("[1, 2", 1, 6), ("{\"a\": tru}", 1, 7), ("\n\n  01", 3, 3), ("\"\\ud800\"", 1, 8), ("[1] x", 1, 5)] {
            do {
                _ = try JSON.parse(bad)
                Issue.record("\(bad) parsed")
            } catch {
                #expect((error.line, error.column) == (line, column), "\(bad): \(error)")
            }
        }
    }

    @Test func deepNestingIsAnErrorNotACrash() {
        let deep = String(repeating: "[", count: 100_000)
        #expect(throws: JSONError.self) { try JSON.parse(deep) }
    }

    /// Random bytes and every truncation of a real document: errors, never crashes.
    @Test func garbageNeverCrashes() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let bytes = (0..<Int.random(in: 0..<64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = try? JSON.parse(bytes)
        }
        let document = Array(#"{"type": "Feature", "id": 7, "geometry": {"type": "Point", "coordinates": [14.4, 50.1]}, "properties": {"name": "Žižkov"}}"#.utf8)
        for length in 0..<document.count {
            #expect(throws: JSONError.self) { try JSON.parse(Array(document[..<length])) }
        }
    }
}

@Suite(.validatesStores) struct GeoJSONTests {
    @Test func readsTheDistricts() throws {
        let document = try GeoJSON.parseDocument([UInt8](Data(contentsOf: Fixtures.url("prague/districts.wgs84.geojson"))))
        #expect(document.features.count == 57)
        #expect(document.crs == nil)
        let first = try #require(document.features.first)
        #expect(first.properties["NAZEV_MC"] == .text("Praha-Ďáblice"))
        #expect(first.properties["KOD_MC"] == .integer(547298))
        #expect(first.properties["Shape_Area"] == .real(0.00092836044897461))
        #expect(first.geometry?.typeName == "Polygon")

        let sjtsk = try GeoJSON.parseDocument([UInt8](Data(contentsOf: Fixtures.url("prague/districts.sjtsk-epsg5514.geojson"))))
        #expect(sjtsk.crs == "EPSG:5514")
        #expect(sjtsk.name == "TMMESTSKECASTI_P")
        #expect(sjtsk.features.count == 57)

        let parking = try fixtureFeatures("prague/parking-zones.wgs84.geojson")
        #expect(parking.count == 1548)
        #expect(parking.filter { if case .multiPolygon? = $0.geometry { true } else { false } }.count == 2)
    }

    @Test(arguments: ["prague/districts.wgs84.geojson", "prague/parking-zones.wgs84.geojson", "zoo/pavilions-and-pens.geojson", "prague/districts.sjtsk-epsg5514.geojson"])
    func roundTripIsExact(fixture: String) throws {
        let features = try fixtureFeatures(fixture)
        let text = JSON.serialize(GeoJSON.featureCollection(features))
        let again = try GeoJSON.parseDocument(Array(text.utf8)).features
        #expect(again == features)
    }

    @Test func holesArePreserved() throws {
        let text = #"{"type": "Polygon", "coordinates": [[[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]], [[1, 1], [1, 2], [2, 2], [2, 1], [1, 1]]]}"#
        let geometry = try GeoJSON.parseDocument(Array(text.utf8)).features[0].geometry
        guard case .polygon(let polygon)? = geometry else { Issue.record("not a polygon"); return }
        #expect(polygon.ringCount == 2)
        #expect(Array(polygon.ring(1)) == [1, 1, 1, 2, 2, 2, 2, 1, 1, 1])
        #expect(try GeoJSON.geometry(from: GeoJSON.encode(.polygon(polygon))) == .polygon(polygon))
    }

    @Test func structuralErrorsNameThePlace() {
        let cases: [(String, String)] = [
            (#"{"type": "FeatureCollection", "features": [{"type": "Feature", "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1]]]}, "properties": {}}]}"#,
             "features[0].geometry.coordinates[0]: ring 0 of the polygon is not closed (its last position must repeat its first)"),
            (#"{"type": "FeatureCollection", "features": [{"type": "Feature", "geometry": {"type": "LineString", "coordinates": [[0, 0]]}}]}"#,
             "features[0].geometry.coordinates: a LineString needs at least 2 positions, found 1"),
            (#"{"type": "FeatureCollection", "features": [{"type": "Feature", "geometry": {"type": "Circle", "coordinates": [0, 0]}}]}"#,
             "features[0].geometry.type: unknown geometry type 'Circle'"),
            (#"{"type": "FeatureCollection", "features": [{"type": "Feature", "geometry": {"type": "Point", "coordinates": ["14", 50]}}]}"#,
             "features[0].geometry.coordinates: a position's coordinates must be numbers"),
            (#"{"type": "FeatureCollection"}"#, "features: a FeatureCollection needs a \"features\" array"),
        ]
        for (text, expected) in cases {
            do {
                _ = try GeoJSON.parseDocument(Array(text.utf8))
                Issue.record("parsed: \(text)")
            } catch {
                #expect(error.description == expected)
            }
        }
    }

    @Test func nullGeometryIsKeptForTheImporterToReport() throws {
        let text = #"{"type": "Feature", "id": 8, "geometry": null, "properties": {"tags": ["a", 1]}}"#
        let feature = try GeoJSON.parseDocument(Array(text.utf8)).features[0]
        #expect(feature.geometry == nil)
        #expect(feature.id == .integer(8))
        #expect(feature.properties["tags"] == .json(#"["a",1]"#))
        #expect(JSON.serialize(GeoJSON.encode(feature)) == #"{"type":"Feature","id":8,"geometry":null,"properties":{"tags":["a",1]}}"#)
    }
}

@Suite(.validatesStores) struct WKBAndWKTTests {
    static let fixtures = ["prague/districts.wgs84.geojson", "prague/parking-zones.wgs84.geojson", "zoo/pavilions-and-pens.geojson"]

    @Test(arguments: fixtures)
    func roundTripsEveryFixtureGeometryExactly(fixture: String) throws {
        for geometry in try fixtureFeatures(fixture).compactMap(\.geometry) {
            #expect(try WKB.decode(WKB.encode(geometry)) == geometry)
            #expect(try WKT.decode(WKT.encode(geometry)) == geometry)
        }
    }

    @Test func decodesKnownBytesInEitherOrder() throws {
        func bytes(_ hex: String) -> [UInt8] {
            var out: [UInt8] = []
            var i = hex.startIndex
            while i < hex.endIndex {
                let j = hex.index(i, offsetBy: 2)
                out.append(UInt8(hex[i..<j], radix: 16) ?? 0)
                i = j
            }
            return out
        }
        // POINT (1 2), big-endian and little-endian.
        #expect(try WKB.decode(bytes("00000000013FF00000000000004000000000000000")) == .point(Point(lon: 1, lat: 2)))
        #expect(try WKB.decode(bytes("0101000000000000000000F03F0000000000000040")) == .point(Point(lon: 1, lat: 2)))
        // EWKB POINT Z with SRID 4326 (PostGIS): SRID and z are skipped.
        #expect(try WKB.decode(bytes("01010000A0E6100000000000000000F03F00000000000000400000000000000840")) == .point(Point(lon: 1, lat: 2)))
        // ISO POINT Z (type 1001).
        #expect(try WKB.decode(bytes("01E9030000000000000000F03F00000000000000400000000000000840")) == .point(Point(lon: 1, lat: 2)))
        #expect(WKB.encode(.point(Point(lon: 1, lat: 2))) == bytes("0101000000000000000000F03F0000000000000040"))
    }

    @Test func truncatedOrHostileWKBIsAnError() throws {
        let geometry = try #require(try fixtureFeatures("prague/parking-zones.wgs84.geojson").first { if case .multiPolygon? = $0.geometry { true } else { false } }?.geometry)
        let encoded = WKB.encode(geometry)
        for length in stride(from: 0, to: encoded.count, by: 7) {
            #expect(throws: WKBError.self) { try WKB.decode(Array(encoded[..<length])) }
        }
        // A polygon claiming 2^32-1 rings in a 13-byte blob.
        #expect(throws: WKBError.self) { try WKB.decode([1, 3, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0]) }
    }

    /// A NaN or infinite x or y is refused where the bytes become geometry, naming the byte the
    /// position starts at; before, WKB took it and the index builders trapped on it (issue 19).
    @Test func nonFiniteCoordinatesAreAnError() throws {
        func message(_ bytes: [UInt8]) -> String? {
            do { _ = try WKB.decodeAllowingEmpty(bytes); return nil } catch { return error.description }
        }
        // The report's POINT (14.42 inf), without its GeoPackage header.
        let infinite = Array(RawStoreEdits.infiniteLatitude.dropFirst(8))
        #expect(message(infinite) == "invalid WKB at byte 5: the coordinate (14.42, inf) is not a finite number")
        // LINESTRING (1 2, nan 4): the second position starts at byte 25.
        var line = WKB.encode(.lineString(LineString(coordinates: [1, 2, 3, 4])))
        line.replaceSubrange(25..<33, with: withUnsafeBytes(of: Double.nan.bitPattern.littleEndian, Array.init))
        #expect(message(line) == "invalid WKB at byte 25: the coordinate (nan, 4.0) is not a finite number")
        let polygon = WKB.encode(.polygon(Polygon(rings: [[0, 0, 1, 0, 1, -.infinity, 0, 0]])))
        #expect(message(polygon) == "invalid WKB at byte 45: the coordinate (1.0, -inf) is not a finite number")
        // Z and M are dropped unchecked: some writers leave M as NaN.
        #expect(try WKB.decode(RawStoreEdits.bytes(hex: "01B90B0000000000000000F03F0000000000000040000000000000F87F000000000000F87F")) == .point(Point(lon: 1, lat: 2)))
    }

    /// POINT EMPTY (x and y both NaN, as WKB spells it) is no geometry: nil where allowed,
    /// dropped inside a MultiPoint or a collection, an error for `decode`.
    @Test func emptyPoints() throws {
        let empty = RawStoreEdits.bytes(hex: "0101000000000000000000F87F000000000000F87F")
        #expect(try WKB.decodeAllowingEmpty(empty) == nil)
        #expect(throws: WKBError.self) { try WKB.decode(empty) }
        // MULTIPOINT (EMPTY, (1 2)) and GEOMETRYCOLLECTION (POINT EMPTY, POINT (1 2)).
        let one = RawStoreEdits.bytes(hex: "0101000000000000000000F03F0000000000000040")
        #expect(try WKB.decode([1, 4, 0, 0, 0, 2, 0, 0, 0] + empty + one) == .multiPoint(MultiPoint(coordinates: [1, 2])))
        #expect(try WKB.decode([1, 7, 0, 0, 0, 2, 0, 0, 0] + empty + one) == .collection([.point(Point(lon: 1, lat: 2))]))
    }

    @Test func readsKnownWKT() throws {
        #expect(try WKT.decode("point(14.4208 50.088)") == .point(Point(lon: 14.4208, lat: 50.088)))
        #expect(try WKT.decode("POINT Z (1 2 3)") == .point(Point(lon: 1, lat: 2)))
        #expect(try WKT.decode("MULTIPOINT (1 2, 3 4)") == WKT.decode("MULTIPOINT ((1 2), (3 4))"))
        #expect(try WKT.decode("POLYGON ((0 0, 4 0, 4 4, 0 4, 0 0), (1 1, 1 2, 2 2, 2 1, 1 1))") ==
                .polygon(Polygon(rings: [[0, 0, 4, 0, 4, 4, 0, 4, 0, 0], [1, 1, 1, 2, 2, 2, 2, 1, 1, 1]])))
        #expect(try WKT.decode("GEOMETRYCOLLECTION (POINT (1 2), LINESTRING (0 0, 1 1))") ==
                .collection([.point(Point(lon: 1, lat: 2)), .lineString(LineString(coordinates: [0, 0, 1, 1]))]))
        #expect(try WKT.decode("MULTIPOLYGON EMPTY") == .multiPolygon(MultiPolygon(polygons: [])))
        #expect(WKT.encode(.point(Point(lon: 14, lat: 50.5))) == "POINT (14 50.5)")
        do {
            _ = try WKT.decode("POLYGON ((0 0, 1 0, 1 1))")
            Issue.record("a 3-position ring parsed")
        } catch {
            #expect(error.description.contains("a polygon ring needs at least 4 positions"))
        }
        #expect(throws: WKTError.self) { try WKT.decode("CIRCLE (1 2)") }
        #expect(throws: WKTError.self) { try WKT.decode("POINT (1 2") }
        #expect(throws: WKTError.self) { try WKT.decode("LINESTRING (1 2, 3 4) junk") }
    }
}

@Suite(.validatesStores) struct GeoJSONStreamTests {
    /// Streaming a file feature by feature gives exactly what the whole-file parser gives.
    @Test(arguments: ["prague/districts.sjtsk-epsg5514.geojson", "prague/parking-zones.wgs84.geojson", "zoo/pavilions-and-pens.geojson"])
    func streamEqualsWholeFile(fixture: String) throws {
        let whole = try GeoJSON.parseDocument([UInt8](Data(contentsOf: Fixtures.url(fixture))))
        var streamed: [Feature] = []
        // A small chunk size, so features straddle chunks.
        let (crs, name) = try GeoJSONStream.read(path: Fixtures.path(fixture), chunkSize: 4096) { index, feature in
            #expect(index == streamed.count)
            streamed.append(feature)
        }
        #expect(streamed == whole.features)
        #expect(crs == whole.crs)
        #expect(name == whole.name)
    }

    @Test func errorsGiveTheFeatureAndAbsolutePosition() throws {
        let url = try Fixtures.temporaryDirectory("stream").appendingPathComponent("bad.geojson")
        try Data("{\"type\": \"FeatureCollection\",\n  \"features\": [\n    {\"type\": \"Feature\" \"geometry\": null}\n]}".utf8).write(to: url)
        do {
            try GeoJSONStream.read(path: url.path) { _, _ in }
            Issue.record("a malformed file streamed")
        } catch {
            #expect("\(error)" == "features[0]: malformed JSON at line 3, column 24: unexpected '\"', expected ',' or '}' after an object member")
        }
        try Data("{\"type\": \"FeatureCollection\", \"features\": [{\"type\": \"Feature\", \"geometry\": null, ".utf8).write(to: url)
        #expect(throws: GeoJSONError.self) { try GeoJSONStream.read(path: url.path) { _, _ in } }
    }
}
