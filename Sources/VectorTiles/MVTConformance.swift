// A strict check of a tile's bytes against the Mapbox Vector Tile 2.1 rules, as the
// mvt-fixtures conformance suite states them: message structure and wire types, layers (name,
// unique names, version, extent), values (exactly one typed field), features (type, one
// geometry field, tags in pairs and in range) and geometry command encoding (MoveTo, LineTo and
// ClosePath with the counts each geometry type requires, no command promising more positions
// than follow, no repeated points in a line or ring, no zero-area ring, a polygon starting with
// an exterior ring).
//
// `problems(in:)` agrees with the suite: it passes every tile the suite calls valid in v2
// (but 057, whose MoveTo promises 536,870,911 positions and carries one) and finds a problem
// in every other (Tests/VectorTilesTests). With `encoder` set it also holds a tile to what an
// encoder must write, beyond what a decoder must accept: version 2, no empty layer, no
// geometry of UNKNOWN type, unique feature ids, keys and values, no repeated point of a
// multi-point, and every position within the given range (the tile and its buffer).
// The MVT encoder's tests run it on every tile they write.

import Wire

public enum MVTConformance {
    /// What the encoder rules add: the range every position must lie in.
    public struct EncoderRules: Sendable {
        public var positions: ClosedRange<Int64>
        public init(positions: ClosedRange<Int64>) { self.positions = positions }
    }

    /// Every rule the tile breaks, one line each; empty for a conforming tile.
    public static func problems(in bytes: [UInt8], encoder: EncoderRules? = nil) -> [String] {
        var checker = Checker(encoder: encoder)
        bytes.withUnsafeBufferPointer { buffer in
            do throws(MVTError) {
                try checker.tile(MVTReader(buffer))
            } catch {
                checker.problems.append(error.message)
            }
        }
        return checker.problems
    }

    struct Checker {
        let encoder: EncoderRules?
        var problems: [String] = []
        var layerNames: Set<String> = []

        mutating func tile(_ message: MVTReader) throws(MVTError) {
            var reader = message
            while let (field, wire) = try reader.field() {
                if field == 3 {
                    guard wire == 2 else { throw MVTError(message: "a layer field of wire type \(wire)") }
                    try layer(reader.message(try reader.lengthDelimited()))
                } else {
                    try reader.skip(wire)
                }
            }
        }

        mutating func layer(_ message: MVTReader) throws(MVTError) {
            var reader = message
            var version: UInt64?, name: String?, extent: UInt64 = 4096
            var keys: [String] = [], valueCount = 0
            var values: [[UInt8]] = []
            var features: [Range<Int>] = []
            func expect(_ wire: Int, _ wanted: Int, _ what: String) throws(MVTError) {
                guard wire == wanted else { throw MVTError(message: "\(what) has wire type \(wire), not \(wanted)") }
            }
            while let (field, wire) = try reader.field() {
                switch field {
                case 15: try expect(wire, 0, "a layer version"); version = try reader.varint()
                case 1: try expect(wire, 2, "a layer name"); name = try reader.string()
                case 2: try expect(wire, 2, "a feature"); features.append(try reader.lengthDelimited())
                case 3: try expect(wire, 2, "a key"); keys.append(try reader.string())
                case 4:
                    try expect(wire, 2, "a value")
                    let range = try reader.lengthDelimited()
                    try value(reader.message(range))
                    valueCount += 1
                    if encoder != nil { values.append(Array(reader.bytes[range])) }
                case 5: try expect(wire, 0, "a layer extent"); extent = try reader.varint()
                default: try reader.skip(wire)
                }
            }
            guard let name else { throw MVTError(message: "a layer has no name") }
            guard layerNames.insert(name).inserted else { throw MVTError(message: "two layers are named '\(name)'") }
            guard let version else { throw MVTError(message: "layer '\(name)' has no version") }
            guard version == 1 || version == 2 else { throw MVTError(message: "layer '\(name)' has version \(version)") }
            guard extent > 0 else { throw MVTError(message: "layer '\(name)' has extent 0") }
            if encoder != nil {
                if version != 2 { problems.append("layer '\(name)' has version \(version), not 2") }
                if features.isEmpty { problems.append("layer '\(name)' has no features") }
                if Set(keys).count != keys.count { problems.append("layer '\(name)' repeats a key") }
                if Set(values).count != values.count { problems.append("layer '\(name)' repeats a value") }
            }
            var ids: Set<UInt64> = []
            for (n, range) in features.enumerated() {
                let where_ = "layer '\(name)', feature \(n)"
                if let id = try feature(reader.message(range), keys: keys.count, values: valueCount, at: where_), encoder != nil,
                   !ids.insert(id).inserted {
                    problems.append("\(where_): id \(id) is not unique in the layer")
                }
            }
        }

        /// A Value message: exactly one field, of a known type and its wire type.
        func value(_ message: MVTReader) throws(MVTError) {
            var reader = message
            var count = 0
            while let (field, wire) = try reader.field() {
                let wanted: Int
                switch field {
                case 1: wanted = 2
                case 2: wanted = 5
                case 3: wanted = 1
                case 4, 5, 6, 7: wanted = 0
                default: throw MVTError(message: "a value of unknown type (field \(field))")
                }
                guard wire == wanted else { throw MVTError(message: "a value of field \(field) has wire type \(wire)") }
                if field == 1 { _ = try reader.string() } else { try reader.skip(wire) }
                count += 1
            }
            guard count == 1 else { throw MVTError(message: count == 0 ? "a value without a type" : "a value with \(count) fields") }
        }

