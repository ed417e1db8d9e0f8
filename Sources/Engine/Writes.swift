// Writes while the engine serves. A batch is applied by the store (atomic, durable when it
// returns, every change numbered: Store/Writes.swift), then the engine derives the next
// snapshot from the current one: the layers the batch changed are rebuilt, or for large ones
// given the written features beside their indexes (LayerChanges.swift), and everything else
// (other layers, their indexes and networks, tile sets, venues) is shared. The new snapshot is swapped in before the write returns, so the
// next read sees it; reads in flight finish on the one they hold.
//
// One writer at a time: writes and reloads take the engine's update lock, so a reload never
// swaps in a snapshot that misses a write acknowledged meanwhile.

import Foundation
import Geometry
import Indoor
import Store
import Support

// The write model is the store's; the engine's users name it through the engine, as they do
// routes (EngineError.swift).
public typealias WriteBatch = Store.WriteBatch
public typealias WriteOperation = Store.WriteOperation
public typealias FeatureChange = Store.FeatureChange
public typealias LayerSchema = Store.LayerSchema
public typealias ColumnInfo = Store.ColumnInfo
public typealias Change = Store.Change

/// A store the engine can write into.
public protocol StoreWriter: Sendable {
    /// Applies the batch in one transaction; nothing is written when it throws.
    func apply(_ batch: WriteBatch) throws(EngineError) -> AppliedBatch
    /// Applies several batches, each all or nothing (the default: one after the other; a
    /// GeoPackage: one transaction, a savepoint each). Throws only when none could be.
    func apply(_ batches: [WriteBatch]) throws(EngineError) -> [Result<AppliedBatch, EngineError>]
    /// The changes after `sequence`, oldest first, at most `limit`.
    func changes(since sequence: Int64, limit: Int) throws(EngineError) -> [Change]
    /// Keeps a live layer's or fence's definition, durably (LiveLayers.swift). The default: the
    /// store keeps none.
    func save(_ definition: LiveDefinition) throws(EngineError)
    /// Deletes one; false when there was none.
    func deleteLiveDefinition(kind: LiveDefinition.Kind, name: String) throws(EngineError) -> Bool
    /// Keeps durable live layers' objects, durably (LiveLayers.swift). The default: the store
    /// keeps none.
    func savePositions(_ positions: [StoredPosition]) throws(EngineError)
    /// Forgets a kept object, or all of a layer's (`id` nil).
    func deletePositions(layer: String, id: String?) throws(EngineError)
}

extension StoreWriter {
    public func save(_ definition: LiveDefinition) throws(EngineError) {
        throw .write(code: "not_supported", category: .impossible, message: "this store keeps no live layers or fences (a GeoPackage or PostGIS store does)")
    }

    public func deleteLiveDefinition(kind: LiveDefinition.Kind, name: String) throws(EngineError) -> Bool {
        throw .write(code: "not_supported", category: .impossible, message: "this store keeps no live layers or fences (a GeoPackage or PostGIS store does)")
    }

    public func savePositions(_ positions: [StoredPosition]) throws(EngineError) {
        throw .write(code: "not_supported", category: .impossible, message: "this store keeps no live objects (a GeoPackage or PostGIS store does)")
    }

    public func deletePositions(layer: String, id: String?) throws(EngineError) {}

    public func apply(_ batches: [WriteBatch]) throws(EngineError) -> [Result<AppliedBatch, EngineError>] {
        batches.map { batch in Result { () throws(EngineError) in try apply(batch) } }
    }
}

/// What an acknowledged write did.
public struct WriteReceipt: Sendable {
    /// The store's sequence number after the batch: its last change's.
    public let sequence: Int64
    /// One per operation, in the batch's order.
    public let changes: [Change]
    /// Geometries repaired with make-valid, naming the operation.
    public let warnings: [String]
    /// The snapshot that holds the write (the engine's current one when the write returned).
    public let snapshot: Snapshot
}

extension Engine {
    /// Applies `batch` to the store and swaps in a snapshot that holds it before returning, so
    /// the next read sees it. Errors: `.write` when the batch is refused (nothing written: the
    /// message names the operation) or the store takes no writes.
    @discardableResult
    public func write(_ batch: WriteBatch) throws(EngineError) -> WriteReceipt {
        try updating { (writer: any StoreWriter) throws(EngineError) -> WriteReceipt in try apply(batch, with: writer) }
    }

