// Aggregates and grouping: `FIND parking RETURN CATEGORY, COUNT(*) GROUP BY CATEGORY HAVING
// COUNT(*) > 100`, and aggregates of a time series' list per row (`AVG(HISTORY(no2, 24 h))`).
// Which one an aggregate is follows from its argument: a list (HISTORY) is reduced per row, any
// other value over the rows of a group. The sums themselves are the Engine's `Accumulator`.

import Engine
import Geometry
import Store
import Support

/// A grouped FIND: the group keys and the aggregates over rows, per source layer, and how the
/// group rows are filtered, ordered and returned. A group row is its key values followed by its
/// aggregates' results; `outputs`, `having` and `order` index into it.
struct GroupPlan: Sendable {
    struct Aggregate: Sendable {
        var function: AggregateFunction
        /// Per source: the argument (nil for COUNT(*)).
        var arguments: [Accessor?]
        /// `MIN(distance_m)`: the search's distance, which no accessor gives.
        var byDistance: Bool
    }
    /// Per source: one accessor per GROUP BY field.
    var keys: [[Accessor]]
    var keyCount: Int
    var aggregates: [Aggregate]
    var outputs: [Int]
    var having: (@Sendable ([AttributeValue]) -> Bool)?
    var order: [(column: Int, descending: Bool, nullsFirst: Bool)]
}

extension Planner {
    /// An aggregate over the rows of a group (not of one row's list).
    func isRowAggregate(_ field: FieldExpression) -> Bool { Planner.isRowAggregate(field) }

    static func isRowAggregate(_ field: FieldExpression) -> Bool {
        guard case .aggregate(_, let argument, _) = field else { return false }
        if case .history? = argument { return false }
        return true
    }

    static func isGrouped(_ find: Find) -> Bool {
        !find.groupBy.isEmpty || find.having != nil || find.fields.contains(where: isRowAggregate)
    }

    /// RETURN with `*` replaced by every column of the layers.
    func expandStar(_ fields: [FieldExpression], into all: [String], grouped: Bool) throws(QueryError) -> [FieldExpression] {
        var expanded: [FieldExpression] = []
        for field in fields {
            guard case .star(let position) = field else { expanded.append(field); continue }
            if grouped {
                throw Planner.error(.invalid, "star_with_group", "RETURN * cannot go with GROUP BY: a group has no single value of every column", at: position,
                                    hint: "return the grouped fields and aggregates: RETURN CATEGORY, COUNT(*)")
            }
            expanded += all.map { .attribute(Name(text: $0, position: position)) }
        }
        return expanded
    }

