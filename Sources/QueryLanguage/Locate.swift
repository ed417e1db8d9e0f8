// LOCATE: where am I indoors, from the beacons a phone hears (docs/QUERY_LANGUAGE.md, "LOCATE").
// The statement's syntax, parsing, planning and running, in one place; the positioning itself is
// the Indoor module's (`Locator`), reached through `Snapshot.locate`.

import Engine
import Geometry

/// `LOCATE SCAN(beacon rssi, …) IN venue [K n] [METHOD knn|wknn] [FINGERPRINTS scans|mean|median]`
/// (the clauses after IN in any order, each once)
struct LocateStatement: Sendable, Equatable {
    struct Reading: Sendable, Equatable {
        /// A beacon id: a name (b3001) or a string ('f7826da6-4fa2:1:2').
        var beacon: String
        var rssi: Double
        var position: SourcePosition
    }
    var readings: [Reading]
    var venue: Name
    var k: Int?
    var method: Name?
    var fingerprints: Name?
    var position: SourcePosition
}

extension Parser {
    /// `SCAN(b3001 -78, b3006 -77) IN venue [K n] [METHOD m] [FINGERPRINTS f]`
    mutating func locate(at start: SourcePosition) throws(QueryError) -> LocateStatement {
        guard accept("SCAN") else { throw error(expected: "SCAN(beacon rssi, …) after LOCATE", hint: "LOCATE SCAN(b3001 -78, b3006 -77) IN venue") }
        try expect(symbol: "(", "after SCAN")
        var readings: [LocateStatement.Reading] = []
        repeat {
            let position = tokens[index].position
            let beacon: String
            switch tokens[index].kind {
            case .word(let word): beacon = word
            case .string(let text): beacon = text
            default: throw error(expected: "a beacon id (a name or a 'string') in SCAN(beacon rssi, …)")
            }
            index += 1
            guard readings.count < 1000 else { throw error(expected: "')': a scan holds at most 1000 beacons") }
            let (rssi, _) = try number("the strength in dBm after the beacon (b3001 -78)")
            readings.append(LocateStatement.Reading(beacon: beacon, rssi: rssi, position: position))
        } while accept(symbol: ",")
        try expect(symbol: ")", "to close SCAN(")
        try expect("IN", "and a venue after the scan (LOCATE SCAN(…) IN venue)")
        var statement = LocateStatement(readings: readings, venue: try name("a venue name after IN"), position: start)
        try clauses(Parser.locateClauses, of: "LOCATE") { (parser, keyword) throws(QueryError) in
            switch keyword {
            case "K": statement.k = try parser.integer("the number of fingerprints after K", in: 1...Parser.unbounded).0
            case "METHOD": statement.method = try parser.name("a method after METHOD (knn, wknn, gaussian or ensemble)")
            default: statement.fingerprints = try parser.name("fingerprints after FINGERPRINTS (scans, mean or median)")
            }
        }
        return statement
    }
}

struct LocatePlan: Sendable {
    var snapshot: Snapshot
    var venue: IndoorVenue
    var readings: [(beacon: String, rssi: Double)]
    var positions: [SourcePosition]
    var options: LocateOptions
    var position: SourcePosition
}

extension Planner {
    func planLocate(_ locate: LocateStatement) throws(QueryError) -> LocatePlan {
        let venue: IndoorVenue
        do {
            venue = try snapshot.venue(locate.venue.text)
        } catch {
            let known = snapshot.venueNames
            let hint = Suggestion.closest(to: locate.venue.text, in: known).map { "did you mean '\($0)'?" }
                ?? (known.isEmpty ? "the store has no venues; import a survey with vltava indoor import" : "venues: \(known.joined(separator: ", "))")
            throw Planner.error(.notFound, "unknown_venue", "unknown venue \(Quote.input(locate.venue.text))", at: locate.venue.position, hint: hint)
        }
        var options = LocateOptions()
        if let name = locate.method {
            guard let method = LocateMethod(rawValue: name.text.lowercased()) else {
                throw Planner.error(.invalid, "invalid_value", "unknown method \(Quote.input(name.text))", at: name.position, hint: "METHOD knn, wknn, gaussian or ensemble")
            }
            options.method = method
        }
        if let name = locate.fingerprints {
            guard let kind = FingerprintKind(rawValue: name.text.lowercased()) else {
                throw Planner.error(.invalid, "invalid_value", "unknown fingerprints \(Quote.input(name.text))", at: name.position,
                                    hint: "FINGERPRINTS scans, mean or median")
            }
            options.fingerprints = kind
        }
        options.k = locate.k ?? LocateOptions.defaultK(options.method)
        return LocatePlan(snapshot: snapshot, venue: venue, readings: locate.readings.map { ($0.beacon, $0.rssi) },
                          positions: locate.readings.map(\.position), options: options, position: locate.position)
    }
}

extension Runner {
    func locate(_ plan: LocatePlan) throws(QueryError) -> QueryResult {
        do {
            return QueryResult(body: .location(try plan.snapshot.locate(plan.readings, in: plan.venue, options: plan.options, deadline: deadline)))
        } catch {
            // Point the error at the reading it is about (for a duplicate: its second mention).
            var position = plan.position
            if case .scan(let scan) = error, let beacon = scan.beacon {
                let mentions = plan.readings.indices.filter { plan.readings[$0].beacon == beacon }
                if case .duplicateBeacon = scan, mentions.count > 1 { position = plan.positions[mentions[1]] }
                else if let first = mentions.first { position = plan.positions[first] }
            }
            throw Runner.engineError(error, at: position)
        }
    }
}