    /// Builds a batch from the current snapshot and applies it, both under the update lock, so
    /// no other write lands between what `build` read and what it writes (a query's UPDATE …
    /// WHERE selects its features on the snapshot it writes over). Returns nil, writing
    /// nothing, when `build` gives an empty batch. Errors: `build`'s, or `write(_:)`'s.
    public func write<E: Error>(building build: (Snapshot) throws(E) -> WriteBatch) throws -> WriteReceipt? {
        var failure: E?
        let receipt = try updating { (writer: any StoreWriter) throws(EngineError) -> WriteReceipt? in
            let batch: WriteBatch
            do throws(E) {
                batch = try build(snapshot)
            } catch {
                failure = error
                return nil
            }
            return batch.operations.isEmpty ? nil : try apply(batch, with: writer)
        }
        if let failure { throw failure }
        return receipt
    }

    /// Applies several batches at once, each all or nothing (group commit: a GeoPackage
    /// commits them together, one fsync), and swaps in one snapshot holding every one that
    /// succeeded before returning. A refused batch changes nothing and leaves the others;
    /// throws only when none could be applied (the store failed).
    public func write(_ batches: [WriteBatch]) throws(EngineError) -> [Result<WriteReceipt, EngineError>] {
        try updating { (writer: any StoreWriter) throws(EngineError) -> [Result<WriteReceipt, EngineError>] in
            let results = try writer.apply(batches)
            let fresh = try holding(results.compactMap { try? $0.get() })
            return results.map { result in
                result.map { WriteReceipt(sequence: $0.sequence, changes: $0.changes, warnings: $0.warnings, snapshot: fresh) }
            }
        }
    }

    private func apply(_ batch: WriteBatch, with writer: any StoreWriter) throws(EngineError) -> WriteReceipt {
        let applied = try writer.apply(batch)
        let fresh = try holding([applied])
        return WriteReceipt(sequence: applied.sequence, changes: applied.changes, warnings: applied.warnings, snapshot: fresh)
    }

    /// Swaps in the snapshot that holds the committed batches, in their order.
    private func holding(_ batches: [AppliedBatch]) throws(EngineError) -> Snapshot {
        guard let first = batches.first else { return storeSnapshot }
        var all = first
        for applied in batches.dropFirst() {
            all.changes += applied.changes
            all.layers.merge(applied.layers) { $1 }
            for (layer, features) in applied.features { all.features[layer, default: [:]].merge(features) { $1 } }
            all.warnings += applied.warnings
            all.sequence = applied.sequence
        }
        let fresh: Snapshot
        do {
            fresh = try storeSnapshot.applying(all)
        } catch {
            // Committed, so never reported as failed: the store holds it, and a reload reads
            // it from there.
            fresh = try source.loadSnapshot(tileSets: tileSetPaths, limits: limits)
        }
        swap(fresh)
        // The snapshot holds the feed up to these batches only when nothing another process
        // wrote came between; if something did, `catchUp` reads it (and these again) later.
        held.withLock { held in
            if let sequence = all.changes.first?.sequence, sequence == held + 1 { held = all.sequence }
        }
        liveAfterWrite(fresh, changedLayers: Set(all.layers.keys))
        return fresh
    }

    /// Collects the writes `body` adds to a batch and applies them as one: all or none, durable
    /// and visible to the next read when this returns (GRDB's `DatabaseWriter.write`, for a
    /// store that many readers share). A `body` that throws writes nothing.
    @discardableResult
    public func write(crs: String? = nil, _ body: (inout WriteBatch) throws -> Void) throws -> WriteReceipt {
        var batch = WriteBatch(crs: crs)
        try body(&batch)
        return try write(batch)
    }

    /// Opens the store's writer now rather than at the first write: a store that takes no
    /// writes, or whose writer is another process, fails here.
    public func prepareWrites() throws(EngineError) {
        try updating { (_: any StoreWriter) throws(EngineError) in }
    }

    /// The changes after `sequence` (0: from the first), oldest first, at most `limit`. Read
    /// through the writer when this engine has one, else from the store: reading the feed
    /// never makes a process the store's writer.
    public func changes(since sequence: Int64, limit: Int) throws(EngineError) -> [Change] {
        try updates.withLock { (writer: inout (any StoreWriter)?) throws(EngineError) -> [Change] in
            if let writer { return try writer.changes(since: sequence, limit: limit) }
            return try source.changes(since: sequence, limit: limit)
        }
    }
}

