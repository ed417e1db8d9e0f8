// OpenStreetMap input for walking networks: `.osm` XML (plain or gzip) and `.osm.pbf`, read
// into nodes and ways, then turned into a graph by a profile. Both readers are written here:
// the PBF one on the protobuf wire format and zlib blobs (dense nodes included), the XML one as
// a small scanner for the few elements a network needs.

import CZlib
import Foundation
import Geometry

public struct OSMError: Error, CustomStringConvertible, Sendable {
    public let file: String
    public let message: String
    public var description: String { "\(file): \(message)" }
}

/// The nodes and ways of an OSM extract (relations are not used for networks).
public struct OSMData: Sendable {
    /// Node id → position in `lons`/`lats`.
    public var nodeIndex: [Int64: Int32] = [:]
    public var lons: [Double] = []
    public var lats: [Double] = []
    public var ways: [OSMWay] = []

    public init() {}

    mutating func addNode(id: Int64, lon: Double, lat: Double) {
        nodeIndex[id] = Int32(lons.count)
        lons.append(lon)
        lats.append(lat)
    }
}

public struct OSMWay: Sendable {
    public var id: Int64
    public var refs: [Int64]
    public var tags: [String: String]
}

/// Which ways a network keeps, and in which directions.
public enum OSMProfile: String, Sendable, CaseIterable {
    /// Walking: footways, paths, steps, tracks and the streets people walk along; not
    /// motorways; `access=no|private` and `foot=no` are respected (unless `foot` allows it);
    /// one-way restrictions apply only when tagged for pedestrians (`oneway:foot`).
    case foot
    /// Every way with a `highway` tag, both directions (the shared benchmark's W7 network).
    case anyHighway = "any"

    static let footHighways: Set<String> = [
        "footway", "path", "pedestrian", "steps", "track", "living_street", "residential", "service",
        "unclassified", "road", "tertiary", "tertiary_link", "secondary", "secondary_link",
        "primary", "primary_link", "trunk", "trunk_link", "cycleway", "bridleway", "corridor", "platform",
    ]

    /// nil: the way is not part of the network; otherwise whether it is one-way (forward).
    func direction(of tags: [String: String]) -> (keep: Bool, oneway: Bool) {
        guard let highway = tags["highway"] else { return (false, false) }
        switch self {
        case .anyHighway:
            return (true, false)
        case .foot:
            guard OSMProfile.footHighways.contains(highway) else { return (false, false) }
            let foot = tags["foot"]
            if foot == "no" { return (false, false) }
            if let access = tags["access"], access == "no" || access == "private" {
                guard let foot, ["yes", "designated", "permissive"].contains(foot) else { return (false, false) }
            }
            return (true, tags["oneway:foot"] == "yes")
        }
    }
}

extension Graph {
    /// The network of an OSM extract under a profile: consecutive refs of every kept way become
    /// edges (haversine metres), ways meet at shared node ids. Refs without a node are skipped.
    public static func fromOSM(_ data: OSMData, profile: OSMProfile) -> Graph {
        var index: [Int32: Int] = [:]
        var lons: [Double] = [], lats: [Double] = [], ids: [Int64] = []
        var edges: [Edge] = []
        for way in data.ways {
            let (keep, oneway) = profile.direction(of: way.tags)
            guard keep else { continue }
            var previous: Int?
            for ref in way.refs {
                guard let source = data.nodeIndex[ref] else { continue }
                let node: Int
                if let known = index[source] { node = known } else {
                    node = lons.count
                    index[source] = node
                    lons.append(data.lons[Int(source)])
                    lats.append(data.lats[Int(source)])
                    ids.append(ref)
                }
                if let previous {
                    edges.append(Edge(u: previous, v: node, metres: Geodesy.haversine(lon1: lons[previous], lat1: lats[previous], lon2: lons[node], lat2: lats[node]), oneway: oneway))
                }
                previous = node
            }
        }
        return Graph(lons: lons, lats: lats, nodeIDs: ids, edges: edges)
    }
}

