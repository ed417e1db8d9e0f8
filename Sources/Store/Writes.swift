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
import Support

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
        /// A layer written whole, outside the write path: `vltava import` (new or `--replace`),
        /// `vltava push`, and the new name of a renamed layer. A follower reads it again.
        case imported
        /// A layer removed: `vltava drop`, and the old name of a renamed layer.
        case dropped
    }

    public var sequence: Int64
    public var layer: String
    /// nil for a change to the layer as a whole (`created`).
    public var fid: Int64?
    public var kind: Kind
    /// When it was committed: UTC, ISO 8601 with milliseconds.
    public var at: String

    /// Now, in GeoPackage's form for `last_change` (UTC, milliseconds, Req 15).
    static func now() -> String {
        let now = Date().timeIntervalSince1970
        let whole = now.rounded(.down)
        let milliseconds = min(999, max(0, Int(((now - whole) * 1000).rounded(.down))))
        return String(UTCTime(seconds: Int64(whole)).iso.dropLast()) + "." + String(milliseconds + 1000).dropFirst() + "Z"
    }

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
    public func lastSequence() throws(StoreError) -> Int64 {
        try sqlite {
            guard try database.hasTable("vltava_changes") else { return 0 }
            if case .integer(let last)? = try database.scalar("SELECT max(seq) FROM vltava_changes") { return last }
            return 0
        }
    }

    /// The change table's schema, made by the first write or layer change that numbers one.
    static let changeTable = """
        CREATE TABLE IF NOT EXISTS vltava_changes (
          seq INTEGER PRIMARY KEY AUTOINCREMENT, layer TEXT NOT NULL, fid INTEGER, change TEXT NOT NULL, at TEXT NOT NULL)
        """

    /// Numbers a change to a layer as a whole (`imported`, `dropped`) in the open transaction,
    /// so the feed has it exactly when the store does.
    func recordLayerChange(_ layer: String, _ kind: Change.Kind) throws {
        try database.execute(Self.changeTable)
        try database.prepare("INSERT INTO vltava_changes (layer, fid, change, at) VALUES (?, NULL, ?, ?)")
            .run([.text(layer), .text(kind.rawValue), .text(Change.now())])
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
        try apply([batch])[0].get()
    }

    /// Applies each batch in a savepoint of one transaction (group commit): each all or
    /// nothing, its refusal naming its operation, and every one that succeeded durable with
    /// the one commit, so a group pays one fsync. Throws only when the whole group failed (the
    /// commit itself).
    public func apply(_ batches: [WriteBatch]) throws(StoreError) -> [Result<AppliedBatch, StoreError>] {
        if database.isReadOnly { throw .readOnly(path) }
        return try sqlite {
            // FULL: each commit syncs the WAL, so an acknowledged batch survives power loss as
            // well as a crash (NORMAL would survive a crash only). Statement journals in memory:
            // each INSERT fires the GeoPackage R-tree's triggers, so SQLite keeps every page a
            // statement first touches for that statement's own rollback, and in a temporary
            // file that cost 1,000-row batches some 19,000 pwrite calls a second. A 64 MB page
            // cache and a checkpoint every 16,384 WAL pages (not 1,000): a batch of random points
            // rewrites hundreds of R-tree pages, and at 1,000 SQLite checkpointed (read the WAL
            // back, wrote and synced the file) after nearly every batch.
            try database.execute("PRAGMA synchronous = FULL; PRAGMA temp_store = MEMORY; PRAGMA cache_size = -65536; PRAGMA wal_autocheckpoint = 16384")
            return try database.transaction {
                try batches.map { batch throws -> Result<AppliedBatch, StoreError> in
                    try database.execute("SAVEPOINT vltava_batch")
                    var writer = GeoPackageBatch(store: self)
                    let applied: AppliedBatch
                    do throws(StoreError) {
                        applied = try sqlite { try writer.run(batch) }
                    } catch {
                        try database.execute("ROLLBACK TO vltava_batch; RELEASE vltava_batch")
                        return .failure(error)
                    }
                    try database.execute("RELEASE vltava_batch")
                    return .success(applied)
                }
            }
        }
    }
}

/// One batch inside its transaction: the SQL behind what `BatchPlanner` decides.
private struct GeoPackageBatch: BatchStore {
    let store: GeoPackage
    var database: Database { store.database }
    /// The batch's time, in GeoPackage's form for `last_change` (milliseconds, Req 15).
    let at = Change.now()
    /// The batch's statements by their text, prepared once: a batch of 1,000 inserts into one
    /// layer runs the same two (the row and its change) a thousand times.
    var statements: [String: Statement] = [:]
    /// Per layer the batch inserts into: its R-tree insert trigger's SQL, dropped for the batch,
    /// and the inserted rows' envelopes, which `addToRTrees` adds in one pass and then puts the
    /// trigger back (RTreeInsert.swift), all in the batch's transaction: no other connection
    /// ever sees the layer without its trigger or its index without a committed row.
    var deferredRTrees: [String: (rtree: String, trigger: String, cells: [RTreeCell])] = [:]
    /// Layers with no R-tree insert trigger to defer (none, or not the spec's name).
    var undeferred: Set<String> = []
    /// The batch's inserts and upserts per layer (lowercased). Below `fewestDeferredInserts`
    /// into a layer, its trigger is left be: dropping and making it again changes the schema,
    /// which writes `sqlite_master` and makes the connection prepare its statements again, more
    /// than the trigger costs for a few rows (a one-feature write: 18 page writes, not 12).
    var inserts: [String: Int] = [:]
    static let fewestDeferredInserts = 32

