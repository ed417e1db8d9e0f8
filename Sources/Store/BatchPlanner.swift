// What a write batch does, decided once for both stores. `BatchPlanner` walks the batch's
// operations in order, checks each (the layer exists and takes writes, ids, upsert keys, the
// geometry through `FeatureChecks`, each attribute against its column) and asks the store
// for the few things only the store knows or does: the GeoPackage (Writes.swift) and PostGIS
// (PostGIS/PostGISWrites.swift) differ only in the SQL behind `BatchStore`. Every refusal
// names the operation's position in the batch, from 1.

import Geometry
import SQLite

/// One checked row of a change: the columns it sets, ready for a store to write.
public struct CheckedRow: Sendable {
    /// The geometry, checked and in WGS 84; nil when the change sets none.
    public var geometry: Geometry?
    /// The attributes it sets: for an insert or a replacement every column, null where none is
    /// given.
    public var attributes: [CheckedValue]
    /// The operation's position in the batch, from 1, for the store's own refusals.
    public var position: Int

    public var isEmpty: Bool { geometry == nil && attributes.isEmpty }
}

/// One attribute a change sets, checked against its column: as given, and as SQLite stores it.
public struct CheckedValue: Sendable {
    public var column: ColumnInfo
    public var value: AttributeValue
    public var stored: SQLiteValue
}

/// What a store does for one batch, inside its transaction (GRDB's capability protocols).
public protocol BatchStore {
    /// The layer named `name` (any case), as the store spells it, or nil.
    mutating func layer(named name: String) throws -> LayerInfo?
    /// Every layer's name, for the message naming an unknown one.
    func layerNames() throws -> [String]
    /// Creates the layer (its name and columns are checked) and returns it.
    mutating func create(_ schema: LayerSchema, _ position: Int) throws -> LayerInfo
    mutating func exists(_ fid: Int64, in layer: LayerInfo) throws -> Bool
    /// The fids of at most two features whose `keys` columns hold these values.
    mutating func find(_ keys: [CheckedValue], in layer: LayerInfo) throws -> [Int64]
    /// Called before the first lookup on these key columns: a store may index them.
    mutating func prepareKey(_ columns: [ColumnInfo], of layer: LayerInfo) throws
    /// Inserts the row as feature `fid`, or with the next fid when nil; returns its fid.
    mutating func insert(_ row: CheckedRow, fid: Int64?, into layer: LayerInfo) throws -> Int64
    /// Sets the row's columns of feature `fid`; false when there is no such feature.
    mutating func update(_ row: CheckedRow, fid: Int64, in layer: LayerInfo) throws -> Bool
    /// False when there is no such feature.
    mutating func delete(_ fid: Int64, from layer: LayerInfo) throws -> Bool
    /// Numbers one change in the feed.
    mutating func record(layer: String, fid: Int64?, kind: Change.Kind) throws -> Change
}

extension BatchStore {
    public mutating func prepareKey(_ columns: [ColumnInfo], of layer: LayerInfo) throws {}
}

/// What a planned batch did, for the store to read back.
public struct BatchOutcome {
    /// One per operation, in order.
    public var changes: [Change] = []
    /// Every layer the batch touched or created, as the store spells it.
    public var layers: [String: LayerInfo] = [:]
    /// The fids each layer's changes touched.
    public var touched: [String: Set<Int64>] = [:]
    /// Geometries repaired with make-valid, naming the operation.
    public var warnings: [String] = []
}

public struct BatchPlanner {
    let batch: WriteBatch
    private var checks: FeatureChecks?
    private var keyed: Set<[String]> = []
    private var outcome = BatchOutcome()

    public init(_ batch: WriteBatch) { self.batch = batch }

    /// Applies the batch to `store`; the first problem throws and the caller rolls back.
    public static func apply<S: BatchStore>(_ batch: WriteBatch, to store: inout S) throws -> BatchOutcome {
        var planner = BatchPlanner(batch)
        for (offset, operation) in batch.operations.enumerated() {
            let position = offset + 1
            switch operation {
            case .create(let schema):
                let info = try planner.create(schema, in: &store, position)
                planner.outcome.layers[info.name] = info
                planner.outcome.changes.append(try store.record(layer: info.name, fid: nil, kind: .created))
            case .change(let name, let change):
                let layer = try planner.layer(name, in: &store, position)
                let (fid, kind) = try planner.apply(change, to: layer, in: &store, position)
                planner.outcome.changes.append(try store.record(layer: layer.name, fid: fid, kind: kind))
                planner.outcome.touched[layer.name, default: []].insert(fid)
            }
        }
        return planner.outcome
    }

    private mutating func layer<S: BatchStore>(_ name: String, in store: inout S, _ position: Int) throws -> LayerInfo {
        if let known = outcome.layers[name] ?? outcome.layers.values.first(where: { $0.name.lowercased() == name.lowercased() }) { return known }
        guard let info = try store.layer(named: name) else {
            throw StoreError.badWrite(position: position, reason: StoreError.unknownLayer(name, known: try store.layerNames()).description)
        }
        if info.timeSeries == nil, GeoPackage.indoorTables.contains(info.name) {
            throw StoreError.badWrite(position: position, reason: "'\(info.name)' is part of the indoor model: write it through a survey import")
        }
        outcome.layers[info.name] = info
        return info
    }

