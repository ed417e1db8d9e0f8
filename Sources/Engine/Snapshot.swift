// The engine serves from an immutable snapshot: every layer of the store loaded into flat
// arrays, with its indexes built once, or (the large polygon layers) mapped in place from the
// store's snapshot file, built at import or at the first load (SnapshotFile.swift). Queries never lock and never touch SQLite. A reload
// builds a new snapshot and swaps it in (`Engine`); queries in flight finish on the old one.
// Whatever a rule decides about the data as a whole (which layer holds the stations, which
// network a route walks when none is named, which area `here` checks) is decided here, once.

import Foundation
import Geometry
import SpatialIndex
import Store
import VectorTiles

public final class Snapshot: Sendable {
    public let storePath: String
    /// Layers in name order.
    public let layers: [Layer]
    /// Time series by the name of their table and by the name of their point layer.
    public let timeSeriesByTable: [String: TimeSeries]
    public let timeSeriesByLayer: [String: TimeSeries]
    /// Tile sets (MBTiles files and PMTiles archives) by the name they are registered under,
    /// so the language and the server can name them like layers.
    public let tileSets: [String: any TileArchive]
    /// Registered tile sets that could not be opened at load, with why: each answers with
    /// `tileSetUnavailable` and is a load warning, while everything else serves.
    public let unavailableTileSets: [String: String]
    /// A walking network for every line layer, by layer name (lowercased).
    let networks: [String: Network]
    /// Tiles of GeoJSON and TopoJSON tile sets transcoded to MVT, kept for the snapshot's life:
    /// its tile sets do not change, and transcoding a zoo tile costs about 45 ms.
    let transcodedTiles = TranscodedTiles()
    /// When this snapshot was built (wall clock).
    public let loadedAt: Date
    /// Seconds spent loading and indexing.
    public let loadSeconds: Double
    /// The bounds every operation on this snapshot keeps to.
    public let limits: EngineLimits
    /// The air-quality stations: the first point layer, by name, that has a time series.
    public let stations: Stations?
    /// The network a route walks when it names none: the only line layer, if there is one.
    public let defaultNetwork: Network?
    /// The mapped area `here` checks when nothing names one: the polygon layer with the
    /// largest extent (the city's districts rather than a zoo pavilion).
    public let defaultArea: Layer?
    /// What was left out at load, one message each (the layer and fid, or the tile set's
    /// metadata, and why); the server logs them and reports their count.
    public let warnings: [String]
    /// The indoor venues, in name order, each with its fingerprint indexes.
    public let venues: [IndoorVenue]
    /// The box around every layer's features (nil when the store has no geometries), for the
    /// warnings a point far outside it deserves (CoordinateWarnings.swift).
    public let dataExtent: BBox?

    /// The database the store lives in, for a snapshot of a PostGIS store (Database.swift):
    /// FIND's selections run there. nil for a GeoPackage.
    public let database: (any DatabaseStore)?
    /// Polygon layers with at least this many features are mapped from the snapshot file
    /// (SnapshotFile.swift says why this line).
    public static let mappedLayerMinimumFeatures = 10_000

    let layersByName: [String: Layer]
    let venuesByName: [String: IndoorVenue]
    /// The load's warnings about the snapshot file and the venues, kept for the snapshots a
    /// write derives from this one.
    let venueWarnings: [String]

    /// The last request on a replaced snapshot has finished: its arrays are freed now, and
    /// their pages go back to the system (see `Memory`).
    deinit { Memory.returnFreedPages() }

