// Fingerprint positioning: a phone's scan (beacon → dBm) is compared with the survey's
// fingerprints in signal space, and the position is estimated from the k nearest.
//
// - Signal space: one dimension per beacon of the venue, Euclidean distance on dBm. A beacon
//   not heard counts as -200 dBm (`Fingerprints.unheard`), the WMU survey's own marker: far
//   below any heard strength, so hearing a beacon or not weighs more than a few dB. A beacon
//   of the scan the venue does not know is left out (and reported); a scan heard several times
//   in one long-survey window counts the mean of its readings.
// - Fingerprints: every survey scan (`scans`, the default: it measured best on WMU), or one per
//   reference point, the mean or the median of its scans per beacon (`mean`, `median`).
// - kNN: the k nearest fingerprints, ties broken by survey order (as scikit-learn's brute force
//   does); the position is the mean of their points. Weighted kNN (`wknn`) weighs each by 1 /
//   its signal distance, and when some are at distance 0, those alone (scikit-learn's rule).
// - The floor is the one with the most weight among the k; x/y are averaged over the
//   neighbours on that floor. The spread is the weighted RMS distance of those neighbours'
//   points from the estimate: 0 when they all agree, and an error estimate otherwise.
//
// The fingerprints sit in a k-d tree (`VectorTree`), each distinct vector once with the number
// of scans sharing it, so a locate visits a few leaves, not every scan of the survey.

import Geometry
import SpatialIndex

public enum FingerprintKind: String, Sendable, CaseIterable {
    case scans, mean, median
}

public enum LocateMethod: String, Sendable, CaseIterable {
    case knn, wknn
}

