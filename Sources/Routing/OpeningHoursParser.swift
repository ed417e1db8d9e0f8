// The parser of OSM `opening_hours` (OpeningHours.swift says which subset, and why): a
// tokenizer, then rules of month/date and weekday selectors, time spans and modifiers. Every
// refusal names what it expected and the column.

import Foundation

/// A token of an `opening_hours` value.
struct OpeningHoursToken: Equatable {
    enum Kind: Equatable {
        case weekday(Int)  // 1...7
        case month(Int)  // 1...12
        case number(Int)  // digits with no ':' after them
        case time(Int)  // minutes, possibly up to 48:00
        case word(String)  // off, closed, open and the refused keywords
        case always  // 24/7
        case punct(String)  // - , ; || + : [ ] / ( ) "
    }
    var kind: Kind
    var text: String
    var column: Int
    /// Whether whitespace comes right before the token: `, ` separates rules where `,` lists.
    var spaced = false
}

struct OpeningHoursParser {
    let chars: [Character]
    var tokens: [OpeningHoursToken] = []
    var index = 0

    init(_ text: String) { chars = Array(text) }

    static let weekdayNames = ["mo", "tu", "we", "th", "fr", "sa", "su"]
    static let monthNames = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ]
    static let monthLengths = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

    mutating func parseAll() throws(OpeningHoursError) -> [Rule] {
        try tokenize()
        guard !tokens.isEmpty else {
            throw OpeningHoursError(message: "empty opening_hours value", column: 1)
        }
        var rules: [Rule] = []
        var separator = Rule.Separator.normal
        while true {
            rules.append(try parseRule(separator))
            guard let token = peek else { break }
            switch token.kind {
            case .punct(";"): separator = .normal
            case .punct(","): separator = .additional
            default:
                throw error("expected ';' or the end of the value", at: token)
            }
            index += 1
            if peek == nil {
                throw error("expected a rule after '\(token.text)', found the end of the value")
            }
        }
        return rules
    }

    // MARK: Tokens

    private var peek: OpeningHoursToken? { index < tokens.count ? tokens[index] : nil }

    private func peek(_ offset: Int) -> OpeningHoursToken? {
        index + offset < tokens.count ? tokens[index + offset] : nil
    }

    private func error(_ message: String, at token: OpeningHoursToken) -> OpeningHoursError {
        OpeningHoursError(message: "\(message), found '\(token.text)'", column: token.column)
    }

    private func error(_ message: String) -> OpeningHoursError {
        OpeningHoursError(message: message, column: chars.count + 1)
    }

    private func errorHere(_ message: String) -> OpeningHoursError {
        if let token = peek { return error(message, at: token) }
        return error("\(message), found the end of the value")
    }

    private static func isDigit(_ c: Character) -> Bool { c.isASCII && c.isNumber }
    private static func isLetter(_ c: Character) -> Bool { c.isASCII && c.isLetter }

    private mutating func tokenize() throws(OpeningHoursError) {
        var i = 0
        var spaced = false
        while i < chars.count {
            let c = chars[i]
            let column = i + 1
            if c.isWhitespace {
                i += 1
                spaced = true
                continue
            }
            defer { spaced = false }
            let before = tokens.count
            defer { if tokens.count > before { tokens[before].spaced = spaced } }
            if OpeningHoursParser.isLetter(c) {
                var j = i
                while j < chars.count, OpeningHoursParser.isLetter(chars[j]) { j += 1 }
                let text = String(chars[i..<j])
                let lower = text.lowercased()
                let kind: OpeningHoursToken.Kind
                if let w = OpeningHoursParser.weekdayNames.firstIndex(of: lower) {
                    kind = .weekday(w + 1)
                } else if let m = OpeningHoursParser.monthNames.firstIndex(of: lower) {
                    kind = .month(m + 1)
                } else {
                    switch lower {
                    case "off", "closed", "open": kind = .word(lower)
                    case "ph", "sh":
                        throw OpeningHoursError(
                            message: "public and school holidays ('\(text)') are not supported",
                            column: column)
                    case "week":
                        throw OpeningHoursError(
                            message: "week selectors ('\(text)') are not supported", column: column)
                    case "sunrise", "sunset", "dawn", "dusk":
                        throw OpeningHoursError(
                            message: "sun events ('\(text)') are not supported", column: column)
                    case "easter":
                        throw OpeningHoursError(
                            message: "'easter' dates are not supported", column: column)
                    case "unknown":
                        throw OpeningHoursError(
                            message: "the 'unknown' modifier is not supported", column: column)
                    default:
                        throw OpeningHoursError(
                            message: "expected a weekday (Mo-Su), a month (Jan-Dec), 'off' or "
                                + "'open', found '\(text)'",
                            column: column)
                    }
                }
                tokens.append(OpeningHoursToken(kind: kind, text: text, column: column))
                i = j
                continue
            }
            if OpeningHoursParser.isDigit(c) {
                if i + 4 <= chars.count, String(chars[i..<i + 4]) == "24/7" {
                    tokens.append(OpeningHoursToken(kind: .always, text: "24/7", column: column))
                    i += 4
                    continue
                }
                var j = i
                while j < chars.count, OpeningHoursParser.isDigit(chars[j]) { j += 1 }
                let digits = String(chars[i..<j])
                if j < chars.count, chars[j] == ":", j + 1 < chars.count, OpeningHoursParser.isDigit(chars[j + 1]) {
                    var k = j + 1
                    while k < chars.count, OpeningHoursParser.isDigit(chars[k]) { k += 1 }
                    let text = String(chars[i..<k])
                    let minutes = String(chars[(j + 1)..<k])
                    guard digits.count <= 2, minutes.count == 2, let h = Int(digits),
                        let m = Int(minutes), m < 60
                    else {
                        throw OpeningHoursError(
                            message: "expected a time as hh:mm, found '\(text)'", column: column)
                    }
                    tokens.append(OpeningHoursToken(kind: .time(h * 60 + m), text: text, column: column))
                    i = k
                    continue
                }
                if digits.count == 4 {
                    throw OpeningHoursError(
                        message: "year selectors ('\(digits)') are not supported", column: column)
                }
                guard digits.count <= 2, let n = Int(digits) else {
                    throw OpeningHoursError(
                        message: "expected a day number or a time, found '\(digits)'",
                        column: column)
                }
                tokens.append(OpeningHoursToken(kind: .number(n), text: digits, column: column))
                i = j
                continue
            }
            if c == "|" {
                throw OpeningHoursError(
                    message: "fallback rules ('||') are not supported; use ';'", column: column)
            }
            switch c {
            case "-", ",", ";", "+", ":", "[", "]", "/", "(", ")":
                tokens.append(OpeningHoursToken(kind: .punct(String(c)), text: String(c), column: column))
                i += 1
            case "\"":
                throw OpeningHoursError(message: "comments (\"…\") are not supported", column: column)
            default:
                throw OpeningHoursError(
                    message: "unexpected character '\(c)'", column: column)
            }
        }
    }

    // MARK: Rules

    private mutating func parseRule(_ separator: Rule.Separator) throws(OpeningHoursError) -> Rule {
        var rule = Rule(
            separator: separator, isOpen: true, weekdays: 0x7F, dates: [],
            today: DayMask(from: 0, to: 1440), spill: .zero)
        var selected = false
        if let token = peek, token.kind == .always {
            index += 1
            selected = true
        } else {
            if case .month? = peek?.kind {
                rule.dates = try parseDates()
                selected = true
            }
            if case .weekday? = peek?.kind {
                rule.weekdays = try parseWeekdays()
                selected = true
            }
            if case .time? = peek?.kind {
                (rule.today, rule.spill) = try parseTimes()
                selected = true
            }
        }
        if let token = peek, case .word(let word) = token.kind {
            index += 1
            rule.isOpen = word == "open"
            selected = true
        }
        guard selected else {
            throw errorHere("expected a month, a weekday, a time span, '24/7', 'off' or 'open'")
        }
        if let token = peek {
            switch token.kind {
            case .punct(";"), .punct(","): break
            case .punct("+"): throw error("open ends ('+') are not supported", at: token)
            case .punct("/"): throw error("repeating intervals ('/') are not supported", at: token)
            case .punct("["): throw error("nth weekdays ('Su[1]') are not supported", at: token)
            case .punct(":"):
                throw error("expected a weekday or a time after the months (no ':')", at: token)
            case .month, .weekday:
                throw error(
                    "months must come before weekdays, and weekdays before times", at: token)
            case .number:
                throw error("expected a weekday or a time (hh:mm)", at: token)
            default:
                throw error("expected ';' or the end of the value", at: token)
            }
        }
        return rule
    }

    /// Whether the token after a ',' continues the list (rather than starting an additional rule).
    private func commaContinues(
        spaceAllowed: Bool = false, _ isItem: (OpeningHoursToken.Kind) -> Bool
    ) -> Bool {
        guard let comma = peek, comma.kind == .punct(","), let next = peek(1) else { return false }
        return isItem(next.kind) && (spaceAllowed || !next.spaced)
    }

    private mutating func parseWeekdays() throws(OpeningHoursError) -> UInt8 {
        var mask: UInt8 = 0
        repeat {
            if commaContinues({ if case .weekday = $0 { true } else { false } }) { index += 1 }
            guard let first = peek, case .weekday(let from) = first.kind else {
                throw errorHere("expected a weekday (Mo-Su)")
            }
            index += 1
            var to = from
            if peek?.kind == .punct("-") {
                index += 1
                guard let last = peek, case .weekday(let end) = last.kind else {
                    throw errorHere("expected a weekday (Mo-Su) after '-'")
                }
                index += 1
                to = end
            }
            // Fr-Mo wraps over the weekend.
            var d = from
            while true {
                mask |= 1 << UInt8(d - 1)
                if d == to { break }
                d = d == 7 ? 1 : d + 1
            }
        } while commaContinues({ if case .weekday = $0 { true } else { false } })
        return mask
    }

    private mutating func parseDates() throws(OpeningHoursError) -> [DateRange] {
        var ranges: [DateRange] = []
        let isMonth: (OpeningHoursToken.Kind) -> Bool = { if case .month = $0 { true } else { false } }
        repeat {
            if commaContinues(isMonth) { index += 1 }
            guard let first = peek, case .month(let fromMonth) = first.kind else {
                throw errorHere("expected a month (Jan-Dec)")
            }
            index += 1
            if let dayToken = peek, case .number(let fromDay) = dayToken.kind {
                index += 1
                try checkDay(fromDay, month: fromMonth, token: dayToken)
                let start = fromMonth * 32 + fromDay
                var end = start
                if peek?.kind == .punct("-") {
                    index += 1
                    if let t = peek, case .number(let toDay) = t.kind {
                        // `Dec 24-26`: the same month.
                        index += 1
                        try checkDay(toDay, month: fromMonth, token: t)
                        guard toDay >= fromDay else {
                            throw error(
                                "a day range within one month must not end before it starts",
                                at: t)
                        }
                        end = fromMonth * 32 + toDay
                    } else if let t = peek, case .month(let toMonth) = t.kind {
                        index += 1
                        guard let dt = peek, case .number(let toDay) = dt.kind else {
                            throw errorHere("expected a day number after '\(t.text)'")
                        }
                        index += 1
                        try checkDay(toDay, month: toMonth, token: dt)
                        end = toMonth * 32 + toDay
                    } else {
                        throw errorHere("expected a day number or a month and day after '-'")
                    }
                }
                if let t = peek, t.kind == .punct("+") {
                    throw error("open-ended dates ('+') are not supported", at: t)
                }
                ranges.append(DateRange(start: start, end: end))
            } else {
                var toMonth = fromMonth
                if peek?.kind == .punct("-") {
                    index += 1
                    guard let t = peek, case .month(let m) = t.kind else {
                        throw errorHere("expected a month (Jan-Dec) after '-'")
                    }
                    index += 1
                    toMonth = m
                    if let dt = peek, case .number = dt.kind {
                        throw error(
                            "a month range cannot end on a day; write e.g. 'Jan 01-Mar 10'",
                            at: dt)
                    }
                }
                ranges.append(DateRange(start: fromMonth * 32 + 1, end: toMonth * 32 + 31))
            }
        } while commaContinues(isMonth)
        return ranges
    }

    private func checkDay(_ day: Int, month: Int, token: OpeningHoursToken) throws(OpeningHoursError) {
        let length = OpeningHoursParser.monthLengths[month - 1]
        guard (1...length).contains(day) else {
            throw error("expected a day of the month from 1 to \(length)", at: token)
        }
    }

    private mutating func parseTimes() throws(OpeningHoursError) -> (DayMask, DayMask) {
        var today = DayMask.zero
        var spill = DayMask.zero
        let isTime: (OpeningHoursToken.Kind) -> Bool = { if case .time = $0 { true } else { false } }
        repeat {
            if commaContinues(spaceAllowed: true, isTime) { index += 1 }
            guard let startToken = peek, case .time(let start) = startToken.kind else {
                throw errorHere("expected a start time (hh:mm)")
            }
            guard start < 1440 else {
                throw error("expected a start time from 00:00 to 23:59", at: startToken)
            }
            index += 1
            guard let dash = peek, dash.kind == .punct("-") else {
                if let t = peek, t.kind == .punct("+") {
                    throw error("open ends ('+') are not supported", at: t)
                }
                throw errorHere("expected '-' after '\(startToken.text)'")
            }
            index += 1
            guard let endToken = peek, case .time(var end) = endToken.kind else {
                throw errorHere("expected an end time (hh:mm) after '\(startToken.text)\(dash.text)'")
            }
            guard end <= 48 * 60 else {
                throw error("expected an end time up to 48:00", at: endToken)
            }
            index += 1
            // An end at or before the start is on the next day (22:00-02:00; 10:00-10:00 is 24 h).
            if end <= start { end += 1440 }
            today.bits |= DayMask(from: start, to: end).bits
            if end > 1440 { spill.bits |= DayMask(from: max(start, 1440) - 1440, to: end - 1440).bits }
        } while commaContinues(spaceAllowed: true, isTime)
        return (today, spill)
    }
}
