// Fences and live layers as clients declare them: parsed from JSON, kept in the store (so they
// survive restarts and `kill -9`), resolved against the snapshot into the hub's areas (a layer's
// features, a walking reach), and, for threshold fences, evaluated when a write appends
// observations. The hub (Sources/Live) does the per-update work.

import Foundation
import Geometry
import Live
import Store
import Support

public typealias LiveHub = Live.LiveHub
public typealias LiveLayerSettings = Live.LiveLayerSettings
public typealias HistoryPolicy = Live.HistoryPolicy
public typealias PositionUpdate = Live.PositionUpdate
public typealias LiveObject = Live.LiveObject
public typealias LiveError = Live.LiveError
public typealias FenceEvent = Live.FenceEvent
public typealias FenceEventKind = Live.FenceEventKind
public typealias FenceFeature = Live.FenceFeature
public typealias FenceRules = Live.FenceRules
public typealias FenceWatch = Live.FenceWatch
public typealias LiveDefinition = Store.LiveDefinition

/// A fence as declared: what it watches and when it fires.
public struct FenceDefinition: Sendable {
    public enum Area: Sendable {
        /// Within `radius` metres of a point.
        case circle(Point, radius: Double)
        /// Inside a polygon (or within `within` metres of any geometry).
        case shape(Geometry, within: Double)
        /// Each feature of a store layer its own area (those of `fids`, and whose properties
        /// equal `match`), within `within` metres of it.
        case layer(String, fids: [Int64]?, match: [(String, JSONValue)], within: Double)
        /// What a walk on foot reaches from a point (the isochrone of `/isochrone`).
        case reach(from: Point, limit: IsochroneRequest.Limit)
        /// Within `radius` metres of another moving object (roaming).
        case near(layer: String, object: String, radius: Double)
    }

    /// A time-series fence: the value of `column` at the station nearest to `place` that
    /// measures it (the air report's rule), checked when observations are appended.
    public struct Threshold: Sendable {
        public var place: Point
        public var column: String
        /// Fires `above` when the value becomes at least this (and `below` when it falls back).
        public var atLeast: Double?
        /// Fires `rise` when the value is more than this above the lowest of the `withinSeconds`
        /// before it.
        public var riseBy: Double?
        public var withinSeconds: Double
    }

    public enum Rule: Sendable {
        case moving(watch: FenceWatch, area: Area, rules: FenceRules)
        case threshold(Threshold, detect: Set<String>)
    }

    public let name: String
    public let rule: Rule
    /// The definition as the store keeps it and lists return it.
    public let json: JSONValue

    public static let maxNameBytes = 128
}

// MARK: - Parsing

extension FenceDefinition {
    /// Parses a fence's JSON. Errors name the member at fault.
    public static func parse(name: String, _ value: JSONValue) throws(EngineError) -> FenceDefinition {
        try checkName(name, of: "fence")
        guard case .object(let object) = value else { throw invalid("the fence must be a JSON object") }
        let known: Set<String> = ["watch", "area", "detect", "dwell_s", "hysteresis_m", "threshold"]
        if let unknown = object.keys.first(where: { !known.contains($0) }) {
            throw invalid("unknown member \(Quote.input(unknown)); a fence has \(known.sorted().joined(separator: ", "))")
        }
        if let threshold = object["threshold"] {
            guard object["watch"] == nil, object["area"] == nil else { throw invalid("a threshold fence has no watch or area") }
            return FenceDefinition(name: name, rule: try parseThreshold(threshold, detect: object["detect"]), json: value)
        }
        guard case .object(let watch)? = object["watch"] else { throw invalid("watch: expected an object such as {\"layer\": \"visitors\"}") }
        guard case .object(let area)? = object["area"] else { throw invalid("area: expected an object such as {\"point\": [14.41, 50.08], \"radius_m\": 50}") }
        var rules = FenceRules()
        if let detect = object["detect"] {
            guard case .array(let kinds) = detect, !kinds.isEmpty else { throw invalid("detect: expected a list such as [\"enter\", \"exit\"]") }
            rules.detect = []
            for kind in kinds {
                guard let text = kind.string, let parsed = FenceEventKind(rawValue: text) else {
                    throw invalid("detect: \(Quote.input(JSON.serialize(kind))) is not one of enter, exit, inside, outside, cross")
                }
                rules.detect.insert(parsed)
            }
        }
        rules.dwellSeconds = try number(object["dwell_s"], "dwell_s", default: 0, range: 0...86_400)
        rules.hysteresisMetres = try number(object["hysteresis_m"], "hysteresis_m", default: 0, range: 0...100_000)
        let parsedArea = try parseArea(area)
        if case .near = parsedArea, rules.detect.contains(.cross) { throw invalid("detect: a fence near a moving object has no cross") }
        return FenceDefinition(name: name, rule: .moving(watch: try parseWatch(watch), area: parsedArea, rules: rules), json: value)
    }

