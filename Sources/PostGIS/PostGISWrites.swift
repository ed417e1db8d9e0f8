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
import Support

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
                var writer = try PostGISBatch(database: database, connection: connection)
                applied = try writer.run(batch)
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

    /// Keeps a live layer's, fence's or webhook's definition in `vltava_live`, as a GeoPackage
    /// does (durable at commit).
    func save(_ definition: LiveDefinition) throws(EngineError) {
        try PostGISStore.transaction(database) { connection in
            try database.execute(connection, PostGISStore.liveTable)
            try database.execute(connection, """
                INSERT INTO vltava_live (kind, name, definition) VALUES ($1, $2, $3)
                ON CONFLICT (kind, name) DO UPDATE SET definition = excluded.definition
                """, [.text(definition.kind.rawValue), .text(definition.name), .text(definition.definition)])
        }
    }

    func deleteLiveDefinition(kind: LiveDefinition.Kind, name: String) throws(EngineError) -> Bool {
        var deleted = false
        try PostGISStore.transaction(database) { connection in
            try database.execute(connection, PostGISStore.liveTable)
            deleted = try !database.rows(connection, "DELETE FROM vltava_live WHERE kind = $1 AND name = $2 RETURNING name",
                                         [.text(kind.rawValue), .text(name)]).isEmpty
        }
        return deleted
    }

    /// Keeps durable live layers' objects in `vltava_positions`, as a GeoPackage does: one
    /// transaction, durable at commit. The batch goes as one JSON parameter that the statement
    /// unpacks (`json_to_recordset`), so 1,000 objects are one round trip, bound, not pasted.
    func savePositions(_ positions: [StoredPosition]) throws(EngineError) {
        let rows = positions.map { p -> JSONValue in
            .object(JSONObject([
                ("layer", .string(p.layer)), ("id", .string(p.id)), ("lon", .double(p.lon)), ("lat", .double(p.lat)), ("time", .double(p.time)),
                ("fields", p.fields.map { .string($0) } ?? .null), ("expires", p.expires.map { .double($0) } ?? .null),
            ]))
        }
        try PostGISStore.transaction(database) { connection in
            try database.execute(connection, PostGISStore.positionsTable)
            guard !rows.isEmpty else { return }
            try database.execute(connection, """
                INSERT INTO vltava_positions (layer, id, lon, lat, time, fields, expires)
                SELECT layer, id, lon, lat, time, fields, expires
                FROM json_to_recordset($1::json) AS p(layer text, id text, lon float8, lat float8, time float8, fields text, expires float8)
                ON CONFLICT (layer, id) DO UPDATE SET lon = excluded.lon, lat = excluded.lat, time = excluded.time,
                    fields = excluded.fields, expires = excluded.expires
                """, [.text(JSON.serialize(.array(rows)))])
        }
    }

    /// Forgets a kept object, or every object of the layer when `id` is nil.
    func deletePositions(layer: String, id: String?) throws(EngineError) {
        try PostGISStore.transaction(database) { connection in
            try database.execute(connection, PostGISStore.positionsTable)
            if let id {
                try database.execute(connection, "DELETE FROM vltava_positions WHERE layer = $1 AND id = $2", [.text(layer), .text(id)])
            } else {
                try database.execute(connection, "DELETE FROM vltava_positions WHERE layer = $1", [.text(layer)])
            }
        }
    }
}

extension PostGISStore {
    /// The declared live layers, fences and webhooks (Store/LiveDefinitions.swift), each as the
    /// JSON a client sent. Every server on the database reads them when it starts.
    static let liveTable = "CREATE TABLE IF NOT EXISTS vltava_live (kind text NOT NULL, name text NOT NULL, definition text NOT NULL, PRIMARY KEY (kind, name))"
    /// Durable live layers' objects (Store/LiveDefinitions.swift): the latest position of each.
    static let positionsTable = """
        CREATE TABLE IF NOT EXISTS vltava_positions (layer text NOT NULL, id text NOT NULL, lon float8 NOT NULL, lat float8 NOT NULL,
            time float8 NOT NULL, fields text, expires float8, PRIMARY KEY (layer, id))
        """
}

