import Engine
import Geometry
import Support

// A recursive-descent parser over the token array. Each token is looked at a bounded number of
// times and nesting is capped, so parsing is linear in the input and cannot overflow the
// stack. Errors name the line, the column, the token found and what was expected.

struct Parser {
    var tokens: [Token]
    var index = 0
    var depth = 0
    static let maxDepth = 64
    /// The upper bound of counts the parser leaves to the engine's limits.
    static let unbounded = 1_000_000_000
    /// The values bound to `$n`/`?`, or nil when preparing: then every parameter stands for a
    /// placeholder of the kind its place takes, so the text's syntax is checked without values.
    let parameters: [QueryValue]?
    /// The highest parameter number used so far.
    private(set) var parameterCount = 0

    static let statementKeywords = ["SHOW", "DESCRIBE", "FIND", "ROUTE", "TILE", "LOCATE", "EXPLAIN", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP"]
        + statementParsers.keys.sorted()
    static let locateClauses: Set<String> = ["K", "METHOD", "FINGERPRINTS", "SPEED"]
    static let routeClauses: Set<String> = ["AVOID", "SPEED", "PROFILE", "AT"]
    static let findClauses: Set<String> = ["CONTAINING", "NEAREST", "WITHIN", "INTERSECTING", "AT", "LINKED", "WHERE", "ORDER", "LIMIT", "RETURN", "GROUP", "HAVING"]

    init(_ text: String, parameters: [QueryValue]?) throws(QueryError) {
        tokens = try Lexer.tokens(text)
        self.parameters = parameters
    }

    /// Every statement of the text, with `parameters` bound to its `$n`/`?` (nil: check the
    /// syntax only, with placeholders). Statements end at ';', or at the end of a line when the
    /// next line starts a new statement.
    static func parse(_ text: String, parameters: [QueryValue]? = []) throws(QueryError) -> (statements: [(Statement, SourcePosition)], parameterCount: Int) {
        var parser = try Parser(text, parameters: parameters)
        var statements: [(Statement, SourcePosition)] = []
        while true {
            while parser.tokens[parser.index].isSymbol(";") { parser.index += 1 }
            if parser.tokens[parser.index].kind == .end { break }
            let start = parser.tokens[parser.index].position
            statements.append((try parser.statement(), start))
            let next = parser.peek
            if next.kind == .symbol(";") || next.kind == .end { continue }
            if let keyword = next.keyword, statementKeywords.contains(keyword), next.position.line > parser.previous.position.line { continue }
            throw parser.error(expected: "';' or the end of the statement", keywords: clauseKeywords)
        }
        guard !statements.isEmpty else {
            throw QueryError(kind: .syntax, code: "empty_query", message: "the query is empty", line: 1, column: 1,
                             hint: "try SHOW LAYERS")
        }
        if let parameters, parameters.count > parser.parameterCount {
            throw QueryError(kind: .invalid, code: "parameter_count", message: "\(parameters.count) values were given, but the text uses \(parser.parameterCount) parameter\(parser.parameterCount == 1 ? "" : "s")",
                             line: 1, column: 1)
        }
        return (statements, parser.parameterCount)
    }

    /// One place of a route and nothing after it: `POINT(lon lat)` or `layer [WHERE …]`. For
    /// places given as values (the schedule check's events), so that no place text can carry
    /// more of a statement with it.
    static func parsePlace(_ text: String) throws(QueryError) -> RouteStatement.Target {
        var parser = try Parser(text, parameters: [])
        let place = try parser.routeTarget()
        guard parser.tokens[parser.index].kind == .end else {
            throw parser.error(expected: "the end of the place", hint: "a place is POINT(lon lat) or a layer with an optional WHERE, e.g. pavilions WHERE name = 'Pavilon goril'")
        }
        return place
    }

    /// The value bound to the parameter token at `peek` (consumed), or nil when preparing.
    mutating func boundValue(_ n: Int, _ what: String) throws(QueryError) -> (QueryValue?, SourcePosition) {
        let position = advance().position
        parameterCount = max(parameterCount, n)
        guard let parameters else { return (nil, position) }
        guard n <= parameters.count else {
            throw QueryError(kind: .invalid, code: "missing_parameter", message: "no value for $\(n): \(parameters.count) value\(parameters.count == 1 ? " was" : "s were") given",
                             line: position.line, column: position.column, length: position.length, hint: "bind \(what) to $\(n)")
        }
        if case .text(let text) = parameters[n - 1], TextRule.holdsNUL(text) {
            throw QueryError(kind: .invalid, code: "invalid_parameter", message: "$\(n) \(TextRule.nulMessage)",
                             line: position.line, column: position.column, length: position.length)
        }
        return (parameters[n - 1], position)
    }

    func wrongKind(_ n: Int, _ value: QueryValue, expected: String, at position: SourcePosition) -> QueryError {
        QueryError(kind: .invalid, code: "parameter_type", message: "$\(n) must be \(expected), got \(value.kindName)",
                   line: position.line, column: position.column, length: position.length)
    }

    // MARK: - Tokens

    /// The next token, copied whole (with its strings). Where only a field is needed, the parser
    /// reads `tokens[index].field`, which copies just that: token copies were a tenth of the
    /// cost of parsing and planning.
    var peek: Token { tokens[index] }
    var previous: Token { tokens[max(0, index - 1)] }

    mutating func advance() -> Token {
        let token = tokens[index]
        if index < tokens.count - 1 { index += 1 }
        return token
    }

    func isKeyword(_ keyword: String, offset: Int = 0) -> Bool {
        let i = min(index + offset, tokens.count - 1)
        return tokens[i].keyword == keyword
    }

    mutating func accept(_ keyword: String) -> Bool {
        guard isKeyword(keyword) else { return false }
        index += 1
        return true
    }

    mutating func accept(symbol: String) -> Bool {
        guard tokens[index].isSymbol(symbol) else { return false }
        index += 1
        return true
    }

    mutating func expect(_ keyword: String, _ context: String) throws(QueryError) {
        guard accept(keyword) else { throw error(expected: "\(keyword) \(context)") }
    }

    mutating func expect(symbol: String, _ context: String) throws(QueryError) {
        guard accept(symbol: symbol) else { throw error(expected: "'\(symbol)' \(context)") }
    }

    /// A syntax error at the next token. Without a hint, a word found where keywords were
    /// expected gets "did you mean NEAREST?" when it is a likely typo of one: of `keywords`, by
    /// default the upper-case words that `expected` names. Computed here, on the error path
    /// only, so parsing valid text costs nothing more.
    func error(expected: String, hint: String? = nil, keywords: [String]? = nil) -> QueryError {
        let token = peek
        var hint = hint
        if hint == nil, case .word(let word) = token.kind {
            let candidates = keywords ?? expected.split(whereSeparator: { !$0.isLetter }).map(String.init)
                .filter { $0.count > 1 && $0 == $0.uppercased() }
            // A word every letter of which would change (x for K) is no typo.
            if let close = Suggestion.closest(to: word.uppercased(), in: candidates), close != word.uppercased(),
               Suggestion.distance(close, word.uppercased()) < min(close.count, word.count) {
                hint = "did you mean \(close)?"
            }
        }
        return QueryError(kind: .syntax, code: token.kind == .end ? "unexpected_end" : "syntax_error",
                          message: "expected \(expected), found \(token.quoted)",
                          line: token.position.line, column: token.position.column, length: token.position.length, hint: hint)
    }

    /// The keywords that can follow a statement's last clause: what a typo there was meant as.
    static var clauseKeywords: [String] {
        (findClauses.union(routeClauses).union(locateClauses).union(["AND", "OR", "ASC", "DESC", "LAYER"])).sorted()
    }

    func invalid(_ message: String, at position: SourcePosition, hint: String? = nil) -> QueryError {
        QueryError(kind: .invalid, code: "invalid_value", message: message, line: position.line, column: position.column, length: position.length, hint: hint)
    }

    mutating func name(_ what: String) throws(QueryError) -> Name {
        guard case .word(let word) = tokens[index].kind else { throw error(expected: what) }
        let position = advance().position
        return Name(text: word, position: position)
    }

    mutating func number(_ what: String) throws(QueryError) -> (Double, SourcePosition) {
        if case .parameter(let n) = tokens[index].kind {
            let (value, position) = try boundValue(n, what)
            switch value {
            case nil: return (1, position)
            case .number(let number)?: return (number, position)
            case let other?: throw wrongKind(n, other, expected: "a number (\(what))", at: position)
            }
        }
        guard case .number(let value, _) = tokens[index].kind else { throw error(expected: what) }
        return (value, advance().position)
    }

    mutating func integer(_ what: String, in range: ClosedRange<Int>) throws(QueryError) -> (Int, SourcePosition) {
        let (value, position) = try number(what)
        guard value == value.rounded(), value >= Double(range.lowerBound), value <= Double(range.upperBound) else {
            // An open-ended count (NEAREST k) is bounded by the engine's limits, not here.
            let bounds = range.upperBound >= Parser.unbounded ? "of at least \(range.lowerBound)" : "from \(range.lowerBound) to \(range.upperBound)"
            throw invalid("\(what) must be a whole number \(bounds), got \(Self.format(value))", at: position)
        }
        return (Int(value), position)
    }

    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// Clauses of `allowed` in any order, each at most once (ROUTE's and LOCATE's, after their
    /// required parts): `parse` reads each one after its keyword.
    mutating func clauses(_ allowed: Set<String>, of statement: String,
                          _ parse: (inout Parser, String) throws(QueryError) -> Void) throws(QueryError) {
        var seen: Set<String> = []
        while let keyword = tokens[index].keyword, allowed.contains(keyword) {
            guard seen.insert(keyword).inserted else {
                throw QueryError(kind: .syntax, code: "duplicate_clause", message: "\(keyword) appears twice in one \(statement)",
                                 line: tokens[index].position.line, column: tokens[index].position.column, length: tokens[index].position.length)
            }
            index += 1
            try parse(&self, keyword)
        }
    }

    // MARK: - Statements

    mutating func statement() throws(QueryError) -> Statement {
        let token = peek
        switch token.keyword {
        case "SHOW":
            index += 1
            if accept("FENCES") { return .fence(.show) }
            try expect("LAYERS", "after SHOW (SHOW LAYERS or SHOW FENCES)")
            return .showLayers
        case "CREATE":
            index += 1
            return .fence(try createFence())
        case "DROP":
            index += 1
            return .fence(try dropFence())
        case "DESCRIBE":
            index += 1
            return .describe(try name("a layer or tile set name after DESCRIBE"))
        case "FIND":
            index += 1
            return .find(try find())
        case "ROUTE":
            index += 1
            return .route(try route())
        case "TILE":
            index += 1
            return .tile(try tile())
        case "LOCATE":
            index += 1
            return .locate(try locate(at: token.position))
        case "INSERT", "UPDATE", "DELETE":
            return .write(try writeStatement(token.keyword ?? ""))
        case "EXPLAIN":
            index += 1
            guard tokens[index].keyword != "EXPLAIN" else { throw error(expected: "a statement to explain") }
            return .explain(try statement())
        case let keyword? where Parser.statementParsers[keyword] != nil:
            index += 1
            guard let parse = Parser.statementParsers[keyword] else { throw error(expected: "a statement") }
            return .other(try parse(&self, token.position))
        default:
            var hint: String? = "statements start with SHOW, DESCRIBE, FIND, ROUTE, TILE, LOCATE, SEARCH, INSERT, UPDATE, DELETE or EXPLAIN"
            if case .word(let word) = token.kind, let close = Suggestion.closest(to: word.uppercased(), in: Parser.statementKeywords) {
                hint = "did you mean \(close)?"
            }
            throw error(expected: "a statement", hint: hint)
        }
    }

    /// Whether the tokens ahead read `( layer`: a selection, where a point could also stand.
    var atSelection: Bool {
        guard tokens[index].isSymbol("("), case .word = tokens[min(index + 1, tokens.count - 1)].kind else { return false }
        return true
    }

    /// Whether the tokens ahead read `( layer CONTAINING` or `( layer NEAREST`: a feature
    /// reference, not a parenthesised condition.
    var atFeatureReference: Bool {
        guard tokens[index].isSymbol("("), case .word = tokens[min(index + 1, tokens.count - 1)].kind else { return false }
        let relation = tokens[min(index + 2, tokens.count - 1)].keyword
        return relation == "CONTAINING" || relation == "NEAREST"
    }

    // MARK: - Values

    /// `POINT(lon lat)`, as in WKT, or labelled in either order: `POINT(lat 50.088, lon 14.42)`.
    mutating func point() throws(QueryError) -> PointLiteral {
        let start = tokens[index].position
        if case .parameter(let n) = tokens[index].kind {
            let (value, position) = try boundValue(n, "a point")
            switch value {
            case nil: return PointLiteral(lon: 0, lat: 0, position: position)
            case .point(let p)?:
                do {
                    _ = try Point.checked(lon: p.lon, lat: p.lat)
                } catch {
                    throw invalid("$\(n): \(error)", at: position)
                }
                return PointLiteral(lon: p.lon, lat: p.lat, position: position)
            case let other?: throw wrongKind(n, other, expected: "a point", at: position)
            }
        }
        guard accept("POINT") else { throw error(expected: "a point, POINT(lon lat)") }
        try expect(symbol: "(", "after POINT")
        var lon: Double, lat: Double
        var lonPosition: SourcePosition, latPosition: SourcePosition
        if let label = tokens[index].keyword, label == "LON" || label == "LAT" {
            index += 1
            let (first, firstPosition) = try number("a number after \(label.lowercased())")
            _ = accept(symbol: ",")
            let other = label == "LON" ? "LAT" : "LON"
            try expect(other, "(a labelled point names both: POINT(lon 14.42 lat 50.08))")
            let (second, secondPosition) = try number("a number after \(other.lowercased())")
            if label == "LON" {
                (lon, lonPosition, lat, latPosition) = (first, firstPosition, second, secondPosition)
            } else {
                (lat, latPosition, lon, lonPosition) = (first, firstPosition, second, secondPosition)
            }
        } else {
            (lon, lonPosition) = try number("the longitude in POINT(lon lat)")
            if tokens[index].isSymbol(",") {
                throw error(expected: "the latitude", hint: "write POINT(lon lat) with a space and no comma, as in WKT: POINT(14.4208 50.0880)")
            }
            (lat, latPosition) = try number("the latitude in POINT(lon lat)")
        }
        try expect(symbol: ")", "to close the point")
        do {
            _ = try Point.checked(lon: lon, lat: lat)
        } catch {
            throw invalid(error.message, at: error.axis == .lat ? latPosition : lonPosition,
                          hint: error.looksSwapped ? "did you swap longitude and latitude? POINT takes (lon lat): POINT(\(Self.format(lat)) \(Self.format(lon)))" : nil)
        }
        return PointLiteral(lon: lon, lat: lat, position: SourcePosition(line: start.line, column: start.column, length: max(1, previous.position.column + 1 - start.column)))
    }

    /// `BBOX(minLon minLat, maxLon maxLat)`
    mutating func bbox() throws(QueryError) -> Spatial {
        let start = tokens[index].position
        guard accept("BBOX") else { throw error(expected: "a box, BBOX(minLon minLat, maxLon maxLat)") }
        try expect(symbol: "(", "after BBOX")
        let (minLon, minLonPosition) = try number("the west longitude in BBOX(minLon minLat, maxLon maxLat)")
        let (minLat, minLatPosition) = try number("the south latitude in BBOX(minLon minLat, maxLon maxLat)")
        try expect(symbol: ",", "between the corners of BBOX(minLon minLat, maxLon maxLat)")
        let (maxLon, maxLonPosition) = try number("the east longitude in BBOX(minLon minLat, maxLon maxLat)")
        let (maxLat, maxLatPosition) = try number("the north latitude in BBOX(minLon minLat, maxLon maxLat)")
        try expect(symbol: ")", "to close the box")
        for (lon, lonPosition, lat, latPosition) in [(minLon, minLonPosition, minLat, minLatPosition), (maxLon, maxLonPosition, maxLat, maxLatPosition)] {
            do {
                _ = try Point.checked(lon: lon, lat: lat)
            } catch {
                throw invalid(error.message, at: error.axis == .lat ? latPosition : lonPosition,
                              hint: error.looksSwapped ? "did you swap longitude and latitude? BBOX takes (minLon minLat, maxLon maxLat)" : nil)
            }
        }
        guard minLon <= maxLon, minLat <= maxLat else {
            throw invalid("the box's first corner must be south-west of its second", at: start, hint: "BBOX(minLon minLat, maxLon maxLat)")
        }
        return .intersecting(minLon: minLon, minLat: minLat, maxLon: maxLon, maxLat: maxLat, position: start)
    }

    /// A number and its unit, in metres: `500 m`, `2 km`.
    mutating func distance() throws(QueryError) -> Double {
        let (value, position) = try number("a distance (e.g. 500 m or 2 km)")
        guard value >= 0 else { throw invalid("a distance cannot be negative", at: position) }
        let unit = try expectUnit(["M", "KM"], after: position, what: "m or km")
        return unit == "KM" ? value * 1000 : value
    }

    /// How far a walk reaches: a time (`15 min`, `90 s`, `1 h`) or a distance (`800 m`, `2 km`).
    mutating func reachLimit() throws(QueryError) -> IsochroneRequest.Limit {
        let (value, position) = try number("a time or a distance (e.g. 15 min or 800 m)")
        guard value >= 0 else { throw invalid("a time or a distance cannot be negative", at: position) }
        switch try expectUnit(["S", "MIN", "H", "M", "KM"], after: position, what: "s, min, h, m or km") {
        case "S": return .seconds(value)
        case "MIN": return .seconds(value * 60)
        case "H": return .seconds(value * 3600)
        case "KM": return .metres(value * 1000)
        default: return .metres(value)
        }
    }

    mutating func hours() throws(QueryError) -> (Double, SourcePosition) {
        let (value, position) = try number("a duration in hours (e.g. 24 h)")
        guard value > 0, value <= 24 * 366 else { throw invalid("a duration must be more than 0 h and at most a year", at: position) }
        _ = try expectUnit(["H"], after: position, what: "h")
        return (value, position)
    }

    /// The unit word after a number. `km/h` is lexed as km, '/', h.
    @discardableResult
    mutating func expectUnit(_ units: [String], after position: SourcePosition, what: String) throws(QueryError) -> String {
        if units == ["KM/H"] {
            guard isKeyword("KM"), tokens[min(index + 1, tokens.count - 1)].kind == .symbol("/"), isKeyword("H", offset: 2) else {
                throw error(expected: "the unit km/h after the speed")
            }
            index += 3
            return "KM/H"
        }
        guard let keyword = tokens[index].keyword, units.contains(keyword) else {
            throw error(expected: "a unit (\(what)) after \(tokens[index - 1].quoted.replacingOccurrences(of: "number ", with: ""))",
                        hint: units.contains("M") ? "distances need a unit: 500 m, 2 km" : nil)
        }
        index += 1
        return keyword
    }
}
