// OSM `opening_hours` (https://wiki.openstreetmap.org/wiki/Key:opening_hours): parser and
// evaluator for the subset that paths and places actually carry, so that a route departing at a
// given time can avoid a pavilion that has closed or a gate that has not opened yet.
//
// Supported (everything else is refused with an `OpeningHoursError`, never guessed at, because a
// misread value would silently route people through a locked gate):
// - `24/7`;
// - rules separated by `;` (a later rule replaces earlier ones on the days it matches) and `, `
//   (an additional rule: adds to earlier ones instead of replacing them). As in the
//   specification, a comma followed by a space after weekdays or months starts an additional
//   rule (`Mo, We 10:00-12:00` is `Mo` all day plus `We` in the morning), while `Mo,We` is a list;
//   between time spans a comma always continues the list;
// - month and date selectors before the weekdays: `Jan`, `Apr-Oct`, `Nov-Feb` (wrapping),
//   `Dec 24`, `Dec 24-26`, `Mar 15-Oct 31`, `Dec 24-Jan 06`, and lists of these;
// - weekday selectors: `Mo`, `Mo-Fr`, `Fr-Mo` (wrapping), `Mo,We,Fr-Su`;
// - time spans `08:00-18:00`, lists of them, `24:00` as an end, spans past midnight
//   (`22:00-02:00`, `22:00-26:00`, ends up to `48:00`; the part after midnight belongs to the
//   next day);
// - the modifiers `open`, `off` and `closed`.
// Refused: fallback rules (`||`: rare on paths, and the reference library's next change is
// inconsistent with its own state for them, so we could not check ours), public and school holidays (`PH`, `SH`; evaluating them needs a holiday calendar we do
// not have, and treating them as "never" would claim a place is open on Christmas Day), years,
// `week`, nth weekdays (`Su[1]`), sun events (`sunrise`), open ends (`+`), intervals (`/`),
// comments, `unknown`, the `Jan:` separator, and invalid dates such as `Feb 30`.
//
// The evaluation follows the reference implementation the tests are checked against
// (opening-hours-rs / opening-hours-py 2.1), including its treatment of spans past midnight: a
// later `;` rule that matches a day replaces what an earlier rule carried over into it from the
// day before.

import Foundation

/// A parsed OSM `opening_hours` value (the common subset described at the top of this file).
///
/// Public holidays (`PH`) are refused rather than ignored: without a holiday calendar any answer
/// for them would be a guess, and the caller can decide to strip them explicitly.
public struct OpeningHours: Sendable, Equatable {
    /// The original text.
    public let text: String
    let rules: [Rule]

    /// Parses `text`; throws an error naming what was expected and the 1-based column (counted in
    /// characters) of the offending token.
    public init(parsing text: String) throws(OpeningHoursError) {
        self.text = text
        var parser = Parser(text)
        self.rules = try parser.parseAll()
    }

    /// Whether open at this local wall-clock moment. A `LocalTime` with out-of-range fields is
    /// never open.
    public func isOpen(at time: LocalTime) -> Bool {
        guard let dayNumber = time.dayNumber, (0..<1440).contains(time.minute) else { return false }
        return openMask(dayNumber: dayNumber).contains(time.minute)
    }

    /// The next moment strictly after `time` when `isOpen` changes, at most `days` days
    /// (`days * 1440` minutes) ahead, or nil if it does not change in that window (`24/7`, always
    /// closed, or a change further away).
    public func nextChange(after time: LocalTime, days: Int = 8) -> LocalTime? {
        guard let startDay = time.dayNumber, (0..<1440).contains(time.minute), days > 0 else {
            return nil
        }
        // Bounded so that the day arithmetic below cannot overflow whatever the caller passes.
        let days = min(days, 3660)
        let state = openMask(dayNumber: startDay).contains(time.minute)
        let limit = days * 1440 + time.minute  // in minutes from startDay's midnight, inclusive
        var day = 0
        while day * 1440 <= limit {
            let mask = day == 0 ? openMask(dayNumber: startDay) : openMask(dayNumber: startDay + day)
            let from = day == 0 ? time.minute + 1 : 0
            if let minute = mask.firstMinute(from: from, differingFrom: state) {
                let total = day * 1440 + minute
                guard total <= limit else { return nil }
                return LocalTime(dayNumber: startDay + day, minute: minute)
            }
            day += 1
        }
        return nil
    }

