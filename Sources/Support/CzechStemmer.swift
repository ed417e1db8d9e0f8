// Czech word forms for search: "Bizoni" should find "Bizon", "Vlci" "Vlk", "Sovy" "Sova pálená".
//
// The stemmer is the light stemmer of Dolamic and Savoy ("Indexing and stemming approaches for
// the Czech language", Information Processing & Management 45(6), 2009), which removes the case
// and number endings of nouns and adjectives, then possessive suffixes, then undoes the
// palatalisation those endings cause. Written here from the published rules, with three
// changes for matching names typed on any keyboard, each because a zoo name needed it:
//
// 1. Diacritics-insensitive: a word has two stems, the published rules' stem of the word with
//    its diacritics, folded after (lower case, no diacritics), and the stem of the folded word
//    by the same rules with folded endings ('ého' → 'eho', 'ům' → 'um'). Two words match when a
//    stem of one is a stem of the other, so 'vlci' meets 'vlčí', and 'hřivnatý' keeps its
//    stem 'hrivnat' although folded it ends like 'zvířaty'. The rule turning an inner 'ů' into
//    'o' applies only where the diacritic is there to see.
// 2. The fleeting 'e' is also dropped after the palatal rule: 'člunozobec' → 'clunozobek' →
//    'clunozobk', the stem of its plural 'člunozobci'. (The published rules stop after c → k.)
// 3. A final vowel is removed from three-letter words too, so the fleeting 'e' of short nouns
//    meets its plural: 'lev' → 'lv' and 'lvi' → 'lv', 'pes' → 'ps' and 'psi' → 'ps'.
//
// The rules, in order, on a lower-case word of n letters:
// - case endings, the longest that applies: 'atech' (n > 7); 'ětem', 'etem', 'atům' (n > 6);
//   'ech', 'ich', 'ích', 'ého', 'ěmi', 'emi', 'ému', 'ěte', 'ete', 'ěti', 'eti', 'ího', 'iho',
//   'ími', 'ímu', 'imu', 'ách', 'ata', 'aty', 'ých', 'ama', 'ami', 'ové', 'ovi', 'ými' (n > 5);
//   'em', 'es', 'ém', 'ím', 'ům', 'at', 'ám', 'os', 'us', 'ým', 'mi', 'ou' (n > 4); else one
//   final vowel a, e, i, o, u, y, á, é, í, ý, ě, ů (n > 2);
// - possessive suffixes 'ov', 'in', 'ův' when the stem is still longer than 5 letters;
// - palatalisation undone: final 'čt' → 'ck', 'št' → 'sk', 'c'/'č' → 'k', 'z'/'ž' → 'h'; then
//   an 'e' before the final letter is dropped ('jelen' → 'jeln', 'orel' → 'orl'), or else an
//   'ů' there becomes 'o' ('dům' → 'dom').
//
// A search text matches a name when, for one of its comma-separated alternatives, every word
// meets a word of the name: a stem in common, or the one word is the other's stem (the
// indeclinable 'lori' of 'loriové').

import Foundation

public enum CzechStemmer {
    typealias Word = [Unicode.Scalar]

    /// Lower case without diacritics: 'Břevnov' → 'brevnov'.
    public static func fold(_ text: String) -> String {
        string(text.unicodeScalars.flatMap { fold($0).folded })
    }

    /// A scalar's lower case, and its lower case without diacritics. Latin letters (where every
    /// Czech one lies) come from a table built once; others are worked out as they come.
    static func fold(_ scalar: Unicode.Scalar) -> (lower: Word, folded: Word) {
        let v = scalar.value
        if v < 0x80 {
            let lower = v >= 0x41 && v <= 0x5A ? Unicode.Scalar(UInt8(v + 0x20)) : scalar
            return ([lower], [lower])
        }
        if v >= latinRange.lowerBound && v <= latinRange.upperBound { return latin[Int(v - latinRange.lowerBound)] }
        return slowFold(scalar)
    }

