// Fields and WHERE conditions: parsed into an expression tree (Parser), then compiled into a
// closure over a layer's feature indices (Planner), so evaluating a row does no lookup by name.

import Engine
import Foundation
import Geometry
import Store
import Support

extension Parser {
    // MARK: - Fields and expressions

    mutating func fieldExpression() throws(QueryError) -> FieldExpression {
        let token = peek
        if atFeatureReference { return try featureReference() }
        guard case .word = token.kind else { throw error(expected: "a field name") }
        let isCall = tokens[min(index + 1, tokens.count - 1)].kind == .symbol("(")
        switch token.keyword {
        case "LATEST" where isCall:
            index += 2
            let column = try name("a time-series column in LATEST(…)")
            try expect(symbol: ")", "to close LATEST(")
            return .latest(column, position: token.position)
        case "HISTORY" where isCall:
            index += 2
            let column = try name("a time-series column in HISTORY(column, hours)")
            try expect(symbol: ",", "and a duration: HISTORY(\(column.text), 24 h)")
            let (hours, position) = try self.hours()
            guard hours == hours.rounded() else { throw invalid("HISTORY takes whole hours", at: position) }
            try expect(symbol: ")", "to close HISTORY(")
            return .history(column, hours: Int(hours), position: token.position)
        case "OBSERVED_AT":
            index += 1
            return .observedAt(token.position)
        case let keyword? where isCall && (AggregateFunction(rawValue: keyword.lowercased()) != nil || keyword == "ANY" || keyword == "ALL"
                                           || keyword == "WKT" || keyword == "WKB"):
            return try callExpression(keyword)
        default:
            return .attribute(try name("a field name"))
        }
    }

    mutating func expression() throws(QueryError) -> Expression {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Parser.maxDepth else {
            throw QueryError(kind: .limit, code: "too_deep", message: "the condition nests deeper than \(Parser.maxDepth) levels",
                             line: tokens[index].position.line, column: tokens[index].position.column)
        }
        var terms = [try conjunction()]
        while accept("OR") { terms.append(try conjunction()) }
        return terms.count == 1 ? terms[0] : .or(terms)
    }

    mutating func conjunction() throws(QueryError) -> Expression {
        var terms = [try negation()]
        while accept("AND") { terms.append(try negation()) }
        return terms.count == 1 ? terms[0] : .and(terms)
    }

    mutating func negation() throws(QueryError) -> Expression {
        if isKeyword("NOT") && tokens[min(index + 1, tokens.count - 1)].kind != .symbol("=") {
            index += 1
            depth += 1
            defer { depth -= 1 }
            guard depth <= Parser.maxDepth else {
                throw QueryError(kind: .limit, code: "too_deep", message: "the condition nests deeper than \(Parser.maxDepth) levels",
                                 line: tokens[index].position.line, column: tokens[index].position.column)
            }
            return .not(try negation())
        }
        return try primary()
    }

    mutating func primary() throws(QueryError) -> Expression {
        if !atFeatureReference && accept(symbol: "(") {
            let inner = try expression()
            try expect(symbol: ")", "to close '('")
            return inner
        }
        let isCall = tokens[min(index + 1, tokens.count - 1)].kind == .symbol("(")
        if isKeyword("MEASURES") && isCall {
            index += 2
            let column = try name("a time-series column in MEASURES(…)")
            try expect(symbol: ")", "to close MEASURES(")
            return .measures(column)
        }
        if isKeyword("FRESH") && isCall {
            let position = advance().position
            index += 1
            let (hours, _) = try self.hours()
            try expect(symbol: ")", "to close FRESH(")
            return .fresh(hours: hours, position: position)
        }
        guard case .word = tokens[index].kind else {
            if atFeatureReference { return try condition(on: try featureReference()) }
            throw error(expected: "a condition (a field name, NOT or '(')")
        }
        return try condition(on: try fieldExpression())
    }

