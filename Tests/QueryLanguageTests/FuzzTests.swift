import Engine
import Foundation
import QueryLanguage
import TestSupport
import Testing

/// Generative fuzzing: random token streams built from the language's own vocabulary, and
/// random bytes, for a fixed number of inputs. Every input must end in an answer or a
/// QueryError with a position inside the text, never a crash, and quickly.
@Suite(.validatesStores) struct FuzzTests {
    static let vocabulary = [
        "SHOW", "LAYERS", "DESCRIBE", "FIND", "ROUTE", "TILE", "EXPLAIN", "OF", "CONTAINING", "NEAREST", "TO", "WITHIN",
        "INTERSECTING", "BBOX", "AT", "ZOOM", "LINKED", "WHERE", "ORDER", "BY", "ASC", "DESC", "LIMIT", "RETURN", "AND", "OR",
        "NOT", "IN", "IS", "NULL", "TRUE", "FALSE", "POINT", "lon", "lat", "FROM", "ON", "AVOID", "SPEED", "PROFILE", "wheelchair", "LAYER", "LATEST",
        "HISTORY", "MEASURES", "FRESH", "OBSERVED_AT", "m", "km", "h", "stations", "districts", "pens", "pavilions", "animals",
        "paths", "zoo_map", "name", "code", "fid", "no2", "distance_m", "layer", "*", "(", ")", ",", ";", "/", "=", "<>", "!=",
        "<", "<=", ">", ">=", "~", ".", "0", "1", "3", "16", "14.42", "50.09", "-1", "1e400", "95", "'Praha'", "'goril'",
        "''", "'", "--", "\n", "ř", "\"",
    ]

    /// Inputs per test: 20,000 in CI; `VLTAVA_FUZZ_INPUTS=1000000` for a long run.
    static let count = ProcessInfo.processInfo.environment["VLTAVA_FUZZ_INPUTS"].flatMap { Int($0) } ?? 20_000

    /// Runs `query` and checks the outcome is an answer or a well-placed error.
    static func check(_ query: String, on snapshot: Snapshot) {
        do {
            _ = try Query.run(query, on: snapshot)
        } catch {
            let lines = query.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(error.line >= 1 && error.line <= max(1, lines.count), "\(query.debugDescription): line \(error.line)")
            #expect(error.column >= 1, "\(query.debugDescription)")
            #expect(!error.message.isEmpty)
        }
    }

    @Test func randomTokenStreams() throws {
        let snapshot = try QueryStore.get()
        var random = SplitMix(state: 20261123)
        let start = Date()
        for _ in 0..<Self.count {
            let length = Int.random(in: 1...24, using: &random)
            // Half the streams start like a statement, so the parser gets deep, not just rejected.
            var tokens = random.next() % 2 == 0 ? [["FIND", "ROUTE", "TILE", "EXPLAIN FIND"].randomElement(using: &random) ?? "FIND"] : []
            for _ in 0..<length { tokens.append(Self.vocabulary.randomElement(using: &random) ?? "") }
            Self.check(tokens.joined(separator: random.next() % 4 == 0 ? "" : " "), on: snapshot)
        }
        let seconds = Date().timeIntervalSince(start)
        print("fuzz: \(Self.count) random token streams in \(String(format: "%.2f", seconds)) s")
        #expect(seconds < Double(Self.count) / 100)
    }

    @Test func randomBytes() throws {
        let snapshot = try QueryStore.get()
        var random = SplitMix(state: 7)
        let start = Date()
        for _ in 0..<Self.count {
            let bytes = (0..<Int.random(in: 0...64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            Self.check(String(decoding: bytes, as: UTF8.self), on: snapshot)
        }
        print("fuzz: \(Self.count) random byte strings in \(String(format: "%.2f", Date().timeIntervalSince(start))) s")
    }

    /// Parsing is linear: long inputs of every shape are refused or parsed in bounded time.
    @Test func longInputsStayFast() throws {
        let snapshot = try QueryStore.get()
        let shapes = [
            String(repeating: "(", count: 90_000),
            "FIND stations WHERE " + String(repeating: "NOT ", count: 20_000) + "name = 'x'",
            "FIND stations WHERE " + Array(repeating: "name = 'x'", count: 4000).joined(separator: " OR "),
            "FIND stations WHERE name IN (" + Array(repeating: "'x'", count: 5000).joined(separator: ",") + ")",
            String(repeating: "SHOW LAYERS;", count: 5000),
            "FIND " + String(repeating: "a", count: 99_000),
            String(repeating: "-", count: 100_001),
        ]
        for query in shapes {
            let start = Date()
            Self.check(query, on: snapshot)
            // Linear work takes well under a second even in a debug build; quadratic work on
            // 100,000 characters would take minutes. 10 s keeps a busy CI machine from failing
            // the test while any super-linear path still does.
            #expect(Date().timeIntervalSince(start) < 10, "\(query.prefix(40))…")
        }
    }
}
