// An MBTiles 1.3 reader: SQLite, opened read-only, tiles addressed in XYZ (the TMS row flip is
// done here), metadata including the `json` row's vector_layers; its TileJSON 3.0 document and
// what its tiles hold come from the `TileArchive` extension it shares with PMTiles.
// The older view-based schema (`map` + `images` behind a `tiles` view) works unchanged, since
// both are queried through `tiles`.
//
// Concurrency: one SQLite connection is not safe to share, so every read takes a lock around
// the connection; reads are short (one indexed row), so the lock is held for microseconds.
// A server that needs more parallelism opens one `MBTiles` per worker.

import Foundation
import Geometry
import SQLite
import Support

public struct MBTilesError: Error, CustomStringConvertible, Sendable {
    public let file: String
    public let message: String
    public var description: String { "\(file): \(message)" }
}

public final class MBTiles: TileArchive {
    public let path: String
    public let metadata: [String: String]
    /// [west, south, east, north] from the metadata, when it is four finite numbers in range.
    public let bounds: [Double]?
    /// The metadata's center, when it is three finite numbers in range.
    public let center: Center?
    /// The zooms of the metadata (`minzoom`, `maxzoom`), each a whole number of 0…30 with the
    /// min not above the max; one that is not is replaced by the tiles' own (`checkedZooms`).
    /// Nil when the metadata has none.
    public let minZoom: Int?
    public let maxZoom: Int?
    /// Metadata set aside at open (a `center` or `bounds` that is not finite numbers in range,
    /// a zoom outside 0…30 or a minzoom above the maxzoom, as any tool may write): the set is
    /// served without it. Shown by `vltava tiles info` and
    /// `vltava import`, logged by the server.
    public let warnings: [String]
    private let connection: Locked<ConnectionBox>
    /// What the tiles hold (`contents`), read from them once, on first use; `scanning` makes
    /// a second caller wait for the first one's reading rather than read again.
    private let scanned = Locked<TileSetContents?>(nil)
    private let scanning = Locked(())

    public typealias Center = TileCenter
    public var formatName: String { "MBTiles" }

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
            let zooms = try MBTiles.checkedZooms(min: metadata["minzoom"], max: metadata["maxzoom"]) { () throws(SQLiteError) in
                try MBTiles.zoomRange(ofTilesIn: database)
            }
            self.bounds = bounds
            self.center = center
            (minZoom, maxZoom) = (zooms.min, zooms.max)
            warnings = [boundsWarning, centerWarning].compactMap { $0 } + zooms.warnings
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

    /// The metadata's `minzoom` and `maxzoom`, checked: each a whole number of 0…30, the min not
    /// above the max (TileJSON's rules; a minzoom of -2^63, or 20 over a maxzoom of 2, makes an
    /// invalid document). A value set aside is replaced by the tiles' lowest or highest zoom
    /// (`tiles`, read only then), or by nothing when the set has no tiles, with a warning.
    /// `source` names where the values came from in the warnings (a PMTiles header's too).
    static func checkedZooms<E: Error>(min minText: String?, max maxText: String?, source: String = "metadata",
                                       tiles: () throws(E) -> ClosedRange<Int>?) throws(E) -> (min: Int?, max: Int?, warnings: [String]) {
        func checked(_ key: String, _ text: String?) -> (zoom: Int?, warning: String?) {
            guard let text else { return (nil, nil) }
            guard let zoom = Int(text.trimmingCharacters(in: .whitespaces)), (0...30).contains(zoom) else {
                return (nil, "\(source) \(key) '\(text)' ignored: it is not a whole number of 0…30")
            }
            return (zoom, nil)
        }
        var (minZoom, minWarning) = checked("minzoom", minText)
        var (maxZoom, maxWarning) = checked("maxzoom", maxText)
        // Both set aside at once: one warning, both zooms taken from the tiles.
        var bothAside = false
        if let low = minZoom, let high = maxZoom, low > high {
            (minZoom, maxZoom, bothAside) = (nil, nil, true)
            minWarning = "\(source) minzoom \(low) and maxzoom \(high) ignored: the minzoom is above the maxzoom"
        }
        guard minWarning != nil || maxWarning != nil else { return (minZoom, maxZoom, []) }
        let range = try tiles()
        let derived = range.map { "the tiles' zooms \($0.lowerBound)…\($0.upperBound) are used" } ?? "the set has no tiles to take them from"
        let warnings = [minWarning, maxWarning].compactMap { $0 }.map { $0 + "; " + derived }
        // The tiles' range for every zoom set aside; the whole of it when a zoom kept from the
        // metadata would still be on the wrong side of one taken from the tiles.
        if minWarning != nil { minZoom = range?.lowerBound }
        if maxWarning != nil || bothAside { maxZoom = range?.upperBound }
        if let low = minZoom, let high = maxZoom, low > high { (minZoom, maxZoom) = (range?.lowerBound, range?.upperBound) }
        return (minZoom, maxZoom, warnings)
    }

