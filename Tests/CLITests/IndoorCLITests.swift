import Foundation
import Geometry
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
        let located = try CLI.run(["indoor", "locate", "b3002=-76", "b3005=-71", "b3008=-80", "--k", "5", "--format", "json", "--db", db])
        #expect(located.status == 0, "\(located.stderr)")
        let answer = try JSON.parse(located.stdout)
        guard case .object(let object) = answer else { Issue.record("not an object"); return }
        #expect(object["point"] == .string("I07") && object["x"]?.number == 9.442 && object["y"]?.number == 6.646)
        let table = try CLI.run(["indoor", "locate", "b3002=-76", "b3005=-71", "b3008=-80", "--k", "5", "--db", db])
        #expect(table.stdout.hasPrefix("wmu_library, floor 1: x 9.442, y 6.646"), "\(table.stdout)")
        // The same store answers LOCATE through `vltava query`.
        let query = try CLI.run(["query", "LOCATE SCAN(b3002 -76, b3005 -71, b3008 -80) IN wmu_library K 5", "--format", "json", "--db", db])
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
        let table = try CLI.run(["indoor", "evaluate", "--db", db])
        #expect(table.stdout.contains("scans         knn     1    1420   1.000  4.123  12.530  37.1 %"), "\(table.stdout)")
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
}
