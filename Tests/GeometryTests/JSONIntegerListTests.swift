import Geometry
import Support
import TestSupport
import Testing

@Suite(.validatesStores) struct JSONIntegerListTests {
    @Test func readsIntegerLists() {
        #expect(JSON.integerList("[1, 2, 3]") == [1, 2, 3])
        #expect(JSON.integerList("[105553969,588485178]") == [105_553_969, 588_485_178])
        #expect(JSON.integerList("[]") == [])
        #expect(JSON.integerList(" \n[ ]\t") == [])
        #expect(JSON.integerList("\u{FEFF}[7]") == [7])
        #expect(JSON.integerList("[-0, -12, 0]") == [0, -12, 0])
        #expect(JSON.integerList("[9223372036854775807, -9223372036854775808]") == [.max, .min])
    }

    @Test func refusesEverythingElse() {
        for text in ["", "7", "[", "]", "[1,]", "[,1]", "[1 2]", "[1,,2]", "[01]", "[-01]", "[-]", "[+1]",
                     "[1.0]", "[1e3]", "[1E3]", "[1.]", "[\"1\"]", "[null]", "[true]", "[[1]]", "{\"a\": 1}",
                     "[1] x", "[1]]", "[9223372036854775808]", "[-9223372036854775809]",
                     "[99999999999999999999]", "[1\u{00A0}]"] {
            #expect(JSON.integerList(text) == nil, "«\(text)»")
        }
    }

    /// Random texts from JSON's alphabet: `integerList` answers exactly when `JSON.parse` reads
    /// an array of integers, and with the same integers.
    @Test func agreesWithParse() {
        let alphabet = Array("[],-0123456789 .eE\n\"x")
        var random = SplitMix(state: 13)
        var lists = 0
        for _ in 0..<50_000 {
            var text = "["
            for _ in 0..<Int.random(in: 0..<12, using: &random) {
                text.append(alphabet[Int.random(in: 0..<alphabet.count, using: &random)])
            }
            if Bool.random(using: &random) { text.append("]") }
            var expected: [Int64]?
            if case .array(let items)? = try? JSON.parse(text) {
                expected = []
                for item in items {
                    guard case .integer(let i) = item else { expected = nil; break }
                    expected?.append(i)
                }
            }
            #expect(JSON.integerList(text) == expected, "«\(text)»")
            if expected != nil { lists += 1 }
        }
        #expect(lists > 1_000)  // the sample does reach valid lists
    }
}
