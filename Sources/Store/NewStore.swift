// Writing into a store that may not exist yet: `vltava import` and `vltava indoor import`
// alike. A new store is built in a scratch file beside its path and renamed into place only
// when the write succeeded, so a failed import leaves no file behind (not even an empty
// GeoPackage), and the data is written once, not through a WAL.

import Foundation

extension GeoPackage {
    /// The new store could not be renamed into place.
    struct MoveFailed: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs `write` on the store at `path`, opened read-write. An existing store is written in
    /// place (each write keeps to its own transaction). A new one is built in a scratch file
    /// beside it, whose rollback journal stays small (the pages of a new file need no journal)
    /// and whose writes are not synced one by one, then renamed to `path` once `write` returns;
    /// when `write` throws, the scratch file goes and nothing is left at `path`.
    public static func write<T>(at path: String, _ write: (GeoPackage) throws -> T) throws -> T {
        if FileManager.default.fileExists(atPath: path) {
            return try write(try GeoPackage(path: path, mode: .readWrite))
        }
        let scratch = path + ".importing-\(ProcessInfo.processInfo.processIdentifier)"
        func removeScratch() { for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: scratch + suffix) } }
        removeScratch()
        do {
            let result: T
            do {
                let store = try GeoPackage(path: scratch, mode: .readWrite)
                try store.sqlite { try store.database.execute("PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF") }
                result = try write(store)
                // Every store is in WAL mode (readers never wait for a writer); synced once.
                try store.sqlite { try store.database.execute("PRAGMA synchronous = NORMAL; PRAGMA journal_mode = WAL") }
            }  // closed here
            guard renameFile(scratch, to: path) else {
                throw MoveFailed(description: "cannot move the new store into place at \(path): \(String(cString: strerror(errno)))")
            }
            return result
        } catch {
            removeScratch()
            throw error
        }
    }
}

/// POSIX rename(2), atomic within a file system (inside `GeoPackage`, `rename` is its layers').
private func renameFile(_ from: String, to: String) -> Bool {
    rename(from, to) == 0
}