    /// Loads every layer of the store at `path` (opened read-only) and builds its indexes, and
    /// opens the tile sets registered in the store plus `tileSets` (`name → .mbtiles path`).
    /// Polygon layers of at least `mappedLayerMinimumFeatures` features are mapped from the
    /// store's snapshot file, which is (re)built here when it is missing, stale or damaged.
    public static func load(storePath path: String, tileSets tileSetPaths: [String: String] = [:],
                            limits: EngineLimits = EngineLimits(),
                            mappedLayerMinimumFeatures: Int = Snapshot.mappedLayerMinimumFeatures) throws(EngineError) -> Snapshot {
        let start = DispatchTime.now()
        do {
            let store = try GeoPackage(path: path, mode: .readOnly)
            // Taken before anything is read: a write from now on makes the file stale.
            let identity = SnapshotFile.identity(ofStore: path)
            let filePath = SnapshotFile.path(forStore: path)
            var mapped: [String: MappedLayer] = [:]
            var fileWarnings: [String] = []
            // Rows are counted per layer below, not here: a count reads the whole table, and a
            // mapped layer's is in the snapshot file (a cold query on 2M polygons spent two
            // thirds of its 0.3 s counting them).
            var infos = try store.layers(countingRows: false)
            if let identity {
                do {
                    mapped = try SnapshotFile.read(filePath, identity: identity)
                } catch {
                    // No usable file: build one for the large polygon layers, streaming them
                    // from the store, and map them from it, so that this snapshot too holds them
                    // in shared, file-backed pages and no load ever reads them whole.
                    for i in infos.indices where infos[i].kind == .features && infos[i].timeSeries == nil {
                        infos[i].featureCount = try store.rowCount(of: infos[i].name)
                    }
                    let candidates = infos.filter { SnapshotFile.isCandidate($0, minimumFeatures: mappedLayerMinimumFeatures) }
                    if !candidates.isEmpty {
                        if case .rejected(let reason) = error {
                            fileWarnings.append("snapshot file \(filePath) was refused and is rebuilt: \(reason)")
                        }
                        do {
                            try SnapshotFile.build(from: store, layers: candidates, identity: identity,
                                                   minimumFeatures: mappedLayerMinimumFeatures, to: filePath)
                            mapped = try SnapshotFile.read(filePath, identity: identity)
                            Memory.returnFreedPages()
                        } catch {
                            fileWarnings.append("snapshot file \(filePath) could not be written (the layers stay in memory): \(error)")
                        }
                    }
                }
            }
            var layers: [Layer] = []
            for var info in infos {
                if let layer = mapped[info.name] {
                    // Its warnings name the rows left out, one each.
                    info.featureCount = layer.count + layer.warnings.count
                    layers.append(Layer(info: info, mapped: layer))
                    continue
                }
                // A feature that cannot be read is left out with a warning, not a failed load.
                let read = try store.readFeatures(of: info.name)
                info.featureCount = read.features.count + read.problems.count
                layers.append(try Layer(info: info, features: read.features, skipped: read.problems))
            }
            let (byTable, byLayer) = timeSeries(of: layers)
            var tileSets: [String: any TileArchive] = [:]
            var unavailable: [String: String] = [:]
            var files = tileSetPaths
            for entry in try store.tileSets() where files[entry.name] == nil { files[entry.name] = entry.path }
            for (name, file) in files {
                do {
                    tileSets[name] = try TileArchives.open(file)
                } catch {
                    unavailable[name] = "\(error)"
                }
            }
            let indoor = loadVenues(store)
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
            return try Snapshot(storePath: path, layers: layers, timeSeriesByTable: byTable, timeSeriesByLayer: byLayer,
                                tileSets: tileSets, unavailableTileSets: unavailable, loadSeconds: seconds, limits: limits,
                                venues: indoor.venues, venueWarnings: fileWarnings + indoor.warnings)
        } catch let error as EngineError {
            throw error
        } catch {
            throw .store("\(error)")
        }
    }

    /// The time series among `layers`, by table and by point layer.
    static func timeSeries(of layers: [Layer]) -> (byTable: [String: TimeSeries], byLayer: [String: TimeSeries]) {
        var byTable: [String: TimeSeries] = [:]
        var byLayer: [String: TimeSeries] = [:]
        for layer in layers {
            guard let link = layer.info.timeSeries else { continue }
            let series = TimeSeries(table: layer.name, link: link, info: layer.info, rows: layer.indices.map { layer.properties[$0] })
            byTable[layer.name] = series
            byLayer[link.keyLayer] = series
        }
        return (byTable, byLayer)
    }

    /// A snapshot of layers read from a database (the PostGIS store): the same layers and
    /// indexes as from a GeoPackage, plus the `database` its FINDs run in. Time-series tables
    /// come without rows (their `info.featureCount` says how many the database holds): their
    /// series are read per answer (SeriesFetch.swift), so the snapshot keeps only their metadata.
    /// So do the layers `kept` names, with their family: feature layers too large to load, whose
    /// answers fetch their rows (DatabaseLayers.swift; `info.bbox` is their extent).
    public static func build(location: String, layers input: [(info: LayerInfo, features: [StoredFeature])], database: any DatabaseStore,
                             kept: [String: Layer.Family] = [:], tileSets tileSetPaths: [String: String] = [:],
                             limits: EngineLimits = EngineLimits(), loadSeconds: Double) throws(EngineError) -> Snapshot {
        var layers: [Layer] = []
        for (info, features) in input {
            let inDatabase = info.timeSeries != nil || kept[info.name] != nil
            layers.append(try Layer(info: info, features: inDatabase ? [] : features, rowsInDatabase: inDatabase, family: kept[info.name]))
        }
        layers.sort { $0.name < $1.name }
        let (byTable, byLayer) = timeSeries(of: layers)
        var tileSets: [String: any TileArchive] = [:]
        var unavailable: [String: String] = [:]
        for (name, file) in tileSetPaths {
            do { tileSets[name] = try TileArchives.open(file) } catch { unavailable[name] = "\(error)" }
        }
        return try Snapshot(storePath: location, layers: layers, timeSeriesByTable: byTable, timeSeriesByLayer: byLayer, tileSets: tileSets,
                            unavailableTileSets: unavailable, loadSeconds: loadSeconds, limits: limits, database: database)
    }

