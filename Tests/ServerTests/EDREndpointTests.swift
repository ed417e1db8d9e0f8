// OGC API – EDR under /ogc on the demo store's 17 air-quality stations: which stations each
// query selects, against brute force over the stations' CSV; the values, against the
// observations' CSV; the answers against the standards' own schemas (CoverageJSON's validator
// and EDR 1.2's OpenAPI components); OWSLib, a client nobody here wrote; and the errors.

import Foundation
import Geometry
import Support
import TestSupport
import Testing

@Suite(.validatesStores) struct EDREndpointTests {
    struct Station { let code: String; let lon: Double; let lat: Double }

    /// code, name, classif, owner, latitude, longitude.
    static let stations: [Station] = {
        let text = (try? String(contentsOfFile: Fixtures.path("air/stations-prague.csv"), encoding: .utf8)) ?? ""
        // CRLF lines: "\r\n" is one Character, a newline.
        return text.split(whereSeparator: \.isNewline).dropFirst().compactMap { line in
            let f = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard f.count == 6, let lat = Double(f[4]), let lon = Double(f[5]) else { return nil }
            return Station(code: f[0], lon: lon, lat: lat)
        }
    }()

    /// Per station code, per hour's end ("2019-04-15T12:00:00Z"), the CSV's value of each column.
    static let observations: [String: [String: [String: String]]] = {
        let text = (try? String(contentsOfFile: Fixtures.path("air/observations-2019-04-15-16.csv"), encoding: .utf8)) ?? ""
        let lines = text.split(whereSeparator: \.isNewline).map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        guard let header = lines.first else { return [:] }
        var table: [String: [String: [String: String]]] = [:]
        for row in lines.dropFirst() where row.count == header.count {
            // "2019-04-14 22:00:00.0 UTC" → "2019-04-14T22:00:00Z"
            let end = row[7].prefix(19).replacingOccurrences(of: " ", with: "T") + "Z"
            table[row[0], default: [:]][end] = Dictionary(uniqueKeysWithValues: zip(header, row))
        }
        return table
    }()

    static func nearest(_ lon: Double, _ lat: Double) -> Station? {
        stations.min { Geodesy.haversine(lon1: lon, lat1: lat, lon2: $0.lon, lat2: $0.lat) < Geodesy.haversine(lon1: lon, lat1: lat, lon2: $1.lon, lat2: $1.lat) }
    }

    static func codes(_ answer: JSONValue) -> [String] { answer["coverages"]?.items.compactMap { $0["vltava:location"]?.string } ?? [] }

    /// Each coverage's values of `parameter` agree with the CSV: every non-zero CSV value is
    /// there as it is, and a null stands only for a 0 or an empty cell (TimeSeries.swift's rule).
    static func checkValues(_ coverage: JSONValue, _ parameter: String) -> Int {
        guard let code = coverage["vltava:location"]?.string, let byHour = observations[code] else { Issue.record("no station"); return 0 }
        let times = coverage["domain"]?["axes"]?["t"]?["values"]?.items.compactMap(\.string) ?? []
        let values = coverage["ranges"]?[parameter]?["values"]?.items ?? []
        #expect(times.count == values.count && !times.isEmpty, "\(code) \(parameter)")
        var checked = 0
        for (time, value) in zip(times, values) {
            guard let cell = byHour[time]?[parameter] else { Issue.record("\(code) has no hour ending \(time)"); continue }
            if let number = value.number {
                #expect(Double(cell) == number, "\(code) \(time) \(parameter): CSV \(cell), answer \(number)")
            } else {
                #expect(cell.isEmpty || Double(cell) == 0, "\(code) \(time) \(parameter): CSV \(cell), answer null")
            }
            checked += 1
        }
        return checked
    }

