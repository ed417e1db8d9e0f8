// A large layer changed by writes keeps its indexes: the written features become small layers
// of their own, searched beside the base, and the features they replaced or deleted are
// hidden. A write then costs what its features cost, not what the layer does (a 200,000-polygon
// mapped layer is not decoded and re-indexed for one feature). Small layers are rebuilt whole
// instead (`EngineLimits.maxFeaturesRebuiltPerWrite`): exact extents and hulls, one structure.
//
// The written features are kept in levels, oldest and largest first (the logarithmic method of
// Bentley and Saxe): a write rebuilds only the newest level, which takes it while that level
// holds at most `maxFeaturesRebuiltPerWrite` written features, else the write starts a new one;
// a level as large as the one before it merges with it. So a write rebuilds at most the
// rebuild size plus its own features, and each written feature is rebuilt about log2(written /
// rebuild size) times in all, however large the base; there are as many levels.
//
// Feature indices below `base.slots` are the base's; above are each level's in turn, shifted
// by the slots before it. Every search of the layer goes through the wrappers below, which
// search every part, skip hidden features and shift the others, so the operations
// (containing, nearest, within, intersecting, joins, tiles, items) need not know. A loop over
// a layer's features goes through `layer.indices`.

import Geometry
import SpatialIndex
import Store

/// What writes changed in a layer since its indexes were built.
struct LayerChanges: Sendable {
    /// The layer as built from the store (never itself changed).
    let base: Layer
    /// The written features since the base, oldest first.
    let levels: [WrittenLevel]
    /// The base's features that the levels replaced or deleted.
    let hidden: HiddenSet

    /// The written features that exist, in all levels.
    var writtenCount: Int { levels.reduce(0) { $0 + $1.layer.count - $1.hidden.count } }
}

/// Some writes' features: every fid they touched, and those that exist as a layer built whole.
struct WrittenLevel: Sendable {
    /// Each fid's version as of these writes; nil for a deleted one.
    let written: [Int64: StoredFeature?]
    /// The versions that exist, in fid order.
    let layer: Layer
    /// Of `layer`'s features, those later levels replaced or deleted.
    let hidden: HiddenSet
}

/// Feature indices of a base hidden by writes: a bit per feature.
struct HiddenSet: Sendable {
    private var words: [UInt64]
    private(set) var count = 0

    init(slots: Int) { words = Array(repeating: 0, count: (slots + 63) / 64) }

    @inline(__always)
    func contains(_ index: Int) -> Bool {
        words[index >> 6] & (1 << UInt64(index & 63)) != 0
    }

    mutating func insert(_ index: Int) {
        guard !contains(index) else { return }
        words[index >> 6] |= 1 << UInt64(index & 63)
        count += 1
    }
}

/// The features of a layer, in index order, without those writes hid.
public struct LayerIndices: Sequence, Sendable {
    let slots: Int
    /// The parts (the base, each written level) with hidden features.
    let hidden: [HiddenPart]

    public func makeIterator() -> Iterator { Iterator(position: 0, part: 0, indices: self) }

    public struct Iterator: IteratorProtocol {
        var position: Int
        var part: Int
        let indices: LayerIndices

        public mutating func next() -> Int? {
            while position < indices.slots {
                defer { position += 1 }
                while part < indices.hidden.count && position >= indices.hidden[part].end { part += 1 }
                if part < indices.hidden.count, position >= indices.hidden[part].start,
                   indices.hidden[part].set.contains(position - indices.hidden[part].start) { continue }
                return position
            }
            return nil
        }
    }
}

/// The hidden features of one part of a layer, whose indices are `start..<end`.
struct HiddenPart: Sendable {
    let start: Int
    let end: Int
    let set: HiddenSet
}

/// One part of a layer's index: the structure, the shift of its indices, and what it hides.
struct IndexPart<Structure: Sendable>: Sendable {
    let structure: Structure
    let offset: Int
    let hidden: HiddenSet?

    @inline(__always)
    func keeps(_ index: Int) -> Bool { !(hidden?.contains(index) ?? false) }
}

/// The layer's R-tree: its own, or the base's and the written features'.
struct LayerTree: Sendable {
    let parts: [IndexPart<PackedRTree>]
    /// The layer's fids: ties between parts go to the smaller fid, as in a layer loaded whole.
    let fids: LayerColumn<Int64>

