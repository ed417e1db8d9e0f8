// Time series on a PostGIS store: read per answer, never held in the snapshot.
//
// A snapshot from a GeoPackage holds every observation (TimeSeries.swift). A snapshot from
// PostGIS holds only each series' metadata (table, link, columns): an answer that needs LATEST,
// HISTORY, OBSERVED_AT or whether a station measures a column fetches, in one statement with
// bound parameters, the rows of its stations that decide those values, and builds the same
// `TimeSeries` from them with the engine's own code (`TimeSeries.with(rows:)`). The rules of
// TimeSeries.swift are not written again in SQL; SQL only picks rows, and the rows it picks are
// enough for the rules to give the whole table's answer. Per station:
//
// - the last observation (newest start, then highest fid: the engine sorts a station's rows by
//   start, stably, from fid order): OBSERVED_AT, the anchor of HISTORY windows, FRESH;
// - per column c asked for: one row with c ≠ 0, if there is one, so that the rows fetched say
//   whether the station measures c (rule 2: some value non-zero) as the whole table would; and
//   the newest row whose c survives the rule when the station measures it (c ≠ 0, or c = 0 in
//   a complete hour, quality ≠ 0; for the quality column itself only c ≠ 0): that row is the
//   newest surviving value (LATEST) in the whole table, and it is among the rows fetched;
// - for HISTORY(c, n h): every row whose end is less than n hours before the last one's end.
//
// Rows whose start or end the engine cannot read are not observations (the engine skips them):
// `vltava_utc(text)` (created by `push`, PostGIS/PostGISStore.swift) is UTCTime.parse in SQL,
// NULL where UTCTime.parse gives nil. `push` indexes a series table on (key, vltava_utc(start),
// fid), so each "newest row" is a short backward index scan; on (key, vltava_utc(end)) for the
// HISTORY windows; and on (key, fid) WHERE c <> 0 for each value column, so a station that
// never measured c is known at once rather than by reading all its rows.

import Geometry
import Store

/// What an answer needs of a time series, for the stations in it.
public struct SeriesNeeds: Sendable, Equatable {
    /// Columns whose newest value (LATEST), or whether the station measures them, is needed.
    public var columns: [String] = []
    /// The longest HISTORY window asked for, in hours.
    public var historyHours: Int?

    public init(columns: [String] = [], historyHours: Int? = nil) {
        self.columns = columns
        self.historyHours = historyHours
    }

    public mutating func add(column: String) {
        if !columns.contains(column) { columns.append(column) }
    }

    public mutating func add(hours: Int, column: String) {
        add(column: column)
        historyHours = max(historyHours ?? hours, hours)
    }
}

extension Snapshot {
    /// Whether the snapshot's time series are read from its database per answer (a PostGIS
    /// store) rather than held in memory.
    public var seriesInDatabase: Bool { database != nil }

    /// `series` as an answer about the stations `keys` sees it: the snapshot's own series on a
    /// GeoPackage; on a PostGIS store, the rows `needs` asks for, fetched in one statement.
    public func series(_ series: TimeSeries, keys: [String], needs: SeriesNeeds, deadline: Deadline = .none) throws(EngineError) -> TimeSeries {
        guard let database else { return series }
        let unique = Array(Set(keys)).sorted()
        guard !unique.isEmpty else { return series.with(rows: []) }
        let (sql, parameters) = series.fetchStatement(keys: unique, needs: needs)
        let names = [series.link.keyColumn, series.link.startColumn, series.link.endColumn] + series.columns + series.textColumns
        let rows = try database.rows(sql, parameters, deadline: deadline)
        return series.with(rows: rows.map { row in Attributes(Array(zip(names, row.dropFirst()))) })
    }

    /// The first start and last end among the series' observations (the OGC collection's
    /// temporal extent) on a PostGIS store; nil when it has none.
    func databaseExtent(_ series: TimeSeries, database: any SQLDatabase) throws(EngineError) -> TimeRange? {
        let (t, k, s, e) = (SQL.identifier(series.table), SQL.identifier(series.link.keyColumn), SQL.identifier(series.link.startColumn), SQL.identifier(series.link.endColumn))
        let rows = try database.rows("SELECT min(vltava_utc(r.\(s))), max(vltava_utc(r.\(e))) FROM \(t) AS r "
                                     + "WHERE r.\(k) IS NOT NULL AND vltava_utc(r.\(s)) IS NOT NULL AND vltava_utc(r.\(e)) IS NOT NULL", [], deadline: .none)
        guard let row = rows.first, row.count == 2, case .integer(let first) = row[0], case .integer(let last) = row[1] else { return nil }
        return TimeRange(start: UTCTime(seconds: first), end: UTCTime(seconds: last))
    }
}


extension TimeSeries {
    /// The one statement that fetches what `needs` asks for about the stations `keys` (bound as
    /// one JSON array): the rows' fid, key, start, end, numeric columns and text columns, in fid
    /// order. See the top of this file for which rows and why they are enough.
    public func fetchStatement(keys: [String], needs: SeriesNeeds) -> (sql: String, parameters: [AttributeValue]) {
        let (t, k, s, e) = (SQL.identifier(table), SQL.identifier(link.keyColumn), SQL.identifier(link.startColumn), SQL.identifier(link.endColumn))
        var parameters: [AttributeValue] = [.text(JSON.serialize(.array(keys.map { .string($0) })))]
        // Each pick reads whole rows (no join back to the table by fid, which PostgreSQL plans
        // as a walk over the whole table when it guesses a HISTORY window large).
        let row = (["fid", k, s, e] + columns.map(SQL.identifier) + textColumns.map(SQL.identifier)).map { "r." + $0 }.joined(separator: ", ")
        let observation = "vltava_utc(r.\(s)) IS NOT NULL AND vltava_utc(r.\(e)) IS NOT NULL"
        func newest(_ condition: String) -> String {
            "(SELECT \(row) FROM \(t) AS r WHERE r.\(k) = key.value AND \(observation)\(condition) ORDER BY vltava_utc(r.\(s)) DESC, r.fid DESC LIMIT 1)"
        }
        var picks = [newest("")]
        for column in columns where needs.columns.contains(column) {
            let c = "r." + SQL.identifier(column)
            // A row that survives the rule when the station measures c: non-zero, or a zero in a
            // complete hour (not for the quality column, whose 0 is "incomplete").
            let survives = column == qualityColumn ? " AND \(c) <> 0"
                : " AND \(c) IS NOT NULL" + (qualityColumn.map { " AND (\(c) <> 0 OR r.\(SQL.identifier($0)) <> 0)" } ?? "")
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
        // (OFFSET 0 keeps the window a subquery run per station on the (key, end) index:
        // pulled up, PostgreSQL merged it with the whole table.)
        // A row picked twice comes once, and in fid order, as the engine reads a table.
        let sql = "WITH keys AS (SELECT DISTINCT value FROM json_array_elements_text($1::json)) "
            + "SELECT DISTINCT ON (o.fid) o.* FROM (\(selected)) AS o ORDER BY o.fid"
        return (sql, parameters)
    }
}
