// The statements the engine's answers run on a PostGIS store (Engine/Database.swift,
// `DatabaseStore`): the rows of a layer too large to load that a selection may hold
// (Engine/DatabaseLayers.swift says why each is a superset of the answer), a page of its items
// (Engine/DatabaseItems.swift), and the time-series rows an answer needs (Engine/SeriesFetch.swift
// says which rows and why they are enough). The engine decides what to fetch; this file only
// writes it as SQL, every value a bound parameter.

import Engine
import Foundation
import Geometry
import Store
import Support

extension PostGISDatabase: DatabaseStore {
    public func features(_ fetch: LayerFetch, deadline: Deadline) throws(EngineError) -> FetchedRows {
        let (sql, parameters) = Fetch.statement(fetch, grid: grid(of: fetch))
        let rows = try read(sql, parameters, deadline: deadline)
        let lastMetres = if case .nearest = fetch.selection { rows.last?.last?.doubleValue } else { Double?.none }
        return FetchedRows(features: try Fetch.features(rows, of: fetch.layer), lastMetres: lastMetres)
    }

    public func fids(_ fetch: LayerFetch, deadline: Deadline) throws(EngineError) -> [(fid: Int64, metres: Double?)] {
        let (sql, parameters) = Fetch.statement(fetch, fidsOnly: true, grid: grid(of: fetch))
        return try read(sql, parameters, deadline: deadline).compactMap { row in
            guard case .integer(let fid)? = row.first else { return nil }
            return (fid, row.count > 1 ? row[1].doubleValue : nil)
        }
    }

    public func count(_ fetch: LayerFetch, deadline: Deadline) throws(EngineError) -> Int {
        let (sql, parameters) = Fetch.statement(fetch, counting: true, grid: grid(of: fetch))
        let total = try read(sql, parameters, deadline: deadline).first?.first?.doubleValue ?? 0
        return Int(exactly: total.rounded()) ?? 0
    }

    public func seriesRows(_ series: TimeSeries, keys: [String], needs: SeriesNeeds, deadline: Deadline) throws(EngineError) -> [Attributes] {
        let (sql, parameters) = Fetch.seriesStatement(series, keys: keys, needs: needs)
        let names = [series.link.keyColumn, series.link.startColumn, series.link.endColumn] + series.columns + series.textColumns
        return try read(sql, parameters, deadline: deadline).map { row in Attributes(Array(zip(names, row.dropFirst()))) }
    }

    public func seriesExtent(_ series: TimeSeries, deadline: Deadline) throws(EngineError) -> TimeRange? {
        let (t, k, s, e) = (SQL.identifier(series.table), SQL.identifier(series.link.keyColumn), SQL.identifier(series.link.startColumn), SQL.identifier(series.link.endColumn))
        let rows = try read("SELECT min(vltava_utc(r.\(s))), max(vltava_utc(r.\(e))) FROM \(t) AS r "
                            + "WHERE r.\(k) IS NOT NULL AND vltava_utc(r.\(s)) IS NOT NULL AND vltava_utc(r.\(e)) IS NOT NULL", [], deadline: deadline)
        guard let row = rows.first, row.count == 2, case .integer(let first) = row[0], case .integer(let last) = row[1] else { return nil }
        return TimeRange(start: UTCTime(seconds: first), end: UTCTime(seconds: last))
    }

    public func explain(_ fetch: LayerFetch, fidsOnly: Bool, deadline: Deadline) throws(EngineError) -> (statement: String, plan: [String]) {
        let (sql, parameters) = Fetch.statement(fetch, fidsOnly: fidsOnly, grid: grid(of: fetch))
        return (sql, try read("EXPLAIN " + sql, parameters, deadline: deadline).map { $0.first?.stringValue ?? "" })
    }

    public func explainSeries(_ series: TimeSeries, keys: [String], needs: SeriesNeeds, deadline: Deadline) throws(EngineError) -> (statement: String, plan: [String]) {
        let (sql, parameters) = Fetch.seriesStatement(series, keys: keys, needs: needs)
        return (sql, try read("EXPLAIN " + sql, parameters, deadline: deadline).map { $0.first?.stringValue ?? "" })
    }
}

extension PostGISDatabase {
    /// The grid cell (thousandths of a degree) the layer's table is partitioned by; nil: not partitioned.
    func grid(of fetch: LayerFetch) -> Int? {
        grids.withLock { $0[fetch.layer.name] }
    }
}

