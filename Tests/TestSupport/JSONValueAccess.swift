// Reading parsed JSON answers in tests: `answer["features"]?[0]?["id"]`, missing parts nil.

import Geometry
import Support

extension JSONValue {
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    public subscript(index: Int) -> JSONValue? {
        if case .array(let items) = self, items.indices.contains(index) { return items[index] }
        return nil
    }

    /// The array's items; none when the value is not an array.
    public var items: [JSONValue] {
        if case .array(let items) = self { return items }
        return []
    }
}
