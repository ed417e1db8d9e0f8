// The store: one SQLite file in GeoPackage 1.3 format, so QGIS and GDAL open what Vltava
// writes and Vltava reads what they write. Feature layers are GeoPackage feature tables;
// plain tables (the zoo's animals, hourly observations) are GeoPackage attribute tables.
// The link from a time series to its point layer is kept in one table of our own,
// `vltava_time_series`, which other tools simply ignore.

import Foundation
import Geometry
import SQLite
import Support

public enum ColumnType: String, Sendable, Equatable {
    case integer = "INTEGER"
    case real = "REAL"
    case text = "TEXT"
    case boolean = "BOOLEAN"
    case dateTime = "DATETIME"
    case blob = "BLOB"

    /// Maps any SQLite/GeoPackage declared type (GDAL writes MEDIUMINT, TEXT(20), DOUBLE, DATE…)
    /// onto the few types the engine distinguishes, by SQLite's affinity rules.
    init(declared: String) {
        let t = declared.uppercased()
        if t.hasPrefix("BOOLEAN") { self = .boolean }
        else if t.hasPrefix("DATE") { self = .dateTime }
        else if t.contains("INT") { self = .integer }
        else if t.contains("CHAR") || t.contains("CLOB") || t.contains("TEXT") { self = .text }
        else if t.contains("BLOB") || t.isEmpty { self = .blob }
        else { self = .real }
    }
}

public struct ColumnInfo: Sendable, Equatable {
    public var name: String
    public var type: ColumnType
    /// Text holding JSON (arrays, objects), declared through `gpkg_data_columns.mime_type`.
    public var isJSON: Bool

    public init(name: String, type: ColumnType, isJSON: Bool = false) {
        self.name = name
        self.type = type
        self.isJSON = isJSON
    }

    /// How `DESCRIBE` and `vltava describe` show the type.
    public var typeDescription: String { isJSON ? "JSON" : type.rawValue }
}

/// How a time-series table hangs off a point layer: rows whose `keyColumn` equals the point
/// feature's `layerKeyColumn`, each covering `[startColumn, endColumn)` in UTC.
public struct TimeSeriesLink: Sendable, Equatable {
    public var keyLayer: String
    public var layerKeyColumn: String
    public var keyColumn: String
    public var startColumn: String
    public var endColumn: String
    /// The unit of each value column that declares one (`vltava import --units`), such as
    /// `µg/m³`: OGC API – EDR's parameters carry it.
    public var units: [String: String]

    public init(keyLayer: String, layerKeyColumn: String, keyColumn: String, startColumn: String, endColumn: String,
                units: [String: String] = [:]) {
        self.keyLayer = keyLayer
        self.layerKeyColumn = layerKeyColumn
        self.keyColumn = keyColumn
        self.startColumn = startColumn
        self.endColumn = endColumn
        self.units = units
    }

    /// Units as the stores keep them, a JSON object of strings; anything else is no units.
    public static func units(fromJSON text: String?) -> [String: String] {
        units(from: text.flatMap { try? JSON.parse($0) })
    }

    public static func units(from json: JSONValue?) -> [String: String] {
        guard case .object(let object)? = json else { return [:] }
        var units: [String: String] = [:]
        for (column, value) in object { if case .string(let unit) = value { units[column] = unit } }
        return units
    }

    /// The units as a JSON object (keys sorted), for the stores.
    public var unitsJSON: JSONValue {
        .object(JSONObject(units.keys.sorted().map { ($0, .string(units[$0] ?? "")) }))
    }
}

public struct LayerInfo: Sendable, Equatable {
    public enum Kind: String, Sendable { case features, attributes }

