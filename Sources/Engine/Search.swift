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
        var hits: [SearchHit] = []
        for layer in layers {
            try deadline.check()
            let index = layer.nameIndex.withLock { cached in
                if let cached { return cached }
                let built = NameIndex(layer)
                cached = built
                return built
            }
            for found in try index.search(typed, in: layer, deadline: deadline) {
                hits.append(hit(found, in: layer, near: options.near))
            }
        }
        hits.sort { a, b in
            if a.edits != b.edits { return a.edits < b.edits }
            if options.near != nil {
                let x = a.metres ?? .infinity, y = b.metres ?? .infinity
                if x != y { return x < y }
            }
            if a.cost != b.cost { return a.cost < b.cost }
            if a.name.count != b.name.count { return a.name.count < b.name.count }
            if a.layer.name != b.layer.name { return a.layer.name < b.layer.name }
            return a.layer.fids[a.index] < b.layer.fids[b.index]
        }
        return Array(hits.prefix(options.limit))
    }

    private func hit(_ found: NameIndex.Found, in layer: Layer, near: Point?) -> SearchHit {
        var linked: [(layer: Layer, index: Int, metres: Double?)] = []
        if let (_, lists) = layer.idList, found.index < lists.count {
            for id in lists[found.index].prefix(100) {
                for other in layers where other !== layer && other.family != .table {
                    if let index = other.index(ofFID: id) {
                        linked.append((other, index, near.flatMap { p in other.geometries[index].map { Rounding.metres(Geodesy.distance(from: p, to: $0)) } }))
                    }
                }
            }
            linked.sort { ($0.metres ?? .infinity, $0.layer.name, $0.index) < ($1.metres ?? .infinity, $1.layer.name, $1.index) }
        }
        var metres = linked.first?.metres
        if let near, let geometry = layer.geometries[found.index] {
            metres = Rounding.metres(Geodesy.distance(from: near, to: geometry))
        }
        return SearchHit(layer: layer, index: found.index, column: found.column, name: found.name, edits: found.edits, cost: found.cost,
                         matches: found.matches, metres: metres, linked: linked)
    }
}

/// One layer's names, indexed: the sorted vocabulary of their folded words as a trie, each word's
/// features (postings), and the words of each Czech stem.
final class NameIndex: Sendable {
    static let maxWordBytes = 32
    static let maxTypedWords = 8

    struct Found {
        var index: Int
        var column: String
        var name: String
        var edits: Int
        var cost: Double
        var matches: [WordMatch]
    }

    let columns: [String]
    /// Sorted, distinct, folded, UTF-8, at most `maxWordBytes` each.
    let vocabulary: [[UInt8]]
    /// Word w's features are `postings[postingStart[w]..<postingStart[w + 1]]`: the feature
    /// index, and the column (the name's).
    let postingStart: [Int32]
    let postings: [(index: Int32, column: Int16)]
    /// Each stem's words.
    let stems: [String: [Int32]]
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
        var wordsOf: [[UInt8]: [(index: Int32, column: Int16)]] = [:]
        var stemsOf: [[UInt8]: Set<String>] = [:]
        for index in layer.indices {
            let row = layer.properties[index]
            for (c, column) in columns.enumerated() {
                guard let text = row[column]?.stringValue else { continue }
                for (word, stems) in CzechStemmer.foldedWords(text) {
                    let bytes = Array(word.utf8.prefix(NameIndex.maxWordBytes))
                    wordsOf[bytes, default: []].append((Int32(index), Int16(c)))
                    if stemsOf[bytes] == nil { stemsOf[bytes] = Set(stems) }
                }
            }
        }
        let vocabulary = wordsOf.keys.sorted { $0.lexicographicallyPrecedes($1) }
        var start: [Int32] = [0]
        var postings: [(index: Int32, column: Int16)] = []
        var stems: [String: [Int32]] = [:]
        for (w, word) in vocabulary.enumerated() {
            var seen = Set<Int64>()
            for posting in wordsOf[word] ?? [] where seen.insert(Int64(posting.index) << 16 | Int64(posting.column)).inserted {
                postings.append(posting)
            }
            start.append(Int32(postings.count))
            for stem in stemsOf[word] ?? [] { stems[stem, default: []].append(Int32(w)) }
        }
        self.vocabulary = vocabulary
        postingStart = start
        self.postings = postings
        self.stems = stems
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

