// Fingerprint positioning: a phone's scan (beacon → dBm) is compared with the survey's
// fingerprints in signal space, and the position is estimated from the nearest or likeliest.
//
// - Signal space: one dimension per beacon of the venue, Euclidean distance on the venue's
//   representation of the strengths (SignalModel.swift: dBm by default, with an unheard beacon
//   10 dB below the weakest strength the survey heard). A beacon of the scan the venue does not
//   know is left out (and reported); a beacon heard several times in one scan counts the mean.
// - Fingerprints: every survey scan (`scans`), or one per reference point (`mean`, `median`)
//   from the heard readings only: per beacon the mean or median of the strengths heard there,
//   when at least half of the point's scans heard it, and unheard otherwise.
// - kNN: the k nearest fingerprints, ties broken by survey order (as scikit-learn's brute force
//   does); the position is the mean of their points. Weighted kNN (`wknn`) weighs each by 1 /
//   its signal distance, and when some are at distance 0, those alone (scikit-learn's rule).
// - `gaussian`: the probabilistic model of CellModel.swift, the k likeliest cells.
// - `ensemble`: per axis, the median of wknn on the scans, wknn on the points' mean
//   fingerprints and the gaussian (the field's finding: a median of methods beats its members
//   more often than not); the floor is the members' majority.
// - The floor comes first: for `gaussian` the floor with the most posterior mass over every
//   cell, for kNN the one with the most weight among the k (`floorConfidence`: that share);
//   x/y are averaged over the neighbours on that floor. The spread is the weighted RMS distance
//   of those neighbours' points from the estimate: 0 when they all agree, an error estimate
//   otherwise.
//
// The fingerprints sit in a k-d tree (`VectorTree`), each distinct vector once with the number
// of scans sharing it, so a locate visits a few leaves, not every scan of the survey.

import Foundation
import Geometry
import SpatialIndex

public enum FingerprintKind: String, Sendable, CaseIterable {
    case scans, mean, median
}

public enum LocateMethod: String, Sendable, CaseIterable {
    case knn, wknn, gaussian, ensemble
}

/// A venue's fingerprints and their index, built once (when a snapshot loads).
public struct FingerprintMap: Sendable {
    public let kind: FingerprintKind
    public let dimensions: Int
    /// Per entry (a scan, or a point for the aggregated kinds): its reference point, and its
    /// scan in the survey when the entries are scans.
    public let entryPoints: [Int]
    public let entryScans: [Int]?
    /// Distinct vectors, indexed; `groupEntries[groupStart[g] ..< groupStart[g + 1]]` are the
    /// entries (ascending) that share vector g.
    let tree: VectorTree
    let groupStart: [Int]
    let groupEntries: [Int]
    let groupOfEntry: [Int]

    /// The number of distinct vectors in the index.
    public var distinctVectors: Int { tree.count }
    public var count: Int { entryPoints.count }

    /// The fingerprints of `venue` of the given kind, from the scans `using` (all when nil).
    public init(venue: Venue, space: SignalSpace, kind: FingerprintKind, using selected: [Int]? = nil) throws(SpatialIndexError) {
        self.kind = kind
        let d = space.dimensions
        dimensions = d
        let scans = selected ?? Array(venue.scans.indices)
        var vectors: [[Double]] = []
        var points: [Int] = []
        switch kind {
        case .scans:
            for s in scans {
                vectors.append(space.vector(of: venue.scans[s]))
                points.append(venue.scans[s].point)
            }
            entryScans = scans
        case .mean, .median:
            var byPoint: [Int: [[Double?]]] = [:]
            for s in scans { byPoint[venue.scans[s].point, default: []].append(space.strengths(of: venue.scans[s])) }
            for point in byPoint.keys.sorted() {
                guard let members = byPoint[point] else { continue }
                vectors.append((0..<d).map { b in
                    let heard = members.compactMap { $0[b] }
                    guard !heard.isEmpty, 2 * heard.count >= members.count else { return space.value(nil) }
                    return space.value(kind == .mean ? heard.reduce(0, +) / Double(heard.count) : FingerprintMap.median(heard))
                })
                points.append(point)
            }
            entryScans = nil
        }
        entryPoints = points
        // One group per distinct vector, entries in ascending order within it.
        var groupOf: [[Double]: Int] = [:]
        var members: [[Int]] = []
        var distinct: [Double] = []
        var groupOfEntry: [Int] = []
        for (entry, vector) in vectors.enumerated() {
            if let g = groupOf[vector] {
                members[g].append(entry)
                groupOfEntry.append(g)
            } else {
                groupOf[vector] = members.count
                groupOfEntry.append(members.count)
                members.append([entry])
                distinct += vector
            }
        }
        self.groupOfEntry = groupOfEntry
        var starts = [0]
        for group in members { starts.append(starts[starts.count - 1] + group.count) }
        groupStart = starts
        groupEntries = members.flatMap { $0 }
        tree = try VectorTree(dimensions: d, vectors: distinct)
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let n = sorted.count
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2
    }

