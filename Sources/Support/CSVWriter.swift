// CSV as RFC 4180 writes it (text/csv): a header line, then a line per row, each ended by CRLF;
// a field is quoted when it holds a comma, a quote, CR or LF (a quote inside doubled), or starts
// or ends with a space. Values are written as JSON writes them (`JSONWriter`, so numbers read
// back exactly), except that text is bare, a missing value is an empty field, and lists and
// objects are their JSON text in one field.

public struct CSVWriter {
    public private(set) var bytes: [UInt8] = []

    public init(reservingCapacity capacity: Int = 1024) { bytes.reserveCapacity(capacity) }

    public mutating func row(_ fields: [JSONValue]) {
        for (i, field) in fields.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            switch field {
            case .null: break
            case .string(let s): text(s)
            case .bool, .integer, .double: bytes += JSONWriter.encode(field)
            case .array, .object: text(String(decoding: JSONWriter.encode(field), as: UTF8.self))
            }
        }
        bytes += [0x0D, 0x0A]
    }

    public mutating func header(_ names: [String]) { row(names.map { .string($0) }) }

    private mutating func text(_ s: String) {
        let utf8 = Array(s.utf8)
        let quoted = utf8.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }
            || utf8.first == UInt8(ascii: " ") || utf8.last == UInt8(ascii: " ")
        guard quoted else { bytes += utf8; return }
        bytes.append(UInt8(ascii: "\""))
        for b in utf8 {
            if b == UInt8(ascii: "\"") { bytes.append(b) }
            bytes.append(b)
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
