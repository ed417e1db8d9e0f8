// Writes into a store's layers while it serves: batches of feature changes and new layers,
// each batch one SQLite transaction, so it is all applied or not at all, and durable when
// `apply` returns (WAL with `synchronous = FULL`: the commit's WAL frames are on disk).
//
// Every feature goes through the import's checks (FeatureChecks below): the CRS and its area
// of use, coordinate ranges, the layer's geometry type, GEOS validity (repaired with make-valid
// unless the batch is strict), and each attribute against its column's type. The first
// problem fails the batch, naming the operation's position and why; nothing is written.
//
// Every change gets a store-wide, increasing sequence number: a row of `vltava_changes`
// written in the same transaction (AUTOINCREMENT, so a number is never given twice). The
// change feed reads that table (`changes(since:)`).

import Foundation
import Geometry
import SQLite

/// One change to one feature of a layer.
public enum FeatureChange: Sendable, Equatable {
    /// A new feature. An integer `id` becomes its fid (an error if the layer has it);
    /// otherwise the store gives the next fid.
    case insert(Feature)
    /// The feature `fid` replaced whole: its geometry and every attribute (those not given
    /// become null).
    case replace(fid: Int64, Feature)
    /// The attributes the feature gives set (a null clears one) and, when it has one, its
    /// geometry; the rest of feature `fid` stays.
    case update(fid: Int64, Feature)
    case delete(fid: Int64)
    /// Replaces the feature whose `keys` columns hold the same values as this one's (keeping
    /// its fid), or inserts it when none does.
    case upsert(keys: [String], Feature)
}

/// A layer made from a schema rather than a file.
public struct LayerSchema: Sendable, Equatable {
    public var name: String
    /// "POINT", "LINESTRING", "POLYGON", their MULTI forms or "GEOMETRY"; nil for a table of
    /// attributes without geometry.
    public var geometryType: String?
    public var columns: [ColumnInfo]
    public var description: String

    public init(name: String, geometryType: String?, columns: [ColumnInfo], description: String = "") {
        self.name = name
        self.geometryType = geometryType
        self.columns = columns
        self.description = description
    }
}

public enum WriteOperation: Sendable, Equatable {
    case create(LayerSchema)
    case change(layer: String, FeatureChange)
}

/// Operations applied together: all or none.
public struct WriteBatch: Sendable, Equatable {
    public var operations: [WriteOperation]
    /// The CRS the geometries are in ("EPSG:5514"); nil for WGS 84 longitude/latitude.
    public var crs: String?
    /// Refuse an invalid geometry rather than repair it with make-valid (as `import --strict`).
    public var strict: Bool

    public init(_ operations: [WriteOperation] = [], crs: String? = nil, strict: Bool = false) {
        self.operations = operations
        self.crs = crs
        self.strict = strict
    }
}

/// One entry of the change feed.
public struct Change: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case created, inserted, replaced, updated, deleted
    }

    public var sequence: Int64
    public var layer: String
    /// nil for a change to the layer as a whole (`created`).
    public var fid: Int64?
    public var kind: Kind
    /// When it was committed: UTC, ISO 8601 with milliseconds.
    public var at: String

    public init(sequence: Int64, layer: String, fid: Int64?, kind: Kind, at: String) {
        self.sequence = sequence
        self.layer = layer
        self.fid = fid
        self.kind = kind
        self.at = at
    }
}

/// What a committed batch did.
public struct AppliedBatch: Sendable {
    /// One per operation, in order, with its sequence number.
    public var changes: [Change]
    /// Every layer the batch created or changed, as it is now, but for `featureCount` (0: a
    /// count reads the whole table; whoever holds the layer counts the changes).
    public var layers: [String: LayerInfo]
    /// The changed features as now stored, in EPSG:4326, by layer and fid; nil for a deleted one.
    public var features: [String: [Int64: StoredFeature?]]
    /// Geometries repaired with make-valid, one line each naming the operation.
    public var warnings: [String]
    /// The store's last sequence number after the batch.
    public var sequence: Int64

