// Importers: files → checked features → one layer written in one transaction.
//
// An import streams (ImportPipeline.swift): each record is parsed, reprojected to EPSG:4326,
// range-checked and checked for validity with GEOS, then written, inside one transaction.
// Nothing is kept of the records but their problems: when there is any, the transaction is
// rolled back, so a failed import leaves the store exactly as it was. Invalid polygons are
// repaired with GEOS make-valid and reported, or rejected under `strict`.

import Foundation
import Geometry
import SQLite

/// A file format the importer reads: its name (for `--format` and reports), how a file is
/// recognised, and the reader that turns the file into records. The store knows the generic
/// formats (`builtIn`); a module for one source's own files (ZooPraha) defines its formats,
/// and the caller hands them to `Importer.importFile`. Formats are equal by name.
public struct ImportFormat: Hashable, Sendable, CustomStringConvertible {
    /// Reads a whole file into records, not yet validated; every problem is an `importFailed`
    /// naming the file and the record. The store is for readers that need another layer.
    public typealias Reader = @Sendable (_ source: ImportSource, _ store: GeoPackage, _ options: ImportOptions) throws(StoreError) -> ImportRecords
    /// Whether a file is of this format: `byContent` when its structure says so (a GeoJSON
    /// FeatureCollection, a file GDAL identifies), `byName` when only the name does.
    public typealias Recogniser = @Sendable (_ source: ImportSource) -> Recognition?

    public enum Recognition: Sendable {
        case byName, byContent
    }

    /// Hands the records to the sink one by one, on the import's reader thread (so without
    /// the store, whose connection belongs to the writer).
    typealias StreamReader = @Sendable (_ source: ImportSource, _ options: ImportOptions, _ sink: ImportSink) throws(StoreError) -> Void

    public let name: String
    let recognise: Recogniser
    let read: Reader
    /// The streaming reader, used instead of `read` when there is one.
    let stream: StreamReader?

    public init(name: String, recognise: @escaping Recogniser, read: @escaping Reader) {
        self.name = name
        self.recognise = recognise
        self.read = read
        stream = nil
    }

    init(name: String, recognise: @escaping Recogniser, stream: @escaping StreamReader) {
        self.name = name
        self.recognise = recognise
        self.stream = stream
        // Everything goes through `stream`; this is for callers that want the records whole.
        read = { _, _, _ throws(StoreError) in
            throw .unsupportedFormat(file: name, reason: "the \(name) reader streams")
        }
    }

    /// A format whose reader takes the file's bytes.
    public init(name: String, recognise: @escaping Recogniser,
                readBytes: @escaping @Sendable (_ bytes: [UInt8], _ file: String, _ store: GeoPackage, _ options: ImportOptions) throws(StoreError) -> ImportRecords) {
        self.init(name: name, recognise: recognise, read: { source, store, options throws(StoreError) in
            try readBytes(try source.bytes(), source.file, store, options)
        })
    }

    public var description: String { name }
    public static func == (a: ImportFormat, b: ImportFormat) -> Bool { a.name == b.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }

    /// A GeoJSON FeatureCollection, Feature or geometry, in EPSG:4326 or the CRS its old-style
    /// `crs` member or `--crs` names. Known by its structure (the root's `type`), whatever
    /// else its header holds (GDAL writes `"name": "roads"` there), or by a .json/.geojson name.
    public static let geojson = ImportFormat(name: "geojson", recognise: { source in
        if case .object(_, let type?) = source.jsonShape, geoJSONRootTypes.contains(type) { return .byContent }
        return isJSON(source.lowercasedPath) ? .byName : nil
    }, stream: { source, options, sink throws(StoreError) in
        // A FeatureCollection streams feature by feature: never the whole text and tree at once.
        if case .object(_, "FeatureCollection")? = source.jsonShape { return try Importer.streamGeoJSON(source, options: options, into: sink) }
        Importer.send(try Importer.readGeoJSON(try source.bytes(), file: source.file, options: options), to: sink)
    })
    /// A CSV of points: longitude/latitude columns (also y/x and Czech names, with decimal
    /// commas) or a WKT geometry column.
    public static let csv = ImportFormat(name: "csv", recognise: { source in isCSV(source.lowercasedPath) ? .byName : nil }, stream: Importer.streamPointCSV)
    /// Hourly observations (CSV) as a time series keyed to a point layer.
    public static let observations = ImportFormat(name: "observations", recognise: { source in
        // A CSV whose header names an interval.
        guard isCSV(source.lowercasedPath) else { return nil }
        let firstLine = source.headText.split(whereSeparator: \.isNewline).first.map { $0.lowercased() } ?? ""
        let intervalNames = ["datefromutc", "interval_start", "start_utc"]
        return intervalNames.contains(where: firstLine.contains) ? .byContent : nil
    }, readBytes: Importer.readObservations)