enum Fetch {
    /// The statement of a fetch: its rows (`rowColumns`), or only their fids; at most
    /// `fetch.limit` rows (nil: no limit), or their count. `grid`: the layer's table is
    /// partitioned by grid cell (`gridCondition`).
    static func statement(_ fetch: LayerFetch, fidsOnly: Bool = false, counting: Bool = false, grid: Int? = nil) -> (sql: String, parameters: [AttributeValue]) {
        var parameters: [AttributeValue] = []
        func bind(_ value: AttributeValue) -> String {
            parameters.append(value)
            return "$\(parameters.count)"
        }
        func geography(_ p: Point) -> String { "ST_SetSRID(ST_MakePoint(\(bind(.real(p.lon))), \(bind(.real(p.lat)))), 4326)::geography" }
        var columns = fidsOnly ? ["t.fid"] : rowColumns(fetch.layer)
        var conditions: [String] = []
        var order = "t.fid"
        var limit = fetch.limit
        var skip = 0
        switch fetch.selection {
        case .containing(let p):
            conditions.append("ST_Covers(t.geom, ST_SetSRID(ST_MakePoint(\(bind(.real(p.lon))), \(bind(.real(p.lat)))), 4326))")
        case .feature(let fid):
            conditions.append("t.fid = \(bind(.integer(fid)))")
        case .nearest(_, let p, let within):
            let point = geography(p)
            if let within {
                conditions.append("ST_DWithin(t.geom::geography, \(point), \(bind(.real(within + DatabaseSelection.slack(within, points: fetch.points)))), false)")
            }
            columns.append("ST_Distance(t.geom::geography, \(point), false)")
            order = "t.geom::geography <-> \(point), t.fid"
        case .within(let metres, let p):
            conditions.append("ST_DWithin(t.geom::geography, \(geography(p)), \(bind(.real(metres + DatabaseSelection.slack(metres, points: fetch.points)))), false)")
        case .intersecting(let box):
            let envelopes = BBox.parts(of: box).map { part in
                "t.geom && ST_MakeEnvelope(\([part.minLon, part.minLat, part.maxLon, part.maxLat].map { bind(.real($0)) }.joined(separator: ", ")), 4326)"
            }
            conditions.append(envelopes.count == 1 ? envelopes[0] : "(" + envelopes.joined(separator: " OR ") + ")")
        case .all(let keys, let n, let offset):
            if !keys.isEmpty {
                order = keys.map { key in
                    (key.column.map { "t." + SQL.identifier($0) } ?? "t.fid") + (key.descending ? " DESC" : " ASC") + (key.nullsFirst ? " NULLS FIRST" : " NULLS LAST")
                }.joined(separator: ", ") + ", t.fid"
            }
            if let n { limit = min(n, fetch.limit ?? n) }
            skip = offset
        }
        if let grid, let cells = gridCells(fetch.selection, points: fetch.points, millidegrees: grid) {
            conditions.append("vltava_grid_key(t.geom, \(grid)) IN (\(cells.map { bind(.integer($0)) }.joined(separator: ", ")))")
        }
        if let condition = fetch.condition { conditions.append(Fetch.sql(condition, bind)) }
        // Keyset paging: the rows past a fid, found on the primary key's index.
        if let after = fetch.after { conditions.append("t.fid > \(bind(.integer(after)))") }
        let whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let table = SQL.identifier(fetch.layer.name)
        if counting { return ("SELECT count(*) FROM \(table) AS t\(whereClause)", parameters) }
        let limitClause = (limit.map { " LIMIT " + bind(.integer(Int64($0))) } ?? "") + (skip > 0 ? " OFFSET " + bind(.integer(Int64(skip))) : "")
        guard skip > 0 else {
            return ("SELECT \(columns.joined(separator: ", ")) FROM \(table) AS t\(whereClause) ORDER BY \(order)\(limitClause)", parameters)
        }
        // A deep page: the rows skipped are counted off on fids alone (the primary key's index),
        // and only the page's rows are read and converted. One statement over them all made
        // PostgreSQL convert each skipped row's geometry: 500 ms for a page at row 900,000.
        // (The inner `t` is the subquery's own; the condition and the order name it.)
        return ("SELECT \(columns.joined(separator: ", ")) FROM \(table) AS t WHERE t.fid IN (SELECT t.fid FROM \(table) AS t\(whereClause) "
            + "ORDER BY \(order)\(limitClause)) ORDER BY \(order)", parameters)
    }

