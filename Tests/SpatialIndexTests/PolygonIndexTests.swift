import Foundation
import Geometry
@testable import SpatialIndex
import TestSupport
import Testing

/// Point-in-polygon on real layers, cross-checked against brute-force even-odd ray casting over
/// every edge of every polygon and against GEOS.
@Suite(.validatesStores) struct PolygonIndexTests {
    static func load(_ fixture: String) throws -> [Geometry] {
        try GeoJSON.parseDocument([UInt8](Data(contentsOf: Fixtures.url(fixture)))).features.compactMap(\.geometry)
    }

    /// Naive crossing number over every ring of one geometry: an independent reference, for
    /// points off the boundaries (on an edge its rounding may differ from the engine's rule).
    static func bruteForce(_ geometry: Geometry, _ x: Double, _ y: Double) -> Bool {
        var inside = false
        let parts: [Polygon] = switch geometry {
        case .polygon(let p): [p]
        case .multiPolygon(let m): m.polygons
        default: []
        }
        for part in parts {
            for r in 0..<part.ringCount {
                let ring = Array(part.ring(r))
                var j = ring.count / 2 - 1
                for i in 0..<(ring.count / 2) {
                    let xi = ring[2 * i], yi = ring[2 * i + 1], xj = ring[2 * j], yj = ring[2 * j + 1]
                    if (yi > y) != (yj > y), x < (xj - xi) * (y - yi) / (yj - yi) + xi { inside.toggle() }
                    j = i
                }
            }
        }
        return inside
    }

    @Test(arguments: ["prague/districts.wgs84.geojson", "prague/parking-zones.wgs84.geojson"])
    func agreesWithBruteForceOnRandomPoints(fixture: String) throws {
        let geometries = try Self.load(fixture)
        let index = try PolygonIndex(geometries: geometries)
        let extent = geometries.reduce(into: BBox.empty) { $0.extend($1.bbox) }
        var random = SplitMix(state: 42)
        var hits = 0, candidatesSeen = 0
        for _ in 0..<3_000 {
            let x = Double.random(in: extent.minLon...extent.maxLon, using: &random)
            let y = Double.random(in: extent.minLat...extent.maxLat, using: &random)
            var expected: [Int] = []
            for (i, g) in geometries.enumerated() where g.bbox.contains(lon: x, lat: y) && Self.bruteForce(g, x, y) { expected.append(i) }
            var found: [Int] = []
            index.containing(lon: x, lat: y) { found.append($0) }
            #expect(found == expected, "at (\(x), \(y))")
            #expect(index.firstContaining(lon: x, lat: y) == expected.first)
            // EXPLAIN's count: the polygons tested exactly, none in a classified cell.
            let candidates = index.candidateCount(lon: x, lat: y)
            #expect(candidates <= geometries.count)
            candidatesSeen += candidates
            hits += expected.isEmpty ? 0 : 1
        }
        #expect(hits > 100)  // the sample does exercise the inside case (172 for parking, 1,580 for districts)
        #expect(candidatesSeen < 3_000 * geometries.count / 10)  // the grid prunes
        print("\(fixture): \(Double(candidatesSeen) / 3_000) candidate polygons per point of \(geometries.count)")
    }

    /// Most fine cells are classified, so most points need no crossing test: the districts are
    /// 57 large polygons, the parking zones 1,548 small ones with overlaps.
    @Test(arguments: [("prague/districts.wgs84.geojson", 0.95), ("prague/parking-zones.wgs84.geojson", 0.9)])
    func mostCellsAreClassified(fixture: String, atLeast: Double) throws {
        let index = try PolygonIndex(geometries: try Self.load(fixture))
        print("\(fixture): \(index.classifiedShare) of fine cells classified")
        #expect(index.classifiedShare >= atLeast)
    }