    /// The grouping of a FIND, or nil when it has no GROUP BY, HAVING or aggregate over rows.
    func planGroups(_ find: Find, fields: [FieldExpression], layers: [Layer]) throws(QueryError) -> GroupPlan? {
        guard Planner.isGrouped(find) else {
            // An aggregate over rows in ORDER BY alone has no groups to rank.
            if let key = find.order.first(where: { isRowAggregate($0.field) }) {
                throw Planner.error(.invalid, "misplaced_aggregate", "\(Planner.written(key.field)) aggregates rows, but the FIND has no groups", at: key.field.position,
                                    hint: "add GROUP BY and return the aggregate: RETURN CATEGORY, COUNT(*) GROUP BY CATEGORY ORDER BY COUNT(*) DESC")
            }
            return nil
        }
        for key in find.groupBy where isRowAggregate(key) {
            throw Planner.error(.invalid, "misplaced_aggregate", "GROUP BY takes fields, not aggregates", at: key.position)
        }
        var aggregates: [GroupPlan.Aggregate] = []
        var aggregateLabels: [String] = []
        let keyLabels = find.groupBy.map(\.label)
        func slot(_ field: FieldExpression, _ clause: String) throws(QueryError) -> Int {
            if let k = keyLabels.firstIndex(of: field.label) { return k }
            guard isRowAggregate(field), case .aggregate(let function, let argument, _) = field else {
                throw Planner.error(.invalid, "not_grouped", "\(Planner.written(field)) in \(clause) is neither grouped nor aggregated", at: field.position,
                                    hint: "add it to GROUP BY, or aggregate it: MIN(\(Planner.written(field))), COUNT(\(Planner.written(field)))")
            }
            if let j = aggregateLabels.firstIndex(of: field.label) { return keyLabels.count + j }
            if let argument {
                if isRowAggregate(argument) {
                    throw Planner.error(.invalid, "nested_aggregate", "aggregates over rows do not nest", at: argument.position)
                }
                for layer in layers {
                    let type = valueType(argument, on: layer)
                    if function.needsNumbers && (type == .text || type == .boolean) || type == .list {
                        throw Planner.error(.invalid, "type_mismatch", "\(function.rawValue.uppercased()) needs numbers; \(Quote.input(Planner.written(argument))) holds \(type.name)",
                                            at: argument.position,
                                            hint: type == .list ? "reduce the list first: \(function.rawValue.uppercased())(MAX(\(Planner.written(argument))))" : "COUNT, MIN and MAX take text")
                    }
                }
            }
            var byDistance = false
            if case .attribute(let name)? = argument, name.text == "distance_m" { byDistance = true }
            var arguments: [Accessor?] = []
            for layer in layers { arguments.append(try argument.map { argument throws(QueryError) in try accessor(argument, on: layer) }) }
            aggregates.append(GroupPlan.Aggregate(function: function, arguments: arguments, byDistance: byDistance))
            aggregateLabels.append(field.label)
            return keyLabels.count + aggregates.count - 1
        }
        var outputs: [Int] = []
        for field in fields { outputs.append(try slot(field, "RETURN")) }
        var order: [(column: Int, descending: Bool, nullsFirst: Bool)] = []
        for key in find.order { order.append((try slot(key.field, "ORDER BY"), key.descending, key.nullsFirst)) }
        var keys: [[Accessor]] = []
        for layer in layers {
            var accessors: [Accessor] = []
            for field in find.groupBy { accessors.append(try accessor(field, on: layer)) }
            keys.append(accessors)
        }
        let having = try find.having.map { expression throws(QueryError) in
            try compileHaving(expression, on: layers[0]) { field throws(QueryError) in try slot(field, "HAVING") }
        }
        return GroupPlan(keys: keys, keyCount: keyLabels.count, aggregates: aggregates, outputs: outputs, having: having, order: order)
    }

