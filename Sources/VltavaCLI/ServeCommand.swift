import ArgumentParser
import Foundation
import PostGIS
import Vltava
import Logging
import Server

struct ServeCommand: AsyncParsableCommand {
    /// Heavy-work threads on a PostGIS store. Each statement waits for its answer on the
    /// thread that sent it (PostGISDatabase.swift), so with half the cores (one thread here)
    /// the server answered 2,500 queries/s while PostgreSQL itself answered the same SQL 35,000
    /// times a second (Benchmarks/postgis-side-by-side.sh). The threads mostly sleep; each
    /// holds at most one connection.
    static let databaseHeavyWorkers = 8
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the HTTP API (docs/HTTP_API.md) over the store.",
        discussion: """
            Listens at once and loads the store in the background (data requests answer 503 until
            it is loaded). SIGHUP, or POST /v1/admin/reload with the admin token, reloads the
            store without a restart; requests in flight finish on the data they started with.
            Example: vltava serve --db demo/vltava.gpkg --port 8080
            """
    )

    @OptionGroup var store: StoreOptions
    @Option(name: .long, help: ArgumentHelp("On a PostGIS store: hot standbys of the --db primary (postgresql://user@standby1[:port][,standby2[:port]…]/db) that answers read from (rows of layers kept in PostgreSQL, time series); writes, loads and the change feed stay on --db. Reads are spread over the standbys within --max-replica-lag, else go to the primary; a read after this server's write waits for a standby to replay it.", valueName: "url"))
    var dbRead: String?
    @Option(name: .long, help: ArgumentHelp("With --db-read: a standby serves reads while it has replayed what the primary had written this many seconds before, and a read waits at most this long for one to replay this server's last write.", valueName: "seconds"))
    var maxReplicaLag: Double = Standbys.defaultMaxLag
    @Option(help: "Address to listen on.") var host: String = "127.0.0.1"
    @Option(help: "Port to listen on (0: any free port, printed on start).") var port: Int = 8080
    @Option(help: "Enables POST /v1/admin/reload with the bearer token this file holds.") var adminTokenFile: String?
    @Option(help: "The same with the token itself (default: $VLTAVA_ADMIN_TOKEN). Every local user sees it in ps: prefer --admin-token-file or the variable.")
    var adminToken: String?
    @Option(help: "Enables writes (OGC API – Features Part 4, /v1/write, /v1/layers/LAYER/rows) for the bearer tokens this file lists: one a line, `TOKEN` for every layer or `TOKEN layer1,layer2`. The admin token may write too.")
    var writeTokenFile: String?
    @Option(help: "The layer whose area /v1/here checks (default: the polygon layer with the largest extent).") var areaLayer: String?
    @Option(help: "The polygon layer /v1/air names the district from.") var districtLayer: String = "districts"
    @Option(help: "The URL clients reach the server at, for TileJSON tile URLs (default: from the Host header).") var publicURL: String?
    @Option(help: "The directory holding Leaflet for the previous map page (Debian's libjs-leaflet).")
    var leafletDir: String = "/usr/share/javascript/leaflet"
    @Option(help: "The directory holding MapLibre GL JS for the map page at / (the srcjs directory of PyPI's maplibre; default: found in the usual site-packages).")
    var maplibreDir: String?
    @Option(help: "Seconds a connection may stay silent before it is closed.") var idleTimeout: Int = 30
    @Option(help: "Seconds a request head may take to arrive (from the connection opening, or the first byte of a later request).")
    var headerTimeout: Int = 10
    @Option(help: "Connections open at once; beyond, a new one displaces the longest-waiting connection without a request in progress.")
    var maxConnections: Int = 4096
    @Option(help: "Threads for heavy work (/v1/query, /v1/schedule/check, /v1/route, tiles); default: half the cores, at least 1, or \(ServeCommand.databaseHeavyWorkers) on a PostGIS store, whose heavy work mostly waits for the database.")
    var heavyWorkers: Int?
    @Option(help: "Heavy requests that may wait for a thread; beyond, 503 busy.") var heavyQueue: Int = 16
    @Option(help: "trace, debug, info, notice, warning, error or critical (debug logs every request).") var logLevel: String = "info"
    @Option(help: "Log one in N ordinary requests at info (0: none); failed and slow requests are always logged.")
    var logSample: Int = 100
    @Flag(help: "Answer every request through the router, /healthz, containing and nearest too (by default they are answered on the event loop that read them: the same answers, less CPU).")
    var routerOnly = false
    @Option(help: "Milliseconds from which a request is logged as slow (at warning).") var slowMs: Int = 500
    @Option(help: "A PEM file of certificates that https:// webhook receivers may chain to, besides the system's trust store.")
    var webhookCA: String?

    func run() async throws {
        guard let level = Logger.Level(rawValue: logLevel) else { throw CLIError("unknown --log-level '\(logLevel)'") }
        guard (0...65_535).contains(port) else { throw CLIError("--port must be between 0 and 65535") }
        guard idleTimeout > 0 else { throw CLIError("--idle-timeout must be a positive number of seconds") }
        guard (1...86_400).contains(headerTimeout) else { throw CLIError("--header-timeout must be between 1 and 86400 seconds") }
        guard (1...1_000_000).contains(maxConnections) else { throw CLIError("--max-connections must be between 1 and 1000000") }
        guard heavyWorkers.map({ (1...256).contains($0) }) ?? true else { throw CLIError("--heavy-workers must be between 1 and 256") }
        guard (0...100_000).contains(heavyQueue) else { throw CLIError("--heavy-queue must be between 0 and 100000") }
        guard (0...1_000_000).contains(logSample) else { throw CLIError("--log-sample must be between 0 and 1000000") }
        guard (1...3_600_000).contains(slowMs) else { throw CLIError("--slow-ms must be between 1 and 3600000") }
        guard PostGISURL.isDatabase(store.db) || FileManager.default.fileExists(atPath: store.db) else { throw CLIError("no store at \(store.db) (see vltava import, or --db)") }
        guard adminToken == nil || adminTokenFile == nil else { throw CLIError("give --admin-token-file or --admin-token, not both") }
        guard maxReplicaLag.isFinite, (0.001...3600).contains(maxReplicaLag) else { throw CLIError("--max-replica-lag must be between 0.001 and 3600 seconds") }
        if let dbRead {
            guard PostGISURL.isDatabase(store.db) else { throw CLIError("--db-read needs --db to be a PostGIS database (postgresql://…): the standbys' primary") }
            guard PostGISURL.isDatabase(dbRead) else { throw CLIError("--db-read takes postgresql://… URLs of hot standbys") }
        }
        // Logs go to standard error as JSON lines, one per event with its metadata, batched.
        LoggingSystem.bootstrap { label in JSONLogHandler(label: label, level: level) }
        defer { LogSink.standardError.flush() }
        // Each connection is a file descriptor: without enough of them the server would hit
        // EMFILE (and stop accepting anyone) before its own cap, which picks whom to close.
        let files = ServeCommand.raiseFileLimit(wanting: maxConnections + 256)
        if files < maxConnections + 64 {
            Logger(label: "vltava.server").warning("the file limit is below --max-connections; connections beyond it are refused by the kernel, not by the cap",
                                                   metadata: ["nofile": "\(files)", "max_connections": "\(maxConnections)"])
        }
        var configuration = ServerConfiguration()
        configuration.host = host
        configuration.port = port
        configuration.adminToken = try adminTokenFile.map(readAdminToken) ?? adminToken ?? ProcessInfo.processInfo.environment["VLTAVA_ADMIN_TOKEN"]
        if let writeTokenFile {
            guard let data = FileManager.default.contents(atPath: writeTokenFile) else { throw CLIError("cannot read the write token file \(writeTokenFile)") }
            do {
                configuration.writeTokens = try WriteTokens.parse(String(decoding: data, as: UTF8.self))
            } catch {
                throw CLIError("the write token file \(writeTokenFile): \(error)")
            }
            guard !configuration.writeTokens.entries.isEmpty else { throw CLIError("the write token file \(writeTokenFile) lists no token") }
        }
        configuration.areaLayer = areaLayer
        configuration.districtLayer = districtLayer
        configuration.publicURL = publicURL
        configuration.leafletDirectory = leafletDir
        if let maplibreDir { configuration.mapLibreDirectory = maplibreDir }
        configuration.idleTimeout = .seconds(idleTimeout)
        configuration.headerTimeout = .seconds(headerTimeout)
        configuration.maxConnections = maxConnections
        configuration.limits = store.limits
        if let heavyWorkers {
            configuration.heavyWorkers = heavyWorkers
        } else if PostGISURL.isDatabase(store.db) {
            configuration.heavyWorkers = ServeCommand.databaseHeavyWorkers
        }
        configuration.heavyQueue = heavyQueue
        configuration.logLevel = level
        configuration.logSampleEvery = logSample
        configuration.fastPath = !routerOnly
        configuration.slowRequest = .milliseconds(slowMs)
        if let webhookCA {
            do { _ = try WebhookTLS(caFile: webhookCA) } catch { throw CLIError("\(error)") }  // refused at start, not per delivery
            configuration.webhookCAFile = webhookCA
        }
        let source = if let dbRead { try StoreLocation.source(store.db, readingFrom: dbRead, maxReplicaLag: maxReplicaLag) } else { try StoreLocation.source(store.db) }
        let server = VltavaServer(configuration: configuration, source: source)
        // The bound port on standard output, for scripts and tests that ask for port 0.
        Task {
            let port = await server.port()
            FileHandle.standardOutput.write(Data("listening on http://\(host):\(port)\n".utf8))
        }
        try await server.run(handleSignals: true)
    }

    /// The token a file holds, without surrounding whitespace (editors end files with a newline).
    /// A file keeps the token out of the process list, where a flag's value is public.
    func readAdminToken(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else { throw CLIError("cannot read the admin token file \(path)") }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else { throw CLIError("the admin token file \(path) is empty") }
        guard !token.contains(where: \.isNewline) else { throw CLIError("the admin token file \(path) holds more than one line") }
        return token
    }

    /// Raises the soft RLIMIT_NOFILE towards `wanting`, as far as the hard limit allows; the
    /// soft limit it leaves.
    static func raiseFileLimit(wanting: Int) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        let want = rlim_t(max(0, wanting))
        if limit.rlim_cur < want {
            limit.rlim_cur = min(want, limit.rlim_max)
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return limit.rlim_cur >= rlim_t(Int.max) ? Int.max : Int(limit.rlim_cur)
    }
}
