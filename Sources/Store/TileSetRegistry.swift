// MBTiles tile sets registered in the store, so the engine and the server open them by name
// (`TILE 16/35389/22192 OF zoo_map`) without flags. The tiles stay in their own .mbtiles file
// (the format apps ship); the store keeps the name and the file's absolute path in
// `vltava_tilesets`, a table GDAL and QGIS ignore.

import Foundation
import SQLite

public struct TileSetEntry: Sendable, Equatable {
    public var name: String
    public var path: String
}

extension GeoPackage {
    static let tileSetTable = "vltava_tilesets"

    /// Every registered tile set, in name order.
    public func tileSets() throws(StoreError) -> [TileSetEntry] {
        try sqlite {
            guard try database.hasTable(GeoPackage.tileSetTable) else { return [] }
            let statement = try database.prepare("SELECT name, path FROM vltava_tilesets ORDER BY name")
            var entries: [TileSetEntry] = []
            while try statement.step() {
                if case .text(let name) = statement.value(0), case .text(let path) = statement.value(1) {
                    entries.append(TileSetEntry(name: name, path: path))
                }
            }
            return entries
        }
    }

    /// Registers `path` (an MBTiles file: an SQLite file with `metadata` and `tiles`) as the
    /// tile set `name`. Names share the layers' namespace so a query can never mean both.
    public func registerTileSet(name: String, path: String, replace: Bool) throws(StoreError) {
        try Importer.checkLayerName(name)
        guard FileManager.default.fileExists(atPath: path) else { throw .fileNotFound(path) }
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        do {
            let tiles = try Database(path: absolute, mode: .readOnly)
            guard try tiles.hasTable("tiles"), try tiles.hasTable("metadata") else {
                throw StoreError.unsupportedFormat(file: path, reason: "not an MBTiles file: it needs a 'tiles' and a 'metadata' table")
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .unsupportedFormat(file: path, reason: "not an MBTiles file: \(error)")
        }
        if try hasLayer(name) { throw .invalidLayerName(name, reason: "a layer has that name") }
        try sqlite {
            try database.transaction {
                try database.execute("CREATE TABLE IF NOT EXISTS vltava_tilesets (name TEXT PRIMARY KEY NOT NULL, path TEXT NOT NULL)")
                if !replace, try database.scalar("SELECT 1 FROM vltava_tilesets WHERE name = ?", .text(name)) != nil {
                    throw StoreError.layerExists(name)
                }
                let insert = try database.prepare("INSERT OR REPLACE INTO vltava_tilesets (name, path) VALUES (?, ?)")
                try insert.bind([.text(name), .text(absolute)])
                _ = try insert.step()
            }
        }
    }
}
