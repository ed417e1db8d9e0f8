// What the end-to-end tests need: a minimal HTTP/1.1 client on a raw socket (so a test controls
// every byte: keep-alive loops, unnormalised paths, slow and oversized requests), the demo store
// built once through the CLI, and servers started in-process on a free loopback port.

import Engine
import Foundation
import Geometry
import Logging
import Server
import Support
import Synchronization
import TestSupport
import Testing
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

struct HTTPResponse {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object (an empty one when it is not).
    var object: JSONObject {
        if case .object(let object)? = try? JSON.parse(body) { return object }
        return JSONObject()
    }

    var json: JSONValue { (try? JSON.parse(body)) ?? .null }
}

/// The wall-clock bounds of these tests (socket timeouts, "answered within 2 s") are set for a
/// debug build on a busy machine. A ThreadSanitizer run is 5–15× slower, so it stretches them
/// with `VLTAVA_TEST_TIME_SCALE=10` (docs/ARCHITECTURE.md, "Tests and fuzzing").
let testTimeScale: Double = {
    guard let text = ProcessInfo.processInfo.environment["VLTAVA_TEST_TIME_SCALE"], let scale = Double(text),
          scale.isFinite else { return 1 }
    return min(max(scale, 1), 100)
}()

struct HTTPClientError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs blocking work (sockets, child processes) on a thread of its own. Blocking one of the
/// few threads of Swift's cooperative pool would starve the in-process server, whose handlers
/// run on that pool; Dispatch's global queues are no better on Linux, where their threads are
/// also limited to about the number of cores.
func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.start()
    }
}

/// One TCP connection to 127.0.0.1, kept alive across requests. Used by one task at a time;
/// its blocking calls run through `offPool`.
final class HTTPConnection: @unchecked Sendable {
    private let fd: Int32
    private let port: Int
    private var buffer: [UInt8] = []

    /// 90 s: a debug server shared by the whole parallel run has taken over 30 s to answer two
    /// 1,566-row tiles (BudgetTests), and a hang still fails, only later.
    static func open(port: Int, timeoutSeconds: Int = Int(90 * testTimeScale)) async throws -> HTTPConnection {
        try await offPool { try HTTPConnection(port: port, timeoutSeconds: timeoutSeconds) }
    }

    /// `count` connections, each sent `first`, on one thread (not a thread per connection).
    static func open(port: Int, count: Int, sending first: String) async throws -> [HTTPConnection] {
        try await offPool {
            try (0..<count).map { _ in
                let connection = try HTTPConnection(port: port, timeoutSeconds: Int(90 * testTimeScale))
                try connection.sendSync(Array(first.utf8))
                return connection
            }
        }
    }

    private init(port: Int, timeoutSeconds: Int) throws {
        self.port = port
        fd = try HTTPConnection.connected(port: port, timeoutSeconds: timeoutSeconds)
    }

