import Foundation
import Engine
import Geometry
import SpatialIndex
import Store
import TestSupport
import Testing

/// Property tests over 100,000 random points each: the engine's answers equal brute force
/// with a reference implementation (GEOS for point-in-polygon, haversine for k-nearest, a
/// linear scan for bounding boxes).
@Suite(.validatesStores) struct PropertyTests {
    static let count = 100_000

    @Test(arguments: ["districts", "parking"])
    func containingEqualsGEOS(layerName: String) throws {
        let snapshot = try DemoStore.get()
        let layer = try snapshot.layer(layerName)
        let geometries = layer.geometries.map { $0 ?? .collection([]) }
        let geos = try GEOSContext()
        let reference = try GEOSPreparedLayer(context: geos, geometries: geometries)
        let boxes = geometries.map(\.bbox)
        var g = SplitMix(state: 2026)
        var inside = 0, mismatches = 0
        for _ in 0..<Self.count {
            let lon = Double.random(in: layer.bounds.minLon...layer.bounds.maxLon, using: &g)
            let lat = Double.random(in: layer.bounds.minLat...layer.bounds.maxLat, using: &g)
            var expected: [Int] = []
            for i in boxes.indices where boxes[i].contains(lon: lon, lat: lat) {
                if try reference.contains(i, lon: lon, lat: lat) { expected.append(i) }
            }
            let found = try snapshot.containing(snapshot.layer(layerName), at: Point(lon: lon, lat: lat)).map(\.index).sorted()
            if found != expected { mismatches += 1 }
            inside += expected.isEmpty ? 0 : 1
        }
        #expect(mismatches == 0)
        #expect(inside > Self.count / 20)  // the sample does reach inside the polygons
    }

    /// Brute force over unit vectors with unsafe buffers, so 10^9 distance checks stay fast in
    /// a debug build: the k best by squared chord, ties by index (the same order as haversine).
    static func bruteNearest(_ xyz: UnsafeBufferPointer<Double>, _ q: (x: Double, y: Double, z: Double), k: Int) -> [Int] {
        var best: [(Double, Int)] = []
        let n = xyz.count / 3
        var bound = Double.infinity
        for i in 0..<n {
            let dx = xyz[3 * i] - q.x, dy = xyz[3 * i + 1] - q.y, dz = xyz[3 * i + 2] - q.z
            let d = dx * dx + dy * dy + dz * dz
            if d < bound || best.count < k {
                best.append((d, i))
                best.sort { $0 < $1 }
                if best.count > k { best.removeLast() }
                if best.count == k { bound = best[k - 1].0 }
            }
        }
        return best.map(\.1)
    }

    @Test func nearestEqualsBruteForceOnStationsAndRandomStations() throws {
        let snapshot = try DemoStore.get()
        let stations = try snapshot.layer("stations")
        var g = SplitMix(state: 4)
        // The 17 stations.
        let points = stations.geometries.compactMap { geometry -> Point? in if case .point(let p)? = geometry { p } else { nil } }
        // And 10,000 random stations in the Czech bbox.
        let random = (0..<10_000).map { _ in Point(lon: Double.random(in: 12.09...18.86, using: &g), lat: Double.random(in: 48.55...51.06, using: &g)) }
        for set in [points, random] {
            let index = try PointIndex(lons: set.map(\.lon), lats: set.map(\.lat))
            let xyz = set.flatMap { p -> [Double] in let v = Geodesy.unitVector(lon: p.lon, lat: p.lat); return [v.x, v.y, v.z] }
            var mismatches = 0
            xyz.withUnsafeBufferPointer { buffer in
                for _ in 0..<Self.count {
                    let lon = Double.random(in: 12.09...18.86, using: &g), lat = Double.random(in: 48.55...51.06, using: &g)
                    let expected = Self.bruteNearest(buffer, Geodesy.unitVector(lon: lon, lat: lat), k: 3)
                    if index.nearest(k: 3, lon: lon, lat: lat).map(\.index) != expected { mismatches += 1 }
                }
            }
            #expect(mismatches == 0, "\(set.count) stations")
        }
        // Through the engine, with distances: the 17 stations against haversine.
        for _ in 0..<1_000 {
            let lon = Double.random(in: 14.2...14.7, using: &g), lat = Double.random(in: 49.9...50.2, using: &g)
            let found = try snapshot.nearest(snapshot.layer("stations"), to: Point(lon: lon, lat: lat), k: 3)
            let expected = points.indices.map { (Geodesy.haversine(lon1: lon, lat1: lat, lon2: points[$0].lon, lat2: points[$0].lat), $0) }.sorted { $0 < $1 }.prefix(3)
            #expect(found.map(\.index) == expected.map(\.1))
            #expect(zip(found, expected).allSatisfy { abs(($0.metres ?? -1) - $1.0) < 1e-6 })
        }
    }

    @Test func intersectingEqualsALinearScan() throws {
        let snapshot = try DemoStore.get()
        let layer = try snapshot.layer("parking")
        let boxes = layer.geometries.map { $0?.bbox ?? .empty }
        var g = SplitMix(state: 9)
        var mismatches = 0, hits = 0
        for _ in 0..<Self.count {
            let lon = Double.random(in: layer.bounds.minLon...layer.bounds.maxLon, using: &g)
            let lat = Double.random(in: layer.bounds.minLat...layer.bounds.maxLat, using: &g)
            let box = BBox(minLon: lon, minLat: lat, maxLon: lon + Double.random(in: 0...0.01, using: &g), maxLat: lat + Double.random(in: 0...0.01, using: &g))
            let expected = boxes.indices.filter { boxes[$0].intersects(box) }
            let found = try snapshot.intersecting(snapshot.layer("parking"), box: box).map(\.index)
            if found != expected { mismatches += 1 }
            hits += expected.count
        }
        #expect(mismatches == 0)
        #expect(hits > Self.count)
    }
}
