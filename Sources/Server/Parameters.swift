// Query-string parameters, checked strictly: an unknown name (`lng` for `lon`) or a repeated one
// is an error naming it, never silently ignored, so a phone developer sees a typo on the first
// call. Every failure is a 400 problem that names the parameter.

import Foundation
import Hummingbird
import Geometry
import Store
import Support

struct Parameters {
    private var values: [String: String] = [:]
    /// `attr.NAME=value` pairs, in request order.
    private(set) var attributes: [(name: String, value: String)] = []

    /// Reads the query string, allowing only `allowed` names (plus `attr.*` when `attributes`).
    init(_ request: Request, allowed: [String], attributes allowAttributes: Bool = false) throws(APIError) {
        try self.init(query: Substring(request.uri.query ?? ""), allowed: allowed, attributes: allowAttributes)
    }

    /// The same from the query string itself (what follows `?`): the event loop's fast path
    /// reads it without a Hummingbird request (FastPath.swift).
    init(query: Substring, allowed: [String], attributes allowAttributes: Bool = false) throws(APIError) {
        values.reserveCapacity(allowed.count)  // one allocation, not one per growth
        for (key, value) in Parameters.pairs(query) {
            if allowAttributes, key.hasPrefix("attr.") {
                let name = String(key.dropFirst(5))
                guard !name.isEmpty else { throw .invalidParameter(key, "name a column after 'attr.', e.g. attr.classif=traffic") }
                guard !attributes.contains(where: { $0.name == name }) else { throw .invalidParameter(key, "given more than once") }
                attributes.append((name, value))
                continue
            }
            guard allowed.contains(key) else {
                var message = "unknown parameter"
                if let suggestion = Suggestion.closest(to: key, in: allowed) { message += " — did you mean '\(suggestion)'?" }
                message += " (parameters: \(allowed.joined(separator: ", "))\(allowAttributes ? ", attr.NAME" : ""))"
                let quoted = Quote.capped(key)
                throw APIError(.badRequest, code: "unknown_parameter", detail: "\(quoted): \(message)", extra: JSONObject([("parameter", .string(quoted))]))
            }
            guard values[key] == nil else { throw .invalidParameter(key, "given more than once") }
            values[key] = value
        }
    }

    func string(_ name: String) -> String? { values[name] }

    /// Reads `alias` as `name` (a client's spelling of the standard's name); both is an error.
    mutating func alias(_ alias: String, for name: String) throws(APIError) {
        guard let value = values.removeValue(forKey: alias) else { return }
        guard values[name] == nil else { throw .invalidParameter(alias, "give \(name) or \(alias), not both") }
        values[name] = value
    }

    func double(_ name: String) throws(APIError) -> Double? {
        guard let text = values[name] else { return nil }
        guard let value = Parameters.number(text) else { throw .invalidParameter(name, "\(Quote.input(text)) is not a number") }
        return value
    }

    func requiredDouble(_ name: String, _ what: String) throws(APIError) -> Double {
        guard let value = try double(name) else { throw .missingParameter(name, what) }
        return value
    }

    /// A whole number. `range: nil` when the engine operation checks the bound itself (k of
    /// nearest and locate, against its limits): one place for the bound, so every value out of
    /// it gets the same words, never a second, wider bound of the server's own.
    func int(_ name: String, default fallback: Int, range: ClosedRange<Int>?) throws(APIError) -> Int {
        guard let text = values[name] else { return fallback }
        guard let value = Int(text) else { throw .invalidParameter(name, "\(Quote.input(text)) is not a whole number") }
        if let range, !range.contains(value) {
            throw .invalidParameter(name, "must be between \(range.lowerBound) and \(range.upperBound), got \(value)")
        }
        return value
    }

    func bool(_ name: String) throws(APIError) -> Bool? {
        guard let text = values[name] else { return nil }
        switch text.lowercased() {
        case "true", "1", "yes": return true
        case "false", "0", "no": return false
        default: throw .invalidParameter(name, "\(Quote.input(text)) is not true or false")
        }
    }

    /// `lon` and `lat` as a checked position.
    func position() throws(APIError) -> Point {
        let lon = try requiredDouble("lon", "the longitude in degrees (WGS 84), e.g. 14.4208")
        let lat = try requiredDouble("lat", "the latitude in degrees (WGS 84), e.g. 50.0880")
        return try Parameters.checked(lon: lon, lat: lat, name: nil)
    }

    /// A `LON,LAT` pair such as `from=14.4109,50.1167`.
    func pair(_ name: String) throws(APIError) -> Point {
        guard let text = values[name] else { throw .missingParameter(name, "a position as LON,LAT, e.g. 14.4109,50.1167") }
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2, let lon = Parameters.number(String(parts[0])), let lat = Parameters.number(String(parts[1])) else {
            throw .invalidParameter(name, "\(Quote.input(text)) is not a position LON,LAT such as 14.4109,50.1167")
        }
        return try Parameters.checked(lon: lon, lat: lat, name: name)
    }

    /// Percent-decoded; Foundation's decoder is only called when there is something to decode
    /// (it showed in profiles of plain `lon=…&lat=…` requests).
    /// The query string's names and values, decoded as HTML forms encode them (`+` is a space,
    /// `%2B` a plus), which is how Python's urlencode, OWSLib and browsers send a filter such as
    /// `name+%3D+%27Praha+1%27`. Invalid percent-encoding is kept as written.
    static func pairs(_ query: Substring) -> [(String, String)] {
        query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            guard let equals = pair.firstIndex(of: "=") else { return (decoded(pair), "") }
            return (decoded(pair[..<equals]), decoded(pair[pair.index(after: equals)...]))
        }
    }

    static func decoded(_ text: Substring) -> String {
        let utf8 = text.utf8
        guard utf8.contains(UInt8(ascii: "%")) || utf8.contains(UInt8(ascii: "+")) else { return String(text) }
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    /// Plain decimal numbers only: Swift's `Double("nan")`, `"inf"` and `"0x1p3"` are not
    /// coordinates a client means to send.
    static func number(_ text: String) -> Double? {
        let allowed = text.utf8.allSatisfy { byte in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
        }
        guard allowed, text.utf8.count <= 64, let value = Double(text), value.isFinite else { return nil }
        return value
    }

    /// Geometry's one rule for positions; the problem names `name`, or the coordinate at
    /// fault (`lon`, `lat`) when the position came as two parameters.
    static func checked(lon: Double, lat: Double, name: String?) throws(APIError) -> Point {
        do {
            return try Point.checked(lon: lon, lat: lat)
        } catch {
            throw .invalidParameter(name ?? error.axis.rawValue, error.description)
        }
    }
}

extension Request {
    /// A path parameter, percent-decoded (layer names may hold any character).
    func pathParameter(_ name: String, _ context: APIContext) throws(APIError) -> String {
        guard let raw = context.parameters.get(name) else { throw .internalError("route without {\(name)}") }
        // A path's `+` is a plus, not a space (only query strings are form-encoded).
        guard raw.utf8.contains(UInt8(ascii: "%")) else { return raw }
        return raw.removingPercentEncoding ?? raw
    }
}
