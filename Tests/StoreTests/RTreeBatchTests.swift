import Foundation
import Geometry
import SQLite
import Store
import TestSupport
import Testing

/// A write batch adds its rows' envelopes to the GeoPackage R-tree in one pass (RTreeInsert.swift)
/// rather than by the insert trigger per row. The tree must hold exactly what the trigger would
/// have put there, pass the module's own check, and keep its triggers for other writers.
@Suite(.validatesStores) struct RTreeBatchTests {
    static func square(_ x: Double, _ y: Double, _ size: Double) -> Geometry {
        .polygon(Polygon(rings: [[x, y, x + size, y, x + size, y + size, x, y + size, x, y]]))
    }

    /// Exactly the trigger's rows: a reference R-tree filled row by row through the module
    /// from the stored geometries of `spots`, with the trigger's own functions.
    static func makeReference(_ database: Database) throws {
        try database.execute("""
            CREATE VIRTUAL TABLE temp.reference USING rtree(id, minx, maxx, miny, maxy);
            INSERT INTO temp.reference SELECT fid, ST_MinX(geom), ST_MaxX(geom), ST_MinY(geom), ST_MaxY(geom) FROM spots
              WHERE geom NOT NULL AND NOT ST_IsEmpty(geom);
            """)
    }

    /// Rows in one of the layer's R-tree and the reference but not the other.
    static func differences(_ database: Database) throws -> SQLiteValue? {
        try database.scalar("""
            SELECT (SELECT count(*) FROM (SELECT * FROM rtree_spots_geom EXCEPT SELECT * FROM temp.reference))
                 + (SELECT count(*) FROM (SELECT * FROM temp.reference EXCEPT SELECT * FROM rtree_spots_geom))
            """)
    }

    /// A tree that already holds a fid the batch inserts (a row another tool left behind)
    /// takes the batch a row at a time through the virtual table, as the trigger would have:
    /// the stale row replaced.
    @Test func aTreeHoldingAnInsertedFidTakesTheBatchRowByRow() throws {
        let path = try Fixtures.temporaryDirectory("rtree-stale").appendingPathComponent("w.gpkg").path
        let store = try GeoPackage(path: path, mode: .readWrite)
        _ = try store.apply(WriteBatch([.create(LayerSchema(name: "spots", geometryType: "POINT", columns: []))]))
        func points(_ from: Int) -> WriteBatch {
            WriteBatch((from..<(from + 100)).map { i in .change(layer: "spots", .insert(Feature(geometry: .point(Point(lon: 14 + Double(i) / 1000, lat: 50))))) })
        }
        _ = try store.apply(points(0))
        try store.database.execute("INSERT INTO rtree_spots_geom VALUES (101, -1, -1, -1, -1)")
        _ = try store.apply(points(100))
        try Self.makeReference(store.database)
        #expect(try store.database.scalar("SELECT minx FROM rtree_spots_geom WHERE id = 101") == store.database.scalar("SELECT minx FROM temp.reference WHERE id = 101"))
        #expect(try store.database.scalar("SELECT minx FROM rtree_spots_geom WHERE id = 101") != .real(-1))
        #expect(try store.database.scalar("SELECT count(*) FROM rtree_spots_geom") == .integer(200))
        #expect(try Self.differences(store.database) == .integer(0))
        #expect(try store.database.scalar("SELECT rtreecheck('rtree_spots_geom')") == .text("ok"))
        try store.database.execute("DROP TABLE temp.reference")
    }

