// A bridge to GEOS for what needs a robust geometry library: validity with its reason and
// location, make-valid, and reference predicates for tests. Only the re-entrant `_r` API is
// used. A context is not thread-safe, so `GEOSContext` is not Sendable: make one per import
// or per task. The query paths of the engine never depend on GEOS.

import CGEOS

public struct GEOSError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public var description: String { "GEOS: \(message)" }
}

public struct Validity: Sendable, Equatable {
    public let isValid: Bool
    /// GEOS's reason, e.g. "Self-intersection"; nil when valid.
    public let reason: String?
    /// Where the problem is.
    public let location: Point?
}

public final class GEOSContext {
    let handle: GEOSContextHandle_t
    /// Receives GEOS's error text through the message handler, so it lands in `GEOSError`
    /// instead of on stderr.
    private let messages: MessageBox

    final class MessageBox { var last = "" }

    public init() throws(GEOSError) {
        guard let handle = GEOS_init_r() else { throw GEOSError(message: "cannot create a GEOS context") }
        self.handle = handle
        messages = MessageBox()
        let box = Unmanaged.passUnretained(messages).toOpaque()
        GEOSContext_setErrorMessageHandler_r(handle, { message, userdata in
            guard let message, let userdata else { return }
            Unmanaged<MessageBox>.fromOpaque(userdata).takeUnretainedValue().last = String(cString: message)
        }, box)
        GEOSContext_setNoticeMessageHandler_r(handle, { _, _ in }, nil)
    }

    deinit { GEOS_finish_r(handle) }

    func failure(_ what: String) -> GEOSError {
        let detail = messages.last
        messages.last = ""
        return GEOSError(message: detail.isEmpty ? what : "\(what): \(detail)")
    }

    // MARK: Operations

    public func validity(_ geometry: Geometry) throws(GEOSError) -> Validity {
        let g = try make(geometry)
        defer { GEOSGeom_destroy_r(handle, g) }
        var reason: UnsafeMutablePointer<CChar>?
        var location: OpaquePointer?
        let result = GEOSisValidDetail_r(handle, g, 0, &reason, &location)
        defer {
            if let reason { GEOSFree_r(handle, reason) }
            if let location { GEOSGeom_destroy_r(handle, location) }
        }
        switch result {
        case 1: return Validity(isValid: true, reason: nil, location: nil)
        case 0:
            var point: Point?
            if let location {
                var x = 0.0, y = 0.0
                if GEOSGeomGetX_r(handle, location, &x) == 1, GEOSGeomGetY_r(handle, location, &y) == 1 { point = Point(lon: x, lat: y) }
            }
            return Validity(isValid: false, reason: reason.map { String(cString: $0) }, location: point)
        default: throw failure("validity check failed")
        }
    }

    /// GEOS make-valid. For polygonal input, lower-dimension debris that make-valid can leave
    /// (collapsed spikes become lines) is dropped, so the result stays polygonal.
    public func makeValid(_ geometry: Geometry) throws(GEOSError) -> Geometry {
        let g = try make(geometry)
        defer { GEOSGeom_destroy_r(handle, g) }
        guard let fixed = GEOSMakeValid_r(handle, g) else { throw failure("make-valid failed") }
        defer { GEOSGeom_destroy_r(handle, fixed) }
        let result = try read(fixed)
        switch geometry {
        case .polygon, .multiPolygon: return Self.polygonalPart(result)
        default: return result
        }
    }

    static func polygonalPart(_ geometry: Geometry) -> Geometry {
        var polygons: [Polygon] = []
        func collect(_ g: Geometry) {
            switch g {
            case .polygon(let p): polygons.append(p)
            case .multiPolygon(let m): polygons += m.polygons
            case .collection(let parts): parts.forEach(collect)
            default: break
            }
        }
        collect(geometry)
        if polygons.count == 1 { return .polygon(polygons[0]) }
        return polygons.isEmpty ? .collection([]) : .multiPolygon(MultiPolygon(polygons: polygons))
    }

