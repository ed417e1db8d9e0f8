// Areas, lengths and point-to-geometry distances in metres on the sphere (R = 6,371,008.8 m),
// the same sphere as every distance the engine reports.

import Foundation

public enum Measure {
    /// Area in m² on the WGS84 ellipsoid: exterior rings minus holes. Each ring's latitudes
    /// are mapped to authalic latitudes β, which carry the ellipsoid onto a sphere of radius
    /// R_q = 6,371,007.18 m with areas preserved; there the trapezoid form of the spherical
    /// excess (Chamberlain & Duquette 2007, "Some algorithms for polygons on a sphere"),
    /// A = R_q²/2 · |Σ (λ₂ − λ₁)(sin β₁ + sin β₂)|, is exact for edges that run straight in the
    /// equal-area cylindrical projection, and within 1e-6 of the geodesic polygon for edges of
    /// metres to kilometres. Areas are ellipsoidal because a sphere of mean radius is off by
    /// about 0.3 % at Prague's latitude (its meridian and prime-vertical radii differ). Points
    /// and lines have area 0.
    public static func area(_ geometry: Geometry) -> Double {
        switch geometry {
        case .polygon(let p): return polygonArea(p)
        case .multiPolygon(let m): return m.polygons.reduce(0) { $0 + polygonArea($1) }
        case .collection(let parts): return parts.reduce(0) { $0 + area($1) }
        default: return 0
        }
    }

    static func polygonArea(_ p: Polygon) -> Double {
        guard p.ringCount > 0 else { return 0 }
        var total = abs(ringArea(p.ring(0)))
        for r in 1..<p.ringCount { total -= abs(ringArea(p.ring(r))) }
        return max(total, 0)
    }

    /// WGS84: semi-major axis and first eccentricity squared.
    static let a = 6_378_137.0
    static let e2 = 0.006_694_379_990_141_317
    static let e = e2.squareRoot()
    /// q(φ) of the authalic latitude, and its value at the pole.
    static func q(_ sinPhi: Double) -> Double {
        let es = e * sinPhi
        return (1 - e2) * (sinPhi / (1 - es * es) - log((1 - es) / (1 + es)) / (2 * e))
    }
    static let qPole = q(1)
    /// The authalic radius R_q = a·sqrt(q_p / 2).
    public static let authalicRadius = a * (qPole / 2).squareRoot()

    /// sin β for a geodetic latitude in degrees.
    static func sinAuthalic(_ latitude: Double) -> Double {
        q(sin(latitude * Double.pi / 180)) / qPole
    }

    /// Signed area of one closed ring in m² (positive when counter-clockwise).
    public static func ringArea(_ ring: ArraySlice<Double>) -> Double {
        let n = ring.count / 2
        guard n >= 3 else { return 0 }
        let base = ring.startIndex
        let rad = Double.pi / 180
        var sum = 0.0
        var sinPrevious = sinAuthalic(ring[base + 1])
        for i in 0..<(n - 1) {
            let lon1 = ring[base + 2 * i]
            let lon2 = ring[base + 2 * i + 2]
            let sinNext = sinAuthalic(ring[base + 2 * i + 3])
            sum += (lon2 - lon1) * rad * (sinPrevious + sinNext)
            sinPrevious = sinNext
        }
        // The sum runs clockwise-positive; negate so counter-clockwise rings are positive.
        return -sum * authalicRadius * authalicRadius / 2
    }

    /// Length in metres: lines summed segment by segment (haversine); polygons give the
    /// perimeter of all their rings.
    public static func length(_ geometry: Geometry) -> Double {
        switch geometry {
        case .point, .multiPoint: return 0
        case .lineString(let l): return Geodesy.length(of: l.coordinates)
        case .multiLineString(let m): return (0..<m.lineCount).reduce(0) { $0 + Geodesy.length(of: m.line($1).coordinates) }
        case .polygon(let p): return (0..<p.ringCount).reduce(0) { $0 + Geodesy.length(of: Array(p.ring($1))) }
        case .multiPolygon(let m): return m.polygons.reduce(0) { $0 + length(.polygon($1)) }
        case .collection(let parts): return parts.reduce(0) { $0 + length($1) }
        }
    }
}

