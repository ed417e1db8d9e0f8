// Feature layers of a PostGIS store too large to hold: a layer with more rows than
// `EngineLimits.maxRowsLoadedPerLayer` stays in PostgreSQL, and its snapshot layer holds none of
// them (`Layer.keptInDatabase`). An answer on it first fetches, in one statement (NEAREST: again
// with more candidates until the answer is certain), the rows it may consist of, picked by
// PostGIS through the layer's GiST indexes, and gets them as a layer of their own. The engine's
// own operation then runs on that layer as on any other. The fetch is a superset of the answer
// by the same rules as the query language's pushdown (QueryLanguage/SQLPushdown.swift):
//
// - CONTAINING: `ST_Covers` counts the boundary in, a superset of the engine's half-open rule.
// - NEAREST k: a KNN `ORDER BY geom::geography <-> point` fetches c candidates. Every row not
//   fetched is at least `last` sphere metres away (the last candidate's), and the engine's metre
//   differs from PostGIS's by at most `slack(last)`; so once `last - slack(last)` is beyond the
//   engine's k-th distance among the candidates, no row left behind can enter the top k.
//   Otherwise the fetch repeats with 4× the candidates.
// - WITHIN d: `ST_DWithin` on the sphere with d + slack(d).
// - INTERSECTING: `geom && envelope` (PostGIS compares float4-rounded boxes, slightly larger).
//
// A condition (the query language's WHERE, compiled to SQL) applies in the same statement, before
// any limit. A fetch never holds more than `limits.maxRows` rows: past that it is
// `too_many_rows`, as the same answer on a loaded layer would be, so a process never holds more
// of such a layer than one answer's worth.

import Geometry
import Store

/// What an answer asks of a layer kept in the database: which of its rows to fetch.
public enum DatabaseSelection: Sendable, Equatable {
    /// The features that may contain the point.
    case containing(Point)
    /// Enough of the features nearest to the point that the k nearest (within `within` metres,
    /// when given) are among them.
    case nearest(k: Int, to: Point, within: Double?)
    /// The features within `metres` of the point.
    case within(metres: Double, of: Point)
    /// The features whose bounding box may meet `box`.
    case intersecting(BBox)
    /// Every feature meeting the condition, in `order` (SQL over `t`; fid breaks ties), after
    /// the first `offset` and at most `limit` of them: the statement's own ORDER BY, LIMIT and
    /// OFFSET, where they can run in SQL.
    case all(order: String?, limit: Int?, offset: Int = 0)

    /// Metres by which the engine's distance and PostGIS's sphere distance may differ at
    /// `metres`: points are both haversine on nearly the same radius (6,371,008.8 m against
    /// PostGIS's 6,371,008.7714 m: 5e-9 relative); lines and polygons are measured by the engine
    /// to the nearest point of each segment on a local projection, within 0.5 %.
    public static func slack(_ metres: Double, points: Bool) -> Double {
        points ? metres * 1e-6 + 0.01 : metres * 0.005 + 0.5
    }
}

/// A condition in SQL over a layer's table as `t`, with its own parameters `$1`, `$2`, …
public struct SQLCondition: Sendable {
    public var sql: String
    public var parameters: [AttributeValue]
    public init(sql: String, parameters: [AttributeValue]) {
        self.sql = sql
        self.parameters = parameters
    }
}

