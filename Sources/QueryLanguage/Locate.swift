// LOCATE: where am I indoors, from the beacons a phone hears (docs/QUERY_LANGUAGE.md, "LOCATE").
// The statement's syntax, parsing, planning and running, in one place; the positioning itself is
// the Indoor module's (`Locator`), reached through `Snapshot.locate`.

import Engine
import Geometry
import Support

/// `LOCATE SCAN(beacon rssi, …) IN venue [K n] [METHOD knn|wknn|gaussian|ensemble] [FINGERPRINTS scans|mean|median]`
/// or `LOCATE TRACK(SCAN(…) AT seconds, …) IN venue [K n] [SPEED s]` (the clauses after IN in any
/// order, each once)
struct LocateStatement: Sendable, Equatable {
    struct Reading: Sendable, Equatable {
        /// A beacon id: a name (b3001) or a string ('f7826da6-4fa2:1:2').
        var beacon: String
        var rssi: Double
        var position: SourcePosition
    }
    var readings: [Reading]
    /// A track: its scans, each with its time (seconds) when given; `readings` is then empty.
    var track: [(readings: [Reading], time: Double?)]? = nil
    var venue: Name
    var k: Int?
    var method: Name?
    var fingerprints: Name?
    var speed: (value: Double, position: SourcePosition)?
    var position: SourcePosition

    static func == (a: LocateStatement, b: LocateStatement) -> Bool {
        a.readings == b.readings && a.venue == b.venue && a.k == b.k && a.method == b.method && a.fingerprints == b.fingerprints
            && a.position == b.position && a.speed?.value == b.speed?.value
            && a.track?.map(\.readings) == b.track?.map(\.readings) && a.track?.map(\.time) == b.track?.map(\.time)
    }
}

extension Parser {
    /// `SCAN(b3001 -78, b3006 -77) IN venue [K n] [METHOD m] [FINGERPRINTS f]`
    mutating func locate(at start: SourcePosition) throws(QueryError) -> LocateStatement {
        if accept("TRACK") { return try locateTrack(at: start) }
        guard accept("SCAN") else { throw error(expected: "SCAN(beacon rssi, …) or TRACK(SCAN(…) AT seconds, …) after LOCATE", hint: "LOCATE SCAN(b3001 -78, b3006 -77) IN venue") }
        let readings = try scanReadings()
        try expect("IN", "and a venue after the scan (LOCATE SCAN(…) IN venue)")
        var statement = LocateStatement(readings: readings, venue: try name("a venue name after IN"), position: start)
        try clauses(Parser.locateClauses.subtracting(["SPEED"]), of: "LOCATE") { (parser, keyword) throws(QueryError) in
            switch keyword {
            case "K": statement.k = try parser.integer("the number of fingerprints after K", in: 1...Parser.unbounded).0
            case "METHOD": statement.method = try parser.name("a method after METHOD (knn, wknn, gaussian or ensemble)")
            default: statement.fingerprints = try parser.name("fingerprints after FINGERPRINTS (scans, mean or median)")
            }
        }
        return statement
    }

    /// `TRACK(SCAN(…) [AT seconds], …) IN venue [K n] [SPEED s]`
    mutating func locateTrack(at start: SourcePosition) throws(QueryError) -> LocateStatement {
        try expect(symbol: "(", "after TRACK")
        var scans: [(readings: [LocateStatement.Reading], time: Double?)] = []
        repeat {
            guard accept("SCAN") else { throw error(expected: "SCAN(beacon rssi, …) in TRACK(…)", hint: "LOCATE TRACK(SCAN(b3001 -78) AT 0, SCAN(b3006 -77) AT 1) IN venue") }
            guard scans.count < 10_000 else { throw error(expected: "')': a track holds at most 10,000 scans") }
            let readings = try scanReadings()
            var time: Double?
            if accept("AT") { time = try number("the scan's time in seconds after AT").0 }
            scans.append((readings, time))
        } while accept(symbol: ",")
        try expect(symbol: ")", "to close TRACK(")
        try expect("IN", "and a venue after the track (LOCATE TRACK(…) IN venue)")
        var statement = LocateStatement(readings: [], track: scans, venue: try name("a venue name after IN"), position: start)
        try clauses(["K", "SPEED"], of: "LOCATE TRACK") { (parser, keyword) throws(QueryError) in
            switch keyword {
            case "K": statement.k = try parser.integer("the number of cells after K", in: 1...Parser.unbounded).0
            default: statement.speed = try parser.number("the walking speed after SPEED (frame units a second)")
            }
        }
        return statement
    }

    /// `(beacon rssi, …)` after SCAN.
    mutating func scanReadings() throws(QueryError) -> [LocateStatement.Reading] {
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
        return readings
    }
}

struct LocatePlan: Sendable {
    var snapshot: Snapshot
    var venue: IndoorVenue
    var readings: [(beacon: String, rssi: Double)]
    var positions: [SourcePosition]
    var options: LocateOptions
    /// A track's scans and settings (then `readings` is empty).
    var track: (scans: [(time: Double?, readings: [(beacon: String, rssi: Double)])], options: TrackOptions)?
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
        options.k = locate.k
        var track: (scans: [(time: Double?, readings: [(beacon: String, rssi: Double)])], options: TrackOptions)?
        if let scans = locate.track {
            var trackOptions = TrackOptions()
            if let k = locate.k { trackOptions.k = k }
            if let speed = locate.speed { trackOptions.speed = speed.value }
            track = (scans.map { (time: $0.time, readings: $0.readings.map { ($0.beacon, $0.rssi) }) }, trackOptions)
        }
        return LocatePlan(snapshot: snapshot, venue: venue, readings: locate.readings.map { ($0.beacon, $0.rssi) },
                          positions: locate.readings.map(\.position), options: options, track: track, position: locate.position)
    }
}

extension Runner {
    func locate(_ plan: LocatePlan) throws(QueryError) -> QueryResult {
        if let track = plan.track {
            do {
                return QueryResult(body: .track(try plan.snapshot.locateTrack(track.scans, in: plan.venue, options: track.options, deadline: deadline)))
            } catch {
                throw Runner.engineError(error, at: plan.position)
            }
        }
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