    /// The lowest and highest zoom of the tiles within 0…30, or nil when there are none.
    static func zoomRange(ofTilesIn database: Database) throws(SQLiteError) -> ClosedRange<Int>? {
        let rows = try database.prepare("SELECT MIN(zoom_level), MAX(zoom_level) FROM tiles WHERE zoom_level BETWEEN 0 AND 30")
        guard try rows.step(), !rows.isNull(0), !rows.isNull(1) else { return nil }
        let (low, high) = (rows.int64(0), rows.int64(1))
        guard (0...30).contains(low), (0...30).contains(high), low <= high else { return nil }
        return Int(low)...Int(high)
    }

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
    static func checkedBounds(_ text: String?, source: String = "metadata") -> ([Double]?, String?) {
        guard let text else { return (nil, nil) }
        let ignored = "\(source) bounds '\(text)' ignored: "
        guard let b = numbers(text, count: 4) else { return (nil, ignored + "it is not four numbers WEST,SOUTH,EAST,NORTH") }
        if let problem = positionProblem(lon: b[0], lat: b[1]) ?? positionProblem(lon: b[2], lat: b[3]) { return (nil, ignored + problem) }
        guard b[1] <= b[3] else { return (nil, ignored + "its south \(b[1]) is north of its north \(b[3])") }
        return (b, nil)
    }

    /// `center`: LON,LAT,ZOOM, the zoom a whole number of 0…30 (a fraction is rounded down).
    static func checkedCenter(_ text: String?, source: String = "metadata") -> (Center?, String?) {
        guard let text else { return (nil, nil) }
        let ignored = "\(source) center '\(text)' ignored: "
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

    /// A metadata version as semver: `1.2.3` (and suffixes such as `1.2.3-beta`) as it is,
    /// `2` or `2.1` padded with zeros, anything else nil.
    static func semanticVersion(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let parts = trimmed.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        func digits(_ s: Substring) -> Bool { !s.isEmpty && s.count <= 9 && s.allSatisfy { $0.isASCII && $0.isNumber } }
        switch parts.count {
        case 1, 2:
            guard parts.allSatisfy(digits) else { return nil }
            return (parts.map(String.init) + Array(repeating: "0", count: 3 - parts.count)).joined(separator: ".")
        default:
            // The third part: digits, then an optional suffix of word characters, '-' or '+'.
            let patch = parts[2].prefix { $0.isASCII && $0.isNumber }
            let suffix = parts[2].dropFirst(patch.count)
            guard digits(parts[0]), digits(parts[1]), digits(patch),
                  suffix.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-+_.".contains($0)) }) else { return nil }
            return trimmed
        }
    }

    /// What the tiles hold: whether they are images, and the TileJSON `vector_layers`.
    public var contents: TileSetContents {
        if let known = scanned.withLock({ $0 }) { return known }
        return scanning.withLock { _ in
            if let known = scanned.withLock({ $0 }) { return known }
            let found = scanContents()
            scanned.withLock { $0 = found }
            return found
        }
    }

    /// The metadata's `vector_layers` (in its `json` row) when it has usable ones; otherwise
    /// read from the first tiles, lowest zooms first (`TileSetContents.described`): the zoo's
    /// metadata has none.
    func scanContents() -> TileSetContents {
        let declared = TileSetContents.declaredLayers(in: metadata["json"].flatMap { try? JSON.parse($0) })
        let sample: [(z: Int, x: Int, y: Int, bytes: [UInt8])]
        do {
            sample = try connection.withLock { (box) throws -> [(z: Int, x: Int, y: Int, bytes: [UInt8])] in
                let rows = try box.database.prepare("SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles ORDER BY zoom_level LIMIT ?")
                try rows.bind([.integer(Int64(TileSetContents.scanLimit))])
                var out: [(z: Int, x: Int, y: Int, bytes: [UInt8])] = []
                while try rows.step() {
                    let z = rows.int64(0), x = rows.int64(1), tmsRow = rows.int64(2)
                    guard z >= 0 && z <= 30, (0..<(1 << z)).contains(x), (0..<(1 << z)).contains(tmsRow) else { continue }
                    out.append((Int(z), Int(x), (1 << Int(z)) - 1 - Int(tmsRow), rows.blob(3) ?? Array((rows.text(3) ?? "").utf8)))
                }
                return out
            }
        } catch {
            return TileSetContents(isRaster: false, vectorLayers: declared ?? [])
        }
        return TileSetContents.described(sample: sample, declared: declared, complete: sample.count < TileSetContents.scanLimit, maxZoom: maxZoom)
    }

    /// TileJSON's description of a value's type.
    static func fieldType(_ value: AttributeValue) -> String? {
        switch value {
        case .null: nil
        case .bool: "Boolean"
        case .integer, .real: "Number"
        case .text, .json: "String"
        }
    }

    static func isVectorLayer(_ value: JSONValue) -> Bool {
        guard case .object(let layer) = value, case .string? = layer["id"], case .object(let fields)? = layer["fields"] else { return false }
        for key in ["minzoom", "maxzoom"] {
            guard let zoom = layer[key] else { continue }
            guard case .integer(let z) = zoom, (0...30).contains(z) else { return false }
        }
        return fields.allSatisfy { if case .string = $0.1 { true } else { false } }
    }
}

/// What a tile set's tiles hold, as TileJSON describes it.
public struct TileSetContents: Sendable {
    public var isRaster: Bool
    /// TileJSON `vector_layers` objects (`id`, `fields`, `minzoom`, `maxzoom`).
    public var vectorLayers: [JSONValue]
}