    public var name: String
    public var kind: Kind
    /// GeoPackage geometry type name ("POINT", "MULTIPOLYGON", "GEOMETRY"…), nil for attributes.
    public var geometryType: String?
    public var geometryColumn: String?
    /// The layer's CRS as "EPSG:N", nil for attributes or an undefined SRS.
    public var crs: String?
    public var featureCount: Int
    /// The extent recorded in `gpkg_contents`, in the layer's CRS.
    public var bbox: BBox?
    public var columns: [ColumnInfo]
    public var description: String
    public var timeSeries: TimeSeriesLink?
    /// When the layer last changed (`gpkg_contents.last_change`, RFC 3339 UTC): its import, or
    /// its latest write. Nil where the store does not say.
    public var lastChange: String?

    public init(name: String, kind: Kind, geometryType: String?, geometryColumn: String?, crs: String?, featureCount: Int,
                bbox: BBox?, columns: [ColumnInfo], description: String = "", timeSeries: TimeSeriesLink? = nil, lastChange: String? = nil) {
        self.name = name
        self.kind = kind
        self.geometryType = geometryType
        self.geometryColumn = geometryColumn
        self.crs = crs
        self.featureCount = featureCount
        self.bbox = bbox
        self.columns = columns
        self.description = description
        self.timeSeries = timeSeries
        self.lastChange = lastChange
    }
}

/// A feature read back with its GeoPackage row id.
public struct StoredFeature: Sendable, Equatable {
    public var fid: Int64
    public var feature: Feature

    public init(fid: Int64, feature: Feature) {
        self.fid = fid
        self.feature = feature
    }
}

/// A feature whose geometry could not be read (corrupt blob, a NaN or infinite coordinate, a
/// failed reprojection), by fid.
public struct FeatureProblem: Sendable, Equatable, CustomStringConvertible {
    public var fid: Int64
    public var reason: String

    public init(fid: Int64, reason: String) {
        self.fid = fid
        self.reason = reason
    }

    public var description: String { "fid \(fid): \(reason)" }
}

public final class GeoPackage {
    public enum Mode: Sendable {
        case readOnly
        /// Read-write, creating and initialising the file if it does not exist.
        case readWrite
    }

    public let path: String
    /// The connection; `package` so the indoor model (the Indoor module) keeps its own tables.
    package let database: Database

    /// The file's own application id and version: 'GPKG', 1.3.
    static let applicationID: Int64 = 0x4750_4B47
    static let userVersion: Int64 = 10300

    public init(path: String, mode: Mode = .readOnly) throws(StoreError) {
        self.path = path
        let exists = FileManager.default.fileExists(atPath: path)
        if mode == .readOnly && !exists { throw .fileNotFound(path) }
        do {
            database = try Database(path: path, mode: mode == .readOnly ? .readOnly : .readWriteCreate)
        } catch {
            throw .notAGeoPackage(path: path, reason: error.message)
        }
        do {
            let isEmpty = try !exists || database.scalar("SELECT count(*) FROM sqlite_master") == .integer(0)
            if mode == .readWrite && isEmpty {
                try createSchema()
            }
            guard try database.hasTable("gpkg_contents") else {
                throw StoreError.notAGeoPackage(path: path, reason: "it has no gpkg_contents table")
            }
        } catch let error as StoreError {
            throw error
        } catch let error as SQLiteError {
            throw .notAGeoPackage(path: path, reason: error.message)
        } catch {
            throw .notAGeoPackage(path: path, reason: "\(error)")
        }
    }

    // MARK: - Reading

    /// Every layer and table registered in `gpkg_contents`, in name order. With `countingRows`
    /// false every `featureCount` is 0, for the caller to fill in: a count reads the whole
    /// table (800 MB for a million polygons), which a load that maps the layer does not need.
    public func layers(countingRows: Bool = true) throws(StoreError) -> [LayerInfo] {
        try layerNames().map { (name) throws(StoreError) in try layer(name, countingRows: countingRows) }
    }

    /// The rows of a layer's table, counted.
    public func rowCount(of name: String) throws(StoreError) -> Int {
        try sqlite { try countRows(name) }
    }

    private func countRows(_ name: String) throws(SQLiteError) -> Int {
        if case .integer(let n) = try database.scalar("SELECT count(*) FROM \(quoted(name))") { Int(n) } else { 0 }
    }

