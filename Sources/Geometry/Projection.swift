// A bridge to PROJ: any CRS PROJ knows (by EPSG code) to EPSG:4326 and back. Axis order is
// normalised with `proj_normalize_for_visualization`, so input and output are always
// (easting, northing) or (longitude, latitude), as in GeoJSON. A transformer holds its own PROJ
// context and is not thread-safe: make one per import or per task.

import CPROJ

public struct ProjectionError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public var description: String { message }
}

public enum Projection {
    /// "epsg:5514", "EPSG::5514", "urn:ogc:def:crs:EPSG::5514" → "EPSG:5514"; CRS84 → "EPSG:4326".
    public static func normalizeCRS(_ crs: String) -> String {
        GeoJSON.normalizeCRSName(crs)
    }
}

public final class CoordinateTransformer {
    public let source: String
    public let target: String
    private let context: OpaquePointer
    private let transformation: OpaquePointer

    /// Coordinates in and out are longitude (easting) first, whatever order a CRS's authority
    /// gives its axes. With `authorityAxes`, both keep their authority's order instead
    /// (EPSG:4326 latitude first; OGC:CRS84 longitude first), as OGC API – Features Part 2 asks
    /// of answers, and the names go to PROJ as given.
    public init(from source: String, to target: String, authorityAxes: Bool = false) throws(ProjectionError) {
        self.source = authorityAxes ? source : Projection.normalizeCRS(source)
        self.target = authorityAxes ? target : Projection.normalizeCRS(target)
        guard let context = proj_context_create() else { throw ProjectionError(message: "cannot create a PROJ context") }
        proj_log_level(context, PJ_LOG_NONE)
        // PROJ's own network grid fetching stays off: imports must not depend on the network.
        proj_context_set_enable_network(context, 0)
        func fail(_ what: String) -> ProjectionError {
            let code = proj_context_errno(context)
            let detail = code != 0 ? proj_context_errno_string(context, code).map { String(cString: $0) } : nil
            return ProjectionError(message: what + (detail.map { " (\($0))" } ?? ""))
        }
        for crs in [self.source, self.target] {
            guard let probe = proj_create(context, crs) else {
                let error = fail("unknown CRS '\(crs)'")
                proj_context_destroy(context)
                throw error
            }
            proj_destroy(probe)
        }
        guard let raw = proj_create_crs_to_crs(context, self.source, self.target, nil) else {
            let error = fail("no transformation from \(self.source) to \(self.target)")
            proj_context_destroy(context)
            throw error
        }
        if authorityAxes {
            self.context = context
            self.transformation = raw
            return
        }
        let normalized = proj_normalize_for_visualization(context, raw)
        proj_destroy(raw)
        guard let normalized else {
            let error = fail("cannot normalise the axis order of \(self.source) → \(self.target)")
            proj_context_destroy(context)
            throw error
        }
        self.context = context
        self.transformation = normalized
    }

    deinit {
        proj_destroy(transformation)
        proj_context_destroy(context)
    }

    public func transform(x: Double, y: Double) throws(ProjectionError) -> (x: Double, y: Double) {
        let out = try transform([x, y])
        return (out[0], out[1])
    }

    /// Interleaved x, y pairs, transformed in one call.
    public func transform(_ coordinates: [Double]) throws(ProjectionError) -> [Double] {
        var values = coordinates
        let count = values.count / 2
        guard count > 0 else { return values }
        proj_errno_reset(transformation)
        let done = values.withUnsafeMutableBufferPointer { buffer -> Int in
            guard let base = buffer.baseAddress else { return 0 }
            let stride = 2 * MemoryLayout<Double>.stride
            return proj_trans_generic(transformation, PJ_FWD, base, stride, count, base + 1, stride, count, nil, 0, 0, nil, 0, 0)
        }
        guard done == count else { throw ProjectionError(message: "PROJ transformed \(done) of \(count) positions from \(source) to \(target)") }
        var i = 0
        while i + 1 < values.count {
            guard values[i].isFinite, values[i + 1].isFinite, abs(values[i]) < 1e300, abs(values[i + 1]) < 1e300 else {
                throw ProjectionError(message: "(\(coordinates[i]), \(coordinates[i + 1])) cannot be transformed from \(source) to \(target): it is outside the area of use")
            }
            i += 2
        }
        return values
    }

