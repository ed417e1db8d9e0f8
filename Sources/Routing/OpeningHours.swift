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
import Geometry
import Support

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
        var parser = OpeningHoursParser(text)
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
        return UTCTime.daysFromCivil(year, month, day)
    }

    init(dayNumber: Int, minute: Int) {
        let c = LocalTime.civil(fromDays: dayNumber)
        self.init(year: c.year, month: c.month, day: c.day, minute: minute)
    }

    /// The civil date of a day number (UTCTime's: Howard Hinnant's algorithm).
    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let (year, month, day) = UTCTime.civilFromDays(days)
        return (year, month, day)
    }

    /// 1970-01-01 was a Thursday (4).
    static func weekday(ofDays days: Int) -> Int {
        let r = (days + 3) % 7
        return (r < 0 ? r + 7 : r) + 1
    }

    static func daysIn(month: Int, year: Int) -> Int { UTCTime.daysInMonth(year, month) }
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
