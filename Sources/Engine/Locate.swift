// Where am I inside: a phone's beacon scan located in a venue by its fingerprints (the Indoor
// module). The snapshot loads every venue of the store with its survey and builds its
// fingerprint indexes once (`IndoorVenue`); `locate` checks the scan by one rule and answers
// from them. docs/ARCHITECTURE.md ("Indoor positioning") tells the method and why.

import Geometry
import Indoor
import Store

public typealias Venue = Indoor.Venue
public typealias Position = Indoor.Position
public typealias Neighbour = Indoor.Neighbour
public typealias LocateMethod = Indoor.LocateMethod
public typealias FingerprintKind = Indoor.FingerprintKind
public typealias ScanError = Indoor.ScanError
public typealias Evaluation = Indoor.Evaluation
public typealias EvaluationOptions = Indoor.EvaluationOptions
public typealias EvaluationResult = Indoor.EvaluationResult

/// A venue as the snapshot holds it: its model and survey, and a locator per kind of
/// fingerprints, each built once at load.
public final class IndoorVenue: Sendable {
    public let venue: Venue
    let locators: [FingerprintKind: Locator]

    public var name: String { venue.name }

    init(_ venue: Venue) throws(EngineError) {
        self.venue = venue
        var locators: [FingerprintKind: Locator] = [:]
        for kind in FingerprintKind.allCases {
            do {
                locators[kind] = try Locator(venue: venue, kind: kind)
            } catch {
                throw .store("venue '\(venue.name)': cannot index its \(kind.rawValue) fingerprints: \(error)")
            }
        }
        self.locators = locators
    }

    /// How many distinct signal vectors the index of `kind` holds (scans share many).
    public func distinctFingerprints(_ kind: FingerprintKind) -> Int { locators[kind]?.map.distinctVectors ?? 0 }
}

/// What `locate` was asked, with its defaults: the 3 nearest fingerprints of every survey scan,
/// weighted by inverse signal distance (docs/PERFORMANCE.md has the measurements behind them).
public struct LocateOptions: Sendable, Equatable {
    public var k: Int
    public var method: LocateMethod
    public var fingerprints: FingerprintKind

    public init(k: Int = 3, method: LocateMethod = .wknn, fingerprints: FingerprintKind = .scans) {
        self.k = k
        self.method = method
        self.fingerprints = fingerprints
    }
}

/// The answer to a locate: the position and how it was found.
public struct Location: Sendable {
    public let venue: IndoorVenue
    public let position: Position
    public let options: LocateOptions
    /// Beacons of the scan that the venue does not know, left out of the comparison.
    public let ignored: [String]

    /// The label of the reference point nearest to the estimate.
    public var pointLabel: String { venue.venue.points[position.point].label }
}

extension Snapshot {
    /// The names of the venues, in order.
    public var venueNames: [String] { venues.map(\.name) }

    /// The venue of that name (case-insensitive), or an error suggesting the closest name.
    public func venue(_ name: String) throws(EngineError) -> IndoorVenue {
        guard let venue = venuesByName[name.lowercased()] else { throw .unknownVenue(name, known: venueNames) }
        return venue
    }

    /// Locates a scan (beacon id → dBm) in `venue`. Errors: a strength outside -200…0 dBm, a
    /// beacon twice, no beacon of the venue heard (`EngineError.scan`), k out of 1…`maxLocateK`.
    /// `deadline` is read before the search (one search over the venue's fingerprints, bounded
    /// by `maxLocateK` and `maxScanReadings`).
    public func locate(_ readings: [(beacon: String, rssi: Double)], in venue: IndoorVenue,
                       options: LocateOptions = LocateOptions(), deadline: Deadline = .none) throws(EngineError) -> Location {
        try deadline.check()
        guard options.k >= 1 && options.k <= limits.maxLocateK else {
            throw .invalidArgument(parameter: "k", message: "must be between 1 and \(limits.maxLocateK), got \(options.k)")
        }
        guard let locator = venue.locators[options.fingerprints] else { throw .store("venue '\(venue.name)' has no \(options.fingerprints.rawValue) fingerprints") }
        let scan: (vector: [Double], unknown: [String])
        do {
            scan = try locator.vector(readings, maxReadings: limits.maxScanReadings)
        } catch {
            throw .scan(error)
        }
        guard let position = locator.locate(scan.vector, k: options.k, method: options.method) else {
            throw .store("venue '\(venue.name)' has no survey scans to locate by")
        }
        return Location(venue: venue, position: position, options: options, ignored: scan.unknown)
    }

    /// Evaluates the positioning on the venue's own survey (leave-one-out or a train/test split).
    public func evaluate(_ venue: IndoorVenue, options: EvaluationOptions) throws(EngineError) -> Evaluation {
        do {
            return try Evaluator.evaluate(venue.venue, options: options)
        } catch {
            throw .invalidArgument(parameter: "split", message: error.description)
        }
    }

    /// Loads the store's venues and indexes them; a venue that cannot be read is left out with
    /// a warning, as a bad feature is.
    static func loadVenues(_ store: GeoPackage) -> (venues: [IndoorVenue], warnings: [String]) {
        var venues: [IndoorVenue] = []
        var warnings: [String] = []
        let names: [String]
        do {
            names = try IndoorStore.venueNames(in: store)
        } catch {
            return ([], ["indoor venues: \(error)"])
        }
        for name in names {
            do {
                venues.append(try IndoorVenue(IndoorStore.venue(name, in: store)))
            } catch {
                warnings.append("venue '\(name)': left out: \(error)")
            }
        }
        return (venues, warnings)
    }
}
