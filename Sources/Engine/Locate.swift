// Where am I inside: a phone's beacon scan located in a venue by its fingerprints (the Indoor
// module). The snapshot loads every venue of the store with its survey and builds its
// fingerprint indexes once (`IndoorVenue`); `locate` checks the scan by one rule and answers
// from them. docs/ARCHITECTURE.md ("Indoor positioning") tells the method and why.

import Geometry
import Indoor
import Live
import Store
import Support

public typealias Venue = Indoor.Venue
public typealias Position = Indoor.Position
public typealias Neighbour = Indoor.Neighbour
public typealias Observation = Indoor.Observation
public typealias TrackOptions = Indoor.TrackOptions
// The survey model, for callers that add scans to a venue (`Engine.appendSurvey`).
public typealias SurveyTime = Indoor.SurveyTime
public typealias Scan = Indoor.Scan
public typealias Reading = Indoor.Reading
public typealias ReferencePoint = Indoor.ReferencePoint
public typealias Beacon = Indoor.Beacon
public typealias Floor = Indoor.Floor
public typealias ModelSettings = Indoor.ModelSettings
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
    public let locator: Locator

    public var name: String { venue.name }

    init(_ venue: Venue) throws(EngineError) {
        self.venue = venue
        do {
            locator = try Locator(venue: venue)
        } catch {
            throw .store("venue '\(venue.name)': cannot index its fingerprints: \(error)")
        }
    }

    /// How many distinct signal vectors the index of `kind` holds (scans share many).
    public func distinctFingerprints(_ kind: FingerprintKind) -> Int { locator.maps[kind]?.distinctVectors ?? 0 }
}

/// What `locate` was asked. A method or k not given is the venue's (`ModelSettings`), else the
/// probabilistic model's 10 likeliest cells (kNN's default k is 3); docs/INDOOR.md has the
/// measurements behind them.
public struct LocateOptions: Sendable, Equatable {
    public var k: Int?
    public var method: LocateMethod?
    public var fingerprints: FingerprintKind

    public static func defaultK(_ method: LocateMethod) -> Int { method == .gaussian ? 10 : 3 }

    public init(k: Int? = nil, method: LocateMethod? = nil, fingerprints: FingerprintKind = .scans) {
        self.k = k
        self.method = method
        self.fingerprints = fingerprints
    }

    /// The method and k for `venue`: as given, else the venue's, else the defaults.
    public func resolved(for venue: Venue) -> (method: LocateMethod, k: Int) {
        let method = method ?? venue.model.method ?? .gaussian
        return (method, k ?? (method == venue.model.method ? venue.model.k : nil) ?? LocateOptions.defaultK(method))
    }
}

/// The answer to a locate: the position and how it was found.
public struct Location: Sendable {
    public let venue: IndoorVenue
    public let position: Position
    /// As asked, with the method and k it was answered with.
    public let options: LocateOptions
    /// Beacons of the scan that the venue does not know, left out of the comparison.
    public let ignored: [String]

    public var method: LocateMethod { options.method ?? .gaussian }
    public var k: Int { options.k ?? 0 }

    /// The label of the reference point nearest to the estimate.
    public var pointLabel: String { venue.venue.points[position.point].label }
}

/// A store writer that can add scans to a venue's survey (the GeoPackage's; PostGIS stores
/// keep no venues).
protocol SurveyWriter {
    func appendSurvey(_ part: Venue) throws(EngineError) -> Venue
}

extension Engine {
    /// Adds survey scans to the venue `part` names (its new points and beacons with them), as a
    /// surveyor's app uploads them: durable when this returns (one transaction) and located by
    /// the next request (the venue's model is rebuilt and swapped in; everything else is shared).
    public func appendSurvey(_ part: Venue) throws(EngineError) -> IndoorVenue {
        try updating { (writer: any StoreWriter) throws(EngineError) -> IndoorVenue in
            guard let surveys = writer as? any SurveyWriter else {
                throw .write(code: "not_supported", category: .impossible, message: "this store keeps no indoor venues: survey scans go into a GeoPackage store")
            }
            let venue = try IndoorVenue(try surveys.appendSurvey(part))
            swap(try storeSnapshot.replacing(venue))
            return venue
        }
    }
}