    public func layerNames() throws(StoreError) -> [String] {
        try sqlite {
            let statement = try database.prepare("SELECT table_name FROM gpkg_contents WHERE data_type IN ('features','attributes') ORDER BY table_name")
            var names: [String] = []
            while try statement.step() { names.append(statement.text(0) ?? "") }
            return names.filter { !GeoPackage.indoorTables.contains($0) }
        }
    }

    public func hasLayer(_ name: String) throws(StoreError) -> Bool {
        guard !GeoPackage.indoorTables.contains(name) else { return false }
        return try sqlite { try database.scalar("SELECT 1 FROM gpkg_contents WHERE table_name = ?", .text(name)) != nil }
    }

    /// The tables of the indoor model (venues, floors, beacons, reference points, scans and
    /// their readings; the Indoor module writes and reads them). They are GeoPackage attribute
    /// tables, so GDAL and QGIS list them, but they are not layers: the engine loads them as
    /// venues, and their names are reserved.
    public static let indoorTables: Set<String> = [
        "indoor_venues", "indoor_floors", "indoor_beacons", "indoor_points", "indoor_scans", "indoor_readings",
    ]

    public func layer(_ name: String, countingRows: Bool = true) throws(StoreError) -> LayerInfo {
        guard try hasLayer(name) else { throw .unknownLayer(name, known: try layerNames()) }
        return try sqlite {
            let contents = try database.prepare("SELECT data_type, description, min_x, min_y, max_x, max_y, last_change FROM gpkg_contents WHERE table_name = ?")
            try contents.bind([.text(name)])
            try contents.step()
            let kind = LayerInfo.Kind(rawValue: contents.text(0) ?? "") ?? .attributes
            let description = contents.text(1) ?? ""
            let lastChange = contents.text(6)
            var bbox: BBox?
            if !contents.isNull(2) && !contents.isNull(3) && !contents.isNull(4) && !contents.isNull(5) {
                bbox = BBox(minLon: contents.double(2), minLat: contents.double(3), maxLon: contents.double(4), maxLat: contents.double(5))
            }

            var geometryType: String?
            var geometryColumn: String?
            var crs: String?
            if kind == .features {
                let geom = try database.prepare("""
                    SELECT g.column_name, g.geometry_type_name, s.organization, s.organization_coordsys_id
                    FROM gpkg_geometry_columns g LEFT JOIN gpkg_spatial_ref_sys s ON s.srs_id = g.srs_id
                    WHERE g.table_name = ?
                    """)
                try geom.bind([.text(name)])
                if try geom.step() {
                    geometryColumn = geom.text(0)
                    geometryType = geom.text(1)?.uppercased()
                    if let organization = geom.text(2), organization.uppercased() != "NONE", !geom.isNull(3) {
                        crs = "\(organization.uppercased()):\(geom.int64(3))"
                    }
                }
            }

            let jsonColumns = try jsonColumnNames(of: name)
            let (fidColumn, declared) = try tableColumns(name)
            let columns = declared
                .filter { $0.name != fidColumn && $0.name != geometryColumn }
                .map { ColumnInfo(name: $0.name, type: ColumnType(declared: $0.type), isJSON: jsonColumns.contains($0.name)) }
            let featureCount = countingRows ? try countRows(name) : 0

            return LayerInfo(
                name: name, kind: kind, geometryType: geometryType, geometryColumn: geometryColumn, crs: crs,
                featureCount: featureCount, bbox: bbox, columns: columns, description: description,
                timeSeries: try timeSeriesLink(of: name), lastChange: lastChange)
        }
    }

    /// Every feature of a layer (or row of an attribute table, with a nil geometry), in fid
    /// order, with geometries in EPSG:4326 whatever CRS the layer is stored in. A geometry that
    /// cannot be read is an error naming the layer and the fid.
    public func features(of layerName: String) throws(StoreError) -> [StoredFeature] {
        let read = try readFeatures(of: layerName)
        if let problem = read.problems.first { throw .badFeature(layer: layerName, fid: problem.fid, reason: problem.reason) }
        return read.features
    }