extension Snapshot {
    /// This snapshot with a committed batch in it: each layer the batch changed rebuilt or
    /// overlaid (`Layer.rebuilt`), everything else shared.
    func applying(_ applied: AppliedBatch) throws(EngineError) -> Snapshot {
        var layers = self.layers
        var changed: Set<String> = []
        for (name, info) in applied.layers {
            let key = name.lowercased()
            changed.insert(key)
            let fresh = try Layer.rebuilt(layersByName[key], info: info, written: applied.features[name] ?? [:], limits: limits)
            if let i = layers.firstIndex(where: { $0.name.lowercased() == key }) {
                layers[i] = fresh
            } else {
                layers.append(fresh)
                layers.sort { $0.name < $1.name }
            }
        }
        var byTable = timeSeriesByTable.filter { !changed.contains($0.key.lowercased()) }
        var byLayer = timeSeriesByLayer.filter { !changed.contains($0.value.table.lowercased()) }
        let (newByTable, newByLayer) = Snapshot.timeSeries(of: layers.filter { changed.contains($0.name.lowercased()) })
        byTable.merge(newByTable) { $1 }
        byLayer.merge(newByLayer) { $1 }
        return try Snapshot(storePath: storePath, layers: layers, timeSeriesByTable: byTable, timeSeriesByLayer: byLayer,
                            tileSets: tileSets, unavailableTileSets: unavailableTileSets, loadSeconds: loadSeconds, limits: limits,
                            venues: venues, venueWarnings: venueWarnings, database: database,
                            networks: networks.filter { !changed.contains($0.key) })
    }
}

/// The GeoPackage file as the engine's writer: one read-write connection, used by one batch at
/// a time (the engine's update lock), in the one process that writes the file. That process
/// holds an exclusive `flock` on `STORE-writer` beside the store for as long as it writes, so
/// a second one is refused by name rather than left to write changes the first one's snapshot
/// never sees. The lock goes with the process, however it ends.
final class GeoPackageStoreWriter: StoreWriter, SurveyWriter, @unchecked Sendable {
    private let store: Locked<GeoPackage>
    private let lockDescriptor: Int32

    init(path: String) throws(EngineError) {
        let lockPath = path + "-writer"
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw .write(code: "read_only", category: .impossible, message: "cannot write the store \(path): cannot open \(lockPath): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let holder = (try? String(contentsOfFile: lockPath, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            close(descriptor)
            throw .write(code: "store_has_a_writer", category: .impossible,
                         message: "the store \(path) is written by another process\(holder.isEmpty ? "" : " (pid \(holder))"): a GeoPackage store has one writer process; send writes to that one")
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        lockDescriptor = descriptor
        do {
            store = Locked(try GeoPackage(path: path, mode: .readWrite))
        } catch {
            close(descriptor)
            throw .write(code: error.code, category: error.category, message: error.description)
        }
    }

    deinit { close(lockDescriptor) }

    func apply(_ batch: WriteBatch) throws(EngineError) -> AppliedBatch {
        try run { (store: GeoPackage) throws(StoreError) in try store.apply(batch) }
    }

    func apply(_ batches: [WriteBatch]) throws(EngineError) -> [Result<AppliedBatch, EngineError>] {
        try run { (store: GeoPackage) throws(StoreError) in try store.apply(batches) }.map { $0.mapError(Self.classify) }
    }

    func changes(since sequence: Int64, limit: Int) throws(EngineError) -> [Change] {
        try run { (store: GeoPackage) throws(StoreError) in try store.changes(since: sequence, limit: limit) }
    }

    func save(_ definition: LiveDefinition) throws(EngineError) {
        try run { (store: GeoPackage) throws(StoreError) in try store.save(definition) }
    }

    func deleteLiveDefinition(kind: LiveDefinition.Kind, name: String) throws(EngineError) -> Bool {
        try run { (store: GeoPackage) throws(StoreError) in try store.deleteLiveDefinition(kind: kind, name: name) }
    }

    func savePositions(_ positions: [StoredPosition]) throws(EngineError) {
        try run { (store: GeoPackage) throws(StoreError) in try store.savePositions(positions) }
    }

    func deletePositions(layer: String, id: String?) throws(EngineError) {
        try run { (store: GeoPackage) throws(StoreError) in try store.deletePositions(layer: layer, id: id) }
    }

    /// Appends to a venue's survey (`SurveyWriter`), in the store's one writing connection.
    func appendSurvey(_ part: Venue) throws(EngineError) -> Venue {
        do {
            return try store.withLock { (store: inout GeoPackage) throws(IndoorError) -> Venue in try IndoorStore.append(part, into: store) }
        } catch {
            switch error {
            case .invalidOption(let message): throw .invalidArgument(parameter: "venue", message: message)
            case .store(let message): throw .store(message)
            default: throw .invalidArgument(parameter: "scans", message: error.description)
            }
        }
    }

    private func run<T>(_ body: (GeoPackage) throws(StoreError) -> T) throws(EngineError) -> T {
        do {
            return try store.withLock { (store: inout GeoPackage) throws(StoreError) -> T in try body(store) }
        } catch {
            throw Self.classify(error)
        }
    }

    private static func classify(_ error: StoreError) -> EngineError {
        switch error.category {
        case .internal: .store(error.description)
        default: .write(code: error.code, category: error.category, message: error.description)
        }
    }
}
