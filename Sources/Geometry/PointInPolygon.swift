// Point in polygon: the engine's one boundary rule, used by every caller (`Polygon.contains`,
// distances to polygons, the layer index `PolygonIndex`, routing's avoided areas through it,
// the area check's convex hull, the features of a tile at a point).
//
// The crossing test is half-open: an edge counts when one end is strictly above the point's
// latitude and the other is not, and the crossing lies strictly east of the point. The
// crossing is computed from the edge's lower end, so the two polygons that share an edge (and
// walk it in opposite directions) get bit-identical crossings: a point exactly on the shared
// edge is inside exactly one of them, never both and never neither. Which one is fixed by the
// geometry (points on a polygon's south and west edges are generally inside it, on its north
// and east edges outside). Holes and the parts of a MultiPolygon are just more rings in the
// even-odd sum (valid input: parts do not overlap).

public enum PointInPolygon {
    /// Whether the edge (x1, y1)–(x2, y2) crosses the ray going east from (x, y), by the
    /// half-open rule above. Inlined into the callers' loops (`PolygonIndex` runs it millions
    /// of times a second), hence public and @inlinable rather than package.
    @inlinable @inline(__always)
    public static func crosses(_ x: Double, _ y: Double, _ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double) -> Bool {
        guard (y1 > y) != (y2 > y) else { return false }
        return x < crossingLongitude(y, x1, y1, x2, y2)
    }

    /// Where the edge meets the latitude `y` (which its half-open span holds), computed from
    /// its lower end: direction-free, so a shared edge gives the same answer to both sides.
    @inlinable @inline(__always)
    public static func crossingLongitude(_ y: Double, _ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double) -> Double {
        if y1 > y2 { return x2 + (y - y2) * (x1 - x2) / (y1 - y2) }
        return x1 + (y - y1) * (x2 - x1) / (y2 - y1)
    }

    /// Even-odd over every ring of flat interleaved coordinates, `ringOffsets` in positions
    /// (as `Polygon` stores them). A ring may be closed or open: the step from its last position
    /// back to its first is walked either way (a closed ring's is empty and never crosses).
    public static func contains(_ coordinates: [Double], ringOffsets: [Int], x: Double, y: Double) -> Bool {
        var inside = false
        coordinates.withUnsafeBufferPointer { c in
            for r in 0..<max(ringOffsets.count - 1, 0) {
                let start = ringOffsets[r], end = ringOffsets[r + 1]
                guard end - start >= 3, start >= 0, 2 * end <= c.count else { continue }
                var j = end - 1
                for i in start..<end {
                    if crosses(x, y, c[2 * j], c[2 * j + 1], c[2 * i], c[2 * i + 1]) { inside.toggle() }
                    j = i
                }
            }
        }
        return inside
    }
}

extension Polygon {
    /// Whether the polygon contains the point, by the engine's boundary rule (see
    /// `PointInPolygon`). For one-off tests; layers use the prepared `PolygonIndex`.
    public func contains(lon: Double, lat: Double) -> Bool {
        PointInPolygon.contains(coordinates, ringOffsets: ringOffsets, x: lon, y: lat)
    }
}

extension MultiPolygon {
    /// Every part's rings in one even-odd sum, as `PolygonIndex` counts them.
    public func contains(lon: Double, lat: Double) -> Bool {
        polygons.reduce(false) { $0 != $1.contains(lon: lon, lat: lat) }
    }
}

extension Geometry {
    /// Polygons and MultiPolygons by the engine's boundary rule; a collection when one of its
    /// members does; points and lines contain nothing.
    public func contains(lon: Double, lat: Double) -> Bool {
        switch self {
        case .polygon(let p): p.contains(lon: lon, lat: lat)
        case .multiPolygon(let m): m.contains(lon: lon, lat: lat)
        case .collection(let parts): parts.contains { $0.contains(lon: lon, lat: lat) }
        case .point, .lineString, .multiPoint, .multiLineString: false
        }
    }

    /// Whether this is a Polygon or a MultiPolygon: the geometries that contain points.
    public var isPolygonal: Bool {
        switch self {
        case .polygon, .multiPolygon: true
        default: false
        }
    }
}
