@testable import PostGIS
import TestSupport
import Testing

/// Hex text, as PostgreSQL's `encode(…, 'hex')` sends every geometry of a layer kept in the
/// database, and back.
struct HexTests {
    @Test func decodesWhatItEncodesAndRefusesWhatIsNotHex() {
        var generator = SplitMix(state: 7)
        for length in [0, 1, 2, 21, 1000] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let text = Hex.encode(bytes)
            #expect(text.count == 2 * length)
            #expect(Hex.decode(text) == bytes)
            #expect(Hex.decode(text.uppercased()) == bytes)
        }
        #expect(Hex.encode([0x01, 0xAB, 0xFF]) == "01abff")
        #expect(Hex.decode("0") == nil)           // an odd number of digits
        #expect(Hex.decode("0g") == nil)          // not a digit
        #expect(Hex.decode("00 1") == nil)
        #expect(Hex.decode("é1") == nil)          // two UTF-8 bytes, neither a digit
        #expect(Hex.decode("") == [])
    }
}
