import Foundation
import Geometry
@testable import Indoor
import SpatialIndex
import Store
import TestSupport
import Testing

/// The WMU library survey (Fixtures/indoor), read as the demo store reads it.
enum WMU {
    static let venue: Result<Venue, any Error> = Result {
        var options = SurveyOptions(venue: "wmu_library")
        options.grid = GridConvention(letters: .column, cellSize: 1)
        options.floor = 1
        // The survey's own marker, so that the brute force below reads the CSV as it stands.
        options.model = ModelSettings(unheard: .value(-200))
        let bytes = [UInt8](try Data(contentsOf: Fixtures.url("indoor/ble-rssi-wmu-labeled.csv")))
        return try SurveyReader.read(bytes, file: "ble-rssi-wmu-labeled.csv", options: options)
    }

    /// Every scan as 13 dBm values, -200 for a beacon not heard, straight from the CSV text
    /// (not through the reader): the brute force's own view of the data.
    static let rows: Result<[(label: String, values: [Double])], any Error> = Result {
        let text = try String(contentsOf: Fixtures.url("indoor/ble-rssi-wmu-labeled.csv"), encoding: .utf8)
        return text.split(whereSeparator: \.isNewline).dropFirst().map { line in
            let cells = line.split(separator: ",", omittingEmptySubsequences: false)
            return (String(cells[0]), cells[2...].map { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) ?? .nan })
        }
    }

    /// "O02" → (15, 2): A = 1, as the grid convention counts.
    static func position(_ label: String) -> (Double, Double) {
        let letter = Double(label.unicodeScalars.first!.value - 64)
        return (letter, Double(label.dropFirst())!)
    }
}

/// A signal vector of -200 for "not heard" as the locator's observation.
func observation(_ values: [Double]) -> Observation {
    Observation(strengths: values.map { $0 > -200 ? $0 : nil }, vector: values)
}

/// A brute-force kNN written here, independent of the k-d tree: every scan's distance, sorted
/// by (distance, row), the first k; the mean (or 1/d-weighted mean) of their cells.
func bruteForce(_ query: [Double], k: Int, weighted: Bool, leaving left: Int? = nil) throws -> (x: Double, y: Double, labels: [String], distances: [Double]) {
    let rows = try WMU.rows.get()
    var all: [(d: Double, row: Int)] = []
    for (i, row) in rows.enumerated() where i != left {
        let d = zip(row.values, query).reduce(0) { $0 + ($1.0 - $1.1) * ($1.0 - $1.1) }.squareRoot()
        all.append((d, i))
    }
    all.sort { ($0.d, $0.row) < ($1.d, $1.row) }
    let nearest = Array(all.prefix(k))
    var weights = nearest.map { _ in 1.0 }
    if weighted {
        weights = nearest.contains { $0.d == 0 } ? nearest.map { $0.d == 0 ? 1 : 0 } : nearest.map { 1 / $0.d }
    }
    let total = weights.reduce(0, +)
    var x = 0.0, y = 0.0
    for (n, w) in zip(nearest, weights) {
        let (px, py) = WMU.position(rows[n.row].label)
        x += w * px / total
        y += w * py / total
    }
    return (x, y, nearest.map { rows[$0.row].label }, nearest.map(\.d))
}

@Suite(.validatesStores) struct SurveyTests {
    @Test func theWMUSurveyReadsWhole() throws {
        let venue = try WMU.venue.get()
        #expect(venue.scans.count == 1420)
        #expect(venue.beacons.map(\.id) == (1...13).map { String(format: "b30%02d", $0) })
        #expect(venue.points.count == 105)
        #expect(venue.scans.reduce(0) { $0 + $1.readings.count } == 2043)  // cells other than -200, counted by hand in Python
        // The first row: O02,10-18-2016 11:15:21, b3006 = -78 and nothing else.
        let first = venue.scans[0]
        #expect(venue.points[first.point].label == "O02" && venue.points[first.point].x == 15 && venue.points[first.point].y == 2)
        #expect(first.readings == [Reading(beacon: 5, rssi: -78)])
        #expect(first.time?.iso == "2016-10-18T11:15:21")
        #expect(venue.floors == [Floor(number: 1)])
        #expect(venue.beacons.allSatisfy { $0.floor == 1 })
    }

