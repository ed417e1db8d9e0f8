// A small RFC 4180 CSV reader: quoted fields with doubled quotes, CRLF or LF line ends,
// comma or semicolon delimiters (detected from the header). Rows remember their line number
// so import errors can point at them.

import Foundation
import Geometry

package struct CSVTable {
    package var header: [String]
    /// Each row with the 1-based line number it starts on.
    package var rows: [(line: Int, fields: [String])]
    /// Semicolon-separated files (Excel in a Czech locale) write numbers with a decimal comma.
    var decimalComma = false

    /// A cell as a number: "14.42", or "14,42" in a file with a decimal comma.
    func number(_ cell: String) -> Double? {
        let trimmed = cell.trimmingSpaces
        if let value = Double(trimmed) { return value }
        guard decimalComma, !trimmed.contains("."), trimmed.filter({ $0 == "," }).count == 1 else { return nil }
        return Double(trimmed.replacingOccurrences(of: ",", with: "."))
    }
}

package enum CSVError: Error, CustomStringConvertible {
    case empty
    case unterminatedQuote(line: Int)
    case wrongFieldCount(line: Int, expected: Int, found: Int)

    package var description: String {
        switch self {
        case .empty: "the file has no header row"
        case .unterminatedQuote(let line): "line \(line): a quoted field is never closed"
        case .wrongFieldCount(let line, let expected, let found): "line \(line): expected \(expected) fields as in the header, found \(found)"
        }
    }
}

package enum CSV {
    package static func parse(_ bytes: [UInt8]) throws(CSVError) -> CSVTable {
        var start = 0
        if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { start = 3 }  // UTF-8 BOM
        let delimiter = detectDelimiter(bytes, from: start)

        var records: [(line: Int, fields: [String])] = []
        var fields: [String] = []
        var field: [UInt8] = []
        var line = 1
        var recordLine = 1
        var inQuotes = false
        var quoteLine = 0
        var i = start
        func endField() {
            fields.append(String(decoding: field, as: UTF8.self))
            field.removeAll(keepingCapacity: true)
        }
        func endRecord() {
            endField()
            // A blank line is not a record.
            if !(fields.count == 1 && fields[0].isEmpty) { records.append((recordLine, fields)) }
            fields = []
        }
        while i < bytes.count {
            let byte = bytes[i]
            if inQuotes {
                if byte == UInt8(ascii: "\"") {
                    if i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "\"") {
                        field.append(byte)
                        i += 1
                    } else {
                        inQuotes = false
                    }
                } else {
                    if byte == UInt8(ascii: "\n") { line += 1 }
                    field.append(byte)
                }
            } else if byte == UInt8(ascii: "\"") && field.isEmpty {
                inQuotes = true
                quoteLine = line
            } else if byte == delimiter {
                endField()
            } else if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                if byte == UInt8(ascii: "\r") && i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "\n") { i += 1 }
                endRecord()
                line += 1
                recordLine = line
            } else {
                field.append(byte)
            }
            i += 1
        }
        if inQuotes { throw .unterminatedQuote(line: quoteLine) }
        if !field.isEmpty || !fields.isEmpty { endRecord() }

        guard let header = records.first else { throw .empty }
        let rows = Array(records.dropFirst())
        for row in rows where row.fields.count != header.fields.count {
            throw .wrongFieldCount(line: row.line, expected: header.fields.count, found: row.fields.count)
        }
        return CSVTable(header: header.fields.map { $0.trimmingSpaces }, rows: rows, decimalComma: delimiter == UInt8(ascii: ";"))
    }

    /// Semicolons are common in Czech exports (the comma is the decimal separator there).
    private static func detectDelimiter(_ bytes: [UInt8], from start: Int) -> UInt8 {
        var commas = 0, semicolons = 0
        for byte in bytes[start...] {
            if byte == UInt8(ascii: "\n") { break }
            if byte == UInt8(ascii: ",") { commas += 1 }
            if byte == UInt8(ascii: ";") { semicolons += 1 }
        }
        return semicolons > commas ? UInt8(ascii: ";") : UInt8(ascii: ",")
    }
}
