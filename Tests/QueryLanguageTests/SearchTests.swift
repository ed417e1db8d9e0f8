import Engine
import Foundation
import Geometry
import QueryLanguage
import Support
import TestSupport
import Testing

/// Search as people type (`Snapshot.search`, `SEARCH`), on the zoo's own names.
@Suite struct SearchTests {
    /// Optimal string alignment distance (Levenshtein with adjacent transpositions), by the table.
    static func distance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d[a.count][b.count]
    }

    /// The typos one typed word may have, by its length (Photon's and Typesense's rule).
    static func allowance(_ length: Int) -> Int { length >= 8 ? 2 : length >= 4 ? 1 : 0 }

    /// A typed word against every name of every named layer, by brute force: the best meeting
    /// of each feature (its cost as the engine counts it) and that meeting's typos.
    static func bruteForce(_ typed: String, _ snapshot: Snapshot) -> [String: Int] {
        guard let (word, stems) = CzechStemmer.foldedWords(typed).first else { return [:] }
        let t = Array(word.utf8.prefix(32))
        let k = allowance(t.count)
        var found: [String: Int] = [:]
        for layer in snapshot.layers where !layer.nameColumns.isEmpty {
            for index in layer.indices {
                var best: (cost: Double, edits: Int)?
                func offer(_ cost: Double, _ edits: Int) { if best == nil || cost < best!.cost { best = (cost, edits) } }
                for column in layer.nameColumns {
                    guard let text = layer.properties[index][column]?.stringValue else { continue }
                    for (nameWord, nameStems) in CzechStemmer.foldedWords(text) {
                        let w = Array(nameWord.utf8.prefix(32))
                        let whole = distance(t, w)
                        if whole <= k { offer(Double(whole), whole) }
                        if w != t && !Set(stems).isDisjoint(with: nameStems) { offer(0.2, 0) }
                        if t.count >= 2 {
                            for length in 1...w.count {
                                let edits = distance(t, Array(w[..<length]))
                                if edits <= k && (w.count > t.count || edits > 0) { offer(0.3 + Double(edits), edits) }
                            }
                        }
                    }
                }
                if let best { found["\(layer.name) \(layer.fids[index])"] = best.edits }
            }
        }
        return found
    }

    /// Every feature the trie walk finds for a typed word, and its typos, equals the brute force
    /// over every name: 150 typed words made from the names' own words by random edits.
    @Test func aTypedWordFindsWhatBruteForceFinds() throws {
        let snapshot = try QueryStore.get()
        var vocabulary: [String] = []
        for layer in snapshot.layers where !layer.nameColumns.isEmpty {
            for index in layer.indices {
                for column in layer.nameColumns {
                    vocabulary += CzechStemmer.foldedWords(layer.properties[index][column]?.stringValue ?? "").map(\.word)
                }
            }
        }
        vocabulary = Array(Set(vocabulary)).sorted()
        #expect(vocabulary.count > 1000)
        var random = SplitMix(state: 35)
        let letters = Array("abcdefghijklmnopqrstuvwxyz".utf8)
        var checked = 0, nonEmpty = 0
        for _ in 0..<150 {
            var word = Array(vocabulary[Int(random.next() % UInt64(vocabulary.count))].utf8)
            // A prefix (typing), then up to two random edits.
            if random.next() % 2 == 0, word.count > 3 { word = Array(word[..<(2 + Int(random.next() % UInt64(word.count - 2)))]) }
            for _ in 0..<Int(random.next() % 3) where word.count > 1 {
                let at = Int(random.next() % UInt64(word.count))
                switch random.next() % 4 {
                case 0: word[at] = letters[Int(random.next() % 26)]
                case 1: word.remove(at: at)
                case 2: word.insert(letters[Int(random.next() % 26)], at: at)
                default: if at + 1 < word.count { word.swapAt(at, at + 1) }
                }
            }
            let typed = String(decoding: word, as: UTF8.self)
            let expected = SearchTests.bruteForce(typed, snapshot)
            let hits = try snapshot.search(typed, options: SearchOptions(limit: 10_000))
            var got: [String: Int] = [:]
            for hit in hits { got["\(hit.layer.name) \(hit.layer.fids[hit.index])"] = hit.edits }
            #expect(got == expected, "\(typed)")
            checked += 1
            if !expected.isEmpty { nonEmpty += 1 }
        }
        #expect(checked == 150)
        #expect(nonEmpty > 110)
    }

    /// What a visitor types, and what comes first: checked against the data's own names (the
    /// gorillas' pen is `gorily`, its pavilion `Pavilon goril`, the animal `Gorila nížinná`).
    @Test func visitorsFindThePensTheyTypeTowards() throws {
        let snapshot = try QueryStore.get()
        let gate = Point(lon: 14.4085, lat: 50.1170)
        func first(_ typed: String, near: Point? = gate, _ count: Int = 3) throws -> [String] {
            try snapshot.search(typed, options: SearchOptions(near: near, limit: count)).map { "\($0.layer.name):\($0.name)" }
        }
        #expect(try first("gori") == ["pens:gorily", "animals:Gorila nížinná", "pavilions:Pavilon goril"])
        #expect(try first("gorila") == ["animals:Gorila nížinná", "pens:gorily", "pavilions:Pavilon goril"])
        #expect(try first("zirafa", 2) == ["animals:Žirafa núbijská", "pens:žirafy, pštrosi, přímorožci, antilopy losí"])
        #expect(try first("zirfa", 1) == ["animals:Žirafa núbijská"])  // a letter left out
        #expect(try first("lachtan", 2) == ["animals:Lachtan jihoafrický", "pens:lachtani"])
        #expect(try first("slon", 1) == ["animals:Slon indický"])
        #expect(try first("tučňáci", 3) == ["pens:tučňáci", "animals:Tučňák Humboldtův", "pavilions:Pavilon tučňáků"])
        #expect(try first("medved ledni", 1) == ["animals:Medvěd lední"])
        // The gorilla links to its pen and its pavilion, nearest first, with their distances.
        let gorilla = try #require(try snapshot.search("gorila", options: SearchOptions(layers: ["animals"], near: gate, limit: 1)).first)
        #expect(gorilla.linked.map { "\($0.layer.name) \($0.layer.fids[$0.index]) \($0.metres ?? -1)" } == ["pens 4791797957 273.74", "pavilions 30000629 294.1"])
        #expect(gorilla.metres == 273.74)
        #expect(gorilla.matches == [WordMatch(typed: "gorila", word: "gorila", kind: .exact, edits: 0)])
        let typo = try #require(try snapshot.search("zirfa", options: SearchOptions(limit: 1)).first)
        #expect(typo.matches == [WordMatch(typed: "zirfa", word: "zirafa", kind: .typo, edits: 1)])
        #expect(typo.edits == 1)
        // Nearest first among equal matches: from the far end of the zoo, the other pen comes first.
        let far = Point(lon: 14.4012, lat: 50.1158)
        let ibises = try snapshot.search("ibis", options: SearchOptions(layers: ["pens"], near: far, limit: 2))
        #expect(ibises.map(\.name) == ["ibisové", "ibisové"])
        #expect(ibises.map { $0.layer.fids[$0.index] } == [4638766494, 4639672142])
        #expect((ibises[0].metres ?? .infinity) < (ibises[1].metres ?? 0))
        let fromTheGate = try snapshot.search("ibis", options: SearchOptions(layers: ["pens"], near: gate, limit: 2))
        #expect(fromTheGate.map { $0.layer.fids[$0.index] } == [4639672142, 4638766494])
    }

    /// The quality table of docs/HTTP_API.md ("Search"): every exhibit (pen and pavilion) and
    /// every animal of the lexicon, typed whole, without diacritics, with 1 and 2 typos, and as
    /// beginnings of 3, 4 and 5 letters; the share whose intended feature comes first and in
    /// the first 3. A name held by several features counts any of them as intended; a
    /// beginning shared by several names is counted as typed (not made easier).
    @Test func qualityOnTheZoosNames() throws {
        let snapshot = try QueryStore.get()
        var random = SplitMix(state: 2026)
        let letters = Array("abcdefghijklmnopqrstuvwxyz".utf8)
        func typo(_ text: String, _ count: Int) -> String {
            var bytes = Array(CzechStemmer.fold(text).utf8)
            var made = 0
            while made < count {
                // In a letter of a word long enough to allow it (a typo in "lvi" cannot be told from another name).
                let positions = bytes.indices.filter { i in bytes[i] != 32 }
                let at = positions[Int(random.next() % UInt64(positions.count))]
                switch random.next() % 4 {
                case 0: let c = letters[Int(random.next() % 26)]; if c == bytes[at] { continue }; bytes[at] = c
                case 1: bytes.remove(at: at)
                case 2: bytes.insert(letters[Int(random.next() % 26)], at: at)
                default: guard at + 1 < bytes.count, bytes[at + 1] != 32, bytes[at] != bytes[at + 1] else { continue }; bytes.swapAt(at, at + 1)
                }
                made += 1
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        var lines: [String] = []
        var shares: [String: (first: Double, top3: Double)] = [:]
        for (label, layers) in [("exhibits", ["pens", "pavilions"]), ("lexicon", ["animals"])] {
            var targets: [(name: String, fids: Set<String>)] = []
            for name in layers {
                let layer = try snapshot.layer(name)
                for index in layer.indices {
                    guard let text = layer.properties[index]["name"]?.stringValue else { continue }
                    let key = CzechStemmer.fold(text)
                    let fid = "\(name) \(layer.fids[index])"
                    if let at = targets.firstIndex(where: { CzechStemmer.fold($0.name) == key }) { targets[at].fids.insert(fid) } else { targets.append((text, [fid])) }
                }
            }
            let variants: [(String, (String) -> String)] = [
                ("whole", { $0 }), ("without diacritics", { CzechStemmer.fold($0) }), ("1 typo", { typo($0, 1) }), ("2 typos", { typo($0, 2) }),
                ("first 3 letters", { String(CzechStemmer.fold($0).prefix(3)) }), ("first 4 letters", { String(CzechStemmer.fold($0).prefix(4)) }),
                ("first 5 letters", { String(CzechStemmer.fold($0).prefix(5)) }),
            ]
            for (variant, make) in variants {
                var first = 0, top3 = 0
                for target in targets {
                    let hits = try snapshot.search(make(target.name), options: SearchOptions(layers: layers, limit: 3))
                    let keys = hits.map { "\($0.layer.name) \($0.layer.fids[$0.index])" }
                    if let top = keys.first, target.fids.contains(top) { first += 1 }
                    if keys.contains(where: target.fids.contains) { top3 += 1 }
                }
                let share = (Double(first) / Double(targets.count), Double(top3) / Double(targets.count))
                shares["\(label) \(variant)"] = share
                lines.append("| \(label) (\(targets.count)) | \(variant) | \(String(format: "%.1f", share.0 * 100)) % | \(String(format: "%.1f", share.1 * 100)) % |")
            }
        }
        print("search quality:\n" + lines.joined(separator: "\n"))
        #expect(shares["exhibits whole"]?.first == 1)
        #expect(shares["lexicon without diacritics"]?.top3 ?? 0 >= 0.99)
        #expect(shares["exhibits 1 typo"]?.top3 ?? 0 >= 0.95)
        #expect(shares["lexicon 1 typo"]?.top3 ?? 0 >= 0.95)
        #expect(shares["exhibits first 4 letters"]?.top3 ?? 0 >= 0.9)
    }

    /// SEARCH in the language, with bound parameters; its EXPLAIN; and every bad input named.
    @Test func theStatementAndItsErrors() throws {
        let snapshot = try QueryStore.get()
        let rows = try QueryStore.rows("SEARCH 'gori' IN pens, pavilions NEAR POINT(14.4085 50.1170) LIMIT 2", snapshot)
        #expect(rows.map { $0["name"]?.string } == ["gorily", "Pavilon goril"])
        #expect(rows.first?["distance_m"]?.number == 273.74)
        let bound = try Query.run("SEARCH $1 NEAR $2 LIMIT 1", ["lachtan", Point(lon: 14.4085, lat: 50.1170)], on: snapshot)
        guard case .object(let answer)? = bound.first?.json(), case .array(let found)? = answer["rows"], case .object(let row)? = found.first else {
            Issue.record("no rows"); return
        }
        #expect(row["name"]?.string == "Lachtan jihoafrický")
        let explained = try Query.run("EXPLAIN SEARCH 'gori' IN pens", on: snapshot).first?.table() ?? ""
        #expect(explained.contains("pens: each layer's name index"), "\(explained)")
        func refusal(_ text: String, _ parameters: [any QueryArgument] = []) -> String {
            do { _ = try Query.run(text, parameters, on: snapshot); return "answered" } catch { return "\(error.code): \(error.message)" }
        }
        #expect(refusal("SEARCH '  '") == "invalid_argument: q: '  ' has no word to search for (letters or digits)")
        #expect(refusal("SEARCH 'x' IN nope").hasPrefix("unknown_layer: unknown layer 'nope'"))
        #expect(refusal("SEARCH 'x' IN observations") == "invalid_argument: layers: 'observations' has no name column to search (name, *_name, name_*, nazev*)")
        #expect(refusal("SEARCH 'x' LIMIT 0").hasPrefix("invalid_value"))
        #expect(refusal("SEARCH 'x' LIMIT 20000") == "invalid_argument: limit: 20000 is not between 1 and 10000")
        #expect(refusal("SEARCH $1", [7]) == "parameter_type: $1 must be text (what the user typed), got a number")
        #expect(refusal("SEARCH 'x' NEAR POINT(14.4 95)").hasPrefix("invalid_value"))
        #expect(refusal("SEARCH 'x' LIMIT 2 LIMIT 3") == "duplicate_clause: LIMIT appears twice in one SEARCH")
        #expect(refusal("SEARCH gori").hasPrefix("syntax_error: expected the text to search for"))
    }
}
