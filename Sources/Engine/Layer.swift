// A layer of a snapshot: its features in flat arrays, plus the indexes built once at load, or
// all of it read in place from a mapped snapshot file (SnapshotFile.swift).

import Geometry
import SpatialIndex
import Store
import Support

public final class Layer: Sendable {
    /// What kind of geometries a layer holds decides which operations apply to it.
    public enum Family: String, Sendable {
        case points, lines, polygons, mixed
        /// An attribute table: no geometry.
        case table
    }

    public let info: LayerInfo
    public let family: Family
    /// GeoPackage fids, in load order; a feature's *index* is its position here.
    public let fids: LayerColumn<Int64>
    public let geometries: LayerGeometries
    public let properties: LayerProperties
    /// Each polygon's area in m² (0 for other geometries): `containing` answers smallest first.
    public let areas: LayerColumn<Double>
    /// The extent of all geometries (after writes, of all it has held since it was built:
    /// a deleted feature's extent stays until the layer is rebuilt).
    public let bounds: BBox
    /// A JSON column whose every value is a list of integers (feature ids of another layer, such
    /// as the animals' `location_ids`), parsed once here: the query language joins through it.
    public let idList: (column: String, ids: [[Int64]])?

    /// Fid → index; empty for a mapped layer, whose fids ascend and are binary-searched.
    let fidIndex: [Int64: Int]
    /// Where the layer's rows are. Other modules ask what that means for them: `fetchesRows`,
    /// `readsStore`, `requireRows(for:)`.
    package let storage: Storage
    /// What writes changed since the layer's indexes were built (LayerChanges.swift); nil for
    /// a layer built whole.
    let changes: LayerChanges?
    /// Over every feature's bounding box.
    let tree: LayerTree?
    /// Point-in-polygon over the polygonal features (polygon and mixed layers).
    let polygons: LayerPolygons?
    /// Exact k-nearest over point features (point layers).
    let points: LayerPoints?
    /// For the inside-the-area check of point and line layers: the convex hull of all vertices
    /// (nil for other layers). Made at the first check and kept: a layer is rebuilt by every
    /// write into it, and the hull was a fifth of a point layer's build.
    var hull: Polygon? {
        hullMade.withLock { made in
            if let made { return made }
            let hull: Polygon?
            if let changes {
                // Over the base's hull and each level's: a deleted feature's vertices stay
                // inside until the layer is rebuilt (or, for a written one, its level merged).
                let hulls = ([changes.base] + changes.levels.map(\.layer)).compactMap(\.hull)
                hull = hulls.count <= 1 ? hulls.first : ConvexHull.of(hulls.map { Geometry.polygon($0) })
            } else if family == .polygons || family == .table || storage == .mapped {
                hull = nil
            } else {
                hull = ConvexHull.of(Array(geometries))
            }
            made = .some(hull)
            return hull
        }
    }
    private let hullMade = Locked<Polygon??>(nil)

    /// Search's index of the names (Search.swift), built on this version's first search.
    let nameIndex = Locked<NameIndex?>(nil)

    /// The features left out at load, one message each naming the layer, the fid and why
    /// (a geometry that could not be read, or with a position that is not WGS 84 lon/lat).
    public let warnings: [String]

    public var name: String { info.name }
    /// The layer's features (after writes, without those they replaced or deleted).
    public var count: Int { changes.map { $0.base.count - $0.hidden.count + $0.writtenCount } ?? fids.count }
    /// The feature indices in use: `0..<slots`, some of which writes may have hidden.
    public var slots: Int { fids.count }
    /// Every feature's index, in load order (then the written ones, in fid order).
    public var indices: LayerIndices {
        guard let changes else { return LayerIndices(slots: slots, hidden: []) }
        var parts = [HiddenPart(start: 0, end: changes.base.slots, set: changes.hidden)]
        var start = changes.base.slots
        for level in changes.levels {
            if level.hidden.count > 0 { parts.append(HiddenPart(start: start, end: start + level.layer.slots, set: level.hidden)) }
            start += level.layer.slots
        }
        return LayerIndices(slots: slots, hidden: parts)
    }
    /// Every feature's index in load order, the store's fid order: for a layer changed by
    /// writes, the base's and each written level's merged by fid (each part is in fid order).
    public var indicesInLoadOrder: [Int] {
        guard let changes else { return Array(0..<slots) }
        var parts: [[Int]] = [[]]
        var ends = [changes.base.slots]
        for level in changes.levels { ends.append(ends[ends.count - 1] + level.layer.slots) }
        for index in indices {
            while index >= ends[parts.count - 1] { parts.append([]) }
            parts[parts.count - 1].append(index)
        }
        var merged: [Int] = []
        for part in parts {
            var next: [Int] = []
            next.reserveCapacity(merged.count + part.count)
            var i = 0
            for index in part {
                while i < merged.count && fids[merged[i]] < fids[index] { next.append(merged[i]); i += 1 }
                next.append(index)
            }
            next += merged[i...]
            merged = next
        }
        return merged
    }

