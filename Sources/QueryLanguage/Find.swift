// FIND, the language's question: its clauses parsed (Parser), then planned against one snapshot
// (Planner): layers resolved, the spatial clause checked, fields typed, and LINKED TO turned into
// per-layer filters. Running the plan is Runner.swift's; WHERE is Expressions.swift's.

import Engine
import Foundation
import Geometry
import Store
import Support

extension Parser {
    mutating func find() throws(QueryError) -> Find {
        var layers: [Name] = []
        if tokens[index].isSymbol("*") {
            layers.append(Name(text: "*", position: advance().position))
        } else {
            layers.append(try name("a layer name after FIND"))
            while accept(symbol: ",") { layers.append(try name("a layer name after ','")) }
        }
        var find = Find(layers: layers)
        if accept("OF") { find.tileSet = try name("a tile set name after OF") }
        if layers.first?.text == "*" && find.tileSet == nil {
            throw QueryError(kind: .syntax, code: "syntax_error", message: "FIND * needs OF tileset: it means every layer of a tile set",
                             line: layers[0].position.line, column: layers[0].position.column, hint: "name the layers: FIND districts, parking …")
        }
        // Clauses in any order, each at most once (a list: there are a dozen, and this runs for
        // every statement, where a dictionary's hashing showed in the profile).
        var seen: [String] = []
        while let keyword = tokens[index].keyword, Parser.findClauses.contains(keyword) {
            let clause = switch keyword {
            case "NEAREST", "WITHIN", "INTERSECTING", "AT": "CONTAINING"
            default: keyword
            }
            if seen.contains(clause) {
                let what = clause == "CONTAINING" ? "a spatial clause (CONTAINING, NEAREST, WITHIN, INTERSECTING, AT)" : keyword
                throw QueryError(kind: .syntax, code: "duplicate_clause", message: "\(what) appears twice in one FIND",
                                 line: tokens[index].position.line, column: tokens[index].position.column, length: tokens[index].position.length,
                                 hint: clause == "WHERE" ? "join the conditions with AND" : nil)
            }
            seen.append(clause)
            index += 1
            switch keyword {
            case "CONTAINING":
                find.spatial = .containing(try point())
            case "NEAREST":
                let (k, _) = try integer("the number of features after NEAREST", in: 1...Parser.unbounded)
                try expect("TO", "after NEAREST \(k)")
                if atSelection {
                    let targets = try selection(parenthesised: true, what: "NEAREST k TO (layer WHERE …)")
                    var within: Double?
                    if accept("WITHIN") { within = try distance() }
                    find.spatial = .nearestFeatures(k: k, targets, withinMetres: within)
                    break
                }
                let at = try point()
                var within: Double?
                if accept("WITHIN") { within = try distance() }
                find.spatial = .nearest(k: k, point: at, withinMetres: within)
            case "WITHIN":
                if isKeyword("REACH") {
                    let at = tokens[index].position
                    index += 1
                    let limit = try reachLimit()
                    try expect("FROM", "after WITHIN REACH and its time or distance")
                    find.spatial = .withinReach(limit, from: try point(), position: at)
                    break
                }
                let metres = try distance()
                try expect("OF", "after the distance")
                if atSelection {
                    find.spatial = .withinFeatures(metres: metres, try selection(parenthesised: true, what: "WITHIN d OF (layer WHERE …)"))
                } else {
                    find.spatial = .within(metres: metres, point: try point())
                }
            case "INTERSECTING":
                find.spatial = try bbox()
            case "AT":
                let at = try point()
                try expect("ZOOM", "after the point (FIND … OF tileset AT POINT(lon lat) ZOOM z)")
                find.spatial = .atZoom(at, zoom: try integer("the zoom", in: 0...30).0)
            case "LINKED":
                try expect("TO", "after LINKED")
                find.linked = try selection(parenthesised: true, what: "LINKED TO (layer WHERE …)", noun: "linked selection")
            case "WHERE":
                find.filter = try expression()
            case "ORDER":
                try expect("BY", "after ORDER")
                repeat { find.order.append(try orderKey()) } while accept(symbol: ",")
            case "LIMIT":
                (find.limit, find.limitPosition) = try integer("a row count after LIMIT", in: 0...1_000_000)
            case "GROUP":
                try expect("BY", "after GROUP")
                repeat { find.groupBy.append(try fieldExpression()) } while accept(symbol: ",")
            case "HAVING":
                find.having = try expression()
            default:  // RETURN
                repeat {
                    if tokens[index].isSymbol("*") {
                        find.fields.append(.star(advance().position))
                    } else {
                        find.fields.append(try fieldExpression())
                    }
                } while accept(symbol: ",")
            }
        }
        if case .word = tokens[index].kind, seen.isEmpty, find.tileSet == nil {
            throw error(expected: "',' or a clause (CONTAINING, NEAREST, WITHIN, INTERSECTING, LINKED TO, WHERE, GROUP BY, HAVING, ORDER BY, LIMIT, RETURN)")
        }
        return find
    }

