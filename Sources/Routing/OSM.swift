// OpenStreetMap input for walking networks: `.osm` XML (plain or gzip) and `.osm.pbf`, read
// into nodes and ways, then turned into a graph by a profile. Both readers are written here:
// the PBF one on the shared protobuf wire reader and inflater (module Wire; dense nodes
// included), the XML one as a small scanner for the few elements a network needs.

import Foundation
import Geometry
import Wire

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

    /// Why a node's position is unusable ("node 7: latitude 95.5 is outside -90…90"), or nil.
    /// Both readers check every node here, where the text or varints become coordinates: a NaN
    /// or infinite one used to trap in the edge index (`vltava route` died), and one out of
    /// range silently moved a node, and so a route, somewhere else.
    static func problem(id: Int64, lon: Double, lat: Double) -> String? {
        do {
            _ = try Point.checked(lon: lon, lat: lat)
            return nil
        } catch {
            // The rule's words without its swap hint: a file's node is not a typed position.
            return "node \(id): \(error.message)"
        }
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
    public func direction(of tags: [String: String]) -> (keep: Bool, oneway: Bool) {
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
        return try read(bytes: [UInt8](contents), file: file)
    }

    /// Reads a file's bytes: PBF, XML or gzipped XML, by content.
    public static func read(bytes: [UInt8], file: String) throws(OSMError) -> OSMData {
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
        // The PBF code throws plain wire errors; the file name is added here, once.
        do {
            return try bytes.withUnsafeBufferPointer { buffer throws(WireError) in try readBlobs(buffer) }
        } catch {
            throw OSMError(file: file, message: error.message)
        }
    }

    /// The blobs of a PBF file: each a length-prefixed BlobHeader, then its Blob.
    static func readBlobs(_ bytes: UnsafeBufferPointer<UInt8>) throws(WireError) -> OSMData {
        var data = OSMData()
        var offset = 0
        var blocks = 0
        func fail(_ message: String) -> WireError { WireError("\(message) (at byte \(offset))") }
        let inflater: Inflater
        do { inflater = try Inflater() } catch { throw WireError(describe(error, "a zlib blob")) }
        while offset < bytes.count {
            guard bytes.count - offset >= 4 else { throw fail("truncated blob header length") }
            let headerLength = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            offset += 4
            guard headerLength > 0, headerLength <= 64 * 1024, headerLength <= bytes.count - offset else { throw fail("bad blob header length \(headerLength)") }
            var type = "", dataSize = 0
            var header = PBFReader(bytes, range: offset..<(offset + headerLength))
            while let (field, wire) = try header.field() {
                switch (field, wire) {
                case (1, 2): type = try header.string()
                case (3, 0): dataSize = Int(clamping: try header.varint())
                default: try header.skip(wire)
                }
            }
            offset += headerLength
            guard dataSize > 0, dataSize <= 32 * 1024 * 1024, dataSize <= bytes.count - offset else { throw fail("bad blob size \(dataSize)") }
            let blob = PBFReader(bytes, range: offset..<(offset + dataSize))
            offset += dataSize
            guard type == "OSMData" else {
                guard type == "OSMHeader" else { throw fail("unknown blob type '\(type)'") }
                continue
            }
            let block = try blobContents(blob, inflater: inflater)
            try block.withUnsafeBufferPointer { buffer throws(WireError) in try readPrimitiveBlock(PBFReader(buffer), into: &data) }
            blocks += 1
        }
        guard blocks > 0 || offset > 0 else { throw WireError("empty file") }
        return data
    }

    static func blobContents(_ blob: PBFReader, inflater: Inflater) throws(WireError) -> [UInt8] {
        var reader = blob
        var raw: Range<Int>?, compressed: Range<Int>?, rawSize = 0
        while let (field, wire) = try reader.field() {
            switch (field, wire) {
            case (1, 2): raw = try reader.lengthDelimited()
            case (2, 0): rawSize = Int(clamping: try reader.varint())
            case (3, 2): compressed = try reader.lengthDelimited()
            default: try reader.skip(wire)
            }
        }
        if let raw { return Array(reader.bytes[raw]) }
        guard let compressed else { throw WireError("a blob in an unsupported compression (only raw and zlib)") }
        guard rawSize > 0, rawSize <= 64 * 1024 * 1024 else { throw WireError("a blob with a bad raw size \(rawSize)") }
        do {
            return try inflater.inflateZlib(UnsafeBufferPointer(rebasing: reader.bytes[compressed]), size: rawSize)
        } catch {
            throw WireError(describe(error, "a zlib blob"))
        }
    }

    static func readPrimitiveBlock(_ block: PBFReader, into data: inout OSMData) throws(WireError) {
        var strings: [String] = []
        var groups: [Range<Int>] = []
        var granularity: Int64 = 100, latOffset: Int64 = 0, lonOffset: Int64 = 0
        var reader = block
        while let (field, wire) = try reader.field() {
            switch (field, wire) {
            case (1, 2):
                var table = reader.message(try reader.lengthDelimited())
                while let (f, w) = try table.field() {
                    if f == 1 && w == 2 { strings.append(try table.string()) } else { try table.skip(w) }
                }
            case (2, 2): groups.append(try reader.lengthDelimited())
            case (17, 0): granularity = Int64(clamping: try reader.varint())
            case (19, 0): latOffset = Int64(bitPattern: try reader.varint())
            case (20, 0): lonOffset = Int64(bitPattern: try reader.varint())
            default: try reader.skip(wire)
            }
        }
        // Nanodegrees per unit: 0 would put every node of the block on one spot.
        guard granularity > 0 else { throw WireError("a block with granularity 0 (it must be at least 1 nanodegree)") }
        // Wrapping arithmetic: hostile offsets or granularity give nonsense coordinates, not a
        // trap, and `add` refuses them by the node's id (out of range, or a corrupt granularity).
        func coordinate(_ offset: Int64, _ value: Int64) -> Double { 1e-9 * Double(offset &+ granularity &* value) }
        func add(_ data: inout OSMData, id: Int64, lon: Double, lat: Double) throws(WireError) {
            if let problem = OSMData.problem(id: id, lon: lon, lat: lat) { throw WireError(problem) }
            data.addNode(id: id, lon: lon, lat: lat)
        }
        func string(_ i: UInt64) throws(WireError) -> String {
            guard i < UInt64(strings.count) else { throw WireError("string index \(i) outside the table of \(strings.count)") }
            return strings[Int(i)]
        }
        for group in groups {
            var g = reader.message(group)
            while let (field, wire) = try g.field() {
                switch (field, wire) {
                case (1, 2):  // a plain node
                    var n = g.message(try g.lengthDelimited())
                    var id: Int64 = 0, lat: Int64 = 0, lon: Int64 = 0
                    while let (f, w) = try n.field() {
                        switch (f, w) {
                        case (1, 0): id = zigzag(try n.varint())
                        case (8, 0): lat = zigzag(try n.varint())
                        case (9, 0): lon = zigzag(try n.varint())
                        default: try n.skip(w)
                        }
                    }
                    try add(&data, id: id, lon: coordinate(lonOffset, lon), lat: coordinate(latOffset, lat))
                case (2, 2):  // dense nodes: delta-coded ids and coordinates
                    var d = g.message(try g.lengthDelimited())
                    var ids: [Int64] = [], lats: [Int64] = [], lons: [Int64] = []
                    while let (f, w) = try d.field() {
                        switch (f, w) {
                        case (1, 2): ids = try packedSigned(&d)
                        case (8, 2): lats = try packedSigned(&d)
                        case (9, 2): lons = try packedSigned(&d)
                        default: try d.skip(w)
                        }
                    }
                    guard ids.count == lats.count, ids.count == lons.count else { throw WireError("dense nodes with \(ids.count) ids, \(lats.count) latitudes and \(lons.count) longitudes") }
                    var id: Int64 = 0, lat: Int64 = 0, lon: Int64 = 0
                    for i in ids.indices {
                        id &+= ids[i]; lat &+= lats[i]; lon &+= lons[i]
                        try add(&data, id: id, lon: coordinate(lonOffset, lon), lat: coordinate(latOffset, lat))
                    }
                case (3, 2):  // a way
                    var w = g.message(try g.lengthDelimited())
                    var id: Int64 = 0
                    var keys: [UInt64] = [], values: [UInt64] = [], refs: [Int64] = []
                    while let (f, wt) = try w.field() {
                        switch (f, wt) {
                        case (1, 0): id = Int64(bitPattern: try w.varint())
                        case (2, 2): keys = try packedUnsigned(&w)
                        case (3, 2): values = try packedUnsigned(&w)
                        case (8, 2): refs = try packedSigned(&w)
                        default: try w.skip(wt)
                        }
                    }
                    guard keys.count == values.count else { throw WireError("way \(id) has \(keys.count) keys and \(values.count) values") }
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
                    try g.skip(wire)
                }
            }
        }
    }

    /// A packed uint64 field (the caller has checked the wire type).
    static func packedUnsigned(_ reader: inout PBFReader) throws(WireError) -> [UInt64] {
        var out: [UInt64] = []
        try reader.forEachPackedVarint { out.append($0) }
        return out
    }

    /// A packed sint64 field (the caller has checked the wire type).
    static func packedSigned(_ reader: inout PBFReader) throws(WireError) -> [Int64] {
        var out: [Int64] = []
        try reader.forEachPackedVarint { out.append(zigzag($0)) }
        return out
    }

    /// OSM's words for an inflate error of `what` ("the gzip stream", "a zlib blob").
    static func describe(_ error: InflateError, _ what: String) -> String {
        switch error {
        case .setup(let message): message
        case .tooLarge(let limit): "\(what) inflates to more than \(limit) bytes"
        case .corrupt(let detail): "\(what) is truncated or corrupt (\(detail))"
        }
    }

    // MARK: XML

    /// 2 GiB: the cap on an inflated `.osm.gz`, far above an extract a walking network is built
    /// from, and a bound against gzip bombs.
    static let xmlLimit = 1 << 31

    static func gunzip(_ bytes: [UInt8], file: String) throws(OSMError) -> [UInt8] {
        do {
            return try Inflater().inflate(bytes, limit: xmlLimit)
        } catch {
            throw OSMError(file: file, message: describe(error, "the gzip stream"))
        }
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
                      let latText = attribute(element, "lat"), let lonText = attribute(element, "lon") else {
                    throw OSMError(file: file, message: "a node without id, lat or lon")
                }
                guard let lat = Double(latText), let lon = Double(lonText) else {
                    throw OSMError(file: file, message: "node \(id): lat '\(latText)' or lon '\(lonText)' is not a number")
                }
                if let problem = OSMData.problem(id: id, lon: lon, lat: lat) { throw OSMError(file: file, message: problem) }
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

/// The wire reader over a PBF file or block; its errors get the file name in `readPBF`.
typealias PBFReader = WireReader<WireError>
