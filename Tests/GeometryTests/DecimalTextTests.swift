import Geometry
import Support
import TestSupport
import Testing

/// The fast decimal reader against the C library's strtod (through `Double(_:)`), bit for bit.
@Suite struct DecimalTextTests {
    func exact(_ text: String) -> Double? {
        var text = text
        return text.withUTF8 { DecimalText.exactValue($0) }
    }

    /// 200,000 seeded random decimals of 1–17 digits with 0–22 decimals, either sign: every one
    /// the fast path takes equals strtod's Double exactly; the rest (too many digits) it leaves
    /// to strtod.
    @Test func equalsStrtodBitForBit() throws {
        var generator = SplitMix(state: 20261124)
        var taken = 0, left = 0
        for _ in 0..<200_000 {
            let digits = Int(generator.next() % 17) + 1
            var text = generator.next() % 2 == 0 ? "-" : ""
            var body = String((0..<digits).map { _ in Character(String(generator.next() % 10)) })
            let decimals = Int(generator.next() % 23)
            if decimals > 0 {
                body = String(repeating: "0", count: max(0, decimals - body.count + 1)) + body
                body.insert(".", at: body.index(body.endIndex, offsetBy: -decimals))
            }
            text += body
            let reference = try #require(Double(text))
            if let fast = exact(text) {
                #expect(fast.bitPattern == reference.bitPattern, "\(text): \(fast) against \(reference)")
                taken += 1
            } else {
                left += 1
            }
        }
        #expect(taken > 150_000 && left > 0)
    }

    @Test func formsAndLimits() {
        #expect(exact("14.42076") == 14.42076 && exact("-50.08804") == -50.08804 && exact("+3") == 3)
        #expect(exact(".5") == 0.5 && exact("5.") == 5 && exact("-0")?.sign == .minus)
        // 2^53 is the largest integer part taken; past it, and exponents, go to strtod.
        #expect(exact("9007199254740992") == 9_007_199_254_740_992 && exact("9007199254740993") == nil)
        #expect(exact("1e5") == nil && exact("1.2.3") == nil && exact("-") == nil && exact("") == nil)
        #expect(exact("0.0000000000000000000001") == 1e-22 && exact("0.00000000000000000000001") == nil)
    }
}
