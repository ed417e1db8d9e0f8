import Geometry
import Routing
import SpatialIndex
import TestSupport
import Testing

/// AVOID tests an edge's midpoint against the avoided polygons by the engine's boundary rule:
/// an edge whose midpoint lies on the edge two squares share is avoided with exactly one.
@Suite(.validatesStores) struct AvoidBoundaryTests {
    typealias S = AdjacentSquares

    /// start (14.25, 51.0) – a (14.25, 50.25) – b (14.75, 50.25) – end (14.75, 51.0), and a
    /// detour a – (14.5, 51.5) – b. Only a–b has its midpoint, (14.5, 50.25), in a square: on
    /// the shared edge. Every other midpoint lies north of both squares.
    static let lines: [[Double]] = [
        [14.25, 51.0, 14.25, 50.25],
        [14.25, 50.25, 14.75, 50.25],
        [14.75, 50.25, 14.75, 51.0],
        [14.25, 50.25, 14.5, 51.5, 14.75, 50.25],
    ]
    static let start = Point(lon: 14.25, lat: 51.0)
    static let end = Point(lon: 14.75, lat: 51.0)

    static func metres(_ flat: [Double]) -> Double {
        var total = 0.0
        for i in stride(from: 0, to: flat.count - 2, by: 2) {
            total += Geodesy.haversine(lon1: flat[i], lat1: flat[i + 1], lon2: flat[i + 2], lat2: flat[i + 3])
        }
        return total
    }

    @Test func anEdgeOnTheSharedEdgeIsAvoidedWithExactlyOneSquare() throws {
        let router = try Router(graph: Graph.fromLines(Self.lines), maxSnapMetres: 1000)
        let direct = Self.metres(Self.lines[0]) + Self.metres(Self.lines[1]) + Self.metres(Self.lines[2])
        let detour = Self.metres(Self.lines[0]) + Self.metres(Self.lines[3]) + Self.metres(Self.lines[2])
        // The two ways differ by far more than rounding: 202.3 km across, 447.0 km round
        // (haversine, checked in Python).
        #expect(abs(direct - 202_343.789) < 0.01)
        #expect(abs(detour - 446_984.869) < 0.01)

        let free = try router.route(from: Self.start, to: Self.end)
        #expect(abs(free.metres - direct) < 1e-6)
        // The midpoint is on the west square's east edge: not in it, so a–b stays open.
        let avoidingWest = try router.route(from: Self.start, to: Self.end,
                                            avoiding: Router.Avoid(polygons: PolygonIndex(geometries: [.polygon(S.west)]), factor: nil))
        #expect(abs(avoidingWest.metres - direct) < 1e-6)
        // It is on the east square's west edge: in it, so a–b is forbidden and the route goes round.
        let avoidingEast = try router.route(from: Self.start, to: Self.end,
                                            avoiding: Router.Avoid(polygons: PolygonIndex(geometries: [.polygon(S.east)]), factor: nil))
        #expect(abs(avoidingEast.metres - detour) < 1e-6)
        // Both squares: forbidden once, whichever way round the west ring runs.
        for west in [S.west, S.westClockwise] {
            let both = try router.route(from: Self.start, to: Self.end,
                                        avoiding: Router.Avoid(polygons: PolygonIndex(geometries: [.polygon(west), .polygon(S.east)]), factor: nil))
            #expect(abs(both.metres - detour) < 1e-6)
        }
    }
}
