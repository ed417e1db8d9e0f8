// L1: locating beacon scans (issues 17, 34). 1,000,000 locates (k = 3, weighted kNN, every survey
// scan a fingerprint) against the WMU library's 1,420-scan map, and against a map 100 times
// larger made by jittering every real scan 100 times (each heard strength plus Gaussian noise of
// σ = 2 dB, not rounded, so the 142,000 vectors are distinct; beacons not heard stay so). The
// queries are the real scans in turn. Beside each, a brute-force scan over every fingerprint
// gives the same neighbours (checked on every query it runs) and shows what the k-d tree saves.
// `gaussian_us` is the probabilistic model's locate (every cell scored), over a tenth as many.
// Prints one line per map:
//   INDOOR id=L1.real map_scans=… distinct=… cells=… build_ms=… locate_us=… gaussian_us=… brute_us=… visited=… checked=…
// `engine_us` is the whole engine call with beacon names (checks, lookups, estimate), on a store.

import Engine
import Foundation
import Indoor
import Store
import TestSupport

func runIndoorLocate() throws -> String {
    let fixtures = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Fixtures")
    let file = fixtures.appendingPathComponent("indoor/ble-rssi-wmu-labeled.csv").path
    guard let data = FileManager.default.contents(atPath: file) else { throw BenchError(description: "cannot read \(file)") }
    var options = SurveyOptions(venue: "wmu_library")
    options.grid = GridConvention(letters: .column, cellSize: 1)
    let real = try SurveyReader.read([UInt8](data), file: "wmu", options: options)
    let queries = try Locator(venue: real).observations
    let iterations = ProcessInfo.processInfo.environment["VLTAVA_L1_ITERATIONS"].flatMap { Int($0) } ?? 1_000_000

    // The engine's path, on a store: names checked and looked up for every scan.
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("vltava-bench-l1-\(getpid()).gpkg").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    try IndoorStore.write(real, into: GeoPackage(path: path, mode: .readWrite), replace: false)
    let snapshot = try Snapshot.load(storePath: path)
    let venue = try snapshot.venue("wmu_library")
    let named = real.scans.map { scan in scan.readings.map { (beacon: real.beacons[$0.beacon].id, rssi: $0.rssi) } }
    var engineChecksum = 0.0
    let engineSeconds = try best {
        for i in 0..<iterations { engineChecksum += try snapshot.locate(named[i % named.count], in: venue).position.x }
    }

    var synthetic = real
    var random = SplitMix(state: 17)
    synthetic.scans = []
    for _ in 0..<100 {
        for scan in real.scans {
            var jittered = scan
            for r in jittered.readings.indices {
                jittered.readings[r].rssi = min(-1, max(-199.9, scan.readings[r].rssi + 2 * random.gaussian()))
            }
            synthetic.scans.append(jittered)
        }
    }
    var lines: [String] = []
    for (name, venue) in [("real", real), ("synthetic100x", synthetic)] {
        var locator: Locator?
        let build = try best(rounds: 1) { locator = try Locator(venue: venue) }
        guard let locator, let map = locator.maps[.scans] else { throw BenchError(description: "no locator") }
        var checksum = 0.0
        var visited = 0
        let seconds = try best {
            for i in 0..<iterations {
                checksum += locator.locate(queries[i % queries.count], k: 3, method: .wknn, visited: &visited)?.x ?? 0
            }
        }
        // The probabilistic model: every cell scored per locate.
        let gaussianIterations = max(1, iterations / 10)
        let gaussianSeconds = try best {
            for i in 0..<gaussianIterations {
                checksum += locator.locate(queries[i % queries.count], k: 3, method: .gaussian)?.x ?? 0
            }
        }
        // Brute force over every fingerprint, for its time and to check the tree's neighbours.
        let vectors = venue.scans.map { locator.observation(of: $0).vector }
        let bruteQueries = name == "real" ? queries.count : 200
        var checked = 0
        let bruteSeconds = try best(rounds: 1) {
            for q in 0..<bruteQueries {
                let query = queries[q].vector
                var all: [(entry: Int, squared: Double)] = []
                all.reserveCapacity(vectors.count)
                for (e, v) in vectors.enumerated() {
                    var sum = 0.0
                    for d in 0..<v.count { sum += (v[d] - query[d]) * (v[d] - query[d]) }
                    all.append((e, sum))
                }
                all.sort { ($0.squared, $0.entry) < ($1.squared, $1.entry) }
                var ignored = 0
                let tree = map.nearest(to: query, k: 3, visited: &ignored)
                guard tree.map(\.entry) == all.prefix(3).map(\.entry) else { throw BenchError(description: "\(name): query \(q): the tree and brute force disagree") }
                checked += 1
            }
        }
        lines.append(String(format: "INDOOR id=L1.%@ map_scans=%d distinct=%d cells=%d build_ms=%.1f locate_us=%.3f gaussian_us=%.3f brute_us=%.1f visited=%.1f checked=%d (checksum %.6g)",
                            name, venue.scans.count, map.distinctVectors, locator.cells.cells.count, build * 1000, seconds / Double(iterations) * 1e6,
                            gaussianSeconds / Double(gaussianIterations) * 1e6,
                            bruteSeconds / Double(bruteQueries) * 1e6, Double(visited) / Double(iterations * 3), checked, checksum))
    }
    lines.append(String(format: "INDOOR id=L1.engine map_scans=%d engine_us=%.3f (checksum %.6g)", real.scans.count,
                        engineSeconds / Double(iterations) * 1e6, engineChecksum))
    return lines.joined(separator: "\n")
}

/// The best of `rounds` timings (the machine's other load only adds).
private func best(rounds: Int = 3, _ body: () throws -> Void) throws -> Double {
    var fastest = Double.infinity
    for _ in 0..<rounds { fastest = min(fastest, try seconds(body)) }
    return fastest
}

/// The tests' SplitMix64 (the same sequence as before), with the draws the synthetic map needs:
/// the map is the same in every run.
extension SplitMix {
    mutating func uniform() -> Double { Double(next() >> 11) / Double(1 << 53) }
    /// Box–Muller.
    mutating func gaussian() -> Double {
        let u = max(uniform(), 1e-300), v = uniform()
        return (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
    }
}
