// Tile sets registered in the store, so the engine and the server open them by name
// (`TILE 16/35389/22192 OF zoo_map`) without flags. The tiles stay in their own .mbtiles file or
// .pmtiles archive (the formats apps ship); the store keeps the name and the file's path in `vltava_tilesets`,
// a table GDAL and QGIS ignore. The path is kept relative to the store's directory, so a store
// moved together with its tile sets keeps working (paths registered absolute stay absolute).

import Foundation
import SQLite

public struct TileSetEntry: Sendable, Equatable {
    public var name: String
    /// The file, resolved against the store's directory.
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
                    entries.append(TileSetEntry(name: name, path: resolvedTileSetPath(path)))
                }
            }
            return entries
        }
    }

    /// Registers `path` (an MBTiles file: an SQLite file with `metadata` and `tiles`; or, by its
    /// `.pmtiles` extension, a PMTiles archive) as the tile set `name`. Names share the layers'
    /// namespace so a query can never mean both. Only a PMTiles archive's first bytes are looked
    /// at here: the store does not read archives, VectorTiles does when the set is opened.
    public func registerTileSet(name: String, path: String, replace: Bool) throws(StoreError) {
        try Importer.checkLayerName(name)
        guard FileManager.default.fileExists(atPath: path) else { throw .fileNotFound(path) }
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        if absolute.lowercased().hasSuffix(".pmtiles") {
            let head = FileHandle(forReadingAtPath: absolute).flatMap { try? $0.read(upToCount: 7) } ?? Data()
            guard head == Data("PMTiles".utf8) else {
                throw .unsupportedFormat(file: path, reason: "not a PMTiles archive: it does not begin with 'PMTiles'")
            }
        } else {
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
        }
        if try hasLayer(name) { throw .invalidLayerName(name, reason: "a layer has that name") }
        try sqlite {
            try database.transaction {
                try database.execute("CREATE TABLE IF NOT EXISTS vltava_tilesets (name TEXT PRIMARY KEY NOT NULL, path TEXT NOT NULL)")
                if !replace, try database.scalar("SELECT 1 FROM vltava_tilesets WHERE name = ?", .text(name)) != nil {
                    throw StoreError.layerExists(name)
                }
                let insert = try database.prepare("INSERT OR REPLACE INTO vltava_tilesets (name, path) VALUES (?, ?)")
                try insert.bind([.text(name), .text(GeoPackage.relativePath(of: absolute, from: storeDirectory))])
                _ = try insert.step()
            }
        }
    }
}

extension GeoPackage {
    /// The directory the store file lies in, absolute.
    var storeDirectory: String {
        URL(fileURLWithPath: path).standardizedFileURL.deletingLastPathComponent().path
    }

    func resolvedTileSetPath(_ stored: String) -> String {
        stored.hasPrefix("/") ? stored : URL(fileURLWithPath: stored, relativeTo: URL(fileURLWithPath: storeDirectory, isDirectory: true)).standardizedFileURL.path
    }

    /// `file` (absolute) relative to `directory` (absolute): "tiles/zoo.mbtiles", "../x.mbtiles".
    static func relativePath(of file: String, from directory: String) -> String {
        let target = file.split(separator: "/", omittingEmptySubsequences: true)
        let base = directory.split(separator: "/", omittingEmptySubsequences: true)
        var common = 0
        while common < min(target.count - 1, base.count), target[common] == base[common] { common += 1 }
        let ups = Array(repeating: "..", count: base.count - common)
        return (ups + target[common...].map(String.init)).joined(separator: "/")
    }
}