    @Test func gridLabels() {
        let columns = GridConvention(letters: .column, cellSize: 2.5)
        #expect(columns.position(of: "O02")! == (37.5, 5))
        #expect(columns.position(of: "aa1")! == (67.5, 2.5))  // AA = 27
        #expect(GridConvention(letters: .row).position(of: "B7")! == (7, 2))
        for bad in ["", "O", "12", "O2O", "ABCD1", "Ö2", "O-2", "O1234567"] { #expect(columns.position(of: bad) == nil, "\(bad)") }
    }

    @Test func times() {
        #expect(SurveyTime.parse("10-18-2016 11:15:21")?.iso == "2016-10-18T11:15:21")
        #expect(SurveyTime.parse("4/19/2016 9:05")?.iso == "2016-04-19T09:05:00")
        #expect(SurveyTime.parse("2016-10-18T11:15:21.250Z")?.iso == "2016-10-18T11:15:21.250")
        // Times a library caller makes: no trap on a value that is not a time.
        #expect(SurveyTime(seconds: .nan).iso == "nan s" && SurveyTime(seconds: 1e300).iso == "1e+300 s")
        #expect(EvaluationResult.percentile([1, 2, 3], 0.5) == 2 && EvaluationResult.percentile([1, 2, 3], 0.75) == 2.5)
        #expect(EvaluationResult.percentile([1, 2, 3], 1.5).isNaN && EvaluationResult.percentile([1, 2, 3], -0.1).isNaN && EvaluationResult.percentile([1, 2, 3], .nan).isNaN)
        #expect(SurveyTime.parse("1476789321")?.iso == "2016-10-18T11:15:21")
        for bad in ["", "2-30-2016 10:00:00", "10-18-16 11:15", "yesterday", "1e400", "10-18-2016 25:00:00"] { #expect(SurveyTime.parse(bad) == nil, "\(bad)") }
    }

    /// The first three WMU scans written as a long survey (one row per reading, a time per
    /// reading, two readings of one beacon in one window) read as the same scans.
    @Test func aLongSurveyGroupsReadingsIntoScans() throws {
        let csv = """
            point,time,beacon,rssi,device
            O02,2016-10-18T11:15:21.0,b3006,-78,phone
            O02,2016-10-18T11:15:21.4,b3006,-76,phone
            O02,2016-10-18T11:15:21.8,b3001,-200,phone
            P01,2016-10-18T11:15:19.0,b3006,-78,phone
            O02,2016-10-18T11:15:25.0,b3002,-80,phone
            """
        var options = SurveyOptions(venue: "long")
        options.grid = GridConvention(letters: .column)
        let venue = try SurveyReader.read(Array(csv.utf8), file: "long.csv", options: options)
        #expect(venue.beacons.map(\.id) == ["b3006", "b3002"])  // b3001 only at the marker: never heard
        #expect(venue.scans.count == 3)  // O02 at :21 (two readings), P01, O02 at :25 (a window of 1 s)
        #expect(venue.scans.map { venue.points[$0.point].label } == ["O02", "P01", "O02"])
        #expect(venue.scans[0].readings.map(\.rssi) == [-78, -76])
        #expect(SignalSpace(venue: venue, settings: ModelSettings(unheard: .value(-200))).vector(of: venue.scans[0]) == [-77, -200])
        // Learned: 10 dB below the weakest strength heard (-80).
        #expect(SignalSpace(venue: venue, settings: ModelSettings()).vector(of: venue.scans[0]) == [-77, -90])
        #expect(venue.scans[0].attributes == ["device": "phone"])
    }

    @Test func positionsFromXYColumnsAndTheMissingMarker() throws {
        let csv = "x,y,floor,a,b,room\n1.5,2,0,-60,0,hall\n1.5,2,0,0,-70,hall\n4,-3,1,-55,,lab\n"
        var options = SurveyOptions(venue: "xy")
        options.missingValue = 0
        let venue = try SurveyReader.read(Array(csv.utf8), file: "xy.csv", options: options)
        #expect(venue.points == [ReferencePoint(label: "1.5 2", floor: 0, x: 1.5, y: 2), ReferencePoint(label: "4 -3", floor: 1, x: 4, y: -3)])
        #expect(venue.scans.map { $0.readings.map(\.rssi) } == [[-60], [-70], [-55]])
        #expect(venue.scans.map { $0.attributes["room"] } == ["hall", "hall", "lab"])
        #expect(venue.floors.map(\.number) == [0, 1])
    }

    /// Malformed surveys: every problem with its line and column, and nothing read.
    @Test func malformedSurveysSayWhereAndWhy() throws {
        var options = SurveyOptions(venue: "bad")
        options.grid = GridConvention(letters: .column)
        func problems(_ csv: String, _ options: SurveyOptions) -> [String] {
            do {
                _ = try SurveyReader.read(Array(csv.utf8), file: "bad.csv", options: options)
                return []
            } catch {
                guard case .malformedCSV(let file, let problems) = error else { return ["other: \(error)"] }
                #expect(file == "bad.csv" && error.code == "malformed_csv")
                return problems.map(\.description)
            }
        }
        #expect(problems("location,b1\nO02,\"-70\n", options) == ["line 2: a quoted field is never closed"])
        #expect(problems("location,b1,b2\nO02,-70\n", options) == ["line 2: expected 3 fields as in the header, found 2"])
        #expect(problems("location,b1\nO02,-70\nO03,strong\nO04,12\nO5O,-60\n", options) == [
            "line 3, column 'b1': 'strong' is not a finite number",
            "line 4, column 'b1': 12 dBm is out of range: a received strength lies from -200 to 0 dBm",
            "line 5, column 'location': the label 'O5O' is not a grid cell (letter = column (x), number = row (y), cell 1): 1–3 letters and 1–6 digits, such as O02",
        ])
        #expect(problems("location,date,b1\nO02,13-45-2016 10:00,-70\n", options) == [
            "line 2, column 'date': '13-45-2016 10:00' is not a time (2016-10-18T11:15:21, 10-18-2016 11:15:21 or Unix seconds; --time-unit ms, us or ns for other numbers)",
        ])
        #expect(problems("location,b1\nO02,nan\n", options) == ["line 2, column 'b1': 'nan' is not a finite number"])
        #expect(problems("", options) == ["the file has no header row"])
        #expect(throws: IndoorError.invalidOption("labels without x/y columns need a grid convention or a pattern to become positions: pass --grid letter-column (or letter-row) and --cell-size, or --label-pattern '{x:3}{y:3}'")) {
            try SurveyReader.read(Array("location,b1\nO02,-70\n".utf8), file: "bad.csv", options: SurveyOptions(venue: "bad"))
        }
        #expect(throws: IndoorError.invalidVenueName("bad name", reason: "use at most 64 ASCII letters, digits and '_'")) {
            try SurveyReader.read(Array("x,y,b\n1,2,-70\n".utf8), file: "bad.csv", options: SurveyOptions(venue: "bad name"))
        }
    }
}

