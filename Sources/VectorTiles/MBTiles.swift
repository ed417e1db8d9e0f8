// An MBTiles 1.3 reader: SQLite, opened read-only, tiles addressed in XYZ (the TMS row flip is
// done here), metadata including the `json` row's vector_layers, and a TileJSON 3.0 document.
// The older view-based schema (`map` + `images` behind a `tiles` view) works unchanged, since
// both are queried through `tiles`.
//
// Concurrency: one SQLite connection is not safe to share, so every read takes a lock around
// the connection; reads are short (one indexed row), so the lock is held for microseconds.
// A server that needs more parallelism opens one `MBTiles` per worker.

import Foundation
import Geometry
import SQLite
import Synchronization

public struct MBTilesError: Error, CustomStringConvertible, Sendable {
    public let file: String
    public let message: String
    public var description: String { "\(file): \(message)" }
}

public final class MBTiles: Sendable {
    public let path: String
    public let metadata: [String: String]
    private let connection: Mutex<ConnectionBox>

    /// The SQLite handle, moved into the mutex once at open.
    final class ConnectionBox: @unchecked Sendable {
        let database: Database
        let tileQuery: Statement
        init(database: Database, tileQuery: Statement) {
            self.database = database
            self.tileQuery = tileQuery
        }
    }

    public init(path: String) throws(MBTilesError) {
        self.path = path
        let file = (path as NSString).lastPathComponent
        guard FileManager.default.fileExists(atPath: path) else { throw MBTilesError(file: file, message: "no such file") }
        do {
            let database = try Database(path: path, mode: .readOnly)
            guard try database.hasTable("tiles") || database.scalar("SELECT 1 FROM sqlite_master WHERE type = 'view' AND name = 'tiles'") != nil else {
                throw MBTilesError(file: file, message: "not an MBTiles file: it has no tiles table or view")
            }
            var metadata: [String: String] = [:]
            if try database.hasTable("metadata") {
                let rows = try database.prepare("SELECT name, value FROM metadata")
                while try rows.step() {
                    if let name = rows.text(0) { metadata[name] = rows.text(1) ?? "" }
                }
            }
            self.metadata = metadata
            let query = try database.prepare("SELECT tile_data FROM tiles WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?")
            connection = Mutex(ConnectionBox(database: database, tileQuery: query))
        } catch let error as MBTilesError {
            throw error
        } catch let error as SQLiteError {
            throw MBTilesError(file: file, message: error.isCorruption ? "not an MBTiles file (not a SQLite database)" : error.message)
        } catch {
            throw MBTilesError(file: file, message: "\(error)")
        }
    }

    public var name: String { metadata["name"] ?? ((path as NSString).lastPathComponent as NSString).deletingPathExtension }
    public var minZoom: Int? { metadata["minzoom"].flatMap { Int($0) } }
    public var maxZoom: Int? { metadata["maxzoom"].flatMap { Int($0) } }

    /// [west, south, east, north] from the metadata.
    public var bounds: [Double]? {
        let values = metadata["bounds"]?.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        return values?.count == 4 ? values : nil
    }

    /// The raw stored bytes of tile z/x/y (XYZ addressing), or nil when the set has no such tile.
    public func tile(z: Int, x: Int, y: Int) throws(MBTilesError) -> [UInt8]? {
        guard z >= 0 && z <= 30, x >= 0, y >= 0, x < 1 << z, y < 1 << z else { return nil }
        let tmsRow = (1 << z) - 1 - y
        do {
            return try connection.withLock { (box) throws -> [UInt8]? in
                let statement = box.tileQuery
                defer { statement.reset() }
                try statement.bind([.integer(Int64(z)), .integer(Int64(x)), .integer(Int64(tmsRow))])
                guard try statement.step() else { return nil }
                return statement.blob(0) ?? Array((statement.text(0) ?? "").utf8)
            }
        } catch {
            throw MBTilesError(file: (path as NSString).lastPathComponent, message: "reading tile \(z)/\(x)/\(y): \(error)")
        }
    }

    /// Every tile's XYZ address, in (z, x, y) order. Rows whose zoom, column or row lies outside
    /// the tile grid are skipped, as `tile(z:x:y:)` never reads them (a row of -2^63 overflowed
    /// the TMS flip: found by the mbtiles-meta fuzz target).
    public func tileAddresses() throws(MBTilesError) -> [(z: Int, x: Int, y: Int)] {
        do {
            return try connection.withLock { (box) throws -> [(z: Int, x: Int, y: Int)] in
                let rows = try box.database.prepare("SELECT zoom_level, tile_column, tile_row FROM tiles ORDER BY 1, 2, 3")
                var out: [(Int, Int, Int)] = []
                while try rows.step() {
                    let z = rows.int64(0), x = rows.int64(1), tmsRow = rows.int64(2)
                    guard z >= 0 && z <= 30, (0..<(1 << z)).contains(x), (0..<(1 << z)).contains(tmsRow) else { continue }
                    out.append((Int(z), Int(x), (1 << Int(z)) - 1 - Int(tmsRow)))
                }
                return out.sorted { ($0.0, $0.1, $0.2) < ($1.0, $1.1, $1.2) }
            }
        } catch {
            throw MBTilesError(file: (path as NSString).lastPathComponent, message: "listing tiles: \(error)")
        }
    }

    /// TileJSON 3.0.0 for this set, with `tilesURL` as its tile URL template.
    public func tileJSON(tilesURL: String) -> JSONValue {
        var object = JSONObject()
        object["tilejson"] = .string("3.0.0")
        object["name"] = .string(name)
        for key in ["description", "version", "attribution"] where metadata[key] != nil {
            object[key] = .string(metadata[key] ?? "")
        }
        object["tiles"] = .array([.string(tilesURL)])
        if let minZoom { object["minzoom"] = .integer(Int64(minZoom)) }
        if let maxZoom { object["maxzoom"] = .integer(Int64(maxZoom)) }
        if let bounds { object["bounds"] = .array(bounds.map { .double($0) }) }
        // The center: from the metadata, else the middle of the bounds at the lowest zoom.
        let center = metadata["center"]?.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        if let center, center.count == 3 {
            object["center"] = .array([.double(center[0]), .double(center[1]), .integer(Int64(center[2]))])
        } else if let b = bounds {
            object["center"] = .array([.double((b[0] + b[2]) / 2), .double((b[1] + b[3]) / 2), .integer(Int64(minZoom ?? 0))])
        }
        if let json = metadata["json"], case .object(let extra)? = try? JSON.parse(json), let layers = extra["vector_layers"] {
            object["vector_layers"] = layers
        }
        return .object(object)
    }
}
