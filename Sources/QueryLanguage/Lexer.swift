// The lexer: statement text → tokens with their line and column. One pass over the UTF-8
// bytes, no backtracking, so lexing is linear in the input whatever it holds.

import Geometry
import Support

/// Where a token starts (1-based; columns count Unicode scalars, so a precomposed 'ř' is one
/// column), and how many columns it spans.
public struct SourcePosition: Sendable, Equatable {
    public var line: Int
    public var column: Int
    public var length: Int
}

struct Token: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        /// A name or keyword, as written (keywords are matched case-insensitively).
        case word(String)
        case number(Double, text: String)
        case string(String)
        /// Punctuation and operators: ( ) , ; * / = <> != < <= > >= ~ .
        case symbol(String)
        /// A bound parameter: `$1` (1-based), or `?` (numbered in order of appearance).
        case parameter(Int)
        case end
    }

    var kind: Kind
    var position: SourcePosition
    /// The word upper-cased, when this token is a short word of ASCII letters, digits and '_'
    /// (every keyword is): computed once by the lexer, since the parser asks many times.
    var keyword: String?

    init(kind: Kind, position: SourcePosition, keyword: String? = nil) {
        self.kind = kind
        self.position = position
        self.keyword = keyword
    }

    /// Whether this is the symbol `symbol` (without building a `Kind` to compare with).
    func isSymbol(_ symbol: String) -> Bool {
        if case .symbol(let s) = kind { s == symbol } else { false }
    }

    /// How an error message names this token.
    var quoted: String {
        switch kind {
        // Words, numbers and strings are the request's text: quoted short (`Quote`).
        case .word(let word): Quote.input(word)
        case .number(_, let text): "number \(Quote.input(text, marks: false))"
        case .string(let text): "string \(Quote.input(text))"
        case .symbol(let symbol): "'\(symbol)'"
        case .parameter(let n): "parameter $\(n)"
        case .end: "end of input"
        }
    }
}

enum Lexer {
    /// Longest inputs accepted; beyond it the statement is refused before any work.
    static let maxLength = 100_000
    /// The most parameters one text may use.
    static let maxParameters = 1_000