@Suite(.validatesStores) struct PositioningTests {
    /// Specific scans (the LOCATE example, and survey rows by number) located through the k-d
    /// tree give exactly the brute force's position and neighbours.
    @Test func positionsMatchTheBruteForce() throws {
        let venue = try WMU.venue.get()
        let locator = try Locator(venue: venue)
        let rows = try WMU.rows.get()
        var example = [Double](repeating: -200, count: 13)
        example[0] = -78
        example[5] = -77
        let queries: [[Double]] = [example] + [0, 1, 100, 777, 1000, 1419].map { rows[$0].values }
        for query in queries {
            for k in [1, 3, 5] {
                for method in [LocateMethod.knn, .wknn] {
                    let found = try #require(locator.locate(observation(query), k: k, method: method))
                    let reference = try bruteForce(query, k: k, weighted: method == .wknn)
                    #expect(abs(found.x - reference.x) < 1e-12 && abs(found.y - reference.y) < 1e-12, "k \(k) \(method)")
                    #expect(found.neighbours.map { venue.points[$0.point].label } == reference.labels)
                    #expect(zip(found.neighbours.map(\.signalDistance), reference.distances).allSatisfy { abs($0 - $1) < 1e-12 })
                    #expect(found.floor == 1)
                }
            }
        }
        // The documented answer: b3001 -78, b3006 -77, k 3, weighted. No survey scan hears both
        // beacons; many hear one of them at -78 or -77, 122 dB away; the first three of those in
        // the survey's order are scans at P01, so the answer is P01 with no spread.
        let answer = try #require(locator.locate(observation(example), k: 3, method: .wknn))
        #expect(answer.neighbours.map { venue.points[$0.point].label } == ["P01", "P01", "P01"])
        #expect(answer.neighbours.map(\.signalDistance) == [122, 122, 122])
        #expect(answer.x == 16 && answer.y == 1 && answer.spread == 0 && venue.points[answer.point].label == "P01")
        // A made-up scan hearing two beacons, b3004 -75 and b3005 -70: its spread is the
        // weighted RMS distance of its neighbours' cells from the estimate.
        var two = [Double](repeating: -200, count: 13)
        two[3] = -75
        two[4] = -70
        let between = try #require(locator.locate(observation(two), k: 3, method: .wknn))
        let reference = try bruteForce(two, k: 3, weighted: true)
        #expect(between.neighbours.map { venue.points[$0.point].label } == reference.labels)
        let squares = between.neighbours.map { n -> Double in
            let p = venue.points[n.point]
            return n.weight * ((p.x - between.x) * (p.x - between.x) + (p.y - between.y) * (p.y - between.y))
        }
        let spread = (squares.reduce(0, +) / between.neighbours.map(\.weight).reduce(0, +)).squareRoot()
        #expect(abs(between.spread - spread) < 1e-12)
    }

