import Engine
import Foundation
import Geometry
import QueryLanguage
import Support
import TestSupport
import Testing

/// The wrong answers without an error that issue 20 lists, each now an exact error or the
/// corrected answer, and the errors of aggregates in the wrong place.
@Suite struct TypedComparisonTests {
    func rows(_ query: String) throws -> [JSONObject] {
        let result = try #require(try Query.run(query, on: QueryStore.get()).first)
        guard case .object(let answer) = result.json(), case .array(let rows)? = answer["rows"] else { return [] }
        return rows.compactMap { if case .object(let row) = $0 { row } else { nil } }
    }

    static let cases: [ErrorTests.Case] = [
        // A list compared with one value gave 0 rows.
        ErrorTests.Case("FIND stations WHERE HISTORY(no2, 24 h) > 40",
                        "HISTORY(no2, 24 h) is a list of [time, value] pairs, not one value: a comparison with it is never true or false", 1, 21,
                        hint: "compare its values: ANY(HISTORY(no2, 24 h)) > 40 (some hour), ALL(HISTORY(no2, 24 h)) > 40 (every hour), or an aggregate: MAX(HISTORY(no2, 24 h)) > 40"),
        // A number compared with text gave 0 rows.
        ErrorTests.Case("FIND stations WHERE LATEST(no2) = 'abc'", "LATEST(no2) holds numbers, not text", 1, 21, hint: "compare it with a number: LATEST(no2) > 40"),
        ErrorTests.Case("FIND stations WHERE LATEST(no2) = '40'", "LATEST(no2) holds numbers, not text", 1, 21, hint: "drop the quotes: LATEST(no2) = 40"),
        // A boolean compared with 1 gave 0 rows.
        ErrorTests.Case("FIND animals WHERE is_currently_available = 1", "'is_currently_available' holds TRUE or FALSE, not numbers", 1, 20, hint: "write is_currently_available = TRUE"),
        ErrorTests.Case("FIND animals WHERE is_currently_available = 'yes'", "'is_currently_available' holds TRUE or FALSE, not text", 1, 20, hint: "write is_currently_available = TRUE"),
        ErrorTests.Case("FIND animals WHERE is_currently_available IN (0, 1)", "'is_currently_available' holds TRUE or FALSE, not numbers", 1, 20, hint: "write is_currently_available = FALSE"),
        ErrorTests.Case("FIND stations WHERE name = TRUE", "'name' holds text, not TRUE or FALSE", 1, 21, hint: "quote the value: name = 'true'"),
        ErrorTests.Case("FIND stations WHERE LATEST(no2) ~ '4'", "~ matches text; LATEST(no2) holds numbers", 1, 21, hint: "compare it with =, <, > and a value"),
        ErrorTests.Case("FIND stations WHERE ANY(HISTORY(no2, 24 h)) > 'x'", "ANY(HISTORY(no2, 24 h)) holds numbers, not text", 1, 21, hint: "compare it with a number: ANY(HISTORY(no2, 24 h)) > 40"),
        ErrorTests.Case("FIND stations WHERE ANY(name) = 'x'", "ANY takes a list: ANY(HISTORY(no2, 24 h))", 1, 25),
        ErrorTests.Case("FIND stations RETURN ANY(HISTORY(no2, 24 h))", "ANY(HISTORY(no2, 24 h)) goes on the left of a comparison", 1, 22,
                        hint: "ANY(HISTORY(no2, 24 h)) > 40; to return values, RETURN HISTORY(no2, 24 h) or MAX(HISTORY(no2, 24 h))"),
        // Aggregates in the wrong place.
        ErrorTests.Case("FIND parking WHERE COUNT(*) > 3", "COUNT(*) aggregates rows; WHERE tests one row at a time", 1, 20,
                        hint: "test groups with HAVING: … GROUP BY CATEGORY HAVING COUNT(*) > 10"),
        ErrorTests.Case("FIND parking RETURN CATEGORY, COUNT(*)", "CATEGORY in RETURN is neither grouped nor aggregated", 1, 21,
                        hint: "add it to GROUP BY, or aggregate it: MIN(CATEGORY), COUNT(CATEGORY)"),
        ErrorTests.Case("FIND parking RETURN CATEGORY, SUM(CODE) GROUP BY CATEGORY", "SUM needs numbers; 'CODE' holds text", 1, 35, hint: "COUNT, MIN and MAX take text"),
        ErrorTests.Case("FIND parking RETURN *, COUNT(*) GROUP BY CATEGORY", "RETURN * cannot go with GROUP BY: a group has no single value of every column", 1, 21,
                        hint: "return the grouped fields and aggregates: RETURN CATEGORY, COUNT(*)"),
        ErrorTests.Case("FIND parking ORDER BY COUNT(*)", "COUNT(*) aggregates rows, but the FIND has no groups", 1, 23,
                        hint: "add GROUP BY and return the aggregate: RETURN CATEGORY, COUNT(*) GROUP BY CATEGORY ORDER BY COUNT(*) DESC"),
        ErrorTests.Case("FIND parking RETURN CATEGORY GROUP BY CATEGORY HAVING COUNT(*) > 'many'", "COUNT(*) holds numbers, not text", 1, 55,
                        hint: "compare it with a number: COUNT(*) > 40"),
        ErrorTests.Case("FIND parking RETURN AVG(COUNT(*))", "aggregates over rows do not nest", 1, 25),
        ErrorTests.Case("FIND parking RETURN SUM(*)", "expected a field in SUM(…), found '*'", 1, 25, hint: "only COUNT takes *: COUNT(*)"),
        ErrorTests.Case("FIND stations ORDER BY code NULLS", "expected FIRST or LAST after NULLS, found end of input", 1, 34),
        ErrorTests.Case("FIND stations RETURN WKT(geometrie)", "WKT takes the feature's geometry, geom; 'geometrie' is not it", 1, 26, hint: "write WKT(geom)"),
    ]