    /// As `features(of:)`, but a feature whose geometry cannot be read (a corrupt blob, a NaN
    /// or infinite coordinate, a failed reprojection) is left out and listed in `problems`
    /// instead of failing the whole layer: the engine loads a store that another tool edited.
    /// An empty geometry (POINT EMPTY) is a feature without geometry, not a problem.
    public func readFeatures(of layerName: String) throws(StoreError) -> (features: [StoredFeature], problems: [FeatureProblem]) {
        var features: [StoredFeature] = []
        let problems = try forEachFeature(of: layerName) { feature in
            features.append(feature)
            return true
        }
        return (features, problems)
    }

    /// As `readFeatures(of:)`, one feature at a time, so a caller that keeps only part of each
    /// feature (the snapshot file's builder) never holds the layer whole. `body` returns false
    /// to stop early. Returns the features left out, as `readFeatures(of:)` lists them.
    /// With `fids`, only those features, in the order given (a write reads back what it wrote).
    @discardableResult
    public func forEachFeature(of layerName: String, fids: [Int64]? = nil, _ body: (StoredFeature) -> Bool) throws(StoreError) -> [FeatureProblem] {
        let info = try layer(layerName, countingRows: false)
        let (fidColumn, _) = try sqlite { try tableColumns(layerName) }
        var transformer: CoordinateTransformer?
        if let crs = info.crs, crs != "EPSG:4326" {
            do {
                transformer = try CoordinateTransformer(from: crs, to: "EPSG:4326")
            } catch {
                throw .notAGeoPackage(path: path, reason: "layer '\(layerName)': \(error)")
            }
        }

        let selected = ([fidColumn, info.geometryColumn].compactMap { $0 } + info.columns.map(\.name)).map(quoted)
        let orderBy = fidColumn.map { " ORDER BY \(quoted($0))" } ?? ""
        return try sqlite { () throws -> [FeatureProblem] in
            let only = fids != nil ? fidColumn.map { " WHERE \(quoted($0)) = ?" } ?? " WHERE rowid = ?" : ""
            let statement = try database.prepare("SELECT \(selected.joined(separator: ", ")) FROM \(quoted(layerName))\(only)\(orderBy)")
            var problems: [FeatureProblem] = []
            var rowNumber: Int64 = 0
            var wanted = (fids ?? []).makeIterator()
            func next() throws -> Bool {
                guard fids != nil else { return try statement.step() }
                while let fid = wanted.next() {
                    statement.reset()
                    try statement.bind([.integer(fid)])
                    rowNumber = fid - 1
                    if try statement.step() { return true }
                }
                return false
            }
            while try next() {
                rowNumber += 1
                var column: Int32 = 0
                var fid = rowNumber
                if fidColumn != nil {
                    fid = statement.int64(0)
                    column += 1
                }
                var geometry: Geometry?
                if info.geometryColumn != nil {
                    if !statement.isNull(column) {
                        do {
                            geometry = try readGeometry(statement, column, transformer)
                        } catch {
                            problems.append(FeatureProblem(fid: fid, reason: "\(error)"))
                            continue
                        }
                    }
                    column += 1
                }
                var properties = Attributes()
                for info in info.columns {
                    properties[info.name] = attributeValue(statement, column, info)
                    column += 1
                }
                guard body(StoredFeature(fid: fid, feature: Feature(id: .integer(fid), geometry: geometry, properties: properties))) else { break }
            }
            return problems
        }
    }

    /// One feature's geometry in EPSG:4326 (nil when empty), or why it cannot be had.
    private func readGeometry(_ statement: Statement, _ column: Int32, _ transformer: CoordinateTransformer?) throws(StoreError) -> Geometry? {
        let decoded: Geometry?
        do {
            decoded = try statement.withBlob(column) { blob throws(StoreError) in try GeoPackageBinary.decode(blob) }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .corruptGeometry("\(error)")
        }
        guard let decoded, let transformer else { return decoded }
        do {
            // PROJ's answers are checked there: a position outside the area of use is an error.
            return try transformer.transform(decoded)
        } catch {
            throw .corruptGeometry("cannot reproject it to EPSG:4326: \(error)")
        }
    }