    /// Position: the station nearest to each point (brute force over the CSV), with the hours
    /// whose end lies in the datetime interval, and its values as in the CSV.
    @Test func positionAnswersTheNearestStation() async throws {
        let server = try await RoutedServer.shared.value
        #expect(Self.stations.count == 17)
        let points = [(14.42, 50.08), (14.25, 50.0), (14.52, 50.12), (14.4114, 50.1172), (14.5, 50.03)]
        for (lon, lat) in points {
            let answer = try await get(server, "/ogc/collections/stations/position?coords=POINT(\(lon)%20\(lat))&datetime=2019-04-15T10:00:00Z/2019-04-15T12:00:00Z")
            #expect(answer.status == 200 && answer.header("Content-Type") == "application/prs.coverage+json", "\(answer.text)")
            let expected = try #require(Self.nearest(lon, lat))
            #expect(Self.codes(answer.json) == [expected.code], "\(lon) \(lat)")
            let coverage = try #require(answer.json["coverages"]?[0])
            #expect(coverage["domain"]?["axes"]?["x"]?["values"] == .array([.double(expected.lon)]))
            #expect(coverage["domain"]?["axes"]?["y"]?["values"] == .array([.double(expected.lat)]))
            #expect(coverage["domain"]?["axes"]?["t"]?["values"] == .array(["2019-04-15T10:00:00Z", "2019-04-15T11:00:00Z", "2019-04-15T12:00:00Z"].map { .string($0) }))
            for parameter in ["aqi", "no2", "o3", "pm10", "pm10_24", "pm2_5", "so2", "co"] { #expect(Self.checkValues(coverage, parameter) == 3) }
        }
        // A MULTIPOINT: each point's nearest station once, in the points' order.
        let multi = try await get(server, "/ogc/collections/stations/position?coords=MULTIPOINT((14.42%2050.08),(14.25%2050.0),(14.4201%2050.0801))&parameter-name=no2")
        #expect(Self.codes(multi.json) == [Self.nearest(14.42, 50.08)?.code, Self.nearest(14.25, 50.0)?.code].compactMap { $0 })
        // The checked figures: AREPA's NO2 at 10, 11 and 12 o'clock, from the CSV.
        let arepa = try await get(server, "/ogc/collections/stations/position?coords=POINT(14.42%2050.08)&parameter-name=NO2&datetime=2019-04-15T10:00:00Z/2019-04-15T12:00:00Z")
        #expect(Self.codes(arepa.json) == ["AREPA"])
        #expect(arepa.json["coverages"]?[0]?["ranges"]?["no2"]?["values"] == .array([.double(31.6), .double(30.8), .double(26.0)]))
        #expect(arepa.json["parameters"]?["no2"]?["unit"]?["symbol"] == .string("µg/m³"))
    }

    /// Radius and area select exactly the stations brute force does; every value is the CSV's.
    @Test func radiusAndAreaSelectAsBruteForce() async throws {
        let server = try await RoutedServer.shared.value
        for (lon, lat, km) in [(14.42, 50.08, 3.0), (14.42, 50.08, 0.5), (14.45, 50.05, 8.0), (14.3, 50.1, 100.0)] {
            let answer = try await get(server, "/ogc/collections/stations/radius?coords=POINT(\(lon)%20\(lat))&within=\(km)&within-units=km&datetime=2019-04-16T06:00:00Z")
            let expected = Self.stations.map { ($0, Geodesy.haversine(lon1: lon, lat1: lat, lon2: $0.lon, lat2: $0.lat)) }
                .filter { $0.1 <= km * 1000 }.sorted { $0.1 < $1.1 }.map(\.0.code)
            if expected.isEmpty {
                #expect(answer.status == 204)
            } else {
                #expect(answer.status == 200 && Self.codes(answer.json) == expected, "\(lon) \(lat) \(km) km: \(answer.text.prefix(300))")
                for coverage in answer.json["coverages"]?.items ?? [] { #expect(Self.checkValues(coverage, "pm10") == 1) }
            }
        }
        #expect(Self.stations.filter { Geodesy.haversine(lon1: 14.3, lat1: 50.1, lon2: $0.lon, lat2: $0.lat) <= 100_000 }.count == 17)
        // Metres and miles are the same radius in other units.
        let km = try await get(server, "/ogc/collections/stations/radius?coords=POINT(14.42%2050.08)&within=3&within-units=km")
        let m = try await get(server, "/ogc/collections/stations/radius?coords=POINT(14.42%2050.08)&within=3000&within-units=M")
        #expect(Self.codes(km.json) == Self.codes(m.json))
        #expect(Self.codes(km.json) == ["AREPA", "ALEGA", "ARIEA", "ASMIA", "AKALA", "AVRSA", "ABREA"])

        let boxes = [(14.38, 50.07, 14.46, 50.11), (14.2, 49.9, 14.7, 50.2), (14.5, 50.0, 14.6, 50.05)]
        for (w, s, e, n) in boxes {
            let polygon = "POLYGON((\(w)%20\(s),\(e)%20\(s),\(e)%20\(n),\(w)%20\(n),\(w)%20\(s)))"
            let answer = try await get(server, "/ogc/collections/stations/area?coords=\(polygon)&parameter-name=o3,no2")
            let expected = Set(Self.stations.filter { $0.lon > w && $0.lon < e && $0.lat > s && $0.lat < n }.map(\.code))
            #expect(Set(Self.codes(answer.json)) == expected && !expected.isEmpty, "\(w) \(s) \(e) \(n)")
            #expect(answer.json["parameters"]?.objectKeys == ["no2", "o3"])
            for coverage in answer.json["coverages"]?.items ?? [] { #expect(Self.checkValues(coverage, "o3") == 48) }
        }
    }

    /// A location query: the station's whole series (48 hours), each column as in the CSV; the
    /// locations list names every station with its interval.
    @Test func locationsAnswerEachStation() async throws {
        let server = try await RoutedServer.shared.value
        let alega = try await get(server, "/ogc/collections/stations/locations/ALEGA")
        #expect(alega.status == 200 && alega.json["type"] == .string("Coverage"))
        for parameter in ["aqi", "no2", "o3", "pm10", "pm10_24", "pm2_5", "so2", "co"] { #expect(Self.checkValues(alega.json, parameter) == 48) }
        // 00:00 on the 15th is an incomplete hour (index 0): its index is missing.
        let hour = try await get(server, "/ogc/collections/stations/locations/ALEGA?parameter-name=aqi&datetime=2019-04-15T00:00:00Z/2019-04-15T02:00:00Z")
        #expect(hour.json["ranges"]?["aqi"]?["values"] == .array([.null, .double(3), .double(3)]))
        #expect(Self.observations["ALEGA"]?["2019-04-15T00:00:00Z"]?["aqi"] == "0")

        let list = try await get(server, "/ogc/collections/stations/locations")
        #expect(list.status == 200 && list.header("Content-Type") == "application/geo+json")
        let features = list.json["features"]?.items ?? []
        #expect(Set(features.compactMap { $0["id"]?.string }) == Set(Self.stations.map(\.code)))
        let feature = try #require(features.first { $0["id"] == .string("ALEGA") })
        #expect(feature["properties"]?["label"] == .string("Praha 2-Legerova (hot spot)"))
        #expect(feature["properties"]?["datetime"] == .string("2019-04-14T21:00:00Z/2019-04-16T21:00:00Z"))
        #expect(feature["properties"]?["edrqueryendpoint"]?.string?.hasSuffix("/ogc/collections/stations/locations/ALEGA") == true)

        // GeoJSON: a feature per station and hour, its values as properties.
        let geojson = try await get(server, "/ogc/collections/stations/locations/ALEGA?f=GeoJSON&parameter-name=no2&datetime=2019-04-15T12:00:00Z")
        #expect(geojson.json["features"]?.items.count == 1)
        #expect(geojson.json["features"]?[0]?["properties"]?["no2"]?.number == Double(Self.observations["ALEGA"]?["2019-04-15T12:00:00Z"]?["no2"] ?? ""))
        #expect(geojson.json["features"]?[0]?["properties"]?["datetime"] == .string("2019-04-15T11:00:00Z/2019-04-15T12:00:00Z"))
    }

    /// The collection declares its queries and its parameters with their units; the
    /// conformance lists EDR's classes; a layer without a series has none.
    @Test func theCollectionDescribesItsQueries() async throws {
        let server = try await RoutedServer.shared.value
        let stations = try await get(server, "/ogc/collections/stations")
        #expect(stations.json["data_queries"]?.objectKeys == ["position", "radius", "area", "locations"])
        #expect(stations.json["parameter_names"]?.objectKeys == ["aqi", "no2", "o3", "pm10", "pm10_24", "pm2_5", "so2", "co"])
        #expect(stations.json["parameter_names"]?["pm2_5"]?["unit"]?["symbol"] == .string("µg/m³"))
        #expect(stations.json["parameter_names"]?["aqi"]?["unit"]?["symbol"] == .string("1"))
        #expect(stations.json["extent"]?["temporal"]?["interval"] == .array([.array([.string("2019-04-14T21:00:00Z"), .string("2019-04-16T21:00:00Z")])]))
        #expect(try await get(server, "/ogc/collections/pens").json["data_queries"] == nil)
        let conformance = try await get(server, "/ogc/conformance").json["conformsTo"]?.items.compactMap(\.string) ?? []
        #expect(conformance.contains("http://www.opengis.net/spec/ogcapi-edr-1/1.1/conf/covjson") && conformance.count == 29)
    }

    /// What a client gets wrong is a problem naming the parameter; no observation is 204.
    @Test func badRequestsAreProblems() async throws {
        let server = try await RoutedServer.shared.value
        let base = "/ogc/collections/stations"
        let cases: [(String, Int, String)] = [
            (base + "/position?coords=POINT(14.42%2050.08)&parameter-name=no3", 400, "unknown parameter 'no3' — did you mean 'no2'?"),
            (base + "/position", 400, "coords"),
            (base + "/position?coords=POINT(14.42)", 400, "invalid WKT"),
            (base + "/position?coords=LINESTRING(14.4%2050,14.5%2050.1)", 400, "a position is a WKT POINT or MULTIPOINT, not a LineString"),
            (base + "/position?coords=POINT(214.42%2050.08)", 400, "longitude"),
            (base + "/radius?coords=POINT(14.42%2050.08)&within=3", 400, "within-units"),
            (base + "/radius?coords=POINT(14.42%2050.08)&within=3&within-units=parsec", 400, "is not one of km, m, mi"),
            (base + "/radius?coords=POINT(14.42%2050.08)&within=-3&within-units=km", 400, #""parameter":"within""#),
            (base + "/radius?coords=POINT(14.42%2050.08)&within=1e308&within-units=mi", 400, "must be a distance of 0 or more"),
            (base + "/area?coords=POINT(14.42%2050.08)", 400, "an area is a POLYGON or MULTIPOLYGON, not a Point"),
            (base + "/locations/ALEGX", 404, "has no station 'ALEGX' — did you mean 'ALEGA'?"),
            (base + "/position?coords=POINT(14.42%2050.08)&f=xml", 406, "CoverageJSON or GeoJSON"),
            (base + "/position?coords=POINT(14.42%2050.08)&crs=EPSG:5514", 400, "crs"),
            (base + "/position?coords=POINT(14.42%2050.08)&crs=EPSG:4326", 400, "coordinates are CRS84 (longitude, latitude)"),
            (base + "/position?coords=POINT(14.42%2050.08)&datetime=yesterday", 400, "datetime"),
            (base + "/position?coords=POINT(14.42%2050.08)&bogus=1", 400, "unknown parameter"),
            ("/ogc/collections/pens/position?coords=POINT(14.42%2050.08)", 400, "layer 'pens' has no time series (layers with one: stations)"),
            ("/ogc/collections/nowhere/position?coords=POINT(14.42%2050.08)", 404, "unknown layer"),
        ]
        for (target, status, words) in cases {
            let answer = try await get(server, target)
            #expect(answer.status == status && answer.text.contains(words), "\(target): \(answer.status) \(answer.text)")
        }
        let empty = try await get(server, base + "/position?coords=POINT(14.42%2050.08)&datetime=2030-01-01")
        #expect(empty.status == 204 && empty.body.isEmpty)
    }

    /// Every EDR document validates against the standards' own schemas (Fixtures/standards),
    /// and the broken copies do not, so the check bites.
    @Test func answersValidateAgainstTheStandardsSchemas() async throws {
        let server = try await RunningServer.shared.value
        let run = try await offPool {
            try Fixtures.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", Fixtures.root.appendingPathComponent("Tests/Clients/edr_client.py").path,
                                                                   "validate", "http://127.0.0.1:\(server.port)/ogc", Fixtures.path("standards")])
        }
        #expect(run.status == 0, "\(run.stderr)")
        let verdicts = run.stdout.split(separator: "\n").map(String.init)
        #expect(verdicts == ["collection valid", "conformance valid", "position.covjson valid", "position.geojson valid", "radius.covjson valid",
                             "area.covjson valid", "location.covjson valid", "locations.geojson valid",
                             "broken-coverage invalid: 'domain' is a required property",
                             "broken-collection invalid: 'data_queries' is a required property"], "\(run.stdout)")
    }

    /// OWSLib's EDR client (PyPI) reads the collection and a position, an area and a location
    /// query, and sees what the CSV holds.
    @Test func owslibReadsTheQueries() async throws {
        let server = try await RunningServer.shared.value
        let run = try await offPool {
            try Fixtures.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", Fixtures.root.appendingPathComponent("Tests/Clients/edr_client.py").path,
                                                                   "owslib", "http://127.0.0.1:\(server.port)/ogc"])
        }
        #expect(run.status == 0, "\(run.stderr)")
        let read = (try? JSON.parse(Array(run.stdout.utf8))) ?? .null
        #expect(read["queries"] == .array(["area", "locations", "position", "radius"].map { .string($0) }))
        #expect(read["no2_unit"] == .string("µg/m³"))
        #expect(read["position"]?[0]?["values"] == .array([.double(31.6), .double(30.8), .double(26.0)]))
        #expect(read["position"]?[0]?["x"] == .double(14.42922))
        let inBox = Self.stations.filter { $0.lon > 14.38 && $0.lon < 14.46 && $0.lat > 50.07 && $0.lat < 50.11 }
        #expect(read["area"]?.items.count == inBox.count && inBox.count == 6)
        let pm10 = read["area"]?.items.compactMap { $0["values"]?[0]?.number } ?? []
        #expect(pm10 == [13, 34, 23, 28, 22])
        #expect(read["location"]?["values"] == .array([.null, .double(3), .double(3)]))
    }
}

