import Foundation
import Geometry
import Testing
import TestSupport

/// Issue 13's checks over real HTTP: one distance reads the same through every endpoint, GDAL
/// keeps the derived values of a GeoJSON answer, and no input is pasted into query text.
@Suite(.validatesStores) struct OneOutputPathTests {
    /// Every station's distance from the Old Town point, as `/nearest`, `FIND … NEAREST` and
    /// `/v1/air` write it: the same number to the millimetre, written by the same code.
    @Test func oneDistanceEverywhere() async throws {
        let server = try await RunningServer.shared.value
        let point = "lon=14.4208&lat=50.0880"
        let nearest = try await get(server.port, "/v1/layers/stations/nearest?\(point)&k=17")
        guard case .array(let features)? = nearest.object["features"] else { Issue.record("no features: \(nearest.text)"); return }
        var byCode: [String: Double] = [:]
        for feature in features {
            guard let code = feature["properties"]?["code"]?.string, let metres = feature["properties"]?["distance_m"]?.number else { continue }
            byCode[code] = metres
        }
        #expect(byCode.count == 17)
        // The one rounding rule: millimetres.
        #expect(byCode["ALEGA"] == 1873.48)  // haversine in Python: 1873.4804
        #expect(byCode.values.allSatisfy { ($0 * 1000).rounded() / 1000 == $0 })

        let query = try await post(server.port, "/v1/query", body: "FIND stations NEAREST 17 TO POINT(14.4208 50.0880) RETURN code, distance_m")
        guard case .array(let rows)? = query.object["rows"] else { Issue.record("no rows: \(query.text)"); return }
        #expect(rows.count == 17)
        for row in rows {
            #expect(byCode[row["code"]?.string ?? ""] == row["distance_m"]?.number, "\(row)")
        }

        let air = try await get(server.port, "/v1/air?\(point)")
        guard case .array(let pollutants)? = air.object["pollutants"], !pollutants.isEmpty else { Issue.record("no pollutants: \(air.text)"); return }
        for reading in pollutants {
            #expect(byCode[reading["station"]?.string ?? ""] == reading["distance_m"]?.number, "\(reading)")
        }
        // The same bytes, not just the same value: ALEGA's distance is written 1873.48 in each.
        #expect(nearest.text.contains(#""distance_m":1873.48"#))
        #expect(query.text.contains(#""distance_m":1873.48"#))
    }

    /// GDAL reads the `/nearest` answer as GeoJSON and keeps `distance_m` and the station's
    /// newest hour, because they are properties.
    @Test func gdalKeepsTheDerivedValues() async throws {
        let server = try await RunningServer.shared.value
        let nearest = try await get(server.port, "/v1/layers/stations/nearest?lon=14.4208&lat=50.0880")
        let file = try Fixtures.temporaryDirectory("ogr").appendingPathComponent("nearest.geojson")
        try Data(nearest.body).write(to: file)
        let info = try Fixtures.run(URL(fileURLWithPath: "/usr/bin/ogrinfo"), ["-ro", "-al", file.path])
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout.contains("distance_m (Real) = 600.76"), "\(info.stdout)")
        #expect(info.stdout.contains("code (String) = AREPA"))
        #expect(info.stdout.contains("observed_until (DateTime) = 2019/04/16 21:00:00+00") || info.stdout.contains("observed_until (String) = 2019-04-16T21:00:00Z"),
                "\(info.stdout)")
    }

    /// The injection of issue 13: a place that carries the rest of a statement with it. It was
    /// pasted into `ROUTE FROM … TO …` and turned a 110.416 m leg into 0 m; now the place is
    /// parsed as one place and the request is refused, naming the place.
    @Test func aPlaceCannotCarryAStatement() async throws {
        let server = try await RunningServer.shared.value
        func plan(_ first: String) -> String {
            """
            {"events":[
              {"name":"Entrance","place":"\(first)","start":"2026-06-20T14:00:00Z","end":"2026-06-20T14:10:00Z"},
              {"name":"Sea lions","place":"POINT(14.40519 50.11576)","start":"2026-06-20T14:20:00Z","end":"2026-06-20T14:30:00Z"}]}
            """
        }
        let injected = try await post(server.port, "/v1/schedule/check", body: plan("POINT(14.4109 50.1167) TO POINT(14.4109 50.1167) ON paths --"))
        #expect(injected.status == 400, "\(injected.text)")
        #expect(injected.object["code"] == .string("syntax_error"))
        #expect(injected.object["parameter"] == .string("events[0].place"))
        #expect(injected.object["detail"]?.string?.hasPrefix("events[0].place: expected the end of the place, found 'TO'") == true, "\(injected.text)")

        // The honest plan walks the real leg.
        let honest = try await post(server.port, "/v1/schedule/check", body: plan("POINT(14.4109 50.1167)"))
        #expect(honest.status == 200, "\(honest.text)")
        #expect(honest.object["legs"]?[0]?["walk_m"] == .double(559.557))
    }
}
