// The indoor model: a venue (a building) with floors, beacons, reference points and the survey
// scans taken at them. Positions inside are in a floor's local frame, in metres (or in the
// units of the venue's grid); a floor whose frame has an origin and a rotation also answers in
// WGS 84 longitude/latitude. docs/ARCHITECTURE.md ("Indoor positioning") tells the tables.

import Foundation
import Geometry
import Support

/// A building (or a hall, a pavilion) where phones locate themselves by beacon signals.
public struct Venue: Sendable, Equatable {
    /// The venue's name in requests (`LOCATE … IN wmu_library`): letters, digits and '_'.
    public var name: String
    /// What people call it.
    public var title: String
    /// How the survey's point labels map to positions, when they are grid cells.
    public var grid: GridConvention?
    public var floors: [Floor]
    /// Beacons in the order of the survey's columns; readings refer to them by index.
    public var beacons: [Beacon]
    public var points: [ReferencePoint]
    public var scans: [Scan]
    /// How its survey becomes a model (SignalModel.swift).
    public var model: ModelSettings

    public init(name: String, title: String = "", grid: GridConvention? = nil, floors: [Floor] = [], beacons: [Beacon] = [],
                points: [ReferencePoint] = [], scans: [Scan] = [], model: ModelSettings = ModelSettings()) {
        self.model = model
        self.name = name
        self.title = title
        self.grid = grid
        self.floors = floors
        self.beacons = beacons
        self.points = points
        self.scans = scans
    }

    /// The floor of that number, if the venue declares it.
    public func floor(_ number: Int) -> Floor? { floors.first { $0.number == number } }

    /// The unit errors are counted in: the grid's cell size, else 1 (the frame's metres).
    public var cellSize: Double { grid?.cellSize ?? 1 }
}

/// One floor: its number (0 the ground floor, as the venue counts them), a name, and the
/// frame that ties its local x/y to the globe.
public struct Floor: Sendable, Equatable {
    public var number: Int
    public var name: String
    public var frame: LocalFrame?

    public init(number: Int, name: String = "", frame: LocalFrame? = nil) {
        self.number = number
        self.name = name
        self.frame = frame
    }
}

/// A floor's local frame: x and y in metres from `origin`; the y axis points `rotation`
/// degrees clockwise from true north (0: y north and x east; 90: y east and x south).
public struct LocalFrame: Sendable, Equatable {
    public var origin: Point
    public var rotationDegrees: Double

    public init(origin: Point, rotationDegrees: Double = 0) {
        self.origin = origin
        self.rotationDegrees = rotationDegrees
    }

    /// The longitude and latitude of local (x, y): on the plane tangent at the origin, on the
    /// sphere of R = 6,371,008.8 m the engine measures with. Inside a building (hundreds of
    /// metres) the plane is off the sphere by well under a millimetre.
    public func lonLat(x: Double, y: Double) -> Point {
        let theta = rotationDegrees * .pi / 180
        let east = x * cos(theta) + y * sin(theta)
        let north = -x * sin(theta) + y * cos(theta)
        let radius = Geodesy.earthRadius
        let lat = origin.lat + north / radius * 180 / .pi
        let lon = origin.lon + east / (radius * cos(origin.lat * .pi / 180)) * 180 / .pi
        return Point(lon: lon, lat: lat)
    }
}

/// A beacon heard in the survey: its id (an iBeacon's name in the survey, a MAC address…),
/// and where it hangs when known.
public struct Beacon: Sendable, Equatable {
    public var id: String
    public var floor: Int?
    public var x: Double?
    public var y: Double?

    public init(id: String, floor: Int? = nil, x: Double? = nil, y: Double? = nil) {
        self.id = id
        self.floor = floor
        self.x = x
        self.y = y
    }
}

/// A place where the survey stood: a label ("O02") and its position on a floor.
public struct ReferencePoint: Sendable, Equatable {
    public var label: String
    public var floor: Int
    public var x: Double
    public var y: Double

