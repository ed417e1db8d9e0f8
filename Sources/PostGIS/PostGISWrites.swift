// Writes on the PostGIS store: the GeoPackage's batches (Store/Writes.swift), each one
// PostgreSQL transaction, durable at commit (synchronous_commit as the server has it), checked
// by the same `FeatureChecks`, every change numbered in `vltava_changes`.
//
// The feed misses nothing whoever writes: a row trigger on every layer's table numbers the
// changes other programs make (an UPDATE in psql), in their transaction. Vltava's own writer
// marks its transaction (`SET LOCAL vltava.writing`), so the trigger leaves those rows to it: it
// knows a replacement from an update, and the layer as the store names it. The statement
// trigger `push` installs notifies every server on the database at commit (LISTEN, which
// reloads them), so a write through one replica reaches the others.
//
// Several processes may write one database at once (PostgreSQL serialises them): fids of a
// layer are handed out under a lock on its table that readers never wait for.

import Engine
import Foundation
import Geometry
import PostgresNIO
import Store

/// The PostGIS database as the engine's writer (`PostGISSource.openWriter`).
final class PostGISStoreWriter: StoreWriter, @unchecked Sendable {
    let database: PostGISDatabase

    init(database: PostGISDatabase) throws(EngineError) {
        self.database = database
        try PostGISStore.transaction(database) { connection in try PostGISStore.installFeed(database, connection) }
    }

    func apply(_ batch: WriteBatch) throws(EngineError) -> AppliedBatch {
        var applied: AppliedBatch?
        do {
            try PostGISStore.transaction(database) { connection in
                var writer = try PostGISBatch(database: database, connection: connection, batch: batch)
                applied = try writer.run()
            }
        } catch .store(let message) where message.contains("SQLSTATE 23505") {
            throw .write(code: "feature_exists", category: .impossible, message: message)
        }
        guard let applied else { throw .store("the batch's transaction ended without its changes") }
        return applied
    }

    func changes(since sequence: Int64, limit: Int) throws(EngineError) -> [Change] {
        try PostGISStore.changes(in: database, since: sequence, limit: limit)
    }
}

extension PostGISSource {
    public func openWriter() throws(EngineError) -> any StoreWriter {
        try PostGISStoreWriter(database: database)
    }

    public func changes(since sequence: Int64, limit: Int) throws(EngineError) -> [Change] {
        try PostGISStore.changes(in: database, since: sequence, limit: limit)
    }
}

extension PostGISStore {
    static let changeTable = "vltava_changes"
    /// The next sequence number, taken under a transaction-scoped advisory lock that every
    /// numbering transaction holds until it ends. So numbers are given in commit order (a
    /// reader that has seen N never later meets a smaller one committing), and a rolled-back
    /// batch leaves no gap: the feed is every number once, in order, whoever writes.
    static let nextSequence = "(SELECT coalesce(max(seq), 0) + 1 FROM \(changeTable))"
    static let sequenceLockKey = 7_436_152
    static let sequenceLock = "SELECT pg_advisory_xact_lock(\(sequenceLockKey))"

    /// The change table, and the row trigger that numbers other programs' changes on every
    /// layer's table. Idempotent: run by `push` and by every writer that opens.
    static func installFeed(_ database: PostGISDatabase, _ connection: PostgresConnection) throws {
        try database.execute(connection, """
            CREATE TABLE IF NOT EXISTS \(changeTable) (seq bigint PRIMARY KEY, layer text NOT NULL, fid bigint,
                kind text NOT NULL, at text NOT NULL)
            """)
        try database.execute(connection, """
            CREATE OR REPLACE FUNCTION vltava_record() RETURNS trigger LANGUAGE plpgsql AS $f$
            BEGIN
                IF coalesce(current_setting('vltava.writing', true), '') = 'on' THEN RETURN NULL; END IF;
                PERFORM pg_advisory_xact_lock(\(sequenceLockKey));
                INSERT INTO \(changeTable) (seq, layer, fid, kind, at) VALUES (\(nextSequence), TG_TABLE_NAME,
                    CASE TG_OP WHEN 'DELETE' THEN OLD.fid ELSE NEW.fid END,
                    CASE TG_OP WHEN 'INSERT' THEN 'inserted' WHEN 'UPDATE' THEN 'updated' ELSE 'deleted' END,
                    to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));
                RETURN NULL;
            END $f$
            """)
        let names = try database.rows(connection, "SELECT name FROM \(catalogue)", []).compactMap { $0.first?.stringValue }
        for name in names { try recordChanges(of: name, database, connection) }
    }

