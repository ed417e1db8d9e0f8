import ArgumentParser
import Foundation
import PostGIS
import Vltava
import Store
import VectorTiles
import ZooPraha
import Engine

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import a file into the store as a layer (in one transaction: a failed import changes nothing).",
        discussion: """
            Formats: \(ImportCommand.formats.map(\.name).joined(separator: ", ")).
            Detected from the file's structure when --format is not given.
            GeoJSON and CSV: Vltava's own streaming readers. Through GDAL: Shapefile
            (with its .prj and .cpg), GeoPackage, FlatGeobuf, GPX, KML, GML, and every
            other vector format GDAL knows (`gdal`).
            CSV: longitude/latitude columns (lon/lat, lng, x/y, longitude/latitude,
            zem. délka/zem. šířka; decimal commas in ;-separated files) or a WKT
            column (wkt, geometry, the_geom).
            Coordinates are reprojected to EPSG:4326 from the file's CRS or --crs; a
            layer that lands outside its CRS's area of use is refused unless --force.
            Examples:
              vltava import districts.sjtsk-epsg5514.geojson --layer districts
              vltava import stations-prague.csv --layer stations
              vltava import observations.csv --layer observations --time-series-of stations
              vltava import last-hour.csv --layer observations --append   (new rows of a series)
              vltava import new-stages.geojson --layer stages --append
              vltava import lexicon.geojson --layer animals --upsert --key name
              vltava import pavilions-and-pens.geojson --layer pens --only point
              vltava import zones.shp --layer zones        (EPSG:5514 from zones.prj)
              vltava import survey.gpkg --layer trees --source-layer trees
              vltava import zoo.mbtiles --layer zoo_map      (registers an MBTiles tile set by name)
              vltava import zoo.pmtiles --layer zoo_map      (a PMTiles archive, by its extension)
              vltava import andorra.osm.pbf --layer andorra  (OSM ways tagged highway: a walking network)
            """
    )

    @Argument(help: "The file to import.") var file: String
    @Option(help: "The layer to create.") var layer: String
    @Option(help: "The input's coordinate reference system, e.g. EPSG:5514 (default: the file's own, else EPSG:4326).") var crs: String?
    @Option(help: "The input format.") var format: ImportFormat?
    @Flag(help: "Reject invalid geometries instead of repairing them.") var strict = false
    @Flag(help: "Replace an existing layer of the same name.") var replace = false
    @Flag(help: "Add the file's features to the layer as one write batch, numbered in the change feed (the layer is imported when it does not exist yet). Into a time series: its new observations, each replacing the station's row of the same start.")
    var append = false
    @Flag(help: "As --append, but each feature replaces the layer's feature with the same --key values, or is added.")
    var upsert = false
    @Option(help: "Keep only features of one geometry family: point, line or polygon.") var only: GeometryFamily?
    @Option(help: "CSV: the longitude column (default: detected).") var lon: String?
    @Option(help: "CSV: the latitude column (default: detected).") var lat: String?
    @Option(help: "Observations: the point layer this time series belongs to.") var timeSeriesOf: String?
    @Option(help: "Observations: the column naming the point (default: detected). With --upsert: the key column, or several separated by commas.") var key: String?
    @Option(help: "Observations: the unit of value columns, as COLUMN=UNIT separated by commas, e.g. 'no2=µg/m³,aqi=1'. OGC API – EDR's parameters carry them.") var units: String?
    @Option(help: "Files with several layers (GeoPackage, GPX, KML): the layer to read.") var sourceLayer: String?
    @Flag(help: "Import even when features land outside the area of use of their CRS.") var force = false
    @Flag(help: "Also build the store's snapshot file now, rather than at the first load, so that the first query maps the large polygon layers. It streams them from the store but holds their polygon index while it builds: about 520 MB for 1,000,000 polygons, where the import alone streams in about 100 MB.")
    var snapshotFile = false
    @OptionGroup var store: StoreOptions

    func validate() throws {
        if append && upsert { throw ValidationError("--append and --upsert: give one (--upsert also appends)") }
        if (append || upsert) && replace { throw ValidationError("--replace replaces the layer; --append and --upsert add to it: give one") }
        if upsert && (key ?? "").isEmpty { throw ValidationError("--upsert needs --key COLUMN: the column (or columns, comma-separated) that identify a feature") }
    }

    func run() throws {
        let isDatabase = PostGISURL.isDatabase(store.db)
        if append || upsert, let target = try existingLayer(isDatabase) { return try appendFile(to: target) }
        if isDatabase { return try importIntoDatabase() }
        try importFile()
    }

    /// The layer to append to with its store, if the store has it (else the file is imported
    /// as a new layer). The same for a GeoPackage and a PostGIS store: the engine's source.
    private func existingLayer(_ isDatabase: Bool) throws -> (source: any SnapshotSource, layer: LayerInfo)? {
        if !isDatabase && !FileManager.default.fileExists(atPath: store.db) { return nil }
        do {
            return try describe(layer).map { (try StoreLocation.source(store.db), $0) }
        } catch {
            throw CLIError(error, message: PostGISURL.redacted("\(error)"))
        }
    }

    /// A layer of the store, nil if it has none of that name: from PostgreSQL's catalogue, or
    /// from the GeoPackage without counting its rows.
    private func describe(_ name: String) throws -> LayerInfo? {
        if PostGISURL.isDatabase(store.db) { return try StoreLocation.source(store.db).layerInfos().first { $0.name == name } }
        let file = try GeoPackage(path: store.db)
        return try file.hasLayer(name) ? file.layer(name, countingRows: false) : nil
    }

    /// Into a layer that exists: the file as one write batch, through the store's writer (on a
    /// GeoPackage refused while a server writes it: its snapshot would not see the batch; on
    /// PostgreSQL numbered in the feed, which the servers on the database follow).
    private func appendFile(to target: (source: any SnapshotSource, layer: LayerInfo)) throws {
        do {
            let mode: AppendMode = upsert ? .upsert(keys: (key ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }) : .append
            let options = ImportOptions(
                layer: layer, format: format, crs: crs, strict: strict, only: only,
                lonColumn: lon, latColumn: lat, keyColumn: upsert ? nil : key, sourceLayer: sourceLayer, force: force)
            let source = target.source
            let appendTarget = AppendTarget(layer: target.layer) { link in
                guard let stations = try describe(link.keyLayer) else {
                    throw CLIError("the stations' layer '\(link.keyLayer)' of '\(target.layer.name)' is not in the store")
                }
                var keys: Set<String> = []
                try source.forEachFeature(of: link.keyLayer, pageSize: 10_000) { stored in
                    if let key = stored.feature.properties[link.layerKeyColumn]?.stringValue { keys.insert(key) }
                }
                return (stations, keys)
            }
            let plan = try Importer.appendBatch(file, to: appendTarget, options: options, mode: mode, formats: ImportCommand.formats)
            for warning in plan.warnings { printError("warning: \(warning)") }
            guard !plan.batch.operations.isEmpty else {
                print("nothing to add: \(file) has no \(plan.isTimeSeries ? "rows" : "features")")
                return
            }
            let applied = try source.openWriter().apply(plan.batch)
            for warning in applied.warnings { printError("warning: \(warning)") }
            let counts = Dictionary(grouping: applied.changes, by: \.kind).mapValues(\.count)
            let what = plan.isTimeSeries ? "rows" : "features"
            let added = counts[.inserted, default: 0], replaced = counts[.replaced, default: 0]
            let first = applied.changes.first?.sequence ?? applied.sequence
            print("\(plan.isTimeSeries ? "appended" : upsert ? "upserted" : "appended") \(applied.changes.count) \(what) to layer '\(layer)': \(added) added, \(replaced) replaced"
                  + " (changes \(first)–\(applied.sequence) of the feed)")
        } catch {
            throw CLIError(error)
        }
    }

    /// `--units COLUMN=UNIT,…`, only with --time-series-of.
    func parsedUnits() throws -> [String: String] {
        guard let units else { return [:] }
        guard timeSeriesOf != nil else { throw CLIError("--units: units belong to observations; give --time-series-of LAYER") }
        var parsed: [String: String] = [:]
        for item in units.split(separator: ",") {
            let parts = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw CLIError("--units: '\(item)' is not COLUMN=UNIT, e.g. no2=µg/m³")
            }
            guard parsed.updateValue(parts[1], forKey: parts[0]) == nil else { throw CLIError("--units: '\(parts[0])' is given twice") }
        }
        return parsed
    }

    /// Into a PostGIS store: the file is imported into a scratch GeoPackage by the same
    /// importers, and that one layer pushed (replacing a layer of its name only with --replace).
    private func importIntoDatabase() throws {
        guard !TileArchives.isTileSet(file) else { throw CLIError("tile sets stay in files: register them in a GeoPackage store, not in \(PostGISURL.redacted(store.db))") }
        guard timeSeriesOf == nil else { throw CLIError("--time-series-of is not supported on a PostGIS store yet: import into a GeoPackage and vltava push it") }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("vltava-import-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        do {
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            let database = try PostGISDatabase(store.db)
            if !replace, (try? StoreLocation.source(store.db).layerInfos())?.contains(where: { $0.name == layer }) == true {
                throw CLIError("layer '\(layer)' already exists in \(database.location) (use --replace)")
            }
            let options = ImportOptions(layer: layer, format: format, crs: crs, strict: strict, replace: false, only: only,
                                        lonColumn: lon, latColumn: lat, keyColumn: key, sourceLayer: sourceLayer, force: force)
            let path = scratch.appendingPathComponent("import.gpkg").path
            let report = try Importer.importFile(file, intoStoreAt: path, options: options, formats: ImportCommand.formats)
            for warning in report.warnings { printError("warning: \(warning)") }
            try PostGISStore.push(geoPackage: path, to: database)
            print("imported \(report.featureCount) \(report.kind == .features ? "features" : "rows") into layer '\(report.layer)' of \(database.location)")
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError(error, message: PostGISURL.redacted("\(error)"))
        }
    }

    private func importFile() throws {
        do {
            // A new store is built beside its path and moved into place when complete, so a
            // failed import leaves no file behind (GeoPackage.write(at:_:)).
            if TileArchives.isTileSet(file) {
                // A PMTiles archive is read (header, directories, metadata) before it is
                // registered: the store itself looks only at its first bytes.
                let archive = TileArchives.isPMTiles(file) ? try TileArchives.open(file) : nil
                try GeoPackage.write(at: store.db) { geoPackage in try geoPackage.registerTileSet(name: layer, path: file, replace: replace) }
                // Registered all the same: unusable metadata is set aside wherever the set is read.
                let warnings = (archive ?? (try? TileArchives.open(file)))?.warnings ?? []
                for warning in warnings { printError("warning: \(warning)") }
                print("registered tile set '\(layer)' (\(file); the tiles stay in that file)"
                      + (warnings.isEmpty ? "" : ", \(warnings.count) warning(s)"))
                return
            }
            let options = ImportOptions(
                layer: layer, format: format, crs: crs, strict: strict, replace: replace, only: only,
                lonColumn: lon, latColumn: lat, timeSeriesOf: timeSeriesOf, keyColumn: key,
                units: try parsedUnits(), sourceLayer: sourceLayer, force: force)
            let report = try Importer.importFile(file, intoStoreAt: store.db, options: options, formats: ImportCommand.formats)
            for warning in report.warnings { printError("warning: \(warning)") }
            let what = report.kind == .features ? "\(report.geometryType ?? "GEOMETRY") features" : "rows"
            let from = report.sourceCRS.map { $0 == "EPSG:4326" ? "" : ", reprojected from \($0) to EPSG:4326" } ?? ""
            print("imported \(report.featureCount) \(what) into layer '\(report.layer)' (\(report.format.name)\(from))"
                  + (report.warnings.isEmpty ? "" : ", \(report.warnings.count) warning(s)"))
            // On request, the large polygon layers' snapshot file, so that the first query or
            // server start maps them (Engine/SnapshotFile.swift). Not by default: building it
            // holds the polygon index whole (520 MB at 1M polygons), and the import's memory
            // stays bounded (about 100 MB) without it.
            if snapshotFile {
                do {
                    for warning in try Snapshot.prepareFile(storePath: store.db) { printError("warning: \(warning)") }
                } catch {
                    printError("warning: the snapshot file was not built (the first load builds it): \(error)")
                }
            }
        } catch {
            throw CLIError(error)
        }
    }
}

extension ImportCommand {
    /// Every format the CLI reads: the store's own, Zoo Praha's, and OSM extracts.
    static let formats = ImportFormat.builtIn + ZooPraha.formats + [.osm]
}

extension ImportFormat: ExpressibleByArgument {
    public init?(argument: String) {
        guard let format = ImportCommand.formats.first(where: { $0.name == argument }) else { return nil }
        self = format
    }

    public static var allValueStrings: [String] { ImportCommand.formats.map(\.name) }
}
extension GeometryFamily: ExpressibleByArgument {}
