// The PostGIS store: a GeoPackage's layers as PostGIS tables, and back.
//
// Each layer is a table of its own name: `fid bigint PRIMARY KEY`, `geom geometry(Geometry,
// 4326)` (feature layers), and the GeoPackage's columns under their own names with PostgreSQL
// types (INTEGER → bigint, REAL → double precision, BOOLEAN → boolean, TEXT, DATETIME, JSON and
// anything else → text). Two GiST indexes: on `geom` (CONTAINING, INTERSECTING) and on
// `geom::geography` (NEAREST's KNN `<->` and WITHIN's `ST_DWithin`, both in metres on the
// sphere). A time series is a table keyed by its station code (a btree index on the key), as in
// the GeoPackage. `vltava_layers` records what the GeoPackage's own tables said: kind, geometry
// type, CRS, columns, the time-series link; snapshots are built from it.

import Engine
import Foundation
import Geometry
import PostgresNIO
import Store
import Support

/// A PostGIS database as the engine's snapshot source (`Engine(source:)`).
public struct PostGISSource: SnapshotSource {
    public let database: PostGISDatabase
    public init(database: PostGISDatabase) { self.database = database }
    public var location: String { database.location }

    public func loadSnapshot(tileSets: [String: String], limits: EngineLimits) throws(EngineError) -> Snapshot {
        let start = DispatchTime.now()
        let (layers, kept) = try PostGISStore.readLayers(from: database, maxRows: limits.maxRowsLoadedPerLayer)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        return try Snapshot.build(location: location, layers: layers, database: database, kept: kept, tileSets: tileSets, limits: limits,
                                  loadSeconds: seconds)
    }

    public func checkReady(timeout: Double) throws(EngineError) {
        try database.ping(timeout: timeout)
    }

    public func metrics() -> String {
        database.standbys?.metrics() ?? ""
    }

    public func layerInfos() throws(EngineError) -> [LayerInfo] {
        var infos: [LayerInfo] = []
        for (info, _) in try PostGISStore.readCatalogue(from: database) {
            var info = info
            let table = SQL.identifier(info.name)
            let extent = info.kind == .features ? "ST_XMin(e), ST_YMin(e), ST_XMax(e), ST_YMax(e)" : "NULL, NULL, NULL, NULL"
            let row = try database.rows("SELECT c, \(extent) FROM (SELECT count(*) AS c\(info.kind == .features ? ", ST_Extent(geom) AS e" : "") FROM \(table)) AS x",
                                        [], deadline: .none).first ?? []
            if case .integer(let count)? = row.first { info.featureCount = Int(count) }
            if row.count == 5, let minLon = row[1].doubleValue, let minLat = row[2].doubleValue, let maxLon = row[3].doubleValue, let maxLat = row[4].doubleValue {
                info.bbox = BBox(minLon: minLon, minLat: minLat, maxLon: maxLon, maxLat: maxLat)
                info.crs = "EPSG:4326"
            }
            infos.append(info)
        }
        return infos
    }

    public func forEachFeature(of layer: String, pageSize page: Int, _ body: (StoredFeature) -> Void) throws(EngineError) {
        let catalogue = try PostGISStore.readCatalogue(from: database)
        guard let info = catalogue.first(where: { $0.info.name == layer })?.info else {
            throw .unknownLayer(layer, known: catalogue.map(\.info.name))
        }
        // Pages by key: each statement starts after the last fid of the one before.
        let sql = "SELECT \(Fetch.rowColumns(info).joined(separator: ", ")) FROM \(SQL.identifier(info.name)) AS t WHERE t.fid > $1 ORDER BY t.fid LIMIT $2"
        var after = Int64.min
        while true {
            let features = try Fetch.features(try database.rows(sql, [.integer(after), .integer(Int64(page))], deadline: .none), of: info)
            features.forEach(body)
            guard features.count == page, let last = features.last else { return }
            after = last.fid
        }
    }

    /// LISTEN on `vltava_changes`, which every layer's trigger, every write and `push` notify,
    /// on a connection of its own; when it drops, a new one listens a second later (and
    /// `changed(.layers)` is called then, for what may have been missed).
    public func watchChanges(_ changed: @escaping @Sendable (StoreChange) -> Void) -> Bool {
        let database = database
        let thread = Thread {
            var first = true
            while true {
                do {
                    try database.listen(channel: PostGISStore.channel, connected: { if !first { changed(.layers) }; first = false }) { payload in
                        changed(payload == "rows" ? .rows : .layers)
                    }
                } catch {}
                Thread.sleep(forTimeInterval: 1)
            }
        }
        thread.name = "vltava.postgis.listen"
        thread.start()
        return true
    }
}