    init(store: GeoPackage) { self.store = store }

    mutating func run(_ batch: WriteBatch) throws -> AppliedBatch {
        try database.execute(GeoPackage.changeTable)
        for case .change(let layer, let change) in batch.operations {
            switch change {
            case .insert, .upsert: inserts[layer.lowercased(), default: 0] += 1
            default: break
            }
        }
        let outcome = try BatchPlanner.apply(batch, to: &self)
        for name in Array(deferredRTrees.keys) { try addToRTree(of: name) }
        // The changed features as stored, read back through the store's one reader (so in
        // EPSG:4326 whatever the layer's CRS), and each layer's extent.
        var features: [String: [Int64: StoredFeature?]] = [:]
        var layers: [String: LayerInfo] = [:]
        for (name, fids) in outcome.touched {
            var stored: [Int64: StoredFeature?] = [:]
            for fid in fids { stored[fid] = .some(nil) }
            try store.forEachFeature(of: name, fids: Array(fids)) { stored[$0.fid] = $0; return true }
            features[name] = stored
        }
        for name in outcome.layers.keys where outcome.touched[name] != nil || outcome.changes.contains(where: { $0.kind == .created && $0.layer == name }) {
            var info = try store.layer(name, countingRows: false)
            if let box = try extent(of: info, features[name]) { info.bbox = box }
            info.lastChange = at
            layers[name] = info
            try statement("UPDATE gpkg_contents SET last_change = ? WHERE table_name = ?").run([.text(at), .text(name)])
        }
        let sequence = try outcome.changes.last?.sequence ?? store.lastSequence()
        return AppliedBatch(changes: outcome.changes, layers: layers, features: features, warnings: outcome.warnings, sequence: sequence)
    }

    func layer(named name: String) throws -> LayerInfo? {
        guard let stored = try store.layerNames().first(where: { $0.lowercased() == name.lowercased() }) else { return nil }
        return try store.layer(stored, countingRows: false)
    }

    func layerNames() throws -> [String] { try store.layerNames() }

    mutating func create(_ schema: LayerSchema, _ position: Int) throws -> LayerInfo {
        // A table that is no layer (the change feed's, the indoor model's) takes the name too.
        if try database.hasTable(schema.name) {
            throw StoreError.badWrite(position: position, reason: "layer '\(schema.name)' already exists")
        }
        try store.createLayer(schema.name, geometryType: schema.geometryType, columns: schema.columns, description: schema.description)
        return try store.layer(schema.name, countingRows: false)
    }

    /// An index on an upsert's key columns, made with the first upsert on them, so each upsert
    /// finds its row by a lookup rather than a scan (an hourly feed upserts into a series that
    /// only grows). Part of the batch's transaction, like every other change.
    mutating func prepareKey(_ columns: [ColumnInfo], of layer: LayerInfo) throws {
        let name = "vltava_key_" + ([layer.name] + columns.map(\.name)).joined(separator: "_")
        try database.execute("CREATE INDEX IF NOT EXISTS \(quoted(name)) ON \(quoted(layer.name)) (\(columns.map { quoted($0.name) }.joined(separator: ", ")))")
    }

    mutating func exists(_ fid: Int64, in layer: LayerInfo) throws -> Bool {
        let find = try statement("SELECT 1 FROM \(quoted(layer.name)) WHERE fid = ?")
        try find.bind([.integer(fid)])
        defer { find.reset() }
        return try find.step()
    }

    mutating func find(_ keys: [CheckedValue], in layer: LayerInfo) throws -> [Int64] {
        let condition = keys.map { "\(quoted($0.column.name)) = ?" }.joined(separator: " AND ")
        let find = try statement("SELECT fid FROM \(quoted(layer.name)) WHERE \(condition) LIMIT 2")
        try find.bind(keys.map(\.stored))
        var found: [Int64] = []
        while try find.step() { found.append(find.int64(0)) }
        return found
    }

    mutating func insert(_ row: CheckedRow, fid: Int64?, into layer: LayerInfo) throws -> Int64 {
        let (columns, values, box) = try stored(row, of: layer)
        var deferred = false
        if row.geometry != nil { deferred = try deferRTree(of: layer) }
        let insert = try statement("INSERT INTO \(quoted(layer.name)) (\((["fid"] + columns).map(quoted).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count + 1).joined(separator: ", ")))")
        try insert.run([fid.map { .integer($0) } ?? .null] + values)
        let inserted = database.lastInsertRowID
        // The trigger's condition: a geometry that is not empty.
        if deferred, let box, !box.isEmpty { deferredRTrees[layer.name]?.cells.append(RTreeCell(id: inserted, box: box)) }
        return inserted
    }

