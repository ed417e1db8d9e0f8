import Foundation
import Geometry
import SpatialIndex
import Testing

/// Every index builder refuses a NaN or infinite coordinate with an error naming the item,
/// where it used to trap converting the coordinate to a grid cell (issue 19).
@Suite struct NonFiniteInputTests {
    static let square = Polygon(rings: [[14.40, 50.07, 14.44, 50.07, 14.44, 50.10, 14.40, 50.10, 14.40, 50.07]])

    /// Trapped in `UInt32(inf)` (the Hilbert key of a box with an infinite latitude).
    @Test func rTreeRefusesAnInfiniteBox() throws {
        let boxes = [BBox(minLon: 14.38, minLat: 50.08, maxLon: 14.38, maxLat: 50.08),
                     BBox(minLon: 14.42, minLat: .infinity, maxLon: 14.42, maxLat: .infinity),
                     BBox(minLon: 14.50, minLat: 50.03, maxLon: 14.50, maxLat: 50.03)]
        #expect(throws: SpatialIndexError.nonFinite(item: 1)) { try PackedRTree(boxes: boxes) }
        #expect(throws: SpatialIndexError.nonFinite(item: 0)) { try PackedRTree(boxes: [BBox(minLon: .nan, minLat: 1, maxLon: 2, maxLat: 2)]) }
        #expect("\(SpatialIndexError.nonFinite(item: 1))" == "item 1 has a coordinate that is not a finite number")
        // Empty boxes (whose bounds are infinite by construction) are still left out quietly.
        let tree = try PackedRTree(boxes: [boxes[0], .empty, boxes[2]])
        #expect(tree.count == 2)
        #expect(tree.search(BBox(minLon: 14, minLat: 50, maxLon: 15, maxLat: 51)) == [0, 2])
    }

    /// Finite but huge: the centre and the extent's width used to overflow to infinity, and
    /// infinity over infinity is NaN.
    @Test func rTreeTakesHugeFiniteBoxes() throws {
        let huge = Double.greatestFiniteMagnitude
        let boxes = [BBox(minLon: -huge, minLat: -huge, maxLon: -huge, maxLat: -huge),
                     BBox(minLon: 1, minLat: 1, maxLon: 2, maxLat: 2),
                     BBox(minLon: huge, minLat: huge, maxLon: huge, maxLat: huge)]
        let tree = try PackedRTree(boxes: boxes, nodeSize: 2)
        #expect(tree.count == 3)
        #expect(tree.search(BBox(minLon: 0, minLat: 0, maxLon: 3, maxLat: 3)) == [1])
        #expect(tree.search(BBox(minLon: -huge, minLat: -huge, maxLon: huge, maxLat: huge)) == [0, 1, 2])
    }

    /// Trapped in `Int(NaN)` sorting a large polygon's edges into latitude bands.
    @Test func polygonIndexRefusesANaNVertex() throws {
        // 40 edges: more than a small polygon's 32, so its edges are banded.
        var ring: [Double] = []
        for i in 0..<40 {
            let angle = Double(i) / 40 * 2 * .pi
            ring += [14.42 + 0.01 * cos(angle), 50.08 + 0.01 * sin(angle)]
        }
        ring += [ring[0], ring[1]]
        var broken = ring
        broken[2 * 7 + 1] = .nan
        let geometries: [Geometry] = [.polygon(Self.square), .polygon(Polygon(rings: [broken]))]
        #expect(throws: SpatialIndexError.nonFinite(item: 1)) { try PolygonIndex(geometries: geometries) }
        var builder = PolygonIndex.Builder()
        try builder.add(.polygon(Self.square))
        #expect(throws: SpatialIndexError.nonFinite(item: 1)) { try builder.add(.multiPolygon(MultiPolygon(polygons: [Polygon(rings: [broken])]))) }
        // The refused polygon left nothing behind: the next one is item 1.
        try builder.add(.polygon(Polygon(rings: [ring])))
        let index = builder.build()
        #expect(index.count == 2)
        #expect(index.firstContaining(lon: 14.42, lat: 50.08) == 0)
        var all: [Int] = []
        index.containing(lon: 14.421, lat: 50.081) { all.append($0) }
        #expect(all == [0, 1])
    }

    @Test func pointIndexRefusesAnInfiniteCoordinateButSkipsEmptyPoints() throws {
        #expect(throws: SpatialIndexError.nonFinite(item: 1)) { try PointIndex(lons: [14.38, 14.42], lats: [50.08, .infinity]) }
        #expect(throws: SpatialIndexError.nonFinite(item: 0)) { try PointIndex(lons: [.nan], lats: [50.08]) }
        // NaN in both coordinates is no point (POINT EMPTY, a feature without geometry).
        let index = try PointIndex(lons: [14.38, .nan, 14.43], lats: [50.08, .nan, 50.09])
        #expect(index.count == 2)
        #expect(index.nearest(k: 3, lon: 14.42, lat: 50.09).map(\.index) == [2, 0])
    }
}
