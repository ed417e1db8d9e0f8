import Foundation
import Geometry
@testable import SpatialIndex
import TestSupport
import Testing

/// The R-tree and the point index cross-checked against brute force on real and random data.
@Suite(.validatesStores) struct RTreeAndPointIndexTests {
    static func stations() throws -> (codes: [String], lons: [Double], lats: [Double]) {
        let text = try String(contentsOf: Fixtures.url("air/stations-prague.csv"), encoding: .utf8)
        let lines = text.split(whereSeparator: \.isNewline).map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        let header = lines[0]
        let code = try #require(header.firstIndex(of: "code")), lon = try #require(header.firstIndex(of: "longitude")), lat = try #require(header.firstIndex(of: "latitude"))
        let rows = lines.dropFirst()
        return (rows.map { $0[code] }, rows.compactMap { Double($0[lon]) }, rows.compactMap { Double($0[lat]) })
    }

    static func randomBox(_ g: inout SplitMix) -> BBox {
        let x = Double.random(in: 12...18.5, using: &g), y = Double.random(in: 48.5...51, using: &g)
        let w = Double.random(in: 0...0.3, using: &g), h = Double.random(in: 0...0.2, using: &g)
        return BBox(minLon: x, minLat: y, maxLon: x + w, maxLat: y + h)
    }

    /// Brute force: every index sorted by (haversine, index).
    static func bruteNearest(_ lons: [Double], _ lats: [Double], lon: Double, lat: Double, k: Int, max: Double = .infinity, filter: (Int) -> Bool = { _ in true }) -> [Int] {
        lons.indices.filter(filter)
            .map { (Geodesy.haversine(lon1: lon, lat1: lat, lon2: lons[$0], lat2: lats[$0]), $0) }
            .filter { $0.0 <= max }
            .sorted { $0 < $1 }.prefix(k).map(\.1)
    }

    @Test func bboxSearchEqualsBruteForce() throws {
        var g = SplitMix(state: 7)
        let boxes = (0..<10_000).map { _ in Self.randomBox(&g) } + [.empty]
        for nodeSize in [4, 16] {
            let tree = try PackedRTree(boxes: boxes, nodeSize: nodeSize)
            #expect(tree.count == 10_000)
            for _ in 0..<1_000 {
                let query = Self.randomBox(&g)
                let expected = boxes.indices.filter { !boxes[$0].isEmpty && boxes[$0].intersects(query) }
                #expect(tree.search(query) == expected)
            }
        }
    }

    @Test func treeKNearestEqualsBruteForce() throws {
        var g = SplitMix(state: 11)
        let lons = (0..<20_000).map { _ in Double.random(in: 12.09...18.86, using: &g) }
        let lats = (0..<20_000).map { _ in Double.random(in: 48.55...51.06, using: &g) }
        let tree = try PackedRTree(boxes: zip(lons, lats).map { BBox(minLon: $0, minLat: $1, maxLon: $0, maxLat: $1) })
        for q in 0..<500 {
            let lon = Double.random(in: 12.09...18.86, using: &g), lat = Double.random(in: 48.55...51.06, using: &g)
            let k = [1, 3, 10][q % 3]
            let max: Double = q % 2 == 0 ? .infinity : 5_000
            let odd: (Int) -> Bool = { $0 % 2 == 1 }
            let found = tree.nearest(k: k, maxDistance: max,
                                     boxDistance: { SphericalDistance.toBox(lon: lon, lat: lat, $0) },
                                     itemDistance: { Geodesy.haversine(lon1: lon, lat1: lat, lon2: lons[$0], lat2: lats[$0]) },
                                     filter: q % 4 == 3 ? odd : nil)
            let expected = Self.bruteNearest(lons, lats, lon: lon, lat: lat, k: k, max: max, filter: q % 4 == 3 ? odd : { _ in true })
            #expect(found.map(\.index) == expected)
        }
    }