    public init(changes: [Change], layers: [String: LayerInfo], features: [String: [Int64: StoredFeature?]], warnings: [String], sequence: Int64) {
        self.changes = changes
        self.layers = layers
        self.features = features
        self.warnings = warnings
        self.sequence = sequence
    }
}

extension GeoPackage {
    /// The store's last change's sequence number; 0 before any write.
    func lastSequence() throws(StoreError) -> Int64 {
        try sqlite {
            guard try database.hasTable("vltava_changes") else { return 0 }
            if case .integer(let last)? = try database.scalar("SELECT max(seq) FROM vltava_changes") { return last }
            return 0
        }
    }

    /// The changes after `sequence`, oldest first, at most `limit`.
    public func changes(since sequence: Int64, limit: Int) throws(StoreError) -> [Change] {
        try sqlite {
            guard try database.hasTable("vltava_changes") else { return [] }
            let statement = try database.prepare("SELECT seq, layer, fid, change, at FROM vltava_changes WHERE seq > ? ORDER BY seq LIMIT ?")
            try statement.bind([.integer(sequence), .integer(Int64(max(0, limit)))])
            var changes: [Change] = []
            while try statement.step() {
                changes.append(Change(sequence: statement.int64(0), layer: statement.text(1) ?? "",
                                      fid: statement.isNull(2) ? nil : statement.int64(2),
                                      kind: Change.Kind(rawValue: statement.text(3) ?? "") ?? .updated, at: statement.text(4) ?? ""))
            }
            return changes
        }
    }

    /// Applies `batch` in one transaction and returns what it did; on any problem nothing is
    /// written and the error names the operation (its position, from 1) and why.
    public func apply(_ batch: WriteBatch) throws(StoreError) -> AppliedBatch {
        if database.isReadOnly { throw .readOnly(path) }
        var writer = BatchWriter(store: self, batch: batch)
        return try sqlite {
            // FULL: each commit syncs the WAL, so an acknowledged batch survives power loss as
            // well as a crash (NORMAL would survive a crash only).
            try database.execute("PRAGMA synchronous = FULL")
            return try database.transaction { try writer.run() }
        }
    }
}

/// One batch being applied, inside its transaction.
private struct BatchWriter {
    let store: GeoPackage
    let batch: WriteBatch
    var database: Database { store.database }
    /// The batch's time, in GeoPackage's form for `last_change` (milliseconds, Req 15).
    let at: String = {
        let now = Date().timeIntervalSince1970
        let whole = now.rounded(.down)
        let milliseconds = min(999, max(0, Int(((now - whole) * 1000).rounded(.down))))
        return String(UTCTime(seconds: Int64(whole)).iso.dropLast()) + "." + String(milliseconds + 1000).dropFirst() + "Z"
    }()
    var changes: [Change] = []
    var layers: [String: LayerInfo] = [:]
    var features: [String: [Int64: StoredFeature?]] = [:]
    var checks: FeatureChecks?
    var warnings: [String] = []
    var indexed: Set<String> = []

    init(store: GeoPackage, batch: WriteBatch) {
        self.store = store
        self.batch = batch
    }

    mutating func run() throws -> AppliedBatch {
        try store.database.execute("""
            CREATE TABLE IF NOT EXISTS vltava_changes (
              seq INTEGER PRIMARY KEY AUTOINCREMENT, layer TEXT NOT NULL, fid INTEGER, change TEXT NOT NULL, at TEXT NOT NULL)
            """)
        for (offset, operation) in batch.operations.enumerated() {
            let position = offset + 1
            switch operation {
            case .create(let schema):
                try create(schema, position)
                try record(schema.name, fid: nil, .created)
            case .change(let name, let change):
                let layer = try layer(name, position)
                let (fid, kind) = try apply(change, to: layer, position)
                try record(layer.name, fid: fid, kind)
                features[layer.name, default: [:]][fid] = .some(nil)
            }
        }
        // The changed features as stored, read back through the store's one reader (so in
        // EPSG:4326 whatever the layer's CRS), and each layer's extent.
        for (name, fids) in features {
            var stored: [Int64: StoredFeature?] = fids
            try store.forEachFeature(of: name, fids: Array(fids.keys)) { stored[$0.fid] = $0; return true }
            features[name] = stored
            var info = try store.layer(name, countingRows: false)
            if let box = try extent(of: info) { info.bbox = box }
            info.lastChange = at
            layers[name] = info
            try store.database.prepare("UPDATE gpkg_contents SET last_change = ? WHERE table_name = ?").run([.text(at), .text(name)])
        }
        let sequence = try changes.last?.sequence ?? store.lastSequence()
        return AppliedBatch(changes: changes, layers: layers, features: features, warnings: warnings, sequence: sequence)
    }

