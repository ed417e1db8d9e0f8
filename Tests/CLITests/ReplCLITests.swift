import Foundation
import Geometry
import Support
import TestSupport
import Testing

/// `vltava repl` in a real terminal: tmux runs it in a pseudo-terminal, send-keys types, and
/// capture-pane reads the screen. Each test has a REPL of its own on the demo store.
@Suite(.serialized) struct ReplCLITests {
    /// A tmux server of the test's own (-L), so that a user's tmux is never touched and
    /// kill-server at the end leaves nothing behind.
    final class Terminal {
        let socket = "vltava-test-\(UUID().uuidString.prefix(8))"
        let session = "repl"
        let home: URL

        init(width: Int = 160) throws {
            let db = try QueryCLITests.store.get()
            home = try Fixtures.temporaryDirectory("repl-home")
            let started = try tmux(["new-session", "-d", "-s", session, "-x", "\(width)", "-y", "50",
                                    "env HOME=\(home.path) \(CLI.binary.path) repl --db \(db)"])
            #expect(started.status == 0, "\(started.stderr)")
            _ = try waitFor("vltava>")
        }

        /// The REPL is asked to quit first, so that kill-server has only tmux's own server to
        /// stop. (A tmux server inherits the signal mask of the thread that started it, and the
        /// test runner's threads block signals; such a server was seen to wait for ever in
        /// kill-server. The REPL itself ends on a hangup: `aHangupEndsTheREPL`.)
        deinit {
            _ = try? tmux(["send-keys", "-t", session, "C-u", ".quit", "Enter"])
            for _ in 0..<40 where isRunning { Thread.sleep(forTimeInterval: 0.05) }
            _ = try? tmux(["kill-server"])
        }

        @discardableResult
        func tmux(_ arguments: [String]) throws -> CLI.Result {
            try Fixtures.run(URL(fileURLWithPath: "/usr/bin/tmux"), ["-L", socket] + arguments, timeout: 30)
        }

        /// The whole session so far: the scrollback and the screen, lines the terminal wrapped
        /// joined again (-J), trailing blank lines left out.
        func screen() throws -> String {
            let text = try tmux(["capture-pane", "-p", "-J", "-S", "-2000", "-t", session]).stdout
            return String(text.reversed().drop { $0.isWhitespace }.reversed())
        }

        var isRunning: Bool { (try? tmux(["has-session", "-t", session]).status) == 0 }

        func keys(_ names: String...) throws { try tmux(["send-keys", "-t", session] + names) }

        /// Types `text` as it is (tmux reads a ';' that ends an argument as its own separator,
        /// so that one is escaped).
        func type(_ text: String) throws {
            try tmux(["send-keys", "-t", session, "-l", text.hasSuffix(";") ? String(text.dropLast()) + "\\;" : text])
        }

        /// Waits until the screen shows `text` more often than `before` times.
        @discardableResult
        func waitFor(_ text: String, moreThan before: Int = 0) throws -> String {
            var last = ""
            for _ in 0..<150 {
                last = try screen()
                if last.components(separatedBy: text).count - 1 > before { return last }
                Thread.sleep(forTimeInterval: 0.1)
            }
            Issue.record("the screen never showed \(text.debugDescription):\n\(last)")
            return last
        }

