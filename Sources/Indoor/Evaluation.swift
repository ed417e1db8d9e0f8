// Evaluating the positioning on a venue's own survey, as the Radio F-Prints thesis did (leave
// one out) and with train/test splits by time or by a column: each test scan is located
// against fingerprints built without it, and its error is the distance from the estimate to
// where it was taken. Errors are in the frame's units (and in cells: divided by the grid's
// cell size); an estimate is in the exact cell when it lies within half a cell of the true
// point on both axes (with no grid: when the reference point nearest to it is the true one).

import Geometry
import Support

public struct EvaluationOptions: Sendable {
    public enum Split: Sendable, Equatable, CustomStringConvertible {
        /// Every scan in turn, against the fingerprints of all the others.
        case leaveOneOut
        /// Test the scans taken at or after `time`, against those taken before.
        case testFrom(SurveyTime)
        /// Test the latest `fraction` of the scans by time, against the earlier ones.
        case latest(fraction: Double)
        /// Test the scans whose column `column` holds one of `values`, against the others.
        case column(String, values: [String])
        /// Cross-validation: the survey cut into this many blocks in its order (a survey in time
        /// order: its runs), each tested against a model of the others.
        case folds(Int)
        /// Test a separate track of this many scans, against the whole survey.
        case track(tested: Int)

        public var description: String {
            switch self {
            case .leaveOneOut: "leave-one-out"
            case .testFrom(let time): "test from \(time.iso), train before"
            case .latest(let fraction): "test the latest \(shortNumber(fraction * 100)) % by time, train on the earlier"
            case .column(let column, let values): "test where \(column) is \(values.joined(separator: " or ")), train on the others"
            case .folds(let n): "\(n) blocks in survey order, each tested against the others"
            case .track(let tested): "test a track of \(tested) scans, train on the whole survey"
            }
        }
    }

    public var split: Split = .leaveOneOut
    public var k: [Int] = [1, 3, 5]
    public var methods: [LocateMethod] = LocateMethod.allCases
    public var fingerprints: [FingerprintKind] = [.scans]
    /// Model settings to compare; empty: the venue's own.
    public var models: [ModelSettings] = []

    public init() {}
}

/// One setting's result: the error of every test scan, and what they add up to.
public struct EvaluationResult: Sendable {
    public let model: ModelSettings
    public let method: LocateMethod
    /// For a test track: nil when each scan was located on its own, else `smooth` or `filter`
    /// (Track.swift).
    public var tracking: String? = nil
    public let fingerprints: FingerprintKind
    public let k: Int
    /// Scans in the fingerprints (per fold for leave-one-out) and scans located.
    public let trained: Int
    public let tested: Int
    /// Per test scan, the distance from the estimate to its point, in the frame's units
    /// (infinity when it was placed on another floor).
    public let errors: [Double]
    /// Test scans placed in their exact cell.
    public let exact: Int
    /// Seconds spent locating (building the fingerprints not counted).
    public let seconds: Double

    public var median: Double { Self.percentile(errors, 0.5) }
    public var p90: Double { Self.percentile(errors, 0.9) }
    public var maximum: Double { errors.max() ?? .nan }
    public var exactShare: Double { tested == 0 ? .nan : Double(exact) / Double(tested) }
    public var microsecondsPerLocate: Double { tested == 0 ? .nan : seconds * 1e6 / Double(tested) }

    /// Linear interpolation between the closest ranks (NumPy's default), so the numbers match
    /// those of the scikit-learn anchor.
    /// NaN for no values or a `q` outside 0…1 (which would index outside the values).
    public static func percentile(_ values: [Double], _ q: Double) -> Double {
        guard !values.isEmpty, q >= 0, q <= 1 else { return .nan }
        let sorted = values.sorted()
        let position = Double(sorted.count - 1) * q
        let low = Int(position.rounded(.down))
        let high = min(low + 1, sorted.count - 1)
        let fraction = position - Double(low)
        if fraction == 0 || sorted[low] == sorted[high] { return sorted[low] }
        return sorted[low] + (sorted[high] - sorted[low]) * fraction
    }
}

public struct Evaluation: Sendable {
    public let venue: Venue
    public let split: EvaluationOptions.Split
    public let results: [EvaluationResult]

    /// The setting with the lowest median error, then p90: what the split picks (on the
    /// survey alone, by leave-one-out or `folds`, this is a choice made on training data).
    public var best: EvaluationResult? {
        results.filter { $0.tracking == nil && $0.tested > 0 }.min { ($0.median, $0.p90) < ($1.median, $1.p90) }
    }
}