    /// Every feature whose box meets `box`; returns the nodes visited.
    func search(_ box: BBox, _ visit: (Int) -> Void) -> Int {
        if parts.count == 1, parts[0].offset == 0, parts[0].hidden == nil { return parts[0].structure.search(box, visit) }
        var visited = 0
        for part in parts {
            visited += part.structure.search(box) { index in if part.keeps(index) { visit(index + part.offset) } }
        }
        return visited
    }

    /// The k nearest by the caller's distances, nearest first, ties by smaller index (as
    /// `PackedRTree.nearest`; between parts, by smaller fid, which is the same order).
    func nearest(k: Int, maxDistance: Double = .infinity, boxDistance: (BBox) -> Double, itemDistance: (Int) -> Double,
                 filter: ((Int) -> Bool)? = nil, visited: UnsafeMutablePointer<Int>? = nil,
                 shouldStop: (() -> Bool)? = nil) -> [(index: Int, distance: Double)] {
        if parts.count == 1, parts[0].offset == 0, parts[0].hidden == nil {
            return parts[0].structure.nearest(k: k, maxDistance: maxDistance, boxDistance: boxDistance, itemDistance: itemDistance,
                                              filter: filter, visited: visited, shouldStop: shouldStop)
        }
        var found: [(index: Int, distance: Double)] = []
        var expanded = 0
        for part in parts {
            let offset = part.offset
            var partExpanded = 0
            found += part.structure.nearest(
                k: k, maxDistance: maxDistance, boxDistance: boxDistance, itemDistance: { itemDistance($0 + offset) },
                filter: { index in part.keeps(index) && (filter?(index + offset) ?? true) }, visited: &partExpanded, shouldStop: shouldStop
            ).map { ($0.index + offset, $0.distance) }
            expanded += partExpanded
        }
        visited?.pointee = expanded
        return Array(found.sorted { ($0.distance, fids[$0.index]) < ($1.distance, fids[$1.index]) }.prefix(k))
    }
}

/// Point in polygon over the layer's polygons: its own index, or the base's and the written.
struct LayerPolygons: Sendable {
    let parts: [IndexPart<PolygonIndex>]

    func containing(lon: Double, lat: Double, _ visit: (Int) -> Void) {
        for part in parts {
            part.structure.containing(lon: lon, lat: lat) { index in if part.keeps(index) { visit(index + part.offset) } }
        }
    }

    func candidateCount(lon: Double, lat: Double) -> Int {
        parts.reduce(0) { $0 + $1.structure.candidateCount(lon: lon, lat: lat) }
    }
}

/// Exact k-nearest over the layer's points: its own index, or the base's and the written.
struct LayerPoints: Sendable {
    let parts: [IndexPart<PointIndex>]
    let fids: LayerColumn<Int64>

    func nearest(k: Int, lon: Double, lat: Double, maxMetres: Double = .infinity, filter: ((Int) -> Bool)? = nil,
                 visited: UnsafeMutablePointer<Int>? = nil) -> [(index: Int, metres: Double)] {
        if parts.count == 1, parts[0].offset == 0, parts[0].hidden == nil {
            return parts[0].structure.nearest(k: k, lon: lon, lat: lat, maxMetres: maxMetres, filter: filter, visited: visited)
        }
        var found: [(index: Int, metres: Double)] = []
        var entered = 0
        for part in parts {
            let offset = part.offset
            var partEntered = 0
            found += part.structure.nearest(k: k, lon: lon, lat: lat, maxMetres: maxMetres,
                                            filter: { index in part.keeps(index) && (filter?(index + offset) ?? true) }, visited: &partEntered)
                .map { ($0.index + offset, $0.metres) }
            entered += partEntered
        }
        visited?.pointee = entered
        return Array(found.sorted { ($0.metres, fids[$0.index]) < ($1.metres, fids[$1.index]) }.prefix(k))
    }
}

