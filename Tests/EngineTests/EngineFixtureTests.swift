import Foundation
@testable import Engine
import Geometry
import Store
import Support
import TestSupport
import Testing
import VectorTiles

/// The demo store (every Prague and zoo fixture), built once for all engine tests.
enum DemoStore {
    static let snapshot: Result<Snapshot, any Error> = Result {
        let path = try Fixtures.temporaryDirectory("engine").appendingPathComponent("engine.gpkg").path
        try DemoFixtureStore.build(at: path)
        return try Snapshot.load(storePath: path)
    }

    static func get() throws -> Snapshot { try snapshot.get() }
}

extension Snapshot {
    func text(_ layer: String, _ index: Int, _ column: String) throws -> String? {
        try self.layer(layer).properties[index][column]?.stringValue
    }
}

@Suite(.validatesStores) struct EngineFixtureTests {
    /// The old municipal district (KOD_MO) each station's name gives: "Praha 6-Břevnov" → Praha 6.
    /// The data groups the 57 MČ into the 10 old districts: 19 = Praha 1, 27 = Praha 2, 35 = Praha 3,
    /// 43 = Praha 4, 51 = Praha 5, 60 = Praha 6, 78 = Praha 7, 86 = Praha 8, 94 = Praha 9, 108 = Praha 10.
    @Test func everyStationLiesInTheOldDistrictItsNameGives() throws {
        let snapshot = try DemoStore.get()
        let kodMO = [1: 19, 2: 27, 3: 35, 4: 43, 5: 51, 6: 60, 7: 78, 8: 86, 9: 94, 10: 108]
        // "Letiště Praha (Ruzyně)": Ruzyně belongs to Praha 6.
        let expectedOldDistrict = ["ALERA": 6]
        let stations = try snapshot.layer("stations")
        #expect(stations.count == 17)
        for index in 0..<stations.count {
            let code = try #require(try snapshot.text("stations", index, "code"))
            let name = try #require(try snapshot.text("stations", index, "name"))
            let number = expectedOldDistrict[code] ?? Int(name.dropFirst("Praha ".count).prefix { $0.isNumber })
            guard case .point(let p)? = stations.geometries[index] else { Issue.record("\(code) is not a point"); continue }
            let districts = try snapshot.containing(snapshot.layer("districts"), at: Point(lon: p.lon, lat: p.lat))
            #expect(districts.count == 1, "\(code)")
            let district = try #require(districts.first)
            #expect(try snapshot.layer("districts").properties[district.index]["KOD_MO"] == .integer(Int64(kodMO[number ?? 0] ?? -1)), "\(code) \(name)")
        }
    }

    @Test func chodovIsInPraha11AndSuchdolInLysolaje() throws {
        let snapshot = try DemoStore.get()
        // ACHOA "Praha 4-Chodov" (50.03017, 14.51745) lies in MČ Praha 11, KOD_MO 43.
        let chodov = try #require(try snapshot.containing(snapshot.layer("districts"), at: Point(lon: 14.51745, lat: 50.03017)).first)
        #expect(try snapshot.text("districts", chodov.index, "NAZEV_MC") == "Praha 11")
        #expect(try snapshot.layer("districts").properties[chodov.index]["KOD_MO"] == .integer(43))
        // ASUCA "Praha 6-Suchdol" lies about 200 m inside Praha-Lysolaje, still KOD_MO 60.
        let suchdol = try #require(try snapshot.containing(snapshot.layer("districts"), at: Point(lon: 14.384639, lat: 50.12653)).first)
        #expect(try snapshot.text("districts", suchdol.index, "NAZEV_MC") == "Praha-Lysolaje")
        #expect(try snapshot.layer("districts").properties[suchdol.index]["KOD_MO"] == .integer(60))
        let toEdge = try #require(try snapshot.layer("districts").geometries[suchdol.index])
        // 0 inside; the distance to the boundary itself is the distance to the exterior ring.
        guard case .polygon(let polygon) = toEdge else { Issue.record("not a polygon"); return }
        let ring = Geometry.lineString(LineString(coordinates: Array(polygon.ring(0))))
        // Reference: shapely, in a local equirectangular projection around the point: 199.67 m.
        #expect(abs(ring.distance(toLon: 14.384639, lat: 50.12653) - 199.67) < 0.5)
    }