public enum OSMReader {
    /// Reads `.osm.pbf`, `.osm` or `.osm.gz`, by content.
    public static func read(path: String) throws(OSMError) -> OSMData {
        let file = (path as NSString).lastPathComponent
        guard let contents = FileManager.default.contents(atPath: path) else { throw OSMError(file: file, message: "no such file") }
        let bytes = [UInt8](contents)
        if bytes.starts(with: [0x1F, 0x8B]) {
            return try readXML(try gunzip(bytes, file: file), file: file)
        }
        if bytes.first == UInt8(ascii: "<") || bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            return try readXML(bytes, file: file)
        }
        return try readPBF(bytes, file: file)
    }

    // MARK: PBF

    public static func readPBF(_ bytes: [UInt8], file: String) throws(OSMError) -> OSMData {
        var data = OSMData()
        var offset = 0
        var blocks = 0
        func fail(_ message: String) -> OSMError { OSMError(file: file, message: "\(message) (at byte \(offset))") }
        while offset < bytes.count {
            guard bytes.count - offset >= 4 else { throw fail("truncated blob header length") }
            let headerLength = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            offset += 4
            guard headerLength > 0, headerLength <= 64 * 1024, headerLength <= bytes.count - offset else { throw fail("bad blob header length \(headerLength)") }
            var type = "", dataSize = 0
            var header = Wire(bytes: bytes, position: offset, end: offset + headerLength)
            while let (field, wire) = try header.field(file) {
                switch (field, wire) {
                case (1, 2): type = try header.string(file)
                case (3, 0): dataSize = Int(clamping: try header.varint(file))
                default: try header.skip(wire, file)
                }
            }
            offset += headerLength
            guard dataSize > 0, dataSize <= 32 * 1024 * 1024, dataSize <= bytes.count - offset else { throw fail("bad blob size \(dataSize)") }
            let blobRange = offset..<(offset + dataSize)
            offset += dataSize
            guard type == "OSMData" else {
                guard type == "OSMHeader" else { throw fail("unknown blob type '\(type)'") }
                continue
            }
            let block = try blobContents(bytes, blobRange, file: file)
            try readPrimitiveBlock(block, into: &data, file: file)
            blocks += 1
        }
        guard blocks > 0 || offset > 0 else { throw OSMError(file: file, message: "empty file") }
        return data
    }

    static func blobContents(_ bytes: [UInt8], _ range: Range<Int>, file: String) throws(OSMError) -> [UInt8] {
        var blob = Wire(bytes: bytes, position: range.lowerBound, end: range.upperBound)
        var raw: Range<Int>?, compressed: Range<Int>?, rawSize = 0
        while let (field, wire) = try blob.field(file) {
            switch (field, wire) {
            case (1, 2): raw = try blob.lengthDelimited(file)
            case (2, 0): rawSize = Int(clamping: try blob.varint(file))
            case (3, 2): compressed = try blob.lengthDelimited(file)
            default: try blob.skip(wire, file)
            }
        }
        if let raw { return Array(bytes[raw]) }
        guard let compressed else { throw OSMError(file: file, message: "a blob in an unsupported compression (only raw and zlib)") }
        guard rawSize > 0, rawSize <= 64 * 1024 * 1024 else { throw OSMError(file: file, message: "a blob with a bad raw size \(rawSize)") }
        var output = [UInt8](repeating: 0, count: rawSize)
        var produced = uLong(rawSize)
        let status = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                uncompress(out.baseAddress, &produced, input.baseAddress.map { $0 + compressed.lowerBound }, uLong(compressed.count))
            }
        }
        guard status == Z_OK, Int(produced) == rawSize else { throw OSMError(file: file, message: "a corrupt zlib blob (status \(status))") }
        return output
    }

    static func readPrimitiveBlock(_ block: [UInt8], into data: inout OSMData, file: String) throws(OSMError) {
        var strings: [String] = []
        var groups: [Range<Int>] = []
        var granularity: Int64 = 100, latOffset: Int64 = 0, lonOffset: Int64 = 0
        var reader = Wire(bytes: block, position: 0, end: block.count)
        while let (field, wire) = try reader.field(file) {
            switch (field, wire) {
            case (1, 2):
                var table = Wire(bytes: block, position: 0, end: 0)
                let range = try reader.lengthDelimited(file)
                table = Wire(bytes: block, position: range.lowerBound, end: range.upperBound)
                while let (f, w) = try table.field(file) {
                    if f == 1 && w == 2 { strings.append(try table.string(file)) } else { try table.skip(w, file) }
                }
            case (2, 2): groups.append(try reader.lengthDelimited(file))
            case (17, 0): granularity = Int64(clamping: try reader.varint(file))
            case (19, 0): latOffset = Int64(bitPattern: try reader.varint(file))
            case (20, 0): lonOffset = Int64(bitPattern: try reader.varint(file))
            default: try reader.skip(wire, file)
            }
        }
        func coordinate(_ offset: Int64, _ value: Int64) -> Double { 1e-9 * Double(offset + granularity * value) }
        func string(_ i: UInt64) throws(OSMError) -> String {
            guard i < UInt64(strings.count) else { throw OSMError(file: file, message: "string index \(i) outside the table of \(strings.count)") }
            return strings[Int(i)]
        }
        for group in groups {
            var g = Wire(bytes: block, position: group.lowerBound, end: group.upperBound)
            while let (field, wire) = try g.field(file) {
                switch (field, wire) {
                case (1, 2):  // a plain node
                    var n = Wire(bytes: block, position: 0, end: 0)
                    let range = try g.lengthDelimited(file)
                    n = Wire(bytes: block, position: range.lowerBound, end: range.upperBound)
                    var id: Int64 = 0, lat: Int64 = 0, lon: Int64 = 0
                    while let (f, w) = try n.field(file) {
                        switch (f, w) {
                        case (1, 0): id = zigzag(try n.varint(file))
                        case (8, 0): lat = zigzag(try n.varint(file))
                        case (9, 0): lon = zigzag(try n.varint(file))
                        default: try n.skip(w, file)
                        }
                    }
                    data.addNode(id: id, lon: coordinate(lonOffset, lon), lat: coordinate(latOffset, lat))
                case (2, 2):  // dense nodes: delta-coded ids and coordinates
                    let range = try g.lengthDelimited(file)
                    var d = Wire(bytes: block, position: range.lowerBound, end: range.upperBound)
                    var ids: [Int64] = [], lats: [Int64] = [], lons: [Int64] = []
                    while let (f, w) = try d.field(file) {
                        switch (f, w) {
                        case (1, 2): ids = try d.packedSigned(file)
                        case (8, 2): lats = try d.packedSigned(file)
                        case (9, 2): lons = try d.packedSigned(file)
                        default: try d.skip(w, file)
                        }
                    }
                    guard ids.count == lats.count, ids.count == lons.count else { throw OSMError(file: file, message: "dense nodes with \(ids.count) ids, \(lats.count) latitudes and \(lons.count) longitudes") }
                    var id: Int64 = 0, lat: Int64 = 0, lon: Int64 = 0
                    for i in ids.indices {
                        id &+= ids[i]; lat &+= lats[i]; lon &+= lons[i]
                        data.addNode(id: id, lon: coordinate(lonOffset, lon), lat: coordinate(latOffset, lat))
                    }
                case (3, 2):  // a way
                    let range = try g.lengthDelimited(file)
                    var w = Wire(bytes: block, position: range.lowerBound, end: range.upperBound)
                    var id: Int64 = 0
                    var keys: [UInt64] = [], values: [UInt64] = [], refs: [Int64] = []
                    while let (f, wt) = try w.field(file) {
                        switch (f, wt) {
                        case (1, 0): id = Int64(bitPattern: try w.varint(file))
                        case (2, 2): keys = try w.packedUnsigned(file)
                        case (3, 2): values = try w.packedUnsigned(file)
                        case (8, 2): refs = try w.packedSigned(file)
                        default: try w.skip(wt, file)
                        }
                    }
                    guard keys.count == values.count else { throw OSMError(file: file, message: "way \(id) has \(keys.count) keys and \(values.count) values") }
                    var tags: [String: String] = [:]
                    for (k, v) in zip(keys, values) { tags[try string(k)] = try string(v) }
                    var ref: Int64 = 0
                    var absolute: [Int64] = []
                    absolute.reserveCapacity(refs.count)
                    for delta in refs {
                        ref &+= delta
                        absolute.append(ref)
                    }
                    data.ways.append(OSMWay(id: id, refs: absolute, tags: tags))
                default:
                    try g.skip(wire, file)
                }
            }
        }
    }

    static func zigzag(_ v: UInt64) -> Int64 { Int64(bitPattern: (v >> 1) ^ (0 &- (v & 1))) }

    // MARK: XML

    static func gunzip(_ bytes: [UInt8], file: String) throws(OSMError) -> [UInt8] {
        var stream = z_stream()
        guard inflateInit2_(&stream, 15 + 32, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw OSMError(file: file, message: "cannot initialise zlib")
        }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count * 8)
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        var input = bytes
        let status: Int32 = input.withUnsafeMutableBufferPointer { inBuffer in
            stream.next_in = inBuffer.baseAddress
            stream.avail_in = UInt32(inBuffer.count)
            var result: Int32 = Z_OK
            while result == Z_OK {
                result = chunk.withUnsafeMutableBufferPointer { out in
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(out.count)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                output.append(contentsOf: chunk[0..<(chunk.count - Int(stream.avail_out))])
                if output.count > 1 << 31 { return Z_MEM_ERROR }
                if result == Z_BUF_ERROR { return stream.avail_in == 0 ? Z_DATA_ERROR : Z_OK }
            }
            return result
        }
        guard status == Z_STREAM_END else {
            throw OSMError(file: file, message: status == Z_DATA_ERROR ? "the gzip stream is truncated or corrupt" : "cannot inflate (zlib status \(status))")
        }
        return output
    }

    /// Scans `<node id lat lon>`, `<way id>` with `<nd ref>` and `<tag k v>`. Anything else is
    /// skipped. A file that does not end with `</osm>` is truncated.
    public static func readXML(_ bytes: [UInt8], file: String) throws(OSMError) -> OSMData {
        var data = OSMData()
        var way: OSMWay?
        var sawEnd = false
        var i = 0
        let n = bytes.count
        while i < n {
            guard bytes[i] == UInt8(ascii: "<") else { i += 1; continue }
            var j = i + 1
            while j < n && bytes[j] != UInt8(ascii: ">") { j += 1 }
            guard j < n else { throw OSMError(file: file, message: "the XML is truncated (an element is not closed)") }
            let element = bytes[(i + 1)..<j]
            i = j + 1
            let closing = element.first == UInt8(ascii: "/")
            let name = element.dropFirst(closing ? 1 : 0).prefix { $0 != 0x20 && $0 != UInt8(ascii: "/") && $0 != 0x0A && $0 != 0x09 && $0 != 0x0D }
            switch (closing ? "/" : "") + String(decoding: name, as: UTF8.self) {
            case "node":
                guard let id = attribute(element, "id").flatMap({ Int64($0) }),
                      let lat = attribute(element, "lat").flatMap({ Double($0) }),
                      let lon = attribute(element, "lon").flatMap({ Double($0) }) else {
                    throw OSMError(file: file, message: "a node without id, lat or lon")
                }
                data.addNode(id: id, lon: lon, lat: lat)
            case "way":
                guard let id = attribute(element, "id").flatMap({ Int64($0) }) else { throw OSMError(file: file, message: "a way without an id") }
                way = OSMWay(id: id, refs: [], tags: [:])
                if element.last == UInt8(ascii: "/") { data.ways.append(OSMWay(id: id, refs: [], tags: [:])); way = nil }
            case "nd":
                if way != nil, let ref = attribute(element, "ref").flatMap({ Int64($0) }) { way?.refs.append(ref) }
            case "tag":
                if way != nil, let k = attribute(element, "k"), let v = attribute(element, "v") { way?.tags[k] = v }
            case "/way":
                if let finished = way { data.ways.append(finished) }
                way = nil
            case "/osm":
                sawEnd = true
            default:
                break
            }
        }
        guard sawEnd else { throw OSMError(file: file, message: "the XML is truncated (no closing </osm>)") }
        return data
    }

    /// The value of `name="…"` in an element, with XML's predefined entities decoded.
    static func attribute(_ element: ArraySlice<UInt8>, _ name: String) -> String? {
        let pattern = Array(" \(name)=".utf8)
        var i = element.startIndex
        while i + pattern.count < element.endIndex {
            if element[i] == pattern[0] && element[i..<(i + pattern.count)].elementsEqual(pattern) {
                let quote = element[i + pattern.count]
                guard quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else { return nil }
                let start = i + pattern.count + 1
                guard let end = element[start...].firstIndex(of: quote) else { return nil }
                let raw = String(decoding: element[start..<end], as: UTF8.self)
                guard raw.contains("&") else { return raw }
                return raw.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
                    .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
                    .replacingOccurrences(of: "&amp;", with: "&")
            }
            i += 1
        }
        return nil
    }
}

