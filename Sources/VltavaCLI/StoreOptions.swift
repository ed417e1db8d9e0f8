import ArgumentParser
import Engine
import Foundation

/// `--db`, shared by every command that reads or writes the store.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The store: a GeoPackage file, or a PostGIS database as postgresql://user[:password]@host[:port]/db (filled by vltava push; without a password in it, PGPASSWORD or ~/.pgpass as for psql).", valueName: "file|url"))
    var db: String = StoreOptions.defaultPath

    @Option(name: .long, help: ArgumentHelp("On a PostGIS store: a feature layer with more rows than this stays in PostgreSQL, and each answer fetches the rows it needs (lines and stations always load).", valueName: "rows"))
    var maxRowsLoaded: Int = EngineLimits().maxRowsLoadedPerLayer

    /// The engine's limits, with this store's.
    var limits: EngineLimits {
        var limits = EngineLimits()
        limits.maxRowsLoadedPerLayer = max(0, maxRowsLoaded)
        return limits
    }

    /// `$VLTAVA_DB`, or `vltava.gpkg` in the current directory.
    static var defaultPath: String {
        ProcessInfo.processInfo.environment["VLTAVA_DB"] ?? "vltava.gpkg"
    }
}

/// Prints a message to standard error and exits with status 1: the CLI's way to report a
/// user error without a stack trace.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
