// Writes on the PostGIS store, held to the GeoPackage store's (the reference): the same batch on
// both answers the same afterwards; a bad batch changes nothing; psql's own UPDATE appears in
// the change feed.

import Engine
import Foundation
import Geometry
@testable import PostGIS
import QueryLanguage
import Store
import Support
import TestSupport
import Testing
import Vltava

extension PostGISStoreTests {
    static func writtenPoint(_ lon: Double, _ lat: Double, _ properties: [(String, AttributeValue)], id: Int64? = nil) -> Feature {
        var attributes = Attributes()
        for (name, value) in properties { attributes[name] = value }
        return Feature(id: id.map { .integer($0) }, geometry: .point(Point(lon: lon, lat: lat)), properties: attributes)
    }

    /// Every kind of change, on layers loaded in memory and on a time series kept in PostgreSQL.
    static let everyKindOfChange = WriteBatch([
        .create(LayerSchema(name: "stages", geometryType: "POINT", columns: [ColumnInfo(name: "name", type: .text), ColumnInfo(name: "capacity", type: .integer)])),
        .change(layer: "stages", .insert(writtenPoint(14.4378, 50.1031, [("name", .text("Main stage")), ("capacity", .integer(5000))]))),
        .change(layer: "stations", .insert(writtenPoint(14.4205, 50.0875, [("code", .text("ANEWA")), ("name", .text("Praha 1-Nová"))]))),
        .change(layer: "stations", .insert(writtenPoint(14.4300, 50.0900, [("code", .text("ANEWB"))], id: 90))),
        .change(layer: "stations", .update(fid: 3, Feature(geometry: nil, properties: Attributes([("name", .text("Přejmenovaná"))])))),
        .change(layer: "stations", .upsert(keys: ["code"], writtenPoint(14.3802, 50.0844, [("code", .text("ABREA")), ("name", .text("Břevnov"))]))),
        .change(layer: "parking", .delete(fid: 7)),
        .change(layer: "districts", .replace(fid: 20, Feature(geometry: .polygon(Polygon(rings: [[14.40, 50.08, 14.44, 50.08, 14.44, 50.10, 14.40, 50.10, 14.40, 50.08]])),
            properties: Attributes([("NAZEV_MC", .text("Praha 1")), ("KOD_MC", .integer(500054))])))),
        .change(layer: "observations", .upsert(keys: ["code", "interval_start"], Feature(geometry: nil, properties: Attributes([
            ("code", .text("AREPA")), ("interval_start", .text("2019-04-16T21:00:00Z")), ("interval_end", .text("2019-04-16T22:00:00Z")),
            ("aqi", .integer(4)), ("no2", .real(71.4))])))),
    ])

    static let afterTheBatch = [
        "FIND stations ORDER BY fid RETURN fid, code, name, WKT(geom)",
        "FIND stages RETURN fid, name, capacity",
        "FIND districts CONTAINING POINT(14.43 50.095) RETURN fid, NAZEV_MC",
        "FIND parking RETURN COUNT(*)",
        "FIND stations WHERE code = 'AREPA' RETURN LATEST(aqi), LATEST(no2), OBSERVED_AT",
    ]

    @Test func aBatchAnswersAsOnTheGeoPackageStore() async throws {
        let url = try PushedStore.database("writes_batch")
        let cluster = try PushedStore.pushed.get().cluster
        let postgis = try StoreLocation.engine(url)
        let copy = try Fixtures.temporaryDirectory("postgis-writes").appendingPathComponent("reference.gpkg").path
        try FileManager.default.copyItem(atPath: try PushedStore.gpkg.get(), toPath: copy)
        let reference = try Engine(storePath: copy)

        let written = try postgis.write(Self.everyKindOfChange)
        let expected = try reference.write(Self.everyKindOfChange)
        let pushed = DemoFixtureStore.importedLayers  // the push's layers, numbered first
        #expect(written.changes.map(\.sequence) == Array(pushed + 1...pushed + 9))
        #expect(written.changes.map(\.kind) == expected.changes.map(\.kind))
        #expect(written.changes.map(\.fid) == expected.changes.map(\.fid))
        #expect(written.changes.map(\.kind) == [.created, .inserted, .inserted, .inserted, .updated, .replaced, .deleted, .replaced, .inserted])
        for statement in Self.afterTheBatch {
            #expect(answer(statement, on: postgis.snapshot) == answer(statement, on: reference.snapshot), "\(statement)")
        }
        // What PostgreSQL itself holds, read with psql.
        #expect(try cluster.psql("SELECT count(*) FROM stations", database: "writes_batch").trimmingCharacters(in: .whitespacesAndNewlines) == "19")
        #expect(try cluster.psql("SELECT name FROM stations WHERE fid = 3", database: "writes_batch").trimmingCharacters(in: .whitespacesAndNewlines) == "Přejmenovaná")
        #expect(try cluster.psql("SELECT max(seq) FROM vltava_changes", database: "writes_batch").trimmingCharacters(in: .whitespacesAndNewlines) == "\(pushed + 9)")
        // A fresh load from the database answers the same: nothing lives only in the snapshot.
        let fresh = try StoreLocation.snapshot(url)
        for statement in Self.afterTheBatch {
            #expect(answer(statement, on: fresh) == answer(statement, on: reference.snapshot), "\(statement)")
        }
        // The language writes through the same path.
        let inserted = try Query.run("INSERT INTO stages (name, geom) VALUES ($1, $2)", ["Tent", Point(lon: 14.441, lat: 50.105)], on: postgis)
        #expect(inserted.first?.count == 1)
        #expect(answer("FIND stages ORDER BY fid RETURN name", on: postgis.snapshot).contains(#"{"name":"Tent"}"#))
    }