    /// The classified cells never change an answer, even at the boundaries: at every vertex and
    /// edge midpoint, and a hair (1e-12 and 1e-9 degrees) to each side of them, the grid gives
    /// exactly the polygons that the engine's one rule (`Geometry.contains`) gives.
    @Test(arguments: ["prague/districts.wgs84.geojson", "prague/parking-zones.wgs84.geojson"])
    func classifiedCellsAgreeAtTheBoundaries(fixture: String) throws {
        let geometries = try Self.load(fixture)
        let index = try PolygonIndex(geometries: geometries)
        var points: [(Double, Double)] = []
        for geometry in geometries {
            geometry.forEachCoordinateArray { c in
                var k = 0
                while k + 3 < c.count {
                    for (x, y) in [(c[k], c[k + 1]), ((c[k] + c[k + 2]) / 2, (c[k + 1] + c[k + 3]) / 2)] {
                        for d in [0, 1e-12, -1e-12, 1e-9, -1e-9] { points.append((x + d, y)); points.append((x, y + d)) }
                    }
                    k += 20  // every tenth vertex: about 80,000 points for the districts
                }
            }
        }
        let boxes = geometries.map(\.bbox)
        var mismatches = 0, hits = 0
        for (x, y) in points {
            let expected = geometries.indices.filter { boxes[$0].contains(lon: x, lat: y) && geometries[$0].contains(lon: x, lat: y) }
            var found: [Int] = []
            index.containing(lon: x, lat: y) { found.append($0) }
            if found != expected || index.firstContaining(lon: x, lat: y) != expected.first { mismatches += 1 }
            hits += expected.isEmpty ? 0 : 1
        }
        #expect(mismatches == 0)
        #expect(points.count > 20_000)
        #expect(hits > points.count / 4)
    }

    /// Old Town Square is in Praha 1, the Zoo in Praha-Troja (checked with a Python ray caster
    /// over the same file); a point west of the city is in none.
    @Test func knownPlacesFallInTheirDistricts() throws {
        let features = try GeoJSON.parseDocument([UInt8](Data(contentsOf: Fixtures.url("prague/districts.wgs84.geojson")))).features
        let index = try PolygonIndex(geometries: features.map { $0.geometry ?? .collection([]) })
        func district(_ lon: Double, _ lat: Double) -> String? {
            index.firstContaining(lon: lon, lat: lat).flatMap { features[$0].properties["NAZEV_MC"]?.stringValue }
        }
        #expect(district(14.4208, 50.0875) == "Praha 1")
        #expect(district(14.4107, 50.1166) == "Praha-Troja")
        #expect(district(14.1000, 50.1000) == nil)  // west of the city
    }

    @Test func holesAndMultiPolygonParts() throws {
        // A 2×2 square with a 1×1 hole, and a second square part to the east.
        let outer: [Double] = [0, 0, 2, 0, 2, 2, 0, 2, 0, 0]
        let hole: [Double] = [0.5, 0.5, 0.5, 1.5, 1.5, 1.5, 1.5, 0.5, 0.5, 0.5]
        let east: [Double] = [3, 0, 4, 0, 4, 1, 3, 1, 3, 0]
        let shape = Geometry.multiPolygon(MultiPolygon(polygons: [Polygon(rings: [outer, hole]), Polygon(rings: [east])]))
        let index = try PolygonIndex(geometries: [shape, .point(Point(lon: 1, lat: 1))])
        #expect(index.contains(0, lon: 0.25, lat: 1))
        #expect(!index.contains(0, lon: 1, lat: 1))  // in the hole
        #expect(index.contains(0, lon: 3.5, lat: 0.5))  // in the second part
        #expect(!index.contains(0, lon: 2.5, lat: 0.5))  // between the parts
        #expect(!index.contains(1, lon: 1, lat: 1))  // a point never contains anything
    }

    /// Three rings or more: the steps between rings must cancel however many there are (they
    /// once formed a triangle between the rings' first vertices, and the index put (3, 3),
    /// inside that triangle, outside the polygon).
    @Test func threeRingsAndThreeParts() throws {
        let outer: [Double] = [0, 0, 10, 0, 10, 10, 0, 10, 0, 0]
        let hole1: [Double] = [8, 2, 9, 2, 9, 3, 8, 3, 8, 2]
        let hole2: [Double] = [2, 8, 3, 8, 3, 9, 2, 9, 2, 8]
        let polygon = Polygon(rings: [outer, hole1, hole2])
        let parts = MultiPolygon(polygons: [Polygon(rings: [[0, 0, 1, 0, 1, 1, 0, 1, 0, 0]]),
                                            Polygon(rings: [[8, 2, 9, 2, 9, 3, 8, 3, 8, 2]]),
                                            Polygon(rings: [[2, 8, 3, 8, 3, 9, 2, 9, 2, 8]])])
        let index = try PolygonIndex(geometries: [.polygon(polygon), .multiPolygon(parts)])
        #expect(index.contains(0, lon: 3, lat: 3))
        #expect(!index.contains(0, lon: 8.5, lat: 2.5))  // in a hole
        #expect(!index.contains(1, lon: 3, lat: 3))  // between the parts
        #expect(index.contains(1, lon: 2.5, lat: 8.5))
        var random = SplitMix(state: 7)
        for _ in 0..<2_000 {
            let x = Double.random(in: -1...11, using: &random), y = Double.random(in: -1...11, using: &random)
            #expect(index.contains(0, lon: x, lat: y) == polygon.contains(lon: x, lat: y), "at (\(x), \(y))")
            #expect(index.contains(1, lon: x, lat: y) == parts.contains(lon: x, lat: y), "at (\(x), \(y))")
        }
    }

