// The GeoPackage R-tree spatial index extension (GeoPackage 1.3, F.3): every feature table
// gets `rtree_<table>_<column>`, an SQLite R*Tree of its envelopes, kept in step by triggers,
// and a `gpkg_rtree_index` row in gpkg_extensions. QGIS and GDAL use it (`HasSpatialIndex` is
// 1); Vltava itself builds its own indexes at load and does not read it.
//
// The triggers call the GeoPackage SQL functions ST_IsEmpty, ST_MinX… that GDAL and QGIS
// register, and that the SQLite module defines on every connection (`GeoPackageFunctions`), so
// a feature row can be updated. A layer's write fills the index in one pass after inserting the
// rows (packed, RTreeBulkLoad.swift), then creates the triggers; a rename rebuilds the index
// under the new name.

import Geometry
import SQLite

extension GeoPackage {
    static func rtreeName(_ table: String, _ column: String) -> String { "rtree_\(table)_\(column)" }

    /// The geometry column of a feature table, from gpkg_geometry_columns.
    func geometryColumnName(of table: String) throws -> String? {
        guard try database.hasTable("gpkg_geometry_columns") else { return nil }
        if case .text(let column)? = try database.scalar("SELECT column_name FROM gpkg_geometry_columns WHERE table_name = ?", .text(table)) {
            return column
        }
        return nil
    }

    /// Creates the R-tree of `table.column` holding `boxes` (fid and envelope of every
    /// non-empty geometry), its six triggers, and its gpkg_extensions row.
    func createSpatialIndex(table: String, column: String, fidColumn: String, boxes: [(fid: Int64, box: BBox)]) throws {
        var cells = boxes.map { RTreeCell(id: $0.fid, box: $0.box) }
        try createSpatialIndex(table: table, column: column, fidColumn: fidColumn, cells: &cells)
    }

    /// As above, from the cells (fid and envelope) an import collected; they are consumed.
    func createSpatialIndex(table: String, column: String, fidColumn: String, cells: inout [RTreeCell]) throws {
        let rtree = GeoPackage.rtreeName(table, column)
        try database.execute("CREATE VIRTUAL TABLE \(quoted(rtree)) USING rtree(id, minx, maxx, miny, maxy)")
        try bulkLoadRTree(rtree, cells: &cells)
        try createSpatialIndexTriggers(table: table, column: column, fidColumn: fidColumn)
    }

    /// The R-tree's six triggers (made after the bulk fill) and its gpkg_extensions row.
    private func createSpatialIndexTriggers(table: String, column: String, fidColumn: String) throws {
        let rtree = quoted(GeoPackage.rtreeName(table, column))
        let t = quoted(table), c = quoted(column), i = quoted(fidColumn)
        let triggerPrefix = GeoPackage.rtreeName(table, column)
        func trigger(_ suffix: String) -> String { quoted("\(triggerPrefix)_\(suffix)") }
        let insertBox = "INSERT OR REPLACE INTO \(rtree) VALUES (NEW.\(i), ST_MinX(NEW.\(c)), ST_MaxX(NEW.\(c)), ST_MinY(NEW.\(c)), ST_MaxY(NEW.\(c)));"
        let nonEmpty = "(NEW.\(c) NOTNULL AND NOT ST_IsEmpty(NEW.\(c)))"
        let empty = "(NEW.\(c) ISNULL OR ST_IsEmpty(NEW.\(c)))"
        // The spec's own triggers, word for word but for the names.
        try database.execute("""
            CREATE TRIGGER \(trigger("insert")) AFTER INSERT ON \(t) WHEN \(nonEmpty)
            BEGIN \(insertBox) END;
            CREATE TRIGGER \(trigger("update1")) AFTER UPDATE OF \(c) ON \(t) WHEN OLD.\(i) = NEW.\(i) AND \(nonEmpty)
            BEGIN \(insertBox) END;
            CREATE TRIGGER \(trigger("update2")) AFTER UPDATE OF \(c) ON \(t) WHEN OLD.\(i) = NEW.\(i) AND \(empty)
            BEGIN DELETE FROM \(rtree) WHERE id = OLD.\(i); END;
            CREATE TRIGGER \(trigger("update3")) AFTER UPDATE ON \(t) WHEN OLD.\(i) != NEW.\(i) AND \(nonEmpty)
            BEGIN DELETE FROM \(rtree) WHERE id = OLD.\(i); \(insertBox) END;
            CREATE TRIGGER \(trigger("update4")) AFTER UPDATE ON \(t) WHEN OLD.\(i) != NEW.\(i) AND \(empty)
            BEGIN DELETE FROM \(rtree) WHERE id IN (OLD.\(i), NEW.\(i)); END;
            CREATE TRIGGER \(trigger("delete")) AFTER DELETE ON \(t) WHEN OLD.\(c) NOT NULL
            BEGIN DELETE FROM \(rtree) WHERE id = OLD.\(i); END;
            """)
        try database.prepare("""
            INSERT OR REPLACE INTO gpkg_extensions VALUES (?, ?, 'gpkg_rtree_index', 'http://www.geopackage.org/spec120/#extension_rtree', 'write-only')
            """).run([.text(table), .text(column)])
    }

    /// Drops the R-tree of `table.column` (its triggers go with it) and its extension row.
    func dropSpatialIndex(table: String, column: String) throws {
        let prefix = GeoPackage.rtreeName(table, column)
        for suffix in ["insert", "update1", "update2", "update3", "update4", "update5", "update6", "update7", "delete"] {
            try database.execute("DROP TRIGGER IF EXISTS \(quoted("\(prefix)_\(suffix)"))")
        }
        try database.execute("DROP TABLE IF EXISTS \(quoted(prefix))")
        if try database.hasTable("gpkg_extensions") {
            try database.prepare("DELETE FROM gpkg_extensions WHERE table_name = ? AND extension_name = 'gpkg_rtree_index'").run([.text(table)])
        }
    }

    /// The fid and envelope of every non-empty geometry of a feature table, read from the
    /// stored blobs (for a rebuild of its R-tree).
    func storedBoxes(table: String, column: String, fidColumn: String) throws -> [(fid: Int64, box: BBox)] {
        let statement = try database.prepare("SELECT \(quoted(fidColumn)), \(quoted(column)) FROM \(quoted(table)) WHERE \(quoted(column)) IS NOT NULL")
        var boxes: [(fid: Int64, box: BBox)] = []
        while try statement.step() {
            let fid = statement.int64(0)
            let geometry = try statement.withBlob(1) { blob throws(StoreError) in try GeoPackageBinary.decode(blob) }
            if let box = geometry?.bbox, !box.isEmpty { boxes.append((fid, box)) }
        }
        return boxes
    }
}
