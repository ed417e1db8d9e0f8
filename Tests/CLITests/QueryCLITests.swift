import Foundation
import Geometry
import Support
import TestSupport
import Testing

/// `vltava query` and `vltava repl` as a user runs them, on a store built by the demo script.
@Suite(.serialized, .validatesStores) struct QueryCLITests {
    /// The demo store, built once through `scripts/build-demo-store.sh` with the built binary.
    static let store: Result<String, any Error> = Result {
        let path = try Fixtures.temporaryDirectory("query-cli").appendingPathComponent("demo.gpkg").path
        let result = try CLI.run([Fixtures.root.appendingPathComponent("scripts/build-demo-store.sh").path, path, CLI.binary.path],
                                 executable: URL(fileURLWithPath: "/bin/bash"))
        guard result.status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: result.stderr]) }
        return path
    }

    @Test func queryPrintsATableAndJSON() throws {
        let db = try Self.store.get()
        let table = try CLI.run(["query", "FIND districts CONTAINING POINT(14.4208 50.0880) RETURN NAZEV_MC, KOD_MC", "--db", db])
        #expect(table.status == 0, "\(table.stderr)")
        #expect(table.stdout == "NAZEV_MC  KOD_MC\n--------  ------\nPraha 1   500054\n(1 row)\n")
        let json = try CLI.run(["query", "FIND stations NEAREST 1 TO POINT(14.42076 50.08804) RETURN code, distance_m", "--format", "json", "--db", db])
        guard case .object(let answer) = try JSON.parse(json.stdout), case .array(let rows)? = answer["rows"], case .object(let row)? = rows.first else {
            Issue.record("not the JSON answer: \(json.stdout)"); return
        }
        #expect(row["code"] == .string("AREPA"))
        #expect(row["distance_m"] == .double(603.576))
    }

    /// `--format csv` prints RFC 4180 CSV; a warning goes to stderr, the answer stays on stdout.
    @Test func queryPrintsCSVAndWarnings() throws {
        let db = try Self.store.get()
        let csv = try CLI.run(["query", "FIND animals RETURN class, COUNT(*) GROUP BY class HAVING COUNT(*) >= 100 ORDER BY COUNT(*) DESC", "--format", "csv", "--db", db])
        #expect(csv.status == 0, "\(csv.stderr)")
        #expect(csv.stdout == "class,count\r\nPtáci,272\r\nSavci,148\r\nPlazi,112\r\n")
        let swapped = try CLI.run(["query", "FIND stations NEAREST 1 TO POINT(50.09 14.42) RETURN code", "--db", db])
        #expect(swapped.status == 0 && swapped.stdout == "code\n-----\nACHOA\n(1 row)\n")
        #expect(swapped.stderr.hasPrefix("warning: POINT(50.09 14.42) lies 5078 km outside the data"))
        let two = try CLI.run(["query", "SHOW LAYERS; SHOW LAYERS", "--format", "csv", "--db", db])
        #expect(two.status == 1 && two.stderr.contains("CSV holds one table, and the text has 2 statements"))
    }

    @Test func queryFileRunsEveryStatementAndStopsAtAnError() throws {
        let db = try Self.store.get()
        let dir = try Fixtures.temporaryDirectory("query-file")
        let file = dir.appendingPathComponent("zoo.vq")
        try """
            -- where are the gorillas, and who lives with them?
            FIND pens, pavilions LINKED TO (animals WHERE name ~ 'gorila') RETURN layer, name
            FIND animals LINKED TO (pavilions WHERE name = 'Pavilon goril')
              ORDER BY name
              RETURN name;
            """.write(to: file, atomically: true, encoding: .utf8)
        let ok = try CLI.run(["query", "--file", file.path, "--db", db])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(ok.stdout.contains("pavilions  Pavilon goril"))
        #expect(ok.stdout.contains("Gorila nížinná\nPásovec kulovitý\nTamarín bělovousý\n(3 rows)"))

        try "SHOW LAYERS\nFIND pens NEAREST 1 TO POINT(14.4 150)\n".write(to: file, atomically: true, encoding: .utf8)
        let bad = try CLI.run(["query", "--file", file.path, "--db", db])
        #expect(bad.status == 1)
        #expect(bad.stdout.isEmpty)
        #expect(bad.stderr.hasPrefix("error: latitude 150 is outside -90…90 (\(file.path):line 2, column 35)"))
    }

    /// A database that cannot be reached is named, without its password, on one line. (Its
    /// category is `unavailable`; the exit status stays 1 for now: ArgumentParser's entry,
    /// which the REPL needs for its terminal signals, maps only `ExitCode`s.)
    @Test func anUnreachableDatabaseIsNamed() throws {
        // Port 1 on loopback: nothing listens, the connection is refused at once.
        let down = try CLI.run(["query", "SHOW LAYERS", "--db", "postgresql://vltava@127.0.0.1:1/none"])
        #expect(down.status == 1, "\(down.stderr)")
        #expect(down.stderr.contains("the database at postgresql://vltava@127.0.0.1:1/none cannot be reached"), "\(down.stderr)")
    }
}
