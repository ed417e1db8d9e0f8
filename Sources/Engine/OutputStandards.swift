// The answers of OSRM's route, table and nearest services, on the same output path as the
// server's own. (OGC API – Features' documents are the server's: Server/OGCOutput.swift.) They
// stay beside the routing services because their waypoints are the Routing module's, which only
// the engine imports. Numbers follow docs/ARCHITECTURE.md: metres to the millimetre, seconds to
// a tenth.

import Foundation
import Geometry
import Support

/// How OSRM answers a route's geometries (`geometries`) and its overview line (`overview`).
public enum RouteGeometryFormat: String, Sendable, CaseIterable {
    case polyline, polyline6, geojson
}

public enum RouteOverview: String, Sendable, CaseIterable {
    case full, simplified
    case none = "false"
}

/// What an OSRM route answer includes.
public struct OSRMRouteOptions: Sendable {
    public var steps = false
    public var geometries = RouteGeometryFormat.polyline
    public var overview = RouteOverview.simplified
    /// Per-segment annotations of each leg: any of distance, duration, weight, speed, nodes,
    /// datasources.
    public var annotations: [String] = []
    public var hints = true

    public init() {}
}

extension Output {
    /// A route in OSRM's shape: one route of one leg per pair of consecutive points, with
    /// weight (seconds: the weight is the duration, `weight_name` says so) and the waypoints.
    /// `waypoints` false leaves them out (OSRM's `skip_waypoints`).
    public static func osrmRoute(_ w: inout JSONWriter, _ answer: LegsAnswer, _ options: OSRMRouteOptions, waypoints: Bool = true) {
        w.beginObject()
        w.key("code"); w.string("Ok")
        w.key("routes")
        w.beginArray()
        osrmRouteObject(&w, answer, options)
        w.endArray()
        if waypoints {
            w.key("waypoints")
            w.beginArray()
            for (waypoint, name) in zip(answer.waypoints, answer.waypointNames) { osrmWaypoint(&w, waypoint, name: name, hint: options.hints) }
            w.endArray()
        }
        osrmTimedPaths(&w, answer)
        w.endObject()
    }

    /// With a departure (Vltava's own keys beside OSRM's): when, and the paths each leg kept
    /// off because they were closed when the walk would have reached them.
    static func osrmTimedPaths(_ w: inout JSONWriter, _ answer: LegsAnswer) {
        guard let first = answer.legs.first?.answer, first.departure != nil else { return }
        var all = first
        all.closedPaths = answer.legs.flatMap(\.answer.closedPaths)
        timedPaths(&w, all)
    }

    /// OSRM's Route object: the overview line, the legs, weight, duration and distance.
    static func osrmRouteObject(_ w: inout JSONWriter, _ answer: LegsAnswer, _ options: OSRMRouteOptions) {
        w.beginObject()
        if options.overview != .none {
            let line = answer.geometry
            w.key("geometry")
            osrmGeometry(&w, options.overview == .simplified ? Simplify.forOverview(line) : line, options.geometries)
        }
        w.key("legs")
        w.beginArray()
        for leg in answer.legs { osrmLeg(&w, leg, options) }
        w.endArray()
        w.key("weight_name"); w.string("duration")
        w.key("weight"); w.seconds(answer.seconds)
        w.key("duration"); w.seconds(answer.seconds)
        w.key("distance"); w.metres(answer.metres)
        w.endObject()
    }

