// Distances on the sphere. The engine's distances are great-circle metres on a sphere of the
// IUGG mean radius (R = 6,371,008.8 m), the convention of the shared benchmarks; every answer
// that carries a distance says so.

import Foundation

public enum Geodesy {
    /// Mean Earth radius R1 = (2a + b) / 3 of WGS84, in metres.
    public static let earthRadius: Double = 6_371_008.8

    @usableFromInline static let degreesToRadians = Double.pi / 180

    /// Great-circle distance in metres (haversine formula).
    @inlinable
    public static func haversine(lon1: Double, lat1: Double, lon2: Double, lat2: Double) -> Double {
        haversine(lon1: lon1, lat1: lat1, lon2: lon2, lat2: lat2, cosines: cosLatitude(lat1) * cosLatitude(lat2))
    }

    /// As `haversine`, given `cosLatitude(lat1) * cosLatitude(lat2)`: a caller measuring from
    /// one point to many fixed ones (a fence's circles) computes each cosine once. The same
    /// operations in the same order, so the same metres to the last bit.
    @inlinable
    public static func haversine(lon1: Double, lat1: Double, lon2: Double, lat2: Double, cosines: Double) -> Double {
        let dPhi = lat2 * degreesToRadians - lat1 * degreesToRadians
        let dLambda = (lon2 - lon1) * degreesToRadians
        let s1 = sin(dPhi / 2)
        let s2 = sin(dLambda / 2)
        let h = s1 * s1 + cosines * s2 * s2
        return 2 * earthRadius * asin(min(1, h.squareRoot()))
    }

    /// The cosine of a latitude in degrees, as `haversine` takes it.
    @inlinable
    public static func cosLatitude(_ lat: Double) -> Double { cos(lat * degreesToRadians) }

    @inlinable
    public static func distance(_ a: Point, _ b: Point) -> Double {
        haversine(lon1: a.lon, lat1: a.lat, lon2: b.lon, lat2: b.lat)
    }

    /// The point on the unit sphere. Chord length between two such points is monotone in the
    /// great-circle distance, so it ranks neighbours exactly and costs no trigonometry per query.
    @inlinable
    public static func unitVector(lon: Double, lat: Double) -> (x: Double, y: Double, z: Double) {
        let lambda = lon * degreesToRadians
        let phi = lat * degreesToRadians
        let c = cos(phi)
        return (c * cos(lambda), c * sin(lambda), sin(phi))
    }

    /// Great-circle metres for a chord length on the unit sphere.
    @inlinable
    public static func metres(fromChord chord: Double) -> Double {
        2 * earthRadius * asin(min(1, chord / 2))
    }

    /// Chord length on the unit sphere for great-circle metres (the inverse of `metres(fromChord:)`).
    @inlinable
    public static func chord(fromMetres metres: Double) -> Double {
        let angle = min(metres / earthRadius, Double.pi)
        return 2 * sin(angle / 2)
    }

    /// The initial bearing of the great circle from the first point to the second, in degrees
    /// clockwise from true north, in [0, 360).
    public static func bearing(lon1: Double, lat1: Double, lon2: Double, lat2: Double) -> Double {
        let φ1 = lat1 * .pi / 180, φ2 = lat2 * .pi / 180, Δλ = (lon2 - lon1) * .pi / 180
        let θ = atan2(sin(Δλ) * cos(φ2), cos(φ1) * sin(φ2) - sin(φ1) * cos(φ2) * cos(Δλ)) * 180 / .pi
        let degrees = θ < 0 ? θ + 360 : θ
        return degrees >= 360 ? 0 : degrees
    }

    /// Length of a line in metres: the sum of its segments' great-circle lengths.
    public static func length(of coordinates: [Double]) -> Double {
        var total = 0.0
        var i = 2
        while i + 1 < coordinates.count {
            total += haversine(lon1: coordinates[i - 2], lat1: coordinates[i - 1], lon2: coordinates[i], lat2: coordinates[i + 1])
            i += 2
        }
        return total
    }
}
