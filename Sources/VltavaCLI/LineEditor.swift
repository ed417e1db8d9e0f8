import CEditline
import Foundation

/// The REPL's terminal line editor, on libedit: emacs keys, history kept in a file, Tab
/// completion, and Ctrl-C as a key that cancels the input rather than a signal that ends the
/// program.
final class LineEditor {
    enum Input {
        case line(String)
        /// Ctrl-C: whatever was typed is dropped.
        case cancelled
        /// Ctrl-D on an empty line, or the end of input.
        case end
    }

    /// What Tab completes the word before the cursor with: given the text of the statement up
    /// to the cursor (earlier lines included) and the word, the candidates that start with it.
    typealias Completer = (_ textBeforeCursor: String, _ word: String) -> [String]

    private let editor: OpaquePointer
    private let history: OpaquePointer?
    private let historyPath: String
    private let completer: Completer
    /// The prompt as a C string that outlives the call: libedit asks for it at every redraw.
    private var prompt: UnsafeMutablePointer<CChar>?
    /// The statement's earlier lines, which completion looks at (for the layers named there).
    var pendingText = ""
    private var cancelled = false

    init?(historyPath: String, completer: @escaping Completer) {
        // libedit reads and shows multibyte (UTF-8) characters only under a UTF-8 locale; only
        // LC_CTYPE, so that numbers are still printed the same everywhere.
        setlocale(LC_CTYPE, "")
        guard let editor = vl_el_init("vltava") else { return nil }
        self.editor = editor
        self.historyPath = historyPath
        self.completer = completer
        history = vl_history_init(1000)
        vl_el_set_editor(editor, "emacs")
        if let history {
            vl_el_set_history(editor, history)
            vl_history_load(history, historyPath)
        }
        vl_el_set_client_data(editor, Unmanaged.passUnretained(self).toOpaque())
        vl_el_set_prompt(editor) { editor in
            LineEditor.from(editor)?.prompt ?? nil
        }
        vl_el_keys_not_signals(editor)
        vl_el_add_function(editor, "vltava-cancel", "drop the line and the statement") { editor, _ in
            guard let self = LineEditor.from(editor) else { return UInt8(CC_ERROR) }
            self.cancelled = true
            return UInt8(CC_NEWLINE)
        }
        vl_el_add_function(editor, "vltava-complete", "complete the word") { editor, _ in
            guard let editor, let self = LineEditor.from(editor) else { return UInt8(CC_ERROR) }
            return self.complete(editor)
        }
        vl_el_add_function(editor, "vltava-suspend", "stop the program (Ctrl-Z)", vl_el_suspend)
        vl_el_bind(editor, "^C", "vltava-cancel")
        vl_el_bind(editor, "^Z", "vltava-suspend")
        vl_el_bind(editor, "^I", "vltava-complete")
    }

    deinit {
        if let history {
            vl_history_save(history, historyPath)
            history_end(history)
        }
        el_end(editor)
        free(prompt)
    }

    private static func from(_ editor: OpaquePointer?) -> LineEditor? {
        guard let editor, let data = vl_el_client_data(editor) else { return nil }
        return Unmanaged<LineEditor>.fromOpaque(data).takeUnretainedValue()
    }

    func readLine(prompt text: String) -> Input {
        free(prompt)
        prompt = strdup(text)
        cancelled = false
        var count: Int32 = 0
        let raw = el_gets(editor, &count)
        // Checked first: Ctrl-C on an empty line comes back as an empty line, as EOF does.
        if cancelled {
            print("^C")
            return .cancelled
        }
        guard let raw, count > 0 else { return .end }
        var line = String(cString: raw)
        if line.hasSuffix("\n") { line.removeLast() }
        return .line(line)
    }

    func remember(_ entry: String) {
        if let history { vl_history_enter(history, entry) }
    }

    /// Completes the word before the cursor: one candidate is inserted whole (with a space
    /// after it), several by what they share, and when they share no more than is typed they
    /// are listed under the line.
    private func complete(_ editor: OpaquePointer) -> UInt8 {
        guard let info = el_line(editor)?.pointee, let start = info.buffer, let cursor = info.cursor else { return UInt8(CC_ERROR) }
        let before = String(decoding: UnsafeRawBufferPointer(start: start, count: cursor - start), as: UTF8.self)
        let word = String(before.reversed().prefix { $0.isLetter || $0.isNumber || "_.\\".contains($0) }.reversed())
        let candidates = completer(pendingText + (pendingText.isEmpty ? "" : "\n") + before, word)
        guard let first = candidates.first else { return UInt8(CC_REFRESH_BEEP) }
        // The word is replaced, not extended: a candidate may differ from it in case.
        if candidates.count == 1 {
            el_deletestr(editor, Int32(word.unicodeScalars.count))
            el_insertstr(editor, first + " ")
            return UInt8(CC_REFRESH)
        }
        let shared = candidates.dropFirst().reduce(first) { common, next in
            String(zip(common, next).prefix { $0 == $1 }.map(\.0))
        }
        if shared.count > word.count {
            el_deletestr(editor, Int32(word.unicodeScalars.count))
            el_insertstr(editor, shared)
            return UInt8(CC_REFRESH)
        }
        print("\n" + columns(candidates))
        return UInt8(CC_REDISPLAY)
    }

    /// The candidates in as many columns as the terminal has room for.
    private func columns(_ items: [String]) -> String {
        let width = (items.map(\.count).max() ?? 0) + 2
        let perLine = max(1, Int(max(vl_terminal_columns(1), 40)) / width)
        return stride(from: 0, to: items.count, by: perLine).map { start in
            items[start..<min(start + perLine, items.count)].map { $0.padding(toLength: width, withPad: " ", startingAt: 0) }
                .joined().trimmingTrailingSpaces
        }.joined(separator: "\n")
    }
}
