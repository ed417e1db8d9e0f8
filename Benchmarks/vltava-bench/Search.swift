// S1: search as people type (issue 35), per keystroke, in process.
//
// On the demo store: every exhibit (pen, pavilion) and every animal of the zoo's lexicon, typed
// as beginnings of 1 to 8 letters (each keystroke a search, as an app sends them) and whole with
// one typo, near the zoo's gate. Then a layer of 1,000,000 named points (two or three words
// each from a vocabulary of 60,000 made-up Czech-like words; VLTAVA_S1_FEATURES to change the
// count), imported as a CSV: its index build on the first search, the resident memory it adds,
// and per-query times for beginnings of 3 and 5 letters, a whole word with a typo, and two words.
// Prints one line per store:
//   SEARCH id=S1.zoo queries=… first_search_ms=… p50_us=… p99_us=… max_us=…
//   SEARCH id=S1.1m features=… words=… build_ms=… rss_mb=… prefix3_p99_us=… …

import Engine
import Foundation
import Geometry
import Store
import Support
import TestSupport

func runSearch() throws -> String {
    var lines: [String] = []
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vltava-bench-s1-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let gate = Point(lon: 14.4085, lat: 50.1170)

    // The zoo.
    let demo = directory.appendingPathComponent("demo.gpkg").path
    try DemoFixtureStore.build(at: demo)
    let snapshot = try Snapshot.load(storePath: demo)
    var names: [String] = []
    for name in ["pens", "pavilions", "animals"] {
        let layer = try snapshot.layer(name)
        for index in layer.indices { if let text = layer.properties[index]["name"]?.stringValue { names.append(text) } }
    }
    let first = try seconds { _ = try snapshot.search("gori", options: SearchOptions(near: gate)) }
    var queries: [String] = []
    var random = SplitMix(state: 35)
    for name in names {
        let folded = Array(CzechStemmer.fold(name))
        for length in 1...min(8, folded.count) { queries.append(String(folded[..<length])) }
        var typo = folded
        let at = Int(random.next() % UInt64(typo.count))
        typo[at] = "x"
        queries.append(String(typo))
    }
    var times: [Double] = []
    var found = 0
    for query in queries {
        var hits = 0
        // A query with no word (a lone space typed) is refused, as the endpoint refuses it.
        times.append(seconds { hits = (try? snapshot.search(query, options: SearchOptions(near: gate)))?.count ?? 0 })
        found += hits
    }
    lines.append("SEARCH id=S1.zoo names=\(names.count) queries=\(queries.count) results=\(found) first_search_ms=\(format(first * 1000)) "
                 + percentiles(times))

    // A million names.
    let count = ProcessInfo.processInfo.environment["VLTAVA_S1_FEATURES"].flatMap { Int($0) } ?? 1_000_000
    let syllables = ["ba", "be", "bo", "če", "da", "do", "dě", "ho", "ja", "ka", "ko", "kra", "la", "le", "lo", "ma", "mo", "na", "ne", "no",
                     "pa", "pe", "po", "pra", "ra", "ro", "ří", "sa", "se", "so", "sta", "ša", "ta", "te", "to", "tr", "va", "ve", "vo", "za", "ze", "žá"]
    var vocabulary = Set<String>()
    while vocabulary.count < 60_000 {
        let length = 2 + Int(random.next() % 3)
        vocabulary.insert((0..<length).map { _ in syllables[Int(random.next() % UInt64(syllables.count))] }.joined())
    }
    let words = vocabulary.sorted()
    let csv = directory.appendingPathComponent("names.csv").path
    FileManager.default.createFile(atPath: csv, contents: nil)
    guard let handle = FileHandle(forWritingAtPath: csv) else { throw BenchError(description: "cannot write \(csv)") }
    var text = "name,longitude,latitude\n"
    var written: [String] = []
    for i in 0..<count {
        // A skewed choice of words, as real names repeat some words far more than others.
        func word() -> String { words[Int(Double(words.count) * pow(Double(random.next() % 1_000_000) / 1_000_000, 2))] }
        let name = (0..<(2 + Int(random.next() % 2))).map { _ in word() }.joined(separator: " ")
        if i % 1000 == 0 { written.append(name) }
        text += "\(name),\(14.2 + Double(random.next() % 500_000) / 1_000_000),\(49.9 + Double(random.next() % 300_000) / 1_000_000)\n"
        if text.utf8.count > 1 << 20 { handle.write(Data(text.utf8)); text = "" }
    }
    handle.write(Data(text.utf8))
    try handle.close()
    let store = directory.appendingPathComponent("names.gpkg").path
    let importSeconds = try seconds {
        _ = try Importer.importFile(csv, into: GeoPackage(path: store, mode: .readWrite), options: ImportOptions(layer: "places"))
    }
    let large = try Snapshot.load(storePath: store)
    let before = residentMegabytes()
    let build = try seconds { _ = try large.search("ba", options: SearchOptions(layers: ["places"])) }
    let after = residentMegabytes()
    var line = "SEARCH id=S1.1m features=\(count) vocabulary=\(words.count) import_s=\(format(importSeconds)) build_ms=\(format(build * 1000)) "
        + "index_rss_mb=\(format(after - before))"
    let center = Point(lon: 14.45, lat: 50.05)
    for (label, make) in [("prefix3", { (name: String) in String(CzechStemmer.fold(name).prefix(3)) }),
                          ("prefix5", { (name: String) in String(CzechStemmer.fold(name).prefix(5)) }),
                          ("typo", { (name: String) in
                              var first = Array(CzechStemmer.fold(name).split(separator: " ")[0])
                              first[first.count / 2] = "x"
                              return String(first)
                          }),
                          ("two_words", { (name: String) in CzechStemmer.fold(name).split(separator: " ").prefix(2).joined(separator: " ") })] {
        var times: [Double] = []
        for name in written.prefix(500) {
            let query = make(name)
            times.append(try seconds { _ = try large.search(query, options: SearchOptions(layers: ["places"], near: center)) })
        }
        times.sort()
        line += " \(label)_p50_us=\(format(times[times.count / 2] * 1e6)) \(label)_p99_us=\(format(times[times.count * 99 / 100] * 1e6))"
    }
    lines.append(line)
    return lines.joined(separator: "\n")
}

private func percentiles(_ times: [Double]) -> String {
    let sorted = times.sorted()
    return "p50_us=\(format(sorted[sorted.count / 2] * 1e6)) p99_us=\(format(sorted[sorted.count * 99 / 100] * 1e6)) max_us=\(format((sorted.last ?? 0) * 1e6))"
}

private func format(_ value: Double) -> String { String(format: "%.1f", value) }

/// This process's resident memory (VmRSS), in MB.
private func residentMegabytes() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
    return kilobytes / 1024
}
