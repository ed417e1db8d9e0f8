import ArgumentParser

@main
struct Vltava: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vltava",
        abstract: "A geospatial query engine: point lookups, nearest features, walking routes, MBTiles and PMTiles.",
        subcommands: [ImportCommand.self, IndoorCommand.self, FencesCommand.self, PositionsCommand.self, LayersCommand.self, DescribeCommand.self, ExportCommand.self, PushCommand.self, DropCommand.self, RenameCommand.self, QueryCommand.self, ReplCommand.self, RouteCommand.self, MatchCommand.self, ServeCommand.self, TilesCommand.self]
    )
}
