// A value behind a lock, for the few pieces of shared mutable state (the engine's current
// snapshot, the router pools, the server's metrics and phase, an MBTiles connection).
//
// Why not the standard library's `Synchronization.Mutex`: on Linux it waits on futexes
// directly, which ThreadSanitizer cannot see, so a `swift test --sanitize=thread` run reported
// every access inside `Mutex.withLock` as a race (18 reports over the server and reload tests).
// A pthread mutex is what TSan intercepts, so its reports mean something again; uncontended,
// it costs the same tens of nanoseconds.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value while holding the lock; keep it short and never re-enter.
    @inline(__always)
    public func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
