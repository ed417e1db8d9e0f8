// Answers and how they are written: an aligned table for people, JSON and GeoJSON for programs.
// Field order is the order of the answer's columns, so the JSON is stable.

import Engine
import Foundation
import Geometry
import Support

/// One statement's answer.
public struct QueryResult: Sendable {
    enum Body: Sendable {
        case rows(Rows)
        case route(RouteAnswer)
        /// ROUTE … THROUGH … IN BEST ORDER.
        case trip(TripResult)
        /// LOCATE: a position inside a venue.
        case location(Location)
        /// LOCATE TRACK: a position per scan.
        case track(TrackLocation)
        /// EXPLAIN: the plan and what running it took.
        case plan([String])
    }

    struct Rows: Sendable {
        var columns: [String]
        var values: [[JSONValue]]
        var geometries: [Geometry?]
        /// Whether `distance_m` is a walk (WITHIN REACH) rather than a straight line.
        var walked = false
    }

    let body: Body
    /// What the answer should be read with: a point that looks swapped, … (JSON: `warnings`,
    /// present when there is one; the CLI prints each on stderr).
    public internal(set) var warnings: [String] = []

    static let distanceNote = "distance_m: great-circle metres on a sphere of R = 6,371,008.8 m"
    static let walkedNote = "distance_m: metres walked along the paths (great-circle segments, R = 6,371,008.8 m)"

    /// The column names, for a rows answer.
    public var columns: [String] {
        if case .rows(let rows) = body { rows.columns } else { [] }
    }

    /// The number of rows (1 for a route, the plan's lines for EXPLAIN).
    public var count: Int {
        switch body {
        case .rows(let rows): rows.values.count
        case .route, .trip, .location: 1
        case .track(let track): track.positions.count
        case .plan(let lines): lines.count
        }
    }

    // MARK: JSON

    /// The answer as JSON (`geoJSON`: as a GeoJSON FeatureCollection of its rows, or the
    /// route as a Feature), through the engine's one output path.
    public func write(_ w: inout JSONWriter, geoJSON: Bool) {
        // Without a budget nothing is checked, so the one error left is EXPLAIN as GeoJSON,
        // which writes nothing.
        do { try write(&w, geoJSON: geoJSON, budget: nil) } catch {}
    }

    /// The answer as JSON within `budget`'s response size: checked after every row, so writing
    /// stops within one row of the limit (`responseTooLarge`). As GeoJSON, EXPLAIN's plan is
    /// refused (`invalidArgument` of `format`): a plan is no feature.
    public func write(_ w: inout JSONWriter, geoJSON: Bool, budget: RequestBudget?) throws(EngineError) {
        switch body {
        case .rows(let rows):
            if geoJSON {
                w.beginObject()
                w.key("type"); w.string("FeatureCollection")
                w.key("features")
                w.beginArray()
                try Self.writeFeatures(&w, rows, statement: nil, budget)
                w.endArray()
                w.endObject()
            } else {
                try Self.writeRows(&w, rows, warnings: warnings, budget)
            }
        case .route(let answer):
            geoJSON ? Output.routeFeature(&w, answer) : Output.route(&w, answer)
        case .trip(let trip):
            geoJSON ? Self.tripFeature(&w, trip) : Output.osrmTrip(&w, trip.answer, Self.tripOptions)
        case .location(let location):
            geoJSON ? Output.locationFeature(&w, location) : Output.location(&w, location)
        case .track(let track):
            geoJSON ? Output.trackFeature(&w, track) : Output.track(&w, track)
        case .plan(let lines):
            if geoJSON { throw Self.planIsNotGeoJSON }
            w.beginObject()
            w.key("plan")
            w.beginArray()
            for line in lines { w.string(line) }
            w.endArray()
            w.endObject()
        }
        try budget?.check(responseBytes: w.bytes.count)
    }