    /// A trip in OSRM's shape: one trip (a Route object through the points in the best order),
    /// and the waypoints in the request's order, each with its place in the trip
    /// (`waypoint_index`) and `trips_index` 0.
    public static func osrmTrip(_ w: inout JSONWriter, _ answer: TripAnswer, _ options: OSRMRouteOptions) {
        w.beginObject()
        w.key("code"); w.string("Ok")
        w.key("trips")
        w.beginArray()
        osrmRouteObject(&w, answer.route, options)
        w.endArray()
        w.key("waypoints")
        w.beginArray()
        var place = [Int](repeating: 0, count: answer.order.count)
        for (position, point) in answer.order.enumerated() { place[point] = position }
        for point in 0..<answer.order.count {
            let position = place[point]
            let waypoint = answer.route.waypoints[position]
            osrmWaypoint(&w, waypoint, name: answer.route.waypointNames[position], hint: options.hints,
                         extra: [("waypoint_index", position), ("trips_index", 0)])
        }
        w.endArray()
        osrmTimedPaths(&w, answer.route)
        if answer.route.legs.first?.answer.departure != nil {
            w.key("closed_stops")
            closedPaths(&w, answer.closedStops)
        }
        w.endObject()
    }

    /// A match in OSRM's shape: per point of the trace a tracepoint (null when it was left
    /// out) naming its matching and its place there; per matching a Route object with its
    /// `confidence`, one leg per pair of consecutive matched points.
    public static func osrmMatch(_ w: inout JSONWriter, _ answer: MatchAnswer, _ options: OSRMRouteOptions) {
        let metresPerSecond = answer.speedKmh / 3.6
        w.beginObject()
        w.key("code"); w.string("Ok")
        w.key("tracepoints")
        w.beginArray()
        for tracepoint in answer.result.tracepoints {
            guard let tracepoint else { w.null(); continue }
            let matching = answer.result.matchings[tracepoint.matching]
            osrmWaypoint(&w, matching.waypoints[tracepoint.index], name: "", hint: options.hints,
                         extra: [("matchings_index", tracepoint.matching), ("waypoint_index", tracepoint.index),
                                 ("alternatives_count", tracepoint.alternatives)])
        }
        w.endArray()
        w.key("matchings")
        w.beginArray()
        for matching in answer.matchings {
            let seconds = matching.metres / metresPerSecond
            w.beginObject()
            w.key("confidence"); w.number((matching.confidence * 1e6).rounded() / 1e6)
            if options.overview != .none {
                w.key("geometry")
                osrmGeometry(&w, options.overview == .simplified ? Simplify.forOverview(matching.geometry) : matching.geometry, options.geometries)
            }
            w.key("legs")
            w.beginArray()
            for metres in matching.legMetres {
                w.beginObject()
                w.key("steps"); w.beginArray(); w.endArray()
                w.key("summary"); w.string("")
                w.key("weight"); w.seconds(metres / metresPerSecond)
                w.key("duration"); w.seconds(metres / metresPerSecond)
                w.key("distance"); w.metres(metres)
                w.endObject()
            }
            w.endArray()
            w.key("weight_name"); w.string("duration")
            w.key("weight"); w.seconds(seconds)
            w.key("duration"); w.seconds(seconds)
            w.key("distance"); w.metres(matching.metres)
            w.endObject()
        }
        w.endArray()
        w.endObject()
    }

    /// An isochrone in GraphHopper's shape: `polygons`, one GeoJSON Feature per bucket
    /// (smallest first, `properties.bucket` from 0, with its seconds and metres), and `info`.
    public static func graphHopperIsochrone(_ w: inout JSONWriter, _ answer: IsochroneAnswer, tookMilliseconds: Int) {
        w.beginObject()
        w.key("polygons")
        w.beginArray()
        for (bucket, band) in answer.bands.enumerated() {
            w.beginObject()
            w.key("type"); w.string("Feature")
            w.key("properties")
            w.beginObject()
            w.key("bucket"); w.integer(Int64(bucket))
            w.key("time"); w.seconds(band.seconds)
            w.key("distance"); w.metres(band.metres)
            w.endObject()
            w.key("geometry"); w.geometry(band.area)
            w.endObject()
        }
        w.endArray()
        w.key("info")
        w.beginObject()
        w.key("copyrights"); w.beginArray(); w.string("Vltava"); w.string("OpenStreetMap contributors"); w.endArray()
        w.key("took"); w.integer(Int64(tookMilliseconds))
        w.key("network"); w.string(answer.network)
        w.key("profile"); w.string(answer.profile.rawValue)
        w.key("reached_nodes"); w.integer(Int64(answer.reachedNodes))
        w.endObject()
        w.endObject()
    }