    /// The formats the store reads by itself, in the order `--format` lists them: its own
    /// streaming GeoJSON and CSV readers, then GDAL's.
    public static let builtIn: [ImportFormat] = [.geojson, .csv, .observations, .shapefile, .gpkg, .flatgeobuf, .gpx, .kml, .gml, .anyGDAL]

    public static func isJSON(_ lowercasedPath: String) -> Bool {
        lowercasedPath.hasSuffix(".json") || lowercasedPath.hasSuffix(".geojson")
    }

    public static func isCSV(_ lowercasedPath: String) -> Bool {
        lowercasedPath.hasSuffix(".csv") || lowercasedPath.hasSuffix(".tsv")
    }
}

/// The file being imported, as the recognisers and readers see it: its path, its first
/// 4 KiB, the top-level structure of that head when it is JSON, and GDAL's identification.
/// The whole content is read only by readers that want it.
public struct ImportSource: Sendable {
    public let path: String
    /// The file's name without its folder, for messages.
    public let file: String
    public let lowercasedPath: String
    public let head: [UInt8]
    public var headText: String { String(decoding: head, as: UTF8.self) }
    /// The shape of the JSON that the head starts (nil when it is not JSON).
    public let jsonShape: JSONShape?
    /// The driver GDAL would read the file with (nil when GDAL knows no driver for it).
    let gdalDriver: (driver: String, longName: String, isVector: Bool)?

    init(path: String) throws(StoreError) {
        self.path = path
        file = (path as NSString).lastPathComponent
        lowercasedPath = path.lowercased()
        guard let handle = FileHandle(forReadingAtPath: path) else { throw .fileNotFound(path) }
        defer { try? handle.close() }
        head = [UInt8]((try? handle.read(upToCount: 4096)) ?? Data())
        jsonShape = JSONShape.of(head)
        gdalDriver = jsonShape == nil ? GDALLibrary.identify(path) : nil
    }

    /// The whole file.
    public func bytes() throws(StoreError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw .fileNotFound(path) }
        return [UInt8](data)
    }
}

/// What a format reader hands over: records not yet validated, and where they come from.
public struct ImportRecords: Sendable {
    public var kind: LayerInfo.Kind
    public var features: [Feature]
    /// The CRS the coordinates are in (nil for a table).
    public var sourceCRS: String?
    public var timeSeries: TimeSeriesLink?
    /// True when the file named no CRS and none was passed, so EPSG:4326 is a guess: then
    /// coordinates out of range are most likely projected metres, and the error says which CRS.
    public var crsAssumed: Bool
    /// Where each feature comes from ("line 7"), when that is not its index.
    public var locations: [String]?

    public init(kind: LayerInfo.Kind, features: [Feature], sourceCRS: String?, crsAssumed: Bool = false,
                timeSeries: TimeSeriesLink? = nil, locations: [String]? = nil) {
        self.kind = kind
        self.features = features
        self.sourceCRS = sourceCRS
        self.crsAssumed = crsAssumed
        self.timeSeries = timeSeries
        self.locations = locations
    }
}

/// Keep only features of one geometry family, e.g. the polygons and the points of a file that
/// mixes buildings and their entrances.
public enum GeometryFamily: String, CaseIterable, Sendable {
    case point, line, polygon

    func matches(_ geometry: Geometry) -> Bool {
        switch (self, geometry) {
        case (.point, .point), (.point, .multiPoint): true
        case (.line, .lineString), (.line, .multiLineString): true
        case (.polygon, .polygon), (.polygon, .multiPolygon): true
        default: false
        }
    }
}

public struct ImportOptions: Sendable {
    public var layer: String
    /// Detected from the file's name and content when nil.
    public var format: ImportFormat?
    /// The input's CRS ("EPSG:5514"); overrides a GeoJSON `crs` member.
    public var crs: String?
    public var strict: Bool
    public var replace: Bool
    public var only: GeometryFamily?
    /// CSV: the longitude and latitude columns; detected from common names when nil.
    public var lonColumn: String?
    public var latColumn: String?
    /// Observations: the point layer the series belongs to, and the column that names the
    /// point (detected: code, station, station_code, id).
    public var timeSeriesOf: String?
    public var keyColumn: String?
    /// Observations: the unit of value columns, e.g. `["no2": "µg/m³"]`.
    public var units: [String: String]
    /// Formats with several layers (GeoPackage, GPX, KML): the layer to read.
    public var sourceLayer: String?
    /// Import even when features land outside the area of use of their CRS.
    public var force: Bool
    public var description: String

