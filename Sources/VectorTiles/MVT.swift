// Mapbox Vector Tile 2.1 decoder, written against the spec's vector_tile.proto on the shared
// protobuf wire-format reader (Wire's WireReader). Every read is bounds-checked and every count
// is checked against the bytes left, so a hostile tile gives an error, never a crash, a hang or
// a huge allocation.
//
// Decoding is lazy where it pays: `MVTTile(bytes:)` only records where each layer's bytes are;
// a layer is decoded when it is asked for.
//
// Recoveries (the conformance suite's "recoverable" cases), documented here:
// - a feature without a type, or with a type outside 0–3, is of type `unknown`: its raw
//   geometry is kept, and it has no lon/lat geometry;
// - a feature without a geometry has an empty one;
// - an odd number of tags: the unpaired last tag is ignored;
// - two layers with the same name: both are kept; `layer(named:)` returns the first;
// - repeated geometry or tags fields are concatenated, as protobuf merges repeated fields.

import Foundation
import Geometry
import Wire

public struct MVTError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public var description: String { "invalid vector tile: \(message)" }
}

// The wire reader throws MVTError itself, so that its errors and the decoder's own checks go
// through one typed `throws` with nothing to convert. (`public` only because WireFailure must
// be, for the reader to be inlined; see Wire/WireReader.swift.)
extension MVTError: WireFailure {
    public init(wireMessage: String) { self.init(message: wireMessage) }
}

/// The wire reader over a tile's bytes.
typealias MVTReader = WireReader<MVTError>

/// A value in a layer's value table.
public enum MVTValue: Hashable, Sendable {
    case string(String)
    case float(Float)
    case double(Double)
    case int(Int64)
    case uint(UInt64)
    case sint(Int64)
    case bool(Bool)

    public var attribute: AttributeValue {
        switch self {
        case .string(let s): .text(s)
        case .float(let f): .real(Double(f))
        case .double(let d): .real(d)
        case .int(let i), .sint(let i): .integer(i)
        case .uint(let u): u <= UInt64(Int64.max) ? .integer(Int64(u)) : .real(Double(u))
        case .bool(let b): .bool(b)
        }
    }
}

public enum MVTGeometryType: Int, Sendable {
    case unknown = 0, point = 1, lineString = 2, polygon = 3
}

public struct MVTFeature: Sendable, Equatable {
    public var id: UInt64?
    public var type: MVTGeometryType
    /// Key and value indices in pairs, as encoded.
    public var tags: [UInt32]
    /// The raw command integers, as encoded.
    public var geometry: [UInt32]
}

public struct MVTLayer: Sendable {
    public var version: Int
    public var name: String
    public var extent: Int
    public var keys: [String]
    public var values: [MVTValue]
    public var features: [MVTFeature]

    /// A feature's attributes: its tags resolved through the key and value tables.
    public func properties(of feature: MVTFeature) -> Attributes {
        var attributes = Attributes()
        var i = 0
        while i + 1 < feature.tags.count {
            attributes[keys[Int(feature.tags[i])]] = values[Int(feature.tags[i + 1])].attribute
            i += 2
        }
        return attributes
    }

    /// Every feature in lon/lat for tile z/x/y (XYZ). Features of unknown type are left out.
    public func features(z: Int, x: Int, y: Int) throws(MVTError) -> [Feature] {
        var out: [Feature] = []
        out.reserveCapacity(features.count)
        let transform = TileTransform(z: z, x: x, y: y, extent: extent)
        for feature in features {
            guard let geometry = try MVTGeometry.decode(feature, transform: transform) else { continue }
            let id: FeatureID? = feature.id.map { $0 <= UInt64(Int64.max) ? .integer(Int64($0)) : .string(String($0)) }
            out.append(Feature(id: id, geometry: geometry, properties: properties(of: feature)))
        }
        return out
    }
}

/// A tile's layers, located but not decoded.
public struct MVTTile: Sendable {
    let bytes: [UInt8]
    /// Name and byte range of each layer, in tile order.
    public let layerRanges: [(name: String, range: Range<Int>)]

    public init(bytes: [UInt8]) throws(MVTError) {
        self.bytes = bytes
        layerRanges = try bytes.withUnsafeBufferPointer { buffer throws(MVTError) in
            var ranges: [(name: String, range: Range<Int>)] = []
            var reader = MVTReader(buffer)
            while let (field, wire) = try reader.field() {
                if field == 3 && wire == 2 {
                    let range = try reader.lengthDelimited()
                    ranges.append((try MVTTile.layerName(reader.message(range)), range))
                } else {
                    try reader.skip(wire)
                }
            }
            return ranges
        }
    }

