import Engine
import Foundation
import QueryLanguage
import TestSupport
import Testing

/// Malformed queries: each gets its exact message, position and hint, and nothing runs.
@Suite(.validatesStores) struct ErrorTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var query: String
        var message: String
        var line: Int
        var column: Int
        var hint: String?
        init(_ query: String, _ message: String, _ line: Int, _ column: Int, hint: String? = nil) {
            (self.query, self.message, self.line, self.column, self.hint) = (query, message, line, column, hint)
        }
        var testDescription: String { query }
    }

    static let cases: [Case] = [
        Case("FNID stations", "expected a statement, found 'FNID'", 1, 1, hint: "did you mean FIND?"),
        Case("SHOW TABLES", "expected LAYERS after SHOW (SHOW LAYERS or SHOW FENCES), found 'TABLES'", 1, 6),
        Case("DESCRIBE", "expected a layer or tile set name after DESCRIBE, found end of input", 1, 9),
        Case("FIND", "expected a layer name after FIND, found end of input", 1, 5),
        Case("FIND stations,", "expected a layer name after ',', found end of input", 1, 15),
        Case("FIND stations NEAREST TO POINT(14.42 50.09)", "expected the number of features after NEAREST, found 'TO'", 1, 23),
        Case("FIND stations NEAREST 0 TO POINT(14.42 50.09)", "the number of features after NEAREST must be a whole number of at least 1, got 0", 1, 23),
        Case("FIND stations NEAREST 2.5 TO POINT(14.42 50.09)", "the number of features after NEAREST must be a whole number of at least 1, got 2.5", 1, 23),
        Case("FIND stations NEAREST 3 POINT(14.42 50.09)", "expected TO after NEAREST 3, found 'POINT'", 1, 25),
        Case("FIND stations NEAREST 3 TO (14.42 50.09)", "expected a point, POINT(lon lat), found '('", 1, 28),
        Case("FIND stations NEAREST 3 TO POINT(14.42, 50.09)", "expected the latitude, found ','", 1, 39, hint: "write POINT(lon lat) with a space and no comma, as in WKT: POINT(14.4208 50.0880)"),
        Case("FIND stations NEAREST 3 TO POINT(14.42 50.09", "expected ')' to close the point, found end of input", 1, 45),
        Case("FIND stations NEAREST 3 TO POINT(14.42 95)", "latitude 95 is outside -90…90", 1, 40, hint: "did you swap longitude and latitude? POINT takes (lon lat): POINT(95 14.42)"),
        Case("FIND stations NEAREST 3 TO POINT(200 50)", "longitude 200 is outside -180…180", 1, 34),
        Case("FIND stations NEAREST 3 TO POINT(lon 14.42 lon 50.09)", "expected LAT (a labelled point names both: POINT(lon 14.42 lat 50.08)), found 'lon'", 1, 44, hint: "did you mean LAT?"),
        Case("FIND stations WITHIN -5 m OF POINT(14.42 50.09)", "a distance cannot be negative", 1, 22),
        Case("FIND stations WITHIN 5 miles OF POINT(14.42 50.09)", "expected a unit (m or km) after 5, found 'miles'", 1, 24, hint: "distances need a unit: 500 m, 2 km"),
        Case("FIND stations WHERE", "expected a condition (a field name, NOT or '('), found end of input", 1, 20),
        Case("FIND stations WHERE name = 'Praha", "the string starting here has no closing quote", 1, 28, hint: "strings are in single quotes and end on the same line; write '' for a quote inside"),
        // Double quotes name a field: "Praha" is a name where a value belongs.
        Case("FIND stations WHERE name = \"Praha\"", "expected a value (a number, 'text', TRUE, FALSE), found 'Praha'", 1, 28, hint: "text goes in single quotes: 'Praha'"),
        Case("FIND stations WHERE \"name = 'x'", "the quoted name starting here has no closing double quote", 1, 21, hint: "double quotes name a field or layer (\"typ stanice\"); strings are in single quotes: 'Praha 6'"),
        Case("FIND stations WHERE name == 'x'", "expected a value (a number, 'text', TRUE, FALSE), found '='", 1, 27),
        Case("FIND stations WHERE name = Praha", "expected a value (a number, 'text', TRUE, FALSE), found 'Praha'", 1, 28, hint: "text goes in single quotes: 'Praha'"),
        Case("FIND stations WHERE name = NULL", "a comparison with NULL is never true", 1, 26, hint: "write name IS NULL"),
        Case("FIND stations WHERE code = 5", "'code' holds text, not numbers", 1, 21, hint: "quote the value: code = '5'"),
        Case("FIND stations WHERE (name = 'x'", "expected ')' to close '(', found end of input", 1, 32),
        Case("FIND stations WHERE name IN ()", "expected a value (a number, 'text', TRUE, FALSE), found ')'", 1, 30),
        Case("FIND stations WHERE name IS 'x'", "expected NULL after IS, found string 'x'", 1, 29),
        Case("FIND stations WHERE name ~ 5", "expected a string or a parameter after '~', found number 5", 1, 28, hint: "~ matches text: name ~ 'praha 6'"),
        Case("FIND stations WHERE LATEST(nox) > 5", "the time series of 'stations' has no column 'nox'", 1, 28, hint: "did you mean 'no2'?"),
        Case("FIND districts WHERE MEASURES(no2)", "'districts' has no time series", 1, 31, hint: "time series belong to stations"),
        Case("FIND stations WHERE name = 'x' WHERE code = 'y'", "WHERE appears twice in one FIND", 1, 32, hint: "join the conditions with AND"),
        Case("FIND stations ORDER name", "expected BY after ORDER, found 'name'", 1, 21),
        Case("FIND stations LIMIT -1", "a row count after LIMIT must be a whole number from 0 to 1000000, got -1", 1, 21),
        Case("FIND stations NEAREST 20000 TO POINT(14.42 50.09)", "k: must be between 1 and 10000, got 20000", 1, 1),
        Case("FIND stations LIMIT 20000", "LIMIT 20000 is above the largest answer allowed, 10000 rows", 1, 21),
        Case("FIND stations RETURN nmae", "no field 'nmae' in 'stations'", 1, 22, hint: "did you mean 'name'?"),
        Case("FIND stations CONTAINING POINT(14.42 50.09)", "CONTAINING needs polygons; 'stations' holds points", 1, 6),
        Case("FIND animals NEAREST 1 TO POINT(14.42 50.09)", "'animals' is a table without geometries", 1, 6, hint: "find its features through LINKED TO (layer WHERE …)"),
        Case("FIND stations ORDER BY distance_m", "distance_m exists only with NEAREST or WITHIN", 1, 24),
        Case("FIND stations # ", "unexpected character '#'", 1, 15),
        Case("FIND * WHERE x = 1", "FIND * needs OF tileset: it means every layer of a tile set", 1, 6, hint: "name the layers: FIND districts, parking …"),
        Case("FIND pens LINKED TO animals", "expected '(' around the linked selection: LINKED TO (layer WHERE …), found 'animals'", 1, 21),
        Case("FIND districts LINKED TO (stations)", "'districts' and 'stations' are not linked: neither holds a list of the other's feature ids", 1, 27),
        Case("FIND stations INTERSECTING BBOX(14.5 50.0, 14.4 50.1)", "the box's first corner must be south-west of its second", 1, 28, hint: "BBOX(minLon minLat, maxLon maxLat)"),
        Case("ROUTE FROM POINT(14.41 50.11) TO POINT(14.40 50.11)", "expected ON and a network layer after the destination (… ON paths), found end of input", 1, 52),
        Case("ROUTE FROM POINT(14.41 50.11) TO POINT(14.40 50.11) ON districts", "'districts' is not a network: ROUTE walks along a line layer", 1, 56, hint: "networks: paths"),
        Case("ROUTE FROM POINT(14.41 50.11) TO POINT(14.40 50.11) ON pahts", "unknown layer 'pahts'", 1, 56, hint: "did you mean 'paths'?"),
        Case("ROUTE FROM POINT(14.41 50.11) TO pavilions WHERE name = 'Pavilon slonů' ON paths", "the destination matched no feature", 1, 34),
        Case("ROUTE FROM POINT(14.41 50.11) TO POINT(14.40 50.11) ON paths SPEED 5", "expected the unit km/h after the speed, found end of input", 1, 69),
        Case("ROUTE FROM POINT(14.41 50.11) TO POINT(14.40 50.11) ON paths PROFILE bike", "unknown profile 'bike'", 1, 70, hint: "profiles: foot, wheelchair, any"),
        Case("ROUTE FROM POINT(14.41 50.11) TO POINT(14.40 50.11) ON paths PROFILE whelchair", "unknown profile 'whelchair'", 1, 70, hint: "did you mean 'wheelchair'? profiles: foot, wheelchair, any"),
        Case("ROUTE FROM POINT(14.41 50.11) TO POINT(14.40 50.11) ON paths SPEED 4 km/h PROFILE foot SPEED 3 km/h", "SPEED appears twice in one ROUTE", 1, 88),
        Case("TILE 16/35388 OF zoo_map", "expected '/' between x and y (TILE z/x/y), found 'OF'", 1, 15),
        Case("TILE 3/9/1 OF zoo_map", "tile 3/9/1 does not exist: at zoom 3, x and y run from 0 to 7", 1, 6),
        Case("TILE 16/35388/22194 OF zoo", "unknown tile set 'zoo'", 1, 24, hint: "tile sets: zoo_map"),
        Case("TILE 2/1/1 OF zoo_map", "tile set 'zoo_map' has no tile 2/1/1", 1, 6, hint: "its zooms run from 15 to 16"),
        Case("EXPLAIN EXPLAIN SHOW LAYERS", "expected a statement to explain, found 'EXPLAIN'", 1, 9),
        Case("SHOW LAYERS extra", "expected ';' or the end of the statement, found 'extra'", 1, 13),
        // A misspelled keyword: "did you mean" among the keywords that fit there.
        Case("FIND stations NEARST 1 TO POINT(14.42 50.09)", "expected ',' or a clause (CONTAINING, NEAREST, WITHIN, INTERSECTING, LINKED TO, WHERE, GROUP BY, HAVING, ORDER BY, LIMIT, RETURN), found 'NEARST'", 1, 15, hint: "did you mean NEAREST?"),
        Case("find stations wehre name = 'x'", "expected ',' or a clause (CONTAINING, NEAREST, WITHIN, INTERSECTING, LINKED TO, WHERE, GROUP BY, HAVING, ORDER BY, LIMIT, RETURN), found 'wehre'", 1, 15, hint: "did you mean WHERE?"),
        Case("FIND stations WHERE name = 'x' ORDR BY name", "expected ';' or the end of the statement, found 'ORDR'", 1, 32, hint: "did you mean ORDER?"),
        Case("FIND stations ORDER BY name DESC LIMT 2", "expected ';' or the end of the statement, found 'LIMT'", 1, 34, hint: "did you mean LIMIT?"),
        Case("FIND stations WHERE name = 'x' AN code = 'y'", "expected ';' or the end of the statement, found 'AN'", 1, 32, hint: "did you mean AND?"),
        Case("FIND stations NEAREST 3 TOO POINT(14.42 50.09)", "expected TO after NEAREST 3, found 'TOO'", 1, 25, hint: "did you mean TO?"),
        // No keyword is a word that every letter would have to change.
        Case("FIND stations WHERE name = 'x' q", "expected ';' or the end of the statement, found 'q'", 1, 32),
        Case("FIND stations WHERE name = 'a' AND", "expected a condition (a field name, NOT or '('), found end of input", 1, 35),
    ]

    /// The error a query ends in, or nil when it runs.
    static func error(of query: String, smallLimits: Bool = false) throws -> QueryError? {
        let snapshot = try smallLimits ? QueryStore.smallLimits.get() : QueryStore.get()
        do {
            _ = try Query.run(query, on: snapshot)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: cases) func malformedQuery(_ c: Case) throws {
        let error = try #require(try Self.error(of: c.query), "no error for \(c.query)")
        #expect(error.message == c.message)
        #expect(error.line == c.line)
        #expect(error.column == c.column)
        #expect(error.hint == c.hint)
    }

    @Test func positionsCountLinesAndCharacters() throws {
        // Line 3; the column counts 'ř' and 'í' as one character each.
        let query = "FIND stations\n  WHERE name ~ 'Břevnov'\n  ORDER BY náme"
        let error = try #require(try Self.error(of: query))
        #expect((error.line, error.column, error.length) == (3, 12, 4))
        #expect(error.rendered(in: query) == """
            error: no field 'náme' in 'stations' (line 3, column 12)
                ORDER BY náme
                         ^^^^
              hint: did you mean 'name'?
            """)
    }

    @Test func errorKindsMapToHTTPStatuses() throws {
        func kind(_ query: String) throws -> QueryError.Kind? { try Self.error(of: query)?.kind }
        #expect(try kind("FIND stations NEAREST") == .syntax)
        #expect(try kind("FIND statoins") == .notFound)
        #expect(try kind("FIND stations NEAREST 1 TO POINT(14.4 95)") == .invalid)
        #expect(try kind("ROUTE FROM POINT(14.4109 50.1167) TO POINT(14.5 50.0) ON paths") == .impossible)
        #expect(try kind("FIND parking") == nil)
        #expect(try kind("FIND stations LIMIT 20000") == .limit)
        // An answer over the row limit is an error that asks for LIMIT, not a silent cut.
        let tooMany = try #require(try Self.error(of: "FIND parking", smallLimits: true))
        #expect(tooMany.code == "too_many_rows")
        #expect(tooMany.message == "the answer has 1548 rows, more than the limit of 1000")
    }
}