    /// The area within `distance` (in the coordinates' units: give it planar metres) of a
    /// geometry, with round ends and joins of `quadrantSegments` segments per quarter circle,
    /// then simplified within `tolerance` (topology kept; 0 leaves it). Lines are first merged
    /// and simplified within `inputTolerance` (Douglas–Peucker; 0 leaves them), which moves
    /// the area's edge by at most that much. Isochrones are the reached paths buffered this way.
    public func buffer(_ geometry: Geometry, distance: Double, quadrantSegments: Int32 = 4, tolerance: Double = 0,
                       inputTolerance: Double = 0) throws(GEOSError) -> Geometry {
        var g = try make(geometry)
        defer { GEOSGeom_destroy_r(handle, g) }
        // Lines are merged into chains first (where they meet end to end, two at a node): a
        // buffer of a few long lines nodes far fewer crossings than one of many short pieces,
        // and fewer vertices still once the chains are simplified (a third of the time on
        // Andorra's ways, docs/PERFORMANCE.md).
        if case .multiLineString = geometry, let merged = GEOSLineMerge_r(handle, g) {
            GEOSGeom_destroy_r(handle, g)
            g = merged
            if inputTolerance > 0, let simple = GEOSSimplify_r(handle, g, inputTolerance) {
                GEOSGeom_destroy_r(handle, g)
                g = simple
            }
        }
        guard let buffered = GEOSBuffer_r(handle, g, distance, quadrantSegments) else { throw failure("buffer failed") }
        defer { GEOSGeom_destroy_r(handle, buffered) }
        guard tolerance > 0 else { return try read(buffered) }
        guard let simple = GEOSTopologyPreserveSimplify_r(handle, buffered, tolerance) else { throw failure("simplify failed") }
        defer { GEOSGeom_destroy_r(handle, simple) }
        return try read(simple)
    }

    /// GEOS `contains` (a point on the boundary is not contained): a reference for tests.
    public func contains(_ polygonal: Geometry, lon: Double, lat: Double) throws(GEOSError) -> Bool {
        try predicate(polygonal, .point(Point(lon: lon, lat: lat)), GEOSContains_r)
    }

    public func intersects(_ a: Geometry, _ b: Geometry) throws(GEOSError) -> Bool {
        try predicate(a, b, GEOSIntersects_r)
    }

    /// Whether `a RELATION b` holds, by GEOS's plain (unprepared) predicates: a reference for
    /// tests of `GEOSPreparedShape`.
    public func holds(_ a: Geometry, _ relation: SpatialRelation, _ b: Geometry) throws(GEOSError) -> Bool {
        switch relation {
        case .intersects: try predicate(a, b, GEOSIntersects_r)
        case .disjoint: try predicate(a, b, GEOSDisjoint_r)
        case .contains: try predicate(a, b, GEOSContains_r)
        case .within: try predicate(a, b, GEOSWithin_r)
        case .equals: try predicate(a, b, GEOSEquals_r)
        case .touches: try predicate(a, b, GEOSTouches_r)
        case .crosses: try predicate(a, b, GEOSCrosses_r)
        case .overlaps: try predicate(a, b, GEOSOverlaps_r)
        }
    }

    /// Planar distance in the coordinates' units (degrees for lon/lat): a reference for tests.
    public func distance(_ a: Geometry, _ b: Geometry) throws(GEOSError) -> Double {
        let ga = try make(a)
        defer { GEOSGeom_destroy_r(handle, ga) }
        let gb = try make(b)
        defer { GEOSGeom_destroy_r(handle, gb) }
        var d = 0.0
        guard GEOSDistance_r(handle, ga, gb, &d) == 1 else { throw failure("distance failed") }
        return d
    }

    /// Planar area in squared coordinate units: a reference for tests.
    public func area(_ geometry: Geometry) throws(GEOSError) -> Double {
        let g = try make(geometry)
        defer { GEOSGeom_destroy_r(handle, g) }
        var a = 0.0
        guard GEOSArea_r(handle, g, &a) == 1 else { throw failure("area failed") }
        return a
    }

