// Feature references: `(districts CONTAINING).NAZEV_MC` reads a field of the district that
// contains each row's feature, `(stations NEAREST WHERE MEASURES(no2)).code` one of the station
// nearest to it (and `.distance_m` how far). The planner resolves the layer and compiles the
// field and the WHERE on it; the search itself is the Engine's (`containingFeature`,
// `nearestFeature`), once per row.

import Engine
import Geometry
import Support

/// `(layer CONTAINING [WHERE …])` or `(layer NEAREST [WHERE …])`.
struct FeatureReference: Sendable, Equatable {
    enum Relation: String, Sendable, Equatable {
        case containing, nearest
    }
    var layer: Name
    var relation: Relation
    var filter: Expression?
    /// From the opening to the closing parenthesis.
    var position: SourcePosition

    /// The prefix of the column's name: `districts.NAZEV_MC`, `nearest_stations.code`.
    var label: String {
        relation == .containing ? layer.text : "nearest_\(layer.text)"
    }
}

extension Planner {
    /// The layer a reference reads from, checked for its relation.
    func referencedLayer(_ reference: FeatureReference) throws(QueryError) -> Layer {
        let other = try layerInMemory(reference.layer)
        switch reference.relation {
        case .containing where other.family != .polygons && other.family != .mixed:
            throw Planner.error(.invalid, "unsupported_geometry",
                                "(\(other.name) CONTAINING) needs polygons; '\(other.name)' holds \(other.family == .table ? "no geometries (it is a table)" : other.family.rawValue)",
                                at: reference.layer.position, hint: other.family == .table ? nil : "use (\(other.name) NEAREST) for the nearest feature")
        case .nearest where other.family == .table:
            throw Planner.error(.invalid, "unsupported_geometry", "'\(other.name)' is a table without geometries", at: reference.layer.position)
        default:
            return other
        }
    }

    /// Checks the field read through the reference: a field of the referenced layer, or
    /// `distance_m` for NEAREST.
    func checkReference(_ reference: FeatureReference, _ field: FieldExpression) throws(QueryError) {
        let other = try referencedLayer(reference)
        if case .reference = field {
            throw Planner.error(.syntax, "syntax_error", "feature references do not nest", at: field.position)
        }
        try checkField(field, in: [other], hasDistance: reference.relation == .nearest)
    }

    /// Per row of `layer`: the referenced feature's field (missing when no feature contains the
    /// row's feature, or the row has no geometry).
    func referenceAccessor(_ reference: FeatureReference, _ field: FieldExpression, on layer: Layer) throws(QueryError) -> Accessor {
        try checkReference(reference, field)
        let other = try referencedLayer(reference)
        // Evaluated here, per row, on the snapshot (series of the other layer read now).
        let planner = inMemory
        let filter: FeatureFilter? = try reference.filter.map { expression throws(QueryError) in try planner.compile(expression, on: other) }
        let snapshot = self.snapshot
        let relation = reference.relation
        let readsDistance: Bool
        if case .attribute(let name) = field, name.text == "distance_m" { readsDistance = true } else { readsDistance = false }
        let value = try planner.accessor(field, on: other)
        let geometries = layer.geometries
        // Past the deadline a search gives up (nil here); the runner then refuses the answer.
        let deadline = self.deadline
        return { i in
            guard let geometry = geometries[i] else { return .null }
            let match: Match?
            switch relation {
            case .containing: match = try? snapshot.containingFeature(other, of: geometry, filter: filter, deadline: deadline)
            case .nearest: match = try? snapshot.nearestFeature(other, to: geometry, filter: filter, deadline: deadline)
            }
            guard let match else { return .null }
            if readsDistance { return match.metres.map { .real(Rounding.metres($0)) } ?? .null }
            return value(match.index)
        }
    }

    /// Tile features have no geometry index to join on: a reference there is an error, not a
    /// silent missing value.
    static func refuseReferences(_ fields: [FieldExpression], _ filter: Expression?) throws(QueryError) {
        var named = fields
        if let filter { Planner.fields(in: filter, into: &named) }
        for case .reference(let reference, _) in named {
            throw Planner.error(.invalid, "unsupported_clause", "feature references read store layers; tile features cannot be joined",
                                at: reference.position, hint: "FIND the layer itself, e.g. FIND pavilions … RETURN (districts CONTAINING).NAZEV_MC")
        }
    }
}
