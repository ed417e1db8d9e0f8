// Answers as CSV (RFC 4180, text/csv): the header, then one line per row, through Geometry's
// `CSVWriter` as JSON goes through `JSONWriter`. A CSV file is one table, so it holds one
// statement's rows (a track's positions are rows); a route or a location is no table and is refused.

import Engine
import Geometry
import Support

/// How an answer is written.
public enum AnswerFormat: String, Sendable, CaseIterable {
    case json, geojson, csv
}

extension QueryResult {
    static func notATable(_ what: String) -> EngineError {
        .invalidArgument(parameter: "format", message: "\(what) is no table: ask for it as JSON (format=json)")
    }

    /// The answer as CSV within `budget`'s response size (checked after every row).
    public func writeCSV(_ w: inout CSVWriter, budget: RequestBudget? = nil) throws(EngineError) {
        switch body {
        case .rows(let rows):
            w.header(rows.columns)
            for row in rows.values {
                w.row(row)
                try budget?.check(responseBytes: w.bytes.count)
            }
        case .plan(let lines):
            w.header(["plan"])
            for line in lines { w.row([.string(line)]) }
        case .route, .trip: throw Self.notATable("a route")
        case .location: throw Self.notATable("a LOCATE answer")
        case .track(let track):
            w.header(["time", "floor", "x", "y", "lon", "lat", "point", "spread"])
            let venue = track.venue.venue
            for (p, time) in zip(track.positions, track.times) {
                w.row([time.map { .double($0) } ?? .null, .integer(Int64(p.floor)), .double(Rounding.metres(p.x)), .double(Rounding.metres(p.y)),
                       p.lonLat.map { .double($0.lon) } ?? .null, p.lonLat.map { .double($0.lat) } ?? .null,
                       .string(venue.points[p.point].label), .double(Rounding.metres(p.spread))])
                try budget?.check(responseBytes: w.bytes.count)
            }
        }
    }

    /// One answer as CSV; several statements are refused (a CSV file holds one table).
    public static func csv(_ results: [QueryResult]) throws(QueryError) -> [UInt8] {
        let start = SourcePosition(line: 1, column: 1, length: 1)
        guard results.count == 1 else {
            throw QueryError(kind: .invalid, code: "invalid_parameter", message: "CSV holds one table, and the text has \(results.count) statements",
                             line: start.line, column: start.column, hint: "run one statement at a time, or ask for JSON")
        }
        var w = CSVWriter()
        do { try results[0].writeCSV(&w) } catch { throw Runner.engineError(error, at: start) }
        return w.bytes
    }
}

extension Query {
    static func answerCSV(_ parsed: [(Statement, SourcePosition)], on snapshot: Snapshot, writingTo engine: Engine?, budget: inout RequestBudget) throws(QueryError) -> [UInt8] {
        guard parsed.count == 1 else {
            let second = parsed.count > 1 ? parsed[1].1 : SourcePosition(line: 1, column: 1, length: 1)
            throw QueryError(kind: .invalid, code: "invalid_parameter", message: "CSV holds one table, and the text has \(parsed.count) statements",
                             line: second.line, column: second.column, length: second.length, hint: "send one statement per request, or ask for JSON")
        }
        let (statement, position) = parsed[0]
        do { try budget.deadline.check() } catch { throw Runner.engineError(error, at: position) }
        let result = try Query.result(of: statement, at: position, on: snapshot, writingTo: engine, deadline: budget.deadline)
        var w = CSVWriter(reservingCapacity: 4096)
        do {
            try budget.answered(rows: result.count)
            try result.writeCSV(&w, budget: budget)
        } catch {
            throw Runner.engineError(error, at: position)
        }
        return w.bytes
    }
}