    /// The layer `name` (as the store spells it), read once per batch.
    private mutating func layer(_ name: String, _ position: Int) throws -> LayerInfo {
        if let known = layers[name] ?? layers.values.first(where: { $0.name.lowercased() == name.lowercased() }) { return known }
        guard let stored = try store.layerNames().first(where: { $0.lowercased() == name.lowercased() }) else {
            throw StoreError.badWrite(position: position, reason: StoreError.unknownLayer(name, known: try store.layerNames()).description)
        }
        let info = try store.layer(stored, countingRows: false)
        if info.timeSeries == nil, GeoPackage.indoorTables.contains(stored) {
            throw StoreError.badWrite(position: position, reason: "'\(stored)' is part of the indoor model: write it through a survey import")
        }
        layers[stored] = info
        return info
    }

    private mutating func create(_ schema: LayerSchema, _ position: Int) throws {
        do {
            try Importer.checkLayerName(schema.name)
        } catch {
            throw StoreError.badWrite(position: position, reason: error.description)
        }
        if try store.hasLayer(schema.name) || database.hasTable(schema.name) {
            throw StoreError.badWrite(position: position, reason: "layer '\(schema.name)' already exists")
        }
        var seen: Set<String> = ["fid", "geom"]
        for column in schema.columns {
            guard seen.insert(column.name.lowercased()).inserted, !column.name.isEmpty else {
                throw StoreError.badWrite(position: position, reason: "column '\(column.name)' is named twice or is reserved (fid, geom)")
            }
        }
        let geometryType = schema.geometryType?.uppercased()
        if let geometryType, !FeatureChecks.geometryTypes.contains(geometryType) {
            throw StoreError.badWrite(position: position, reason: "unknown geometry type '\(geometryType)' (one of \(FeatureChecks.geometryTypes.sorted().joined(separator: ", ")))")
        }
        try store.createLayer(schema.name, geometryType: geometryType, columns: schema.columns, description: schema.description)
        layers[schema.name] = try store.layer(schema.name, countingRows: false)
    }