    @Test func aBadBatchChangesNothingAndPsqlsChangesAreInTheFeed() async throws {
        let url = try PushedStore.database("writes_feed")
        let cluster = try PushedStore.pushed.get().cluster
        let engine = try StoreLocation.engine(url)
        let before = try cluster.psql("SELECT count(*) FROM stations", database: "writes_feed")
        #expect {
            try engine.write(WriteBatch([
                .change(layer: "stations", .insert(Self.writtenPoint(14.42, 50.08, [("code", .text("OK"))]))),
                .change(layer: "stations", .insert(Feature(geometry: .polygon(Polygon(rings: [[14.4, 50.0, 14.5, 50.0, 14.5, 50.1, 14.4, 50.0]])))))]))
        } throws: { error in
            guard case .write(let code, _, let message) = error as? EngineError else { return false }
            return code == "bad_write" && message.contains("operation 2 of the batch: layer 'stations' holds POINT geometries")
        }
        #expect(try cluster.psql("SELECT count(*) FROM stations", database: "writes_feed") == before)
        let pushed = DemoFixtureStore.importedLayers
        #expect(try engine.changes(since: pushed, limit: 10).isEmpty)

        // Another program's change, in psql: numbered by the row trigger, within a second.
        _ = try engine.write(WriteBatch([.change(layer: "stations", .update(fid: 1, Feature(geometry: nil, properties: Attributes([("owner", .text("ČHMÚ"))]))))]))
        _ = try cluster.psql("UPDATE stations SET name = 'psql' WHERE code = 'AREPA'", database: "writes_feed")
        let fid = try cluster.psql("SELECT fid FROM stations WHERE code = 'AREPA'", database: "writes_feed").trimmingCharacters(in: .whitespacesAndNewlines)
        let started = Date()
        var feed: [Change] = []
        while Date().timeIntervalSince(started) < 1 {
            feed = try engine.changes(since: pushed, limit: 10)
            if feed.count == 2 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(feed.map(\.sequence) == [pushed + 1, pushed + 2])
        #expect(feed.map(\.kind) == [.updated, .updated] && feed.map(\.layer) == ["stations", "stations"])
        #expect(feed.last?.fid.map(String.init) == fid)
        // A server follows by NOTIFY (PostGISSource.watchChanges, tested in PostGISTests); a reload sees psql's name.
        try engine.reload()
        #expect(answer("FIND stations WHERE code = 'AREPA' RETURN name", on: engine.snapshot).contains(#""name":"psql""#))
    }

    /// Two processes on one database (two replicas): what one writes, and what psql changes,
    /// the other catches up with through the feed, rebuilding only the changed layers, and
    /// then answers as the writer does and as a fresh load does. A layer created needs a
    /// reload, and says so.
    @Test func aReplicaCatchesUpWithAnotherWriter() async throws {
        let url = try PushedStore.database("writes_replicas")
        let cluster = try PushedStore.pushed.get().cluster
        let writer = try StoreLocation.engine(url)
        let replica = try StoreLocation.engine(url)
        let (districtsBefore, pensBefore) = (try replica.snapshot.layer("districts"), try replica.snapshot.layer("pens"))
        var changes = Self.everyKindOfChange
        changes.operations.removeAll { if case .change(let layer, _) = $0 { layer == "stages" } else { true } }
        try writer.write(changes)
        // A write's own changes are already in the writer's snapshot: nothing to catch up.
        let writerSnapshot = writer.snapshot
        #expect(try writer.catchUp())
        #expect(writer.snapshot === writerSnapshot)

        #expect(try replica.catchUp())
        _ = try cluster.psql("UPDATE stations SET name = 'psql' WHERE code = 'AREPA'", database: "writes_replicas")
        #expect(try replica.catchUp())
        #expect(try writer.catchUp())
        let fresh = try StoreLocation.snapshot(url)
        for statement in Self.afterTheBatch.filter({ !$0.contains("stages") }) + ["FIND stations WHERE code = 'AREPA' RETURN name"] {
            let expected = answer(statement, on: fresh)
            #expect(answer(statement, on: replica.snapshot) == expected, "\(statement)")
            #expect(answer(statement, on: writer.snapshot) == expected, "\(statement)")
        }
        #expect(answer("FIND stations WHERE code = 'AREPA' RETURN name", on: replica.snapshot).contains(#""name":"psql""#))
        // Only the changed layers were rebuilt: an unchanged one is the very same object.
        #expect(try replica.snapshot.layer("pens") === pensBefore)
        #expect(try replica.snapshot.layer("districts") !== districtsBefore)

        // A new layer is not in the replica's snapshot: catching up refuses, a reload brings it.
        try writer.write(WriteBatch([Self.everyKindOfChange.operations[0], Self.everyKindOfChange.operations[1]]))
        #expect(try replica.catchUp() == false)
        try replica.reload()
        #expect(answer("FIND stages RETURN name", on: replica.snapshot).contains("Main stage"))
        #expect(try replica.catchUp())
    }

    /// Servers starting together on one database each install the feed's function and
    /// triggers: serialised, so none fails (unserialised, PostgreSQL refused one of two with
    /// "tuple concurrently updated" in about half the starts, and that server never got ready).
    @Test func writersOpeningTogetherAllOpen() throws {
        let url = try PushedStore.database("writes_together")
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 6) { _ in
            do {
                _ = try PostGISSource(database: try PostGISDatabase(url)).openWriter()
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        #expect(try PostGISSource(database: try PostGISDatabase(url)).lastSequence() == DemoFixtureStore.importedLayers)
    }
}