    /// The k entries nearest to `vector` in signal space, nearest first, ties by entry order;
    /// `excluding` leaves one entry out (leave-one-out). Distances in dB. `visited` counts the
    /// index nodes entered.
    public func nearest(to vector: [Double], k: Int, excluding: Int? = nil, visited: inout Int) -> [(entry: Int, distance: Double)] {
        let excludedGroup = excluding.map { groupOfEntry[$0] } ?? -1
        let groups = tree.nearest(to: vector, k: k, weight: { g in
            groupStart[g + 1] - groupStart[g] - (g == excludedGroup ? 1 : 0)
        }, visited: &visited)
        var found: [(entry: Int, distanceSquared: Double)] = []
        for (g, squared) in groups {
            for entry in groupEntries[groupStart[g]..<groupStart[g + 1]] where entry != excluding {
                found.append((entry, squared))
            }
        }
        if groups.count > 1 { found.sort { ($0.distanceSquared, $0.entry) < ($1.distanceSquared, $1.entry) } }
        return found.prefix(k).map { ($0.entry, $0.distanceSquared.squareRoot()) }
    }
}

/// One fingerprint used for an answer: its reference point (and survey scan), its distance in
/// signal space (dB) and its weight in the estimate.
public struct Neighbour: Sendable, Equatable {
    public let point: Int
    public let scan: Int?
    public let signalDistance: Double
    public let weight: Double
}

/// Where a scan places the phone.
public struct Position: Sendable, Equatable {
    public let floor: Int
    /// In the floor's local frame.
    public let x: Double
    public let y: Double
    /// Longitude and latitude, when the floor has a frame on the globe.
    public let lonLat: Point?
    /// The reference point nearest to the estimate, on its floor.
    public let point: Int
    /// The fingerprints the estimate was made from, nearest first.
    public let neighbours: [Neighbour]
    /// The weighted RMS distance of the neighbours' points from the estimate, in the frame's units.
    public let spread: Double
    /// The share of the evidence on `floor`: for the probabilistic model its posterior over
    /// every cell of the venue, for kNN the share of the neighbours' weight, for the ensemble
    /// and a track the share of members or probability on it. 1 on a venue of one floor.
    public var floorConfidence: Double = 1
}

/// A scan as a venue's model reads it.
public struct Observation: Sendable, Equatable {
    /// Per beacon (the venue's dimensions) the strength heard in dBm, nil when not heard.
    public let strengths: [Double?]
    /// The scan as a point of the venue's signal space.
    public let vector: [Double]
}

/// A venue ready to locate scans: its fingerprints of every kind, indexed, and its cells.
public struct Locator: Sendable {
    public let venue: Venue
    public let space: SignalSpace
    public let maps: [FingerprintKind: FingerprintMap]
    public let cells: CellModel
    /// Beacon ids → their dimension.
    public let beaconIndex: [String: Int]
    /// Reference points by floor, for the nearest point to an estimate.
    let pointsByFloor: [Int: [Int]]
    /// Survey scan → its entry in the `scans` map.
    let entryOfScan: [Int: Int]

    /// The model of `venue` (its settings) built from the scans `using` (all when nil).
    public init(venue: Venue, using selected: [Int]? = nil) throws(SpatialIndexError) {
        self.venue = venue
        let space = SignalSpace(venue: venue, settings: venue.model)
        self.space = space
        var maps: [FingerprintKind: FingerprintMap] = [:]
        for kind in FingerprintKind.allCases { maps[kind] = try FingerprintMap(venue: venue, space: space, kind: kind, using: selected) }
        self.maps = maps
        cells = CellModel(venue: venue, space: space, using: selected)
        var index: [String: Int] = [:]
        for (i, beacon) in venue.beacons.enumerated() where index[beacon.id] == nil { index[beacon.id] = i }
        beaconIndex = index
        pointsByFloor = Dictionary(grouping: venue.points.indices, by: { venue.points[$0].floor })
        var entryOfScan: [Int: Int] = [:]
        for (entry, scan) in (maps[.scans]?.entryScans ?? []).enumerated() { entryOfScan[scan] = entry }
        self.entryOfScan = entryOfScan
    }

    /// Every survey scan as this model reads it, in survey order.
    public var observations: [Observation] { venue.scans.map(observation(of:)) }

