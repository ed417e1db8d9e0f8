import Engine
import Foundation
import Geometry
import QueryLanguage
import SQLite
import Support
import TestSupport
import Testing

/// INSERT, UPDATE and DELETE: the features they select are the ones SQLite selects with the same
/// condition on the same file (the reference, read before the write), they write one batch,
/// and what they wrote is what the store holds.
@Suite(.validatesStores) struct WriteStatementTests {
    static func demoCopy(_ label: String) throws -> String {
        let path = try Fixtures.temporaryDirectory(label).appendingPathComponent("demo.gpkg").path
        try DemoFixtureStore.build(at: path)
        return path
    }

    func rows(_ result: QueryResult) -> [JSONObject] {
        guard case .object(let answer) = result.json(), case .array(let rows)? = answer["rows"] else { return [] }
        return rows.compactMap { if case .object(let row) = $0 { row } else { nil } }
    }

    func fids(_ sql: String, _ path: String) throws -> [Int64] {
        let statement = try Database(path: path, mode: .readOnly).prepare(sql)
        var fids: [Int64] = []
        while try statement.step() { fids.append(statement.int64(0)) }
        return fids
    }

    /// The feed's changes to features (the demo's layers' imports come first, with no fid).
    func feed(_ path: String) throws -> Int64 {
        let database = try Database(path: path, mode: .readOnly)
        guard try database.scalar("SELECT 1 FROM sqlite_master WHERE name = 'vltava_changes'") != nil else { return 0 }
        if case .integer(let n)? = try database.scalar("SELECT count(*) FROM vltava_changes WHERE fid IS NOT NULL") { return n }
        return -1
    }

    @Test func updateAndDeleteChangeTheFeaturesSQLiteSelects() throws {
        let path = try Self.demoCopy("query-writes")
        let engine = try Engine(storePath: path)
        let condition = "CATEGORY = 'RES' AND Shape_Area > 0.0000002"
        let selected = try fids("SELECT fid FROM parking WHERE \(condition) ORDER BY fid", path)
        #expect(selected.count > 100 && selected.count < 1548)

        let update = try #require(try Query.run("UPDATE parking SET POSKYT = $1, OBJECTID = 7 WHERE \(condition)", ["Vltava test"], on: engine).first)
        #expect(update.columns == ["sequence", "layer", "fid", "change"])
        let changed = rows(update)
        #expect(changed.map { $0["fid"]?.number.map { Int64($0) } } == selected.map { Optional($0) })
        let imported = Int(DemoFixtureStore.importedLayers)
        #expect(changed.map { $0["sequence"]?.number } == (1...selected.count).map { Optional(Double($0 + imported)) })
        #expect(changed.allSatisfy { $0["change"] == .string("updated") && $0["layer"] == .string("parking") })
        // The store holds it, and the next read sees it.
        #expect(try fids("SELECT fid FROM parking WHERE POSKYT = 'Vltava test' AND OBJECTID = 7 ORDER BY fid", path) == selected)
        let seen = rows(try #require(try Query.run("FIND parking WHERE POSKYT = 'Vltava test' ORDER BY fid RETURN fid", on: engine).first))
        #expect(seen.count == selected.count)

        let doomed = try fids("SELECT fid FROM parking WHERE CATEGORY = 'VIS' ORDER BY fid", path)
        #expect(!doomed.isEmpty)
        let delete = rows(try #require(try Query.run("DELETE FROM parking WHERE CATEGORY = 'VIS'", on: engine).first))
        #expect(delete.map { $0["fid"]?.number.map { Int64($0) } } == doomed.map { Optional($0) })
        #expect(try fids("SELECT count(*) FROM parking", path) == [Int64(1548 - doomed.count)])
        let counted = rows(try #require(try Query.run("FIND parking RETURN COUNT(*)", on: engine).first))
        #expect(counted.first?["count"]?.number == Double(1548 - doomed.count))
        #expect(try feed(path) == Int64(selected.count + doomed.count))

        // Nothing matches: nothing is written, and the feed does not move.
        let none = try #require(try Query.run("DELETE FROM parking WHERE CATEGORY = 'VIS'", on: engine).first)
        #expect(none.count == 0)
        #expect(try feed(path) == Int64(selected.count + doomed.count))
    }

    @Test func insertWithBoundValuesIsFoundAtOnceAndABadRowWritesNothing() throws {
        let path = try Self.demoCopy("query-insert")
        let engine = try Engine(storePath: path)
        let here = Point(lon: 14.4378, lat: 50.1031)
        // A script: the FIND after the INSERT sees it.
        let results = try Query.run("""
            INSERT INTO stations (code, name, geom) VALUES ($1, $2, $3), ('TEST2', 'Druhá', GEOMETRY('POINT(14.44 50.104)'))
            FIND stations NEAREST 2 TO $3 RETURN code, name, distance_m
            """, ["TEST1", "Holešovice – tržnice", here], on: engine)
        #expect(results.count == 2)
        #expect(rows(results[0]).map { $0["fid"] } == [.integer(18), .integer(19)])
        let nearest = rows(results[1])
        #expect(nearest.first?["code"] == .string("TEST1") && nearest.first?["distance_m"]?.number == 0)
        #expect(nearest.last?["code"] == .string("TEST2"))
        // 14.44 50.104 from 14.4378 50.1031: haversine on R = 6,371,008.8 m, worked out here.
        let r = 6_371_008.8, rad = Double.pi / 180
        let h = pow(sin((50.104 - 50.1031) * rad / 2), 2) + cos(50.1031 * rad) * cos(50.104 * rad) * pow(sin((14.44 - 14.4378) * rad / 2), 2)
        #expect(abs((nearest.last?["distance_m"]?.number ?? 0) - 2 * r * asin(h.squareRoot())) < 0.001)

        // The second row's polygon is not a station's point: the whole batch fails, naming it.
        let before = try feed(path)
        #expect {
            try Query.run("INSERT INTO stations (code, geom) VALUES ('OK', POINT(14.4 50.1)), ('BAD', GEOMETRY('POLYGON((14.4 50.1, 14.5 50.1, 14.5 50.2, 14.4 50.1))'))", on: engine)
        } throws: { error in
            (error as? QueryError)?.message.contains("operation 2 of the batch: layer 'stations' holds POINT geometries") == true
        }
        #expect(try feed(path) == before)
        #expect(try fids("SELECT count(*) FROM stations WHERE code IN ('OK', 'BAD')", path) == [0])
    }

    @Test func explainPlansAWriteWithoutMakingIt() throws {
        let path = try Self.demoCopy("query-explain")
        let engine = try Engine(storePath: path)
        let plan = try #require(try Query.run("EXPLAIN DELETE FROM stations WHERE code = 'ABREA'", on: engine).first)
        guard case .object(let answer) = plan.json(), case .array(let lines)? = answer["plan"] else { Issue.record("no plan"); return }
        #expect(lines == [.string("1. stations: the WHERE tested on each of its 17 features (no index): 1 selected"),
                          .string("2. delete 1 feature: one batch, one transaction"), .string("not run: EXPLAIN does not write")])
        #expect(try feed(path) == 0)
        #expect(try fids("SELECT count(*) FROM stations", path) == [17])
    }

