import Geometry
import Support
import Testing

private func text(_ body: (inout JSONWriter) -> Void, pretty: Bool = false) -> String {
    var writer = JSONWriter(pretty: pretty)
    body(&writer)
    return String(decoding: writer.bytes, as: UTF8.self)
}

private func compact(_ value: JSONValue) -> String { String(decoding: JSONWriter.encode(value), as: UTF8.self) }

private func geoJSON(_ g: Geometry) -> String { text { $0.geometry(g) } }

@Suite struct JSONWriterTests {
    @Test func numbersFollowTheOneRule() {
        let cases: [(Double, String)] = [
            (-0.0, "-0.0"), (3, "3.0"), (1e300, "1e+300"), (-2.5e-300, "-2.5e-300"), (1e-5, "1e-05"),
            (0.1 + 0.2, "0.30000000000000004"), (14.4208, "14.4208"), (1e15, "1000000000000000.0"), (1e16, "1e+16"),
            (.nan, "null"), (.infinity, "null"), (-.infinity, "null"),
        ]
        for (d, expected) in cases {
            #expect(compact(.double(d)) == expected, "\(d)")
        }
        #expect(compact(.integer(.min)) == "-9223372036854775808")
        #expect(compact(.integer(.max)) == "9223372036854775807")
        #expect(compact(.integer(0)) == "0")
        #expect(compact(.integer(-42)) == "-42")
    }

    @Test func stringsEscapeOnlyWhatJSONRequires() {
        // DEL (0x7F), the em dash, accents and the astral elephant pass through as UTF-8.
        let s = "a\"b\\c\n\r\t\u{08}\u{0C}\u{01}\u{1F}\u{7F} — Malá 🐘"
        #expect(compact(.string(s)) == "\"a\\\"b\\\\c\\n\\r\\t\\b\\f\\u0001\\u001f\u{7F} — Malá 🐘\"")
        #expect(Array(compact(.string(s)).utf8.suffix(6)) == [0x20, 0xF0, 0x9F, 0x90, 0x98, 0x22])
        #expect(compact(.string("")) == "\"\"")
        var log: [UInt8] = Array("x=".utf8)
        JSONWriter.writeString("tab\there", into: &log)
        #expect(log == Array("x=\"tab\\there\"".utf8))
    }