    private func create<S: BatchStore>(_ schema: LayerSchema, in store: inout S, _ position: Int) throws -> LayerInfo {
        do {
            try Importer.checkLayerName(schema.name)
        } catch {
            throw StoreError.badWrite(position: position, reason: error.description)
        }
        if try store.layer(named: schema.name) != nil || outcome.layers.keys.contains(where: { $0.lowercased() == schema.name.lowercased() }) {
            throw StoreError.badWrite(position: position, reason: "layer '\(schema.name)' already exists")
        }
        var seen: Set<String> = ["fid", "geom"]
        for column in schema.columns {
            guard seen.insert(column.name.lowercased()).inserted, !column.name.isEmpty else {
                throw StoreError.badWrite(position: position, reason: "column '\(column.name)' is named twice or is reserved (fid, geom)")
            }
        }
        var schema = schema
        schema.geometryType = schema.geometryType?.uppercased()
        if let type = schema.geometryType, !FeatureChecks.geometryTypes.contains(type) {
            throw StoreError.badWrite(position: position, reason: "unknown geometry type '\(type)' (one of \(FeatureChecks.geometryTypes.sorted().joined(separator: ", ")))")
        }
        return try store.create(schema, position)
    }

    /// Applies one change; returns the fid it touched and what it did.
    private mutating func apply<S: BatchStore>(_ change: FeatureChange, to layer: LayerInfo, in store: inout S, _ position: Int) throws -> (Int64, Change.Kind) {
        switch change {
        case .insert(let feature):
            var fid: Int64?
            if let id = feature.id {
                guard case .integer(let given) = id else {
                    throw StoreError.badWrite(position: position, reason: "a feature id must be an integer (it becomes the fid); this one is '\(id)'")
                }
                if try store.exists(given, in: layer) { throw StoreError.featureExists(layer: layer.name, fid: given, position: position) }
                fid = given
            }
            let row = try checkedRow(feature, of: layer, position, whole: true)
            return (try store.insert(row, fid: fid, into: layer), .inserted)
        case .replace(let fid, let feature):
            let row = try checkedRow(feature, of: layer, position, whole: true)
            guard try store.update(row, fid: fid, in: layer) else { throw StoreError.noSuchFeature(layer: layer.name, fid: fid, position: position) }
            return (fid, .replaced)
        case .update(let fid, let feature):
            let row = try checkedRow(feature, of: layer, position, whole: false)
            guard try store.update(row, fid: fid, in: layer) else { throw StoreError.noSuchFeature(layer: layer.name, fid: fid, position: position) }
            return (fid, .updated)
        case .delete(let fid):
            guard try store.delete(fid, from: layer) else { throw StoreError.noSuchFeature(layer: layer.name, fid: fid, position: position) }
            return (fid, .deleted)
        case .upsert(let keys, let feature):
            var key: [CheckedValue] = []
            for name in keys {
                guard let column = layer.columns.first(where: { $0.name.lowercased() == name.lowercased() }) else {
                    throw StoreError.badWrite(position: position, reason: "layer '\(layer.name)' has no key column '\(name)' (columns: \(layer.columns.map(\.name).joined(separator: ", ")))")
                }
                let value = feature.properties[column.name] ?? feature.properties.first(where: { $0.0.lowercased() == name.lowercased() })?.1 ?? .null
                guard !value.isNull else { throw StoreError.badWrite(position: position, reason: "the feature has no value for the key column '\(column.name)'") }
                key.append(CheckedValue(column: column, value: value, stored: try FeatureChecks.stored(value, column, position)))
            }
            guard !key.isEmpty else { throw StoreError.badWrite(position: position, reason: "an upsert names at least one key column") }
            if keyed.insert([layer.name] + key.map(\.column.name)).inserted { try store.prepareKey(key.map(\.column), of: layer) }
            let row = try checkedRow(feature, of: layer, position, whole: true)
            let found = try store.find(key, in: layer)
            if found.count > 1 {
                throw StoreError.badWrite(position: position, reason: "more than one feature of '\(layer.name)' has the same \(key.map(\.column.name).joined(separator: ", ")): the key must be unique")
            }
            if let fid = found.first {
                _ = try store.update(row, fid: fid, in: layer)
                return (fid, .replaced)
            }
            return (try store.insert(row, fid: nil, into: layer), .inserted)
        }
    }

    /// The columns a change sets, checked. `whole`: every column not given is set to null (an
    /// insert or a replacement), and a feature layer's change must give a geometry.
    private mutating func checkedRow(_ feature: Feature, of layer: LayerInfo, _ position: Int, whole: Bool) throws -> CheckedRow {
        var row = CheckedRow(geometry: nil, attributes: [], position: position)
        if layer.kind == .features, layer.geometryColumn != nil {
            if let geometry = feature.geometry {
                if checks == nil { checks = try FeatureChecks(batch: batch) }
                if let checks {
                    let checked = try checks.check(geometry, for: layer, position)
                    if let repaired = checked.warning { outcome.warnings.append("operation \(position): \(repaired)") }
                    row.geometry = checked.geometry
                }
            } else if whole {
                throw StoreError.badWrite(position: position, reason: "the feature has no geometry, and layer '\(layer.name)' holds \(layer.geometryType ?? "GEOMETRY") features")
            }
        } else if feature.geometry != nil {
            throw StoreError.badWrite(position: position, reason: "'\(layer.name)' is a table without geometry; the feature has one")
        }
        var given: [String: CheckedValue] = [:]
        for (name, value) in feature.properties {
            guard let column = layer.columns.first(where: { $0.name == name }) ?? layer.columns.first(where: { $0.name.lowercased() == name.lowercased() }) else {
                throw StoreError.badWrite(position: position, reason: "layer '\(layer.name)' has no column '\(name)' (columns: \(layer.columns.map(\.name).joined(separator: ", ")))")
            }
            given[column.name] = CheckedValue(column: column, value: value, stored: try FeatureChecks.stored(value, column, position))
        }
        for column in layer.columns {
            if let value = given[column.name] {
                row.attributes.append(value)
            } else if whole {
                row.attributes.append(CheckedValue(column: column, value: .null, stored: .null))
            }
        }
        return row
    }
}