    /// The cell size N of a partition key `vltava_grid_key(geom, N)` as `pg_get_partkeydef`
    /// prints it (`HASH (vltava_grid_key(geom, 50))`); nil for any other key.
    static func gridCell(partitionKey: String) -> Int? {
        guard let open = partitionKey.range(of: "vltava_grid_key(geom, ") else { return nil }
        let digits = partitionKey[open.upperBound...].prefix { $0.isNumber }
        guard partitionKey[open.upperBound...].dropFirst(digits.count).hasPrefix(")"), let cell = Int(digits), (1...360_000).contains(cell) else { return nil }
        return cell
    }

    /// The grid keys (`vltava_grid_key`, Benchmarks/partition-layer.sql) of the rows a
    /// selection may hold, on a table partitioned by them: so PostgreSQL reads only their
    /// partitions. A row's key is the cell of its bounding box's lower-left corner, and the
    /// table's CHECK keeps every box under 0.99 of a cell wide and high: a row that reaches
    /// the region [x0, x1] × [y0, y1] has its corner in a cell from one left of / below the
    /// region's first to its last. nil (no condition, every partition) for a selection with no
    /// region (NEAREST without WITHIN, a fid, all rows), near the poles or the antimeridian, or
    /// over more than 64 cells.
    static func gridCells(_ selection: DatabaseSelection, points: Bool, millidegrees: Int) -> [Int64]? {
        var boxes: [BBox] = []
        func around(_ p: Point, metres: Double) -> BBox? {
            // At least 110 km a degree of latitude (the sphere's is 111.2 km), a degree of
            // longitude that times the cosine of the region's highest latitude.
            let dLat = metres / 110_000
            let top = abs(p.lat) + dLat
            guard top < 85 else { return nil }
            let dLon = dLat / cos(top * .pi / 180)
            guard p.lon - dLon > -180, p.lon + dLon < 180 else { return nil }
            return BBox(minLon: p.lon - dLon, minLat: p.lat - dLat, maxLon: p.lon + dLon, maxLat: p.lat + dLat)
        }
        switch selection {
        case .containing(let p):
            boxes = [BBox(minLon: p.lon, minLat: p.lat, maxLon: p.lon, maxLat: p.lat)]
        case .nearest(_, let p, let within?):
            guard let box = around(p, metres: within + DatabaseSelection.slack(within, points: points)) else { return nil }
            boxes = [box]
        case .within(let metres, let p):
            guard let box = around(p, metres: metres + DatabaseSelection.slack(metres, points: points)) else { return nil }
            boxes = [box]
        case .intersecting(let box):
            boxes = BBox.parts(of: box)
        case .nearest(_, _, nil), .feature, .all:
            return nil
        }
        let cell = Double(millidegrees)
        var keys: Set<Int64> = []
        for box in boxes {
            let columns = Int64((box.minLon * 1000 / cell).rounded(.down)) - 1...Int64((box.maxLon * 1000 / cell).rounded(.down))
            let rows = Int64((box.minLat * 1000 / cell).rounded(.down)) - 1...Int64((box.maxLat * 1000 / cell).rounded(.down))
            guard columns.count * rows.count <= 64 else { return nil }
            for i in columns { for j in rows { keys.insert((i + 1_000_000) * 10_000_000 + (j + 1_000_000)) } }
        }
        return keys.count <= 64 ? keys.sorted() : nil
    }