    public init(layer: String, format: ImportFormat? = nil, crs: String? = nil, strict: Bool = false,
                replace: Bool = false, only: GeometryFamily? = nil, lonColumn: String? = nil,
                latColumn: String? = nil, timeSeriesOf: String? = nil, keyColumn: String? = nil,
                units: [String: String] = [:], sourceLayer: String? = nil, force: Bool = false, description: String = "") {
        self.layer = layer
        self.format = format
        self.crs = crs
        self.strict = strict
        self.replace = replace
        self.only = only
        self.lonColumn = lonColumn
        self.latColumn = latColumn
        self.timeSeriesOf = timeSeriesOf
        self.keyColumn = keyColumn
        self.units = units
        self.sourceLayer = sourceLayer
        self.force = force
        self.description = description
    }
}

public struct ImportReport: Sendable {
    public var layer: String
    public var format: ImportFormat
    public var kind: LayerInfo.Kind
    public var geometryType: String?
    public var featureCount: Int
    /// The CRS the input was read in, before reprojection to EPSG:4326.
    public var sourceCRS: String?
    /// Features repaired with make-valid, and other non-fatal notes, per feature.
    public var warnings: [ImportProblem]
}

public enum Importer {
    /// Imports one file as a layer. Without `options.format`, the format is the first of
    /// `formats` that recognises the file's content, else the first that recognises its name.
    public static func importFile(_ path: String, into store: GeoPackage, options: ImportOptions,
                                  formats: [ImportFormat] = ImportFormat.builtIn) throws(StoreError) -> ImportReport {
        try checkLayerName(options.layer)
        guard FileManager.default.fileExists(atPath: path) else { throw .fileNotFound(path) }
        let source = try ImportSource(path: path)
        let format: ImportFormat
        if let explicit = options.format { format = explicit } else { format = try detectFormat(source, formats: formats) }
        // Fail early, before any parsing, on a name clash.
        if !options.replace, try store.hasLayer(options.layer) { throw .layerExists(options.layer) }

        if let stream = format.stream {
            return try run(format: format, source: source, store: store, options: options) { options, sink throws(StoreError) in
                try stream(source, options, sink)
            }
        }
        // A reader that needs the store (observations name their point layer) reads the whole
        // file here; its records then take the same path.
        let records = try format.read(source, store, options)
        return try run(format: format, source: source, store: store, options: options) { _, sink throws(StoreError) in
            send(records, to: sink)
        }
    }

    /// Imports one file into the store at `storePath`: an existing store gets the layer in one
    /// transaction, as `importFile(_:into:options:formats:)`; a new one is built beside its path
    /// and moved into place when complete (`GeoPackage.write(at:_:)`), so a failed import
    /// leaves no file behind.
    public static func importFile(_ path: String, intoStoreAt storePath: String, options: ImportOptions,
                                  formats: [ImportFormat] = ImportFormat.builtIn) throws(StoreError) -> ImportReport {
        do {
            return try GeoPackage.write(at: storePath) { store in try importFile(path, into: store, options: options, formats: formats) }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .importFailed(file: (path as NSString).lastPathComponent, problems: [ImportProblem(location: "", message: "\(error)")])
        }
    }

    /// Hands records read whole to a sink.
    static func send(_ records: ImportRecords, to sink: ImportSink) {
        sink.header(ImportHeader(kind: records.kind, sourceCRS: records.sourceCRS, crsAssumed: records.crsAssumed, timeSeries: records.timeSeries))
        for (index, feature) in records.features.enumerated() {
            if sink.cancelled { return }
            sink.record(feature, location: records.locations?[index])
        }
    }

    /// Runs the import pipeline in one transaction, again from the start when a reader learned
    /// the CRS only after the features, or the features' ids turn out not to be usable fids.
    static func run(format: ImportFormat, source: ImportSource, store: GeoPackage, options: ImportOptions,
                    read: @escaping @Sendable (ImportOptions, ImportSink) throws(StoreError) -> Void) throws(StoreError) -> ImportReport {
        var options = options
        var useIDs = true
        while true {
            do {
                return try store.database.transaction {
                    try attempt(format: format, source: source, store: store, options: options, useIDs: useIDs, read: read)
                }
            } catch let error as StoreError {
                throw error
            } catch is LayerWriter.RestartWithoutIDs {
                useIDs = false
            } catch let restart as RestartWithCRS {
                options.crs = restart.crs
            } catch let error as SQLiteError {
                throw .sqlite(error)
            } catch {
                throw .importFailed(file: source.file, problems: [ImportProblem(location: "", message: "\(error)")])
            }
        }
    }

