import SpatialIndex
import Testing

/// The k-d tree over signal vectors against a brute force written here: random vectors shaped
/// like fingerprints (most values -200, a few heard, many repeated), random weights (0 leaves
/// an item out), every k from 1 to 12.
@Suite struct VectorTreeTests {
    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    }

    @Test func nearestEqualsTheBruteForce() throws {
        var random = Generator(state: 17)
        let d = 7
        for round in 0..<20 {
            let n = [1, 5, 40, 300][round % 4]
            var vectors: [Double] = []
            for _ in 0..<n {
                // A third repeat an earlier vector; the others hear 1–2 beacons in integer dBm.
                if !vectors.isEmpty && random.below(3) == 0 {
                    let earlier = random.below(vectors.count / d)
                    vectors += vectors[(earlier * d)..<((earlier + 1) * d)]
                } else {
                    var v = [Double](repeating: -200, count: d)
                    for _ in 0..<(1 + random.below(2)) { v[random.below(d)] = -Double(55 + random.below(40)) }
                    vectors += v
                }
            }
            let tree = try VectorTree(dimensions: d, vectors: vectors)
            let weights = (0..<n).map { _ in random.below(4) }  // 0: left out
            for _ in 0..<30 {
                var query = [Double](repeating: -200, count: d)
                query[random.below(d)] = -Double(55 + random.below(40))
                if random.below(2) == 0 { query[random.below(d)] = -Double(55 + random.below(40)) + 0.5 }
                for k in 1...12 {
                    var visited = 0
                    let found = tree.nearest(to: query, k: k, weight: { weights[$0] }, visited: &visited)
                    // Brute force: by (distance, index), the fewest whose weights reach k, and
                    // every further one tied with the last.
                    let all = (0..<n).filter { weights[$0] > 0 }.map { i -> (Int, Double) in
                        (i, (0..<d).reduce(0.0) { $0 + (vectors[i * d + $1] - query[$1]) * (vectors[i * d + $1] - query[$1]) })
                    }.sorted { ($0.1, $0.0) < ($1.1, $1.0) }
                    var expected: [(Int, Double)] = []
                    var total = 0
                    for item in all {
                        if total >= k && item.1 > expected[expected.count - 1].1 { break }
                        expected.append(item)
                        total += weights[item.0]
                    }
                    #expect(found.map(\.item) == expected.map(\.0) && found.map(\.distanceSquared) == expected.map(\.1), "round \(round) k \(k)")
                }
            }
        }
    }

    @Test func refusesWhatIsNotFinite() {
        #expect(throws: SpatialIndexError.nonFinite(item: 1)) { try VectorTree(dimensions: 2, vectors: [1, 2, .nan, 4]) }
        #expect(throws: SpatialIndexError.nonFinite(item: 0)) { try VectorTree(dimensions: 2, vectors: [.infinity, 2]) }
    }
}
