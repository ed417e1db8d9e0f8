// The types of fields, known at plan time, and the checks every comparison passes before it
// runs: a comparison that could never be true (text against a number, a list against one value,
// a boolean against 1 or 'yes') is an error with its position and the fix, not an empty answer.

import Engine
import Geometry
import Store
import Support

/// What a field holds, as far as a comparison cares.
enum ValueType: Sendable, Equatable {
    case number, text, boolean
    /// A list of values over time: `HISTORY(no2, 24 h)` (its elements are numbers).
    case list
    /// Geometry bytes, JSON documents and names of a layer the statement does not know: not
    /// checked.
    case unknown

    var name: String {
        switch self {
        case .number: "numbers"
        case .text: "text"
        case .boolean: "TRUE or FALSE"
        case .list: "a list of [time, value] pairs"
        case .unknown: "values"
        }
    }
}

extension Planner {
    /// The type of `field` in `layer` (`unknown` for a column the layer does not have: in a FIND
    /// over several layers a name may belong to another one).
    func valueType(_ field: FieldExpression, on layer: Layer) -> ValueType {
        switch field {
        case .attribute(let name):
            switch name.text {
            case "fid", "distance_m": return .number
            case "layer": return .text
            default: break
            }
            guard let column = layer.info.columns.first(where: { $0.name == name.text }), !column.isJSON else { return .unknown }
            switch column.type {
            case .integer, .real: return .number
            case .text, .dateTime: return .text
            case .boolean: return .boolean
            case .blob: return .unknown
            }
        case .latest: return .number
        case .history: return .list
        case .observedAt: return .text
        case .aggregate(let function, let argument, _):
            switch function {
            case .count, .sum, .avg: return .number
            case .min, .max:
                guard let argument else { return .unknown }
                let inner = valueType(argument, on: layer)
                return inner == .list ? .number : inner
            }
        case .quantified(_, let argument, _):
            return valueType(argument, on: layer) == .list ? .number : .unknown
        case .geometryText: return .text
        case .star: return .unknown
        case .reference(let reference, let inner):
            // The field's type in the other layer (unknown when that layer is not there: the
            // reference's own check names the problem).
            guard let other = try? referencedLayer(reference) else { return .unknown }
            return valueType(inner, on: other)
        }
    }

    /// A comparison of `field` with `literal` must be able to be true: same types, a list only
    /// through ANY, ALL or an aggregate, booleans only with TRUE and FALSE.
    func checkComparison(_ field: FieldExpression, _ literal: Literal, _ comparison: Comparison = .greater, on layer: Layer) throws(QueryError) {
        let type = valueType(field, on: layer)
        // The usual case, checked before any text of a message is built (planning stays cheap).
        switch (type, literal) {
        case (.unknown, _), (.number, .number), (.text, .text), (.boolean, .bool), (.number, .bool), (_, .null): return
        default: break
        }
        let shown = Planner.written(field)
        func mismatch(_ message: String, hint: String?) -> QueryError {
            Planner.error(.invalid, "type_mismatch", message, at: Planner.start(of: field), hint: hint)
        }
        // The hint repeats the statement's own comparison when it is a number: `> 69`.
        var tail = " \(comparison.rawValue) 40"
        if case .number(let n) = literal { tail = " \(comparison.rawValue) \(Parser.format(n))" }
        switch (type, literal) {
        case (.list, _):
            throw mismatch("\(shown) is a list of [time, value] pairs, not one value: a comparison with it is never true or false",
                           hint: "compare its values: ANY(\(shown))\(tail) (some hour), ALL(\(shown))\(tail) (every hour), or an aggregate: MAX(\(shown))\(tail)")
        case (.text, .number(let n)):
            let quoted = "'\(Parser.format(n))'"
            throw mismatch("\(Planner.quoted(field)) holds text, not numbers", hint: "quote the value: \(Quote.capped(shown)) = \(quoted)")
        case (.number, .text(let t)):
            throw mismatch("\(Planner.quoted(field)) holds numbers, not text",
                           hint: Double(t) != nil ? "drop the quotes: \(shown) = \(t)" : "compare it with a number: \(shown) > 40")
        case (.boolean, .number(let n)):
            throw mismatch("\(Planner.quoted(field)) holds TRUE or FALSE, not numbers",
                           hint: "write \(shown) = \(n == 0 ? "FALSE" : "TRUE")")
        case (.boolean, .text(let t)):
            let no = ["no", "false", "n", "0", "ne", "f"].contains(t.lowercased())
            throw mismatch("\(Planner.quoted(field)) holds TRUE or FALSE, not text", hint: "write \(shown) = \(no ? "FALSE" : "TRUE")")
        case (.text, .bool(let b)):
            throw mismatch("\(Planner.quoted(field)) holds text, not TRUE or FALSE", hint: "quote the value: \(shown) = '\(b ? "true" : "false")'")
        default:
            return
        }
    }

    /// `~` matches text; on anything else it would never match.
    /// `what`: the operation, as the message names it.
    func checkMatch(_ field: FieldExpression, on layer: Layer, what: String = "~ matches text") throws(QueryError) {
        let type = valueType(field, on: layer)
        guard type == .number || type == .boolean || type == .list else { return }
        throw Planner.error(.invalid, "type_mismatch", "\(what); \(Planner.quoted(field)) holds \(type.name)", at: Planner.start(of: field),
                            hint: type == .list ? "compare its values: ANY(\(Planner.written(field))) > 40" : "compare it with =, <, > and a value")
    }

    /// Where a field starts: a function's name (LATEST, HISTORY), else the field's own position.
    static func start(of field: FieldExpression) -> SourcePosition {
        switch field {
        case .latest(_, let position), .history(_, _, let position): position
        default: field.position
        }
    }

    /// A field in a message: a column's name in quotes (it is the request's text), a function
    /// as written.
    static func quoted(_ field: FieldExpression) -> String {
        if case .attribute(let name) = field { return Quote.input(name.text) }
        return written(field)
    }

    /// A field as the statement would write it, for messages.
    static func written(_ field: FieldExpression) -> String {
        switch field {
        case .attribute(let name):
            let plain = name.text.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || $0 == "_" || ("0"..."9").contains($0) }
            return plain ? name.text : "\"\(name.text.replacingOccurrences(of: "\"", with: "\"\""))\""
        case .latest(let name, _): return "LATEST(\(name.text))"
        case .history(let name, let hours, _): return "HISTORY(\(name.text), \(hours) h)"
        case .observedAt: return "OBSERVED_AT"
        case .aggregate(let function, let argument, _): return "\(function.rawValue.uppercased())(\(argument.map(written) ?? "*"))"
        case .quantified(let quantifier, let argument, _): return "\(quantifier.rawValue.uppercased())(\(written(argument)))"
        case .geometryText(let format, _): return "\(format.rawValue.uppercased())(geom)"
        case .star: return "*"
        case .reference(let reference, let inner):
            return "(\(reference.layer.text) \(reference.relation.rawValue.uppercased()))." + written(inner)
        }
    }
}
