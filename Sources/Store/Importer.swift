// Importers: files → validated features → one layer written in one transaction.
//
// Every import reads and checks the whole input first (parse, reproject to EPSG:4326, check
// coordinate ranges, check validity with GEOS) and writes nothing unless every record passed,
// so a failed import leaves the store exactly as it was. Invalid polygons are repaired with
// GEOS make-valid and reported, or rejected under `strict`.

import Foundation
import Geometry

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

    public let name: String
    let recognise: Recogniser
    let read: Reader

    public init(name: String, recognise: @escaping Recogniser, read: @escaping Reader) {
        self.name = name
        self.recognise = recognise
        self.read = read
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
    }, read: { source, store, options throws(StoreError) in
        // A FeatureCollection streams feature by feature: never the whole text and tree at once.
        if case .object(_, "FeatureCollection")? = source.jsonShape { return try Importer.streamGeoJSON(source, options: options) }
        return try Importer.readGeoJSON(try source.bytes(), file: source.file, store: store, options: options)
    })
    /// A CSV of points: longitude/latitude columns (also y/x and Czech names, with decimal
    /// commas) or a WKT geometry column.
    public static let csv = ImportFormat(name: "csv", recognise: { source in isCSV(source.lowercasedPath) ? .byName : nil }, readBytes: Importer.readPointCSV)
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
    /// Formats with several layers (GeoPackage, GPX, KML): the layer to read.
    public var sourceLayer: String?
    /// Import even when features land outside the area of use of their CRS.
    public var force: Bool
    public var description: String

    public init(layer: String, format: ImportFormat? = nil, crs: String? = nil, strict: Bool = false,
                replace: Bool = false, only: GeometryFamily? = nil, lonColumn: String? = nil,
                latColumn: String? = nil, timeSeriesOf: String? = nil, keyColumn: String? = nil,
                sourceLayer: String? = nil, force: Bool = false, description: String = "") {
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

        let file = source.file
        var prepared = try format.read(source, store, options)

        var warnings: [ImportProblem] = []
        // Features that all lack a geometry are a table (Vltava's own export of a table layer).
        if prepared.kind == .features, !prepared.features.isEmpty, prepared.features.allSatisfy({ $0.geometry == nil }) {
            prepared.kind = .attributes
            prepared.sourceCRS = nil
        }
        if prepared.kind == .features {
            if let only = options.only {
                prepared.features.removeAll { feature in feature.geometry.map { !only.matches($0) } ?? false }
            }
            warnings = try validate(&prepared, file: file, options: options)
        }
        guard !prepared.features.isEmpty else {
            throw .importFailed(file: file, problems: [ImportProblem(location: "", message: "no features to import" + (options.only.map { " with \($0.rawValue) geometry" } ?? ""))])
        }

        let (columns, renames) = inferColumns(prepared.features, reserved: prepared.kind == .features ? ["fid", "geom"] : ["fid"])
        if !renames.isEmpty {
            for index in prepared.features.indices {
                for (from, to) in renames {
                    if let value = prepared.features[index].properties[from] {
                        prepared.features[index].properties[from] = nil
                        prepared.features[index].properties[to] = value
                    }
                }
            }
            warnings += renames.map { ImportProblem(location: "", message: "attribute '\($0.from)' renamed to '\($0.to)' (the name is taken)") }
        }
        let ids = prepared.features.compactMap { feature -> Int64? in if case .integer(let i) = feature.id { i } else { nil } }
        let idsAreFIDs = ids.count == prepared.features.count && Set(ids).count == ids.count

        let layer = LayerData(
            name: options.layer, kind: prepared.kind,
            geometryType: prepared.kind == .features ? geometryTypeName(prepared.features) : nil,
            columns: columns, features: prepared.features, useFeatureIDsAsFID: idsAreFIDs,
            description: options.description.isEmpty ? "imported from \(file)" : options.description,
            timeSeries: prepared.timeSeries)
        try store.write(layer, replace: options.replace)
        return ImportReport(
            layer: options.layer, format: format, kind: layer.kind, geometryType: layer.geometryType,
            featureCount: layer.features.count, sourceCRS: prepared.sourceCRS, warnings: warnings)
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

    // MARK: - Validation

    /// Reprojects to EPSG:4326, checks ranges and validity. Fatal problems abort the import
    /// with every problem listed; repairs are returned as warnings.
    static func validate(_ prepared: inout ImportRecords, file: String, options: ImportOptions) throws(StoreError) -> [ImportProblem] {
        let needsTransform = prepared.sourceCRS.map { Projection.normalizeCRS($0) != "EPSG:4326" } ?? false
        if needsTransform, let crs = prepared.sourceCRS {
            // Fail once, early, on a CRS PROJ does not know.
            do {
                _ = try CoordinateTransformer(from: crs, to: "EPSG:4326")
            } catch {
                throw .importFailed(file: file, problems: [ImportProblem(location: "", message: "\(error)")])
            }
        }
        // The declared CRS's area of use: a layer landing outside it has the wrong CRS (lon/lat
        // declared as EPSG:5514 lands in Estonia).
        let area = !needsTransform || options.force ? nil : prepared.sourceCRS.flatMap(Projection.areaOfUse).flatMap { $0.isWorld ? nil : $0 }

        // Reprojection and GEOS validity dominate a large import: the features are checked in
        // one slice per core, each with its own PROJ transformer and GEOS context (neither may
        // be shared between threads), and the results joined in feature order.
        let count = prepared.features.count
        let slices = max(1, min(ProcessInfo.processInfo.activeProcessorCount, count / 2_000))
        var results = [ValidationSlice](repeating: ValidationSlice(), count: slices)
        let context = SliceContext(sourceCRS: prepared.sourceCRS, crsAssumed: prepared.crsAssumed, locations: prepared.locations)
        results.withUnsafeMutableBufferPointer { results in
            prepared.features.withUnsafeMutableBufferPointer { features in
                // Each slice writes only its own range of features and its own result.
                let shared = DisjointSlices(features: features, results: results)
                DispatchQueue.concurrentPerform(iterations: slices) { slice in
                    let range = (count * slice / slices)..<(count * (slice + 1) / slices)
                    shared.results[slice] = validateSlice(shared.features, range, context, area: area, needsTransform: needsTransform, options: options)
                }
            }
        }
        var problems: [ImportProblem] = []
        var warnings: [ImportProblem] = []
        var outside: [(index: Int, raw: (Double, Double), landed: (Double, Double))] = []
        var projectedLooking: [(index: Int, raw: (Double, Double))] = []
        for result in results {
            if let setup = result.setupProblem { throw .importFailed(file: file, problems: [setup]) }
            problems += result.problems
            warnings += result.warnings
            outside += result.outside
            projectedLooking += result.projectedLooking
        }
        if let area, let first = outside.first {
            let rawLooksLonLat = abs(first.raw.0) <= 180 && abs(first.raw.1) <= 90
            let hint = rawLooksLonLat ? "the coordinates look like longitude/latitude: pass --crs EPSG:4326" : "check the file's CRS or pass the right one with --crs"
            problems.insert(ImportProblem(location: "", message: "\(outside.count) of \(prepared.features.count) features land outside the area of use of \(area) "
                + "(\(prepared.locations.map { $0[first.index] } ?? "feature \(first.index)") at \(formatPosition(first.raw)) lands at \(formatPosition(first.landed))); "
                + "\(hint), or --force to import anyway"), at: 0)
        }
        if let first = projectedLooking.first {
            let samples = projectedLooking.prefix(50).map(\.raw)
            let guess = likelyProjectedCRS(samples).map { "EPSG:\($0.code) (\($0.name)): pass --crs EPSG:\($0.code)" } ?? "a projected CRS: pass it with --crs"
            problems.insert(ImportProblem(location: "", message: "\(projectedLooking.count) of \(prepared.features.count) features are not longitude/latitude "
                + "(\(prepared.locations.map { $0[first.index] } ?? "feature \(first.index)") at \(formatPosition(first.raw))); the file names no CRS, "
                + "and these look like metres in \(guess)"), at: 0)
        }
        if !problems.isEmpty { throw .importFailed(file: file, problems: problems) }
        return warnings
    }

    /// What one slice of the features found.
    struct ValidationSlice {
        var problems: [ImportProblem] = []
        var warnings: [ImportProblem] = []
        var outside: [(index: Int, raw: (Double, Double), landed: (Double, Double))] = []
        var projectedLooking: [(index: Int, raw: (Double, Double))] = []
        var setupProblem: ImportProblem?
    }

    /// Reprojects, range-checks and GEOS-checks `range` of the features in place.
    /// What every slice needs to know of the records (not the records: a copy of their
    /// features array would be copied again when the slices write into it).
    struct DisjointSlices: @unchecked Sendable {
        let features: UnsafeMutableBufferPointer<Feature>
        let results: UnsafeMutableBufferPointer<ValidationSlice>
    }

    struct SliceContext: Sendable {
        var sourceCRS: String?
        var crsAssumed: Bool
        var locations: [String]?
    }

    static func validateSlice(_ features: UnsafeMutableBufferPointer<Feature>, _ range: Range<Int>, _ records: SliceContext,
                              area: AreaOfUse?, needsTransform: Bool, options: ImportOptions) -> ValidationSlice {
        var result = ValidationSlice()
        var transformer: CoordinateTransformer?
        let geos: GEOSContext
        do {
            if needsTransform, let crs = records.sourceCRS { transformer = try CoordinateTransformer(from: crs, to: "EPSG:4326") }
            geos = try GEOSContext()
        } catch {
            result.setupProblem = ImportProblem(location: "", message: "\(error)")
            return result
        }
        for index in range {
            let feature = features[index]
            let location = records.locations.map { $0[index] } ?? featureLocation(index, feature)
            guard var geometry = feature.geometry else {
                result.problems.append(ImportProblem(location: location, message: "the feature has no geometry"))
                continue
            }
            let raw = firstPosition(geometry)
            if let transformer {
                do {
                    geometry = try transformer.transform(geometry)
                } catch {
                    result.problems.append(ImportProblem(location: location, message: "cannot reproject: \(error)"))
                    continue
                }
            }
            if let area, !area.meets(geometry.bbox) {
                result.outside.append((index, raw, firstPosition(geometry)))
                continue
            }
            if let rangeProblem = coordinateRangeProblem(geometry) {
                if records.crsAssumed, looksProjected(geometry) {
                    result.projectedLooking.append((index, raw))
                } else {
                    result.problems.append(ImportProblem(location: location, message: rangeProblem))
                }
                continue
            }
            do {
                let validity = try geos.validity(geometry)
                if !validity.isValid {
                    let reason = validity.reason ?? "invalid geometry"
                    let at = validity.location.map { " at (\($0.lon) \($0.lat))" } ?? ""
                    if options.strict {
                        result.problems.append(ImportProblem(location: location, message: "invalid \(geometry.typeName): \(reason)\(at) (rejected under --strict)"))
                        continue
                    }
                    geometry = try geos.makeValid(geometry)
                    result.warnings.append(ImportProblem(location: location, message: "invalid \(geometry.typeName): \(reason)\(at); repaired with make-valid"))
                }
            } catch {
                result.problems.append(ImportProblem(location: location, message: "cannot check validity: \(error)"))
                continue
            }
            features[index].geometry = geometry
        }
        return result
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

    // MARK: - Schema inference

    /// Columns in order of first appearance, typed from every value; names clashing
    /// (case-insensitively, as SQLite compares them) with a reserved or earlier name are renamed.
    static func inferColumns(_ features: [Feature], reserved: Set<String>) -> ([ColumnInfo], renames: [(from: String, to: String)]) {
        var order: [String] = []
        var kinds: [String: Set<String>] = [:]
        for feature in features {
            for (name, value) in feature.properties {
                if kinds[name] == nil { order.append(name) }
                let kind: String? = switch value {
                case .null: nil
                case .bool: "bool"
                case .integer: "integer"
                case .real: "real"
                case .text: "text"
                case .json: "json"
                }
                kinds[name, default: []].formUnion(kind.map { [$0] } ?? [])
            }
        }
        var taken = Set(reserved)
        var columns: [ColumnInfo] = []
        var renames: [(String, String)] = []
        for name in order {
            var columnName = name
            var suffix = 1
            while taken.contains(columnName.lowercased()) {
                columnName = "\(name)_\(suffix)"
                suffix += 1
            }
            if columnName != name { renames.append((name, columnName)) }
            taken.insert(columnName.lowercased())
            let seen = kinds[name] ?? []
            let column: ColumnInfo = switch seen {
            case ["integer"]: ColumnInfo(name: columnName, type: .integer)
            case ["real"], ["integer", "real"]: ColumnInfo(name: columnName, type: .real)
            case ["bool"]: ColumnInfo(name: columnName, type: .boolean)
            case ["json"]: ColumnInfo(name: columnName, type: .text, isJSON: true)
            default: ColumnInfo(name: columnName, type: .text)
            }
            columns.append(column)
        }
        return (columns, renames)
    }

    /// The GeoPackage geometry type name: the single type of all features, or GEOMETRY.
    static func geometryTypeName(_ features: [Feature]) -> String {
        let names = Set(features.compactMap { $0.geometry?.typeName.uppercased() })
        return names.count == 1 ? names.first ?? "GEOMETRY" : "GEOMETRY"
    }
}
