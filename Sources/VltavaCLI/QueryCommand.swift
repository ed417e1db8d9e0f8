import ArgumentParser
import CEditline
import Engine
import Foundation
import Geometry
import QueryLanguage

enum QueryFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json, geojson, csv
}

/// Loads the store as the engine serves it.
func loadSnapshot(_ path: String) throws -> Snapshot {
    do {
        return try Snapshot.load(storePath: path)
    } catch {
        throw CLIError("\(error)")
    }
}

/// Writes answers in one format: tables separated by a blank line; one JSON value for one
/// statement, an array for several (as GeoJSON: one FeatureCollection of all their features).
func render(_ results: [QueryResult], as format: QueryFormat) throws(QueryError) -> String {
    switch format {
    case .table:
        return results.map { $0.table() }.joined(separator: "\n\n")
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
        let snapshot = try loadSnapshot(store.db)
        do {
            let results = try Query.run(source, on: snapshot)
            if format == .csv {
                // The CSV's own bytes, CRLF line ends and all, so a file written with > is RFC 4180.
                FileHandle.standardOutput.write(Data(try QueryResult.csv(results)))
            } else {
                print(try render(results, as: format))
            }
            printWarnings(results)
        } catch {
            printError(error.rendered(in: source, origin: origin))
            throw ExitCode(1)
        }
    }
}

struct ReplCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repl",
        abstract: "An interactive query shell: line editing, history, multi-line statements, .help."
    )

    @Option(help: "table, json or geojson.") var format: QueryFormat = .table
    @OptionGroup var store: StoreOptions

    static let help = """
        Statements (end one with ';' or a blank line to run it before it is complete):
          SHOW LAYERS                         DESCRIBE stations
          FIND districts CONTAINING POINT(14.4208 50.0880)
          FIND stations NEAREST 3 TO POINT(14.4208 50.0880) WITHIN 2 km WHERE MEASURES(no2)
          FIND animals WHERE name ~ 'gorila' RETURN name, location_in_zoo
          ROUTE FROM POINT(14.4109 50.1167) TO pavilions WHERE name = 'Pavilon goril' ON paths
          TILE 16/35383/22190 OF zoo_map      EXPLAIN FIND …
        Commands:
          .help            this text
          .layers          the layers and tile sets
          .format F        table, json or geojson
          .quit            leave (or Ctrl-D)
        The language: docs/QUERY_LANGUAGE.md
        """

    func run() throws {
        var format = self.format
        let snapshot = try loadSnapshot(store.db)
        let interactive = isatty(0) == 1
        let historyPath = (ProcessInfo.processInfo.environment["HOME"] ?? ".") + "/.vltava_history"
        if interactive {
            using_history()
            read_history(historyPath)
            print("vltava \(snapshot.layers.count) layers from \(store.db). .help for help, .quit to leave.")
        }
        var buffer = ""
        while true {
            let prompt = buffer.isEmpty ? "vltava> " : "   ...> "
            guard let line = Self.readLine(prompt: prompt, interactive: interactive) else { break }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if buffer.isEmpty && trimmed.hasPrefix(".") {
                if interactive { add_history(trimmed) }
                let parts = trimmed.split(separator: " ")
                switch parts.first {
                case ".help": print(Self.help)
                case ".layers": run("SHOW LAYERS", on: snapshot, format: .table)
                case ".format":
                    if parts.count == 2, let chosen = QueryFormat(rawValue: String(parts[1])) { format = chosen; print("format: \(chosen.rawValue)") }
                    else { print("error: .format takes one of: table, json, geojson") }
                case ".quit", ".exit": return finish(interactive, historyPath)
                default: print("error: unknown command \(parts.first ?? "") — .help lists the commands")
                }
                continue
            }
            if buffer.isEmpty && trimmed.isEmpty { continue }
            buffer += buffer.isEmpty ? line : "\n" + line
            // Run when the statement is complete, ends with ';', or the line is blank; keep
            // reading when the parser only wants more.
            let wantsMore: Bool
            do {
                _ = try Query.plan(buffer, on: snapshot)
                wantsMore = false
            } catch {
                wantsMore = error.code == "unexpected_end"
            }
            if wantsMore && !trimmed.isEmpty && !trimmed.hasSuffix(";") { continue }
            if interactive { add_history(buffer.replacingOccurrences(of: "\n", with: " ")) }
            run(buffer, on: snapshot, format: format)
            buffer = ""
        }
        finish(interactive, historyPath)
    }

    func finish(_ interactive: Bool, _ historyPath: String) {
        if interactive { write_history(historyPath); print("") }
    }

    func run(_ text: String, on snapshot: Snapshot, format: QueryFormat) {
        do {
            print(try render(try Query.run(text, on: snapshot), as: format))
        } catch {
            print(error.rendered(in: text))
        }
    }

    /// A line through libedit in a terminal (editing, history), plain stdin otherwise.
    static func readLine(prompt: String, interactive: Bool) -> String? {
        guard interactive else { return Swift.readLine() }
        guard let raw = readline(prompt) else { return nil }
        defer { free(raw) }
        return String(cString: raw)
    }
}