    static func osrmLeg(_ w: inout JSONWriter, _ leg: Leg, _ options: OSRMRouteOptions) {
        let route = leg.answer.route
        let metresPerSecond = leg.answer.speedKmh / 3.6
        w.beginObject()
        w.key("steps")
        w.beginArray()
        if options.steps { for step in leg.steps { osrmStep(&w, step, options.geometries) } }
        w.endArray()
        w.key("summary"); w.string(options.steps ? leg.summary : "")
        w.key("weight"); w.seconds(route.seconds)
        w.key("duration"); w.seconds(route.seconds)
        w.key("distance"); w.metres(route.metres)
        if !options.annotations.isEmpty {
            w.key("annotation")
            w.beginObject()
            for name in options.annotations {
                w.key(name)
                w.beginArray()
                switch name {
                case "distance": for m in leg.segmentMetres { w.metres(m) }
                case "duration", "weight": for m in leg.segmentMetres { w.seconds(m / metresPerSecond) }
                case "speed": for _ in leg.segmentMetres { w.number((metresPerSecond * 10).rounded() / 10) }
                case "nodes": for id in route.nodeIDs { w.integer(id) }
                default: for _ in leg.segmentMetres { w.integer(0) }  // datasources: all from the store
                }
                w.endArray()
            }
            w.endObject()
        }
        w.endObject()
    }

    static func osrmStep(_ w: inout JSONWriter, _ step: Step, _ format: RouteGeometryFormat) {
        w.beginObject()
        w.key("geometry"); osrmGeometry(&w, step.geometry, format)
        w.key("maneuver")
        w.beginObject()
        w.key("location"); lonLat(&w, step.location)
        w.key("bearing_before"); w.integer(Int64(step.bearingBefore))
        w.key("bearing_after"); w.integer(Int64(step.bearingAfter))
        w.key("type"); w.string(step.maneuver.rawValue)
        if let modifier = step.modifier { w.key("modifier"); w.string(modifier) }
        w.endObject()
        w.key("mode"); w.string("walking")
        w.key("driving_side"); w.string("right")
        w.key("name"); w.string(step.name)
        // The maneuver's intersection: the way in (reversed, as OSRM gives it) and the way out.
        w.key("intersections")
        w.beginArray()
        w.beginObject()
        w.key("location"); lonLat(&w, step.location)
        let into = (step.bearingBefore + 180) % 360
        switch step.maneuver {
        case .depart:
            w.key("bearings"); w.beginArray(); w.integer(Int64(step.bearingAfter)); w.endArray()
            w.key("entry"); w.beginArray(); w.bool(true); w.endArray()
            w.key("out"); w.integer(0)
        case .arrive:
            w.key("bearings"); w.beginArray(); w.integer(Int64(into)); w.endArray()
            w.key("entry"); w.beginArray(); w.bool(true); w.endArray()
            w.key("in"); w.integer(0)
        case .turn, .newName:
            let bearings = [into, step.bearingAfter].sorted()
            w.key("bearings"); w.beginArray(); for b in bearings { w.integer(Int64(b)) }; w.endArray()
            w.key("entry"); w.beginArray(); w.bool(true); w.bool(true); w.endArray()
            w.key("in"); w.integer(bearings[0] == into ? 0 : 1)
            w.key("out"); w.integer(bearings[0] == into ? 1 : 0)
        }
        w.endObject()
        w.endArray()
        w.key("weight"); w.seconds(step.seconds)
        w.key("duration"); w.seconds(step.seconds)
        w.key("distance"); w.metres(step.metres)
        w.endObject()
    }

