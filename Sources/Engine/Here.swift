// The two answers apps ask for on their home screen, composed from the feature operations:
// `here` (what contains me, am I inside the mapped area, which station is nearest and what does
// it measure) and `air` (for each pollutant, the nearest station that measures it, with its
// latest value). Which layer holds the stations and which area is "the map" are the snapshot's
// decisions (`Snapshot.stations`, `Snapshot.defaultArea`), made once at load.

import Geometry
import Store
import Support

/// A station's newest values, each with the end of its hour (the missing-versus-zero rule of
/// `TimeSeries` applied).
public struct StationReading: Sendable {
    /// The stations' layer, and the station's feature in it.
    public let layer: Layer
    public let match: Match
    public let code: String?
    /// Per measured column, its newest value, in the series' column order.
    public let latest: [(column: String, value: Double, end: UTCTime)]
    /// The end of the station's newest observation.
    public let observedUntil: UTCTime?
}

public struct Here: Sendable {
    public let point: Point
    /// The mapped-area check (nil when the store has no layer to check against).
    public let area: AreaCheck?
    /// For every polygon layer, the features that contain the point, smallest first.
    public let containing: [(layer: Layer, matches: [Match])]
    /// The nearest station with its latest values (nil without stations).
    public let nearestStation: StationReading?
}

/// For each pollutant, the nearest station that measures it.
public struct AirReport: Sendable {
    public struct Reading: Sendable {
        /// The pollutant (or the index column).
        public let column: String
        public let station: Match
        public let code: String?
        public let value: Double
        public let end: UTCTime
        /// The text columns of that hour (`aqidescription`), for the index.
        public let texts: [(column: String, value: String?)]
    }

    public let point: Point
    public let stations: Stations
    /// The district containing the point, when a district layer was given and contains it.
    public let district: (layer: Layer, index: Int)?
    /// The quality index of the nearest station that reports one.
    public let index: Reading?
    public let pollutants: [Reading]
    /// The newest hour among the readings.
    public var observedUntil: UTCTime? { ([index].compactMap { $0 } + pollutants).map(\.end).max() }
}

extension Snapshot {
    /// What an app shows first: the area check against `area` (nil: `defaultArea`), every polygon
    /// layer's features at the point, and the nearest station with its latest values.
    public func here(at point: Point, area: Layer? = nil) throws(EngineError) -> Here {
        try Check.position(point)
        let check = try (area ?? defaultArea).map { layer throws(EngineError) in try areaCheck(layer, at: point) }
        var containing: [(Layer, [Match])] = []
        for layer in layers where layer.family == .polygons || layer.family == .mixed {
            // A layer kept in the database: the polygons around the point, fetched for this answer.
            let rows = try rows(of: layer, for: .containing(point))
            containing.append((rows, try self.containing(rows, at: point)))
        }
        var station: StationReading?
        if let stations, let match = try nearest(stations.layer, to: point, k: 1).first {
            station = try readings(stations, [match]).first
        }
        return Here(point: point, area: check, containing: containing, nearestStation: station)
    }

    /// The latest values of the stations `matches` found (on a PostGIS store, read in one
    /// statement for all of them).
    public func readings(_ stations: Stations, _ matches: [Match]) throws(EngineError) -> [StationReading] {
        let series = try self.series(stations.series, keys: matches.compactMap { stations.key($0.index) },
                                     needs: SeriesNeeds(columns: stations.series.columns))
        return matches.map { match in
            guard let code = stations.key(match.index) else {
                return StationReading(layer: stations.layer, match: match, code: nil, latest: [], observedUntil: nil)
            }
            let latest = series.latest(of: code)
            let values = series.columns.compactMap { column in latest.values[column].map { (column, $0.value, $0.end) } }
            return StationReading(layer: stations.layer, match: match, code: code, latest: values, observedUntil: latest.lastEnd)
        }
    }

    /// The air where the point is: for the index and each pollutant, the nearest station that
    /// measures it (a station reporting only zeros does not) with its newest value, and the
    /// district of `districts` containing the point.
    public func air(at point: Point, districts: Layer? = nil) throws(EngineError) -> AirReport {
        try Check.position(point)
        guard let stations else { throw .noTimeSeries }
        // Every station: which columns each measures decides the nearest one for each column.
        let series = try self.series(stations.series, keys: stations.layer.indices.compactMap(stations.key),
                                     needs: SeriesNeeds(columns: stations.series.columns))
        func nearestMeasuring(_ column: String) throws(EngineError) -> Match? {
            try nearest(stations.layer, to: point, k: 1, filter: { i in stations.key(i).map { series.measures($0, column) } ?? false }).first
        }
        var index: AirReport.Reading?
        if let quality = series.qualityColumn, let column = series.columns.firstIndex(of: quality),
           let match = try nearestMeasuring(quality), let code = stations.key(match.index),
           let hour = series.observations(of: code).last(where: { $0.values[column] != nil }), let value = hour.values[column] {
            index = AirReport.Reading(column: quality, station: match, code: code, value: value, end: hour.end,
                                      texts: Array(zip(series.textColumns, hour.texts)))
        }
        var pollutants: [AirReport.Reading] = []
        for column in series.columns where column != series.qualityColumn {
            guard let match = try nearestMeasuring(column), let code = stations.key(match.index),
                  let latest = series.latest(of: code).values[column] else { continue }
            pollutants.append(AirReport.Reading(column: column, station: match, code: code, value: latest.value, end: latest.end, texts: []))
        }
        var district: (Layer, Int)?
        if let districts, districts.family == .polygons, case let rows = try rows(of: districts, for: .containing(point)),
           let first = try containing(rows, at: point).first {
            district = (rows, first.index)
        }
        return AirReport(point: point, stations: stations, district: district, index: index, pollutants: pollutants)
    }
}
