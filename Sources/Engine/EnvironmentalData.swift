// OGC API – EDR's questions, asked of a point layer with a time series (the air-quality
// stations): which stations (nearest to positions, within a radius, inside an area, one by its
// key, or all), and which of their observations (a time range, some value columns). The answer
// is the stations with those observations, the missing-versus-zero rule of TimeSeries.swift
// applied, written as CoverageJSON or GeoJSON by OutputEnvironmentalData.swift.
//
// A position query answers the station nearest to each position, not a value interpolated at
// it: stations are sparse, and an app asking "what is the air here" is shown the station it
// is reading and where it stands (the answer's domain carries the station's own position).

import Geometry
import Store
import Support

/// Which stations an environmental-data request is about.
public enum StationSelection: Sendable {
    /// The station nearest to each position (each station once, in the positions' order).
    case nearest([Point])
    /// Every station within that many metres of the point, nearest first.
    case within(metres: Double, of: Point)
    /// Every station inside a polygon or multipolygon (lon/lat), in layer order.
    case inside(Geometry)
    /// One station, by the key that links it to its observations (a station code).
    case station(String)
    /// Every station, in layer order.
    case all
}

public struct EnvironmentalRequest: Sendable {
    public var selection: StationSelection
    /// Only observations whose interval ends within this range (the end is the time the answer
    /// gives an observation: an hourly mean is reported at its hour's end); nil: all of them.
    public var time: TimeRange?
    /// The value columns to answer, in any case; nil: every value column of the series.
    public var parameters: [String]?

    public init(selection: StationSelection, time: TimeRange? = nil, parameters: [String]? = nil) {
        self.selection = selection
        self.time = time
        self.parameters = parameters
    }
}

/// The stations of an answer with their observations.
public struct EnvironmentalData: Sendable {
    public struct Station: Sendable {
        /// The station's feature in its layer.
        public let index: Int
        public let key: String
        public let position: Point
        /// Oldest first; `values` holds the answer's `parameters` only, in their order.
        public let observations: [TimeSeries.Observation]
    }

    public let stations: Stations
    /// The value columns answered, in the series' column order.
    public let parameters: [String]
    public let places: [Station]
}

extension Snapshot {
    /// The layer as a layer of stations: its points and the time series linked to them.
    public func stations(_ layer: Layer) throws(EngineError) -> Stations {
        guard let series = timeSeriesByLayer[layer.name] else {
            let timed = timeSeriesByLayer.keys.sorted()
            throw .invalidArgument(parameter: "collection", message: "layer '\(layer.name)' has no time series"
                + (timed.isEmpty ? " (import observations with --time-series-of)" : " (layers with one: \(timed.joined(separator: ", ")))"))
        }
        guard layer.family == .points else {
            throw .unsupportedGeometry(layer: layer.name, operation: "an environmental data query", needs: "points", has: layer.family.rawValue)
        }
        try requireRows(layer, "an environmental data query")
        return Stations(layer: layer, series: series)
    }

    /// The stations `request` selects, with their observations in its time range, of its
    /// value columns. An unknown column or station key is an error naming the known ones.
    public func environmentalData(_ stations: Stations, _ request: EnvironmentalRequest,
                                  deadline: Deadline = .none) throws(EngineError) -> EnvironmentalData {
        let series = stations.series
        let layer = stations.layer
        let parameters = try Snapshot.columns(request.parameters, of: series)
        let indices = try stationIndices(stations, request.selection)
        try deadline.check()
        let keyed = indices.compactMap { index in stations.key(index).map { (index: index, key: $0) } }
        // The quality column decides which zeros are missing (TimeSeries.swift), so it is read
        // with the columns asked for.
        var needs = SeriesNeeds(columns: parameters, window: request.time ?? TimeRange(start: nil, end: nil))
        if let quality = series.qualityColumn { needs.add(column: quality) }
        let observed = try self.series(series, keys: keyed.map(\.key), needs: needs, deadline: deadline)
        let columnIndices = parameters.compactMap { series.columns.firstIndex(of: $0) }
        var places: [EnvironmentalData.Station] = []
        for (index, key) in keyed {
            guard case .point(let position)? = layer.geometries[index] else { continue }
            let observations = observed.observations(of: key).filter { request.time?.meets(from: $0.end, to: $0.end) ?? true }.map { o in
                TimeSeries.Observation(start: o.start, end: o.end, values: columnIndices.map { o.values[$0] }, texts: o.texts)
            }
            places.append(.init(index: index, key: key, position: position, observations: observations))
        }
        return EnvironmentalData(stations: stations, parameters: parameters, places: places)
    }

    /// The value columns asked for (case-insensitive), in the series' order; all when nil.
    static func columns(_ asked: [String]?, of series: TimeSeries) throws(EngineError) -> [String] {
        guard let asked else { return series.columns }
        var wanted = Set<String>()
        for name in asked {
            guard let column = series.columns.first(where: { $0.lowercased() == name.lowercased() }) else {
                var message = "unknown parameter \(Quote.input(name))"
                if let suggestion = Suggestion.closest(to: name, in: series.columns) { message += " — did you mean '\(suggestion)'?" }
                throw .invalidArgument(parameter: "parameter-name", message: message + " (parameters: \(series.columns.joined(separator: ", ")))")
            }
            wanted.insert(column)
        }
        return series.columns.filter(wanted.contains)
    }

    private func stationIndices(_ stations: Stations, _ selection: StationSelection) throws(EngineError) -> [Int] {
        let layer = stations.layer
        switch selection {
        case .nearest(let points):
            var seen = Set<Int>()
            var found: [Int] = []
            for point in points {
                for match in try nearest(layer, to: point, k: 1) where seen.insert(match.index).inserted { found.append(match.index) }
            }
            return found
        case .within(let metres, let point):
            return try within(layer, metres: metres, of: point).map(\.index)
        case .inside(let area):
            guard area.isPolygonal else {
                throw .invalidArgument(parameter: "coords", message: "an area is a POLYGON or MULTIPOLYGON, not a \(area.typeName)")
            }
            let box = area.bbox
            return try intersecting(layer, box: box).map(\.index).filter { index in
                guard case .point(let p)? = layer.geometries[index] else { return false }
                return area.contains(lon: p.lon, lat: p.lat)
            }
        case .station(let key):
            guard let index = layer.properties.indices.first(where: { stations.key($0) == key }) else {
                let known = layer.properties.indices.compactMap { stations.key($0) }
                var message = "layer '\(layer.name)' has no station \(Quote.input(key))"
                if let suggestion = Suggestion.closest(to: key, in: known) { message += " — did you mean '\(suggestion)'?" }
                throw .unknownStation(message)
            }
            return [index]
        case .all:
            return layer.properties.indices.filter { stations.key($0) != nil }
        }
    }
}