    /// Applies one change; returns the fid it touched and what it did.
    private mutating func apply(_ change: FeatureChange, to layer: LayerInfo, _ position: Int) throws -> (Int64, Change.Kind) {
        let table = quoted(layer.name)
        switch change {
        case .insert(let feature):
            var fid: Int64?
            if let id = feature.id {
                guard case .integer(let given) = id else {
                    throw StoreError.badWrite(position: position, reason: "a feature id must be an integer (it becomes the fid); this one is '\(id)'")
                }
                if try exists(layer, given) { throw StoreError.featureExists(layer: layer.name, fid: given, position: position) }
                fid = given
            }
            let row = try checkedRow(feature, of: layer, position, whole: true)
            return (try insert(row, fid: fid, into: layer), .inserted)
        case .replace(let fid, let feature):
            guard try exists(layer, fid) else { throw StoreError.noSuchFeature(layer: layer.name, fid: fid, position: position) }
            let row = try checkedRow(feature, of: layer, position, whole: true)
            try update(layer, fid, row)
            return (fid, .replaced)
        case .update(let fid, let feature):
            guard try exists(layer, fid) else { throw StoreError.noSuchFeature(layer: layer.name, fid: fid, position: position) }
            let row = try checkedRow(feature, of: layer, position, whole: false)
            try update(layer, fid, row)
            return (fid, .updated)
        case .delete(let fid):
            let delete = try database.prepare("DELETE FROM \(table) WHERE fid = ?")
            try delete.run([.integer(fid)])
            guard database.changes == 1 else { throw StoreError.noSuchFeature(layer: layer.name, fid: fid, position: position) }
            return (fid, .deleted)
        case .upsert(let keys, let feature):
            var columns: [ColumnInfo] = []
            var values: [SQLiteValue] = []
            for key in keys {
                guard let column = layer.columns.first(where: { $0.name.lowercased() == key.lowercased() }) else {
                    throw StoreError.badWrite(position: position, reason: "layer '\(layer.name)' has no key column '\(key)' (columns: \(layer.columns.map(\.name).joined(separator: ", ")))")
                }
                let value = feature.properties[column.name] ?? feature.properties.first(where: { $0.0.lowercased() == key.lowercased() })?.1 ?? .null
                guard !value.isNull else { throw StoreError.badWrite(position: position, reason: "the feature has no value for the key column '\(column.name)'") }
                columns.append(column)
                values.append(try FeatureChecks.stored(value, column, position))
            }
            guard !columns.isEmpty else { throw StoreError.badWrite(position: position, reason: "an upsert names at least one key column") }
            try indexKey(columns.map(\.name), of: layer)
            let row = try checkedRow(feature, of: layer, position, whole: true)
            let condition = columns.map { "\(quoted($0.name)) = ?" }.joined(separator: " AND ")
            let find = try database.prepare("SELECT fid FROM \(table) WHERE \(condition) LIMIT 2")
            try find.bind(values)
            var found: [Int64] = []
            while try find.step() { found.append(find.int64(0)) }
            if found.count > 1 {
                throw StoreError.badWrite(position: position, reason: "more than one feature of '\(layer.name)' has the same \(columns.map(\.name).joined(separator: ", ")): the key must be unique")
            }
            if let fid = found.first {
                try update(layer, fid, row)
                return (fid, .replaced)
            }
            return (try insert(row, fid: nil, into: layer), .inserted)
        }
    }

    /// An index on an upsert's key columns, made with the first upsert on them, so each upsert
    /// finds its row by a lookup rather than a scan (an hourly feed upserts into a series that
    /// only grows). Part of the batch's transaction, like every other change.
    private mutating func indexKey(_ columns: [String], of layer: LayerInfo) throws {
        let name = "vltava_key_" + ([layer.name] + columns).joined(separator: "_")
        guard indexed.insert(name.lowercased()).inserted else { return }
        try database.execute("CREATE INDEX IF NOT EXISTS \(quoted(name)) ON \(quoted(layer.name)) (\(columns.map(quoted).joined(separator: ", ")))")
    }

    private func exists(_ layer: LayerInfo, _ fid: Int64) throws -> Bool {
        try database.scalar("SELECT 1 FROM \(quoted(layer.name)) WHERE fid = ?", .integer(fid)) != nil
    }

    /// The columns a change sets, checked: the geometry (in the layer's CRS) and the attributes.
    /// `whole`: every column not given is set to null (an insert or a replacement).
    private mutating func checkedRow(_ feature: Feature, of layer: LayerInfo, _ position: Int, whole: Bool) throws -> [(column: String, value: SQLiteValue)] {
        var row: [(column: String, value: SQLiteValue)] = []
        if layer.kind == .features, let geometryColumn = layer.geometryColumn {
            if let geometry = feature.geometry {
                if checks == nil { checks = try FeatureChecks(batch: batch) }
                guard let checks else { return [] }
                let checked = try checks.check(geometry, for: layer, position)
                if let repaired = checked.warning { warnings.append("operation \(position): \(repaired)") }
                row.append((geometryColumn, .blob(try checks.encode(checked.geometry, for: layer, position))))
            } else if whole {
                throw StoreError.badWrite(position: position, reason: "the feature has no geometry, and layer '\(layer.name)' holds \(layer.geometryType ?? "GEOMETRY") features")
            }
        } else if feature.geometry != nil {
            throw StoreError.badWrite(position: position, reason: "'\(layer.name)' is a table without geometry; the feature has one")
        }
        var given: [String: SQLiteValue] = [:]
        for (name, value) in feature.properties {
            guard let column = layer.columns.first(where: { $0.name == name }) ?? layer.columns.first(where: { $0.name.lowercased() == name.lowercased() }) else {
                throw StoreError.badWrite(position: position, reason: "layer '\(layer.name)' has no column '\(name)' (columns: \(layer.columns.map(\.name).joined(separator: ", ")))")
            }
            given[column.name] = try FeatureChecks.stored(value, column, position)
        }
        for column in layer.columns {
            if let value = given[column.name] { row.append((column.name, value)) } else if whole { row.append((column.name, .null)) }
        }
        return row
    }

