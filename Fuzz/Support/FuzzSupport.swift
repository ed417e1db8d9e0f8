// Shared by every fuzz target (compiled into each by scripts/fuzz.sh): the input as bytes,
// the repository's fixtures, scratch files, and how a broken invariant is reported.

import Foundation

enum FuzzSupport {
    /// The repository root: scripts/fuzz.sh passes it; a binary run by hand finds it from
    /// this file's path (Fuzz/Support/FuzzSupport.swift).
    static let root: String = ProcessInfo.processInfo.environment["VLTAVA_ROOT"]
        ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    static func fixture(_ relativePath: String) -> String { root + "/Fixtures/" + relativePath }

    /// libFuzzer's input copied into an array, the type the readers take.
    static func bytes(_ start: UnsafeRawPointer, _ count: Int) -> [UInt8] {
        Array(UnsafeRawBufferPointer(start: start, count: count))
    }

    /// A fresh directory under $TMPDIR (scripts/fuzz.sh points that at the run's own folder,
    /// removed after the run).
    static func scratchDirectory(_ label: String) -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            fail("cannot create a scratch directory \(url.path): \(error)")
        }
        return url.path
    }

    /// A broken invariant, or a harness that cannot start. Aborting is how a libFuzzer target
    /// reports: the fuzzer stops, prints the stack and saves the input that got here.
    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("fuzz target: \(message)\n".utf8))
        abort()
    }
}
