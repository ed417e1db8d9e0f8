import SQLite

/// Everything that can go wrong opening, reading or importing into a store. Each message says
/// what is wrong and where (file, layer, feature index or id, line and column).
public enum StoreError: Error, CustomStringConvertible, Sendable {
    case fileNotFound(String)
    case notAGeoPackage(path: String, reason: String)
    case sqlite(SQLiteError)
    case unknownLayer(String, known: [String])
    case layerExists(String)
    case invalidLayerName(String, reason: String)
    case corruptGeometry(String)
    case readOnly(String)
    /// An import failed; nothing was written.
    case importFailed(file: String, problems: [ImportProblem])
    case unsupportedFormat(file: String, reason: String)

    public var description: String {
        switch self {
        case .fileNotFound(let path):
            return "no such file: \(path)"
        case .notAGeoPackage(let path, let reason):
            return "\(path) is not a GeoPackage: \(reason)"
        case .sqlite(let error):
            return error.description
        case .unknownLayer(let name, let known):
            var message = "unknown layer '\(name)'"
            if let suggestion = Suggestion.closest(to: name, in: known) { message += " — did you mean '\(suggestion)'?" }
            if !known.isEmpty { message += " (layers: \(known.joined(separator: ", ")))" }
            return message
        case .layerExists(let name):
            return "layer '\(name)' already exists; use --replace to overwrite it"
        case .invalidLayerName(let name, let reason):
            return "invalid layer name '\(name)': \(reason)"
        case .corruptGeometry(let reason):
            return "corrupt geometry: \(reason)"
        case .readOnly(let path):
            return "\(path) is open read-only"
        case .importFailed(let file, let problems):
            let shown = problems.prefix(20).map { "  - \($0)" }.joined(separator: "\n")
            let more = problems.count > 20 ? "\n  … and \(problems.count - 20) more" : ""
            return "import of \(file) failed; the store is unchanged:\n\(shown)\(more)"
        case .unsupportedFormat(let file, let reason):
            return "cannot import \(file): \(reason)"
        }
    }
}

/// One problem with one input record. `location` names the feature (index and id) or the
/// line of a CSV file.
public struct ImportProblem: Sendable, CustomStringConvertible, Equatable {
    public var location: String
    public var message: String

    public init(location: String, message: String) {
        self.location = location
        self.message = message
    }

    public var description: String { location.isEmpty ? message : "\(location): \(message)" }
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