    private func insert(_ row: [(column: String, value: SQLiteValue)], fid: Int64?, into layer: LayerInfo) throws -> Int64 {
        let columns = ["fid"] + row.map(\.column)
        let statement = try database.prepare("INSERT INTO \(quoted(layer.name)) (\(columns.map(quoted).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))")
        try statement.run([fid.map { .integer($0) } ?? .null] + row.map(\.value))
        return database.lastInsertRowID
    }

    private func update(_ layer: LayerInfo, _ fid: Int64, _ row: [(column: String, value: SQLiteValue)]) throws {
        guard !row.isEmpty else { return }
        let assignments = row.map { "\(quoted($0.column)) = ?" }.joined(separator: ", ")
        try database.prepare("UPDATE \(quoted(layer.name)) SET \(assignments) WHERE fid = ?").run(row.map(\.value) + [.integer(fid)])
    }

    private mutating func record(_ layer: String, fid: Int64?, _ kind: Change.Kind) throws {
        try database.prepare("INSERT INTO vltava_changes (layer, fid, change, at) VALUES (?, ?, ?, ?)")
            .run([.text(layer), fid.map { .integer($0) } ?? .null, .text(kind.rawValue), .text(at)])
        changes.append(Change(sequence: database.lastInsertRowID, layer: layer, fid: fid, kind: kind, at: at))
    }

    /// The layer's extent grown by what the batch wrote (GeoPackage's `gpkg_contents` box is
    /// informative: it is widened, never narrowed, as GDAL does).
    private func extent(of info: LayerInfo) throws -> BBox? {
        guard info.kind == .features, let written = features[info.name] else { return nil }
        var box = info.bbox ?? .empty
        for case let stored? in written.values { if let geometry = stored.feature.geometry { box.extend(geometry.bbox) } }
        guard !box.isEmpty else { return nil }
        try database.prepare("UPDATE gpkg_contents SET min_x = ?, min_y = ?, max_x = ?, max_y = ? WHERE table_name = ?")
            .run([.real(box.minLon), .real(box.minLat), .real(box.maxLon), .real(box.maxLat), .text(info.name)])
        return box
    }
}

/// The import's checks for one written geometry, and its encoding in the layer's CRS; the
/// PostGIS store's writer takes the same (PostGIS/PostGISWrites.swift).
public struct FeatureChecks {
    public static let geometryTypes: Set<String> = [
        "POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION", "GEOMETRY",
    ]

    let batch: WriteBatch
    let geos: GEOSContext
    /// From the batch's CRS to WGS 84, when it has one.
    let fromBatch: CoordinateTransformer?
    let area: AreaOfUse?

    public init(batch: WriteBatch) throws {
        self.batch = batch
        geos = try GEOSContext()
        if let crs = batch.crs, Projection.normalizeCRS(crs) != "EPSG:4326" {
            fromBatch = try CoordinateTransformer(from: crs, to: "EPSG:4326")
            area = Projection.areaOfUse(crs).flatMap { $0.isWorld ? nil : $0 }
        } else {
            fromBatch = nil
            area = nil
        }
    }

