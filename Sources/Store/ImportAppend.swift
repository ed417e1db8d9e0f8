// `vltava import --append` and `--upsert --key`: a file added to a layer that exists, as one
// write batch (Writes.swift). The file is read by the same readers and checks as an import,
// into a scratch store, so an appended file and an imported one agree on every feature; the
// batch then goes through the write path, so the change feed numbers each feature it adds.
// Observations appended to a time series are read as the HTTP rows endpoint reads them, each
// replacing the station's row of the same start.

import Foundation
import Geometry

/// How a file's features join the features a layer already has.
public enum AppendMode: Sendable, Equatable {
    /// Each feature is added with a new fid (the file's ids are not kept: they name features
    /// of the file, not of the layer).
    case append
    /// Each feature replaces the layer's feature with the same values in `keys`, or is added.
    case upsert(keys: [String])
}

/// What `Importer.appendBatch` read.
public struct AppendPlan: Sendable {
    public var batch: WriteBatch
    public var format: ImportFormat
    /// Repairs and other notes from reading the file, per feature.
    public var warnings: [ImportProblem]
    /// True when the layer is a time series and the file its observations.
    public var isTimeSeries: Bool
}

/// What appending reads of the store it appends to, whichever store it is (a GeoPackage, or
/// PostgreSQL through the engine's source): the layer written to, and for observations the
/// stations' layer with the values of its key column.
public struct AppendTarget {
    public var layer: LayerInfo
    public var stations: (TimeSeriesLink) throws -> (layer: LayerInfo, keys: Set<String>)

    public init(layer: LayerInfo, stations: @escaping (TimeSeriesLink) throws -> (layer: LayerInfo, keys: Set<String>)) {
        self.layer = layer
        self.stations = stations
    }
}

extension Importer {
    /// The batch that adds the file at `path` to `target`'s layer, which must exist. Nothing
    /// is written: the caller applies the batch through the store's writer. The file is read
    /// whole into memory (a batch is one transaction).
    public static func appendBatch(_ path: String, to target: AppendTarget, options: ImportOptions, mode: AppendMode,
                                   formats: [ImportFormat] = ImportFormat.builtIn) throws(StoreError) -> AppendPlan {
        guard FileManager.default.fileExists(atPath: path) else { throw .fileNotFound(path) }
        let layer = target.layer
        if let link = layer.timeSeries {
            let stations: (layer: LayerInfo, keys: Set<String>)
            do {
                stations = try target.stations(link)
            } catch let error as StoreError {
                throw error
            } catch {
                throw .importFailed(file: (path as NSString).lastPathComponent, problems: [ImportProblem(
                    location: "", message: "cannot read the stations of '\(layer.name)' (layer '\(link.keyLayer)'): \(error)")])
            }
            return try observations(path, into: layer, link: link, stations: stations.layer, keys: stations.keys)
        }
        guard layer.kind == .features else {
            throw .importFailed(file: (path as NSString).lastPathComponent, problems: [ImportProblem(
                location: "", message: "'\(layer.name)' is a table without geometry: append its rows with POST /v1/layers/\(layer.name)/rows")])
        }
        if case .upsert(let keys) = mode {
            for key in keys where !layer.columns.contains(where: { $0.name.lowercased() == key.lowercased() }) {
                throw .importFailed(file: (path as NSString).lastPathComponent, problems: [ImportProblem(
                    location: "", message: "layer '\(layer.name)' has no column '\(key)' to upsert on (columns: \(layer.columns.map(\.name).joined(separator: ", ")))")])
            }
        }

        // The file as a layer of a scratch store: read, reprojected and checked as imports are.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("vltava-append-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        do {
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        } catch {
            throw .importFailed(file: (path as NSString).lastPathComponent, problems: [ImportProblem(location: "", message: "cannot make a scratch folder: \(error)")])
        }
        var scratchOptions = options
        scratchOptions.replace = false
        scratchOptions.timeSeriesOf = nil
        let scratchPath = scratch.appendingPathComponent("append.gpkg").path
        let report = try importFile(path, intoStoreAt: scratchPath, options: scratchOptions, formats: formats)
        var batch = WriteBatch(strict: options.strict)
        try GeoPackage(path: scratchPath).forEachFeature(of: options.layer) { stored in
            var feature = stored.feature
            feature.id = nil
            switch mode {
            case .append: batch.insert(feature, into: layer.name)
            case .upsert(let keys): batch.upsert(feature, into: layer.name, keys: keys)
            }
            return true
        }
        return AppendPlan(batch: batch, format: report.format, warnings: report.warnings, isTimeSeries: false)
    }

    /// A series' new observations, from CSV as `--time-series-of` reads them.
    private static func observations(_ path: String, into layer: LayerInfo, link: TimeSeriesLink, stations: LayerInfo, keys: Set<String>) throws(StoreError) -> AppendPlan {
        let source = try ImportSource(path: path)
        guard ImportFormat.isCSV(source.lowercasedPath) || source.jsonShape == nil else {
            throw .importFailed(file: source.file, problems: [ImportProblem(location: "", message: "observations are appended from CSV (as `--time-series-of` imports them); JSON rows go to POST /v1/layers/\(layer.name)/rows")])
        }
        let rows = try TimeSeriesRows.fromCSV(try source.bytes(), link: link, keyLayer: stations, keys: keys)
        let batch = WriteBatch(TimeSeriesRows.operations(rows, into: layer.name, link: link))
        return AppendPlan(batch: batch, format: .observations, warnings: [], isTimeSeries: true)
    }
}