    @Test func writesAreRefusedOnASnapshotAndCheckedBeforeTheyRun() throws {
        let path = try Self.demoCopy("query-refused")
        let snapshot = try Snapshot.load(storePath: path)
        #expect {
            try Query.run("DELETE FROM stations WHERE fid = 1", on: snapshot)
        } throws: { error in (error as? QueryError)?.code == "read_only" }
        #expect(try fids("SELECT count(*) FROM stations", path) == [17])

        let engine = try Engine(storePath: path)
        func code(_ text: String, _ parameters: [any QueryArgument] = []) -> String? {
            do { _ = try Query.run(text, parameters, on: engine); return nil } catch { return error.code }
        }
        #expect(code("UPDATE stations SET nme = 'x' WHERE fid = 1") == "unknown_field")
        #expect(code("UPDATE stations SET fid = 3 WHERE fid = 1") == "invalid_value")
        #expect(code("UPDATE stations SET geom = 'x' WHERE fid = 1") == "invalid_value")
        #expect(code("INSERT INTO stations (code, geom) VALUES ('X')") == "invalid_value")
        #expect(code("INSERT INTO stations (code, code) VALUES ('X', 'Y')") == "invalid_value")
        #expect(code("INSERT INTO stations (code, geom) VALUES ('X', GEOMETRY('POINT(14.4'))") == "invalid_value")
        #expect(code("INSERT INTO stations (code, geom) VALUES ('X', GEOMETRY($1))", [3]) == "parameter_type")
        #expect(code("DELETE FROM stations") == "unexpected_end")
        #expect(code("DELETE FROM nowhere WHERE fid = 1") == "unknown_layer")
        #expect(try feed(path) == 0)
        #expect(try Query.prepare("UPDATE stations SET name = $1 WHERE fid = $2").parameterCount == 2)
        #expect(try Query.writtenLayers("FIND stations; UPDATE Stations SET name = 'x' WHERE fid = 1; EXPLAIN DELETE FROM pens WHERE fid = 2") == ["Stations"])
    }
}