    /// HAVING: a condition over group rows; its fields are group keys or aggregates.
    func compileHaving(_ expression: Expression, on layer: Layer,
                       slot: (FieldExpression) throws(QueryError) -> Int) throws(QueryError) -> @Sendable ([AttributeValue]) -> Bool {
        switch expression {
        case .and(let terms):
            var all: [@Sendable ([AttributeValue]) -> Bool] = []
            for term in terms { all.append(try compileHaving(term, on: layer, slot: slot)) }
            let predicates = all
            return { row in predicates.allSatisfy { $0(row) } }
        case .or(let terms):
            var any: [@Sendable ([AttributeValue]) -> Bool] = []
            for term in terms { any.append(try compileHaving(term, on: layer, slot: slot)) }
            let predicates = any
            return { row in predicates.contains { $0(row) } }
        case .not(let inner):
            let x = try compileHaving(inner, on: layer, slot: slot)
            return { !x($0) }
        case .compare(let field, let comparison, let literal, _):
            try checkComparison(field, literal, comparison, on: layer)
            let k = try slot(field)
            return { Planner.compare($0[k], comparison, literal) }
        case .isIn(let field, let literals, let negated):
            for literal in literals { try checkComparison(field, literal, on: layer) }
            let k = try slot(field)
            return { row in literals.contains { Planner.compare(row[k], .equal, $0) } != negated }
        case .isNull(let field, let negated):
            let k = try slot(field)
            return { $0[k].isNull != negated }
        case .matches(let field, let pattern):
            try checkMatch(field, on: layer)
            let k = try slot(field)
            let folded = TextFold.fold(pattern)
            return { row in row[k].stringValue.map { TextFold.fold($0).contains(folded) } ?? false }
        case .matchesCzech(let field, let text):
            try checkMatch(field, on: layer)
            let k = try slot(field)
            let pattern = CzechStemmer.Pattern(text)
            return { row in row[k].stringValue.map { pattern.matches($0) } ?? false }
        case .like(let field, let pattern, let negated):
            try checkMatch(field, on: layer, what: "LIKE matches text")
            let k = try slot(field)
            let like = LikePattern(pattern)
            return { row in row[k].stringValue.map { like.matches($0) != negated } ?? false }
        case .instant(let field, let comparison, let time):
            let k = try slot(field)
            return { row in row[k].stringValue.flatMap(UTCTime.parse).map { comparison.holds($0, time) } ?? false }
        case .spatial:
            throw Planner.error(.invalid, "misplaced_condition", "HAVING tests groups; a spatial function tests a feature", at: CQL2.here, hint: "put it in WHERE")
        case .measures(let name):
            throw Planner.error(.invalid, "misplaced_condition", "HAVING tests groups; MEASURES(…) tests a feature", at: name.position, hint: "put it in WHERE")
        case .fresh(_, let position):
            throw Planner.error(.invalid, "misplaced_condition", "HAVING tests groups; FRESH(…) tests a feature", at: position, hint: "put it in WHERE")
        }
    }

    /// The values of a time series' column over the last hours, per feature.
    func historyValues(_ column: Name, hours: Int, on layer: Layer) throws(QueryError) -> @Sendable (Int) -> [Double?] {
        let (stored, keyOf, index) = try timeSeries(column, on: layer)
        let series = try reader(stored, on: layer, at: column.position) { $0.add(hours: hours, column: column.text) }
        return { i in keyOf(i).map { key in series().history(of: key, hours: hours).map { $0.values[index] } } ?? [] }
    }

