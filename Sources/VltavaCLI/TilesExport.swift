// `vltava tiles export`: a PMTiles archive from a tile set file (MBTiles or PMTiles), or from
// the store's layers cut into vector tiles by the same path `/v1/tiles/LAYER/z/x/y` serves
// (`Snapshot.vectorTile`). Tiles are handed to the writer one at a time in tile id order, so
// it writes them in one pass; its memory is the directory (PMTilesWriter.swift says how much).

import ArgumentParser
import Engine
import Foundation
import Geometry
import Support
import VectorTiles
import Vltava

extension TilesCommand {
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a PMTiles archive from a tile set file, or from store layers cut into vector tiles.",
            discussion: """
                From a tile set (.mbtiles or .pmtiles): every tile as stored (zlib tiles gzipped,
                as PMTiles has no zlib), with its metadata, zooms, bounds and center.
                  vltava tiles export world_cities.mbtiles --pmtiles world_cities.pmtiles
                From the store's layers: every tile of zooms --min-zoom…--max-zoom over the
                layers' extent, each as /v1/tiles/LAYER/z/x/y serves it (one MVT layer per store
                layer), gzipped; empty tiles are left out.
                  vltava tiles export --layer districts --layer parking_zones --pmtiles prague.pmtiles
                The archive is written beside OUT and moved into place when complete. Memory: the
                tiles go to a scratch file as they are made; the directory stays in memory, about
                60 bytes a tile (60 MB for a million tiles), with, from a tile set file, the list of
                its addresses (about 120 bytes a tile while it is read), and for layers the store's
                snapshot.
                """
        )

        @Argument(help: "A .mbtiles or .pmtiles file to export (or give --layer).") var file: String?
        @Option(help: ArgumentHelp("The PMTiles archive to write.", valueName: "OUT.pmtiles")) var pmtiles: String
        @Option(name: .customLong("layer"), help: "A store layer to cut into vector tiles; repeat for several.") var layers: [String] = []
        @Option(help: "Layers: the lowest zoom.") var minZoom: Int = 0
        @Option(help: "Layers: the highest zoom (map clients zoom its tiles further).") var maxZoom: Int = 14
        @Option(help: "Layers: the archive's name in its metadata (default: the output file's name).") var name: String?
        @OptionGroup var store: StoreOptions

        /// Tiles of one zoom an export of layers takes at most (the whole world at z11 is 4.2 M).
        static let maxTilesPerZoom = 5_000_000

        func validate() throws {
            guard (file == nil) != layers.isEmpty else {
                throw ValidationError("give a tile set file or --layer NAME (one or the other) to export")
            }
            guard pmtiles.lowercased().hasSuffix(".pmtiles") else {
                throw ValidationError("--pmtiles \(pmtiles): the archive's name must end in .pmtiles, by which it is opened as one")
            }
            guard (0...30).contains(minZoom), (0...30).contains(maxZoom), minZoom <= maxZoom else {
                throw ValidationError("--min-zoom and --max-zoom are zooms of 0…30, the min not above the max; got \(minZoom) and \(maxZoom)")
            }
        }

        func run() throws {
            let start = DispatchTime.now()
            do {
                let summary = try file.map(exportTileSet) ?? exportLayers()
                let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
                print("wrote \(pmtiles): \(summary.addressedTiles) tiles (\(summary.tileEntries) directory entries, \(summary.tileContents) distinct), "
                      + "\(summary.leafDirectories) leaf directories, \(summary.fileBytes) bytes, in \(String(format: "%.2f", seconds)) s")
            } catch let error as CLIError {
                throw error
            } catch {
                throw CLIError(error)
            }
        }

        /// Every tile of a tile set file, as stored; metadata, bounds and center carried over.
        func exportTileSet(_ path: String) throws -> PMTilesWriter.Summary {
            let set = try TileArchives.open(path)
            for warning in set.warnings { printError("warning: \(warning)") }
            // Tile ids alone (8 bytes a tile), sorted in place; each turned back into its address
            // when its tile is read.
            var ids = try set.tileAddresses().compactMap { PMTilesTileID.id(z: $0.z, x: $0.x, y: $0.y) }
            ids.sort()
            let ordered = ids.lazy.compactMap(PMTilesTileID.address)
            // The first tile decides the archive's tile compression (PMTiles declares one):
            // gzip or none as stored; another tile that differs is made the same.
            var found: [UInt8]?
            for a in ordered where found == nil {
                if let bytes = try set.tile(z: a.z, x: a.x, y: a.y), !bytes.isEmpty { found = bytes }
            }
            guard let first = found else { throw CLIError("\(set.name) has no tiles to export") }
            let encoding = TileEncoding.detect(first)
            let compression: PMTilesCompression = encoding.compression == .none ? .none : .gzip
            let writer = try PMTilesWriter(path: pmtiles, tileType: PMTilesTileType(encoding.format), tileCompression: compression)
            for a in ordered {
                guard var bytes = try set.tile(z: a.z, x: a.x, y: a.y), !bytes.isEmpty else { continue }
                let stored = TileEncoding.detect(bytes).compression
                if stored != .none && (compression == .none || stored == .zlib) { bytes = try Decompression.inflate(bytes) }
                if compression == .gzip && (stored == .none || stored == .zlib) { bytes = try gzipped(bytes) }
                try writer.add(z: a.z, x: a.x, y: a.y, bytes: bytes)
            }
            var metadata = JSONObject()
            for key in set.metadata.keys.sorted() where !["json", "bounds", "center", "minzoom", "maxzoom"].contains(key) {
                metadata[key] = .string(set.metadata[key] ?? "")
            }
            if metadata["name"] == nil { metadata["name"] = .string(set.name) }
            if !set.contents.vectorLayers.isEmpty { metadata["vector_layers"] = .array(set.contents.vectorLayers) }
            return try writer.finish(metadata: metadata, bounds: set.bounds, center: set.center)
        }

        /// The layers' tiles of every zoom asked for, over their extent.
        func exportLayers() throws -> PMTilesWriter.Summary {
            let snapshot = try StoreLocation.snapshot(store.db, limits: store.limits)
            var chosen: [Layer] = []
            for name in layers {
                guard case .layer(let layer) = try snapshot.tileSource(name) else {
                    throw CLIError("'\(name)' is a tile set, not a layer: export it from its file (vltava tiles export FILE --pmtiles OUT)")
                }
                chosen.append(layer)
            }
            let extents = chosen.map(\.bounds).filter { !$0.isEmpty && $0.isFinite }
            guard let first = extents.first else { throw CLIError("nothing to export: \(layers.joined(separator: ", ")) \(layers.count == 1 ? "has" : "have") no features") }
            var extent = first
            for box in extents.dropFirst() { extent.extend(box) }
            let writer = try PMTilesWriter(path: pmtiles, tileType: .mvt, tileCompression: .gzip)
            for z in minZoom...maxZoom {
                let all = TilesCommand.Export.tiles(of: extent, zoom: z)
                let count = (all.x.count) * (all.y.count)
                guard count <= Export.maxTilesPerZoom else {
                    throw CLIError("zoom \(z) covers \(count) tiles over the layers' extent, more than \(Export.maxTilesPerZoom): lower --max-zoom")
                }
                var ordered: [(id: UInt64, x: Int, y: Int)] = []
                ordered.reserveCapacity(count)
                for x in all.x { for y in all.y { if let id = PMTilesTileID.id(z: z, x: x, y: y) { ordered.append((id, x, y)) } } }
                ordered.sort { $0.id < $1.id }
                for tile in ordered {
                    // One MVT layer per store layer: MVT tiles are sequences of layers, so the
                    // layers' own tiles one after another are the tile with all of them.
                    var bytes: [UInt8] = []
                    for layer in chosen { bytes += try snapshot.vectorTile(layer, z: z, x: tile.x, y: tile.y) }
                    guard !bytes.isEmpty else { continue }
                    try writer.add(z: z, x: tile.x, y: tile.y, bytes: try gzipped(bytes))
                }
            }
            var vectorLayers: [JSONValue] = []
            for layer in chosen {
                guard case .object(let document) = snapshot.tileJSON(TileSource.layer(layer), tilesURL: ""), case .array(let described)? = document["vector_layers"],
                      case .object(var described)? = described.first else { continue }
                described["minzoom"] = .integer(Int64(minZoom))
                described["maxzoom"] = .integer(Int64(maxZoom))
                vectorLayers.append(.object(described))
            }
            let title = name ?? ((pmtiles as NSString).lastPathComponent as NSString).deletingPathExtension
            let metadata = JSONObject([("name", .string(title)), ("format", .string("pbf")), ("type", .string("overlay")),
                                       ("description", .string("Layers \(layers.joined(separator: ", ")) of a Vltava store")),
                                       ("generator", .string("vltava tiles export")), ("vector_layers", .array(vectorLayers))])
            let bounds = [extent.minLon, max(extent.minLat, -85.051128779806604), extent.maxLon, min(extent.maxLat, 85.051128779806604)]
            return try writer.finish(metadata: metadata, bounds: bounds,
                                     center: TileCenter(lon: (bounds[0] + bounds[2]) / 2, lat: (bounds[1] + bounds[3]) / 2, zoom: minZoom))
        }

        /// The columns and rows of the tiles of a zoom that meet a box, and one more around
        /// them: a tile's buffer (64 of its 4,096 units) reaches features just past its edge,
        /// so the tiles beside the box can hold parts of them, as /v1/tiles serves them.
        static func tiles(of box: BBox, zoom: Int) -> (x: ClosedRange<Int>, y: ClosedRange<Int>) {
            let northWest = TileMath.tile(lon: box.minLon, lat: box.maxLat, zoom: zoom)
            let southEast = TileMath.tile(lon: box.maxLon, lat: box.minLat, zoom: zoom)
            let last = (1 << zoom) - 1
            return (max(0, northWest.x - 1)...min(last, max(northWest.x, southEast.x) + 1),
                    max(0, northWest.y - 1)...min(last, max(northWest.y, southEast.y) + 1))
        }

        func gzipped(_ bytes: [UInt8]) throws -> [UInt8] {
            guard let out = TileCompressor.gzip(bytes) else { throw CLIError("cannot gzip a tile (out of memory?)", category: .internal) }
            return out
        }
    }
}