    private func predicate(_ a: Geometry, _ b: Geometry, _ test: (GEOSContextHandle_t?, OpaquePointer?, OpaquePointer?) -> CChar) throws(GEOSError) -> Bool {
        let ga = try make(a)
        defer { GEOSGeom_destroy_r(handle, ga) }
        let gb = try make(b)
        defer { GEOSGeom_destroy_r(handle, gb) }
        switch test(handle, ga, gb) {
        case 1: return true
        case 0: return false
        default: throw failure("predicate failed")
        }
    }

    // MARK: Conversion

    /// A new GEOS geometry the caller must destroy.
    func make(_ geometry: Geometry) throws(GEOSError) -> OpaquePointer {
        switch geometry {
        case .point(let p):
            guard let g = GEOSGeom_createPointFromXY_r(handle, p.lon, p.lat) else { throw failure("cannot build a point") }
            return g
        case .lineString(let l):
            let sequence = try coordinateSequence(l.coordinates[...])
            guard let g = GEOSGeom_createLineString_r(handle, sequence) else { throw failure("cannot build a line") }
            return g
        case .polygon(let p):
            return try makePolygon(p)
        case .multiPoint(let m):
            var parts: [OpaquePointer?] = []
            var i = 0
            while i + 1 < m.coordinates.count {
                parts.append(try make(.point(Point(lon: m.coordinates[i], lat: m.coordinates[i + 1]))))
                i += 2
            }
            return try collection(GEOS_MULTIPOINT, parts)
        case .multiLineString(let m):
            var parts: [OpaquePointer?] = []
            for i in 0..<m.lineCount { parts.append(try make(.lineString(m.line(i)))) }
            return try collection(GEOS_MULTILINESTRING, parts)
        case .multiPolygon(let m):
            var parts: [OpaquePointer?] = []
            for p in m.polygons { parts.append(try makePolygon(p)) }
            return try collection(GEOS_MULTIPOLYGON, parts)
        case .collection(let members):
            var parts: [OpaquePointer?] = []
            for member in members { parts.append(try make(member)) }
            return try collection(GEOS_GEOMETRYCOLLECTION, parts)
        }
    }

    private func collection(_ type: GEOSGeomTypes, _ parts: [OpaquePointer?]) throws(GEOSError) -> OpaquePointer {
        var parts = parts
        let built = parts.withUnsafeMutableBufferPointer { buffer in
            GEOSGeom_createCollection_r(handle, Int32(type.rawValue), buffer.baseAddress, UInt32(buffer.count))
        }
        guard let built else {
            for part in parts { GEOSGeom_destroy_r(handle, part) }
            throw failure("cannot build a collection")
        }
        return built
    }

    private func makePolygon(_ p: Polygon) throws(GEOSError) -> OpaquePointer {
        guard p.ringCount > 0 else {
            guard let empty = GEOSGeom_createEmptyPolygon_r(handle) else { throw failure("cannot build a polygon") }
            return empty
        }
        var rings: [OpaquePointer?] = []
        do throws(GEOSError) {
            for r in 0..<p.ringCount {
                let sequence = try coordinateSequence(p.ring(r))
                guard let ring = GEOSGeom_createLinearRing_r(handle, sequence) else { throw failure("cannot build a ring") }
                rings.append(ring)
            }
        } catch {
            for ring in rings { GEOSGeom_destroy_r(handle, ring) }
            throw error
        }
        let shell = rings[0]
        var holes = Array(rings.dropFirst())
        let polygon = holes.withUnsafeMutableBufferPointer { buffer in
            GEOSGeom_createPolygon_r(handle, shell, buffer.baseAddress, UInt32(buffer.count))
        }
        guard let polygon else { throw failure("cannot build a polygon") }
        return polygon
    }

