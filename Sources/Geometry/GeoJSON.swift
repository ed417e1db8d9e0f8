// GeoJSON (RFC 7946) read and write. Reading is strict about structure (closed rings, at least
// two positions per line) and names the place of every problem ("features[3].geometry…"); it
// does not check coordinate ranges, because a file in a projected CRS (S-JTSK) is only
// checked after reprojection. Ring order and vertex order are kept as given, so a round trip
// is exact.

import Support

/// A parsed GeoJSON file.
public struct GeoJSONDocument: Sendable {
    public var features: [Feature]
    /// The CRS named by an old-style (2008) `crs` member, as "EPSG:N"; nil when absent.
    public var crs: String?
    /// The collection's `name` member (GDAL writes the layer name there).
    public var name: String?

    public init(features: [Feature], crs: String? = nil, name: String? = nil) {
        self.features = features
        self.crs = crs
        self.name = name
    }
}

public struct GeoJSONError: Error, CustomStringConvertible, Sendable {
    /// Where the problem is, e.g. "features[3].geometry.coordinates[0]"; empty for the root.
    public let path: String
    public let message: String

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}

public enum GeoJSON {
    public static func parseDocument(_ bytes: [UInt8]) throws(GeoJSONError) -> GeoJSONDocument {
        let root: JSONValue
        do {
            root = try JSON.parse(bytes)
        } catch {
            throw GeoJSONError(path: "", message: "malformed JSON at \(error)")
        }
        guard case .object(let object) = root else {
            throw GeoJSONError(path: "", message: "expected a GeoJSON object, found \(kind(root))")
        }
        let crs = try crsName(object["crs"])
        let name = object["name"]?.string
        switch object["type"]?.string {
        case "FeatureCollection":
            guard case .array(let items)? = object["features"] else {
                throw GeoJSONError(path: "features", message: "a FeatureCollection needs a \"features\" array")
            }
            var features: [Feature] = []
            features.reserveCapacity(items.count)
            for (i, item) in items.enumerated() {
                features.append(try feature(from: item, path: "features[\(i)]"))
            }
            return GeoJSONDocument(features: features, crs: crs, name: name)
        case "Feature":
            return GeoJSONDocument(features: [try feature(from: root, path: "")], crs: crs, name: name)
        default:
            return GeoJSONDocument(features: [Feature(geometry: try geometry(from: root, path: ""))], crs: crs, name: name)
        }
    }

    public static func feature(from value: JSONValue) throws(GeoJSONError) -> Feature {
        try feature(from: value, path: "")
    }

    public static func geometry(from value: JSONValue) throws(GeoJSONError) -> Geometry {
        try geometry(from: value, path: "")
    }

    // MARK: - Reading

    static func feature(from value: JSONValue, path: String) throws(GeoJSONError) -> Feature {
        guard case .object(let object) = value else {
            throw GeoJSONError(path: path, message: "expected a Feature object, found \(kind(value))")
        }
        guard object["type"]?.string == "Feature" else {
            throw GeoJSONError(path: path, message: "expected \"type\": \"Feature\"")
        }
        var id: FeatureID?
        switch object["id"] {
        case .integer(let i)?: id = .integer(i)
        case .double(let d)?: id = .string(JSON.serialize(.double(d)))
        case .string(let s)?: id = .string(s)
        case nil, .null?: id = nil
        case let other?: throw GeoJSONError(path: join(path, "id"), message: "an id must be a string or a number, found \(kind(other))")
        }
        var geometry: Geometry?
        switch object["geometry"] {
        case nil, .null?: geometry = nil
        case let g?: geometry = try self.geometry(from: g, path: join(path, "geometry"))
        }
        var properties = Attributes()
        switch object["properties"] {
        case nil, .null?: break
        case .object(let members)?:
            for (key, member) in members { properties[key] = attribute(member) }
        case let other?: throw GeoJSONError(path: join(path, "properties"), message: "expected an object or null, found \(kind(other))")
        }
        return Feature(id: id, geometry: geometry, properties: properties)
    }

    /// JSON values as attributes: arrays and objects are kept as their JSON text.
    public static func attribute(_ value: JSONValue) -> AttributeValue {
        switch value {
        case .null: .null
        case .bool(let b): .bool(b)
        case .integer(let i): .integer(i)
        case .double(let d): .real(d)
        case .string(let s): .text(s)
        case .array, .object: .json(JSON.serialize(value))
        }
    }

