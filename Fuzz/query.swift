// Fuzzes the query language's lexer, parser and planner (Sources/QueryLanguage) against a real
// snapshot (Shared/DemoSnapshot.swift), so names resolve, fields type and WHERE compiles as in
// the server. Statements are planned, never run: `query-budget` runs them.
//
// Invariants: every text ends in plans or a QueryError whose line and column lie inside the
// text, and whose rendering (message, source line, caret) does not trap.

import Engine
import Foundation
import Geometry
import QueryLanguage

/// Values for bound parameters, one of each kind the grammar takes.
let palette: [QueryValue] = [
    .number(14.4208), .number(50.088), .text("Praha"), .point(Point(lon: 14.4208, lat: 50.088)), .number(3),
    .bool(true), .null, .number(500), .text(""), .number(-1), .number(.infinity), .number(.nan),
]

/// Checks an error's position against the text, and renders it as the CLI does.
func check(_ error: QueryError, in text: String) {
    let lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).count
    guard error.line >= 1, error.line <= max(1, lines), error.column >= 1, !error.message.isEmpty else {
        FuzzSupport.fail("error outside the text (line \(error.line), column \(error.column) of \(lines) lines): \(error)")
    }
    _ = error.rendered(in: text, origin: "fuzz")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
    var parameterCount = 0
    do {
        parameterCount = try Query.prepare(text).parameterCount
    } catch {
        check(error, in: text)
    }
    do {
        _ = try Query.plan(text, on: snapshot)
    } catch {
        check(error, in: text)
    }
    if parameterCount > 0 {
        // The values depend only on the text, so a saved input replays the same run.
        let parameters = (0..<parameterCount).map { palette[($0 + count) % palette.count] }
        do {
            _ = try Query.plan(text, parameters, on: snapshot)
        } catch {
            check(error, in: text)
        }
    }
    do {
        _ = try Query.place(text, on: snapshot)
    } catch {
        check(error, in: text)
    }
    return 0
}