        /// Checks a Feature message; returns its id.
        mutating func feature(_ message: MVTReader, keys: Int, values: Int, at place: String) throws(MVTError) -> UInt64? {
            var reader = message
            var id: UInt64?, type: UInt64?
            var tags: [UInt32] = [], geometry: [UInt32] = []
            var geometryFields = 0
            while let (field, wire) = try reader.field() {
                switch field {
                case 1:
                    guard wire == 0 else { throw MVTError(message: "\(place): the id has wire type \(wire)") }
                    id = try reader.varint()
                case 2: try MVTTile.appendUInt32s(&reader, wire, to: &tags, what: "\(place): tags")
                case 3:
                    guard wire == 0 else { throw MVTError(message: "\(place): the type has wire type \(wire)") }
                    type = try reader.varint()
                case 4:
                    geometryFields += 1
                    try MVTTile.appendUInt32s(&reader, wire, to: &geometry, what: "\(place): geometry")
                default: try reader.skip(wire)
                }
            }
            guard let type else { throw MVTError(message: "\(place) has no type") }
            guard type <= 3 else { throw MVTError(message: "\(place) has type \(type), not 0–3") }
            guard geometryFields == 1 else { throw MVTError(message: "\(place) has \(geometryFields) geometry fields, not 1") }
            guard tags.count % 2 == 0 else { throw MVTError(message: "\(place) has an odd number of tags") }
            var i = 0
            while i < tags.count {
                guard tags[i] < keys else { throw MVTError(message: "\(place): a tag names key \(tags[i]) of \(keys)") }
                guard tags[i + 1] < values else { throw MVTError(message: "\(place): a tag names value \(tags[i + 1]) of \(values)") }
                i += 2
            }
            if type == 0 {
                if encoder != nil { problems.append("\(place) has the UNKNOWN geometry type") }
                return id
            }
            try self.geometry(geometry, type: type, at: place)
            return id
        }

        /// The command grammar of each geometry type (spec 4.3).
        mutating func geometry(_ g: [UInt32], type: UInt64, at place: String) throws(MVTError) {
            var i = 0
            var x: Int64 = 0, y: Int64 = 0
            var points: Set<[Int64]> = []
            var rings = 0
            func fail(_ message: String) -> MVTError { MVTError(message: "\(place): \(message)") }
            func header() throws(MVTError) -> (id: UInt32, count: Int) {
                guard i < g.count else { throw fail("the geometry ends where a command is due") }
                let value = g[i]
                i += 1
                return (value & 7, Int(value >> 3))
            }
            func move(_ count: Int) throws(MVTError) -> [(Int64, Int64)] {
                guard count <= (g.count - i) / 2 else { throw fail("a command promises \(count) positions and \((g.count - i) / 2) follow") }
                var out: [(Int64, Int64)] = []
                out.reserveCapacity(count)
                for _ in 0..<count {
                    x &+= Int64(zigzag(g[i]))
                    y &+= Int64(zigzag(g[i + 1]))
                    i += 2
                    if let range = encoder?.positions, !range.contains(x) || !range.contains(y) {
                        problems.append("\(place): the position (\(x), \(y)) is outside \(range)")
                    }
                    out.append((x, y))
                }
                return out
            }
            guard !g.isEmpty else { throw fail("the geometry is empty") }
            while i < g.count {
                let (id, count) = try header()
                guard id == 1 else { throw fail(id == 7 ? "a part starts with ClosePath" : "a part starts with command \(id), not MoveTo") }
                switch type {
                case 1:
                    guard count > 0 else { throw fail("a MoveTo with count 0") }
                    for p in try move(count) where encoder != nil && !points.insert([p.0, p.1]).inserted {
                        problems.append("\(place): the multi-point repeats (\(p.0), \(p.1))")
                    }
                    guard i == g.count else { throw fail("a point geometry holds more than one MoveTo") }
                default:
                    guard count == 1 else { throw fail("a MoveTo of a line or ring has count \(count), not 1") }
                    let start = try move(1)[0]
                    let (lineTo, lineCount) = try header()
                    guard lineTo == 2 else { throw fail("a MoveTo of a line or ring is followed by command \(lineTo), not LineTo") }
                    guard lineCount >= (type == 3 ? 2 : 1) else { throw fail("a LineTo with count \(lineCount)") }
                    var last = start
                    var ring = [start]
                    for p in try move(lineCount) {
                        if p == last { throw fail("a line or ring repeats the point (\(p.0), \(p.1))") }
                        last = p
                        if type == 3 { ring.append(p) }
                    }
                    if type == 2 {
                        if i < g.count, g[i] & 7 == 7 { throw fail("a line contains ClosePath") }
                    } else {
                        let (close, closeCount) = try header()
                        guard close == 7 else { throw fail("a ring ends with command \(close), not ClosePath") }
                        guard closeCount == 1 else { throw fail("a ClosePath has count \(closeCount), not 1") }
                        if last == start { throw fail("a ring repeats its first point before ClosePath") }
                        let area = MVTGeometry.signedArea(ring)
                        if area == 0 { throw fail("a ring has zero area") }
                        if rings == 0 && area < 0 { throw fail("a polygon starts with an interior ring (negative area)") }
                        rings += 1
                    }
                }
            }
        }
    }
}