    /// The vocabulary's words within reach of `typed`: whole words (exact or with typos), and
    /// with `prefix`, the ranges of words that begin within reach of it.
    func lookUp(_ typed: [UInt8], prefix: Bool) -> (whole: [(word: Int32, edits: Int)], ranges: [(low: Int32, high: Int32, edits: Int)]) {
        let m = typed.count, k = NameIndex.allowance(m)
        var whole: [(word: Int32, edits: Int)] = []
        var ranges: [(low: Int32, high: Int32, edits: Int)] = []
        let width = m + 1
        var rows = [Int](repeating: 0, count: (NameIndex.maxWordBytes + 2) * width)
        for j in 0...m { rows[j] = j }
        func visit(_ node: Int, _ d: Int) {
            let row = d * width
            let distance = rows[row + m]
            if distance <= k {
                if vocabulary[Int(low[node])].count == d { whole.append((low[node], distance)) }
                // A beginning of at least two letters, and not the root.
                if prefix && d >= 1 && m >= 2 {
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

    /// Features whose names meet every typed word, each with its best meeting.
    func search(_ typed: [(word: String, stems: [String])], in layer: Layer, deadline: Deadline) throws(EngineError) -> [Found] {
        typealias Met = (cost: Double, edits: Int, column: Int16, word: Int32, kind: WordMatch.Kind)
        // Per typed word: feature → its best meeting.
        var perWord: [[Int32: Met]] = []
        for (t, (word, typedStems)) in typed.enumerated() {
            let bytes = Array(word.utf8.prefix(NameIndex.maxWordBytes))
            let last = t == typed.count - 1
            var best: [Int32: Met] = [:]
            var visited = 0
            func offer(_ w: Int32, _ kind: WordMatch.Kind, _ edits: Int, _ cost: Double) throws(EngineError) {
                let from = Int(postingStart[Int(w)]), to = Int(postingStart[Int(w) + 1])
                visited += to - from
                if visited > 65_536 { visited = 0; try deadline.check() }
                for posting in postings[from..<to] {
                    if let held = best[posting.index], held.cost <= cost { continue }
                    best[posting.index] = (cost, edits, posting.column, w, kind)
                }
            }
            let (whole, ranges) = lookUp(bytes, prefix: true)
            for (w, edits) in whole { try offer(w, edits == 0 ? .exact : .typo, edits, Double(edits)) }
            for stem in typedStems {
                for w in stems[stem] ?? [] where vocabulary[Int(w)] != bytes { try offer(w, .stem, 0, 0.2) }
            }
            // What the user is typing now is a beginning; an earlier word is more likely whole.
            let beginning = last ? 0.3 : 0.6
            for range in ranges {
                for w in range.low..<range.high where vocabulary[Int(w)].count > bytes.count || range.edits > 0 {
                    try offer(w, .prefix, range.edits, beginning + Double(range.edits))
                }
            }
            perWord.append(best)
        }
        // Every typed word must meet the name: start from the rarest.
        guard let rarest = perWord.indices.min(by: { perWord[$0].count < perWord[$1].count }) else { return [] }
        var found: [Found] = []
        for (index, _) in perWord[rarest] {
            var cost = 0.0, edits = 0
            var matches: [WordMatch] = []
            var column: Int16 = -1
            var all = true
            for (t, word) in perWord.enumerated() {
                guard let met = word[index] else { all = false; break }
                cost += met.cost
                edits += met.edits
                matches.append(WordMatch(typed: typed[t].word, word: String(decoding: vocabulary[Int(met.word)], as: UTF8.self), kind: met.kind, edits: met.edits))
                if column < 0 { column = met.column }
            }
            guard all else { continue }
            let name = columns[Int(column)]
            let text = layer.properties[Int(index)][name]?.stringValue ?? ""
            // A name that begins with the first typed word is the better one (lvi before vlci lvi).
            if let first = matches.first, CzechStemmer.foldedWords(text).first?.word != first.word { cost += 0.05 }
            found.append(Found(index: Int(index), column: name, name: text, edits: edits, cost: cost, matches: matches))
        }
        return found
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