public enum PostGISStore {
    /// What `push` copied.
    public struct PushSummary: Sendable {
        public var layers: [(name: String, rows: Int)]
        public var seconds: Double
    }

    static let catalogue = "vltava_layers"
    /// The channel every change notifies (LISTEN/NOTIFY): "rows" when each changed row is in
    /// the change feed, "layers" when layers were pushed, dropped or renamed.
    public static let channel = "vltava_changes"

    /// Copies every layer (feature layers and tables, time series among them) of the GeoPackage
    /// at `path` into the database, in one transaction: a layer already there is replaced, and
    /// on any error (a feature that cannot be read among them) nothing changes. Rows stream
    /// from the file in batches of multi-row INSERTs, every value a bound parameter, so a push
    /// holds one batch in memory, whatever the layer's size. Indoor venues and tile sets stay in
    /// files (not copied).
    @discardableResult
    public static func push(geoPackage path: String, to database: PostGISDatabase) throws(EngineError) -> PushSummary {
        let start = DispatchTime.now()
        let store: GeoPackage
        let layers: [LayerInfo]
        do {
            store = try GeoPackage(path: path, mode: .readOnly)
            layers = try store.layers()
        } catch {
            throw .store("\(path): \(error)")
        }
        var summary: [(String, Int)] = []
        try transaction(database) { connection in
            summary = []  // a transaction that runs again starts over
            try database.execute(connection, "CREATE EXTENSION IF NOT EXISTS postgis")
            try database.execute(connection, utcFunction)
            try database.execute(connection, """
                CREATE TABLE IF NOT EXISTS \(catalogue) (name text PRIMARY KEY, kind text NOT NULL, geometry_type text, crs text,
                    description text NOT NULL, columns text NOT NULL, time_series text)
                """)
            for info in layers {
                summary.append((info.name, try write(info, from: store, path: path, database, connection)))
            }
            // Every layer's writes notify the servers that serve it (delivered at commit).
            try database.execute(connection, notifyFunction)
            for info in layers {
                try database.execute(connection, "CREATE TRIGGER vltava_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON \(SQL.identifier(info.name)) FOR EACH STATEMENT EXECUTE FUNCTION vltava_notify()")
            }
            // The change feed and the row triggers that number other programs' changes
            // (PostGISWrites.swift): installed after the rows are in, so a push numbers none.
            try installFeed(database, connection)
            for info in layers { try recordLayerChange(info.name, .imported, database, connection) }
            try database.execute(connection, "SELECT pg_notify($1, 'layers')", [.text(channel)])
        }
        // Marks the new tables' pages all-visible (VACUUM runs outside a transaction), so that
        // counting rows off by fid reads the primary key's index alone: a page of items at row
        // 900,000 of a layer took 220 ms before and reads no table row it skips after. Only a
        // speed-up: the push has committed, so a VACUUM refused (a role without the right) or
        // cut short does not make it fail, and autovacuum does the same later.
        _ = try? database.withConnection { connection in
            for info in layers { _ = try? database.execute(connection, "VACUUM \(SQL.identifier(info.name))") }
        }
        return PushSummary(layers: summary, seconds: Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9)
    }

    /// Removes a layer, its table and its catalogue entry, in one transaction; a time series
    /// that belonged to it stays as a plain table, as in a GeoPackage. Servers on the database
    /// reload (NOTIFY).
    public static func drop(layer name: String, from database: PostGISDatabase) throws(EngineError) {
        let catalogue = try readCatalogue(from: database)
        guard catalogue.contains(where: { $0.info.name == name }) else { throw .unknownLayer(name, known: catalogue.map(\.info.name)) }
        try transaction(database) { connection in
            try database.execute(connection, "DROP TABLE \(SQL.identifier(name))")
            try database.execute(connection, "DELETE FROM \(Self.catalogue) WHERE name = $1", [.text(name)])
            try database.execute(connection, "UPDATE \(Self.catalogue) SET time_series = NULL WHERE (time_series::json)->>'key_layer' = $1", [.text(name)])
            try installFeed(database, connection)
            try recordLayerChange(name, .dropped, database, connection)
            try database.execute(connection, "SELECT pg_notify($1, 'layers')", [.text(channel)])
        }
    }

