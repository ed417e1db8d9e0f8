// A layer's geometries and attributes, by feature index: Swift arrays for a layer loaded from
// the store, or read in place from a mapped snapshot file (SnapshotFile.swift: a geometry from
// its shape and the polygon index's run of coordinates, attributes from their record), where
// a feature's Geometry or Attributes is made only when an answer asks for it, or the two parts
// of a layer changed by writes (a base and the written levels after it: LayerChanges.swift).
// All are collections, so `layer.geometries[i]` and `layer.properties[i]` read the same either
// way; loops over a layer's features go through `layer.indices`, which skips what writes
// replaced or deleted.

import Geometry
import SpatialIndex

public struct LayerGeometries: RandomAccessCollection, Sendable {
    private enum Storage: Sendable {
        case memory([Geometry?])
        /// Shapes (`GeometryShape`) whose coordinates are the runs of the layer's polygon index.
        case shaped(EncodedRows, runs: PolygonIndex)
    }

    private let storage: Storage
    /// The written levels' features after a base's (LayerChanges.swift); empty otherwise.
    private let tail: LevelParts<[Geometry?]>
    private let storedCount: Int

    init(_ geometries: [Geometry?]) { self.init(.memory(geometries), tail: LevelParts()) }
    init(shapes: EncodedRows, runs: PolygonIndex) { self.init(.shaped(shapes, runs: runs), tail: LevelParts()) }
    /// A base's features, then each written level's (each a layer built in memory).
    init(joining base: LayerGeometries, _ levels: [LayerGeometries]) {
        self.init(base.storage, tail: LevelParts(levels.map { level in
            if case .memory(let geometries) = level.storage { return geometries }
            return Array(level)
        }))
    }

    private init(_ storage: Storage, tail: LevelParts<[Geometry?]>) {
        self.storage = storage
        self.tail = tail
        switch storage {
        case .memory(let geometries): storedCount = geometries.count
        case .shaped(let rows, _): storedCount = rows.offsets.count - 1
        }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { storedCount + tail.count }

    /// Feature `index`'s geometry (nil when it has none). From a snapshot file, made from its
    /// shape and run at each call: keep the value rather than asking twice in a loop.
    public subscript(index: Int) -> Geometry? {
        if index >= storedCount { return tail[index - storedCount] }
        switch storage {
        case .memory(let geometries): return geometries[index]
        case .shaped(let rows, let runs): return GeometryShape.decode(rows[index], feature: index, runs: runs)
        }
    }
}

public struct LayerProperties: RandomAccessCollection, Sendable {
    private enum Storage: Sendable {
        case memory([Attributes])
        case encoded(EncodedRows, names: [String])
    }

    private let storage: Storage
    /// The written levels' features after a base's (LayerChanges.swift); empty otherwise.
    private let tail: LevelParts<[Attributes]>
    private let storedCount: Int

    init(_ properties: [Attributes]) { self.init(.memory(properties), tail: LevelParts()) }
    init(encoded rows: EncodedRows, names: [String]) { self.init(.encoded(rows, names: names), tail: LevelParts()) }
    /// A base's features, then each written level's (each a layer built in memory).
    init(joining base: LayerProperties, _ levels: [LayerProperties]) {
        self.init(base.storage, tail: LevelParts(levels.map { level in
            if case .memory(let properties) = level.storage { return properties }
            return Array(level)
        }))
    }

    private init(_ storage: Storage, tail: LevelParts<[Attributes]>) {
        self.storage = storage
        self.tail = tail
        switch storage {
        case .memory(let properties): storedCount = properties.count
        case .encoded(let rows, _): storedCount = rows.offsets.count - 1
        }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { storedCount + tail.count }

    /// Feature `index`'s attributes. From a snapshot file, decoded from its record at each call.
    public subscript(index: Int) -> Attributes {
        if index >= storedCount { return tail[index - storedCount] }
        switch storage {
        case .memory(let properties): return properties[index]
        case .encoded(let rows, let names): return AttributeRecord.decode(rows[index], names: names)
        }
    }
}

/// A column of flat values by feature index (fids, areas): one flat array, or a base's and the
/// written levels' after it.
public struct LayerColumn<Element: BitwiseCopyable & Sendable>: RandomAccessCollection, Sendable {
    let first: FlatArray<Element>
    let rest: LevelParts<FlatArray<Element>>

