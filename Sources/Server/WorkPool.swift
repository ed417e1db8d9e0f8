// The pool the heavy endpoints run their work on (/v1/query, /v1/schedule/check, /v1/route,
// tiles), so that a flood of them cannot starve the light ones (containing, nearest, here, air).
//
// Why threads of its own: the engine's operations are synchronous computations. Run inline,
// a heavy request holds one of the few threads of Swift's cooperative pool (two on a 2-core
// machine) for as long as it computes, and the light requests queue behind it. The pool's
// threads are few (`ServerConfiguration.heavyWorkers`), run at a lower priority (nice 10:
// when a light request and heavy work both want a core, the light request gets it), and take
// jobs from a queue of bounded length; a job beyond it is refused at once with 503 `busy`
// (Retry-After: 1) instead of waiting behind work it cannot overtake. A job still queued when
// `heavyQueueTimeout` (5 s, a request's allowance of work) has passed is refused the same way
// at that moment, by a timer of its own: not when a thread frees up, which behind a long job
// could be much later. A job whose client has left (`Cancellation`, set by the connection) is
// dropped when its turn comes, without running; running work sees the same flag through its
// deadline and stops at its next check.

import Engine
import Geometry
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
import Support
#endif

final class WorkPool: Sendable {
    struct Job {
        let id: UInt64
        let enqueued: UInt64
        /// Runs the work.
        let run: @Sendable () -> Void
        /// Answers busy without running (also to a client that left: it reads nothing).
        let refuse: @Sendable () -> Void
        let cancellation: Cancellation?
        /// Refuses the job if it is still queued when its wait has passed `maxWait`.
        let expiry: DispatchWorkItem
    }

    private struct State {
        var jobs: [Job] = []
        /// The index of the next job in `jobs` (taken jobs are dropped in batches).
        var head = 0
        var running = 0
        var stopped = false
        var threadsStarted = false
        var refused = 0
        var nextID: UInt64 = 0
        var queuedCount: Int { jobs.count - head }

        /// Takes queued job `id` out of the queue; nil when a thread has taken it already.
        mutating func remove(_ id: UInt64) -> Job? {
            guard let index = jobs[head...].firstIndex(where: { $0.id == id }) else { return nil }
            return jobs.remove(at: index)
        }
    }

    let threads: Int
    let queueLimit: Int
    /// Nanoseconds a job may wait in the queue before it is answered busy instead.
    let maxWait: UInt64
    let niceness: Int32
    private let state = Locked(State())
    /// One signal per queued job (and one per thread at shutdown).
    private let available = DispatchSemaphore(value: 0)

    init(threads: Int, queueLimit: Int, maxWaitSeconds: Double, niceness: Int32 = 10) {
        self.threads = max(1, threads)
        self.queueLimit = max(0, queueLimit)
        maxWait = UInt64(max(0, min(maxWaitSeconds, 3600)) * 1e9)
        self.niceness = niceness
    }

    /// Jobs queued, jobs running, and jobs refused since the start (for /metrics).
    var counts: (queued: Int, running: Int, refused: Int) {
        state.withLock { ($0.queuedCount, $0.running, $0.refused) }
    }

    /// Runs `work` on one of the pool's threads and returns its result; throws 503 `busy` at
    /// once when every thread is working and the queue is full, or as soon as the job has
    /// waited `maxWait` in the queue. `cancellation` is the request's: set while the job waits,
    /// the job is dropped unrun; the caller's task being cancelled sets it.
    func run<T: Sendable>(cancellation: Cancellation? = nil, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        startThreadsOnce()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                enqueue(cancellation: cancellation,
                        run: { continuation.resume(with: Result { try work() }) },
                        refuse: { continuation.resume(throwing: APIError.busy()) })
            }
        } onCancel: {
            cancellation?.cancel()
        }
    }

    private func enqueue(cancellation: Cancellation?, run: @escaping @Sendable () -> Void, refuse: @escaping @Sendable () -> Void) {
        let expiry = state.withLock { state -> DispatchWorkItem? in
            guard !state.stopped, state.queuedCount + state.running < threads + queueLimit else {
                state.refused += 1
                return nil
            }
            state.nextID += 1
            let id = state.nextID
            let expiry = DispatchWorkItem { [weak self] in
                let expired = self?.state.withLock { state -> Job? in
                    guard let job = state.remove(id) else { return nil }
                    state.refused += 1
                    return job
                }
                expired?.refuse()
            }
            state.jobs.append(Job(id: id, enqueued: DispatchTime.now().uptimeNanoseconds, run: run, refuse: refuse, cancellation: cancellation, expiry: expiry))
            return expiry
        }
        guard let expiry else { return refuse() }
        // A thread that took the job already has cancelled the timer: then it never runs.
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(maxWait)), execute: expiry)
        available.signal()
    }

    /// Ends the threads once the jobs queued now are done.
    func stop() {
        let started = state.withLock { state -> Bool in
            state.stopped = true
            return state.threadsStarted
        }
        if started { for _ in 0..<threads { available.signal() } }
    }

    private func startThreadsOnce() {
        let start = state.withLock { state -> Bool in
            defer { state.threadsStarted = true }
            return !state.threadsStarted && !state.stopped
        }
        guard start else { return }
        for i in 0..<threads {
            let thread = Thread { [self] in work() }
            thread.name = "vltava-heavy-\(i)"
            thread.start()
        }
    }

    private func work() {
        #if canImport(Glibc)
        // On Linux the nice value is per thread, and `who` 0 is the calling thread.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness)
        #endif
        while true {
            available.wait()
            let next = state.withLock { state -> Job? in
                guard state.head < state.jobs.count else { return nil }
                let job = state.jobs[state.head]
                state.head += 1
                // Drop taken jobs now and then rather than shifting the array on every take.
                if state.head > 64 && state.head * 2 > state.jobs.count {
                    state.jobs.removeFirst(state.head)
                    state.head = 0
                }
                state.running += 1
                return job
            }
            guard let job = next else {
                // No job with this signal: the pool is stopping.
                if state.withLock({ $0.stopped }) { return }
                continue
            }
            job.expiry.cancel()
            // Past its bound already (its timer is late on a loaded machine), or its client left.
            let expired = DispatchTime.now().uptimeNanoseconds &- job.enqueued > maxWait
            if expired { state.withLock { $0.refused += 1 } }
            if expired || job.cancellation?.isCancelled ?? false {
                job.refuse()
            } else {
                job.run()
            }
            state.withLock { $0.running -= 1 }
        }
    }
}