extension Geodesy {
    /// Great-circle metres from a point to the segment a–b: the cross-track distance when the
    /// closest point of the great-circle arc lies between a and b, otherwise the distance to
    /// the nearer end. Exact on the sphere, computed with unit vectors.
    public static func pointToSegment(lon: Double, lat: Double, ax: Double, ay: Double, bx: Double, by: Double) -> Double {
        let p = unitVector(lon: lon, lat: lat)
        let a = unitVector(lon: ax, lat: ay)
        let b = unitVector(lon: bx, lat: by)
        // Normal of the great circle through a and b.
        let n = (a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
        let nn = (n.0 * n.0 + n.1 * n.1 + n.2 * n.2).squareRoot()
        let toA = haversine(lon1: lon, lat1: lat, lon2: ax, lat2: ay)
        let toB = haversine(lon1: lon, lat1: lat, lon2: bx, lat2: by)
        guard nn > 1e-15 else { return min(toA, toB) }  // a and b coincide (or are antipodal)
        let unit = (n.0 / nn, n.1 / nn, n.2 / nn)
        let sinCross = p.x * unit.0 + p.y * unit.1 + p.z * unit.2
        // The foot of the perpendicular: p minus its component along the normal.
        let foot = (p.x - sinCross * unit.0, p.y - sinCross * unit.1, p.z - sinCross * unit.2)
        // It lies on the arc when it is on the same side of a as b, and of b as a.
        let ab = (a.y * foot.2 - a.z * foot.1, a.z * foot.0 - a.x * foot.2, a.x * foot.1 - a.y * foot.0)
        let fb = (foot.1 * b.z - foot.2 * b.y, foot.2 * b.x - foot.0 * b.z, foot.0 * b.y - foot.1 * b.x)
        let onArc = (ab.0 * unit.0 + ab.1 * unit.1 + ab.2 * unit.2) >= 0 && (fb.0 * unit.0 + fb.1 * unit.1 + fb.2 * unit.2) >= 0
        guard onArc else { return min(toA, toB) }
        return earthRadius * asin(min(1, abs(sinCross)))
    }

    /// Great-circle metres from a point to the nearest point of a geometry; 0 inside a polygon.
    public static func distance(from point: Point, to geometry: Geometry) -> Double {
        func toLines(_ flat: ArraySlice<Double>) -> Double {
            let n = flat.count / 2
            let base = flat.startIndex
            if n == 1 { return haversine(lon1: point.lon, lat1: point.lat, lon2: flat[base], lat2: flat[base + 1]) }
            var best = Double.infinity
            for i in 0..<max(n - 1, 0) {
                let d = pointToSegment(lon: point.lon, lat: point.lat, ax: flat[base + 2 * i], ay: flat[base + 2 * i + 1],
                                       bx: flat[base + 2 * i + 2], by: flat[base + 2 * i + 3])
                best = min(best, d)
            }
            return best
        }
        func toPolygon(_ p: Polygon) -> Double {
            if p.contains(lon: point.lon, lat: point.lat) { return 0 }
            var best = Double.infinity
            for r in 0..<p.ringCount { best = min(best, toLines(p.ring(r))) }
            return best
        }
        switch geometry {
        case .point(let q): return haversine(lon1: point.lon, lat1: point.lat, lon2: q.lon, lat2: q.lat)
        case .multiPoint(let m):
            var best = Double.infinity
            var i = 0
            while i + 1 < m.coordinates.count {
                best = min(best, haversine(lon1: point.lon, lat1: point.lat, lon2: m.coordinates[i], lat2: m.coordinates[i + 1]))
                i += 2
            }
            return best
        case .lineString(let l): return toLines(l.coordinates[...])
        case .multiLineString(let m):
            return (0..<m.lineCount).reduce(Double.infinity) { min($0, toLines(m.coordinates[(2 * m.lineOffsets[$1])..<(2 * m.lineOffsets[$1 + 1])])) }
        case .polygon(let p): return toPolygon(p)
        case .multiPolygon(let m): return m.polygons.reduce(Double.infinity) { min($0, toPolygon($1)) }
        case .collection(let parts): return parts.reduce(Double.infinity) { min($0, distance(from: point, to: $1)) }
        }
    }
}

extension Geometry {
    /// Great-circle metres from the point to the nearest point of this geometry; 0 inside.
    public func distance(toLon lon: Double, lat: Double) -> Double {
        Geodesy.distance(from: Point(lon: lon, lat: lat), to: self)
    }
}
