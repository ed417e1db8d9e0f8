// A small JSON reader (RFC 8259); writing is JSONWriter's. Written here rather than taken from
// Foundation because importers need what JSONSerialization does not give: the line and column
// of a syntax error, integers kept apart from doubles, and object keys in their source order
// (a layer's columns appear in the order its file gave them).

/// A parsed JSON value.
public indirect enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// The number as a Double, for an integer or a double.
    public var number: Double? {
        switch self {
        case .integer(let i): Double(i)
        case .double(let d): d
        default: nil
        }
    }

    public var string: String? {
        if case .string(let s) = self { s } else { nil }
    }
}

/// A JSON object: members in source order. A duplicate key keeps its first position and its
/// last value.
public struct JSONObject: Hashable, Sendable, Sequence {
    public private(set) var keys: [String] = []
    private var values: [JSONValue] = []
    private var positions: [String: Int] = [:]

    public init() {}

    public init(_ pairs: [(String, JSONValue)]) {
        for (key, value) in pairs { self[key] = value }
    }

    public var count: Int { keys.count }

    public subscript(key: String) -> JSONValue? {
        get { positions[key].map { values[$0] } }
        set {
            if let i = positions[key] {
                if let newValue {
                    values[i] = newValue
                } else {
                    keys.remove(at: i)
                    values.remove(at: i)
                    positions = Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, $0) })
                }
            } else if let newValue {
                positions[key] = keys.count
                keys.append(key)
                values.append(newValue)
            }
        }
    }

    public func makeIterator() -> Zip2Sequence<[String], [JSONValue]>.Iterator {
        zip(keys, values).makeIterator()
    }

    public static func == (a: JSONObject, b: JSONObject) -> Bool { a.keys == b.keys && a.values == b.values }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(keys)
        hasher.combine(values)
    }
}

/// A syntax error, with the 1-based line and column of the offending character.
public struct JSONError: Error, CustomStringConvertible, Sendable {
    public let line: Int
    public let column: Int
    public let message: String

    public var description: String { "line \(line), column \(column): \(message)" }
}

public enum JSON {
    /// Nesting deeper than this is refused rather than risking the stack.
    public static let maximumDepth = 512

    public static func parse(_ bytes: [UInt8]) throws(JSONError) -> JSONValue {
        let result = bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(JSONError) -> JSONValue in
                var parser = Parser(bytes: buffer)
                return try parser.parseDocument()
            }
        }
        return try result.get()
    }

    public static func parse(_ text: String) throws(JSONError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// As `parse`, and the member names that appear more than once in one object (which
    /// `JSONObject` merges, keeping the last value): for bodies where a repeated name is an
    /// error (a beacon twice in a scan).
    public static func parseReportingDuplicates(_ text: String) throws(JSONError) -> (value: JSONValue, duplicateKeys: [String]) {
        let bytes = Array(text.utf8)
        let result = bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(JSONError) -> (JSONValue, [String]) in
                var parser = Parser(bytes: buffer)
                let value = try parser.parseDocument()
                return (value, parser.duplicateKeys)
            }
        }
        return try result.get()
    }

    /// `value` as JSON text, through `JSONWriter` (compact, or `pretty` with two-space indents).
    public static func serialize(_ value: JSONValue, pretty: Bool = false) -> String {
        String(decoding: JSONWriter.encode(value, pretty: pretty), as: UTF8.self)
    }
}