    /// The minutes of `dayNumber` that are open, following the reference evaluation: rules in
    /// order, each contributing the part of its spans on this day (if it matches this day) and
    /// the part after midnight of its spans on the day before (if it matches that day).
    func openMask(dayNumber: Int) -> DayMask {
        let today = LocalTime.civil(fromDays: dayNumber)
        let yesterday = LocalTime.civil(fromDays: dayNumber - 1)
        let weekday = LocalTime.weekday(ofDays: dayNumber)
        let weekdayBefore = weekday == 1 ? 7 : weekday - 1
        var open = DayMask.zero
        for rule in rules {
            let matchesToday = rule.matches(month: today.month, day: today.day, weekday: weekday)
            var ranges = matchesToday ? rule.today : DayMask.zero
            if rule.spill != .zero,
                rule.matches(month: yesterday.month, day: yesterday.day, weekday: weekdayBefore)
            {
                ranges.bits |= rule.spill.bits
            }
            switch (rule.separator, rule.isOpen) {
            case (.normal, true):
                // A rule that does not match today only fills a day nothing opened so far: this is
                // how its carried-over night hours survive, unless an earlier rule owns the day.
                if matchesToday || open == .zero { open = ranges }
            case (.normal, false), (.additional, _):
                // `off` never replaces a whole day: it only closes the hours it names.
                open.bits = rule.isOpen ? open.bits | ranges.bits : open.bits & ~ranges.bits
            }
        }
        return open
    }
}

/// Why an `opening_hours` value was refused: what was expected and where.
public struct OpeningHoursError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was expected, quoting the offending token.
    public let message: String
    /// The 1-based column (in characters) of the offending token; one past the end for a value
    /// that ends too early.
    public let column: Int

    public init(message: String, column: Int) {
        self.message = message
        self.column = column
    }

    public var description: String { "opening_hours, column \(column): \(message)" }
}

/// A local wall-clock moment: a civil (proleptic Gregorian) date and minutes since local midnight.
/// The caller converts from an instant with the place's time zone (Europe/Prague).
public struct LocalTime: Sendable, Equatable, Comparable, CustomStringConvertible {
    public var year: Int
    /// 1-12.
    public var month: Int
    /// 1-31.
    public var day: Int
    /// 0..<1440.
    public var minute: Int

    public init(year: Int, month: Int, day: Int, minute: Int) {
        self.year = year
        self.month = month
        self.day = day
        self.minute = minute
    }

    /// The wall-clock time of `date` in `zone` (seconds are dropped).
    public init(_ date: Date, in zone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        self.init(
            year: c.year ?? 1970, month: c.month ?? 1, day: c.day ?? 1,
            minute: (c.hour ?? 0) * 60 + (c.minute ?? 0))
    }

    /// The instant of this wall-clock time in `zone`; nil if it does not exist there (a DST gap)
    /// or the fields are out of range. An ambiguous time (the repeated hour when clocks go back)
    /// gives whichever instant Foundation picks.
    public func date(in zone: TimeZone) -> Date? {
        guard dayNumber != nil, (0..<1440).contains(minute) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let components = DateComponents(
            year: year, month: month, day: day, hour: minute / 60, minute: minute % 60)
        // Foundation moves a time in a DST gap forwards instead of failing: check the round trip.
        guard let date = calendar.date(from: components), LocalTime(date, in: zone) == self else {
            return nil
        }
        return date
    }