    public func transform(_ geometry: Geometry) throws(ProjectionError) -> Geometry {
        switch geometry {
        case .point(let p):
            let (x, y) = try transform(x: p.lon, y: p.lat)
            return .point(Point(lon: x, lat: y))
        case .lineString(let l): return .lineString(LineString(coordinates: try transform(l.coordinates)))
        case .polygon(let p): return .polygon(Polygon(coordinates: try transform(p.coordinates), ringOffsets: p.ringOffsets))
        case .multiPoint(let m): return .multiPoint(MultiPoint(coordinates: try transform(m.coordinates)))
        case .multiLineString(let m): return .multiLineString(MultiLineString(coordinates: try transform(m.coordinates), lineOffsets: m.lineOffsets))
        case .multiPolygon(let m):
            var polygons: [Polygon] = []
            for p in m.polygons { polygons.append(Polygon(coordinates: try transform(p.coordinates), ringOffsets: p.ringOffsets)) }
            return .multiPolygon(MultiPolygon(polygons: polygons))
        case .collection(let parts):
            var out: [Geometry] = []
            for part in parts { out.append(try transform(part)) }
            return .collection(out)
        }
    }
}

/// Where a CRS may be used, from PROJ's database: a lon/lat box (west may exceed east across
/// the antimeridian) and the CRS's name.
public struct AreaOfUse: Sendable, CustomStringConvertible {
    public let crs: String
    public let crsName: String
    public let west: Double, south: Double, east: Double, north: Double

    /// Whether a lon/lat box meets the area, widened by `margin` degrees (areas are drawn
    /// around borders; data a little over one is still in the right CRS).
    public func meets(_ box: BBox, margin: Double = 0.5) -> Bool {
        guard box.maxLat >= south - margin, box.minLat <= north + margin else { return false }
        if west > east { return true }  // across the antimeridian: latitude decides
        return box.maxLon >= west - margin && box.minLon <= east + margin
    }

    /// Whether the area is (nearly) the whole world, so no check is worth making.
    public var isWorld: Bool { west <= -179 && east >= 179 && south <= -80 && north >= 80 }

    public var description: String {
        func format(_ value: Double, _ positive: String, _ negative: String) -> String {
            let rounded = (value * 100).rounded() / 100
            return "\(abs(rounded))° \(rounded < 0 ? negative : positive)"
        }
        return "\(crs) (\(crsName)): \(format(west, "E", "W"))…\(format(east, "E", "W")), \(format(south, "N", "S"))…\(format(north, "N", "S"))"
    }
}

extension Projection {
    /// The area of use PROJ records for a CRS; nil when PROJ does not know the CRS or records
    /// no area for it.
    public static func areaOfUse(_ crs: String) -> AreaOfUse? {
        let name = normalizeCRS(crs)
        guard let context = proj_context_create() else { return nil }
        defer { proj_context_destroy(context) }
        proj_log_level(context, PJ_LOG_NONE)
        proj_context_set_enable_network(context, 0)
        guard let object = proj_create(context, name) else { return nil }
        defer { proj_destroy(object) }
        var west = 0.0, south = 0.0, east = 0.0, north = 0.0
        var areaName: UnsafePointer<CChar>?
        guard proj_get_area_of_use(context, object, &west, &south, &east, &north, &areaName) != 0,
              west > -1000, [west, south, east, north].allSatisfy(\.isFinite) else { return nil }
        let crsName = proj_get_name(object).map { String(cString: $0) } ?? name
        // A WKT definition is too long to repeat in messages: its name stands for it.
        let label = name.count > 40 ? crsName : name
        return AreaOfUse(crs: label, crsName: crsName, west: west, south: south, east: east, north: north)
    }
}