    public init(label: String, floor: Int, x: Double, y: Double) {
        self.label = label
        self.floor = floor
        self.x = x
        self.y = y
    }
}

/// One beacon heard once: its index among the venue's beacons and the strength in dBm.
public struct Reading: Sendable, Equatable {
    public var beacon: Int
    public var rssi: Double
    /// When it was heard (a long survey gives each reading its time; nil in a wide one).
    public var time: SurveyTime?

    public init(beacon: Int, rssi: Double, time: SurveyTime? = nil) {
        self.beacon = beacon
        self.rssi = rssi
        self.time = time
    }
}

/// One scan of the survey: the beacons heard at a reference point at one time. Beacons not
/// heard have no reading. A beacon heard several times in a scan (a long survey's readings
/// within one time window) has several readings, and its value in the fingerprint is their mean.
public struct Scan: Sendable, Equatable {
    /// The reference point's index in `Venue.points`.
    public var point: Int
    public var time: SurveyTime?
    public var readings: [Reading]
    /// The survey's other columns for this scan (text), for train/test splits by a column.
    public var attributes: [String: String]

    public init(point: Int, time: SurveyTime? = nil, readings: [Reading], attributes: [String: String] = [:]) {
        self.point = point
        self.time = time
        self.readings = readings
        self.attributes = attributes
    }
}

/// How grid-cell labels such as "O02" map to positions: the letters count one axis (A = 1,
/// …, Z = 26, AA = 27) and the number the other, each times the cell size. So with the letters
/// naming the column and a cell of 1, "O02" is the point x = 15, y = 2: the error between two
/// cells is then counted in cells.
public struct GridConvention: Sendable, Equatable, CustomStringConvertible {
    public enum Letters: String, Sendable {
        /// Letters count x (the column), the number counts y (the row).
        case column
        /// Letters count y (the row), the number counts x (the column).
        case row
    }

    public var letters: Letters
    /// The side of a cell, in the frame's units (metres).
    public var cellSize: Double

    public init(letters: Letters, cellSize: Double = 1) {
        self.letters = letters
        self.cellSize = cellSize
    }

    /// `letter-column` or `letter-row` (the stored and the CLI's spelling).
    public init?(name: String, cellSize: Double = 1) {
        switch name.lowercased() {
        case "letter-column", "letter_column": self.init(letters: .column, cellSize: cellSize)
        case "letter-row", "letter_row": self.init(letters: .row, cellSize: cellSize)
        default: return nil
        }
    }

    public var name: String { "letter-\(letters.rawValue)" }

    public var description: String {
        let cell = "cell \(shortNumber(cellSize))"
        return letters == .column ? "letter = column (x), number = row (y), \(cell)" : "letter = row (y), number = column (x), \(cell)"
    }

    /// The position of a label of 1–3 letters and then 1–6 digits ("O02", "ab12"), or nil.
    public func position(of label: String) -> (x: Double, y: Double)? {
        var letterValue = 0, letterCount = 0, number = 0, digitCount = 0
        for byte in label.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"):
                guard digitCount == 0, letterCount < 3 else { return nil }
                letterValue = letterValue * 26 + Int((byte & 0xDF) - UInt8(ascii: "A")) + 1
                letterCount += 1
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                guard letterCount > 0, digitCount < 6 else { return nil }
                number = number * 10 + Int(byte - UInt8(ascii: "0"))
                digitCount += 1
            default:
                return nil
            }
        }
        guard letterCount > 0, digitCount > 0 else { return nil }
        let (a, b) = (Double(letterValue) * cellSize, Double(number) * cellSize)
        return letters == .column ? (a, b) : (b, a)
    }
}