    @Test func pointIndexEqualsBruteForce() throws {
        var g = SplitMix(state: 13)
        let lons = (0..<5_000).map { _ in Double.random(in: 12.09...18.86, using: &g) }
        let lats = (0..<5_000).map { _ in Double.random(in: 48.55...51.06, using: &g) }
        let index = try PointIndex(lons: lons, lats: lats)
        var buffer = [Int32](repeating: -1, count: 10)
        for q in 0..<1_000 {
            let lon = Double.random(in: 12.09...18.86, using: &g), lat = Double.random(in: 48.55...51.06, using: &g)
            let k = [1, 3, 10][q % 3]
            let max: Double = q % 2 == 0 ? .infinity : 3_000
            let expected = Self.bruteNearest(lons, lats, lon: lon, lat: lat, k: k, max: max)
            #expect(index.nearest(k: k, lon: lon, lat: lat, maxMetres: max).map(\.index) == expected)
            if max == .infinity {
                let n = buffer.withUnsafeMutableBufferPointer { index.nearestIndices(k: k, lon: lon, lat: lat, into: $0) }
                #expect(buffer.prefix(n).map(Int.init) == expected)
            }
        }
    }

    /// Brute force in the index's own terms: every point by (squared chord, index), the
    /// squared chord summed as the index sums it. `vectors` holds nil for NaN-empty points.
    static func bruteChord(_ vectors: [(x: Double, y: Double, z: Double)?], lon: Double, lat: Double, k: Int) -> [Int] {
        let q = Geodesy.unitVector(lon: lon, lat: lat)
        return vectors.indices.compactMap { i -> (Double, Int)? in
            guard let v = vectors[i] else { return nil }
            let (dx, dy, dz) = (v.x - q.x, v.y - q.y, v.z - q.z)
            return (dx * dx + dy * dy + dz * dz, i)
        }.sorted { $0 < $1 }.prefix(k).map(\.1)
    }

    /// Points over the whole sphere with the awkward cases in: both poles, both sides of the
    /// antimeridian, exact duplicates, a lattice where many points are equally far from a
    /// query (ties, broken by index), and NaN-empty points; indexed at sizes around a leaf and
    /// past the size that builds on two threads. Every query path (one query, the list with
    /// distances, the batch) gives brute force's answer, for k from 1 to past the count.
    @Test(arguments: [0, 1, 7, 8, 9, 17, 300, 20_000])
    func pointIndexEqualsBruteForceEverywhere(count: Int) throws {
        var g = SplitMix(state: UInt64(count) &+ 29)
        var lons: [Double] = [], lats: [Double] = []
        for i in 0..<count {
            let (lon, lat): (Double, Double)
            switch i % 10 {
            case 0: (lon, lat) = (Double.random(in: -180...180, using: &g), [90, -90][i / 10 % 2])  // a pole
            case 1: (lon, lat) = ([180, -180, 179.999_999, -179.999_999][i / 10 % 4], Double.random(in: -60...60, using: &g))
            case 2 where i > 10: (lon, lat) = (lons[i - 7], lats[i - 7])  // a duplicate
            case 3: (lon, lat) = (.nan, .nan)  // no point
            case 4, 5: (lon, lat) = (Double(Int.random(in: -3...3, using: &g)), Double(Int.random(in: -3...3, using: &g)))  // lattice
            default: (lon, lat) = (Double.random(in: -180...180, using: &g), Double.random(in: -90...90, using: &g))
            }
            lons.append(lon)
            lats.append(lat)
        }
        let index = try PointIndex(lons: lons, lats: lats)
        #expect(index.count == lons.filter(\.isFinite).count)
        let vectors = lons.indices.map { lons[$0].isFinite ? Geodesy.unitVector(lon: lons[$0], lat: lats[$0]) : nil }
        var queries: [Double] = []
        // Fewer queries on the largest set, for a debug build's brute force.
        for q in 0..<(count > 1_000 ? 40 : 200) {
            switch q % 4 {
            case 0: queries += [Double(Int.random(in: -3...3, using: &g)) + 0.5, Double(Int.random(in: -3...3, using: &g)) + 0.5]  // ties
            case 1: queries += [[180, -180][q / 4 % 2], Double.random(in: -90...90, using: &g)]
            case 2: queries += [Double.random(in: -180...180, using: &g), [90, -90, 89.9][q / 4 % 3]]
            default: queries += [Double.random(in: -180...180, using: &g), Double.random(in: -90...90, using: &g)]
            }
        }
        // k past the count on the small sets only: the list of k best is sorted by insertion.
        for k in [1, 3, 10] + (count <= 300 ? [count + 5] : []) {
            var batch = [Int32](repeating: 7, count: k * queries.count / 2)
            batch.withUnsafeMutableBufferPointer { out in queries.withUnsafeBufferPointer { index.nearestIndices(k: k, queries: $0, into: out) } }
            var one = [Int32](repeating: -1, count: k)
            for q in 0..<(queries.count / 2) {
                let (lon, lat) = (queries[2 * q], queries[2 * q + 1])
                let expected = Self.bruteChord(vectors, lon: lon, lat: lat, k: k)
                #expect(index.nearest(k: k, lon: lon, lat: lat).map(\.index) == expected, "k \(k) at \(lon), \(lat)")
                let n = one.withUnsafeMutableBufferPointer { index.nearestIndices(k: k, lon: lon, lat: lat, into: $0) }
                #expect(one.prefix(n).map(Int.init) == expected)
                let answer = batch[(k * q)..<(k * q + k)]
                #expect(answer.prefix(expected.count).map(Int.init) == expected)
                #expect(answer.dropFirst(expected.count).allSatisfy { $0 == -1 })
            }
        }
        // A query that is no point finds nothing, alone or in a batch.
        #expect(index.nearest(k: 3, lon: .nan, lat: .nan).isEmpty)
        var out = [Int32](repeating: 7, count: 6)
        out.withUnsafeMutableBufferPointer { out in [Double.nan, .nan, 0, 0].withUnsafeBufferPointer { index.nearestIndices(k: 3, queries: $0, into: out) } }
        #expect(out.prefix(3).allSatisfy { $0 == -1 })
    }

