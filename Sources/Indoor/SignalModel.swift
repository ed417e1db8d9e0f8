// How a venue's survey becomes a model: what a beacon not heard is worth, and how strengths
// are represented before they are compared. A venue keeps its settings (indoor_venues.model);
// the defaults were chosen by measurement on two real surveys (docs/INDOOR.md has the numbers).
//
// - Unheard: a fixed dBm value, or learned from the survey: the weakest strength it heard,
//   minus a margin (10 dB by default). A fixed -200 dBm made "heard or not" outweigh every
//   strength on a survey where 45 % of the pairs are unheard; a value just below the weakest
//   heard one keeps an unheard beacon "weaker than anything heard", no more.
// - Representations (Torres-Sospedra et al. 2015, "Comprehensive analysis of distance and
//   similarity measures for Wi-Fi fingerprinting indoor positioning systems"), with `min` the
//   unheard value: positive = rssi - min (0 when unheard); exponential = exp(positive / 24) /
//   exp(-min / 24); powed = positive^e / (-min)^e; dBm as heard, `min` when unheard.

import Foundation
import Geometry
import Support

/// A venue's model settings.
public struct ModelSettings: Sendable, Equatable, CustomStringConvertible {
    public enum Unheard: Sendable, Equatable {
        /// This many dBm.
        case value(Double)
        /// The weakest strength the survey heard, minus `margin` dB.
        case learned(margin: Double)
    }

    public enum Representation: String, Sendable, CaseIterable {
        case dbm, positive, exponential, powed
    }

    public var unheard: Unheard
    public var representation: Representation
    /// The venue's method and k for a locate that names none (nil: gaussian, and 10 for it or
    /// 3 for the others): what `vltava indoor evaluate --apply` stores.
    public var method: LocateMethod?
    public var k: Int?

    public init(unheard: Unheard = .learned(margin: 10), representation: Representation = .dbm, method: LocateMethod? = nil, k: Int? = nil) {
        self.unheard = unheard
        self.representation = representation
        self.method = method
        self.k = k
    }

    /// `unheard=learned-10,representation=dbm[,method=gaussian,k=10]` or `unheard=-105,…`: the
    /// stored and the CLI's spelling.
    public var description: String {
        let unheardText: String
        switch unheard {
        case .value(let value): unheardText = shortNumber(value)
        case .learned(let margin): unheardText = "learned-\(shortNumber(margin))"
        }
        return "unheard=\(unheardText),representation=\(representation.rawValue)"
            + (method.map { ",method=\($0.rawValue)" } ?? "") + (k.map { ",k=\($0)" } ?? "")
    }

    /// Reads `description`'s spelling; each part may be left out (its default stays). The
    /// unheard value is -200…-1 dBm, the margin 0…100 dB.
    public static func parse(_ text: String) throws(IndoorError) -> ModelSettings {
        var settings = ModelSettings()
        for part in text.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map { String($0).trimmingSpaces }
            guard pair.count == 2 else { throw .invalidOption("\(Quote.input(String(part))) is not name=value (unheard=learned-10, representation=dbm)") }
            switch pair[0].lowercased() {
            case "unheard":
                let value = pair[1].lowercased()
                if value == "learned" {
                    settings.unheard = .learned(margin: 10)
                } else if value.hasPrefix("learned-") {
                    guard let margin = Double(value.dropFirst("learned-".count)), margin >= 0, margin <= 100 else {
                        throw .invalidOption("unheard=\(pair[1]): the margin after 'learned-' is 0 to 100 dB")
                    }
                    settings.unheard = .learned(margin: margin)
                } else {
                    guard let dBm = Double(value), dBm >= -200, dBm <= -1 else {
                        throw .invalidOption("unheard=\(pair[1]): a number of dBm from -200 to -1, or learned, or learned-MARGIN")
                    }
                    settings.unheard = .value(dBm)
                }
            case "representation":
                guard let representation = Representation(rawValue: pair[1].lowercased()) else {
                    throw .invalidOption("representation=\(pair[1]): one of \(Representation.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                settings.representation = representation
            case "method":
                guard let method = LocateMethod(rawValue: pair[1].lowercased()) else {
                    throw .invalidOption("method=\(pair[1]): one of \(LocateMethod.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                settings.method = method
            case "k":
                guard let k = Int(pair[1]), (1...100).contains(k) else { throw .invalidOption("k=\(pair[1]): a whole number from 1 to 100") }
                settings.k = k
            default:
                throw .invalidOption("\(Quote.input(pair[0])) is not a model setting (unheard, representation, method, k)")
            }
        }
        return settings
    }
}

/// Signal space as a venue's settings make it: the unheard value resolved on its survey, and
/// the representation applied to every strength.
public struct SignalSpace: Sendable, Equatable {
    public let dimensions: Int
    /// The dBm value of a beacon not heard.
    public let unheard: Double
    public let representation: ModelSettings.Representation

    public init(venue: Venue, settings: ModelSettings) {
        dimensions = max(1, venue.beacons.count)
        var unheard: Double
        switch settings.unheard {
        case .value(let value):
            unheard = value
        case .learned(let margin):
            var weakest = 0.0
            for scan in venue.scans { for reading in scan.readings where reading.rssi < weakest { weakest = reading.rssi } }
            unheard = max(ScanError.rssiRange.lowerBound, weakest - margin)
        }
        // Below 0 dBm, so that powed's (-min)^e divides by more than 0.
        self.unheard = min(unheard, -1)
        representation = settings.representation
    }

    /// One strength (nil: not heard) in the representation.
    @inline(__always)
    public func value(_ rssi: Double?) -> Double {
        // Not heard, or heard weaker than the unheard value: positive 0.
        let positive = rssi.map { max(0, $0 - unheard) } ?? 0
        switch representation {
        case .dbm: return unheard + positive
        case .positive: return positive
        case .exponential: return exp(positive / 24) / exp(-unheard / 24)
        case .powed: return pow(positive, M_E) / pow(-unheard, M_E)
        }
    }

    /// A scan as a point of this space: per beacon the mean dBm of its readings, represented.
    public func vector(of scan: Scan) -> [Double] {
        var sums = [Double](repeating: 0, count: dimensions)
        var counts = [Int](repeating: 0, count: dimensions)
        for reading in scan.readings where reading.beacon < dimensions {
            sums[reading.beacon] += reading.rssi
            counts[reading.beacon] += 1
        }
        return (0..<dimensions).map { counts[$0] == 0 ? value(nil) : value(sums[$0] / Double(counts[$0])) }
    }

    /// Per beacon the mean dBm heard, nil when not heard (what the probabilistic model reads).
    public func strengths(of scan: Scan) -> [Double?] {
        var sums = [Double](repeating: 0, count: dimensions)
        var counts = [Int](repeating: 0, count: dimensions)
        for reading in scan.readings where reading.beacon < dimensions {
            sums[reading.beacon] += reading.rssi
            counts[reading.beacon] += 1
        }
        return (0..<dimensions).map { counts[$0] == 0 ? nil : sums[$0] / Double(counts[$0]) }
    }
}