    static func geometry(from value: JSONValue, path: String) throws(GeoJSONError) -> Geometry {
        guard case .object(let object) = value else {
            throw GeoJSONError(path: path, message: "expected a geometry object, found \(kind(value))")
        }
        guard let type = object["type"]?.string else {
            throw GeoJSONError(path: path, message: "a geometry needs a \"type\"")
        }
        let coordinatesPath = join(path, "coordinates")
        if type == "GeometryCollection" {
            guard case .array(let members)? = object["geometries"] else {
                throw GeoJSONError(path: join(path, "geometries"), message: "a GeometryCollection needs a \"geometries\" array")
            }
            var parts: [Geometry] = []
            for (i, member) in members.enumerated() {
                parts.append(try geometry(from: member, path: join(path, "geometries[\(i)]")))
            }
            return .collection(parts)
        }
        guard let coordinates = object["coordinates"] else {
            throw GeoJSONError(path: path, message: "a \(type) needs \"coordinates\"")
        }
        switch type {
        case "Point":
            var flat: [Double] = []
            try appendPosition(coordinates, to: &flat, path: coordinatesPath)
            return .point(Point(lon: flat[0], lat: flat[1]))
        case "MultiPoint":
            return .multiPoint(MultiPoint(coordinates: try positions(coordinates, path: coordinatesPath, minimum: 0, what: "a MultiPoint")))
        case "LineString":
            return .lineString(LineString(coordinates: try positions(coordinates, path: coordinatesPath, minimum: 2, what: "a LineString")))
        case "MultiLineString":
            let lines = try array(coordinates, path: coordinatesPath)
            var rings: [[Double]] = []
            for (i, line) in lines.enumerated() {
                rings.append(try positions(line, path: "\(coordinatesPath)[\(i)]", minimum: 2, what: "a LineString"))
            }
            return .multiLineString(MultiLineString(lines: rings))
        case "Polygon":
            return .polygon(try polygon(coordinates, path: coordinatesPath))
        case "MultiPolygon":
            let items = try array(coordinates, path: coordinatesPath)
            var polygons: [Polygon] = []
            for (i, item) in items.enumerated() {
                polygons.append(try polygon(item, path: "\(coordinatesPath)[\(i)]"))
            }
            return .multiPolygon(MultiPolygon(polygons: polygons))
        default:
            throw GeoJSONError(path: join(path, "type"), message: "unknown geometry type '\(type)'")
        }
    }

    static func polygon(_ value: JSONValue, path: String) throws(GeoJSONError) -> Polygon {
        let items = try array(value, path: path)
        guard !items.isEmpty else { throw GeoJSONError(path: path, message: "a polygon needs at least an exterior ring") }
        var rings: [[Double]] = []
        for (i, item) in items.enumerated() {
            let ring = try positions(item, path: "\(path)[\(i)]", minimum: 4, what: "a polygon ring")
            let n = ring.count
            guard ring[0] == ring[n - 2] && ring[1] == ring[n - 1] else {
                throw GeoJSONError(path: "\(path)[\(i)]", message: "ring \(i) of the polygon is not closed (its last position must repeat its first)")
            }
            rings.append(ring)
        }
        return Polygon(rings: rings)
    }

    static func array(_ value: JSONValue, path: String) throws(GeoJSONError) -> [JSONValue] {
        guard case .array(let items) = value else {
            throw GeoJSONError(path: path, message: "expected an array, found \(kind(value))")
        }
        return items
    }

    static func positions(_ value: JSONValue, path: String, minimum: Int, what: String) throws(GeoJSONError) -> [Double] {
        let items = try array(value, path: path)
        guard items.count >= minimum else {
            throw GeoJSONError(path: path, message: "\(what) needs at least \(minimum) positions, found \(items.count)")
        }
        var flat: [Double] = []
        flat.reserveCapacity(items.count * 2)
        for (i, item) in items.enumerated() { try appendPosition(item, to: &flat, path: "\(path)[\(i)]") }
        return flat
    }

    /// Appends lon and lat; a third value (altitude) is dropped.
    static func appendPosition(_ value: JSONValue, to flat: inout [Double], path: String) throws(GeoJSONError) {
        guard case .array(let numbers) = value, numbers.count >= 2 else {
            throw GeoJSONError(path: path, message: "a position needs [longitude, latitude]")
        }
        guard let x = numbers[0].number, let y = numbers[1].number else {
            throw GeoJSONError(path: path, message: "a position's coordinates must be numbers")
        }
        flat.append(x)
        flat.append(y)
    }

