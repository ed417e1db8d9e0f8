// Exact k-nearest over points on the sphere. Each point is stored as its unit vector (x, y, z);
// the chord between two unit vectors grows monotonically with their great-circle distance, so
// ranking by squared chord is exact and needs no trigonometry per candidate. The vectors sit
// in an implicit 3-d k-d tree (a median-split array, no node objects): pruning by the squared
// distance to a splitting plane is exact in chord space too. Only the answers are converted to
// metres (haversine, R = 6,371,008.8 m).

import Foundation
import Geometry

public struct PointIndex: Sendable {
    /// Unit vectors in tree order, three doubles per point.
    private let xyz: [Double]
    /// Original index of the point at each tree position.
    private let order: [Int32]
    private let lons: [Double]
    private let lats: [Double]
    /// The points indexed: positions that are NaN in both coordinates are left out.
    public let count: Int
    /// Leaves this small are cheaper to scan than to descend.
    static let leafSize = 8

    /// Indexes the points by position. A position whose longitude and latitude are both NaN is
    /// no point (WKB's spelling of POINT EMPTY, and a layer's placeholder for a feature without
    /// one) and is left out; any other NaN or infinite coordinate is refused with
    /// `.nonFinite(item:)`, so a caller can name the feature rather than index garbage.
    public init(lons: [Double], lats: [Double]) throws(SpatialIndexError) {
        precondition(lons.count == lats.count, "PointIndex: lons and lats differ in length")  // programmer error, not input
        guard lons.count <= Int(Int32.max) else { throw .tooLarge(lons.count) }
        for i in lons.indices where !(lons[i].isFinite && lats[i].isFinite) && !(lons[i].isNaN && lats[i].isNaN) {
            throw .nonFinite(item: i)
        }
        self.lons = lons
        self.lats = lats
        var items = lons.indices.filter { lons[$0].isFinite && lats[$0].isFinite }.map { i -> (Double, Double, Double, Int32) in
            let v = Geodesy.unitVector(lon: lons[i], lat: lats[i])
            return (v.x, v.y, v.z, Int32(truncatingIfNeeded: i))
        }
        count = items.count
        // Build the implicit tree: the median of [lo, hi) along axis depth % 3 goes to the middle,
        // smaller keys before it and larger after (ties by index, so the tree is the same on
        // every run); ranges of at most `leafSize` points stay as unordered leaves, scanned
        // whole. A selection, not a sort, per level: O(n log n) in all, which a write's rebuilt
        // layer pays for every batch (Engine/LayerChanges.swift).
        items.withUnsafeMutableBufferPointer { items in
            func build(_ lo: Int, _ hi: Int, _ depth: Int) {
                guard hi - lo > PointIndex.leafSize else { return }
                let mid = (lo + hi) / 2
                PointIndex.select(mid, in: items, lo, hi, axis: depth % 3)
                build(lo, mid, depth + 1)
                build(mid + 1, hi, depth + 1)
            }
            build(0, items.count, 0)
        }
        var xyz: [Double] = []
        xyz.reserveCapacity(3 * items.count)
        for item in items { xyz.append(item.0); xyz.append(item.1); xyz.append(item.2) }
        self.xyz = xyz
        order = items.map(\.3)
    }

    /// Puts into `items[k]` the item that a sort of `items[lo..<hi]` by (key on `axis`, index)
    /// would put there, with the smaller ones before it and the larger after (Hoare's selection,
    /// median-of-three pivots; a range that keeps shrinking slowly is sorted instead, so the
    /// worst case stays O(n log n)).
    static func select(_ k: Int, in items: UnsafeMutableBufferPointer<(Double, Double, Double, Int32)>, _ lo: Int, _ hi: Int, axis: Int) {
        @inline(__always) func key(_ i: Int) -> Double { axis == 0 ? items[i].0 : axis == 1 ? items[i].1 : items[i].2 }
        @inline(__always) func less(_ i: Int, _ j: Int) -> Bool {
            let a = key(i), b = key(j)
            return a < b || (a == b && items[i].3 < items[j].3)
        }
        var lo = lo, hi = hi
        var budget = 2 * (Int.bitWidth - (hi - lo).leadingZeroBitCount) + 4
        while hi - lo > 16 {
            budget -= 1
            if budget < 0 {
                var range = UnsafeMutableBufferPointer(rebasing: items[lo..<hi])
                range.sort { a, b in
                    let ka = axis == 0 ? a.0 : axis == 1 ? a.1 : a.2
                    let kb = axis == 0 ? b.0 : axis == 1 ? b.1 : b.2
                    return ka < kb || (ka == kb && a.3 < b.3)
                }
                return
            }
            // Median of three to hi - 1, then partition [lo, hi - 1) around it (Lomuto).
            let m = lo + (hi - lo) / 2, last = hi - 1
            if less(m, lo) { items.swapAt(m, lo) }
            if less(last, lo) { items.swapAt(last, lo) }
            if less(m, last) { items.swapAt(m, last) }
            var store = lo
            for i in lo..<last where less(i, last) {
                items.swapAt(i, store)
                store += 1
            }
            items.swapAt(store, last)
            if store == k { return }
            if k < store { hi = store } else { lo = store + 1 }
        }
        // Insertion sort of what is left: k lands in place.
        if hi - lo > 1 {
            for i in (lo + 1)..<hi {
                var j = i
                while j > lo && less(j, j - 1) {
                    items.swapAt(j, j - 1)
                    j -= 1
                }
            }
        }
    }