    /// A track's scan as this model reads it: its beacons (indexes into `beacons`) matched to
    /// the venue's by id; beacons the venue does not know are left out.
    public func observation(of scan: TrackScan, beacons: [String]) -> Observation {
        var sums = [Double](repeating: 0, count: space.dimensions)
        var counts = [Int](repeating: 0, count: space.dimensions)
        for reading in scan.readings where reading.beacon < beacons.count {
            guard let dimension = beaconIndex[beacons[reading.beacon]] else { continue }
            sums[dimension] += reading.rssi
            counts[dimension] += 1
        }
        let strengths = (0..<space.dimensions).map { counts[$0] == 0 ? nil : sums[$0] / Double(counts[$0]) }
        return Observation(strengths: strengths, vector: strengths.map(space.value))
    }

    /// A survey scan as this model reads it.
    public func observation(of scan: Scan) -> Observation {
        let strengths = space.strengths(of: scan)
        return Observation(strengths: strengths, vector: strengths.map(space.value))
    }

    /// The scan given as beacon ids and strengths, checked: the beacons the venue does not
    /// know are returned apart. Errors: a strength outside -200…0 dBm, a beacon named twice,
    /// no known beacon heard (above -200 dBm).
    public func observation(_ readings: [(beacon: String, rssi: Double)], maxReadings: Int = 1000) throws(ScanError) -> (observation: Observation, unknown: [String]) {
        guard readings.count <= maxReadings else { throw .tooManyReadings(count: readings.count, limit: maxReadings) }
        var strengths = [Double?](repeating: nil, count: space.dimensions)
        var seen = Set<String>()
        var unknown: [String] = []
        var heard = 0
        for (beacon, rssi) in readings {
            guard seen.insert(beacon).inserted else { throw .duplicateBeacon(beacon) }
            guard ScanError.rssiRange.contains(rssi) else { throw .rssiOutOfRange(beacon: beacon, value: rssi) }
            guard let dimension = beaconIndex[beacon] else {
                unknown.append(beacon)
                continue
            }
            // -200 dBm is the surveys' own "not heard".
            guard rssi > ScanError.rssiRange.lowerBound else { continue }
            strengths[dimension] = rssi
            heard += 1
        }
        guard heard > 0 else { throw .noKnownBeacon(venue: venue.name, given: readings.map(\.beacon)) }
        return (Observation(strengths: strengths, vector: strengths.map(space.value)), unknown)
    }

    /// Locates a scan; `excluding` leaves one survey scan out of the `scans` fingerprints and the
    /// cells (leave-one-out evaluation; the mean and median fingerprints keep it). Nil only
    /// when the model is empty.
    public func locate(_ observation: Observation, k: Int, method: LocateMethod, fingerprints: FingerprintKind = .scans,
                       excluding: Int? = nil) -> Position? {
        var visited = 0
        return locate(observation, k: k, method: method, fingerprints: fingerprints, excluding: excluding, visited: &visited)
    }

    public func locate(_ observation: Observation, k: Int, method: LocateMethod, fingerprints: FingerprintKind = .scans,
                       excluding: Int? = nil, visited: inout Int) -> Position? {
        switch method {
        case .knn, .wknn:
            return nearest(observation.vector, k: k, weighted: method == .wknn, fingerprints: fingerprints, excluding: excluding, visited: &visited)
        case .gaussian:
            return likeliest(observation.strengths, k: k, excluding: excluding)
        case .ensemble:
            let members = [nearest(observation.vector, k: k, weighted: true, fingerprints: .scans, excluding: excluding, visited: &visited),
                           nearest(observation.vector, k: k, weighted: true, fingerprints: .mean, excluding: nil, visited: &visited),
                           likeliest(observation.strengths, k: k, excluding: excluding)].compactMap { $0 }
            return Locator.median(of: members, venue: venue, near: { floor, x, y in nearestPoint(floor: floor, x: x, y: y) })
        }
    }

    /// kNN or weighted kNN over one kind of fingerprints.
    func nearest(_ vector: [Double], k: Int, weighted: Bool, fingerprints: FingerprintKind, excluding: Int?, visited: inout Int) -> Position? {
        guard let map = maps[fingerprints] else { return nil }
        let entry = fingerprints == .scans ? excluding.flatMap { entryOfScan[$0] } : nil
        let nearest = map.nearest(to: vector, k: k, excluding: entry, visited: &visited)
        guard !nearest.isEmpty else { return nil }
        var weights = [Double](repeating: 1, count: nearest.count)
        if weighted {
            if nearest.contains(where: { $0.distance == 0 }) {
                for i in nearest.indices { weights[i] = nearest[i].distance == 0 ? 1 : 0 }
            } else {
                // Clamped so that a distance of a few ulps cannot make an infinite weight.
                for i in nearest.indices { weights[i] = 1 / max(nearest[i].distance, 1e-9) }
            }
        }
        let candidates = nearest.enumerated().map { i, found -> Candidate in
            let p = venue.points[map.entryPoints[found.entry]]
            return Candidate(floor: p.floor, x: p.x, y: p.y, weight: weights[i],
                             neighbour: Neighbour(point: map.entryPoints[found.entry], scan: map.entryScans?[found.entry], signalDistance: found.distance, weight: weights[i]))
        }
        return estimate(candidates)
    }