public enum Evaluator {
    public static func evaluate(_ venue: Venue, options: EvaluationOptions) throws(IndoorError) -> Evaluation {
        guard options.k.allSatisfy({ $0 >= 1 && $0 <= 1000 }) else { throw .invalidOption("k must be from 1 to 1000") }
        let all = Array(venue.scans.indices)
        var train: [Int] = all, test: [Int] = all
        // Each fold's training scans (nil: leave-one-out over all) and test scans.
        var folds: [(train: [Int]?, test: [Int])] = []
        switch options.split {
        case .leaveOneOut:
            folds = [(nil, all)]
        case .folds(let n):
            guard (2...50).contains(n), n <= all.count else { throw .invalidOption("folds must be from 2 to 50 and at most the survey's \(all.count) scans, got \(n)") }
            for f in 0..<n {
                let block = Array(all[(all.count * f / n)..<(all.count * (f + 1) / n)])
                let held = Set(block)
                folds.append((all.filter { !held.contains($0) }, block))
            }
        case .testFrom(let time):
            guard venue.scans.allSatisfy({ $0.time != nil }) else { throw .invalidOption("a split by time needs a time on every scan") }
            test = all.filter { venue.scans[$0].time.map { $0 >= time } ?? false }
            train = all.filter { venue.scans[$0].time.map { $0 < time } ?? false }
        case .latest(let fraction):
            guard fraction > 0 && fraction < 1 else { throw .invalidOption("the test fraction must lie between 0 and 1, got \(fraction)") }
            guard venue.scans.allSatisfy({ $0.time != nil }) else { throw .invalidOption("a split by time needs a time on every scan") }
            let byTime = all.sorted { (venue.scans[$0].time?.seconds ?? 0, $0) < (venue.scans[$1].time?.seconds ?? 0, $1) }
            let cut = byTime.count - Int((Double(byTime.count) * fraction).rounded())
            train = Array(byTime[..<cut]).sorted()
            test = Array(byTime[cut...]).sorted()
        case .track:
            throw .invalidOption("a track is tested with its file (evaluate(_:track:truth:options:))")
        case .column(let column, let values):
            guard venue.scans.contains(where: { $0.attributes[column] != nil }) else {
                let known = Set(venue.scans.flatMap(\.attributes.keys)).sorted()
                throw .invalidOption("the scans have no column \(Quote.input(column))" + (known.isEmpty ? " (they have no other columns)" : " (columns: \(known.joined(separator: ", ")))"))
            }
            let wanted = Set(values)
            test = all.filter { venue.scans[$0].attributes[column].map(wanted.contains) ?? false }
            train = all.filter { !(venue.scans[$0].attributes[column].map(wanted.contains) ?? false) }
        }
        if folds.isEmpty { folds = [(train, test)] }
        guard folds.allSatisfy({ !$0.test.isEmpty && $0.train?.isEmpty != true }), venue.scans.count >= 2 else {
            throw .invalidOption("the split leaves \(train.count) scans to train on and \(test.count) to test")
        }
        var results: [EvaluationResult] = []
        for model in options.models.isEmpty ? [venue.model] : options.models {
            var venue = venue
            venue.model = model
            // One model for a split, and for leave-one-out one over every scan that leaves the
            // test scan out of its scans' index and its cells; the mean and median fingerprints
            // (and the ensemble, which reads them) are rebuilt without it.
            let shared = try folds.map { fold throws(IndoorError) in try locator(venue, using: fold.train) }
            let observations = venue.scans.map(shared[0].observation(of:))
            for (kind, method) in settings(options) {
                let rebuild = options.split == .leaveOneOut && (method == .ensemble || (kind != .scans && method != .gaussian))
                var perScan: [Int: Locator] = [:]
                for k in options.k {
                    var errors: [Double] = []
                    var exact = 0
                    var elapsed = Duration.zero
                    let clock = ContinuousClock()
                    for (f, fold) in folds.enumerated() {
                        for s in fold.test {
                            var locator = shared[f]
                            if rebuild {
                                if let built = perScan[s] {
                                    locator = built
                                } else {
                                    locator = try Evaluator.locator(venue, using: all.filter { $0 != s })
                                    if options.k.count > 1 { perScan[s] = locator }
                                }
                            }
                            let excluding = fold.train == nil && !rebuild ? s : nil
                            let start = clock.now
                            let found = locator.locate(observations[s], k: k, method: method, fingerprints: kind, excluding: excluding)
                            elapsed += clock.now - start
                            guard let found else { continue }
                            let truth = venue.points[venue.scans[s].point]
                            guard found.floor == truth.floor else {
                                errors.append(.infinity)
                                continue
                            }
                            let (dx, dy) = (found.x - truth.x, found.y - truth.y)
                            errors.append((dx * dx + dy * dy).squareRoot())
                            if let grid = venue.grid {
                                if abs(dx) < grid.cellSize / 2 && abs(dy) < grid.cellSize / 2 { exact += 1 }
                            } else if found.point == venue.scans[s].point {
                                exact += 1
                            }
                        }
                    }
                    let trained = folds.count == 1 ? (folds[0].train?.count ?? all.count - 1) : all.count - all.count / folds.count
                    results.append(EvaluationResult(model: model, method: method, fingerprints: kind, k: k, trained: trained,
                                                    tested: errors.count, errors: errors, exact: exact, seconds: Evaluator.seconds(elapsed)))
                }
            }
        }
        return Evaluation(venue: venue, split: options.split, results: results)
    }

