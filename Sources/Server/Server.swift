// The HTTP server: configuration, the route table, the middleware chain and the lifecycle
// (listen at once, load the first snapshot in the background, reload on request or SIGHUP).

import Geometry
import Dispatch
import Engine
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import QueryLanguage
import Support

public struct ServerConfiguration: Sendable {
    public var host: String = "127.0.0.1"
    /// 0 picks a free port (the tests use it); `VltavaServer.port` tells which.
    public var port: Int = 8080
    /// Enables POST /v1/admin/reload when set (and not empty), and writes to every layer.
    public var adminToken: String?
    /// Tokens that may write (WriteEndpoints.swift); with none and no admin token, the server
    /// takes no writes.
    public var writeTokens = WriteTokens()
    /// The layer whose area /v1/here checks; nil: the polygon layer with the largest extent.
    public var areaLayer: String?
    /// The polygon layer /v1/air names the district from.
    public var districtLayer: String = "districts"
    /// The URL clients reach the server at, for TileJSON's tile URLs; nil: from the Host header.
    public var publicURL: String?
    /// Where the previous map page's Leaflet is: Debian's libjs-leaflet puts it here.
    public var leafletDirectory: String = "/usr/share/javascript/leaflet"
    /// Where the map page's MapLibre GL JS is (the `srcjs` directory of PyPI's `maplibre`);
    /// nil: found in the usual places when the server starts.
    public var mapLibreDirectory: String? = MapPage.findMapLibre()
    /// Request bodies (query text) larger than this are refused with 413.
    public var maxBodyBytes: Int = 64 * 1024
    /// Request targets (path and query) longer than this are refused with 414.
    public var maxURIBytes: Int = 8 * 1024
    /// A connection that sends nothing for this long is closed: it covers slow or stalled
    /// clients sending their headers byte by byte, and idle keep-alive connections.
    public var idleTimeout: Duration = .seconds(30)
    /// How long a request body may take to arrive (408 after).
    public var requestTimeout: Duration = .seconds(10)
    /// What one request may cost, for every endpoint and the language alike: rows, statements,
    /// response bytes, seconds of work (`EngineLimits`). What the server as a whole holds —
    /// connections, heavy work at once — is set below.
    public var limits = EngineLimits()

    // The server's own capacity (docs/HTTP_API.md, "Limits and timeouts").

    /// Connections open at once; a new one beyond displaces the longest-waiting connection
    /// without a request in progress, or is closed at once when there is none.
    public var maxConnections: Int = 4096
    /// A request head must be complete this long after the connection opens, or after the
    /// first byte of a later request; the connection is closed otherwise.
    public var headerTimeout: Duration = .seconds(10)
    /// At most one warning line per this interval when connection limits are hit.
    public var limitWarningInterval: Duration = .seconds(10)
    /// Threads for the heavy endpoints' work (/v1/query, /v1/schedule/check, /v1/route,
    /// tiles and TileJSON): half the cores, at least one, so the light endpoints keep the rest.
    public var heavyWorkers: Int = max(1, ProcessInfo.processInfo.activeProcessorCount / 2)
    /// Heavy requests that may wait for a thread; beyond, 503 `busy` with Retry-After.
    public var heavyQueue: Int = 16
    /// A heavy request still waiting for a thread after this long is answered 503 `busy`
    /// rather than started late.
    public var heavyQueueTimeout: Duration = .seconds(5)
    public var logLevel: Logger.Level = .info
    /// One in this many ordinary requests is logged at info (0: none); failed and slow ones
    /// always are (`RequestLogPolicy`).
    public var logSampleEvery: Int = 100
    /// A request taking at least this long is logged as slow, at warning.
    public var slowRequest: Duration = .milliseconds(500)
    /// `/healthz`, `containing` and `nearest` answered on the event loop that read them
    /// (FastPath.swift); off, every request goes through the router (tests compare the two).
    public var fastPath = true
    /// A PEM file of certificates that https:// webhook receivers' chains may end in, besides
    /// the system's trust store (`--webhook-ca`).
    public var webhookCAFile: String?

    public init() {}
}

/// The request context: Hummingbird's core storage plus the channel, for the client's address
/// in the request log.
public struct APIContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

