// The geometry value types. Coordinates are WGS84 longitude/latitude in degrees, in GeoJSON
// order (lon, lat), unless a type says otherwise. Vertices live in flat, interleaved arrays
// (`[lon0, lat0, lon1, lat1, …]`), never one object per vertex: the hot loops of the engine
// (point-in-polygon, distances) walk these arrays directly.

/// A single position.
public struct Point: Hashable, Sendable {
    public var lon: Double
    public var lat: Double

    public init(lon: Double, lat: Double) {
        self.lon = lon
        self.lat = lat
    }
}

/// An axis-aligned box in lon/lat. An empty box has `minLon > maxLon`.
public struct BBox: Hashable, Sendable {
    public var minLon: Double
    public var minLat: Double
    public var maxLon: Double
    public var maxLat: Double

    public init(minLon: Double, minLat: Double, maxLon: Double, maxLat: Double) {
        self.minLon = minLon
        self.minLat = minLat
        self.maxLon = maxLon
        self.maxLat = maxLat
    }

    /// The box that contains nothing; extending it by a point gives that point's box.
    public static let empty = BBox(minLon: .infinity, minLat: .infinity, maxLon: -.infinity, maxLat: -.infinity)

    public var isEmpty: Bool { minLon > maxLon || minLat > maxLat }

    /// Every bound is a finite number (false for `empty`, whose bounds are infinite).
    public var isFinite: Bool { minLon.isFinite && minLat.isFinite && maxLon.isFinite && maxLat.isFinite }

    public mutating func extend(lon: Double, lat: Double) {
        if lon < minLon { minLon = lon }
        if lon > maxLon { maxLon = lon }
        if lat < minLat { minLat = lat }
        if lat > maxLat { maxLat = lat }
    }

    public mutating func extend(_ other: BBox) {
        guard !other.isEmpty else { return }
        extend(lon: other.minLon, lat: other.minLat)
        extend(lon: other.maxLon, lat: other.maxLat)
    }

    /// Closed-interval test: a point on the edge of the box is inside it.
    @inlinable
    public func contains(lon: Double, lat: Double) -> Bool {
        lon >= minLon && lon <= maxLon && lat >= minLat && lat <= maxLat
    }

    @inlinable
    public func intersects(_ other: BBox) -> Bool {
        minLon <= other.maxLon && maxLon >= other.minLon && minLat <= other.maxLat && maxLat >= other.minLat
    }

    /// The box of interleaved lon/lat coordinates.
    public static func of(_ coordinates: [Double]) -> BBox {
        var box = BBox.empty
        var i = 0
        while i + 1 < coordinates.count {
            box.extend(lon: coordinates[i], lat: coordinates[i + 1])
            i += 2
        }
        return box
    }
}

/// A line of two or more positions.
public struct LineString: Hashable, Sendable {
    /// Interleaved lon/lat.
    public var coordinates: [Double]

    public init(coordinates: [Double]) {
        self.coordinates = coordinates
    }

    public var pointCount: Int { coordinates.count / 2 }

    public func point(at index: Int) -> Point {
        Point(lon: coordinates[2 * index], lat: coordinates[2 * index + 1])
    }
}

/// A polygon: one exterior ring, then zero or more holes. Rings are closed (the last position
/// repeats the first), as GeoJSON and WKB require.
public struct Polygon: Hashable, Sendable {
    /// Every ring's positions, interleaved lon/lat, the exterior ring first.
    public var coordinates: [Double]
    /// `ringOffsets[i]` is the index of ring i's first *position* (not array element);
    /// it has `ringCount + 1` entries and ends with `pointCount`.
    public var ringOffsets: [Int]

    public init(coordinates: [Double], ringOffsets: [Int]) {
        self.coordinates = coordinates
        self.ringOffsets = ringOffsets
    }

    /// Builds a polygon from rings of interleaved lon/lat coordinates, exterior first.
    public init(rings: [[Double]]) {
        var coordinates: [Double] = []
        var offsets: [Int] = [0]
        coordinates.reserveCapacity(rings.reduce(0) { $0 + $1.count })
        for ring in rings {
            coordinates.append(contentsOf: ring)
            offsets.append(coordinates.count / 2)
        }
        self.init(coordinates: coordinates, ringOffsets: offsets)
    }

    public var ringCount: Int { max(ringOffsets.count - 1, 0) }
    public var pointCount: Int { coordinates.count / 2 }

