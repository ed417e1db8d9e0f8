// Search as people type (docs/HTTP_API.md, "Search"): names found by the beginning of a word,
// without diacritics, by Czech word forms, and despite one typo in a word of 4–7 letters or two
// in a longer one (Photon's and Typesense's rule), ranked by typos, then by distance from the
// user when one is given, then by how closely the words met.
//
// Each layer's index (`NameIndex`, NameIndex.swift) is built on the first search of that layer
// version, and kept with it: a write makes a new layer version, so the index follows the data.

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
