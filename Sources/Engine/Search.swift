// Search as people type (docs/HTTP_API.md, "Search"): names found by the beginning of a word,
// without diacritics, by Czech word forms, and despite one typo in a word of 4–7 letters or two
// in a longer one (Photon's and Typesense's rule), ranked by typos, then by distance from the
// user when one is given, then by how closely the words met.
//
// Each layer's index (`NameIndex`) is built on the first search of that layer version, and
// kept with it: a write makes a new layer version, so the index follows the data. Its
// vocabulary is a trie over the sorted folded words; a typed word walks it with one row of
// the edit-distance table per depth (Damerau's transpositions included), so a lookup visits
// only the branches still within its allowance, and a word's subtree is a range of the sorted
// vocabulary (every word that starts with it).

import Geometry
import Support

/// How one typed word met a word of a name.
public struct WordMatch: Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// The whole word, as typed (case and diacritics aside).
        case exact
        /// The word begins with what was typed (with `edits` typos in that beginning).
        case prefix
        /// Another form of the same Czech word (gorila, gorily).
        case stem
        /// The whole word, with `edits` typos.
        case typo
    }

    /// The typed word, folded.
    public let typed: String
    /// The name's word it met, folded.
    public let word: String
    public let kind: Kind
    public let edits: Int

    public init(typed: String, word: String, kind: Kind, edits: Int) {
        self.typed = typed
        self.word = word
        self.kind = kind
        self.edits = edits
    }
}

/// One found feature.
public struct SearchHit: Sendable {
    public let layer: Layer
    public let index: Int
    /// The column whose text matched, and that text.
    public let column: String
    public let name: String
    /// Typos over all the typed words.
    public let edits: Int
    /// How closely the words met, lower first: 0 when every word is whole and exact.
    public let cost: Double
    /// One per typed word, in the order typed.
    public let matches: [WordMatch]
    /// From the user (`near`): to the feature, or for a row without geometry to the nearest of
    /// its linked features.
    public let metres: Double?
    /// The features a row links to (an animal's pens and pavilions), nearest first.
    public let linked: [(layer: Layer, index: Int, metres: Double?)]
}

/// What a search looks in and for how many.
public struct SearchOptions: Sendable {
    /// Layer names; nil for every layer with a name column (`Layer.nameColumns`).
    public var layers: [String]?
    /// The user's position, to rank equally good matches nearest first.
    public var near: Point?
    public var limit: Int

    public init(layers: [String]? = nil, near: Point? = nil, limit: Int = 10) {
        self.layers = layers
        self.near = near
        self.limit = limit
    }
}

extension Layer {
    /// The columns search reads: `name`, `*_name`, `name_*` and `nazev*` (any case), text.
    public var nameColumns: [String] {
        info.columns.filter { column in
            let name = column.name.lowercased()
            return !column.isJSON && (name == "name" || name.hasSuffix("_name") || name.hasPrefix("name_") || name.hasPrefix("nazev"))
        }.map(\.name)
    }
}

extension Snapshot {
    /// The features whose names match `text`, best first (see the file's header).
    public func search(_ text: String, options: SearchOptions = SearchOptions(), deadline: Deadline = .none) throws(EngineError) -> [SearchHit] {
        let typed = Array(CzechStemmer.foldedWords(text).prefix(NameIndex.maxTypedWords))
        guard !typed.isEmpty else {
            throw .invalidArgument(parameter: "q", message: "\(Quote.input(text)) has no word to search for (letters or digits)")
        }
        guard (1...limits.maxRows).contains(options.limit) else {
            throw .invalidArgument(parameter: "limit", message: "\(options.limit) is not between 1 and \(limits.maxRows)")
        }
        if let near = options.near { try Check.position(near) }
        let layers: [Layer]
        if let names = options.layers {
            layers = try names.map { name throws(EngineError) in try layer(name) }
            for layer in layers {
                try layer.requireRows(for: "search")
                guard !layer.nameColumns.isEmpty else {
                    throw .invalidArgument(parameter: "layers", message: "'\(layer.name)' has no name column to search (name, *_name, name_*, nazev*)")
                }
            }
        } else {
            layers = self.layers.filter { !$0.readsStore && !$0.nameColumns.isEmpty }
        }
        // Every layer's candidates, then the best `limit` of them: one class of typos at a time,
        // so distances are measured only for the classes the answer reaches.
        var candidates: [(layer: Int, index: Int32, edits: Int, cost: Float)] = []
        var lookups: [[NameIndex.Lookup]] = []
        let indexes = layers.map { layer in
            layer.nameIndex.withLock { cached in
                if let cached { return cached }
                let built = NameIndex(layer)
                cached = built
                return built
            }
        }
        for (l, index) in indexes.enumerated() {
            try deadline.check()
            let (lookup, found) = try index.candidates(typed, slots: layers[l].slots, deadline: deadline)
            lookups.append(lookup)
            for candidate in found { candidates.append((l, candidate.index, candidate.edits, candidate.cost)) }
        }
        typealias Ranked = (layer: Int, index: Int32, edits: Int, cost: Float, metres: Double?)
        func before(_ a: Ranked, _ b: Ranked) -> Bool {
            if a.edits != b.edits { return a.edits < b.edits }
            if options.near != nil, a.metres != b.metres { return (a.metres ?? .infinity) < (b.metres ?? .infinity) }
            if a.cost != b.cost { return a.cost < b.cost }
            let x = indexes[a.layer].nameLength[Int(a.index)], y = indexes[b.layer].nameLength[Int(b.index)]
            if x != y { return x < y }
            if a.layer != b.layer { return layers[a.layer].name < layers[b.layer].name }
            return layers[a.layer].fids[Int(a.index)] < layers[b.layer].fids[Int(b.index)]
        }
        var best: [Ranked] = []
        for edits in Set(candidates.map(\.edits)).sorted() where best.count < options.limit {
            try deadline.check()
            let room = options.limit - best.count
            var kept: [Ranked] = []
            for candidate in candidates where candidate.edits == edits {
                let metres = options.near.flatMap { near in distance(from: near, to: layers[candidate.layer], Int(candidate.index)) }
                let ranked: Ranked = (candidate.layer, candidate.index, candidate.edits, candidate.cost, metres)
                // The `room` best so far, in order: most candidates lose to the last one at once.
                if kept.count == room, let last = kept.last, !before(ranked, last) { continue }
                var at = kept.count
                while at > 0 && before(ranked, kept[at - 1]) { at -= 1 }
                kept.insert(ranked, at: at)
                if kept.count > room { kept.removeLast() }
            }
            best += kept
        }
        return best.map { ranked in
            let layer = layers[ranked.layer]
            let index = Int(ranked.index)
            let (column, matches) = indexes[ranked.layer].matches(of: index, in: layer, lookups[ranked.layer])
            return SearchHit(layer: layer, index: index, column: column, name: layer.properties[index][column]?.stringValue ?? "",
                             edits: ranked.edits, cost: Double(ranked.cost), matches: matches, metres: ranked.metres,
                             linked: linked(from: layer, index, near: options.near))
        }
    }