    static func tokens(_ text: String) throws(QueryError) -> [Token] {
        var text = text
        let result: Result<[Token], QueryError> = text.withUTF8 { bytes in
            do throws(QueryError) { return .success(try tokens(bytes)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Works on the UTF-8 bytes: ASCII, which every keyword, number and symbol is, costs one
    /// comparison; other characters are decoded only where they occur (names, strings).
    /// Columns count Unicode scalars, so 'ř' is one column.
    private static func tokens(_ bytes: UnsafeBufferPointer<UInt8>) throws(QueryError) -> [Token] {
        // Counted only when the bytes could be too many characters (a character is 1–4 bytes).
        let scalarCount = bytes.count <= maxLength ? 0 : bytes.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) }
        guard scalarCount <= maxLength else {
            throw QueryError(kind: .limit, code: "query_too_long", message: "the query is \(scalarCount) characters long; the limit is \(maxLength)", line: 1, column: 1)
        }
        var tokens: [Token] = []
        tokens.reserveCapacity(bytes.count / 4 + 1)
        var i = 0, line = 1, column = 1
        // `?` and `$n` are not mixed in one text: which value a `?` takes would depend on the
        // numbered ones around it.
        var questionMarks = 0, numbered = false
        func mixed(_ line: Int, _ column: Int) -> QueryError {
            QueryError(kind: .syntax, code: "mixed_parameters", message: "the text mixes ? and $n parameters", line: line, column: column,
                       hint: "number them all ($1, $2, …) or use ? for all")
        }

        /// The scalar starting at byte `at` and its length in bytes (the input is valid UTF-8).
        func scalar(at index: Int) -> (Unicode.Scalar, Int) {
            let lead = bytes[index]
            if lead < 0x80 { return (Unicode.Scalar(lead), 1) }
            let length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2
            var value = UInt32(lead) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
            var k = 1
            while k < length && index + k < bytes.count { value = value << 6 | UInt32(bytes[index + k] & 0x3F); k += 1 }
            return (Unicode.Scalar(value) ?? "\u{FFFD}", k)
        }
        func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
        func isASCIIWordStart(_ b: UInt8) -> Bool { (b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A || b == 0x5F }
        /// A word character at `index`, and its byte length; nil when it is not one.
        func wordCharacter(at index: Int, first: Bool) -> Int? {
            let b = bytes[index]
            if b < 0x80 { return isASCIIWordStart(b) || (!first && isDigit(b)) ? 1 : nil }
            let (c, length) = scalar(at: index)
            return c.properties.isAlphabetic ? length : nil
        }
        /// The upper-cased word when it is short and ASCII (as every keyword is), else nil.
        func keyword(_ range: Range<Int>, _ word: String) -> String? {
            guard range.count <= 24 else { return nil }
            var lower = false
            for b in bytes[range] {
                if b >= 0x80 { return nil }
                if b >= 0x61 && b <= 0x7A { lower = true }
            }
            guard lower else { return word }
            return String(unsafeUninitializedCapacity: range.count) { buffer in
                for (k, b) in bytes[range].enumerated() { buffer[k] = b >= 0x61 && b <= 0x7A ? b - 0x20 : b }
                return range.count
            }
        }
        func text(_ range: Range<Int>) -> String { String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) }
        func scalars(_ range: Range<Int>) -> Int { bytes[range].reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) } }

        while i < bytes.count {
            let b = bytes[i]
            if b == 0x0A { line += 1; column = 1; i += 1; continue }
            if b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0B || b == 0x0C { column += 1; i += 1; continue }
            // A comment runs from -- to the end of the line.
            if b == UInt8(ascii: "-"), i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "-") {
                while i < bytes.count && bytes[i] != 0x0A { i += 1 }
                continue
            }
            if let first = wordCharacter(at: i, first: true) {
                var j = i + first
                // ASCII letters, digits and '_' first, one comparison each; then any others.
                while j < bytes.count, bytes[j] < 0x80, isASCIIWordStart(bytes[j]) || isDigit(bytes[j]) { j += 1 }
                while j < bytes.count, let next = wordCharacter(at: j, first: false) { j += next }
                let width = scalars(i..<j)
                let word = text(i..<j)
                tokens.append(Token(kind: .word(word), position: SourcePosition(line: line, column: column, length: width),
                                    keyword: keyword(i..<j, word)))
                column += width
                i = j
                continue
            }
            let next: UInt8 = i + 1 < bytes.count ? bytes[i + 1] : 0
            if isDigit(b) || ((b == UInt8(ascii: "-") || b == UInt8(ascii: "+") || b == UInt8(ascii: ".")) && (isDigit(next) || next == UInt8(ascii: "."))) {
                var j = i
                if bytes[j] == UInt8(ascii: "-") || bytes[j] == UInt8(ascii: "+") { j += 1 }
                while j < bytes.count && isDigit(bytes[j]) { j += 1 }
                if j < bytes.count && bytes[j] == UInt8(ascii: ".") { j += 1; while j < bytes.count && isDigit(bytes[j]) { j += 1 } }
                if j < bytes.count && (bytes[j] | 0x20) == UInt8(ascii: "e") {
                    var k = j + 1
                    if k < bytes.count && (bytes[k] == UInt8(ascii: "-") || bytes[k] == UInt8(ascii: "+")) { k += 1 }
                    if k < bytes.count && isDigit(bytes[k]) {
                        while k < bytes.count && isDigit(bytes[k]) { k += 1 }
                        j = k
                    }
                }
                let string = text(i..<j)
                guard let value = DecimalText.exactValue(UnsafeBufferPointer(rebasing: bytes[i..<j])) ?? Double(string), value.isFinite else {
                    throw QueryError(kind: .syntax, code: "bad_number", message: "\(Quote.input(string)) is not a number", line: line, column: column, length: j - i)
                }
                tokens.append(Token(kind: .number(value, text: string), position: SourcePosition(line: line, column: column, length: j - i)))
                column += j - i
                i = j
                continue
            }
            if b == UInt8(ascii: "'") {
                // A string: '' inside it stands for one quote. It may not span lines, so a
                // missing quote is reported where the string began.
                var value: [UInt8] = []
                var j = i + 1
                var closed = false
                while j < bytes.count {
                    if bytes[j] == UInt8(ascii: "'") {
                        if j + 1 < bytes.count && bytes[j + 1] == UInt8(ascii: "'") { value.append(bytes[j]); j += 2; continue }
                        closed = true
                        break
                    }
                    if bytes[j] == 0x0A { break }
                    if bytes[j] == 0 {
                        throw QueryError(kind: .invalid, code: "invalid_text", message: "the string starting here \(TextRule.nulMessage)",
                                         line: line, column: column)
                    }
                    value.append(bytes[j])
                    j += 1
                }
                guard closed else {
                    throw QueryError(kind: .syntax, code: "unterminated_string", message: "the string starting here has no closing quote", line: line, column: column,
                                     hint: "strings are in single quotes and end on the same line; write '' for a quote inside")
                }
                let width = scalars(i..<(j + 1))
                tokens.append(Token(kind: .string(String(decoding: value, as: UTF8.self)), position: SourcePosition(line: line, column: column, length: width)))
                column += width
                i = j + 1
                continue
            }
            if b == UInt8(ascii: "?") {
                guard !numbered else { throw mixed(line, column) }
                questionMarks += 1
                tokens.append(Token(kind: .parameter(questionMarks), position: SourcePosition(line: line, column: column, length: 1)))
                column += 1
                i += 1
                continue
            }
            if b == UInt8(ascii: "$") {
                var j = i + 1
                while j < bytes.count && isDigit(bytes[j]) && j - i <= 6 { j += 1 }
                guard j > i + 1, let n = Int(text((i + 1)..<j)), n >= 1, n <= Lexer.maxParameters else {
                    throw QueryError(kind: .syntax, code: "bad_parameter", message: "a parameter is $ and its number, from $1 to $\(Lexer.maxParameters)",
                                     line: line, column: column, length: max(1, j - i))
                }
                guard questionMarks == 0 else { throw mixed(line, column) }
                numbered = true
                tokens.append(Token(kind: .parameter(n), position: SourcePosition(line: line, column: column, length: j - i)))
                column += j - i
                i = j
                continue
            }
            if b == UInt8(ascii: "\"") {
                // A quoted identifier: any name, spaces and keywords too ("typ stanice");
                // "" inside is one quote. A name, never a keyword (its `keyword` is nil).
                var value: [UInt8] = []
                var j = i + 1
                var closed = false
                while j < bytes.count && bytes[j] != 0x0A {
                    if bytes[j] == UInt8(ascii: "\"") {
                        if j + 1 < bytes.count && bytes[j + 1] == UInt8(ascii: "\"") { value.append(bytes[j]); j += 2; continue }
                        closed = true
                        break
                    }
                    value.append(bytes[j])
                    j += 1
                }
                guard closed, !value.isEmpty else {
                    throw QueryError(kind: .syntax, code: closed ? "empty_name" : "unterminated_name",
                                     message: closed ? "a quoted name cannot be empty" : "the quoted name starting here has no closing double quote",
                                     line: line, column: column,
                                     hint: "double quotes name a field or layer (\"typ stanice\"); strings are in single quotes: 'Praha 6'")
                }
                let width = scalars(i..<(j + 1))
                tokens.append(Token(kind: .word(String(decoding: value, as: UTF8.self)), position: SourcePosition(line: line, column: column, length: width)))
                column += width
                i = j + 1
                continue
            }
            if next == UInt8(ascii: "=") && (b == UInt8(ascii: "!") || b == UInt8(ascii: "<") || b == UInt8(ascii: ">"))
                || (b == UInt8(ascii: "<") && next == UInt8(ascii: ">")) {
                tokens.append(Token(kind: .symbol(text(i..<(i + 2))), position: SourcePosition(line: line, column: column, length: 2)))
                column += 2
                i += 2
                continue
            }
            if let symbol = Lexer.symbols[Int(b)] {
                tokens.append(Token(kind: .symbol(symbol), position: SourcePosition(line: line, column: column, length: 1)))
                column += 1
                i += 1
                continue
            }
            let (c, _) = scalar(at: i)
            throw QueryError(kind: .syntax, code: "unexpected_character", message: "unexpected character '\(c.escaped(asASCII: false))'", line: line, column: column)
        }
        tokens.append(Token(kind: .end, position: SourcePosition(line: line, column: column, length: 1)))
        return tokens
    }

    /// One-character symbols by byte.
    static let symbols: [String?] = (0..<256).map { b in
        let c = Character(Unicode.Scalar(UInt8(b)))
        return "(),;*/=<>~.".contains(c) && b < 0x80 ? String(c) : nil
    }
}
