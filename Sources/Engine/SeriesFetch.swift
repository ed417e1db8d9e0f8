// Time series on a PostGIS store: read per answer, never held in the snapshot.
//
// A snapshot from a GeoPackage holds every observation (TimeSeries.swift). A snapshot from
// PostGIS holds only each series' metadata (table, link, columns): an answer that needs LATEST,
// HISTORY, OBSERVED_AT or whether a station measures a column fetches (`DatabaseStore.seriesRows`;
// the statement is PostGIS/PostGISFetch.swift's), in one statement with bound parameters, the
// rows of its stations that decide those values, and builds the same
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
// - for HISTORY(c, n h): every row whose end is less than n hours before the last one's end;
// - for a window (an environmental-data query): every row whose interval ends within it.
//
// Rows whose start or end the engine cannot read are not observations (the engine skips them):
// `vltava_utc(text)` (created by `push`, PostGIS/PostGISStore.swift) is UTCTime.parse in SQL,
// NULL where UTCTime.parse gives nil. `push` indexes a series table on (key, vltava_utc(start),
// fid), so each "newest row" is a short backward index scan; on (key, vltava_utc(end)) for the
// HISTORY windows; and on (key, fid) WHERE c <> 0 for each value column, so a station that
// never measured c is known at once rather than by reading all its rows.

import Geometry
import Store
import Support

/// What an answer needs of a time series, for the stations in it.
public struct SeriesNeeds: Sendable, Equatable {
    /// Columns whose newest value (LATEST), or whether the station measures them, is needed.
    public var columns: [String] = []
    /// The longest HISTORY window asked for, in hours.
    public var historyHours: Int?
    /// Every observation whose interval ends within this range (either end may be open), as an
    /// environmental-data query asks (EnvironmentalData.swift).
    public var window: TimeRange?

    public init(columns: [String] = [], historyHours: Int? = nil, window: TimeRange? = nil) {
        self.columns = columns
        self.historyHours = historyHours
        self.window = window
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
    public var readsSeriesFromStore: Bool { database != nil }

    /// `series` as an answer about the stations `keys` sees it: the snapshot's own series on a
    /// GeoPackage; on a PostGIS store, the rows `needs` asks for, fetched in one statement.
    public func series(_ series: TimeSeries, keys: [String], needs: SeriesNeeds, deadline: Deadline = .none) throws(EngineError) -> TimeSeries {
        guard let database else { return series }
        let unique = Array(Set(keys)).sorted()
        guard !unique.isEmpty else { return series.with(rows: []) }
        return series.with(rows: try database.seriesRows(series, keys: unique, needs: needs, deadline: deadline))
    }
}
