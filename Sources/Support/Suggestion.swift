// "Did you mean …?" for every error that names something unknown: layers, columns, tile sets,
// keywords, query parameters. Here in the base module because the store, the engine, the query
// language and the server all use it.

/// "Did you mean …?" for names: the closest candidate by edit distance, when close enough to
/// be a likely typo (at most 2 edits, or a third of the name).
public enum Suggestion {
    public static func closest(to name: String, in candidates: [String]) -> String? {
        // A name far longer than every candidate cannot be a typo of one; the length check
        // also keeps a request's 60 KB name from costing 60 KB × each candidate's length.
        let longest = candidates.reduce(0) { max($0, $1.unicodeScalars.count) }
        guard name.unicodeScalars.count <= 3 * longest + 2 else { return nil }
        let lowered = name.lowercased()
        var best: (name: String, distance: Int)?
        for candidate in candidates {
            let d = distance(lowered, candidate.lowercased())
            if d <= max(2, lowered.count / 3), d < (best?.distance ?? .max) { best = (candidate, d) }
        }
        return best?.name
    }

    /// Levenshtein distance over Unicode scalars.
    public static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars), b = Array(b.unicodeScalars)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}

/// How an error message quotes what a request sent: at most `maxCharacters` of it, then "…".
/// A message that echoed its input whole would answer an 84 KB statement with an 84 KB error
/// (and write it to every log line that repeats it).
public enum Quote {
    public static let maxCharacters = 200

    /// `'text'`, cut to `maxCharacters` with an ellipsis; `marks: false` leaves out the quotes.
    public static func input(_ text: some StringProtocol, marks: Bool = true) -> String {
        let cut = capped(text)
        return marks ? "'" + cut + "'" : cut
    }

    /// The text, cut to `limit` characters with an ellipsis.
    public static func capped(_ text: some StringProtocol, limit: Int = maxCharacters) -> String {
        // Counting Characters walks the text; the UTF-8 count bounds it from above cheaply.
        guard text.utf8.count > limit, text.count > limit else { return String(text) }
        return String(text.prefix(limit)) + "…"
    }
}
