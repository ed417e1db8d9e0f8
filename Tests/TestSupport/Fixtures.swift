// Locates the repository's Fixtures/ folder from this source file, so tests read the project's
// own copies of the data and never ../shared.

import Foundation

public enum Fixtures {
    /// The repository root (the folder holding Package.swift).
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // TestSupport
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()

    /// `Fixtures/<relativePath>`.
    public static func url(_ relativePath: String) -> URL {
        root.appendingPathComponent("Fixtures").appendingPathComponent(relativePath)
    }

    public static func path(_ relativePath: String) -> String {
        url(relativePath).path
    }

    /// A fresh, empty temporary directory for one test.
    public static func temporaryDirectory(_ label: String = "vltava-test") throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
