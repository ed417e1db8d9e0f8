// OGC API – Features Part 3's filters: CQL2's Basic CQL2 (comparisons, IS NULL, AND, OR, NOT)
// with IN and BETWEEN, in its text and its JSON encoding, read into the language's WHERE
// expression. So there is one WHERE compiler (the Planner, for a layer in memory) and one
// pushdown to PostgreSQL (for a layer kept there): a filter is a WHERE clause with other
// spelling. What else CQL2 has (LIKE, the spatial and temporal functions, arithmetic) is
// refused by name.

import Engine
import Support

/// How a `filter` is written: `filter-lang`.
public enum CQL2Encoding: String, Sendable {
    case text = "cql2-text"
    case json = "cql2-json"
}

enum CQL2 {
    static let here = SourcePosition(line: 1, column: 1, length: 1)

    static func fail(_ message: String) -> FilterError { FilterError(parameter: "filter", message: message) }

    static func parse(_ text: String, _ encoding: CQL2Encoding) throws(FilterError) -> Expression {
        switch encoding {
        case .text:
            var parser = TextParser(text)
            return try parser.filter()
        case .json:
            guard let json = try? JSON.parse(Array(text.utf8)) else { throw fail("not JSON (filter-lang=cql2-json)") }
            return try expression(json)
        }
    }

    /// Every property a filter names must be a queryable, a column of the layer (exactly, as
    /// CQL2 names are case-sensitive): a misspelt one is an error, not a filter nothing passes.
    static func checkProperties(_ expression: Expression, on layer: Layer) throws(FilterError) {
        let columns = layer.info.columns.map(\.name).filter { $0 != layer.info.geometryColumn }
        func check(_ field: FieldExpression) throws(FilterError) {
            guard case .attribute(let name) = field, !columns.contains(name.text) else { return }
            var message = "\(Quote.input(name.text)) is not a queryable of '\(layer.name)'"
            if let suggestion = Suggestion.closest(to: name.text, in: columns) { message += " — did you mean '\(suggestion)'?" }
            throw fail(message + " (its queryables: \(columns.joined(separator: ", ")))")
        }
        switch expression {
        case .and(let terms), .or(let terms): for term in terms { try checkProperties(term, on: layer) }
        case .not(let inner): try checkProperties(inner, on: layer)
        case .compare(let field, _, _, _), .isIn(let field, _, _), .isNull(let field, _), .matches(let field, _), .matchesCzech(let field, _): try check(field)
        case .measures, .fresh: break
        }
    }

    // MARK: - The JSON encoding

    static func expression(_ json: JSONValue) throws(FilterError) -> Expression {
        if case .bool = json { throw fail("TRUE or FALSE alone is not a filter here: leave the filter out for every feature") }
        guard case .object(let node) = json, case .string(let op)? = node["op"], case .array(let args)? = node["args"] else {
            throw fail("expected {\"op\": …, \"args\": […]}, got \(Quote.input(JSON.serialize(json)))")
        }
        switch op.lowercased() {
        case "and", "or":
            guard args.count >= 2 else { throw fail("'\(op)' takes two or more arguments") }
            var terms: [Expression] = []
            for arg in args { terms.append(try expression(arg)) }
            return op.lowercased() == "and" ? .and(terms) : .or(terms)
        case "not":
            guard args.count == 1 else { throw fail("'not' takes one argument") }
            return .not(try expression(args[0]))
        case "=", "<>", "<", "<=", ">", ">=":
            guard args.count == 2 else { throw fail("'\(op)' takes two arguments") }
            return try comparison(op, args[0], args[1])
        case "isnull":
            guard args.count == 1 else { throw fail("'isNull' takes one argument") }
            return .isNull(try property(args[0]), negated: false)
        case "in":
            guard args.count == 2, case .array(let list) = args[1] else { throw fail("'in' takes a property and a list") }
            var literals: [Literal] = []
            for item in list { literals.append(try literal(item)) }
            return .isIn(try property(args[0]), literals, negated: false)
        case "between":
            guard args.count == 3 else { throw fail("'between' takes a property and two values") }
            let field = try property(args[0])
            return .and([.compare(field, .greaterOrEqual, try literal(args[1]), position: here),
                         .compare(field, .lessOrEqual, try literal(args[2]), position: here)])
        default:
            throw fail("'\(op)' is not supported (Basic CQL2 with IN and BETWEEN: and, or, not, =, <>, <, <=, >, >=, isNull, in, between)")
        }
    }