    /// `layer [WHERE expr]`, in parentheses where a WHERE could otherwise belong to the outer
    /// statement; `what` names the construct in errors.
    mutating func selection(parenthesised: Bool, what: String = "", noun: String = "selection") throws(QueryError) -> Selection {
        if parenthesised { try expect(symbol: "(", "around the \(noun): \(what)") }
        var selection = Selection(layer: try name("a layer name"))
        if accept("WHERE") { selection.filter = try expression() }
        if parenthesised { try expect(symbol: ")", "to close the \(noun)") }
        return selection
    }

    /// `(layer CONTAINING [WHERE …]).field` or `(layer NEAREST [WHERE …]).field`: a field of the
    /// feature of another layer that contains, or lies nearest to, each row's feature.
    mutating func featureReference() throws(QueryError) -> FieldExpression {
        let start = advance().position
        let layer = try name("a layer name")
        let relation: FeatureReference.Relation = advance().keyword == "CONTAINING" ? .containing : .nearest
        var filter: Expression?
        if accept("WHERE") { filter = try expression() }
        try expect(symbol: ")", "to close the feature reference, as in (districts CONTAINING).NAZEV_MC")
        let end = previous.position
        try expect(symbol: ".", "and a field after the feature reference, as in (districts CONTAINING).NAZEV_MC")
        if atFeatureReference { throw error(expected: "a field of '\(layer.text)'", hint: "feature references do not nest") }
        let field = try fieldExpression()
        let position = SourcePosition(line: start.line, column: start.column, length: max(1, end.line == start.line ? end.column + 1 - start.column : 1))
        return .reference(FeatureReference(layer: layer, relation: relation, filter: filter, position: position), field)
    }
}

extension Planner {
    // MARK: FIND

