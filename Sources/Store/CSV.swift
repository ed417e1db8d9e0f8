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
    package func number(_ cell: String) -> Double? {
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
    case tooManyColumns(found: Int, limit: Int)

    package var description: String {
        switch self {
        case .empty: "the file has no header row"
        case .unterminatedQuote(let line): "line \(line): a quoted field is never closed"
        case .wrongFieldCount(let line, let expected, let found): "line \(line): expected \(expected) fields as in the header, found \(found)"
        case .tooManyColumns(let found, let limit): "the header has \(found) columns; an import takes at most \(limit)"
        }
    }
}

package enum CSV {
    /// An import's header, refused when wider than `ImportLimits.maxCSVColumns`.
    package static func checkImportHeader(_ header: [String]) throws(CSVError) {
        guard header.count <= ImportLimits.maxCSVColumns else { throw .tooManyColumns(found: header.count, limit: ImportLimits.maxCSVColumns) }
    }

    package static func parse(_ bytes: [UInt8]) throws(CSVError) -> CSVTable {
        var reader = CSVRecordReader()
        var records: [(line: Int, fields: [String])] = []
        bytes.withUnsafeBufferPointer { reader.feed($0) { records.append(($0, $1)) } }
        do {
            try reader.finish { records.append(($0, $1)) }
        } catch let error as CSVError {
            throw error
        } catch {
            throw .empty
        }
        guard let header = records.first else { throw .empty }
        let rows = Array(records.dropFirst())
        for row in rows where row.fields.count != header.fields.count {
            throw .wrongFieldCount(line: row.line, expected: header.fields.count, found: row.fields.count)
        }
        return CSVTable(header: header.fields.map { $0.trimmingSpaces }, rows: rows, decimalComma: reader.delimiter == UInt8(ascii: ";"))
    }

    /// Calls `body` with each record of the file (the header first), its line, and whether
    /// the file writes decimal commas (it is `;`-separated), reading 1 MiB at a time.
    package static func forEachRecord(path: String, _ body: (_ line: Int, _ fields: [String], _ decimalComma: Bool) throws -> Void) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw CSVError.empty }
        defer { try? handle.close() }
        var reader = CSVRecordReader()
        var decimalComma = false
        while true {
            let chunk = handle.readData(ofLength: 1 << 20)
            if chunk.isEmpty { break }
            try chunk.withUnsafeBytes { raw in
                let bytes = raw.bindMemory(to: UInt8.self)
                if !reader.started {
                    reader.start(bytes)
                    decimalComma = reader.delimiter == UInt8(ascii: ";")
                }
                try reader.feed(bytes) { line, fields in try body(line, fields, decimalComma) }
            }
        }
        try reader.finish { line, fields in try body(line, fields, decimalComma) }
    }
}

/// The CSV state machine, fed any number of chunks: quoted fields with doubled quotes, CRLF
/// or LF line ends, the delimiter detected from the first line.
package struct CSVRecordReader {
    private(set) var delimiter: UInt8 = UInt8(ascii: ",")
    private(set) var started = false
    /// Bytes of a BOM still to skip.
    private var skip = 0
    private var fields: [String] = []
    private var field: [UInt8] = []
    private var line = 1
    private var recordLine = 1
    private var inQuotes = false
    /// A quote seen inside a quoted field: a doubled quote or the field's end, as the next byte says.
    private var quotePending = false
    /// A CR ended the last record: a following LF belongs to it.
    private var afterCR = false
    private var quoteLine = 0

    package init() {}

    /// Looks at the first chunk: a UTF-8 BOM to skip, and the delimiter of the first line.
    package mutating func start(_ chunk: UnsafeBufferPointer<UInt8>) {
        started = true
        var bytes = chunk[...]
        if bytes.count >= 3 && bytes[bytes.startIndex] == 0xEF && bytes[bytes.startIndex + 1] == 0xBB && bytes[bytes.startIndex + 2] == 0xBF {
            skip = 3
            bytes = bytes.dropFirst(3)
        }
        // Semicolons are common in Czech exports (the comma is the decimal separator there).
        var commas = 0, semicolons = 0
        for byte in bytes {
            if byte == UInt8(ascii: "\n") { break }
            if byte == UInt8(ascii: ",") { commas += 1 }
            if byte == UInt8(ascii: ";") { semicolons += 1 }
        }
        delimiter = semicolons > commas ? UInt8(ascii: ";") : UInt8(ascii: ",")
    }

    package mutating func feed(_ chunk: UnsafeBufferPointer<UInt8>, _ emit: (Int, [String]) throws -> Void) rethrows {
        if !started { start(chunk) }
        let bytes = chunk.dropFirst(skip)
        skip = 0
        for byte in bytes {
            if afterCR {
                afterCR = false
                if byte == UInt8(ascii: "\n") { continue }
            }
            if quotePending {
                quotePending = false
                if byte == UInt8(ascii: "\"") {
                    field.append(byte)
                    continue
                }
                inQuotes = false
            }
            if inQuotes {
                if byte == UInt8(ascii: "\"") {
                    quotePending = true
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
                afterCR = byte == UInt8(ascii: "\r")
                try endRecord(emit)
                line += 1
                recordLine = line
            } else {
                field.append(byte)
            }
        }
    }

    /// Ends the last record; an unterminated quote is `CSVError.unterminatedQuote`.
    package mutating func finish<E: Error>(_ emit: (Int, [String]) throws(E) -> Void) throws {
        if quotePending {
            quotePending = false
            inQuotes = false
        }
        if inQuotes { throw CSVError.unterminatedQuote(line: quoteLine) }
        if !field.isEmpty || !fields.isEmpty {
            endField()
            let record = fields
            fields = []
            if !(record.count == 1 && record[0].isEmpty) { try emit(recordLine, record) }
        }
    }

    private mutating func endField() {
        fields.append(String(decoding: field, as: UTF8.self))
        field.removeAll(keepingCapacity: true)
    }

    private mutating func endRecord(_ emit: (Int, [String]) throws -> Void) rethrows {
        endField()
        let record = fields
        fields = []
        // A blank line is not a record.
        if !(record.count == 1 && record[0].isEmpty) { try emit(recordLine, record) }
    }
}
