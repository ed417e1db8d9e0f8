// The probabilistic model (after Horus, Youssef & Agrawala 2005): per place and beacon, a
// Gaussian over the strengths heard there and a probability of hearing the beacon at all. A
// scan's log-likelihood at a place adds, per beacon, log P(heard) - ((rssi - mu) / sigma)^2 / 2
// when the scan heard it and log P(not heard) when it did not; the estimate is the mean of the
// k likeliest places, weighted by their likelihood. Tracks (Track.swift) walk the same places.
//
// - Places are cells: the reference points themselves when they hold enough scans (a grid
//   survey's cells, or points with 20 scans or more on average), or else square cells that
//   pool nearby points: the smallest side, halving the survey's extent, that holds 20 scans a
//   cell on average. A robot's survey with a new position every scan has too few scans per
//   point for a Gaussian of its own.
// - P(heard) = (heard + 1) / (scans + 2) (Laplace's rule), so a beacon heard at every scan of
//   a cell still may go unheard, and one never heard there may still be heard.
// - Sigma is pooled per beacon over all cells (the RMS of the heard strengths about their
//   cell's mean, at least 2 dB): a cell's few scans would give a sigma of almost 0.
// - A cell where a beacon was never heard expects it at the unheard value.

import Foundation

public struct CellModel: Sendable {
    /// A place of the model: its floor, its position (the mean of its scans' points) and the
    /// reference point nearest to that.
    public struct Cell: Sendable, Equatable {
        public let floor: Int
        public let x: Double
        public let y: Double
        public let point: Int
    }

    /// The side of the pooling cells in the frame's units, nil when cells are the points.
    public let side: Double?
    public let cells: [Cell]
    let dimensions: Int
    let unheard: Double
    /// Per cell: its scans; per cell and beacon (`c * dimensions + b`): scans that heard it,
    /// the sum of those strengths, and the log-probabilities and mean they give.
    let scanCount: [Int]
    let heard: [Int]
    let sum: [Double]
    let logHeard: [Double]
    let logUnheard: [Double]
    let mean: [Double]
    /// Per beacon: 1 / sigma^2, pooled.
    let precision: [Double]
    /// Per survey scan: its cell, and what it adds to the cell (for leaving it out).
    let cellOfScan: [Int: Int]
    let strengthsOfScan: [Int: [Double?]]

    /// The cells of a 20-scan average, unless `side` is given (0: the points themselves).
    public static let scansPerCell = 20.0
    public static let sigmaFloor = 2.0

    public init(venue: Venue, space: SignalSpace, using selected: [Int]? = nil, side requested: Double? = nil) {
        let scans = selected ?? Array(venue.scans.indices)
        let d = space.dimensions
        dimensions = d
        unheard = space.unheard
        let side = requested.map { $0 > 0 ? $0 : nil } ?? CellModel.automaticSide(venue: venue, scans: scans)
        self.side = side
        // Cell of each used point: the point itself, or its square on its floor.
        var cellKey: [String: Int] = [:]
        var cellOfPoint: [Int: Int] = [:]
        var members: [[Int]] = []
        for s in scans {
            let p = venue.scans[s].point
            if cellOfPoint[p] != nil { continue }
            let point = venue.points[p]
            let key: String
            if let side {
                let (cx, cy) = ((point.x / side).rounded(.down), (point.y / side).rounded(.down))
                key = "\(point.floor) \(cx) \(cy)"
            } else {
                key = "\(p)"
            }
            if let c = cellKey[key] {
                cellOfPoint[p] = c
            } else {
                cellKey[key] = members.count
                cellOfPoint[p] = members.count
                members.append([])
            }
        }
        let n = members.count
        var count = [Int](repeating: 0, count: n)
        var heard = [Int](repeating: 0, count: n * d)
        var sum = [Double](repeating: 0, count: n * d)
        var sx = [Double](repeating: 0, count: n), sy = [Double](repeating: 0, count: n)
        var cellOfScan: [Int: Int] = [:]
        var strengthsOfScan: [Int: [Double?]] = [:]
        for s in scans {
            let p = venue.scans[s].point
            guard let c = cellOfPoint[p] else { continue }
            members[c].append(p)
            count[c] += 1
            sx[c] += venue.points[p].x
            sy[c] += venue.points[p].y
            let strengths = space.strengths(of: venue.scans[s])
            for b in 0..<d { if let rssi = strengths[b] { heard[c * d + b] += 1; sum[c * d + b] += rssi } }
            cellOfScan[s] = c
            strengthsOfScan[s] = strengths
        }
        var cells: [Cell] = []
        for c in 0..<n {
            let (x, y) = (sx[c] / Double(count[c]), sy[c] / Double(count[c]))
            var best = members[c][0], bestDistance = Double.infinity
            for p in Set(members[c]).sorted() {
                let q = venue.points[p]
                let distance = (q.x - x) * (q.x - x) + (q.y - y) * (q.y - y)
                if distance < bestDistance { (best, bestDistance) = (p, distance) }
            }
            cells.append(Cell(floor: venue.points[best].floor, x: x, y: y, point: best))
        }
        // Sigma per beacon: the heard strengths about their cell's mean.
        var squares = [Double](repeating: 0, count: d), readings = [Int](repeating: 0, count: d)
        for s in scans {
            guard let c = cellOfScan[s], let strengths = strengthsOfScan[s] else { continue }
            for b in 0..<d {
                guard let rssi = strengths[b] else { continue }
                let deviation = rssi - sum[c * d + b] / Double(heard[c * d + b])
                squares[b] += deviation * deviation
                readings[b] += 1
            }
        }
        precision = (0..<d).map { b in
            let sigma = readings[b] > 0 ? max(CellModel.sigmaFloor, (squares[b] / Double(readings[b])).squareRoot()) : CellModel.sigmaFloor
            return 1 / (sigma * sigma)
        }
        self.cells = cells
        scanCount = count
        self.heard = heard
        self.sum = sum
        self.cellOfScan = cellOfScan
        self.strengthsOfScan = strengthsOfScan
        var logHeard = [Double](repeating: 0, count: n * d), logUnheard = logHeard, mean = logHeard
        for c in 0..<n {
            for b in 0..<d {
                let i = c * d + b
                (logHeard[i], logUnheard[i], mean[i]) = CellModel.terms(heard: heard[i], sum: sum[i], scans: count[c], unheard: space.unheard)
            }
        }
        self.logHeard = logHeard
        self.logUnheard = logUnheard
        self.mean = mean
    }