    init(_ values: FlatArray<Element>) {
        first = values
        rest = LevelParts()
    }

    /// A base's values, then each written level's. Neither is itself joined: a level is built
    /// whole, and a base is never a changed layer (LayerChanges.swift).
    init(joining base: LayerColumn<Element>, _ levels: [LayerColumn<Element>]) {
        first = base.first
        rest = LevelParts(levels.map(\.first))
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { first.count + rest.count }

    @inline(__always)
    public subscript(index: Int) -> Element {
        index < first.count ? first[index] : rest[index - first.count]
    }
}

/// The written levels' values after a base's, oldest first (LayerChanges.swift): an index past
/// the base's finds its level by the levels' first indices, newest first (the newest is the
/// smallest, and there are few: about log2 of the written features over the rebuild size).
struct LevelParts<Part: RandomAccessCollection & Sendable>: Sendable where Part.Index == Int {
    let parts: [Part]
    /// Each part's first index, counted from the first part's first value.
    let starts: [Int]
    let count: Int

    init() { parts = []; starts = []; count = 0 }

    init(_ parts: [Part]) {
        self.parts = parts
        var starts: [Int] = [], total = 0
        for part in parts { starts.append(total); total += part.count }
        self.starts = starts
        count = total
    }

    @inline(__always)
    subscript(index: Int) -> Part.Element {
        var part = parts.count - 1
        while index < starts[part] { part -= 1 }
        return parts[part][parts[part].startIndex + index - starts[part]]
    }
}

/// How a mapped feature's geometry is read back (SnapshotFile.swift): nothing for no geometry;
/// tag 1 (a Polygon) or 2 (a MultiPolygon), then LEB128 numbers: for a MultiPolygon its part
/// count, then per part its ring count and each ring's length in positions, the coordinates
/// being the polygon index's run (`PolygonIndex.geometry`); or tag 0 and the WKB of a geometry
/// the run cannot give back. W3's polygons take 3 or 4 bytes each.
enum GeometryShape {
    private enum Tag: UInt8 { case wkb, polygon, multiPolygon }

    /// `geometry`'s record into `record`; false when it must be WKB and does not come back from
    /// WKB exactly. `readableFromRun`: what `PolygonIndex.Builder.add` said of it.
    static func encode(_ geometry: Geometry, readableFromRun: Bool, into record: inout [UInt8]) -> Bool {
        record.removeAll(keepingCapacity: true)
        func number(_ value: Int) {
            var v = UInt64(max(value, 0))
            while v >= 0x80 {
                record.append(UInt8(truncatingIfNeeded: v) | 0x80)
                v >>= 7
            }
            record.append(UInt8(v))
        }
        func rings(_ polygon: Polygon) {
            number(polygon.ringCount)
            for r in 0..<polygon.ringCount { number(polygon.ringOffsets[r + 1] - polygon.ringOffsets[r]) }
        }
        switch geometry {
        case .polygon(let polygon) where readableFromRun:
            record.append(Tag.polygon.rawValue)
            rings(polygon)
        case .multiPolygon(let multi) where readableFromRun:
            record.append(Tag.multiPolygon.rawValue)
            number(multi.polygons.count)
            for polygon in multi.polygons { rings(polygon) }
        default:
            let bytes = WKB.encode(geometry)
            guard (try? WKB.decodeAllowingEmpty(bytes)) == geometry else { return false }
            record.append(Tag.wkb.rawValue)
            record += bytes
        }
        return true
    }

