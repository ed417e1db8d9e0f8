import Engine
import Foundation
import Geometry
import TestSupport
import Testing

/// /v1/air and /v1/schedule/check against the demo store, cross-checked by brute force.
@Suite(.validatesStores) struct StoryEndpointTests {
    @Test func airWhereIAm() async throws {
        let server = try await RoutedServer.shared.value
        let air = try await get(server, "/v1/air?lon=14.42076&lat=50.08804")
        #expect(air.status == 200)
        guard case .object(let district)? = air.object["district"], case .object(let properties)? = district["properties"],
              case .object(let index)? = air.object["index"], case .array(let pollutants)? = air.object["pollutants"] else {
            Issue.record("not the air answer: \(air.text)"); return
        }
        #expect(properties["NAZEV_MC"] == .string("Praha 1"))
        #expect(index["station"] == .string("AREPA") && index["aqi"] == .double(3) && index["aqidescription"] == .string("fair"))
        #expect(air.object["observed_until"] == .string("2019-04-16T21:00:00Z"))
        #expect((air.object["age_s"]?.number ?? 0) > 200_000_000)

        // Each pollutant's station is the nearest station that measures it, by brute force.
        let db = try await DemoStore.path()
        let snapshot = try Snapshot.load(storePath: db)
        let stations = try snapshot.layer("stations")
        let series = try #require(snapshot.timeSeriesByLayer["stations"])
        #expect(pollutants.count == series.columns.count - 1)  // every column but the index
        for case .object(let entry) in pollutants {
            let column = try #require(entry["pollutant"]?.string)
            let nearest = (0..<stations.count).compactMap { i -> (String, Double)? in
                guard let code = stations.properties[i]["code"]?.stringValue, series.measures(code, column),
                      case .point(let p)? = stations.geometries[i] else { return nil }
                return (code, Geodesy.haversine(lon1: 14.42076, lat1: 50.08804, lon2: p.lon, lat2: p.lat))
            }.min { $0.1 < $1.1 }
            #expect(entry["station"]?.string == nearest?.0, "\(column)")
            #expect(abs((entry["distance_m"]?.number ?? 0) - (nearest?.1 ?? -1)) < 0.001, "\(column)")
            #expect(entry["value"]?.number == series.latest(of: nearest?.0 ?? "").values[column]?.value, "\(column)")
        }
    }

    static func plan(gapMinutes: Int) -> String {
        func at(_ minutes: Int) -> String { String(format: "2026-06-20T%02d:%02d:00Z", 14 + minutes / 60, minutes % 60) }
        return """
            {"events":[
              {"name":"Gorilla talk","place":"pavilions WHERE name = 'Pavilon goril'","start":"\(at(0))","end":"\(at(30))"},
              {"name":"Sea lion feeding","place":"pens WHERE name = 'lachtani'","start":"\(at(30 + gapMinutes))","end":"\(at(60 + gapMinutes))"},
              {"name":"Hippos","place":"pavilions WHERE name = 'Pavilon hrochů'","start":"\(at(60 + 2 * gapMinutes))","end":"\(at(90 + 2 * gapMinutes))"}]}
            """
    }

    @Test func scheduleCheck() async throws {
        let server = try await RoutedServer.shared.value
        let relaxed = try await post(server, "/v1/schedule/check", body: Self.plan(gapMinutes: 15), headers: [("Content-Type", "application/json")])
        #expect(relaxed.status == 200, "\(relaxed.text)")
        #expect(relaxed.object["feasible"] == .bool(true))
        guard case .array(let legs)? = relaxed.object["legs"], legs.count == 2, case .object(let first)? = legs.first else {
            Issue.record("no legs: \(relaxed.text)"); return
        }
        // The first leg is exactly the ROUTE the language gives for the same places.
        let route = try await post(server, "/v1/query", body: "ROUTE FROM pavilions WHERE name = 'Pavilon goril' TO pens WHERE name = 'lachtani' ON paths")
        guard case .array(let routes)? = route.object["routes"], case .object(let best)? = routes.first else { Issue.record("no route"); return }
        #expect(first["walk_m"] == best["distance"])
        let walkMinutes = (best["duration"]?.number ?? 0) / 60
        #expect(abs((first["walk_min"]?.number ?? 0) - walkMinutes) < 0.051)
        #expect(first["gap_min"] == .double(15))
        #expect(abs((first["slack_min"]?.number ?? 0) - (15 - walkMinutes)) < 0.051)

        // One minute between events is too little for any of these walks.
        let tight = try await post(server, "/v1/schedule/check", body: Self.plan(gapMinutes: 1))
        #expect(tight.object["feasible"] == .bool(false))
        guard case .array(let tightLegs)? = tight.object["legs"] else { Issue.record("no legs"); return }
        #expect(tightLegs.allSatisfy { if case .object(let leg) = $0 { leg["enough_time"] == .bool(false) } else { false } })

        let unknown = try await post(server, "/v1/schedule/check", body: Self.plan(gapMinutes: 15).replacingOccurrences(of: "pens WHERE", with: "pns WHERE"))
        #expect(unknown.status == 404 && unknown.object["code"] == .string("unknown_layer"))
        let nothing = try await post(server, "/v1/schedule/check", body: Self.plan(gapMinutes: 15).replacingOccurrences(of: "lachtani", with: "jednorožci"))
        #expect(nothing.status == 422 && nothing.object["code"] == .string("NoTarget"))
        let outOfOrder = try await post(server, "/v1/schedule/check", body: Self.plan(gapMinutes: -10))
        #expect(outOfOrder.status == 400 && outOfOrder.object["parameter"] == .string("events[1]"))
        #expect(outOfOrder.object["detail"]?.string?.contains("starts before the event before it ends") == true)
        let notJSON = try await post(server, "/v1/schedule/check", body: "{events")
        #expect(notJSON.status == 400 && notJSON.object["code"] == .string("invalid_body"))
    }
}
