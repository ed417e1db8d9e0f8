// Search's index of one layer version's names (Search.swift): the sorted vocabulary of their
// folded words as a trie, each word's features, and the words of each Czech stem; and the
// lookups a search makes in it: a typed word walks the trie with one row of the edit-distance
// table per depth (Damerau's transpositions included), so it visits only the branches still
// within its allowance, and a node's subtree is the range of words that begin with it.

import Geometry
import Support

/// One layer's names, indexed: the sorted vocabulary of their folded words as a trie, each word's
/// features (postings), and the words of each Czech stem.
final class NameIndex: Sendable {
    static let maxWordBytes = 32
    static let maxTypedWords = 8

    struct Posting {
        var index: Int32
        var column: Int16
        /// The first word of its name.
        var first: Bool
    }

    /// What one typed word reaches in the vocabulary.
    struct Lookup {
        var typed: String
        var bytes: [UInt8]
        /// The word being typed (the last): its beginnings cost less than an earlier word's.
        var last: Bool
        var whole: [Int32: Int]
        var stems: Set<Int32>
        var ranges: [(low: Int32, high: Int32, edits: Int)]
    }

    let columns: [String]
    /// Sorted, distinct, folded, UTF-8, at most `maxWordBytes` each.
    let vocabulary: [[UInt8]]
    /// Word w's features are `postings[postingStart[w]..<postingStart[w + 1]]`, by feature.
    let postingStart: [Int32]
    let postings: [Posting]
    /// Each stem's words.
    let stems: [String: [Int32]]
    /// Each feature's name length in characters, for shorter names first among equals.
    let nameLength: [UInt16]
    // The trie, breadth first: node n's children are `firstChild[n] ..< firstChild[n] + childCount[n]`,
    // entered by `byte`; its subtree's words are `vocabulary[low[n] ..< high[n]]`, and it ends a
    // word when `vocabulary[low[n]]` is as long as its depth.
    let byte: [UInt8]
    let firstChild: [Int32]
    let childCount: [Int32]
    let low: [Int32]
    let high: [Int32]

    init(_ layer: Layer) {
        columns = layer.nameColumns
        // Each distinct word once (stemming is the costly part), then its occurrences.
        var ids: [String: Int32] = [:]
        var forms: [(lower: String, folded: [UInt8])] = []
        var occurrences: [(word: Int32, posting: Posting)] = []
        var lengths = [UInt16](repeating: 0, count: layer.slots)
        for index in layer.indices {
            let row = layer.properties[index]
            for (c, column) in columns.enumerated() {
                guard let text = row[column]?.stringValue else { continue }
                if lengths[index] == 0 { lengths[index] = UInt16(clamping: text.unicodeScalars.count) }
                for (position, form) in CzechStemmer.wordForms(text).enumerated() {
                    let id: Int32
                    if let known = ids[form.lower] {
                        id = known
                    } else {
                        id = Int32(forms.count)
                        ids[form.lower] = id
                        forms.append((form.lower, Array(form.folded.utf8.prefix(NameIndex.maxWordBytes))))
                    }
                    occurrences.append((id, Posting(index: Int32(index), column: Int16(c), first: position == 0)))
                }
            }
        }
        nameLength = lengths
        // Words with and without diacritics fold to one: the vocabulary is the folded forms.
        let vocabulary = Array(Set(forms.map(\.folded))).sorted { $0.lexicographicallyPrecedes($1) }
        var position: [[UInt8]: Int32] = [:]
        for (w, word) in vocabulary.enumerated() { position[word] = Int32(w) }
        let word = forms.map { position[$0.folded] ?? 0 }
        var stems: [String: Set<Int32>] = [:]
        for (f, form) in forms.enumerated() {
            for stem in CzechStemmer.stems(ofLowercased: form.lower) { stems[stem, default: []].insert(word[f]) }
        }
        self.stems = stems.mapValues { $0.sorted() }
        // Postings grouped by word, each group in feature order (occurrences are), repeats merged.
        var start = [Int32](repeating: 0, count: vocabulary.count + 1)
        for occurrence in occurrences { start[Int(word[Int(occurrence.word)]) + 1] += 1 }
        for w in 0..<vocabulary.count { start[w + 1] += start[w] }
        var fill = start
        var postings = [Posting](repeating: Posting(index: 0, column: 0, first: false), count: occurrences.count)
        for occurrence in occurrences {
            let w = Int(word[Int(occurrence.word)])
            postings[Int(fill[w])] = occurrence.posting
            fill[w] += 1
        }
        self.vocabulary = vocabulary
        postingStart = start
        self.postings = postings
        // The trie, breadth first from the root (every word).
        var byte: [UInt8] = [0], firstChild: [Int32] = [0], childCount: [Int32] = [0], low: [Int32] = [0], high: [Int32] = [Int32(vocabulary.count)]
        var depth: [Int] = [0]
        var node = 0
        while node < byte.count {
            let d = depth[node]
            var i = Int(low[node])
            let end = Int(high[node])
            if i < end && vocabulary[i].count == d { i += 1 }
            firstChild[node] = Int32(byte.count)
            while i < end {
                let b = vocabulary[i][d]
                var j = i + 1
                while j < end && vocabulary[j][d] == b { j += 1 }
                byte.append(b); firstChild.append(0); childCount.append(0); low.append(Int32(i)); high.append(Int32(j)); depth.append(d + 1)
                i = j
            }
            childCount[node] = Int32(byte.count) - firstChild[node]
            node += 1
        }
        self.byte = byte
        self.firstChild = firstChild
        self.childCount = childCount
        self.low = low
        self.high = high
    }