    /// Sorts feature indices into load order (fid order for a layer changed by writes).
    func sortInLoadOrder(_ found: inout [Int]) {
        if changes == nil { found.sort() } else { found.sort { fids[$0] < fids[$1] } }
    }

    /// The rows the store holds: `count`, or for rows left in the database the count it gave.
    public var rowCount: Int { storage.rowsInDatabase ? info.featureCount : count }

    /// `skipped`: the features the store could not read, reported as warnings. A feature whose
    /// geometry has a position out of range (`refusal(of:in:)`) is left out with a warning too, so one bad
    /// feature never makes the store unloadable; an index builder refusing its input (which
    /// these checks leave no way to) is an error naming the layer and the fid.
    /// `family`: what the layer holds when its rows say less than the store does (a layer kept
    /// in the database, and the rows fetched from it for one answer, have the whole layer's).
    init(info: LayerInfo, features input: [StoredFeature], skipped: [FeatureProblem] = [], rowsInDatabase: Bool = false,
         family declared: Family? = nil) throws(EngineError) {
        self.info = info
        storage = !rowsInDatabase ? .loaded : info.timeSeries == nil ? .database : .seriesInDatabase
        var warnings = skipped.map { Layer.leftOut(info.name, $0.fid, $0.reason) }
        var features: [StoredFeature] = []
        features.reserveCapacity(input.count)
        for feature in input {
            if let refused = Layer.refusal(of: feature, in: info.name) {
                warnings.append(refused)
            } else {
                features.append(feature)
            }
        }
        self.warnings = warnings
        let fids = features.map(\.fid)
        let geometries = features.map(\.feature.geometry)
        let properties = features.map(\.feature.properties)
        self.fids = LayerColumn(FlatArray(fids))
        self.geometries = LayerGeometries(geometries)
        self.properties = LayerProperties(properties)
        var index: [Int64: Int] = [:]
        for (i, fid) in fids.enumerated() { index[fid] = i }
        fidIndex = index

        idList = Layer.idList(info: info, properties: properties)
        let family = declared ?? Layer.family(of: geometries, kind: info.kind, geometryType: info.geometryType)
        self.family = family
        areas = LayerColumn(FlatArray(geometries.map { geometry in
            switch geometry {
            case let polygonal? where polygonal.isPolygonal: Measure.area(polygonal)
            default: 0
            }
        }))
        changes = nil
        guard family != .table else {
            bounds = .empty
            tree = nil
            polygons = nil
            points = nil
            return
        }
        let boxes = geometries.map { $0?.bbox ?? .empty }
        bounds = storage.rowsInDatabase ? (info.bbox ?? .empty) : boxes.reduce(into: BBox.empty) { $0.extend($1) }
        let (name, featureIDs) = (info.name, fids)
        let ownTree = try Layer.indexing(name, featureIDs) { () throws(SpatialIndexError) in try PackedRTree(boxes: boxes) }
        tree = LayerTree(parts: [IndexPart(structure: ownTree, offset: 0, hidden: nil)], fids: self.fids)
        if family == .polygons || family == .mixed {
            let geometries = geometries
            let own = try Layer.indexing(name, featureIDs) { () throws(SpatialIndexError) in
                try PolygonIndex(geometries: geometries.map { $0 ?? .collection([]) })
            }
            polygons = LayerPolygons(parts: [IndexPart(structure: own, offset: 0, hidden: nil)])
        } else {
            polygons = nil
        }
        if family == .points {
            // NaN in both coordinates: no point here (a feature without geometry), left out.
            let points = geometries.map { geometry in
                if case .point(let p)? = geometry { p } else { Point(lon: .nan, lat: .nan) }
            }
            let own = try Layer.indexing(name, featureIDs) { () throws(SpatialIndexError) in
                try PointIndex(lons: points.map(\.lon), lats: points.map(\.lat))
            }
            self.points = LayerPoints(parts: [IndexPart(structure: own, offset: 0, hidden: nil)], fids: self.fids)
        } else {
            points = nil
        }
    }