    /// The probabilistic model's k likeliest cells, weighted by likelihood. A neighbour's
    /// signal distance is sqrt(2 (best log-likelihood - its own)): 0 for the likeliest.
    func likeliest(_ strengths: [Double?], k: Int, excluding: Int?) -> Position? {
        var logLikelihoods = cells.logLikelihoods(strengths, excluding: excluding)
        // The floor first, by its share of the posterior over every cell (equal priors); then
        // the k likeliest cells on it.
        let (floor, confidence) = cells.likeliestFloor(logLikelihoods)
        for c in cells.cells.indices where cells.cells[c].floor != floor { logLikelihoods[c] = -.infinity }
        let top = cells.likeliest(logLikelihoods, k: k)
        guard let best = top.first?.logLikelihood else { return nil }
        let candidates = top.map { found -> Candidate in
            let cell = cells.cells[found.cell]
            let weight = exp(found.logLikelihood - best)
            return Candidate(floor: cell.floor, x: cell.x, y: cell.y, weight: weight,
                             neighbour: Neighbour(point: cell.point, scan: nil, signalDistance: (2 * (best - found.logLikelihood)).squareRoot(), weight: weight))
        }
        var position = estimate(candidates)
        position?.floorConfidence = confidence
        return position
    }

    struct Candidate {
        let floor: Int
        let x: Double
        let y: Double
        let weight: Double
        let neighbour: Neighbour
    }

    /// The floor with the most weight (a tie: the floor of the first candidate), and the
    /// weighted mean of the candidates on it.
    func estimate(_ candidates: [Candidate]) -> Position? {
        guard let first = candidates.first else { return nil }
        var floorWeight: [Int: Double] = [:]
        for c in candidates { floorWeight[c.floor, default: 0] += c.weight }
        var floor = first.floor
        for c in candidates where (floorWeight[c.floor] ?? 0) > (floorWeight[floor] ?? 0) { floor = c.floor }
        var sx = 0.0, sy = 0.0, total = 0.0
        for c in candidates where c.floor == floor {
            sx += c.weight * c.x
            sy += c.weight * c.y
            total += c.weight
        }
        guard total > 0 else { return nil }
        let x = sx / total, y = sy / total
        var spreadSum = 0.0
        for c in candidates where c.floor == floor { spreadSum += c.weight * ((c.x - x) * (c.x - x) + (c.y - y) * (c.y - y)) }
        let allWeight = floorWeight.values.reduce(0, +)
        return Position(floor: floor, x: x, y: y, lonLat: venue.floor(floor)?.frame?.lonLat(x: x, y: y),
                        point: nearestPoint(floor: floor, x: x, y: y) ?? first.neighbour.point,
                        neighbours: candidates.map(\.neighbour), spread: (spreadSum / total).squareRoot(),
                        floorConfidence: allWeight > 0 ? (floorWeight[floor] ?? 0) / allWeight : 1)
    }

    func nearestPoint(floor: Int, x: Double, y: Double) -> Int? {
        var best: Int?, bestDistance = Double.infinity
        for candidate in pointsByFloor[floor] ?? [] {
            let p = venue.points[candidate]
            let d = (p.x - x) * (p.x - x) + (p.y - y) * (p.y - y)
            if d < bestDistance { (best, bestDistance) = (candidate, d) }
        }
        return best
    }

    /// Per axis, the median of the members on their majority floor (the first member's floor
    /// on a tie); the spread is the RMS distance of those members from it.
    static func median(of members: [Position], venue: Venue, near: (Int, Double, Double) -> Int?) -> Position? {
        guard let first = members.first else { return nil }
        var votes: [Int: Int] = [:]
        for m in members { votes[m.floor, default: 0] += 1 }
        var floor = first.floor
        for m in members where (votes[m.floor] ?? 0) > (votes[floor] ?? 0) { floor = m.floor }
        let on = members.filter { $0.floor == floor }
        let x = FingerprintMap.median(on.map(\.x)), y = FingerprintMap.median(on.map(\.y))
        let spread = (on.reduce(0) { $0 + ($1.x - x) * ($1.x - x) + ($1.y - y) * ($1.y - y) } / Double(on.count)).squareRoot()
        return Position(floor: floor, x: x, y: y, lonLat: venue.floor(floor)?.frame?.lonLat(x: x, y: y), point: near(floor, x, y) ?? first.point,
                        neighbours: members.flatMap(\.neighbours), spread: spread, floorConfidence: Double(on.count) / Double(members.count))
    }
}
