import ArgumentParser
import Engine
import Foundation
import Geometry
import QueryLanguage
import Support

struct ReplCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repl",
        abstract: "An interactive query shell: line editing, history, Tab completion, multi-line statements, .help.",
        discussion: "Statements run at ';' or a blank line. Ctrl-C drops the input, Ctrl-D (on an empty line) leaves."
    )

    @Option(help: "table, json or geojson.") var format: QueryFormat = .table
    @OptionGroup var store: StoreOptions

    func run() throws {
        // An engine, so INSERT, UPDATE and DELETE write (the store's writer opens at the first).
        let session = ReplSession(engine: try loadEngine(store), format: format)
        let snapshot = session.snapshot
        guard isatty(0) == 1 else {
            // Piped input: the same statements and commands, without prompts or history.
            while let line = Swift.readLine() {
                if case .quit = session.feed(line) { return }
            }
            session.endOfInput()
            return
        }
        let historyPath = (ProcessInfo.processInfo.environment["HOME"] ?? ".") + "/.vltava_history"
        guard let editor = LineEditor(historyPath: historyPath, completer: { session.completions(before: $0, word: $1) }) else {
            throw CLIError("the terminal's line editor (libedit) did not start")
        }
        print("vltava \(snapshot.layers.count) layers from \(snapshot.storePath). .help for help, .quit to leave.")
        loop: while true {
            editor.pendingText = session.pending
            switch editor.readLine(prompt: session.pending.isEmpty ? "vltava> " : "   ...> ") {
            case .end:
                break loop
            case .cancelled:
                session.cancel()
            case .line(let line):
                switch session.feed(line) {
                case .more: break
                case .done(let entry): editor.remember(entry)
                case .quit(let entry): editor.remember(entry); break loop
                }
            }
        }
        print("")
    }
}

/// The REPL's state and what each line does, apart from the terminal: a statement gathers lines
/// until one ends with ';' or is blank, then runs; a line starting with '.' or '\' at the start
/// of a statement is a command.
final class ReplSession {
    enum Outcome {
        /// The statement goes on.
        case more
        /// A statement or command ran: what history keeps of it.
        case done(String)
        case quit(String)
    }

    /// psql's `\x`: rows as records always (on), never (off), or when the table is wider than
    /// the terminal (auto).
    enum Records: String { case on, off, auto }

    let engine: Engine
    /// The engine's current snapshot: what the statements before wrote.
    var snapshot: Snapshot { engine.snapshot }
    var format: QueryFormat
    private var timing = false
    private var records = Records.auto
    /// `.output FILE`: where answers go instead of standard output.
    private var output: (path: String, handle: FileHandle)?
    /// The lines of the statement so far.
    private(set) var pending = ""
    /// Where the pending statement started in a `.read` file, so errors name the file's line.
    private var origin: (file: String, line: Int)?
    private var readDepth = 0
    static let maxReadDepth = 8

    init(engine: Engine, format: QueryFormat) {
        self.engine = engine
        self.format = format
    }

    static let help = """
        Statements run at ';' or at a blank line, so clauses can go on lines of their own:
          SHOW LAYERS;                        DESCRIBE stations;
          FIND districts CONTAINING POINT(14.4208 50.0880);
          FIND stations NEAREST 3 TO POINT(14.4208 50.0880) WITHIN 2 km
            WHERE MEASURES(no2)
            RETURN code, LATEST(no2), distance_m;
          FIND animals WHERE name ~ 'gorila' RETURN name, location_in_zoo;
          ROUTE FROM POINT(14.4109 50.1167) TO pavilions WHERE name = 'Pavilon goril' ON paths;
          TILE 16/35383/22190 OF zoo_map;     EXPLAIN FIND …;
        Commands:
          .help                this text
          .tables, \\d          the layers and tile sets
          \\d LAYER             a layer's columns (as DESCRIBE LAYER)
          .timing on|off       print how long each statement took
          .read FILE           run the statements and commands of a file
          .output [FILE]       write answers to FILE; alone: back to the terminal
          .format F            table, json or geojson
          \\x [on|off|auto]     rows as records: always, never, or when wider than the terminal
          .quit, \\q            leave (or Ctrl-D on an empty line)
        Keys: Tab completes keywords, layers and columns; Ctrl-C drops the input; up and down
        walk the history (~/.vltava_history).
        The language: docs/QUERY_LANGUAGE.md
        """

