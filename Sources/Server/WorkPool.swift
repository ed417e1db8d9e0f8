// The pool the heavy endpoints run their work on (/v1/query, /v1/schedule/check, /v1/route,
// tiles), so that a flood of them cannot starve the light ones (containing, nearest, here, air).
//
// Why threads of its own: the engine's operations are synchronous computations. Run inline,
// a heavy request holds one of the few threads of Swift's cooperative pool (two on a 2-core
// machine) for as long as it computes, and the light requests queue behind it. The pool's
// threads are few (`ServerConfiguration.heavyWorkers`), run at a lower priority (nice 10:
// when a light request and heavy work both want a core, the light request gets it), and take
// jobs from a queue of bounded length; a job beyond it is refused at once with 503 `busy`
// (Retry-After: 1) instead of waiting behind work it cannot overtake. A job that waited in the
// queue longer than `heavyQueueTimeout` (5 s, a request's allowance of work) is refused the
// same way when its turn comes, so no answer comes after the client has long given up.

import Geometry
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

final class WorkPool: Sendable {
    struct Job {
        let enqueued: UInt64
        /// Runs the work, or (`expired`) answers busy without running it.
        let run: @Sendable (_ expired: Bool) -> Void
    }

    private struct State {
        var jobs: [Job] = []
        /// The index of the next job in `jobs` (taken jobs are dropped in batches).
        var head = 0
        var running = 0
        var stopped = false
        var threadsStarted = false
        var refused = 0
        var queuedCount: Int { jobs.count - head }
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
    /// once when every thread is working and the queue is full, or when the job waited longer
    /// than `maxWait`.
    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        startThreadsOnce()
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let job = Job(enqueued: DispatchTime.now().uptimeNanoseconds) { expired in
                if expired {
                    continuation.resume(throwing: APIError.busy())
                } else {
                    continuation.resume(with: Result { try work() })
                }
            }
            let admitted = state.withLock { state -> Bool in
                guard !state.stopped, state.queuedCount + state.running < threads + queueLimit else {
                    state.refused += 1
                    return false
                }
                state.jobs.append(job)
                return true
            }
            if admitted {
                available.signal()
            } else {
                continuation.resume(throwing: APIError.busy())
            }
        }
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
            let expired = DispatchTime.now().uptimeNanoseconds &- job.enqueued > maxWait
            if expired { state.withLock { $0.refused += 1 } }
            job.run(expired)
            state.withLock { $0.running -= 1 }
        }
    }
}
