// Fuzzes running statements (joins through feature references, GROUP BY and aggregates, every
// other kind) under a request budget, against the demo snapshot (Shared/DemoSnapshot.swift).
// Each text runs twice: with an ample budget, and with a tiny one that passes somewhere inside
// the work (0 to 1.5 ms, from the text's length) or is cancelled before it starts, as when the
// client has gone.
//
// Invariants: the tiny budget's outcome is the ample one's answer byte for byte, the ample one's
// error, or `deadline_exceeded`; never a shorter or different answer (a join that ran out of
// time must not come back with its references left out). Every error lies inside the text and
// renders without trapping.

import Engine
import Foundation
import Geometry
import QueryLanguage
import Support

/// The snapshot's limits, with `seconds` per request.
func budget(seconds: Double, cancelled: Bool = false) -> RequestBudget {
    var limits = snapshot.limits
    limits.maxRequestSeconds = seconds
    let cancellation = Cancellation()
    if cancelled { cancellation.cancel() }
    return RequestBudget(limits: limits, cancellation: cancellation)
}

enum Outcome: Equatable {
    case answer([UInt8])
    case error(code: String)
}

func outcome(_ text: String, _ budget: RequestBudget) -> Outcome {
    var budget = budget
    do {
        return .answer(try Query.answer(text, on: snapshot, format: .json, budget: &budget))
    } catch {
        let lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).count
        guard error.line >= 1, error.line <= max(1, lines), error.column >= 1, !error.message.isEmpty else {
            FuzzSupport.fail("error outside the text (line \(error.line), column \(error.column) of \(lines) lines): \(error)")
        }
        _ = error.rendered(in: text, origin: "fuzz")
        return .error(code: error.code)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
    // Only texts that parse are run: the parser has its own target, and running is the cost here.
    guard (try? Query.prepare(text)) != nil else { return 0 }
    let ample = outcome(text, budget(seconds: 5))
    // EXPLAIN reports what running took, so its bytes differ from run to run.
    let timed = text.range(of: "explain", options: .caseInsensitive) != nil
    for tiny in [budget(seconds: Double(count % 16) * 0.0001), budget(seconds: 5, cancelled: true)] {
        let short = outcome(text, tiny)
        switch (ample, short) {
        case (_, .error(code: "deadline_exceeded")):
            continue
        case (.answer, .answer) where timed:
            continue
        default:
            guard short == ample else {
                FuzzSupport.fail("under a tiny budget the text gave \(describe(short)) where an ample budget gave \(describe(ample)): \(text)")
            }
        }
    }
    return 0
}

func describe(_ outcome: Outcome) -> String {
    switch outcome {
    case .answer(let bytes): "an answer of \(bytes.count) bytes (\(String(decoding: bytes.prefix(200), as: UTF8.self)))"
    case .error(let code): "the error \(code)"
    }
}
