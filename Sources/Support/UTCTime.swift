// UTC timestamps as the observations give them ("2019-04-14 21:00:00.0 UTC") or as ISO 8601
// ("2019-04-14T21:00:00Z"), stored in GeoPackage's DATETIME form ("2019-04-14T21:00:00Z").
// Parsed by hand: it is a fixed layout, and Foundation's formatters are slow and locale-bound.
// Here in the base module because the store (observations), the engine (time series), the
// query language and the server (air quality, schedules) all read or write these times.

public struct UTCTime: Hashable, Comparable, Sendable {
    /// Seconds since 1970-01-01T00:00:00Z.
    public var seconds: Int64

    public init(seconds: Int64) {
        self.seconds = seconds
    }

    public static func < (a: UTCTime, b: UTCTime) -> Bool { a.seconds < b.seconds }

    /// Before and after every time (an open end of an interval).
    public static let distantPast = UTCTime(seconds: .min)
    public static let distantFuture = UTCTime(seconds: .max)

    /// "YYYY-MM-DD[ T]HH:MM[:SS[.fff]][ UTC|Z|+00:00]". Other offsets are refused: the data is UTC.
    public static func parse(_ text: String) -> UTCTime? {
        var s = Substring(text.trimmingSpaces)
        for suffix in [" UTC", "UTC", "Z", "+00:00", "+0000"] where s.hasSuffix(suffix) {
            s = s.dropLast(suffix.count)
            break
        }
        let bytes = Array(s.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for i in range {
                guard bytes[i] >= 48 && bytes[i] <= 57 else { return nil }
                value = value * 10 + Int(bytes[i] - 48)
            }
            return value
        }
        guard bytes.count >= 16, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              bytes[10] == UInt8(ascii: " ") || bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"),
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16) else { return nil }
        var second = 0
        if bytes.count > 16 {
            guard bytes[16] == UInt8(ascii: ":"), let s = number(17..<19) else { return nil }
            second = s
            if bytes.count > 19 {
                // Fractional seconds: dropped (the data is on whole hours), but must be digits.
                // Only checked, never summed: any number of digits may follow the point, and
                // summing 19 of them overflowed (found by the csv fuzz target).
                guard bytes[19] == UInt8(ascii: "."), bytes.count > 20,
                      bytes[20...].allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
            }
        }
        guard (1...12).contains(month), (1...daysInMonth(year, month)).contains(day),
              hour < 24, minute < 60, second < 60 else { return nil }
        let days = daysFromCivil(year, month, day)
        return UTCTime(seconds: Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second))
    }

    /// "2019-04-14T21:00:00Z".
    public var iso: String {
        let days = Int(seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400)
        let secondOfDay = Int(seconds - Int64(days) * 86_400)
        let (y, m, d) = UTCTime.civilFromDays(days)
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(y)-\(two(m))-\(two(d))T\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))Z"
    }

    package static func daysInMonth(_ year: Int, _ month: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    package static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    package static func civilFromDays(_ days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp + (mp < 10 ? 3 : -9)
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}

extension String {
    /// Without leading and trailing spaces and tabs (CSV cells, times). Package-wide: the
    /// store's CSV reader uses it too.
    package var trimmingSpaces: String {
        var s = Substring(self)
        while let c = s.first, c == " " || c == "\t" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" { s.removeLast() }
        return String(s)
    }
}
