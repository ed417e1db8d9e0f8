import ArgumentParser
import Foundation

@main
struct Vltava: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vltava",
        abstract: "A geospatial query engine: point lookups, nearest features, walking routes and MBTiles.",
        subcommands: [ImportCommand.self, IndoorCommand.self, LayersCommand.self, DescribeCommand.self, ExportCommand.self, PushCommand.self, DropCommand.self, RenameCommand.self, QueryCommand.self, ReplCommand.self, RouteCommand.self, ServeCommand.self, TilesCommand.self]
    )

    /// ArgumentParser's own entry, except that a `CLIError` exits with its category's status
    /// (`ExitStatus`) rather than always 1.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let error as CLIError {
            printError("Error: \(error)")
            exit(withError: ExitCode(ExitStatus.code(for: error.category)))
        } catch {
            exit(withError: error)
        }
    }
}
