// Connection limits: at most `maxConnections` open at once, a deadline for each request head,
// and a warning in the log when either bites (one line per interval with the counts, never
// one per connection: a flood would otherwise flood the log too).
//
// Why: 21,000 half-open connections (each a socket, a pipeline, an HTTP parser and a task)
// took the server from 85 to 432 MB and made real requests time out until the idle timeout
// cut them, and an attacker who reconnected every 30 s kept it so. Now:
//
// - A new connection beyond the cap first takes the place of the open connection that has
//   waited longest without a request in progress (still sending its head, or idle between
//   keep-alive requests), which is closed; when every open connection is in the middle of a
//   request, the new one is closed at once. A client that connects and sends its request
//   promptly is therefore served even while the cap is full of half-open connections, and
//   the connections held (and the memory they take) never exceed the cap.
// - The head of each request must arrive within `headerTimeout`, counted from the moment the
//   connection opens, or from the first byte of a later request on it. Hummingbird's idle
//   timeout still closes connections that stay silent between requests.
//
// Two handlers do it. `ConnectionGuardHandler` sits first in each connection's pipeline, on
// raw bytes (it sees a request begin before any head is parsed); `HeadWatcher` sits after the
// HTTP decoder (it sees a head complete and a response end) and tells the first. The shared
// `ConnectionLimiter` holds the counts under one lock; the connections live on several event
// loops.

import Geometry
import Dispatch
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes

final class ConnectionLimiter: Sendable {
    struct Counts: Sendable {
        var refused = 0
        var evicted = 0
        var headerTimeouts = 0
        var isEmpty: Bool { refused == 0 && evicted == 0 && headerTimeouts == 0 }
    }

    private struct Entry {
        let channel: any Channel
        /// No request in progress: the connection may be closed to make room.
        var evictable: Bool
        /// Matches the connection's latest entry in `order`.
        var stamp: UInt64
    }

    private struct State {
        var open: [UInt64: Entry] = [:]
        var nextID: UInt64 = 0
        /// Connections in the order they became evictable; stale entries (a connection closed
        /// or busy since, or entered again later) are skipped when taken.
        var order: [(id: UInt64, stamp: UInt64)] = []
        var head = 0
        var nextStamp: UInt64 = 0
        /// Since the last warning, and since the start.
        var pending = Counts()
        var totals = Counts()
        var lastWarning: UInt64?
        var warningScheduled = false
        var peak = 0

        /// Changes the entry of open connection `id`; false if it is not open. A read and a
        /// write of the entry rather than `open[id]?.field = …`, whose modify accessor cost
        /// three heap allocations per call, two calls per request.
        mutating func update(_ id: UInt64, _ change: (inout Entry) -> Void) -> Bool {
            guard var entry = open[id] else { return false }
            change(&entry)
            open[id] = entry
            return true
        }

        /// Puts connection `id` (open) at the back of the eviction order.
        mutating func queue(_ id: UInt64) {
            nextStamp += 1
            let stamp = nextStamp
            _ = update(id) { $0.stamp = stamp }
            order.append((id, nextStamp))
            // Keep `order` proportional to the open connections whatever the traffic.
            if order.count - head > 4 * open.count + 1024 {
                let live = order[head...].filter { open[$0.id]?.stamp == $0.stamp }
                order = Array(live)
                head = 0
            }
        }

        mutating func takeEvictable() -> (id: UInt64, channel: any Channel)? {
            while head < order.count {
                let (id, stamp) = order[head]
                head += 1
                if let entry = open[id], entry.evictable, entry.stamp == stamp {
                    if head > 1024 && head * 2 > order.count {
                        order.removeFirst(head)
                        head = 0
                    }
                    return (id, entry.channel)
                }
            }
            order.removeAll(keepingCapacity: true)
            head = 0
            return nil
        }
    }

