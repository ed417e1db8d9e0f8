// The server's view of the engine: loading (answer 503), ready (an Engine whose snapshot
// each request takes once and keeps to its end), or failed to load. Reloads run one at a time
// on their own thread: loading is seconds of synchronous work that must not occupy one of the
// few threads Swift concurrency has for answering requests.

import Geometry
import Dispatch
import Engine
import Foundation
import Store
import Support

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
    /// What change notifications asked for that has not started yet, and whether a task is
    /// following them (`follow`).
    private let following = Locked((running: false, rows: false, layers: false))
    let metrics: HTTPMetrics
    private let readiness = Readiness()
    /// Wakes the change feed's streams when a write commits.
    let changeSignal = ChangeSignal()
    /// Wakes the fences' event streams (and the webhooks' deliveries) when the hub has new events.
    let eventSignal = ChangeSignal()
    /// Delivers events to the webhooks the engine has (Webhooks.swift).
    let webhooks: WebhookDispatcher

    init(metrics: HTTPMetrics, webhookCAFile: String? = nil) {
        self.metrics = metrics
        webhooks = WebhookDispatcher(caFile: webhookCAFile)
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

    /// The engine, once loaded (503 until then).
    func host() throws(APIError) -> Engine {
        guard case .ready(let host) = phase.withLock({ $0 }) else { _ = try snapshot(); throw APIError.loading() }
        return host
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

    /// The store's source once loaded (its own metrics).
    var currentSource: (any SnapshotSource)? {
        if case .ready(let host) = phase.withLock({ $0 }) { return host.source }
        return nil
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
            // Fences' streams wake on the hub's events; objects whose time ran out leave each second.
            _ = host.live.listen { [eventSignal] in eventSignal.published() }
            webhooks.reconcile(host)
            Task.detached {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    host.live.expire()
                }
            }
            // A store that tells of its changes (PostGIS: LISTEN/NOTIFY) is followed when it does.
            _ = host.source.watchChanges { [self] change in follow(change) }
        } catch {
            phase.withLock { $0 = .failed("\(error)") }
            throw error
        }
    }

    /// Follows the store's change notifications: rows another process changed are caught up
    /// with (`Engine.catchUp`: the changed layers rebuilt, on the writes' thread, between this
    /// server's own writes), and anything else is a reload. Requests keep answering from the
    /// old snapshot meanwhile. One task at a time: a burst of notifications while it works makes
    /// one more round after it, not one each.
    private func follow(_ change: StoreChange) {
        let start = following.withLock { state in
            if change == .rows { state.rows = true } else { state.layers = true }
            defer { state.running = true }
            return !state.running
        }
        guard start, case .ready(let host) = phase.withLock({ $0 }) else { return }
        Task {
            while true {
                let next = following.withLock { state in
                    defer { (state.rows, state.layers) = (false, false) }
                    if !state.rows && !state.layers { state.running = false }
                    return state
                }
                guard next.rows || next.layers else { return }
                var reloading = next.layers
                if !reloading {
                    let caughtUp = try? await onWrites { () throws(EngineError) in try host.catchUp() }
                    reloading = caughtUp != true
                    if caughtUp == true { changeSignal.published() }
                }
                if reloading { _ = try? await reload() }
            }
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

    /// A check of the snapshot a write goes over, made under the update lock (If-Match).
    typealias Precondition = @Sendable (Snapshot) throws(APIError) -> Void

    /// A write waiting for the writes' thread.
    private struct PendingWrite: Sendable {
        let batch: WriteBatch
        let precondition: Precondition?
        let done: CheckedContinuation<WriteReceipt, any Error>
        /// The request's budget, from when it queued (`maxRequestSeconds`).
        let deadline: Deadline

        /// Refuses the write, unapplied, if it waited for the writes' thread past its budget
        /// (a reload, a long batch ahead of it): its client is told to try again (503), never
        /// left waiting on a write it may have given up on. True when refused.
        func refusedIfLate() -> Bool {
            guard deadline.hasPassed else { return false }
            done.resume(throwing: APIError.engine(.write(
                code: "deadline_exceeded", category: .unavailable,
                message: "the write waited \(deadline.seconds) s for the writes before it and was not applied; try again")))
            return true
        }
    }

    private let pending = Locked<[PendingWrite]>([])
    /// A reload that folds a mapped layer's written features into a fresh snapshot file has
    /// been asked for and has not ended.
    private let compacting = Locked(false)

    /// Applies a write batch on the writes' own thread (an fsync and a layer's rebuild are
    /// synchronous work); the next request sees it, and the change feed's streams wake.
    /// Batches that arrive while others are being written wait and are then written together
    /// (group commit: one transaction, a savepoint each, one fsync, one snapshot), so
    /// concurrent writers share the costs that do not grow with a batch. Each is still all or
    /// nothing, and refused alone.
    func write(_ batch: WriteBatch, precondition: Precondition? = nil) async throws -> WriteReceipt {
        guard case .ready(let host) = phase.withLock({ $0 }) else { _ = try snapshot(); throw APIError.loading() }
        defer { changeSignal.published() }
        return try await withCheckedThrowingContinuation { continuation in
            let first = pending.withLock { waiting in
                waiting.append(PendingWrite(batch: batch, precondition: precondition, done: continuation,
                                            deadline: .after(seconds: host.snapshot.limits.maxRequestSeconds)))
                return waiting.count == 1
            }
            if first { writes.async { [self] in writePending(host) } }
        }
    }

    /// Adds scans to a venue's survey (`Engine.appendSurvey`) on the writes' own thread, after
    /// the batches queued before it; the next locate sees them.
    func appendSurvey(_ part: Venue) async throws -> IndoorVenue {
        guard case .ready(let host) = phase.withLock({ $0 }) else { _ = try snapshot(); throw APIError.loading() }
        return try await withCheckedThrowingContinuation { continuation in
            writes.async {
                do throws(EngineError) {
                    continuation.resume(returning: try host.appendSurvey(part))
                } catch {
                    continuation.resume(throwing: APIError.engine(error))
                }
            }
        }
    }

    /// Writes every batch waiting, in order: runs of batches without a precondition as one
    /// group, a batch with one alone, checked on the snapshot it goes over.
    private func writePending(_ host: Engine) {
        var waiting = pending.withLock { waiting in defer { waiting.removeAll() }; return waiting }[...]
        while let next = waiting.first {
            if next.refusedIfLate() {
                waiting.removeFirst()
                continue
            }
            if let precondition = next.precondition {
                waiting.removeFirst()
                do {
                    let receipt = try host.write(building: { (snapshot: Snapshot) throws(APIError) -> WriteBatch in
                        try precondition(snapshot)
                        return next.batch
                    })
                    guard let receipt else { throw APIError(.badRequest, code: "invalid_body", detail: "the write changes nothing") }
                    next.done.resume(returning: receipt)
                } catch let error as EngineError {
                    next.done.resume(throwing: APIError.engine(error))
                } catch {
                    next.done.resume(throwing: error)
                }
                continue
            }
            let taken = waiting.prefix { $0.precondition == nil }
            waiting.removeFirst(taken.count)
            let group = taken.filter { !$0.refusedIfLate() }
            if group.isEmpty { continue }
            do throws(EngineError) {
                let results = try host.write(group.map(\.batch))
                for (write, result) in zip(group, results) { write.done.resume(with: result.mapError(APIError.engine)) }
            } catch {
                for write in group { write.done.resume(throwing: APIError.engine(error)) }
            }
        }
        compactIfOutgrown(host)
    }

    /// Reloads, on the reload thread, once a mapped layer's written features outgrow what
    /// writes keep beside it (`Snapshot.hasOutgrownOverlay`): otherwise each write would cost
    /// more than the last until someone reloaded. Reads go on meanwhile; writes wait for it.
    private func compactIfOutgrown(_ host: Engine) {
        guard host.snapshot.hasOutgrownOverlay, compacting.withLock({ busy in defer { busy = true }; return !busy }) else { return }
        Task {
            _ = try? await reload()
            compacting.withLock { $0 = false }
        }
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
