// Aggregates as SQL has them: COUNT(*), COUNT(x), SUM, AVG, MIN, MAX, skipping missing values.
// The language groups rows and hands each group's values here; the same accumulator reduces a
// time series' list of values (`AVG(HISTORY(no2, 24 h))`), so the two agree by construction.

import Geometry

public enum AggregateFunction: String, Sendable, Equatable, CaseIterable {
    case count, sum, avg, min, max

    /// Whether the function needs numbers (SUM and AVG); COUNT, MIN and MAX take any value.
    public var needsNumbers: Bool { self == .sum || self == .avg }
}

/// One aggregate's running state. Missing values are skipped, as in SQL: COUNT(x) counts the
/// values present, SUM, AVG, MIN and MAX of no values are missing (COUNT(*) counts rows, missing
/// or not: `addRow`). SUM of integers stays an integer (a real once it would overflow);
/// MIN and MAX order numbers before text (as SQLite does), text by code points.
public struct Accumulator: Sendable {
    public let function: AggregateFunction
    private var count: Int64 = 0
    private var integerSum: Int64 = 0
    private var integral = true
    /// Neumaier's compensated sum: the same digits for any order of the values, nearly.
    private var sum = 0.0, compensation = 0.0
    private var best: AttributeValue = .null

    public init(_ function: AggregateFunction) { self.function = function }

    /// A row for COUNT(*).
    public mutating func addRow() { count += 1 }

    public mutating func add(_ value: AttributeValue) {
        if value.isNull { return }
        switch function {
        case .count:
            count += 1
        case .sum, .avg:
            guard let number = value.doubleValue else { return }
            count += 1
            if integral, case .integer(let i) = value {
                let (next, overflow) = integerSum.addingReportingOverflow(i)
                if overflow { integral = false } else { integerSum = next }
            } else {
                integral = false
            }
            let t = sum + number
            compensation += abs(sum) >= abs(number) ? (sum - t) + number : (number - t) + sum
            sum = t
        case .min, .max:
            count += 1
            if best.isNull { best = value; return }
            let c = Accumulator.order(value, best)
            if function == .min ? c < 0 : c > 0 { best = value }
        }
    }

    public mutating func add(_ number: Double?) {
        if let number { add(.real(number)) }
    }

    public var result: AttributeValue {
        switch function {
        case .count: return .integer(count)
        case .sum:
            guard count > 0 else { return .null }
            return integral ? .integer(integerSum) : .real(sum + compensation)
        case .avg:
            guard count > 0 else { return .null }
            return .real((sum + compensation) / Double(count))
        case .min, .max: return best
        }
    }

    /// Numbers before text, numbers by value, text by code points; booleans as 0 and 1.
    static func order(_ a: AttributeValue, _ b: AttributeValue) -> Int {
        func rank(_ v: AttributeValue) -> (Int, Double, String) {
            switch v {
            case .bool(let b): (0, b ? 1 : 0, "")
            case .integer, .real: (0, v.doubleValue ?? 0, "")
            case .text(let s), .json(let s): (1, 0, s)
            case .null: (2, 0, "")
            }
        }
        let (x, y) = (rank(a), rank(b))
        if x.0 != y.0 { return x.0 < y.0 ? -1 : 1 }
        if x.1 != y.1 { return x.1 < y.1 ? -1 : 1 }
        let (s, t) = (Array(x.2.unicodeScalars.map(\.value)), Array(y.2.unicodeScalars.map(\.value)))
        return s == t ? 0 : s.lexicographicallyPrecedes(t) ? -1 : 1
    }

    /// The aggregate of a list of values (a time series' hours).
    public static func reduce(_ function: AggregateFunction, _ values: some Sequence<Double?>) -> AttributeValue {
        var accumulator = Accumulator(function)
        for value in values { accumulator.add(value) }
        return accumulator.result
    }
}
