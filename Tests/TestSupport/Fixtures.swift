// Locates the repository's Fixtures/ folder from this source file, so tests read the project's
// own copies of the data and never the team's shared data folder.

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

/// Runs the built `vltava` executable, as a user would from a shell.
public enum CLI {
    /// The folder with the built products: beside the running test binary.
    public static var binary: URL {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("vltava")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        return Fixtures.root.appendingPathComponent(".build/debug/vltava")
    }

    public struct Result {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// Runs `executable` (default: vltava) with `arguments` and returns its exit status and output.
    public static func run(_ arguments: [String], executable: URL? = nil, environment: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = executable ?? binary
        process.arguments = arguments
        process.currentDirectoryURL = Fixtures.root
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        // stderr goes to a file so that neither stream can fill a pipe and block the child.
        let errURL = FileManager.default.temporaryDirectory.appendingPathComponent("vltava-stderr-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errURL) }
        let out = Pipe()
        process.standardOutput = out
        process.standardError = try FileHandle(forWritingTo: errURL)
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let errData = (try? Data(contentsOf: errURL)) ?? Data()
        return Result(status: process.terminationStatus,
                      stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData, as: UTF8.self))
    }
}

/// A deterministic random generator (SplitMix64), so a failing property test can be replayed.
public struct SplitMix: RandomNumberGenerator {
    public var state: UInt64
    public init(state: UInt64) { self.state = state }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
