import Foundation
import Geometry
import Support
import TestSupport
import Testing

/// `vltava indoor` end to end: the WMU survey imported, listed, a scan located, the positioning
/// evaluated. The leave-one-out numbers are those of IndoorTests' brute force and of
/// scikit-learn (Benchmarks/indoor_sklearn.py): k 1 gives median 1 cell, 527 of 1,420 exact.
@Suite(.serialized, .validatesStores) struct IndoorCLITests {
    static let store: Result<String, any Error> = Result {
        let db = try Fixtures.temporaryDirectory("cli-indoor").appendingPathComponent("indoor.gpkg").path
        let imported = try CLI.run(["indoor", "import", Fixtures.path("indoor/ble-rssi-wmu-labeled.csv"), "--venue", "wmu_library",
                                    "--grid", "letter-column", "--cell-size", "1", "--floor", "1", "--floor-name", "first floor", "--db", db])
        guard imported.status == 0 else { throw CLIFailure(description: imported.stderr) }
        return db
    }

    struct CLIFailure: Error, CustomStringConvertible { var description: String }

    @Test func importListLocate() throws {
        let db = try Self.store.get()
        let venues = try CLI.run(["indoor", "venues", "--db", db])
        #expect(venues.stdout.contains("wmu_library              1       13     105   1420  letter = column (x), number = row (y), cell 1"), "\(venues.stdout)")
        let located = try CLI.run(["indoor", "locate", "b3002=-76", "b3005=-71", "b3008=-80", "--k", "5", "--method", "wknn", "--format", "json", "--db", db])
        #expect(located.status == 0, "\(located.stderr)")
        let answer = try JSON.parse(located.stdout)
        guard case .object(let object) = answer else { Issue.record("not an object"); return }
        #expect(object["point"] == .string("I07") && object["x"]?.number == 9.442 && object["y"]?.number == 6.646)
        let table = try CLI.run(["indoor", "locate", "b3002=-76", "b3005=-71", "b3008=-80", "--k", "5", "--method", "wknn", "--db", db])
        #expect(table.stdout.hasPrefix("wmu_library, floor 1: x 9.442, y 6.646"), "\(table.stdout)")
        // The same store answers LOCATE through `vltava query`.
        let query = try CLI.run(["query", "LOCATE SCAN(b3002 -76, b3005 -71, b3008 -80) IN wmu_library K 5 METHOD wknn", "--format", "json", "--db", db])
        #expect((try JSON.parse(query.stdout)) == answer)
        let bad = try CLI.run(["indoor", "locate", "b3002=7", "--db", db])
        #expect(bad.status != 0 && bad.stderr.contains("beacon 'b3002': 7 dBm is out of range"))
    }

    @Test func evaluateLeaveOneOutAndSplits() throws {
        let db = try Self.store.get()
        let loo = try CLI.run(["indoor", "evaluate", "--k", "1", "--method", "knn", "--format", "json", "--db", db])
        #expect(loo.status == 0, "\(loo.stderr)")
        guard case .object(let answer) = try JSON.parse(loo.stdout), case .array(let results)? = answer["results"],
              case .object(let first)? = results.first else { Issue.record("no results: \(loo.stdout)"); return }
        #expect(first["median_cells"]?.number == 1 && first["p90_cells"]?.number == 4.123 && first["tested"] == .integer(1420))
        #expect(first["exact_share"]?.number == Rounding.metres(527.0 / 1420))
        #expect(answer["split"] == .string("leave-one-out"))
        // The latest fifth by time, trained on the earlier scans.
        let latest = try CLI.run(["indoor", "evaluate", "--k", "3", "--method", "wknn", "--test-latest", "0.2", "--format", "json", "--db", db])
        guard case .object(let split) = try JSON.parse(latest.stdout), case .array(let rows)? = split["results"], case .object(let row)? = rows.first else {
            Issue.record("no results: \(latest.stdout) \(latest.stderr)"); return
        }
        #expect(row["tested"] == .integer(284) && row["trained"] == .integer(1136))
        let table = try CLI.run(["indoor", "evaluate", "--k", "1,10", "--method", "knn,gaussian", "--db", db])
        #expect(table.stdout.contains("unheard=learned-10,representation=dbm  scans         knn        1    1420   1.000  4.123  12.530  37.1 %"), "\(table.stdout)")
        // The default method on WMU: a p90 below every kNN setting's (3.162 cells at best, k 10).
        #expect(table.stdout.contains("unheard=learned-10,representation=dbm  scans         gaussian  10    1420   1.315  3.063  11.248  20.4 %"), "\(table.stdout)")
        let byColumn = try CLI.run(["indoor", "evaluate", "--test-where", "session=a", "--db", db])
        #expect(byColumn.status != 0 && byColumn.stderr.contains("the scans have no column 'session' (they have no other columns)"))
    }

