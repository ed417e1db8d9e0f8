import ArgumentParser
import PostGIS
import Store

struct DropCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drop",
        abstract: "Remove a layer or a registered tile set from the store (a tile set's .mbtiles file is left alone).",
        discussion: """
            Dropping a point layer that a time series belongs to keeps the series as a plain table.
            Example: vltava drop parking
            """
    )

    @Argument(help: "The layer or tile set.") var name: String
    @OptionGroup var store: StoreOptions

    func run() throws {
        do {
            if PostGISURL.isDatabase(store.db) {
                try PostGISStore.drop(layer: name, from: PostGISDatabase(store.db))
            } else {
                try GeoPackage(path: store.db, mode: .readWrite).drop(layerOrTileSet: name)
            }
            print("dropped '\(name)'")
        } catch {
            throw CLIError(error)
        }
    }
}

struct RenameCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rename",
        abstract: "Rename a layer or a registered tile set; a layer keeps its features, fids, spatial index and time series.",
        discussion: "Example: vltava rename parking parking_zones"
    )

    @Argument(help: "The layer or tile set.") var name: String
    @Argument(help: "Its new name (ASCII letters, digits and '_').") var newName: String
    @OptionGroup var store: StoreOptions

    func run() throws {
        do {
            if PostGISURL.isDatabase(store.db) {
                try PostGISStore.rename(layer: name, to: newName, in: PostGISDatabase(store.db))
            } else {
                try GeoPackage(path: store.db, mode: .readWrite).rename(layerOrTileSet: name, to: newName)
            }
            print("renamed '\(name)' to '\(newName)'")
        } catch {
            throw CLIError(error)
        }
    }
}