    static func terms(heard: Int, sum: Double, scans: Int, unheard: Double) -> (logHeard: Double, logUnheard: Double, mean: Double) {
        let share = (Double(heard) + 1) / (Double(scans) + 2)
        return (log(share), log(1 - share), heard > 0 ? sum / Double(heard) : unheard)
    }

    /// The pooling side for `scans` of `venue`: nil when its points hold 20 scans on average
    /// or it has a grid (its points are cells already).
    static func automaticSide(venue: Venue, scans: [Int]) -> Double? {
        guard venue.grid == nil, !scans.isEmpty else { return nil }
        let used = Set(scans.map { venue.scans[$0].point })
        guard Double(scans.count) / Double(used.count) < scansPerCell else { return nil }
        var (minX, minY, maxX, maxY) = (Double.infinity, Double.infinity, -Double.infinity, -Double.infinity)
        for p in used {
            let point = venue.points[p]
            (minX, minY, maxX, maxY) = (min(minX, point.x), min(minY, point.y), max(maxX, point.x), max(maxY, point.y))
        }
        let extent = max(maxX - minX, maxY - minY)
        guard extent > 0 else { return nil }
        // Halve from the extent while the cells still hold 20 scans on average.
        var side = extent
        for _ in 0..<20 {
            let half = side / 2
            var cells = Set<String>()
            for p in used {
                let point = venue.points[p]
                cells.insert("\(point.floor) \((point.x / half).rounded(.down)) \((point.y / half).rounded(.down))")
            }
            if Double(scans.count) / Double(cells.count) < scansPerCell { break }
            side = half
        }
        return side
    }

    /// The log-likelihood of `strengths` (per beacon, nil: not heard) in every cell; a cell left
    /// empty by `excluding` (a survey scan left out) gets -infinity.
    public func logLikelihoods(_ strengths: [Double?], excluding scan: Int? = nil) -> [Double] {
        let d = dimensions
        var out = [Double](repeating: 0, count: cells.count)
        for c in cells.indices {
            var total = 0.0
            let base = c * d
            for b in 0..<d {
                if let rssi = strengths[b] {
                    let deviation = rssi - mean[base + b]
                    total += logHeard[base + b] - 0.5 * deviation * deviation * precision[b]
                } else {
                    total += logUnheard[base + b]
                }
            }
            out[c] = total
        }
        if let scan, let c = cellOfScan[scan], let left = strengthsOfScan[scan] {
            // The scan's own cell, as if the scan had not been taken.
            let scans = scanCount[c] - 1
            if scans == 0 {
                out[c] = -.infinity
            } else {
                var total = 0.0
                for b in 0..<d {
                    let i = c * d + b
                    let (h, s) = left[b].map { (heard[i] - 1, sum[i] - $0) } ?? (heard[i], sum[i])
                    let (logHeard, logUnheard, mean) = CellModel.terms(heard: h, sum: s, scans: scans, unheard: unheard)
                    if let rssi = strengths[b] {
                        total += logHeard - 0.5 * (rssi - mean) * (rssi - mean) * precision[b]
                    } else {
                        total += logUnheard
                    }
                }
                out[c] = total
            }
        }
        return out
    }

    /// The floor with the most posterior mass (cells equally likely before the scan) and that
    /// mass's share; a tie goes to the lower floor.
    public func likeliestFloor(_ logLikelihoods: [Double]) -> (floor: Int, confidence: Double) {
        let best = logLikelihoods.max() ?? 0
        guard best > -.infinity else { return (cells.first?.floor ?? 0, 0) }
        var mass: [Int: Double] = [:]
        for (c, ll) in logLikelihoods.enumerated() where ll > -.infinity { mass[cells[c].floor, default: 0] += exp(ll - best) }
        let total = mass.values.reduce(0, +)
        guard let top = mass.max(by: { ($0.value, -$0.key) < ($1.value, -$1.key) }) else { return (cells.first?.floor ?? 0, 0) }
        return (top.key, top.value / total)
    }

    /// The k likeliest cells, likeliest first (ties by cell order), with their weights
    /// exp(ll - best ll).
    public func likeliest(_ logLikelihoods: [Double], k: Int) -> [(cell: Int, logLikelihood: Double)] {
        var top: [(cell: Int, logLikelihood: Double)] = []
        top.reserveCapacity(k + 1)
        for (c, ll) in logLikelihoods.enumerated() where ll > -.infinity {
            if top.count == k, let last = top.last, ll <= last.logLikelihood { continue }
            let at = top.firstIndex { ll > $0.logLikelihood } ?? top.count
            top.insert((c, ll), at: at)
            if top.count > k { top.removeLast() }
        }
        return top
    }
}
