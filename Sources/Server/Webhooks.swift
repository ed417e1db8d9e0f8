// Delivers the fences' events to webhooks: one task per webhook, reading the hub's event log in
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
import Engine
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Geometry

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

    private struct Running: Sendable {
        let definition: WebhookDefinition
        let task: Task<Void, Never>
    }

    static let maxAttempts = 12
    static let firstRetry = 0.2
    static let longestRetry = 10.0
    static let timeout = 5.0

    private let running = Locked<[String: Running]>([:])
    private let statuses = Locked<[String: Status]>([:])
    private let signal: ChangeSignal
    private let session: URLSession

    init(signal: ChangeSignal) {
        self.signal = signal
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = Self.timeout
        session = URLSession(configuration: configuration)
    }

    /// Starts a task for each webhook the engine has and no task yet (or a changed one), and
    /// stops those of webhooks that are gone.
    func reconcile(_ engine: Engine) {
        let wanted = Dictionary(uniqueKeysWithValues: engine.webhooks.map { ($0.name, $0) })
        running.withLock { running in
            for (name, current) in running where wanted[name] != current.definition {
                current.task.cancel()
                running[name] = nil
            }
            for (name, definition) in wanted where running[name] == nil {
                let start = engine.live.lastEventID
                statuses.withLock { $0[name] = Status(cursor: start) }
                let task = Task.detached { [self] in await deliver(definition, from: start, hub: engine.live, limits: engine.limits.live) }
                running[name] = Running(definition: definition, task: task)
            }
        }
        statuses.withLock { $0 = $0.filter { wanted[$0.key] != nil } }
    }

    func status(_ name: String) -> Status? { statuses.withLock { $0[name] } }

    private func deliver(_ webhook: WebhookDefinition, from start: Int64, hub: LiveHub, limits: LiveLimits) async {
        let (wakes, token) = signal.subscribe(heartbeat: .seconds(15))
        defer { signal.cancel(token) }
        var wake = wakes.makeAsyncIterator()
        var cursor = start
        while !Task.isCancelled {
            let page = hub.events(after: cursor, fences: webhook.fences, limit: 100)
            if page.missed {
                let lost = (page.events.first?.id ?? page.last + 1) - cursor - 1
                record(webhook.name, limits) { $0.deadLetters.append(DeadLetter(eventID: nil, reason: "\(lost) events were dropped from the log before they could be sent", at: Date().timeIntervalSince1970)) }
            }
            for event in page.events {
                guard await send(event, to: webhook, limits: limits) else { return }
                cursor = event.id
                record(webhook.name, limits) { $0.cursor = event.id }
            }
            if page.last != cursor || !page.events.isEmpty {
                cursor = max(cursor, page.last)
                continue
            }
            guard await wake.next() != nil else { return }
        }
    }

    /// POSTs one event until it is taken or its tries run out. False when the task was
    /// cancelled (the webhook was deleted or changed).
    private func send(_ event: FenceEvent, to webhook: WebhookDefinition, limits: LiveLimits) async -> Bool {
        var w = JSONWriter(reservingCapacity: 256)
        Output.fenceEvent(&w, event)
        let body = Data(w.bytes)
        let signature = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Data(webhook.secret.utf8)))
        var request = URLRequest(url: webhook.url)
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        // A connection per POST: libcurl (FoundationNetworking) resends a POST whose kept-alive
        // connection the receiver closed without the body, and that try then hangs to its timeout.
        request.setValue("close", forHTTPHeaderField: "Connection")
        request.setValue(String(event.id), forHTTPHeaderField: "Vltava-Event-Id")
        request.setValue("sha256=" + signature.map { String(format: "%02x", $0) }.joined(), forHTTPHeaderField: "Vltava-Signature")
        var wait = Self.firstRetry
        for attempt in 1...Self.maxAttempts {
            if Task.isCancelled { return false }
            var failure: String
            do {
                let (_, response) = try await session.data(for: request)
                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                if (200..<300).contains(status) {
                    record(webhook.name, limits) { $0.delivered += 1; $0.attempts += 1; $0.lastError = nil }
                    return true
                }
                failure = "HTTP \(status)"
            } catch {
                failure = error.localizedDescription
            }
            record(webhook.name, limits) { $0.attempts += 1; $0.lastError = failure }
            if attempt == Self.maxAttempts {
                record(webhook.name, limits) { $0.deadLetters.append(DeadLetter(eventID: event.id, reason: "\(Self.maxAttempts) tries failed, the last: \(failure)", at: Date().timeIntervalSince1970)) }
                return true
            }
            try? await Task.sleep(for: .milliseconds(Int64(wait * 1000)))
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