    /// The row trigger on one layer's table.
    static func recordChanges(of table: String, _ database: PostGISDatabase, _ connection: PostgresConnection) throws {
        try database.execute(connection, "DROP TRIGGER IF EXISTS vltava_recorded ON \(SQL.identifier(table))")
        try database.execute(connection, "CREATE TRIGGER vltava_recorded AFTER INSERT OR UPDATE OR DELETE ON \(SQL.identifier(table)) FOR EACH ROW EXECUTE FUNCTION vltava_record()")
    }

    static func changes(in database: PostGISDatabase, since sequence: Int64, limit: Int) throws(EngineError) -> [Change] {
        let rows: [[AttributeValue]]
        do {
            rows = try database.rows("SELECT seq, layer, fid, kind, at FROM \(changeTable) WHERE seq > $1 ORDER BY seq LIMIT $2",
                                     [.integer(sequence), .integer(Int64(limit))], deadline: .none)
        } catch .store(let message) where message.contains("42P01") {
            return []  // no write yet: no change table
        }
        return rows.compactMap { row in
            guard row.count == 5, case .integer(let seq) = row[0], let layer = row[1].stringValue,
                  let kind = row[3].stringValue.flatMap(Change.Kind.init(rawValue:)), let at = row[4].stringValue else { return nil }
            if case .integer(let fid) = row[2] { return Change(sequence: seq, layer: layer, fid: fid, kind: kind, at: at) }
            return Change(sequence: seq, layer: layer, fid: nil, kind: kind, at: at)
        }
    }
}

/// One batch inside its transaction.
private struct PostGISBatch {
    let database: PostGISDatabase
    let connection: PostgresConnection
    let batch: WriteBatch
    let checks: FeatureChecks
    /// The catalogue's layers, by name as stored.
    var layers: [String: LayerInfo]
    /// Each touched layer's next fid, read once under the table's lock.
    var nextFID: [String: Int64] = [:]
    var changes: [Change] = []
    var touched: [String: Set<Int64>] = [:]
    var warnings: [String] = []

    init(database: PostGISDatabase, connection: PostgresConnection, batch: WriteBatch) throws {
        self.database = database
        self.connection = connection
        self.batch = batch
        checks = try FeatureChecks(batch: batch)
        layers = [:]
        for (info, _) in try PostGISStore.readCatalogue(from: database) { layers[info.name] = info }
    }

