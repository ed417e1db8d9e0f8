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
import Engine
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import Support

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
        /// Per open connection (by its channel): set when its client has gone.
        var departures: [ObjectIdentifier: Cancellation] = [:]

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

    /// The longest header field, and request target, the HTTP decoder reads (NIO counts the
    /// target as a field): a longer head is a parse error, which Hummingbird answers 400 with
    /// no body. The guard answers a longer target 414 itself before the decoder sees it.
    static let maxHeadFieldBytes = 16 * 1024

    let maxConnections: Int
    let headerTimeout: Duration
    let warningInterval: Duration
    /// Request targets the API accepts (`ServerConfiguration.maxURIBytes`), for the 414's words.
    let maxURIBytes: Int
    let logger: Logger
    private let state = Locked(State())

    init(maxConnections: Int, headerTimeout: Duration, warningInterval: Duration, maxURIBytes: Int, logger: Logger) {
        self.maxConnections = max(1, maxConnections)
        self.headerTimeout = headerTimeout
        self.warningInterval = warningInterval
        self.maxURIBytes = maxURIBytes
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

    /// What a request on `channel` gives its work to stop it when the client goes: set when
    /// the connection's input closes or the connection closes (`ConnectionGuardHandler`). Nil
    /// for a channel the guard does not watch.
    func departure(of channel: any Channel) -> Cancellation? {
        state.withLock { $0.departures[ObjectIdentifier(channel)] }
    }

    fileprivate func watch(_ channel: any Channel, _ departure: Cancellation?) {
        state.withLock { $0.departures[ObjectIdentifier(channel)] = departure }
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
/// when there is no room), closes it when a request head takes longer than the header timeout,
/// and tells the work of its requests when the client has gone.
///
/// A client gone is one whose input has closed (the server allows half-closed connections, so
/// a client's close arrives as `inputClosed`, not as the channel closing) or whose connection
/// has closed. An HTTP client that closes its side has left: nginx treats it so too (its 499).
/// Work that would answer nobody then stops at its next deadline check.
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
    private let departure = Cancellation()
    /// Bytes of the current request's first line so far, while its end has not arrived.
    private var requestLine: Int? = 0

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
        limiter.watch(context.channel, departure)
        awaitHead(context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event { departure.cancel() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        departure.cancel()
        limiter.watch(context.channel, nil)
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
        if case .awaitingHead = phase, id != nil, refusedLongTarget(context, unwrapInboundIn(data)) { return }
        guard case .idle = phase, id != nil else { return context.fireChannelRead(data) }
        let since = NIODeadline.now().uptimeNanoseconds
        phase = .awaitingHead(since: since)
        requestLine = 0
        if refusedLongTarget(context, unwrapInboundIn(data)) { return }
        context.fireChannelRead(data)
        // (`id` is nil when the read closed the connection.)
        if case .awaitingHead(let start) = phase, start == since, id != nil { awaitHead(context, since: since) }
    }

    /// Counts the request line in `bytes`; once it is longer than the decoder reads, answers
    /// 414 with a problem document (as `ProblemMiddleware` does for a target the decoder read)
    /// and closes the connection, the bytes never passed on.
    private func refusedLongTarget(_ context: ChannelHandlerContext, _ bytes: ByteBuffer) -> Bool {
        guard let counted = requestLine else { return false }
        let view = bytes.readableBytesView
        if let end = view.firstIndex(of: UInt8(ascii: "\n")) {
            requestLine = nil
            return counted + (end - view.startIndex) > ConnectionLimiter.maxHeadFieldBytes && refuse(context)
        }
        requestLine = counted + view.count
        return counted + view.count > ConnectionLimiter.maxHeadFieldBytes && refuse(context)
    }

    private func refuse(_ context: ChannelHandlerContext) -> Bool {
        requestLine = nil
        timer?.cancel()
        timer = nil
        phase = .inRequest(1)
        let problem = ProblemMiddleware.uriTooLong(bytes: nil, limit: limiter.maxURIBytes)
        var w = JSONWriter(reservingCapacity: 512)
        w.value(problem.document)
        let body = w.bytes
        let head = "HTTP/1.1 \(problem.status.code) \(problem.status.reasonPhrase)\r\nContent-Type: application/problem+json\r\n"
            + "Content-Length: \(body.count)\r\nAccess-Control-Allow-Origin: *\r\nConnection: close\r\n\r\n"
        var buffer = context.channel.allocator.buffer(capacity: head.utf8.count + body.count)
        buffer.writeString(head)
        buffer.writeBytes(body)
        context.writeAndFlush(NIOAny(buffer)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        return true
    }

    /// From `HeadWatcher`: a request head was parsed.
    func headArrived() {
        requestLine = nil
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
/// response has ended, and closes the connection once the response to a request that said
/// `Connection: close` is written. (Hummingbird stops reading then, but waits for the client
/// to close: one still sending a body it was refused, 413, held the socket until the idle
/// timeout.)
final class HeadWatcher: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private var guardHandler: ConnectionGuardHandler?
    /// The request being answered said `Connection: close`.
    private var closeAfterResponse = false

    func handlerAdded(context: ChannelHandlerContext) {
        guardHandler = try? context.pipeline.syncOperations.handler(type: ConnectionGuardHandler.self)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        guardHandler = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            guardHandler?.headArrived()
            if let connection = head.headerFields[.connection], connection.split(separator: ",").contains(where: { $0.lowercased().filter { !$0.isWhitespace } == "close" }) {
                closeAfterResponse = true
            }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else { return context.write(data, promise: promise) }
        guardHandler?.responseEnded()
        guard closeAfterResponse else { return context.write(data, promise: promise) }
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.cascade(to: promise)
        written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        context.write(data, promise: written)
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
