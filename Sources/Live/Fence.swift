// Fences as the evaluator holds them: what a fence watches, the areas it watches them against
// and the rules of its events, every area already a geometry (the Engine resolves a layer's
// features and a walking reach into areas before they get here: Engine/Fences.swift).

import Geometry
import Support

/// The events a fence can send for a moving object (Tile38's `DETECT`).
public enum FenceEventKind: String, Sendable, CaseIterable, Comparable {
    /// It came inside (after the dwell, if any).
    case enter
    /// It left (farther out than the hysteresis, after the dwell, if any), or it was deleted or
    /// expired while inside.
    case exit
    /// An update while inside (not the one that entered).
    case inside
    /// An update while outside (not the one that left).
    case outside
    /// It moved across the area between two updates, both outside.
    case cross

    public static func < (a: Self, b: Self) -> Bool { a.bit < b.bit }
    var bit: UInt8 {
        switch self {
        case .enter: 1
        case .exit: 2
        case .inside: 4
        case .outside: 8
        case .cross: 16
        }
    }
}

/// The objects a fence watches: a live layer's, one of them, or those whose fields equal the
/// given values.
public struct FenceWatch: Sendable, Equatable {
    public var layer: String
    public var object: String?
    public var match: [String: JSONValue]

    public init(layer: String, object: String? = nil, match: [String: JSONValue] = [:]) {
        self.layer = layer
        self.object = object
        self.match = match
    }

    func watches(_ id: String, fields: JSONObject?) -> Bool {
        if object == nil && match.isEmpty { return true }
        if let object, object != id { return false }
        for (key, value) in match where fields?[key] != value { return false }
        return true
    }
}

/// The feature an area came from, named in its events.
public struct FenceFeature: Sendable, Equatable {
    public var layer: String
    public var fid: Int64
    /// The feature's `name` (or first text property), for people reading the event.
    public var name: String?

    public init(layer: String, fid: Int64, name: String?) {
        self.layer = layer
        self.fid = fid
        self.name = name
    }
}

/// One area of a fence: a point is inside when it is at most `within` metres from the shape
/// (0 inside a polygon; a circle fence is a point shape with its radius here). A class for the
/// reason `Fence` is one.
public final class FenceArea: Sendable {
    public let shape: Geometry
    public let within: Double
    public let feature: FenceFeature?
    /// For a point shape, the cosine of its latitude: every update measuring to it needs it.
    private let cosLatitude: Double

    public init(shape: Geometry, within: Double = 0, feature: FenceFeature? = nil) {
        self.shape = shape
        self.within = within
        self.feature = feature
        cosLatitude = if case .point(let centre) = shape { Geodesy.cosLatitude(centre.lat) } else { 0 }
    }

    /// Great-circle metres from the point to the shape (0 inside a polygon). With `exact`
    /// false, a point outside a polygon is +infinity: enough when only inside-or-not matters
    /// (no margin, no hysteresis to measure), and it spares the walk over every edge.
    /// `cosLatitude` is the point's (`Geodesy.cosLatitude(lat)`), computed once per update.
    func distance(_ lon: Double, _ lat: Double, cosLatitude: Double, exact: Bool = true) -> Double {
        switch shape {
        case .point(let centre):
            return Geodesy.haversine(lon1: lon, lat1: lat, lon2: centre.lon, lat2: centre.lat, cosines: cosLatitude * self.cosLatitude)
        case .polygon, .multiPolygon:
            if shape.contains(lon: lon, lat: lat) { return 0 }
            return exact || within > 0 ? shape.distance(toLon: lon, lat: lat) : .infinity
        default:
            return shape.distance(toLon: lon, lat: lat)
        }
    }

    /// Whether the segment from a to b comes within `within` metres of the shape (the
    /// engine's one distance rule: great-circle arcs, polygons containing by the flat rule, so a
    /// segment across a polygon's edge is 0 from it).
    func meets(from a: Point, to b: Point) -> Bool {
        if case .point(let centre) = shape {
            return Geodesy.pointToSegment(lon: centre.lon, lat: centre.lat, ax: a.lon, ay: a.lat, bx: b.lon, by: b.lat) <= within
        }
        let segment = Geometry.lineString(LineString(coordinates: [a.lon, a.lat, b.lon, b.lat]))
        // Within 0 m is touching (the distance is 0 when they touch; a vertex exactly on the
        // other's arc yet off its flat edge, the one other way to 0, is left out): nothing to
        // measure, where the measure (great-circle metres from every vertex) was a seventh of an update.
        if within == 0 { return Geodesy.touch(segment, shape) }
        return Geodesy.distance(between: segment, shape) <= within
    }
}

/// What a fence's objects are checked against.
public enum FenceTarget: Sendable {
    /// Fixed areas; each runs its own state per object.
    case areas([FenceArea])
    /// A circle of `radius` metres around another moving object, wherever it is (a roaming
    /// fence); an object is never near itself.
    case roaming(layer: String, object: String, radius: Double)
}

/// How a fence reports.
public struct FenceRules: Sendable, Equatable {
    /// One bit per kind: asked on every update, so never a hash of the kind's name.
    private var mask: UInt8 = 0
    public var detect: Set<FenceEventKind> {
        get { Set(FenceEventKind.allCases.filter(detects)) }
        set { mask = newValue.reduce(0) { $0 | $1.bit } }
    }

    public func detects(_ kind: FenceEventKind) -> Bool { mask & kind.bit != 0 }
    /// A change (in or out) counts once it has held for this many seconds of the object's own
    /// update times: a phone at the edge for less does not fire.
    public var dwellSeconds: Double
    /// An object inside leaves only when it is farther than this from the area (entering
    /// needs only to be inside), so jitter across the edge does not flap.
    public var hysteresisMetres: Double

    public init(detect: Set<FenceEventKind> = [.enter, .exit], dwellSeconds: Double = 0, hysteresisMetres: Double = 0) {
        self.dwellSeconds = dwellSeconds
        self.hysteresisMetres = hysteresisMetres
        self.detect = detect
    }
}

/// A fence ready to evaluate (a class: the evaluator reads it for every candidate area, and a
/// reference costs one retain where a struct's copy costs one per member).
public final class Fence: Sendable {
    public let name: String
    public let watch: FenceWatch
    public let target: FenceTarget
    public let rules: FenceRules

    public init(name: String, watch: FenceWatch, target: FenceTarget, rules: FenceRules) {
        self.name = name
        self.watch = watch
        self.target = target
        self.rules = rules
    }
}

/// An event, as every delivery sends it.
public struct FenceEvent: Sendable, Equatable {
    /// Its number in the event log: increasing, and what `Last-Event-ID` resumes after.
    public var id: Int64
    public var fence: String
    public var kind: String
    /// The moving object (nil for a threshold fence's event).
    public var layer: String?
    public var object: String?
    /// The feature whose area fired, for a fence on a layer.
    public var feature: FenceFeature?
    /// The other object, for a roaming fence.
    public var near: String?
    public var position: Point?
    /// When it happened: the update's time (seconds since 1970, UTC).
    public var time: Double
    /// A threshold fence's values, or why an object left (`deleted`, `expired`).
    public var values: JSONObject?

    public init(id: Int64 = 0, fence: String, kind: String, layer: String? = nil, object: String? = nil, feature: FenceFeature? = nil,
                near: String? = nil, position: Point? = nil, time: Double, values: JSONObject? = nil) {
        self.id = id
        self.fence = fence
        self.kind = kind
        self.layer = layer
        self.object = object
        self.feature = feature
        self.near = near
        self.position = position
        self.time = time
        self.values = values
    }
}