    /// A malformed survey changes nothing and says where: the line and the column. Into a new
    /// `--db` it leaves no file at all, as `vltava import` (it left an empty 69,632-byte
    /// GeoPackage).
    @Test func aMalformedSurveyChangesNothing() throws {
        let folder = try Fixtures.temporaryDirectory("cli-indoor-bad")
        let db = folder.appendingPathComponent("bad.gpkg").path
        let csv = folder.appendingPathComponent("bad.csv")
        try "location,date,b1\nO02,10-18-2016 11:15:21,-70\nO03,10-18-2016 11:15:22,+12\n".write(to: csv, atomically: true, encoding: .utf8)
        let result = try CLI.run(["indoor", "import", csv.path, "--venue", "bad", "--grid", "letter-column", "--db", db])
        #expect(result.status != 0)
        #expect(result.stderr.contains("the survey bad.csv cannot be read; the store is unchanged:\n  - line 3, column 'b1': 12 dBm is out of range"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: db))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["bad.csv"])
    }

    /// A folder of per-point files as a real survey comes (x and y in centimetres in the name,
    /// times in Unix milliseconds, one reading a row), then more scans appended, then numeric
    /// labels read by a pattern. A name that does not match is an error naming the file.
    @Test func foldersAppendsAndNumericLabels() throws {
        let folder = try Fixtures.temporaryDirectory("cli-indoor-folder")
        let survey = folder.appendingPathComponent("survey")
        try FileManager.default.createDirectory(at: survey, withIntermediateDirectories: true)
        let files = [
            "120045_raw.csv": "timestamp,beacon,rssi\n1590519143117,ble1,-60\n1590519143217,ble2,-80\n1590519145117,ble1,-61\n",
            "300045_raw.csv": "timestamp,beacon,rssi\n1590519153117,ble1,-75\n1590519153217,ble2,-65\n",
            "300200_raw.csv": "timestamp,beacon,rssi\n1590519163117,ble2,-55\n1590519163217,ble3,-70\n",
        ]
        for (name, text) in files { try Data(text.utf8).write(to: survey.appendingPathComponent(name)) }
        let db = folder.appendingPathComponent("folder.gpkg").path
        let imported = try CLI.run(["indoor", "import", survey.path, "--venue", "floor2", "--name-pattern", "{x:3}{y:3}_raw.csv",
                                    "--position-scale", "0.01", "--time-unit", "ms", "--db", db])
        #expect(imported.status == 0, "\(imported.stderr)")
        // Two scans at 120045 (the window of 1 s splits them), one at each other point.
        #expect(imported.stdout.contains("4 scans (7 readings) of 3 beacons at 3 points"), "\(imported.stdout)")
        let located = try CLI.run(["indoor", "locate", "ble1=-75", "ble2=-65", "--method", "knn", "--k", "1", "--format", "json", "--db", db])
        let answer = try JSON.parse(located.stdout)
        #expect(answer["point"] == .string("300045_raw") && answer["x"]?.number == 3 && answer["y"]?.number == 0.45, "\(located.stdout)")
        // Appended: a new point and a new beacon; the old ones stay.
        let more = folder.appendingPathComponent("more.csv")
        try Data("x,y,time,ble3,ble4\n2,2,1590519173,-50,-60\n".utf8).write(to: more)
        let appended = try CLI.run(["indoor", "import", more.path, "--venue", "floor2", "--append", "--db", db])
        #expect(appended.status == 0 && appended.stdout.contains("5 scans (9 readings) of 4 beacons at 4 points"), "\(appended.stdout) \(appended.stderr)")
        let again = try CLI.run(["indoor", "import", more.path, "--venue", "nothere", "--append", "--db", db])
        #expect(again.status != 0 && again.stderr.contains("there is no venue 'nothere' to append to"))
        // A name that does not match: the file is named, and nothing is written.
        try Data("timestamp,beacon,rssi\n1,ble1,-60\n".utf8).write(to: survey.appendingPathComponent("notes.csv"))
        let bad = try CLI.run(["indoor", "import", survey.path, "--venue", "other", "--name-pattern", "{x:3}{y:3}_raw.csv", "--time-unit", "ms", "--db", db])
        #expect(bad.status != 0 && bad.stderr.contains("notes.csv: the name does not match the pattern '{x:3}{y:3}_raw.csv'"), "\(bad.stderr)")
        // Numeric labels ("000000" is x 0, y 0) by a pattern instead of a grid.
        let labelled = folder.appendingPathComponent("labels.csv")
        try Data("label,time,ble1\n000000,1590519143,-60\n010002,1590519144,-70\n".utf8).write(to: labelled)
        let numeric = try CLI.run(["indoor", "import", labelled.path, "--venue", "labels", "--label-pattern", "{x:3}{y:3}", "--db", db])
        #expect(numeric.status == 0 && numeric.stdout.contains("2 scans (2 readings) of 1 beacons at 2 points"), "\(numeric.stdout) \(numeric.stderr)")
    }

