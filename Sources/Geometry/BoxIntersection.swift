// Whether a geometry meets a box (OGC API – Features' `bbox`: the features whose geometry
// intersects it). In lon/lat degrees, as the box is given, with the box closed (a geometry
// touching its edge meets it). A geometry meets the box when one of its vertices lies in it,
// one of its edges crosses it, or (a polygon) it holds the box inside.

extension Geometry {
    public func intersects(box: BBox) -> Bool {
        guard !box.isEmpty, bbox.intersects(box) else { return false }
        switch self {
        case .point(let p): return box.contains(lon: p.lon, lat: p.lat)
        case .multiPoint(let m): return BoxIntersection.anyVertex(m.coordinates[...], in: box)
        case .lineString(let l): return BoxIntersection.path(l.coordinates[...], meets: box)
        case .multiLineString(let m): return (0..<m.lineCount).contains { BoxIntersection.path(m.line($0).coordinates[...], meets: box) }
        case .polygon(let p): return BoxIntersection.polygon(p, meets: box)
        case .multiPolygon(let m): return m.polygons.contains { BoxIntersection.polygon($0, meets: box) }
        case .collection(let parts): return parts.contains { $0.intersects(box: box) }
        }
    }
}

enum BoxIntersection {
    static func anyVertex(_ flat: ArraySlice<Double>, in box: BBox) -> Bool {
        var i = flat.startIndex
        while i + 1 < flat.endIndex {
            if box.contains(lon: flat[i], lat: flat[i + 1]) { return true }
            i += 2
        }
        return false
    }

    /// A line (or ring) of flat coordinates meets the box: some segment has a part inside it.
    static func path(_ flat: ArraySlice<Double>, meets box: BBox) -> Bool {
        if flat.count == 2 { return box.contains(lon: flat[flat.startIndex], lat: flat[flat.startIndex + 1]) }
        var i = flat.startIndex
        while i + 3 < flat.endIndex {
            if segment(flat[i], flat[i + 1], flat[i + 2], flat[i + 3], meets: box) { return true }
            i += 2
        }
        return false
    }

    /// Its outline meets the box, or the box lies inside it (one corner inside is enough then,
    /// the outline not meeting the box).
    static func polygon(_ polygon: Polygon, meets box: BBox) -> Bool {
        for r in 0..<polygon.ringCount where path(polygon.ring(r), meets: box) { return true }
        return polygon.contains(lon: box.minLon, lat: box.minLat)
    }

    /// Liang–Barsky clipping: whether any part of the segment lies in the closed box.
    static func segment(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, meets box: BBox) -> Bool {
        let dx = x2 - x1, dy = y2 - y1
        var t0 = 0.0, t1 = 1.0
        for (p, q) in [(-dx, x1 - box.minLon), (dx, box.maxLon - x1), (-dy, y1 - box.minLat), (dy, box.maxLat - y1)] {
            if p == 0 {
                if q < 0 { return false }
            } else {
                let r = q / p
                if p < 0 {
                    if r > t1 { return false }
                    t0 = max(t0, r)
                } else {
                    if r < t0 { return false }
                    t1 = min(t1, r)
                }
            }
        }
        return t0 <= t1
    }
}