    /// The one check of the coordinates that enter a snapshot (a layer built here, or one
    /// streamed into the snapshot file): a feature with a position that is not WGS 84 lon/lat
    /// (NaN, infinite, or outside ±180/±90, as a finite 1e308 from another tool is) is left
    /// out, and this is its warning; nil when it may stay. Every later step (index grids, tile
    /// zooms) relies on it: no coordinate of a layer is outside the range.
    static func refusal(of feature: StoredFeature, in layer: String) -> String? {
        guard let bad = feature.feature.geometry?.firstInvalidPosition else { return nil }
        return leftOut(layer, feature.fid, bad.description)
    }

    static func leftOut(_ layer: String, _ fid: Int64, _ reason: String) -> String {
        "layer '\(layer)', fid \(fid) left out: \(reason)"
    }

    /// Runs an index builder, naming the layer and the feature in its error.
    static func indexing<T>(_ layer: String, _ fids: [Int64], _ build: () throws(SpatialIndexError) -> T) throws(EngineError) -> T {
        do {
            return try build()
        } catch {
            if case .nonFinite(let item) = error, fids.indices.contains(item) {
                throw .store("layer '\(layer)', fid \(fids[item]): cannot index it: a coordinate is not a finite number")
            }
            throw .store("layer '\(layer)': cannot index it: \(error)")
        }
    }

    /// A polygon layer read in place from a snapshot file: nothing is read or built here.
    init(info: LayerInfo, mapped: MappedLayer) {
        self.info = info
        storage = .mapped
        family = .polygons
        fids = LayerColumn(mapped.fids)
        geometries = mapped.geometries
        properties = mapped.properties
        areas = LayerColumn(mapped.areas)
        bounds = mapped.bounds
        idList = nil
        fidIndex = [:]
        changes = nil
        tree = LayerTree(parts: [IndexPart(structure: mapped.tree, offset: 0, hidden: nil)], fids: fids)
        polygons = LayerPolygons(parts: [IndexPart(structure: mapped.polygons, offset: 0, hidden: nil)])
        points = nil
        warnings = mapped.warnings
    }

    /// A base with the written levels beside it (LayerChanges.swift).
    init(info: LayerInfo, changes: LayerChanges) {
        let base = changes.base
        let levels = changes.levels.map(\.layer)
        self.info = info
        self.changes = changes
        storage = base.storage
        family = base.family
        fids = LayerColumn(joining: base.fids, levels.map(\.fids))
        geometries = LayerGeometries(joining: base.geometries, levels.map(\.geometries))
        properties = LayerProperties(joining: base.properties, levels.map(\.properties))
        areas = LayerColumn(joining: base.areas, levels.map(\.areas))
        var bounds = base.bounds
        for level in levels { bounds.extend(level.bounds) }
        self.bounds = bounds
        let built = [base] + levels
        let columns = Set(built.compactMap { $0.idList?.column })
        if columns.isEmpty {
            idList = nil
        } else if columns.count == 1, let column = columns.first {
            idList = (column, built.flatMap { part in part.idList?.ids ?? Array(repeating: [], count: part.slots) })
        } else {
            idList = Layer.idList(info: info, properties: Array(properties))
        }
        fidIndex = [:]
        // The base's indexes without what the writes hid, then each level's, shifted past the
        // slots before it, without what later levels hid. Base and levels are built whole, so
        // each has one part.
        var offsets: [Int] = []
        var offset = base.slots
        for level in levels { offsets.append(offset); offset += level.slots }
        func parts<Structure>(_ own: (Layer) -> Structure?) -> [IndexPart<Structure>]? {
            guard let first = own(base) else { return nil }
            var all = [IndexPart(structure: first, offset: 0, hidden: changes.hidden)]
            for (i, level) in changes.levels.enumerated() {
                if let structure = own(level.layer) { all.append(IndexPart(structure: structure, offset: offsets[i], hidden: level.hidden.count > 0 ? level.hidden : nil)) }
            }
            return all
        }
        let fids = self.fids
        tree = parts { $0.tree?.parts.first?.structure }.map { LayerTree(parts: $0, fids: fids) }
        polygons = parts { $0.polygons?.parts.first?.structure }.map { LayerPolygons(parts: $0) }
        points = parts { $0.points?.parts.first?.structure }.map { LayerPoints(parts: $0, fids: fids) }
        warnings = base.warnings
    }