    /// A socket connected to the port, or an error with the socket closed. Not in `init`: an
    /// initializer that throws once every property is set still runs `deinit`, which closed
    /// the descriptor a second time; by then another thread's socket could have its number,
    /// and that connection (a server's or another test's) closed under it.
    private static func connected(port: Int, timeoutSeconds: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HTTPClientError("socket() failed") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let error = errno
            Glibc.close(fd)
            throw HTTPClientError("connect to port \(port) failed: errno \(error)")
        }
        return fd
    }

    deinit { Glibc.close(fd) }

    /// Leaves as a client that gives up does: both directions of its side close (a FIN to the
    /// server), the descriptor itself at deinit.
    func leave() { _ = shutdown(fd, Int32(SHUT_RDWR)) }

    private func sendSync(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw HTTPClientError("send failed: errno \(errno)") }
            sent += n
        }
    }

    func send(_ bytes: [UInt8]) async throws { try await offPool { try self.sendSync(bytes) } }

    func send(_ text: String) async throws { try await send(Array(text.utf8)) }

    /// Reads more bytes; false at the end of the stream (the server closed).
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 { throw HTTPClientError("recv failed: errno \(errno)") }
        if n == 0 { return false }
        buffer += chunk[0..<n]
        return true
    }

    /// True when the server has closed the connection (reads until end of stream or error).
    func isClosedByServer() async -> Bool {
        (try? await offPool { self.isClosedSync() }) ?? false
    }

    private func isClosedSync() -> Bool {
        while true {
            do {
                if try !fill() { return true }
            } catch {
                return errno == ECONNRESET
            }
        }
    }

    func request(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) async throws -> HTTPResponse {
        try await offPool { try self.requestSync(method, target, headers: headers, body: body) }
    }

    /// Connects, sends and reads the answer in one blocking call.
    static func request(port: Int, _ method: String, _ target: String, headers: [(String, String)] = [],
                        body: [UInt8] = []) async throws -> HTTPResponse {
        try await offPool {
            try HTTPConnection(port: port, timeoutSeconds: Int(90 * testTimeScale)).requestSync(method, target, headers: headers, body: body)
        }
    }

    func readResponse(method: String = "GET") async throws -> HTTPResponse {
        try await offPool { try self.readResponseSync(method: method) }
    }

    private func requestSync(_ method: String, _ target: String, headers: [(String, String)], body: [UInt8]) throws -> HTTPResponse {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        try sendSync(Array(head.utf8) + body)
        return try readResponseSync(method: method)
    }

    private func readResponseSync(method: String) throws -> HTTPResponse {
        let separator: [UInt8] = [13, 10, 13, 10]
        var end: Int?
        while true {
            if buffer.count >= 4, let found = (0...(buffer.count - 4)).first(where: { Array(buffer[$0..<$0 + 4]) == separator }) {
                end = found
                break
            }
            guard try fill() else { throw HTTPClientError("connection closed before a response head") }
        }
        guard let headEnd = end else { throw HTTPClientError("no head") }
        let lines = String(decoding: buffer[0..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
        buffer.removeFirst(headEnd + 4)
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw HTTPClientError("bad status line \(lines[0])") }
        var headers: [(String, String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var response = HTTPResponse(status: status, headers: headers, body: [])
        if method == "HEAD" || status == 204 || status == 304 { return response }
        if let length = response.header("Content-Length").flatMap({ Int($0) }) {
            while buffer.count < length { guard try fill() else { throw HTTPClientError("connection closed inside a body") } }
            response.body = Array(buffer[0..<length])
            buffer.removeFirst(length)
        } else if response.header("Transfer-Encoding")?.lowercased() == "chunked" {
            while true {
                while !buffer.contains(10) { guard try fill() else { throw HTTPClientError("closed in a chunk size") } }
                guard let lineEnd = buffer.firstIndex(of: 10) else { break }
                let sizeText = String(decoding: buffer[0..<lineEnd], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                buffer.removeFirst(lineEnd + 1)
                guard let size = Int(sizeText.split(separator: ";").first ?? "", radix: 16) else { throw HTTPClientError("bad chunk size") }
                while buffer.count < size + 2 { guard try fill() else { throw HTTPClientError("closed in a chunk") } }
                response.body += buffer[0..<size]
                buffer.removeFirst(size + 2)
                if size == 0 { break }
            }
        } else {
            while try fill() {}
            response.body = buffer
            buffer = []
        }
        return response
    }
}

/// A request on a fresh connection. Connecting and sending are one blocking call: as two, the
/// task waited for the cooperative pool between them, and in a loaded parallel run that wait
/// outlasted a test server's 3 s header timeout, which then (rightly) closed the connection.
func get(_ port: Int, _ target: String, headers: [(String, String)] = []) async throws -> HTTPResponse {
    try await HTTPConnection.request(port: port, "GET", target, headers: headers)
}

func post(_ port: Int, _ target: String, body: String, headers: [(String, String)] = []) async throws -> HTTPResponse {
    try await HTTPConnection.request(port: port, "POST", target, headers: headers, body: Array(body.utf8))
}

/// The demo store (scripts/build-demo-store.sh, as `make demo` builds it) plus two of the
/// mbtileserver fixtures: a gzip MVT set and a PNG set, for Content-Encoding and Content-Type.
enum DemoStore {
    /// Built once, off the cooperative pool (it runs the CLI and waits for it).
    private static let building = Task {
        try await offPool {
            let db = try Fixtures.temporaryDirectory("server-demo").appendingPathComponent("demo.gpkg").path
            try build(at: db)
            return db
        }
    }

    static func path() async throws -> String { try await building.value }

    static func build(at db: String) throws {
        let build = try CLI.run([db, CLI.binary.path], executable: Fixtures.root.appendingPathComponent("scripts/build-demo-store.sh"))
        guard build.status == 0 else { throw HTTPClientError("build-demo-store.sh: \(build.stderr)") }
        for (file, name) in [("mbtiles/mbtileserver-world_cities.mbtiles", "world_cities"), ("mbtiles/mbtileserver-geography-class-png.mbtiles", "geography")] {
            let result = try CLI.run(["import", Fixtures.path(file), "--layer", name, "--db", db])
            guard result.status == 0 else { throw HTTPClientError("import \(file): \(result.stderr)") }
        }
    }

    /// A private copy, for tests that change the store.
    static func copy() async throws -> String {
        let source = try await path()
        let target = try Fixtures.temporaryDirectory("server-store").appendingPathComponent("store.gpkg").path
        try FileManager.default.copyItem(atPath: source, toPath: target)
        return target
    }
}

/// A server running in this process until `stop()`.
final class RunningServer: Sendable {
    let server: VltavaServer
    let port: Int
    private let task: Task<Void, any Error>

    private init(server: VltavaServer, port: Int, task: Task<Void, any Error>) {
        self.server = server
        self.port = port
        self.task = task
    }

    static func start(_ configure: (inout ServerConfiguration) -> Void = { _ in }, logger: Logger? = nil,
                      load: @escaping @Sendable () throws -> Engine) async -> RunningServer {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.logLevel = .error
        // The tests run in parallel on a debug build (several times slower than release) on a
        // shared machine: the heavy pool gets more threads and a longer queue wait than a
        // deployment, so that a test never sees 503 busy unless it asks for it (BudgetTests).
        configuration.heavyWorkers = 4
        configuration.heavyQueue = 64
        configuration.heavyQueueTimeout = .seconds(120)
        // Likewise the connection timeouts: a machine loaded by other builds and tests has held
        // every in-process server's threads past the deployment's 10 s header timeout, which
        // then closed connections whose heads had arrived but were not read yet ("connection
        // closed before a response head" in four tests at once). The tests of the timeouts
        // themselves set theirs.
        configuration.headerTimeout = .seconds(120)
        configuration.idleTimeout = .seconds(120)
        configuration.requestTimeout = .seconds(120)
        configure(&configuration)
        let server = VltavaServer(configuration: configuration, logger: logger ?? Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }), load: load)
        let task = Task(executorPreference: serverThreads) { try await server.run() }
        let port = await server.port()
        return RunningServer(server: server, port: port, task: task)
    }

    /// The threads the in-process servers' tasks (and their connections' child tasks) run on.
    /// On Swift's cooperative pool (as many threads as cores) they starved whenever tests
    /// beside them blocked that pool (a synchronous test waiting for a CLI child, a long
    /// computation): a request then waited over 10 s for its handler, the header timeout closed
    /// connections whose heads had not been read, and clients timed out. A deployment has no
    /// tests beside it.
    static let serverThreads = ThreadExecutor(threads: 8)

    static func start(store: String, _ configure: (inout ServerConfiguration) -> Void = { _ in }) async -> RunningServer {
        await start(configure) { try Engine(storePath: store, limits: testLimits) }
    }

    /// The default limits, with more seconds per request: a debug build under a parallel test
    /// run takes several seconds for what a release build does in a fraction of one.
    static var testLimits: EngineLimits {
        var limits = EngineLimits()
        limits.maxRequestSeconds = 60
        return limits
    }

    /// Waits until /healthz answers 200, and fails at once when the first load failed. The
    /// first snapshot loads after the server listens; under ThreadSanitizer (5–15× slower) or a
    /// busy parallel run that takes far longer than on a quiet release build, so the wait is
    /// bounded by a generous deadline rather than a count of polls.
    func ready() async throws {
        let deadline = ContinuousClock.now + .seconds(300)
        while ContinuousClock.now < deadline {
            if let reply = try? await get(port, "/healthz") {
                if reply.status == 200 { return }
                if reply.text.contains("snapshot_unavailable") {
                    throw HTTPClientError("the server's first load failed: \(reply.text)")
                }
            }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw HTTPClientError("the server did not become ready within 300 s")
    }

    func stop() { task.cancel() }

    /// One server on the demo store shared by the read-only tests.
    static let shared: Task<RunningServer, any Error> = Task {
        let server = await RunningServer.start(store: try await DemoStore.path())
        try await server.ready()
        return server
    }
}
