// Reads a GeoJSON FeatureCollection file feature by feature, in fixed-size chunks, so a large
// layer (the 100 MB synthetic benchmark layer, a country's buildings) never sits in memory
// whole, neither as text nor as a JSON tree. Only one feature's text and tree exist at a time.
//
// It splits the byte stream at the top-level members of the "features" array by tracking
// nesting depth and strings, parses each feature with the ordinary parser, and keeps the
// collection's other members (crs, name) as a small text parsed at the end.

import Foundation
import Support

public enum GeoJSONStream {
    /// Calls `body` with each feature and its index, in file order, and returns the
    /// collection's old-style `crs` (as "EPSG:N") and `name`.
    @discardableResult
    public static func read(path: String, chunkSize: Int = 1 << 20,
                            _ body: (Int, Feature) throws -> Void) throws -> (crs: String?, name: String?) {
        try read(path: path, chunkSize: chunkSize, header: { _, _ in }, body)
    }

    /// As `read(path:chunkSize:_:)`, and calls `header` once, just before the first feature,
    /// with the `crs` and `name` of the members that precede the features (where writers put
    /// them), so a reader knows the CRS before any feature arrives. Not called for a
    /// collection without features.
    @discardableResult
    public static func read(path: String, chunkSize: Int = 1 << 20, header: (_ crs: String?, _ name: String?) throws -> Void,
                            _ body: (Int, Feature) throws -> Void) throws -> (crs: String?, name: String?) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw GeoJSONError(path: "", message: "cannot open \(path)")
        }
        defer { try? handle.close() }
        var splitter = Splitter()
        while true {
            let chunk = handle.readData(ofLength: chunkSize)
            if chunk.isEmpty { break }
            try chunk.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
                try splitter.feed(raw.bindMemory(to: UInt8.self), header, body)
            }
        }
        return try splitter.finish()
    }

    struct Splitter {
        var depth = 0
        var inString = false
        var escaped = false
        /// The text of the root object without the features' contents.
        var root: [UInt8] = []
        /// The last string that closed at depth 1 (a member name, or a value).
        var lastRootString: [UInt8] = []
        var collectingRootString = false
        /// Inside the "features" array (depth 2 is its level).
        var inFeatures = false
        var feature: [UInt8] = []
        var inFeature = false
        var featureIndex = 0
        var line = 1
        var column = 0
        var featureLine = 1
        var featureColumn = 1
        var headerSent = false

        mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>, _ header: (String?, String?) throws -> Void, _ body: (Int, Feature) throws -> Void) throws {
            for b in bytes {
                if b == 0x0A {
                    line += 1
                    column = 0
                } else if b & 0xC0 != 0x80 {
                    column += 1
                }
                if inFeature {
                    feature.append(b)
                    if inString {
                        if escaped { escaped = false } else if b == UInt8(ascii: "\\") { escaped = true } else if b == UInt8(ascii: "\"") { inString = false }
                        continue
                    }
                    switch b {
                    case UInt8(ascii: "\""): inString = true
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 2 {
                            try emit(body)
                        }
                    default: break
                    }
                    continue
                }
                if inFeatures {
                    // Between features: only whitespace, commas, the next '{' or the closing ']'.
                    switch b {
                    case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ","): continue
                    case UInt8(ascii: "{"):
                        if !headerSent {
                            headerSent = true
                            let members = rootMembersSoFar()
                            try header(members.crs, members.name)
                        }
                        inFeature = true
                        feature = [b]
                        featureLine = line
                        featureColumn = column
                        depth += 1
                        continue
                    case UInt8(ascii: "]"):
                        inFeatures = false
                        depth -= 1
                        root.append(b)
                        continue
                    default:
                        throw GeoJSONError(path: "features[\(featureIndex)]", message: "malformed JSON at line \(line), column \(column): expected a feature object")
                    }
                }
                root.append(b)
                if inString {
                    if collectingRootString && !escaped && b != UInt8(ascii: "\"") && b != UInt8(ascii: "\\") { lastRootString.append(b) }
                    if escaped { escaped = false } else if b == UInt8(ascii: "\\") { escaped = true } else if b == UInt8(ascii: "\"") { inString = false }
                    continue
                }
                switch b {
                case UInt8(ascii: "\""):
                    inString = true
                    collectingRootString = depth == 1
                    if collectingRootString { lastRootString.removeAll(keepingCapacity: true) }
                case UInt8(ascii: "{"): depth += 1
                case UInt8(ascii: "["):
                    depth += 1
                    if depth == 2 && lastRootString == Array("features".utf8) { inFeatures = true }
                case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
                default: break
                }
            }
        }

        mutating func emit(_ body: (Int, Feature) throws -> Void) throws {
            inFeature = false
            let value: JSONValue
            do {
                value = try JSON.parse(feature)
            } catch {
                // Positions inside the feature, made absolute.
                let absoluteLine = featureLine + error.line - 1
                let absoluteColumn = error.line == 1 ? featureColumn + error.column - 1 : error.column
                throw GeoJSONError(path: "features[\(featureIndex)]", message: "malformed JSON at line \(absoluteLine), column \(absoluteColumn): \(error.message)")
            }
            try body(featureIndex, try GeoJSON.feature(from: value, path: "features[\(featureIndex)]"))
            featureIndex += 1
        }

        /// The `crs` and `name` of the root members read so far (the text up to the features'
        /// opening bracket, closed here); nils when that text does not parse.
        func rootMembersSoFar() -> (crs: String?, name: String?) {
            guard case .object(let object)? = try? JSON.parse(root + Array("]}".utf8)) else { return (nil, nil) }
            return ((try? GeoJSON.crsName(object["crs"])) ?? nil, object["name"]?.string)
        }

        func finish() throws -> (crs: String?, name: String?) {
            guard depth == 0, !inFeature, !inString else {
                throw GeoJSONError(path: "", message: "malformed JSON: the file ends inside \(inFeature ? "feature \(featureIndex)" : "the collection")")
            }
            let value: JSONValue
            do {
                value = try JSON.parse(root)
            } catch {
                throw GeoJSONError(path: "", message: "malformed JSON outside the features: \(error.message)")
            }
            guard case .object(let object) = value, object["type"]?.string == "FeatureCollection" else {
                throw GeoJSONError(path: "", message: "expected a GeoJSON FeatureCollection")
            }
            return (try GeoJSON.crsName(object["crs"]), object["name"]?.string)
        }
    }
}
