// Fuzzes the GeoPackage geometry blob decoder (Sources/Store/GeoPackageBinary.swift): the
// header (magic, flags, envelope) and the WKB after it. A decoded geometry must come back the
// same through the encoder, as a feature written to the store and read again.

@testable import Store
import Geometry

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let blob = UnsafeRawBufferPointer(start: start, count: count)
    guard let geometry = try? GeoPackageBinary.decode(blob) else { return 0 }
    let encoded = GeoPackageBinary.encode(geometry, srsID: 4326)
    // Bytes, not geometries, are compared: NaN coordinates are never == to themselves.
    let again = encoded.withUnsafeBytes { buffer in try? GeoPackageBinary.decode(buffer) }
    guard let again else { FuzzSupport.fail("GeoPackageBinary.encode wrote a blob decode refuses") }
    guard GeoPackageBinary.encode(again, srsID: 4326) == encoded else { FuzzSupport.fail("blob round trip changed the geometry") }
    return 0
}
