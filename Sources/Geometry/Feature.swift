// Features: a geometry with an id and ordered attributes, as every importer produces them and
// the store keeps them.

/// A feature identifier as GeoJSON allows it: a number or a string.
public enum FeatureID: Hashable, Sendable, CustomStringConvertible {
    case integer(Int64)
    case string(String)

    public var description: String {
        switch self {
        case .integer(let i): String(i)
        case .string(let s): s
        }
    }
}

/// An attribute value. JSON arrays and objects (for example the list of animals in a zoo pen)
/// are kept as their JSON text in `.json`, so they round-trip without a schema of their own.
public enum AttributeValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case real(Double)
    case text(String)
    case json(String)

    public var isNull: Bool { if case .null = self { true } else { false } }

    /// The numeric value of an integer or real, for comparisons.
    public var doubleValue: Double? {
        switch self {
        case .integer(let i): Double(i)
        case .real(let d): d
        default: nil
        }
    }

    public var stringValue: String? {
        switch self {
        case .text(let s), .json(let s): s
        default: nil
        }
    }
}

/// Attributes in the order the source gave them. Usually small (a handful to a few dozen
/// names), where a linear lookup beats hashing; past `indexedFrom` names a name → position
/// index takes over, so that building a wide row stays linear (issue 30: a CSV of 10⁵ columns
/// spent 20 s in the per-name search, 10⁶ columns more than 280 s). The order is what a user
/// sees in `DESCRIBE` and in output.
public struct Attributes: Hashable, Sendable, Sequence {
    public private(set) var names: [String]
    public private(set) var values: [AttributeValue]
    /// Name → position once there are more than `indexedFrom` names; nil below that.
    private var positions: [String: Int]?

    static let indexedFrom = 32

    public init() {
        names = []
        values = []
    }

    public init(_ pairs: [(String, AttributeValue)]) {
        self.init()
        for (name, value) in pairs { self[name] = value }
    }

    public var count: Int { names.count }

    /// The value of `name`, or nil when the feature has no such attribute. Setting a value
    /// replaces an existing one in place or appends a new name.
    public subscript(name: String) -> AttributeValue? {
        get { position(of: name).map { values[$0] } }
        set {
            if let i = position(of: name) {
                if let newValue {
                    values[i] = newValue
                } else {
                    names.remove(at: i)
                    values.remove(at: i)
                    reindex()
                }
            } else if let newValue {
                names.append(name)
                values.append(newValue)
                if positions != nil {
                    positions?[name] = names.count - 1
                } else if names.count > Attributes.indexedFrom {
                    reindex()
                }
            }
        }
    }

    private func position(of name: String) -> Int? {
        if let positions { return positions[name] }
        return names.firstIndex(of: name)
    }

    /// Builds the index for a wide row, or drops it for a narrow one. Names are distinct.
    private mutating func reindex() {
        guard names.count > Attributes.indexedFrom else {
            positions = nil
            return
        }
        var index = [String: Int](minimumCapacity: names.count)
        for (i, name) in names.enumerated() { index[name] = i }
        positions = index
    }

    // The index is derived from the names: equality and hashing leave it out.
    public static func == (a: Attributes, b: Attributes) -> Bool { a.names == b.names && a.values == b.values }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(names)
        hasher.combine(values)
    }

    public func makeIterator() -> Zip2Sequence<[String], [AttributeValue]>.Iterator {
        zip(names, values).makeIterator()
    }
}

public struct Feature: Hashable, Sendable {
    public var id: FeatureID?
    /// Nil for an unlocated feature (GeoJSON `"geometry": null`). Importers of layers reject it.
    public var geometry: Geometry?
    public var properties: Attributes

    public init(id: FeatureID? = nil, geometry: Geometry?, properties: Attributes = Attributes()) {
        self.id = id
        self.geometry = geometry
        self.properties = properties
    }
}
