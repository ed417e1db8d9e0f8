// CQL2 beyond Basic CQL2, on the demo store through the library (`Query.filterItems`, the code
// path of OGC API – Features' `filter`): the spatial functions against GEOS's own unprepared
// predicates by brute force over every feature, on 10,000 random boxes and on lines and points
// for the other relations; LIKE against a hand-written reference; the temporal functions
// against the same condition worked out from the rows' times by hand.

import Engine
import Foundation
import Geometry
@testable import QueryLanguage
import Support
import TestSupport
import Testing

@Suite struct CQL2FunctionTests {
    /// The fids a filter selects on a layer, in fid order.
    static func selected(_ filter: String, _ encoding: CQL2Encoding = .text, on name: String, _ snapshot: Snapshot) throws -> [Int64] {
        let layer = try snapshot.layer(name)
        var request = ItemsRequest(limit: 10_000)
        try Query.filterItems(&request, on: layer, in: snapshot, equal: [], cql2: (filter, encoding))
        let page = try snapshot.items(layer, request)
        return page.indices.map { page.layer.fids[$0] }
    }

    /// The fids whose geometry stands in `relation` to `shape`, by GEOS on every feature.
    static func bruteForce(_ relation: SpatialRelation, _ shape: Geometry, on layer: Layer, _ context: GEOSContext) throws -> [Int64] {
        var fids: [Int64] = []
        let box = shape.bbox
        for index in layer.indicesInLoadOrder {
            guard let geometry = layer.geometries[index] else { continue }
            let b = geometry.bbox
            // Only `disjoint` holds without the boxes meeting (a shortcut for speed, not a filter
            // of the engine's: it is the definition's consequence).
            let boxesMeet = b.minLon <= box.maxLon && b.maxLon >= box.minLon && b.minLat <= box.maxLat && b.maxLat >= box.minLat
            if !boxesMeet && relation != .disjoint { continue }
            if try context.holds(geometry, relation, shape) { fids.append(layer.fids[index]) }
        }
        return fids
    }

    /// A random box over the layer's extent (and a little beyond), from 20 m to half the
    /// extent a side (log-uniform), so that boxes hold nothing, a part of one feature, or many.
    static func randomBox(over layer: Layer, _ generator: inout SplitMix) -> (Double, Double, Double, Double) {
        let b = layer.bounds
        let (spanLon, spanLat) = (b.maxLon - b.minLon, b.maxLat - b.minLat)
        let lon = Double.random(in: (b.minLon - spanLon / 10)...(b.maxLon + spanLon / 10), using: &generator)
        let lat = Double.random(in: (b.minLat - spanLat / 10)...(b.maxLat + spanLat / 10), using: &generator)
        let (least, most) = (20.0 / 71_000, max(spanLon, spanLat) / 2)
        let width = least * pow(most / least, Double.random(in: 0...1, using: &generator))
        let height = least * pow(most / least, Double.random(in: 0...1, using: &generator)) * 0.64
        return (lon - width / 2, lat - height / 2, lon + width / 2, lat + height / 2)
    }

