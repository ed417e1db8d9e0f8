// The live layers, their fences and the event log of one process, behind one lock: an update
// batch is evaluated and its events numbered before the next batch starts, so every object's
// events are in the order of its updates and the log's numbers follow that order.
//
// Everything here is memory: positions, histories and events end with the process. What is
// declared (live layers, fences) is kept by the Engine in the store and handed back at start.

import Foundation
import Geometry
import Support

/// What a batch of positions did.
public struct PositionReceipt: Sendable {
    /// The events it made, numbered, in order.
    public let events: [FenceEvent]
    /// Positions left out because their object already had a later one.
    public let stale: Int
}

public final class LiveHub: Sendable {
    private let state: Locked<LiveState>
    private let log: Locked<EventLog>
    private let listeners = Locked<(next: UInt64, all: [UInt64: @Sendable () -> Void])>((0, [:]))
    /// Counts every change of the layers or their objects, behind a lock of its own, so a
    /// reader asking whether anything moved never waits for a batch being evaluated.
    private let changes = Locked<UInt64>(0)
    /// The events position updates may still make now (`LiveLimits.maxEventsPerSecond`), and
    /// when it was last topped up (seconds of uptime). It refills at the limit, up to a second's
    /// worth. A batch is let in while it is positive and may overdraw it: so the rate over time
    /// keeps to the limit, and a batch's events are never cut in half.
    private let eventBudget: Locked<(events: Double, at: Double)>
    public let limits: LiveLimits

    public init(limits: LiveLimits = LiveLimits()) {
        self.limits = limits
        state = Locked(LiveState(limits: limits))
        log = Locked(EventLog(capacity: limits.retainedEvents))
        eventBudget = Locked((Double(limits.maxEventsPerSecond), ProcessInfo.processInfo.systemUptime))
    }

    // MARK: - Reading

    public func layer(_ name: String) -> LiveLayer? { state.withLock { $0.layer(name) } }

    public var layerNames: [String] { state.withLock { $0.layers.values.map(\.name).sorted() } }

    /// Every live layer as it is now (copies: the hub goes on changing).
    public var layers: [LiveLayer] { state.withLock { $0.layers.values.sorted { $0.name < $1.name } } }

    /// Grows with every change of a layer or its objects (0: nothing was ever declared).
    public var version: UInt64 { changes.withLock { $0 } }

    public func object(_ layer: String, id: String) -> LiveObject? { state.withLock { $0.layer(layer)?.objects[id] } }

    public var fences: [Fence] { state.withLock { $0.fences } }

    /// The events after `id` (see `EventLog.events`).
    public func events(after id: Int64, fences: Set<String>? = nil, limit: Int) -> (events: [FenceEvent], missed: Bool, last: Int64) {
        log.withLock { $0.events(after: id, fences: fences, limit: limit) }
    }

    /// The id of the newest event (one below the next), for a stream that starts now.
    public var lastEventID: Int64 { log.withLock { $0.nextID - 1 } }

    // MARK: - Changing

    public func declare(_ name: String, settings: LiveLayerSettings) throws(LiveError) {
        try state.withLock { (s: inout LiveState) throws(LiveError) in try s.declare(name, settings: settings) }
        changes.withLock { $0 += 1 }
    }

    @discardableResult
    public func drop(_ name: String) -> Bool {
        defer { changes.withLock { $0 += 1 } }
        return state.withLock { $0.drop(name) }
    }

    public func setFences(_ fences: [Fence], unchanged: Set<String>) throws(LiveError) {
        try state.withLock { (s: inout LiveState) throws(LiveError) in try s.setFences(fences, unchanged: unchanged) }
    }

    /// Applies a batch of positions (all or nothing) and returns the events it made, numbered,
    /// and how many positions were stale (older than their object's: left out).
    @discardableResult
    public func update(_ layer: String, _ updates: [PositionUpdate], now: Double = Date().timeIntervalSince1970) throws(LiveError) -> PositionReceipt {
        guard updates.count <= limits.maxUpdatesPerBatch else {
            throw .limit("\(updates.count) updates in one batch; at most \(limits.maxUpdatesPerBatch)")
        }
        try admitEvents()
        var stale = 0
        // Room for a few events an update, up to a bound: growing the array event by event
        // copied every event a dozen times a batch.
        let events = try changing(reserving: min(4 * updates.count, 65_536)) { (s: inout LiveState, emit: (FenceEvent) -> Void) throws(LiveError) in
            stale = try s.update(layer, updates, now: now, emit: emit)
        }
        eventBudget.withLock { $0.events -= Double(events.count) }
        return PositionReceipt(events: events, stale: stale)
    }

