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
    /// Lower case without diacritics: 'Břevnov' → 'brevnov'.
    public static func fold(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.lowercased().decomposedStringWithCanonicalMapping.unicodeScalars
        where scalar.properties.generalCategory != .nonspacingMark {
            scalars.append(scalar)
        }
        return String(scalars)
    }

    /// The words of a text, lower case with their diacritics: runs of letters and digits.
    static func rawWords(_ text: String) -> [String] {
        text.lowercased().precomposedStringWithCanonicalMapping.split { !($0.isLetter || $0.isNumber) }.map(String.init)
    }

    /// The published endings, with their diacritics; folded for the folded pass.
    static let endings5 = ["atech"]
    static let endings4 = ["ětem", "etem", "atům"]
    static let endings3 = ["ech", "ich", "ích", "ého", "ěmi", "emi", "ému", "ěte", "ete", "ěti", "eti", "ího", "iho", "ími", "ímu",
                           "imu", "ách", "ata", "aty", "ých", "ama", "ami", "ové", "ovi", "ými"]
    static let endings2 = ["em", "es", "ém", "ím", "ům", "at", "ám", "os", "us", "ým", "mi", "ou"]
    static let possessives = ["ov", "in", "ův"]
    static let vowels: Set<Unicode.Scalar> = ["a", "e", "i", "o", "u", "y", "á", "é", "í", "ý", "ě", "ů"]
    /// Ending lists as characters, from the longest: (the word must be longer than, the endings).
    typealias Endings = [(Int, [[Unicode.Scalar]])]
    static let published: (endings: Endings, possessives: [[Unicode.Scalar]]) = lists(fold: false)
    static let folded: (endings: Endings, possessives: [[Unicode.Scalar]]) = lists(fold: true)

    static func lists(fold folding: Bool) -> (endings: Endings, possessives: [[Unicode.Scalar]]) {
        func prepared(_ list: [String]) -> [[Unicode.Scalar]] { Array(Set(list.map { folding ? fold($0) : $0 })).map { Array($0.unicodeScalars) } }
        return ([(7, prepared(endings5)), (6, prepared(endings4)), (5, prepared(endings3)), (4, prepared(endings2))], prepared(possessives))
    }

    /// The stem of one word, folded: the rules run on the folded word (so a word typed without
    /// diacritics stems like the word with them).
    public static func stem(_ word: String) -> String {
        stem(Array(fold(word).unicodeScalars), endings: folded.endings, possessives: folded.possessives)
    }

    /// Every stem a word may have: the folded word's, and the stem of the word with its
    /// diacritics, folded after (the published rules tell 'hřivnatý' from the ending 'aty' of
    /// 'zvířaty'; folded first, they cannot). Two words match when their stems meet.
    public static func stems(_ word: String) -> Set<String> {
        let lower = Array(word.lowercased().precomposedStringWithCanonicalMapping.unicodeScalars)
        return [stem(word), fold(stem(lower, endings: published.endings, possessives: published.possessives))]
    }

    /// The rules on one word: `endings` are (the word must be longer than, the endings) from
    /// the longest.
    static func stem(_ word: [Unicode.Scalar], endings: Endings, possessives: [[Unicode.Scalar]]) -> String {
        var w = word
        func ends(_ suffix: [Unicode.Scalar]) -> Bool { w.count >= suffix.count && w.suffix(suffix.count).elementsEqual(suffix) }
        func ends(_ suffix: String) -> Bool { ends(Array(suffix.unicodeScalars)) }
        let n = w.count
        if let (_, list) = endings.first(where: { n > $0.0 && $0.1.contains(where: ends) }), let ending = list.first(where: ends) {
            w.removeLast(ending.count)
        } else if n > 2, let last = w.last, vowels.contains(last) {
            w.removeLast()
        }
        if w.count > 5 && possessives.contains(where: ends) { w.removeLast(2) }
        if ends("čt") || ends("št") || ends("ct") || ends("st") {
            w[w.count - 2] = w[w.count - 2] == "č" || w[w.count - 2] == "c" ? "c" : "s"
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
        var text = String.UnicodeScalarView()
        text.append(contentsOf: w)
        return String(text)
    }

    /// A search text prepared once for `matches`: its alternatives (split at commas), each a list
    /// of words with their stems.
    public struct Pattern: Sendable {
        let alternatives: [[(word: String, stems: Set<String>)]]

        public init(_ text: String) {
            alternatives = text.split(separator: ",").map { part in
                CzechStemmer.rawWords(String(part)).map { (fold($0), stems($0)) }
            }.filter { !$0.isEmpty }
        }

        /// Whether the text matches: for one of the alternatives, every word meets a word of the
        /// text with the same stem (or stems to that word itself, for the indeclinable 'lori' of
        /// 'loriové'). An empty pattern matches nothing.
        public func matches(_ text: String) -> Bool {
            let textWords = CzechStemmer.rawWords(text).map { (fold($0), stems($0)) }
            return alternatives.contains { words in
                words.allSatisfy { p in
                    textWords.contains { t in !p.stems.isDisjoint(with: t.1) || p.stems.contains(t.0) || t.1.contains(p.word) }
                }
            }
        }
    }
}