    /// calib2021 imported as its files come, on the globe (an origin and a rotation): LOCATE
    /// answers lon/lat, at the frame's distance and bearing from the origin.
    /// `--beacon-positions`: calib2021's anchors (ids 1–6) name the columns rssi_1–rssi_6; a file
    /// without x and y, or with a position that is not a number, is refused with nothing written.
    /// (GET /v1/venues answers the positions: MapPageTests.)
    @Test func beaconPositionsFromAFile() throws {
        let directory = try Fixtures.temporaryDirectory("cli-indoor-anchors")
        let db = directory.appendingPathComponent("anchors.gpkg").path
        let survey = Fixtures.path("indoor/calib2021/calibration_df.csv")
        let common = ["indoor", "import", survey, "--venue", "flat", "--beacon-columns", "rssi_*", "--time-unit", "ns", "--db", db]
        for (name, text, message) in [("no-y.csv", "id,x\n1,5.48\n", "needs a header with id, x and y"),
                                      ("bad-x.csv", "id,x,y\n1,5.48,2.41\n2,far,6.75\n", "line 3: expected 3 columns with numbers for x and y")] {
            let file = directory.appendingPathComponent(name).path
            try text.write(toFile: file, atomically: true, encoding: .utf8)
            let refused = try CLI.run(common + ["--beacon-positions", file])
            #expect(refused.status != 0 && refused.stderr.contains(message), "\(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: db))
        }
        let imported = try CLI.run(common + ["--beacon-positions", Fixtures.path("indoor/calib2021/anchors.csv")])
        #expect(imported.status == 0 && imported.stdout.contains("of 6 beacons"), "\(imported.stdout) \(imported.stderr)")
    }

    @Test func aGeoreferencedVenueEndToEnd() throws {
        let db = try Fixtures.temporaryDirectory("cli-indoor-calib").appendingPathComponent("calib.gpkg").path
        let imported = try CLI.run(["indoor", "import", Fixtures.path("indoor/calib2021/calibration_df.csv"), "--venue", "flat",
                                    "--beacon-columns", "rssi_*", "--time-unit", "ns", "--origin", "14.42,50.08", "--rotation", "30", "--db", db])
        #expect(imported.status == 0 && imported.stdout.contains("4104 scans (22277 readings) of 6 beacons at 2630 points"), "\(imported.stdout) \(imported.stderr)")
        let located = try CLI.run(["query", "LOCATE SCAN(rssi_1 -60, rssi_2 -55, rssi_3 -70, rssi_4 -58, rssi_5 -75, rssi_6 -66) IN flat",
                                   "--format", "json", "--db", db])
        #expect(located.status == 0, "\(located.stderr)")
        let answer = try JSON.parse(located.stdout)
        let (x, y) = (try #require(answer["x"]?.number), try #require(answer["y"]?.number))
        let (lon, lat) = (try #require(answer["lon"]?.number), try #require(answer["lat"]?.number))
        #expect(abs(Geodesy.haversine(lon1: 14.42, lat1: 50.08, lon2: lon, lat2: lat) - (x * x + y * y).squareRoot()) < 0.002)
        let bearing = Geodesy.bearing(lon1: 14.42, lat1: 50.08, lon2: lon, lat2: lat)
        let expected = (30 + atan2(x, y) * 180 / .pi + 360).truncatingRemainder(dividingBy: 360)
        #expect(abs(bearing - expected) < 0.01, "\(bearing) against \(expected)")
        // Chosen on the survey alone (4 blocks in its order) among kNN settings and stored as the
        // venue's: a locate that names no method then uses it.
        let chosen = try CLI.run(["indoor", "evaluate", "--folds", "4", "--method", "knn,wknn", "--k", "3,5", "--apply", "--db", db])
        #expect(chosen.status == 0 && chosen.stdout.contains("best by median, then p90: wknn k 5") && chosen.stdout.contains("model unheard=learned-10,representation=dbm,method=wknn,k=5"),
                "\(chosen.stdout) \(chosen.stderr)")
        let byVenue = try JSON.parse(try CLI.run(["query", "LOCATE SCAN(rssi_1 -60, rssi_2 -55) IN flat", "--format", "json", "--db", db]).stdout)
        #expect(byVenue["method"] == .string("wknn") && byVenue["k"] == .integer(5))
        let named = try JSON.parse(try CLI.run(["query", "LOCATE SCAN(rssi_1 -60, rssi_2 -55) IN flat METHOD gaussian", "--format", "json", "--db", db]).stdout)
        #expect(named["method"] == .string("gaussian") && named["k"] == .integer(10))
        let tuned = try CLI.run(["indoor", "evaluate", "--test-track", Fixtures.path("indoor/calib2021/test_robot_df.csv"), "--beacon-columns", "rssi_*",
                                 "--time-unit", "ns", "--apply", "--db", db])
        #expect(tuned.status != 0 && tuned.stderr.contains("not with --test-track"))
        // A track of the robot's test file through the CLI: a position per scan.
        let track = try CLI.run(["indoor", "track", Fixtures.path("indoor/calib2021/test_robot_df.csv"), "--beacon-columns", "rssi_*",
                                 "--time-unit", "ns", "--format", "json", "--db", db])
        #expect(track.status == 0, "\(track.stderr)")
        let positions = try JSON.parse(track.stdout)["positions"]?.items ?? []
        #expect(positions.count == 719 && positions.allSatisfy { $0["lon"]?.number != nil })
    }
}