    @Test func batchesLeaveTheRTreeAsTheTriggerWouldHave() throws {
        let path = try Fixtures.temporaryDirectory("rtree-batches").appendingPathComponent("w.gpkg").path
        let store = try GeoPackage(path: path, mode: .readWrite)
        _ = try store.apply(WriteBatch([.create(LayerSchema(name: "spots", geometryType: "GEOMETRY", columns: [ColumnInfo(name: "n", type: .integer)]))]))
        let database = store.database
        func triggers() throws -> [String] {
            let statement = try database.prepare("SELECT name || ': ' || sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
            var all: [String] = []
            while try statement.step() { all.append(statement.text(0) ?? "") }
            return all
        }
        let before = try triggers()
        #expect(before.count == 6)

        var random = SplitMix(state: 31)
        func feature(_ n: Int) -> Feature {
            let x = Double.random(in: 14.2...14.7, using: &random), y = Double.random(in: 49.9...50.2, using: &random)
            let geometry = n % 3 == 0 ? Self.square(x, y, Double.random(in: 0.0001...0.01, using: &random)) : .point(Point(lon: x, lat: y))
            return Feature(geometry: geometry, properties: Attributes([("n", .integer(Int64(n)))]))
        }
        // Six batches of 700: the root, a leaf of 51 cells at first, splits and the tree grows
        // two levels.
        var n = 0
        for _ in 0..<6 {
            let applied = try store.apply(WriteBatch((0..<700).map { _ in n += 1; return .change(layer: "spots", .insert(feature(n))) }))
            #expect(applied.changes.count == 700)
        }
        // Inserts, then in the same batch geometry updates, deletes and attribute updates of
        // some of them and of older rows, then more inserts: the tree is whole before each
        // update and delete, whose triggers maintain it.
        var mixed: [WriteOperation] = (0..<100).map { _ in n += 1; return .change(layer: "spots", .insert(feature(n))) }
        for fid in Int64(4201)...4210 { mixed.append(.change(layer: "spots", .update(fid: fid, Feature(geometry: .point(Point(lon: 14.0, lat: 50.0 + Double(fid - 4200) / 100)))))) }
        for fid in Int64(4211)...4215 { mixed.append(.change(layer: "spots", .delete(fid: fid))) }
        for fid in Int64(4216)...4220 { mixed.append(.change(layer: "spots", .update(fid: fid, Feature(geometry: nil, properties: Attributes([("n", .integer(-1))]))))) }
        for fid in Int64(1)...20 { mixed.append(.change(layer: "spots", .replace(fid: fid, feature(-Int(fid))))) }
        for fid in Int64(21)...30 { mixed.append(.change(layer: "spots", .delete(fid: fid))) }
        mixed += (0..<100).map { _ in n += 1; return .change(layer: "spots", .insert(feature(n))) }
        let schema = try database.scalar("PRAGMA schema_version")
        _ = try store.apply(WriteBatch(mixed))
        #expect(try database.scalar("PRAGMA schema_version") != schema)  // its trigger dropped and made again
        // A few inserts go through the trigger: the schema is not touched, so the connection's
        // statements stay prepared.
        let few = try database.scalar("PRAGMA schema_version")
        _ = try store.apply(WriteBatch((0..<5).map { _ in n += 1; return .change(layer: "spots", .insert(feature(n))) }))
        #expect(try database.scalar("PRAGMA schema_version") == few)
        // A refused batch (its last operation names no feature) leaves the file as it was,
        // the dropped trigger included.
        let count = try database.scalar("SELECT count(*) FROM rtree_spots_geom")
        #expect(throws: StoreError.self) {
            try store.apply(WriteBatch((0..<300).map { _ in .change(layer: "spots", .insert(feature(0))) } + [.change(layer: "spots", .delete(fid: 999_999))]))
        }
        #expect(try database.scalar("SELECT count(*) FROM rtree_spots_geom") == count)
        #expect(count == .integer(4200 + 200 - 5 - 10 + 5))
        #expect(try triggers() == before)

        try Self.makeReference(database)
        #expect(try database.scalar("SELECT count(*) FROM temp.reference") == count)
        #expect(try Self.differences(database) == .integer(0))
        #expect(try database.scalar("SELECT rtreecheck('rtree_spots_geom')") == .text("ok"))
        #expect(try database.scalar("PRAGMA integrity_check") == .text("ok"))
        #expect(try database.scalar("SELECT max(length(data)) FROM rtree_spots_geom_node") == database.scalar("SELECT min(length(data)) FROM rtree_spots_geom_node"))
        // Windows searched through the tree find what the reference finds.
        for _ in 0..<200 {
            let x = Double.random(in: 14.1...14.7, using: &random), y = Double.random(in: 49.85...50.2, using: &random)
            let box: [SQLiteValue] = [.real(x + 0.03), .real(x), .real(y + 0.03), .real(y)]
            func ids(_ table: String) throws -> [Int64] {
                let statement = try database.prepare("SELECT id FROM \(table) WHERE minx <= ? AND maxx >= ? AND miny <= ? AND maxy >= ? ORDER BY id")
                try statement.bind(box)
                var found: [Int64] = []
                while try statement.step() { found.append(statement.int64(0)) }
                return found
            }
            #expect(try ids("rtree_spots_geom") == ids("temp.reference"))
        }
        try database.execute("DROP TABLE temp.reference")
        // Another writer's row (as QGIS would insert it) still reaches the index by the trigger.
        try database.prepare("INSERT INTO spots (fid, geom) VALUES (100000, ?)").run([.blob(RawStoreEdits.geoPackageBlob(WKB.encode(.point(Point(lon: 14.5, lat: 50.5)))))])
        #expect(try database.scalar("SELECT minx FROM rtree_spots_geom WHERE id = 100000") == .real(14.5))
        #expect(try database.scalar("SELECT rtreecheck('rtree_spots_geom')") == .text("ok"))
    }
}