    /// This answer's features as members of the `features` array of a FeatureCollection that
    /// holds the answers of several statements: each feature's properties end with
    /// `"statement": n` (1-based), so a client (GDAL, QGIS) can tell the statements apart in one
    /// GeoJSON document; a route is one Feature.
    public func writeFeatures(_ w: inout JSONWriter, statement: Int, budget: RequestBudget?) throws(EngineError) {
        switch body {
        case .rows(let rows):
            try Self.writeFeatures(&w, rows, statement: statement, budget)
        case .route(let answer):
            Output.routeFeature(&w, answer, statement: statement)
        case .trip(let trip):
            Self.tripFeature(&w, trip, statement: statement)
        case .location(let location):
            Output.locationFeature(&w, location, statement: statement)
        case .track(let track):
            Output.trackFeature(&w, track, statement: statement)
        case .plan:
            throw Self.planIsNotGeoJSON
        }
        try budget?.check(responseBytes: w.bytes.count)
    }

    /// A trip in JSON: OSRM's trip service's shape, its line as GeoJSON.
    static let tripOptions: OSRMRouteOptions = {
        var options = OSRMRouteOptions()
        options.geometries = .geojson
        options.overview = .full
        options.hints = false
        return options
    }()

    /// A trip as one GeoJSON Feature: its line, with its length, time and the stops in the
    /// order walked.
    static func tripFeature(_ w: inout JSONWriter, _ trip: TripResult, statement: Int? = nil) {
        let route = trip.answer.route
        w.beginObject()
        w.key("type"); w.string("Feature")
        w.key("geometry"); w.geometry(.lineString(route.geometry))
        w.key("properties")
        w.beginObject()
        w.key("distance"); w.metres(route.metres)
        w.key("duration"); w.seconds(route.seconds)
        w.key("distance_units"); w.string(Output.distanceUnits)
        w.key("stops")
        w.beginArray()
        for i in trip.answer.order { w.string(trip.names[i]) }
        w.endArray()
        w.key("exact"); w.bool(trip.answer.exact)
        if route.legs.first?.answer.departure != nil {
            w.key("closed_stops")
            Output.closedPaths(&w, trip.answer.closedStops)
        }
        w.key("network"); w.string(route.network)
        w.key("profile"); w.string(route.profile.rawValue)
        if let statement { w.key("statement"); w.integer(Int64(statement)) }
        w.endObject()
        w.endObject()
    }

    /// A route at a time: when it departs (in Prague's time, where opening hours are read) and
    /// each path it kept off.
    static func timedPaths(_ answer: RouteAnswer) -> [String] {
        guard let departure = answer.departure else { return [] }
        var lines = ["departs \(Self.localTime(departure)) (Europe/Prague)"]
        for path in answer.closedPaths {
            lines.append("kept off \(path.name) (opening_hours \(Quote.input(path.openingHours))): closed when reached at \(Self.localTime(path.reachedAt))"
                         + (path.opensAt.map { ", opens \(Self.localTime($0))" } ?? ""))
        }
        for line in answer.unreadableHours { lines.append("opening_hours not read, taken as always open: \(line)") }
        return lines
    }

    /// "2026-11-28 13:55" in Prague's time.
    static func localTime(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = RouteRequest.openingHoursZone
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.string(from: date)
    }

    static let planIsNotGeoJSON = EngineError.invalidArgument(parameter: "format", message: "EXPLAIN answers a plan, not features: ask for it as JSON (format=json)")

    /// Several answers as one JSON document: one answer as itself; several as an array, or as
    /// GeoJSON one FeatureCollection of every statement's features, each marked with its
    /// statement's number (a JSON array of FeatureCollections is not GeoJSON).
    /// The one error is EXPLAIN asked for as GeoJSON.
    public static func write(_ results: [QueryResult], geoJSON: Bool, pretty: Bool = false) throws(QueryError) -> [UInt8] {
        var w = JSONWriter(pretty: pretty)
        do {
            if results.count == 1 {
                try results[0].write(&w, geoJSON: geoJSON, budget: nil)
            } else if geoJSON {
                beginCollection(&w)
                for (i, result) in results.enumerated() { try result.writeFeatures(&w, statement: i + 1, budget: nil) }
                endCollection(&w)
            } else {
                w.beginArray()
                for result in results { try result.write(&w, geoJSON: false, budget: nil) }
                w.endArray()
            }
        } catch {
            // Answers keep no position; the error points at the start of the text.
            throw Runner.engineError(error, at: SourcePosition(line: 1, column: 1, length: 1))
        }
        return w.bytes
    }

