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
        state = EngineState(metrics: metrics)
        let wait = configuration.heavyQueueTimeout.components
        heavy = WorkPool(threads: configuration.heavyWorkers, queueLimit: configuration.heavyQueue,
                         maxWaitSeconds: Double(wait.seconds) + Double(wait.attoseconds) / 1e18)
        connections = ConnectionLimiter(maxConnections: configuration.maxConnections, headerTimeout: configuration.headerTimeout,
                                        warningInterval: configuration.limitWarningInterval, maxURIBytes: configuration.maxURIBytes, logger: logger)
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
    public var routes: [RouteEntry] { VltavaServer.routeTable.map { RouteEntry(method: $0.method.rawValue, path: $0.path) } }

    typealias Handler = @Sendable (Endpoints, Request, APIContext) async throws -> Response

    static let routeTable: [(method: HTTPRequest.Method, path: String, handler: Handler)] = [
        (.post, "/v1/query", { try await $0.query($1, $2) }),
        (.get, "/v1/layers", { try $0.layers($1, $2) }),
        (.get, "/v1/layers/{layer}/containing", { try await $0.containing($1, $2) }),
        (.get, "/v1/layers/{layer}/nearest", { try await $0.nearest($1, $2) }),
        (.get, "/v1/route", { try await $0.route($1, $2) }),
        (.get, "/v1/here", { try await $0.here($1, $2) }),
        (.get, "/v1/air", { try await $0.air($1, $2) }),
        (.post, "/v1/schedule/check", { try await $0.checkSchedule($1, $2) }),
        (.post, "/v1/locate", { try await $0.locate($1, $2) }),
        (.post, "/v1/locate/track", { try await $0.locateTrack($1, $2) }),
        (.post, "/v1/venues/{venue}/scans", { try await $0.appendScans($1, $2) }),
        (.get, "/v1/tiles/{tileset}.json", { try await $0.tileJSON($1, $2) }),
        (.get, "/v1/tiles/{tileset}/{z}/{x}/{y}", { try await $0.tile($1, $2) }),
        (.post, "/v1/admin/reload", { try await $0.reload($1, $2) }),
        (.get, "/healthz", { try $0.health($1, $2) }),
        (.get, "/readyz", { try await $0.readiness($1, $2) }),
        (.get, "/metrics", { try $0.metricsText($1, $2) }),
        (.get, "/openapi.json", { try $0.openAPI($1, $2) }),
        (.get, "/", { try $0.mapPage($1, $2) }),
        (.get, "/map/{file}", { try $0.mapFile($1, $2) }),
        (.get, "/maplibre/{file}", { try $0.mapLibreFile($1, $2) }),
        (.get, "/leaflet/{file}", { try $0.leafletFile($1, $2) }),
        (.get, "/leaflet/images/{file}", { try $0.leafletFile($1, $2) }),
        // OGC API – Features (Sources/Server/OGCEndpoints.swift).
        (.get, "/ogc", { try $0.ogcLanding($1, $2) }),
        (.get, "/ogc/conformance", { try $0.ogcConformance($1, $2) }),
        (.get, "/ogc/collections", { try await $0.ogcCollections($1, $2) }),
        (.get, "/ogc/collections/{collection}", { try await $0.ogcCollection($1, $2) }),
        (.get, "/ogc/collections/{collection}/items", { try await $0.ogcItems($1, $2) }),
        (.get, "/ogc/collections/{collection}/items/{featureId}", { try await $0.ogcItem($1, $2) }),
        // Writes: OGC API – Features Part 4, batches, rows, and the change feed (WriteEndpoints.swift).
        (.post, "/ogc/collections/{collection}/items", { try await $0.ogcCreateItems($1, $2) }),
        (.put, "/ogc/collections/{collection}/items/{featureId}", { try await $0.ogcReplaceItem($1, $2) }),
        (.patch, "/ogc/collections/{collection}/items/{featureId}", { try await $0.ogcUpdateItem($1, $2) }),
        (.delete, "/ogc/collections/{collection}/items/{featureId}", { try await $0.ogcDeleteItem($1, $2) }),
        (.post, "/v1/write", { try await $0.writeBatch($1, $2) }),
        (.post, "/v1/layers/{layer}/rows", { try await $0.appendRows($1, $2) }),
        (.get, "/v1/changes", { try await $0.changes($1, $2) }),
        // Live layers, fences and their events (Sources/Server/LiveEndpoints.swift).
        (.get, "/v1/live", { try await $0.listLiveLayers($1, $2) }),
        (.put, "/v1/live/{layer}", { try await $0.declareLiveLayer($1, $2) }),
        (.delete, "/v1/live/{layer}", { try await $0.dropLiveLayer($1, $2) }),
        (.post, "/v1/live/{layer}/positions", { try await $0.postPositions($1, $2) }),
        (.get, "/v1/live/{layer}/objects", { try await $0.liveObjects($1, $2) }),
        (.get, "/v1/live/{layer}/objects/{id}", { try await $0.liveObject($1, $2) }),
        (.delete, "/v1/live/{layer}/objects/{id}", { try await $0.deleteLiveObject($1, $2) }),
        (.get, "/v1/fences", { try await $0.listFences($1, $2) }),
        (.put, "/v1/fences/{name}", { try await $0.putFence($1, $2) }),
        (.get, "/v1/fences/{name}", { try await $0.getFence($1, $2) }),
        (.delete, "/v1/fences/{name}", { try await $0.deleteFence($1, $2) }),
        (.get, "/v1/fences/{name}/events", { try await $0.fenceEvents($1, $2) }),
        (.get, "/v1/events", { try await $0.events($1, $2) }),
        (.get, "/v1/webhooks", { try await $0.listWebhooks($1, $2) }),
        (.put, "/v1/webhooks/{name}", { try await $0.putWebhook($1, $2) }),
        (.get, "/v1/webhooks/{name}", { try await $0.getWebhook($1, $2) }),
        (.delete, "/v1/webhooks/{name}", { try await $0.deleteWebhook($1, $2) }),
        // OSRM's HTTP API for walking (Sources/Server/OSRMEndpoints.swift).
        (.get, "/route/v1/{profile}/{coordinates}", { try await $0.osrmRoute($1, $2) }),
        (.get, "/table/v1/{profile}/{coordinates}", { try await $0.osrmTable($1, $2) }),
        (.get, "/nearest/v1/{profile}/{coordinates}", { try await $0.osrmNearest($1, $2) }),
        (.get, "/trip/v1/{profile}/{coordinates}", { try await $0.osrmTrip($1, $2) }),
        (.get, "/match/v1/{profile}/{coordinates}", { try await $0.osrmMatch($1, $2) }),
        // GraphHopper's isochrone (Sources/Server/IsochroneEndpoint.swift).
        (.get, "/isochrone", { try await $0.isochrone($1, $2) }),
    ]

    func makeRouter() -> Router<APIContext> {
        let router = Router(context: APIContext.self, options: .autoGenerateHeadEndpoints)
        // First added runs first: the access log sees the final status, CORS adds its headers to
        // every answer including problems, and the problem middleware turns every error below it
        // into a problem document.
        router.add(middleware: AccessMiddleware(metrics: metrics, log: RequestLogPolicy(
            sampleEvery: configuration.logSampleEvery,
            slowSeconds: Double(configuration.slowRequest.components.seconds) + Double(configuration.slowRequest.components.attoseconds) * 1e-18)))
        router.add(middleware: CORSMiddleware(allowOrigin: .all, allowHeaders: [.accept, .authorization, .contentType, .origin, .acceptEncoding, .ifMatch, .ifNoneMatch],
                                              allowMethods: [.get, .post, .put, .patch, .delete, .options], maxAge: .seconds(86_400)))
        router.add(middleware: ProblemMiddleware(maxURIBytes: configuration.maxURIBytes))
        let endpoints = Endpoints(state: state, configuration: configuration, metrics: metrics, heavy: heavy, connections: connections)
        for route in VltavaServer.routeTable {
            let handler = route.handler
            router.on(RouterPath(route.path), method: route.method) { request, context in
                try await handler(endpoints, request, context)
            }
        }
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
        http1.additionalChannelHandlers = { [HeadWatcher()] }
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