    /// The old-style `crs` member: {"type": "name", "properties": {"name": "EPSG:5514"}} or an
    /// OGC URN. RFC 7946 dropped it, but Prague's S-JTSK files still carry it.
    static func crsName(_ value: JSONValue?) throws(GeoJSONError) -> String? {
        guard let value, value != .null else { return nil }
        guard case .object(let crs) = value, case .object(let properties)? = crs["properties"], let name = properties["name"]?.string else {
            throw GeoJSONError(path: "crs", message: "expected {\"type\": \"name\", \"properties\": {\"name\": \"EPSG:N\"}}")
        }
        return normalizeCRSName(name)
    }

    /// "urn:ogc:def:crs:EPSG::5514", "EPSG:5514", "epsg:5514" → "EPSG:5514"; CRS84 → "EPSG:4326".
    public static func normalizeCRSName(_ name: String) -> String {
        let trimmed = name.trimmingWhitespace
        // A WKT or PROJJSON definition is passed on whole (its inner EPSG codes name parts).
        if trimmed.contains("[") || trimmed.contains("{") { return trimmed }
        let upper = trimmed.uppercased()
        if upper.hasSuffix("CRS84") { return "EPSG:4326" }
        if let range = upper.range(of: "EPSG") {
            let digits = upper[range.upperBound...].filter(\.isNumber)
            if !digits.isEmpty { return "EPSG:\(digits)" }
        }
        return trimmed
    }

    static func join(_ path: String, _ member: String) -> String { path.isEmpty ? member : "\(path).\(member)" }

    static func kind(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "a boolean"
        case .integer, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    // MARK: - Writing

    public static func encode(_ geometry: Geometry) -> JSONValue {
        func positions(_ flat: [Double]) -> JSONValue {
            var items: [JSONValue] = []
            items.reserveCapacity(flat.count / 2)
            var i = 0
            while i + 1 < flat.count {
                items.append(.array([.double(flat[i]), .double(flat[i + 1])]))
                i += 2
            }
            return .array(items)
        }
        func rings(_ polygon: Polygon) -> JSONValue {
            .array((0..<polygon.ringCount).map { positions(Array(polygon.ring($0))) })
        }
        let type: JSONValue = .string(geometry.typeName)
        switch geometry {
        case .point(let p):
            return .object(JSONObject([("type", type), ("coordinates", .array([.double(p.lon), .double(p.lat)]))]))
        case .lineString(let l):
            return .object(JSONObject([("type", type), ("coordinates", positions(l.coordinates))]))
        case .multiPoint(let m):
            return .object(JSONObject([("type", type), ("coordinates", positions(m.coordinates))]))
        case .polygon(let p):
            return .object(JSONObject([("type", type), ("coordinates", rings(p))]))
        case .multiLineString(let m):
            let lines: [JSONValue] = (0..<m.lineCount).map { positions(m.line($0).coordinates) }
            return .object(JSONObject([("type", type), ("coordinates", .array(lines))]))
        case .multiPolygon(let m):
            return .object(JSONObject([("type", type), ("coordinates", .array(m.polygons.map(rings)))]))
        case .collection(let parts):
            return .object(JSONObject([("type", type), ("geometries", .array(parts.map(encode)))]))
        }
    }

    public static func encode(_ feature: Feature) -> JSONValue {
        var object = JSONObject()
        object["type"] = .string("Feature")
        switch feature.id {
        case .integer(let i)?: object["id"] = .integer(i)
        case .string(let s)?: object["id"] = .string(s)
        case nil: break
        }
        object["geometry"] = feature.geometry.map(encode) ?? .null
        var properties = JSONObject()
        for (name, value) in feature.properties { properties[name] = json(value) }
        object["properties"] = .object(properties)
        return .object(object)
    }

    public static func featureCollection(_ features: [Feature]) -> JSONValue {
        .object(JSONObject([("type", .string("FeatureCollection")), ("features", .array(features.map(encode)))]))
    }

    /// An attribute as JSON: `.json` text is embedded as the value it holds.
    public static func json(_ value: AttributeValue) -> JSONValue {
        switch value {
        case .null: .null
        case .bool(let b): .bool(b)
        case .integer(let i): .integer(i)
        case .real(let d): .double(d)
        case .text(let s): .string(s)
        case .json(let text): (try? JSON.parse(text)) ?? .string(text)
        }
    }
}

extension String {
    var trimmingWhitespace: String {
        var s = Substring(self)
        while let first = s.first, first.isWhitespace { s.removeFirst() }
        while let last = s.last, last.isWhitespace { s.removeLast() }
        return String(s)
    }
}
