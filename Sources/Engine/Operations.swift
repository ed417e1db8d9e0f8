// The engine's feature operations on a snapshot: where am I (containing, the area check), what
// is near me (nearest, within), what lies in a box (intersecting). Each takes a resolved
// `Layer`, checks its values by one rule (`Check`), and keeps to the snapshot's limits.
// Distances are great-circle metres on the sphere (haversine, R = 6,371,008.8 m); every answer
// that carries one says so through `Match.metres`.

import Geometry
import SpatialIndex
import Store
import Support

/// One feature in an answer.
public struct Match: Sendable, Equatable {
    /// The feature's position in its layer's arrays.
    public let index: Int
    public let fid: Int64
    /// Great-circle metres from the query point, for distance-based operations.
    public let metres: Double?
}

/// Whether a point lies in the area a layer covers, and why not.
public struct AreaCheck: Sendable {
    /// The layer whose area was checked.
    public let layer: Layer
    public let inside: Bool
    /// `outside_area` when outside; nil when inside.
    public let reason: String?
    /// Metres from the point to the area's edge when outside (0 inside).
    public let metresOutside: Double
    public let message: String
}

/// A filter over feature indices of one layer (the compiled WHERE clause).
public typealias FeatureFilter = @Sendable (Int) -> Bool

/// What the index searches of one operation did, for EXPLAIN. Searches add to it.
public final class SearchStats {
    /// Index nodes visited: k-d tree or R-tree nodes entered, or for the polygon grid the
    /// polygons tested exactly (none when the point's fine cell is classified: one lookup).
    public var nodesVisited = 0
    public init() {}
}

extension Snapshot {
    /// The features of a polygon layer that contain the point, smallest area first, so the pen
    /// comes before the zoo around it. Boundary rule: see `PolygonIndex`.
    public func containing(_ layer: Layer, at point: Point, filter: FeatureFilter? = nil,
                           stats: SearchStats? = nil) throws(EngineError) -> [Match] {
        try Check.position(point)
        try requireRows(layer, "CONTAINING")
        guard let polygons = layer.polygons else {
            throw .unsupportedGeometry(layer: layer.name, operation: "CONTAINING", needs: "polygons", has: layer.family.rawValue)
        }
        stats?.nodesVisited += polygons.candidateCount(lon: point.lon, lat: point.lat)
        var found: [Int] = []
        polygons.containing(lon: point.lon, lat: point.lat) { index in
            if filter?(index) ?? true { found.append(index) }
        }
        found.sort { (layer.areas[$0], layer.fids[$0]) < (layer.areas[$1], layer.fids[$1]) }
        return found.map { Match(index: $0, fid: layer.fids[$0], metres: nil) }
    }

    /// The k features nearest to the point, nearest first (ties by load order), optionally only
    /// within `maxMetres` and matching `filter`. Points use an exact chord-distance index; other
    /// geometries the R-tree with the distance to the nearest point of the geometry (0 inside a
    /// polygon).
    public func nearest(_ layer: Layer, to point: Point, k: Int, within maxMetres: Double? = nil,
                        filter: FeatureFilter? = nil, stats: SearchStats? = nil) throws(EngineError) -> [Match] {
        try Check.position(point)
        try Check.k(k, limits: limits)
        if let maxMetres { try Check.distance(maxMetres, parameter: "within") }
        try requireRows(layer, "NEAREST")
        return try search(layer, point, k: k, within: maxMetres ?? .infinity, filter: filter, stats: stats)
    }

    /// Every feature within `metres` of the point, nearest first; at most `limit` of them (the
    /// nearest), else an error past `limits.maxRows`, never a silent cut.
    public func within(_ layer: Layer, metres: Double, of point: Point, limit: Int? = nil, filter: FeatureFilter? = nil,
                       stats: SearchStats? = nil) throws(EngineError) -> [Match] {
        try Check.position(point)
        try Check.distance(metres, parameter: "within")
        if let limit { try Check.k(limit, limits: limits) }
        try requireRows(layer, "WITHIN")
        let found = try search(layer, point, k: limit ?? limits.maxRows + 1, within: metres, filter: filter, stats: stats)
        if limit == nil && found.count > limits.maxRows { throw .tooManyRows(count: found.count, limit: limits.maxRows) }
        return found
    }

    func search(_ layer: Layer, _ point: Point, k: Int, within limit: Double, filter: FeatureFilter?,
                        stats: SearchStats?) throws(EngineError) -> [Match] {
        var visited = 0
        defer { stats?.nodesVisited += visited }
        if let points = layer.points {
            return points.nearest(k: k, lon: point.lon, lat: point.lat, maxMetres: limit, filter: filter, visited: &visited)
                .map { Match(index: $0.index, fid: layer.fids[$0.index], metres: $0.metres) }
        }
        guard let tree = layer.tree else {
            throw .unsupportedGeometry(layer: layer.name, operation: "NEAREST", needs: "geometries", has: "none (it is a table)")
        }
        return tree.nearest(
            k: k, maxDistance: limit,
            boxDistance: { box in SphericalDistance.toBox(lon: point.lon, lat: point.lat, box) },
            itemDistance: { index in layer.geometries[index].map { Geodesy.distance(from: point, to: $0) } ?? .infinity },
            filter: filter, visited: &visited
        ).map { Match(index: $0.index, fid: layer.fids[$0.index], metres: $0.distance) }
    }