    /// A condition as SQL over the table as `t` (Engine/DatabaseLayers.swift, `StoreCondition`,
    /// says what each means). Missing values compare false (`COALESCE(…, false)`), so NOT of a
    /// comparison with a missing value holds, as in the engine; text compares by code point
    /// (`COLLATE "C"`), as Swift strings do.
    static func sql(_ condition: StoreCondition, _ bind: (AttributeValue) -> String) -> String {
        func op(_ comparison: StoreComparison) -> String {
            switch comparison {
            case .equal: "="
            case .notEqual: "<>"
            case .less: "<"
            case .lessOrEqual: "<="
            case .greater: ">"
            case .greaterOrEqual: ">="
            }
        }
        switch condition {
        case .constant(let value):
            return value ? "true" : "false"
        case .and(let terms):
            return terms.isEmpty ? "true" : "(" + terms.map { sql($0, bind) }.joined(separator: " AND ") + ")"
        case .or(let terms):
            return terms.isEmpty ? "false" : "(" + terms.map { sql($0, bind) }.joined(separator: " OR ") + ")"
        case .not(let inner):
            return "(NOT \(sql(inner, bind)))"
        case .fid(let comparison, let n):
            return "(t.fid::float8 \(op(comparison)) \(bind(.real(n))))"
        case .number(let column, let comparison, let n):
            return "COALESCE(t.\(SQL.identifier(column))::float8 \(op(comparison)) \(bind(.real(n))), false)"
        case .text(let column, let comparison, let text):
            return "COALESCE(t.\(SQL.identifier(column)) COLLATE \"C\" \(op(comparison)) \(bind(.text(text))) COLLATE \"C\", false)"
        case .boolean(let column, let comparison, let value):
            return "COALESCE(t.\(SQL.identifier(column))::int \(op(comparison)) \(bind(.integer(value ? 1 : 0))), false)"
        case .isNull(let column, let negated):
            return "(t.\(SQL.identifier(column)) IS \(negated ? "NOT " : "")NULL)"
        case .measures(let series, let column):
            // Rule 2 of TimeSeries.swift over the observations the engine reads (times it can parse).
            let (s, key) = (SQL.identifier(series.table), "t." + SQL.identifier(series.link.layerKeyColumn))
            let (start, end) = (SQL.identifier(series.link.startColumn), SQL.identifier(series.link.endColumn))
            return "EXISTS (SELECT 1 FROM \(s) AS s WHERE s.\(SQL.identifier(series.link.keyColumn)) = \(key) AND s.\(SQL.identifier(column)) <> 0 "
                + "AND vltava_utc(s.\(start)) IS NOT NULL AND vltava_utc(s.\(end)) IS NOT NULL)"
        case .fresh(let series, let hours):
            let (s, key) = (SQL.identifier(series.table), "t." + SQL.identifier(series.link.layerKeyColumn))
            let (start, end, keyColumn) = (SQL.identifier(series.link.startColumn), SQL.identifier(series.link.endColumn), SQL.identifier(series.link.keyColumn))
            // The engine's rule (TimeSeries.isStale): fresh when the end of the station's last
            // observation (newest start, then highest fid) is at most `hours` (whole seconds)
            // before the newest such end of any key of the table. Times as the engine reads them
            // (`vltava_utc`, Engine/SeriesFetch.swift); the keys are walked through the key index
            // (a loose index scan), each one's last observation through (key, start, fid).
            let seconds = (hours * 3600).rounded(.towardZero)
            let maxAge = bind(.integer(seconds >= 9.2e18 ? Int64.max : seconds > 0 ? Int64(seconds) : 0))
            let observation = "vltava_utc(r.\(start)) IS NOT NULL AND vltava_utc(r.\(end)) IS NOT NULL"
            func lastEnd(of keyValue: String) -> String {
                "(SELECT vltava_utc(r.\(end)) FROM \(s) AS r WHERE r.\(keyColumn) = \(keyValue) AND \(observation) ORDER BY vltava_utc(r.\(start)) DESC, r.fid DESC LIMIT 1)"
            }
            let newest = "(WITH RECURSIVE k(v) AS ((SELECT r.\(keyColumn) FROM \(s) AS r WHERE r.\(keyColumn) IS NOT NULL ORDER BY 1 LIMIT 1) "
                + "UNION ALL SELECT (SELECT r.\(keyColumn) FROM \(s) AS r WHERE r.\(keyColumn) > k.v ORDER BY 1 LIMIT 1) FROM k WHERE k.v IS NOT NULL) "
                + "SELECT max(\(lastEnd(of: "k.v"))) FROM k WHERE k.v IS NOT NULL)"
            return "COALESCE(\(lastEnd(of: key)) >= \(newest) - \(maxAge), false)"
        case .like(let column, let pattern, let negated):
            // PostgreSQL's own LIKE, whose escape is `\` too; missing values match neither way.
            return "COALESCE(t.\(SQL.identifier(column))::text COLLATE \"C\" \(negated ? "NOT " : "")LIKE \(bind(.text(pattern))), false)"
        case .instant(let column, let comparison, let time):
            return "COALESCE(vltava_utc(t.\(SQL.identifier(column))::text) \(op(comparison)) \(bind(.integer(time.seconds))), false)"
        case .spatial(let relation, let shape):
            let function = switch relation {
            case .intersects: "ST_Intersects"
            case .disjoint: "ST_Disjoint"
            case .contains: "ST_Contains"
            case .within: "ST_Within"
            case .equals: "ST_Equals"
            case .touches: "ST_Touches"
            case .crosses: "ST_Crosses"
            case .overlaps: "ST_Overlaps"
            }
            return "COALESCE(\(function)(t.geom, ST_GeomFromText(\(bind(.text(WKT.encode(shape)))), 4326)), false)"
        case .projectedBox(let srid, let box):
            let (s, w, south, e, n) = (bind(.integer(Int64(srid))), bind(.real(box.minLon)), bind(.real(box.minLat)), bind(.real(box.maxLon)), bind(.real(box.maxLat)))
            return "COALESCE(ST_Intersects(ST_Transform(t.geom, \(s)::integer), ST_MakeEnvelope(\(w), \(south), \(e), \(n), \(s)::integer)), false)"
        }
    }