    mutating func run() throws -> AppliedBatch {
        try database.execute(connection, "SET LOCAL vltava.writing = 'on'")
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
                touched[layer.name, default: []].insert(fid)
            }
        }
        var features: [String: [Int64: StoredFeature?]] = [:]
        var changed: [String: LayerInfo] = [:]
        for (name, fids) in touched {
            guard let info = layers[name] else { continue }
            var stored: [Int64: StoredFeature?] = [:]
            for fid in fids { stored[fid] = .some(nil) }
            let rows = try database.rows(connection, "SELECT \(Fetch.rowColumns(info).joined(separator: ", ")) FROM \(SQL.identifier(name)) AS t WHERE t.fid = ANY($1::bigint[])",
                                         [.text("{" + fids.map(String.init).joined(separator: ",") + "}")])
            for feature in try Fetch.features(rows, of: info) { stored[feature.fid] = feature }
            features[name] = stored
            changed[name] = info
        }
        for change in changes where change.kind == .created { if let info = layers[change.layer] { changed[change.layer] = info } }
        try database.execute(connection, "SELECT pg_notify($1, 'write')", [.text(PostGISStore.channel)])
        return AppliedBatch(changes: changes, layers: changed, features: features, warnings: warnings, sequence: changes.last?.sequence ?? 0)
    }

    private func layer(_ name: String, _ position: Int) throws -> LayerInfo {
        if let known = layers[name] ?? layers.values.first(where: { $0.name.lowercased() == name.lowercased() }) {
            if known.timeSeries == nil, known.kind != .features, ["indoor_venues", "indoor_beacons"].contains(known.name) {
                throw StoreError.badWrite(position: position, reason: "'\(known.name)' is part of the indoor model")
            }
            return known
        }
        throw StoreError.badWrite(position: position, reason: StoreError.unknownLayer(name, known: layers.keys.sorted()).description)
    }

    private mutating func create(_ schema: LayerSchema, _ position: Int) throws {
        try Importer.checkLayerName(schema.name)
        guard !layers.keys.contains(where: { $0.lowercased() == schema.name.lowercased() }) else {
            throw StoreError.badWrite(position: position, reason: StoreError.layerExists(schema.name).description)
        }
        if let type = schema.geometryType, !FeatureChecks.geometryTypes.contains(type.uppercased()) {
            throw StoreError.badWrite(position: position, reason: "'\(type)' is not a geometry type (POINT, LINESTRING, POLYGON, their MULTI forms, GEOMETRY)")
        }
        let info = LayerInfo(name: schema.name, kind: schema.geometryType == nil ? .attributes : .features,
                             geometryType: schema.geometryType?.uppercased(), geometryColumn: schema.geometryType == nil ? nil : "geom",
                             crs: schema.geometryType == nil ? nil : "EPSG:4326", featureCount: 0, bbox: nil, columns: schema.columns,
                             description: schema.description)
        try PostGISStore.createTable(info, indexed: true, database, connection)
        try PostGISStore.register(info, database, connection)
        try database.execute(connection, "CREATE TRIGGER vltava_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON \(SQL.identifier(info.name)) FOR EACH STATEMENT EXECUTE FUNCTION vltava_notify()")
        try PostGISStore.recordChanges(of: info.name, database, connection)
        layers[info.name] = info
    }

    private mutating func apply(_ change: FeatureChange, to layer: LayerInfo, _ position: Int) throws -> (Int64, Change.Kind) {
        let table = SQL.identifier(layer.name)
        switch change {
        case .insert(let feature):
            var fid: Int64
            if let id = feature.id {
                guard case .integer(let given) = id else {
                    throw StoreError.badWrite(position: position, reason: "a feature id must be an integer (it becomes the fid); this one is '\(id)'")
                }
                if try exists(layer, given) { throw StoreError.featureExists(layer: layer.name, fid: given, position: position) }
                fid = given
            } else {
                fid = try next(layer)
            }
            let row = try checkedRow(feature, of: layer, position, whole: true)
            try insert(row, fid: fid, into: layer)
            nextFID[layer.name] = max(nextFID[layer.name] ?? 0, fid + 1)
            return (fid, .inserted)
        case .replace(let fid, let feature):
            try update(layer, fid, try checkedRow(feature, of: layer, position, whole: true), position)
            return (fid, .replaced)
        case .update(let fid, let feature):
            try update(layer, fid, try checkedRow(feature, of: layer, position, whole: false), position)
            return (fid, .updated)
        case .delete(let fid):
            guard try !database.rows(connection, "DELETE FROM \(table) WHERE fid = $1 RETURNING fid", [.integer(fid)]).isEmpty else {
                throw StoreError.noSuchFeature(layer: layer.name, fid: fid, position: position)
            }
            return (fid, .deleted)
        case .upsert(let keys, let feature):
            var conditions: [String] = []
            var values: [AttributeValue] = []
            for key in keys {
                guard let column = layer.columns.first(where: { $0.name.lowercased() == key.lowercased() }) else {
                    throw StoreError.badWrite(position: position, reason: "layer '\(layer.name)' has no key column '\(key)' (columns: \(layer.columns.map(\.name).joined(separator: ", ")))")
                }
                let value = feature.properties[column.name] ?? feature.properties.first(where: { $0.0.lowercased() == key.lowercased() })?.1 ?? .null
                guard !value.isNull else { throw StoreError.badWrite(position: position, reason: "the feature has no value for the key column '\(column.name)'") }
                _ = try FeatureChecks.stored(value, column, position)
                values.append(PostGISStore.bound(value, for: column))
                conditions.append("\(SQL.identifier(column.name)) = $\(values.count)")
            }
            guard !conditions.isEmpty else { throw StoreError.badWrite(position: position, reason: "an upsert names at least one key column") }
            let row = try checkedRow(feature, of: layer, position, whole: true)
            let found = try database.rows(connection, "SELECT fid FROM \(table) WHERE \(conditions.joined(separator: " AND ")) LIMIT 2", values)
            if found.count > 1 {
                throw StoreError.badWrite(position: position, reason: "more than one feature of '\(layer.name)' has the same \(keys.joined(separator: ", ")): the key must be unique")
            }
            if case .integer(let fid)? = found.first?.first {
                try update(layer, fid, row, position)
                return (fid, .replaced)
            }
            let fid = try next(layer)
            try insert(row, fid: fid, into: layer)
            nextFID[layer.name] = fid + 1
            return (fid, .inserted)
        }
    }

    /// The layer's next fid: one past the largest, read under a lock on its table that other
    /// writers wait for and readers do not (SHARE ROW EXCLUSIVE conflicts with itself and with
    /// writes, not with SELECT).
    private mutating func next(_ layer: LayerInfo) throws -> Int64 {
        if let known = nextFID[layer.name] { return known }
        let table = SQL.identifier(layer.name)
        try database.execute(connection, "LOCK TABLE \(table) IN SHARE ROW EXCLUSIVE MODE")
        let largest = try database.rows(connection, "SELECT coalesce(max(fid), 0) FROM \(table)", [])
        guard case .integer(let n)? = largest.first?.first else { throw EngineError.store("\(layer.name): cannot read its largest fid") }
        nextFID[layer.name] = n + 1
        return n + 1
    }

    private func exists(_ layer: LayerInfo, _ fid: Int64) throws -> Bool {
        try !database.rows(connection, "SELECT 1 FROM \(SQL.identifier(layer.name)) WHERE fid = $1", [.integer(fid)]).isEmpty
    }

    /// The columns a change sets, checked as the GeoPackage checks them, bound as PostgreSQL
    /// takes them. `whole`: every column not given is set to null.
    private mutating func checkedRow(_ feature: Feature, of layer: LayerInfo, _ position: Int, whole: Bool) throws -> [(column: String, value: AttributeValue, isGeometry: Bool)] {
        var row: [(column: String, value: AttributeValue, isGeometry: Bool)] = []
        if layer.kind == .features {
            if let geometry = feature.geometry {
                let checked = try checks.check(geometry, for: layer, position)
                if let repaired = checked.warning { warnings.append("operation \(position): \(repaired)") }
                row.append(("geom", .text(Hex.encode(WKB.encode(checked.geometry))), true))
            } else if whole {
                throw StoreError.badWrite(position: position, reason: "the feature has no geometry, and layer '\(layer.name)' holds \(layer.geometryType ?? "GEOMETRY") features")
            }
        } else if feature.geometry != nil {
            throw StoreError.badWrite(position: position, reason: "'\(layer.name)' is a table without geometry; the feature has one")
        }
        var given: [String: AttributeValue] = [:]
        for (name, value) in feature.properties {
            guard let column = layer.columns.first(where: { $0.name == name }) ?? layer.columns.first(where: { $0.name.lowercased() == name.lowercased() }) else {
                throw StoreError.badWrite(position: position, reason: "layer '\(layer.name)' has no column '\(name)' (columns: \(layer.columns.map(\.name).joined(separator: ", ")))")
            }
            _ = try FeatureChecks.stored(value, column, position)
            given[column.name] = PostGISStore.bound(value, for: column)
        }
        for column in layer.columns {
            if let value = given[column.name] { row.append((column.name, value, false)) } else if whole { row.append((column.name, .null, false)) }
        }
        return row
    }

    private func placeholder(_ n: Int, geometry: Bool) -> String {
        geometry ? "ST_SetSRID(ST_GeomFromWKB(decode($\(n), 'hex')), 4326)" : "$\(n)"
    }

    private func insert(_ row: [(column: String, value: AttributeValue, isGeometry: Bool)], fid: Int64, into layer: LayerInfo) throws {
        let names = ["fid"] + row.map { SQL.identifier($0.column) }
        let places = ["$1"] + row.enumerated().map { placeholder($0.offset + 2, geometry: $0.element.isGeometry) }
        try database.execute(connection, "INSERT INTO \(SQL.identifier(layer.name)) (\(names.joined(separator: ", "))) VALUES (\(places.joined(separator: ", ")))",
                             [.integer(fid)] + row.map(\.value))
    }

    private func update(_ layer: LayerInfo, _ fid: Int64, _ row: [(column: String, value: AttributeValue, isGeometry: Bool)], _ position: Int) throws {
        let sets = row.enumerated().map { "\(SQL.identifier($0.element.column)) = \(placeholder($0.offset + 2, geometry: $0.element.isGeometry))" }
        let sql = sets.isEmpty ? "SELECT fid FROM \(SQL.identifier(layer.name)) WHERE fid = $1"
                               : "UPDATE \(SQL.identifier(layer.name)) SET \(sets.joined(separator: ", ")) WHERE fid = $1 RETURNING fid"
        guard try !database.rows(connection, sql, [.integer(fid)] + row.map(\.value)).isEmpty else {
            throw StoreError.noSuchFeature(layer: layer.name, fid: fid, position: position)
        }
    }

    private mutating func record(_ layer: String, fid: Int64?, _ kind: Change.Kind) throws {
        if changes.isEmpty { try database.execute(connection, PostGISStore.sequenceLock) }
        let rows = try database.rows(connection, """
            INSERT INTO \(PostGISStore.changeTable) (seq, layer, fid, kind, at)
            VALUES (\(PostGISStore.nextSequence), $1, $2, $3, to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) RETURNING seq, at
            """, [.text(layer), fid.map { .integer($0) } ?? .null, .text(kind.rawValue)])
        guard case .integer(let seq)? = rows.first?.first, let at = rows.first?[1].stringValue else {
            throw EngineError.store("the change table gave no sequence number")
        }
        changes.append(Change(sequence: seq, layer: layer, fid: fid, kind: kind, at: at))
    }
}