    static func comparison(_ op: String, _ a: JSONValue, _ b: JSONValue) throws(FilterError) -> Expression {
        guard let comparison = Comparison(rawValue: op) else { throw fail("'\(op)' is not a comparison") }
        if case .object(let node) = a, node["property"] != nil {
            return .compare(try property(a), comparison, try literal(b), position: here)
        }
        // A literal first: the property on the left, the comparison turned around.
        return .compare(try property(b), comparison.flipped, try literal(a), position: here)
    }

    static func property(_ json: JSONValue) throws(FilterError) -> FieldExpression {
        guard case .object(let node) = json, case .string(let name)? = node["property"] else {
            throw fail("expected a property {\"property\": NAME}, got \(Quote.input(JSON.serialize(json)))")
        }
        return .attribute(Name(text: name, position: here))
    }

    static func literal(_ json: JSONValue) throws(FilterError) -> Literal {
        switch json {
        case .string(let text):
            guard !TextRule.holdsNUL(text) else { throw fail("a value \(TextRule.nulMessage)") }
            return .text(text)
        case .bool(let value): return .bool(value)
        case .null: return .null
        default:
            if let number = json.number, number.isFinite { return .number(number) }
            throw fail("expected a string, number or boolean, got \(Quote.input(JSON.serialize(json)))")
        }
    }

    // MARK: - The text encoding

    struct TextParser {
        let characters: [Character]
        var index = 0
        /// Parentheses and NOTs open: bounded, so a hostile filter cannot exhaust the stack.
        var depth = 0
        static let maxDepth = 64

        init(_ text: String) { characters = Array(text) }

        mutating func filter() throws(FilterError) -> Expression {
            let expression = try or()
            skipSpace()
            guard index == characters.count else { throw error("unexpected \(Quote.input(String(characters[index...].prefix(20))))") }
            return expression
        }

        func error(_ message: String) -> FilterError { CQL2.fail("at character \(index + 1): \(message)") }

        mutating func skipSpace() { while index < characters.count, characters[index].isWhitespace { index += 1 } }

        /// A keyword (any case) followed by no identifier character.
        mutating func keyword(_ word: String) -> Bool {
            skipSpace()
            let end = index + word.count
            guard end <= characters.count, String(characters[index..<end]).uppercased() == word else { return false }
            if end < characters.count, characters[end].isLetter || characters[end].isNumber || characters[end] == "_" { return false }
            index = end
            return true
        }

        mutating func symbol(_ text: String) -> Bool {
            skipSpace()
            let end = index + text.count
            guard end <= characters.count, String(characters[index..<end]) == text else { return false }
            index = end
            return true
        }

        mutating func or() throws(FilterError) -> Expression {
            var terms = [try and()]
            while keyword("OR") { terms.append(try and()) }
            return terms.count == 1 ? terms[0] : .or(terms)
        }

        mutating func and() throws(FilterError) -> Expression {
            var terms = [try factor()]
            while keyword("AND") { terms.append(try factor()) }
            return terms.count == 1 ? terms[0] : .and(terms)
        }

        mutating func factor() throws(FilterError) -> Expression {
            depth += 1
            defer { depth -= 1 }
            guard depth <= TextParser.maxDepth else { throw error("nested more than \(TextParser.maxDepth) deep") }
            if keyword("NOT") { return .not(try factor()) }
            if symbol("(") {
                let inner = try or()
                guard symbol(")") else { throw error("expected ')'") }
                return inner
            }
            let start = index
            if keyword("TRUE") || keyword("FALSE") {
                skipSpace()
                if index == characters.count || characters[index] == ")" || keyword("AND") || keyword("OR") {
                    index = start
                    throw error("TRUE or FALSE alone is not a filter here: leave the filter out for every feature")
                }
                index = start
            }
            return try predicate()
        }

