// Giving freed memory back to the system. glibc's malloc keeps what a program frees in its
// arenas for reuse, so the process's RSS only grows: measured with the 200,000-polygon store,
// RSS went from 276 MB after the first load to 730–840 MB after 10 reloads, though each reload
// frees the old snapshot. Trimming once a snapshot is gone returns its whole free pages: RSS
// then stays at 410–580 MB over 10 reloads (527 MB after the tenth). What remains is
// fragmentation: a snapshot's many small per-feature allocations interleave with the next
// one's, so few pages come free whole. The large polygon layers are therefore not in the heap
// at all: they are mapped from the store's snapshot file (SnapshotFile.swift), and unmapped
// whole when the last request on their snapshot finishes; the trim still serves the small
// layers and the per-request garbage.

#if canImport(Glibc)
import CMalloc
#endif
import Dispatch

enum Memory {
    private static let trimQueue = DispatchQueue(label: "vltava.memory-trim", qos: .utility)

    /// Returns the free pages of every malloc arena to the system, off the caller's thread
    /// (a trim walks the whole heap: milliseconds for a large one).
    static func returnFreedPages() {
        #if canImport(Glibc)
        trimQueue.async { _ = malloc_trim(0) }
        #endif
    }

    /// As `returnFreedPages`, on the caller's thread, done when it returns: between the phases
    /// of a large build, so that the next phase's fresh allocations do not add to the pages
    /// the last one freed but kept.
    static func returnFreedPagesNow() {
        #if canImport(Glibc)
        _ = malloc_trim(0)
        #endif
    }
}