    /// Takes one line of input.
    func feed(_ line: String) -> Outcome {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        if pending.isEmpty {
            if trimmed.isEmpty { return .more }
            if trimmed.hasPrefix(".") || trimmed.hasPrefix("\\") { return command(trimmed) }
        }
        if !trimmed.isEmpty {
            pending += pending.isEmpty ? line : "\n" + line
            if !trimmed.hasSuffix(";") { return .more }
        }
        let statement = pending
        pending = ""
        execute(statement)
        origin = nil
        return .done(statement.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " "))
    }

    /// The end of the input runs what is pending, as a blank line would.
    func endOfInput() {
        if !pending.isEmpty { _ = feed("") }
    }

    /// Ctrl-C: the pending statement is dropped.
    func cancel() {
        pending = ""
        origin = nil
    }

    private func command(_ text: String) -> Outcome {
        let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let argument = words.count > 1 ? text.dropFirst(words[0].count).trimmingCharacters(in: .whitespaces) : nil
        switch (words[0], argument) {
        case (".help", nil), ("\\?", nil):
            print(Self.help)
        case (".tables", nil), (".layers", nil), ("\\d", nil):
            execute("SHOW LAYERS")
        case ("\\d", let layer?):
            execute("DESCRIBE \(layer)")
        case (".timing", "on"), (".timing", "off"):
            timing = argument == "on"
            print("timing: \(argument ?? "")")
        case (".format", let name?) where QueryFormat(rawValue: name) != nil:
            format = QueryFormat(rawValue: name) ?? format
            print("format: \(name)")
        case ("\\x", nil):
            records = records == .on ? .off : .on
            print("records: \(records.rawValue)")
        case ("\\x", let mode?) where Records(rawValue: mode) != nil:
            records = Records(rawValue: mode) ?? records
            print("records: \(mode)")
        case (".read", let path?):
            if case .quit = read(path) { return .quit(text) }
        case (".output", let path):
            redirect(to: path)
        case (".quit", nil), (".exit", nil), ("\\q", nil):
            return .quit(text)
        case (".timing", _), (".format", _), ("\\x", _), (".read", nil):
            print("error: \(words[0]) takes \(Self.usage[words[0]] ?? "") (.help lists the commands)")
        default:
            let known = [".help", ".tables", ".layers", ".timing", ".read", ".output", ".format", ".quit", ".exit", "\\d", "\\x", "\\q"]
            let hint = Suggestion.closest(to: words[0], in: known).map { "; did you mean \($0)?" } ?? ""
            print("error: unknown command \(Quote.input(words[0]))\(hint) (.help lists the commands)")
        }
        return .done(text)
    }

    private static let usage = [".timing": "on or off", ".format": "table, json or geojson", "\\x": "on, off or auto", ".read": "a file name"]

    /// `.read FILE`: the file's lines as if typed, errors naming the file's lines; what is
    /// pending at its end runs.
    private func read(_ path: String) -> Outcome {
        guard readDepth < Self.maxReadDepth else {
            print("error: .read nests more than \(Self.maxReadDepth) files deep")
            return .done("")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            print("error: cannot read \(Quote.input(path))")
            return .done("")
        }
        readDepth += 1
        defer { readDepth -= 1 }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        for (number, line) in zip(1..., lines) {
            let text = line.hasSuffix("\r") ? String(line.dropLast()) : String(line)
            if pending.isEmpty && !text.trimmingCharacters(in: .whitespaces).isEmpty { origin = (path, number) }
            if case .quit(let entry) = feed(text) { return .quit(entry) }
        }
        endOfInput()
        return .done("")
    }

    private func redirect(to path: String?) {
        if let output { try? output.handle.close() }
        output = nil
        guard let path else { print("output: the terminal"); return }
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            print("error: cannot write \(Quote.input(path)); answers go to the terminal")
            return
        }
        output = (path, handle)
        print("output: \(path)")
    }

    /// Runs a statement (or several) and writes the answers; the time, with `.timing on`, is
    /// that of parsing, planning, running and formatting, not of the terminal showing it.
    private func execute(_ text: String) {
        let started = ContinuousClock.now
        let rendered: String, results: [QueryResult]
        do {
            results = try Query.run(text, on: engine)
            // Records and wrapping follow the terminal; a file gets whole tables (or records).
            let width = output == nil ? terminalWidth(1) : nil
            rendered = try render(results, as: format, width: records == .off ? nil : width, records: records == .on)
        } catch {
            // A file or a statement of only comments is no error.
            if error.code != "empty_query" { print(located(error, in: text)) }
            return
        }
        let elapsed = ContinuousClock.now - started
        if let output {
            do {
                try output.handle.write(contentsOf: Data((rendered + "\n").utf8))
            } catch {
                print("error: cannot write \(Quote.input(output.path)) (\(error.localizedDescription)); answers go to the terminal again")
                redirect(to: nil)
                print(rendered)
            }
        } else {
            print(rendered)
        }
        // On the terminal (stderr) even under .output, as `vltava query` prints them.
        printWarnings(results)
        if timing {
            let milliseconds = Double(elapsed.components.seconds) * 1e3 + Double(elapsed.components.attoseconds) / 1e15
            print(String(format: "Time: %.3f ms", milliseconds))
        }
    }

    /// The error with its line and caret; in a `.read` file, at the file's line.
    private func located(_ error: QueryError, in text: String) -> String {
        guard let origin else { return error.rendered(in: text) }
        let shifted = QueryError(kind: error.kind, code: error.code, message: error.message, line: error.line + origin.line - 1,
                                 column: error.column, length: error.length, hint: error.hint)
        return shifted.rendered(in: String(repeating: "\n", count: origin.line - 1) + text, origin: origin.file)
    }

    // MARK: Completion

    static let commands = [".exit", ".format", ".help", ".layers", ".output", ".quit", ".read", ".tables", ".timing", "\\d", "\\q", "\\x"]

    /// What Tab offers for `word`, the end of `text` (the statement up to the cursor): commands
    /// at the start of a statement; layers and tile sets where a layer name goes (after FIND and
    /// the commas of its list, DESCRIBE, OF, ON, AVOID, `LINKED TO (`, `\d`); else keywords (in
    /// the word's case when it is lower case), layers and the columns of the layers the
    /// statement names (of every layer when it names none).
    func completions(before text: String, word: String) -> [String] {
        // Words and the symbols ( ) , as tokens, the word being completed left out.
        var tokens: [String] = []
        var current = ""
        for character in text.dropLast(word.count) {
            if character.isLetter || character.isNumber || "_.\\$".contains(character) {
                current.append(character)
                continue
            }
            if !current.isEmpty { tokens.append(current.uppercased()); current = "" }
            if "(),;=<>~".contains(character) { tokens.append(String(character)) }
        }
        if !current.isEmpty { tokens.append(current.uppercased()) }
        let previous = tokens.last ?? ""
        let layerNames = snapshot.layerNames + snapshot.tileSets.keys.sorted()
        let wantsLayer = ["FIND", "DESCRIBE", "OF", "ON", "AVOID", "\\D"].contains(previous)
            || (previous == "(" && tokens.dropLast().last == "TO")
            || (previous == "," && tokens.first == "FIND" && !tokens.dropFirst().contains { Query.keywords.contains($0) })
        var pool: [String]
        if tokens.isEmpty && (word.hasPrefix(".") || word.hasPrefix("\\")) {
            pool = Self.commands
        } else if wantsLayer {
            pool = layerNames
        } else {
            let lower = !word.isEmpty && word == word.lowercased()
            let named = snapshot.layers.filter { tokens.contains($0.name.uppercased()) }
            pool = Query.keywords.map { lower ? $0.lowercased() : $0 } + layerNames
                + (named.isEmpty ? snapshot.layers : named).flatMap { $0.info.columns.map(\.name) }
        }
        var seen: Set<String> = []
        let prefix = word.lowercased()
        return pool.filter { $0.lowercased().hasPrefix(prefix) && seen.insert($0).inserted }
    }
}