    /// What follows a field in a condition: IS [NOT] NULL, [NOT] IN (…), ~ ['CZECH'] 'text', or a
    /// comparison.
    mutating func condition(on field: FieldExpression) throws(QueryError) -> Expression {
        if accept("IS") {
            let negated = accept("NOT")
            try expect("NULL", negated ? "after IS NOT" : "after IS")
            return .isNull(field, negated: negated)
        }
        let negatedIn = isKeyword("NOT") && isKeyword("IN", offset: 1)
        if negatedIn { index += 1 }
        if accept("IN") {
            try expect(symbol: "(", "after IN")
            var values = [try literal()]
            while accept(symbol: ",") {
                values.append(try literal())
                guard values.count <= 1000 else { throw error(expected: "')': an IN list holds at most 1000 values") }
            }
            try expect(symbol: ")", "to close the IN list")
            return .isIn(field, values, negated: negatedIn)
        }
        let negatedLike = isKeyword("NOT") && isKeyword("LIKE", offset: 1)
        if negatedLike { index += 1 }
        if accept("LIKE") {
            // SQL's and CQL2's LIKE: `%` any run, `_` one character, `\` escapes; case counts.
            let position = tokens[index].position
            let pattern = try text("the LIKE pattern", kind: "text (a LIKE pattern)", missing: "a pattern or a parameter after LIKE",
                                   hint: "name LIKE 'Praha 4%'") ?? ""
            guard !LikePattern.endsInEscape(pattern) else { throw invalid("a LIKE pattern must not end in a lone '\\'", at: position) }
            return .like(field, pattern: pattern, negated: negatedLike)
        }
        if accept(symbol: "~") {
            let czech = accept("CZECH")
            // A bound parameter, so that an app matches a name its user typed without pasting
            // it into the text.
            let matched = try text("the text to match", kind: "text (~ matches text)",
                                missing: czech ? "a string or a parameter after '~ CZECH'" : "a string or a parameter after '~'",
                                hint: czech ? "~ CZECH matches Czech word forms: name ~ CZECH 'bizoni'" : "~ matches text: name ~ 'praha 6'") ?? ""
            return czech ? .matchesCzech(field, matched) : .matches(field, matched)
        }
        let operatorToken = peek
        let comparison: Comparison
        switch operatorToken.kind {
        case .symbol("="): comparison = .equal
        case .symbol("<>"), .symbol("!="): comparison = .notEqual
        case .symbol("<"): comparison = .less
        case .symbol("<="): comparison = .lessOrEqual
        case .symbol(">"): comparison = .greater
        case .symbol(">="): comparison = .greaterOrEqual
        default:
            throw error(expected: "an operator after \(field.label) (=, <>, <, <=, >, >=, IN, IS, LIKE, ~)")
        }
        index += 1
        let value = try literal()
        if value == .null {
            throw QueryError(kind: .syntax, code: "syntax_error", message: "a comparison with NULL is never true",
                             line: operatorToken.position.line, column: operatorToken.position.column,
                             hint: comparison == .notEqual ? "write \(field.label) IS NOT NULL" : "write \(field.label) IS NULL")
        }
        return .compare(field, comparison, value, position: operatorToken.position)
    }

    /// A 'string', or a parameter bound to text (nil when it is bound to nothing): what `~`,
    /// LIKE and SEARCH take. `what` names the value, `kind` what a parameter must hold,
    /// `missing` what was expected when neither is there.
    mutating func text(_ what: String, kind: String, missing: String, hint: String) throws(QueryError) -> String? {
        switch tokens[index].kind {
        case .string(let string):
            index += 1
            return string
        case .parameter(let n):
            let (value, position) = try boundValue(n, what)
            switch value {
            case nil: return nil
            case .text(let string)?: return string
            case let other?: throw wrongKind(n, other, expected: kind, at: position)
            }
        default:
            throw error(expected: missing, hint: hint)
        }
    }

    mutating func literal() throws(QueryError) -> Literal {
        let token = peek
        switch token.kind {
        case .number(let value, _): index += 1; return .number(value)
        case .string(let text): index += 1; return .text(text)
        case .parameter(let n):
            let (value, position) = try boundValue(n, "a value")
            switch value {
            case nil: return .text("")
            case .number(let number)?: return .number(number)
            case .text(let text)?: return .text(text)
            case .bool(let bool)?: return .bool(bool)
            case .null?: return .null
            case let other?: throw wrongKind(n, other, expected: "a number, text or a boolean", at: position)
            }
        case .word where token.keyword == "TRUE": index += 1; return .bool(true)
        case .word where token.keyword == "FALSE": index += 1; return .bool(false)
        case .word where token.keyword == "NULL": index += 1; return .null
        case .word(let word):
            throw error(expected: "a value (a number, 'text', TRUE, FALSE)", hint: "text goes in single quotes: \(Quote.input(word))")
        default:
            throw error(expected: "a value (a number, 'text', TRUE, FALSE)")
        }
    }
}

extension Planner {
    // MARK: WHERE