    /// The select list of a layer's rows: fid, the geometry as hex WKB (feature layers), then
    /// the columns, over the table as `alias`.
    static func rowColumns(_ info: LayerInfo, alias: String = "t") -> [String] {
        ["\(alias).fid"] + (info.kind == .features ? ["encode(ST_AsBinary(\(alias).geom), 'hex')"] : [])
            + info.columns.map { "\(alias).\(SQL.identifier($0.name))" }
    }

    /// Rows selected by `rowColumns` as features (anything after those columns is ignored).
    static func features(_ rows: [[AttributeValue]], of info: LayerInfo) throws(EngineError) -> [StoredFeature] {
        let hasGeometry = info.kind == .features
        let first = hasGeometry ? 2 : 1
        var features: [StoredFeature] = []
        features.reserveCapacity(rows.count)
        for row in rows {
            guard case .integer(let fid)? = row.first, row.count >= first + info.columns.count else {
                throw .store("\(info.name): a row without its fid or columns")
            }
            var geometry: Geometry?
            if hasGeometry, let hex = row[1].stringValue {
                guard let bytes = Hex.decode(hex) else { throw .store("\(info.name), fid \(fid): the geometry cannot be read") }
                do { geometry = try WKB.decodeAllowingEmpty(bytes) } catch { throw .store("\(info.name), fid \(fid): \(error)") }
            }
            var properties = Attributes()
            for (n, column) in info.columns.enumerated() {
                var value = row[first + n]
                if column.isJSON, case .text(let text) = value { value = .json(text) }
                properties[column.name] = value
            }
            features.append(StoredFeature(fid: fid, feature: Feature(id: .integer(fid), geometry: geometry, properties: properties)))
        }
        return features
    }

