// Every store the test suite writes passes GDAL's validate_gpkg.py: suites carry the
// `.validatesStores` trait, which collects the temporary directories a test makes
// (`Fixtures.temporaryDirectory`) and, when the test ends, checks every GeoPackage in them in
// one run of the validator. Files edited past the importers (`RawStoreEdits`), which tests
// damage on purpose, are left out; so are files that are not GeoPackages (MBTiles, CSV).

import Foundation
import Testing

/// The directories and exclusions of one running test.
public final class StoreSweep: @unchecked Sendable {
    public init() {}
    @TaskLocal public static var current: StoreSweep?

    private let lock = NSLock()
    private var directories: [URL] = []
    private var excluded: Set<String> = []

    func add(_ directory: URL) {
        lock.lock()
        defer { lock.unlock() }
        directories.append(directory)
    }

    func exclude(_ path: String) {
        lock.lock()
        defer { lock.unlock() }
        excluded.insert(URL(fileURLWithPath: path).standardizedFileURL.path)
    }

    /// The GeoPackages (SQLite files with application id 'GPKG') under the test's directories.
    public func stores() -> [String] {
        lock.lock()
        let (directories, excluded) = (self.directories, self.excluded)
        lock.unlock()
        var found: [String] = []
        for directory in directories {
            guard let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in walker {
                let path = url.standardizedFileURL.path
                if !excluded.contains(path), StoreSweep.isGeoPackage(path) { found.append(path) }
            }
        }
        return found.sorted()
    }

    static func isGeoPackage(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 72), head.count == 72 else { return false }
        let bytes = [UInt8](head)
        return bytes.starts(with: Array("SQLite format 3\0".utf8)) && Array(bytes[68..<72]) == Array("GPKG".utf8)
    }
}

/// Validates every store a test wrote (see `StoreSweep`).
public struct ValidatesStores: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        // Once per test function (its cases included), not again for the suite around it.
        guard !test.isSuite, StoreSweep.current == nil else { return try await function() }
        let sweep = StoreSweep()
        try await StoreSweep.$current.withValue(sweep) { try await function() }
        let stores = sweep.stores()
        if let problem = try GeoPackageValidator.problems(stores) {
            Issue.record(Comment(rawValue: problem))
        }
    }
}

extension Trait where Self == ValidatesStores {
    /// Every GeoPackage the test writes in its temporary directories passes validate_gpkg.py.
    public static var validatesStores: Self { ValidatesStores() }
}