    /// Every feature whose bounding box intersects `box`, in load order; an error past
    /// `limits.maxRows` unless `limit` asks for the first ones.
    public func intersecting(_ layer: Layer, box: BBox, limit: Int? = nil, filter: FeatureFilter? = nil,
                             stats: SearchStats? = nil) throws(EngineError) -> [Match] {
        try Check.position(Point(lon: box.minLon, lat: box.minLat), parameter: "bbox")
        try Check.position(Point(lon: box.maxLon, lat: box.maxLat), parameter: "bbox")
        guard box.minLon <= box.maxLon, box.minLat <= box.maxLat else {
            throw .invalidArgument(parameter: "bbox", message: "the minimum corner must be south-west of the maximum corner")
        }
        try requireRows(layer, "INTERSECTING")
        guard let tree = layer.tree else {
            throw .unsupportedGeometry(layer: layer.name, operation: "INTERSECTING", needs: "geometries", has: "none (it is a table)")
        }
        var found: [Int] = []
        let visited = tree.search(box) { index in
            if filter?(index) ?? true { found.append(index) }
        }
        stats?.nodesVisited += visited
        layer.sortInLoadOrder(&found)
        if let limit, found.count > limit { found.removeLast(found.count - limit) }
        if limit == nil && found.count > limits.maxRows { throw .tooManyRows(count: found.count, limit: limits.maxRows) }
        return found.map { Match(index: $0, fid: layer.fids[$0], metres: nil) }
    }

    /// Which features' geometries stand in `relation` to `shape` (lon/lat, planar as OGC Simple
    /// Features and PostGIS's `geometry` define them), one flag per slot: GEOS on the candidates
    /// the layer's tree gives, every feature for `disjoint`. CQL2's spatial functions.
    public func relating(_ layer: Layer, _ relation: SpatialRelation, _ shape: Geometry, deadline: Deadline = .none) throws(EngineError) -> [Bool] {
        try requireRows(layer, "S_\(relation.rawValue.uppercased())")
        guard let tree = layer.tree else {
            throw .unsupportedGeometry(layer: layer.name, operation: "S_\(relation.rawValue.uppercased())", needs: "geometries", has: "none (it is a table)")
        }
        var candidates: [Int] = []
        if relation.needsBoxOverlap {
            _ = tree.search(shape.bbox) { candidates.append($0) }
        } else {
            candidates = Array(layer.indices)
        }
        var related = [Bool](repeating: false, count: layer.slots)
        do {
            let context = try GEOSContext()
            let prepared = try GEOSPreparedShape(context: context, geometry: shape)
            for (n, index) in candidates.enumerated() {
                if n & 1023 == 0 { try deadline.check() }
                guard let geometry = layer.geometries[index] else { continue }
                related[index] = try prepared.holds(geometry, relation)
            }
        } catch let error as EngineError {
            throw error
        } catch {
            throw .invalidArgument(parameter: "filter", message: "GEOS cannot test \(relation.rawValue) with \(Quote.capped(WKT.encode(shape))): \(error)")
        }
        return related
    }

    /// Great-circle metres from the point to a feature (0 inside a polygon).
    public func distance(from point: Point, to layer: Layer, fid: Int64) throws(EngineError) -> Double {
        try Check.position(point)
        try layer.requireFeatures(for: "a feature")
        try requireRows(layer, "a feature's distance")
        guard let index = layer.index(ofFID: fid) else { throw .unknownFeature(layer: layer.name, fid: fid) }
        guard let geometry = layer.geometries[index] else {
            throw .unsupportedGeometry(layer: layer.name, operation: "DISTANCE", needs: "geometries", has: "none (it is a table)")
        }
        return geometry.distance(toLon: point.lon, lat: point.lat)
    }

    /// Whether the point lies in the area the layer covers: inside one of its polygons for a
    /// polygon layer, inside the convex hull of its features otherwise. The zoo app uses it on
    /// the paths layer to disable navigation outside its map.
    public func areaCheck(_ layer: Layer, at point: Point) throws(EngineError) -> AreaCheck {
        try Check.position(point)
        if layer.storage == .database && layer.polygons != nil {
            // Inside: a polygon around the point; outside: the distance to the nearest polygon,
            // which is the distance to the area. Both from the rows fetched for them.
            let around = try rows(of: layer, for: .containing(point))
            if !(try containing(around, at: point)).isEmpty {
                return AreaCheck(layer: layer, inside: true, reason: nil, metresOutside: 0, message: "inside the area of '\(layer.name)'")
            }
            let near = try rows(of: layer, for: .nearest(k: 1, to: point, within: nil))
            let metres = try nearest(near, to: point, k: 1).first?.metres ?? .infinity
            return AreaCheck(layer: layer, inside: false, reason: "outside_area", metresOutside: metres,
                             message: "the point is \(Rounding.wholeMetres(metres)) m outside the area covered by '\(layer.name)'")
        }
        try requireRows(layer, "the area check")
        let inside: Bool
        let outline: Geometry
        if let polygons = layer.polygons {
            var any = false
            polygons.containing(lon: point.lon, lat: point.lat) { _ in any = true }
            inside = any
            outline = .collection(layer.indices.compactMap { layer.geometries[$0] })
        } else if let hull = layer.hull {
            inside = hull.contains(lon: point.lon, lat: point.lat)
            outline = .polygon(hull)
        } else {
            throw .unsupportedGeometry(layer: layer.name, operation: "the area check", needs: "geometries", has: "none (it is a table)")
        }
        if inside {
            return AreaCheck(layer: layer, inside: true, reason: nil, metresOutside: 0, message: "inside the area of '\(layer.name)'")
        }
        let metres = outline.distance(toLon: point.lon, lat: point.lat)
        return AreaCheck(layer: layer, inside: false, reason: "outside_area", metresOutside: metres,
                         message: "the point is \(Rounding.wholeMetres(metres)) m outside the area covered by '\(layer.name)'")
    }
}
