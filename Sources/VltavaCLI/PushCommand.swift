import ArgumentParser
import Engine
import Foundation
import PostGIS

struct PushCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Copy every layer and time series of a GeoPackage store into a PostGIS database, in one transaction.",
        discussion: """
            The database then serves as a store: vltava query/serve/repl/layers/describe/export --db postgresql://…
            A layer already in the database is replaced; on any error nothing changes. Indoor venues and tile sets stay in files.
            """
    )

    @Argument(help: "The GeoPackage store to copy.") var geoPackage: String
    @Argument(help: "The database: postgresql://user[:password]@host[:port]/db (PostGIS installed or installable; without a password in it, PGPASSWORD or ~/.pgpass as for psql).") var url: String

    func run() throws {
        do {
            let database = try PostGISDatabase(url)
            let summary = try PostGISStore.push(geoPackage: geoPackage, to: database)
            for (name, rows) in summary.layers { print("pushed \(rows) rows into \(name)") }
            print("pushed \(summary.layers.count) layers to \(database.location) in \(String(format: "%.2f", summary.seconds)) s")
        } catch {
            throw CLIError(error, message: PostGISURL.redacted("\(error)"))
        }
    }
}
