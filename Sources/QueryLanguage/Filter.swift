// Filters given as request parameters rather than as statement text: the HTTP API's
// `where=no2,pm10` (stations that measure every listed column) and `attr.NAME=value` (an
// attribute equals a value). They are built as a WHERE expression and compiled by the
// planner, so there is one WHERE compiler; only the names are resolved here, case-insensitively
// and with a suggestion, because a parameter has no token position to point at.

import Engine
import Geometry
import Store
import Support

/// A filter parameter that names nothing that exists, or a value of the wrong type.
public struct FilterError: Error, Sendable {
    /// `where`, or `attr.NAME` as the request wrote it.
    public let parameter: String
    public let message: String
}

extension Query {
    /// The compiled filter, or nil when there is nothing to filter on.
    public static func filter(on layer: Layer, in snapshot: Snapshot, measuring columns: [String],
                              equal attributes: [(name: String, value: String)]) throws(FilterError) -> FeatureFilter? {
        try filter(on: layer, in: snapshot, measuring: columns, equal: attributes, also: nil)
    }

    static func filter(on layer: Layer, in snapshot: Snapshot, measuring columns: [String],
                       equal attributes: [(name: String, value: String)], also extra: Expression?) throws(FilterError) -> FeatureFilter? {
        let here = SourcePosition(line: 1, column: 1, length: 1)
        var terms: [Expression] = []
        if !columns.isEmpty {
            guard let series = snapshot.timeSeriesByLayer[layer.name] else {
                throw FilterError(parameter: "where", message: "layer '\(layer.name)' has no time series; where= names columns of a time series (attr.NAME=value filters attributes)")
            }
            for wanted in columns {
                guard let column = series.columns.first(where: { $0.lowercased() == wanted.lowercased() }) else {
                    var message = "\(Quote.input(wanted)) is not a measured column of '\(series.table)'"
                    if let suggestion = Suggestion.closest(to: wanted, in: series.columns) { message += " — did you mean '\(suggestion)'?" }
                    throw FilterError(parameter: "where", message: message + " (columns: \(series.columns.joined(separator: ", ")))")
                }
                terms.append(.measures(Name(text: column, position: here)))
            }
        }
        terms += try attributeTerms(on: layer, attributes)
        if let extra { terms.append(extra) }
        guard !terms.isEmpty else { return nil }
        let compiled: Predicate
        do {
            compiled = try Planner(snapshot: snapshot).compile(terms.count == 1 ? terms[0] : .and(terms), on: layer)
        } catch {
            // attributeTerms checked the parameters' own terms: an error left is the filter's.
            let parameter = extra != nil ? "filter" : attributes.isEmpty ? "where" : "attr.\(attributes[0].name)"
            throw FilterError(parameter: parameter, message: error.message)
        }
        // Decided once per feature here, so the search's filter is an array lookup.
        let keep = (0..<layer.slots).map(compiled)
        return { keep[$0] }
    }

    /// OGC API items' property filters (`name = value`), as the layer's storage takes them:
    /// compiled for a layer in memory (`filter`), in the store's terms for a layer kept in the
    /// database (`storeFilter`).
    /// `cql2`: OGC API – Features Part 3's `filter` (CQL2.swift), ANDed with the attributes.
    public static func filterItems(_ request: inout ItemsRequest, on layer: Layer, in snapshot: Snapshot,
                                   equal attributes: [(name: String, value: String)],
                                   cql2: (text: String, encoding: CQL2Encoding)? = nil) throws(FilterError) {
        let extra = try cql2.map { filter throws(FilterError) in try CQL2.parse(filter.text, filter.encoding) }
        if let extra { try CQL2.checkProperties(extra, on: layer) }
        if layer.fetchesRows {
            request.condition = try storeFilter(on: layer, in: snapshot, equal: attributes, also: extra)
        } else {
            request.filter = try filter(on: layer, in: snapshot, measuring: [], equal: attributes, also: extra)
        }
    }

    /// The same attribute conditions for a layer kept in the database (OGC API items), in the
    /// store's terms, lowered by the FIND pushdown's own code; nil when there are none.
    /// Equality on a column of the layer always has an exact form there.
    public static func storeFilter(on layer: Layer, in snapshot: Snapshot,
                                   equal attributes: [(name: String, value: String)]) throws(FilterError) -> StoreCondition? {
        try storeFilter(on: layer, in: snapshot, equal: attributes, also: nil)
    }

    static func storeFilter(on layer: Layer, in snapshot: Snapshot,
                            equal attributes: [(name: String, value: String)], also extra: Expression?) throws(FilterError) -> StoreCondition? {
        var terms = try attributeTerms(on: layer, attributes)
        if let extra { terms.append(extra) }
        guard !terms.isEmpty else { return nil }
        let name = attributes.first.map { "attr.\($0.name)" } ?? "filter"
        var pushdown = Pushdown(snapshot: snapshot, layer: layer)
        let condition: StoreCondition
        do {
            condition = try pushdown.condition(terms.count == 1 ? terms[0] : .and(terms), at: SourcePosition(line: 1, column: 1, length: 1))
        } catch {
            throw FilterError(parameter: extra == nil ? name : "filter", message: error.message)
        }
        guard !pushdown.relaxed else {
            throw FilterError(parameter: extra == nil ? name : "filter", message: "PostgreSQL cannot check this filter on '\(layer.name)', which stays in the database")
        }
        return condition
    }

    /// `name = value` terms, each name resolved among the layer's columns (exactly, else
    /// ignoring case) and each value read as the column's type.
    static func attributeTerms(on layer: Layer, _ attributes: [(name: String, value: String)]) throws(FilterError) -> [Expression] {
        let here = SourcePosition(line: 1, column: 1, length: 1)
        var terms: [Expression] = []
        for (name, text) in attributes {
            let parameter = "attr.\(name)"
            let columns = layer.info.columns
            guard let column = columns.first(where: { $0.name == name }) ?? columns.first(where: { $0.name.lowercased() == name.lowercased() }) else {
                var message = "layer '\(layer.name)' has no column \(Quote.input(name))"
                if let suggestion = Suggestion.closest(to: name, in: columns.map(\.name)) { message += " — did you mean '\(suggestion)'?" }
                throw FilterError(parameter: parameter, message: message)
            }
            let literal: Literal
            switch column.type {
            case .integer, .real:
                guard let number = Double(text), number.isFinite else {
                    throw FilterError(parameter: parameter, message: "'\(column.name)' holds numbers; \(Quote.input(text)) is not one")
                }
                literal = .number(number)
            case .boolean:
                switch text.lowercased() {
                case "true", "1": literal = .bool(true)
                case "false", "0": literal = .bool(false)
                default: throw FilterError(parameter: parameter, message: "'\(column.name)' holds true or false; \(Quote.input(text)) is neither")
                }
            case .text, .dateTime, .blob:
                guard !TextRule.holdsNUL(text) else { throw FilterError(parameter: parameter, message: "the value \(TextRule.nulMessage)") }
                literal = .text(text)
            }
            terms.append(.compare(.attribute(Name(text: column.name, position: here)), .equal, literal, position: here))
        }
        return terms
    }
}