    /// The sequence is owned by the geometry it is given to (or freed here on failure).
    private func coordinateSequence(_ flat: ArraySlice<Double>) throws(GEOSError) -> OpaquePointer {
        let sequence = flat.withUnsafeBufferPointer { buffer in
            GEOSCoordSeq_copyFromBuffer_r(handle, buffer.baseAddress, UInt32(buffer.count / 2), 0, 0)
        }
        guard let sequence else { throw failure("cannot build a coordinate sequence") }
        return sequence
    }

    func read(_ g: OpaquePointer) throws(GEOSError) -> Geometry {
        let type = GEOSGeomTypeId_r(handle, g)
        if GEOSisEmpty_r(handle, g) == 1 && type != Int32(GEOS_POLYGON.rawValue) { return .collection([]) }
        switch type {
        case Int32(GEOS_POINT.rawValue):
            var x = 0.0, y = 0.0
            guard GEOSGeomGetX_r(handle, g, &x) == 1, GEOSGeomGetY_r(handle, g, &y) == 1 else { throw failure("cannot read a point") }
            return .point(Point(lon: x, lat: y))
        case Int32(GEOS_LINESTRING.rawValue), Int32(GEOS_LINEARRING.rawValue):
            return .lineString(LineString(coordinates: try coordinates(of: g)))
        case Int32(GEOS_POLYGON.rawValue):
            return .polygon(try readPolygon(g))
        case Int32(GEOS_MULTIPOINT.rawValue), Int32(GEOS_MULTILINESTRING.rawValue), Int32(GEOS_MULTIPOLYGON.rawValue), Int32(GEOS_GEOMETRYCOLLECTION.rawValue):
            var parts: [Geometry] = []
            for i in 0..<GEOSGetNumGeometries_r(handle, g) {
                guard let part = GEOSGetGeometryN_r(handle, g, i) else { throw failure("cannot read a part") }
                parts.append(try read(part))
            }
            switch type {
            case Int32(GEOS_MULTIPOINT.rawValue):
                return .multiPoint(MultiPoint(coordinates: parts.flatMap { part -> [Double] in if case .point(let p) = part { [p.lon, p.lat] } else { [] } }))
            case Int32(GEOS_MULTILINESTRING.rawValue):
                return .multiLineString(MultiLineString(lines: parts.compactMap { if case .lineString(let l) = $0 { l.coordinates } else { nil } }))
            case Int32(GEOS_MULTIPOLYGON.rawValue):
                return .multiPolygon(MultiPolygon(polygons: parts.compactMap { if case .polygon(let p) = $0 { p } else { nil } }))
            default:
                return .collection(parts)
            }
        default:
            throw failure("unsupported GEOS geometry type \(type)")
        }
    }

    private func readPolygon(_ g: OpaquePointer) throws(GEOSError) -> Polygon {
        if GEOSisEmpty_r(handle, g) == 1 { return Polygon(rings: []) }
        guard let shell = GEOSGetExteriorRing_r(handle, g) else { throw failure("cannot read a ring") }
        var rings = [try coordinates(of: shell)]
        for i in 0..<GEOSGetNumInteriorRings_r(handle, g) {
            guard let hole = GEOSGetInteriorRingN_r(handle, g, i) else { throw failure("cannot read a ring") }
            rings.append(try coordinates(of: hole))
        }
        return Polygon(rings: rings)
    }

    private func coordinates(of g: OpaquePointer) throws(GEOSError) -> [Double] {
        guard let sequence = GEOSGeom_getCoordSeq_r(handle, g) else { throw failure("cannot read coordinates") }
        var size: UInt32 = 0
        guard GEOSCoordSeq_getSize_r(handle, sequence, &size) == 1 else { throw failure("cannot read coordinates") }
        var flat = [Double](repeating: 0, count: 2 * Int(size))
        let ok = flat.withUnsafeMutableBufferPointer { buffer in
            GEOSCoordSeq_copyToBuffer_r(handle, sequence, buffer.baseAddress, 0, 0)
        }
        guard ok == 1 else { throw failure("cannot read coordinates") }
        return flat
    }
}

