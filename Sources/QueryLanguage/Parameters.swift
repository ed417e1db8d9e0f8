// Bound parameters: values handed to a statement beside its text (`$1`, `$2`, … or `?`), so no
// caller ever builds query text by pasting input into it. A parameter stands where the grammar
// takes a value: a literal in WHERE, a point, a number (k, a distance, a speed, LIMIT). It never
// stands for a name or a clause, so a value cannot change what the statement does.

import Geometry

/// Text values may not hold a NUL character (U+0000), whichever store answers: PostgreSQL's text
/// cannot hold one, so rather than a PostGIS store failing where a GeoPackage store answers
/// nothing, both refuse it before either sees it: a bound `$n` (and an HTTP filter's value) as
/// `invalid_parameter`, a quoted string of the statement as `invalid_text`, both 400.
enum TextRule {
    static func holdsNUL(_ text: String) -> Bool { text.utf8.contains(0) }
    static let nulMessage = "holds a NUL character (U+0000), which no text value may hold"
}

/// A value bound to a parameter.
public enum QueryValue: Sendable, Equatable {
    case number(Double)
    case text(String)
    case bool(Bool)
    case null
    case point(Point)

    /// How errors name the kind of value given.
    var kindName: String {
        switch self {
        case .number: "a number"
        case .text: "text"
        case .bool: "a boolean"
        case .null: "NULL"
        case .point: "a point"
        }
    }
}

/// Anything that can be bound to a parameter: numbers, text, booleans, points.
public protocol QueryArgument: Sendable {
    var queryValue: QueryValue { get }
}

extension QueryValue: QueryArgument { public var queryValue: QueryValue { self } }
extension Int: QueryArgument { public var queryValue: QueryValue { .number(Double(self)) } }
extension Double: QueryArgument { public var queryValue: QueryValue { .number(self) } }
extension String: QueryArgument { public var queryValue: QueryValue { .text(self) } }
extension Bool: QueryArgument { public var queryValue: QueryValue { .bool(self) } }
extension Point: QueryArgument { public var queryValue: QueryValue { .point(self) } }

extension QueryValue: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByBooleanLiteral {
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}
