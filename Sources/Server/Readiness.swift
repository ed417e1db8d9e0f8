// `/readyz`: whether data requests can be answered now, as a load balancer or an orchestrator's
// readiness probe asks (`/healthz` answers for the process: it stays 200 while the store's
// database is down). Ready means a snapshot is loaded and its store is there: a GeoPackage once
// loaded, a PostGIS store when its database answers `SELECT 1` within `timeout` on the pool.
// The check's answer is kept for `maxAge`, and probes that arrive while one runs wait for it, so
// a storm of probes makes at most a few statements a second, never one each.

import Dispatch
import Engine
import Geometry
import Support

final class Readiness: Sendable {
    static let maxAgeNanoseconds: UInt64 = 250_000_000
    static let timeoutSeconds = 1.0

    private struct State {
        var last: (at: UInt64, result: Result<Void, APIError>)?
        var checking = false
        var waiting: [CheckedContinuation<Result<Void, APIError>, Never>] = []
    }

    private let state = Locked(State())
    /// The check blocks (a statement, or its timeout): off the concurrency pool.
    private let queue = DispatchQueue(label: "vltava.readiness")

    /// The last check's answer if it is recent enough, else `check`'s, run now.
    func current(_ check: @escaping @Sendable () -> Result<Void, APIError>) async -> Result<Void, APIError> {
        await withCheckedContinuation { continuation in
            let now = DispatchTime.now().uptimeNanoseconds
            let start = state.withLock { state -> Bool in
                if let last = state.last, now &- last.at <= Readiness.maxAgeNanoseconds {
                    continuation.resume(returning: last.result)
                    return false
                }
                state.waiting.append(continuation)
                defer { state.checking = true }
                return !state.checking
            }
            guard start else { return }
            queue.async { [self] in
                let result = check()
                let waiting = state.withLock { state in
                    defer { state.waiting.removeAll() }
                    state.last = (DispatchTime.now().uptimeNanoseconds, result)
                    state.checking = false
                    return state.waiting
                }
                for waiter in waiting { waiter.resume(returning: result) }
            }
        }
    }
}