/// A time of the survey as it gives it: a local time without a zone (surveys note the clock of
/// the phone), kept as seconds for ordering and windows and as ISO 8601 text for the store.
public struct SurveyTime: Sendable, Hashable, Comparable {
    /// Seconds since 1970-01-01T00:00:00 of the survey's own clock.
    public var seconds: Double

    public init(seconds: Double) { self.seconds = seconds }

    public static func < (a: SurveyTime, b: SurveyTime) -> Bool { a.seconds < b.seconds }

    /// "2016-10-18T11:15:21" (fractions of a second kept to the millisecond).
    public var iso: String {
        // `init(seconds:)` is public: a caller's NaN or a huge value must not trap in Int64().
        // Parsed times lie far inside this range.
        guard seconds.isFinite, abs(seconds) < 1e11 else { return "\(seconds) s" }
        let whole = seconds.rounded(.down)
        var text = String(UTCTime(seconds: Int64(whole)).iso.dropLast())  // no "Z": not UTC
        let millis = Int(((seconds - whole) * 1000).rounded())
        if millis > 0 && millis < 1000 {
            text += "." + String(String(millis + 1000).dropFirst())
        }
        return text
    }

    /// Reads ISO 8601 ("2016-10-18T11:15:21", "2016-10-18 11:15", a trailing "Z" allowed), the
    /// US order of the WMU survey ("10-18-2016 11:15:21", also with '/'), or plain seconds
    /// ("1476789321.5", Unix time). Nil for anything else or a date that does not exist.
    public static func parse(_ text: String) -> SurveyTime? {
        let trimmed = text.trimmingSpaces
        guard !trimmed.isEmpty, trimmed.utf8.count <= 40 else { return nil }
        if trimmed.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || $0 == UInt8(ascii: ".") }),
           let seconds = Double(trimmed), seconds.isFinite, seconds < 1e11 {
            return SurveyTime(seconds: seconds)
        }
        var body = Substring(trimmed)
        if body.hasSuffix("Z") { body = body.dropLast() }
        // Fractions of a second, which UTCTime checks but drops.
        var fraction = 0.0
        if let dot = body.lastIndex(of: "."), body[body.index(after: dot)...].allSatisfy(\.isASCIIDigit),
           body[..<dot].filter({ $0 == ":" }).count == 2 {
            let digits = body[body.index(after: dot)...].prefix(9)
            fraction = digits.isEmpty ? 0 : (Double("0." + digits) ?? 0)
            body = body[..<dot]
        }
        if let time = UTCTime.parse(String(body)) { return SurveyTime(seconds: Double(time.seconds) + fraction) }
        // M-D-YYYY H:MM[:SS] or M/D/YYYY …: rewritten as ISO and read by the one parser.
        let parts = body.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2 else { return nil }
        let date = parts[0].split(omittingEmptySubsequences: false, whereSeparator: { $0 == "-" || $0 == "/" })
        let clock = parts[1].split(separator: ":", omittingEmptySubsequences: false)
        guard date.count == 3, (2...3).contains(clock.count),
              date.allSatisfy({ !$0.isEmpty && $0.count <= 4 && $0.allSatisfy(\.isASCIIDigit) }),
              clock.allSatisfy({ !$0.isEmpty && $0.count <= 2 && $0.allSatisfy(\.isASCIIDigit) }),
              date[2].count == 4, date[0].count <= 2, date[1].count <= 2 else { return nil }
        func two(_ s: Substring) -> String { s.count == 1 ? "0" + s : String(s) }
        let iso = "\(date[2])-\(two(date[0]))-\(two(date[1]))T\(two(clock[0])):\(two(clock[1])):\(clock.count == 3 ? two(clock[2]) : "00")"
        return UTCTime.parse(iso).map { SurveyTime(seconds: Double($0.seconds) + fraction) }
    }
}

extension Character {
    var isASCIIDigit: Bool { asciiValue.map { $0 >= 48 && $0 <= 57 } ?? false }
}

/// A number as people write it: 1 rather than 1.0.
func shortNumber(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
}