    @Test func tenThousandBoxesAgreeWithGEOS() throws {
        let snapshot = try QueryStore.get()
        let context = try GEOSContext()
        var generator = SplitMix(state: 35)
        let layers = ["districts", "paths", "pens", "parking"]
        var (hits, empty, compared) = (0, 0, 0)
        for n in 0..<10_000 {
            let name = layers[n % layers.count]
            let layer = try snapshot.layer(name)
            let (w, s, e, north) = Self.randomBox(over: layer, &generator)
            let shape = Geometry.polygon(Polygon(rings: [[w, s, e, s, e, north, w, north, w, s]]))
            // Three spellings of the same box: BBOX(…) and WKT in the text encoding, a bbox in JSON.
            let filter: String, encoding: CQL2Encoding
            switch n % 3 {
            case 0: (filter, encoding) = ("S_INTERSECTS(geom, BBOX(\(w), \(s), \(e), \(north)))", .text)
            case 1: (filter, encoding) = ("s_intersects(POLYGON((\(w) \(s), \(e) \(s), \(e) \(north), \(w) \(north), \(w) \(s))), geom)", .text)
            default: (filter, encoding) = (#"{"op":"s_intersects","args":[{"property":"geom"},{"bbox":[\#(w),\#(s),\#(e),\#(north)]}]}"#, .json)
            }
            let answer = try Self.selected(filter, encoding, on: name, snapshot)
            let expected = try Self.bruteForce(.intersects, shape, on: layer, context)
            #expect(answer == expected, "\(name): \(filter)")
            if answer.isEmpty { empty += 1 } else { hits += 1 }
            compared += expected.count
        }
        // The boxes test both ways: about half meet something (63,616 features in all), half nothing.
        #expect(hits > 4_000 && empty > 1_000 && compared > 50_000, "\(hits) boxes with features, \(empty) without, \(compared) features")
    }

    @Test func everyRelationAgreesWithGEOS() throws {
        let snapshot = try QueryStore.get()
        let context = try GEOSContext()
        var generator = SplitMix(state: 36)
        var held: [SpatialRelation: Int] = [:]
        for relation in SpatialRelation.allCases {
            for n in 0..<120 {
                let name = ["districts", "paths", "pens"][n % 3]
                let layer = try snapshot.layer(name)
                let (w, s, e, north) = Self.randomBox(over: layer, &generator)
                // A box, a line across it, or a point: the relations that need a dimension
                // (crosses, overlaps, touches) each have shapes that can hold them.
                let shape: Geometry
                switch n % 4 {
                case 0, 1: shape = .polygon(Polygon(rings: [[w, s, e, s, e, north, w, north, w, s]]))
                case 2: shape = .lineString(LineString(coordinates: [w, s, e, north]))
                default:
                    // A feature's own geometry, so equals and touches have cases that hold.
                    let indices = Array(layer.indices)
                    shape = layer.geometries[indices[Int.random(in: 0..<indices.count, using: &generator)]] ?? .point(Point(lon: w, lat: s))
                }
                let filter = "S_\(relation.rawValue.uppercased())(geom, \(WKT.encode(shape)))"
                let answer = try Self.selected(filter, on: name, snapshot)
                let expected = try Self.bruteForce(relation, shape, on: layer, context)
                #expect(answer == expected, "\(name): \(filter.prefix(200))")
                held[relation, default: 0] += expected.isEmpty ? 0 : 1
            }
        }
        // Each relation held somewhere, so each comparison could fail.
        #expect(SpatialRelation.allCases.allSatisfy { held[$0, default: 0] > 0 }, "\(held)")
        // The property second turns the relation round: a district contains the point that is within it.
        let within = try Self.selected("S_WITHIN(geom, POLYGON((14.3 50.0, 14.6 50.0, 14.6 50.15, 14.3 50.15, 14.3 50.0)))", on: "pens", snapshot)
        let swapped = try Self.selected("S_CONTAINS(POLYGON((14.3 50.0, 14.6 50.0, 14.6 50.15, 14.3 50.15, 14.3 50.0)), geom)", on: "pens", snapshot)
        // For points, within a rectangle is inside its box (none lies on its edge): the language's INTERSECTING.
        let inBox = try QueryStore.rows("FIND pens INTERSECTING BBOX(14.3 50.0, 14.6 50.15) RETURN fid", snapshot).map { $0["fid"] }
        #expect(within == swapped && within.map { .integer($0) } == inBox && within.count == 77)
        let praha1 = try Self.selected("S_CONTAINS(geom, POINT(14.4208 50.0875))", on: "districts", snapshot)
        #expect(try QueryStore.rows("FIND districts CONTAINING POINT(14.4208 50.0875) RETURN fid", snapshot).map { $0["fid"] } == praha1.map { .integer($0) })
        #expect(praha1.count == 1)
    }

    @Test func likeMatchesAsAHandWrittenReference() throws {
        let snapshot = try QueryStore.get()
        let names = try QueryStore.rows("FIND stations RETURN fid, name", snapshot).compactMap { row -> (Int64, String)? in
            guard case .integer(let fid)? = row["fid"], case .string(let name)? = row["name"] else { return nil }
            return (fid, name)
        }
        #expect(names.count == 17)
        // (pattern, the reference test on the name)
        let cases: [(String, (String) -> Bool)] = [
            ("Praha 4%", { $0.hasPrefix("Praha 4") }),
            ("%(hot spot)", { $0.hasSuffix("(hot spot)") }),
            ("Praha _-%", { n in let a = Array(n); return n.hasPrefix("Praha ") && a.count > 8 && a[7] == "-" }),
            ("%Libuš%", { $0.contains("Libuš") }),
            ("%libuš%", { $0.contains("libuš") }),
            ("Praha 2-Legerova \\(hot spot)", { $0 == "Praha 2-Legerova (hot spot)" }),
            ("%", { _ in true }),
        ]
        for (pattern, reference) in cases {
            let expected = names.filter { reference($0.1) }.map(\.0)
            let quoted = pattern.replacingOccurrences(of: "'", with: "''")
            #expect(try Self.selected("name LIKE '\(quoted)'", on: "stations", snapshot) == expected, "\(pattern)")
            #expect(try Self.selected("name NOT LIKE '\(quoted)'", on: "stations", snapshot) == names.map(\.0).filter { !expected.contains($0) }, "NOT \(pattern)")
            let json = #"{"op":"like","args":[{"property":"name"},"\#(pattern.replacingOccurrences(of: "\\", with: "\\\\"))"]}"#
            #expect(try Self.selected(json, .json, on: "stations", snapshot) == expected, "\(json)")
        }
        #expect(try Self.selected("name LIKE 'Praha 4%'", on: "stations", snapshot).count == 2)
        #expect(LikePattern("a%b%c").matches("aXbYc") && !LikePattern("a%b%c").matches("aXbY") && LikePattern("%%_").matches("x") && !LikePattern("_").matches(""))
    }

    @Test func temporalFunctionsAsTheirEndpoints() throws {
        let snapshot = try QueryStore.get()
        // The observations' hours, by hand from the rows.
        let rows = try QueryStore.rows("FIND observations RETURN fid, interval_start, interval_end LIMIT 10000", snapshot).compactMap { row -> (Int64, Int64, Int64)? in
            guard case .integer(let fid)? = row["fid"], case .string(let a)? = row["interval_start"], case .string(let b)? = row["interval_end"],
                  let start = UTCTime.parse(a), let end = UTCTime.parse(b) else { return nil }
            return (fid, start.seconds, end.seconds)
        }
        #expect(rows.count == 816)
        let t = try #require(UTCTime.parse("2019-04-15T06:00:00Z")).seconds
        let (from, to) = (t - 3 * 3600, t + 3 * 3600)
        let cases: [(String, String, (Int64, Int64) -> Bool)] = [
            ("T_AFTER(interval_start, TIMESTAMP('2019-04-15T06:00:00Z'))", #"{"op":"t_after","args":[{"property":"interval_start"},{"timestamp":"2019-04-15T06:00:00Z"}]}"#, { s, _ in s > t }),
            ("T_BEFORE(interval_end, TIMESTAMP('2019-04-15T06:00:00Z'))", #"{"op":"t_before","args":[{"property":"interval_end"},{"timestamp":"2019-04-15T06:00:00Z"}]}"#, { _, e in e < t }),
            ("T_INTERSECTS(INTERVAL(interval_start, interval_end), TIMESTAMP('2019-04-15T06:00:00Z'))",
             #"{"op":"t_intersects","args":[{"interval":[{"property":"interval_start"},{"property":"interval_end"}]},{"timestamp":"2019-04-15T06:00:00Z"}]}"#, { s, e in s <= t && e >= t }),
            ("T_DURING(INTERVAL(interval_start, interval_end), INTERVAL('2019-04-15T03:00:00Z', '2019-04-15T09:00:00Z'))",
             #"{"op":"t_during","args":[{"interval":[{"property":"interval_start"},{"property":"interval_end"}]},{"interval":["2019-04-15T03:00:00Z","2019-04-15T09:00:00Z"]}]}"#, { s, e in s > from && e < to }),
            ("T_DISJOINT(INTERVAL(interval_start, interval_end), INTERVAL('2019-04-15T03:00:00Z', '..'))",
             #"{"op":"t_disjoint","args":[{"interval":[{"property":"interval_start"},{"property":"interval_end"}]},{"interval":["2019-04-15T03:00:00Z",".."]}]}"#, { _, e in e < from }),
            ("T_MEETS(INTERVAL(interval_start, interval_end), INTERVAL('2019-04-15T06:00:00Z', '..'))",
             #"{"op":"t_meets","args":[{"interval":[{"property":"interval_start"},{"property":"interval_end"}]},{"interval":["2019-04-15T06:00:00Z",".."]}]}"#, { _, e in e == t }),
            ("T_EQUALS(interval_start, TIMESTAMP('2019-04-15T06:00:00Z'))", #"{"op":"t_equals","args":[{"property":"interval_start"},{"timestamp":"2019-04-15T06:00:00Z"}]}"#, { s, _ in s == t }),
            ("interval_start >= TIMESTAMP('2019-04-15T06:00:00Z') AND interval_start < DATE('2019-04-16')",
             #"{"op":"and","args":[{"op":">=","args":[{"property":"interval_start"},{"timestamp":"2019-04-15T06:00:00Z"}]},{"op":"<","args":[{"property":"interval_start"},{"date":"2019-04-16"}]}]}"#,
             { s, _ in s >= t && s < t + 18 * 3600 }),
        ]
        for (text, json, reference) in cases {
            let expected = rows.filter { reference($0.1, $0.2) }.map(\.0)
            #expect(!expected.isEmpty && expected.count < rows.count, "\(text): \(expected.count)")
            #expect(try Self.selected(text, on: "observations", snapshot) == expected, "\(text)")
            #expect(try Self.selected(json, .json, on: "observations", snapshot) == expected, "\(json)")
        }
        // 17 stations, one row an hour each: the hour ending at 06:00 is one row per station that reported it.
        #expect(try Self.selected("T_EQUALS(interval_end, TIMESTAMP('2019-04-15T06:00:00Z'))", on: "observations", snapshot).count == rows.filter { $0.2 == t }.count)
    }

    @Test func whatIsWrongIsNamed() throws {
        let snapshot = try QueryStore.get()
        let cases: [(String, String, String)] = [
            ("stations", "S_INTERSECTS(geometry, POINT(14.4 50.1))", "'geometry' is not the geometry of 'stations': its spatial queryable is 'geom'"),
            ("stations", "S_INTERSECTS(geom, POINT(514.4 50.1))", "longitude and latitude (CRS84)"),
            ("stations", "S_INTERSECTS(geom, BBOX(14.5, 50, 14.4, 50.1))", "west must not exceed its east"),
            ("stations", "S_INTERSECTS(geom, POLYGON((14 50, 15 50)))", "invalid WKT"),
            ("stations", "S_INTERSECTS(geom, name)", "expected a geometry"),
            ("stations", "CASEI(name) = 'x'", "the function 'CASEI' is not supported"),
            ("stations", "name LIKE 'x\\'", "must not end in a lone"),
            ("observations", "T_AFTER(interval_start, interval_end)", "compares a property with constants"),
            ("observations", "T_AFTER(interval_start, TIMESTAMP('yesterday'))", "is not a TIMESTAMP in UTC"),
            ("observations", "interval_start > DATE('2019-4-1')", "is not a DATE"),
            ("districts", "T_AFTER(KOD_MC, TIMESTAMP('2019-04-15T06:00:00Z'))", "holds numbers"),
            ("districts", "KOD_MC LIKE '5%'", "LIKE matches text"),
        ]
        for (layer, filter, words) in cases {
            do {
                _ = try Self.selected(filter, on: layer, snapshot)
                Issue.record("\(filter) was taken")
            } catch let error as FilterError {
                #expect(error.parameter == "filter" && error.message.contains(words), "\(filter): \(error.message)")
            } catch {
                Issue.record("\(filter): \(error)")
            }
        }
        // A table has no geometry to test.
        #expect(throws: (any Error).self) { try Self.selected("S_INTERSECTS(geom, POINT(14.4 50.1))", on: "observations", snapshot) }
    }
}

extension CQL2FunctionTests {
    /// The language's LIKE is the filter's: the same stations, with a bound pattern too.
    @Test func theLanguageTakesLikeToo() throws {
        let snapshot = try QueryStore.get()
        let byFilter = try Self.selected("name LIKE 'Praha 1%' OR name NOT LIKE '%-%'", on: "stations", snapshot)
        let rows = try QueryStore.rows("FIND stations WHERE name LIKE 'Praha 1%' OR name NOT LIKE '%-%' RETURN fid", snapshot)
        #expect(rows.map { $0["fid"] } == byFilter.map { .integer($0) } && byFilter.count == 5)
        let bound = try Query.run("FIND stations WHERE name LIKE $1 RETURN name", ["%(hot spot)"], on: snapshot)
        #expect(bound.first.map { String(decoding: (try? QueryResult.write([$0], geoJSON: false, pretty: false)) ?? [], as: UTF8.self) }?.contains("Praha 2-Legerova (hot spot)") == true)
        #expect(throws: QueryError.self) { try Query.run("FIND stations WHERE fid LIKE 'x%'", on: snapshot) }
    }
}
