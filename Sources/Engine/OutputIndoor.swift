// Indoor answers on the one output path (Output.swift): a located scan, a walking track, the
// units of a venue's frame, and a survey's evaluation.

import Foundation
import Geometry
import Store
import Support

extension Output {
    // MARK: Indoor

    /// Said beside every signal distance.
    /// What a neighbour's `signal_distance` is, for the method and the venue's model.
    public static func signalUnits(_ location: Location) -> String {
        if location.method == .gaussian {
            return "sqrt(2 × (the best log-likelihood − this cell's)): 0 for the likeliest cell"
        }
        let space = location.venue.locator.space
        return "Euclidean distance over the beacons' \(space.representation == .dbm ? "dBm (dB)" : space.representation.rawValue + " values"), a beacon not heard counting as \(String(format: "%g", space.unheard)) dBm"
    }

    /// The answer to a locate: the position on its floor (and on the globe when the floor has
    /// a frame), the reference point nearest to it, the spread of the neighbours as an error
    /// estimate, and the neighbours with their signal distances.
    public static func location(_ w: inout JSONWriter, _ location: Location, live: LivePlacement? = nil) {
        w.beginObject()
        locationMembers(&w, location)
        if let live { liveMember(&w, live) }
        w.endObject()
    }

    /// Where a located phone was placed in a live layer, and the fence events that made.
    static func liveMember(_ w: inout JSONWriter, _ live: LivePlacement) {
        w.key("live")
        w.beginObject()
        w.key("layer"); w.string(live.layer)
        w.key("id"); w.string(live.id)
        w.key("stale"); w.integer(Int64(live.receipt.stale))
        w.key("events")
        w.beginArray()
        for event in live.receipt.events { fenceEvent(&w, event) }
        w.endArray()
        w.endObject()
    }

    /// The location as a GeoJSON Feature: a Point when the floor is on the globe, else no
    /// geometry; the answer's members are its properties (then `statement`, when given: one
    /// statement's feature among several's).
    public static func locationFeature(_ w: inout JSONWriter, _ location: Location, statement: Int? = nil) {
        w.beginObject()
        w.key("type"); w.string("Feature")
        w.key("geometry")
        if let p = location.position.lonLat { w.geometry(.point(p)) } else { w.null() }
        w.key("properties")
        w.beginObject()
        locationMembers(&w, location)
        if let statement { w.key("statement"); w.integer(Int64(statement)) }
        w.endObject()
        w.endObject()
    }

    /// A located track: the venue, the settings, and a position per scan in the order sent.
    public static func track(_ w: inout JSONWriter, _ track: TrackLocation, live: LivePlacement? = nil) {
        w.beginObject()
        trackMembers(&w, track)
        if let live { liveMember(&w, live) }
        w.endObject()
    }

    static func trackMembers(_ w: inout JSONWriter, _ track: TrackLocation) {
        let venue = track.venue.venue
        w.key("venue"); w.string(venue.name)
        w.key("units"); w.string(frameUnits(venue))
        w.key("smooth"); w.bool(track.options.smooth)
        w.key("speed"); w.number(track.options.speed)
        w.key("k"); w.integer(Int64(track.options.k))
        w.key("positions")
        w.beginArray()
        for (position, time) in zip(track.positions, track.times) {
            w.beginObject()
            w.key("time"); if let time { w.number(time) } else { w.null() }
            w.key("floor"); w.integer(Int64(position.floor))
            w.key("floor_confidence"); w.number(Rounding.metres(position.floorConfidence))
            w.key("x"); w.metres(position.x)
            w.key("y"); w.metres(position.y)
            w.key("lon"); if let p = position.lonLat { w.number(p.lon) } else { w.null() }
            w.key("lat"); if let p = position.lonLat { w.number(p.lat) } else { w.null() }
            w.key("point"); w.string(venue.points[position.point].label)
            w.key("spread"); w.metres(position.spread)
            w.endObject()
        }
        w.endArray()
        w.key("ignored_beacons")
        w.beginArray()
        for beacon in track.ignored { w.string(Quote.capped(beacon)) }
        w.endArray()
    }

    /// A located track as GeoJSON: a LineString through the positions when the floor is on the
    /// globe (else no geometry), with the answer's members as properties.
    public static func trackFeature(_ w: inout JSONWriter, _ track: TrackLocation, statement: Int? = nil) {
        let points = track.positions.compactMap(\.lonLat)
        w.beginObject()
        w.key("type"); w.string("Feature")
        w.key("geometry")
        if points.count == track.positions.count && points.count >= 2 {
            w.geometry(.lineString(LineString(coordinates: points.flatMap { [$0.lon, $0.lat] })))
        } else {
            w.null()
        }
        w.key("properties")
        w.beginObject()
        trackMembers(&w, track)
        if let statement { w.key("statement"); w.integer(Int64(statement)) }
        w.endObject()
        w.endObject()
    }

