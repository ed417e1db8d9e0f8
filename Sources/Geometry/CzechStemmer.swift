// Czech word forms for search: "Bizoni" should find "Bizon", "Vlci" "Vlk", "Sovy" "Sova pálená".
//
// The stemmer is the light stemmer of Dolamic and Savoy ("Indexing and stemming approaches for
// the Czech language", Information Processing & Management 45(6), 2009), which removes the case
// and number endings of nouns and adjectives, then possessive suffixes, then undoes the
// palatalisation those endings cause. Written here from the published rules, with three
// changes for matching names typed on any keyboard, each because a zoo name needed it:
//
// 1. It works on folded text (lower case, diacritics removed), so 'vlci' and 'vlčí' stem alike;
//    the endings are the published ones folded ('ého' → 'eho', 'ům' → 'um'). The rule that
//    turns an inner 'ů' into 'o' needs the diacritic and is left out.
// 2. The fleeting 'e' is also dropped after the palatal rule: 'člunozobec' → 'clunozobek' →
//    'clunozobk', the stem of its plural 'člunozobci'. (The published rules stop after c → k.)
// 3. A final vowel is removed from three-letter words too, so the fleeting 'e' of short nouns
//    meets its plural: 'lev' → 'lv' and 'lvi' → 'lv', 'pes' → 'ps' and 'psi' → 'ps'.
//
// The rules, in order, on a folded word of n letters:
// - case endings, the longest that applies: 'atech' (n > 7); 'etem', 'atum' (n > 6); 'ech',
//   'ich', 'eho', 'emi', 'emu', 'ete', 'eti', 'iho', 'imi', 'imu', 'ach', 'ata', 'aty', 'ych',
//   'ama', 'ami', 'ove', 'ovi', 'ymi' (n > 5); 'em', 'es', 'im', 'um', 'at', 'am', 'os', 'us',
//   'ym', 'mi', 'ou' (n > 4); else one final vowel a, e, i, o, u, y (n > 2);
// - possessive suffixes 'ov', 'in', 'uv' when the stem is still longer than 5 letters;
// - palatalisation undone: final 'ct' → 'ck', 'st' → 'sk', 'c' → 'k', 'z' → 'h'; then an 'e'
//   before the final letter is dropped ('jelen' → 'jeln', 'orel' → 'orl').

import Foundation

public enum CzechStemmer {
    /// Lower case without diacritics: 'Břevnov' → 'brevnov'.
    public static func fold(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.lowercased().decomposedStringWithCanonicalMapping.unicodeScalars
        where scalar.properties.generalCategory != .nonspacingMark {
            scalars.append(scalar)
        }
        return String(scalars)
    }

    /// The folded words of a text: runs of letters and digits.
    public static func words(_ text: String) -> [String] {
        fold(text).split { !($0.isLetter || $0.isNumber) }.map(String.init)
    }

    static let endings3 = ["ech", "ich", "eho", "emi", "emu", "ete", "eti", "iho", "imi", "imu", "ach", "ata", "aty", "ych",
                           "ama", "ami", "ove", "ovi", "ymi"]
    static let endings2 = ["em", "es", "im", "um", "at", "am", "os", "us", "ym", "mi", "ou"]
    static let vowels: Set<Character> = ["a", "e", "i", "o", "u", "y"]

    /// The stem of one word (folded first).
    public static func stem(_ word: String) -> String {
        var w = Array(fold(word))
        func ends(_ suffix: String) -> Bool { w.count >= suffix.count && String(w.suffix(suffix.count)) == suffix }
        let n = w.count
        if n > 7 && ends("atech") {
            w.removeLast(5)
        } else if n > 6 && (ends("etem") || ends("atum")) {
            w.removeLast(4)
        } else if n > 5 && endings3.contains(where: ends) {
            w.removeLast(3)
        } else if n > 4 && endings2.contains(where: ends) {
            w.removeLast(2)
        } else if n > 2, let last = w.last, vowels.contains(last) {
            w.removeLast()
        }
        if w.count > 5 && (ends("ov") || ends("in") || ends("uv")) { w.removeLast(2) }
        if ends("ct") || ends("st") {
            w[w.count - 1] = "k"
        } else if w.last == "c" {
            w[w.count - 1] = "k"
        } else if w.last == "z" {
            w[w.count - 1] = "h"
        }
        if w.count > 2 && w[w.count - 2] == "e" { w.remove(at: w.count - 2) }
        return String(w)
    }

    /// A search text prepared once for `matches`: its alternatives (split at commas), each a list
    /// of words with their stems.
    public struct Pattern: Sendable {
        let alternatives: [[(word: String, stem: String)]]

        public init(_ text: String) {
            alternatives = text.split(separator: ",").map { part in words(String(part)).map { ($0, stem($0)) } }.filter { !$0.isEmpty }
        }

        /// Whether the text matches: for one of the alternatives, every word meets a word of the
        /// text with the same stem (or stems to that word itself, for the indeclinable 'lori' of
        /// 'loriové'). An empty pattern matches nothing.
        public func matches(_ text: String) -> Bool {
            let textWords = CzechStemmer.words(text).map { ($0, CzechStemmer.stem($0)) }
            return alternatives.contains { words in
                words.allSatisfy { p in textWords.contains { t in p.stem == t.1 || p.stem == t.0 || p.word == t.1 } }
            }
        }
    }
}