        mutating func predicate() throws(FilterError) -> Expression {
            skipSpace()
            let start = index
            if let literal = try literalIfAny() {
                // 'value' op property
                guard let comparison = comparisonOperator() else { throw error("expected a comparison after the value") }
                let field = try property()
                return .compare(field, comparison.flipped, literal, position: CQL2.here)
            }
            index = start
            let field = try property()
            if let comparison = comparisonOperator() {
                guard let literal = try literalIfAny() else { throw error("expected a value (a 'string', a number, TRUE or FALSE)") }
                return .compare(field, comparison, literal, position: CQL2.here)
            }
            if keyword("IS") {
                let negated = keyword("NOT")
                guard keyword("NULL") else { throw error("expected NULL") }
                return .isNull(field, negated: negated)
            }
            let negated = keyword("NOT")
            if keyword("IN") {
                guard symbol("(") else { throw error("expected '(' after IN") }
                var literals: [Literal] = []
                repeat {
                    guard let literal = try literalIfAny() else { throw error("expected a value in the list") }
                    literals.append(literal)
                } while symbol(",")
                guard symbol(")") else { throw error("expected ')' after the list") }
                return .isIn(field, literals, negated: negated)
            }
            if keyword("BETWEEN") {
                guard let low = try literalIfAny() else { throw error("expected a value after BETWEEN") }
                guard keyword("AND") else { throw error("expected AND in BETWEEN") }
                guard let high = try literalIfAny() else { throw error("expected a value after AND") }
                let between = Expression.and([.compare(field, .greaterOrEqual, low, position: CQL2.here),
                                              .compare(field, .lessOrEqual, high, position: CQL2.here)])
                return negated ? .not(between) : between
            }
            if keyword("LIKE") { throw error("LIKE is not supported (Basic CQL2 with IN and BETWEEN)") }
            throw error("expected a comparison (=, <>, <, <=, >, >=), IS [NOT] NULL, [NOT] IN or [NOT] BETWEEN")
        }

        mutating func comparisonOperator() -> Comparison? {
            for (text, comparison) in [("<>", Comparison.notEqual), ("<=", .lessOrEqual), (">=", .greaterOrEqual), ("=", .equal), ("<", .less), (">", .greater)]
            where symbol(text) {
                return comparison
            }
            return nil
        }

        /// A property: an identifier, or one in double quotes ("" for a quote in it).
        mutating func property() throws(FilterError) -> FieldExpression {
            skipSpace()
            var name = ""
            if index < characters.count, characters[index] == "\"" {
                index += 1
                while true {
                    guard index < characters.count else { throw error("unterminated \"name\"") }
                    if characters[index] == "\"" {
                        if index + 1 < characters.count, characters[index + 1] == "\"" { name.append("\""); index += 2; continue }
                        index += 1
                        break
                    }
                    name.append(characters[index])
                    index += 1
                }
            } else {
                while index < characters.count, characters[index].isLetter || characters[index].isNumber || characters[index] == "_" || characters[index] == "." {
                    name.append(characters[index])
                    index += 1
                }
                if index < characters.count, characters[index] == "(" {
                    throw error("the function \(Quote.input(name)) is not supported (Basic CQL2 with IN and BETWEEN)")
                }
            }
            guard !name.isEmpty else { throw error("expected a property name") }
            return .attribute(Name(text: name, position: CQL2.here))
        }

        /// A 'string' ('' for a quote), a number, TRUE or FALSE; nil (and nothing read) otherwise.
        mutating func literalIfAny() throws(FilterError) -> Literal? {
            skipSpace()
            guard index < characters.count else { return nil }
            if characters[index] == "'" {
                index += 1
                var text = ""
                while true {
                    guard index < characters.count else { throw error("unterminated 'string'") }
                    if characters[index] == "'" {
                        if index + 1 < characters.count, characters[index + 1] == "'" { text.append("'"); index += 2; continue }
                        index += 1
                        break
                    }
                    text.append(characters[index])
                    index += 1
                }
                guard !TextRule.holdsNUL(text) else { throw error("a value \(TextRule.nulMessage)") }
                return .text(text)
            }
            let start = index
            if keyword("TRUE") { return .bool(true) }
            if keyword("FALSE") { return .bool(false) }
            var number = ""
            if characters[index] == "-" || characters[index] == "+" { number.append(characters[index]); index += 1 }
            while index < characters.count, characters[index].isNumber || characters[index] == "." || characters[index] == "e" || characters[index] == "E"
                    || ((characters[index] == "-" || characters[index] == "+") && (number.last == "e" || number.last == "E")) {
                number.append(characters[index])
                index += 1
            }
            guard let value = Double(number), value.isFinite, number.first?.isLetter != true else {
                index = start
                return nil
            }
            return .number(value)
        }
    }
}

extension Comparison {
    /// The same comparison with its sides swapped: `5 < x` is `x > 5`.
    var flipped: Comparison {
        switch self {
        case .equal, .notEqual: self
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        }
    }
}