    /// The batch over a layer large enough to be sorted (more than `sortedBatchMinimum` points)
    /// and more queries than one sorted run (`batchSize`), in random order: the same answers as
    /// one query at a time.
    @Test func pointIndexBatchEqualsSingleQueries() throws {
        var g = SplitMix(state: 31)
        let lons = (0..<5_000).map { _ in Double.random(in: 12.09...18.86, using: &g) }
        let lats = (0..<5_000).map { _ in Double.random(in: 48.55...51.06, using: &g) }
        let index = try PointIndex(lons: lons, lats: lats)
        let n = PointIndex.batchSize + 100
        let queries = (0..<n).flatMap { _ in [Double.random(in: 12...19, using: &g), Double.random(in: 48.5...51.1, using: &g)] }
        var batch = [Int32](repeating: 7, count: 3 * n)
        batch.withUnsafeMutableBufferPointer { out in queries.withUnsafeBufferPointer { index.nearestIndices(k: 3, queries: $0, into: out) } }
        var one = [Int32](repeating: -1, count: 3)
        var mismatches = 0
        for q in 0..<n {
            _ = one.withUnsafeMutableBufferPointer { index.nearestIndices(k: 3, lon: queries[2 * q], lat: queries[2 * q + 1], into: $0) }
            if Array(batch[(3 * q)..<(3 * q + 3)]) != one { mismatches += 1 }
        }
        #expect(mismatches == 0)
    }

