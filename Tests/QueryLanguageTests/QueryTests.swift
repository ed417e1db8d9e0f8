import Engine
import Foundation
import Geometry
import QueryLanguage
import Store
import Support
import TestSupport
import Testing

/// Answers of the language cross-checked against brute force over the same snapshot.
@Suite(.validatesStores) struct QueryTests {
    func rows(_ query: String, _ snapshot: Snapshot) throws -> [JSONObject] {
        let result = try #require(try Query.run(query, on: snapshot).first)
        guard case .object(let answer) = result.json(), case .array(let rows)? = answer["rows"] else { return [] }
        return rows.compactMap { if case .object(let row) = $0 { row } else { nil } }
    }

    /// NEAREST with a WHERE is "the k nearest that match", checked against haversine over all
    /// stations at 200 random points around Prague.
    @Test func nearestWithFilterMatchesBruteForce() throws {
        let snapshot = try QueryStore.get()
        let stations = try snapshot.layer("stations")
        let series = try #require(snapshot.timeSeriesByLayer["stations"])
        var random = SplitMix(state: 42)
        for _ in 0..<200 {
            let lon = Double.random(in: 14.2...14.7, using: &random), lat = Double.random(in: 49.95...50.18, using: &random)
            let found = try rows("FIND stations NEAREST 3 TO POINT(\(lon) \(lat)) WHERE MEASURES(so2) RETURN code, distance_m", snapshot)
            let expected = (0..<stations.count)
                .compactMap { i -> (String, Double)? in
                    guard let code = stations.properties[i]["code"]?.stringValue, series.measures(code, "so2"),
                          case .point(let p)? = stations.geometries[i] else { return nil }
                    return (code, Geodesy.haversine(lon1: lon, lat1: lat, lon2: p.lon, lat2: p.lat))
                }
                .sorted { $0.1 < $1.1 }.prefix(3)
            #expect(found.map { $0["code"]?.string ?? "" } == expected.map(\.0))
            for (row, want) in zip(found, expected) {
                #expect(abs((row["distance_m"]?.number ?? -1) - want.1) <= 0.05)
            }
        }
    }

    /// CONTAINING through the language agrees with the engine's operation at 500 random points
    /// (which the engine tests check against GEOS), and names the known districts of two stations.
    @Test func containingAgreesWithTheEngine() throws {
        let snapshot = try QueryStore.get()
        var random = SplitMix(state: 5514)
        var inside = 0
        for _ in 0..<500 {
            let lon = Double.random(in: 14.22...14.71, using: &random), lat = Double.random(in: 49.94...50.18, using: &random)
            let found = try rows("FIND districts, parking CONTAINING POINT(\(lon) \(lat)) RETURN layer, fid", snapshot)
            let expected = try snapshot.containing(snapshot.layer("districts"), at: Point(lon: lon, lat: lat)).map { ("districts", $0.fid) }
                + snapshot.containing(snapshot.layer("parking"), at: Point(lon: lon, lat: lat)).map { ("parking", $0.fid) }
            #expect(found.map { "\($0["layer"]?.string ?? "")/\(Int64($0["fid"]?.number ?? -1))" } == expected.map { "\($0.0)/\($0.1)" })
            if !expected.isEmpty { inside += 1 }
        }
        #expect(inside == 269)  // points of the box that lie in Prague (seeded, so fixed)
        // Chodov's station (14.51745 50.03017 in the CSV) lies in Praha 11.
        #expect(try rows("FIND districts CONTAINING POINT(14.51745 50.03017) RETURN NAZEV_MC", snapshot).first?["NAZEV_MC"]?.string == "Praha 11")
    }

    /// ~ ignores case and diacritics both ways; = does not.
    @Test func czechTextMatching() throws {
        let snapshot = try QueryStore.get()
        #expect(try rows("FIND stations WHERE name ~ 'BREVNOV' RETURN code", snapshot).map { $0["code"]?.string } == ["ABREA"])
        #expect(try rows("FIND stations WHERE name ~ 'břevnov' RETURN code", snapshot).map { $0["code"]?.string } == ["ABREA"])
        #expect(try rows("FIND stations WHERE name ~ 'průmyslová' RETURN code", snapshot).map { $0["code"]?.string } == ["APRUA"])
        #expect(try rows("FIND stations WHERE name = 'praha 6-brevnov' RETURN code", snapshot).isEmpty)
        #expect(try rows("FIND stations WHERE name = 'Praha 6-Břevnov' RETURN code", snapshot).map { $0["code"]?.string } == ["ABREA"])
    }