extension EDREndpointTests {
    /// docs/HTTP_API.md's EDR example, sent with curl as written, answers what the text says.
    @Test func theDocumentedCurlExample() async throws {
        let document = try String(contentsOf: Fixtures.root.appendingPathComponent("docs/HTTP_API.md"), encoding: .utf8)
        let line = try #require(document.split(separator: "\n").first { $0.hasPrefix("curl -s 'localhost:8080/ogc/collections/stations/position?") })
        let url = try #require(line.split(separator: "'").dropFirst().first)
        let server = try await RunningServer.shared.value
        let (status, _, body) = try await WriteEndpointTests.curl([url.replacingOccurrences(of: "localhost:8080", with: "127.0.0.1:\(server.port)")])
        #expect(status == 200)
        let answer = (try? JSON.parse(Array(body.utf8))) ?? .null
        #expect(Self.codes(answer) == ["AREPA"])
        #expect(answer["coverages"]?[0]?["ranges"]?["no2"]?["values"] == .array([.double(31.6), .double(30.8), .double(26.0)]))
        #expect(document.contains("AREPA (Praha 1-n. Republiky, 1.1 km away)") && document.contains("31.6, 30.8 and 26.0 µg/m³"))
    }
}

extension JSONValue {
    /// An object's keys in document order.
    var objectKeys: [String]? {
        if case .object(let object) = self { return object.keys }
        return nil
    }
}