    /// The FeatureCollection around the features of several statements.
    static func beginCollection(_ w: inout JSONWriter) {
        w.beginObject()
        w.key("type"); w.string("FeatureCollection")
        w.key("features")
        w.beginArray()
    }

    static func endCollection(_ w: inout JSONWriter) {
        w.endArray()
        w.endObject()
    }

    /// The JSON answer as a value, for callers that inspect it (tests, the schedule check).
    public func json(geoJSON: Bool = false) -> JSONValue {
        var w = JSONWriter()
        write(&w, geoJSON: geoJSON)
        return (try? JSON.parse(String(decoding: w.bytes, as: UTF8.self))) ?? .null
    }

    public func geoJSON() -> JSONValue { json(geoJSON: true) }

    private static func writeRows(_ w: inout JSONWriter, _ rows: Rows, warnings: [String], _ budget: RequestBudget?) throws(EngineError) {
        w.beginObject()
        w.key("count"); w.integer(Int64(rows.values.count))
        if !warnings.isEmpty {
            w.key("warnings")
            w.beginArray()
            for warning in warnings { w.string(warning) }
            w.endArray()
        }
        if rows.columns.contains("distance_m") {
            w.key("units")
            w.beginObject()
            w.key("distance_m"); w.string(rows.walked ? "metres walked along the paths (great-circle segments, R = 6,371,008.8 m)" : Output.distanceUnits)
            w.endObject()
        }
        w.key("rows")
        w.beginArray()
        for row in rows.values {
            w.beginObject()
            for (column, value) in zip(rows.columns, row) {
                w.key(column)
                w.value(value)
            }
            w.endObject()
            try budget?.check(responseBytes: w.bytes.count)
        }
        w.endArray()
        w.endObject()
    }

    /// Rows as Features (the members of a `features` array): `fid` becomes the id, the other
    /// columns the properties, then the statement's number when there are several.
    private static func writeFeatures(_ w: inout JSONWriter, _ rows: Rows, statement: Int?, _ budget: RequestBudget?) throws(EngineError) {
        for (i, row) in rows.values.enumerated() {
            w.beginObject()
            w.key("type"); w.string("Feature")
            if let column = rows.columns.firstIndex(of: "fid"), row[column] != .null { w.key("id"); w.value(row[column]) }
            w.key("geometry")
            if let geometry = rows.geometries[i] { w.geometry(geometry) } else { w.null() }
            w.key("properties")
            w.beginObject()
            for (column, value) in zip(rows.columns, row) where column != "fid" && !(statement != nil && column == "statement") {
                w.key(column)
                w.value(value)
            }
            if let statement { w.key("statement"); w.integer(Int64(statement)) }
            w.endObject()
            w.endObject()
            try budget?.check(responseBytes: w.bytes.count)
        }
    }

    // MARK: Table

