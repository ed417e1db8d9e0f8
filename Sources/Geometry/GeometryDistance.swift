// Great-circle distance between two geometries, for the spatial joins (a station within 200 m of
// a pavilion, the nearest pen to a path). The rule is the engine's one distance rule extended:
// edges are great-circle arcs measured with `pointToSegment`, polygons contain by the flat
// even-odd rule of `PointInPolygon`, and two geometries that touch, overlap or cross are 0 apart.

import Foundation

extension Geodesy {
    /// Great-circle metres between the nearest points of `a` and `b`; 0 when they meet (one
    /// inside the other's polygon, or edges crossing). Two arcs that do not cross are nearest at
    /// an end of one of them, so away from contact the answer is the least distance from a
    /// vertex of either geometry to the other: exact under the engine's rule, with no sampling.
    public static func distance(between a: Geometry, _ b: Geometry) -> Double {
        if case .point(let p) = a { return distance(from: p, to: b) }
        if case .point(let p) = b { return distance(from: p, to: a) }
        let chainsA = GeometryChains(a), chainsB = GeometryChains(b)
        if touch(a, chainsA, b, chainsB) { return 0 }
        var best = Double.infinity
        for (x, y) in [(chainsA, b), (chainsB, a)] {
            for chain in x.chains {
                var i = chain.startIndex
                while i + 1 < chain.endIndex {
                    best = min(best, distance(from: Point(lon: chain[i], lat: chain[i + 1]), to: y))
                    if best == 0 { return 0 }
                    i += 2
                }
            }
        }
        return best
    }
}

extension Geodesy {
    /// Whether two geometries touch, overlap or cross (one inside the other's polygon, or edges
    /// crossing in lon/lat): where `distance(between:_:)` is 0 without measuring anything, so a
    /// caller asking only "within 0 m?" need not measure (a fence's `cross` on a polygon).
    public static func touch(_ a: Geometry, _ b: Geometry) -> Bool {
        touch(a, GeometryChains(a), b, GeometryChains(b))
    }

    fileprivate static func touch(_ a: Geometry, _ chainsA: GeometryChains, _ b: Geometry, _ chainsB: GeometryChains) -> Bool {
        a.bbox.intersects(b.bbox) && (chainsA.meets(chainsB) || chainsB.meets(chainsA) || chainsA.crosses(chainsB))
    }
}

/// A geometry as vertex chains (lines and rings, a lone point a chain of one vertex) and its
/// polygons, for the contact tests of `Geodesy.distance(between:_:)`.
struct GeometryChains {
    var chains: [ArraySlice<Double>] = []
    var polygons: [Polygon] = []

    init(_ geometry: Geometry) { add(geometry) }

    private mutating func add(_ geometry: Geometry) {
        switch geometry {
        case .point(let p): chains.append([p.lon, p.lat][...])
        case .multiPoint(let m):
            var i = 0
            while i + 1 < m.coordinates.count { chains.append(m.coordinates[i..<(i + 2)]); i += 2 }
        case .lineString(let l): chains.append(l.coordinates[...])
        case .multiLineString(let m):
            for k in 0..<m.lineCount { chains.append(m.coordinates[(2 * m.lineOffsets[k])..<(2 * m.lineOffsets[k + 1])]) }
        case .polygon(let p):
            polygons.append(p)
            for r in 0..<p.ringCount { chains.append(p.ring(r)) }
        case .multiPolygon(let m): for p in m.polygons { add(.polygon(p)) }
        case .collection(let parts): for part in parts { add(part) }
        }
    }

    /// Whether a vertex of `other` lies inside one of these polygons (then the two meet).
    func meets(_ other: GeometryChains) -> Bool {
        guard !polygons.isEmpty else { return false }
        for chain in other.chains where chain.count >= 2 {
            let lon = chain[chain.startIndex], lat = chain[chain.startIndex + 1]
            if polygons.contains(where: { $0.contains(lon: lon, lat: lat) }) { return true }
        }
        return false
    }

    /// Whether an edge of these chains crosses or touches an edge of `other` (in lon/lat, the
    /// flat rule the polygons' containment uses).
    func crosses(_ other: GeometryChains) -> Bool {
        for p in chains where p.count >= 4 {
            var i = p.startIndex
            while i + 3 < p.endIndex {
                let (ax, ay, bx, by) = (p[i], p[i + 1], p[i + 2], p[i + 3])
                let (minX, maxX, minY, maxY) = (min(ax, bx), max(ax, bx), min(ay, by), max(ay, by))
                for q in other.chains where q.count >= 4 {
                    var j = q.startIndex
                    while j + 3 < q.endIndex {
                        let (cx, cy, dx, dy) = (q[j], q[j + 1], q[j + 2], q[j + 3])
                        if max(cx, dx) >= minX, min(cx, dx) <= maxX, max(cy, dy) >= minY, min(cy, dy) <= maxY,
                           GeometryChains.segmentsMeet(ax, ay, bx, by, cx, cy, dx, dy) { return true }
                        j += 2
                    }
                }
                i += 2
            }
        }
        return false
    }

    /// Orientation test for two segments a–b and c–d, touching included.
    static func segmentsMeet(_ ax: Double, _ ay: Double, _ bx: Double, _ by: Double,
                             _ cx: Double, _ cy: Double, _ dx: Double, _ dy: Double) -> Bool {
        func orient(_ px: Double, _ py: Double, _ qx: Double, _ qy: Double, _ rx: Double, _ ry: Double) -> Double {
            (qx - px) * (ry - py) - (qy - py) * (rx - px)
        }
        func within(_ px: Double, _ py: Double, _ qx: Double, _ qy: Double, _ rx: Double, _ ry: Double) -> Bool {
            rx >= min(px, qx) && rx <= max(px, qx) && ry >= min(py, qy) && ry <= max(py, qy)
        }
        let o1 = orient(ax, ay, bx, by, cx, cy), o2 = orient(ax, ay, bx, by, dx, dy)
        let o3 = orient(cx, cy, dx, dy, ax, ay), o4 = orient(cx, cy, dx, dy, bx, by)
        if ((o1 > 0 && o2 < 0) || (o1 < 0 && o2 > 0)) && ((o3 > 0 && o4 < 0) || (o3 < 0 && o4 > 0)) { return true }
        if o1 == 0 && within(ax, ay, bx, by, cx, cy) { return true }
        if o2 == 0 && within(ax, ay, bx, by, dx, dy) { return true }
        if o3 == 0 && within(cx, cy, dx, dy, ax, ay) { return true }
        if o4 == 0 && within(cx, cy, dx, dy, bx, by) { return true }
        return false
    }
}

extension Geometry {
    /// A point that stands for the geometry in a containment join: a point is itself; a
    /// multipoint, line or polygon its first vertex (which lies on it, unlike a box centre).
    public var anchor: Point? {
        let chains = GeometryChains(self).chains
        guard let first = chains.first(where: { $0.count >= 2 }) else { return nil }
        return Point(lon: first[first.startIndex], lat: first[first.startIndex + 1])
    }
}