    /// What a test track's estimates are measured against: each scan's own position, or the
    /// path that was walked (segments x0 y0 x1 y1), when the track has no positions: the
    /// distance to the path is then a lower bound of the error.
    public enum Truth: Sendable {
        case positions
        case path([(x0: Double, y0: Double, x1: Double, y1: Double)])
    }

    /// Trains on the whole venue and tests on a separate track (its beacons matched by id):
    /// every method and k scan by scan, then the track smoothed and filtered (Track.swift).
    public static func evaluate(_ venue: Venue, track: (beacons: [String], scans: [TrackScan]), truth: Truth,
                                options: EvaluationOptions, trackOptions: TrackOptions = TrackOptions()) throws(IndoorError) -> Evaluation {
        guard options.k.allSatisfy({ $0 >= 1 && $0 <= 1000 }) else { throw .invalidOption("k must be from 1 to 1000") }
        guard !track.scans.isEmpty else { throw .invalidOption("the test track has no scans") }
        if case .positions = truth, track.scans.contains(where: { $0.truth == nil }) {
            throw .invalidOption("the test track has no positions: give the path that was walked")
        }
        var results: [EvaluationResult] = []
        for model in options.models.isEmpty ? [venue.model] : options.models {
            var venue = venue
            venue.model = model
            let locator = try Evaluator.locator(venue, using: nil)
            let observations = track.scans.map { locator.observation(of: $0, beacons: track.beacons) }
            func error(_ found: Position, _ scan: TrackScan) -> Double {
                switch truth {
                case .positions:
                    guard let at = scan.truth else { return .nan }
                    guard at.floor == found.floor else { return .infinity }
                    return ((found.x - at.x) * (found.x - at.x) + (found.y - at.y) * (found.y - at.y)).squareRoot()
                case .path(let segments):
                    return segments.map { Evaluator.distance(x: found.x, y: found.y, to: $0) }.min() ?? .nan
                }
            }
            func result(_ method: LocateMethod, _ kind: FingerprintKind, _ k: Int, _ positions: [Position], _ seconds: Double, tracking: String? = nil) -> EvaluationResult {
                let errors = zip(positions, track.scans).map { error($0, $1) }
                let exact = zip(positions, track.scans).filter { position, scan in
                    guard let at = scan.truth else { return false }
                    return position.floor == at.floor && ((position.x - at.x) * (position.x - at.x) + (position.y - at.y) * (position.y - at.y)).squareRoot() < venue.cellSize / 2
                }.count
                var r = EvaluationResult(model: model, method: method, fingerprints: kind, k: k, trained: venue.scans.count, tested: errors.count,
                                         errors: errors, exact: exact, seconds: seconds)
                r.tracking = tracking
                return r
            }
            let clock = ContinuousClock()
            for (kind, method) in settings(options) {
                for k in options.k {
                    var positions: [Position] = []
                    let start = clock.now
                    for observation in observations {
                        if let found = locator.locate(observation, k: k, method: method, fingerprints: kind) { positions.append(found) }
                    }
                    results.append(result(method, kind, k, positions, Evaluator.seconds(clock.now - start)))
                }
            }
            let timed = zip(track.scans, observations).map { (time: $0.time, observation: $1) }
            for smooth in [true, false] {
                var options = trackOptions
                options.smooth = smooth
                let start = clock.now
                let positions = locator.locateTrack(timed, options: options, check: { () throws(Never) in })
                results.append(result(.gaussian, .scans, options.k, positions, Evaluator.seconds(clock.now - start), tracking: smooth ? "smooth" : "filter"))
            }
        }
        return Evaluation(venue: venue, split: .track(tested: track.scans.count), results: results)
    }

    /// The venue's model built from the scans `using` (all when nil).
    static func locator(_ venue: Venue, using scans: [Int]?) throws(IndoorError) -> Locator {
        do {
            return try Locator(venue: venue, using: scans)
        } catch {
            throw .store("cannot index the fingerprints: \(error)")
        }
    }

    /// The (fingerprints, method) pairs to run: each kind with each method, except the
    /// probabilistic model, which has no kinds of fingerprints and runs once.
    static func settings(_ options: EvaluationOptions) -> [(FingerprintKind, LocateMethod)] {
        options.fingerprints.flatMap { kind in
            options.methods.filter { $0 != .gaussian || kind == options.fingerprints[0] }.map { (kind, $0) }
        }
    }

    static func seconds(_ elapsed: Duration) -> Double {
        Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// The distance from (x, y) to a segment.
    static func distance(x: Double, y: Double, to s: (x0: Double, y0: Double, x1: Double, y1: Double)) -> Double {
        let (dx, dy) = (s.x1 - s.x0, s.y1 - s.y0)
        let length2 = dx * dx + dy * dy
        let t = length2 > 0 ? min(1, max(0, ((x - s.x0) * dx + (y - s.y0) * dy) / length2)) : 0
        let (px, py) = (s.x0 + t * dx - x, s.y0 + t * dy - y)
        return (px * px + py * py).squareRoot()
    }
}