    static let latinRange: ClosedRange<UInt32> = 0xC0...0x24F
    static let latin: [(lower: Word, folded: Word)] = latinRange.map { v in
        Unicode.Scalar(v).map(slowFold) ?? ([], [])
    }

    static func slowFold(_ scalar: Unicode.Scalar) -> (lower: Word, folded: Word) {
        let lower = String(String.UnicodeScalarView([scalar])).lowercased()
        let folded = lower.decomposedStringWithCanonicalMapping.unicodeScalars.filter { $0.properties.generalCategory != .nonspacingMark }
        return (Array(lower.unicodeScalars), Array(folded))
    }

    static func string(_ word: Word) -> String {
        var text = String.UnicodeScalarView()
        text.append(contentsOf: word)
        return String(text)
    }

    /// The words of a text, each in lower case with its diacritics and folded: runs of letters,
    /// digits and combining marks.
    static func words(_ text: String) -> [(lower: Word, folded: Word)] {
        var words: [(lower: Word, folded: Word)] = []
        var lower: Word = [], folded: Word = []
        for scalar in text.unicodeScalars {
            let p = scalar.properties
            if p.isAlphabetic || p.numericType != nil || p.generalCategory == .nonspacingMark {
                let f = fold(scalar)
                lower += f.lower
                folded += f.folded
            } else if !lower.isEmpty {
                words.append((lower, folded))
                lower = []
                folded = []
            }
        }
        if !lower.isEmpty { words.append((lower, folded)) }
        return words
    }

    /// The words of a text, folded (lower case, no diacritics), with every stem each may have
    /// (`stems`): what search indexes and matches.
    public static func foldedWords(_ text: String) -> [(word: String, stems: [String])] {
        words(text).map { (string($0.folded), stems($0).map(string)) }
    }

    /// The words of a text in lower case, with their diacritics and without: for an index that
    /// stems each distinct word once (`stems(ofLowercased:)`).
    public static func wordForms(_ text: String) -> [(lower: String, folded: String)] {
        words(text).map { (string($0.lower), string($0.folded)) }
    }

    /// Every stem of one word in lower case (with its diacritics), folded, as `foldedWords` gives.
    public static func stems(ofLowercased word: String) -> [String] {
        let lower = Array(word.unicodeScalars)
        return stems((lower, lower.flatMap { fold($0).folded })).map(string)
    }

    /// The published endings, with their diacritics; folded for the folded pass.
    static let endings5 = ["atech"]
    static let endings4 = ["ětem", "etem", "atům"]
    static let endings3 = ["ech", "ich", "ích", "ého", "ěmi", "emi", "ému", "ěte", "ete", "ěti", "eti", "ího", "iho", "ími", "ímu",
                           "imu", "ách", "ata", "aty", "ých", "ama", "ami", "ové", "ovi", "ými"]
    static let endings2 = ["em", "es", "ém", "ím", "ům", "at", "ám", "os", "us", "ým", "mi", "ou"]
    static let possessives = ["ov", "in", "ův"]
    static let vowels: Set<Unicode.Scalar> = ["a", "e", "i", "o", "u", "y", "á", "é", "í", "ý", "ě", "ů"]
    /// Ending lists as scalars, from the longest: (the word must be longer than, the endings).
    typealias Endings = [(Int, [Word])]
    static let published: (endings: Endings, possessives: [Word]) = lists(fold: false)
    static let folded: (endings: Endings, possessives: [Word]) = lists(fold: true)

    static func lists(fold folding: Bool) -> (endings: Endings, possessives: [Word]) {
        func prepared(_ list: [String]) -> [Word] { Array(Set(list.map { folding ? fold($0) : $0 })).map { Array($0.unicodeScalars) } }
        return ([(7, prepared(endings5)), (6, prepared(endings4)), (5, prepared(endings3)), (4, prepared(endings2))], prepared(possessives))
    }