    func planFind(_ find: Find) throws(QueryError) -> FindPlan {
        var layers: [Layer] = []
        for name in find.layers {
            let layer = try self.layer(name)
            guard !layers.contains(where: { $0 === layer }) else {
                throw Planner.error(.syntax, "duplicate_layer", "layer '\(layer.name)' is named twice", at: name.position)
            }
            try checkSpatial(find.spatial, on: layer, name: name)
            layers.append(layer)
        }
        let hasDistance: Bool
        switch find.spatial {
        case .nearest?, .within?, .nearestFeatures?, .withinFeatures?, .withinReach?: hasDistance = true
        default: hasDistance = false
        }
        // `WITHIN d OF (pavilions WHERE …)`: the selected features' geometries, measured from.
        var targets: [Geometry] = []
        switch find.spatial {
        case .nearestFeatures(_, let selection, _)?, .withinFeatures(_, let selection)?: targets = try inMemory.select(selection)
        default: break
        }
        // Fields the WHERE, ORDER BY and RETURN name must exist in at least one layer.
        var named: [FieldExpression] = find.fields + find.order.map(\.field) + find.groupBy
        if let filter = find.filter { Planner.fields(in: filter, into: &named) }
        if let having = find.having { Planner.fields(in: having, into: &named) }
        for field in named { try checkField(field, in: layers, hasDistance: hasDistance) }

        // Every column of the layers: without RETURN, or where RETURN says * (listed only then:
        // it is quadratic in the columns, and most statements name their fields).
        var all: [String] = []
        if find.fields.isEmpty || find.fields.contains(where: { if case .star = $0 { true } else { false } }) {
            all = layers.count > 1 ? ["layer", "fid"] : ["fid"]
            for layer in layers {
                for column in layer.info.columns where !all.contains(column.name) { all.append(column.name) }
            }
            if hasDistance { all.append("distance_m") }
        }
        var fields = all.isEmpty ? find.fields : try expandStar(find.fields, into: all, grouped: !find.groupBy.isEmpty)
        // A grouped FIND without RETURN answers its groups and their sizes.
        if fields.isEmpty && Planner.isGrouped(find) { fields = find.groupBy + [.aggregate(.count, nil, position: find.layers[0].position)] }
        let columns = fields.isEmpty ? all : fields.map(\.label)
        let link = try find.linked.map { selection throws(QueryError) in try inMemory.planLink(selection, for: layers) }

        let groups = try planGroups(find, fields: fields, layers: layers)
        let grouped = groups != nil
        if let limit = find.limit, limit > limits.maxRows {
            throw Planner.error(.limit, "limit_exceeded", "LIMIT \(limit) is above the largest answer allowed, \(limits.maxRows) rows",
                                at: find.limitPosition ?? SourcePosition(line: 1, column: 1, length: 1))
        }
        // Rows fetched for this answer, and whether SQL applied the whole WHERE to them.
        let whereApplied = Dictionary(fetched.values.map { (ObjectIdentifier($0.rows), $0.whereApplied) }, uniquingKeysWith: { a, _ in a })
        var pushed: [PushedSelection?]?
        if snapshot.database != nil {
            var selections: [PushedSelection?] = []
            for layer in layers {
                selections.append(whereApplied[ObjectIdentifier(layer)] != nil ? nil
                                  : try Pushdown.compile(find, layer: layer, layerCount: layers.count, snapshot: snapshot))
            }
            pushed = selections
        }
        var sources: [Source] = []
        var sqlDecides = self
        sqlDecides.wherePushedDown = true
        for (n, layer) in layers.enumerated() {
            // Where SQL decides the whole WHERE, its predicate is compiled but never called, and
            // rows fetched with it applied need none. Where SQL checked only part of it
            // (`relaxed`), the engine's predicate decides, compiled as anywhere outside a FIND
            // (series read for every station). On a GeoPackage, the engine decides as always.
            let pushedDown = pushed?[n].map { !$0.relaxed } ?? false
            let where_ = whereApplied[ObjectIdentifier(layer)] == true ? nil : find.filter
            let predicates = pushedDown ? sqlDecides : snapshot.database != nil ? inMemory : self
            var filter: Predicate? = try where_.map { expression throws(QueryError) in try predicates.compile(expression, on: layer) }
            if let link = link?.filters[ObjectIdentifier(layer)] {
                let inner = filter
                filter = inner.map { inner in { @Sendable i in link(i) && inner(i) } } ?? link
            }
            let fields: [FieldExpression] = fields.isEmpty ? columns.map { .attribute(Name(text: $0, position: SourcePosition(line: 0, column: 0, length: 0))) } : fields
            sources.append(Source(layer: layer, filter: filter,
                                  accessors: grouped ? [] : try fields.map { field throws(QueryError) in try accessor(field, on: layer) },
                                  orderAccessors: grouped ? [] : try find.order.map { key throws(QueryError) in try accessor(key.field, on: layer) }))
        }
        return FindPlan(snapshot: snapshot, sources: sources, spatial: find.spatial, targets: targets, columns: columns,
                        order: find.order.map { ($0.descending, $0.field.label == "distance_m", $0.nullsFirst) },
                        limit: find.limit, linkNote: link?.note, groups: groups, warnings: spatialWarnings(find.spatial), pushed: pushed,
                        refetch: layers.contains(where: \.fetchesRows) ? find : nil, series: answers.isEmpty ? nil : answers)
    }

    func checkSpatial(_ spatial: Spatial?, on layer: Layer, name: Name) throws(QueryError) {
        guard let spatial else { return }
        let clause: String
        switch spatial {
        case .containing:
            guard layer.family == .polygons || layer.family == .mixed else {
                clause = "CONTAINING needs polygons; '\(layer.name)' holds \(layer.family == .table ? "no geometries (it is a table)" : layer.family.rawValue)"
                break
            }
            return
        case .nearest, .within, .intersecting, .nearestFeatures, .withinFeatures, .withinReach:
            guard layer.family == .table else { return }
            clause = "'\(layer.name)' is a table without geometries"
        case .atZoom:
            clause = "AT … ZOOM applies to tile sets: FIND layer OF tileset AT POINT(lon lat) ZOOM z"
        }
        throw Planner.error(.invalid, "unsupported_geometry", clause, at: name.position,
                            hint: layer.family == .table ? "find its features through LINKED TO (layer WHERE …)" : nil)
    }

    static func fields(in expression: Expression, into fields: inout [FieldExpression]) {
        switch expression {
        case .and(let terms), .or(let terms):
            for term in terms { Planner.fields(in: term, into: &fields) }
        case .not(let a): Planner.fields(in: a, into: &fields)
        case .compare(let field, _, _, _), .isIn(let field, _, _), .isNull(let field, _), .matches(let field, _), .matchesCzech(let field, _),
             .like(let field, _, _), .instant(let field, _, _):
            fields.append(field)
        case .measures, .fresh, .spatial: break
        }
    }

