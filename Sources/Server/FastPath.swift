// The hot GETs answered on the event loop that read them: `/healthz`, and `containing` and
// `nearest` on a layer in memory. Hummingbird's router costs each request a hop from the event
// loop to Swift concurrency's pool and back, a task, the router's and the middleware's
// allocations: about 40 µs of CPU for `/healthz`, most of a `containing` (issue 37). Here the
// request is answered where it was read, as martin, OSRM's server and nginx do.
//
// One output path still: the body comes from the same function the route calls
// (`Endpoints.containingBody`, `nearestBody`, `healthBody`), the fields from `Reply.answer`, and
// the metrics and the access log from the same objects, with the route's own template. Anything
// the fast path does not do exactly as the router would goes to the router unchanged: another
// method or path, a body, `Origin` (CORS), `Connection` (HTTP/1.0 keep-alive or upgrades), a
// layer kept in PostgreSQL, `where`/`attr.` filters, a station layer whose readings are read
// from the database, and every error (the router answers it with its problem document). A
// request behind one the router is still answering on the same connection (pipelining) goes
// to the router too, so answers keep their order.

import Dispatch
import Engine
import Foundation
import Geometry
import HTTPTypes
import Logging
import NIOCore
import NIOHTTPTypes
import Support

final class FastPath: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// What every connection's handler shares.
    struct Shared: Sendable {
        let state: EngineState
        let metrics: HTTPMetrics
        let log: RequestLogPolicy
        let logger: Logger
        let maxURIBytes: Int
    }

    private let shared: Shared
    /// A fast request whose head has come and whose end has not.
    private var pending: (head: HTTPRequest, started: UInt64)?
    /// Requests handed to the router whose answer has not ended yet.
    private var routed = 0

    init(_ shared: Shared) {
        self.shared = shared
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if routed == 0, FastPath.route(head) != nil {
                pending = (head, DispatchTime.now().uptimeNanoseconds)
                return
            }
            routed += 1
            context.fireChannelRead(data)
        case .body:
            // A GET with a body: the router's to judge.
            if let (head, _) = pending { handOver(head, context: context) }
            context.fireChannelRead(data)
        case .end:
            guard let (head, started) = pending else { return context.fireChannelRead(data) }
            pending = nil
            guard let route = FastPath.route(head), let answer = answer(route, head) else {
                handOver(head, context: context)
                return context.fireChannelRead(data)
            }
            respond(answer, to: head, route: route, started: started, context: context)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { routed = max(0, routed - 1) }
        context.write(data, promise: promise)
    }

    private func handOver(_ head: HTTPRequest, context: ChannelHandlerContext) {
        pending = nil
        routed += 1
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    // MARK: - Which requests

    enum Route: Equatable {
        case health
        case containing(layer: String)
        case nearest(layer: String)

        /// The route's template, as the router names it in the metrics and the log.
        var template: String {
            switch self {
            case .health: "/healthz"
            case .containing: "/v1/layers/{layer}/containing"
            case .nearest: "/v1/layers/{layer}/nearest"
            }
        }
    }

    /// The fast route of a request the router would answer the same way, or nil.
    static func route(_ head: HTTPRequest) -> Route? {
        guard head.method == .get, let target = head.path, head.headerFields[.origin] == nil, head.headerFields[.connection] == nil else { return nil }
        let path = target.utf8.firstIndex(of: UInt8(ascii: "?")).map { target[..<$0] } ?? target[...]
        if path == "/healthz" { return .health }
        let prefix = "/v1/layers/"
        guard path.hasPrefix(prefix) else { return nil }
        let rest = path.dropFirst(prefix.count)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let encoded = rest[..<slash], operation = rest[rest.index(after: slash)...]
        guard !encoded.isEmpty else { return nil }
        let layer = encoded.utf8.contains(UInt8(ascii: "%")) ? (encoded.removingPercentEncoding ?? String(encoded)) : String(encoded)
        switch operation {
        case "containing": return .containing(layer: layer)
        case "nearest": return .nearest(layer: layer)
        default: return nil
        }
    }

    // MARK: - Answers

    /// The body the route's endpoint would write, and its type; nil for anything the router
    /// must answer (an error, a layer in the database, filters).
    private func answer(_ route: Route, _ head: HTTPRequest) -> (body: [UInt8], contentType: String)? {
        guard let target = head.path, target.utf8.count <= shared.maxURIBytes, let snapshot = try? shared.state.snapshot() else { return nil }
        let query = target.utf8.firstIndex(of: UInt8(ascii: "?")).map { target[target.index(after: $0)...] } ?? ""
        do {
            switch route {
            case .health:
                return (Endpoints.healthBody(snapshot), Reply.json)
            case .containing(let name):
                let parameters = try Parameters(query: query, allowed: ["lon", "lat", "geometry"])
                let point = try parameters.position()
                let mode = GeometryMode(try parameters.bool("geometry"))
                let layer = try engine { () throws(EngineError) in try snapshot.layer(name) }
                guard !layer.fetchesRows else { return nil }
                return (try Endpoints.containingBody(snapshot, layer, point, mode), Reply.geoJSON)
            case .nearest(let name):
                let parameters = try Parameters(query: query, allowed: ["lon", "lat", "k", "within_m", "geometry"])
                let point = try parameters.position()
                let k = try parameters.int("k", default: 1, range: nil)
                let within = try parameters.double("within_m")
                let mode = GeometryMode(try parameters.bool("geometry"))
                let layer = try engine { () throws(EngineError) in try snapshot.layer(name) }
                guard !layer.fetchesRows, !snapshot.readsSeriesFromStore else { return nil }
                let stations = snapshot.stations.flatMap { $0.layer === layer ? $0 : nil }
                return (try Endpoints.nearestBody(snapshot, layer, stations, point, k: k, within: within, filter: nil, mode), Reply.geoJSON)
            }
        } catch {
            return nil
        }
    }

    private func respond(_ answer: (body: [UInt8], contentType: String), to head: HTTPRequest, route: Route, started: UInt64,
                         context: ChannelHandlerContext) {
        let (status, fields, body) = Reply.answer(answer.body, status: .ok, contentType: answer.contentType, compressible: true, etag: nil,
                                                  method: head.method, requestFields: head.headerFields)
        var headers = fields
        headers[.contentLength] = String(body.count)
        headers[.date] = HTTPDate.now()
        headers[.server] = "vltava"
        context.write(wrapOutboundOut(.head(HTTPResponse(status: status, headerFields: headers))), promise: nil)
        if !body.isEmpty {
            var buffer = context.channel.allocator.buffer(capacity: body.count)
            buffer.writeBytes(body)
            context.write(wrapOutboundOut(.body(buffer)), promise: nil)
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        shared.metrics.begin()
        shared.metrics.end(route: route.template, method: head.method.rawValue, status: status.code, seconds: seconds)
        if let (level, sampled) = shared.log.level(status: status.code, seconds: seconds, loggerLevel: shared.logger.logLevel) {
            var metadata: Logger.Metadata = [
                "method": .string(head.method.rawValue),
                "path": .string(head.path.map { String($0.prefix { $0 != "?" }) } ?? "-"),
                "route": .string(route.template),
                "status": .stringConvertible(status.code),
                "ms": .string(AccessMiddleware.milliseconds(seconds)),
                "client": .string(context.channel.remoteAddress?.ipAddress ?? "-"),
            ]
            if sampled > 1 { metadata["sampled"] = .stringConvertible(sampled) }
            shared.logger.log(level: level, "request", metadata: metadata)
        }
    }
}

/// The `Date` field (RFC 9110's IMF-fixdate), made once a second.
enum HTTPDate {
    private static let cache = Locked<(second: Int, text: String)>((-1, ""))

    static func now() -> String {
        var seconds = time(nil)
        return cache.withLock { cached in
            if cached.second == seconds { return cached.text }
            var parts = tm()
            gmtime_r(&seconds, &parts)
            let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"], months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
            func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
            let text = "\(days[Int(parts.tm_wday) % 7]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon) % 12]) \(parts.tm_year + 1900) "
                + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
            cached = (seconds, text)
            return text
        }
    }
}
