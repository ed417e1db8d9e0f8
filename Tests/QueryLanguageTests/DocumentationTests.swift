import Engine
import Foundation
import Geometry
import QueryLanguage
import Support
import TestSupport
import Testing

/// Every example in docs/QUERY_LANGUAGE.md runs against the demo store and must print exactly
/// the output block that follows it, so the document cannot drift from the language.
/// `VLTAVA_UPDATE_DOCS=1` rewrites the output blocks instead (then review the diff).
@Suite(.validatesStores) struct DocumentationTests {
    static let document = Fixtures.root.appendingPathComponent("docs/QUERY_LANGUAGE.md")

    struct Example {
        var query: String
        var format: String
        /// Line range of the output block's body in the document.
        var outputLines: Range<Int>
        var expected: String
    }

    static func examples(_ lines: [String]) -> [Example] {
        var examples: [Example] = []
        var i = 0
        while i < lines.count {
            guard lines[i].hasPrefix("```vq") else { i += 1; continue }
            let format = lines[i].dropFirst(5).trimmingCharacters(in: .whitespaces)
            var j = i + 1
            while j < lines.count && lines[j] != "```" { j += 1 }
            let query = lines[(i + 1)..<j].joined(separator: "\n")
            // The output block follows directly.
            let open = j + 1
            var close = open + 1
            while close < lines.count && lines[close] != "```" { close += 1 }
            examples.append(Example(query: query, format: format.isEmpty ? "table" : format, outputLines: (open + 1)..<close,
                                    expected: lines[(open + 1)..<min(close, lines.count)].joined(separator: "\n")))
            i = close + 1
        }
        return examples
    }

    static let documentationWidth = 120

    static func output(of query: String, format: String, on snapshot: Snapshot) -> String {
        do {
            let results = try Query.run(query, on: snapshot)
            switch format {
            case "json": return JSON.serialize(results.count == 1 ? results[0].json() : .array(results.map { $0.json() }), pretty: true)
            // Several statements as GeoJSON: one FeatureCollection, as every interface writes it.
            case "geojson": return JSON.serialize((try? JSON.parse(QueryResult.write(results, geoJSON: true))) ?? .null, pretty: true)
            // CSV as the CLI prints it: its CRLF line ends shown as plain lines.
            case "csv": return String(decoding: try QueryResult.csv(results), as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n")
                .trimmingCharacters(in: .newlines)
            // Tables as the CLI shows them in a terminal 120 columns wide (wider rows as records),
            // then their warnings as the CLI prints them (on stderr).
            default: return results.map { ([$0.table(width: documentationWidth)] + $0.warnings.map { "warning: " + $0 }).joined(separator: "\n") }
                .joined(separator: "\n\n")
            }
        } catch {
            return error.rendered(in: query)
        }
    }

    @Test func everyExampleMatchesItsOutput() throws {
        let snapshot = try QueryStore.get()
        let text = try String(contentsOf: Self.document, encoding: .utf8)
        var lines = text.components(separatedBy: "\n")
        let examples = Self.examples(lines)
        #expect(examples.count >= 25)
        if ProcessInfo.processInfo.environment["VLTAVA_UPDATE_DOCS"] == "1" {
            for example in examples.reversed() {
                let output = Self.output(of: example.query, format: example.format, on: snapshot)
                lines.replaceSubrange(example.outputLines, with: output.components(separatedBy: "\n"))
            }
            try lines.joined(separator: "\n").write(to: Self.document, atomically: true, encoding: .utf8)
            return
        }
        for example in examples {
            let output = Self.output(of: example.query, format: example.format, on: snapshot)
            #expect(output == example.expected, "\(example.query)")
        }
    }
}
