// Fuzzes the JSON reader and the GeoJSON decoder (Sources/Geometry/JSON.swift, GeoJSON.swift).
// Invariants: a parsed JSON value is written by JSONWriter and that text parses back to an
// equal value; a decoded document's geometries can be written as GeoJSON again.

import Geometry
import Support

/// JSON equality where a double's NaN equals itself (JSONWriter writes non-finite numbers as
/// null, so those are not compared at all).
func sameJSON(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.double(let x), _) where !x.isFinite: return true
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { sameJSON($0, $1) }
    case (.object(let x), .object(let y)):
        return x.keys == y.keys && zip(x, y).allSatisfy { $0.0 == $1.0 && sameJSON($0.1, $1.1) }
    default: return a == b
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = FuzzSupport.bytes(start, count)
    if let value = try? JSON.parse(bytes) {
        let text = JSONWriter.encode(value)
        guard let again = try? JSON.parse(text) else {
            FuzzSupport.fail("JSONWriter wrote text JSON.parse refuses: \(String(decoding: text, as: UTF8.self))")
        }
        guard sameJSON(value, again) else {
            FuzzSupport.fail("JSON round trip changed the value: \(String(decoding: text, as: UTF8.self))")
        }
        _ = try? GeoJSON.geometry(from: value)
        _ = try? GeoJSON.feature(from: value)
    }
    if let document = try? GeoJSON.parseDocument(bytes) {
        var writer = JSONWriter()
        for feature in document.features {
            if let geometry = feature.geometry { writer.geometry(geometry) }
            for (_, value) in feature.properties { _ = GeoJSON.json(value) }
        }
    }
    return 0
}