    /// The k nearest points, nearest first (ties by smaller index), optionally within
    /// `maxMetres` and passing `filter`. Distances in metres (haversine). `visited` counts the
    /// tree nodes the search entered (inner nodes and leaves), for EXPLAIN.
    public func nearest(k: Int, lon: Double, lat: Double, maxMetres: Double = .infinity,
                        filter: ((Int) -> Bool)? = nil, visited: UnsafeMutablePointer<Int>? = nil) -> [(index: Int, metres: Double)] {
        guard k > 0, count > 0 else { return [] }
        let q = Geodesy.unitVector(lon: lon, lat: lat)
        let limitChord = maxMetres.isFinite ? Geodesy.chord(fromMetres: maxMetres) : 3
        var best = Best(capacity: min(k, count), limit: limitChord * limitChord)
        xyz.withUnsafeBufferPointer { xyz in
            order.withUnsafeBufferPointer { order in
                search(xyz, order, 0, count, 0, q.x, q.y, q.z, &best, filter)
            }
        }
        visited?.pointee = best.visited
        return best.sorted().map { entry in
            let i = Int(entry.index)
            return (i, Geodesy.haversine(lon1: lon, lat1: lat, lon2: lons[i], lat2: lats[i]))
        }
    }

    /// Every point within `metres`, nearest first.
    public func within(metres: Double, lon: Double, lat: Double, filter: ((Int) -> Bool)? = nil) -> [(index: Int, metres: Double)] {
        nearest(k: count, lon: lon, lat: lat, maxMetres: metres, filter: filter)
    }

    /// Writes the indices of the k nearest points (nearest first) into `result`, which must
    /// hold k entries; returns how many were found. No allocation per query beyond the
    /// caller's buffer: the benchmark's and the server's hot path.
    public func nearestIndices(k: Int, lon: Double, lat: Double, into result: UnsafeMutableBufferPointer<Int32>) -> Int {
        guard k > 0, count > 0 else { return 0 }
        let q = Geodesy.unitVector(lon: lon, lat: lat)
        return withUnsafeTemporaryAllocation(of: (Double, Int32).self, capacity: min(k, count)) { storage in
            var best = Best(storage: storage, limit: 9)
            xyz.withUnsafeBufferPointer { xyz in
                order.withUnsafeBufferPointer { order in
                    search(xyz, order, 0, count, 0, q.x, q.y, q.z, &best, nil)
                }
            }
            for i in 0..<best.size { result[i] = best.storage[i].1 }
            return best.size
        }
    }

