import Engine
import Foundation
import Geometry
import QueryLanguage
import Support
import TestSupport
import Testing

/// LOCATE on the demo store's WMU library venue. The position is the brute force's of
/// IndoorTests: the three nearest scans are at P01 (each 122 dB away), x 16, y 1.
@Suite(.validatesStores) struct LocateTests {
    @Test func locatesAScan() throws {
        let snapshot = try QueryStore.get()
        let result = try Query.run("LOCATE SCAN(b3001 -78, b3006 -77) IN wmu_library K 3 METHOD wknn", on: snapshot)[0]
        let answer = result.json()
        #expect(answer["x"]?.number == 16 && answer["y"]?.number == 1 && answer["floor"] == .integer(1))
        #expect(answer["point"] == .string("P01") && answer["method"] == .string("wknn") && answer["fingerprints"] == .string("scans"))
        #expect(answer["neighbours"]?.items.compactMap { $0["point"]?.string } == ["P01", "P01", "P01"])
        // The same answer as the engine's typed call written through Output: one output path.
        let venue = try snapshot.venue("wmu_library")
        let location = try snapshot.locate([("b3001", -78), ("b3006", -77)], in: venue, options: LocateOptions(k: 3, method: .wknn))
        var w = JSONWriter()
        Output.location(&w, location)
        #expect(JSONWriter.encode(answer) == w.bytes)
        // Bound parameters stand for the strengths and k; strings name beacons that are not words.
        let bound = try Query.run("LOCATE SCAN('b3001' $1, b3006 $2) IN WMU_LIBRARY K $3 METHOD knn FINGERPRINTS median", [-78, -77, 5], on: snapshot)[0].json()
        #expect(bound["k"] == .integer(5) && bound["method"] == .string("knn") && bound["fingerprints"] == .string("median"))
        #expect(bound["neighbours"]?.items.count == 5)
        // GeoJSON: a Feature, without geometry for a venue that is not on the globe.
        #expect(result.geoJSON()["type"] == .string("Feature") && result.geoJSON()["geometry"] == .null)
        #expect(result.table().hasPrefix("wmu_library, floor 1 (first floor): x 16.000, y 1.000"))
        let explain = try Query.run("EXPLAIN LOCATE SCAN(b3006 -78) IN wmu_library METHOD wknn", on: snapshot)[0].json()
        #expect(explain["plan"]?[1] == .string("   fingerprints: scans, 648 distinct vectors in a k-d tree (Euclidean)"))
        // The default: the probabilistic model's 10 likeliest cells (WMU's cells are its points).
        let model = try Query.run("EXPLAIN LOCATE SCAN(b3006 -78) IN wmu_library", on: snapshot)[0].json()
        #expect(model["plan"]?[1] == .string("   model: a Gaussian per beacon and cell with P(heard), 105 cells (the points)"))
        #expect(model["plan"]?[2] == .string("   estimate: the 10 likeliest cells, weighted by likelihood"))
    }

    /// LOCATE TRACK: the engine's track through the one output path, in JSON, GeoJSON and CSV;
    /// times that go back are refused.
    @Test func locatesATrack() throws {
        let snapshot = try QueryStore.get()
        let result = try Query.run("LOCATE TRACK(SCAN(b3006 -78) AT 0, SCAN(b3006 -75, b3005 -80) AT $1, SCAN(b3005 -70)) IN wmu_library SPEED 2 K 3", [1.5], on: snapshot)[0]
        let typed = try snapshot.locateTrack([(0, [("b3006", -78)]), (1.5, [("b3006", -75), ("b3005", -80)]), (nil, [("b3005", -70)])],
                                             in: snapshot.venue("wmu_library"), options: TrackOptions(speed: 2, k: 3))
        var w = JSONWriter()
        Output.track(&w, typed)
        #expect(JSONWriter.encode(result.json()) == w.bytes)
        #expect(result.count == 3 && result.json()["positions"]?.items.count == 3)
        #expect(result.geoJSON()["type"] == .string("Feature") && result.geoJSON()["geometry"] == .null)
        var csv = CSVWriter()
        try result.writeCSV(&csv)
        let lines = String(decoding: csv.bytes, as: UTF8.self).split(whereSeparator: \.isNewline)
        #expect(lines.count == 4 && lines[0] == "time,floor,x,y,lon,lat,point,spread" && lines[3].hasPrefix(",1,"))
        #expect(throws: QueryError.self) { try Query.run("LOCATE TRACK(SCAN(b3006 -78) AT 2, SCAN(b3006 -78) AT 1) IN wmu_library", on: snapshot) }
        #expect(throws: QueryError.self) { try Query.run("LOCATE TRACK(SCAN(b3006 -78)) IN wmu_library METHOD knn", on: snapshot) }
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var query: String, code: String, message: String, column: Int
        var testDescription: String { query }
    }