    /// Leave-one-out through the index (the left-out scan counted once less in its group)
    /// equals leave-one-out by brute force, scan by scan.
    @Test func leaveOneOutMatchesTheBruteForce() throws {
        let venue = try WMU.venue.get()
        let rows = try WMU.rows.get()
        var options = EvaluationOptions()
        options.k = [3]
        options.methods = [.wknn]
        let result = try #require(Evaluator.evaluate(venue, options: options).results.first)
        var errors: [Double] = []
        var exact = 0
        for (i, row) in rows.enumerated() {
            let reference = try bruteForce(row.values, k: 3, weighted: true, leaving: i)
            let (tx, ty) = WMU.position(row.label)
            errors.append(((reference.x - tx) * (reference.x - tx) + (reference.y - ty) * (reference.y - ty)).squareRoot())
            if abs(reference.x - tx) < 0.5 && abs(reference.y - ty) < 0.5 { exact += 1 }
        }
        #expect(result.tested == 1420 && result.exact == exact)
        #expect(zip(result.errors, errors).allSatisfy { abs($0 - $1) < 1e-9 })
        // The numbers the brute force gives (and Benchmarks/indoor_sklearn.py prints): median
        // 1.202 cells, p90 √13 = 3.606 cells, 387 of 1,420 scans in their exact cell.
        #expect(abs(result.median - 1.2018504251546631) < 1e-9)
        #expect(abs(result.p90 - 13.0.squareRoot()) < 1e-9)
        #expect(result.exact == 387)
    }