    @Test func allZooFeaturesLieInTroja() throws {
        let snapshot = try DemoStore.get()
        var count = 0
        for layerName in ["pavilions", "pens"] {
            let layer = try snapshot.layer(layerName)
            for geometry in layer.geometries {
                let vertexLists = { () -> [[Double]] in var all: [[Double]] = []; geometry?.forEachCoordinateArray { all.append($0) }; return all }()
                // Every vertex of every pavilion, and every pen point.
                for coordinates in vertexLists {
                    for i in stride(from: 0, to: coordinates.count, by: 2) {
                        let districts = try snapshot.containing(snapshot.layer("districts"), at: Point(lon: coordinates[i], lat: coordinates[i + 1]))
                        #expect(districts.count == 1)
                        let name = try districts.first.flatMap { try snapshot.text("districts", $0.index, "NAZEV_MC") }
                        #expect(name == "Praha-Troja")
                    }
                }
                count += 1
            }
        }
        #expect(count == 90)
    }

    /// The zoo data lists no pen inside a pavilion: none of the 77 pen points lies in any of the
    /// 13 pavilion polygons (checked with GEOS too). Pens that share their animals with a
    /// pavilion are its outdoor enclosures next to it: the gorillas' pen is 31.5 m from
    /// "Pavilon goril" (shapely in a local equirectangular projection: 31.49 m).
    @Test func pensAndPavilions() throws {
        let snapshot = try DemoStore.get()
        let pens = try snapshot.layer("pens")
        let geos = try GEOSContext()
        let pavilions = try snapshot.layer("pavilions")
        for (index, geometry) in pens.geometries.enumerated() {
            guard case .point(let p)? = geometry else { Issue.record("pen \(index) is not a point"); continue }
            #expect(try snapshot.containing(snapshot.layer("pavilions"), at: Point(lon: p.lon, lat: p.lat)).isEmpty)
            for pavilion in pavilions.geometries.compactMap({ $0 }) {
                #expect(try !geos.contains(pavilion, lon: p.lon, lat: p.lat))
            }
        }
        let gorillaPen = try #require(pens.properties.firstIndex { $0["name"] == .text("gorily") })
        guard case .point(let pen)? = pens.geometries[gorillaPen] else { Issue.record("no gorilla pen"); return }
        let nearest = try #require(try snapshot.nearest(snapshot.layer("pavilions"), to: Point(lon: pen.lon, lat: pen.lat), k: 1).first)
        #expect(try snapshot.text("pavilions", nearest.index, "name") == "Pavilon goril")
        #expect(abs((nearest.metres ?? -1) - 31.49) < 0.1)
    }

    /// The air-quality app's API example point: nearest stations by brute-force haversine in
    /// Python over the CSV: AREPA 603.6 m, AKALA 1,667.8 m, ARIEA 1,726.4 m, ALEGA 1,878.7 m.
    @Test func nearestStationToTheAppExample() throws {
        let snapshot = try DemoStore.get()
        let nearest = try snapshot.nearest(snapshot.layer("stations"), to: Point(lon: 14.42076, lat: 50.08804), k: 3)
        #expect(try nearest.map { try #require(try snapshot.text("stations", $0.index, "code")) } == ["AREPA", "AKALA", "ARIEA"])
        let first = try #require(nearest.first)
        #expect(Int((first.metres ?? 0).rounded()) == 604)
        // Exactly the haversine distance to the station's coordinates from the CSV.
        #expect(abs((first.metres ?? 0) - Geodesy.haversine(lon1: 14.42076, lat1: 50.08804, lon2: 14.42922, lat2: 50.088066)) < 1e-6)
    }