    private func search(_ xyz: UnsafeBufferPointer<Double>, _ order: UnsafeBufferPointer<Int32>, _ lo: Int, _ hi: Int, _ depth: Int,
                        _ qx: Double, _ qy: Double, _ qz: Double, _ best: inout Best, _ filter: ((Int) -> Bool)?) {
        best.visited &+= 1
        if hi - lo <= PointIndex.leafSize {
            for i in lo..<hi {
                let dx = xyz[3 * i] - qx, dy = xyz[3 * i + 1] - qy, dz = xyz[3 * i + 2] - qz
                let d2 = dx * dx + dy * dy + dz * dz
                if d2 <= best.bound, filter?(Int(order[i])) ?? true { best.insert(d2, order[i]) }
            }
            return
        }
        let mid = (lo + hi) / 2
        let px = xyz[3 * mid], py = xyz[3 * mid + 1], pz = xyz[3 * mid + 2]
        let dx = px - qx, dy = py - qy, dz = pz - qz
        let d2 = dx * dx + dy * dy + dz * dz
        if d2 <= best.bound, filter?(Int(order[mid])) ?? true { best.insert(d2, order[mid]) }
        let axis = depth % 3
        let delta = axis == 0 ? qx - px : axis == 1 ? qy - py : qz - pz
        // Near side first; the far side only if the splitting plane is within the bound.
        if delta < 0 {
            search(xyz, order, lo, mid, depth + 1, qx, qy, qz, &best, filter)
            if delta * delta <= best.bound { search(xyz, order, mid + 1, hi, depth + 1, qx, qy, qz, &best, filter) }
        } else {
            search(xyz, order, mid + 1, hi, depth + 1, qx, qy, qz, &best, filter)
            if delta * delta <= best.bound { search(xyz, order, lo, mid, depth + 1, qx, qy, qz, &best, filter) }
        }
    }
}

/// The k best (squared chord, index) pairs seen so far, kept sorted (k is small: a handful of
/// stations), with the admission bound cached.
private struct Best {
    var storage: UnsafeMutableBufferPointer<(Double, Int32)>
    var size = 0
    /// Tree nodes entered so far.
    var visited = 0
    let limit: Double
    /// Anything farther than this cannot enter.
    private(set) var bound: Double

    init(storage: UnsafeMutableBufferPointer<(Double, Int32)>, limit: Double) {
        self.storage = storage
        self.limit = limit
        bound = limit
    }

    init(capacity: Int, limit: Double) {
        self.init(storage: UnsafeMutableBufferPointer<(Double, Int32)>.allocate(capacity: capacity), limit: limit)
    }

    static func worse(_ a: (Double, Int32), _ b: (Double, Int32)) -> Bool {
        a.0 > b.0 || (a.0 == b.0 && a.1 > b.1)
    }

    mutating func insert(_ d2: Double, _ index: Int32) {
        let item = (d2, index)
        var j: Int
        if size < storage.count {
            j = size
            size += 1
        } else {
            guard Best.worse(storage[size - 1], item) else { return }
            j = size - 1
        }
        while j > 0 && Best.worse(storage[j - 1], item) {
            storage[j] = storage[j - 1]
            j -= 1
        }
        storage[j] = item
        if size == storage.count { bound = storage[size - 1].0 }
    }

    /// Sorted entries; frees the storage this value allocated itself.
    mutating func sorted() -> [(d2: Double, index: Int32)] {
        let out = (0..<size).map { (storage[$0].0, storage[$0].1) }
        storage.deallocate()
        return out
    }
}

/// Lower bounds on great-circle distances, for pruning R-tree searches over lon/lat boxes.
public enum SphericalDistance {
    /// The great-circle metres from a point to the nearest point of a lon/lat box: 0 inside;
    /// along the meridian when the point's longitude is within the box's; otherwise the
    /// distance to the nearer meridian edge of the box (the perpendicular foot on that meridian,
    /// or the edge's nearer corner). Exact for boxes less than 90° of longitude away from the
    /// point and not crossing the antimeridian, which covers every layer this engine serves.
    public static func toBox(lon: Double, lat: Double, _ box: BBox) -> Double {
        if lon >= box.minLon && lon <= box.maxLon {
            if lat < box.minLat { return Geodesy.earthRadius * (box.minLat - lat) * .pi / 180 }
            if lat > box.maxLat { return Geodesy.earthRadius * (lat - box.maxLat) * .pi / 180 }
            return 0
        }
        let edge = lon < box.minLon ? box.minLon : box.maxLon
        let dLambda = (lon - edge) * .pi / 180
        let phi = lat * .pi / 180
        let cosD = cos(dLambda)
        if cosD > 0 {
            // The foot of the perpendicular from the point to the meridian's great circle.
            let footLat = atan2(tan(phi), cosD) * 180 / .pi
            if footLat >= box.minLat && footLat <= box.maxLat {
                return Geodesy.earthRadius * asin(min(1, abs(sin(dLambda)) * cos(phi)))
            }
        }
        return min(Geodesy.haversine(lon1: lon, lat1: lat, lon2: edge, lat2: box.minLat),
                   Geodesy.haversine(lon1: lon, lat1: lat, lon2: edge, lat2: box.maxLat))
    }
}
