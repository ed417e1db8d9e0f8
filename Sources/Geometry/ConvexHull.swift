// The convex hull of geometries' vertices. The engine's area check uses it for point and line
// layers (is a point inside the area the layer covers?), by the same boundary rule as polygons.

/// The convex hull of every vertex of some geometries (Andrew's monotone chain), as a closed
/// counter-clockwise ring. In lon/lat: fine for areas the size of a zoo or a city.
public enum ConvexHull {
    public static func of(_ geometries: [Geometry?]) -> Polygon? {
        var points: [(Double, Double)] = []
        for geometry in geometries {
            geometry?.forEachCoordinateArray { coordinates in
                var i = 0
                while i + 1 < coordinates.count {
                    points.append((coordinates[i], coordinates[i + 1]))
                    i += 2
                }
            }
        }
        points.sort { $0.0 < $1.0 || ($0.0 == $1.0 && $0.1 < $1.1) }
        guard points.count >= 3 else { return nil }
        func cross(_ o: (Double, Double), _ a: (Double, Double), _ b: (Double, Double)) -> Double {
            (a.0 - o.0) * (b.1 - o.1) - (a.1 - o.1) * (b.0 - o.0)
        }
        var lower: [(Double, Double)] = []
        for p in points {
            while lower.count >= 2 && cross(lower[lower.count - 2], lower[lower.count - 1], p) <= 0 { lower.removeLast() }
            lower.append(p)
        }
        var upper: [(Double, Double)] = []
        for p in points.reversed() {
            while upper.count >= 2 && cross(upper[upper.count - 2], upper[upper.count - 1], p) <= 0 { upper.removeLast() }
            upper.append(p)
        }
        let ring = lower.dropLast() + upper.dropLast()
        guard ring.count >= 3 else { return nil }
        var coordinates: [Double] = []
        for p in ring { coordinates += [p.0, p.1] }
        coordinates += [ring[ring.startIndex].0, ring[ring.startIndex].1]
        return Polygon(rings: [coordinates])
    }
}