    /// Builds the store's snapshot file now (after an import), so the next load maps its large
    /// polygon layers rather than reading them; returns the load's warnings about the file.
    @discardableResult
    public static func prepareFile(storePath: String) throws(EngineError) -> [String] {
        try load(storePath: storePath).warnings.filter { $0.hasPrefix("snapshot file ") }
    }

    init(storePath: String, layers: [Layer], timeSeriesByTable: [String: TimeSeries], timeSeriesByLayer: [String: TimeSeries],
         tileSets: [String: any TileArchive], unavailableTileSets: [String: String] = [:], loadSeconds: Double, limits: EngineLimits,
         venues: [IndoorVenue] = [], venueWarnings: [String] = [], database: (any DatabaseStore)? = nil,
         networks kept: [String: Network] = [:]) throws(EngineError) {
        self.database = database
        self.venueWarnings = venueWarnings
        self.tileSets = tileSets
        self.unavailableTileSets = unavailableTileSets
        self.venues = venues
        venuesByName = Dictionary(venues.map { ($0.name.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        self.storePath = storePath
        self.layers = layers
        self.timeSeriesByTable = timeSeriesByTable
        self.timeSeriesByLayer = timeSeriesByLayer
        self.loadSeconds = loadSeconds
        loadedAt = Date()
        warnings = layers.flatMap(\.warnings) + tileSets.keys.sorted().flatMap { name in
            (tileSets[name]?.warnings ?? []).map { "tile set '\(name)': \($0)" }
        } + unavailableTileSets.keys.sorted().map { name in
            "tile set '\(name)' is unavailable (everything else serves): \(unavailableTileSets[name] ?? "")"
        } + venueWarnings
        var byName: [String: Layer] = [:]
        var networks: [String: Network] = [:]
        for layer in layers {
            byName[layer.name.lowercased()] = layer
            if let network = kept[layer.name.lowercased()] {
                networks[layer.name.lowercased()] = network
            } else if let network = try Network.build(from: layer) {
                networks[layer.name.lowercased()] = network
            }
        }
        layersByName = byName
        self.networks = networks
        self.limits = limits
        stations = timeSeriesByLayer.keys.sorted().lazy.compactMap { name -> Stations? in
            guard let layer = byName[name.lowercased()], layer.family == .points, let series = timeSeriesByLayer[name] else { return nil }
            return Stations(layer: layer, series: series)
        }.first
        let lineLayers = layers.filter { networks[$0.name.lowercased()] != nil }
        defaultNetwork = lineLayers.count == 1 ? lineLayers.first.flatMap { networks[$0.name.lowercased()] } : nil
        func extent(_ layer: Layer) -> Double {
            layer.bounds.isEmpty ? 0 : (layer.bounds.maxLon - layer.bounds.minLon) * (layer.bounds.maxLat - layer.bounds.minLat)
        }
        defaultArea = layers.filter { $0.family == .polygons }.max { (extent($0), $1.name) < (extent($1), $0.name) }
        dataExtent = Snapshot.extent(of: layers)
    }

    /// The line layers, each a walking network.
    public var networkNames: [String] { layers.filter { networks[$0.name.lowercased()] != nil }.map(\.name) }

    public var layerNames: [String] { layers.map(\.name) }

    /// The tile set of that name, or an error suggesting the closest name.
    public func tileSet(_ name: String) throws(EngineError) -> any TileArchive {
        if let reason = unavailableTileSets[name] { throw .tileSetUnavailable(name, reason: reason) }
        guard let set = tileSets[name] else { throw .unknownTileSet(name, known: tileSets.keys.sorted()) }
        return set
    }

    /// The walking network of a line layer (case-insensitive name); with no name, the default
    /// network, or an error listing the choices.
    public func network(_ name: String?) throws(EngineError) -> Network {
        guard let name else {
            if let defaultNetwork { return defaultNetwork }
            throw .invalidArgument(parameter: "network", message: "name a line layer to walk along (line layers: \(networkNames.joined(separator: ", ")))")
        }
        let layer = try layer(name)
        guard let network = networks[layer.name.lowercased()] else {
            throw .unsupportedGeometry(layer: layer.name, operation: "ROUTE", needs: "lines", has: layer.family.rawValue)
        }
        return network
    }

    /// The layer of that name (case-insensitive), or an error suggesting the closest name.
    public func layer(_ name: String) throws(EngineError) -> Layer {
        guard let layer = layersByName[name.lowercased()] else { throw .unknownLayer(name, known: layerNames) }
        return layer
    }
}

/// The point layer whose features are air-quality stations, with their time series.
public struct Stations: Sendable {
    public let layer: Layer
    public let series: TimeSeries

    /// The station code of feature `index` (the key of its observations).
    public func key(_ index: Int) -> String? {
        layer.properties[index][series.link.layerKeyColumn]?.stringValue
    }
}