    /// The answer as text for people. Cells are never cut: rows are an aligned table, or, when
    /// `records` is set or the table is wider than `width` columns (a terminal's), one record
    /// per row with a `column  value` line per field and values wrapped at `width` (as psql's
    /// expanded display). Without a width the table stays whole, however wide (for pipes).
    public func table(width: Int? = nil, records: Bool = false) -> String {
        switch body {
        case .rows(let rows):
            let cells = rows.values.map { row in zip(rows.columns, row).map { Self.cell($1, column: $0) } }
            var widths = rows.columns.map(\.count)
            for row in cells { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
            func line(_ items: [String]) -> String {
                zip(items, widths).map { $0 + String(repeating: " ", count: $1 - $0.count) }.joined(separator: "  ")
                    .replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
            }
            let tableWidth = widths.reduce(0, +) + 2 * max(0, widths.count - 1)
            var out: [String]
            if records || width.map({ tableWidth > $0 }) ?? false {
                out = Self.records(columns: rows.columns, cells: cells, width: width)
            } else {
                out = [line(rows.columns), line(widths.map { String(repeating: "-", count: $0) })]
                out += cells.map(line)
            }
            var footer = rows.values.count == 1 ? "(1 row)" : "(\(rows.values.count) rows)"
            if rows.columns.contains("distance_m") { footer += "  " + (rows.walked ? Self.walkedNote : Self.distanceNote) }
            out.append(footer)
            return out.joined(separator: "\n")
        case .route(let answer):
            let (route, speed, profile) = (answer.route, answer.speedKmh, answer.profile)
            let how = profile == .wheelchair ? "step-free by wheelchair" : "on foot"
            var out = [String(format: "%.1f m, %.1f min %@ at %.1f km/h (%@)", route.metres, route.seconds / 60, how, speed,
                              "great-circle metres, R = 6,371,008.8 m")]
            for (i, w) in route.waypoints.enumerated() {
                out.append(String(format: "%@ (%.6f %.6f), joins the network %.1f m away", i == 0 ? "from" : "to  ", w.location.lon, w.location.lat, w.snapMetres))
            }
            out.append("\(route.nodeIDs.count) nodes, \(route.geometry.pointCount) points in the line")
            out += Self.timedPaths(answer)
            return out.joined(separator: "\n")
        case .trip(let trip):
            let (answer, route) = (trip.answer, trip.answer.route)
            let how = route.profile == .wheelchair ? "step-free by wheelchair" : "on foot"
            // A round trip walks one leg more than it has points: the way back.
            let roundTrip = route.legs.count == answer.order.count
            let stops = answer.order.count - (roundTrip ? 1 : 2)
            var out = [String(format: "%.1f m, %.1f min %@ at %.1f km/h through %d stop%@ in the shortest order (%@)", route.metres, route.seconds / 60, how,
                              route.speedKmh, stops, stops == 1 ? "" : "s", "great-circle metres, R = 6,371,008.8 m")]
            out.append(String(format: "from %@, joins the network %.1f m away", trip.names[answer.order[0]], route.waypoints[0].snapMetres))
            for (n, leg) in route.legs.enumerated() {
                let label = n == stops ? (roundTrip ? "back to the start" : "to \(trip.names[answer.order[n + 1]])")
                                       : "\(n + 1). \(trip.names[answer.order[n + 1]])"
                out.append(String(format: "%@: %.1f m, %.1f min", label, leg.answer.route.metres, leg.answer.route.seconds / 60))
            }
            for stop in answer.closedStops {
                out.append("\(stop.name) is closed when the walk arrives at \(Self.localTime(stop.reachedAt))" + (stop.opensAt.map { " (opens \(Self.localTime($0)))" } ?? ""))
            }
            if var first = route.legs.first?.answer {
                first.closedPaths = route.legs.flatMap(\.answer.closedPaths)
                out += Self.timedPaths(first)
            }
            let gap = answer.lowerBoundMetres > 0 ? (route.metres / answer.lowerBoundMetres - 1) * 100 : 0
            out.append(answer.exact ? "the order is the shortest (Held–Karp, exact)"
                                    : String(format: "the order is a heuristic's, at most %.1f%% longer than the shortest", max(0, gap)))
            return out.joined(separator: "\n")
        case .track(let track):
            let venue = track.venue.venue
            var out = ["\(venue.name): \(track.positions.count) scans located together (\(track.options.smooth ? "smoothed" : "forward only"), speed \(track.options.speed), k = \(track.options.k)), \(Output.frameUnits(venue))"]
            for (p, time) in zip(track.positions, track.times) {
                out.append(String(format: "%@floor %d: x %.3f, y %.3f, near point %@, spread %.3f", time.map { String(format: "%.3f s: ", $0) } ?? "",
                                  p.floor, p.x, p.y, venue.points[p.point].label, p.spread) + (p.lonLat.map { String(format: " (lon %.7f, lat %.7f)", $0.lon, $0.lat) } ?? ""))
            }
            if !track.ignored.isEmpty { out.append("not beacons of \(venue.name), left out: \(track.ignored.joined(separator: ", "))") }
            return out.joined(separator: "\n")
        case .location(let location):
            let p = location.position
            let venue = location.venue.venue
            let floorName = venue.floor(p.floor)?.name ?? ""
            var out = [String(format: "%@, floor %d%@: x %.3f, y %.3f (%@), near point %@, spread %.3f",
                              venue.name, p.floor, floorName.isEmpty ? "" : " (\(floorName))", p.x, p.y, Output.frameUnits(venue), location.pointLabel, p.spread)]
            if let lonLat = p.lonLat { out.append(String(format: "lon %.7f, lat %.7f", lonLat.lon, lonLat.lat)) }
            out.append("\(location.method.rawValue), k = \(location.k), \(location.options.fingerprints.rawValue) fingerprints:")
            for n in p.neighbours {
                let point = venue.points[n.point]
                let distance = location.method == .gaussian ? String(format: "score %.3f", n.signalDistance) : String(format: "signal distance %.3f dB", n.signalDistance)
                out.append(String(format: "  %@ (floor %d, x %.3f, y %.3f): %@, weight %.3f", point.label, point.floor, point.x, point.y, distance, n.weight))
            }
            if !location.ignored.isEmpty { out.append("not beacons of \(venue.name), left out: \(location.ignored.joined(separator: ", "))") }
            return out.joined(separator: "\n")
        case .plan(let lines):
            return lines.joined(separator: "\n")
        }
    }

    static func cell(_ value: JSONValue, column: String) -> String {
        let text: String
        switch value {
        case .null: text = ""
        case .bool(let b): text = b ? "true" : "false"
        case .integer(let i): text = String(i)
        case .double(let d): text = column == "distance_m" || column.hasSuffix(".distance_m") ? String(format: "%.1f m", d) : format(d)
        case .string(let s): text = s
        default: text = String(decoding: JSONWriter.encode(value), as: UTF8.self)
        }
        return text.replacingOccurrences(of: "\n", with: " ")
    }

    /// Rows as records: a `-[ row n ]-` rule, as long as the longest line of all the records,
    /// then a line per field with the column's name and the value, wrapped at `width` under the
    /// value's first character.
    static func records(columns: [String], cells: [[String]], width: Int?) -> [String] {
        let labelWidth = columns.map(\.count).max() ?? 0
        // A value keeps at least 20 characters a line, however narrow the terminal.
        let valueWidth = width.map { max(20, $0 - labelWidth - 2) }
        let indent = String(repeating: " ", count: labelWidth + 2)
        let records = cells.map { row in
            zip(columns, row).flatMap { column, cell in
                let wrapped = valueWidth.map { wrap(cell, at: $0) } ?? [cell]
                return wrapped.enumerated().map { i, text in
                    let label = i == 0 ? column + String(repeating: " ", count: labelWidth - column.count + 2) : indent
                    return (label + text).replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
                }
            }
        }
        let ruleWidth = records.joined().map(\.count).max() ?? 0
        return zip(1..., records).flatMap { number, lines in
            let rule = "-[ row \(number) ]"
            return [rule + String(repeating: "-", count: max(3, ruleWidth - rule.count))] + lines
        }
    }

    /// `text` in lines of at most `width` characters, broken after a space or comma when one
    /// is in the line's last third, else mid-word.
    static func wrap(_ text: String, at width: Int) -> [String] {
        var lines: [String] = []
        var rest = Substring(text)
        while rest.count > width {
            let line = rest.prefix(width)
            var cut = line.endIndex
            if let breakAfter = line.lastIndex(where: { $0 == " " || $0 == "," }),
               line.distance(from: line.startIndex, to: breakAfter) >= width * 2 / 3 {
                cut = line.index(after: breakAfter)
            }
            lines.append(String(rest[..<cut]))
            rest = rest[cut...]
        }
        if !rest.isEmpty || lines.isEmpty { lines.append(String(rest)) }
        return lines
    }

    static func format(_ d: Double) -> String {
        if d == d.rounded() && abs(d) < 1e15 { return String(Int64(d)) }
        return String(d)
    }
}