    static func locationMembers(_ w: inout JSONWriter, _ location: Location) {
        let venue = location.venue.venue
        let position = location.position
        w.key("venue"); w.string(venue.name)
        w.key("floor"); w.integer(Int64(position.floor))
        let floorName = venue.floor(position.floor)?.name ?? ""
        w.key("floor_name"); if floorName.isEmpty { w.null() } else { w.string(floorName) }
        w.key("floor_confidence"); w.number(Rounding.metres(position.floorConfidence))
        w.key("x"); w.metres(position.x)
        w.key("y"); w.metres(position.y)
        w.key("lon"); if let p = position.lonLat { w.number(p.lon) } else { w.null() }
        w.key("lat"); if let p = position.lonLat { w.number(p.lat) } else { w.null() }
        w.key("point"); w.string(location.pointLabel)
        w.key("spread"); w.metres(position.spread)
        w.key("units"); w.string(frameUnits(venue))
        w.key("method"); w.string(location.method.rawValue)
        w.key("k"); w.integer(Int64(location.k))
        w.key("fingerprints"); w.string(location.options.fingerprints.rawValue)
        w.key("neighbours")
        w.beginArray()
        for neighbour in position.neighbours {
            let point = venue.points[neighbour.point]
            w.beginObject()
            w.key("point"); w.string(point.label)
            w.key("floor"); w.integer(Int64(point.floor))
            w.key("x"); w.metres(point.x)
            w.key("y"); w.metres(point.y)
            w.key("signal_distance"); w.metres(neighbour.signalDistance)
            w.key("weight"); w.number(Rounding.metres(neighbour.weight))
            w.endObject()
        }
        w.endArray()
        w.key("ignored_beacons")
        w.beginArray()
        for beacon in location.ignored { w.string(Quote.capped(beacon)) }
        w.endArray()
        w.key("signal_units"); w.string(signalUnits(location))
    }

    /// What x, y and the spread are counted in.
    public static func frameUnits(_ venue: Venue) -> String {
        guard let grid = venue.grid else { return "metres in the floor's frame" }
        return "the floor's frame: \(grid.description)"
    }


    /// An evaluation: per setting, the errors' median, p90 and maximum in the frame's units and
    /// in cells, the share of exact cells and the time per locate; `errors` adds every test
    /// scan's error (in cells), for comparing distributions.
    public static func evaluation(_ w: inout JSONWriter, _ evaluation: Evaluation, errors: Bool = false) {
        let venue = evaluation.venue
        let cell = venue.cellSize
        func finite(_ value: Double) { if value.isFinite { w.number(Rounding.metres(value)) } else { w.null() } }
        w.beginObject()
        w.key("venue"); w.string(venue.name)
        w.key("split"); w.string(evaluation.split.description)
        w.key("scans"); w.integer(Int64(venue.scans.count))
        w.key("units"); w.string(frameUnits(venue))
        w.key("cell_size"); w.number(cell)
        w.key("results")
        w.beginArray()
        let best = evaluation.best
        for result in evaluation.results {
            w.beginObject()
            w.key("model"); w.string(result.model.description)
            if let best, best.method == result.method, best.k == result.k, best.fingerprints == result.fingerprints,
               best.model == result.model, result.tracking == nil {
                w.key("best"); w.bool(true)
            }
            w.key("fingerprints"); w.string(result.fingerprints.rawValue)
            w.key("method"); w.string(result.method.rawValue)
            if let tracking = result.tracking { w.key("track"); w.string(tracking) }
            w.key("k"); w.integer(Int64(result.k))
            w.key("trained"); w.integer(Int64(result.trained))
            w.key("tested"); w.integer(Int64(result.tested))
            w.key("median"); finite(result.median)
            w.key("p90"); finite(result.p90)
            w.key("max"); finite(result.maximum)
            w.key("median_cells"); finite(result.median / cell)
            w.key("p90_cells"); finite(result.p90 / cell)
            w.key("max_cells"); finite(result.maximum / cell)
            w.key("exact_share"); finite(result.exactShare)
            w.key("wrong_floor"); w.integer(Int64(result.errors.filter { !$0.isFinite }.count))
            w.key("us_per_locate"); finite(result.microsecondsPerLocate)
            if errors {
                w.key("errors_cells")
                w.beginArray()
                for error in result.errors { finite(error / cell) }
                w.endArray()
            }
            w.endObject()
        }
        w.endArray()
        w.endObject()
    }
}