    /// 1 = Monday … 7 = Sunday; 0 for out-of-range fields.
    public var weekday: Int {
        guard let days = dayNumber else { return 0 }
        return LocalTime.weekday(ofDays: days)
    }

    /// This moment moved by `minutes` (negative for earlier); nil for out-of-range fields.
    public func adding(minutes: Int) -> LocalTime? {
        guard let days = dayNumber, (0..<1440).contains(minute),
            abs(minutes) <= 1_000_000 * 1440
        else { return nil }
        let total = days * 1440 + minute + minutes
        let dayOffset = total >= 0 ? total / 1440 : -((-total + 1439) / 1440)
        return LocalTime(dayNumber: dayOffset, minute: total - dayOffset * 1440)
    }

    public static func < (a: LocalTime, b: LocalTime) -> Bool {
        (a.year, a.month, a.day, a.minute) < (b.year, b.month, b.day, b.minute)
    }

    public var description: String {
        let pad = { (n: Int) in n < 10 && n >= 0 ? "0\(n)" : "\(n)" }
        return "\(year)-\(pad(month))-\(pad(day)) \(pad(minute / 60)):\(pad(minute % 60))"
    }

    /// Days since 1970-01-01, or nil if the date is not a valid civil date (years are limited to
    /// ±1,000,000 so that no arithmetic on them can overflow).
    var dayNumber: Int? {
        guard (-1_000_000...1_000_000).contains(year), (1...12).contains(month),
            day >= 1, day <= LocalTime.daysIn(month: month, year: year)
        else { return nil }
        // Howard Hinnant's days_from_civil.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    init(dayNumber: Int, minute: Int) {
        let c = LocalTime.civil(fromDays: dayNumber)
        self.init(year: c.year, month: c.month, day: c.day, minute: minute)
    }

    /// Howard Hinnant's civil_from_days.
    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    /// 1970-01-01 was a Thursday (4).
    static func weekday(ofDays days: Int) -> Int {
        let r = (days + 3) % 7
        return (r < 0 ? r + 7 : r) + 1
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}

// MARK: - Evaluation data

/// The open minutes of one day, one bit per minute: fixed-size, so evaluating a day allocates
/// nothing.
struct DayMask: Sendable, Equatable {
    var bits = SIMD32<UInt64>.zero  // 2,048 bits, of which the first 1,440 are used

    static let zero = DayMask()

    /// Minutes `from..<to`, clamped to the day.
    init(from: Int = 0, to: Int = 0) {
        var m = max(0, from)
        let end = min(1440, to)
        while m < end {
            let word = m >> 6
            let bit = m & 63
            let count = min(64 - bit, end - m)
            let ones: UInt64 = count == 64 ? ~0 : ((1 << UInt64(count)) - 1)
            bits[word] |= ones << UInt64(bit)
            m += count
        }
    }

    func contains(_ minute: Int) -> Bool {
        guard (0..<1440).contains(minute) else { return false }
        return (bits[minute >> 6] >> UInt64(minute & 63)) & 1 == 1
    }

    /// The first minute at or after `from` whose state is not `state`, or nil.
    func firstMinute(from: Int, differingFrom state: Bool) -> Int? {
        var m = max(0, from)
        while m < 1440 {
            let word = m >> 6
            var w = state ? ~bits[word] : bits[word]
            w &= ~0 << UInt64(m & 63)
            if w != 0 {
                let found = word * 64 + w.trailingZeroBitCount
                return found < 1440 ? found : nil
            }
            m = (word + 1) * 64
        }
        return nil
    }
}

/// One rule of the value: its selectors, kind and precomputed minute masks.
struct Rule: Sendable, Equatable {
    enum Separator: Sendable, Equatable { case normal, additional }

    var separator: Separator
    var isOpen: Bool
    /// Bit `weekday - 1`; all seven when no weekday was given.
    var weekdays: UInt8
    /// Empty when no month or date was given.
    var dates: [DateRange]
    /// The spans' minutes on the day itself.
    var today: DayMask
    /// The spans' minutes after midnight, on the next day.
    var spill: DayMask

