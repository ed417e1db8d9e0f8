// The server's view of the engine: loading (answer 503), ready (an Engine whose snapshot
// each request takes once and keeps to its end), or failed to load. Reloads run one at a time
// on their own thread: loading is seconds of synchronous work that must not occupy one of the
// few threads Swift concurrency has for answering requests.

import Geometry
import Dispatch
import Engine
import Foundation
import Store

public final class EngineState: Sendable {
    enum Phase {
        case loading
        case ready(Engine)
        case failed(String)
    }

    private let phase = Locked(Phase.loading)
    /// One reload at a time, off the concurrency pool.
    private let queue = DispatchQueue(label: "vltava.reload")
    /// Writes and the change feed's reads, in order, off the concurrency pool.
    private let writes = DispatchQueue(label: "vltava.writes")
    /// A change notification has asked for a reload that has not started yet.
    private let reloadPending = Locked(false)
    let metrics: HTTPMetrics
    private let readiness = Readiness()
    /// Wakes the change feed's streams when a write commits.
    let changeSignal = ChangeSignal()

    init(metrics: HTTPMetrics) {
        self.metrics = metrics
    }

    /// The snapshot a request works on from start to end.
    func snapshot() throws(APIError) -> Snapshot {
        let phase = phase.withLock { $0 }
        switch phase {
        case .ready(let host): return host.snapshot
        case .loading: throw .loading()
        case .failed(let message):
            throw APIError(.serviceUnavailable, code: "snapshot_unavailable", detail: "the data could not be loaded: \(message)")
        }
    }

    /// Whether data requests can be answered now (`/readyz`): a snapshot is loaded and its store
    /// answers (Readiness.swift keeps the answer for a moment).
    func ready() async -> Result<Void, APIError> {
        await readiness.current { [self] in
            Result { () throws(APIError) in
                guard case .ready(let host) = phase.withLock({ $0 }) else { _ = try snapshot(); return }
                do throws(EngineError) { try host.source.checkReady(timeout: Readiness.timeoutSeconds) } catch { throw APIError.engine(error) }
            }
        }
    }

    /// The current snapshot when there is one (health and metrics).
    var currentSnapshot: Snapshot? {
        if case .ready(let host) = phase.withLock({ $0 }) { return host.snapshot }
        return nil
    }

    /// Loads the first snapshot with `load` on the reload thread; until it is done every data
    /// request is answered 503.
    func loadFirst(_ load: @escaping @Sendable () throws -> Engine) async throws {
        do {
            let host = try await onQueue(load)
            phase.withLock { $0 = .ready(host) }
            describeTileSets(host.snapshot)
            // A store that tells of its changes (PostGIS: LISTEN/NOTIFY) is reloaded when it
            // does: requests keep answering from the old snapshot meanwhile. A burst of
            // notifications makes one reload after the one running, not one each.
            _ = host.source.watchChanges { [self] in
                guard reloadPending.withLock({ pending in defer { pending = true }; return !pending }) else { return }
                Task {
                    try? await Task.sleep(for: .milliseconds(50))
                    reloadPending.withLock { $0 = false }
                    _ = try? await reload()
                }
            }
        } catch {
            phase.withLock { $0 = .failed("\(error)") }
            throw error
        }
    }

    /// Builds a new snapshot from the store and swaps it in; requests in flight keep the old one.
    /// If loading fails the old snapshot stays and the error is thrown.
    func reload() async throws -> Snapshot {
        guard case .ready(let host) = phase.withLock({ $0 }) else { throw APIError.loading() }
        do {
            let fresh = try await onQueue { try host.reload() }
            metrics.reloaded(ok: true)
            describeTileSets(fresh)
            return fresh
        } catch {
            metrics.reloaded(ok: false)
            throw error
        }
    }

    /// Applies a write batch on the writes' own thread (an fsync and a layer's rebuild are
    /// synchronous work); the next request sees it, and the change feed's streams wake.
    func write(_ batch: WriteBatch) async throws -> WriteReceipt {
        try await writing { host throws(APIError) in try engine { () throws(EngineError) in try host.write(batch) } }
    }

    /// Runs `work`, which may write through the engine, on the writes' thread; the change
    /// feed's streams wake afterwards, whether it ended well or not (a script may have written
    /// before a later statement failed).
    func writing<T: Sendable>(_ work: @escaping @Sendable (Engine) throws -> T) async throws -> T {
        guard case .ready(let host) = phase.withLock({ $0 }) else { _ = try snapshot(); throw APIError.loading() }
        defer { changeSignal.published() }
        return try await onWrites { try work(host) }
    }

    /// The change feed after `since`.
    func changes(since: Int64, limit: Int) async throws -> [Change] {
        guard case .ready(let host) = phase.withLock({ $0 }) else { _ = try snapshot(); throw APIError.loading() }
        return try await onWrites { () throws(APIError) in try engine { () throws(EngineError) in try host.changes(since: since, limit: limit) } }
    }

    private func onWrites<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            writes.async { continuation.resume(with: Result { try work() }) }
        }
    }

    /// Reads what each tile set's tiles hold (TileJSON's vector_layers, from the tiles when
    /// the metadata says nothing) on the reload thread once a snapshot is in, so the first
    /// TileJSON request rarely waits for it (the zoo's: 0.1 s, several in a debug build).
    private func describeTileSets(_ snapshot: Snapshot) {
        queue.async { for set in snapshot.tileSets.values { _ = set.contents } }
    }

    private func onQueue<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }
}

/// Wakes the change feed's event streams: each stream subscribes, and is woken when a write
/// commits, or every `heartbeat` so it can tell a silent client it is still there. A wake
/// only says "look again": the stream reads the changes from the store, so a wake lost to a
/// full buffer loses nothing.
final class ChangeSignal: Sendable {
    enum Wake: Sendable { case written, heartbeat }

    private let subscribers = Locked<(next: UInt64, all: [UInt64: AsyncStream<Wake>.Continuation])>((0, [:]))

    /// A stream of wakes, until `cancel` with the token.
    func subscribe(heartbeat: Duration) -> (wakes: AsyncStream<Wake>, token: UInt64) {
        let (stream, continuation) = AsyncStream.makeStream(of: Wake.self, bufferingPolicy: .bufferingNewest(1))
        let token = subscribers.withLock { state in
            state.next += 1
            state.all[state.next] = continuation
            return state.next
        }
        let beat = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: heartbeat)
                continuation.yield(.heartbeat)
            }
        }
        continuation.onTermination = { _ in beat.cancel() }
        return (stream, token)
    }

    func cancel(_ token: UInt64) {
        subscribers.withLock { $0.all.removeValue(forKey: token) }?.finish()
    }

    func published() {
        for continuation in subscribers.withLock({ Array($0.all.values) }) { continuation.yield(.written) }
    }
}