    @Test(arguments: cases) func wrongComparison(_ c: ErrorTests.Case) throws {
        let error = try #require(try ErrorTests.error(of: c.query), "no error for \(c.query)")
        #expect(error.message == c.message)
        #expect(error.line == c.line)
        #expect(error.column == c.column)
        #expect(error.hint == c.hint)
        #expect(error.code != "")
    }

    /// ANY and ALL over the hours: AREPA reaches 69.6 µg/m³ of NO2 in its last 24 hours (the
    /// SQLite cross-check in AggregateTests), so ANY(…) > 69 finds it and ANY(…) > 69.6 does
    /// not; brute force over each station's history decides the rest.
    @Test func anyAndAllOverHistory() throws {
        let snapshot = try QueryStore.get()
        let stations = try snapshot.layer("stations")
        let series = try #require(snapshot.timeSeriesByLayer["stations"])
        let column = try #require(series.columns.firstIndex(of: "no2"))
        func brute(_ test: ([Double]) -> Bool) -> [String] {
            (0..<stations.count).compactMap { i -> String? in
                guard let code = stations.properties[i]["code"]?.stringValue else { return nil }
                let values = series.history(of: code, hours: 24).compactMap { $0.values[column] }
                return !values.isEmpty && test(values) ? code : nil
            }.sorted()
        }
        func codes(_ condition: String) throws -> [String] {
            try rows("FIND stations WHERE \(condition) RETURN code").compactMap { $0["code"]?.string }.sorted()
        }
        let above69 = try codes("ANY(HISTORY(no2, 24 h)) > 69")
        #expect(above69.contains("AREPA") && above69 == brute { $0.contains { $0 > 69 } })
        #expect(try !codes("ANY(HISTORY(no2, 24 h)) > 69.6").contains("AREPA"))
        #expect(try codes("ANY(HISTORY(no2, 24 h)) > 40") == brute { $0.contains { $0 > 40 } })
        #expect(try codes("ALL(HISTORY(no2, 24 h)) >= 20") == brute { $0.allSatisfy { $0 >= 20 } })
        #expect(try codes("ALL(HISTORY(no2, 24 h)) >= 20") == ["ALEGA", "AREPA", "AVYNA"])
        #expect(try codes("MAX(HISTORY(no2, 24 h)) > 69") == above69)
    }

    /// `= TRUE` finds the animals on show; `= 1` is the error above.
    @Test func booleansTakeTrueAndFalse() throws {
        #expect(try rows("FIND animals WHERE is_currently_available = TRUE RETURN COUNT(*)").first?["count"] == .integer(605))
        #expect(try rows("FIND animals WHERE is_currently_available = FALSE RETURN COUNT(*)").first?["count"] == .integer(0))
    }

    /// Missing values sort last in both directions unless NULLS FIRST; "worst air first" starts
    /// with a station that has a value.
    @Test func missingValuesSortLast() throws {
        let descending = try rows("FIND stations ORDER BY LATEST(so2) DESC RETURN code, LATEST(so2)")
        let values = descending.map { $0["latest_so2"]?.number }
        let present = values.compactMap { $0 }
        #expect(present == present.sorted(by: >) && present.count == 2)
        #expect(values.prefix(2).allSatisfy { $0 != nil } && values.dropFirst(2).allSatisfy { $0 == nil })
        #expect(descending.first?["code"] == .string("ARIEA"))
        let ascending = try rows("FIND stations ORDER BY LATEST(so2) RETURN code, LATEST(so2)").map { $0["latest_so2"]?.number }
        #expect(ascending.prefix(2).compactMap { $0 } == present.reversed() && ascending.dropFirst(2).allSatisfy { $0 == nil })
        let first = try rows("FIND stations ORDER BY LATEST(so2) DESC NULLS FIRST RETURN code, LATEST(so2)").map { $0["latest_so2"]?.number }
        #expect(first.prefix(15).allSatisfy { $0 == nil } && first.suffix(2).compactMap { $0 } == present)
    }

    /// A point 5,000 km away whose swap lies in the data is answered with a warning, in the
    /// JSON too; a point in Prague, or far away with a swap outside the data, has none.
    @Test func swappedCoordinatesWarn() throws {
        let snapshot = try QueryStore.get()
        let result = try #require(try Query.run("FIND stations NEAREST 1 TO POINT(50.09 14.42) RETURN code, distance_m", on: snapshot).first)
        let warning = "POINT(50.09 14.42) lies 5078 km outside the data (lon 14.22…14.71, lat 49.94…50.18), and its swap POINT(14.42 50.09) lies inside it: did you swap longitude and latitude? POINT takes (lon lat)"
        #expect(result.warnings == [warning])
        #expect(result.json()["warnings"] == .array([.string(warning)]))
        #expect(try Query.run("FIND stations NEAREST 1 TO POINT(14.42 50.09)", on: snapshot).first?.warnings == [])
        #expect(try Query.run("FIND stations NEAREST 1 TO POINT(-74.0 40.7)", on: snapshot).first?.warnings == [])
        #expect(try Query.run("FIND stations NEAREST 1 TO POINT(14.42 50.09)", on: snapshot).first?.json()["warnings"] == nil)
        // The distance to the extent, checked by haversine to its nearest corner (14.71, 49.94).
        let metres = Geodesy.haversine(lon1: 50.09, lat1: 14.42, lon2: snapshot.dataExtent?.maxLon ?? 0, lat2: snapshot.dataExtent?.minLat ?? 0)
        #expect(Int((metres / 1000).rounded()) == 5078)
    }
}
