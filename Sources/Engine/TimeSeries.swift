// Time series attached to a point layer (hourly air-quality observations of stations).
//
// Missing versus zero. In the ČHMÚ data a pollutant that a station does not measure is reported
// as 0 or left empty, and hours with incomplete data carry index (aqi) 0 with zeros in the
// pollutants. The rule applied, per station and per numeric column, over the loaded series:
//   1. An empty cell is missing.
//   2. A station *measures* a column if at least one of its values is non-zero. Where it does
//      not, every value of that column is missing for that station: 0 there means "not measured".
//   3. A zero from a station that measures the column is missing when the hour is flagged
//      incomplete (its quality column, `aqi` when present, is 0), and a real zero otherwise.
//   4. The quality column itself: 0 ("incomplete data") is missing.
// So "stations that measure NO2" are those with at least one non-zero NO2 value, and their
// latest NO2 is the latest hour with a value that survived these rules.

import Geometry
import Store
import Support

public struct TimeSeries: Sendable {
    /// The table and its link to the point layer.
    public let table: String
    public let link: TimeSeriesLink
    /// The numeric value columns, in table order.
    public let columns: [String]
    /// The column whose 0 flags an incomplete hour, if any.
    public let qualityColumn: String?
    /// Text columns carried along (e.g. `aqidescription`).
    public let textColumns: [String]
    /// Per key (station code): its observations, oldest first.
    let series: [String: StationSeries]

    public struct Observation: Sendable, Equatable {
        public var start: UTCTime
        public var end: UTCTime
        /// One entry per `columns`; nil = missing under the rule above.
        public var values: [Double?]
        public var texts: [String?]
    }

    struct StationSeries: Sendable {
        var observations: [Observation]
        /// Per column: does this station measure it (rule 2)?
        var measures: [Bool]
    }

    /// The keys (station codes) with at least one observation.
    public var keys: [String] { series.keys.sorted() }

    public func observations(of key: String) -> [Observation] { series[key]?.observations ?? [] }

    /// Whether the station measures `column` (has at least one non-zero value of it).
    public func measures(_ key: String, _ column: String) -> Bool {
        guard let index = columns.firstIndex(of: column), let station = series[key] else { return false }
        return station.measures[index]
    }

    /// The latest value of each column: for each column the newest hour that has a value.
    public func latest(of key: String) -> (values: [String: (value: Double, end: UTCTime)], lastEnd: UTCTime?) {
        guard let station = series[key] else { return ([:], nil) }
        var result: [String: (Double, UTCTime)] = [:]
        for (index, column) in columns.enumerated() {
            if let observation = station.observations.last(where: { $0.values[index] != nil }), let value = observation.values[index] {
                result[column] = (value, observation.end)
            }
        }
        return (result, station.observations.last?.end)
    }

    /// The observations whose interval ends within `hours` before the station's latest one.
    public func history(of key: String, hours: Int) -> [Observation] {
        guard let station = series[key], let last = station.observations.last else { return [] }
        let from = last.end.seconds - Int64(hours) * 3600
        return station.observations.filter { $0.end.seconds > from }
    }

    /// True when the station's newest interval ended more than `maxAge` seconds before `now`.
    public func isStale(_ key: String, now: UTCTime, maxAge: Int64) -> Bool {
        guard let last = series[key]?.observations.last else { return true }
        return now.seconds - last.end.seconds > maxAge
    }

    /// Builds the series from the table's rows, applying the missing-versus-zero rule.
    init(table: String, link: TimeSeriesLink, info: LayerInfo, rows: [Attributes]) {
        let excluded: Set<String> = [link.keyColumn, link.startColumn, link.endColumn]
        let numeric = info.columns.filter { !excluded.contains($0.name) && ($0.type == .integer || $0.type == .real) }.map(\.name)
        let text = info.columns.filter { !excluded.contains($0.name) && $0.type == .text }.map(\.name)
        self.init(table: table, link: link, numeric: numeric, text: text, rows: rows)
    }

    /// The same series (table, link, columns) built from other rows: on a PostGIS store, the
    /// rows fetched for one answer (SeriesFetch.swift), through the same rule as a whole table.
    func with(rows: [Attributes]) -> TimeSeries {
        TimeSeries(table: table, link: link, numeric: columns, text: textColumns, rows: rows)
    }

    private init(table: String, link: TimeSeriesLink, numeric: [String], text: [String], rows: [Attributes]) {
        self.table = table
        self.link = link
        columns = numeric
        textColumns = text
        qualityColumn = numeric.first { $0.lowercased() == "aqi" }
        let qualityIndex = qualityColumn.flatMap { numeric.firstIndex(of: $0) }

        var raw: [String: [(start: UTCTime, end: UTCTime, values: [Double?], texts: [String?])]] = [:]
        for p in rows {
            guard let key = p[link.keyColumn]?.stringValue,
                  let start = p[link.startColumn]?.stringValue.flatMap(UTCTime.parse),
                  let end = p[link.endColumn]?.stringValue.flatMap(UTCTime.parse) else { continue }
            raw[key, default: []].append((start, end, numeric.map { p[$0]?.doubleValue }, text.map { p[$0]?.stringValue }))
        }
        var series: [String: StationSeries] = [:]
        for (key, var observations) in raw {
            observations.sort { $0.start < $1.start }
            let measures = numeric.indices.map { column in observations.contains { ($0.values[column] ?? 0) != 0 } }
            let cleaned = observations.map { o -> Observation in
                let incomplete = qualityIndex.map { (o.values[$0] ?? 0) == 0 } ?? false
                let values = o.values.indices.map { column -> Double? in
                    guard let value = o.values[column], measures[column] else { return nil }
                    if value == 0 && (incomplete || column == qualityIndex) { return nil }
                    return value
                }
                return Observation(start: o.start, end: o.end, values: values, texts: o.texts)
            }
            series[key] = StationSeries(observations: cleaned, measures: measures)
        }
        self.series = series
    }
}
