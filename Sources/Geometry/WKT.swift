// Well-known text (OGC Simple Features). Numbers are written in Swift's shortest round-trip
// form, so decode(encode(g)) == g exactly. Reading is case-insensitive, accepts Z, M and ZM
// coordinates (the extra ordinates are dropped) and both MULTIPOINT spellings.

public struct WKTError: Error, CustomStringConvertible, Sendable {
    /// Character offset (0-based) into the text.
    public let offset: Int
    public let message: String
    public var description: String { "invalid WKT at character \(offset + 1): \(message)" }
}

public enum WKT {
    public static func encode(_ geometry: Geometry) -> String {
        func number(_ d: Double) -> String {
            // "14.0" → "14": WKT has no integer/real distinction, and shorter is easier to read.
            let text = "\(d)"
            return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
        }
        func positions(_ flat: ArraySlice<Double>) -> String {
            var parts: [String] = []
            parts.reserveCapacity(flat.count / 2)
            var i = flat.startIndex
            while i + 1 < flat.endIndex {
                parts.append(number(flat[i]) + " " + number(flat[i + 1]))
                i += 2
            }
            return "(" + parts.joined(separator: ", ") + ")"
        }
        func rings(_ p: Polygon) -> String {
            "(" + (0..<p.ringCount).map { positions(p.ring($0)) }.joined(separator: ", ") + ")"
        }
        switch geometry {
        case .point(let p): return "POINT (\(number(p.lon)) \(number(p.lat)))"
        case .lineString(let l): return "LINESTRING " + positions(l.coordinates[...])
        case .polygon(let p): return p.ringCount == 0 ? "POLYGON EMPTY" : "POLYGON " + rings(p)
        case .multiPoint(let m):
            guard m.pointCount > 0 else { return "MULTIPOINT EMPTY" }
            var parts: [String] = []
            var i = 0
            while i + 1 < m.coordinates.count {
                parts.append("(\(number(m.coordinates[i])) \(number(m.coordinates[i + 1])))")
                i += 2
            }
            return "MULTIPOINT (" + parts.joined(separator: ", ") + ")"
        case .multiLineString(let m):
            guard m.lineCount > 0 else { return "MULTILINESTRING EMPTY" }
            return "MULTILINESTRING (" + (0..<m.lineCount).map { positions(m.coordinates[(2 * m.lineOffsets[$0])..<(2 * m.lineOffsets[$0 + 1])]) }.joined(separator: ", ") + ")"
        case .multiPolygon(let m):
            guard !m.polygons.isEmpty else { return "MULTIPOLYGON EMPTY" }
            return "MULTIPOLYGON (" + m.polygons.map(rings).joined(separator: ", ") + ")"
        case .collection(let parts):
            guard !parts.isEmpty else { return "GEOMETRYCOLLECTION EMPTY" }
            return "GEOMETRYCOLLECTION (" + parts.map(encode).joined(separator: ", ") + ")"
        }
    }

    public static func decode(_ text: String) throws(WKTError) -> Geometry {
        var parser = WKTParser(text: Array(text.utf8))
        let geometry = try parser.geometry(depth: 0)
        parser.skipSpaces()
        guard parser.position == parser.text.count else { throw parser.fail("unexpected text after the geometry") }
        return geometry
    }
}

private struct WKTParser {
    let text: [UInt8]
    var position = 0
    /// Ordinates per position (2, 3 or 4), set by the Z/M/ZM tag or by the first position read.
    var dimensions: Int?

    init(text: [UInt8]) { self.text = text }

    func fail(_ message: String) -> WKTError { WKTError(offset: position, message: message) }

    mutating func skipSpaces() {
        while position < text.count, [0x20, 0x09, 0x0A, 0x0D].contains(text[position]) { position += 1 }
    }

    mutating func word() -> String {
        skipSpaces()
        let start = position
        while position < text.count, (text[position] | 0x20) >= UInt8(ascii: "a"), (text[position] | 0x20) <= UInt8(ascii: "z") { position += 1 }
        return String(decoding: text[start..<position], as: UTF8.self).uppercased()
    }

    mutating func expect(_ byte: UInt8) throws(WKTError) {
        skipSpaces()
        guard position < text.count, text[position] == byte else {
            throw fail("expected '\(Character(Unicode.Scalar(byte)))'")
        }
        position += 1
    }

    mutating func peek(_ byte: UInt8) -> Bool {
        skipSpaces()
        return position < text.count && text[position] == byte
    }

    /// After the type name: an optional Z/M/ZM tag, then EMPTY or '('. True when EMPTY.
    mutating func openOrEmpty() throws(WKTError) -> Bool {
        let save = position
        let tag = word()
        switch tag {
        case "Z", "M": dimensions = 3
        case "ZM": dimensions = 4
        case "EMPTY": return true
        case "": position = save
        default: throw fail("unexpected '\(tag)'")
        }
        if dimensions != nil && tag != "" {
            let after = position
            if word() == "EMPTY" { return true }
            position = after
        }
        try expect(UInt8(ascii: "("))
        return false
    }