extension PostGISSource {
    public func liveDefinitions() throws(EngineError) -> [LiveDefinition] {
        let rows: [[AttributeValue]]
        do {
            rows = try database.rows("SELECT kind, name, definition FROM vltava_live ORDER BY kind, name COLLATE \"C\"", [], deadline: .none)
        } catch .store(let message) where message.contains("42P01") {
            return []  // nothing declared yet: no table
        }
        return rows.compactMap { row in
            guard row.count == 3, let kind = row[0].stringValue.flatMap(LiveDefinition.Kind.init(rawValue:)),
                  let name = row[1].stringValue, let definition = row[2].stringValue else { return nil }
            return LiveDefinition(kind: kind, name: name, definition: definition)
        }
    }
}

extension PostGISSource {
    public func livePositions() throws(EngineError) -> [StoredPosition] {
        let rows: [[AttributeValue]]
        do {
            rows = try database.rows("SELECT layer, id, lon, lat, time, fields, expires FROM vltava_positions ORDER BY layer COLLATE \"C\", id COLLATE \"C\"",
                                     [], deadline: .none)
        } catch .store(let message) where message.contains("42P01") {
            return []  // no durable layer yet: no table
        }
        return rows.compactMap { row in
            guard row.count == 7, let layer = row[0].stringValue, let id = row[1].stringValue,
                  let lon = row[2].doubleValue, let lat = row[3].doubleValue, let time = row[4].doubleValue else { return nil }
            return StoredPosition(layer: layer, id: id, lon: lon, lat: lat, time: time, fields: row[5].stringValue, expires: row[6].doubleValue)
        }
    }

    public func openWriter() throws(EngineError) -> any StoreWriter {
        try PostGISStoreWriter(database: database)
    }

    public func changes(since sequence: Int64, limit: Int) throws(EngineError) -> [Change] {
        try PostGISStore.changes(in: database, since: sequence, limit: limit)
    }

    public func lastSequence() throws(EngineError) -> Int64 {
        do {
            let rows = try database.rows("SELECT coalesce(max(seq), 0) FROM \(PostGISStore.changeTable)", [], deadline: .none)
            if case .integer(let last)? = rows.first?.first { return last }
            return 0
        } catch .store(let message) where message.contains("42P01") {
            return 0  // no write yet: no change table
        }
    }

