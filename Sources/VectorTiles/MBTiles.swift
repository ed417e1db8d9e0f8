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

public struct MBTilesError: Error, CustomStringConvertible, Sendable {
    public let file: String
    public let message: String
    public var description: String { "\(file): \(message)" }
}

public final class MBTiles: Sendable {
    public let path: String
    public let metadata: [String: String]
    /// [west, south, east, north] from the metadata, when it is four finite numbers in range.
    public let bounds: [Double]?
    /// The metadata's center, when it is three finite numbers in range.
    public let center: Center?
    /// Metadata set aside at open (a `center` or `bounds` that is not finite numbers in range,
    /// as any tool may write): the set is served without it. Shown by `vltava tiles info` and
    /// `vltava import`, logged by the server.
    public let warnings: [String]
    private let connection: Locked<ConnectionBox>

    public struct Center: Sendable, Equatable {
        public var lon: Double
        public var lat: Double
        public var zoom: Int
    }

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
            // Checked once here, where the text becomes numbers: a NaN, infinite or huge zoom
            // used to trap converting it to an integer for TileJSON.
            let (bounds, boundsWarning) = MBTiles.checkedBounds(metadata["bounds"])
            let (center, centerWarning) = MBTiles.checkedCenter(metadata["center"])
            self.bounds = bounds
            self.center = center
            warnings = [boundsWarning, centerWarning].compactMap { $0 }
            let query = try database.prepare("SELECT tile_data FROM tiles WHERE zoom_level = ? AND tile_column = ? AND tile_row = ?")
            connection = Locked(ConnectionBox(database: database, tileQuery: query))
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

    /// The numbers of a comma-separated metadata value; nil unless there are `count` of them.
    static func numbers(_ text: String, count: Int) -> [Double]? {
        let values = text.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard values.count == count else { return nil }
        let numbers = values.compactMap { $0 }
        return numbers.count == count ? numbers : nil
    }

    /// Why a longitude and latitude are unusable, or nil.
    static func positionProblem(lon: Double, lat: Double) -> String? {
        do {
            _ = try Point.checked(lon: lon, lat: lat)
            return nil
        } catch {
            return "the " + error.message
        }
    }

    /// `bounds`: WEST,SOUTH,EAST,NORTH in degrees (WEST > EAST crosses the antimeridian).
    static func checkedBounds(_ text: String?) -> ([Double]?, String?) {
        guard let text else { return (nil, nil) }
        let ignored = "metadata bounds '\(text)' ignored: "
        guard let b = numbers(text, count: 4) else { return (nil, ignored + "it is not four numbers WEST,SOUTH,EAST,NORTH") }
        if let problem = positionProblem(lon: b[0], lat: b[1]) ?? positionProblem(lon: b[2], lat: b[3]) { return (nil, ignored + problem) }
        guard b[1] <= b[3] else { return (nil, ignored + "its south \(b[1]) is north of its north \(b[3])") }
        return (b, nil)
    }

    /// `center`: LON,LAT,ZOOM, the zoom a whole number of 0…30 (a fraction is rounded down).
    static func checkedCenter(_ text: String?) -> (Center?, String?) {
        guard let text else { return (nil, nil) }
        let ignored = "metadata center '\(text)' ignored: "
        guard let c = numbers(text, count: 3) else { return (nil, ignored + "it is not three numbers LON,LAT,ZOOM") }
        if let problem = positionProblem(lon: c[0], lat: c[1]) { return (nil, ignored + problem) }
        guard c[2].isFinite else { return (nil, ignored + "the zoom \(c[2]) is not a finite number") }
        guard c[2] >= 0 && c[2] <= 30 else { return (nil, ignored + "the zoom \(c[2]) is outside 0…30") }
        return (Center(lon: c[0], lat: c[1], zoom: Int(c[2].rounded(.down))), nil)
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
        // The center: from the metadata, else (none, or one set aside at open) the middle of
        // the bounds at the lowest zoom, else none.
        if let center {
            object["center"] = .array([.double(center.lon), .double(center.lat), .integer(Int64(center.zoom))])
        } else if let b = bounds {
            object["center"] = .array([.double((b[0] + b[2]) / 2), .double((b[1] + b[3]) / 2), .integer(Int64(minZoom ?? 0))])
        }
        if let json = metadata["json"], case .object(let extra)? = try? JSON.parse(json), let layers = extra["vector_layers"] {
            object["vector_layers"] = layers
        }
        return .object(object)
    }
}
