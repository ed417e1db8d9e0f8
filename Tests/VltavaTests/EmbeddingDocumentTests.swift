import Foundation
import TestSupport
import Testing

/// Every Swift sample of docs/EMBEDDING.md must be a slice of a file that is compiled: a snippet
/// (Snippets/, built by `swift build`) or the example app (built by its own test in CI). So a
/// sample cannot drift into code that no longer builds.
@Suite(.validatesStores) struct EmbeddingDocumentTests {
    /// The lines without the indentation they share, so a sample may be shown less indented
    /// than where it sits.
    static func dedented(_ lines: ArraySlice<String>) -> [String] {
        let indent = lines.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return lines.map { String($0.dropFirst(min(indent, $0.prefix { $0 == " " }.count))) }
    }

    static func swiftFiles(under folder: URL) -> [URL] {
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        return files.filter { $0.pathExtension == "swift" }
    }

    @Test func everySwiftSampleIsCompiledCode() throws {
        let document = try String(contentsOf: Fixtures.root.appendingPathComponent("docs/EMBEDDING.md"), encoding: .utf8)
        let lines = document.components(separatedBy: "\n")
        var samples: [[String]] = []
        var i = 0
        while i < lines.count {
            guard lines[i] == "```swift" else { i += 1; continue }
            let end = lines[(i + 1)...].firstIndex(of: "```") ?? lines.count
            samples.append(Self.dedented(lines[(i + 1)..<end]))
            i = end + 1
        }
        #expect(samples.count >= 10)

        // The example's own files only: its .build holds the checkouts of its dependencies.
        let example = Fixtures.root.appendingPathComponent("Examples/AirQualityServer")
        let sources = Self.swiftFiles(under: Fixtures.root.appendingPathComponent("Snippets"))
            + Self.swiftFiles(under: example.appendingPathComponent("Sources")) + Self.swiftFiles(under: example.appendingPathComponent("Tests"))
            + [example.appendingPathComponent("Package.swift")]
        let files = try sources.map { try String(contentsOf: $0, encoding: .utf8).components(separatedBy: "\n") }
        for sample in samples {
            let found = files.contains { file in
                file.count >= sample.count && (0...(file.count - sample.count)).contains { start in
                    Self.dedented(file[start..<(start + sample.count)]) == sample
                }
            }
            #expect(found, "not a slice of Snippets/ or Examples/AirQualityServer:\n\(sample.joined(separator: "\n"))")
        }
    }
}
