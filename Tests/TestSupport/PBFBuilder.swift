// A tiny OSM PBF writer for tests: one raw (uncompressed) OSMData blob holding one primitive
// block of plain nodes and ways, with the block's granularity and offsets as given, so a test
// can write a file with exactly the corruption it needs.

public enum PBFBuilder {
    public struct Node {
        public var id: Int64
        /// Latitude and longitude in the block's units (granularity nanodegrees, 100 by default).
        public var lat: Int64
        public var lon: Int64
        public init(id: Int64, lat: Int64, lon: Int64) {
            self.id = id
            self.lat = lat
            self.lon = lon
        }
    }

    /// The bytes of a .osm.pbf file: nodes, then one way through `way` tagged highway=footway.
    public static func file(nodes: [Node], way: [Int64], granularity: Int64? = nil) -> [UInt8] {
        var group: [UInt8] = []
        for node in nodes {
            group += bytes(1, sint(1, node.id) + sint(8, node.lat) + sint(9, node.lon))
        }
        var refs: [UInt8] = []
        var previous: Int64 = 0
        for ref in way {
            refs += varint(zigzag(ref &- previous))
            previous = ref
        }
        // Strings 1 and 2 of the table: highway=footway.
        group += bytes(3, uint(1, 10) + bytes(2, varint(1)) + bytes(3, varint(2)) + bytes(8, refs))
        var block = bytes(1, bytes(1, []) + bytes(1, Array("highway".utf8)) + bytes(1, Array("footway".utf8)))
        block += bytes(2, group)
        if let granularity { block += uint(17, UInt64(bitPattern: granularity)) }
        let blob = bytes(1, block)
        let header = bytes(1, Array("OSMData".utf8)) + uint(3, UInt64(blob.count))
        let length = UInt32(header.count)
        return [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + header + blob
    }

    static func varint(_ value: UInt64) -> [UInt8] {
        var v = value
        var out: [UInt8] = []
        while v >= 0x80 {
            out.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
        return out
    }

    static func zigzag(_ v: Int64) -> UInt64 { UInt64(bitPattern: (v << 1) ^ (v >> 63)) }
    static func uint(_ field: Int, _ value: UInt64) -> [UInt8] { varint(UInt64(field << 3)) + varint(value) }
    static func sint(_ field: Int, _ value: Int64) -> [UInt8] { uint(field, zigzag(value)) }
    static func bytes(_ field: Int, _ payload: [UInt8]) -> [UInt8] { varint(UInt64(field << 3 | 2)) + varint(UInt64(payload.count)) + payload }
}