    public func index(ofFID fid: Int64) -> Int? {
        if let changes {
            // The newest level that wrote it has its version; none for a deleted one.
            var end = slots
            for level in changes.levels.reversed() {
                end -= level.layer.slots
                if let version = level.written[fid] {
                    guard version != nil, let index = level.layer.index(ofFID: fid) else { return nil }
                    return end + index
                }
            }
            guard let index = changes.base.index(ofFID: fid), !changes.hidden.contains(index) else { return nil }
            return index
        }
        guard storage == .mapped else { return fidIndex[fid] }
        // Ascending fids (checked when the file is read): a binary search.
        var low = 0, high = fids.count
        while low < high {
            let middle = (low + high) / 2
            if fids[middle] < fid { low = middle + 1 } else { high = middle }
        }
        return low < fids.count && fids[low] == fid ? low : nil
    }

    /// The first JSON column whose values are all integer lists (missing values count as empty).
    static func idList(info: LayerInfo, properties: [Attributes]) -> (column: String, ids: [[Int64]])? {
        columns: for column in info.columns where column.isJSON {
            var lists: [[Int64]] = []
            lists.reserveCapacity(properties.count)
            var any = false
            for row in properties {
                guard let text = row[column.name]?.stringValue else { lists.append([]); continue }
                guard let ids = JSON.integerList(text) else { continue columns }
                any = any || !ids.isEmpty
                lists.append(ids)
            }
            if any { return (column.name, lists) }
        }
        return nil
    }

    static func family(of geometries: [Geometry?], kind: LayerInfo.Kind, geometryType: String? = nil) -> Family {
        guard kind == .features else { return .table }
        var seen: Set<Family> = []
        for geometry in geometries {
            switch geometry {
            case .point?, .multiPoint?: seen.insert(.points)
            case .lineString?, .multiLineString?: seen.insert(.lines)
            case .polygon?, .multiPolygon?: seen.insert(.polygons)
            case .collection?: seen.insert(.mixed)
            case nil: break
            }
        }
        if seen.isEmpty, let declared = declaredFamily(geometryType) { return declared }
        return seen.count == 1 ? seen.first ?? .mixed : .mixed
    }

    /// What a layer of this GeoPackage geometry type holds, for a layer with no geometries yet
    /// (one made from a schema, to be written into).
    static func declaredFamily(_ geometryType: String?) -> Family? {
        switch geometryType?.uppercased() {
        case "POINT", "MULTIPOINT": .points
        case "LINESTRING", "MULTILINESTRING": .lines
        case "POLYGON", "MULTIPOLYGON": .polygons
        default: nil
        }
    }
}

extension Layer {
    /// Whether the layer holds none of its rows (a large layer of a PostGIS store): each
    /// answer fetches the rows it may hold first (`Snapshot.rows(of:for:)`), a blocking read,
    /// and filters the store cannot check would run on that fetch only.
    public var fetchesRows: Bool { storage == .database }
    /// Whether answering from the layer reads the store: its rows or its time series stay there.
    public var readsStore: Bool { storage.rowsInDatabase }

    /// Throws when the layer holds none of its rows, for an operation (`what`) that needs them all.
    public func requireRows(for what: String) throws(EngineError) {
        if fetchesRows {
            throw .notSupportedOnPostGIS("'\(name)' \(what): it stays in PostgreSQL (\(rowCount) rows, more than a snapshot loads)")
        }
    }

    /// Throws when the layer is a time-series table kept in the database, for an operation
    /// (`what`) on its features: its rows are read per answer, through its stations' layer.
    public func requireFeatures(for what: String) throws(EngineError) {
        if storage == .seriesInDatabase {
            throw .notSupportedOnPostGIS("\(what) on the time-series table '\(name)' (its rows are read per answer: ask its stations' layer for LATEST or HISTORY)")
        }
    }
}

/// Where a layer's rows are: one value, so every operation asks one question.
package enum Storage: Sendable, Equatable {
    /// Decoded into memory at load.
    case loaded
    /// Polygons read in place from a snapshot file (SnapshotFile.swift).
    case mapped
    /// A feature layer of a PostGIS store larger than `EngineLimits.maxRowsLoadedPerLayer`: the
    /// layer holds none of its rows, and each answer fetches the rows it needs
    /// (`Snapshot.rows(of:for:)`, DatabaseLayers.swift).
    case database
    /// A time-series table of a PostGIS store: its rows are read per answer (SeriesFetch.swift).
    case seriesInDatabase

    /// Whether the rows stay in the database (`.database` or `.seriesInDatabase`).
    package var rowsInDatabase: Bool { self == .database || self == .seriesInDatabase }
}