    /// The one statement that fetches what `needs` asks for about the stations `keys` (bound as
    /// one JSON array): the rows' fid, key, start, end, numeric columns and text columns, in fid
    /// order. Engine/SeriesFetch.swift says which rows and why they are enough.
    static func seriesStatement(_ series: TimeSeries, keys: [String], needs: SeriesNeeds) -> (sql: String, parameters: [AttributeValue]) {
        let link = series.link
        let (t, k, s, e) = (SQL.identifier(series.table), SQL.identifier(link.keyColumn), SQL.identifier(link.startColumn), SQL.identifier(link.endColumn))
        var parameters: [AttributeValue] = [.text(JSON.serialize(.array(keys.map { .string($0) })))]
        // Each pick reads whole rows (no join back to the table by fid, which PostgreSQL plans
        // as a walk over the whole table when it guesses a HISTORY window large).
        let row = (["fid", k, s, e] + series.columns.map(SQL.identifier) + series.textColumns.map(SQL.identifier)).map { "r." + $0 }.joined(separator: ", ")
        let observation = "vltava_utc(r.\(s)) IS NOT NULL AND vltava_utc(r.\(e)) IS NOT NULL"
        func newest(_ condition: String) -> String {
            "(SELECT \(row) FROM \(t) AS r WHERE r.\(k) = key.value AND \(observation)\(condition) ORDER BY vltava_utc(r.\(s)) DESC, r.fid DESC LIMIT 1)"
        }
        var picks = [newest("")]
        for column in series.columns where needs.columns.contains(column) {
            let c = "r." + SQL.identifier(column)
            // A row that survives the rule when the station measures c: non-zero, or a zero in a
            // complete hour (not for the quality column, whose 0 is "incomplete").
            let survives = column == series.qualityColumn ? " AND \(c) <> 0"
                : " AND \(c) IS NOT NULL" + (series.qualityColumn.map { " AND (\(c) <> 0 OR r.\(SQL.identifier($0)) <> 0)" } ?? "")
            picks.append(newest(survives))
            // Whether the station measures c: any one non-zero row says so (the partial index
            // on c <> 0 answers at once, also when there is none).
            picks.append("(SELECT \(row) FROM \(t) AS r WHERE r.\(k) = key.value AND \(c) <> 0 AND \(observation) LIMIT 1)")
        }
        var selected = "SELECT p.* FROM keys AS key, LATERAL (\(picks.joined(separator: " UNION ALL "))) AS p"
        if let hours = needs.historyHours {
            let (seconds, overflow) = Int64(clamping: hours).multipliedReportingOverflow(by: 3600)
            parameters.append(.integer(overflow ? 1_000_000_000_000_000 : min(seconds, 1_000_000_000_000_000)))
            selected += " UNION ALL SELECT w.* FROM keys AS key, LATERAL (SELECT vltava_utc(r.\(e)) AS e FROM \(t) AS r WHERE r.\(k) = key.value AND \(observation) "
                + "ORDER BY vltava_utc(r.\(s)) DESC, r.fid DESC LIMIT 1) AS last, "
                + "LATERAL (SELECT \(row) FROM \(t) AS r WHERE r.\(k) = key.value AND vltava_utc(r.\(e)) > last.e - $\(parameters.count) AND vltava_utc(r.\(s)) IS NOT NULL OFFSET 0) AS w"
        }
        if let window = needs.window {
            // The row's interval ends within [from, to].
            var bounds = [observation]
            if let start = window.start {
                parameters.append(.integer(start.seconds))
                bounds.append("vltava_utc(r.\(e)) >= $\(parameters.count)")
            }
            if let end = window.end {
                parameters.append(.integer(end.seconds))
                bounds.append("vltava_utc(r.\(e)) <= $\(parameters.count)")
            }
            selected += " UNION ALL SELECT w.* FROM keys AS key, LATERAL (SELECT \(row) FROM \(t) AS r WHERE r.\(k) = key.value AND "
                + bounds.joined(separator: " AND ") + " OFFSET 0) AS w"
        }
        // (OFFSET 0 keeps the window a subquery run per station on the (key, end) index:
        // pulled up, PostgreSQL merged it with the whole table.)
        // A row picked twice comes once, and in fid order, as the engine reads a table.
        let sql = "WITH keys AS (SELECT DISTINCT value FROM json_array_elements_text($1::json)) "
            + "SELECT DISTINCT ON (o.fid) o.* FROM (\(selected)) AS o ORDER BY o.fid"
        return (sql, parameters)
    }
}

/// Bytes as hexadecimal text and back (PostgreSQL's `bytea` and `encode(…, 'hex')`).
enum Hex {
    static func encode(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Every geometry a layer kept in the database answers with comes through here, so it works
    /// on the text's bytes in place through a table (a per-byte `append` with a branch per digit
    /// took 13 % of such a server's time).
    static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { digits -> [UInt8]? in
            guard digits.count % 2 == 0 else { return nil }
            var valid = true
            let bytes = [UInt8](unsafeUninitializedCapacity: digits.count / 2) { out, count in
                for i in 0..<digits.count / 2 {
                    let high = nibbles[Int(digits[2 * i])], low = nibbles[Int(digits[2 * i + 1])]
                    valid = valid && high < 16 && low < 16
                    out[i] = high << 4 | (low & 15)
                }
                count = digits.count / 2
            }
            return valid ? bytes : nil
        }
    }

    /// A hexadecimal digit's value by its byte, 255 for any other byte.
    private static let nibbles: [UInt8] = (0...255).map { byte -> UInt8 in
        switch byte {
        case 48...57: UInt8(byte - 48)
        case 97...102: UInt8(byte - 87)
        case 65...70: UInt8(byte - 55)
        default: 255
        }
    }
}