    /// The stem of one word, folded: the rules run on the folded word (so a word typed without
    /// diacritics stems like the word with them).
    public static func stem(_ word: String) -> String {
        string(stem(Array(fold(word).unicodeScalars), endings: folded.endings, possessives: folded.possessives))
    }

    /// Every stem a word may have: the folded word's, and the stem of the word with its
    /// diacritics, folded after (the published rules tell 'hřivnatý' from the ending 'aty' of
    /// 'zvířaty'; folded first, they cannot). Two words match when their stems meet.
    public static func stems(_ word: String) -> Set<String> {
        Set(words(word).flatMap { stems($0).map(string) })
    }

    static func stems(_ word: (lower: Word, folded: Word)) -> [Word] {
        let a = stem(word.folded, endings: folded.endings, possessives: folded.possessives)
        let b = stem(word.lower, endings: published.endings, possessives: published.possessives).flatMap { fold($0).folded }
        return a == b ? [a] : [a, b]
    }

    static let palatals: (ct: Word, st: Word, cht: Word, sht: Word) = (Array("ct".unicodeScalars), Array("st".unicodeScalars),
                                                                      Array("čt".unicodeScalars), Array("št".unicodeScalars))

    /// The rules on one word: `endings` are (the word must be longer than, the endings) from
    /// the longest.
    static func stem(_ word: Word, endings: Endings, possessives: [Word]) -> Word {
        var w = word
        // Plain loops: this runs for every word of every row a `~ CZECH` tests.
        func ends(_ suffix: Word) -> Bool {
            let offset = w.count - suffix.count
            guard offset >= 0 else { return false }
            for k in 0..<suffix.count where w[offset + k] != suffix[k] { return false }
            return true
        }
        let n = w.count
        var removed = false
        search: for (longerThan, list) in endings where n > longerThan {
            for ending in list where ends(ending) {
                w.removeLast(ending.count)
                removed = true
                break search
            }
        }
        if !removed, n > 2, let last = w.last, vowels.contains(last) { w.removeLast() }
        if w.count > 5 {
            for suffix in possessives where ends(suffix) {
                w.removeLast(suffix.count)
                break
            }
        }
        if ends(palatals.ct) || ends(palatals.cht) {
            w[w.count - 2] = "c"
            w[w.count - 1] = "k"
        } else if ends(palatals.st) || ends(palatals.sht) {
            w[w.count - 2] = "s"
            w[w.count - 1] = "k"
        } else if w.last == "c" || w.last == "č" {
            w[w.count - 1] = "k"
        } else if w.last == "z" || w.last == "ž" {
            w[w.count - 1] = "h"
        }
        if w.count > 2 && w[w.count - 2] == "e" {
            w.remove(at: w.count - 2)
        } else if w.count > 2 && w[w.count - 2] == "ů" {
            w[w.count - 2] = "o"  // dům → dom, as domy (only where the diacritic is there to see)
        }
        return w
    }

    /// A search text prepared once for `matches`: its alternatives (split at commas), each a list
    /// of words with their stems.
    public struct Pattern: Sendable {
        let alternatives: [[(word: Word, stems: [Word])]]

        public init(_ text: String) {
            alternatives = text.split(separator: ",").map { part in
                CzechStemmer.words(String(part)).map { ($0.folded, CzechStemmer.stems($0)) }
            }.filter { !$0.isEmpty }
        }

        /// Whether the text matches: for one of the alternatives, every word meets a word of the
        /// text with a stem in common (or one word is the other's stem, for the indeclinable
        /// 'lori' of 'loriové'). An empty pattern matches nothing.
        public func matches(_ text: String) -> Bool {
            guard !alternatives.isEmpty else { return false }
            let textWords = CzechStemmer.words(text).map { ($0.folded, CzechStemmer.stems($0)) }
            return alternatives.contains { words in
                words.allSatisfy { p in
                    textWords.contains { t in p.stems.contains { t.1.contains($0) } || p.stems.contains(t.0) || t.1.contains(p.word) }
                }
            }
        }
    }
}