    func matches(month: Int, day: Int, weekday: Int) -> Bool {
        guard weekdays & (1 << UInt8(weekday - 1)) != 0 else { return false }
        if dates.isEmpty { return true }
        let key = month * 32 + day
        for range in dates where range.contains(key) { return true }
        return false
    }
}

/// An inclusive range of (month, day) keys `month * 32 + day`, wrapping over New Year when the
/// end comes first (`Nov-Feb`, `Dec 24-Jan 06`). A month alone covers days 1 to 31.
struct DateRange: Sendable, Equatable {
    var start: Int
    var end: Int

    func contains(_ key: Int) -> Bool {
        start <= end ? (start...end).contains(key) : key >= start || key <= end
    }
}

// MARK: - Parsing

private struct Token: Equatable {
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

private struct Parser {
    let chars: [Character]
    var tokens: [Token] = []
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

    private var peek: Token? { index < tokens.count ? tokens[index] : nil }

    private func peek(_ offset: Int) -> Token? {
        index + offset < tokens.count ? tokens[index + offset] : nil
    }

    private func error(_ message: String, at token: Token) -> OpeningHoursError {
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
            if Parser.isLetter(c) {
                var j = i
                while j < chars.count, Parser.isLetter(chars[j]) { j += 1 }
                let text = String(chars[i..<j])
                let lower = text.lowercased()
                let kind: Token.Kind
                if let w = Parser.weekdayNames.firstIndex(of: lower) {
                    kind = .weekday(w + 1)
                } else if let m = Parser.monthNames.firstIndex(of: lower) {
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
                tokens.append(Token(kind: kind, text: text, column: column))
                i = j
                continue
            }
            if Parser.isDigit(c) {
                if i + 4 <= chars.count, String(chars[i..<i + 4]) == "24/7" {
                    tokens.append(Token(kind: .always, text: "24/7", column: column))
                    i += 4
                    continue
                }
                var j = i
                while j < chars.count, Parser.isDigit(chars[j]) { j += 1 }
                let digits = String(chars[i..<j])
                if j < chars.count, chars[j] == ":", j + 1 < chars.count, Parser.isDigit(chars[j + 1]) {
                    var k = j + 1
                    while k < chars.count, Parser.isDigit(chars[k]) { k += 1 }
                    let text = String(chars[i..<k])
                    let minutes = String(chars[(j + 1)..<k])
                    guard digits.count <= 2, minutes.count == 2, let h = Int(digits),
                        let m = Int(minutes), m < 60
                    else {
                        throw OpeningHoursError(
                            message: "expected a time as hh:mm, found '\(text)'", column: column)
                    }
                    tokens.append(Token(kind: .time(h * 60 + m), text: text, column: column))
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
                tokens.append(Token(kind: .number(n), text: digits, column: column))
                i = j
                continue
            }
            if c == "|" {
                throw OpeningHoursError(
                    message: "fallback rules ('||') are not supported; use ';'", column: column)
            }
            switch c {
            case "-", ",", ";", "+", ":", "[", "]", "/", "(", ")":
                tokens.append(Token(kind: .punct(String(c)), text: String(c), column: column))
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
        spaceAllowed: Bool = false, _ isItem: (Token.Kind) -> Bool
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
        let isMonth: (Token.Kind) -> Bool = { if case .month = $0 { true } else { false } }
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

    private func checkDay(_ day: Int, month: Int, token: Token) throws(OpeningHoursError) {
        let length = Parser.monthLengths[month - 1]
        guard (1...length).contains(day) else {
            throw error("expected a day of the month from 1 to \(length)", at: token)
        }
    }

    private mutating func parseTimes() throws(OpeningHoursError) -> (DayMask, DayMask) {
        var today = DayMask.zero
        var spill = DayMask.zero
        let isTime: (Token.Kind) -> Bool = { if case .time = $0 { true } else { false } }
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