    public var layerNames: [String] { layerRanges.map(\.name) }

    public func layer(named name: String) throws(MVTError) -> MVTLayer? {
        guard let entry = layerRanges.first(where: { $0.name == name }) else { return nil }
        return try bytes.withUnsafeBufferPointer { buffer throws(MVTError) in try MVTTile.decodeLayer(MVTReader(buffer, range: entry.range)) }
    }

    public func layers() throws(MVTError) -> [MVTLayer] {
        try bytes.withUnsafeBufferPointer { buffer throws(MVTError) in
            var out: [MVTLayer] = []
            for entry in layerRanges { out.append(try MVTTile.decodeLayer(MVTReader(buffer, range: entry.range))) }
            return out
        }
    }

    /// The number of features and of coordinate pairs (MoveTo/LineTo parameters) in the whole
    /// tile, walking the raw commands: the shared benchmark's W8 count.
    public func countFeaturesAndVertices() throws(MVTError) -> (features: Int, vertices: Int) {
        var features = 0, vertices = 0
        for layer in try layers() {
            features += layer.features.count
            for feature in layer.features {
                var i = 0
                let g = feature.geometry
                while i < g.count {
                    let command = g[i] & 7, count = Int(g[i] >> 3)
                    i += 1
                    if command == 1 || command == 2 {
                        vertices += count
                        i += 2 * count
                    }
                }
            }
        }
        return (features, vertices)
    }

    static func layerName(_ layer: MVTReader) throws(MVTError) -> String {
        var reader = layer
        var name: String?
        while let (field, wire) = try reader.field() {
            if field == 1 {
                guard wire == 2 else { throw MVTError(message: "a layer name is not a string") }
                name = try reader.string()
            } else {
                try reader.skip(wire)
            }
        }
        guard let name else { throw MVTError(message: "a layer has no name") }
        return name
    }

    static func decodeLayer(_ layer: MVTReader) throws(MVTError) -> MVTLayer {
        var reader = layer
        var version: Int?
        var name: String?
        var extent = 4096
        var keys: [String] = []
        var values: [MVTValue] = []
        var features: [MVTFeature] = []
        while let (field, wire) = try reader.field() {
            switch field {
            case 15:
                guard wire == 0 else { throw MVTError(message: "the layer version is not an integer") }
                version = Int(clamping: try reader.varint())
            case 1:
                guard wire == 2 else { throw MVTError(message: "a layer name is not a string") }
                name = try reader.string()
            case 2:
                guard wire == 2 else { throw MVTError(message: "a feature is not a message") }
                features.append(try decodeFeature(reader.message(try reader.lengthDelimited())))
            case 3:
                guard wire == 2 else { throw MVTError(message: "a key is not a string") }
                keys.append(try reader.string())
            case 4:
                guard wire == 2 else { throw MVTError(message: "a value is not a message") }
                values.append(try decodeValue(reader.message(try reader.lengthDelimited())))
            case 5:
                guard wire == 0 else { throw MVTError(message: "the layer extent is not an integer") }
                extent = Int(clamping: try reader.varint())
            default:
                try reader.skip(wire)
            }
        }
        guard let name else { throw MVTError(message: "a layer has no name") }
        guard let version else { throw MVTError(message: "layer '\(name)' has no version") }
        guard version == 1 || version == 2 else { throw MVTError(message: "layer '\(name)' has version \(version); only 1 and 2 exist") }
        guard extent > 0 else { throw MVTError(message: "layer '\(name)' has extent \(extent)") }
        for feature in features {
            var i = 0
            while i + 1 < feature.tags.count {
                guard Int(feature.tags[i]) < keys.count else { throw MVTError(message: "layer '\(name)': a tag names key \(feature.tags[i]) of \(keys.count)") }
                guard Int(feature.tags[i + 1]) < values.count else { throw MVTError(message: "layer '\(name)': a tag names value \(feature.tags[i + 1]) of \(values.count)") }
                i += 2
            }
        }
        return MVTLayer(version: version, name: name, extent: extent, keys: keys, values: values, features: features)
    }

    static func decodeFeature(_ message: MVTReader) throws(MVTError) -> MVTFeature {
        var reader = message
        var feature = MVTFeature(id: nil, type: .unknown, tags: [], geometry: [])
        while let (field, wire) = try reader.field() {
            switch field {
            case 1:
                guard wire == 0 else { throw MVTError(message: "a feature id is not an integer") }
                feature.id = try reader.varint()
            case 2:
                try appendUInt32s(&reader, wire, to: &feature.tags, what: "tags")
            case 3:
                guard wire == 0 else { throw MVTError(message: "a feature type is not an integer") }
                feature.type = MVTGeometryType(rawValue: Int(clamping: try reader.varint())) ?? .unknown
            case 4:
                try appendUInt32s(&reader, wire, to: &feature.geometry, what: "geometry")
            default:
                try reader.skip(wire)
            }
        }
        return feature
    }