/// The protobuf wire format, bounds-checked (the PBF reader's only parser).
struct Wire {
    let bytes: [UInt8]
    var position: Int
    let end: Int

    mutating func field(_ file: String) throws(OSMError) -> (Int, Int)? {
        guard position < end else { return nil }
        let key = try varint(file)
        guard key >> 3 > 0 else { throw OSMError(file: file, message: "field number 0") }
        return (Int(truncatingIfNeeded: key >> 3), Int(key & 7))
    }

    mutating func varint(_ file: String) throws(OSMError) -> UInt64 {
        var result: UInt64 = 0, shift: UInt64 = 0
        while position < end {
            let b = bytes[position]
            position += 1
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
            guard shift < 64 else { throw OSMError(file: file, message: "varint longer than 10 bytes") }
        }
        throw OSMError(file: file, message: "truncated varint")
    }

    mutating func lengthDelimited(_ file: String) throws(OSMError) -> Range<Int> {
        let length = try varint(file)
        guard length <= UInt64(end - position) else { throw OSMError(file: file, message: "a field of \(length) bytes overruns its message") }
        defer { position += Int(length) }
        return position..<(position + Int(length))
    }

    mutating func string(_ file: String) throws(OSMError) -> String {
        String(decoding: bytes[try lengthDelimited(file)], as: UTF8.self)
    }

    mutating func packedUnsigned(_ file: String) throws(OSMError) -> [UInt64] {
        let range = try lengthDelimited(file)
        var inner = Wire(bytes: bytes, position: range.lowerBound, end: range.upperBound)
        var out: [UInt64] = []
        while inner.position < inner.end { out.append(try inner.varint(file)) }
        return out
    }

    mutating func packedSigned(_ file: String) throws(OSMError) -> [Int64] {
        try packedUnsigned(file).map(OSMReader.zigzag)
    }

    mutating func skip(_ wire: Int, _ file: String) throws(OSMError) {
        switch wire {
        case 0: _ = try varint(file)
        case 1: guard end - position >= 8 else { throw OSMError(file: file, message: "truncated fixed64") }; position += 8
        case 2: _ = try lengthDelimited(file)
        case 5: guard end - position >= 4 else { throw OSMError(file: file, message: "truncated fixed32") }; position += 4
        default: throw OSMError(file: file, message: "unsupported wire type \(wire)")
        }
    }
}
