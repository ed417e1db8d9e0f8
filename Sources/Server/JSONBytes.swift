// JSONValue straight to UTF-8 bytes for response bodies. Geometry's `JSON.serialize` builds a
// String scalar by scalar, which was the largest single cost of a `nearest` answer under load;
// the server needs bytes anyway. Same output as `JSON.serialize` (compact form): numbers through
// `JSON.formatNumber`'s rule, the same escapes. (A candidate to move into Geometry/JSON.swift.)

import Geometry

enum JSONBytes {
    static func serialize(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1024)
        write(value, into: &out)
        return out
    }

    static func write(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out += "null".utf8
        case .bool(let b): out += (b ? "true" : "false").utf8
        case .integer(let i): out += String(i).utf8
        case .double(let d): writeNumber(d, into: &out)
        case .string(let s): writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                write(item, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            var first = true
            for (key, item) in object {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                write(item, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// As `JSON.formatNumber`: the shortest text that reads back as the same double, with ".0"
    /// on integral values, null for non-finite ones; the checks scan bytes, where
    /// `String.contains` went through Foundation's string search (15 % of a `nearest` answer).
    static func writeNumber(_ d: Double, into out: inout [UInt8]) {
        guard d.isFinite else { out += "null".utf8; return }
        let text = "\(d)"
        out += text.utf8
        if !text.utf8.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") }) { out += ".0".utf8 }
    }

    /// Runs of bytes that need no escape are copied at once; only `"`, `\` and control
    /// characters are escaped (UTF-8 above 0x7F passes through, as JSON allows).
    static func writeString(_ s: String, into out: inout [UInt8]) {
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
                    let hex = Array("0123456789abcdef".utf8)
                    out += "\\u00".utf8
                    out.append(hex[Int(byte >> 4)])
                    out.append(hex[Int(byte & 0xF)])
                }
                runStart = i + 1
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
        }
        out.append(UInt8(ascii: "\""))
    }
}