    /// A repeated uint32 field: packed (wire type 2) or one value at a time (wire type 0).
    static func appendUInt32s(_ reader: inout MVTReader, _ wire: Int, to array: inout [UInt32], what: String) throws(MVTError) {
        switch wire {
        case 0: array.append(UInt32(truncatingIfNeeded: try reader.varint()))
        case 2: try reader.forEachPackedVarint { array.append(UInt32(truncatingIfNeeded: $0)) }
        default: throw MVTError(message: "\(what) have the wrong wire type \(wire)")
        }
    }

    static func decodeValue(_ message: MVTReader) throws(MVTError) -> MVTValue {
        var reader = message
        var value: MVTValue?
        while let (field, wire) = try reader.field() {
            func expect(_ expected: Int, _ what: String) throws(MVTError) {
                guard wire == expected else { throw MVTError(message: "a \(what) value has the wrong wire type \(wire)") }
            }
            switch field {
            case 1: try expect(2, "string"); value = .string(try reader.string())
            case 2: try expect(5, "float"); value = .float(Float(bitPattern: try reader.fixed32()))
            case 3: try expect(1, "double"); value = .double(Double(bitPattern: try reader.fixed64()))
            case 4: try expect(0, "int"); value = .int(Int64(bitPattern: try reader.varint()))
            case 5: try expect(0, "uint"); value = .uint(try reader.varint())
            case 6: try expect(0, "sint"); value = .sint(zigzag(try reader.varint()))
            case 7: try expect(0, "bool"); value = .bool(try reader.varint() != 0)
            default:
                throw MVTError(message: "a value of unknown type (field \(field))")
            }
        }
        guard let value else { throw MVTError(message: "a value without a type") }
        return value
    }
}

/// Tile coordinates → lon/lat through Web Mercator: a tile position is a fraction of the
/// world square, (x + px / extent) / 2^z across and likewise down.
struct TileTransform {
    let originX: Double
    let originY: Double
    let scale: Double

    init(z: Int, x: Int, y: Int, extent: Int) {
        let n = Double(1 << max(0, min(z, 30)))
        originX = Double(x) / n
        originY = Double(y) / n
        scale = 1 / (n * Double(extent))
    }

    @inline(__always)
    func lonLat(_ px: Int64, _ py: Int64) -> (Double, Double) {
        let fx = originX + Double(px) * scale
        let fy = originY + Double(py) * scale
        return (fx * 360 - 180, atan(sinh(Double.pi * (1 - 2 * fy))) * 180 / Double.pi)
    }
}

/// Geometry commands → Geometry, validated against the feature's type.
enum MVTGeometry {
    static func decode(_ feature: MVTFeature, transform: TileTransform) throws(MVTError) -> Geometry? {
        guard feature.type != .unknown else { return nil }
        let parts = try commands(feature.geometry, type: feature.type)
        guard !parts.isEmpty else { return nil }
        func flat(_ part: [(Int64, Int64)]) -> [Double] {
            var out: [Double] = []
            out.reserveCapacity(part.count * 2)
            for (x, y) in part {
                let (lon, lat) = transform.lonLat(x, y)
                out.append(lon)
                out.append(lat)
            }
            return out
        }
        switch feature.type {
        case .point:
            let points = parts.flatMap { $0 }
            if points.count == 1 { return .point(Point(lon: flat(points)[0], lat: flat(points)[1])) }
            return .multiPoint(MultiPoint(coordinates: flat(points)))
        case .lineString:
            if parts.count == 1 { return .lineString(LineString(coordinates: flat(parts[0]))) }
            return .multiLineString(MultiLineString(lines: parts.map(flat)))
        case .polygon:
            // Spec 4.3.4.4: positive surveyor's area (y down) = exterior ring; negative = hole of
            // the preceding exterior; zero-area rings carry nothing and are dropped. Going to
            // lon/lat flips y and so each ring's orientation; rings are reversed back so that
            // exteriors run counter-clockwise and holes clockwise (RFC 7946's right-hand rule).
            var polygons: [[[Double]]] = []
            for ring in parts {
                let area = signedArea(ring)
                guard area != 0 else { continue }
                var closed = Array(ring.reversed())
                if let first = closed.first { closed.append(first) }
                if area > 0 {
                    polygons.append([flat(closed)])
                } else if !polygons.isEmpty {
                    polygons[polygons.count - 1].append(flat(closed))
                } else {
                    throw MVTError(message: "a polygon starts with an interior ring")
                }
            }
            guard !polygons.isEmpty else { return nil }
            if polygons.count == 1 { return .polygon(Polygon(rings: polygons[0])) }
            return .multiPolygon(MultiPolygon(polygons: polygons.map { Polygon(rings: $0) }))
        case .unknown:
            return nil
        }
    }

