// GeoPackage binary geometry (GeoPackage 1.3, clause 2.1.3): a small header — magic "GP",
// version, flags, SRS id, an optional envelope — followed by standard ISO WKB.

import Geometry

enum GeoPackageBinary {
    /// Encodes with the [minx, maxx, miny, maxy] envelope (envelope code 1), little-endian.
    static func encode(_ geometry: Geometry, srsID: Int32) -> [UInt8] {
        let box = geometry.bbox
        let isEmpty = box.isEmpty
        var bytes: [UInt8] = [0x47, 0x50, 0]  // "GP", version 0 (= GeoPackage 1.x)
        // flags: bit 0 = little-endian header, bits 1–3 = envelope code, bit 4 = empty geometry.
        let envelopeCode: UInt8 = isEmpty ? 0 : 1
        bytes.append(0b0000_0001 | envelopeCode << 1 | (isEmpty ? 0b0001_0000 : 0))
        withUnsafeBytes(of: srsID.littleEndian) { bytes.append(contentsOf: $0) }
        if !isEmpty {
            for value in [box.minLon, box.maxLon, box.minLat, box.maxLat] {
                withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
            }
        }
        bytes.append(contentsOf: WKB.encode(geometry))
        return bytes
    }

    /// Decodes a blob written by any GeoPackage writer (either byte order, any envelope).
    /// nil is an empty geometry: GDAL writes POINT EMPTY with the header's empty flag and a
    /// WKB point of NaN coordinates, and the store treats it as a feature without geometry.
    /// A NaN or infinite coordinate anywhere else is an error (see WKB).
    static func decode(_ blob: UnsafeRawBufferPointer) throws(StoreError) -> Geometry? {
        guard blob.count >= 8, blob[0] == 0x47, blob[1] == 0x50 else {
            throw StoreError.corruptGeometry("not a GeoPackage geometry blob (no 'GP' magic)")
        }
        let flags = blob[3]
        if flags & 0b0010_0000 != 0 {
            throw StoreError.corruptGeometry("extended GeoPackage geometry types are not supported")
        }
        let envelopeBytes: Int
        switch (flags >> 1) & 0b111 {
        case 0: envelopeBytes = 0
        case 1: envelopeBytes = 32
        case 2, 3: envelopeBytes = 48
        case 4: envelopeBytes = 64
        default: throw StoreError.corruptGeometry("invalid envelope code in a GeoPackage geometry header")
        }
        let wkbStart = 8 + envelopeBytes
        let isEmpty = flags & 0b0001_0000 != 0
        // An empty geometry needs no body; tolerate a writer that left it out.
        if isEmpty && blob.count == wkbStart { return nil }
        guard blob.count > wkbStart else {
            throw StoreError.corruptGeometry("GeoPackage geometry blob is truncated")
        }
        do {
            return try WKB.decodeAllowingEmpty(UnsafeRawBufferPointer(rebasing: blob[wkbStart...]))
        } catch {
            throw StoreError.corruptGeometry("\(error)")
        }
    }
}
