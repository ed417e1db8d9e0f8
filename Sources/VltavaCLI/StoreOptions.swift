import ArgumentParser
import Engine
import Foundation
import Geometry
import Support

/// `--db`, shared by every command that reads or writes the store.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The store: a GeoPackage file, or a PostGIS database as postgresql://user[:password]@host[:port][,host2[:port]…]/db[?target_session_attrs=read-write] (filled by vltava push; several hosts are tried in order, as libpq does, so a failover needs no restart; without a password in it, PGPASSWORD or ~/.pgpass as for psql).", valueName: "file|url"))
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

/// A failure the CLI reports as one line on standard error, without a stack trace. It keeps its
/// category; `vltava query` exits with the category's status (`ExitStatus`), the other commands
/// with 1 (ArgumentParser's entry maps only `ExitCode`s, and the REPL needs that entry). The CLI's own checks of its arguments are
/// `.invalid`; a lower layer's error keeps its category.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    let category: ErrorCategory

    init(_ description: String, category: ErrorCategory = .invalid) {
        self.description = description
        self.category = category
    }

    /// `error` in its own words (or `message`), with its category; an error that states none
    /// is the program's (`.internal`).
    init(_ error: any Error, message: String? = nil) {
        self.description = message ?? "\(error)"
        self.category = (error as? CLIError)?.category ?? (error as? any CategorizedError)?.category ?? .internal
    }
}

/// The one table from an error's category to the CLI's exit status: 1, as ArgumentParser's own
/// errors, except 75 (sysexits.h's EX_TEMPFAIL) when what the command needs cannot be reached
/// now (a PostGIS database down), so a script knows to try again later. `.internal` stays 1:
/// on the command line it also covers files the user named (an OSM file that does not read is
/// `EngineError.store`), which are not the program's fault.
enum ExitStatus {
    static func code(for category: ErrorCategory) -> Int32 {
        switch category {
        case .syntax, .invalid, .notFound, .impossible, .limit, .internal: 1
        case .unavailable: 75
        }
    }
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// The text of a FILE argument, or of standard input for `-`.
func readFileArgument(_ file: String) throws -> String {
    if file == "-" { return String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self) }
    guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { throw CLIError("cannot read \(file)", category: .notFound) }
    return text
}