    static func checkName(_ name: String, of what: String) throws(EngineError) {
        guard !name.isEmpty, name.utf8.count <= maxNameBytes,
              name.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) || "_-.".unicodeScalars.contains($0) }) else {
            throw .write(code: "invalid_name", category: .invalid,
                         message: "\(what) name \(Quote.input(name)): 1 to \(maxNameBytes) bytes of letters, digits, '_', '-' and '.'")
        }
    }

    private static func parseWatch(_ watch: JSONObject) throws(EngineError) -> FenceWatch {
        guard let layer = watch["layer"]?.string, !layer.isEmpty else { throw invalid("watch.layer: expected the name of a live layer") }
        var result = FenceWatch(layer: layer)
        if let object = watch["object"] {
            guard let id = object.string, !id.isEmpty else { throw invalid("watch.object: expected an object id (a string)") }
            result.object = id
        }
        if let match = watch["match"] {
            guard case .object(let pairs) = match else { throw invalid("watch.match: expected an object of field values") }
            for (key, value) in pairs { result.match[key] = value }
        }
        if let unknown = watch.keys.first(where: { !["layer", "object", "match"].contains($0) }) {
            throw invalid("watch: unknown member \(Quote.input(unknown)); watch has layer, object, match")
        }
        return result
    }

    private static func parseArea(_ area: JSONObject) throws(EngineError) -> Area {
        let within = try number(area["within_m"], "area.within_m", default: 0, range: 0...100_000)
        if let point = area["point"] {
            let centre = try position(point, "area.point")
            let radius = try number(area["radius_m"], "area.radius_m", default: nil, range: 0...1_000_000)
            return .circle(centre, radius: radius)
        }
        if let geometry = area["geometry"] {
            let shape: Geometry
            do {
                shape = try GeoJSON.geometry(from: geometry)
            } catch {
                throw invalid("area.geometry: \(error)")
            }
            let polygonal = switch shape { case .polygon, .multiPolygon: true; default: false }
            guard polygonal || within > 0 else {
                throw invalid("area.geometry: a point or line needs within_m (how near counts as inside)")
            }
            try checkPositions(shape, "area.geometry")
            return .shape(shape, within: within)
        }
        if let layer = area["layer"] {
            guard let name = layer.string, !name.isEmpty else { throw invalid("area.layer: expected a layer's name") }
            var fids: [Int64]?
            if let list = area["fids"] {
                guard case .array(let items) = list, !items.isEmpty else { throw invalid("area.fids: expected a list of feature ids") }
                fids = []
                for item in items {
                    guard case .integer(let fid) = item else { throw invalid("area.fids: \(Quote.input(JSON.serialize(item))) is not a feature id") }
                    fids?.append(fid)
                }
            }
            var match: [(String, JSONValue)] = []
            if let given = area["match"] {
                guard case .object(let pairs) = given else { throw invalid("area.match: expected an object of property values") }
                match = Array(pairs)
            }
            return .layer(name, fids: fids, match: match, within: within)
        }
        if case .object(let reach)? = area["reach"] {
            let from = try position(reach["from"], "area.reach.from")
            if reach["minutes"] != nil {
                return .reach(from: from, limit: .seconds(60 * (try number(reach["minutes"], "area.reach.minutes", default: nil, range: 0...240))))
            }
            return .reach(from: from, limit: .metres(try number(reach["metres"], "area.reach.metres", default: nil, range: 0...50_000)))
        }
        if case .object(let near)? = area["near"] {
            guard let layer = near["layer"]?.string, let object = near["object"]?.string, !layer.isEmpty, !object.isEmpty else {
                throw invalid("area.near: expected {\"layer\": …, \"object\": …}, the moving object to stay near")
            }
            return .near(layer: layer, object: object, radius: try number(area["radius_m"], "area.radius_m", default: nil, range: 0...1_000_000))
        }
        throw invalid("area: expected one of point (with radius_m), geometry, layer, reach, near")
    }

    private static func parseThreshold(_ value: JSONValue, detect: JSONValue?) throws(EngineError) -> Rule {
        guard case .object(let t) = value else { throw invalid("threshold: expected an object") }
        guard let column = t["column"]?.string, !column.isEmpty else { throw invalid("threshold.column: expected a column of the time series, such as \"aqi\"") }
        let threshold = Threshold(
            place: try position(t["place"], "threshold.place"), column: column,
            atLeast: t["at_least"] == nil ? nil : try number(t["at_least"], "threshold.at_least", default: nil, range: -1e12...1e12),
            riseBy: t["rise_by"] == nil ? nil : try number(t["rise_by"], "threshold.rise_by", default: nil, range: 0...1e12),
            withinSeconds: try number(t["within_s"], "threshold.within_s", default: 3600, range: 1...(366 * 86_400)))
        guard (threshold.atLeast == nil) != (threshold.riseBy == nil) else { throw invalid("threshold: give at_least or rise_by (one of them)") }
        var kinds: Set<String> = threshold.atLeast == nil ? ["rise"] : ["above"]
        if let detect {
            guard case .array(let items) = detect else { throw invalid("detect: expected a list") }
            let allowed: Set<String> = threshold.atLeast == nil ? ["rise"] : ["above", "below"]
            kinds = []
            for item in items {
                guard let kind = item.string, allowed.contains(kind) else {
                    throw invalid("detect: \(Quote.input(JSON.serialize(item))) is not one of \(allowed.sorted().joined(separator: ", "))")
                }
                kinds.insert(kind)
            }
        }
        return .threshold(threshold, detect: kinds)
    }

    static func position(_ value: JSONValue?, _ member: String) throws(EngineError) -> Point {
        guard case .array(let pair)? = value, pair.count == 2, let lon = pair[0].number, let lat = pair[1].number else {
            throw invalid("\(member): expected [lon, lat]")
        }
        do {
            return try Point.checked(lon: lon, lat: lat)
        } catch {
            throw invalid("\(member): \(error)")
        }
    }

    private static func checkPositions(_ geometry: Geometry, _ member: String) throws(EngineError) {
        let box = geometry.bbox
        guard box.isFinite, box.minLat >= -90, box.maxLat <= 90, box.minLon >= -180, box.maxLon <= 180 else {
            throw invalid("\(member): coordinates must be lon/lat within ±180/±90")
        }
    }

    private static func number(_ value: JSONValue?, _ member: String, default fallback: Double?, range: ClosedRange<Double>) throws(EngineError) -> Double {
        guard let value else {
            if let fallback { return fallback }
            throw invalid("\(member): missing")
        }
        guard let number = value.number, number.isFinite, range.contains(number) else {
            throw invalid("\(member): expected a number from \(range.lowerBound.formatted()) to \(range.upperBound.formatted())")
        }
        return number
    }

    static func invalid(_ message: String) -> EngineError {
        .write(code: "invalid_fence", category: .invalid, message: message)
    }
}