    /// EXPLAIN's node count: a search that must see every point enters every node of the
    /// implicit tree (counted here from its shape); a 1-nearest search prunes nearly all.
    @Test func pointIndexCountsTheNodesItVisits() throws {
        var g = SplitMix(state: 17)
        let n = 10_000
        let lons = (0..<n).map { _ in Double.random(in: 12.09...18.86, using: &g) }
        let lats = (0..<n).map { _ in Double.random(in: 48.55...51.06, using: &g) }
        let index = try PointIndex(lons: lons, lats: lats)
        func nodes(_ size: Int) -> Int { size <= PointIndex.leafSize ? 1 : 1 + nodes(size / 2) + nodes(size - size / 2 - 1) }
        func shallowestLeaf(_ size: Int) -> Int { size <= PointIndex.leafSize ? 1 : 1 + min(shallowestLeaf(size / 2), shallowestLeaf(size - size / 2 - 1)) }
        var visited = 0
        _ = index.nearest(k: n, lon: 15, lat: 50, visited: &visited)
        #expect(visited == nodes(n))
        #expect(visited == 3617)
        var total = 0
        for _ in 0..<100 {
            _ = index.nearest(k: 1, lon: Double.random(in: 12.09...18.86, using: &g), lat: Double.random(in: 48.55...51.06, using: &g), visited: &visited)
            #expect(visited >= shallowestLeaf(n))  // at least the path from the root to a leaf
            total += visited
        }
        #expect(total < 100 * 3617 / 20)  // under 5% of the tree on average
        print("1-nearest among \(n) points: \(Double(total) / 100) of \(nodes(n)) k-d tree nodes on average")
    }

    /// The three stations nearest to Old Town (14.4208, 50.0880), by code and distance to the
    /// metre: computed once by brute-force haversine in Python over the same CSV.
    @Test func nearestStationsToOldTown() throws {
        let (codes, lons, lats) = try Self.stations()
        #expect(codes.count == 17)
        let index = try PointIndex(lons: lons, lats: lats)
        let found = index.nearest(k: 3, lon: 14.4208, lat: 50.0880)
        #expect(found.map { codes[$0.index] } == ["AREPA", "AKALA", "ARIEA"])
        #expect(found.map { ($0.metres).rounded() } == [601, 1667, 1722])
        #expect(index.nearest(k: 3, lon: 14.4208, lat: 50.0880, maxMetres: 1_000).map { codes[$0.index] } == ["AREPA"])
        let all = index.within(metres: 1_800, lon: 14.4208, lat: 50.0880, filter: { codes[$0] != "AKALA" })
        #expect(all.map { codes[$0.index] } == ["AREPA", "ARIEA"])
    }

    /// The scan's unit vector (PointIndex.scan) is within the 2e-15 per coordinate that its
    /// error margin assumes, of `Geodesy.unitVector`'s: at the quarter turns and the halfway
    /// points between them (where the reduction switches), at the range's ends, and over
    /// random positions.
    @Test func approximateUnitVectorIsWithinItsBound() {
        var g = SplitMix(state: 41)
        var positions: [(Double, Double)] = []
        for base in stride(from: -360.0, through: 360, by: 45) {
            for lon in [base, base.nextUp, base.nextDown, base + 1e-9, base - 1e-9] where abs(lon) <= 360 {
                positions.append((lon, Double.random(in: -90...90, using: &g)))
                positions.append((Double.random(in: -360...360, using: &g), max(-90, min(90, lon / 4))))
            }
        }
        positions += [(0, 90), (0, -90), (180, 0), (-180, 0), (360, 90), (-360, -90), (-0.0, -0.0)]
        for _ in 0..<200_000 { positions.append((Double.random(in: -360...360, using: &g), Double.random(in: -90...90, using: &g))) }
        var worst = 0.0
        for (lon, lat) in positions {
            let a = approximateUnitVectors(lon: SIMD2(lon, -lon), lat: SIMD2(lat, -lat))
            #expect(a.inRange[0] && a.inRange[1])
            for (lane, sign) in [(0, 1.0), (1, -1.0)] {
                let b = Geodesy.unitVector(lon: sign * lon, lat: sign * lat)
                worst = max(worst, abs(a.x[lane] - b.x), abs(a.y[lane] - b.y), abs(a.z[lane] - b.z))
            }
        }
        #expect(worst <= 2e-15)
        for (lon, lat) in [(360.5, 0.0), (0, 90.5), (.nan, 0), (0, .nan), (-1e300, 0), (.infinity, 0)] {
            #expect(!approximateUnitVectors(lon: SIMD2(lon, 0), lat: SIMD2(lat, 0)).inRange[0])
        }
        print("approximate unit vector: at most \(worst) from libm's per coordinate")
    }