    /// A distance table in OSRM's shape: `durations` (seconds) and/or `distances` (metres),
    /// row by source, null where no path joins the pair, and the sources and destinations.
    public static func osrmTable(_ w: inout JSONWriter, _ table: TableAnswer, durations: Bool, distances: Bool, hints: Bool, waypoints: Bool = true) {
        func matrix(_ rows: [[Double?]], _ write: (inout JSONWriter, Double) -> Void) {
            w.beginArray()
            for row in rows {
                w.beginArray()
                for cell in row { if let cell { write(&w, cell) } else { w.null() } }
                w.endArray()
            }
            w.endArray()
        }
        w.beginObject()
        w.key("code"); w.string("Ok")
        if durations { w.key("durations"); matrix(table.seconds) { $0.seconds($1) } }
        if distances { w.key("distances"); matrix(table.metres) { $0.metres($1) } }
        guard waypoints else { return w.endObject() }
        w.key("sources")
        w.beginArray()
        for (waypoint, name) in zip(table.sources, table.sourceNames) { osrmWaypoint(&w, waypoint, name: name, hint: hints) }
        w.endArray()
        w.key("destinations")
        w.beginArray()
        for (waypoint, name) in zip(table.destinations, table.destinationNames) { osrmWaypoint(&w, waypoint, name: name, hint: hints) }
        w.endArray()
        w.endObject()
    }

    /// The nearest points of the network in OSRM's shape, each with the OSM ids of its edge.
    public static func osrmNearest(_ w: inout JSONWriter, _ points: [NetworkPoint], hints: Bool) {
        w.beginObject()
        w.key("code"); w.string("Ok")
        w.key("waypoints")
        w.beginArray()
        for point in points {
            osrmWaypoint(&w, point.waypoint, name: point.name, hint: hints, nodes: [point.nodeIDs.0, point.nodeIDs.1])
        }
        w.endArray()
        w.endObject()
    }

    /// OSRM's Waypoint: `hint` (an opaque token naming where the point joined the network),
    /// `distance` (the snap, metres), `name` (of the way there), `location` (the snapped point).
    static func osrmWaypoint(_ w: inout JSONWriter, _ waypoint: Waypoint, name: String, hint: Bool, nodes: [Int64]? = nil, extra: [(String, Int)] = []) {
        w.beginObject()
        for (key, value) in extra {
            w.key(key); w.integer(Int64(value))
        }
        if let nodes {
            w.key("nodes")
            w.beginArray()
            for id in nodes { w.integer(id) }
            w.endArray()
        }
        if hint { w.key("hint"); w.string(osrmHint(waypoint)) }
        w.key("distance"); w.metres(waypoint.snapMetres)
        w.key("name"); w.string(name)
        w.key("location"); lonLat(&w, waypoint.location)
        w.endObject()
    }

    /// The graph's edge and the snapped position, base64url: OSRM clients pass hints back
    /// (`hints=`); this server snaps every coordinate again, so a hint is only ever echoed.
    static func osrmHint(_ waypoint: Waypoint) -> String {
        var bytes: [UInt8] = []
        for value in [UInt64(UInt32(truncatingIfNeeded: waypoint.edgeStart)) << 32 | UInt64(UInt32(truncatingIfNeeded: waypoint.edgeEnd)),
                      waypoint.location.lon.bitPattern, waypoint.location.lat.bitPattern] {
            withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
        }
        return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func osrmGeometry(_ w: inout JSONWriter, _ line: LineString, _ format: RouteGeometryFormat) {
        switch format {
        case .geojson: w.geometry(.lineString(line))
        case .polyline: w.string(Polyline.encode(line.coordinates, precision: 5))
        case .polyline6: w.string(Polyline.encode(line.coordinates, precision: 6))
        }
    }

    static func lonLat(_ w: inout JSONWriter, _ point: Point) {
        w.beginArray(); w.number(point.lon); w.number(point.lat); w.endArray()
    }
}