    /// Two squares sharing the edge x = 1: a point on that edge is in exactly one of them.
    @Test func sharedEdgeBelongsToExactlyOnePolygon() throws {
        let west = Geometry.polygon(Polygon(rings: [[0, 0, 1, 0, 1, 1, 0, 1, 0, 0]]))
        let east = Geometry.polygon(Polygon(rings: [[1, 0, 2, 0, 2, 1, 1, 1, 1, 0]]))
        let index = try PolygonIndex(geometries: [west, east])
        for y in stride(from: 0.05, to: 1, by: 0.1) {
            var found: [Int] = []
            index.containing(lon: 1, lat: y) { found.append($0) }
            #expect(found == [1], "at y = \(y)")
        }
    }

    /// The shared squares of TestSupport, one of them clockwise, and the slanted shared edge:
    /// the index answers as `Polygon.contains` does, and each point is in exactly one polygon.
    @Test func sharedEdgesAsGeometryDecides() throws {
        typealias S = AdjacentSquares
        for west in [S.west, S.westClockwise] {
            let index = try PolygonIndex(geometries: [.polygon(west), .polygon(S.east)])
            var found: [Int] = []
            index.containing(lon: S.onSharedEdge.lon, lat: S.onSharedEdge.lat) { found.append($0) }
            #expect(found == [1])
            #expect(index.firstContaining(lon: S.onSharedEdge.lon, lat: S.onSharedEdge.lat) == 1)
        }
        let slanted = try PolygonIndex(geometries: [.polygon(S.slantedWest), .polygon(S.slantedEast)])
        var west: Set<Int> = []
        for (i, p) in S.onSlantedEdge.enumerated() {
            var found: [Int] = []
            slanted.containing(lon: p.lon, lat: p.lat) { found.append($0) }
            #expect(found.count == 1, "k = \(i + 1)")
            if found == [0] { west.insert(i + 1) }
        }
        #expect(west == S.slantedWestKs)
    }

    /// On the boundaries of real polygons (every vertex, and the midpoint of every edge), small
    /// ones walked whole and large ones through their bands, the index and `Geometry.contains`
    /// give the same answer: one rule.
    @Test(arguments: ["prague/districts.wgs84.geojson", "prague/parking-zones.wgs84.geojson"])
    func agreesWithGeometryOnBoundaries(fixture: String) throws {
        let geometries = try Self.load(fixture)
        let index = try PolygonIndex(geometries: geometries)
        var checked = 0, inside = 0, mismatches = 0
        for (i, geometry) in geometries.enumerated() {
            geometry.forEachCoordinateArray { c in
                var k = 0
                while k + 3 < c.count {
                    for (x, y) in [(c[k], c[k + 1]), ((c[k] + c[k + 2]) / 2, (c[k + 1] + c[k + 3]) / 2)] {
                        let expected = geometry.contains(lon: x, lat: y)
                        if index.contains(i, lon: x, lat: y) != expected { mismatches += 1 }
                        checked += 1
                        inside += expected ? 1 : 0
                    }
                    k += 2
                }
            }
        }
        #expect(mismatches == 0)
        #expect(checked > 10_000)
        // Boundary points fall both ways.
        #expect(inside > checked / 10 && inside < checked * 9 / 10)
    }

    /// A geometry with every coordinate rounded to 7 decimals, as a parser reads a GeoJSON
    /// file written with 7 (`Double(q) / 1e7` is the Double nearest q × 10^-7).
    static func rounded(_ geometry: Geometry) -> Geometry {
        func round(_ p: Polygon) -> Polygon { Polygon(coordinates: p.coordinates.map { ($0 * 1e7).rounded() / 1e7 }, ringOffsets: p.ringOffsets) }
        switch geometry {
        case .polygon(let p): return .polygon(round(p))
        case .multiPolygon(let m): return .multiPolygon(MultiPolygon(polygons: m.polygons.map(round)))
        default: return geometry
        }
    }