    /// Sets small enough to be scanned (PointIndex.scanMaximum) against brute force in the
    /// index's own terms, for k = 1...3 with and without a limit, through the list, the single
    /// query and the batch (even and odd counts of queries): points with exact duplicates, a
    /// lattice with many ties, both poles and both sides of the antimeridian; queries at tie
    /// points, on the poles, across the antimeridian, and outside the approximation's range.
    @Test(arguments: [1, 2, 3, 4, 9, 17, 31, 32])
    func scannedSetsEqualBruteForce(count: Int) throws {
        var g = SplitMix(state: UInt64(count) &+ 43)
        var lons: [Double] = [], lats: [Double] = []
        for i in 0..<count {
            let (lon, lat): (Double, Double)
            switch i % 8 {
            case 0: (lon, lat) = (Double.random(in: 14...15, using: &g), Double.random(in: 49.9...50.2, using: &g))
            case 1: (lon, lat) = ([180, -180, 179.999_999, -179.999_999][i / 8 % 4], Double.random(in: -1...1, using: &g))
            case 2: (lon, lat) = (Double.random(in: -180...180, using: &g), [90, -90][i / 8 % 2])
            case 3 where i > 8: (lon, lat) = (lons[i - 3], lats[i - 3])  // a duplicate
            case 4, 5: (lon, lat) = (Double(Int.random(in: -1...1, using: &g)), Double(Int.random(in: -1...1, using: &g)))  // lattice
            default: (lon, lat) = (Double.random(in: 14...15, using: &g), Double.random(in: 49.9...50.2, using: &g))
            }
            lons.append(lon)
            lats.append(lat)
        }
        let index = try PointIndex(lons: lons, lats: lats)
        let vectors = lons.indices.map { Geodesy.unitVector(lon: lons[$0], lat: lats[$0]) }
        func brute(lon: Double, lat: Double, k: Int, limit: Double) -> [Int] {
            let q = Geodesy.unitVector(lon: lon, lat: lat)
            return vectors.indices.map { i -> (Double, Int) in
                let (dx, dy, dz) = (vectors[i].x - q.x, vectors[i].y - q.y, vectors[i].z - q.z)
                return (dx * dx + dy * dy + dz * dz, i)
            }.filter { $0.0 <= limit }.sorted { $0 < $1 }.prefix(k).map(\.1)
        }
        var queries: [Double] = []
        for q in 0..<301 {
            switch q % 6 {
            case 0: queries += [Double(Int.random(in: -1...1, using: &g)) + 0.5, Double(Int.random(in: -1...1, using: &g))]  // ties
            case 1: queries += [[180, -180, 540, -400][q / 6 % 4], Double.random(in: -1...1, using: &g)]
            case 2: queries += [Double.random(in: -180...180, using: &g), [90, -90, 95, .nan][q / 6 % 4]]
            default: queries += [Double.random(in: 13.9...15.1, using: &g), Double.random(in: 49.8...50.3, using: &g)]
            }
        }
        var settled = 0, random = 0
        for k in 1...3 {
            for metres in [Double.infinity, 30_000] {
                let limit = metres.isFinite ? pow(Geodesy.chord(fromMetres: metres), 2) : 9
                for q in 0..<(queries.count / 2) {
                    let (lon, lat) = (queries[2 * q], queries[2 * q + 1])
                    let expected = lon.isFinite && lat.isFinite ? brute(lon: lon, lat: lat, k: k, limit: limit) : []
                    var visited = 0
                    #expect(index.nearest(k: k, lon: lon, lat: lat, maxMetres: metres, visited: &visited).map(\.index) == expected,
                            "k \(k) within \(metres) of \(lon), \(lat)")
                    if q % 6 >= 3 && count > PointIndex.leafSize {
                        random += 1
                        if visited == 1 { settled += 1 }
                    }
                }
            }
            for n in [queries.count / 2, queries.count / 2 - 1] {
                var batch = [Int32](repeating: 7, count: k * n)
                batch.withUnsafeMutableBufferPointer { out in queries.withUnsafeBufferPointer { index.nearestIndices(k: k, queries: UnsafeBufferPointer(rebasing: $0[0..<(2 * n)]), into: out) } }
                var one = [Int32](repeating: -1, count: k)
                for q in 0..<n {
                    let (lon, lat) = (queries[2 * q], queries[2 * q + 1])
                    let expected = lon.isFinite && lat.isFinite ? brute(lon: lon, lat: lat, k: k, limit: 9) : []
                    let found = one.withUnsafeMutableBufferPointer { index.nearestIndices(k: k, lon: lon, lat: lat, into: $0) }
                    #expect(one.prefix(found).map(Int.init) == expected)
                    let answer = batch[(k * q)..<(k * q + k)]
                    #expect(answer.prefix(expected.count).map(Int.init) == expected, "batch of \(n), k \(k) at \(lon), \(lat)")
                    #expect(answer.dropFirst(expected.count).allSatisfy { $0 == -1 })
                }
            }
        }
        // Duplicates are exact ties, which the scan leaves to the tree; some answers have none.
        if count > PointIndex.leafSize { #expect(settled > 0, "\(settled) of \(random) random queries settled by the scan") }
    }

