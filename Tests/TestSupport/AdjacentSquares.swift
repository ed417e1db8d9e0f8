import Geometry

/// Two squares that share an edge, and a point exactly on that edge, for the boundary rule
/// (a point on an edge shared by two polygons is inside exactly one) through every caller.
/// Every coordinate is a multiple of 1/4, so each is exact in binary, and so is the midpoint
/// of any segment between them (routing tests the midpoint of an edge).
public enum AdjacentSquares {
    /// 14.0…14.5 E, 50.0…50.5 N: the point lies on its east edge.
    public static let west = Polygon(rings: [[14.0, 50.0, 14.5, 50.0, 14.5, 50.5, 14.0, 50.5, 14.0, 50.0]])
    /// 14.5…15.0 E, 50.0…50.5 N: the point lies on its west edge. Its ring runs the other way
    /// round (clockwise), so the shared edge is walked in the same direction by both squares
    /// here, and in opposite directions with `westClockwise`.
    public static let east = Polygon(rings: [[14.5, 50.0, 14.5, 50.5, 15.0, 50.5, 15.0, 50.0, 14.5, 50.0]])
    /// `west`, clockwise.
    public static let westClockwise = Polygon(rings: [[14.0, 50.0, 14.0, 50.5, 14.5, 50.5, 14.5, 50.0, 14.0, 50.0]])
    /// On the shared edge, halfway up.
    public static let onSharedEdge = Point(lon: 14.5, lat: 50.25)

    /// Two quadrilaterals, both counter-clockwise, sharing a slanted edge from (14.5, 50.0) to
    /// (14.748, 50.28), which they walk in opposite directions. The crossing of a horizontal ray
    /// with it is rounded, and rounded differently from its two ends: a test computing it from
    /// the vertex it happens to reach first put the edge's midpoint inside neither.
    public static let slantedWest = Polygon(rings: [[14.0, 50.0, 14.5, 50.0, 14.748, 50.28, 14.0, 50.28, 14.0, 50.0]])
    public static let slantedEast = Polygon(rings: [[14.5, 50.0, 15.0, 50.0, 15.0, 50.28, 14.748, 50.28, 14.5, 50.0]])

    /// Points on the slanted edge, as near as doubles get: at fractions k/64 of it, k = 1…63.
    public static var onSlantedEdge: [Point] {
        (1..<64).map { k in
            let t = Double(k) / 64
            return Point(lon: 14.5 + t * (14.748 - 14.5), lat: 50.0 + t * (50.28 - 50.0))
        }
    }

    /// Which of `onSlantedEdge` (by k) the rule puts in `slantedWest`; the other 38 are in
    /// `slantedEast`. Worked out independently (the same arithmetic in Python).
    public static let slantedWestKs: Set<Int> = [1, 3, 5, 10, 12, 14, 17, 19, 21, 23, 24, 26, 28, 30, 32, 33, 35, 37, 42, 44, 49, 51, 56, 58, 60]

    /// The squares as a GeoJSON FeatureCollection (`name` = "west", "east"), for importing.
    public static let geoJSON = """
        {"type": "FeatureCollection", "features": [
          {"type": "Feature", "properties": {"name": "west"}, "geometry": {"type": "Polygon", "coordinates": [[[14.0, 50.0], [14.5, 50.0], [14.5, 50.5], [14.0, 50.5], [14.0, 50.0]]]}},
          {"type": "Feature", "properties": {"name": "east"}, "geometry": {"type": "Polygon", "coordinates": [[[14.5, 50.0], [14.5, 50.5], [15.0, 50.5], [15.0, 50.0], [14.5, 50.0]]]}}
        ]}
        """
}