    @Test func containingAnswersSmallestFirstAndWithinSortsByDistance() throws {
        let snapshot = try DemoStore.get()
        // Two overlapping parking zones: the smaller one comes first.
        let parking = try snapshot.layer("parking")
        var overlapping: (Double, Double)?
        search: for (index, geometry) in parking.geometries.enumerated() {
            guard case .polygon(let polygon)? = geometry else { continue }
            for i in stride(from: 0, to: polygon.pointCount * 2, by: 2) {
                // A point just inside near a vertex may fall into two zones; take the first such.
                let lon = polygon.coordinates[i], lat = polygon.coordinates[i + 1]
                for (dx, dy) in [(1e-6, 1e-6), (-1e-6, 1e-6), (1e-6, -1e-6), (-1e-6, -1e-6)] {
                    let found = try snapshot.containing(snapshot.layer("parking"), at: Point(lon: lon + dx, lat: lat + dy))
                    if found.count >= 2 && found.contains(where: { $0.index == index }) {
                        overlapping = (lon + dx, lat + dy)
                        break search
                    }
                }
            }
        }
        let (lon, lat) = try #require(overlapping)
        let found = try snapshot.containing(snapshot.layer("parking"), at: Point(lon: lon, lat: lat))
        let areas = found.map { parking.areas[$0.index] }
        #expect(areas == areas.sorted())

        let within = try snapshot.within(snapshot.layer("stations"), metres: 2000, of: Point(lon: 14.42076, lat: 50.08804))
        #expect(try within.map { try #require(try snapshot.text("stations", $0.index, "code")) } == ["AREPA", "AKALA", "ARIEA", "ALEGA"])
        #expect(within.allSatisfy { ($0.metres ?? .infinity) <= 2000 })
    }

    @Test func outsideTheZooArea() throws {
        let snapshot = try DemoStore.get()
        let inside = try snapshot.areaCheck(snapshot.layer("paths"), at: Point(lon: 14.4070, lat: 50.1170))
        #expect(inside.inside)
        #expect(inside.reason == nil)
        // Prague's Old Town Square: 2,182.0 m from the convex hull of the zoo's paths (shapely,
        // in a local equirectangular projection).
        let outside = try snapshot.areaCheck(snapshot.layer("paths"), at: Point(lon: 14.4213, lat: 50.0875))
        #expect(!outside.inside)
        #expect(outside.reason == "outside_area")
        #expect(abs(outside.metresOutside - 2182.0) < 2, "\(outside.metresOutside)")
        #expect(outside.message == "the point is 2182 m outside the area covered by 'paths'")
        // Outside Prague altogether for the districts.
        #expect(try snapshot.areaCheck(snapshot.layer("districts"), at: Point(lon: 16.6, lat: 49.2)).reason == "outside_area")
    }

    @Test func badInputGetsClearErrors() throws {
        let snapshot = try DemoStore.get()
        #expect(throws: EngineError.unknownLayer("station", known: snapshot.layerNames)) { try snapshot.nearest(snapshot.layer("station"), to: Point(lon: 14.4, lat: 50.1), k: 1) }
        #expect("\(EngineError.unknownLayer("station", known: snapshot.layerNames))" == "unknown layer 'station' — did you mean 'stations'?")
        for k in [0, -1, 10_001] {
            #expect(throws: EngineError.invalidArgument(parameter: "k", message: "must be between 1 and 10000, got \(k)")) {
                try snapshot.nearest(snapshot.layer("stations"), to: Point(lon: 14.4, lat: 50.1), k: k)
            }
        }
        #expect(throws: EngineError.invalidArgument(parameter: "within", message: "distance must not be negative, got -5.0 m")) {
            try snapshot.nearest(snapshot.layer("stations"), to: Point(lon: 14.4, lat: 50.1), k: 1, within: -5)
        }
        #expect(throws: EngineError.invalidArgument(parameter: "within", message: "distance is not a number")) {
            try snapshot.within(snapshot.layer("stations"), metres: .nan, of: Point(lon: 14.4, lat: 50.1))
        }
        #expect(throws: EngineError.invalidArgument(parameter: "lon", message: "longitude nan is not a finite number")) {
            try snapshot.containing(snapshot.layer("districts"), at: Point(lon: .nan, lat: 50.1))
        }
        #expect(throws: EngineError.invalidArgument(parameter: "lat", message: "latitude inf is not a finite number")) {
            try snapshot.containing(snapshot.layer("districts"), at: Point(lon: 14.4, lat: .infinity))
        }
        #expect(throws: EngineError.invalidArgument(parameter: "lat", message: "latitude 114.4 is outside -90…90 — did you swap longitude and latitude?")) {
            try snapshot.containing(snapshot.layer("districts"), at: Point(lon: 50.1, lat: 114.4))
        }
        #expect(throws: EngineError.unsupportedGeometry(layer: "stations", operation: "CONTAINING", needs: "polygons", has: "points")) {
            try snapshot.containing(snapshot.layer("stations"), at: Point(lon: 14.4, lat: 50.1))
        }
    }
}