extension Snapshot {
    /// This snapshot with `venue` in place of the one of its name (or added), all else shared.
    func replacing(_ venue: IndoorVenue) throws(EngineError) -> Snapshot {
        var venues = self.venues.filter { $0.name.lowercased() != venue.name.lowercased() }
        venues.append(venue)
        venues.sort { $0.name < $1.name }
        return try Snapshot(storePath: storePath, layers: layers, timeSeriesByTable: timeSeriesByTable, timeSeriesByLayer: timeSeriesByLayer,
                            tileSets: tileSets, unavailableTileSets: unavailableTileSets, loadSeconds: loadSeconds, limits: limits,
                            venues: venues, venueWarnings: venueWarnings, database: database, networks: networks)
    }
}

/// A located phone placed in a live layer (its fences evaluated), as `placeInLiveLayer` did it.
public struct LivePlacement: Sendable {
    public let layer: String
    public let id: String
    public let receipt: PositionReceipt
}

extension Engine {
    /// Places located positions (a scan's, or a track's in order) in a live layer as object
    /// `id`, so that its fences fire: "who entered which room". Needs a venue on the globe;
    /// the object's fields say the venue, floor and nearest reference point. Positions without
    /// a time take `now`.
    public func placeInLiveLayer(_ layer: String, id: String, venue: IndoorVenue, positions: [(position: Position, time: Double?)],
                                 now: Double) throws(EngineError) -> LivePlacement {
        guard !id.isEmpty, id.utf8.count <= 200 else { throw .invalidArgument(parameter: "id", message: "the live object's id is 1 to 200 bytes") }
        var updates: [PositionUpdate] = []
        for (position, time) in positions {
            guard let lonLat = position.lonLat else {
                throw .invalidArgument(parameter: "live", message: "venue '\(venue.name)' has no frame on the globe, so its positions cannot go into a live layer: import it with --origin LON,LAT")
            }
            let fields = JSONObject([("venue", .string(venue.name)), ("floor", .integer(Int64(position.floor))),
                                     ("point", .string(venue.venue.points[position.point].label))])
            updates.append(PositionUpdate(id: id, point: lonLat, time: time ?? now, fields: fields))
        }
        return LivePlacement(layer: layer, id: id, receipt: try updatePositions(layer, updates))
    }
}

/// The answer to a track: a position per scan, in the order sent.
public struct TrackLocation: Sendable {
    public let venue: IndoorVenue
    public let positions: [Position]
    public let times: [Double?]
    public let options: TrackOptions
    /// Beacons of the scans that the venue does not know, left out (at most 100 named).
    public let ignored: [String]
}

extension Snapshot {
    /// The names of the venues, in order.
    public var venueNames: [String] { venues.map(\.name) }

    /// The venue of that name (case-insensitive), or an error suggesting the closest name.
    public func venue(_ name: String) throws(EngineError) -> IndoorVenue {
        guard let venue = venuesByName[name.lowercased()] else { throw .unknownVenue(name, known: venueNames) }
        return venue
    }

    /// The venue named, or the store's only one.
    public func onlyOrNamedVenue(_ name: String?) throws(EngineError) -> IndoorVenue {
        if let name { return try venue(name) }
        guard venues.count == 1, let only = venues.first else {
            throw .invalidArgument(parameter: "venue", message: venues.isEmpty
                ? "the store has no venues (import a survey with vltava indoor import)"
                : "name the venue (venues: \(venueNames.joined(separator: ", ")))")
        }
        return only
    }