    /// Runs of 7-decimal coordinates are kept as Int32 (8 bytes a vertex, half the Doubles'),
    /// give their geometries back exactly, and answer exactly as the engine's rule does, also
    /// a hair from their vertices and edges; in a layer that mixes them with full-precision
    /// runs (the districts as they are, the zones rounded) too.
    @Test func sevenDecimalRunsAreIntegersAndAnswerTheSame() throws {
        let districts = try Self.load("prague/districts.wgs84.geojson")
        let zones = try Self.load("prague/parking-zones.wgs84.geojson")
        let roundedZones = zones.map(Self.rounded)
        func coordinateBytes(_ index: PolygonIndex) -> Int { index.image.sections["coordinates"]?.reduce(0) { $0 + $1.count } ?? 0 }
        let full = try PolygonIndex(geometries: zones), fixed = try PolygonIndex(geometries: roundedZones)
        // The zones' runs: 13,675 vertices (the rings as stored plus the steps back to each run's first;
        // counted by a Python script over the GeoJSON).
        #expect(coordinateBytes(full) == 16 * 13_675 && coordinateBytes(fixed) == 8 * 13_675)
        // A rounded value is exact; one with more decimals, or -0.0, is not.
        #expect(FixedPoint.exact(14.4208123) == 144_208_123 && FixedPoint.exact(14.42081234) == nil && FixedPoint.exact(-0.0) == nil)

        let geometries = districts + roundedZones
        var builder = PolygonIndex.Builder()
        var readable = 0
        for geometry in geometries {
            if try builder.add(geometry) { readable += 1 }
        }
        let index = builder.build()
        #expect(readable == geometries.count)
        // Every geometry comes back from its run, bit for bit.
        var mismatches = 0
        for (i, geometry) in geometries.enumerated() {
            let parts: [Polygon] = switch geometry {
            case .polygon(let p): [p]
            case .multiPolygon(let m): m.polygons
            default: []
            }
            let back = index.geometry(i, rings: parts.map { p in (0..<p.ringCount).map { p.ringOffsets[$0 + 1] - p.ringOffsets[$0] } },
                                      multi: { if case .multiPolygon = geometry { return true } else { return false } }())
            func bits(_ g: Geometry) -> [UInt64] {
                var out: [UInt64] = []
                g.forEachCoordinateArray { out += $0.map(\.bitPattern) }
                return out
            }
            let same = back.map { $0 == geometry && bits($0) == bits(geometry) } ?? false
            if !same { mismatches += 1 }
        }
        #expect(mismatches == 0)

        let boxes = geometries.map(\.bbox)
        var points: [(Double, Double)] = []
        for geometry in roundedZones.prefix(400) {
            geometry.forEachCoordinateArray { c in
                var k = 0
                while k + 3 < c.count {
                    for (x, y) in [(c[k], c[k + 1]), ((c[k] + c[k + 2]) / 2, (c[k + 1] + c[k + 3]) / 2)] {
                        for d in [0, 1e-12, -1e-12, 1e-9, -1e-9, 5e-8, -5e-8] { points.append((x + d, y)); points.append((x, y + d)) }
                    }
                    k += 2
                }
            }
        }
        var random = SplitMix(state: 7)
        let extent = boxes.reduce(into: BBox.empty) { $0.extend($1) }
        for _ in 0..<5_000 {
            points.append((Double.random(in: extent.minLon...extent.maxLon, using: &random), Double.random(in: extent.minLat...extent.maxLat, using: &random)))
        }
        var wrong = 0, hits = 0
        for (x, y) in points {
            let expected = geometries.indices.filter { boxes[$0].contains(lon: x, lat: y) && geometries[$0].contains(lon: x, lat: y) }
            var found: [Int] = []
            index.containing(lon: x, lat: y) { found.append($0) }
            if found != expected || index.firstContaining(lon: x, lat: y) != expected.first { wrong += 1 }
            hits += expected.contains { $0 >= districts.count } ? 1 : 0
        }
        #expect(wrong == 0)
        #expect(points.count == 89_392 && hits > points.count / 2)  // 59,465 in a zone
    }

    /// The threshold that lets a fixed run compare latitudes as integers: value(q) > y exactly
    /// when q > threshold(y), at and around decoded values and between them.
    @Test func fixedPointThresholdSplitsExactly() {
        var random = SplitMix(state: 3)
        for _ in 0..<20_000 {
            let q = Int32.random(in: -900_000_000...900_000_000, using: &random)
            let v = FixedPoint.value(q)
            for y in [v, v.nextUp, v.nextDown, (v + FixedPoint.value(q + 1)) / 2] {
                let t = FixedPoint.threshold(y)
                #expect(FixedPoint.value(Int32(t)) <= y && FixedPoint.value(Int32(t + 1)) > y)
            }
        }
        #expect(FixedPoint.threshold(50.0875) == 500_875_000 && FixedPoint.threshold(50.0875.nextDown) == 500_874_999)
    }
}