    mutating func number() throws(WKTError) -> Double {
        skipSpaces()
        let start = position
        while position < text.count, let c = Optional(text[position]),
              (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "-") || c == UInt8(ascii: "+") || c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E") {
            position += 1
        }
        guard position > start, let value = Double(String(decoding: text[start..<position], as: UTF8.self)), value.isFinite else {
            position = start
            throw fail("expected a number")
        }
        return value
    }

    /// One position: x y [z [m]], appended as x, y.
    mutating func position(into flat: inout [Double]) throws(WKTError) {
        let x = try number(), y = try number()
        var count = 2
        while count < 4 {
            skipSpaces()
            guard position < text.count, text[position] != UInt8(ascii: ","), text[position] != UInt8(ascii: ")") else { break }
            _ = try number()
            count += 1
        }
        if let dimensions, dimensions != count { throw fail("a position with \(count) ordinates where \(dimensions) were expected") }
        dimensions = count
        flat.append(x)
        flat.append(y)
    }

    /// "(x y, x y, …)"
    mutating func positions() throws(WKTError) -> [Double] {
        try expect(UInt8(ascii: "("))
        var flat: [Double] = []
        repeat { try position(into: &flat) } while consumeComma()
        try expect(UInt8(ascii: ")"))
        return flat
    }

    mutating func consumeComma() -> Bool {
        if peek(UInt8(ascii: ",")) { position += 1; return true }
        return false
    }

    /// The body of a polygon after its '(' : rings, then ')'.
    mutating func polygonBody() throws(WKTError) -> Polygon {
        var rings: [[Double]] = []
        repeat {
            let ring = try positions()
            guard ring.count >= 8 else { throw fail("a polygon ring needs at least 4 positions") }
            rings.append(ring)
        } while consumeComma()
        try expect(UInt8(ascii: ")"))
        return Polygon(rings: rings)
    }

    mutating func geometry(depth: Int) throws(WKTError) -> Geometry {
        guard depth < 64 else { throw fail("collections nested too deeply") }
        let start = position
        let type = word()
        switch type {
        case "POINT":
            if try openOrEmpty() { throw WKTError(offset: start, message: "POINT EMPTY cannot be represented") }
            var flat: [Double] = []
            try position(into: &flat)
            try expect(UInt8(ascii: ")"))
            return .point(Point(lon: flat[0], lat: flat[1]))
        case "LINESTRING":
            if try openOrEmpty() { return .lineString(LineString(coordinates: [])) }
            position -= 1  // positions() reads the '(' itself
            let flat = try positions()
            guard flat.count >= 4 else { throw fail("a LINESTRING needs at least 2 positions") }
            return .lineString(LineString(coordinates: flat))
        case "POLYGON":
            if try openOrEmpty() { return .polygon(Polygon(rings: [])) }
            return .polygon(try polygonBody())
        case "MULTIPOINT":
            if try openOrEmpty() { return .multiPoint(MultiPoint(coordinates: [])) }
            var flat: [Double] = []
            repeat {
                // Both "MULTIPOINT (1 2, 3 4)" and "MULTIPOINT ((1 2), (3 4))".
                if peek(UInt8(ascii: "(")) {
                    position += 1
                    try position(into: &flat)
                    try expect(UInt8(ascii: ")"))
                } else {
                    try position(into: &flat)
                }
            } while consumeComma()
            try expect(UInt8(ascii: ")"))
            return .multiPoint(MultiPoint(coordinates: flat))
        case "MULTILINESTRING":
            if try openOrEmpty() { return .multiLineString(MultiLineString(lines: [])) }
            var lines: [[Double]] = []
            repeat { lines.append(try positions()) } while consumeComma()
            try expect(UInt8(ascii: ")"))
            return .multiLineString(MultiLineString(lines: lines))
        case "MULTIPOLYGON":
            if try openOrEmpty() { return .multiPolygon(MultiPolygon(polygons: [])) }
            var polygons: [Polygon] = []
            repeat {
                try expect(UInt8(ascii: "("))
                polygons.append(try polygonBody())
            } while consumeComma()
            try expect(UInt8(ascii: ")"))
            return .multiPolygon(MultiPolygon(polygons: polygons))
        case "GEOMETRYCOLLECTION":
            if try openOrEmpty() { return .collection([]) }
            var parts: [Geometry] = []
            repeat {
                var inner = WKTParser(text: text)
                inner.position = position
                parts.append(try inner.geometry(depth: depth + 1))
                position = inner.position
            } while consumeComma()
            try expect(UInt8(ascii: ")"))
            return .collection(parts)
        case "":
            throw fail("expected a geometry type")
        default:
            throw WKTError(offset: start, message: "unknown geometry type '\(type)'")
        }
    }
}