    /// Locates a scan (beacon id → dBm) in `venue`. Errors: a strength outside -200…0 dBm, a
    /// beacon twice, no beacon of the venue heard (`EngineError.scan`), k out of 1…`maxLocateK`.
    /// `deadline` is read before the search (one search over the venue's fingerprints, bounded
    /// by `maxLocateK` and `maxScanReadings`).
    public func locate(_ readings: [(beacon: String, rssi: Double)], in venue: IndoorVenue,
                       options: LocateOptions = LocateOptions(), deadline: Deadline = .none) throws(EngineError) -> Location {
        try deadline.check()
        let (method, k) = options.resolved(for: venue.venue)
        guard k >= 1 && k <= limits.maxLocateK else {
            throw .invalidArgument(parameter: "k", message: "must be between 1 and \(limits.maxLocateK), got \(k)")
        }
        let scan: (observation: Observation, unknown: [String])
        do {
            scan = try venue.locator.observation(readings, maxReadings: limits.maxScanReadings)
        } catch {
            throw .scan(error)
        }
        guard let position = venue.locator.locate(scan.observation, k: k, method: method, fingerprints: options.fingerprints) else {
            throw .store("venue '\(venue.name)' has no survey scans to locate by")
        }
        let answered = LocateOptions(k: k, method: method, fingerprints: options.fingerprints)
        return Location(venue: venue, position: position, options: answered, ignored: scan.unknown)
    }

    /// Locates a walking phone's scans together (Indoor/Track.swift): a position per scan, in
    /// the order given. Times are seconds (any epoch) and must not go back; scans without one
    /// are `options.interval` apart. Each scan is checked as `locate` checks one; a bad one is
    /// named by its place in the track. The deadline is checked at every step.
    public func locateTrack(_ scans: [(time: Double?, readings: [(beacon: String, rssi: Double)])], in venue: IndoorVenue,
                            options: TrackOptions = TrackOptions(), deadline: Deadline = .none) throws(EngineError) -> TrackLocation {
        try deadline.check()
        guard !scans.isEmpty, scans.count <= limits.maxTrackScans else {
            throw .invalidArgument(parameter: "scans", message: "a track has 1 to \(limits.maxTrackScans) scans, got \(scans.count)")
        }
        guard options.k >= 1 && options.k <= limits.maxLocateK else {
            throw .invalidArgument(parameter: "k", message: "must be between 1 and \(limits.maxLocateK), got \(options.k)")
        }
        guard options.speed.isFinite && options.speed > 0 && options.speed <= 1000 else {
            throw .invalidArgument(parameter: "speed", message: "must be above 0 and at most 1000 (frame units a second), got \(options.speed)")
        }
        guard options.interval.isFinite && options.interval > 0 && options.interval <= 86_400 else {
            throw .invalidArgument(parameter: "interval", message: "must be above 0 s and at most a day, got \(options.interval)")
        }
        let cells = venue.locator.cells.cells.count
        guard cells <= TrackOptions.maxCells else {
            throw .invalidArgument(parameter: "venue", message: "venue '\(venue.name)' has \(cells) cells; tracks walk at most \(TrackOptions.maxCells)")
        }
        var timed: [(time: SurveyTime?, observation: Observation)] = []
        var ignored: [String] = []
        var previous = -Double.infinity
        for (i, scan) in scans.enumerated() {
            if let time = scan.time {
                guard time.isFinite, time >= previous else {
                    throw .invalidArgument(parameter: "scans", message: "scan \(i + 1): its time \(time) is not a number at or after the scan before's")
                }
                previous = time
            }
            do {
                let checked = try venue.locator.observation(scan.readings, maxReadings: limits.maxScanReadings)
                timed.append((scan.time.map(SurveyTime.init(seconds:)), checked.observation))
                for beacon in checked.unknown where !ignored.contains(beacon) && ignored.count < 100 { ignored.append(beacon) }
            } catch {
                throw .invalidArgument(parameter: "scans", message: "scan \(i + 1): \(error.description)")
            }
        }
        let positions = try venue.locator.locateTrack(timed, options: options, check: { () throws(EngineError) in try deadline.check() })
        return TrackLocation(venue: venue, positions: positions, times: scans.map(\.time), options: options, ignored: ignored)
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