    static let cases: [Case] = [
        Case(query: "LOCATE SCAN(b3001 -78) IN wmu_libary", code: "unknown_venue", message: "unknown venue 'wmu_libary'", column: 27),
        Case(query: "LOCATE SCAN(b3001 -78, b3006 -70, b3001 -71) IN wmu_library", code: "duplicate_beacon",
             message: "beacon 'b3001' appears twice in the scan; send each beacon once", column: 35),
        Case(query: "LOCATE SCAN(b3001 -78, b3006 5) IN wmu_library", code: "rssi_out_of_range",
             message: "beacon 'b3006': 5 dBm is out of range; a received strength lies from -200 to 0 dBm (negative numbers)", column: 24),
        Case(query: "LOCATE SCAN(x1 -78) IN wmu_library", code: "no_known_beacon",
             message: "no beacon of the scan ('x1') is a beacon of venue 'wmu_library' heard above -200 dBm", column: 1),
        Case(query: "LOCATE SCAN(b3001 -78) IN wmu_library K 101", code: "invalid_argument", message: "k: must be between 1 and 100, got 101", column: 1),
        Case(query: "LOCATE SCAN(b3001 -78) IN wmu_library METHOD nearest", code: "invalid_value", message: "unknown method 'nearest'", column: 46),
        Case(query: "LOCATE SCAN(b3001 -78) IN wmu_library K 3 K 4", code: "duplicate_clause", message: "K appears twice in one LOCATE", column: 43),
        Case(query: "LOCATE SCAN() IN wmu_library", code: "syntax_error", message: "expected a beacon id (a name or a 'string') in SCAN(beacon rssi, …), found ')'", column: 13),
        Case(query: "LOCATE SCAN(b3001) IN wmu_library", code: "syntax_error", message: "expected the strength in dBm after the beacon (b3001 -78), found ')'", column: 18),
        Case(query: "LOCATE (b3001 -78) IN wmu_library", code: "syntax_error", message: "expected SCAN(beacon rssi, …) or TRACK(SCAN(…) AT seconds, …) after LOCATE, found '('", column: 8),
        Case(query: "LOCATE SCAN(b3001 -78) wmu_library", code: "syntax_error", message: "expected IN and a venue after the scan (LOCATE SCAN(…) IN venue), found 'wmu_library'", column: 24),
    ]

    @Test(arguments: cases) func badLocates(_ c: Case) throws {
        let snapshot = try QueryStore.get()
        do {
            _ = try Query.run(c.query, on: snapshot)
            Issue.record("no error")
        } catch {
            #expect(error.code == c.code && error.message == c.message && error.line == 1 && error.column == c.column)
        }
    }

    @Test func theUnknownVenueSuggestsTheClosest() throws {
        let snapshot = try QueryStore.get()
        do throws(QueryError) {
            _ = try Query.run("LOCATE SCAN(b3001 -78) IN wmu_libary", on: snapshot)
        } catch {
            #expect(error.hint == "did you mean 'wmu_library'?" && error.kind == .notFound)
        }
        do throws(QueryError) {
            _ = try Query.run("LOCATE SCAN(b3001 $1) IN wmu_library", [12], on: snapshot)
        } catch {
            #expect(error.code == "rssi_out_of_range" && error.column == 13 && error.kind == .invalid)
        }
    }
}