    /// Prague's 17 stations (W4's layer) and random queries around them: brute force's answers,
    /// and nearly all settled by the scan alone (one node visited), the rest by the tree.
    @Test func stationsScannedEqualBruteForce() throws {
        let (_, lons, lats) = try Self.stations()
        let index = try PointIndex(lons: lons, lats: lats)
        var g = SplitMix(state: 47)
        var settled = 0
        let n = 5_000
        for _ in 0..<n {
            let lon = Double.random(in: 14.2...14.71, using: &g), lat = Double.random(in: 49.94...50.18, using: &g)
            var visited = 0
            #expect(index.nearest(k: 3, lon: lon, lat: lat, visited: &visited).map(\.index) == Self.bruteNearest(lons, lats, lon: lon, lat: lat, k: 3))
            if visited == 1 { settled += 1 }
        }
        #expect(settled * 100 >= n * 99, "\(settled) of \(n) settled by the scan")
    }

    /// The box bound never exceeds the true minimum distance to the box (sampled densely on its
    /// boundary), so pruning never loses an answer; and it is tight (within 1 m of the sample).
    @Test func boxDistanceIsATightLowerBound() {
        var g = SplitMix(state: 17)
        for _ in 0..<300 {
            let box = Self.randomBox(&g)
            let lon = Double.random(in: 10...21, using: &g), lat = Double.random(in: 47...53, using: &g)
            var sampled = Double.infinity
            let n = 400
            for i in 0...n {
                let t = Double(i) / Double(n)
                let x = box.minLon + t * (box.maxLon - box.minLon), y = box.minLat + t * (box.maxLat - box.minLat)
                for (px, py) in [(x, box.minLat), (x, box.maxLat), (box.minLon, y), (box.maxLon, y)] {
                    sampled = min(sampled, Geodesy.haversine(lon1: lon, lat1: lat, lon2: px, lat2: py))
                }
            }
            if box.contains(lon: lon, lat: lat) { sampled = 0 }
            let bound = SphericalDistance.toBox(lon: lon, lat: lat, box)
            #expect(bound <= sampled + 1e-6)
            #expect(sampled - bound < 1.0)
        }
    }

    @Test func tinyTrees() throws {
        let one = try PackedRTree(boxes: [BBox(minLon: 1, minLat: 1, maxLon: 2, maxLat: 2)])
        #expect(one.search(BBox(minLon: 0, minLat: 0, maxLon: 0.5, maxLat: 0.5)) == [])
        #expect(one.search(BBox(minLon: 2, minLat: 2, maxLon: 3, maxLat: 3)) == [0])
        #expect(try PackedRTree(boxes: []).search(BBox(minLon: 0, minLat: 0, maxLon: 9, maxLat: 9)) == [])
        #expect(try PointIndex(lons: [], lats: []).nearest(k: 3, lon: 0, lat: 0).isEmpty)
    }
}