    /// Metres from `point` to a feature; for a row without geometry, to the nearest feature it
    /// links to; nil when neither is known.
    private func distance(from point: Point, to layer: Layer, _ index: Int) -> Double? {
        if let geometry = layer.geometries[index] { return Rounding.metres(Geodesy.distance(from: point, to: geometry)) }
        return linked(from: layer, index, near: point).first?.metres ?? nil
    }

    /// The features a row's id list names (an animal's `location_ids`), in the snapshot's
    /// feature layers, nearest first.
    private func linked(from layer: Layer, _ index: Int, near: Point?) -> [(layer: Layer, index: Int, metres: Double?)] {
        guard let (_, lists) = layer.idList, index < lists.count else { return [] }
        var linked: [(layer: Layer, index: Int, metres: Double?)] = []
        for id in lists[index].prefix(100) {
            for other in layers where other !== layer && other.family != .table {
                if let found = other.index(ofFID: id) {
                    linked.append((other, found, near.flatMap { p in other.geometries[found].map { Rounding.metres(Geodesy.distance(from: p, to: $0)) } }))
                }
            }
        }
        return linked.sorted { ($0.metres ?? .infinity, $0.layer.name, $0.index) < ($1.metres ?? .infinity, $1.layer.name, $1.index) }
    }
}

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

extension Output {
    /// Search's answer as a GeoJSON FeatureCollection: one Feature per hit, best first, whose
    /// properties say the layer, the fid, the name, how each typed word met it, the distance
    /// from the user and the linked features; a row without geometry has `geometry: null`.
    public static func searchHits(_ w: inout JSONWriter, _ text: String, _ hits: [SearchHit], geometry mode: GeometryMode) {
        w.beginObject()
        w.key("type"); w.string("FeatureCollection")
        w.key("q"); w.string(text)
        w.key("features")
        w.beginArray()
        for hit in hits {
            w.beginObject()
            w.key("type"); w.string("Feature")
            w.key("geometry")
            if let geometry = hit.layer.geometries[hit.index], mode.includes(geometry) { w.geometry(geometry) } else { w.null() }
            w.key("properties")
            w.beginObject()
            w.key("layer"); w.string(hit.layer.name)
            w.key("fid"); w.integer(hit.layer.fids[hit.index])
            w.key("name"); w.string(hit.name)
            w.key("column"); w.string(hit.column)
            w.key("edits"); w.integer(Int64(hit.edits))
            w.key("matched")
            w.beginArray()
            for match in hit.matches {
                w.beginObject()
                w.key("typed"); w.string(match.typed)
                w.key("word"); w.string(match.word)
                w.key("how"); w.string(match.kind.rawValue)
                w.key("edits"); w.integer(Int64(match.edits))
                w.endObject()
            }
            w.endArray()
            w.key("distance_m")
            if let metres = hit.metres { w.number(metres) } else { w.null() }
            w.key("linked")
            w.beginArray()
            for link in hit.linked {
                w.beginObject()
                w.key("layer"); w.string(link.layer.name)
                w.key("fid"); w.integer(link.layer.fids[link.index])
                let names = link.layer.nameColumns
                if let name = names.lazy.compactMap({ link.layer.properties[link.index][$0]?.stringValue }).first {
                    w.key("name"); w.string(name)
                }
                w.key("distance_m")
                if let metres = link.metres { w.number(metres) } else { w.null() }
                w.endObject()
            }
            w.endArray()
            w.endObject()
            w.endObject()
        }
        w.endArray()
        w.endObject()
    }
}
