// OGC API – Features Part 3's filters: CQL2's Basic CQL2 (comparisons, IS NULL, AND, OR, NOT),
// advanced comparison (LIKE, IN, BETWEEN), the spatial functions (S_INTERSECTS … S_EQUALS, on
// WKT, BBOX or GeoJSON in lon/lat) and the temporal ones (T_AFTER … T_STARTS, on TIMESTAMP, DATE
// and INTERVAL), in its text and its JSON encoding, read into the language's WHERE expression.
// So there is one WHERE compiler (the Planner, for a layer in memory) and one pushdown to
// PostgreSQL (for a layer kept there): a filter is a WHERE clause with other spelling. A temporal
// function becomes comparisons of its endpoints (`T_DURING(t, INTERVAL(a, b))` is `t > a AND t <
// b`), so it needs a property on one side and constants on the other. What else CQL2 has
// (CASEI, ACCENTI, arrays, arithmetic, property against property) is refused by name.

import Engine
import Geometry
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
        case .compare(let field, _, _, _), .isIn(let field, _, _), .isNull(let field, _), .matches(let field, _), .matchesCzech(let field, _),
             .like(let field, _, _), .instant(let field, _, _): try check(field)
        case .spatial(let field, _, _):
            guard case .attribute(let name) = field, name.text != layer.info.geometryColumn else { return }
            guard let geometryColumn = layer.info.geometryColumn else { throw fail("'\(layer.name)' has no geometry for \(Quote.input(name.text)) to name") }
            throw fail("\(Quote.input(name.text)) is not the geometry of '\(layer.name)': its spatial queryable is '\(geometryColumn)'")
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
        case "like":
            guard args.count == 2, case .string(let pattern) = args[1] else { throw fail("'like' takes a property and a pattern string") }
            guard !LikePattern.endsInEscape(pattern) else { throw fail("a LIKE pattern must not end in a lone '\\'") }
            return .like(try property(args[0]), pattern: pattern, negated: false)
        case let name where spatialFunctions[name.uppercased()] != nil:
            guard args.count == 2, let relation = spatialFunctions[name.uppercased()] else { throw fail("'\(op)' takes two arguments") }
            if case .object(let node) = args[0], node["property"] != nil {
                return .spatial(try property(args[0]), relation, try geometry(args[1]))
            }
            return .spatial(try property(args[1]), relation.swapped, try geometry(args[0]))
        case let name where temporalFunctions[name.uppercased()] != nil:
            guard args.count == 2, let relation = temporalFunctions[name.uppercased()] else { throw fail("'\(op)' takes two arguments") }
            return try temporal(op, relation, try period(args[0]), try period(args[1]))
        default:
            throw fail("'\(op)' is not supported (and, or, not, =, <>, <, <=, >, >=, isNull, in, between, like, s_intersects … s_equals, t_after … t_starts)")
        }
    }

    // MARK: - Spatial

    static let spatialFunctions: [String: SpatialRelation] = Dictionary(uniqueKeysWithValues: SpatialRelation.allCases.map { ("S_" + $0.rawValue.uppercased(), $0) })
    static let geometryKeywords = ["POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION"]

    /// BBOX(west, south, east, north), or with heights (dropped): a polygon, as CQL2 defines it.
    static func box(_ numbers: [Double]) throws(FilterError) -> Geometry {
        let (w, s, e, n): (Double, Double, Double, Double)
        switch numbers.count {
        case 4: (w, s, e, n) = (numbers[0], numbers[1], numbers[2], numbers[3])
        case 6: (w, s, e, n) = (numbers[0], numbers[1], numbers[3], numbers[4])
        default: throw fail("a BBOX has 4 numbers (west, south, east, north) or 6, not \(numbers.count)")
        }
        guard w <= e, s <= n else { throw fail("a BBOX's west must not exceed its east, nor its south its north (\(numbers))") }
        return try checkedShape(.polygon(Polygon(rings: [[w, s, e, s, e, n, w, n, w, s]])))
    }

    /// A filter's geometry: every coordinate a longitude and a latitude (CRS84).
    static func checkedShape(_ geometry: Geometry) throws(FilterError) -> Geometry {
        func valid(_ flat: [Double]) -> Bool {
            var i = 0
            while i + 1 < flat.count {
                guard flat[i].isFinite, flat[i + 1].isFinite, abs(flat[i]) <= 180, abs(flat[i + 1]) <= 90 else { return false }
                i += 2
            }
            return true
        }
        func check(_ g: Geometry) -> Bool {
            switch g {
            case .point(let p): valid([p.lon, p.lat])
            case .lineString(let l): valid(l.coordinates)
            case .polygon(let p): valid(p.coordinates)
            case .multiPoint(let m): valid(m.coordinates)
            case .multiLineString(let m): valid(m.coordinates)
            case .multiPolygon(let m): m.polygons.allSatisfy { valid($0.coordinates) }
            case .collection(let parts): parts.allSatisfy(check)
            }
        }
        guard check(geometry) else { throw fail("a filter's geometry is in longitude and latitude (CRS84): \(Quote.input(WKT.encode(geometry)))") }
        return geometry
    }

    static func geometry(_ json: JSONValue) throws(FilterError) -> Geometry {
        if case .object(let node) = json, case .array(let items)? = node["bbox"] {
            var numbers: [Double] = []
            for item in items {
                guard let n = item.number, n.isFinite else { throw fail("a bbox holds numbers") }
                numbers.append(n)
            }
            return try box(numbers)
        }
        do {
            return try checkedShape(try GeoJSON.geometry(from: json))
        } catch let problem as FilterError {
            throw problem
        } catch {
            throw fail("expected a GeoJSON geometry or {\"bbox\": […]}: \(error)")
        }
    }

    // MARK: - Temporal

    /// One end of a period: a property's instant, or a constant one (an open end, '..', is
    /// the distant past or future).
    enum End: Equatable {
        case field(FieldExpression)
        case time(UTCTime)
    }

    /// An instant is a period that starts and ends at once.
    struct Period {
        var start: End
        var end: End
    }

    /// Which ends of the two periods a relation compares: (end of A, comparison, end of B),
    /// all of which must hold; `disjoint` is the one relation that needs any of two.
    enum Side { case start, end }
    struct TemporalRelation {
        var atoms: [(Side, Comparison, Side)]
        var any = false
    }

    /// CQL2's temporal functions by their definitions over the periods' ends.
    static let temporalFunctions: [String: TemporalRelation] = [
        "T_AFTER": TemporalRelation(atoms: [(.start, .greater, .end)]),
        "T_BEFORE": TemporalRelation(atoms: [(.end, .less, .start)]),
        "T_CONTAINS": TemporalRelation(atoms: [(.start, .less, .start), (.end, .greater, .end)]),
        "T_DISJOINT": TemporalRelation(atoms: [(.end, .less, .start), (.start, .greater, .end)], any: true),
        "T_DURING": TemporalRelation(atoms: [(.start, .greater, .start), (.end, .less, .end)]),
        "T_EQUALS": TemporalRelation(atoms: [(.start, .equal, .start), (.end, .equal, .end)]),
        "T_FINISHEDBY": TemporalRelation(atoms: [(.start, .less, .start), (.end, .equal, .end)]),
        "T_FINISHES": TemporalRelation(atoms: [(.start, .greater, .start), (.end, .equal, .end)]),
        "T_INTERSECTS": TemporalRelation(atoms: [(.start, .lessOrEqual, .end), (.end, .greaterOrEqual, .start)]),
        "T_MEETS": TemporalRelation(atoms: [(.end, .equal, .start)]),
        "T_METBY": TemporalRelation(atoms: [(.start, .equal, .end)]),
        "T_OVERLAPPEDBY": TemporalRelation(atoms: [(.start, .greater, .start), (.start, .less, .end), (.end, .greater, .end)]),
        "T_OVERLAPS": TemporalRelation(atoms: [(.start, .less, .start), (.end, .greater, .start), (.end, .less, .end)]),
        "T_STARTEDBY": TemporalRelation(atoms: [(.start, .equal, .start), (.end, .greater, .end)]),
        "T_STARTS": TemporalRelation(atoms: [(.start, .equal, .start), (.end, .less, .end)]),
    ]

    /// A TIMESTAMP ('2019-04-15T06:00:00Z', UTC) or a DATE ('2019-04-15', its midnight UTC).
    static func instant(_ text: String, date: Bool) throws(FilterError) -> UTCTime {
        if date {
            guard text.count == 10, let time = UTCTime.parse(text + "T00:00:00Z") else { throw fail("\(Quote.input(text)) is not a DATE (YYYY-MM-DD)") }
            return time
        }
        guard let time = UTCTime.parse(text) else { throw fail("\(Quote.input(text)) is not a TIMESTAMP in UTC (YYYY-MM-DDTHH:MM:SSZ)") }
        return time
    }

    /// The relation as comparisons of one side's property with the other side's constants.
    static func temporal(_ name: String, _ relation: TemporalRelation, _ a: Period, _ b: Period) throws(FilterError) -> Expression {
        func end(_ period: Period, _ side: Side) -> End { side == .start ? period.start : period.end }
        var terms: [Expression] = []
        for (left, comparison, right) in relation.atoms {
            switch (end(a, left), end(b, right)) {
            case (.field(let field), .time(let t)): terms.append(.instant(field, comparison, t))
            case (.time(let t), .field(let field)): terms.append(.instant(field, comparison.flipped, t))
            case (.time(let x), .time(let y)):
                // Two constants: decided now (TRUE is an empty AND, FALSE an empty OR).
                terms.append(comparison.holds(x, y) ? .and([]) : .or([]))
            case (.field, .field):
                throw fail("\(name) compares a property with constants (TIMESTAMP, DATE, INTERVAL), not with another property")
            }
        }
        return terms.count == 1 ? terms[0] : relation.any ? .or(terms) : .and(terms)
    }

    static func period(_ json: JSONValue) throws(FilterError) -> Period {
        func end(_ item: JSONValue, start: Bool) throws(FilterError) -> End {
            switch item {
            case .string(".."): return .time(start ? .distantPast : .distantFuture)
            case .string(let text): return .time(try instant(text, date: text.count == 10))
            case .object(let node) where node["property"] != nil: return .field(try property(item))
            default: return .time(try instantValue(item))
            }
        }
        if case .object(let node) = json, case .array(let ends)? = node["interval"] {
            guard ends.count == 2 else { throw fail("an interval has two ends") }
            return Period(start: try end(ends[0], start: true), end: try end(ends[1], start: false))
        }
        if case .object(let node) = json, node["property"] != nil {
            let field = try property(json)
            return Period(start: .field(field), end: .field(field))
        }
        let t = try instantValue(json)
        return Period(start: .time(t), end: .time(t))
    }

    /// `{"timestamp": …}` or `{"date": …}`.
    static func instantValue(_ json: JSONValue) throws(FilterError) -> UTCTime {
        if case .object(let node) = json {
            if case .string(let text)? = node["timestamp"] { return try instant(text, date: false) }
            if case .string(let text)? = node["date"] { return try instant(text, date: true) }
        }
        throw fail("expected {\"timestamp\": …}, {\"date\": …} or {\"interval\": […]}, got \(Quote.input(JSON.serialize(json)))")
    }

    static func comparison(_ op: String, _ a: JSONValue, _ b: JSONValue) throws(FilterError) -> Expression {
        guard let comparison = Comparison(rawValue: op) else { throw fail("'\(op)' is not a comparison") }
        func isInstant(_ json: JSONValue) -> Bool {
            guard case .object(let node) = json else { return false }
            return node["timestamp"] != nil || node["date"] != nil
        }
        if isInstant(b) { return .instant(try property(a), comparison, try instantValue(b)) }
        if isInstant(a) { return .instant(try property(b), comparison.flipped, try instantValue(a)) }
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
            if let function = functionName() {
                if let relation = CQL2.spatialFunctions[function] { return try spatial(relation) }
                if let relation = CQL2.temporalFunctions[function] { return try temporal(function, relation) }
                index = start
                throw error("the function \(Quote.input(function)) is not supported (the spatial S_… and temporal T_… functions are)")
            }
            if let instant = try instantIfAny() {
                guard let comparison = comparisonOperator() else { throw error("expected a comparison after the TIMESTAMP or DATE") }
                return .instant(try property(), comparison.flipped, instant)
            }
            if let literal = try literalIfAny() {
                // 'value' op property
                guard let comparison = comparisonOperator() else { throw error("expected a comparison after the value") }
                let field = try property()
                return .compare(field, comparison.flipped, literal, position: CQL2.here)
            }
            index = start
            let field = try property()
            if let comparison = comparisonOperator() {
                if let instant = try instantIfAny() { return .instant(field, comparison, instant) }
                guard let literal = try literalIfAny() else { throw error("expected a value (a 'string', a number, TRUE, FALSE, TIMESTAMP('…') or DATE('…'))") }
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
            if keyword("LIKE") {
                guard case .text(let pattern)? = try literalIfAny() else { throw error("expected a 'pattern' after LIKE") }
                guard !LikePattern.endsInEscape(pattern) else { throw error("a LIKE pattern must not end in a lone '\\'") }
                return .like(field, pattern: pattern, negated: negated)
            }
            throw error("expected a comparison (=, <>, <, <=, >, >=), IS [NOT] NULL, [NOT] IN, [NOT] BETWEEN or [NOT] LIKE")
        }

        /// A function's name, read only when a '(' follows it (else nothing is read).
        mutating func functionName() -> String? {
            skipSpace()
            var end = index
            while end < characters.count, characters[end].isLetter || characters[end].isNumber || characters[end] == "_" { end += 1 }
            var open = end
            while open < characters.count, characters[open].isWhitespace { open += 1 }
            guard end > index, open < characters.count, characters[open] == "(" else { return nil }
            let name = String(characters[index..<end]).uppercased()
            // TIMESTAMP, DATE, INTERVAL and the geometries are values, not functions.
            guard !["TIMESTAMP", "DATE", "INTERVAL", "BBOX"].contains(name), CQL2.geometryKeywords.firstIndex(of: name) == nil else { return nil }
            index = open + 1
            return name
        }

        /// `S_INTERSECTS(geometry, POLYGON((…)))`, either way round; the '(' is read.
        mutating func spatial(_ relation: SpatialRelation) throws(FilterError) -> Expression {
            let swapped: Bool
            let field: FieldExpression
            let shape: Geometry
            if let first = try geometryIfAny() {
                guard symbol(",") else { throw error("expected ',' between the arguments") }
                (shape, field, swapped) = (first, try property(), true)
            } else {
                field = try property()
                guard symbol(",") else { throw error("expected ',' between the arguments") }
                guard let second = try geometryIfAny() else { throw error("expected a geometry (POINT(…), POLYGON(…), BBOX(…), …): a spatial function compares the geometry with a constant one") }
                (shape, swapped) = (second, false)
            }
            guard symbol(")") else { throw error("expected ')' after the two arguments") }
            return .spatial(field, swapped ? relation.swapped : relation, shape)
        }

        /// A WKT geometry or BBOX(…), in lon/lat; nil (and nothing read) otherwise.
        mutating func geometryIfAny() throws(FilterError) -> Geometry? {
            skipSpace()
            let start = index
            if keyword("BBOX") {
                guard symbol("(") else { throw error("expected '(' after BBOX") }
                var numbers: [Double] = []
                repeat {
                    guard case .number(let n)? = try literalIfAny() else { throw error("expected a number in BBOX(…)") }
                    numbers.append(n)
                } while symbol(",")
                guard symbol(")") else { throw error("expected ')' after BBOX's numbers") }
                return try CQL2.box(numbers)
            }
            guard CQL2.geometryKeywords.contains(where: { keyword($0) }) else { return nil }
            // The WKT runs to the parenthesis that closes its first one (or to EMPTY).
            var depth = 0
            var end = index
            while end < characters.count {
                if characters[end] == "(" { depth += 1 }
                if characters[end] == ")" {
                    depth -= 1
                    if depth == 0 { end += 1; break }
                    if depth < 0 { break }
                }
                end += 1
            }
            let text = String(characters[start..<end])
            do {
                let geometry = try WKT.decode(text)
                index = end
                return try CQL2.checkedShape(geometry)
            } catch let problem as WKTError {
                throw error("\(problem.description) in \(Quote.input(text))")
            } catch let other as FilterError {
                throw other
            } catch {
                throw self.error("not a geometry: \(Quote.input(text))")
            }
        }

        /// `TIMESTAMP('…')` or `DATE('…')`; nil (and nothing read) otherwise.
        mutating func instantIfAny() throws(FilterError) -> UTCTime? {
            skipSpace()
            let start = index
            let isDate: Bool
            if keyword("TIMESTAMP") { isDate = false } else if keyword("DATE") { isDate = true } else { return nil }
            guard symbol("(") else { index = start; return nil }
            guard case .text(let text)? = try literalIfAny() else { throw error("expected a 'quoted' time in \(isDate ? "DATE" : "TIMESTAMP")(…)") }
            guard symbol(")") else { throw error("expected ')' after the time") }
            return try CQL2.instant(text, date: isDate)
        }

        /// One side of a temporal function: a property, TIMESTAMP/DATE, or INTERVAL(a, b) whose
        /// ends are properties, 'times' (DATE or TIMESTAMP forms) or '..' (open).
        mutating func temporalOperand() throws(FilterError) -> CQL2.Period {
            skipSpace()
            if let instant = try instantIfAny() { return CQL2.Period(start: .time(instant), end: .time(instant)) }
            let start = index
            if keyword("INTERVAL") {
                guard symbol("(") else { index = start; return try temporalProperty() }
                let low = try intervalEnd(start: true), high: CQL2.End
                guard symbol(",") else { throw error("expected ',' in INTERVAL(start, end)") }
                high = try intervalEnd(start: false)
                guard symbol(")") else { throw error("expected ')' after INTERVAL's two ends") }
                return CQL2.Period(start: low, end: high)
            }
            return try temporalProperty()
        }

        mutating func temporalProperty() throws(FilterError) -> CQL2.Period {
            let field = try property()
            return CQL2.Period(start: .field(field), end: .field(field))
        }

        mutating func intervalEnd(start: Bool) throws(FilterError) -> CQL2.End {
            skipSpace()
            if let instant = try instantIfAny() { return .time(instant) }
            if case .text(let text)? = try literalIfAny() {
                if text == ".." { return .time(start ? .distantPast : .distantFuture) }
                return .time(try CQL2.instant(text, date: text.count == 10))
            }
            return .field(try property())
        }

        /// `T_DURING(a, b)` and its kind; the '(' is read.
        mutating func temporal(_ name: String, _ relation: CQL2.TemporalRelation) throws(FilterError) -> Expression {
            let a = try temporalOperand()
            guard symbol(",") else { throw error("expected ',' between \(name)'s arguments") }
            let b = try temporalOperand()
            guard symbol(")") else { throw error("expected ')' after \(name)'s two arguments") }
            return try CQL2.temporal(name, relation, a, b)
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
                    throw error("the function \(Quote.input(name)) is not supported (the spatial S_… and temporal T_… functions are)")
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
    func holds<T: Comparable>(_ a: T, _ b: T) -> Bool {
        switch self {
        case .equal: a == b
        case .notEqual: a != b
        case .less: a < b
        case .lessOrEqual: a <= b
        case .greater: a > b
        case .greaterOrEqual: a >= b
        }
    }

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

/// A LIKE pattern: `%` any run of characters, `_` one, `\` the next one literally. Characters
/// are Unicode scalars and case counts, as in PostgreSQL's LIKE under COLLATE "C", so a filter
/// pushed down to PostGIS selects what the same filter selects in memory.
struct LikePattern: Sendable {
    enum Token: Equatable, Sendable { case scalar(Unicode.Scalar), one, any }
    let tokens: [Token]

    init(_ pattern: String) {
        var tokens: [Token] = []
        var escaped = false
        for c in pattern.unicodeScalars {
            if escaped {
                tokens.append(.scalar(c))
                escaped = false
                continue
            }
            switch c {
            case "\\": escaped = true
            case "%": tokens.append(.any)
            case "_": tokens.append(.one)
            default: tokens.append(.scalar(c))
            }
        }
        self.tokens = tokens
    }

    /// A pattern that ends in a lone `\` escapes nothing: PostgreSQL refuses it, and so does CQL2 here.
    static func endsInEscape(_ pattern: String) -> Bool {
        pattern.unicodeScalars.reversed().prefix { $0 == "\\" }.count % 2 == 1
    }

    /// Wildcard matching with one backtrack point (the last `%`): linear in most cases,
    /// O(text × pattern) at worst, never exponential.
    func matches(_ text: String) -> Bool {
        let s = Array(text.unicodeScalars)
        var (i, p) = (0, 0)
        var star = -1, starText = 0
        while i < s.count {
            if p < tokens.count, tokens[p] == .one || tokens[p] == .scalar(s[i]) {
                i += 1
                p += 1
            } else if p < tokens.count, tokens[p] == .any {
                star = p
                starText = i
                p += 1
            } else if star >= 0 {
                p = star + 1
                starText += 1
                i = starText
            } else {
                return false
            }
        }
        while p < tokens.count, tokens[p] == .any { p += 1 }
        return p == tokens.count
    }
}