    /// Feature `feature`'s geometry from its record; a damaged record reads as none.
    static func decode(_ bytes: UnsafeRawBufferPointer, feature: Int, runs: PolygonIndex) -> Geometry? {
        guard let first = bytes.first, let tag = Tag(rawValue: first) else { return nil }
        var position = 1
        func number() -> Int? {
            var value = 0, shift = 0
            while position < bytes.count, shift < 35 {
                let byte = bytes[position]
                position += 1
                value |= Int(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
            return nil  // cut short, or more than 35 bits: no count in a file is that large
        }
        func rings() -> [Int]? {
            guard let count = number(), count <= bytes.count else { return nil }
            var lengths: [Int] = []
            for _ in 0..<count {
                guard let n = number() else { return nil }
                lengths.append(n)
            }
            return lengths
        }
        switch tag {
        case .wkb:
            return (try? WKB.decodeAllowingEmpty(UnsafeRawBufferPointer(rebasing: bytes[1...]))) ?? nil
        case .polygon:
            guard let lengths = rings(), position == bytes.count else { return nil }
            return runs.geometry(feature, rings: [lengths], multi: false)
        case .multiPolygon:
            guard let parts = number(), parts <= bytes.count else { return nil }
            var all: [[Int]] = []
            for _ in 0..<parts {
                guard let lengths = rings() else { return nil }
                all.append(lengths)
            }
            guard position == bytes.count else { return nil }
            return runs.geometry(feature, rings: all, multi: true)
        }
    }
}

/// One feature's attributes as bytes: a count (UInt16), then per attribute its name's number
/// in the layer's name list (UInt16), a tag (UInt8) and the value: nothing for null, a byte for
/// a bool, 8 bytes for an integer or a real, a length (UInt32) and UTF-8 for text and JSON.
enum AttributeRecord {
    private enum Tag: UInt8 { case null, boolFalse, boolTrue, integer, real, text, json }

    /// Appends `attributes` to `names` as needed; false when a record cannot hold them (more
    /// than 65,535 names or a text of 4 GB).
    static func encode(_ attributes: Attributes, names: inout [String], index: inout [String: Int], into record: inout [UInt8]) -> Bool {
        record.removeAll(keepingCapacity: true)
        guard attributes.count <= Int(UInt16.max) else { return false }
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { record += $0 } }
        append(UInt16(attributes.count))
        for (name, value) in attributes {
            let number: Int
            if let known = index[name] {
                number = known
            } else {
                number = names.count
                index[name] = number
                names.append(name)
            }
            guard number <= Int(UInt16.max) else { return false }
            append(UInt16(number))
            switch value {
            case .null: record.append(Tag.null.rawValue)
            case .bool(let b): record.append(b ? Tag.boolTrue.rawValue : Tag.boolFalse.rawValue)
            case .integer(let i): record.append(Tag.integer.rawValue); append(i)
            case .real(let d): record.append(Tag.real.rawValue); append(d.bitPattern)
            case .text(let s), .json(let s):
                if case .text = value { record.append(Tag.text.rawValue) } else { record.append(Tag.json.rawValue) }
                let utf8 = Array(s.utf8)
                guard utf8.count <= Int(UInt32.max) else { return false }
                append(UInt32(utf8.count))
                record += utf8
            }
        }
        return true
    }

    /// The attributes of a record; a damaged record gives what it holds up to the damage.
    static func decode(_ bytes: UnsafeRawBufferPointer, names: [String]) -> Attributes {
        var position = 0
        func read<T: FixedWidthInteger>(_ type: T.Type) -> T? {
            guard bytes.count - position >= MemoryLayout<T>.size else { return nil }
            defer { position += MemoryLayout<T>.size }
            return T(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: T.self))
        }
        var pairs: [(String, AttributeValue)] = []
        guard let count = read(UInt16.self) else { return Attributes() }
        pairs.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let number = read(UInt16.self), Int(number) < names.count, let raw = read(UInt8.self), let tag = Tag(rawValue: raw) else { break }
            let value: AttributeValue
            switch tag {
            case .null: value = .null
            case .boolFalse: value = .bool(false)
            case .boolTrue: value = .bool(true)
            case .integer:
                guard let i = read(Int64.self) else { return Attributes(pairs) }
                value = .integer(i)
            case .real:
                guard let bits = read(UInt64.self) else { return Attributes(pairs) }
                value = .real(Double(bitPattern: bits))
            case .text, .json:
                guard let length = read(UInt32.self), bytes.count - position >= Int(length) else { return Attributes(pairs) }
                let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[position..<(position + Int(length))]), as: UTF8.self)
                position += Int(length)
                value = tag == .text ? .text(text) : .json(text)
            }
            pairs.append((names[Int(number)], value))
        }
        return Attributes(pairs)
    }
}