    /// The geometry in WGS 84, checked; with the warning when make-valid repaired it.
    public func check(_ input: Geometry, for layer: LayerInfo, _ position: Int) throws -> (geometry: Geometry, warning: String?) {
        var geometry = input
        if let fromBatch {
            do {
                geometry = try fromBatch.transform(geometry)
            } catch {
                throw StoreError.badWrite(position: position, reason: "cannot reproject it from \(batch.crs ?? ""): \(error)")
            }
            if let area, !area.meets(geometry.bbox) {
                throw StoreError.badWrite(position: position, reason: "it lands outside the area of use of \(area) at \(Importer.formatPosition(Importer.firstPosition(geometry))): check the CRS")
            }
        }
        if let problem = Importer.coordinateRangeProblem(geometry) { throw StoreError.badWrite(position: position, reason: problem) }
        var warning: String?
        let validity = try geos.validity(geometry)
        if !validity.isValid {
            let reason = validity.reason ?? "invalid geometry"
            let at = validity.location.map { " at (\($0.lon) \($0.lat))" } ?? ""
            if batch.strict { throw StoreError.badWrite(position: position, reason: "invalid \(geometry.typeName): \(reason)\(at)") }
            geometry = try geos.makeValid(geometry)
            warning = "invalid \(input.typeName): \(reason)\(at); repaired with make-valid"
        }
        let declared = layer.geometryType ?? "GEOMETRY"
        if declared != "GEOMETRY" && geometry.typeName.uppercased() != declared {
            throw StoreError.badWrite(position: position, reason: "layer '\(layer.name)' holds \(declared) geometries; this is a \(geometry.typeName)")
        }
        return (geometry, warning)
    }

    /// GeoPackage binary in the layer's CRS.
    func encode(_ geometry: Geometry, for layer: LayerInfo, _ position: Int) throws -> [UInt8] {
        guard let crs = layer.crs, crs != "EPSG:4326" else { return GeoPackageBinary.encode(geometry, srsID: 4326) }
        do {
            let toLayer = try CoordinateTransformer(from: "EPSG:4326", to: crs)
            let code = Int32(crs.split(separator: ":").last.flatMap { Int32($0) } ?? 0)
            return GeoPackageBinary.encode(try toLayer.transform(geometry), srsID: code)
        } catch {
            throw StoreError.badWrite(position: position, reason: "cannot reproject it to the layer's \(crs): \(error)")
        }
    }

    /// An attribute as its column stores it, or why it does not fit.
    public static func stored(_ value: AttributeValue, _ column: ColumnInfo, _ position: Int) throws(StoreError) -> SQLiteValue {
        func refuse(_ what: String) -> StoreError {
            .badWrite(position: position, reason: "column '\(column.name)' holds \(column.typeDescription); \(what) does not fit")
        }
        if case .null = value { return .null }
        if column.isJSON {
            switch value {
            case .json(let text): return .text(text)
            case .text(let text):
                guard (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) != nil else { throw refuse("the text '\(text.prefix(40))', which is not JSON,") }
                return .text(text)
            default: throw refuse("\(value)")
            }
        }
        switch (column.type, value) {
        case (.integer, .integer(let i)): return .integer(i)
        case (.integer, .real(let d)):
            guard let i = Int64(exactly: d) else { throw refuse("the number \(d)") }
            return .integer(i)
        case (.real, .integer(let i)): return .real(Double(i))
        case (.real, .real(let d)): return .real(d)
        case (.boolean, .bool(let b)): return .integer(b ? 1 : 0)
        case (.text, .text(let s)), (.blob, .text(let s)): return .text(s)
        case (.dateTime, .text(let s)):
            guard UTCTime.parse(s) != nil else { throw refuse("the text '\(s.prefix(40))', which is not an ISO 8601 time,") }
            return .text(s)
        default:
            throw refuse(value.writeDescription)
        }
    }
}

private extension AttributeValue {
    var writeDescription: String {
        switch self {
        case .null: "null"
        case .bool(let b): "the boolean \(b)"
        case .integer(let i): "the number \(i)"
        case .real(let d): "the number \(d)"
        case .text(let s): "the text '\(s.prefix(40))'"
        case .json: "a JSON value"
        }
    }
}