    /// Typos allowed in a typed word of `length` bytes.
    static func allowance(_ length: Int) -> Int { length >= 8 ? 2 : length >= 4 ? 1 : 0 }

    /// What a meeting costs: typos count whole; another form of the word 0.2; a beginning 0.3
    /// for the word being typed, 0.6 for an earlier one (more likely whole).
    static func cost(_ kind: WordMatch.Kind, edits: Int, last: Bool) -> Float {
        switch kind {
        case .exact, .typo: Float(edits)
        case .stem: 0.2
        case .prefix: (last ? 0.3 : 0.6) + Float(edits)
        }
    }

    /// The vocabulary's words within reach of `typed`: whole words (exact or with typos), and
    /// the ranges of words that begin within reach of it.
    func lookUp(_ typed: [UInt8]) -> (whole: [(word: Int32, edits: Int)], ranges: [(low: Int32, high: Int32, edits: Int)]) {
        let m = typed.count, k = NameIndex.allowance(m)
        var whole: [(word: Int32, edits: Int)] = []
        var ranges: [(low: Int32, high: Int32, edits: Int)] = []
        guard m > 0 else { return (whole, ranges) }
        let width = m + 1
        var rows = [Int](repeating: 0, count: (NameIndex.maxWordBytes + 2) * width)
        for j in 0...m { rows[j] = j }
        func visit(_ node: Int, _ d: Int) {
            let row = d * width
            let distance = rows[row + m]
            if distance <= k {
                if vocabulary[Int(low[node])].count == d { whole.append((low[node], distance)) }
                // A beginning of at least two letters, and not the root.
                if d >= 1 && m >= 2 {
                    ranges.append((low[node], high[node], distance))
                    if distance == 0 { return }
                }
            }
            var least = Int.max
            for j in 0...m { least = min(least, rows[row + j]) }
            guard least <= k, d < NameIndex.maxWordBytes else { return }
            let first = Int(firstChild[node])
            for child in first..<(first + Int(childCount[node])) {
                let c = byte[child]
                let next = row + width
                rows[next] = rows[row] + 1
                for j in 1...m {
                    var best = min(rows[row + j] + 1, rows[next + j - 1] + 1, rows[row + j - 1] + (typed[j - 1] == c ? 0 : 1))
                    // A transposition: the two bytes before, swapped.
                    if j >= 2 && d >= 1 && typed[j - 1] == byte[node] && typed[j - 2] == c {
                        best = min(best, rows[row - width + j - 2] + 1)
                    }
                    rows[next + j] = best
                }
                visit(child, d + 1)
            }
        }
        visit(0, 0)
        return (whole, ranges)
    }

