import ArgumentParser
import Foundation
import Engine
import Geometry
import Support
import VectorTiles

struct TilesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tiles",
        abstract: "Read MBTiles and PMTiles tile sets: metadata, one tile's features, the features at a point; write PMTiles archives.",
        subcommands: [Info.self, Get.self, At.self, Export.self]
    )

    struct Info: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Metadata, tile count per zoom, the encoding found in the tiles, and TileJSON.")
        @Argument(help: "The .mbtiles or .pmtiles file.") var file: String

        func run() throws {
            do {
                let set = try TileArchives.open(file)
                for warning in set.warnings { printError("warning: \(warning)") }
                let addresses = try set.tileAddresses()
                var perZoom: [Int: Int] = [:]
                for a in addresses { perZoom[a.z, default: 0] += 1 }
                print("\(set.name): \(addresses.count) tiles")
                print(Table(header: ["zoom", "tiles"], rows: perZoom.keys.sorted().map { [String($0), String(perZoom[$0] ?? 0)] }, rightAligned: [0, 1]).rendered)
                if let first = addresses.first, let stored = try set.tile(z: first.z, x: first.x, y: first.y) {
                    let encoding = TileEncoding.detect(stored)
                    let claimed = set.metadata["format"].map { " (metadata says '\($0)')" } ?? ""
                    print("encoding: \(encoding.format.rawValue), compression \(encoding.compression.rawValue)\(claimed)")
                }
                print(Table(header: ["metadata", "value"], rows: set.metadata.keys.sorted().filter { $0 != "json" }.map { [$0, set.metadata[$0] ?? ""] }).rendered)
                print(JSON.serialize(set.tileJSON(tilesURL: "{z}/{x}/{y}"), pretty: true))
            } catch {
                throw CLIError(error)
            }
        }
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One tile (z/x/y, XYZ) as GeoJSON in lon/lat, or its raw stored bytes.")
        enum Format: String, ExpressibleByArgument { case geojson, raw }
        @Argument(help: "The .mbtiles or .pmtiles file.") var file: String
        @Argument(help: "The tile, z/x/y.") var tile: String
        @Option(help: "Only this layer.") var layer: String?
        @Option(help: "geojson or raw.") var format: Format = .geojson

        func run() throws {
            let parts = tile.split(separator: "/").compactMap { Int($0) }
            guard parts.count == 3 else { throw CLIError("expected the tile as z/x/y, e.g. 16/35390/22193; got '\(tile)'") }
            do {
                let set = try TileArchives.open(file)
                guard let stored = try set.tile(z: parts[0], x: parts[1], y: parts[2]) else {
                    throw CLIError("\(set.name) has no tile \(tile)")
                }
                if format == .raw {
                    FileHandle.standardOutput.write(Data(stored))
                    return
                }
                let features = try TileDecoder.features(of: stored, z: parts[0], x: parts[1], y: parts[2], layer: layer)
                // The server's `.json` tile form, through the Engine's one output path.
                var w = JSONWriter(reservingCapacity: 4096)
                Output.tileCollection(&w, features)
                print(String(decoding: w.bytes, as: UTF8.self))
            } catch let error as CLIError {
                throw error
            } catch {
                throw CLIError(error)
            }
        }
    }

    struct At: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The features at a point: polygons containing it, points and lines within 8 pixels.")
        @Argument(help: "The .mbtiles or .pmtiles file.") var file: String
        // Every input no option claims, so a point west of Greenwich (-75.9,38.8), which the
        // parser would otherwise read as the short options -7, -5, …, still arrives here.
        @Argument(parsing: .allUnrecognized, help: "The point as LON,LAT (longitude first; a negative longitude as is: -75.9,38.8).")
        var point: [String] = []
        @Option(help: "The zoom level.") var zoom: Int
        @Option(help: "Only this layer.") var layer: String?

        func run() throws {
            guard point.count == 1, let text = point.first else {
                throw CLIError(point.isEmpty ? "expected a point as LON,LAT after the file, e.g. 14.4057,50.1160"
                                             : "expected one point as LON,LAT after the file; got \(point.joined(separator: " "))")
            }
            let (lon, lat) = try parsePoint(text)
            do {
                let set = try TileArchives.open(file)
                let features = try set.features(atLon: lon, lat: lat, zoom: zoom, layer: layer)
                let rows = features.map { item -> [String] in
                    let name = item.feature.properties["name"]?.stringValue ?? ""
                    let kind = item.feature.properties["kind"]?.stringValue ?? ""
                    return [item.layer, item.feature.geometry?.typeName ?? "", name, kind]
                }
                print(Table(header: ["layer", "geometry", "name", "kind"], rows: rows).rendered)
            } catch {
                throw CLIError(error)
            }
        }
    }
}

/// "LON,LAT" with a clear error for the classic swap.
func parsePoint(_ text: String) throws -> (Double, Double) {
    let parts = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
    guard parts.count == 2, let lon = parts[0], let lat = parts[1] else {
        throw CLIError("expected a point as LON,LAT, e.g. 14.4057,50.1160; got '\(text)'")
    }
    do {
        _ = try Point.checked(lon: lon, lat: lat)
    } catch {
        throw CLIError(error.description + (error.looksSwapped ? " Write LON,LAT." : ""))
    }
    return (lon, lat)
}
