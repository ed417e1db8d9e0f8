import Geometry
import TestSupport
import Testing

/// The boundary rule (see Geometry/PointInPolygon.swift) through every entry point of this
/// module: a point on an edge shared by two polygons is inside exactly one.
@Suite(.validatesStores) struct PointInPolygonTests {
    typealias S = AdjacentSquares

    @Test func aPointOnASharedEdgeIsInExactlyOneSquare() {
        let p = S.onSharedEdge
        // The west edge of a polygon holds its points, the east edge does not.
        #expect(S.east.contains(lon: p.lon, lat: p.lat))
        #expect(!S.west.contains(lon: p.lon, lat: p.lat))
        // Whichever way round a ring runs.
        #expect(!S.westClockwise.contains(lon: p.lon, lat: p.lat))
        // Through Geometry, and as parts of a MultiPolygon or members of a collection.
        #expect(Geometry.polygon(S.east).contains(lon: p.lon, lat: p.lat))
        #expect(!Geometry.polygon(S.west).contains(lon: p.lon, lat: p.lat))
        #expect(Geometry.multiPolygon(MultiPolygon(polygons: [S.east])).contains(lon: p.lon, lat: p.lat))
        #expect(!Geometry.multiPolygon(MultiPolygon(polygons: [S.west])).contains(lon: p.lon, lat: p.lat))
        #expect(Geometry.collection([.polygon(S.west), .polygon(S.east)]).contains(lon: p.lon, lat: p.lat))
        #expect(!Geometry.collection([.polygon(S.west), .point(p)]).contains(lon: p.lon, lat: p.lat))
        // The distance to a polygon is 0 inside it.
        #expect(Geometry.polygon(S.east).distance(toLon: p.lon, lat: p.lat) == 0)
        // Both squares' south-west corners are theirs; the shared north corner is neither's.
        #expect(S.west.contains(lon: 14.0, lat: 50.0))
        #expect(S.east.contains(lon: 14.5, lat: 50.0))
        #expect(!S.west.contains(lon: 14.5, lat: 50.0))
        #expect(!S.west.contains(lon: 14.5, lat: 50.5) && !S.east.contains(lon: 14.5, lat: 50.5))
    }

    @Test func aSlantedSharedEdgeSplitsItsPointsBetweenTheTwo() {
        var west: Set<Int> = [], both = 0, neither = 0
        for (i, p) in S.onSlantedEdge.enumerated() {
            let inWest = S.slantedWest.contains(lon: p.lon, lat: p.lat)
            let inEast = S.slantedEast.contains(lon: p.lon, lat: p.lat)
            if inWest && inEast { both += 1 }
            if !inWest && !inEast { neither += 1 }
            if inWest { west.insert(i + 1) }
        }
        #expect(both == 0)
        #expect(neither == 0)
        #expect(west == S.slantedWestKs)
        // The midpoint, which the earlier test (crossing computed from whichever end came
        // first) put in neither.
        let mid = S.onSlantedEdge[31]
        #expect(S.slantedWest.contains(lon: mid.lon, lat: mid.lat))
    }

    /// The area check's hull of point and line layers: the hull of each square's corners is
    /// that square, counter-clockwise, and takes the point on the shared edge as the square does.
    @Test func convexHullsFollowTheRule() throws {
        let corners = { (p: Polygon) -> [Geometry?] in
            stride(from: 0, to: p.coordinates.count - 2, by: 2).map { .point(Point(lon: p.coordinates[$0], lat: p.coordinates[$0 + 1])) }
        }
        let west = try #require(ConvexHull.of(corners(S.west) + [.point(Point(lon: 14.25, lat: 50.25)), nil]))
        let east = try #require(ConvexHull.of([.lineString(LineString(coordinates: S.east.coordinates))]))
        #expect(west.coordinates == [14.0, 50.0, 14.5, 50.0, 14.5, 50.5, 14.0, 50.5, 14.0, 50.0])
        #expect(east.coordinates == [14.5, 50.0, 15.0, 50.0, 15.0, 50.5, 14.5, 50.5, 14.5, 50.0])
        let p = S.onSharedEdge
        #expect(!west.contains(lon: p.lon, lat: p.lat))
        #expect(east.contains(lon: p.lon, lat: p.lat))
        // Fewer than three points, or all on a line: no hull.
        #expect(ConvexHull.of([.point(Point(lon: 1, lat: 1)), .point(Point(lon: 2, lat: 2))]) == nil)
        #expect(ConvexHull.of([.lineString(LineString(coordinates: [0, 0, 1, 1, 2, 2]))]) == nil)
    }

    @Test func holesAndOpenRings() {
        // A 4 × 4 square with a 2 × 2 hole; the second copy leaves its rings open.
        let closed = Polygon(rings: [[0, 0, 4, 0, 4, 4, 0, 4, 0, 0], [1, 1, 1, 3, 3, 3, 3, 1, 1, 1]])
        let open = Polygon(rings: [[0, 0, 4, 0, 4, 4, 0, 4], [1, 1, 1, 3, 3, 3, 3, 1]])
        for polygon in [closed, open] {
            #expect(polygon.contains(lon: 0.5, lat: 2))
            #expect(!polygon.contains(lon: 2, lat: 2))
            // The hole's west edge is the polygon's east boundary there: outside, like any east edge.
            #expect(!polygon.contains(lon: 1, lat: 2))
            // The hole's east edge is a west boundary of the polygon: inside.
            #expect(polygon.contains(lon: 3, lat: 2))
            #expect(!polygon.contains(lon: 5, lat: 2))
        }
        // Degenerate input contains nothing.
        #expect(!Polygon(rings: [[0, 0, 1, 1]]).contains(lon: 0.5, lat: 0.5))
        #expect(!Polygon(coordinates: [], ringOffsets: []).contains(lon: 0, lat: 0))
    }
}