    /// Renames a layer (a free, valid layer name): its table, its catalogue entry and the time
    /// series linked to it, in one transaction; it keeps its rows, indexes and trigger.
    public static func rename(layer name: String, to newName: String, in database: PostGISDatabase) throws(EngineError) {
        do { try Importer.checkLayerName(newName) } catch { throw .store("\(error)") }
        let catalogue = try readCatalogue(from: database)
        guard catalogue.contains(where: { $0.info.name == name }) else { throw .unknownLayer(name, known: catalogue.map(\.info.name)) }
        if catalogue.contains(where: { $0.info.name == newName }) { throw .store("\(StoreError.invalidLayerName(newName, reason: "a layer of that name exists"))") }
        let taken = try database.rows("SELECT to_regclass(quote_ident($1)) IS NOT NULL", [.text(newName)], deadline: .none)
        if case .bool(true)? = taken.first?.first {
            throw .store("\(StoreError.invalidLayerName(newName, reason: "a table of that name exists in the database"))")
        }
        try transaction(database) { connection in
            try database.execute(connection, "ALTER TABLE \(SQL.identifier(name)) RENAME TO \(SQL.identifier(newName))")
            try database.execute(connection, "UPDATE \(Self.catalogue) SET name = $1 WHERE name = $2", [.text(newName), .text(name)])
            try database.execute(connection, """
                UPDATE \(Self.catalogue) SET time_series = jsonb_set(time_series::jsonb, '{key_layer}', to_jsonb($1::text))::text
                WHERE (time_series::json)->>'key_layer' = $2
                """, [.text(newName), .text(name)])
            // In the feed, the old name goes and the new one comes whole (as in a GeoPackage).
            try installFeed(database, connection)
            try recordLayerChange(name, .dropped, database, connection)
            try recordLayerChange(newName, .imported, database, connection)
            try database.execute(connection, "SELECT pg_notify($1, 'layers')", [.text(channel)])
        }
    }

    /// Runs `body` in one transaction on a pooled connection: all of it, or on an error nothing.
    /// A transaction that lost its server before COMMIT was sent has not committed, so it runs
    /// again once on a new connection (a kept one dead after a restart, or one to a primary
    /// that a failover demoted: 25006); one whose COMMIT failed may have committed, and is
    /// reported unavailable (503), never retried and never "ok".
    static func transaction(_ database: PostGISDatabase, _ body: (PostgresConnection) throws -> Void) throws(EngineError) {
        try database.withConnection(retryingOnce: true) { connection in
            try database.execute(connection, "BEGIN")
            do {
                try body(connection)
            } catch {
                // A connection the server dropped has rolled back with it; a ROLLBACK sent on it
                // waited forever (postgres-nio, after a primary's kill -9): it is discarded instead.
                if case .databaseUnavailable = database.classify(error) { throw error }
                _ = try? database.execute(connection, "ROLLBACK")
                throw error
            }
            do {
                try database.execute(connection, "COMMIT")
            } catch {
                throw PostGISDatabase.CommitUncertain(underlying: error)
            }
            // Where the commit ends in the WAL, for reads on standbys after it (read-your-writes).
            database.standbys?.committed(database, connection)
        }
    }

    static func sqlType(_ column: ColumnInfo) -> String {
        if column.isJSON { return "text" }
        switch column.type {
        case .integer: return "bigint"
        case .real: return "double precision"
        case .boolean: return "boolean"
        case .text, .dateTime, .blob: return "text"
        }
    }

    /// A value as its column's PostgreSQL type takes it.
    static func bound(_ value: AttributeValue?, for column: ColumnInfo) -> AttributeValue {
        guard let value, !value.isNull else { return .null }
        switch (sqlType(column), value) {
        case ("bigint", .integer), ("double precision", .real), ("boolean", .bool), ("text", .text), ("text", .json): return value
        case ("double precision", .integer(let i)): return .real(Double(i))
        case ("bigint", .bool(let b)): return .integer(b ? 1 : 0)
        case ("boolean", .integer(let i)): return .bool(i != 0)
        case ("text", .integer(let i)): return .text(String(i))
        case ("text", .real(let d)): return .text(String(d))
        case ("text", .bool(let b)): return .text(b ? "1" : "0")
        default: return .null
        }
    }