extension Layer {
    /// The layer after a write: `written` maps each fid the batch touched to its stored version
    /// (nil: deleted). A layer of at most `limits.maxFeaturesRebuiltPerWrite` features is
    /// rebuilt whole; a larger one keeps its base's indexes and gets the written features in
    /// levels beside them (see above), until they outgrow the base. A layer whose
    /// rows stay in the database keeps none. `old` is nil for a layer the batch created.
    static func rebuilt(_ old: Layer?, info: LayerInfo, written: [Int64: StoredFeature?], limits: EngineLimits) throws(EngineError) -> Layer {
        var info = info
        guard let old else {
            info.featureCount = written.values.count { $0 != nil }
            return try Layer(info: info, features: written.values.compactMap { $0 }.sorted { $0.fid < $1.fid })
        }
        if old.storage.rowsInDatabase {
            return try Layer(info: info, features: [], rowsInDatabase: true, family: old.family)
        }
        var count = old.info.featureCount
        for (fid, feature) in written {
            let existed = old.index(ofFID: fid) != nil
            if feature != nil && !existed { count += 1 }
            if feature == nil && existed { count -= 1 }
        }
        info.featureCount = count

        let base = old.changes?.base ?? old
        let writtenCount = (old.changes?.writtenCount ?? 0) + written.values.count { $0 != nil }
        let batch = written.values.compactMap { $0 }
        let batchFamily = batch.isEmpty ? base.family : Layer.family(of: batch.map(\.feature.geometry), kind: info.kind)
        // The written levels are kept to their base's size (or the whole-rebuild size, if
        // larger): past that the layer is compacted, rebuilt whole as a new base of twice the
        // size, so a layer grown by writes alone rebuilds each feature about twice in all (at a
        // quarter it was five times: compaction was the largest cost of a 1,000-point batch),
        // and a query reads at most the base and as much again. A mapped base stays
        // (compacting would read the file's layer into memory); its written levels are folded
        // in by a reload, which maps a fresh snapshot file.
        let compact = writtenCount > Layer.overlayLimit(base, limits) && base.storage != .mapped
        if base.count + writtenCount > limits.maxFeaturesRebuiltPerWrite && !compact && batchFamily == base.family {
            var hidden = old.changes?.hidden ?? HiddenSet(slots: base.slots)
            for fid in written.keys { if let index = base.index(ofFID: fid) { hidden.insert(index) } }
            var levels = (old.changes?.levels ?? []).map { $0.hiding(written.keys) }
            // The newest level takes the write while it is small, or no larger than the write.
            var merged = written
            while let last = levels.last, last.written.count <= max(merged.count, limits.maxFeaturesRebuiltPerWrite) {
                merged = last.written.merging(merged) { $1 }
                levels.removeLast()
            }
            levels.append(try WrittenLevel(merged, info: info, family: base.family))
            // A level as large as the one before it merges with it. The merged level is the
            // newest, so nothing hides any of its features.
            while levels.count >= 2, levels[levels.count - 2].written.count <= levels[levels.count - 1].written.count {
                let newer = levels.removeLast(), older = levels.removeLast()
                levels.append(try WrittenLevel(older.written.merging(newer.written) { $1 }, info: info, family: base.family))
            }
            return Layer(info: info, changes: LayerChanges(base: base, levels: levels, hidden: hidden))
        }
        // Whole: the old layer's features but the written ones, and the written that exist.
        var features: [StoredFeature] = []
        features.reserveCapacity(old.count + written.count)
        for index in old.indices where written[old.fids[index]] == nil {
            let fid = old.fids[index]
            features.append(StoredFeature(fid: fid, feature: Feature(id: .integer(fid), geometry: old.geometries[index], properties: old.properties[index])))
        }
        features += written.values.compactMap { $0 }
        features.sort { $0.fid < $1.fid }
        return try Layer(info: info, features: features)
    }

    /// How many written features a base keeps beside it before the layer is compacted.
    static func overlayLimit(_ base: Layer, _ limits: EngineLimits) -> Int {
        max(limits.maxFeaturesRebuiltPerWrite, base.count)
    }
}

extension WrittenLevel {
    /// The level of these writes, its existing features indexed as a layer of their own.
    init(_ written: [Int64: StoredFeature?], info: LayerInfo, family: Layer.Family) throws(EngineError) {
        self.written = written
        let layer = try Layer(info: info, features: written.values.compactMap { $0 }.sorted { $0.fid < $1.fid }, family: family)
        self.layer = layer
        hidden = HiddenSet(slots: layer.slots)
    }

    /// This level with its versions of `fids` hidden (a later write replaced or deleted them).
    func hiding(_ fids: some Collection<Int64>) -> WrittenLevel {
        var hidden = self.hidden
        for fid in fids { if written[fid] != nil, let index = layer.index(ofFID: fid) { hidden.insert(index) } }
        return WrittenLevel(written: written, layer: layer, hidden: hidden)
    }
}

extension Snapshot {
    /// Whether a mapped layer's written levels have outgrown their limit: writes cannot compact
    /// a mapped base, so they go on adding levels until a reload maps a fresh snapshot file.
    /// A server reloads when this turns true (EngineState).
    public var hasOutgrownOverlay: Bool {
        layers.contains { layer in
            guard let changes = layer.changes, changes.base.storage == .mapped else { return false }
            return changes.writtenCount > Layer.overlayLimit(changes.base, limits)
        }
    }
}
