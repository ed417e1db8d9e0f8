// Spatial joins: operations that measure from features rather than from a point. `within` and
// `nearest` take target geometries (the pavilions a WHERE selected) and measure to the nearest
// point of each, by `Geodesy.distance(between:_:)`: the same great-circle rule as every other
// distance of the engine (R = 6,371,008.8 m, 0 where they meet). `containingFeature` and
// `nearestFeature` give, for one feature, the feature of another layer around it or nearest
// to it: the district of a station, the station nearest a pen.

import Geometry
import SpatialIndex

extension Snapshot {
    /// Every feature within `metres` of any of `targets` (measured to their nearest points),
    /// nearest first; at most `limit` of them, else an error past `limits.maxRows`.
    public func within(_ layer: Layer, metres: Double, of targets: [Geometry], limit: Int? = nil, filter: FeatureFilter? = nil,
                       stats: SearchStats? = nil) throws(EngineError) -> [Match] {
        try Check.distance(metres, parameter: "within")
        if let limit { try Check.k(limit, limits: limits) }
        let found = try search(layer, targets, k: limit ?? limits.maxRows + 1, within: metres, filter: filter, stats: stats)
        if limit == nil && found.count > limits.maxRows { throw .tooManyRows(count: found.count, limit: limits.maxRows) }
        return found
    }

    /// The k features nearest to any of `targets`, nearest first (ties by load order),
    /// optionally only within `maxMetres`.
    public func nearest(_ layer: Layer, to targets: [Geometry], k: Int, within maxMetres: Double? = nil,
                        filter: FeatureFilter? = nil, stats: SearchStats? = nil) throws(EngineError) -> [Match] {
        try Check.k(k, limits: limits)
        if let maxMetres { try Check.distance(maxMetres, parameter: "within") }
        return try search(layer, targets, k: k, within: maxMetres ?? .infinity, filter: filter, stats: stats)
    }

    /// The smallest polygon of `layer` that contains the geometry's anchor (a point feature's
    /// place; another geometry's first vertex), matching `filter`; nil when none does.
    public func containingFeature(_ layer: Layer, of geometry: Geometry, filter: FeatureFilter? = nil) throws(EngineError) -> Match? {
        guard let anchor = geometry.anchor else { return nil }
        return try containing(layer, at: anchor, filter: filter).first
    }

    /// The feature of `layer` nearest to the geometry (to its nearest point), matching `filter`,
    /// with the distance; nil when the layer has none.
    public func nearestFeature(_ layer: Layer, to geometry: Geometry, filter: FeatureFilter? = nil) throws(EngineError) -> Match? {
        if case .point(let p) = geometry { return try nearest(layer, to: p, k: 1, filter: filter).first }
        return try search(layer, [geometry], k: 1, within: .infinity, filter: filter, stats: nil).first
    }

    /// Best-first search on the layer's R-tree with the distance to the nearest target. A box's
    /// lower bound comes from each target's bounding box as a circle: the distance from its
    /// centre to the box, less its radius (the triangle inequality), with a margin so that the
    /// bound never exceeds the truth.
    private func search(_ layer: Layer, _ targets: [Geometry], k: Int, within limit: Double, filter: FeatureFilter?,
                        stats: SearchStats?) throws(EngineError) -> [Match] {
        guard let tree = layer.tree else {
            throw .unsupportedGeometry(layer: layer.name, operation: "NEAREST", needs: "geometries", has: "none (it is a table)")
        }
        for target in targets {
            if let bad = target.firstNonFinitePosition {
                throw .invalidArgument(parameter: "target", message: "the coordinate (\(bad.lon), \(bad.lat)) is not a finite number")
            }
        }
        guard !targets.isEmpty else { return [] }
        let circles = targets.map { target -> (lon: Double, lat: Double, radius: Double) in
            let box = target.bbox
            let lon = (box.minLon + box.maxLon) / 2, lat = (box.minLat + box.maxLat) / 2
            let corners = [(box.minLon, box.minLat), (box.minLon, box.maxLat), (box.maxLon, box.minLat), (box.maxLon, box.maxLat),
                           (lon, box.minLat), (lon, box.maxLat), (box.minLon, lat), (box.maxLon, lat)]
            let radius = corners.map { Geodesy.haversine(lon1: lon, lat1: lat, lon2: $0.0, lat2: $0.1) }.max() ?? 0
            return (lon, lat, radius * 1.01 + 1)
        }
        var visited = 0
        defer { stats?.nodesVisited += visited }
        let geometries = layer.geometries
        return tree.nearest(
            k: k, maxDistance: limit,
            boxDistance: { box in circles.reduce(Double.infinity) { min($0, max(0, SphericalDistance.toBox(lon: $1.lon, lat: $1.lat, box) - $1.radius)) } },
            itemDistance: { index in
                guard let geometry = geometries[index] else { return .infinity }
                return targets.reduce(Double.infinity) { min($0, Geodesy.distance(between: geometry, $1)) }
            },
            filter: filter, visited: &visited
        ).map { Match(index: $0.index, fid: layer.fids[$0.index], metres: $0.distance) }
    }
}