        /// Waits until the line being edited is `text` with the cursor at its end (spaces at the
        /// end count: the screen does not show them).
        func waitForInput(_ text: String) throws {
            var last = ""
            for _ in 0..<150 {
                last = try screen()
                let cursor = try tmux(["display-message", "-p", "-t", session, "#{cursor_x}"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                let line = last.split(separator: "\n", omittingEmptySubsequences: false).last.map(String.init) ?? ""
                if line == String(text.reversed().drop { $0 == " " }.reversed()) && cursor == String(text.count) { return }
                Thread.sleep(forTimeInterval: 0.1)
            }
            Issue.record("the input line never became \(text.debugDescription):\n\(last)")
        }

        /// Types a line, presses Enter and returns what the screen shows after what it showed
        /// before, once `marker` appears once more and the prompt is back.
        func enter(_ line: String, until marker: String) throws -> String {
            let before = try screen()
            try type(line)
            try keys("Enter")
            var after = try waitFor(marker, moreThan: before.components(separatedBy: marker).count - 1)
            // The answer and the next prompt are separate writes, so the marker can be on the
            // screen before the prompt is: wait for the prompt too, or a test that reads the
            // screen's end sees it half written.
            for _ in 0..<150 where !Self.endsAtAPrompt(after) {
                Thread.sleep(forTimeInterval: 0.1)
                after = try screen()
            }
            return after.hasPrefix(before) ? String(after.dropFirst(before.count)) : after
        }

        /// Whether the screen's last line is an empty prompt: a new statement or a continuation.
        static func endsAtAPrompt(_ screen: String) -> Bool {
            let last = screen.split(separator: "\n", omittingEmptySubsequences: false).last ?? ""
            return last == "vltava>" || last.trimmingCharacters(in: .whitespaces) == "...>"
        }
    }

    @Test func statementsRunAtSemicolonOrBlankLine() throws {
        let terminal = try Terminal()
        // A statement over three lines: nothing runs until the ';'.
        var shown = try terminal.enter("FIND districts CONTAINING", until: "...>")
        shown = try terminal.enter("POINT(14.4208 50.0880)", until: "...>")
        #expect(!shown.contains("row"))
        shown = try terminal.enter("RETURN NAZEV_MC;", until: "(1 row)")
        #expect(shown.hasSuffix(" RETURN NAZEV_MC;\nNAZEV_MC\n--------\nPraha 1\n(1 row)\nvltava>"))

        // A complete first line waits for its WHERE on the next; a blank line runs it.
        _ = try terminal.enter("FIND stations", until: "...>")
        _ = try terminal.enter("  WHERE code = 'AREPA'", until: "...>")
        _ = try terminal.enter("  RETURN code, name", until: "...>")
        shown = try terminal.enter("", until: "(1 row)")
        #expect(shown.contains("code   name\n-----  --------------------\nAREPA  Praha 1-n. Republiky\n(1 row)"))

        // A misspelled keyword: the parser's error says which keyword was meant.
        shown = try terminal.enter("FIND stations NEARST 1 TO POINT(14.42 50.09);", until: "hint:")
        #expect(shown.contains("""
            error: expected ',' or a clause (CONTAINING, NEAREST, WITHIN, INTERSECTING, LINKED TO, WHERE, GROUP BY, HAVING, ORDER BY, LIMIT, RETURN), found 'NEARST' (line 1, column 15)
              FIND stations NEARST 1 TO POINT(14.42 50.09);
                            ^^^^^^
              hint: did you mean NEAREST?
            """))
        shown = try terminal.enter("FIND statoins NEAREST 1 TO POINT(14.42 50.09);", until: "hint:")
        #expect(shown.contains("""
            error: unknown layer 'statoins' (line 1, column 6)
              FIND statoins NEAREST 1 TO POINT(14.42 50.09);
                   ^^^^^^^^
              hint: did you mean 'stations'?
            """))

        // .tables and \d list the layers and tile sets of the demo store by name.
        for command in [".tables", "\\d"] {
            shown = try terminal.enter(command, until: "(10 rows)")
            let names = shown.split(separator: "\n").dropFirst(3).prefix(10).map { $0.split(separator: " ").first.map(String.init) ?? "" }
            #expect(names == ["animals", "districts", "districts_sjtsk", "observations", "parking", "paths", "pavilions", "pens", "stations", "zoo_map"])
            #expect(shown.contains("stations         points    17"))
        }
        // \d layer: its columns, as DESCRIBE gives them.
        shown = try terminal.enter("\\d stations", until: "(15 rows)")
        #expect(shown.contains("code             TEXT\nname             TEXT\n"))
        #expect(shown.contains("LATEST(no2)      REAL     newest value in 'observations'; also HISTORY(no2, n h), MEASURES(no2)"))

        // History: the up arrow brings back the last line; a statement of several lines comes
        // back as one.
        try terminal.keys("Up")
        _ = try terminal.waitFor("vltava> \\d stations", moreThan: 1)
        try terminal.keys("Up", "Up", "Up", "Up", "Up")
        _ = try terminal.waitFor("vltava> FIND stations WHERE code = 'AREPA' RETURN code, name")
        try terminal.keys("C-u")  // clear the recalled line
        try terminal.type(".quit")
        try terminal.keys("Enter")
        for _ in 0..<50 where terminal.isRunning { Thread.sleep(forTimeInterval: 0.1) }
        #expect(!terminal.isRunning)
        let history = try String(contentsOf: terminal.home.appendingPathComponent(".vltava_history"), encoding: .utf8)
        // libedit's history file writes spaces as \040 and '\' as \134 (vis(3)).
        #expect(history.split(separator: "\n").contains("FIND\\040districts\\040CONTAINING\\040POINT(14.4208\\04050.0880)\\040RETURN\\040NAZEV_MC;"))
        #expect(history.split(separator: "\n").contains("\\134d\\040stations"))
    }

    /// A closed terminal (SIGHUP) ends the REPL even while it waits for a line: libedit's handler
    /// puts the terminal back and re-raises the signal, whose default action ends the process.
    @Test func aHangupEndsTheREPL() throws {
        let terminal = try Terminal()
        _ = try terminal.enter("FIND districts CONTAINING", until: "...>")
        let pane = try terminal.tmux(["display-message", "-p", "-t", terminal.session, "#{pane_pid}"]).stdout
        let pid = try #require(Int32(pane.trimmingCharacters(in: .whitespacesAndNewlines)))
        let command = try String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)
        #expect(command.contains("repl"), "the pane runs \(command)")
        #expect(kill(pid, SIGHUP) == 0)
        // Gone, or a zombie that tmux has yet to reap: either way it has ended.
        func ended() -> Bool {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
            return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
        }
        for _ in 0..<50 where !ended() { Thread.sleep(forTimeInterval: 0.1) }
        #expect(ended())
    }

    @Test func ctrlCCancelsAndCtrlDQuits() throws {
        let terminal = try Terminal()
        // Ctrl-C drops the pending statement and gives a fresh prompt; the session goes on.
        _ = try terminal.enter("FIND districts CONTAINING", until: "...>")
        try terminal.type("POINT(14.4208")
        try terminal.keys("C-c")
        var shown = try terminal.waitFor("^C\nvltava>")
        #expect(shown.hasSuffix("   ...> POINT(14.4208^C\nvltava>"))
        try terminal.keys("C-c")  // on an empty line too
        _ = try terminal.waitFor("vltava> ^C\nvltava>")
        #expect(terminal.isRunning)
        // Had the dropped lines stayed, this would be a syntax error.
        shown = try terminal.enter("FIND districts CONTAINING POINT(14.4208 50.0880) RETURN NAZEV_MC;", until: "(1 row)")
        #expect(shown.hasSuffix("NAZEV_MC\n--------\nPraha 1\n(1 row)\nvltava>"))

        // Ctrl-D quits at an empty prompt.
        try terminal.keys("C-d")
        for _ in 0..<50 where terminal.isRunning { Thread.sleep(forTimeInterval: 0.1) }
        #expect(!terminal.isRunning)
    }

    @Test func tabCompletesKeywordsLayersAndColumns() throws {
        let terminal = try Terminal()
        // After FIND only layers: "sta" is stations; then a keyword, then a column of stations.
        try terminal.type("FIND sta")
        try terminal.keys("Tab")
        try terminal.waitForInput("vltava> FIND stations ")
        try terminal.type("NEA")
        try terminal.keys("Tab")
        try terminal.waitForInput("vltava> FIND stations NEAREST ")
        try terminal.type("1 TO POINT(14.42 50.09) RETURN na")
        try terminal.keys("Tab")
        try terminal.waitForInput("vltava> FIND stations NEAREST 1 TO POINT(14.42 50.09) RETURN name ")
        let shown = try terminal.enter(";", until: "(1 row)")
        #expect(shown.hasSuffix("name\n--------------------\nPraha 1-n. Republiky\n(1 row)\nvltava>"))

        // Several candidates that share no more than the word: listed under the line.
        try terminal.type("\\d p")
        try terminal.keys("Tab")
        let listed = try terminal.waitFor("pavilions")
        #expect(listed.contains("vltava> \\d p\nparking    paths      pavilions  pens\nvltava> \\d p"))
        // Lower-case keywords complete in lower case.
        try terminal.keys("C-u")
        try terminal.type("find pens lim")
        try terminal.keys("Tab")
        try terminal.waitForInput("vltava> find pens limit ")
        try terminal.keys("C-u")
        // Commands at the start of a line.
        try terminal.type(".tim")
        try terminal.keys("Tab")
        try terminal.waitForInput("vltava> .timing ")
    }

    @Test func timingReadOutputAndWholeCells() throws {
        let terminal = try Terminal()
        let db = try QueryCLITests.store.get()

        // .timing on: a time line after each answer.
        var shown = try terminal.enter(".timing on", until: "timing: on")
        shown = try terminal.enter("SHOW LAYERS;", until: "Time: ")
        let timeLine = try #require(shown.split(separator: "\n").last { $0.hasPrefix("Time: ") })
        #expect(timeLine.wholeMatch(of: /Time: \d+\.\d{3} ms/) != nil, "\(timeLine)")
        _ = try terminal.enter(".timing off", until: "timing: off")

        // A HISTORY cell is shown whole: the table is wider than the 160-column terminal, so the
        // row is a record and the value wraps; joined again it is the JSON answer's value.
        let statement = "FIND stations WHERE code = 'AREPA' RETURN code, HISTORY(no2, 24 h)"
        shown = try terminal.enter(statement + ";", until: "(1 row)")
        let lines = shown.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0.hasPrefix("history_no2_24h  ") })
        #expect(lines[start - 2].hasPrefix("-[ row 1 ]---"))
        #expect(lines[start - 1] == "code             AREPA")
        let valueLines = lines[start...].prefix { !$0.hasPrefix("(1 row)") }
        #expect(valueLines.count > 1)
        #expect(valueLines.allSatisfy { $0.count <= 160 })
        let shownValue = valueLines.map { $0.dropFirst("history_no2_24h  ".count) }.joined()
        let answer = try CLI.run(["query", statement, "--format", "json", "--db", db])
        guard case .object(let json) = try JSON.parse(answer.stdout), case .array(let rows)? = json["rows"],
              case .object(let row)? = rows.first, case .array(let series)? = row["history_no2_24h"] else {
            Issue.record("not the JSON answer: \(answer.stdout)"); return
        }
        #expect(series.count == 24)
        #expect(try JSON.parse(shownValue) == .array(series))

        // .read runs a file's statements and commands; errors name the file's line.
        let dir = try Fixtures.temporaryDirectory("repl-read")
        let script = dir.appendingPathComponent("zoo.vq")
        try """
            -- the district, then a statement with a wrong latitude
            FIND districts CONTAINING POINT(14.4208 50.0880)
              RETURN NAZEV_MC, KOD_MC;

            FIND pens
              NEAREST 1 TO POINT(14.4 150)
            """.write(to: script, atomically: true, encoding: .utf8)
        shown = try terminal.enter(".read \(script.path)", until: "^")
        #expect(shown.contains("NAZEV_MC  KOD_MC\n--------  ------\nPraha 1   500054\n(1 row)\n"))
        #expect(shown.contains("""
            error: latitude 150 is outside -90…90 (\(script.path):line 6, column 27)
                NEAREST 1 TO POINT(14.4 150)
                                        ^^^
            """))

        // .output FILE: answers go to the file, not the screen; .output alone: back.
        let file = dir.appendingPathComponent("out.txt")
        _ = try terminal.enter(".output \(file.path)", until: "output: \(file.path)")
        shown = try terminal.enter("FIND districts CONTAINING POINT(14.4208 50.0880) RETURN NAZEV_MC;", until: "vltava>")
        #expect(!shown.contains("Praha 1"))
        #expect(try String(contentsOf: file, encoding: .utf8) == "NAZEV_MC\n--------\nPraha 1\n(1 row)\n")
        _ = try terminal.enter(".output", until: "output: the terminal")
        shown = try terminal.enter("FIND districts CONTAINING POINT(14.4208 50.0880) RETURN KOD_MC;", until: "(1 row)")
        #expect(shown.contains("KOD_MC\n------\n500054\n(1 row)"))
    }
}