    @Test func containersCompactAndPretty() throws {
        let nested: JSONValue = .array([.array([]), .object(JSONObject()), .array([.array([])])])
        #expect(compact(nested) == "[[],{},[[]]]")
        #expect(JSON.serialize(nested, pretty: true) == "[\n  [],\n  {},\n  [\n    []\n  ]\n]")
        let object = try JSON.parse(#"{"a":[1,2.5],"b":{},"c":{"d":null,"e":true},"f":"g"}"#)
        #expect(compact(object) == #"{"a":[1,2.5],"b":{},"c":{"d":null,"e":true},"f":"g"}"#)
        #expect(JSON.serialize(object, pretty: true) == """
            {
              "a": [
                1,
                2.5
              ],
              "b": {},
              "c": {
                "d": null,
                "e": true
              },
              "f": "g"
            }
            """)
        #expect(JSON.serialize(.integer(7), pretty: true) == "7")
    }

    @Test func structuralCallsPlaceTheCommas() {
        let out = text { w in
            w.beginObject()
            w.key("n")
            w.integer(1)
            w.key("list")
            w.beginArray()
            w.bool(false)
            w.null()
            w.raw(Array(#"{"x":[1]}"#.utf8))
            w.string("s")
            w.endArray()
            w.key("empty")
            w.beginObject()
            w.endObject()
            w.endObject()
        }
        #expect(out == #"{"n":1,"list":[false,null,{"x":[1]},"s"],"empty":{}}"#)
    }

    @Test func derivedValuesAreRoundedOneWay() {
        let out = text { w in
            w.beginArray()
            w.metres(1138.6484)
            w.metres(0.0005)  // 0.5 mm: .rounded() takes halves away from zero
            w.metres(-0.0004)  // rounds to -0.0, written 0.0
            w.metres(2)
            w.metres(.nan)
            w.metres(1e306)  // too large to scale; written as it is, not as null
            w.seconds(12.34)
            w.seconds(0.05)
            w.seconds(-.infinity)
            w.coordinate(14.420800000000002)  // coordinates are not rounded
            w.endArray()
        }
        #expect(out == "[1138.648,0.001,0.0,2.0,null,1e+306,12.3,0.1,null,14.420800000000002]")
    }

    @Test func geometriesFromTheFlatArrays() {
        #expect(geoJSON(.point(Point(lon: 14.4208, lat: 50.088))) == #"{"type":"Point","coordinates":[14.4208,50.088]}"#)
        #expect(geoJSON(.point(Point(lon: .nan, lat: -0.0))) == #"{"type":"Point","coordinates":[null,-0.0]}"#)
        #expect(geoJSON(.lineString(LineString(coordinates: [1, 2, 3.5, 4]))) == #"{"type":"LineString","coordinates":[[1.0,2.0],[3.5,4.0]]}"#)
        #expect(geoJSON(.lineString(LineString(coordinates: []))) == #"{"type":"LineString","coordinates":[]}"#)
        #expect(geoJSON(.multiPoint(MultiPoint(coordinates: [1, 2, 3, 4]))) == #"{"type":"MultiPoint","coordinates":[[1.0,2.0],[3.0,4.0]]}"#)
        #expect(geoJSON(.multiPoint(MultiPoint(coordinates: []))) == #"{"type":"MultiPoint","coordinates":[]}"#)
        let square: [Double] = [0, 0, 10, 0, 10, 10, 0, 0]
        let hole: [Double] = [1, 1, 2, 1, 2, 2, 1, 1]
        #expect(geoJSON(.polygon(Polygon(rings: [square, hole]))) ==
            #"{"type":"Polygon","coordinates":[[[0.0,0.0],[10.0,0.0],[10.0,10.0],[0.0,0.0]],[[1.0,1.0],[2.0,1.0],[2.0,2.0],[1.0,1.0]]]}"#)
        #expect(geoJSON(.polygon(Polygon(rings: []))) == #"{"type":"Polygon","coordinates":[]}"#)
        #expect(geoJSON(.polygon(Polygon(coordinates: [], ringOffsets: []))) == #"{"type":"Polygon","coordinates":[]}"#)
        #expect(geoJSON(.multiLineString(MultiLineString(lines: [[1, 2, 3, 4], [5, 6, 7, 8, 9, 10]]))) ==
            #"{"type":"MultiLineString","coordinates":[[[1.0,2.0],[3.0,4.0]],[[5.0,6.0],[7.0,8.0],[9.0,10.0]]]}"#)
        #expect(geoJSON(.multiLineString(MultiLineString(lines: []))) == #"{"type":"MultiLineString","coordinates":[]}"#)
        let small = Polygon(rings: [[0.5, 0.5, 1.5, 0.5, 0.5, 1.5, 0.5, 0.5]])
        #expect(geoJSON(.multiPolygon(MultiPolygon(polygons: [Polygon(rings: [square, hole]), small]))) ==
            #"{"type":"MultiPolygon","coordinates":[[[[0.0,0.0],[10.0,0.0],[10.0,10.0],[0.0,0.0]],[[1.0,1.0],[2.0,1.0],[2.0,2.0],[1.0,1.0]]],[[[0.5,0.5],[1.5,0.5],[0.5,1.5],[0.5,0.5]]]]}"#)
        #expect(geoJSON(.multiPolygon(MultiPolygon(polygons: []))) == #"{"type":"MultiPolygon","coordinates":[]}"#)
        #expect(geoJSON(.collection([.point(Point(lon: 1, lat: 2)), .collection([])])) ==
            #"{"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[1.0,2.0]},{"type":"GeometryCollection","geometries":[]}]}"#)
        // Offsets past the end of the coordinates are clamped, not trusted.
        #expect(geoJSON(.polygon(Polygon(coordinates: [1, 2, 3, 4], ringOffsets: [0, 9]))) == #"{"type":"Polygon","coordinates":[[[1.0,2.0],[3.0,4.0]]]}"#)
        #expect(text({ $0.geometry(.point(Point(lon: 14.4208, lat: 50.088))) }, pretty: true) ==
            "{\n  \"type\": \"Point\",\n  \"coordinates\": [\n    14.4208,\n    50.088\n  ]\n}")
    }

    @Test func geometryMatchesTheJSONValueEncoding() throws {
        // The districts as written straight from their arrays and through GeoJSON.encode's tree.
        let features = try fixtureFeatures("prague/districts.wgs84.geojson")
        #expect(features.count == 57)
        for feature in features {
            guard let g = feature.geometry else { Issue.record("a district without a geometry"); continue }
            var writer = JSONWriter()
            writer.geometry(g)
            #expect(writer.bytes == JSONWriter.encode(GeoJSON.encode(g)))
        }
    }
}