/// One registered route: the route table is the single source for the router and for the check
/// that the OpenAPI document lists exactly these routes.
public struct RouteEntry: Sendable, Hashable {
    public let method: String
    public let path: String
}

public final class VltavaServer: Sendable {
    public let configuration: ServerConfiguration
    public let state: EngineState
    let metrics = HTTPMetrics()
    let logger: Logger
    let heavy: WorkPool
    let connections: ConnectionLimiter
    /// The access log's sampling, shared by the router and the event loop's fast path.
    let requestLog: RequestLogPolicy
    private let load: @Sendable () throws -> Engine
    private let boundPort = Locked<Int?>(nil)
    private let portWaiters = Locked<[CheckedContinuation<Int, Never>]>([])

    /// `load` builds the first snapshot; it runs after the server listens, so early requests
    /// get 503 rather than a refused connection.
    public init(configuration: ServerConfiguration, logger: Logger? = nil, load: @escaping @Sendable () throws -> Engine) {
        self.configuration = configuration
        self.load = load
        var logger = logger ?? Logger(label: "vltava.server")
        logger.logLevel = configuration.logLevel
        self.logger = logger
        state = EngineState(metrics: metrics, webhookCAFile: configuration.webhookCAFile)
        let wait = configuration.heavyQueueTimeout.components
        heavy = WorkPool(threads: configuration.heavyWorkers, queueLimit: configuration.heavyQueue,
                         maxWaitSeconds: Double(wait.seconds) + Double(wait.attoseconds) / 1e18)
        connections = ConnectionLimiter(maxConnections: configuration.maxConnections, headerTimeout: configuration.headerTimeout,
                                        warningInterval: configuration.limitWarningInterval, maxURIBytes: configuration.maxURIBytes, logger: logger)
        requestLog = RequestLogPolicy(sampleEvery: configuration.logSampleEvery,
                                      slowSeconds: Double(configuration.slowRequest.components.seconds) + Double(configuration.slowRequest.components.attoseconds) * 1e-18)
    }

    /// A server over the store `source` (the program's assembly opens it: `StoreLocation`).
    public convenience init(configuration: ServerConfiguration, source: any SnapshotSource, logger: Logger? = nil) {
        self.init(configuration: configuration, logger: logger) {
            let engine = try Engine(source: source, limits: configuration.limits)
            // A server given write tokens takes the store's writer at start, so a second
            // writer process fails there, by name, rather than at its first write.
            if !configuration.writeTokens.entries.isEmpty { try engine.prepareWrites() }
            return engine
        }
    }

    /// The routes the server answers (the OpenAPI document lists the same).
    public var routes: [RouteEntry] { Endpoints.routes.map { RouteEntry(method: $0.method.rawValue, path: $0.path) } }

    func makeRouter() -> Router<APIContext> {
        let router = Router(context: APIContext.self, options: .autoGenerateHeadEndpoints)
        // First added runs first: the access log sees the final status, CORS adds its headers to
        // every answer including problems, and the problem middleware turns every error below it
        // into a problem document.
        router.add(middleware: AccessMiddleware(metrics: metrics, log: requestLog))
        router.add(middleware: CORSMiddleware(allowOrigin: .all, allowHeaders: [.accept, .authorization, .contentType, .origin, .acceptEncoding, .ifMatch, .ifNoneMatch],
                                              allowMethods: [.get, .post, .put, .patch, .delete, .options], maxAge: .seconds(86_400)))
        router.add(middleware: ProblemMiddleware(maxURIBytes: configuration.maxURIBytes))
        let endpoints = Endpoints(state: state, configuration: configuration, metrics: metrics, heavy: heavy, connections: connections)
        for group in Endpoints.routeGroups { router.addRoutes(endpoints.collection(group)) }
        return router
    }

    /// The routes as a Hummingbird application that does not listen, with the first snapshot
    /// loaded: for tests of what the routes answer, sent straight to the router
    /// (HummingbirdTesting's `.router`). What the connection guard does (limits, head deadlines,
    /// 414) and the listening socket are `run`'s, and are tested over loopback.
    public func routerApplication() async throws -> Application<RouterResponder<APIContext>> {
        try await state.loadFirst(load)
        return Application(router: makeRouter(), logger: logger)
    }

