// Fuzzes the WKB decoder (Sources/Geometry/WKB.swift): any bytes end in a geometry or a
// WKBError. A decoded geometry must survive the round trip (encode, decode, encode gives the
// same bytes) and be writable as GeoJSON, as an answer would write it.

import Geometry
import Support

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = FuzzSupport.bytes(start, count)
    guard let geometry = try? WKB.decode(bytes) else { return 0 }
    let encoded = WKB.encode(geometry)
    // Bytes, not geometries, are compared: NaN coordinates are never == to themselves.
    guard let again = try? WKB.decode(encoded) else { FuzzSupport.fail("WKB.encode wrote bytes WKB.decode refuses") }
    guard WKB.encode(again) == encoded else { FuzzSupport.fail("WKB round trip changed the geometry") }
    var writer = JSONWriter()
    writer.geometry(geometry)
    _ = geometry.bbox
    return 0
}
