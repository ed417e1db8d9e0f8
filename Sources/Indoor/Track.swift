// A walking phone's scans, located together: a hidden Markov model over the probabilistic
// model's cells (CellModel.swift). Between two scans the phone moves a distance drawn from a
// Gaussian of sigma = sqrt((speed × the time between them)^2 + (half a cell)^2), so a scan that alone
// would jump across the venue is pulled back to where the walk can be; forward-backward gives
// each scan's cell probabilities from the whole track (`smooth`), or the forward pass alone
// from the scans up to it (`filter`, what a live phone can have).
//
// - Emissions are the cells' likelihoods tempered by 1/4 (raised to the power 1/4): one scan
//   is a 1/3-second bin of correlated readings, not independent evidence. The tempering and the
//   half cell were chosen by leave-one-run-out on calib2021's four calibration runs (training
//   data only: tempering 8 or 16 did better on its test track but worse there; docs/INDOOR.md).
// - A floor change costs a factor of 1/1000 over the same move on one floor.
// - The answer per scan is the estimate from its k most probable cells, as a locate's.

import Foundation

public struct TrackOptions: Sendable, Equatable {
    /// Walking speed in the frame's units a second (a person walks 1.4 m/s).
    public var speed: Double = 1.5
    /// The time between scans without times, in seconds.
    public var interval: Double = 1
    /// Forward-backward over the whole track (true) or the forward pass only.
    public var smooth: Bool = true
    public var k: Int = 5

    public static let tempering = 4.0
    public static let floorChange = 1e-3
    /// The most cells a venue may have to walk its tracks (a dense table of their distances).
    public static let maxCells = 2048

    public init(speed: Double = 1.5, interval: Double = 1, smooth: Bool = true, k: Int = 5) {
        self.speed = speed
        self.interval = interval
        self.smooth = smooth
        self.k = k
    }
}

extension Locator {
    /// Locates each scan of a track (in time order; nil times are `interval` apart). `check`
    /// runs before each step, so that a deadline or a cancellation stops a long track.
    public func locateTrack<E: Error>(_ scans: [(time: SurveyTime?, observation: Observation)], options: TrackOptions = TrackOptions(),
                                      check: () throws(E) -> Void) throws(E) -> [Position] {
        let cells = self.cells.cells
        let n = cells.count
        guard n > 0, !scans.isEmpty, n <= TrackOptions.maxCells else { return [] }
        // Squared distances between cells; another floor counts as far as the same x/y.
        var distance2 = [Float](repeating: 0, count: n * n)
        for i in 0..<n {
            for j in 0..<n {
                let (dx, dy) = (cells[i].x - cells[j].x, cells[i].y - cells[j].y)
                distance2[i * n + j] = Float(dx * dx + dy * dy)
            }
        }
        // Half a cell in quadrature with the walk: a phone standing still may still be
        // anywhere in its cell.
        let floorSigma = (self.cells.side ?? Locator.cellSpacing(cells)) / 2
        // Tempered emissions, scaled to a maximum of 1 per scan.
        var emissions: [[Double]] = []
        emissions.reserveCapacity(scans.count)
        for scan in scans {
            try check()
            let ll = self.cells.logLikelihoods(scan.observation.strengths)
            let best = ll.max() ?? 0
            emissions.append(ll.map { $0 > -.infinity ? exp(($0 - best) / TrackOptions.tempering) + 1e-300 : 0 })
        }
        // A step's transition weights, from the time between its scans.
        func transition(_ step: Int) -> (weights: [Double], rowSums: [Double]) {
            var dt = options.interval
            if let a = scans[step - 1].time, let b = scans[step].time { dt = max(0, b.seconds - a.seconds) }
            let sigma = ((options.speed * dt) * (options.speed * dt) + floorSigma * floorSigma).squareRoot()
            let cut = Float(9 * sigma * sigma)
            let scale = -1 / (2 * sigma * sigma)
            var weights = [Double](repeating: 0, count: n * n)
            var sums = [Double](repeating: 0, count: n)
            for i in 0..<n {
                var sum = 0.0
                for j in 0..<n where distance2[i * n + j] <= cut {
                    var w = exp(Double(distance2[i * n + j]) * scale)
                    if cells[i].floor != cells[j].floor { w *= TrackOptions.floorChange }
                    weights[i * n + j] = w
                    sum += w
                }
                sums[i] = sum
            }
            return (weights, sums)
        }
        var alpha = [[Double]](repeating: [], count: scans.count)
        alpha[0] = normalised(emissions[0])
        for t in 1..<scans.count {
            try check()
            let step = transition(t)
            var next = [Double](repeating: 0, count: n)
            let previous = alpha[t - 1]
            for i in 0..<n where previous[i] > 0 && step.rowSums[i] > 0 {
                let share = previous[i] / step.rowSums[i]
                for j in 0..<n where step.weights[i * n + j] > 0 { next[j] += share * step.weights[i * n + j] }
            }
            for j in 0..<n { next[j] *= emissions[t][j] }
            // A scan no cell can explain after the last (all zero): start again from it.
            alpha[t] = next.contains { $0 > 0 } ? normalised(next) : normalised(emissions[t])
        }
        var posterior = alpha
        if options.smooth && scans.count > 1 {
            var beta = [Double](repeating: 1, count: n)
            for t in stride(from: scans.count - 2, through: 0, by: -1) {
                try check()
                // Rebuilt rather than kept: T tables of n^2 would take gigabytes on a long track.
                let step = transition(t + 1)
                var next = [Double](repeating: 0, count: n)
                for i in 0..<n where step.rowSums[i] > 0 {
                    var sum = 0.0
                    for j in 0..<n where step.weights[i * n + j] > 0 { sum += step.weights[i * n + j] * emissions[t + 1][j] * beta[j] }
                    next[i] = sum / step.rowSums[i]
                }
                beta = next.contains { $0 > 0 } ? normalised(next) : [Double](repeating: 1, count: n)
                let product = (0..<n).map { alpha[t][$0] * beta[$0] }
                posterior[t] = product.contains { $0 > 0 } ? normalised(product) : alpha[t]
            }
        }
        return posterior.compactMap { probabilities in
            // The floor first, by its share of the probability; then the k likeliest cells on it.
            var logs = probabilities.map { $0 > 0 ? log($0) : -.infinity }
            let (floor, confidence) = self.cells.likeliestFloor(logs)
            for c in cells.indices where cells[c].floor != floor { logs[c] = -.infinity }
            let top = self.cells.likeliest(logs, k: options.k)
            let candidates = top.map { found -> Candidate in
                let cell = cells[found.cell]
                let weight = exp(found.logLikelihood)
                return Candidate(floor: cell.floor, x: cell.x, y: cell.y, weight: weight,
                                 neighbour: Neighbour(point: cell.point, scan: nil, signalDistance: 0, weight: weight))
            }
            var position = estimate(candidates)
            position?.floorConfidence = confidence
            return position
        }
    }

    /// The median distance from a cell to its nearest other cell on its floor (cells that are
    /// points have no side).
    static func cellSpacing(_ cells: [CellModel.Cell]) -> Double {
        var nearest: [Double] = []
        for (i, a) in cells.enumerated() {
            var best = Double.infinity
            for (j, b) in cells.enumerated() where i != j && a.floor == b.floor {
                best = min(best, ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot())
            }
            if best.isFinite { nearest.append(best) }
        }
        return nearest.isEmpty ? 1 : FingerprintMap.median(nearest)
    }
}

private func normalised(_ values: [Double]) -> [Double] {
    let total = values.reduce(0, +)
    return total > 0 ? values.map { $0 / total } : values
}
