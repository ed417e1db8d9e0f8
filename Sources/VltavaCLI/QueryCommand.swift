import ArgumentParser
import CEditline
import Engine
import Foundation
import Geometry
import Vltava
import QueryLanguage

enum QueryFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json, geojson, csv
}

/// Loads the store as the engine serves it.
func loadSnapshot(_ store: StoreOptions) throws -> Snapshot {
    do {
        return try StoreLocation.snapshot(store.db, limits: store.limits)
    } catch {
        throw CLIError(error)
    }
}

func loadEngine(_ store: StoreOptions) throws -> Engine {
    do {
        return try StoreLocation.engine(store.db, limits: store.limits)
    } catch {
        throw CLIError(error)
    }
}

/// Writes answers in one format: tables separated by a blank line; one JSON value for one
/// statement, an array for several (as GeoJSON: one FeatureCollection of all their features).
/// Tables wider than `width` (a terminal's) show their rows as records, or always with
/// `records` (QueryResult.table).
func render(_ results: [QueryResult], as format: QueryFormat, width: Int? = nil, records: Bool = false) throws(QueryError) -> String {
    switch format {
    case .table:
        return results.map { $0.table(width: width, records: records) }.joined(separator: "\n\n")
    case .json, .geojson:
        return String(decoding: try QueryResult.write(results, geoJSON: format == .geojson, pretty: true), as: UTF8.self)
    case .csv:
        // print adds the last line's end; the CSV's own lines end in CRLF.
        return String(decoding: try QueryResult.csv(results).dropLast(2), as: UTF8.self)
    }
}

/// The answers' warnings, each on its own line on stderr ("warning: …"), so that the answer on
/// stdout stays what its format says.
func printWarnings(_ results: [QueryResult]) {
    for (n, result) in results.enumerated() {
        for warning in result.warnings { printError("warning: " + (results.count > 1 ? "statement \(n + 1): " : "") + warning) }
    }
}

/// The width of the terminal on descriptor `fd`, or nil when it is no terminal (a pipe, a file).
func terminalWidth(_ fd: Int32) -> Int? {
    let columns = Int(vl_terminal_columns(fd))
    return isatty(fd) == 1 && columns > 0 ? columns : nil
}

struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Run query-language statements on the store (docs/QUERY_LANGUAGE.md).",
        discussion: """
            Examples:
              vltava query "FIND districts CONTAINING POINT(14.4208 50.0880) RETURN NAZEV_MC"
              vltava query "FIND stations NEAREST 1 TO POINT(14.42 50.09) WHERE MEASURES(no2) RETURN code, LATEST(no2), distance_m"
              vltava query --file queries.vq --format json
            """
    )

    @Argument(help: "The statements. Separate several with ';' or start each on its own line.") var text: String?
    @Option(help: "Read the statements from a file instead.") var file: String?
    @Option(help: "table, json, geojson or csv (one statement).") var format: QueryFormat = .table
    @OptionGroup var store: StoreOptions

    func run() throws {
        let source: String
        let origin: String?
        switch (text, file) {
        case (let text?, nil):
            source = text
            origin = nil
        case (nil, let file?):
            guard let data = FileManager.default.contents(atPath: file) else { throw CLIError("cannot read \(file)") }
            source = String(decoding: data, as: UTF8.self)
            origin = file
        default:
            throw CLIError("give the statements as an argument or with --file, not both")
        }
        // A text that writes (INSERT, UPDATE, DELETE) runs on an engine, the store's writer;
        // one that only reads, on a snapshot.
        let writes = (try? Query.writtenLayers(source).isEmpty == false) ?? false
        let engine = writes ? try loadEngine(store) : nil
        let snapshot = try engine?.snapshot ?? loadSnapshot(store)
        do {
            let results: [QueryResult]
            if let engine { results = try Query.run(source, on: engine) } else { results = try Query.run(source, on: snapshot) }
            if format == .csv {
                // The CSV's own bytes, CRLF line ends and all, so a file written with > is RFC 4180.
                FileHandle.standardOutput.write(Data(try QueryResult.csv(results)))
            } else {
                print(try render(results, as: format, width: terminalWidth(1)))
            }
            printWarnings(results)
        } catch {
            printError(error.rendered(in: source, origin: origin))
            throw ExitCode(ExitStatus.code(for: error.kind))
        }
    }
}
