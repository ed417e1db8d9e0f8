import ArgumentParser
import Geometry
import PostGIS
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
            let features = try StoreLocation.features(store.db, of: layer).map(\.feature)
            print(JSON.serialize(GeoJSON.featureCollection(features), pretty: pretty))
        } catch {
            throw CLIError("\(error)")
        }
    }
}
