// GeoJSON geometry objects on the one JSON writer (Support's JSONWriter), written from the
// geometries' flat coordinate arrays.

import Support

extension JSONWriter {
    /// A GeoJSON geometry object, written from the flat coordinate arrays: `type`, then
    /// `coordinates` (or `geometries` for a collection), as `GeoJSON.encode` orders them.
    public mutating func geometry(_ g: Geometry) {
        beginObject()
        key("type")
        string(g.typeName)
        switch g {
        case .point(let p):
            key("coordinates")
            position(p.lon, p.lat)
        case .lineString(let l):
            key("coordinates")
            positions(l.coordinates, 0, l.coordinates.count)
        case .multiPoint(let m):
            key("coordinates")
            positions(m.coordinates, 0, m.coordinates.count)
        case .polygon(let p):
            key("coordinates")
            rings(p.coordinates, p.ringOffsets)
        case .multiLineString(let m):
            key("coordinates")
            rings(m.coordinates, m.lineOffsets)
        case .multiPolygon(let m):
            key("coordinates")
            beginArray()
            for polygon in m.polygons { rings(polygon.coordinates, polygon.ringOffsets) }
            endArray()
        case .collection(let parts):
            key("geometries")
            beginArray()
            for part in parts { geometry(part) }
            endArray()
        }
        endObject()
    }

    private mutating func position(_ lon: Double, _ lat: Double) {
        beginArray()
        coordinate(lon)
        coordinate(lat)
        endArray()
    }

    /// Positions from `flat[start..<end]` (indices of doubles); a lone trailing double is left
    /// out, as it was by `GeoJSON.encode`.
    private mutating func positions(_ flat: [Double], _ start: Int, _ end: Int) {
        beginArray()
        var i = start
        while i + 1 < end {
            position(flat[i], flat[i + 1])
            i += 2
        }
        endArray()
    }

    /// One array of positions per part; `offsets` count positions. Offsets past the end of the
    /// coordinates are clamped rather than trusted.
    private mutating func rings(_ flat: [Double], _ offsets: [Int]) {
        beginArray()
        var part = 0
        while part + 1 < offsets.count {
            let start = min(max(2 * offsets[part], 0), flat.count)
            let end = min(max(2 * offsets[part + 1], start), flat.count)
            positions(flat, start, end)
            part += 1
        }
        endArray()
    }
}
