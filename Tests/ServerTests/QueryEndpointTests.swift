import Foundation
import Geometry
import Support
import TestSupport
import Testing

/// POST /v1/query with real answers: JSON by default, GeoJSON on request, several statements as
/// an array, and each kind of query error on its documented status.
@Suite(.validatesStores) struct QueryEndpointTests {
    @Test func answersAsJSONAndGeoJSON() async throws {
        let server = try await RoutedServer.shared.value
        let district = try await post(server, "/v1/query", body: "FIND districts CONTAINING POINT(14.4208 50.0880) RETURN NAZEV_MC, KOD_MC")
        #expect(district.status == 200)
        #expect(district.header("Content-Type")?.hasPrefix("application/json") == true)
        #expect(district.text == #"{"count":1,"rows":[{"NAZEV_MC":"Praha 1","KOD_MC":500054}]}"#)

        let station = try await post(server, "/v1/query?format=geojson",
                                     body: "FIND stations NEAREST 1 TO POINT(14.42076 50.08804) WHERE MEASURES(no2) RETURN fid, code, LATEST(no2), distance_m")
        #expect(station.status == 200)
        guard case .array(let features)? = station.object["features"], case .object(let feature)? = features.first,
              case .object(let properties)? = feature["properties"] else { Issue.record("not GeoJSON: \(station.text)"); return }
        #expect(properties["code"] == .string("AREPA"))
        #expect(properties["latest_no2"] == .double(32.9))
        #expect(properties["distance_m"] == .double(603.576))
        #expect(try GeoJSON.geometry(from: feature["geometry"] ?? .null) == .point(Point(lon: 14.42922, lat: 50.088066)))

        let route = try await post(server, "/v1/query", body: "ROUTE FROM POINT(14.4109 50.1167) TO POINT(14.40519 50.11576) ON paths")
        #expect(route.object["code"] == .string("Ok"))
        guard case .array(let routes)? = route.object["routes"], case .object(let best)? = routes.first else { Issue.record("no routes: \(route.text)"); return }
        #expect(best["distance"] == .double(559.557))

        let two = try await post(server, "/v1/query", body: "FIND animals LINKED TO (pavilions WHERE name = 'Pavilon goril') ORDER BY name RETURN name; SHOW LAYERS")
        guard case .array(let answers) = two.json, case .object(let animals)? = answers.first else { Issue.record("not an array: \(two.text)"); return }
        #expect(animals["count"] == .integer(3))
    }

    /// CSV on request (format=csv or Accept: text/csv), through the one output path: RFC 4180
    /// with a header line and CRLF; a table per request. Warnings come in the JSON answer.
    @Test func answersAsCSVAndWithWarnings() async throws {
        let server = try await RoutedServer.shared.value
        let query = "FIND parking RETURN CATEGORY, COUNT(*) GROUP BY CATEGORY ORDER BY COUNT(*) DESC"
        let csv = try await post(server, "/v1/query?format=csv", body: query)
        #expect(csv.status == 200 && csv.header("Content-Type") == "text/csv; charset=utf-8; header=present")
        #expect(csv.text == "CATEGORY,count\r\nRES,928\r\nMIX,583\r\nVIS,37\r\n")
        let accepted = try await post(server, "/v1/query", body: "FIND pens WHERE name = 'gorily' RETURN name, animals, WKT(geom)", headers: [("Accept", "text/csv")])
        #expect(accepted.text == "name,animals,wkt\r\ngorily,\"[\"\"Gorila nížinná\"\"]\",POINT (14.40518699 50.11575607)\r\n")
        let two = try await post(server, "/v1/query?format=csv", body: "SHOW LAYERS; SHOW LAYERS")
        #expect(two.status == 400 && two.object["code"] == .string("invalid_parameter") && two.object["column"] == .integer(14))
        let route = try await post(server, "/v1/query?format=csv", body: "ROUTE FROM POINT(14.4109 50.1167) TO POINT(14.40519 50.11576) ON paths")
        #expect(route.status == 400 && route.object["code"] == .string("invalid_argument"))
        let swapped = try await post(server, "/v1/query", body: "FIND stations NEAREST 1 TO POINT(50.09 14.42) RETURN code")
        #expect(swapped.status == 200)
        #expect(swapped.object["warnings"]?.items.first?.string?.hasPrefix("POINT(50.09 14.42) lies 5078 km outside the data") == true)
        let plain = try await post(server, "/v1/query", body: "FIND stations NEAREST 1 TO POINT(14.42 50.09) RETURN code")
        #expect(plain.object["warnings"] == nil)
        // The nearest and containing endpoints warn the same way.
        let nearest = try await get(server, "/v1/layers/stations/nearest?lon=50.09&lat=14.42")
        #expect(nearest.status == 200 && nearest.object["warnings"]?.items.first?.string?.hasPrefix("POINT(50.09 14.42) lies 5078 km outside the data") == true)
        let inPrague = try await get(server, "/v1/layers/stations/nearest?lon=14.42&lat=50.09")
        #expect(inPrague.status == 200 && inPrague.object["warnings"] == nil)
    }