    @Test func scansAreCheckedByOneRule() throws {
        let locator = try Locator(venue: try WMU.venue.get())
        #expect(throws: ScanError.duplicateBeacon("b3001")) { try locator.observation([("b3001", -70), ("b3006", -77), ("b3001", -71)]) }
        #expect(throws: ScanError.rssiOutOfRange(beacon: "b3006", value: 12)) { try locator.observation([("b3001", -70), ("b3006", 12)]) }
        #expect(throws: ScanError.rssiOutOfRange(beacon: "b3006", value: -201)) { try locator.observation([("b3006", -201)]) }
        #expect(throws: ScanError.rssiOutOfRange(beacon: "b3006", value: .infinity)) { try locator.observation([("b3006", .infinity)]) }
        #expect(throws: ScanError.noKnownBeacon(venue: "wmu_library", given: ["x1", "x2"])) { try locator.observation([("x1", -70), ("x2", -60)]) }
        #expect(throws: ScanError.noKnownBeacon(venue: "wmu_library", given: ["b3001"])) { try locator.observation([("b3001", -200)]) }
        #expect(throws: ScanError.noKnownBeacon(venue: "wmu_library", given: [])) { try locator.observation([]) }
        #expect(throws: ScanError.tooManyReadings(count: 3, limit: 2)) { try locator.observation([("a", -1), ("b", -2), ("c", -3)], maxReadings: 2) }
        let mixed = try locator.observation([("x1", -70), ("b3006", -77)])
        #expect(mixed.unknown == ["x1"] && mixed.observation.vector[5] == -77 && mixed.observation.vector.filter { $0 == -200 }.count == 12)
        #expect(mixed.observation.strengths[5] == -77 && mixed.observation.strengths.compactMap { $0 }.count == 1)
        #expect(ScanError.duplicateBeacon("b3001").code == "duplicate_beacon")
        #expect(ScanError.rssiOutOfRange(beacon: "b", value: 3).code == "rssi_out_of_range")
        #expect(ScanError.noKnownBeacon(venue: "v", given: []).code == "no_known_beacon")
    }

