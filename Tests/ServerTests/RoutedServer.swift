// Servers without a socket: requests go straight to the router (HummingbirdTesting's `.router`),
// for tests of what the routes answer, where the connection is not the point. What the
// connection guard does (limits, head deadlines, 414), keep-alive, HEAD over the wire and the
// clients nobody here wrote stay on the loopback servers of HTTPTestSupport.swift.

import Engine
import Hummingbird
import HummingbirdTesting
import HTTPTypes
import Logging
import Server

struct RoutedServer: Sendable {
    let app: Application<RouterResponder<APIContext>>

    static func start(store: String, _ configure: (inout ServerConfiguration) -> Void = { _ in }) async throws -> RoutedServer {
        var configuration = ServerConfiguration()
        configuration.logLevel = .error
        configuration.heavyWorkers = 4
        configuration.heavyQueue = 64
        configuration.heavyQueueTimeout = .seconds(120)
        configure(&configuration)
        let server = VltavaServer(configuration: configuration, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })) {
            try Engine(storePath: store, limits: RunningServer.testLimits)
        }
        return RoutedServer(app: try await server.routerApplication())
    }

    /// One on the demo store, shared by the read-only tests.
    static let shared: Task<RoutedServer, any Error> = Task { try await RoutedServer.start(store: try await DemoStore.path()) }

    func request(_ method: HTTPRequest.Method, _ target: String, headers: [(String, String)] = [], body: String? = nil) async throws -> HTTPResponse {
        var fields = HTTPFields()
        for (name, value) in headers {
            guard let name = HTTPField.Name(name) else { throw HTTPClientError("not a header name: \(name)") }
            fields.append(HTTPField(name: name, value: value))
        }
        let headers = fields
        let response = try await app.test(.router) { client in
            try await client.execute(uri: target, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
        }
        return HTTPResponse(status: Int(response.status.code), headers: response.headers.map { ($0.name.rawName, $0.value) },
                            body: Array(response.body.readableBytesView))
    }
}

func get(_ server: RoutedServer, _ target: String, headers: [(String, String)] = []) async throws -> HTTPResponse {
    try await server.request(.get, target, headers: headers)
}

func post(_ server: RoutedServer, _ target: String, body: String, headers: [(String, String)] = []) async throws -> HTTPResponse {
    try await server.request(.post, target, headers: headers, body: body)
}