    /// Creates the layer's table and copies its rows into it, streamed from the file; returns
    /// how many.
    private static func write(_ info: LayerInfo, from store: GeoPackage, path: String, _ database: PostGISDatabase,
                              _ connection: PostgresConnection) throws -> Int {
        let table = SQL.identifier(info.name)
        let hasGeometry = info.kind == .features
        try database.execute(connection, "DROP TABLE IF EXISTS \(table)")
        try createTable(info, indexed: false, database, connection)

        // Batches of rows per INSERT, below PostgreSQL's 65,535 parameters per statement.
        let perRow = 1 + (hasGeometry ? 1 : 0) + info.columns.count
        let batch = max(1, min(1000, 60_000 / perRow))
        func insert(_ rows: [StoredFeature]) throws {
            var parameters: [AttributeValue] = []
            parameters.reserveCapacity(rows.count * perRow)
            var tuples: [String] = []
            for feature in rows {
                var placeholders: [String] = []
                parameters.append(.integer(feature.fid))
                placeholders.append("$\(parameters.count)")
                if hasGeometry {
                    // WKB as hex text, decoded by PostGIS: one bound value per geometry.
                    parameters.append(feature.feature.geometry.map { .text(Hex.encode(WKB.encode($0))) } ?? .null)
                    placeholders.append("ST_SetSRID(ST_GeomFromWKB(decode($\(parameters.count), 'hex')), 4326)")
                }
                for column in info.columns {
                    parameters.append(bound(feature.feature.properties[column.name], for: column))
                    placeholders.append("$\(parameters.count)")
                }
                tuples.append("(" + placeholders.joined(separator: ", ") + ")")
            }
            let names = ["fid"] + (hasGeometry ? ["geom"] : []) + info.columns.map { SQL.identifier($0.name) }
            try database.execute(connection, "INSERT INTO \(table) (\(names.joined(separator: ", "))) VALUES \(tuples.joined(separator: ", "))", parameters)
        }
        var rows: [StoredFeature] = []
        rows.reserveCapacity(batch)
        var count = 0
        var failure: (any Error)?
        let problems: [FeatureProblem]
        do {
            problems = try store.forEachFeature(of: info.name) { feature in
                rows.append(feature)
                guard rows.count == batch else { return true }
                do { try insert(rows) } catch { failure = error; return false }
                count += rows.count
                rows.removeAll(keepingCapacity: true)
                return true
            }
        } catch {
            throw EngineError.store("\(path): \(error)")  // the file, not the database
        }
        if let failure { throw failure }
        if let problem = problems.first { throw EngineError.store("\(path): \(StoreError.badFeature(layer: info.name, fid: problem.fid, reason: problem.reason))") }
        if !rows.isEmpty { try insert(rows) }
        count += rows.count
        if hasGeometry { try spatialIndexes(info, database, connection) }
        if let link = info.timeSeries {
            try database.execute(connection, "CREATE INDEX ON \(table) (\(SQL.identifier(link.keyColumn)))")
            // A station's newest rows, and the rows of a HISTORY window (Engine/SeriesFetch.swift).
            try database.execute(connection, "CREATE INDEX ON \(table) (\(SQL.identifier(link.keyColumn)), vltava_utc(\(SQL.identifier(link.startColumn))), fid)")
            try database.execute(connection, "CREATE INDEX ON \(table) (\(SQL.identifier(link.keyColumn)), vltava_utc(\(SQL.identifier(link.endColumn))))")
            // Whether a station measures a column (some value non-zero): one probe, also when none is.
            let excluded: Set<String> = [link.keyColumn, link.startColumn, link.endColumn]
            for column in info.columns where !excluded.contains(column.name) && (column.type == .integer || column.type == .real) && !column.isJSON {
                try database.execute(connection, "CREATE INDEX ON \(table) (\(SQL.identifier(link.keyColumn)), fid) WHERE \(SQL.identifier(column.name)) <> 0")
            }
        }
        try database.execute(connection, "ANALYZE \(table)")
        try register(info, database, connection)
        return count
    }

