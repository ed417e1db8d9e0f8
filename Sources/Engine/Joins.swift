// Spatial joins: operations that measure from features rather than from a point. `within` and
// `nearest` take target geometries (the pavilions a WHERE selected) and measure to the nearest
// point of each, by `Geodesy.distance(between:_:)`: the same great-circle rule as every other
// distance of the engine (R = 6,371,008.8 m, 0 where they meet). `containingFeature` and
// `nearestFeature` give, for one feature, the feature of another layer around it or nearest
// to it: the district of a station, the station nearest a pen.

import Geometry
import SpatialIndex
import Support

extension Snapshot {
    /// Every feature within `metres` of any of `targets` (measured to their nearest points),
    /// nearest first; at most `limit` of them, else an error past `limits.maxRows`.
    public func within(_ layer: Layer, metres: Double, of targets: [Geometry], limit: Int? = nil, filter: FeatureFilter? = nil,
                       stats: SearchStats? = nil, deadline: Deadline = .none) throws(EngineError) -> [Match] {
        try Check.distance(metres, parameter: "within")
        if let limit { try Check.k(limit, limits: limits) }
        try requireRows(layer, "WITHIN d OF features")
        let found = try search(layer, targets, k: limit ?? limits.maxRows + 1, within: metres, filter: filter, stats: stats, deadline: deadline)
        if limit == nil && found.count > limits.maxRows { throw .tooManyRows(count: found.count, limit: limits.maxRows) }
        return found
    }

    /// The k features nearest to any of `targets`, nearest first (ties by load order),
    /// optionally only within `maxMetres`.
    public func nearest(_ layer: Layer, to targets: [Geometry], k: Int, within maxMetres: Double? = nil,
                        filter: FeatureFilter? = nil, stats: SearchStats? = nil, deadline: Deadline = .none) throws(EngineError) -> [Match] {
        try Check.k(k, limits: limits)
        if let maxMetres { try Check.distance(maxMetres, parameter: "within") }
        try requireRows(layer, "NEAREST TO features")
        return try search(layer, targets, k: k, within: maxMetres ?? .infinity, filter: filter, stats: stats, deadline: deadline)
    }

    /// The smallest polygon of `layer` that contains the geometry's anchor (a point feature's
    /// place; another geometry's first vertex), matching `filter`; nil when none does.
    /// `deadlineExceeded` once `deadline` has passed: a join runs once per row, so each call
    /// asks.
    public func containingFeature(_ layer: Layer, of geometry: Geometry, filter: FeatureFilter? = nil,
                                  deadline: Deadline = .none) throws(EngineError) -> Match? {
        try deadline.check()
        guard let anchor = geometry.anchor else { return nil }
        return try containing(layer, at: anchor, filter: filter).first
    }

    /// The feature of `layer` nearest to the geometry (to its nearest point), matching `filter`,
    /// with the distance; nil when the layer has none. The search asks `deadline` as it goes
    /// (one search from a large polygon may measure to thousands of features).
    public func nearestFeature(_ layer: Layer, to geometry: Geometry, filter: FeatureFilter? = nil,
                               deadline: Deadline = .none) throws(EngineError) -> Match? {
        try deadline.check()
        if case .point(let p) = geometry { return try nearest(layer, to: p, k: 1, filter: filter).first }
        try requireRows(layer, "the nearest feature")
        return try search(layer, [geometry], k: 1, within: .infinity, filter: filter, stats: nil, deadline: deadline).first
    }

