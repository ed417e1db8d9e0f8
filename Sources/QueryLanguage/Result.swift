// Answers and how they are written: an aligned table for people, JSON and GeoJSON for programs.
// Field order is the order of the answer's columns, so the JSON is stable.

import Engine
import Foundation
import Geometry
import Routing

/// One statement's answer.
public struct QueryResult: Sendable {
    enum Body: Sendable {
        case rows(Rows)
        case route(Route, speedKmh: Double, profile: WalkingProfile)
        /// EXPLAIN: the plan and what running it took.
        case plan([String])
    }

    struct Rows: Sendable {
        var columns: [String]
        var values: [[JSONValue]]
        var geometries: [Geometry?]
    }

    let body: Body

    static let distanceNote = "distance_m: great-circle metres on a sphere of R = 6,371,008.8 m"

    /// The column names, for a rows answer.
    public var columns: [String] {
        if case .rows(let rows) = body { rows.columns } else { [] }
    }

    /// The number of rows (1 for a route, the plan's lines for EXPLAIN).
    public var count: Int {
        switch body {
        case .rows(let rows): rows.values.count
        case .route: 1
        case .plan(let lines): lines.count
        }
    }

    // MARK: JSON

    public func json() -> JSONValue {
        switch body {
        case .rows(let rows):
            var members: [(String, JSONValue)] = [("count", .integer(Int64(rows.values.count)))]
            if rows.columns.contains("distance_m") {
                members.append(("units", .object(JSONObject([("distance_m", .string("great-circle metres on a sphere of R = 6,371,008.8 m"))]))))
            }
            members.append(("rows", .array(rows.values.map { row in .object(JSONObject(Array(zip(rows.columns, row)))) })))
            return .object(JSONObject(members))
        case .route(let route, _, _):
            return route.osrmJSON()
        case .plan(let lines):
            return .object(JSONObject([("plan", .array(lines.map { .string($0) }))]))
        }
    }

    public func geoJSON() -> JSONValue {
        switch body {
        case .rows(let rows):
            let features: [JSONValue] = rows.values.indices.map { i in
                var id: JSONValue = .null
                var properties: [(String, JSONValue)] = []
                for (column, value) in zip(rows.columns, rows.values[i]) {
                    if column == "fid" { id = value } else { properties.append((column, value)) }
                }
                var members: [(String, JSONValue)] = [("type", .string("Feature"))]
                if id != .null { members.append(("id", id)) }
                members.append(("geometry", rows.geometries[i].map { GeoJSON.encode($0) } ?? .null))
                members.append(("properties", .object(JSONObject(properties))))
                return .object(JSONObject(members))
            }
            return .object(JSONObject([("type", .string("FeatureCollection")), ("features", .array(features))]))
        case .route(let route, _, _):
            let properties: [(String, JSONValue)] = [
                ("distance", .double((route.metres * 1000).rounded() / 1000)),
                ("duration", .double((route.seconds * 10).rounded() / 10)),
                ("distance_units", .string("metres, great-circle on a sphere of R = 6,371,008.8 m")),
                ("nodes", .array(route.nodeIDs.map { .integer($0) })),
            ]
            return .object(JSONObject([
                ("type", .string("Feature")),
                ("geometry", GeoJSON.encode(.lineString(route.geometry))),
                ("properties", .object(JSONObject(properties))),
            ]))
        case .plan:
            return json()
        }
    }

    // MARK: Table

    /// Cells longer than this are cut in the table (JSON keeps them whole).
    static let maxCellWidth = 48

    public func table() -> String {
        switch body {
        case .rows(let rows):
            let cells = rows.values.map { row in zip(rows.columns, row).map { Self.cell($1, column: $0) } }
            var widths = rows.columns.map(\.count)
            for row in cells { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
            func line(_ items: [String]) -> String {
                zip(items, widths).map { $0 + String(repeating: " ", count: $1 - $0.count) }.joined(separator: "  ")
                    .replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
            }
            var out = [line(rows.columns), line(widths.map { String(repeating: "-", count: $0) })]
            out += cells.map(line)
            var footer = rows.values.count == 1 ? "(1 row)" : "(\(rows.values.count) rows)"
            if rows.columns.contains("distance_m") { footer += "  " + Self.distanceNote }
            out.append(footer)
            return out.joined(separator: "\n")
        case .route(let route, let speed, let profile):
            let how = profile == .wheelchair ? "step-free by wheelchair" : "on foot"
            var out = [String(format: "%.1f m, %.1f min %@ at %.1f km/h (%@)", route.metres, route.seconds / 60, how, speed,
                              "great-circle metres, R = 6,371,008.8 m")]
            for (i, w) in route.waypoints.enumerated() {
                out.append(String(format: "%@ (%.6f %.6f), joins the network %.1f m away", i == 0 ? "from" : "to  ", w.location.lon, w.location.lat, w.snapMetres))
            }
            out.append("\(route.nodeIDs.count) nodes, \(route.geometry.pointCount) points in the line")
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
        case .double(let d): text = column == "distance_m" ? String(format: "%.1f m", d) : format(d)
        case .string(let s): text = s
        default: text = JSON.serialize(value)
        }
        let flat = text.replacingOccurrences(of: "\n", with: " ")
        return flat.count > maxCellWidth ? String(flat.prefix(maxCellWidth - 1)) + "…" : flat
    }

    static func format(_ d: Double) -> String {
        if d == d.rounded() && abs(d) < 1e15 { return String(Int64(d)) }
        return String(d)
    }
}