    struct RestartWithCRS: Error {
        var crs: String
    }

    /// One pass: the reader and the checks on their own threads, the writes on this one.
    private static func attempt(format: ImportFormat, source: ImportSource, store: GeoPackage, options: ImportOptions, useIDs: Bool,
                                read: @escaping @Sendable (ImportOptions, ImportSink) throws(StoreError) -> Void) throws -> ImportReport {
        let file = source.file
        let raw = BoundedQueue<[ImportItem]>(capacity: 16)
        let checked = BoundedQueue<[ImportItem]>(capacity: 16)
        let sink = ImportSink(queue: raw)
        let readerOutcome = Handoff<(error: StoreError?, restartCRS: String?)>((nil, nil))
        let reader = StageThread(name: "vltava-import-read") {
            do throws(StoreError) {
                try read(options, sink)
            } catch {
                readerOutcome.value.error = error
            }
            sink.flush()
            readerOutcome.value.restartCRS = sink.restartCRS
            raw.close()
        }
        let checkerOutcome = Handoff<FeatureChecker?>(nil)
        let checking = StageThread(name: "vltava-import-check") {
            let checker = FeatureChecker(file: file, options: options)
            while let batch = raw.take() {
                let passed = checker.check(batch)
                if checker.setupFailed { raw.cancel() }
                if !passed.isEmpty { checked.put(passed) }
            }
            checked.close()
            checkerOutcome.value = checker
        }
        var writer: LayerWriter?
        var header: ImportHeader?
        do {
            while let batch = checked.take() {
                for item in batch {
                    switch item {
                    case .header(let h):
                        header = h
                        writer = try LayerWriter(store: store, layer: options.layer, kind: h.kind, replace: options.replace, useIDs: useIDs)
                    case .record(let feature, _):
                        try writer?.write(feature)
                    case .problem:
                        break
                    }
                }
            }
        } catch {
            raw.cancel()
            checked.cancel()
            reader.join()
            checking.join()
            throw error
        }
        reader.join()
        checking.join()
        if let error = readerOutcome.value.error { throw error }
        if let crs = readerOutcome.value.restartCRS { throw RestartWithCRS(crs: crs) }
        guard let checker = checkerOutcome.value else { throw StoreError.importFailed(file: file, problems: []) }
        let allWithoutGeometry = writer.map { $0.count > 0 && $0.withoutGeometry == $0.count } ?? false
        let problems = checker.problems(allWithoutGeometry: allWithoutGeometry)
        if !problems.isEmpty { throw StoreError.importFailed(file: file, problems: problems) }
        guard let writer, writer.count > 0, let header else {
            throw StoreError.importFailed(file: file, problems: [ImportProblem(location: "", message: "no features to import" + (options.only.map { " with \($0.rawValue) geometry" } ?? ""))])
        }
        let timeSeries = header.timeSeries.map { link in
            var link = link
            link.units = options.units
            return link
        }
        let summary = try writer.finish(description: options.description.isEmpty ? "imported from \(file)" : options.description, timeSeries: timeSeries)
        let warnings = checker.warnings + summary.renames.map { ImportProblem(location: "", message: "attribute '\($0.from)' renamed to '\($0.to)' (the name is taken)") }
        return ImportReport(
            layer: options.layer, format: format, kind: summary.kind, geometryType: summary.geometryType,
            featureCount: summary.featureCount, sourceCRS: summary.kind == .features ? header.sourceCRS : nil, warnings: warnings)
    }

