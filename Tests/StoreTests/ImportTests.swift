import Foundation
import Geometry
import SQLite
import Store
import TestSupport
import Testing

/// A fresh store in a temporary directory.
func freshStore() throws -> (GeoPackage, String) {
    let path = try Fixtures.temporaryDirectory("store").appendingPathComponent("test.gpkg").path
    return (try GeoPackage(path: path, mode: .readWrite), path)
}

@discardableResult
func importFixture(_ fixture: String, as layer: String, into store: GeoPackage, _ configure: (inout ImportOptions) -> Void = { _ in }) throws -> ImportReport {
    var options = ImportOptions(layer: layer)
    configure(&options)
    return try Importer.importFile(Fixtures.path(fixture), into: store, options: options)
}

@Suite(.validatesStores) struct CoordinateSystemTests {
    @Test func sjtskAndWGS84DistrictsMatchByCode() throws {
        let (store, _) = try freshStore()
        let sjtsk = try importFixture("prague/districts.sjtsk-epsg5514.geojson", as: "districts_sjtsk", into: store)
        let wgs84 = try importFixture("prague/districts.wgs84.geojson", as: "districts", into: store)
        #expect(sjtsk.featureCount == 57)
        #expect(wgs84.featureCount == 57)
        #expect(sjtsk.sourceCRS == "EPSG:5514")
        #expect(wgs84.sourceCRS == "EPSG:4326")
        #expect(try store.layer("districts_sjtsk").crs == "EPSG:4326")

        let a = Dictionary(uniqueKeysWithValues: try store.features(of: "districts_sjtsk").map { ($0.feature.properties["KOD_MC"], $0.feature) })
        let b = Dictionary(uniqueKeysWithValues: try store.features(of: "districts").map { ($0.feature.properties["KOD_MC"], $0.feature) })
        #expect(a.count == 57)
        #expect(Set(a.keys) == Set(b.keys))

        // The two files are different vintages (2016 and 2019 cuts of the same IPR layer); the
        // boundaries were redrawn in places, so areas agree only approximately. The largest
        // relative difference measured is 0.214 % (Praha-Velká Chuchle); 0.3 % is asserted.
        var worst = 0.0
        for (code, districtA) in a {
            let areaA = Measure.area(try #require(districtA.geometry))
            let areaB = Measure.area(try #require(b[code]?.geometry))
            worst = max(worst, abs(areaA - areaB) / areaB)
        }
        #expect(worst < 0.003, "largest relative area difference \(worst)")

        // The S-JTSK file carries its own area (PLOCHA, m², computed in the Křovák plane): the
        // reprojected polygon's ellipsoidal area agrees within the projection's area scale
        // error. Křovák's scale is 0.9999 on its central parallel and within ±1·10⁻⁴ of 1 across
        // Prague, so areas differ by up to about 2·10⁻⁴ (measured worst: 1.93·10⁻⁴, Praha-Lipence);
        // 3·10⁻⁴ is asserted.
        for feature in a.values {
            let plocha = try #require(feature.properties["PLOCHA"]?.doubleValue)
            let area = Measure.area(try #require(feature.geometry))
            #expect(abs(area - plocha) / plocha < 3e-4, "\(feature.properties["NAZEV_MC"] ?? .null): \(area) vs \(plocha)")
        }
    }

    @Test func sjtskVertexLandsOnIndependentReference() throws {
        // First vertex of Praha-Čakovice in districts.sjtsk-epsg5514.geojson, transformed once with
        //   echo "-733714.400049571 -1035864.4000071399" | cs2cs -f %.9f EPSG:5514 EPSG:4326
        // (PROJ 9.1.1), which prints latitude then longitude: 50.162231456 14.533724751;
        // pyproj 3.x (`Transformer.from_crs(5514, 4326, always_xy=True)`) agrees to 1e-9°.
        let (store, _) = try freshStore()
        try importFixture("prague/districts.sjtsk-epsg5514.geojson", as: "districts", into: store)
        let cakovice = try #require(try store.features(of: "districts").first { $0.feature.properties["NAZEV_MC"] == .text("Praha-Čakovice") })
        guard case .polygon(let polygon) = cakovice.feature.geometry else { Issue.record("not a polygon"); return }
        let metres = Geodesy.haversine(lon1: polygon.coordinates[0], lat1: polygon.coordinates[1], lon2: 14.533724751, lat2: 50.162231456)
        #expect(metres < 1.0)
    }
}

@Suite(.validatesStores) struct RoundTripTests {
    /// GeoJSON → store → features: the same coordinates to 1e-9° and the same properties.
    @Test(arguments: ["prague/districts.wgs84.geojson", "prague/parking-zones.wgs84.geojson", "zoo/pavilions-and-pens.geojson"])
    func geoJSONThroughTheStore(fixture: String) throws {
        let original = try GeoJSON.parseDocument([UInt8](try Data(contentsOf: Fixtures.url(fixture)))).features
        let (store, _) = try freshStore()
        try importFixture(fixture, as: "layer", into: store)
        let stored = try store.features(of: "layer")
        #expect(stored.count == original.count)
        // Features with unique integer ids (the zoo's OSM ids) keep them as fids, and the store
        // reads in fid order; the others keep file order.
        let byFID = Dictionary(uniqueKeysWithValues: stored.map { ($0.fid, $0) })
        for (index, before) in original.enumerated() {
            let match: StoredFeature? = if case .integer(let id)? = before.id { byFID[id] } else { stored[index] }
            let after = try #require(match)
            #expect(after.feature.properties == before.properties)
            let a = try #require(before.geometry), b = try #require(after.feature.geometry)
            #expect(a.typeName == b.typeName)
            #expect(maxCoordinateDifference(a, b) <= 1e-9)
        }
    }

    @Test func holesAndMultiPolygonsSurvive() throws {
        let (store, _) = try freshStore()
        try importFixture("prague/parking-zones.wgs84.geojson", as: "parking", into: store)
        let geometries = try store.features(of: "parking").compactMap(\.feature.geometry)
        let multi = geometries.filter { if case .multiPolygon = $0 { true } else { false } }
        #expect(multi.count == 2)
        #expect(try store.layer("parking").geometryType == "GEOMETRY")
    }

    @Test func zooIDsBecomeFIDsAndJSONAttributesRoundTrip() throws {
        let (store, _) = try freshStore()
        try importFixture("zoo/pavilions-and-pens.geojson", as: "pens", into: store) { $0.only = .point }
        try importFixture("zoo/pavilions-and-pens.geojson", as: "pavilions", into: store) { $0.only = .polygon }
        #expect(try store.layer("pens").featureCount == 77)
        #expect(try store.layer("pens").geometryType == "POINT")
        #expect(try store.layer("pavilions").featureCount == 13)
        #expect(try store.layer("pavilions").geometryType == "POLYGON")
        let gorillas = try #require(try store.features(of: "pavilions").first { $0.fid == 30000629 })
        #expect(gorillas.feature.properties["name"] == .text("Pavilon goril"))
        let animals = try store.layer("pens").columns.first { $0.name == "animals" }
        #expect(animals?.isJSON == true)
        #expect(animals?.typeDescription == "JSON")
        let adax = try #require(try store.features(of: "pens").first { $0.fid == 4638766183 })
        #expect(adax.feature.properties["animals"] == .json("[\"Adax\"]"))
        #expect(adax.feature.properties["is_animal_pen"] == .bool(true))
    }

    /// `--units` are kept with the series (vltava_time_series.units, JSON); a store written
    /// before units were kept (no such column) reads as without units and gains the column at its
    /// next import of a series; a unit for a column the observations lack changes nothing.
    @Test func unitsOfObservations() throws {
        let (_, path) = try freshStore()
        do {
            let store = try GeoPackage(path: path, mode: .readWrite)
            try importFixture("air/stations-prague.csv", as: "stations", into: store)
            try importFixture("air/observations-2019-04-15-16.csv", as: "observations", into: store) { $0.timeSeriesOf = "stations" }
        }
        // As an older Vltava wrote it: six columns.
        try RawStoreEdits.execute("ALTER TABLE vltava_time_series DROP COLUMN units", in: path)
        let store = try GeoPackage(path: path, mode: .readWrite)
        #expect(try store.layer("observations").timeSeries?.units == [:])
        try importFixture("air/observations-2019-04-15-16.csv", as: "hourly", into: store) { options in
            options.timeSeriesOf = "stations"
            options.units = ["no2": "µg/m³", "aqi": "1"]
        }
        #expect(try store.layer("hourly").timeSeries?.units == ["no2": "µg/m³", "aqi": "1"])
        #expect(try store.layer("observations").timeSeries?.units == [:])
        #expect(throws: StoreError.self) {
            try importFixture("air/observations-2019-04-15-16.csv", as: "other", into: store) { options in
                options.timeSeriesOf = "stations"
                options.units = ["nox": "µg/m³"]
            }
        }
        #expect(try store.layerNames().contains("other") == false)
    }

    @Test func stationsAndObservations() throws {
        let (store, _) = try freshStore()
        let stations = try importFixture("air/stations-prague.csv", as: "stations", into: store)
        #expect(stations.featureCount == 17)
        let observations = try importFixture("air/observations-2019-04-15-16.csv", as: "observations", into: store) { $0.timeSeriesOf = "stations" }
        #expect(observations.format == .observations)
        #expect(observations.featureCount == 816)
        let info = try store.layer("observations")
        #expect(info.timeSeries == TimeSeriesLink(keyLayer: "stations", layerKeyColumn: "code", keyColumn: "code", startColumn: "interval_start", endColumn: "interval_end"))
        // The columns describing the station (name, classif, owner, coordinates) are dropped.
        #expect(info.columns.map(\.name) == ["code", "interval_start", "interval_end", "aqi", "aqidescription", "no2", "o3", "pm10", "pm10_24", "pm2_5", "so2", "co"])
        let first = try #require(try store.features(of: "observations").first)
        #expect(first.feature.properties["code"] == .text("ABREA"))
        #expect(first.feature.properties["interval_start"] == .text("2019-04-14T21:00:00Z"))
        #expect(first.feature.properties["no2"] == .real(32.7))
        #expect(first.feature.properties["aqi"] == .integer(2))
        let arepa = try #require(try store.features(of: "stations").first { $0.feature.properties["code"] == .text("AREPA") })
        #expect(arepa.feature.geometry == .point(Point(lon: 14.42922, lat: 50.088066)))
    }
}

/// The largest absolute difference between the coordinates of two geometries of equal shape.
func maxCoordinateDifference(_ a: Geometry, _ b: Geometry) -> Double {
    var arraysA: [[Double]] = [], arraysB: [[Double]] = []
    a.forEachCoordinateArray { arraysA.append($0) }
    b.forEachCoordinateArray { arraysB.append($0) }
    guard arraysA.count == arraysB.count else { return .infinity }
    var worst = 0.0
    for (x, y) in zip(arraysA, arraysB) {
        guard x.count == y.count else { return .infinity }
        for (u, v) in zip(x, y) { worst = max(worst, abs(u - v)) }
    }
    return worst
}
