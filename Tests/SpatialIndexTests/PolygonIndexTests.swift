import Foundation
import Geometry
import SpatialIndex
import TestSupport
import Testing

/// Point-in-polygon on real layers, cross-checked against brute-force even-odd ray casting over
/// every edge of every polygon and against GEOS.
@Suite struct PolygonIndexTests {
    static func load(_ fixture: String) throws -> [Geometry] {
        try GeoJSON.parseDocument([UInt8](Data(contentsOf: Fixtures.url(fixture)))).features.compactMap(\.geometry)
    }

    /// Naive crossing number over every ring of one geometry: the reference.
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
            // EXPLAIN's count: the cell's candidates include every answer and exclude every
            // polygon whose box misses the point.
            let candidates = index.candidateCount(lon: x, lat: y)
            #expect(candidates >= expected.count)
            #expect(candidates <= geometries.count)
            candidatesSeen += candidates
            hits += expected.isEmpty ? 0 : 1
        }
        #expect(hits > 100)  // the sample does exercise the inside case (172 for parking, 1,580 for districts)
        #expect(candidatesSeen < 3_000 * geometries.count / 10)  // the grid prunes
        print("\(fixture): \(Double(candidatesSeen) / 3_000) candidate polygons per point of \(geometries.count)")
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
}