    /// The features whose names meet every typed word, with their typos and cost (the sum of
    /// each word's best meeting), and what each typed word reached.
    func candidates(_ typed: [(word: String, stems: [String])], slots: Int,
                    deadline: Deadline) throws(EngineError) -> ([Lookup], [(index: Int32, edits: Int, cost: Float)]) {
        var lookups: [Lookup] = []
        var alive: [Int32] = []
        var total = [Float](repeating: 0, count: slots)
        var totalEdits = [UInt8](repeating: 0, count: slots)
        var cost = [Float](repeating: .infinity, count: slots)
        var edits = [UInt8](repeating: 0, count: slots)
        for (t, (word, typedStems)) in typed.enumerated() {
            let bytes = Array(word.utf8.prefix(NameIndex.maxWordBytes))
            let last = t == typed.count - 1
            let (whole, ranges) = lookUp(bytes)
            var lookup = Lookup(typed: word, bytes: bytes, last: last, whole: [:], stems: [], ranges: ranges)
            for (w, e) in whole { lookup.whole[w] = e }
            for stem in typedStems { for w in stems[stem] ?? [] where vocabulary[Int(w)] != bytes { lookup.stems.insert(w) } }
            lookups.append(lookup)
            if t > 0 { for i in alive { cost[Int(i)] = .infinity } }
            var touched: [Int32] = []
            var visited = 0
            func offer(_ w: Int32, _ kind: WordMatch.Kind, _ e: Int) throws(EngineError) {
                let c = NameIndex.cost(kind, edits: e, last: last)
                let from = Int(postingStart[Int(w)]), to = Int(postingStart[Int(w) + 1])
                visited += to - from
                if visited > 262_144 { visited = 0; try deadline.check() }
                for posting in postings[from..<to] {
                    let i = Int(posting.index)
                    // A name that begins with the first typed word is the better one (lvi before vlci lvi).
                    let paid = t == 0 && !posting.first ? c + 0.05 : c
                    if paid < cost[i] {
                        if t == 0 && cost[i] == .infinity { touched.append(posting.index) }
                        cost[i] = paid
                        edits[i] = UInt8(e)
                    }
                }
            }
            for (w, e) in whole { try offer(w, e == 0 ? .exact : .typo, e) }
            for w in lookup.stems { try offer(w, .stem, 0) }
            for range in ranges {
                for w in range.low..<range.high where vocabulary[Int(w)].count > bytes.count || range.edits > 0 {
                    try offer(w, .prefix, range.edits)
                }
            }
            if t == 0 {
                alive = touched
                for i in alive { total[Int(i)] = cost[Int(i)]; totalEdits[Int(i)] = edits[Int(i)] }
            } else {
                alive = alive.filter { cost[Int($0)] < .infinity }
                for i in alive { total[Int(i)] += cost[Int(i)]; totalEdits[Int(i)] &+= edits[Int(i)] }
            }
            if alive.isEmpty { break }
        }
        return (lookups, alive.map { ($0, Int(totalEdits[Int($0)]), total[Int($0)]) })
    }

    /// How each typed word met feature `index`'s name, and the column of the first one's meeting:
    /// worked out again from the lookups, for the few features an answer shows.
    func matches(of index: Int, in layer: Layer, _ lookups: [Lookup]) -> (column: String, matches: [WordMatch]) {
        let row = layer.properties[index]
        let words = columns.map { column in (row[column]?.stringValue).map(CzechStemmer.wordForms) ?? [] }
        var column = columns.first ?? ""
        var matches: [WordMatch] = []
        for (t, lookup) in lookups.enumerated() {
            var best: (cost: Float, match: WordMatch, column: Int)?
            for (c, forms) in words.enumerated() {
                for (position, form) in forms.enumerated() {
                    let bytes = Array(form.folded.utf8.prefix(NameIndex.maxWordBytes))
                    guard let w = NameIndex.position(of: bytes, in: vocabulary) else { continue }
                    var options: [(WordMatch.Kind, Int)] = []
                    if let e = lookup.whole[w] { options.append((e == 0 ? .exact : .typo, e)) }
                    if lookup.stems.contains(w) { options.append((.stem, 0)) }
                    for range in lookup.ranges where range.low <= w && w < range.high && (bytes.count > lookup.bytes.count || range.edits > 0) {
                        options.append((.prefix, range.edits))
                    }
                    for (kind, e) in options {
                        let paid = NameIndex.cost(kind, edits: e, last: lookup.last) + (t == 0 && position != 0 ? 0.05 : 0)
                        if best == nil || paid < best?.cost ?? .infinity {
                            best = (paid, WordMatch(typed: lookup.typed, word: form.folded, kind: kind, edits: e), c)
                        }
                    }
                }
            }
            if let best {
                matches.append(best.match)
                if t == 0 { column = columns[best.column] }
            }
        }
        return (column, matches)
    }

    /// A word's place in the sorted vocabulary.
    static func position(of word: [UInt8], in vocabulary: [[UInt8]]) -> Int32? {
        var low = 0, high = vocabulary.count
        while low < high {
            let middle = (low + high) / 2
            if vocabulary[middle].lexicographicallyPrecedes(word) { low = middle + 1 } else { high = middle }
        }
        return low < vocabulary.count && vocabulary[low] == word ? Int32(low) : nil
    }
}