    func compile(_ expression: Expression, on layer: Layer) throws(QueryError) -> Predicate {
        switch expression {
        case .and(let terms):
            var all: [Predicate] = []
            for term in terms { all.append(try compile(term, on: layer)) }
            let predicates = all
            return { i in predicates.allSatisfy { $0(i) } }
        case .or(let terms):
            var any: [Predicate] = []
            for term in terms { any.append(try compile(term, on: layer)) }
            let predicates = any
            return { i in predicates.contains { $0(i) } }
        case .not(let a):
            let x = try compile(a, on: layer)
            return { !x($0) }
        case .compare(let field, let comparison, let literal, _):
            try checkComparison(field, literal, comparison, on: layer)
            if case .quantified(let quantifier, let list, _) = field {
                return try quantifiedPredicate(quantifier, list, comparison, literal, on: layer)
            }
            let value = try accessor(field, on: layer)
            return { Planner.compare(value($0), comparison, literal) }
        case .isIn(let field, let literals, let negated):
            for literal in literals { try checkComparison(field, literal, .equal, on: layer) }
            let value = try accessor(field, on: layer)
            return { i in
                let v = value(i)
                return literals.contains { Planner.compare(v, .equal, $0) } != negated
            }
        case .isNull(let field, let negated):
            let value = try accessor(field, on: layer)
            return { value($0).isNull != negated }
        case .matches(let field, let pattern):
            try checkMatch(field, on: layer)
            let value = try accessor(field, on: layer)
            let folded = TextFold.fold(pattern)
            return { i in value(i).stringValue.map { TextFold.fold($0).contains(folded) } ?? false }
        case .matchesCzech(let field, let text):
            try checkMatch(field, on: layer)
            let value = try accessor(field, on: layer)
            let pattern = CzechStemmer.Pattern(text)
            return { i in value(i).stringValue.map { pattern.matches($0) } ?? false }
        case .like(let field, let pattern, let negated):
            try checkMatch(field, on: layer, what: "LIKE matches text")
            let value = try accessor(field, on: layer)
            let like = LikePattern(pattern)
            return { i in value(i).stringValue.map { like.matches($0) != negated } ?? false }
        case .instant(let field, let comparison, let time):
            try checkMatch(field, on: layer, what: "a TIMESTAMP or DATE compares with text holding times")
            let value = try accessor(field, on: layer)
            return { i in value(i).stringValue.flatMap(UTCTime.parse).map { comparison.holds($0, time) } ?? false }
        case .spatial(_, let relation, let shape):
            if wherePushedDown { return { _ in false } }  // never called: the database decides (Pushdown.swift)
            let related: [Bool]
            do { related = try snapshot.relating(layer, relation, shape, deadline: deadline) } catch { throw Runner.engineError(error, at: CQL2.here) }
            return { related[$0] }
        case .measures(let column):
            let (stored, keyOf, _) = try timeSeries(column, on: layer)
            if wherePushedDown { return { _ in false } }  // never called: the database decides (Pushdown.swift)
            let series = snapshot.readsSeriesFromStore ? try everyStation(stored, on: layer, needs: SeriesNeeds(columns: [column.text]), at: column.position) : stored
            let name = column.text
            return { i in keyOf(i).map { series.measures($0, name) } ?? false }
        case .fresh(let hours, let position):
            guard let stored = snapshot.timeSeriesByLayer[layer.name] else {
                throw Planner.error(.invalid, "no_time_series", "'\(layer.name)' has no time series", at: position, hint: timeSeriesHint)
            }
            if wherePushedDown { return { _ in false } }  // never called: the database decides (Pushdown.swift)
            // The newest observation of every key of the table counts (not only the layer's).
            if snapshot.readsSeriesFromStore {
                throw Runner.engineError(.notSupportedOnPostGIS("FRESH outside a FIND's WHERE (a route's FROM or TO)"), at: position)
            }
            let series = stored
            let newest = series.keys.compactMap { series.observations(of: $0).last?.end }.max() ?? UTCTime(seconds: 0)
            let maxAge = Int64(hours * 3600)
            let key = series.link.layerKeyColumn
            return { i in
                guard let code = layer.properties[i][key]?.stringValue else { return false }
                return !series.isStale(code, now: newest, maxAge: maxAge)
            }
        }
    }

    static func compare(_ value: AttributeValue, _ comparison: Comparison, _ literal: Literal) -> Bool {
        let order: Int
        switch (value, literal) {
        case (.integer, .number(let n)), (.real, .number(let n)):
            guard let v = value.doubleValue else { return false }
            order = v < n ? -1 : v > n ? 1 : 0
        case (.bool(let b), .bool(let l)):
            order = b == l ? 0 : (!b ? -1 : 1)
        case (.integer(let i), .bool(let l)):
            order = (i != 0) == l ? 0 : 1
        case (.text(let s), .text(let l)), (.json(let s), .text(let l)):
            order = s < l ? -1 : s > l ? 1 : 0
        default:
            return false
        }
        switch comparison {
        case .equal: return order == 0
        case .notEqual: return order != 0
        case .less: return order < 0
        case .lessOrEqual: return order <= 0
        case .greater: return order > 0
        case .greaterOrEqual: return order >= 0
        }
    }
}