@Suite(.validatesStores) struct TimeSeriesTests {
    @Test func missingIsNotZero() throws {
        let snapshot = try DemoStore.get()
        let series = try #require(snapshot.timeSeriesByLayer["stations"])
        #expect(series.keys.count == 17)
        // AREPA reports NO2 but never O3 (every O3 cell is 0): it measures NO2, not O3.
        #expect(series.measures("AREPA", "no2"))
        #expect(!series.measures("AREPA", "o3"))
        // ASMIA reports nothing but zeros and empty cells in these 48 hours.
        #expect(!series.measures("ASMIA", "no2"))
        #expect(series.latest(of: "ASMIA").values.isEmpty)
        // Stations that measure NO2: 13 of 17 (ASMIA, ASTOA, ASUCA and AVRSA do not).
        let measuringNO2 = series.keys.filter { series.measures($0, "no2") }
        #expect(measuringNO2.count == 13)
        #expect(!measuringNO2.contains("ASTOA") && !measuringNO2.contains("ASUCA") && !measuringNO2.contains("AVRSA"))

        let latest = series.latest(of: "AREPA")
        #expect(latest.lastEnd?.iso == "2019-04-16T21:00:00Z")
        #expect(latest.values["o3"] == nil)
        #expect(latest.values["no2"] != nil)
        // 48 hourly observations, 24 in the last day.
        #expect(series.observations(of: "AREPA").count == 48)
        #expect(series.history(of: "AREPA", hours: 24).count == 24)
    }

    @Test func incompleteHoursAreMissingNotZero() throws {
        let snapshot = try DemoStore.get()
        let series = try #require(snapshot.timeSeriesByLayer["stations"])
        for key in series.keys {
            for observation in series.observations(of: key) {
                let aqiIndex = try #require(series.columns.firstIndex(of: "aqi"))
                if observation.values[aqiIndex] == nil {
                    // An incomplete hour has no zero values left: they became missing.
                    #expect(!observation.values.contains(0.0), "\(key) \(observation.start.iso)")
                }
            }
        }
    }

    @Test func staleness() throws {
        let snapshot = try DemoStore.get()
        let series = try #require(snapshot.timeSeriesByLayer["stations"])
        let last = try #require(UTCTime.parse("2019-04-16T21:00:00Z"))
        #expect(!series.isStale("AREPA", now: UTCTime(seconds: last.seconds + 3600), maxAge: 2 * 3600))
        #expect(series.isStale("AREPA", now: UTCTime(seconds: last.seconds + 3 * 3600), maxAge: 2 * 3600))
        #expect(series.isStale("NOSUCH", now: last, maxAge: 3600))
    }
}

@Suite(.validatesStores) struct ReloadTests {
    /// Queries keep answering from the old snapshot while a reload builds the new one; the
    /// next request after the swap sees the newly imported layer.
    @Test func reloadSwapsWhileQueriesRun() async throws {
        let path = try Fixtures.temporaryDirectory("reload").appendingPathComponent("live.gpkg").path
        _ = try Importer.importFile(Fixtures.path("air/stations-prague.csv"), into: GeoPackage(path: path, mode: .readWrite), options: ImportOptions(layer: "stations"))
        let host = try Engine(storePath: path)
        #expect(host.snapshot.layerNames == ["stations"])

        let failures = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    var failed = 0
                    for _ in 0..<2_000 {
                        let snapshot = host.snapshot
                        let nearest = try? snapshot.nearest(snapshot.layer("stations"), to: Point(lon: 14.42076, lat: 50.08804), k: 1)
                        if nearest?.first.map({ snapshot.layer0Code($0.index) }) != "AREPA" { failed += 1 }
                    }
                    return failed
                }
            }
            group.addTask {
                // A second connection, as `vltava import` would be while the server runs.
                let writer = try GeoPackage(path: path, mode: .readWrite)
                _ = try Importer.importFile(Fixtures.path("prague/districts.wgs84.geojson"), into: writer, options: ImportOptions(layer: "districts"))
                for _ in 0..<5 { try host.reload() }
                return 0
            }
            return try await group.reduce(0, +)
        }
        #expect(failures == 0)
        #expect(host.snapshot.layerNames == ["districts", "stations"])
        #expect(try host.snapshot.containing(host.snapshot.layer("districts"), at: Point(lon: 14.4208, lat: 50.0875)).count == 1)
    }
}

