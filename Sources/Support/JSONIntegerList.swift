// A JSON list of integers ("[1, 2, 3]") read straight from the text. Snapshots parse such lists
// for every feature at load (a line's `node_ids`, an animal's `location_ids`), so this walks
// the bytes once with no JSONValue tree and no String per number. It takes exactly what
// `JSON.parse` would read as an array of `.integer` values, and nothing else.

extension JSON {
    /// The integers of a JSON array whose every element is an integer literal that fits in
    /// Int64; nil for anything else (another JSON value, a fraction or exponent, a number out
    /// of range, malformed text). Whitespace and a leading byte-order mark are allowed, as in
    /// `JSON.parse`.
    public static func integerList(_ text: String) -> [Int64]? {
        var text = text
        return text.withUTF8 { integerList(bytes: $0) }
    }

    /// `integerList` over UTF-8 bytes.
    public static func integerList(bytes: UnsafeBufferPointer<UInt8>) -> [Int64]? {
        let n = bytes.count
        var i = 0
        if n >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { i = 3 }
        @inline(__always) func skipSpace() {
            while i < n, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
        }
        skipSpace()
        guard i < n, bytes[i] == UInt8(ascii: "[") else { return nil }
        i += 1
        var ids: [Int64] = []
        skipSpace()
        if i < n, bytes[i] == UInt8(ascii: "]") {
            i += 1
        } else {
            while true {
                skipSpace()
                let negative = i < n && bytes[i] == UInt8(ascii: "-")
                if negative { i += 1 }
                let start = i
                // Accumulated negatively, so Int64.min reads like any other value.
                var value: Int64 = 0
                while i < n, bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9") {
                    let (times10, o1) = value.multipliedReportingOverflow(by: 10)
                    let (next, o2) = times10.subtractingReportingOverflow(Int64(bytes[i] &- UInt8(ascii: "0")))
                    guard !o1, !o2 else { return nil }
                    value = next
                    i += 1
                }
                let digits = i - start
                // JSON: at least one digit, no leading zero.
                guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
                // A fraction or an exponent makes it a double, not an integer.
                if i < n, bytes[i] == UInt8(ascii: ".") || bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") { return nil }
                if negative {
                    ids.append(value)
                } else {
                    guard value != .min else { return nil }
                    ids.append(-value)
                }
                skipSpace()
                guard i < n else { return nil }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                if bytes[i] == UInt8(ascii: "]") { i += 1; break }
                return nil
            }
        }
        skipSpace()
        return i == n ? ids : nil
    }
}
