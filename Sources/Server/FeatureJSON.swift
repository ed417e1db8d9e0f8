// Features of a loaded layer as GeoJSON (RFC 7946). Distances and time-series values travel as
// foreign members of the Feature (`distance_m`, `latest`) so they never collide with a column
// of the same name in `properties`.

import Engine
import Geometry
import Store

/// Which geometries an answer carries. Points are small; a district polygon is ~700 vertices
/// (15 KB of JSON), which a phone asking "which district am I in" does not want by default.
enum GeometryMode {
    /// Points only (the default).
    case auto
    case all
    case none

    init(_ flag: Bool?) {
        switch flag {
        case true?: self = .all
        case false?: self = .none
        case nil: self = .auto
        }
    }

    func includes(_ geometry: Geometry) -> Bool {
        switch self {
        case .all: true
        case .none: false
        case .auto:
            switch geometry {
            case .point, .multiPoint: true
            default: false
            }
        }
    }
}

enum FeatureJSON {
    static func feature(_ layer: Layer, _ index: Int, geometry mode: GeometryMode, extra: [(String, JSONValue)] = []) -> JSONValue {
        var object = JSONObject()
        object["type"] = .string("Feature")
        object["id"] = .integer(layer.fids[index])
        if let geometry = layer.geometries[index], mode.includes(geometry) {
            object["geometry"] = GeoJSON.encode(geometry)
        } else {
            object["geometry"] = .null
        }
        object["properties"] = properties(layer.properties[index])
        for (key, value) in extra { object[key] = value }
        return .object(object)
    }

    static func properties(_ attributes: Attributes) -> JSONValue {
        var properties = JSONObject()
        for (name, value) in attributes { properties[name] = GeoJSON.json(value) }
        return .object(properties)
    }

    /// The latest value of every column a station measures, each with the end of its hour.
    static func latest(_ series: TimeSeries, key: String) -> [(String, JSONValue)] {
        let latest = series.latest(of: key)
        var values = JSONObject()
        // The columns of one station mostly end in the same hour: format each time once.
        var formatted: [Int64: JSONValue] = [:]
        for column in series.columns {
            guard let entry = latest.values[column] else { continue }
            let end = formatted[entry.end.seconds] ?? .string(entry.end.iso)
            formatted[entry.end.seconds] = end
            values[column] = .object(JSONObject([("value", .double(entry.value)), ("end", end)]))
        }
        return [("latest", .object(values)), ("observed_until", latest.lastEnd.map { .string($0.iso) } ?? .null)]
    }

    /// The station key of feature `index`, for a layer with a time series.
    static func seriesKey(_ layer: Layer, _ index: Int, _ series: TimeSeries) -> String? {
        layer.properties[index][series.link.layerKeyColumn]?.stringValue
    }

    static func bounds(_ box: BBox) -> JSONValue {
        box.isEmpty ? .null : .array([.double(box.minLon), .double(box.minLat), .double(box.maxLon), .double(box.maxLat)])
    }

    static func metres(_ value: Double) -> JSONValue {
        .double((value * 1000).rounded() / 1000)
    }
}