/// SQL text pieces every statement of the engine shares.
public enum SQL {
    /// A table or column name as a PostgreSQL identifier, double-quoted.
    public static func identifier(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// The select list of a layer's rows: fid, the geometry as hex WKB (feature layers), then
    /// the columns, over the table as `alias`.
    public static func rowColumns(_ info: LayerInfo, alias: String = "t") -> [String] {
        ["\(alias).fid"] + (info.kind == .features ? ["encode(ST_AsBinary(\(alias).geom), 'hex')"] : [])
            + info.columns.map { "\(alias).\(identifier($0.name))" }
    }

    /// Rows selected by `rowColumns` as features (anything after those columns is ignored).
    public static func features(_ rows: [[AttributeValue]], of info: LayerInfo) throws(EngineError) -> [StoredFeature] {
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
}

/// Bytes as hexadecimal text and back (PostgreSQL's `bytea` and `encode(…, 'hex')`).
public enum Hex {
    public static func encode(_ bytes: [UInt8]) -> String {
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
    public static func decode(_ text: String) -> [UInt8]? {
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

extension Snapshot {
    /// The layer an operation on `layer` runs on: `layer` itself when its rows are in memory;
    /// for a layer kept in the database, the rows `selection` may answer with (meeting
    /// `condition` too), fetched now, as a layer of their own. The engine's operation on that
    /// layer gives the answer the whole layer would.
    public func rows(of layer: Layer, for selection: DatabaseSelection, where condition: SQLCondition? = nil,
                     deadline: Deadline = .none) throws(EngineError) -> Layer {
        guard layer.keptInDatabase else { return layer }
        guard let database else { throw .store("'\(layer.name)' is kept in a database this snapshot does not have") }
        let points = layer.family == .points
        switch selection {
        case .nearest(let k, let point, let within):
            try Check.position(point)
            try Check.k(k, limits: limits)
            if let within { try Check.distance(within, parameter: "within") }
            var candidates = k * 4 + 16
            while true {
                let (sql, parameters) = statement(layer, selection, condition, candidates: candidates)
                let rows = try database.rows(sql, parameters, deadline: deadline)
                let fetched = try fetchedLayer(layer, rows)
                let ranked = try search(fetched, point, k: k, within: within ?? .infinity, filter: nil, stats: nil)
                let last = rows.last?.last?.doubleValue ?? 0
                let kth = ranked.count >= k ? ranked[k - 1].metres ?? .infinity : .infinity
                if rows.count < candidates || last - DatabaseSelection.slack(last, points: points) > kth { return fetched }
                // Never more than a bounded fetch per answer, nor a guess: past the bound, an error.
                guard candidates * 4 <= 16 * limits.maxRows + 64 else {
                    throw .invalidArgument(parameter: "k", message: "the \(k) nearest of '\(layer.name)' are not certain within "
                                           + "\(candidates) rows fetched from PostgreSQL; ask for fewer")
                }
                candidates *= 4
                try deadline.check()
            }
        case .containing(let point), .within(_, let point):
            try Check.position(point)
        case .intersecting(let box):
            try Check.position(Point(lon: box.minLon, lat: box.minLat), parameter: "bbox")
            try Check.position(Point(lon: box.maxLon, lat: box.maxLat), parameter: "bbox")
        case .all:
            break
        }
        if case .within(let metres, _) = selection { try Check.distance(metres, parameter: "within") }
        let (sql, parameters) = statement(layer, selection, condition, candidates: limits.maxRows + 1)
        let rows = try database.rows(sql, parameters, deadline: deadline)
        if rows.count > limits.maxRows {
            // How many there are, for the error: the same selection, counted.
            let (count, countParameters) = statement(layer, selection, condition, candidates: nil, counting: true)
            let total = try database.rows(count, countParameters, deadline: deadline).first?.first?.doubleValue ?? Double(rows.count)
            throw .tooManyRows(count: Int(exactly: total.rounded()) ?? rows.count, limit: limits.maxRows)
        }
        return try fetchedLayer(layer, rows)
    }

    /// Fetched rows as a layer of their own, in fid order: the order the whole layer loads in,
    /// so that ties (equal distances) fall as they would there.
    private func fetchedLayer(_ layer: Layer, _ rows: [[AttributeValue]]) throws(EngineError) -> Layer {
        let features = try SQL.features(rows, of: layer.info).sorted { $0.fid < $1.fid }
        return try Layer(info: layer.info, features: features, family: layer.family)
    }

    /// The statement `rows(of:for:)` runs: the condition's parameters first, the selection's
    /// after; at most `candidates` rows (nil: no limit), or their count.
    public func statement(_ layer: Layer, _ selection: DatabaseSelection, _ condition: SQLCondition?, candidates: Int?,
                          counting: Bool = false) -> (sql: String, parameters: [AttributeValue]) {
        var parameters = condition?.parameters ?? []
        func bind(_ value: AttributeValue) -> String {
            parameters.append(value)
            return "$\(parameters.count)"
        }
        func geography(_ p: Point) -> String { "ST_SetSRID(ST_MakePoint(\(bind(.real(p.lon))), \(bind(.real(p.lat)))), 4326)::geography" }
        let points = layer.family == .points
        var columns = SQL.rowColumns(layer.info)
        var conditions: [String] = []
        var order = "t.fid"
        var limit = candidates
        var skip = 0
        switch selection {
        case .containing(let p):
            conditions.append("ST_Covers(t.geom, ST_SetSRID(ST_MakePoint(\(bind(.real(p.lon))), \(bind(.real(p.lat)))), 4326))")
        case .nearest(_, let p, let within):
            let point = geography(p)
            if let within {
                conditions.append("ST_DWithin(t.geom::geography, \(point), \(bind(.real(within + DatabaseSelection.slack(within, points: points)))), false)")
            }
            columns.append("ST_Distance(t.geom::geography, \(point), false)")
            order = "t.geom::geography <-> \(point), t.fid"
        case .within(let metres, let p):
            conditions.append("ST_DWithin(t.geom::geography, \(geography(p)), \(bind(.real(metres + DatabaseSelection.slack(metres, points: points)))), false)")
        case .intersecting(let box):
            let envelopes = BBox.parts(of: box).map { part in
                "t.geom && ST_MakeEnvelope(\([part.minLon, part.minLat, part.maxLon, part.maxLat].map { bind(.real($0)) }.joined(separator: ", ")), 4326)"
            }
            conditions.append(envelopes.count == 1 ? envelopes[0] : "(" + envelopes.joined(separator: " OR ") + ")")
        case .all(let keys, let n, let offset):
            if let keys { order = keys + ", t.fid" }
            if let n { limit = min(n, candidates ?? n) }
            skip = offset
        }
        if let condition { conditions.append("(" + condition.sql + ")") }
        let whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let table = SQL.identifier(layer.name)
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

    /// Refuses an operation on a layer kept in the database, whose rows this snapshot does not
    /// hold: the caller fetches the rows first (`rows(of:for:)`).
    func requireRows(_ layer: Layer, _ operation: String) throws(EngineError) {
        guard layer.keptInDatabase else { return }
        throw .notSupportedOnPostGIS("\(operation) on '\(layer.name)', which stays in PostgreSQL (\(layer.rowCount) rows, more than the "
                                     + "\(limits.maxRowsLoadedPerLayer) a snapshot loads): ask FIND \(layer.name) … with CONTAINING, NEAREST, WITHIN or INTERSECTING")
    }
}