    /// Ring i's coordinates, interleaved lon/lat.
    public func ring(_ index: Int) -> ArraySlice<Double> {
        coordinates[(2 * ringOffsets[index])..<(2 * ringOffsets[index + 1])]
    }
}

/// Positions without an order or connection.
public struct MultiPoint: Hashable, Sendable {
    /// Interleaved lon/lat.
    public var coordinates: [Double]

    public init(coordinates: [Double]) {
        self.coordinates = coordinates
    }

    public var pointCount: Int { coordinates.count / 2 }
}

/// Several lines, stored like a polygon's rings.
public struct MultiLineString: Hashable, Sendable {
    /// Every line's positions, interleaved lon/lat.
    public var coordinates: [Double]
    /// `lineOffsets[i]` is the index of line i's first position; `lineCount + 1` entries.
    public var lineOffsets: [Int]

    public init(coordinates: [Double], lineOffsets: [Int]) {
        self.coordinates = coordinates
        self.lineOffsets = lineOffsets
    }

    public init(lines: [[Double]]) {
        let polygonLike = Polygon(rings: lines)
        self.init(coordinates: polygonLike.coordinates, lineOffsets: polygonLike.ringOffsets)
    }

    public var lineCount: Int { max(lineOffsets.count - 1, 0) }

    public func line(_ index: Int) -> LineString {
        LineString(coordinates: Array(coordinates[(2 * lineOffsets[index])..<(2 * lineOffsets[index + 1])]))
    }
}

/// Several polygons.
public struct MultiPolygon: Hashable, Sendable {
    public var polygons: [Polygon]

    public init(polygons: [Polygon]) {
        self.polygons = polygons
    }
}

/// Any geometry of the simple-features model that GeoJSON, WKT and WKB share.
public indirect enum Geometry: Hashable, Sendable {
    case point(Point)
    case lineString(LineString)
    case polygon(Polygon)
    case multiPoint(MultiPoint)
    case multiLineString(MultiLineString)
    case multiPolygon(MultiPolygon)
    case collection([Geometry])

    /// The type's name as GeoJSON spells it ("Point", "MultiPolygon", "GeometryCollection", …).
    public var typeName: String {
        switch self {
        case .point: "Point"
        case .lineString: "LineString"
        case .polygon: "Polygon"
        case .multiPoint: "MultiPoint"
        case .multiLineString: "MultiLineString"
        case .multiPolygon: "MultiPolygon"
        case .collection: "GeometryCollection"
        }
    }

    public var bbox: BBox {
        switch self {
        case .point(let p): BBox(minLon: p.lon, minLat: p.lat, maxLon: p.lon, maxLat: p.lat)
        case .lineString(let l): .of(l.coordinates)
        case .polygon(let p): .of(p.coordinates)
        case .multiPoint(let m): .of(m.coordinates)
        case .multiLineString(let m): .of(m.coordinates)
        case .multiPolygon(let m): m.polygons.reduce(into: BBox.empty) { $0.extend(.of($1.coordinates)) }
        case .collection(let parts): parts.reduce(into: BBox.empty) { $0.extend($1.bbox) }
        }
    }

    /// The first position with a NaN or infinite coordinate, or nil when every one is finite.
    /// Decoders refuse such positions; the engine checks again before indexing.
    public var firstNonFinitePosition: Point? {
        var found: Point?
        forEachCoordinateArray { coordinates in
            guard found == nil, let i = coordinates.firstIndex(where: { !$0.isFinite }) else { return }
            let first = i - i % 2
            found = Point(lon: coordinates[first], lat: first + 1 < coordinates.count ? coordinates[first + 1] : .nan)
        }
        return found
    }

    /// Calls `body` with every position's interleaved coordinate array, part by part.
    public func forEachCoordinateArray(_ body: ([Double]) throws -> Void) rethrows {
        switch self {
        case .point(let p): try body([p.lon, p.lat])
        case .lineString(let l): try body(l.coordinates)
        case .polygon(let p): try body(p.coordinates)
        case .multiPoint(let m): try body(m.coordinates)
        case .multiLineString(let m): try body(m.coordinates)
        case .multiPolygon(let m): for p in m.polygons { try body(p.coordinates) }
        case .collection(let parts): for g in parts { try g.forEachCoordinateArray(body) }
        }
    }
}