    private func attributeValue(_ statement: Statement, _ column: Int32, _ info: ColumnInfo) -> AttributeValue {
        switch statement.value(column) {
        case .null: return .null
        case .integer(let i): return info.type == .boolean ? .bool(i != 0) : .integer(i)
        case .real(let d): return .real(d)
        case .text(let s): return info.isJSON ? .json(s) : .text(s)
        case .blob(let b): return .text(String(decoding: b, as: UTF8.self))
        }
    }

    // MARK: - Catalog helpers

    /// The table's INTEGER PRIMARY KEY column (the fid) and all declared columns in order.
    func tableColumns(_ table: String) throws -> (fid: String?, columns: [(name: String, type: String)]) {
        let statement = try database.prepare("SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid")
        try statement.bind([.text(table)])
        var fid: String?
        var columns: [(String, String)] = []
        while try statement.step() {
            let name = statement.text(0) ?? ""
            let type = statement.text(1) ?? ""
            if statement.int64(2) == 1 && type.uppercased() == "INTEGER" { fid = name }
            columns.append((name, type))
        }
        return (fid, columns)
    }

    func jsonColumnNames(of table: String) throws -> Set<String> {
        guard try database.hasTable("gpkg_data_columns") else { return [] }
        let statement = try database.prepare("SELECT column_name FROM gpkg_data_columns WHERE table_name = ? AND mime_type = 'application/json'")
        try statement.bind([.text(table)])
        var names: Set<String> = []
        while try statement.step() { names.insert(statement.text(0) ?? "") }
        return names
    }

    func timeSeriesLink(of table: String) throws -> TimeSeriesLink? {
        guard try database.hasTable("vltava_time_series") else { return nil }
        // Stores written before units were kept have no `units` column.
        let units = try GeoPackage.hasColumn(database, table: "vltava_time_series", column: "units") ? "units" : "NULL"
        let statement = try database.prepare("""
            SELECT key_layer, layer_key_column, key_column, start_column, end_column, \(units)
            FROM vltava_time_series WHERE table_name = ?
            """)
        try statement.bind([.text(table)])
        guard try statement.step() else { return nil }
        return TimeSeriesLink(
            keyLayer: statement.text(0) ?? "", layerKeyColumn: statement.text(1) ?? "",
            keyColumn: statement.text(2) ?? "", startColumn: statement.text(3) ?? "", endColumn: statement.text(4) ?? "",
            units: TimeSeriesLink.units(fromJSON: statement.text(5)))
    }

    static func hasColumn(_ database: Database, table: String, column: String) throws -> Bool {
        let statement = try database.prepare("SELECT 1 FROM pragma_table_info(?) WHERE name = ?")
        try statement.bind([.text(table), .text(column)])
        return try statement.step()
    }

    /// Runs SQLite work, turning its errors into `StoreError.sqlite`.
    func sqlite<T>(_ body: () throws -> T) throws(StoreError) -> T {
        do {
            return try body()
        } catch let error as StoreError {
            throw error
        } catch let error as SQLiteError {
            throw .sqlite(error)
        } catch {
            throw .corruptGeometry("\(error)")
        }
    }
}

/// SQL text both stores share: SQLite and PostgreSQL quote identifiers alike.
public enum SQL {
    /// A table or column name as an identifier: in double quotes, embedded quotes doubled.
    public static func identifier(_ name: String) -> String {
        // Most names hold no quote: they skip Foundation's search, which a batch pays per row.
        guard name.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + name + "\"" }
        return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// A SQL identifier in double quotes, with embedded quotes doubled.
func quoted(_ identifier: String) -> String { SQL.identifier(identifier) }