    /// The port the server listens on, once it does.
    public func port() async -> Int {
        await withCheckedContinuation { continuation in
            if let port = boundPort.withLock({ $0 }) {
                continuation.resume(returning: port)
            } else {
                portWaiters.withLock { $0.append(continuation) }
                // The port may have been bound between the two locks.
                if let port = boundPort.withLock({ $0 }) {
                    for waiter in portWaiters.withLock({ w in defer { w.removeAll() }; return w }) { waiter.resume(returning: port) }
                }
            }
        }
    }

    private func listening(on port: Int) {
        boundPort.withLock { $0 = port }
        for waiter in portWaiters.withLock({ w in defer { w.removeAll() }; return w }) { waiter.resume(returning: port) }
    }

    /// Listens, loads the first snapshot, and serves until the task is cancelled (or, with
    /// `handleSignals`, until SIGINT/SIGTERM; SIGHUP then reloads the snapshot).
    public func run(handleSignals: Bool = false) async throws {
        let idle = configuration.idleTimeout.components
        var http1 = HTTP1Channel.Configuration(idleTimeout: .nanoseconds(idle.seconds * 1_000_000_000 + idle.attoseconds / 1_000_000_000))
        http1.httpDecoder = .init(maxHeaderFieldSize: ConnectionLimiter.maxHeadFieldBytes, maxHeaderListSize: 64 * 1024, maxHeaderFieldCount: 100)
        // The hot GETs are answered on the event loop (FastPath.swift), the rest by the router.
        let fast = configuration.fastPath ? FastPath.Shared(state: state, metrics: metrics, log: requestLog, logger: logger, maxURIBytes: configuration.maxURIBytes) : nil
        http1.additionalChannelHandlers = { [HeadWatcher()] + (fast.map { [FastPath($0)] } ?? []) }
        let limiter = connections
        let channelConfiguration = http1
        defer { heavy.stop() }
        let app = Application(
            router: makeRouter(),
            server: HTTPServerBuilder { responder in
                GuardedHTTP1Channel(inner: HTTP1Channel(responder: responder, configuration: channelConfiguration), limiter: limiter)
            },
            configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port), serverName: "vltava",
                                                    backlog: 1024),
            onServerRunning: { [self] channel in
                let port = channel.localAddress?.port ?? configuration.port
                logger.info("listening", metadata: ["address": "http://\(configuration.host):\(port)"])
                listening(on: port)
            },
            logger: logger
        )
        let hangup = handleSignals ? reloadOnHangup() : nil
        defer { hangup?.cancel() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                do {
                    try await state.loadFirst(load)
                    if let snapshot = state.currentSnapshot {
                        logger.info("snapshot loaded", metadata: ["layers": "\(snapshot.layers.count)", "load_seconds": "\(snapshot.loadSeconds)"])
                        logger.logWarnings(of: snapshot)
                    }
                } catch {
                    // Keep serving: health and data requests answer 503 with the reason.
                    logger.error("the first snapshot could not be loaded", metadata: ["error": "\(error)"])
                }
            }
            group.addTask {
                if handleSignals {
                    try await app.runService()
                } else {
                    try await app.run()
                }
            }
            try await group.waitForAll()
        }
    }

    /// SIGHUP reloads the snapshot, as daemons do; the dispatch source runs its handler on a
    /// queue, never inside the signal handler itself.
    private func reloadOnHangup() -> any DispatchSourceSignal {
        signal(SIGHUP, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: DispatchQueue(label: "vltava.sighup"))
        source.setEventHandler { [self] in
            Task {
                do {
                    let snapshot = try await state.reload()
                    logger.info("snapshot reloaded on SIGHUP", metadata: ["layers": "\(snapshot.layers.count)", "load_seconds": "\(snapshot.loadSeconds)"])
                    logger.logWarnings(of: snapshot)
                } catch {
                    logger.error("reload on SIGHUP failed; the previous data stays", metadata: ["error": "\(error)"])
                }
            }
        }
        source.resume()
        return source
    }
}