/// A recursive-descent parser over UTF-8 bytes that tracks lines for its errors.
private struct Parser {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0
    var line = 1
    var lineStart = 0
    var depth = 0
    /// Member names seen twice in one object, in order.
    var duplicateKeys: [String] = []

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        // A UTF-8 byte-order mark is not JSON, but editors write it; skip it.
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { position = 3; lineStart = 3 }
    }

    func error(_ message: String, at offset: Int? = nil) -> JSONError {
        let at = offset ?? position
        // Columns count characters, not bytes: skip UTF-8 continuation bytes.
        var column = 1
        var i = lineStart
        while i < at && i < bytes.count {
            if bytes[i] & 0xC0 != 0x80 { column += 1 }
            i += 1
        }
        return JSONError(line: line, column: column, message: message)
    }

    func describeCurrent() -> String {
        guard position < bytes.count else { return "the end of the input" }
        let b = bytes[position]
        if b >= 0x20 && b < 0x7F { return "'\(Character(Unicode.Scalar(b)))'" }
        return "byte 0x\(String(b, radix: 16))"
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0D: position += 1
            case 0x0A:
                position += 1
                line += 1
                lineStart = position
            default: return
            }
        }
    }

    mutating func parseDocument() throws(JSONError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        if position < bytes.count { throw error("unexpected \(describeCurrent()) after the JSON value") }
        return value
    }

    mutating func parseValue() throws(JSONError) -> JSONValue {
        guard position < bytes.count else { throw error("unexpected end of input, expected a value") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected \(describeCurrent()), expected a value")
        }
    }

    mutating func literal(_ word: StaticString) throws(JSONError) {
        let length = word.utf8CodeUnitCount
        let matches = position + length <= bytes.count && (0..<length).allSatisfy { bytes[position + $0] == word.utf8Start[$0] }
        guard matches else { throw error("invalid literal, expected '\(word)'") }
        position += length
    }

    mutating func enter() throws(JSONError) {
        depth += 1
        if depth > JSON.maximumDepth { throw error("nesting deeper than \(JSON.maximumDepth) levels") }
    }

    mutating func parseObject() throws(JSONError) -> JSONValue {
        try enter()
        position += 1
        var object = JSONObject()
        skipWhitespace()
        if position < bytes.count && bytes[position] == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            return .object(object)
        }
        while true {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                throw error("unexpected \(describeCurrent()), expected a member name in double quotes")
            }
            let key = try parseString()
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
                throw error("unexpected \(describeCurrent()), expected ':' after the member name")
            }
            position += 1
            skipWhitespace()
            if object[key] != nil { duplicateKeys.append(key) }
            object[key] = try parseValue()
            skipWhitespace()
            guard position < bytes.count else { throw error("unexpected end of input, expected ',' or '}' after an object member") }
            if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
            if bytes[position] == UInt8(ascii: "}") { position += 1; break }
            throw error("unexpected \(describeCurrent()), expected ',' or '}' after an object member")
        }
        depth -= 1
        return .object(object)
    }

    mutating func parseArray() throws(JSONError) -> JSONValue {
        try enter()
        position += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if position < bytes.count && bytes[position] == UInt8(ascii: "]") {
            position += 1
            depth -= 1
            return .array(items)
        }
        while true {
            skipWhitespace()
            items.append(try parseValue())
            skipWhitespace()
            guard position < bytes.count else { throw error("unexpected end of input, expected ',' or ']' after an array element") }
            if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
            if bytes[position] == UInt8(ascii: "]") { position += 1; break }
            throw error("unexpected \(describeCurrent()), expected ',' or ']' after an array element")
        }
        depth -= 1
        return .array(items)
    }

    mutating func parseString() throws(JSONError) -> String {
        let start = position
        position += 1
        var scalars = String.UnicodeScalarView()
        var runStart = position
        // Copies a run of plain bytes at once; escapes are decoded one by one.
        func flush(_ scalars: inout String.UnicodeScalarView, _ from: Int, _ to: Int) {
            if to > from {
                scalars.append(contentsOf: String(decoding: UnsafeBufferPointer(rebasing: bytes[from..<to]), as: UTF8.self).unicodeScalars)
            }
        }
        while true {
            guard position < bytes.count else { throw error("unterminated string", at: start) }
            let b = bytes[position]
            if b == UInt8(ascii: "\"") {
                defer { position += 1 }
                // Most strings hold no escape: made in one step, not scalar by scalar.
                if runStart == start + 1 { return String(decoding: UnsafeBufferPointer(rebasing: bytes[runStart..<position]), as: UTF8.self) }
                flush(&scalars, runStart, position)
                return String(scalars)
            }
            if b < 0x20 { throw error("control character in a string (escape it)") }
            if b != UInt8(ascii: "\\") { position += 1; continue }
            flush(&scalars, runStart, position)
            position += 1
            guard position < bytes.count else { throw error("unterminated string", at: start) }
            let escape = bytes[position]
            position += 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800...0xDBFF).contains(code) {
                    // A high surrogate must be followed by an escaped low surrogate.
                    guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else {
                        throw error("unpaired surrogate \\u\(String(code, radix: 16)) in a string")
                    }
                    position += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw error("invalid low surrogate in a string") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(code) {
                    throw error("unpaired surrogate \\u\(String(code, radix: 16)) in a string")
                }
                guard let scalar = Unicode.Scalar(code) else { throw error("invalid \\u escape") }
                scalars.append(scalar)
            default:
                throw error("invalid escape '\\\(Character(Unicode.Scalar(escape)))' in a string", at: position - 2)
            }
            runStart = position
        }
    }

    mutating func hex4() throws(JSONError) -> UInt32 {
        guard position + 4 <= bytes.count else { throw error("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[position]
            let digit: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = b - UInt8(ascii: "A") + 10
            default: throw error("invalid hex digit in a \\u escape")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    mutating func parseNumber() throws(JSONError) -> JSONValue {
        let start = position
        var isInteger = true
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        func digits(_ p: inout Int) -> Int {
            let s = p
            while p < bytes.count, bytes[p] >= UInt8(ascii: "0"), bytes[p] <= UInt8(ascii: "9") { p += 1 }
            return p - s
        }
        let intDigits = digits(&position)
        guard intDigits > 0 else { throw error("invalid number: expected a digit") }
        if intDigits > 1 && bytes[position - intDigits] == UInt8(ascii: "0") { throw error("invalid number: leading zero", at: start) }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard digits(&position) > 0 else { throw error("invalid number: expected a digit after '.'") }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            guard digits(&position) > 0 else { throw error("invalid number: expected a digit in the exponent") }
        }
        let digitsText = UnsafeBufferPointer(rebasing: bytes[start..<position])
        // A plain decimal (a coordinate) read exactly without a String: one of 17 digits was a
        // heap String per number, and a positions body is mostly such numbers.
        if !isInteger, let d = DecimalText.exactValue(digitsText) { return .double(d) }
        let text = String(decoding: digitsText, as: UTF8.self)
        if isInteger, let i = Int64(text) { return .integer(i) }
        guard let d = Double(text), d.isFinite else { throw error("number out of range", at: start) }
        return .double(d)
    }
}
