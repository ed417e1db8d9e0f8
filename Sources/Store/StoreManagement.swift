// Dropping and renaming what the store holds: layers (with their catalog rows, their spatial
// index and their time-series links) and registered tile sets. Each change is one transaction,
// and numbered in the change feed (a layer's; tile sets are not in the feed).

import Foundation
import SQLite

extension GeoPackage {
    /// Removes the layer or tile set `name`. Dropping a point layer that a time series hangs off
    /// leaves the series as a plain table.
    public func drop(layerOrTileSet name: String) throws(StoreError) {
        if database.isReadOnly { throw .readOnly(path) }
        if try hasLayer(name) {
            try sqlite {
                try database.transaction {
                    try drop(name)
                    if try database.hasTable("vltava_time_series") {
                        try database.prepare("DELETE FROM vltava_time_series WHERE key_layer = ?").run([.text(name)])
                    }
                    try recordLayerChange(name, .dropped)
                }
            }
        } else if try tileSets().contains(where: { $0.name == name }) {
            try sqlite { try database.prepare("DELETE FROM vltava_tilesets WHERE name = ?").run([.text(name)]) }
        } else {
            throw .unknownLayer(name, known: try layerNames() + tileSets().map(\.name))
        }
    }

    /// Renames the layer or tile set `name` to `newName`, which must be a free, valid layer name.
    /// A layer keeps its rows, fids, spatial index and the time series linked to it.
    public func rename(layerOrTileSet name: String, to newName: String) throws(StoreError) {
        if database.isReadOnly { throw .readOnly(path) }
        try Importer.checkLayerName(newName)
        let tileSetNames = try tileSets().map(\.name)
        if try hasLayer(newName) || tileSetNames.contains(newName) {
            throw .invalidLayerName(newName, reason: "a layer or tile set of that name exists")
        }
        if try sqlite({ try database.hasTable(newName) }) {
            throw .invalidLayerName(newName, reason: "a table of that name exists in the file")
        }
        if try hasLayer(name) {
            try sqlite { try renameLayer(name, to: newName) }
        } else if tileSetNames.contains(name) {
            try sqlite { try database.prepare("UPDATE vltava_tilesets SET name = ? WHERE name = ?").run([.text(newName), .text(name)]) }
        } else {
            throw .unknownLayer(name, known: try layerNames() + tileSetNames)
        }
    }

    private func renameLayer(_ name: String, to newName: String) throws {
        let column = try geometryColumnName(of: name)
        try database.transaction {
            // The R-tree's triggers call functions only GDAL and QGIS define, so the index is
            // dropped and rebuilt under its new name rather than renamed.
            if let column { try dropSpatialIndex(table: name, column: column) }
            // Legacy mode: SQLite then checks only this table's own triggers, not every other
            // table's (another layer's R-tree triggers would not resolve here).
            try database.execute("PRAGMA legacy_alter_table = ON")
            defer { try? database.execute("PRAGMA legacy_alter_table = OFF") }
            try database.execute("ALTER TABLE \(quoted(name)) RENAME TO \(quoted(newName))")
            try database.prepare("UPDATE gpkg_contents SET table_name = ?1, identifier = CASE WHEN identifier = ?2 THEN ?1 ELSE identifier END WHERE table_name = ?2")
                .run([.text(newName), .text(name)])
            for table in ["gpkg_geometry_columns", "gpkg_data_columns", "gpkg_extensions", "gpkg_metadata_reference", "gpkg_ogr_contents", "vltava_time_series"] {
                guard try database.hasTable(table) else { continue }
                try database.prepare("UPDATE \(table) SET table_name = ? WHERE table_name = ?").run([.text(newName), .text(name)])
            }
            if try database.hasTable("vltava_time_series") {
                try database.prepare("UPDATE vltava_time_series SET key_layer = ? WHERE key_layer = ?").run([.text(newName), .text(name)])
            }
            if let column, let fid = try tableColumns(newName).fid {
                try createSpatialIndex(table: newName, column: column, fidColumn: fid, boxes: storedBoxes(table: newName, column: column, fidColumn: fid))
            }
            // In the feed, the old name goes and the new one comes whole: what a follower
            // holding the layer under its old name must do.
            try recordLayerChange(name, .dropped)
            try recordLayerChange(newName, .imported)
        }
    }
}