    /// Fields computed from others: an aggregate of a list, WKT/WKB. An aggregate over rows or
    /// ANY/ALL here is out of place (WHERE tests one row; ANY/ALL live in comparisons).
    func computedAccessor(_ field: FieldExpression, on layer: Layer) throws(QueryError) -> Accessor {
        switch field {
        case .aggregate(let function, .history(let column, let hours, _)?, _):
            let values = try historyValues(column, hours: hours, on: layer)
            return { i in Accumulator.reduce(function, values(i)) }
        case .aggregate(_, let argument, let position):
            if let argument, valueType(argument, on: layer) == .list {
                throw Planner.error(.invalid, "type_mismatch", "\(Planner.written(field)) needs HISTORY(column, n h) or a field", at: position)
            }
            throw Planner.error(.invalid, "misplaced_aggregate", "\(Planner.written(field)) aggregates rows; WHERE tests one row at a time", at: position,
                                hint: "test groups with HAVING: … GROUP BY CATEGORY HAVING \(Planner.written(field)) > 10")
        case .quantified(_, _, let position):
            throw Planner.error(.invalid, "misplaced_quantifier", "\(Planner.written(field)) goes on the left of a comparison", at: position,
                                hint: "ANY(HISTORY(no2, 24 h)) > 40; to return values, RETURN HISTORY(no2, 24 h) or MAX(HISTORY(no2, 24 h))")
        case .geometryText(let format, _):
            return { i in
                guard let geometry = layer.geometries[i] else { return .null }
                switch format {
                case .wkt: return .text(WKT.encode(geometry))
                case .wkb: return .text(Planner.hex(WKB.encode(geometry)))
                }
            }
        case .star(let position):
            throw Planner.error(.syntax, "syntax_error", "* stands for every column only in RETURN", at: position)
        default:
            return try accessor(field, on: layer)
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 0x0F)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// `ANY(HISTORY(no2, 24 h)) > 40`: some (ANY) or every (ALL) value present passes; a
    /// missing hour is skipped, and a list with no values passes neither.
    func quantifiedPredicate(_ quantifier: Quantifier, _ list: FieldExpression, _ comparison: Comparison, _ literal: Literal,
                             on layer: Layer) throws(QueryError) -> Predicate {
        guard case .history(let column, let hours, _) = list else {
            throw Planner.error(.invalid, "type_mismatch", "\(quantifier.rawValue.uppercased()) takes a list: \(quantifier.rawValue.uppercased())(HISTORY(no2, 24 h))",
                                at: list.position)
        }
        guard case .number = literal else {
            throw Planner.error(.invalid, "type_mismatch", "the values of \(Planner.written(list)) are numbers", at: list.position,
                                hint: "compare them with a number: \(quantifier.rawValue.uppercased())(\(Planner.written(list))) > 40")
        }
        let values = try historyValues(column, hours: hours, on: layer)
        return { i in
            let present = values(i).compactMap { $0 }
            guard !present.isEmpty else { return false }
            switch quantifier {
            case .any: return present.contains { Planner.compare(.real($0), comparison, literal) }
            case .all: return present.allSatisfy { Planner.compare(.real($0), comparison, literal) }
            }
        }
    }

    /// The warnings a statement's points deserve (a point far outside the data whose swap lies
    /// inside it).
    func spatialWarnings(_ spatial: Spatial?) -> [String] {
        let point: PointLiteral
        switch spatial {
        case .containing(let p)?, .nearest(_, let p, _)?, .within(_, let p)?, .atZoom(let p, _)?: point = p
        default: return []
        }
        return snapshot.coordinateWarnings(point.point)
    }
}

extension Runner {
    /// ORDER BY: keys in turn, each ascending or descending; missing values last unless NULLS
    /// FIRST, whichever the direction.
    static func precedes(_ a: [AttributeValue], _ b: [AttributeValue], _ keys: [(descending: Bool, nullsFirst: Bool)]) -> Bool {
        for (k, key) in keys.enumerated() {
            let (x, y) = (a[k], b[k])
            if x.isNull != y.isNull { return x.isNull == key.nullsFirst }
            let c = Runner.order(x, y)
            if c != 0 { return key.descending ? c > 0 : c < 0 }
        }
        return false
    }

