// Errors of the indoor model: importing a survey, storing a venue, and the scans a phone sends
// to be located. Each has a stable machine-readable `code`, mapped once by the engine
// (`EngineError.scan`, `.unknownVenue`) and by the server.

import Geometry
import Store
import Support

/// Why a survey cannot be imported or a venue stored. Nothing is written when one is thrown.
public enum IndoorError: CategorizedError, Equatable, Sendable {
    /// The survey file does not read: the CSV's own structure, or cells that are not what their
    /// column needs; every problem with its line (and column).
    case malformedCSV(file: String, problems: [ImportProblem])
    /// An option of the import that cannot work with this file or this store.
    case invalidOption(String)
    case venueExists(String)
    case invalidVenueName(String, reason: String)
    case store(String)

    public var code: String {
        switch self {
        case .malformedCSV: "malformed_csv"
        case .invalidOption: "invalid_argument"
        case .venueExists: "venue_exists"
        case .invalidVenueName: "invalid_venue_name"
        case .store: "store_error"
        }
    }

    public var category: ErrorCategory {
        switch self {
        case .malformedCSV, .invalidOption, .invalidVenueName: .invalid
        case .venueExists: .impossible
        case .store: .internal
        }
    }

    public var description: String {
        switch self {
        case .malformedCSV(let file, let problems):
            let shown = problems.prefix(20).map { "  - \($0)" }.joined(separator: "\n")
            let more = problems.count > 20 ? "\n  … and \(problems.count - 20) more" : ""
            return "the survey \(file) cannot be read; the store is unchanged:\n\(shown)\(more)"
        case .invalidOption(let message):
            return message
        case .venueExists(let name):
            return "venue \(Quote.input(name)) already exists; use --replace to overwrite it"
        case .invalidVenueName(let name, let reason):
            return "invalid venue name \(Quote.input(name)): \(reason)"
        case .store(let message):
            return message
        }
    }

    /// Venue names are names in statements (`LOCATE … IN name`): ASCII letters, digits, '_'.
    public static func checkVenueName(_ name: String) throws(IndoorError) {
        guard let first = name.unicodeScalars.first, first == "_" || (first.isASCII && first.properties.isAlphabetic) else {
            throw .invalidVenueName(name, reason: "it must start with a letter or '_'")
        }
        guard name.utf8.count <= 64,
              name.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }) else {
            throw .invalidVenueName(name, reason: "use at most 64 ASCII letters, digits and '_'")
        }
    }
}

/// Why a scan sent to be located cannot be: the errors the API names `rssi_out_of_range`,
/// `duplicate_beacon` and `no_known_beacon`.
public enum ScanError: CategorizedError, Equatable, Sendable {
    /// A strength outside -200…0 dBm (a received signal is weaker than the sender: its dBm are
    /// negative; -200 is "not heard"), or not a number.
    case rssiOutOfRange(beacon: String, value: Double)
    /// The same beacon twice in one scan.
    case duplicateBeacon(String)
    /// None of the scan's beacons is one of the venue's, or every one of them is at -200 (not
    /// heard): there is nothing to compare.
    case noKnownBeacon(venue: String, given: [String])
    /// More readings than a scan can hold.
    case tooManyReadings(count: Int, limit: Int)

    public var code: String {
        switch self {
        case .rssiOutOfRange: "rssi_out_of_range"
        case .duplicateBeacon: "duplicate_beacon"
        case .noKnownBeacon: "no_known_beacon"
        case .tooManyReadings: "too_many_readings"
        }
    }

    public var category: ErrorCategory {
        switch self {
        case .rssiOutOfRange, .duplicateBeacon: .invalid
        case .noKnownBeacon: .impossible
        case .tooManyReadings: .limit
        }
    }

    /// The beacon the error is about, if one.
    public var beacon: String? {
        switch self {
        case .rssiOutOfRange(let beacon, _), .duplicateBeacon(let beacon): beacon
        default: nil
        }
    }

    public var description: String {
        switch self {
        case .rssiOutOfRange(let beacon, let value):
            let shown = value.isFinite ? shortNumber(value) : "\(value)"
            return "beacon \(Quote.input(beacon)): \(shown) dBm is out of range; a received strength lies from -200 to 0 dBm (negative numbers)"
        case .duplicateBeacon(let beacon):
            return "beacon \(Quote.input(beacon)) appears twice in the scan; send each beacon once"
        case .noKnownBeacon(let venue, let given):
            let names = given.prefix(5).map { Quote.input($0) }.joined(separator: ", ") + (given.count > 5 ? ", …" : "")
            return given.isEmpty
                ? "the scan is empty: send at least one beacon of venue \(Quote.input(venue)) with its strength"
                : "no beacon of the scan (\(names)) is a beacon of venue \(Quote.input(venue)) heard above -200 dBm"
        case .tooManyReadings(let count, let limit):
            return "the scan has \(count) readings, more than the limit of \(limit)"
        }
    }

    /// The strengths a reading may have, in dBm.
    public static let rssiRange: ClosedRange<Double> = -200...0
}