// MARK: - Live layers' settings as JSON

extension LiveLayerSettings {
    /// `{"history": "none" | {"last": N} | {"seconds": S}, "ttl_s": T}`.
    public static func parse(_ value: JSONValue) throws(EngineError) -> LiveLayerSettings {
        func invalid(_ message: String) -> EngineError { .write(code: "invalid_live_layer", category: .invalid, message: message) }
        guard case .object(let object) = value else { throw invalid("a live layer's settings are a JSON object") }
        if let unknown = object.keys.first(where: { !["history", "ttl_s", "durable"].contains($0) }) {
            throw invalid("unknown member \(Quote.input(unknown)); a live layer has history, ttl_s, durable")
        }
        var settings = LiveLayerSettings()
        switch object["history"] {
        case nil, .string("none")?: settings.history = .none
        case .object(let history)? where history.count == 1:
            if let last = history["last"] {
                guard case .integer(let n) = last, n >= 1, n <= 10_000 else { throw invalid("history.last: expected 1 to 10000 positions") }
                settings.history = .last(Int(n))
            } else if let seconds = history["seconds"]?.number, seconds.isFinite, seconds > 0, seconds <= 7 * 86_400 {
                settings.history = .window(seconds: seconds)
            } else {
                throw invalid("history: expected {\"last\": N} (1 to 10000) or {\"seconds\": S} (up to 7 days)")
            }
        default:
            throw invalid("history: expected \"none\", {\"last\": N} or {\"seconds\": S}")
        }
        if let ttl = object["ttl_s"] {
            guard let seconds = ttl.number, seconds.isFinite, seconds > 0, seconds <= 366 * 86_400 else {
                throw invalid("ttl_s: expected seconds from 0 to a year")
            }
            settings.ttlSeconds = seconds
        }
        switch object["durable"] {
        case nil: break
        case .bool(let durable)?: settings.durable = durable
        default: throw invalid("durable: expected true or false")
        }
        return settings
    }

    var json: JSONValue {
        var object = JSONObject()
        switch history {
        case .none: object["history"] = .string("none")
        case .last(let n): object["history"] = .object(JSONObject([("last", .integer(Int64(n)))]))
        case .window(let seconds): object["history"] = .object(JSONObject([("seconds", .double(seconds))]))
        }
        if let ttlSeconds { object["ttl_s"] = .double(ttlSeconds) }
        if durable { object["durable"] = .bool(true) }
        return .object(object)
    }
}