    /// The groups of a grouped FIND's rows, their aggregates, HAVING, ORDER BY (then the keys)
    /// and LIMIT. Without GROUP BY every row is one group, which exists with no rows too (as in
    /// SQL: `COUNT(*)` of nothing is 0).
    func groupRows(_ plan: FindPlan, _ groups: GroupPlan, _ hits: [Hit], at position: SourcePosition) throws(QueryError) -> QueryResult {
        var index: [[AttributeValue]: Int] = [:]
        var keys: [[AttributeValue]] = []
        var accumulators: [[Accumulator]] = []
        let fresh = groups.aggregates.map { Accumulator($0.function) }
        for (n, hit) in hits.enumerated() {
            try checkDeadline(n, at: position)
            let key = groups.keys[hit.source].map { $0(hit.index) }
            let g: Int
            if let found = index[key] {
                g = found
            } else {
                g = keys.count
                index[key] = g
                keys.append(key)
                accumulators.append(fresh)
            }
            for (j, aggregate) in groups.aggregates.enumerated() {
                if aggregate.byDistance {
                    accumulators[g][j].add(hit.metres.map { AttributeValue.real($0) } ?? .null)
                } else if let argument = aggregate.arguments[hit.source] {
                    accumulators[g][j].add(argument(hit.index))
                } else {
                    accumulators[g][j].addRow()
                }
            }
        }
        if groups.keyCount == 0 && keys.isEmpty {
            keys = [[]]
            accumulators = [fresh]
        }
        // Distances are rounded to the millimetre, as everywhere.
        var rows = zip(keys, accumulators).map { key, values in
            key + zip(groups.aggregates, values).map { aggregate, value in
                if aggregate.byDistance, case .real(let metres) = value.result { return .real(Rounding.metres(metres)) }
                return value.result
            }
        }
        if let having = groups.having { rows = rows.filter(having) }
        let order = groups.order.map { (descending: $0.descending, nullsFirst: $0.nullsFirst) } + (0..<groups.keyCount).map { _ in (descending: false, nullsFirst: false) }
        let columns = groups.order.map(\.column) + Array(0..<groups.keyCount)
        rows = rows.map { row in (row, columns.map { row[$0] }) }.sorted { Runner.precedes($0.1, $1.1, order) }.map(\.0)
        if let limit = plan.limit {
            if rows.count > limit { rows.removeLast(rows.count - limit) }
        } else if rows.count > plan.snapshot.limits.maxRows {
            throw Runner.engineError(.tooManyRows(count: rows.count, limit: plan.snapshot.limits.maxRows), at: position)
        }
        let values = rows.map { row in groups.outputs.map { Runner.json(row[$0]) } }
        var result = QueryResult(body: .rows(.init(columns: plan.columns, values: values, geometries: values.map { _ in nil })))
        result.warnings = plan.warnings
        return result
    }
}

// MARK: - Aggregates, quantifiers, geometry text, ORDER BY keys (docs: "The questions backends ask")

extension Parser {
    /// `COUNT(*)`, `COUNT(x)`, `SUM(x)`, `AVG(x)`, `MIN(x)`, `MAX(x)`, `ANY(list)`, `ALL(list)`,
    /// `WKT(geom)`, `WKB(geom)`; `peek` is the function's name, followed by '('.
    mutating func callExpression(_ keyword: String) throws(QueryError) -> FieldExpression {
        let position = advance().position
        index += 1  // '('
        let result: FieldExpression
        switch keyword {
        case "ANY", "ALL":
            let argument = try fieldExpression()
            result = .quantified(keyword == "ANY" ? .any : .all, argument, position: position)
        case "WKT", "WKB":
            let argument = try name("the geometry column in \(keyword)(geom)")
            guard argument.text.lowercased() == "geom" || argument.text.lowercased() == "geometry" else {
                throw QueryError(kind: .invalid, code: "unknown_field", message: "\(keyword) takes the feature's geometry, geom; \(Quote.input(argument.text)) is not it",
                                 line: argument.position.line, column: argument.position.column, length: argument.position.length,
                                 hint: "write \(keyword)(geom)")
            }
            result = .geometryText(keyword == "WKT" ? .wkt : .wkb, position: position)
        default:
            let function = AggregateFunction(rawValue: keyword.lowercased()) ?? .count
            if function == .count, tokens[index].isSymbol("*") {
                index += 1
                result = .aggregate(.count, nil, position: position)
            } else {
                if tokens[index].isSymbol("*") {
                    throw error(expected: "a field in \(keyword)(…)", hint: "only COUNT takes *: COUNT(*)")
                }
                result = .aggregate(function, try fieldExpression(), position: position)
            }
        }
        try expect(symbol: ")", "to close \(keyword)(")
        return result
    }

    /// `field [ASC | DESC] [NULLS FIRST | NULLS LAST]`
    mutating func orderKey() throws(QueryError) -> OrderKey {
        let field = try fieldExpression()
        var descending = false
        if accept("DESC") { descending = true } else { _ = accept("ASC") }
        var nullsFirst = false
        if accept("NULLS") {
            if accept("FIRST") { nullsFirst = true } else if !accept("LAST") {
                throw error(expected: "FIRST or LAST after NULLS")
            }
        }
        return OrderKey(field: field, descending: descending, nullsFirst: nullsFirst)
    }
}
