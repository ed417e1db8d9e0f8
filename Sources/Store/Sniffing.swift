// Telling formats apart by structure, never by a word somewhere in the file: the JSON root's
// kind and top-level keys (a FeatureCollection is GeoJSON, whatever names its header holds),
// and the first bytes of binary files, to name what an unsupported file is.

/// The top-level structure of the JSON text a file's head starts: an object with the keys
/// seen in the head (and its `type`, when that is a string), or an array with the keys of its
/// first element. The head may end mid-document; only what it shows is reported.
public enum JSONShape: Sendable {
    case object(keys: [String], type: String?)
    case array(firstElementKeys: [String])

    /// Nil when the head does not start a JSON object or array.
    public static func of(_ head: [UInt8]) -> JSONShape? {
        var i = 0
        if head.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
        func skipSpace() { while i < head.count, [0x20, 0x09, 0x0A, 0x0D].contains(head[i]) { i += 1 } }
        skipSpace()
        guard i < head.count else { return nil }
        let isArray = head[i] == UInt8(ascii: "[")
        guard isArray || head[i] == UInt8(ascii: "{") else { return nil }
        i += 1
        if isArray {
            skipSpace()
            guard i < head.count, head[i] == UInt8(ascii: "{") else { return .array(firstElementKeys: []) }
            i += 1
        }
        // Walk the members of the object just opened: strings, nesting, keys at depth 0.
        var keys: [String] = []
        var type: String?
        var depth = 0
        var lastString: String?
        var keyOfValue: String?
        while i < head.count {
            let byte = head[i]
            switch byte {
            case UInt8(ascii: "\""):
                var text: [UInt8] = []
                i += 1
                while i < head.count, head[i] != UInt8(ascii: "\"") {
                    if head[i] == UInt8(ascii: "\\") { i += 1 }
                    if i < head.count { text.append(head[i]) }
                    i += 1
                }
                guard i < head.count else { return shape(isArray, keys, type) }
                let string = String(decoding: text, as: UTF8.self)
                if depth == 0, keyOfValue == "type" { type = string }
                keyOfValue = nil
                lastString = string
            case UInt8(ascii: ":"):
                if depth == 0, let key = lastString {
                    keys.append(key)
                    keyOfValue = key
                }
                lastString = nil
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                keyOfValue = nil
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if depth == 0 { return shape(isArray, keys, type) }
                depth -= 1
            case UInt8(ascii: ","):
                keyOfValue = nil
                lastString = nil
            default:
                break
            }
            i += 1
        }
        return shape(isArray, keys, type)
    }

    private static func shape(_ isArray: Bool, _ keys: [String], _ type: String?) -> JSONShape {
        isArray ? .array(firstElementKeys: keys) : .object(keys: keys, type: type)
    }
}

extension ImportFormat {
    /// The `type` of a GeoJSON root.
    static let geoJSONRootTypes: Set<String> = [
        "FeatureCollection", "Feature", "Point", "LineString", "Polygon", "MultiPoint", "MultiLineString",
        "MultiPolygon", "GeometryCollection",
    ]
}

/// Names common files by their first bytes, for the error about a format Vltava does not read.
enum FileSignature {
    static func name(of head: [UInt8], lowercasedPath: String) -> String? {
        let signatures: [(bytes: [UInt8], name: String)] = [
            (Array("%PDF".utf8), "a PDF document"),
            ([0x50, 0x4B, 0x03, 0x04], "a ZIP archive (unpack it and import the file inside)"),
            ([0x89, 0x50, 0x4E, 0x47], "a PNG image"),
            ([0xFF, 0xD8, 0xFF], "a JPEG image"),
            (Array("GIF8".utf8), "a GIF image"),
            (Array("II*\u{0}".utf8), "a TIFF image"),
            (Array("MM\u{0}*".utf8), "a TIFF image"),
            (Array("SQLite format 3\u{0}".utf8), "an SQLite database that is not a GeoPackage"),
            ([0x1F, 0x8B], "a gzip-compressed file (unpack it first)"),
            (Array("BZh".utf8), "a bzip2-compressed file (unpack it first)"),
            ([0x28, 0xB5, 0x2F, 0xFD], "a Zstandard-compressed file (unpack it first)"),
        ]
        for signature in signatures where head.starts(with: signature.bytes) { return signature.name }
        if head.prefix(64).contains(where: { $0 == 0 }) { return "a binary file of unknown format" }
        return nil
    }
}