    public func currentFeatures(_ fids: [String: Set<Int64>], of layers: [String: LayerInfo]) throws(EngineError) -> [String: [Int64: StoredFeature?]]? {
        var features: [String: [Int64: StoredFeature?]] = [:]
        try database.withConnection { connection in features = try PostGISStore.currentFeatures(fids, of: layers, database, connection) }
        return features
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
    static let feedLockKey = 7_436_153

    /// Numbers a change to a layer as a whole (`imported`, `dropped`) in the open transaction,
    /// under the sequence lock, as a write numbers its changes.
    static func recordLayerChange(_ layer: String, _ kind: Change.Kind, _ database: PostGISDatabase, _ connection: PostgresConnection) throws {
        try database.execute(connection, sequenceLock)
        try database.execute(connection, """
            INSERT INTO \(changeTable) (seq, layer, fid, kind, at)
            VALUES (\(nextSequence), $1, NULL, $2, to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
            """, [.text(layer), .text(kind.rawValue)])
    }

    /// The change table, and the row trigger that numbers other programs' changes on every
    /// layer's table. Idempotent: run by `push` and by every writer that opens.
    static func installFeed(_ database: PostGISDatabase, _ connection: PostgresConnection) throws {
        // One installer at a time: two servers starting together on one database collided in
        // the catalogue ("tuple concurrently updated" on CREATE OR REPLACE FUNCTION), and the
        // loser never became ready. The lock ends with the transaction.
        try database.execute(connection, "SELECT pg_advisory_xact_lock(\(feedLockKey))")
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
        try database.execute(connection, notifyFunction)
        let names = try database.rows(connection, "SELECT name FROM \(catalogue)", []).compactMap { $0.first?.stringValue }
        for name in names { try recordChanges(of: name, database, connection) }
    }

    /// What every layer's statement trigger runs: a notification at commit that the servers on
    /// the database catch up on ("rows": each row is numbered in the feed by the row trigger),
    /// or reload after a TRUNCATE, which no row trigger sees ("layers"). Vltava's own writer
    /// sends its one notification itself.
    static let notifyFunction = """
        CREATE OR REPLACE FUNCTION vltava_notify() RETURNS trigger LANGUAGE plpgsql AS $f$
        BEGIN
            IF coalesce(current_setting('vltava.writing', true), '') = 'on' THEN RETURN NULL; END IF;
            PERFORM pg_notify('\(channel)', CASE TG_OP WHEN 'TRUNCATE' THEN 'layers' ELSE 'rows' END);
            RETURN NULL;
        END $f$
        """

    /// The row trigger on one layer's table.
    static func recordChanges(of table: String, _ database: PostGISDatabase, _ connection: PostgresConnection) throws {
        try database.execute(connection, "DROP TRIGGER IF EXISTS vltava_recorded ON \(SQL.identifier(table))")
        try database.execute(connection, "CREATE TRIGGER vltava_recorded AFTER INSERT OR UPDATE OR DELETE ON \(SQL.identifier(table)) FOR EACH ROW EXECUTE FUNCTION vltava_record()")
    }

    /// The features `fids` of each layer as its table holds them now, decoded as a snapshot
    /// loads them; nil for a fid no row has.
    static func currentFeatures(_ fids: [String: Set<Int64>], of layers: [String: LayerInfo], _ database: PostGISDatabase,
                                _ connection: PostgresConnection) throws -> [String: [Int64: StoredFeature?]] {
        var features: [String: [Int64: StoredFeature?]] = [:]
        for (name, fids) in fids {
            guard let info = layers[name] else { continue }
            var stored: [Int64: StoredFeature?] = [:]
            for fid in fids { stored[fid] = .some(nil) }
            let rows = try database.rows(connection, "SELECT \(Fetch.rowColumns(info).joined(separator: ", ")) FROM \(SQL.identifier(name)) AS t WHERE t.fid = ANY($1::bigint[])",
                                         [.text("{" + fids.map(String.init).joined(separator: ",") + "}")])
            for feature in try Fetch.features(rows, of: info) { stored[feature.fid] = feature }
            features[name] = stored
        }
        return features
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

/// One batch inside its transaction: the SQL behind what `BatchPlanner` decides.
private struct PostGISBatch: BatchStore {
    let database: PostGISDatabase
    let connection: PostgresConnection
    /// The catalogue's layers, by name as stored.
    var layers: [String: LayerInfo]
    /// Each touched layer's next fid, read once under the table's lock.
    var nextFID: [String: Int64] = [:]
    var numbered = false

    init(database: PostGISDatabase, connection: PostgresConnection) throws {
        self.database = database
        self.connection = connection
        layers = [:]
        for (info, _) in try PostGISStore.readCatalogue(from: database) { layers[info.name] = info }
    }

    mutating func run(_ batch: WriteBatch) throws -> AppliedBatch {
        try database.execute(connection, "SET LOCAL vltava.writing = 'on'")
        let outcome = try BatchPlanner.apply(batch, to: &self)
        var changed: [String: LayerInfo] = [:]
        for name in outcome.touched.keys { changed[name] = layers[name] }
        let features = try PostGISStore.currentFeatures(outcome.touched, of: changed, database, connection)
        for change in outcome.changes where change.kind == .created { if let info = layers[change.layer] { changed[change.layer] = info } }
        try database.execute(connection, "SELECT pg_notify($1, $2)", [.text(PostGISStore.channel), .text(outcome.changes.contains { $0.kind == .created } ? "layers" : "rows")])
        return AppliedBatch(changes: outcome.changes, layers: changed, features: features, warnings: outcome.warnings,
                            sequence: outcome.changes.last?.sequence ?? 0)
    }

    func layer(named name: String) throws -> LayerInfo? {
        layers[name] ?? layers.values.first(where: { $0.name.lowercased() == name.lowercased() })
    }

    func layerNames() throws -> [String] { layers.keys.sorted() }

    mutating func create(_ schema: LayerSchema, _ position: Int) throws -> LayerInfo {
        let info = LayerInfo(name: schema.name, kind: schema.geometryType == nil ? .attributes : .features,
                             geometryType: schema.geometryType, geometryColumn: schema.geometryType == nil ? nil : "geom",
                             crs: schema.geometryType == nil ? nil : "EPSG:4326", featureCount: 0, bbox: nil, columns: schema.columns,
                             description: schema.description)
        try PostGISStore.createTable(info, indexed: true, database, connection)
        try PostGISStore.register(info, database, connection)
        try database.execute(connection, "CREATE TRIGGER vltava_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON \(SQL.identifier(info.name)) FOR EACH STATEMENT EXECUTE FUNCTION vltava_notify()")
        try PostGISStore.recordChanges(of: info.name, database, connection)
        layers[info.name] = info
        return info
    }

    func exists(_ fid: Int64, in layer: LayerInfo) throws -> Bool {
        try !database.rows(connection, "SELECT 1 FROM \(SQL.identifier(layer.name)) WHERE fid = $1", [.integer(fid)]).isEmpty
    }

    func find(_ keys: [CheckedValue], in layer: LayerInfo) throws -> [Int64] {
        let conditions = keys.enumerated().map { "\(SQL.identifier($0.element.column.name)) = $\($0.offset + 1)" }
        let rows = try database.rows(connection, "SELECT fid FROM \(SQL.identifier(layer.name)) WHERE \(conditions.joined(separator: " AND ")) LIMIT 2",
                                     keys.map { PostGISStore.bound($0.value, for: $0.column) })
        return rows.compactMap { if case .integer(let fid)? = $0.first { fid } else { nil } }
    }

    mutating func insert(_ row: CheckedRow, fid given: Int64?, into layer: LayerInfo) throws -> Int64 {
        let fid = try given ?? next(layer)
        let (names, places, values) = bound(row, from: 2)
        try database.execute(connection, "INSERT INTO \(SQL.identifier(layer.name)) (\((["fid"] + names).joined(separator: ", "))) VALUES (\((["$1"] + places).joined(separator: ", ")))",
                             [.integer(fid)] + values)
        nextFID[layer.name] = max(nextFID[layer.name] ?? 0, fid + 1)
        return fid
    }

    func update(_ row: CheckedRow, fid: Int64, in layer: LayerInfo) throws -> Bool {
        let (names, places, values) = bound(row, from: 2)
        let sets = zip(names, places).map { "\($0) = \($1)" }
        let sql = sets.isEmpty ? "SELECT fid FROM \(SQL.identifier(layer.name)) WHERE fid = $1"
                               : "UPDATE \(SQL.identifier(layer.name)) SET \(sets.joined(separator: ", ")) WHERE fid = $1 RETURNING fid"
        return try !database.rows(connection, sql, [.integer(fid)] + values).isEmpty
    }

    func delete(_ fid: Int64, from layer: LayerInfo) throws -> Bool {
        try !database.rows(connection, "DELETE FROM \(SQL.identifier(layer.name)) WHERE fid = $1 RETURNING fid", [.integer(fid)]).isEmpty
    }

    mutating func record(layer: String, fid: Int64?, kind: Change.Kind) throws -> Change {
        if !numbered {
            try database.execute(connection, PostGISStore.sequenceLock)
            numbered = true
        }
        let rows = try database.rows(connection, """
            INSERT INTO \(PostGISStore.changeTable) (seq, layer, fid, kind, at)
            VALUES (\(PostGISStore.nextSequence), $1, $2, $3, to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) RETURNING seq, at
            """, [.text(layer), fid.map { .integer($0) } ?? .null, .text(kind.rawValue)])
        guard case .integer(let seq)? = rows.first?.first, let at = rows.first?[1].stringValue else {
            throw EngineError.store("the change table gave no sequence number")
        }
        return Change(sequence: seq, layer: layer, fid: fid, kind: kind, at: at)
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

    /// The row's columns, their placeholders from `$first` and their values, as PostgreSQL
    /// takes them: the geometry as WKB in hex.
    private func bound(_ row: CheckedRow, from first: Int) -> (names: [String], places: [String], values: [AttributeValue]) {
        var names: [String] = [], places: [String] = [], values: [AttributeValue] = []
        if let geometry = row.geometry {
            names.append("geom")
            places.append("ST_SetSRID(ST_GeomFromWKB(decode($\(first), 'hex')), 4326)")
            values.append(.text(Hex.encode(WKB.encode(geometry))))
        }
        for attribute in row.attributes {
            names.append(SQL.identifier(attribute.column.name))
            places.append("$\(first + values.count)")
            values.append(PostGISStore.bound(attribute.value, for: attribute.column))
        }
        return (names, places, values)
    }
}
