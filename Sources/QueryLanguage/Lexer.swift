// The lexer: statement text → tokens with their line and column. One pass over the Unicode
// scalars, no backtracking, so lexing is linear in the input whatever it holds.

/// Where a token starts (1-based, columns count characters as the user sees them: a 'ř' is
/// one column), and how many columns it spans.
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
        case end
    }

    var kind: Kind
    var position: SourcePosition

    /// The word upper-cased, when this token is a word.
    var keyword: String? {
        if case .word(let word) = kind { word.uppercased() } else { nil }
    }

    /// How an error message names this token.
    var quoted: String {
        switch kind {
        case .word(let word): "'\(word)'"
        case .number(_, let text): "number \(text)"
        case .string(let text): "string '\(text)'"
        case .symbol(let symbol): "'\(symbol)'"
        case .end: "end of input"
        }
    }
}

enum Lexer {
    /// Longest inputs accepted; beyond it the statement is refused before any work.
    static let maxLength = 100_000

    static func tokens(_ text: String) throws(QueryError) -> [Token] {
        let scalars = Array(text.unicodeScalars)
        guard scalars.count <= maxLength else {
            throw QueryError(kind: .limit, code: "query_too_long", message: "the query is \(scalars.count) characters long; the limit is \(maxLength)", line: 1, column: 1)
        }
        var tokens: [Token] = []
        var i = 0, line = 1, column = 1

        func isWordStart(_ c: Unicode.Scalar) -> Bool { c.properties.isAlphabetic || c == "_" }
        func isWordPart(_ c: Unicode.Scalar) -> Bool { c.properties.isAlphabetic || c == "_" || ("0"..."9").contains(c) }
        func isDigit(_ c: Unicode.Scalar) -> Bool { ("0"..."9").contains(c) }

        while i < scalars.count {
            let c = scalars[i]
            if c == "\n" { line += 1; column = 1; i += 1; continue }
            if c.properties.isWhitespace { column += 1; i += 1; continue }
            // A comment runs from -- to the end of the line.
            if c == "-", i + 1 < scalars.count, scalars[i + 1] == "-" {
                while i < scalars.count && scalars[i] != "\n" { i += 1 }
                continue
            }
            let start = SourcePosition(line: line, column: column, length: 1)
            if isWordStart(c) {
                var j = i
                while j < scalars.count && isWordPart(scalars[j]) { j += 1 }
                var word = String.UnicodeScalarView()
                word.append(contentsOf: scalars[i..<j])
                tokens.append(Token(kind: .word(String(word)), position: SourcePosition(line: line, column: column, length: j - i)))
                column += j - i
                i = j
                continue
            }
            if isDigit(c) || ((c == "-" || c == "." || c == "+") && i + 1 < scalars.count && (isDigit(scalars[i + 1]) || scalars[i + 1] == ".")) {
                var j = i
                if scalars[j] == "-" || scalars[j] == "+" { j += 1 }
                while j < scalars.count && isDigit(scalars[j]) { j += 1 }
                if j < scalars.count && scalars[j] == "." { j += 1; while j < scalars.count && isDigit(scalars[j]) { j += 1 } }
                if j < scalars.count && (scalars[j] == "e" || scalars[j] == "E") {
                    var k = j + 1
                    if k < scalars.count && (scalars[k] == "-" || scalars[k] == "+") { k += 1 }
                    if k < scalars.count && isDigit(scalars[k]) {
                        while k < scalars.count && isDigit(scalars[k]) { k += 1 }
                        j = k
                    }
                }
                var text = String.UnicodeScalarView()
                text.append(contentsOf: scalars[i..<j])
                let string = String(text)
                let position = SourcePosition(line: line, column: column, length: j - i)
                guard let value = Double(string), value.isFinite else {
                    throw QueryError(kind: .syntax, code: "bad_number", message: "'\(string)' is not a number", line: line, column: column, length: j - i)
                }
                tokens.append(Token(kind: .number(value, text: string), position: position))
                column += j - i
                i = j
                continue
            }
            if c == "'" {
                // A string: '' inside it stands for one quote. It may not span lines, so a
                // missing quote is reported where the string began.
                var text = String.UnicodeScalarView()
                var j = i + 1
                var closed = false
                while j < scalars.count {
                    if scalars[j] == "'" {
                        if j + 1 < scalars.count && scalars[j + 1] == "'" { text.append("'"); j += 2; continue }
                        closed = true
                        break
                    }
                    if scalars[j] == "\n" { break }
                    text.append(scalars[j])
                    j += 1
                }
                guard closed else {
                    throw QueryError(kind: .syntax, code: "unterminated_string", message: "the string starting here has no closing quote", line: line, column: column,
                                     hint: "strings are in single quotes and end on the same line; write '' for a quote inside")
                }
                let length = j + 1 - i
                tokens.append(Token(kind: .string(String(text)), position: SourcePosition(line: line, column: column, length: length)))
                column += length
                i = j + 1
                continue
            }
            if c == "\"" {
                throw QueryError(kind: .syntax, code: "unexpected_character", message: "unexpected '\"'", line: line, column: column,
                                 hint: "strings are in single quotes: 'Praha 6'")
            }
            let two: String? = i + 1 < scalars.count ? String(String.UnicodeScalarView([c, scalars[i + 1]])) : nil
            if let two, ["<>", "!=", "<=", ">="].contains(two) {
                tokens.append(Token(kind: .symbol(two), position: SourcePosition(line: line, column: column, length: 2)))
                column += 2
                i += 2
                continue
            }
            if "(),;*/=<>~.".unicodeScalars.contains(c) {
                tokens.append(Token(kind: .symbol(String(c)), position: start))
                column += 1
                i += 1
                continue
            }
            throw QueryError(kind: .syntax, code: "unexpected_character", message: "unexpected character '\(c.escaped(asASCII: false))'", line: line, column: column)
        }
        tokens.append(Token(kind: .end, position: SourcePosition(line: line, column: column, length: 1)))
        return tokens
    }
}