    /// Twice the surveyor's area in tile coordinates (y down), without the closing position.
    static func signedArea(_ ring: [(Int64, Int64)]) -> Int64 {
        var sum: Int64 = 0
        for i in ring.indices {
            let (x1, y1) = ring[i], (x2, y2) = ring[(i + 1) % ring.count]
            sum &+= x1 &* y2 &- x2 &* y1
        }
        return sum
    }

    /// Splits the command stream into parts (points of a MoveTo; lines; rings without their
    /// closing position), checking the command grammar of each geometry type.
    static func commands(_ g: [UInt32], type: MVTGeometryType) throws(MVTError) -> [[(Int64, Int64)]] {
        var parts: [[(Int64, Int64)]] = []
        var x: Int64 = 0, y: Int64 = 0
        var i = 0
        func take(_ count: Int, into part: inout [(Int64, Int64)]) throws(MVTError) {
            guard count <= (g.count - i) / 2 else { throw MVTError(message: "a command needs \(count) positions but the geometry has \((g.count - i) / 2) left") }
            for _ in 0..<count {
                x += Int64(zigzag(g[i]))
                y += Int64(zigzag(g[i + 1]))
                part.append((x, y))
                i += 2
            }
        }
        while i < g.count {
            let command = g[i] & 7, count = Int(g[i] >> 3)
            i += 1
            guard command == 1 else {
                throw MVTError(message: command == 7 ? "a geometry part starts with ClosePath" : "a geometry part starts with command \(command), not MoveTo")
            }
            switch type {
            case .point:
                guard count >= 1 else { throw MVTError(message: "a MoveTo with count 0") }
                var part: [(Int64, Int64)] = []
                try take(count, into: &part)
                parts.append(part)
            case .lineString, .polygon:
                guard count == 1 else { throw MVTError(message: "a MoveTo of a line or ring must have count 1, not \(count)") }
                var part: [(Int64, Int64)] = []
                try take(1, into: &part)
                guard i < g.count, g[i] & 7 == 2 else { throw MVTError(message: "a MoveTo of a line or ring must be followed by LineTo") }
                let lineCount = Int(g[i] >> 3)
                i += 1
                guard lineCount >= 1 else { throw MVTError(message: "a LineTo with count 0") }
                try take(lineCount, into: &part)
                if type == .polygon {
                    guard i < g.count, g[i] & 7 == 7 else { throw MVTError(message: "a ring does not end with ClosePath") }
                    guard g[i] >> 3 == 1 else { throw MVTError(message: "a ClosePath must have count 1, not \(g[i] >> 3)") }
                    i += 1
                    guard part.count >= 3 else { throw MVTError(message: "a ring with fewer than 3 positions") }
                } else if i < g.count, g[i] & 7 == 7 {
                    throw MVTError(message: "a line contains ClosePath")
                }
                parts.append(part)
            case .unknown:
                return []
            }
        }
        return parts
    }
}

/// A feature read in place: its tags and geometry stay in the tile's bytes and are decoded on
/// the fly, with no arrays built. For callers that walk whole tile sets (the W8 benchmark, a
/// server counting or filtering features); `MVTTile.layers()` is the general API.
public struct MVTFeatureView {
    public let id: UInt64?
    public let type: MVTGeometryType
    let bytes: UnsafeBufferPointer<UInt8>
    let tags: Range<Int>
    let geometry: Range<Int>

    /// Calls `body` with each (key index, value index) pair; an unpaired last tag is ignored.
    public func forEachTag(_ body: (Int, Int) -> Void) throws(MVTError) {
        var reader = MVTReader(bytes, range: tags)
        while !reader.isAtEnd {
            let key = UInt32(truncatingIfNeeded: try reader.varint())
            guard !reader.isAtEnd else { return }
            body(Int(key), Int(UInt32(truncatingIfNeeded: try reader.varint())))
        }
    }