/// Rows for a time-series table: from the CSV an import reads (the feed's own columns, such as
/// ČHMÚ's datefromutc and the station's description, mapped as `vltava import
/// --time-series-of` maps them), or from JSON objects named as the table's columns.
public enum TimeSeriesRows {
    /// The CSV's rows, as the series stores them; every problem with its line.
    public static func fromCSV(_ bytes: [UInt8], link: TimeSeriesLink, keyLayer: LayerInfo, keys: Set<String>) throws(StoreError) -> [Feature] {
        let table = try Importer.parseCSV(bytes, file: "the rows")
        return try Importer.observationRows(table, file: "the rows", keyLayer: keyLayer, keyColumn: link.keyColumn) { _ throws(StoreError) in keys }.rows
    }

    /// JSON rows with the interval read as UTC (written as ISO 8601) and the key checked.
    public static func fromJSON(_ rows: [Attributes], link: TimeSeriesLink, keys: Set<String>) throws(StoreError) -> [Feature] {
        var problems: [ImportProblem] = []
        var features: [Feature] = []
        for (index, row) in rows.enumerated() {
            let location = "row \(index + 1)"
            var row = row
            guard let key = row[link.keyColumn]?.stringValue, keys.contains(key) else {
                problems.append(ImportProblem(location: location, message: "'\(row[link.keyColumn]?.stringValue ?? "")' is not a \(link.layerKeyColumn) of layer '\(link.keyLayer)'"))
                continue
            }
            guard let start = row[link.startColumn]?.stringValue.flatMap(UTCTime.parse), let end = row[link.endColumn]?.stringValue.flatMap(UTCTime.parse), start < end else {
                problems.append(ImportProblem(location: location, message: "\(link.startColumn) and \(link.endColumn) must be UTC times, the start first"))
                continue
            }
            row[link.startColumn] = .text(start.iso)
            row[link.endColumn] = .text(end.iso)
            features.append(Feature(geometry: nil, properties: row))
        }
        if !problems.isEmpty { throw .importFailed(file: "the rows", problems: problems) }
        return features
    }

    /// The operations that write them: each replaces the series' row of the same station and
    /// start, or is inserted, so a feed that sends an hour again changes nothing twice.
    public static func operations(_ rows: [Feature], into table: String, link: TimeSeriesLink) -> [WriteOperation] {
        rows.map { .change(layer: table, .upsert(keys: [link.keyColumn, link.startColumn], $0)) }
    }
}

extension WriteBatch {
    /// Adds the insert of `feature` into `layer` (its integer id, if any, becomes the fid).
    public mutating func insert(_ feature: Feature, into layer: String) {
        operations.append(.change(layer: layer, .insert(feature)))
    }

    /// Adds the replacement of feature `fid` of `layer`: geometry and every attribute.
    public mutating func replace(_ fid: Int64, in layer: String, with feature: Feature) {
        operations.append(.change(layer: layer, .replace(fid: fid, feature)))
    }

    /// Adds an update of feature `fid` of `layer`: the attributes given (null clears one) and
    /// the geometry when given.
    public mutating func update(_ fid: Int64, in layer: String, properties: Attributes, geometry: Geometry? = nil) {
        operations.append(.change(layer: layer, .update(fid: fid, Feature(geometry: geometry, properties: properties))))
    }

    public mutating func delete(_ fid: Int64, from layer: String) {
        operations.append(.change(layer: layer, .delete(fid: fid)))
    }

    /// Adds an upsert: the feature of `layer` whose `keys` columns hold `feature`'s values is
    /// replaced, or `feature` is inserted.
    public mutating func upsert(_ feature: Feature, into layer: String, keys: [String]) {
        operations.append(.change(layer: layer, .upsert(keys: keys, feature)))
    }

    /// Adds the creation of a layer from a schema.
    public mutating func create(_ schema: LayerSchema) {
        operations.append(.create(schema))
    }
}
