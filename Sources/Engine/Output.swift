// The one output path: every answer of the engine as JSON bytes, written straight into one
// buffer by Geometry's `JSONWriter` (geometries from their flat coordinate arrays, no object per
// vertex). The HTTP API, the query language, the CLI and the library all render through here,
// so a value reads the same whichever way it was asked for.
//
// Numbers in answers (docs/ARCHITECTURE.md): coordinates go out as stored; distances in metres
// to the millimetre and durations in seconds to a tenth (`Rounding`). Values the engine derives
// for a feature (`distance_m`, `latest`, `observed_until`) are GeoJSON `properties`, after the
// feature's own columns, so GDAL and QGIS keep them; a column of the same name gives way to the
// derived value.

import Foundation
import Geometry
import Store
import Support

/// Which geometries an answer carries. Points are small; a district polygon is ~700 vertices
/// (15 KB of JSON), which a phone asking "which district am I in" does not want by default.
public enum GeometryMode: Sendable {
    /// Points only (the default of the HTTP API).
    case auto
    case all
    case none

    public init(_ flag: Bool?) {
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

public enum Output {
    /// Said beside every distance, once per answer.
    public static let distanceUnits = "metres, great-circle on a sphere of R = 6,371,008.8 m"

    // MARK: Features

    /// A GeoJSON Feature of `layer`'s feature `index`; `derived` writes the derived members
    /// of `properties` (each a key and its value), which replace columns of the same name;
    /// `members` writes members of the Feature after its properties (OGC API's `links`);
    /// `projected` is the stored geometry in another CRS, written in its place.
    public static func feature(_ w: inout JSONWriter, _ layer: Layer, _ index: Int, geometry mode: GeometryMode,
                               projected: Geometry? = nil, derivedKeys: Set<String> = [], derived: (inout JSONWriter) -> Void = { _ in },
                               members: (inout JSONWriter) -> Void = { _ in }) {
        w.beginObject()
        w.key("type"); w.string("Feature")
        w.key("id"); w.integer(layer.fids[index])
        w.key("geometry")
        if let geometry = layer.geometries[index], mode.includes(geometry) { w.geometry(projected ?? geometry) } else { w.null() }
        w.key("properties")
        // `properties` stays open for the derived members, then closes with the feature.
        properties(&w, layer.properties[index], skipping: derivedKeys)
        derived(&w)
        w.endObject()
        members(&w)
        w.endObject()
    }

    /// The members of a properties object (left open: the caller may add and must close).
    package static func properties(_ w: inout JSONWriter, _ attributes: Attributes, skipping: Set<String>) {
        w.beginObject()
        for (name, value) in attributes where !skipping.contains(name) {
            w.key(name)
            attribute(&w, value)
        }
    }

    public static func attribute(_ w: inout JSONWriter, _ value: AttributeValue) {
        switch value {
        case .null: w.null()
        case .bool(let b): w.bool(b)
        case .integer(let i): w.integer(i)
        case .real(let d): w.number(d)
        case .text(let s): w.string(s)
        case .json: w.value(GeoJSON.json(value))
        }
    }

    /// A feature with its distance (and a station's latest values) in its properties.
    public static func match(_ w: inout JSONWriter, _ layer: Layer, _ match: Match, geometry mode: GeometryMode, reading: StationReading? = nil) {
        var keys: Set<String> = match.metres == nil ? [] : ["distance_m"]
        if reading != nil { keys.formUnion(["latest", "observed_until"]) }
        feature(&w, layer, match.index, geometry: mode, derivedKeys: keys) { w in
            if let metres = match.metres { w.key("distance_m"); w.metres(metres) }
            if let reading { latest(&w, reading) }
        }
    }

    /// `"latest": {"no2": {"value": 12.3, "end": "…"}, …}, "observed_until": "…"`.
    static func latest(_ w: inout JSONWriter, _ reading: StationReading) {
        w.key("latest")
        w.beginObject()
        // The columns of one station mostly end in the same hour: format each time once.
        var formatted: [Int64: String] = [:]
        for (column, value, end) in reading.latest {
            let text = formatted[end.seconds] ?? end.iso
            formatted[end.seconds] = text
            w.key(column)
            w.beginObject()
            w.key("value"); w.number(value)
            w.key("end"); w.string(text)
            w.endObject()
        }
        w.endObject()
        w.key("observed_until")
        if let end = reading.observedUntil { w.string(end.iso) } else { w.null() }
    }

    /// `{"type": "FeatureCollection", "layer": …, "query": {lon, lat}, "features": […]}`, with
    /// the distance units when the features carry distances, and `warnings` when there are any
    /// (`Snapshot.coordinateWarnings`: a point that looks swapped).
    public static func collection(_ w: inout JSONWriter, layer: Layer, query point: Point, distances: Bool, warnings: [String] = [],
                                  features: (inout JSONWriter) -> Void) {
        w.beginObject()
        w.key("type"); w.string("FeatureCollection")
        w.key("layer"); w.string(layer.name)
        query(&w, point)
        if !warnings.isEmpty {
            w.key("warnings")
            w.beginArray()
            for warning in warnings { w.string(warning) }
            w.endArray()
        }
        if distances { w.key("distance_units"); w.string(distanceUnits) }
        w.key("features")
        w.beginArray()
        features(&w)
        w.endArray()
        w.endObject()
    }

    static func query(_ w: inout JSONWriter, _ point: Point) {
        w.key("query")
        w.beginObject()
        w.key("lon"); w.number(point.lon)
        w.key("lat"); w.number(point.lat)
        w.endObject()
    }

    public static func bounds(_ w: inout JSONWriter, _ box: BBox) {
        guard !box.isEmpty else { return w.null() }
        w.beginArray()
        for value in [box.minLon, box.minLat, box.maxLon, box.maxLat] { w.number(value) }
        w.endArray()
    }

    /// A tile's features as a GeoJSON FeatureCollection, each feature's tile layer as
    /// `tile_layer`, a member of the Feature beside `properties` (RFC 7946's foreign members), so
    /// it never collides with a property of the feature's own (OSM's `layer` tag stays as it is).
    public static func tileCollection(_ w: inout JSONWriter, _ features: [TileFeature]) {
        w.beginObject()
        w.key("type"); w.string("FeatureCollection")
        w.key("features")
        w.beginArray()
        for item in features {
            w.beginObject()
            w.key("type"); w.string("Feature")
            switch item.feature.id {
            case .integer(let i)?: w.key("id"); w.integer(i)
            case .string(let s)?: w.key("id"); w.string(s)
            case nil: break
            }
            w.key("geometry")
            if let geometry = item.feature.geometry { w.geometry(geometry) } else { w.null() }
            w.key("properties")
            properties(&w, item.feature.properties, skipping: [])
            w.endObject()
            w.key(Snapshot.tileLayerProperty); w.string(item.layer)
            w.endObject()
        }
        w.endArray()
        w.endObject()
    }

    // MARK: Routes

    /// A route in OSRM's shape: `code`, `routes[0]` (distance, duration, geometry, node ids),
    /// `waypoints`; then the network and the profile it was walked by.
    public static func route(_ w: inout JSONWriter, _ answer: RouteAnswer) {
        let route = answer.route
        w.beginObject()
        w.key("code"); w.string("Ok")
        w.key("routes")
        w.beginArray()
        w.beginObject()
        w.key("distance"); w.metres(route.metres)
        w.key("duration"); w.seconds(route.seconds)
        w.key("geometry"); w.geometry(.lineString(route.geometry))
        w.key("nodes")
        w.beginArray()
        for id in route.nodeIDs { w.integer(id) }
        w.endArray()
        w.endObject()
        w.endArray()
        w.key("waypoints")
        w.beginArray()
        for waypoint in route.waypoints {
            w.beginObject()
            w.key("location")
            w.beginArray(); w.number(waypoint.location.lon); w.number(waypoint.location.lat); w.endArray()
            w.key("distance"); w.metres(waypoint.snapMetres)
            w.key("name"); w.string("")
            w.endObject()
        }
        w.endArray()
        w.key("network"); w.string(answer.network)
        w.key("profile"); w.string(answer.profile.rawValue)
        w.key("distance_units"); w.string(distanceUnits)
        timedPaths(&w, answer)
        w.endObject()
    }

    /// With a departure: when, and the paths kept off because they were closed when the walk
    /// would have reached them (`closed`, each with its hours and when it opens next).
    static func timedPaths(_ w: inout JSONWriter, _ answer: RouteAnswer) {
        guard let departure = answer.departure else { return }
        w.key("departure"); w.string(isoSeconds(departure))
        w.key("closed")
        closedPaths(&w, answer.closedPaths)
        if !answer.unreadableHours.isEmpty {
            w.key("unreadable_opening_hours")
            w.beginArray()
            for line in answer.unreadableHours { w.string(line) }
            w.endArray()
        }
    }

    /// Paths or places closed when the walk reached them: each with its hours and when it opens.
    public static func closedPaths(_ w: inout JSONWriter, _ paths: [ClosedPath]) {
        w.beginArray()
        for path in paths {
            w.beginObject()
            w.key("name"); w.string(path.name)
            w.key("opening_hours"); w.string(path.openingHours)
            w.key("reached_at"); w.string(isoSeconds(path.reachedAt))
            w.key("opens_at"); if let opens = path.opensAt { w.string(isoSeconds(opens)) } else { w.null() }
            w.endObject()
        }
        w.endArray()
    }

    /// An instant as ISO 8601 in UTC, to the second.
    public static func isoSeconds(_ date: Date) -> String {
        Int64(exactly: date.timeIntervalSince1970.rounded(.down)).map { UTCTime(seconds: $0).iso } ?? "\(date)"
    }

    /// The route as one GeoJSON Feature: its line, with distance, duration and nodes (and the
    /// number of its statement, when it is one feature of several statements' answers).
    public static func routeFeature(_ w: inout JSONWriter, _ answer: RouteAnswer, statement: Int? = nil) {
        w.beginObject()
        w.key("type"); w.string("Feature")
        w.key("geometry"); w.geometry(.lineString(answer.route.geometry))
        w.key("properties")
        w.beginObject()
        w.key("distance"); w.metres(answer.route.metres)
        w.key("duration"); w.seconds(answer.route.seconds)
        w.key("distance_units"); w.string(distanceUnits)
        w.key("nodes")
        w.beginArray()
        for id in answer.route.nodeIDs { w.integer(id) }
        w.endArray()
        w.key("network"); w.string(answer.network)
        w.key("profile"); w.string(answer.profile.rawValue)
        timedPaths(&w, answer)
        if let statement { w.key("statement"); w.integer(Int64(statement)) }
        w.endObject()
        w.endObject()
    }

    // MARK: The app answers

    public static func here(_ w: inout JSONWriter, _ here: Here) {
        w.beginObject()
        query(&w, here.point)
        w.key("area")
        if let area = here.area {
            w.beginObject()
            w.key("layer"); w.string(area.layer.name)
            w.key("inside"); w.bool(area.inside)
            w.key("reason"); if let reason = area.reason { w.string(reason) } else { w.null() }
            w.key("metres_outside"); w.metres(area.metresOutside)
            w.key("message"); w.string(area.message)
            w.endObject()
        } else {
            w.null()
        }
        w.key("containing")
        w.beginArray()
        for (layer, matches) in here.containing {
            w.beginObject()
            w.key("layer"); w.string(layer.name)
            w.key("features")
            w.beginArray()
            for found in matches { match(&w, layer, found, geometry: .none) }
            w.endArray()
            w.endObject()
        }
        w.endArray()
        w.key("nearest_station")
        if let station = here.nearestStation {
            let layer = station.layer
            let keys: Set<String> = ["layer", "distance_m", "latest", "observed_until"]
            feature(&w, layer, station.match.index, geometry: .all, derivedKeys: keys) { w in
                w.key("layer"); w.string(layer.name)
                w.key("distance_m"); w.metres(station.match.metres ?? 0)
                latest(&w, station)
            }
        } else {
            w.null()
        }
        w.key("distance_units"); w.string(distanceUnits)
        w.endObject()
    }

    /// The air report; `now` dates its age.
    public static func air(_ w: inout JSONWriter, _ report: AirReport, now: Date = Date()) {
        func station(_ reading: AirReport.Reading) {
            w.key("station"); if let code = reading.code { w.string(code) } else { w.null() }
            w.key("name")
            if let name = report.stations.layer.properties[reading.station.index]["name"] { attribute(&w, name) } else { w.null() }
            w.key("distance_m"); w.metres(reading.station.metres ?? 0)
        }
        w.beginObject()
        query(&w, report.point)
        w.key("district")
        if let (layer, index) = report.district { feature(&w, layer, index, geometry: .none) } else { w.null() }
        w.key("index")
        if let index = report.index {
            w.beginObject()
            station(index)
            w.key(index.column); w.number(index.value)
            for (column, text) in index.texts {
                w.key(column)
                if let text { w.string(text) } else { w.null() }
            }
            w.key("end"); w.string(index.end.iso)
            w.endObject()
        } else {
            w.null()
        }
        w.key("pollutants")
        w.beginArray()
        for reading in report.pollutants {
            w.beginObject()
            w.key("pollutant"); w.string(reading.column)
            station(reading)
            w.key("value"); w.number(reading.value)
            w.key("end"); w.string(reading.end.iso)
            w.endObject()
        }
        w.endArray()
        let newest = report.observedUntil
        w.key("observed_until"); if let newest { w.string(newest.iso) } else { w.null() }
        w.key("age_s"); if let newest { w.integer(Int64(now.timeIntervalSince1970.rounded(.down)) - newest.seconds) } else { w.null() }
        w.key("distance_units"); w.string(distanceUnits)
        w.endObject()
    }

    public static func schedule(_ w: inout JSONWriter, _ check: ScheduleCheck) {
        w.beginObject()
        w.key("feasible"); w.bool(check.feasible)
        w.key("speed_kmh"); w.number(check.speedKmh)
        w.key("network"); w.string(check.network)
        w.key("legs")
        w.beginArray()
        for leg in check.legs {
            w.beginObject()
            w.key("from"); w.string(leg.from)
            w.key("to"); w.string(leg.to)
            w.key("walk_m"); w.metres(leg.walk.route.metres)
            w.key("walk_min"); w.number(Rounding.minutes(fromSeconds: leg.walk.route.seconds))
            w.key("gap_min"); w.number(Rounding.minutes(fromSeconds: leg.gapSeconds))
            w.key("slack_min"); w.number(Rounding.minutes(fromSeconds: leg.slackSeconds))
            w.key("enough_time"); w.bool(leg.enoughTime)
            w.endObject()
        }
        w.endArray()
        w.key("distance_units"); w.string(distanceUnits)
        w.endObject()
    }
}