    /// Best-first search on the layer's R-tree with the distance to the nearest target
    /// (`NearestTarget` gives the boxes' lower bounds and the features' exact distances).
    private func search(_ layer: Layer, _ targets: [Geometry], k: Int, within limit: Double, filter: FeatureFilter?,
                        stats: SearchStats?, deadline: Deadline) throws(EngineError) -> [Match] {
        guard let tree = layer.tree else {
            throw .unsupportedGeometry(layer: layer.name, operation: "NEAREST", needs: "geometries", has: "none (it is a table)")
        }
        for target in targets {
            if let bad = target.firstNonFinitePosition {
                throw .invalidArgument(parameter: "target", message: "the coordinate (\(bad.lon), \(bad.lat)) is not a finite number")
            }
        }
        guard !targets.isEmpty else { return [] }
        let near = try NearestTarget(targets)
        var visited = 0
        defer { stats?.nodesVisited += visited }
        let geometries = layer.geometries
        let found = tree.nearest(
            k: k, maxDistance: limit,
            boxDistance: { box in near.lowerBound(to: box) },
            itemDistance: { index in geometries[index].map { near.distance(to: $0) } ?? .infinity },
            filter: filter, visited: &visited,
            shouldStop: deadline == .none ? nil : { deadline.hasPassed }
        )
        // A search stopped by the deadline has an incomplete answer: never return it.
        try deadline.check()
        return found.map { Match(index: $0.index, fid: layer.fids[$0.index], metres: $0.distance) }
    }
}

/// The distance from a geometry to the nearest of many targets, for the joins' R-tree search.
/// A few targets are measured one by one; past `linearLimit` they get an R-tree of their own,
/// searched best first, so that each candidate costs about log(targets) exact distances rather
/// than one per target (`NEAREST 3 TO (cells WHERE …)` over thousands of cells).
///
/// Lower bounds treat a box as a circle around its centre: for p in A and q in B,
/// d(p, q) ≥ d(centre of A, B) − radius of A (the triangle inequality), with a margin so that
/// the bound never exceeds the truth.
private struct NearestTarget {
    static let linearLimit = 16

    let targets: [Geometry]
    let boxes: [BBox]
    let circles: [Circle]
    let tree: PackedRTree?

    struct Circle {
        let lon: Double, lat: Double, radius: Double
        /// The farthest point of a lon/lat box from its centre is a corner: along a parallel or
        /// a meridian the distance from the centre grows towards either end.
        init(_ box: BBox) {
            lon = (box.minLon + box.maxLon) / 2
            lat = (box.minLat + box.maxLat) / 2
            let corners = [(box.minLon, box.minLat), (box.minLon, box.maxLat), (box.maxLon, box.minLat), (box.maxLon, box.maxLat)]
            radius = (corners.map { [lon, lat] in Geodesy.haversine(lon1: lon, lat1: lat, lon2: $0.0, lat2: $0.1) }.max() ?? 0) * 1.01 + 1
        }
        /// A lower bound on the metres from anything in this circle to anything in `box`.
        func lowerBound(to box: BBox) -> Double { max(0, SphericalDistance.toBox(lon: lon, lat: lat, box) - radius) }
    }

    init(_ targets: [Geometry]) throws(EngineError) {
        self.targets = targets
        boxes = targets.map(\.bbox)
        circles = boxes.map(Circle.init)
        if targets.count > Self.linearLimit {
            do {
                tree = try PackedRTree(boxes: boxes)
            } catch {
                throw .invalidArgument(parameter: "target", message: "\(error)")
            }
        } else {
            tree = nil
        }
    }

    /// A lower bound on the metres from anything in `box` to the nearest target.
    func lowerBound(to box: BBox) -> Double {
        guard let tree else { return circles.reduce(Double.infinity) { min($0, $1.lowerBound(to: box)) } }
        let around = Circle(box)
        return tree.nearest(
            k: 1,
            boxDistance: { around.lowerBound(to: $0) },
            itemDistance: { max(around.lowerBound(to: boxes[$0]), circles[$0].lowerBound(to: box)) }
        ).first?.distance ?? .infinity
    }

    /// The exact metres from `geometry` to the nearest target.
    func distance(to geometry: Geometry) -> Double {
        guard let tree else { return targets.reduce(Double.infinity) { min($0, Geodesy.distance(between: geometry, $1)) } }
        let around = Circle(geometry.bbox)
        return tree.nearest(
            k: 1,
            boxDistance: { around.lowerBound(to: $0) },
            itemDistance: { Geodesy.distance(between: geometry, targets[$0]) }
        ).first?.distance ?? .infinity
    }
}