    /// Refuses a batch while the events budget is spent, saying when it will not be.
    private func admitEvents() throws(LiveError) {
        let rate = Double(max(1, limits.maxEventsPerSecond))  // 0 or less would never refill
        let wait = eventBudget.withLock { budget -> Double in
            let now = ProcessInfo.processInfo.systemUptime
            budget.events = min(rate, budget.events + max(0, now - budget.at) * rate)
            budget.at = now
            return budget.events > 0 ? 0 : (1 - budget.events) / rate
        }
        guard wait == 0 else {
            throw LiveError(code: "too_many_events", category: .unavailable, message:
                "position updates made more than \(limits.maxEventsPerSecond) fence events a second; nothing of this batch was applied: send it again in \(Rounding.seconds(max(wait, 0.1))) s")
        }
    }

    /// Puts objects back where a durable layer's store kept them, at start: applied as updates,
    /// so each object's fence states follow from where it is, but the events that makes are
    /// neither kept nor sent (the object was there before the restart).
    public func restore(_ layer: String, _ updates: [PositionUpdate], now: Double = Date().timeIntervalSince1970) throws(LiveError) {
        _ = try state.withLock { (s: inout LiveState) throws(LiveError) -> Int in try s.update(layer, updates, now: now, emit: { _ in }) }
        changes.withLock { $0 += 1 }
    }

    /// Removes an object (its exits are sent with reason `deleted`). False when there is none.
    public func remove(_ layer: String, id: String, now: Double = Date().timeIntervalSince1970) -> Bool {
        var found = false
        changing { (s: inout LiveState, emit: (FenceEvent) -> Void) in found = s.remove(layer, id: id, reason: "deleted", time: now, emit: emit) }
        return found
    }

    /// Removes the objects whose time ran out (their exits are sent with reason `expired`).
    @discardableResult
    public func expire(now: Double = Date().timeIntervalSince1970) -> [FenceEvent] {
        changing { (s: inout LiveState, emit: (FenceEvent) -> Void) in s.expire(now: now, emit: emit) }
    }

    /// Numbers and keeps events made elsewhere (a threshold fence's), and wakes the streams.
    public func publish(_ events: [FenceEvent]) {
        guard !events.isEmpty else { return }
        _ = changing { (_: inout LiveState, emit: (FenceEvent) -> Void) in events.forEach(emit) }
    }

    /// Runs `body` on the state, numbering the events it emits into the log before the lock is
    /// left, then wakes every listener once.
    @discardableResult
    private func changing<E: Error>(reserving capacity: Int = 0, _ body: (inout LiveState, (FenceEvent) -> Void) throws(E) -> Void) throws(E) -> [FenceEvent] {
        let events = try state.withLock { (s: inout LiveState) throws(E) -> [FenceEvent] in
            var made: [FenceEvent] = []
            made.reserveCapacity(capacity)
            try body(&s) { made.append($0) }
            guard !made.isEmpty else { return made }
            log.withLock { log in
                for i in made.indices { log.append(&made[i]) }
            }
            return made
        }
        changes.withLock { $0 += 1 }
        if !events.isEmpty {
            for listener in listeners.withLock({ Array($0.all.values) }) { listener() }
        }
        return events
    }

    // MARK: - Listening

    /// Calls `wake` after every batch that made events, until `stopListening(token)`.
    public func listen(_ wake: @escaping @Sendable () -> Void) -> UInt64 {
        listeners.withLock { l in
            l.next += 1
            l.all[l.next] = wake
            return l.next
        }
    }

    public func stopListening(_ token: UInt64) {
        _ = listeners.withLock { $0.all.removeValue(forKey: token) }
    }
}
