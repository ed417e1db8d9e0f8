// Well-known binary (OGC Simple Features / ISO 13249), the body of every GeoPackage geometry.
// Writes little-endian 2D ISO WKB. Reads either byte order, ISO Z/M/ZM type codes and
// PostGIS EWKB flags, dropping the extra ordinates; every read is bounds-checked, so
// truncated or hostile input is an error, never a crash.
//
// Non-finite numbers are refused here, where bytes become geometry: a NaN or infinite x or y
// is an error naming the byte, so nothing downstream (indexes, distances) ever sees one. The
// one exception is WKB's spelling of POINT EMPTY, a point whose x and y are both NaN: it is
// no position at all. `decodeAllowingEmpty` answers nil for it (a GeoPackage feature without
// geometry); inside a MultiPoint or a collection such a point is dropped. The dropped Z and M
// ordinates are not checked (M is NaN in some writers' output).

public struct WKBError: Error, CustomStringConvertible, Sendable {
    public let offset: Int
    public let message: String
    public var description: String { "invalid WKB at byte \(offset): \(message)" }
}

public enum WKB {
    public static func encode(_ geometry: Geometry) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(estimatedSize(geometry))
        write(geometry, into: &out)
        return out
    }

    public static func decode(_ bytes: [UInt8]) throws(WKBError) -> Geometry {
        let result = bytes.withUnsafeBytes { buffer in Result { () throws(WKBError) -> Geometry in try decode(buffer) } }
        return try result.get()
    }

    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(WKBError) -> Geometry {
        guard let geometry = try decodeAllowingEmpty(bytes) else {
            throw WKBError(offset: 0, message: "empty points (NaN coordinates) are not supported")
        }
        return geometry
    }

    /// As `decode`, but a POINT EMPTY (x and y both NaN) is nil rather than an error.
    public static func decodeAllowingEmpty(_ bytes: UnsafeRawBufferPointer) throws(WKBError) -> Geometry? {
        var reader = Reader(bytes: bytes)
        let geometry = try reader.geometry(depth: 0)
        guard reader.offset == bytes.count else {
            throw WKBError(offset: reader.offset, message: "\(bytes.count - reader.offset) bytes after the geometry")
        }
        return geometry
    }

    public static func decodeAllowingEmpty(_ bytes: [UInt8]) throws(WKBError) -> Geometry? {
        let result = bytes.withUnsafeBytes { buffer in Result { () throws(WKBError) -> Geometry? in try decodeAllowingEmpty(buffer) } }
        return try result.get()
    }

    // MARK: Writing

    static func estimatedSize(_ geometry: Geometry) -> Int {
        var doubles = 0
        geometry.forEachCoordinateArray { doubles += $0.count }
        return doubles * 8 + 64
    }

    static func write(_ geometry: Geometry, into out: inout [UInt8]) {
        func header(_ type: UInt32) {
            out.append(1)  // little-endian
            append(type, &out)
        }
        func points(_ flat: ArraySlice<Double>) {
            append(UInt32(flat.count / 2), &out)
            for value in flat { append(value.bitPattern, &out) }
        }
        func polygon(_ p: Polygon) {
            header(3)
            append(UInt32(p.ringCount), &out)
            for r in 0..<p.ringCount { points(p.ring(r)) }
        }
        switch geometry {
        case .point(let p):
            header(1)
            append(p.lon.bitPattern, &out)
            append(p.lat.bitPattern, &out)
        case .lineString(let l):
            header(2)
            points(l.coordinates[...])
        case .polygon(let p):
            polygon(p)
        case .multiPoint(let m):
            header(4)
            append(UInt32(m.pointCount), &out)
            var i = 0
            while i + 1 < m.coordinates.count {
                header(1)
                append(m.coordinates[i].bitPattern, &out)
                append(m.coordinates[i + 1].bitPattern, &out)
                i += 2
            }
        case .multiLineString(let m):
            header(5)
            append(UInt32(m.lineCount), &out)
            for i in 0..<m.lineCount {
                header(2)
                points(m.coordinates[(2 * m.lineOffsets[i])..<(2 * m.lineOffsets[i + 1])])
            }
        case .multiPolygon(let m):
            header(6)
            append(UInt32(m.polygons.count), &out)
            for p in m.polygons { polygon(p) }
        case .collection(let parts):
            header(7)
            append(UInt32(parts.count), &out)
            for part in parts { write(part, into: &out) }
        }
    }

    static func append<T: FixedWidthInteger>(_ value: T, _ out: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
    }

    // MARK: Reading

    /// Collections nested deeper than this are refused (hostile input could otherwise recurse
    /// until the stack overflows).
    static let maximumDepth = 64

    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        func fail(_ message: String) -> WKBError { WKBError(offset: offset, message: message) }

        mutating func byte() throws(WKBError) -> UInt8 {
            guard offset < bytes.count else { throw fail("unexpected end of data") }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func uint32(_ littleEndian: Bool) throws(WKBError) -> UInt32 {
            guard offset + 4 <= bytes.count else { throw fail("unexpected end of data") }
            var raw: UInt32 = 0
            withUnsafeMutableBytes(of: &raw) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + 4)])) }
            offset += 4
            return littleEndian ? UInt32(littleEndian: raw) : UInt32(bigEndian: raw)
        }

        mutating func double(_ littleEndian: Bool) throws(WKBError) -> Double {
            guard offset + 8 <= bytes.count else { throw fail("unexpected end of data") }
            var raw: UInt64 = 0
            withUnsafeMutableBytes(of: &raw) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + 8)])) }
            offset += 8
            return Double(bitPattern: littleEndian ? UInt64(littleEndian: raw) : UInt64(bigEndian: raw))
        }

        /// A count of items of at least `itemSize` bytes each: checked against what is left
        /// before anything is allocated.
        mutating func count(_ littleEndian: Bool, itemSize: Int) throws(WKBError) -> Int {
            let n = Int(try uint32(littleEndian))
            guard n <= (bytes.count - offset) / max(itemSize, 1) else {
                throw fail("count \(n) exceeds the remaining \(bytes.count - offset) bytes")
            }
            return n
        }

        /// A finite x, y pair; `start` is the byte the position began at, for the error.
        func checked(_ x: Double, _ y: Double, at start: Int) throws(WKBError) {
            guard x.isFinite && y.isFinite else {
                throw WKBError(offset: start, message: "the coordinate (\(x), \(y)) is not a finite number")
            }
        }

        /// The geometry, or nil for POINT EMPTY (x and y both NaN).
        mutating func geometry(depth: Int) throws(WKBError) -> Geometry? {
            guard depth <= WKB.maximumDepth else { throw fail("collections nested deeper than \(WKB.maximumDepth)") }
            let order = try byte()
            guard order <= 1 else { throw fail("byte order must be 0 or 1, found \(order)") }
            let le = order == 1
            var type = try uint32(le)
            var dimensions = 2
            // EWKB: flags in the high bits, and an SRID after the type.
            if type & 0x8000_0000 != 0 { dimensions += 1 }
            if type & 0x4000_0000 != 0 { dimensions += 1 }
            if type & 0x2000_0000 != 0 { _ = try uint32(le) }
            type &= 0x0FFF_FFFF
            // ISO: 1000s for Z, 2000s for M, 3000s for ZM.
            switch type / 1000 {
            case 0: break
            case 1, 2: dimensions = 3
            case 3: dimensions = 4
            default: throw fail("unknown geometry type \(type)")
            }
            type %= 1000
            let stride = 8 * dimensions

            func positions(_ reader: inout Reader) throws(WKBError) -> [Double] {
                let n = try reader.count(le, itemSize: stride)
                var flat: [Double] = []
                flat.reserveCapacity(2 * n)
                for _ in 0..<n {
                    let start = reader.offset
                    let x = try reader.double(le), y = try reader.double(le)
                    try reader.checked(x, y, at: start)
                    flat.append(x)
                    flat.append(y)
                    for _ in 2..<dimensions { _ = try reader.double(le) }
                }
                return flat
            }
            func polygonBody(_ reader: inout Reader) throws(WKBError) -> Polygon {
                let ringCount = try reader.count(le, itemSize: 4)
                var rings: [[Double]] = []
                for _ in 0..<ringCount { rings.append(try positions(&reader)) }
                return Polygon(rings: rings)
            }
            /// A member of a Multi* geometry: a whole WKB geometry of the expected type (nil for
            /// an empty point of a MultiPoint).
            func member(_ reader: inout Reader, expected: UInt32) throws(WKBError) -> Geometry? {
                let start = reader.offset
                let part = try reader.geometry(depth: depth + 1)
                let ok = switch (expected, part) {
                case (1, .point?), (1, nil), (2, .lineString?), (3, .polygon?): true
                default: false
                }
                guard ok else { throw WKBError(offset: start, message: "a multi-geometry member of the wrong type (\(part?.typeName ?? "an empty point"))") }
                return part
            }

            switch type {
            case 1:
                let start = offset
                let x = try double(le), y = try double(le)
                for _ in 2..<dimensions { _ = try double(le) }
                if x.isNaN && y.isNaN { return nil }
                try checked(x, y, at: start)
                return .point(Point(lon: x, lat: y))
            case 2:
                return .lineString(LineString(coordinates: try positions(&self)))
            case 3:
                return .polygon(try polygonBody(&self))
            case 4:
                let n = try count(le, itemSize: 5)
                var flat: [Double] = []
                for _ in 0..<n {
                    if case .point(let p)? = try member(&self, expected: 1) { flat += [p.lon, p.lat] }
                }
                return .multiPoint(MultiPoint(coordinates: flat))
            case 5:
                let n = try count(le, itemSize: 9)
                var lines: [[Double]] = []
                for _ in 0..<n {
                    if case .lineString(let l)? = try member(&self, expected: 2) { lines.append(l.coordinates) }
                }
                return .multiLineString(MultiLineString(lines: lines))
            case 6:
                let n = try count(le, itemSize: 9)
                var polygons: [Polygon] = []
                for _ in 0..<n {
                    if case .polygon(let p)? = try member(&self, expected: 3) { polygons.append(p) }
                }
                return .multiPolygon(MultiPolygon(polygons: polygons))
            case 7:
                let n = try count(le, itemSize: 5)
                var parts: [Geometry] = []
                for _ in 0..<n {
                    if let part = try geometry(depth: depth + 1) { parts.append(part) }
                }
                return .collection(parts)
            default:
                throw fail("unsupported geometry type \(type)")
            }
        }
    }
}
