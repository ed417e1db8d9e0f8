// GET /v1/air: "what is the air like where I am?" for the air-quality app. For each pollutant,
// the nearest station that measures it (a station that reports only zeros for a pollutant does
// not measure it, see Engine.TimeSeries) with its latest value; the index of the nearest station
// that has one; the district; and how old the data is.

import Engine
import Foundation
import Geometry
import Hummingbird
import Store

extension Endpoints {
    func air(_ request: Request, _ context: APIContext) throws -> Response {
        let parameters = try Parameters(request, allowed: ["lon", "lat"])
        let position = try parameters.position()
        let snapshot = try state.snapshot()
        guard let stationsName = snapshot.timeSeriesByLayer.keys.sorted().first, let series = snapshot.timeSeriesByLayer[stationsName] else {
            throw APIError(.notFound, code: "no_time_series", detail: "the store has no point layer with a time series (import observations with --time-series-of)")
        }
        let stations = try engine { () throws(EngineError) in try snapshot.layer(stationsName) }
        @Sendable func key(_ index: Int) -> String? { FeatureJSON.seriesKey(stations, index, series) }
        func station(_ index: Int, metres: Double?) -> [(String, JSONValue)] {
            [("station", key(index).map { .string($0) } ?? .null),
             ("name", stations.properties[index]["name"].map(GeoJSON.json) ?? .null),
             ("distance_m", FeatureJSON.metres(metres ?? 0))]
        }
        let now = Int64(Date().timeIntervalSince1970)
        var newest: Int64?

        // The index: the newest hour with a quality value at the nearest station that has one.
        var index: JSONValue = .null
        if let quality = series.qualityColumn, let column = series.columns.firstIndex(of: quality) {
            let match = try engine { () throws(EngineError) in
                try snapshot.nearest(stationsName, lon: position.lon, lat: position.lat, k: 1, filter: { i in
                    key(i).map { series.measures($0, quality) } ?? false
                })
            }.first
            if let match, let code = key(match.index),
               let hour = series.observations(of: code).last(where: { $0.values[column] != nil }), let value = hour.values[column] {
                var members = station(match.index, metres: match.metres)
                members.append((quality, .double(value)))
                for (name, text) in zip(series.textColumns, hour.texts) { members.append((name, text.map { .string($0) } ?? .null)) }
                members.append(("end", .string(hour.end.iso)))
                index = .object(JSONObject(members))
                newest = max(newest ?? hour.end.seconds, hour.end.seconds)
            }
        }

        var pollutants: [JSONValue] = []
        for column in series.columns where column != series.qualityColumn {
            let match = try engine { () throws(EngineError) in
                try snapshot.nearest(stationsName, lon: position.lon, lat: position.lat, k: 1, filter: { i in
                    key(i).map { series.measures($0, column) } ?? false
                })
            }.first
            guard let match, let code = key(match.index), let latest = series.latest(of: code).values[column] else { continue }
            newest = max(newest ?? latest.end.seconds, latest.end.seconds)
            pollutants.append(.object(JSONObject([("pollutant", .string(column))] + station(match.index, metres: match.metres) + [
                ("value", .double(latest.value)),
                ("end", .string(latest.end.iso)),
            ])))
        }

        var districts: [JSONValue] = []
        if let layer = try? snapshot.layer(configuration.districtLayer), layer.family == .polygons {
            for match in try engine({ () throws(EngineError) in try snapshot.containing(layer.name, lon: position.lon, lat: position.lat) }) {
                districts.append(FeatureJSON.feature(layer, match.index, geometry: .none))
            }
        }
        return Reply.json(.object(JSONObject([
            ("query", .object(JSONObject([("lon", .double(position.lon)), ("lat", .double(position.lat))]))),
            ("district", districts.first ?? .null),
            ("index", index),
            ("pollutants", .array(pollutants)),
            ("observed_until", newest.map { .string(UTCTime(seconds: $0).iso) } ?? .null),
            ("age_s", newest.map { .integer(now - $0) } ?? .null),
            ("distance_units", .string(Endpoints.distanceUnits)),
        ])), request: request)
    }
}
