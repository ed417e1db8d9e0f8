// Evaluating the positioning on a venue's own survey, as the Radio F-Prints thesis did (leave
// one out) and with train/test splits by time or by a column: each test scan is located
// against fingerprints built without it, and its error is the distance from the estimate to
// where it was taken. Errors are in the frame's units (and in cells: divided by the grid's
// cell size); an estimate is in the exact cell when it lies within half a cell of the true
// point on both axes (with no grid: when the reference point nearest to it is the true one).

import Geometry

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

        public var description: String {
            switch self {
            case .leaveOneOut: "leave-one-out"
            case .testFrom(let time): "test from \(time.iso), train before"
            case .latest(let fraction): "test the latest \(shortNumber(fraction * 100)) % by time, train on the earlier"
            case .column(let column, let values): "test where \(column) is \(values.joined(separator: " or ")), train on the others"
            }
        }
    }

    public var split: Split = .leaveOneOut
    public var k: [Int] = [1, 3, 5]
    public var methods: [LocateMethod] = [.knn, .wknn]
    public var fingerprints: [FingerprintKind] = [.scans]

    public init() {}
}

/// One setting's result: the error of every test scan, and what they add up to.
public struct EvaluationResult: Sendable {
    public let method: LocateMethod
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
}

public enum Evaluator {
    public static func evaluate(_ venue: Venue, options: EvaluationOptions) throws(IndoorError) -> Evaluation {
        guard options.k.allSatisfy({ $0 >= 1 && $0 <= 1000 }) else { throw .invalidOption("k must be from 1 to 1000") }
        let all = Array(venue.scans.indices)
        var train: [Int] = all, test: [Int] = all
        switch options.split {
        case .leaveOneOut:
            break
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
        case .column(let column, let values):
            guard venue.scans.contains(where: { $0.attributes[column] != nil }) else {
                let known = Set(venue.scans.flatMap(\.attributes.keys)).sorted()
                throw .invalidOption("the scans have no column \(Quote.input(column))" + (known.isEmpty ? " (they have no other columns)" : " (columns: \(known.joined(separator: ", ")))"))
            }
            let wanted = Set(values)
            test = all.filter { venue.scans[$0].attributes[column].map(wanted.contains) ?? false }
            train = all.filter { !(venue.scans[$0].attributes[column].map(wanted.contains) ?? false) }
        }
        guard !test.isEmpty, !train.isEmpty || options.split == .leaveOneOut, venue.scans.count >= 2 else {
            throw .invalidOption("the split leaves \(train.count) scans to train on and \(test.count) to test")
        }
        let vectors = venue.scans.map { FingerprintMap.vector(of: $0, dimensions: max(1, venue.beacons.count)) }
        var results: [EvaluationResult] = []
        for kind in options.fingerprints {
            // One set of fingerprints for a split; for leave-one-out, the left-out scan is left
            // out of the index (scans) or its point's fingerprint is rebuilt without it.
            let shared: Locator?
            do {
                shared = options.split == .leaveOneOut && kind != .scans ? nil : Locator(venue: venue, map: try FingerprintMap(venue: venue, kind: kind, using: train))
            } catch {
                throw .store("cannot index the fingerprints: \(error)")
            }
            for method in options.methods {
                for k in options.k {
                    var errors: [Double] = []
                    var exact = 0
                    var elapsed = Duration.zero
                    let clock = ContinuousClock()
                    for s in test {
                        let locator: Locator
                        var excluding: Int?
                        if let shared {
                            locator = shared
                            if options.split == .leaveOneOut { excluding = s }  // entries are the scans, in order
                        } else {
                            do {
                                locator = Locator(venue: venue, map: try FingerprintMap(venue: venue, kind: kind, using: all.filter { $0 != s }))
                            } catch {
                                throw .store("cannot index the fingerprints: \(error)")
                            }
                        }
                        let start = clock.now
                        let found = locator.locate(vectors[s], k: k, method: method, excluding: excluding)
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
                    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                    results.append(EvaluationResult(method: method, fingerprints: kind, k: k,
                                                    trained: options.split == .leaveOneOut ? all.count - 1 : train.count,
                                                    tested: errors.count, errors: errors, exact: exact, seconds: seconds))
                }
            }
        }
        return Evaluation(venue: venue, split: options.split, results: results)
    }
}