    /// The join agrees with the animals' own lists, for every pavilion.
    @Test func linkedAnimalsMatchTheirLocationLists() throws {
        let snapshot = try QueryStore.get()
        let pavilions = try snapshot.layer("pavilions"), animals = try snapshot.layer("animals")
        for p in 0..<pavilions.count {
            let fid = pavilions.fids[p]
            let found = Set(try rows("FIND animals LINKED TO (pavilions WHERE fid = \(fid)) RETURN fid", snapshot).compactMap { $0["fid"]?.number })
            let expected = Set((0..<animals.count).filter { i in
                guard let text = animals.properties[i]["location_ids"]?.stringValue, case .array(let ids)? = try? JSON.parse(text) else { return false }
                return ids.contains(.integer(fid))
            }.map { Double(animals.fids[$0]) })
            #expect(found == expected, "pavilion \(fid)")
        }
    }

    /// A route to features reaches the nearest of them by walking: never longer than the route
    /// to any single one.
    @Test func routeToFeaturesIsTheShortestOfThem() throws {
        let snapshot = try QueryStore.get()
        func metres(_ query: String) throws -> Double {
            guard case .object(let answer)? = try Query.run(query, on: snapshot).first?.json(),
                  case .array(let routes)? = answer["routes"], case .object(let best)? = routes.first else { return -1 }
            return best["distance"]?.number ?? -1
        }
        let toAny = try metres("ROUTE FROM POINT(14.4109 50.1167) TO pens WHERE name ~ 'tamar' ON paths")
        let pens = try rows("FIND pens WHERE name ~ 'tamar' RETURN fid", snapshot)
        #expect(pens.count >= 1)
        var best = Double.infinity
        for pen in pens {
            best = min(best, try metres("ROUTE FROM POINT(14.4109 50.1167) TO pens WHERE fid = \(Int64(pen["fid"]?.number ?? 0)) ON paths"))
        }
        #expect(abs(toAny - best) < 0.001)
        #expect(toAny > 100)
    }

    /// PROFILE wheelchair keeps off the steps to the sea lions (165.696 m instead of 110.416 m)
    /// at 4 km/h; the ROUTE clauses come in any order, SPEED overrides the profile's speed, and
    /// AVOID still applies alongside the profile.
    @Test func wheelchairProfileInAnyClauseOrder() throws {
        let snapshot = try QueryStore.get()
        func answer(_ query: String) throws -> (metres: Double, seconds: Double) {
            guard case .object(let answer)? = try Query.run(query, on: snapshot).first?.json(),
                  case .array(let routes)? = answer["routes"], case .object(let best)? = routes.first else { return (-1, -1) }
            return (best["distance"]?.number ?? -1, best["duration"]?.number ?? -1)
        }
        let route = "ROUTE FROM POINT(14.4109 50.1167) TO pens WHERE name = 'lachtani' ON paths"
        #expect(abs(try answer(route).metres - 110.416) < 0.001)
        #expect(abs(try answer(route + " PROFILE foot").metres - 110.416) < 0.001)
        let wheelchair = try answer(route + " PROFILE wheelchair")
        #expect(abs(wheelchair.metres - 165.696) < 0.001)
        #expect(abs(wheelchair.seconds - 149.1) < 0.1)  // 4 km/h
        let slower = try answer(route + " SPEED 3 km/h PROFILE wheelchair")
        #expect(abs(slower.metres - 165.696) < 0.001)
        #expect(abs(slower.seconds - 198.8) < 0.1)  // 3 km/h
        #expect(try answer(route + " PROFILE wheelchair SPEED 3 km/h") == slower)
        // An AVOID that matches nothing changes nothing; in any position.
        #expect(try answer(route + " PROFILE wheelchair AVOID pavilions WHERE name = 'none' SPEED 3 km/h") == slower)
        #expect(try answer(route + " AVOID pavilions WHERE name = 'none' PROFILE wheelchair") == wheelchair)
    }

    /// GeoJSON answers are FeatureCollections whose geometry is the feature's own.
    @Test func geoJSONCarriesGeometry() throws {
        let snapshot = try QueryStore.get()
        let result = try #require(try Query.run("FIND pens NEAREST 1 TO POINT(14.40497 50.11545) RETURN name", on: snapshot).first)
        guard case .object(let collection) = result.geoJSON(), case .array(let features)? = collection["features"],
              case .object(let feature)? = features.first else { Issue.record("not GeoJSON"); return }
        #expect(collection["type"] == .string("FeatureCollection"))
        let geometry = try GeoJSON.geometry(from: feature["geometry"] ?? .null)
        let pens = try snapshot.layer("pens")
        let index = try #require(pens.index(ofFID: 4791797957))
        #expect(geometry == pens.geometries[index])
    }
}
