import Engine
import Foundation
import Geometry
import QueryLanguage
import SQLite
import Store
import Support
import TestSupport
import Testing

/// Spatial joins and feature references, each cross-checked against GEOS or brute force over
/// the same fixture data.
@Suite struct JoinTests {
    func rows(_ query: String, _ snapshot: Snapshot) throws -> [JSONObject] { try QueryStore.rows(query, snapshot) }

    /// The district of each of the 17 stations, by `(districts CONTAINING).NAZEV_MC`, equals
    /// GEOS's point-in-polygon over all 57 districts; four are named, two of them stations whose
    /// names say another district (Chodov lies in Praha 11, Suchdol's station in Lysolaje).
    @Test func districtOfEachStationAgreesWithGEOS() throws {
        let snapshot = try QueryStore.get()
        let stations = try snapshot.layer("stations"), districts = try snapshot.layer("districts")
        let geos = try GEOSContext()
        let found = try rows("FIND stations RETURN code, (districts CONTAINING).NAZEV_MC, (districts CONTAINING).fid", snapshot)
        #expect(found.count == 17)
        var byCode: [String: String] = [:]
        for row in found {
            let code = try #require(row["code"]?.string)
            let i = try #require((0..<stations.count).first { stations.properties[$0]["code"]?.stringValue == code })
            guard case .point(let p)? = stations.geometries[i] else { Issue.record("station \(code) is not a point"); continue }
            var containing: [Int] = []
            for d in 0..<districts.count {
                if let polygon = districts.geometries[d], try geos.contains(polygon, lon: p.lon, lat: p.lat) { containing.append(d) }
            }
            #expect(containing.count == 1, "\(code) lies in \(containing.count) districts")
            let d = try #require(containing.first)
            #expect(row["districts.NAZEV_MC"]?.string == districts.properties[d]["NAZEV_MC"]?.stringValue)
            #expect(row["districts.fid"]?.number == Double(districts.fids[d]))
            byCode[code] = row["districts.NAZEV_MC"]?.string
        }
        #expect(byCode["AREPA"] == "Praha 1")
        #expect(byCode["ACHOA"] == "Praha 11")
        #expect(byCode["ASUCA"] == "Praha-Lysolaje")
        #expect(byCode["ARERA"] == "Praha-Řeporyje")
        // As a WHERE: the stations of Praha 10.
        #expect(try rows("FIND stations WHERE (districts CONTAINING).NAZEV_MC = 'Praha 10' ORDER BY code RETURN code", snapshot)
            .map { $0["code"]?.string ?? "" } == ["ASROA", "AVRSA"])
    }

    /// Parking zones per district, one of the issue's questions: GROUP BY a feature reference,
    /// counted against GEOS's point-in-polygon of each zone's anchor (its first vertex, the
    /// point a containment join uses) over the 57 districts. shapely gives the same counts.
    @Test func parkingZonesPerDistrictAgreeWithGEOS() throws {
        let snapshot = try QueryStore.get()
        let parking = try snapshot.layer("parking"), districts = try snapshot.layer("districts")
        let geos = try GEOSContext()
        let boxes = districts.geometries.map { $0?.bbox }
        var expected: [String: Int] = [:]
        for i in 0..<parking.count {
            guard let anchor = parking.geometries[i]?.anchor else { continue }
            for d in 0..<districts.count where boxes[d]?.contains(lon: anchor.lon, lat: anchor.lat) == true {
                if let polygon = districts.geometries[d], try geos.contains(polygon, lon: anchor.lon, lat: anchor.lat) {
                    expected[districts.properties[d]["NAZEV_MC"]?.stringValue ?? "?", default: 0] += 1
                    break
                }
            }
        }
        let found = try rows("FIND parking GROUP BY (districts CONTAINING).NAZEV_MC RETURN (districts CONTAINING).NAZEV_MC, COUNT(*)", snapshot)
        var counts: [String: Int] = [:]
        for row in found { counts[row["districts.NAZEV_MC"]?.string ?? "-"] = row["count"]?.number.map { Int($0) } }
        #expect(counts == expected)
        #expect(expected == ["Praha 6": 703, "Praha 8": 456, "Praha 5": 276, "Praha 3": 113])
    }

    /// Brute force: great-circle metres from a point to a geometry, sampling every edge along its
    /// great circle every 5 cm (the error of the minimum is below 0.1 mm at these distances),
    /// and 0 inside by GEOS.
    static func sampledDistance(_ p: Point, _ geometry: Geometry, geos: GEOSContext) throws -> Double {
        if try geos.contains(geometry, lon: p.lon, lat: p.lat) { return 0 }
        var best = Double.infinity
        func unit(_ lon: Double, _ lat: Double) -> (Double, Double, Double) {
            let l = lon * .pi / 180, f = lat * .pi / 180
            return (cos(f) * cos(l), cos(f) * sin(l), sin(f))
        }
        func sample(_ flat: ArraySlice<Double>) {
            var i = flat.startIndex
            while i + 3 < flat.endIndex {
                let a = unit(flat[i], flat[i + 1]), b = unit(flat[i + 2], flat[i + 3])
                let length = Geodesy.haversine(lon1: flat[i], lat1: flat[i + 1], lon2: flat[i + 2], lat2: flat[i + 3])
                let steps = max(1, Int((length / 0.05).rounded(.up)))
                for s in 0...steps {
                    let t = Double(s) / Double(steps)
                    let v = (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t, a.2 + (b.2 - a.2) * t)
                    let lat = atan2(v.2, (v.0 * v.0 + v.1 * v.1).squareRoot()) * 180 / .pi, lon = atan2(v.1, v.0) * 180 / .pi
                    best = min(best, Geodesy.haversine(lon1: p.lon, lat1: p.lat, lon2: lon, lat2: lat))
                }
                i += 2
            }
        }
        switch geometry {
        case .polygon(let polygon): for r in 0..<polygon.ringCount { sample(polygon.ring(r)) }
        case .multiPolygon(let m): for polygon in m.polygons { for r in 0..<polygon.ringCount { sample(polygon.ring(r)) } }
        default: Issue.record("sampled distance to a polygon only")
        }
        return best
    }

    /// `WITHIN d OF (pavilions WHERE …)` and `NEAREST k TO (…)` measure to the polygon's nearest
    /// point: every pen's distance to the gorilla pavilion agrees with the sampled brute force
    /// to the millimetre, and both clauses keep exactly the brute force's pens in its order.
    @Test func distanceToAPavilionAgreesWithBruteForce() throws {
        let snapshot = try QueryStore.get()
        let pens = try snapshot.layer("pens"), pavilions = try snapshot.layer("pavilions")
        let geos = try GEOSContext()
        let p = try #require((0..<pavilions.count).first { pavilions.properties[$0]["name"]?.stringValue == "Pavilon goril" })
        let pavilion = try #require(pavilions.geometries[p])
        var expected: [(String, Double)] = []
        for i in 0..<pens.count {
            guard case .point(let point)? = pens.geometries[i] else { continue }
            let brute = try Self.sampledDistance(point, pavilion, geos: geos)
            let engine = Geodesy.distance(between: .point(point), pavilion)
            #expect(abs(engine - brute) < 0.001, "pen \(pens.fids[i]): engine \(engine) m, brute force \(brute) m")
            expected.append((pens.properties[i]["name"]?.stringValue ?? "", brute))
        }
        expected.sort { $0.1 < $1.1 }
        let within = try rows("FIND pens WITHIN 60 m OF (pavilions WHERE name = 'Pavilon goril') RETURN name, distance_m", snapshot)
        let wanted = expected.filter { $0.1 <= 60 }
        #expect(within.map { $0["name"]?.string ?? "" } == wanted.map(\.0))
        #expect(within.map { $0["name"]?.string ?? "" } == ["tamaríni", "gorily", "gepardi"])
        for (row, want) in zip(within, wanted) { #expect(abs((row["distance_m"]?.number ?? -1) - want.1) <= 0.0015) }
        let nearest = try rows("FIND pens NEAREST 5 TO (pavilions WHERE name ~ 'goril') RETURN name, distance_m", snapshot)
        #expect(nearest.map { $0["name"]?.string ?? "" } == expected.prefix(5).map(\.0))
        for (row, want) in zip(nearest, expected) { #expect(abs((row["distance_m"]?.number ?? -1) - want.1) <= 0.0015) }
        // The stations within 2 km of it: only Suchdol's, checked against the same brute force.
        let stations = try snapshot.layer("stations")
        let near = try (0..<stations.count).compactMap { i -> (String, Double)? in
            guard case .point(let point)? = stations.geometries[i] else { return nil }
            let d = try Self.sampledDistance(point, pavilion, geos: geos)
            return d <= 2000 ? (stations.properties[i]["code"]?.stringValue ?? "", d) : nil
        }
        let found = try rows("FIND stations WITHIN 2 km OF (pavilions WHERE name = 'Pavilon goril') RETURN code, distance_m", snapshot)
        #expect(found.map { $0["code"]?.string ?? "" } == near.map(\.0))
        #expect(found.map { $0["code"]?.string ?? "" } == ["ASUCA"])
        for (row, want) in zip(found, near) { #expect(abs((row["distance_m"]?.number ?? -1) - want.1) <= 0.0015) }
    }

    /// Between two polygons: 0 when GEOS says they intersect, else the least distance from the
    /// sampled boundary of one to the other (point-to-polygon, itself checked above), for the
    /// gorilla pavilion against every other pavilion; and the nearest pavilions in that order.
    @Test func polygonToPolygonDistanceAgreesWithBruteForce() throws {
        let snapshot = try QueryStore.get()
        let pavilions = try snapshot.layer("pavilions")
        let geos = try GEOSContext()
        let p = try #require((0..<pavilions.count).first { pavilions.properties[$0]["name"]?.stringValue == "Pavilon goril" })
        let gorillas = try #require(pavilions.geometries[p])
        var expected: [(String, Double)] = []
        for i in 0..<pavilions.count {
            let other = try #require(pavilions.geometries[i])
            let brute: Double
            if try geos.intersects(gorillas, other) {
                brute = 0
            } else {
                var best = Double.infinity
                guard case .polygon(let polygon) = other else { Issue.record("pavilion \(i) is not a polygon"); continue }
                let ring = polygon.ring(0)
                var j = ring.startIndex
                while j + 3 < ring.endIndex {
                    let length = Geodesy.haversine(lon1: ring[j], lat1: ring[j + 1], lon2: ring[j + 2], lat2: ring[j + 3])
                    let steps = max(1, Int((length / 0.05).rounded(.up)))
                    for s in 0...steps {
                        let t = Double(s) / Double(steps)
                        let lon = ring[j] + (ring[j + 2] - ring[j]) * t, lat = ring[j + 1] + (ring[j + 3] - ring[j + 1]) * t
                        best = min(best, Geodesy.distance(from: Point(lon: lon, lat: lat), to: gorillas))
                    }
                    j += 2
                }
                brute = best
            }
            let engine = Geodesy.distance(between: gorillas, other)
            #expect(abs(engine - brute) < 0.001, "pavilion \(pavilions.fids[i]): engine \(engine) m, brute force \(brute) m")
            expected.append((pavilions.properties[i]["name"]?.stringValue ?? "", brute))
        }
        expected.sort { $0.1 < $1.1 }
        let found = try rows("FIND pavilions NEAREST 3 TO (pavilions WHERE name = 'Pavilon goril') RETURN name, distance_m", snapshot)
        #expect(found.map { $0["name"]?.string ?? "" } == expected.prefix(3).map(\.0))
        #expect(found.map { $0["name"]?.string ?? "" } == ["Pavilon goril", "Pavilon šelem a plazů", "Pavilon velkých želv"])
        for (row, want) in zip(found, expected) { #expect(abs((row["distance_m"]?.number ?? -1) - want.1) <= 0.0015) }
    }

    /// `(stations NEAREST).code` and its distance for every pen equal the brute-force nearest
    /// station by haversine.
    @Test func nearestStationOfEachPenAgreesWithBruteForce() throws {
        let snapshot = try QueryStore.get()
        let pens = try snapshot.layer("pens"), stations = try snapshot.layer("stations")
        let found = try rows("FIND pens RETURN fid, (stations NEAREST).code, (stations NEAREST).distance_m", snapshot)
        #expect(found.count == pens.count)
        for row in found {
            let i = try #require(pens.index(ofFID: Int64(row["fid"]?.number ?? -1)))
            guard case .point(let p)? = pens.geometries[i] else { continue }
            let best = (0..<stations.count).compactMap { s -> (String, Double)? in
                guard case .point(let q)? = stations.geometries[s] else { return nil }
                return (stations.properties[s]["code"]?.stringValue ?? "", Geodesy.haversine(lon1: p.lon, lat1: p.lat, lon2: q.lon, lat2: q.lat))
            }.min { $0.1 < $1.1 }
            #expect(row["nearest_stations.code"]?.string == best?.0)
            #expect(abs((row["nearest_stations.distance_m"]?.number ?? -1) - (best?.1 ?? 0)) <= 0.0015)
        }
        #expect(Set(found.map { $0["nearest_stations.code"]?.string ?? "" }) == ["ASUCA"])
    }

    /// Past 16 targets the join searches the targets through an R-tree of their own; its answers
    /// equal the brute force over every feature and every target (the same distance rule), in
    /// order, ties by load order: the 17 stations against all 1,548 parking zones, the pens
    /// against the 13 pavilions and the 57 districts.
    @Test func joinsOverManyTargetsEqualBruteForce() throws {
        let snapshot = try QueryStore.get()
        /// Every feature with its distance to the nearest target, nearest first, ties by load order.
        func brute(_ layer: Layer, _ targets: [Geometry]) -> [(index: Int, metres: Double)] {
            (0..<layer.count).compactMap { i -> (index: Int, metres: Double)? in
                guard let g = layer.geometries[i] else { return nil }
                return (i, targets.map { Geodesy.distance(between: g, $0) }.min() ?? .infinity)
            }.sorted { ($0.metres, $0.index) < ($1.metres, $1.index) }
        }
        let parking = try snapshot.layer("parking").geometries.compactMap { $0 }
        let districts = try snapshot.layer("districts").geometries.compactMap { $0 }
        let pavilions = try snapshot.layer("pavilions").geometries.compactMap { $0 }
        #expect(parking.count == 1548 && districts.count == 57 && pavilions.count == 13)
        var checked = 0
        for (name, targets) in [("stations", parking), ("pens", districts + pavilions)] {
            let layer = try snapshot.layer(name)
            let all = brute(layer, targets)
            for (k, within) in [(1, Double.infinity), (5, .infinity), (layer.count, 400.0), (layer.count, 5_000)] {
                let engine = try snapshot.nearest(layer, to: targets, k: k, within: within.isFinite ? within : nil)
                let expected = all.filter { $0.metres <= within }.prefix(k)
                #expect(engine.map(\.index) == expected.map(\.index), "\(name) k \(k) within \(within)")
                #expect(engine.map { $0.metres ?? -1 } == expected.map(\.metres), "\(name) k \(k) within \(within)")
                checked += engine.count
            }
        }
        #expect(checked > 100)
        // The stations nearest to a parking zone: Břevnov's, 0.755 m from one, then Karlín's.
        let stations = try snapshot.layer("stations")
        let nearest = try snapshot.nearest(stations, to: parking, k: 2)
        #expect(nearest.map { stations.properties[$0.index]["code"]?.stringValue } == ["ABREA", "AKALA"])
        #expect(abs((nearest.first?.metres ?? 0) - 0.755) < 0.001)
    }

    /// `ROUTE … TO pens LINKED TO (animals WHERE …)` is the two-step route in one statement.
    @Test func routeToThePenOfAnAnimal() throws {
        let snapshot = try QueryStore.get()
        func metres(_ query: String) throws -> Double {
            let result = try #require(try Query.run(query, on: snapshot).first)
            guard case .object(let answer) = result.json(), case .array(let routes)? = answer["routes"], case .object(let route)? = routes.first,
                  let distance = route["distance"]?.number else { throw QueryError(kind: .invalid, code: "test", message: "no route", line: 1, column: 1) }
            return distance
        }
        let start = "ROUTE FROM POINT(14.4109 50.1167) TO"
        let twoSteps = try metres("\(start) pens WHERE name = 'gorily' ON paths")
        #expect(try metres("\(start) pens LINKED TO (animals WHERE name ~ 'gorila') ON paths") == twoSteps)
        #expect(try metres("\(start) pens WHERE name <> 'x' LINKED TO (animals WHERE name ~ 'gorila') ON paths") == twoSteps)
        #expect(abs(twoSteps - 559.6) < 0.05)
        // Two pens hold sea lions? One: and the route to the tigers goes to the nearer of two.
        let tigers = try metres("\(start) pens LINKED TO (animals WHERE name ~ CZECH 'tygři') ON paths")
        let each = try ["4636225657", "4639672145"].map { try metres("\(start) pens WHERE fid = \($0) ON paths") }
        #expect(tigers == each.min())
    }

    /// The selection a ROUTE goes to, `pens LINKED TO (animals WHERE …)`, is the SQL join
    /// through the animals' JSON lists, run by SQLite on the same store file.
    @Test func linkedSelectionAgreesWithSQLite() throws {
        let snapshot = try QueryStore.get()
        let database = try Database(path: try QueryStore.path.get(), mode: .readOnly)
        let sql = try database.prepare("""
            SELECT DISTINCT p.fid FROM pens p JOIN animals a JOIN json_each(a.location_ids) j ON j.value = p.fid
            WHERE a.name LIKE '%' || ? || '%' ORDER BY p.fid
            """)
        var total = 0
        for animal in ["gorila", "tygr", "bizon", "klokan", "ibis", "sova", "varan"] {
            sql.reset()
            try sql.bind([.text(animal)])
            var expected: [Int64] = []
            while try sql.step() { expected.append(sql.int64(0)) }
            let found = try rows("FIND pens LINKED TO (animals WHERE name ~ '\(animal)') ORDER BY fid RETURN fid", snapshot)
            // LIKE folds ASCII case only; these names differ from the lexicon's in case alone.
            #expect(found.map { Int64($0["fid"]?.number ?? -1) } == expected, "\(animal)")
            total += expected.count
        }
        #expect(total == 10)
    }

    /// Mistakes in the new forms get positioned errors.
    @Test func joinErrors() throws {
        let snapshot = try QueryStore.get()
        func error(_ query: String) -> QueryError? {
            do { _ = try Query.run(query, on: snapshot); return nil } catch { return error }
        }
        let notPolygons = error("FIND stations RETURN (pens CONTAINING).name")
        #expect(notPolygons?.code == "unsupported_geometry")
        #expect(notPolygons?.column == 23)
        let unknownField = error("FIND stations RETURN (districts CONTAINING).NAZEV")
        #expect(unknownField?.code == "unknown_field")
        #expect(unknownField?.column == 45)
        #expect(unknownField?.hint == "did you mean 'NAZEV_1'?")
        #expect(error("FIND stations RETURN (districts CONTAINING).distance_m")?.code == "unknown_field")
        let nested = error("FIND stations RETURN (districts CONTAINING).(stations NEAREST).code")
        #expect(nested?.code == "syntax_error")
        #expect(nested?.column == 45)
        #expect(error("FIND stations RETURN (districts CONTAINING)")?.message == "expected '.' and a field after the feature reference, as in (districts CONTAINING).NAZEV_MC, found end of input")
        let table = error("FIND pens WITHIN 10 m OF (animals WHERE name = 'Bizon')")
        #expect(table?.code == "unsupported_geometry")
        #expect(table?.column == 27)
        let unclosed = error("FIND pens WITHIN 10 m OF (pavilions WHERE name = 'x'")
        #expect(unclosed?.code == "unexpected_end")
        let tile = error("TILE 16/35388/22194 OF zoo_map LAYER pois RETURN kind, (districts CONTAINING).NAZEV_MC")
        #expect(tile?.code == "unsupported_clause")
        #expect(tile?.column == 56)
        #expect(error("FIND pens WHERE name ~ CZECH bizoni")?.message == "expected a string or a parameter after '~ CZECH', found 'bizoni'")
    }
}