    let maxConnections: Int
    let headerTimeout: Duration
    let warningInterval: Duration
    let logger: Logger
    private let state = Locked(State())

    init(maxConnections: Int, headerTimeout: Duration, warningInterval: Duration, logger: Logger) {
        self.maxConnections = max(1, maxConnections)
        self.headerTimeout = headerTimeout
        self.warningInterval = warningInterval
        self.logger = logger
    }

    /// Registers a new connection: its id, or nil when it must be closed (the cap is full of
    /// connections with requests in progress). Closes the connection it displaces, if any.
    func opened(_ channel: any Channel) -> UInt64? {
        var displaced: (any Channel)?
        let id = state.withLock { state -> UInt64? in
            if state.open.count >= maxConnections {
                guard let victim = state.takeEvictable() else {
                    state.pending.refused += 1
                    state.totals.refused += 1
                    return nil
                }
                state.open[victim.id] = nil
                displaced = victim.channel
                state.pending.evicted += 1
                state.totals.evicted += 1
            }
            state.nextID += 1
            let id = state.nextID
            state.open[id] = Entry(channel: channel, evictable: true, stamp: 0)
            state.queue(id)
            state.peak = max(state.peak, state.open.count)
            return id
        }
        displaced?.close(promise: nil)
        if id == nil || displaced != nil { warnIfDue(on: channel.eventLoop) }
        return id
    }

    func closed(_ id: UInt64) {
        _ = state.withLock { $0.open.removeValue(forKey: id) }
    }

    /// A request head arrived: the connection is busy until its response ends.
    func busy(_ id: UInt64) {
        state.withLock { _ = $0.update(id) { $0.evictable = false } }
    }

    /// The last response in progress ended: the connection may be displaced again.
    func idle(_ id: UInt64) {
        state.withLock { state in
            guard state.update(id, { $0.evictable = true }) else { return }
            state.queue(id)
        }
    }

    func headerTimedOut(on eventLoop: any EventLoop) {
        state.withLock { state in
            state.pending.headerTimeouts += 1
            state.totals.headerTimeouts += 1
        }
        warnIfDue(on: eventLoop)
    }

    /// Open connections now, the most at once, and the closings since the start.
    var counts: (open: Int, peak: Int, totals: Counts) {
        state.withLock { ($0.open.count, $0.peak, $0.totals) }
    }

    /// One warning line per `warningInterval` at most: the first event after a quiet interval
    /// is logged at once; later ones are added up and logged when the interval is over.
    private func warnIfDue(on eventLoop: any EventLoop) {
        enum Action { case none, log(Counts, open: Int), wait(nanoseconds: Int64) }
        let interval = UInt64(max(0, warningInterval.components.seconds)) * 1_000_000_000
            + UInt64(max(0, warningInterval.components.attoseconds) / 1_000_000_000)
        let now = DispatchTime.now().uptimeNanoseconds
        let action = state.withLock { state -> Action in
            guard !state.pending.isEmpty else { return .none }
            if let last = state.lastWarning, now &- last < interval {
                guard !state.warningScheduled else { return .none }
                state.warningScheduled = true
                return .wait(nanoseconds: Int64(interval - (now &- last)))
            }
            let counts = state.pending
            state.pending = Counts()
            state.lastWarning = now
            return .log(counts, open: state.open.count)
        }
        switch action {
        case .none:
            break
        case .log(let counts, let open):
            logger.warning("connection limits hit", metadata: [
                "refused": .stringConvertible(counts.refused),
                "evicted": .stringConvertible(counts.evicted),
                "header_timeouts": .stringConvertible(counts.headerTimeouts),
                "open": .stringConvertible(open),
                "max_connections": .stringConvertible(maxConnections),
            ])
        case .wait(let nanoseconds):
            eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) { [self] in
                state.withLock { $0.warningScheduled = false }
                warnIfDue(on: eventLoop)
            }
        }
    }
}

