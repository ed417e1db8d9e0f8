// The one JSON output path: every response body, CLI print and stored JSON text is written by
// this writer, straight into UTF-8 bytes. (It replaced a String-building serialiser and a
// byte serialiser in the server that had to be kept equal by a test.)
//
// Numbers. `number(_:)` writes the shortest text that reads back as the same double, with
// ".0" on integral values so they read back as doubles, and null for NaN and ±infinity (JSON
// has no spelling for them). Rounding policy for derived values, used by every caller:
//   - `metres(_:)`: to the millimetre, `(x * 1000).rounded() / 1000` (halves away from zero);
//   - `seconds(_:)`: to the tenth of a second, `(x * 10).rounded() / 10`;
//   - `coordinate(_:)`: not rounded: coordinates are data and are written as stored, so a
//     round trip through GeoJSON is exact.
// A rounded value that comes out as -0.0 is written 0.0 (a distance of "-0.0 m" is noise).
//
// Structure. `beginObject`/`key`/`endObject` and `beginArray`/`endArray` place commas (and,
// when pretty, newlines and two-space indents) themselves; the writer does not check the
// nesting: a caller that calls `endArray` for an object gets invalid JSON.
//
// Pretty form, byte for byte what the CLI has always printed: every member or element on its
// own line, indented two spaces per level, `": "` after keys, and empty containers as `[]` and
// `{}` on one line.