/// A venue's fingerprints and their index, built once (when a snapshot loads).
public struct FingerprintMap: Sendable {
    /// The value of a beacon not heard, in dBm.
    public static let unheard = -200.0

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
    public init(venue: Venue, kind: FingerprintKind, using selected: [Int]? = nil) throws(SpatialIndexError) {
        self.kind = kind
        let d = max(1, venue.beacons.count)
        dimensions = d
        let scans = selected ?? Array(venue.scans.indices)
        var vectors: [[Double]] = []
        var points: [Int] = []
        switch kind {
        case .scans:
            for s in scans {
                vectors.append(FingerprintMap.vector(of: venue.scans[s], dimensions: d))
                points.append(venue.scans[s].point)
            }
            entryScans = scans
        case .mean, .median:
            var byPoint: [Int: [[Double]]] = [:]
            for s in scans { byPoint[venue.scans[s].point, default: []].append(FingerprintMap.vector(of: venue.scans[s], dimensions: d)) }
            for point in byPoint.keys.sorted() {
                guard let members = byPoint[point] else { continue }
                vectors.append((0..<d).map { b in
                    let values = members.map { $0[b] }
                    return kind == .mean ? values.reduce(0, +) / Double(values.count) : FingerprintMap.median(values)
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

    /// A scan as a point of signal space: its mean dBm per beacon, `unheard` for the others.
    public static func vector(of scan: Scan, dimensions: Int) -> [Double] {
        var sums = [Double](repeating: 0, count: dimensions)
        var counts = [Int](repeating: 0, count: dimensions)
        for reading in scan.readings where reading.beacon < dimensions {
            sums[reading.beacon] += reading.rssi
            counts[reading.beacon] += 1
        }
        return (0..<dimensions).map { counts[$0] == 0 ? unheard : sums[$0] / Double(counts[$0]) }
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
}

/// A venue ready to locate scans: its fingerprints of one kind, indexed.
public struct Locator: Sendable {
    public let venue: Venue
    public let map: FingerprintMap
    /// Beacon ids → their dimension.
    public let beaconIndex: [String: Int]
    /// Reference points by floor, for the nearest point to an estimate.
    let pointsByFloor: [Int: [Int]]

    public init(venue: Venue, kind: FingerprintKind = .scans) throws(SpatialIndexError) {
        try self.init(venue: venue, map: FingerprintMap(venue: venue, kind: kind))
    }

    public init(venue: Venue, map: FingerprintMap) {
        self.venue = venue
        self.map = map
        var index: [String: Int] = [:]
        for (i, beacon) in venue.beacons.enumerated() where index[beacon.id] == nil { index[beacon.id] = i }
        beaconIndex = index
        pointsByFloor = Dictionary(grouping: venue.points.indices, by: { venue.points[$0].floor })
    }

    /// The scan given as beacon ids and strengths, checked, as a point of signal space: the
    /// beacons the venue does not know are returned apart. Errors: a strength outside -200…0
    /// dBm, a beacon named twice, no known beacon heard (above -200 dBm).
    public func vector(_ readings: [(beacon: String, rssi: Double)], maxReadings: Int = 1000) throws(ScanError) -> (vector: [Double], unknown: [String]) {
        guard readings.count <= maxReadings else { throw .tooManyReadings(count: readings.count, limit: maxReadings) }
        var vector = [Double](repeating: FingerprintMap.unheard, count: map.dimensions)
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
            vector[dimension] = rssi
            if rssi > FingerprintMap.unheard { heard += 1 }
        }
        guard heard > 0 else { throw .noKnownBeacon(venue: venue.name, given: readings.map(\.beacon)) }
        return (vector, unknown)
    }

    /// Locates a scan given as a signal vector (`vector(_:)`); `excluding` leaves one map entry
    /// out (leave-one-out evaluation). Nil only when the map is empty.
    public func locate(_ vector: [Double], k: Int, method: LocateMethod, excluding: Int? = nil) -> Position? {
        var visited = 0
        return locate(vector, k: k, method: method, excluding: excluding, visited: &visited)
    }

    public func locate(_ vector: [Double], k: Int, method: LocateMethod, excluding: Int? = nil, visited: inout Int) -> Position? {
        let nearest = map.nearest(to: vector, k: k, excluding: excluding, visited: &visited)
        guard !nearest.isEmpty else { return nil }
        var weights = [Double](repeating: 1, count: nearest.count)
        if method == .wknn {
            if nearest.contains(where: { $0.distance == 0 }) {
                for i in nearest.indices { weights[i] = nearest[i].distance == 0 ? 1 : 0 }
            } else {
                // Clamped so that a distance of a few ulps cannot make an infinite weight.
                for i in nearest.indices { weights[i] = 1 / max(nearest[i].distance, 1e-9) }
            }
        }
        let points = venue.points
        // The floor with the most weight; a tie goes to the floor of the nearer neighbour.
        var floorWeight: [Int: Double] = [:]
        for (i, found) in nearest.enumerated() { floorWeight[points[map.entryPoints[found.entry]].floor, default: 0] += weights[i] }
        var floor = points[map.entryPoints[nearest[0].entry]].floor
        for found in nearest {
            let candidate = points[map.entryPoints[found.entry]].floor
            if (floorWeight[candidate] ?? 0) > (floorWeight[floor] ?? 0) { floor = candidate }
        }
        var sx = 0.0, sy = 0.0, total = 0.0
        for (i, found) in nearest.enumerated() {
            let p = points[map.entryPoints[found.entry]]
            guard p.floor == floor else { continue }
            sx += weights[i] * p.x
            sy += weights[i] * p.y
            total += weights[i]
        }
        let x = sx / total, y = sy / total
        var spreadSum = 0.0
        for (i, found) in nearest.enumerated() {
            let p = points[map.entryPoints[found.entry]]
            guard p.floor == floor else { continue }
            spreadSum += weights[i] * ((p.x - x) * (p.x - x) + (p.y - y) * (p.y - y))
        }
        var best = map.entryPoints[nearest[0].entry], bestDistance = Double.infinity
        for candidate in pointsByFloor[floor] ?? [] {
            let p = points[candidate]
            let d = (p.x - x) * (p.x - x) + (p.y - y) * (p.y - y)
            if d < bestDistance { (best, bestDistance) = (candidate, d) }
        }
        let neighbours = nearest.enumerated().map { i, found in
            Neighbour(point: map.entryPoints[found.entry], scan: map.entryScans?[found.entry], signalDistance: found.distance, weight: weights[i])
        }
        return Position(floor: floor, x: x, y: y, lonLat: venue.floor(floor)?.frame?.lonLat(x: x, y: y), point: best,
                        neighbours: neighbours, spread: (spreadSum / total).squareRoot())
    }
}
