// The one check of a position that comes from outside (a query, an HTTP parameter, a CLI
// argument, an imported file): finite, longitude within ±180, latitude within ±90. Every
// caller maps the error onto its own kind (a 400 naming the parameter, a query error at the
// token, an import error at the feature), but the rule and the words are decided here once,
// including the hint for the classic mistake of writing latitude first.

/// Why a position is not a WGS 84 longitude/latitude.
public struct PositionError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Axis: String, Sendable {
        case lon, lat
    }

    /// The coordinate at fault.
    public let axis: Axis
    /// "latitude 114.42 is outside -90…90"
    public let message: String
    /// Set when the two numbers would be a valid position the other way round.
    public let looksSwapped: Bool

    public var description: String {
        message + (looksSwapped ? " — did you swap longitude and latitude?" : "")
    }
}

extension Point {
    /// The position, or why it is not one. Latitude is checked first: `(50.09, 114.42)` is
    /// the swapped `(114.42, 50.09)`, and saying so is the useful answer.
    public static func checked(lon: Double, lat: Double) throws(PositionError) -> Point {
        guard lon.isFinite else { throw PositionError(axis: .lon, message: "longitude \(lon) is not a finite number", looksSwapped: false) }
        guard lat.isFinite else { throw PositionError(axis: .lat, message: "latitude \(lat) is not a finite number", looksSwapped: false) }
        guard abs(lat) <= 90 else {
            throw PositionError(axis: .lat, message: "latitude \(text(lat)) is outside -90…90", looksSwapped: abs(lon) <= 90)
        }
        guard abs(lon) <= 180 else { throw PositionError(axis: .lon, message: "longitude \(text(lon)) is outside -180…180", looksSwapped: false) }
        return Point(lon: lon, lat: lat)
    }

    /// 150 rather than 150.0: the number as a person wrote it.
    private static func text(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }
}

extension Geometry {
    /// Why the first of the geometry's positions that `Point.checked` refuses is not a WGS 84
    /// position (NaN or infinite, or out of range: a finite 1e308 longitude traps every grid
    /// and zoom computation downstream), or nil when every one is valid. A layer's features pass
    /// here when they enter a snapshot.
    public var firstInvalidPosition: PositionError? {
        var found: PositionError?
        forEachCoordinateArray { coordinates in
            guard found == nil else { return }
            var i = 0
            while i + 1 < coordinates.count {
                let (lon, lat) = (coordinates[i], coordinates[i + 1])
                // NaN fails both comparisons, so one test per position covers every case.
                if !(abs(lon) <= 180 && abs(lat) <= 90) {
                    do throws(PositionError) { _ = try Point.checked(lon: lon, lat: lat) } catch { found = error }
                    return
                }
                i += 2
            }
        }
        return found
    }
}