    /// A JSON body's params are bound to $1, $2, …: a point, text, a number; text that looks
    /// like SQL or like the language is only ever a value; wrong params are a clear 400.
    @Test func boundParametersInAJSONBody() async throws {
        let server = try await RoutedServer.shared.value
        func ask(_ body: String) async throws -> HTTPResponse {
            try await post(server, "/v1/query", body: body, headers: [("Content-Type", "application/json")])
        }
        let nearest = try await ask(#"{"query": "FIND stations NEAREST 2 TO $1 WHERE code <> $2 RETURN code, distance_m", "params": [{"lon": 14.42076, "lat": 50.08804}, "AREPA"]}"#)
        #expect(nearest.status == 200)
        // Haversine over Fixtures/air/stations-prague.csv, AREPA left out: AKALA 1667.7988 m, ARIEA 1726.3895 m.
        #expect(nearest.object["rows"] == .array([.object(JSONObject([("code", .string("AKALA")), ("distance_m", .double(1667.799))])),
                                                  .object(JSONObject([("code", .string("ARIEA")), ("distance_m", .double(1726.389))]))]))
        let injection = try await ask(#"{"query": "FIND stations WHERE code = ? RETURN code", "params": ["'; DROP TABLE stations; --' OR code <> '"]}"#)
        #expect(injection.text == #"{"count":0,"rows":[]}"#)
        let count = try await ask(#"{"query": "FIND stations WHERE code = ?", "params": ["AREPA"]}"#)
        #expect(count.object["count"] == .integer(1))
        let notArray = try await ask(#"{"query": "FIND stations WHERE code = $1", "params": {"1": "AREPA"}}"#)
        #expect(notArray.status == 400 && notArray.object["code"] == .string("invalid_body"))
        let badValue = try await ask(#"{"query": "FIND stations NEAREST 1 TO $1", "params": [[14.42, 50.09]]}"#)
        #expect(badValue.status == 400 && badValue.object["code"] == .string("invalid_body"))
        #expect(badValue.object["detail"]?.string?.hasPrefix("params[0] (the value of $1) is not") == true)
        let missing = try await ask(#"{"query": "FIND stations WHERE code = $1"}"#)
        #expect(missing.status == 400)
    }

    @Test func errorsCarryTheirPositionAndStatus() async throws {
        let server = try await RoutedServer.shared.value
        let unknown = try await post(server, "/v1/query", body: "FIND statoins NEAREST 1 TO POINT(14.42 50.09)")
        #expect(unknown.status == 404)
        #expect(unknown.header("Content-Type") == "application/problem+json")
        #expect(unknown.object["code"] == .string("unknown_layer"))
        #expect(unknown.object["line"] == .integer(1) && unknown.object["column"] == .integer(6))
        #expect(unknown.object["hint"] == .string("did you mean 'stations'?"))
        let swapped = try await post(server, "/v1/query", body: "FIND stations NEAREST 1 TO POINT(50.09 114.42)")
        #expect(swapped.status == 400)
        let noRoute = try await post(server, "/v1/query", body: "ROUTE FROM POINT(14.4109 50.1167) TO POINT(14.5 50.0) ON paths")
        #expect(noRoute.status == 422 && noRoute.object["code"] == .string("NoSegment"))
        let tooMany = try await post(server, "/v1/query", body: "FIND stations LIMIT 20000")
        #expect(tooMany.status == 422 && tooMany.object["code"] == .string("limit_exceeded"))
    }
}