    @Test func aggregatedFingerprints() throws {
        let venue = try WMU.venue.get()
        let space = SignalSpace(venue: venue, settings: venue.model)
        let mean = try FingerprintMap(venue: venue, space: space, kind: .mean)
        let median = try FingerprintMap(venue: venue, space: space, kind: .median)
        #expect(mean.count == 105 && median.count == 105 && mean.entryScans == nil)
        // O02's fingerprints by hand from its CSV rows: per beacon the mean and the median of
        // the strengths heard, when at least half of its scans heard the beacon, else -200.
        // Each is found at distance 0 as O02's entry.
        let rows = try WMU.rows.get().filter { $0.label == "O02" }
        func heard(_ b: Int) -> [Double]? {
            let values = rows.map { $0.values[b] }.filter { $0 > -200 }
            return 2 * values.count >= rows.count && !values.isEmpty ? values : nil
        }
        let meanVector = (0..<13).map { b in heard(b).map { $0.reduce(0, +) / Double($0.count) } ?? -200 }
        let medianVector = (0..<13).map { b -> Double in
            guard let sorted = heard(b)?.sorted() else { return -200 }
            return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
        #expect(meanVector.contains { $0 > -200 })
        let o02 = try #require(venue.points.firstIndex { $0.label == "O02" })
        var visited = 0
        for (map, vector) in [(mean, meanVector), (median, medianVector)] {
            let found = try #require(map.nearest(to: vector, k: 1, visited: &visited).first)
            #expect(map.entryPoints[found.entry] == o02 && found.distance < 1e-9)
        }
    }

    @Test func framesTieLocalPositionsToTheGlobe() {
        let origin = Point(lon: 14.4208, lat: 50.0880)
        for rotation in [0.0, 30, 90, -135] {
            let frame = LocalFrame(origin: origin, rotationDegrees: rotation)
            // 100 m along y is 100 m along the bearing `rotation`; along x, 90° clockwise of it.
            for (x, y, bearing) in [(0.0, 100.0, rotation), (100.0, 0.0, rotation + 90)] {
                let p = frame.lonLat(x: x, y: y)
                #expect(abs(Geodesy.distance(origin, p) - 100) < 0.001)
                // The initial great-circle bearing from the origin to the point.
                let (phi1, phi2, dLambda) = (origin.lat * .pi / 180, p.lat * .pi / 180, (p.lon - origin.lon) * .pi / 180)
                let measured = atan2(sin(dLambda) * cos(phi2), cos(phi1) * sin(phi2) - sin(phi1) * cos(phi2) * cos(dLambda)) * 180 / .pi
                let difference = (measured - bearing).truncatingRemainder(dividingBy: 360)
                #expect(min(abs(difference), 360 - abs(difference)) < 0.01, "rotation \(rotation)")
            }
        }
    }
}

@Suite(.validatesStores) struct IndoorStoreTests {
    @Test func aVenueRoundTripsThroughTheGeoPackage() throws {
        var venue = try WMU.venue.get()
        venue.title = "Waldo Library"
        venue.floors = [Floor(number: 1, name: "first floor", frame: LocalFrame(origin: Point(lon: -85.61, lat: 42.28), rotationDegrees: 12.5))]
        venue.beacons[0].x = 3
        venue.beacons[0].y = 4.5
        venue.scans[7].attributes = ["session": "a"]
        let path = try Fixtures.temporaryDirectory("indoor").appendingPathComponent("venue.gpkg").path
        let store = try GeoPackage(path: path, mode: .readWrite)
        try IndoorStore.write(venue, into: store, replace: false)
        #expect(try IndoorStore.venues(in: store) == [venue])
        #expect(throws: IndoorError.venueExists("wmu_library")) { try IndoorStore.write(venue, into: store, replace: false) }
        venue.scans.removeLast(20)
        try IndoorStore.write(venue, into: store, replace: true)
        #expect(try IndoorStore.venue("wmu_library", in: store).scans.count == 1400)
        // Not layers: the store's layer list leaves them out, and their names are reserved.
        #expect(try store.layerNames() == [])
        #expect(throws: StoreError.self) { try Importer.importFile(Fixtures.path("air/stations-prague.csv"), into: store, options: ImportOptions(layer: "indoor_points")) }
    }

    /// GDAL reads the tables: ogrinfo lists them as GeoPackage attribute tables with their rows.
    @Test func gdalReadsTheIndoorTables() throws {
        let path = try Fixtures.temporaryDirectory("indoor-gdal").appendingPathComponent("venue.gpkg").path
        try IndoorStore.write(try WMU.venue.get(), into: GeoPackage(path: path, mode: .readWrite), replace: false)
        let output = try Process.run("ogrinfo", ["-ro", "-so", "-al", path])
        for (table, count) in [("indoor_venues", 1), ("indoor_floors", 1), ("indoor_beacons", 13), ("indoor_points", 105), ("indoor_scans", 1420), ("indoor_readings", 2043)] {
            #expect(output.contains("Layer name: \(table)\n") && output.contains("Feature Count: \(count)\n"), "\(table)")
        }
        let o02 = try Process.run("ogrinfo", ["-ro", "-q", path, "-sql", "SELECT x, y FROM indoor_points WHERE label = 'O02'"])
        #expect(o02.contains("x (Real) = 15") && o02.contains("y (Real) = 2"))
    }
}

extension Process {
    /// Runs a program and returns its standard output.
    static func run(_ program: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [program] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