    /// Decodes every MoveTo/LineTo position into the first entries of `positions` (x, y in
    /// tile coordinates; the array only grows, so one buffer serves a whole tile set) and
    /// returns their number. ClosePath adds none.
    public func decodeGeometry(into positions: inout [Int64]) throws(MVTError) -> Int {
        // Every value takes at least one byte: the byte count bounds the values.
        if positions.count < geometry.count { positions = [Int64](repeating: 0, count: max(geometry.count, 2 * positions.count)) }
        return try positions.withUnsafeMutableBufferPointer { out throws(MVTError) -> Int in
            var reader = MVTReader(bytes, range: geometry)
            var x: Int64 = 0, y: Int64 = 0
            var n = 0
            while !reader.isAtEnd {
                let command = UInt32(truncatingIfNeeded: try reader.varint())
                let id = command & 7, count = Int(command >> 3)
                guard id == 1 || id == 2 else {
                    guard id == 7 else { throw MVTError(message: "unknown geometry command \(id)") }
                    continue
                }
                guard count <= (reader.end - reader.position) / 2 else { throw MVTError(message: "a command needs \(count) positions but the geometry ends") }
                for _ in 0..<count {
                    x += Int64(zigzag(UInt32(truncatingIfNeeded: try reader.varint())))
                    y += Int64(zigzag(UInt32(truncatingIfNeeded: try reader.varint())))
                    out[2 * n] = x
                    out[2 * n + 1] = y
                    n += 1
                }
            }
            return n
        }
    }
}


extension MVTTile {
    /// Walks every feature of every layer in place (see `MVTFeatureView`), with each layer's
    /// name, extent, keys and values decoded once. A feature that repeats its tags or geometry
    /// field (protobuf would merge them) is refused here; `layers()` merges them.
    public func forEachFeature(_ body: (_ layer: MVTLayerHeader, _ feature: MVTFeatureView) throws(MVTError) -> Void) throws(MVTError) {
        try bytes.withUnsafeBufferPointer { buffer throws(MVTError) in
            for entry in layerRanges {
                var reader = MVTReader(buffer, range: entry.range)
                let header = try MVTTile.decodeLayerHeader(reader, name: entry.name)
                while let (field, wire) = try reader.field() {
                    guard field == 2 && wire == 2 else {
                        try reader.skip(wire)
                        continue
                    }
                    var inner = reader.message(try reader.lengthDelimited())
                    var id: UInt64?
                    var type = MVTGeometryType.unknown
                    var tags: Range<Int>?, geometry: Range<Int>?
                    while let (f, w) = try inner.field() {
                        switch (f, w) {
                        case (1, 0): id = try inner.varint()
                        case (3, 0): type = MVTGeometryType(rawValue: Int(clamping: try inner.varint())) ?? .unknown
                        case (2, 2):
                            guard tags == nil else { throw MVTError(message: "a feature repeats its tags field") }
                            tags = try inner.lengthDelimited()
                        case (4, 2):
                            guard geometry == nil else { throw MVTError(message: "a feature repeats its geometry field") }
                            geometry = try inner.lengthDelimited()
                        case (1, _), (2, _), (3, _), (4, _): throw MVTError(message: "a feature field of the wrong wire type \(w)")
                        default: try inner.skip(w)
                        }
                    }
                    try body(header, MVTFeatureView(id: id, type: type, bytes: buffer, tags: tags ?? 0..<0, geometry: geometry ?? 0..<0))
                }
            }
        }
    }

    /// A layer's version, extent, keys and values, without its features (its name is known).
    static func decodeLayerHeader(_ layer: MVTReader, name: String) throws(MVTError) -> MVTLayerHeader {
        var reader = layer
        var header = MVTLayerHeader(version: 0, name: name, extent: 4096, keys: [], values: [])
        var version: Int?
        while let (field, wire) = try reader.field() {
            switch (field, wire) {
            case (15, 0): version = Int(clamping: try reader.varint())
            case (3, 2): header.keys.append(try reader.string())
            case (4, 2): header.values.append(try decodeValue(reader.message(try reader.lengthDelimited())))
            case (5, 0): header.extent = Int(clamping: try reader.varint())
            case (15, _), (1, 0), (1, 1), (1, 5), (3, _), (4, _), (5, _): throw MVTError(message: "a layer field of the wrong wire type \(wire)")
            default: try reader.skip(wire)
            }
        }
        guard let version, version == 1 || version == 2 else { throw MVTError(message: "layer '\(name)' has no valid version") }
        header.version = version
        return header
    }
}

/// What `forEachFeature` tells about a layer.
public struct MVTLayerHeader: Sendable {
    public var version: Int
    public var name: String
    public var extent: Int
    public var keys: [String]
    public var values: [MVTValue]
}