public struct JSONWriter {
    /// Double's `write(to:)` hands its digits to `_writeASCII` as a buffer on the stack; taking
    /// them there skips the String that `"\(d)"` builds (a heap one for the 17-digit doubles
    /// coordinates are): 2.2 times faster in a measurement of a million doubles. Should a
    /// later Swift call `write(_:)` instead, the output stays the same, only slower.
    struct Sink: TextOutputStream {
        var bytes: [UInt8]
        mutating func write(_ string: String) { bytes += string.utf8 }
        mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) { bytes.append(contentsOf: buffer) }
    }

    private var sink: Sink
    private let pretty: Bool
    private var depth = 0
    /// The innermost open container has nothing in it yet (at depth 0: nothing written yet).
    private var empty = true
    /// A key was just written, so the next value follows it with no separator.
    private var afterKey = false

    /// The JSON written so far.
    public var bytes: [UInt8] { sink.bytes }

    public init(reservingCapacity capacity: Int = 1024, pretty: Bool = false) {
        sink = Sink(bytes: [])
        sink.bytes.reserveCapacity(capacity)
        self.pretty = pretty
    }

    /// A whole value as JSON bytes.
    public static func encode(_ value: JSONValue, pretty: Bool = false) -> [UInt8] {
        var writer = JSONWriter(pretty: pretty)
        writer.value(value)
        return writer.bytes
    }

    // MARK: - Structure

    public mutating func beginObject() { open(UInt8(ascii: "{")) }
    public mutating func endObject() { close(UInt8(ascii: "}")) }
    public mutating func beginArray() { open(UInt8(ascii: "[")) }
    public mutating func endArray() { close(UInt8(ascii: "]")) }

    /// An object member's name; the next call writes its value.
    public mutating func key(_ name: String) {
        separate()
        JSONWriter.writeString(name, into: &sink.bytes)
        sink.bytes.append(UInt8(ascii: ":"))
        if pretty { sink.bytes.append(UInt8(ascii: " ")) }
        afterKey = true
    }

    private mutating func open(_ bracket: UInt8) {
        separate()
        sink.bytes.append(bracket)
        depth += 1
        empty = true
    }

    private mutating func close(_ bracket: UInt8) {
        depth -= 1
        if pretty && !empty { newline() }
        sink.bytes.append(bracket)
        empty = false
    }

    /// What goes before a value or a key: nothing after a key, else a comma unless it is the
    /// container's first, and in the pretty form a new line.
    private mutating func separate() {
        if afterKey {
            afterKey = false
            return
        }
        if !empty { sink.bytes.append(UInt8(ascii: ",")) }
        empty = false
        if pretty && depth > 0 { newline() }
    }

    private mutating func newline() {
        sink.bytes.append(UInt8(ascii: "\n"))
        for _ in 0..<(2 * depth) { sink.bytes.append(UInt8(ascii: " ")) }
    }

    // MARK: - Values

    public mutating func null() {
        separate()
        sink.bytes += "null".utf8
    }

    public mutating func bool(_ b: Bool) {
        separate()
        sink.bytes += (b ? "true" : "false").utf8
    }

    public mutating func string(_ s: String) {
        separate()
        JSONWriter.writeString(s, into: &sink.bytes)
    }

    public mutating func integer(_ i: Int64) {
        separate()
        // Digits backwards, then swapped into order in place: no String for the number
        // (`bytes[start...].reverse()` allocated a copy of the slice).
        if i < 0 { sink.bytes.append(UInt8(ascii: "-")) }
        var magnitude = i.magnitude
        var low = sink.bytes.count
        repeat {
            sink.bytes.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        var high = sink.bytes.count - 1
        while low < high {
            sink.bytes.swapAt(low, high)
            low += 1
            high -= 1
        }
    }

    /// See the number rule at the top of the file.
    public mutating func number(_ d: Double) {
        separate()
        guard d.isFinite else {
            sink.bytes += "null".utf8
            return
        }
        let start = sink.bytes.count
        d.write(to: &sink)
        // Swift writes "3.0" and "1e-05" today; the check keeps ".0" on integral values should
        // it ever write "3".
        var i = start
        while i < sink.bytes.count {
            let b = sink.bytes[i]
            if b == UInt8(ascii: ".") || b == UInt8(ascii: "e") { return }
            i += 1
        }
        sink.bytes += ".0".utf8
    }

    /// A distance or length in metres, rounded to the millimetre.
    public mutating func metres(_ x: Double) { number(Rounding.metres(x)) }

    /// A duration in seconds, rounded to a tenth of a second.
    public mutating func seconds(_ x: Double) { number(Rounding.seconds(x)) }

    /// A longitude or latitude, written as stored.
    public mutating func coordinate(_ x: Double) { number(x) }

    /// A whole tree.
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let b): bool(b)
        case .integer(let i): integer(i)
        case .double(let d): number(d)
        case .string(let s): string(s)
        case .array(let items):
            beginArray()
            for item in items { self.value(item) }
            endArray()
        case .object(let object):
            beginObject()
            for (name, item) in object {
                key(name)
                self.value(item)
            }
            endObject()
        }
    }

    /// One complete value that is JSON already (a stored fragment), copied as it is. In the
    /// pretty form its insides keep their own layout.
    public mutating func raw(_ json: [UInt8]) {
        separate()
        sink.bytes += json
    }

    // MARK: - Strings

    /// `s` quoted. Runs of bytes that need no escape are copied at once; only `"`, `\` and
    /// control characters are escaped (UTF-8 above 0x7F passes through, as JSON allows).
    /// Static so the server's log lines, which are built by hand, escape the same way.
    public static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            var runStart = 0
            for (i, byte) in bytes.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
                switch byte {
                case UInt8(ascii: "\""): out += "\\\"".utf8
                case UInt8(ascii: "\\"): out += "\\\\".utf8
                case 0x0A: out += "\\n".utf8
                case 0x0D: out += "\\r".utf8
                case 0x09: out += "\\t".utf8
                case 0x08: out += "\\b".utf8
                case 0x0C: out += "\\f".utf8
                default:
                    // Below 0x20: \u00 and two lowercase hex digits.
                    out += "\\u00".utf8
                    out.append(UInt8(ascii: "0") + byte >> 4)
                    let low = byte & 0xF
                    out.append(low < 10 ? UInt8(ascii: "0") + low : UInt8(ascii: "a") + low - 10)
                }
                runStart = i + 1
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
        }
        out.append(UInt8(ascii: "\""))
    }
}
