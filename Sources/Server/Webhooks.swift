// Delivers the fences' events to webhooks: one thread per webhook, reading the hub's event log in
// order from where it started. Each event is POSTed alone, as JSON (the same object a stream's
// `data:` carries), with its id in `Vltava-Event-Id` and an HMAC-SHA256 of the body under the
// webhook's secret in `Vltava-Signature: sha256=HEX` (GitHub's form). The next event waits until
// the receiver answered 2xx, so the order per object (and overall) is kept. A failed POST is
// tried again after 0.2 s, doubling to at most 10 s between tries; after 12 tries the event goes
// to the webhook's dead letters and delivery goes on. At least once: a receiver whose 2xx was
// lost gets the event again, with the same id, and drops it.
//
// Where a webhook starts: at the newest event when it was declared (or when the server
// started). Its place in the log is memory, like the log: events the ring dropped before they
// were delivered (a receiver down for longer than the ring holds) become one dead letter that
// says how many.

import Crypto
import Dispatch
import Engine
import Foundation
import Geometry
import Support

final class WebhookDispatcher: Sendable {
    struct DeadLetter: Sendable {
        var eventID: Int64?
        var reason: String
        var at: Double
    }

    struct Status: Sendable {
        var delivered = 0
        var attempts = 0
        /// The id of the last event delivered or given up on.
        var cursor: Int64
        var lastError: String?
        var deadLetters: [DeadLetter] = []
    }

    /// A webhook's delivery thread: stopped by setting `stopped` and waking it.
    private final class Worker: Sendable {
        let definition: WebhookDefinition
        let stopped = Locked(false)
        let wake = DispatchSemaphore(value: 0)
        let listening: Locked<UInt64?> = Locked(nil)

        init(definition: WebhookDefinition) {
            self.definition = definition
        }

        var isStopped: Bool { stopped.withLock { $0 } }

        /// Waits for new events (or `seconds`); false once stopped.
        func wait(_ seconds: Double) -> Bool {
            _ = wake.wait(timeout: .now() + seconds)
            return !isStopped
        }
    }

    static let maxAttempts = 12
    static let firstRetry = 0.2
    static let longestRetry = 10.0
    static let timeout = 5.0

    init(caFile: String? = nil) {
        tls = Result { () throws(WebhookClient.Failure) in
            do { return try WebhookTLS(caFile: caFile) } catch { throw WebhookClient.Failure(description: "\(error)") }
        }
    }

    /// What https:// receivers' certificates are checked against (a bad `--webhook-ca` file
    /// fails their deliveries with its reason, which `GET /v1/webhooks/{name}` shows).
    private let tls: Result<WebhookTLS, WebhookClient.Failure>
    private let workers = Locked<[String: Worker]>([:])
    private let statuses = Locked<[String: Status]>([:])

    /// Starts a thread for each webhook the engine has and no thread yet (or a changed one),
    /// and stops those of webhooks that are gone.
    func reconcile(_ engine: Engine) {
        let wanted = Dictionary(uniqueKeysWithValues: engine.webhooks.map { ($0.name, $0) })
        var started: [Worker] = []
        workers.withLock { workers in
            for (name, worker) in workers where wanted[name] != worker.definition {
                stop(worker, hub: engine.live)
                workers[name] = nil
            }
            for (name, definition) in wanted where workers[name] == nil {
                let worker = Worker(definition: definition)
                workers[name] = worker
                started.append(worker)
            }
        }
        statuses.withLock { $0 = $0.filter { wanted[$0.key] != nil } }
        for worker in started {
            let start = engine.live.lastEventID
            statuses.withLock { $0[worker.definition.name] = Status(cursor: start) }
            worker.listening.withLock { $0 = engine.live.listen { [worker] in worker.wake.signal() } }
            let thread = Thread { [self] in deliver(worker, from: start, hub: engine.live, limits: engine.limits.live) }
            thread.name = "vltava.webhook"
            thread.start()
        }
    }

    private func stop(_ worker: Worker, hub: LiveHub) {
        worker.stopped.withLock { $0 = true }
        if let token = worker.listening.withLock({ $0 }) { hub.stopListening(token) }
        worker.wake.signal()
    }

    func status(_ name: String) -> Status? { statuses.withLock { $0[name] } }

    private func deliver(_ worker: Worker, from start: Int64, hub: LiveHub, limits: LiveLimits) {
        let webhook = worker.definition
        var cursor = start
        while !worker.isStopped {
            let page = hub.events(after: cursor, fences: webhook.fences, limit: 100)
            if page.missed {
                let lost = (page.events.first?.id ?? page.last + 1) - cursor - 1
                record(webhook.name, limits) { $0.deadLetters.append(DeadLetter(eventID: nil, reason: "\(lost) events were dropped from the log before they could be sent", at: Date().timeIntervalSince1970)) }
            }
            for event in page.events {
                guard send(event, to: webhook, worker: worker, limits: limits) else { return }
                cursor = event.id
                record(webhook.name, limits) { $0.cursor = event.id }
            }
            if page.last != cursor || !page.events.isEmpty {
                cursor = max(cursor, page.last)
                continue
            }
            // Woken by new events; a heartbeat's worth of sleep otherwise.
            guard worker.wait(15) else { return }
        }
    }

    /// POSTs one event until it is taken or its tries run out. False when the webhook was
    /// deleted or changed meanwhile.
    private func send(_ event: FenceEvent, to webhook: WebhookDefinition, worker: Worker, limits: LiveLimits) -> Bool {
        var w = JSONWriter(reservingCapacity: 256)
        Output.fenceEvent(&w, event)
        let body = w.bytes
        let signature = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Data(webhook.secret.utf8)))
        let headers = [("Content-Type", "application/json"), ("Vltava-Event-Id", String(event.id)),
                       ("Vltava-Signature", "sha256=" + signature.map { String(format: "%02x", $0) }.joined())]
        var wait = Self.firstRetry
        for attempt in 1...Self.maxAttempts {
            if worker.isStopped { return false }
            var failure: String
            do {
                let status = try WebhookClient.post(webhook.url, headers: headers, body: body, timeout: Self.timeout, tls: tls)
                if (200..<300).contains(status) {
                    record(webhook.name, limits) { $0.delivered += 1; $0.attempts += 1; $0.lastError = nil }
                    return true
                }
                failure = "HTTP \(status)"
            } catch {
                failure = error.description
            }
            record(webhook.name, limits) { $0.attempts += 1; $0.lastError = failure }
            if attempt == Self.maxAttempts {
                record(webhook.name, limits) { $0.deadLetters.append(DeadLetter(eventID: event.id, reason: "\(Self.maxAttempts) tries failed, the last: \(failure)", at: Date().timeIntervalSince1970)) }
                return true
            }
            // The back-off, cut short only by a stop.
            let until = Date().addingTimeInterval(wait)
            while Date() < until, !worker.isStopped { usleep(20_000) }
            wait = min(Self.longestRetry, wait * 2)
        }
        return true
    }

    private func record(_ name: String, _ limits: LiveLimits, _ change: (inout Status) -> Void) {
        statuses.withLock { statuses in
            guard var status = statuses[name] else { return }
            change(&status)
            if status.deadLetters.count > limits.maxDeadLetters { status.deadLetters.removeFirst(status.deadLetters.count - limits.maxDeadLetters) }
            statuses[name] = status
        }
    }
}