    /// Drops the layer's R-tree insert trigger for the rest of the batch; false when it has none.
    private mutating func deferRTree(of layer: LayerInfo) throws -> Bool {
        if deferredRTrees[layer.name] != nil { return true }
        guard !undeferred.contains(layer.name), inserts[layer.name.lowercased(), default: 0] >= Self.fewestDeferredInserts,
              let column = layer.geometryColumn else { return false }
        let rtree = GeoPackage.rtreeName(layer.name, column)
        guard case .text(let trigger)? = try database.scalar("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", .text(rtree + "_insert")),
              try database.hasTable(rtree) else {
            undeferred.insert(layer.name)
            return false
        }
        try database.execute("DROP TRIGGER \(quoted(rtree + "_insert"))")
        deferredRTrees[layer.name] = (rtree, trigger, [])
        return true
    }

    /// Adds the envelopes the batch inserted into the layer to its R-tree and puts its insert
    /// trigger back; before an update or a delete, whose triggers expect the index whole.
    private mutating func addToRTree(of name: String) throws {
        guard let deferred = deferredRTrees.removeValue(forKey: name) else { return }
        try store.insertIntoRTree(deferred.rtree, cells: deferred.cells)
        try database.execute(deferred.trigger)
    }

    mutating func update(_ row: CheckedRow, fid: Int64, in layer: LayerInfo) throws -> Bool {
        try addToRTree(of: layer.name)
        guard !row.isEmpty else { return try exists(fid, in: layer) }
        let (columns, values, _) = try stored(row, of: layer)
        try statement("UPDATE \(quoted(layer.name)) SET \(columns.map { "\(quoted($0)) = ?" }.joined(separator: ", ")) WHERE fid = ?").run(values + [.integer(fid)])
        return database.changes == 1
    }

    mutating func delete(_ fid: Int64, from layer: LayerInfo) throws -> Bool {
        try addToRTree(of: layer.name)
        try statement("DELETE FROM \(quoted(layer.name)) WHERE fid = ?").run([.integer(fid)])
        return database.changes == 1
    }

    mutating func record(layer: String, fid: Int64?, kind: Change.Kind) throws -> Change {
        try statement("INSERT INTO vltava_changes (layer, fid, change, at) VALUES (?, ?, ?, ?)")
            .run([.text(layer), fid.map { .integer($0) } ?? .null, .text(kind.rawValue), .text(at)])
        return Change(sequence: database.lastInsertRowID, layer: layer, fid: fid, kind: kind, at: at)
    }

    /// The row's columns and values as the file stores them: the geometry as GeoPackage binary
    /// in the layer's CRS, whose envelope (the R-tree's box) comes too.
    private func stored(_ row: CheckedRow, of layer: LayerInfo) throws -> ([String], [SQLiteValue], BBox?) {
        var columns: [String] = [], values: [SQLiteValue] = []
        var box: BBox?
        if let geometry = row.geometry, let column = layer.geometryColumn {
            columns.append(column)
            let encoded = try FeatureChecks.encode(geometry, for: layer, row.position)
            values.append(.blob(encoded.bytes))
            box = encoded.box
        }
        for attribute in row.attributes {
            columns.append(attribute.column.name)
            values.append(attribute.stored)
        }
        return (columns, values, box)
    }

    private mutating func statement(_ sql: String) throws -> Statement {
        if let known = statements[sql] { return known }
        let statement = try database.prepare(sql)
        statements[sql] = statement
        return statement
    }

    /// The layer's extent grown by what the batch wrote (GeoPackage's `gpkg_contents` box is
    /// informative: it is widened, never narrowed, as GDAL does).
    private mutating func extent(of info: LayerInfo, _ written: [Int64: StoredFeature?]?) throws -> BBox? {
        guard info.kind == .features, let written else { return nil }
        var box = info.bbox ?? .empty
        for case let stored? in written.values { if let geometry = stored.feature.geometry { box.extend(geometry.bbox) } }
        guard !box.isEmpty else { return nil }
        try statement("UPDATE gpkg_contents SET min_x = ?, min_y = ?, max_x = ?, max_y = ? WHERE table_name = ?")
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

    /// GeoPackage binary in the layer's CRS, and its envelope there (the header's).
    static func encode(_ geometry: Geometry, for layer: LayerInfo, _ position: Int) throws -> (bytes: [UInt8], box: BBox) {
        guard let crs = layer.crs, crs != "EPSG:4326" else { return (GeoPackageBinary.encode(geometry, srsID: 4326), geometry.bbox) }
        do {
            let toLayer = try CoordinateTransformer(from: "EPSG:4326", to: crs)
            let code = Int32(crs.split(separator: ":").last.flatMap { Int32($0) } ?? 0)
            let projected = try toLayer.transform(geometry)
            return (GeoPackageBinary.encode(projected, srsID: code), projected.bbox)
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
