import ArgumentParser
import Foundation
import Geometry
import Support
import Vltava
import Store

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a layer as a GeoJSON FeatureCollection (EPSG:4326, RFC 7946) to standard output."
    )

    @Argument(help: "The layer.") var layer: String
    @Flag(help: "Indent the JSON.") var pretty = false
    @OptionGroup var store: StoreOptions

    func run() throws {
        do {
            if pretty {
                let features = try StoreLocation.source(store.db).features(of: layer).map(\.feature)
                print(JSON.serialize(GeoJSON.featureCollection(features), pretty: true))
                return
            }
            // Streamed, a feature at a time, in pages of output: the bytes JSON.serialize writes
            // for the whole collection, never the whole collection in memory.
            var out = Data("{\"type\":\"FeatureCollection\",\"features\":[".utf8)
            var first = true
            try StoreLocation.source(store.db).forEachFeature(of: layer) { stored in
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                out.append(contentsOf: JSONWriter.encode(GeoJSON.encode(stored.feature), pretty: false))
                if out.count >= 1 << 20 {
                    FileHandle.standardOutput.write(out)
                    out.removeAll(keepingCapacity: true)
                }
            }
            out.append(contentsOf: Array("]}\n".utf8))
            FileHandle.standardOutput.write(out)
        } catch {
            throw CLIError(error)
        }
    }
}