/// GEOS prepared geometries for many point tests against the same polygons: the reference
/// that property tests compare the engine's own point-in-polygon with. Tied to its context
/// (same thread).
public final class GEOSPreparedLayer {
    let context: GEOSContext
    private var geometries: [OpaquePointer?] = []
    private var prepared: [OpaquePointer?] = []

    public init(context: GEOSContext, geometries: [Geometry]) throws(GEOSError) {
        self.context = context
        for geometry in geometries {
            let g = try context.make(geometry)
            self.geometries.append(g)
            prepared.append(GEOSPrepare_r(context.handle, g))
        }
    }

    deinit {
        for p in prepared { GEOSPreparedGeom_destroy_r(context.handle, p) }
        for g in geometries { GEOSGeom_destroy_r(context.handle, g) }
    }

    /// GEOS `contains` of geometry `index` (a point on the boundary is not contained).
    public func contains(_ index: Int, lon: Double, lat: Double) throws(GEOSError) -> Bool {
        guard let point = GEOSGeom_createPointFromXY_r(context.handle, lon, lat) else { throw context.failure("cannot build a point") }
        defer { GEOSGeom_destroy_r(context.handle, point) }
        switch GEOSPreparedContains_r(context.handle, prepared[index], point) {
        case 1: return true
        case 0: return false
        default: throw context.failure("prepared contains failed")
        }
    }
}

/// How a feature's geometry relates to another one, as OGC Simple Features (and CQL2's
/// S_INTERSECTS … S_EQUALS, PostGIS's ST_Intersects …) define it: `feature RELATION other`.
public enum SpatialRelation: String, Sendable, CaseIterable {
    case intersects, disjoint, contains, within, equals, touches, crosses, overlaps

    /// The same test with its sides swapped: `a contains b` is `b within a`.
    public var swapped: SpatialRelation {
        switch self {
        case .contains: .within
        case .within: .contains
        default: self
        }
    }

    /// Whether only features whose bounding box meets the other geometry's can hold it
    /// (every relation but `disjoint`).
    public var needsBoxOverlap: Bool { self != .disjoint }
}

/// One geometry prepared once for many relation tests against features (CQL2's spatial
/// functions over a layer). Tied to its context (same thread).
public final class GEOSPreparedShape {
    let context: GEOSContext
    private let geometry: OpaquePointer
    private let prepared: OpaquePointer

    public init(context: GEOSContext, geometry: Geometry) throws(GEOSError) {
        self.context = context
        let g = try context.make(geometry)
        guard let p = GEOSPrepare_r(context.handle, g) else {
            GEOSGeom_destroy_r(context.handle, g)
            throw context.failure("cannot prepare the geometry")
        }
        self.geometry = g
        prepared = p
    }

    deinit {
        GEOSPreparedGeom_destroy_r(context.handle, prepared)
        GEOSGeom_destroy_r(context.handle, geometry)
    }

    /// Whether `feature RELATION shape` holds. The prepared shape is GEOS's first argument, so
    /// the relation is asked the other way round (`feature within shape` is `shape contains
    /// feature`); equality has no prepared form.
    public func holds(_ feature: Geometry, _ relation: SpatialRelation) throws(GEOSError) -> Bool {
        let f = try context.make(feature)
        defer { GEOSGeom_destroy_r(context.handle, f) }
        let h = context.handle
        let answer: CChar = switch relation.swapped {
        case .intersects: GEOSPreparedIntersects_r(h, prepared, f)
        case .disjoint: GEOSPreparedDisjoint_r(h, prepared, f)
        case .contains: GEOSPreparedContains_r(h, prepared, f)
        case .within: GEOSPreparedWithin_r(h, prepared, f)
        case .equals: GEOSEquals_r(h, geometry, f)
        case .touches: GEOSPreparedTouches_r(h, prepared, f)
        case .crosses: GEOSPreparedCrosses_r(h, prepared, f)
        case .overlaps: GEOSPreparedOverlaps_r(h, prepared, f)
        }
        switch answer {
        case 1: return true
        case 0: return false
        default: throw context.failure("\(relation.rawValue) failed")
        }
    }
}