/// First in every connection's pipeline: registers the connection with the limiter (closing it
/// when there is no room), and closes it when a request head takes longer than the header
/// timeout.
final class ConnectionGuardHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private enum Phase {
        /// Waiting for a head since this moment (the connection opened, or a request began).
        case awaitingHead(since: UInt64)
        /// Between requests: the idle timeout's business.
        case idle
        /// Requests whose heads have arrived and whose responses have not ended.
        case inRequest(Int)
    }

    private let limiter: ConnectionLimiter
    private var id: UInt64?
    private var activated = false
    private var phase = Phase.idle
    private var timer: Scheduled<Void>?

    init(limiter: ConnectionLimiter) {
        self.limiter = limiter
    }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        guard !activated else { return }
        activated = true
        guard let id = limiter.opened(context.channel) else {
            context.close(promise: nil)
            return
        }
        self.id = id
        awaitHead(context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        if let id { limiter.closed(id) }
        id = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // The first byte after a response: a new request begins, and its head is timed from
        // now. The decoder behind runs within `fireChannelRead`, so a head that came whole in
        // this read (the usual case on a keep-alive connection) has arrived when it returns,
        // and needs no timer: one is scheduled only for a head still incomplete.
        guard case .idle = phase, id != nil else { return context.fireChannelRead(data) }
        let since = NIODeadline.now().uptimeNanoseconds
        phase = .awaitingHead(since: since)
        context.fireChannelRead(data)
        // (`id` is nil when the read closed the connection.)
        if case .awaitingHead(let start) = phase, start == since, id != nil { awaitHead(context, since: since) }
    }

    /// From `HeadWatcher`: a request head was parsed.
    func headArrived() {
        switch phase {
        case .inRequest(let n): phase = .inRequest(n + 1)
        default: phase = .inRequest(1)
        }
        timer?.cancel()
        timer = nil
        if let id { limiter.busy(id) }
    }

    /// From `HeadWatcher`: a response ended.
    func responseEnded() {
        guard case .inRequest(let n) = phase else { return }
        if n > 1 {
            phase = .inRequest(n - 1)
        } else {
            phase = .idle
            if let id { limiter.idle(id) }
        }
    }

    /// Closes the connection unless a head arrives within the header timeout after `since`
    /// (now when not given).
    private func awaitHead(_ context: ChannelHandlerContext, since: UInt64 = NIODeadline.now().uptimeNanoseconds) {
        phase = .awaitingHead(since: since)
        timer?.cancel()
        let timeout = limiter.headerTimeout.components
        let nanoseconds = timeout.seconds * 1_000_000_000 + timeout.attoseconds / 1_000_000_000
        let loop = context.eventLoop.assumeIsolated()
        let deadline = NIODeadline.uptimeNanoseconds(since) + .nanoseconds(nanoseconds)
        timer = loop.scheduleTask(deadline: deadline) { [self] in
            timer = nil
            guard case .awaitingHead(let start) = phase, start == since else { return }
            limiter.headerTimedOut(on: context.eventLoop)
            context.close(promise: nil)
        }
    }
}

/// After the HTTP decoder: tells the connection's guard when a head has arrived and when a
/// response has ended.
final class HeadWatcher: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private var guardHandler: ConnectionGuardHandler?

    func handlerAdded(context: ChannelHandlerContext) {
        guardHandler = try? context.pipeline.syncOperations.handler(type: ConnectionGuardHandler.self)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        guardHandler = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) { guardHandler?.headArrived() }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { guardHandler?.responseEnded() }
        context.write(data, promise: promise)
    }
}

/// Hummingbird's HTTP/1.1 child channel with the guard in front of it.
struct GuardedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value
    let inner: HTTP1Channel
    let limiter: ConnectionLimiter

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let limiter = self.limiter
        let inner = self.inner
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(ConnectionGuardHandler(limiter: limiter), position: .first)
        }.flatMap {
            inner.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}