    package static func checkLayerName(_ name: String) throws(StoreError) {
        guard let first = name.unicodeScalars.first, first == "_" || (first.properties.isAlphabetic && first.isASCII) else {
            throw .invalidLayerName(name, reason: "it must start with a letter or '_'")
        }
        guard name.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }) else {
            throw .invalidLayerName(name, reason: "use only ASCII letters, digits and '_'")
        }
        let lowered = name.lowercased()
        if GeoPackage.indoorTables.contains(lowered) {
            throw .invalidLayerName(name, reason: "the indoor model's tables (\(GeoPackage.indoorTables.sorted().joined(separator: ", "))) are reserved")
        }
        for prefix in ["gpkg_", "sqlite_", "rtree_", "vltava_"] where lowered.hasPrefix(prefix) {
            throw .invalidLayerName(name, reason: "names starting with '\(prefix)' are reserved")
        }
    }

    /// The first format that recognises the file's structure, else the first that recognises
    /// its name; else an error naming what the file is, when GDAL or its first bytes can tell.
    static func detectFormat(_ source: ImportSource, formats: [ImportFormat]) throws(StoreError) -> ImportFormat {
        let recognised = formats.map { $0.recognise(source) }
        if let i = recognised.firstIndex(of: .byContent) ?? recognised.firstIndex(of: .byName) { return formats[i] }
        let names = formats.map(\.name).joined(separator: ", ")
        if let identified = source.gdalDriver {
            let what = identified.isVector ? "a vector format Vltava does not import" : "a raster format; Vltava imports vector data"
            throw .unsupportedFormat(file: source.path, reason: "the file is \(identified.longName) (GDAL driver \(identified.driver)), \(what); formats: \(names)")
        }
        if source.jsonShape != nil {
            throw .unsupportedFormat(file: source.path, reason: "the file is JSON, but neither GeoJSON (a root \"type\" such as \"FeatureCollection\") nor another format of: \(names); pass --format")
        }
        if let found = FileSignature.name(of: source.head, lowercasedPath: source.lowercasedPath) {
            throw .unsupportedFormat(file: source.path, reason: "the file is \(found), which Vltava does not import; formats: \(names)")
        }
        throw .unsupportedFormat(file: source.path, reason: "neither Vltava nor GDAL recognises the file's content; pass --format (\(names))")
    }

    static func firstPosition(_ geometry: Geometry) -> (Double, Double) {
        var position: (Double, Double)?
        geometry.forEachCoordinateArray { coordinates in
            if position == nil, coordinates.count >= 2 { position = (coordinates[0], coordinates[1]) }
        }
        return position ?? (.nan, .nan)
    }

    static func formatPosition(_ position: (Double, Double)) -> String {
        func short(_ value: Double) -> String { abs(value) >= 1000 ? String(Int64(exactly: value.rounded()) ?? 0) : String((value * 1e6).rounded() / 1e6) }
        return "(\(short(position.0)) \(short(position.1)))"
    }

    /// Positions in the thousands: metres, not a mistyped or swapped longitude or latitude.
    static func looksProjected(_ geometry: Geometry) -> Bool {
        var projected = false
        geometry.forEachCoordinateArray { coordinates in
            if !projected, coordinates.contains(where: { $0.isFinite && abs($0) > 1000 }) { projected = true }
        }
        return projected
    }

    /// The projected CRSs met in Czech and European data, most specific first: the first in
    /// whose area of use every sample lands is the likely one. S-JTSK comes first (Prague's
    /// negative metres), Web Mercator last (almost anything fits it).
    static let candidateCRSs = ["EPSG:5514", "EPSG:32633", "EPSG:32634", "EPSG:3035", "EPSG:3857"]

    static func likelyProjectedCRS(_ samples: [(Double, Double)]) -> (code: String, name: String)? {
        let flat = samples.filter { $0.0.isFinite && $0.1.isFinite }.flatMap { [$0.0, $0.1] }
        guard !flat.isEmpty else { return nil }
        for candidate in candidateCRSs {
            guard let area = Projection.areaOfUse(candidate), let transformer = try? CoordinateTransformer(from: candidate, to: "EPSG:4326"),
                  let lonLat = try? transformer.transform(flat) else { continue }
            var i = 0
            var fits = true
            while i + 1 < lonLat.count, fits {
                fits = area.meets(BBox(minLon: lonLat[i], minLat: lonLat[i + 1], maxLon: lonLat[i], maxLat: lonLat[i + 1]), margin: 0)
                i += 2
            }
            if fits { return (String(candidate.dropFirst(5)), area.crsName) }
        }
        return nil
    }

    static func featureLocation(_ index: Int, _ feature: Feature) -> String {
        "feature \(index)" + (feature.id.map { " (id \($0))" } ?? "")
    }

    /// Longitude within ±180 and latitude within ±90, finite; with the swap hint when the
    /// latitude is out of range but would be a valid longitude.
    static func coordinateRangeProblem(_ geometry: Geometry) -> String? {
        var problem: String?
        geometry.forEachCoordinateArray { coordinates in
            guard problem == nil else { return }
            var i = 0
            while i + 1 < coordinates.count {
                problem = coordinateProblem(lon: coordinates[i], lat: coordinates[i + 1])
                if problem != nil { return }
                i += 2
            }
        }
        return problem
    }

    /// Geometry's one rule for positions (`Point.checked`), as a problem text.
    static func coordinateProblem(lon: Double, lat: Double) -> String? {
        do {
            _ = try Point.checked(lon: lon, lat: lat)
            return nil
        } catch {
            return error.description
        }
    }
}