extension Snapshot {
    func layer0Code(_ index: Int) -> String? {
        (try? layer("stations"))?.properties[index]["code"]?.stringValue
    }
}

@Suite(.validatesStores) struct TileSetTests {
    @Test func tileSetsAreNamedLikeLayers() throws {
        let path = try Fixtures.temporaryDirectory("tilesets").appendingPathComponent("s.gpkg").path
        _ = try Importer.importFile(Fixtures.path("air/stations-prague.csv"), into: GeoPackage(path: path, mode: .readWrite), options: ImportOptions(layer: "stations"))
        let snapshot = try Snapshot.load(storePath: path, tileSets: ["zoo_map": Fixtures.path("zoo/zoo-prague-geojson-tiles.mbtiles")])
        let zoo = try snapshot.tileSet("zoo_map")
        let here = try zoo.features(atLon: 14.404891514, lat: 50.115400110, zoom: 16, layer: "buildings")
        #expect(here.first?.feature.properties["name"] == .text("Pavilon goril"))
        #expect(throws: EngineError.unknownTileSet("zoo_mpa", known: ["zoo_map"])) { try snapshot.tileSet("zoo_mpa") }
        #expect("\(EngineError.unknownTileSet("zoo_mpa", known: ["zoo_map"]))" == "unknown tile set 'zoo_mpa' — did you mean 'zoo_map'?")
        // A tile set that cannot be opened is out alone: the snapshot loads, says so, and
        // answers for it with its own error.
        let missing = try Snapshot.load(storePath: path, tileSets: ["bad": Fixtures.path("mbtiles/no-such.mbtiles"), "zoo_map": Fixtures.path("zoo/zoo-prague-geojson-tiles.mbtiles")])
        #expect(missing.warnings == ["tile set 'bad' is unavailable (everything else serves): no-such.mbtiles: no such file"])
        #expect(throws: EngineError.tileSetUnavailable("bad", reason: "no-such.mbtiles: no such file")) { try missing.tileSet("bad") }
        #expect(try missing.tileSet("zoo_map").features(atLon: 14.404891514, lat: 50.115400110, zoom: 16, layer: "buildings").first?.feature.properties["name"] == .text("Pavilon goril"))
        #expect(try missing.layer("stations").count == 17)
    }

    /// A GeoJSON tile set's tile as MVT is transcoded once per snapshot: the second answer is
    /// the kept bytes, equal to the first, and decodes to the same features as the stored tile.
    @Test func transcodedTilesAreKept() throws {
        let path = try Fixtures.temporaryDirectory("transcoded").appendingPathComponent("s.gpkg").path
        _ = try Importer.importFile(Fixtures.path("air/stations-prague.csv"), into: GeoPackage(path: path, mode: .readWrite), options: ImportOptions(layer: "stations"))
        let snapshot = try Snapshot.load(storePath: path, tileSets: ["zoo_map": Fixtures.path("zoo/zoo-prague-geojson-tiles.mbtiles")])
        let source = try snapshot.tileSource("zoo_map")
        let key = TranscodedTiles.Key(set: "zoo_map", z: 16, x: 35390, y: 22192)
        #expect(snapshot.transcodedTiles[key] == nil)
        let first = try #require(try snapshot.tile(source, z: 16, x: 35390, y: 22192, form: .mvt))
        #expect(snapshot.transcodedTiles[key] == first.bytes)
        let second = try #require(try snapshot.tile(source, z: 16, x: 35390, y: 22192, form: .mvt))
        #expect(second.bytes == first.bytes && second.encoding.format == .mvt)
        let stored = try #require(try snapshot.tileFeatures(snapshot.tileSet("zoo_map"), z: 16, x: 35390, y: 22192))
        let decoded = try TileDecoder.features(of: second.bytes, z: 16, x: 35390, y: 22192)
        #expect(decoded.count == stored.count && decoded.count > 10)
        // GeoJSON asked of the same tile is not taken from the MVT kept.
        #expect(try snapshot.tile(source, z: 16, x: 35390, y: 22192, form: .geoJSON)?.encoding.format == .geojson)
    }
}