    /// A layer's table: `fid`, `geom` for features, the columns under their own names; with
    /// `indexed`, its spatial indexes now (a push builds them after the rows are in).
    static func createTable(_ info: LayerInfo, indexed: Bool, _ database: PostGISDatabase, _ connection: PostgresConnection) throws {
        var definitions = ["fid bigint PRIMARY KEY"]
        if info.kind == .features { definitions.append("geom geometry(Geometry, 4326)") }
        definitions += info.columns.map { "\(SQL.identifier($0.name)) \(sqlType($0))" }
        try database.execute(connection, "CREATE TABLE \(SQL.identifier(info.name)) (\(definitions.joined(separator: ", ")))")
        if info.kind == .features && indexed { try spatialIndexes(info, database, connection) }
    }

    /// GiST on `geom` (CONTAINING, INTERSECTING) and on `geom::geography` (NEAREST, WITHIN).
    static func spatialIndexes(_ info: LayerInfo, _ database: PostGISDatabase, _ connection: PostgresConnection) throws {
        let table = SQL.identifier(info.name)
        try database.execute(connection, "CREATE INDEX ON \(table) USING GIST (geom)")
        try database.execute(connection, "CREATE INDEX ON \(table) USING GIST ((geom::geography))")
    }

    /// The layer's entry in the catalogue (replacing one of its name).
    static func register(_ info: LayerInfo, _ database: PostGISDatabase, _ connection: PostgresConnection) throws {
        try database.execute(connection, "DELETE FROM \(catalogue) WHERE name = $1", [.text(info.name)])
        let columns = JSONValue.array(info.columns.map { column in
            .object(JSONObject([("name", .string(column.name)), ("type", .string(column.type.rawValue)), ("json", .bool(column.isJSON))]))
        })
        let series: AttributeValue = info.timeSeries.map { link in
            .text(JSON.serialize(.object(JSONObject([("key_layer", .string(link.keyLayer)), ("layer_key_column", .string(link.layerKeyColumn)),
                                                     ("key_column", .string(link.keyColumn)), ("start_column", .string(link.startColumn)),
                                                     ("end_column", .string(link.endColumn)), ("units", link.unitsJSON)]))))
        } ?? .null
        try database.execute(connection, "INSERT INTO \(catalogue) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                             [.text(info.name), .text(info.kind.rawValue), info.geometryType.map { .text($0) } ?? .null,
                              info.crs.map { .text($0) } ?? .null, .text(info.description), .text(JSON.serialize(columns)), series])
    }

    /// The layers `vltava_layers` lists, with their row counts.
    static func readCatalogue(from database: PostGISDatabase) throws(EngineError) -> [(info: LayerInfo, count: Int)] {
        let rows: [[AttributeValue]]
        do {
            rows = try database.rows("SELECT name, kind, geometry_type, crs, description, columns, time_series FROM \(catalogue) ORDER BY name COLLATE \"C\"",
                                     [], deadline: .none)
        } catch .store(let message) where message.contains("42P01") {
            throw .store("\(database.location) holds no Vltava store (no table \(catalogue)); copy one in with vltava push STORE.gpkg \(database.location)")
        }
        // Partitioned by grid cell: each fetch names the cells it may touch (Fetch.gridCondition).
        let partitioned = try database.rows("""
            SELECT c.relname, pg_get_partkeydef(c.oid) FROM pg_partitioned_table AS p JOIN pg_class AS c ON c.oid = p.partrelid
            WHERE c.relnamespace = current_schema()::regnamespace
            """, [], deadline: .none)
        database.grids.withLock { grids in
            grids = [:]
            for row in partitioned {
                guard let name = row.first?.stringValue, let key = row.last?.stringValue, let cell = Fetch.gridCell(partitionKey: key) else { continue }
                grids[name] = cell
            }
        }
        var infos: [(LayerInfo, Int)] = []
        for row in rows {
            guard row.count == 7, let name = row[0].stringValue, let kind = row[1].stringValue.flatMap(LayerInfo.Kind.init(rawValue:)),
                  let columnText = row[5].stringValue, case .array(let list)? = try? JSON.parse(columnText) else {
                throw .store("\(database.location): a row of \(catalogue) cannot be read")
            }
            let columns = list.compactMap { item -> ColumnInfo? in
                guard case .object(let fields) = item, case .string(let name)? = fields["name"], case .string(let type)? = fields["type"],
                      let columnType = ColumnType(rawValue: type) else { return nil }
                if case .bool(let json)? = fields["json"] { return ColumnInfo(name: name, type: columnType, isJSON: json) }
                return ColumnInfo(name: name, type: columnType)
            }
            var link: TimeSeriesLink?
            if let text = row[6].stringValue, case .object(let fields)? = try? JSON.parse(text),
               case .string(let keyLayer)? = fields["key_layer"], case .string(let layerKey)? = fields["layer_key_column"],
               case .string(let key)? = fields["key_column"], case .string(let startColumn)? = fields["start_column"],
               case .string(let endColumn)? = fields["end_column"] {
                link = TimeSeriesLink(keyLayer: keyLayer, layerKeyColumn: layerKey, keyColumn: key, startColumn: startColumn, endColumn: endColumn,
                                      units: TimeSeriesLink.units(from: fields["units"]))
            }
            let info = LayerInfo(name: name, kind: kind, geometryType: row[2].stringValue, geometryColumn: kind == .features ? "geom" : nil,
                                 crs: row[3].stringValue, featureCount: 0, bbox: nil, columns: columns, description: row[4].stringValue ?? "",
                                 timeSeries: link)
            infos.append((info, 0))
        }
        return infos
    }

    /// Every layer with its rows, except those that stay in the database, of which only the
    /// count is read: time-series tables (the snapshot reads what an answer needs,
    /// Engine/SeriesFetch.swift), and feature layers of more than `maxRows` rows (`kept`, with
    /// their family and extent; Engine/DatabaseLayers.swift) unless they are lines (a network
    /// routes in memory) or a time series' stations.
    static func readLayers(from database: PostGISDatabase, maxRows: Int = .max) throws(EngineError)
        -> (layers: [(info: LayerInfo, features: [StoredFeature])], kept: [String: Layer.Family]) {
        var layers: [(LayerInfo, [StoredFeature])] = []
        var kept: [String: Layer.Family] = [:]
        let catalogue = try readCatalogue(from: database)
        let stationLayers = Set(catalogue.compactMap { $0.info.timeSeries?.keyLayer })
        if catalogue.contains(where: { $0.info.timeSeries != nil }) {
            let function = try database.rows("SELECT to_regprocedure('vltava_utc(text)') IS NOT NULL", [], deadline: .none)
            guard case .bool(true)? = function.first?.first else {
                throw .store("\(database.location) was pushed by an older vltava (no function vltava_utc for its time series); push the store again")
            }
        }
        for (info, _) in catalogue {
            var info = info
            if info.timeSeries != nil {
                if let n = try rowCount(info, in: database) { info.featureCount = Int(n) }
                layers.append((info, []))
                continue
            }
            if info.kind == .features && !stationLayers.contains(info.name) {
                if let n = try rowCount(info, in: database), n > Int64(clamping: maxRows), let family = try keptFamily(info, in: database) {
                    info.featureCount = Int(n)
                    info.bbox = try extent(info, in: database)
                    kept[info.name] = family
                    layers.append((info, []))
                    continue
                }
            }
            let features = try readFeatures(info, from: database)
            info.featureCount = features.count
            layers.append((info, features))
        }
        return (layers, kept)
    }

    /// The family of a feature layer too large to load, from its declared geometry type, or
    /// when that says no more than "geometry" from the types its rows hold; nil for lines,
    /// which load whatever their size (a network routes in memory).
    /// The rows of a layer's table, counted (nil if PostgreSQL answers no integer).
    static func rowCount(_ info: LayerInfo, in database: PostGISDatabase) throws(EngineError) -> Int64? {
        let count = try database.rows("SELECT count(*) FROM \(SQL.identifier(info.name))", [], deadline: .none)
        if case .integer(let n)? = count.first?.first { return n }
        return nil
    }

    static func keptFamily(_ info: LayerInfo, in database: PostGISDatabase) throws(EngineError) -> Layer.Family? {
        var types = [info.geometryType?.uppercased() ?? "GEOMETRY"]
        if !["POINT", "MULTIPOINT", "LINESTRING", "MULTILINESTRING", "POLYGON", "MULTIPOLYGON"].contains(types[0]) {
            types = try database.rows("SELECT DISTINCT GeometryType(geom) FROM \(SQL.identifier(info.name)) WHERE geom IS NOT NULL", [], deadline: .none)
                .compactMap { $0.first?.stringValue?.uppercased() }
        }
        let families = Set(types.map { type -> Layer.Family in
            switch type {
            case "POINT", "MULTIPOINT": .points
            case "LINESTRING", "MULTILINESTRING": .lines
            case "POLYGON", "MULTIPOLYGON": .polygons
            default: .mixed
            }
        })
        if families.contains(.lines) { return nil }
        return families.count == 1 ? families.first : .mixed
    }

    /// A layer's extent: PostgreSQL's estimate from its statistics (no scan of a large table),
    /// else computed.
    static func extent(_ info: LayerInfo, in database: PostGISDatabase) throws(EngineError) -> BBox? {
        func box(_ rows: [[AttributeValue]]) -> BBox? {
            guard let row = rows.first, row.count == 4, let minLon = row[0].doubleValue, let minLat = row[1].doubleValue,
                  let maxLon = row[2].doubleValue, let maxLat = row[3].doubleValue else { return nil }
            return BBox(minLon: minLon, minLat: minLat, maxLon: maxLon, maxLat: maxLat)
        }
        let corners = "ST_XMin(e), ST_YMin(e), ST_XMax(e), ST_YMax(e)"
        let estimated = try? database.rows("SELECT \(corners) FROM (SELECT ST_EstimatedExtent('public', $1, 'geom')::box2d AS e) AS x",
                                           [.text(info.name)], deadline: .none)
        if let found = estimated.flatMap(box) { return found }
        return box(try database.rows("SELECT \(corners) FROM (SELECT ST_Extent(geom) AS e FROM \(SQL.identifier(info.name))) AS x", [], deadline: .none))
    }

    /// UTCTime.parse (Geometry/UTCTime.swift) in SQL: a time-series table's start or end as
    /// seconds since 1970, NULL for a text the engine cannot read ("YYYY-MM-DD[ T]HH:MM[:SS[.f]]"
    /// with " UTC", "UTC", "Z", "+00:00", "+0000" or nothing after, spaces and tabs around;
    /// real calendar days only). IMMUTABLE, so a series table is indexed on it.
    static let utcFunction = #"""
        CREATE OR REPLACE FUNCTION vltava_utc(t text) RETURNS bigint LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $f$
        DECLARE s text; y int; mo int; d int; h int; mi int; se int := 0; yy int; era int; yoe int; doy int; doe int; dim int;
        BEGIN
            s := btrim(t, E' 	');
            IF s !~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?( UTC|UTC|Z|\+00:00|\+0000)?$' THEN RETURN NULL; END IF;
            y := substr(s, 1, 4)::int; mo := substr(s, 6, 2)::int; d := substr(s, 9, 2)::int;
            h := substr(s, 12, 2)::int; mi := substr(s, 15, 2)::int;
            IF substr(s, 17, 1) = ':' THEN se := substr(s, 18, 2)::int; END IF;
            dim := CASE WHEN mo = 2 THEN CASE WHEN (y % 4 = 0 AND y % 100 <> 0) OR y % 400 = 0 THEN 29 ELSE 28 END
                        WHEN mo IN (4, 6, 9, 11) THEN 30 ELSE 31 END;
            IF mo < 1 OR mo > 12 OR d < 1 OR d > dim OR h > 23 OR mi > 59 OR se > 59 THEN RETURN NULL; END IF;
            -- Days since 1970-01-01 (Howard Hinnant's days_from_civil, as UTCTime.daysFromCivil).
            yy := CASE WHEN mo <= 2 THEN y - 1 ELSE y END;
            era := (CASE WHEN yy >= 0 THEN yy ELSE yy - 399 END) / 400;
            yoe := yy - era * 400;
            doy := (153 * (mo + CASE WHEN mo > 2 THEN -3 ELSE 9 END) + 2) / 5 + d - 1;
            doe := yoe * 365 + yoe / 4 - yoe / 100 + doy;
            RETURN (era * 146097 + doe - 719468)::bigint * 86400 + h * 3600 + mi * 60 + se;
        END $f$
        """#

    /// A layer's rows as features, fid order (Engine/DatabaseLayers.swift decodes them).
    static func readFeatures(_ info: LayerInfo, from database: PostGISDatabase) throws(EngineError) -> [StoredFeature] {
        let rows = try database.rows("SELECT \(Fetch.rowColumns(info).joined(separator: ", ")) FROM \(SQL.identifier(info.name)) AS t ORDER BY t.fid",
                                     [], deadline: .none)
        return try Fetch.features(rows, of: info)
    }
}