    func checkField(_ field: FieldExpression, in layers: [Layer], hasDistance: Bool) throws(QueryError) {
        switch field {
        case .reference(let reference, let inner):
            return try checkReference(reference, inner)
        case .aggregate(_, let argument?, _), .quantified(_, let argument, _):
            return try checkField(argument, in: layers, hasDistance: hasDistance)
        case .geometryText(_, let position):
            guard layers.contains(where: { $0.family != .table }) else {
                throw Planner.error(.invalid, "unsupported_geometry", "\(layers.map { "'\($0.name)'" }.joined(separator: ", ")) has no geometries", at: position)
            }
            return
        default: break
        }
        guard case .attribute(let name) = field else { return }
        if name.text == "distance_m" {
            guard hasDistance else {
                throw Planner.error(.invalid, "unknown_field", "distance_m exists only with NEAREST or WITHIN", at: name.position)
            }
            return
        }
        if Planner.pseudoFields.contains(name.text) { return }
        guard !layers.contains(where: { layer in layer.info.columns.contains { $0.name == name.text } }) else { return }
        let all = layers.flatMap { $0.info.columns.map(\.name) }
        let hint = Suggestion.closest(to: name.text, in: all + Planner.pseudoFields).map { "did you mean '\($0)'?" }
            ?? "fields of \(layers.map { "'\($0.name)'" }.joined(separator: ", ")): \(Array(Set(all)).sorted().prefix(12).joined(separator: ", "))"
        throw Planner.error(.invalid, "unknown_field", "no field \(Quote.input(name.text)) in \(layers.map { "'\($0.name)'" }.joined(separator: " or "))", at: name.position, hint: hint)
    }

    // MARK: LINKED TO

    /// Two layers are linked when one holds lists of the other's feature ids (the animals'
    /// `location_ids` name pens and pavilions). The link works both ways.
    func planLink(_ selection: Selection, for layers: [Layer]) throws(QueryError) -> (filters: [ObjectIdentifier: Predicate], note: String) {
        let other = try layerInMemory(selection.layer)
        let otherFilter = try selection.filter.map { expression throws(QueryError) in try inMemory.compile(expression, on: other) }
        let selected = (0..<other.count).filter { otherFilter?($0) ?? true }
        var filters: [ObjectIdentifier: Predicate] = [:]
        var notes: [String] = []
        for layer in layers {
            if let (column, lists) = other.idList {
                // The other side lists our ids: keep our features it names.
                var ids = Set<Int64>()
                for i in selected { ids.formUnion(lists[i]) }
                let wanted = ids
                filters[ObjectIdentifier(layer)] = { wanted.contains(layer.fids[$0]) }
                notes.append("\(other.name).\(column) → \(layer.name).fid")
            } else if let (column, lists) = layer.idList {
                // We list the other side's ids: keep our features that name a selected one.
                let wanted = Set(selected.map { other.fids[$0] })
                filters[ObjectIdentifier(layer)] = { i in lists[i].contains { wanted.contains($0) } }
                notes.append("\(layer.name).\(column) → \(other.name).fid")
            } else {
                throw Planner.error(.invalid, "not_linked", "'\(layer.name)' and '\(other.name)' are not linked: neither holds a list of the other's feature ids",
                                    at: selection.layer.position)
            }
        }
        return (filters, notes.joined(separator: ", "))
    }

    func select(_ selection: Selection) throws(QueryError) -> [Geometry] {
        let (layer, indices) = try selectIndices(selection)
        return indices.compactMap { layer.geometries[$0] }
    }

    /// The selection's layer and the indices of its features that match, in load order.
    func selectIndices(_ selection: Selection) throws(QueryError) -> (Layer, [Int]) {
        let layer = try layerInMemory(selection.layer)
        guard layer.family != .table else {
            throw Planner.error(.invalid, "unsupported_geometry", "'\(layer.name)' is a table without geometries", at: selection.layer.position)
        }
        let planner = inMemory
        var filter = try selection.filter.map { expression throws(QueryError) in try planner.compile(expression, on: layer) }
        if let linked = selection.linked.first, let link = try planner.planLink(linked, for: [layer]).filters[ObjectIdentifier(layer)] {
            let inner = filter
            filter = { i in link(i) && (inner?(i) ?? true) }
        }
        return (layer, layer.indices.filter { filter?($0) ?? true })
    }
}
