// The webhooks' HTTP client: one POST on a connection of its own, blocking, on the webhook's
// delivery thread. Written here rather than taken from URLSession: FoundationNetworking
// (libcurl) resent POSTs without their body after a receiver closed a connection, each then
// hanging to its timeout, and it spent several times the CPU of the POST in its own polling.
// http:// on a plain socket; https:// through SwiftNIO with NIOSSL (BoringSSL), the receiver's
// certificate checked against the system's trust store and `--webhook-ca`'s, and its name.

import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
#if canImport(Glibc)
import Glibc
#endif

/// The certificates an https:// receiver's chain may end in: the system's, and those of a PEM
/// file (`vltava serve --webhook-ca`, for a receiver with a private CA).
public struct WebhookTLS: Sendable {
    let context: NIOSSLContext

    /// Throws a message naming the file when it cannot be read or holds no certificate.
    public init(caFile: String? = nil) throws {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let caFile {
            let certificates: [NIOSSLCertificate]
            do {
                certificates = try NIOSSLCertificate.fromPEMFile(caFile)
            } catch {
                throw WebhookClient.Failure(description: "--webhook-ca \(caFile): not a file of PEM certificates (\(error))")
            }
            guard !certificates.isEmpty else { throw WebhookClient.Failure(description: "--webhook-ca \(caFile): no certificate in it") }
            configuration.additionalTrustRoots = [.certificates(certificates)]
        }
        context = try NIOSSLContext(configuration: configuration)
    }
}

enum WebhookClient {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// POSTs `body` to `url` and returns the answer's status code, or throws (no connection, no
    /// answer within `timeout` seconds, an answer that is not HTTP, a TLS handshake or
    /// certificate that fails).
    static func post(_ url: URL, headers: [(String, String)], body: [UInt8], timeout: Double, tls: Result<WebhookTLS, Failure>) throws(Failure) -> Int {
        let scheme = url.scheme?.lowercased()
        guard scheme == "http" || scheme == "https", let host = url.host else { throw Failure(description: "only http:// and https:// URLs are supported") }
        var path = url.path.isEmpty ? "/" : url.path
        if let query = url.query { path += "?" + query }
        var fields = [("Host", host + (url.port.map { ":\($0)" } ?? "")), ("Content-Length", String(body.count)), ("Connection", "close")]
        fields += headers
        if scheme == "https" {
            return try postTLS(host: host, port: url.port ?? 443, path: path, fields: fields, body: body, timeout: timeout, tls: try tls.get())
        }
        let descriptor = try connect(host: host, port: url.port ?? 80, timeout: timeout)
        defer { close(descriptor) }
        var head = "POST \(path) HTTP/1.1\r\n"
        for (name, value) in fields { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        try send(descriptor, Array(head.utf8) + body)
        // The status line is all that is read: "HTTP/1.1 204 No Content".
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while !received.contains(UInt8(ascii: "\n")) {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw Failure(description: count == 0 ? "the receiver closed the connection without an answer" : "no answer within \(timeout) s") }
            received += buffer[0..<count]
            guard received.count < 8192 else { break }
        }
        let line = String(decoding: received.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        let parts = line.split(separator: " ")
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]) else {
            throw Failure(description: "the answer is not HTTP: \(line.prefix(80))")
        }
        return status
    }

    private static func connect(host: String, port: Int, timeout: Double) throws(Failure) -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let first = found else { throw Failure(description: "cannot resolve \(host)") }
        defer { freeaddrinfo(found) }
        var failure = "cannot connect to \(host):\(port)"
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let address = next {
            next = address.pointee.ai_next
            let descriptor = socket(address.pointee.ai_family, address.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), address.pointee.ai_protocol)
            guard descriptor >= 0 else { continue }
            var limit = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            // With SO_SNDTIMEO set, a blocking connect gives up after the timeout too.
            if Glibc.connect(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 { return descriptor }
            failure = "cannot connect to \(host):\(port): \(String(cString: strerror(errno)))"
            close(descriptor)
        }
        throw Failure(description: failure)
    }

    private static func send(_ descriptor: Int32, _ bytes: [UInt8]) throws(Failure) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return -1 }
                return Glibc.send(descriptor, base + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
            }
            guard count > 0 else { throw Failure(description: "the connection broke while sending: \(String(cString: strerror(errno)))") }
            sent += count
        }
    }
}

extension WebhookClient {
    /// The https:// POST: a channel on NIO's shared event loops with TLS (SNI and the name
    /// checked unless the host is an IP address, whose certificate must name that address),
    /// HTTP/1.1, and a handler that takes the status line's code. The delivery thread waits.
    private static func postTLS(host: String, port: Int, path: String, fields: [(String, String)], body: [UInt8],
                                timeout: Double, tls: WebhookTLS) throws(Failure) -> Int {
        let group = MultiThreadedEventLoopGroup.singleton
        let loop = group.next()
        let status = loop.makePromise(of: Int.self)
        let reader = StatusReader(status)
        let isAddress = host.contains(":") || host.allSatisfy { $0.isNumber || $0 == "." }
        let nanoseconds = Int64(max(0.001, min(timeout, 3600)) * 1e9)
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(.nanoseconds(nanoseconds))
            .channelInitializer { channel in
                do {
                    let handler = try NIOSSLClientHandler(context: tls.context, serverHostname: isAddress ? nil : host)
                    try channel.pipeline.syncOperations.addHandler(handler)
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(reader)
                    return channel.eventLoop.makeSucceededVoidFuture()
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }
        let channel: Channel
        do {
            channel = try bootstrap.connect(host: host, port: port).wait()
        } catch {
            loop.execute { reader.finish(.failure(error)) }  // the promise is kept, not leaked
            throw Failure(description: "cannot connect to \(host):\(port): \(error)")
        }
        defer { channel.close(promise: nil) }
        let timer = loop.scheduleTask(in: .nanoseconds(nanoseconds)) { reader.finish(.failure(Failure(description: "no answer within \(timeout) s"))) }
        var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: path)
        for (name, value) in fields { head.headers.add(name: name, value: value) }
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        defer { timer.cancel() }
        do {
            return try status.futureResult.wait()
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(description: "\(error)")
        }
    }

    /// Completes the POST's promise once: with the answer's status code, or with why there is
    /// none. Unchecked Sendable: it is touched only on its channel's event loop (the timer is
    /// scheduled on that loop too).
    private final class StatusReader: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPClientResponsePart
        private let status: EventLoopPromise<Int>
        private var done = false

        init(_ status: EventLoopPromise<Int>) { self.status = status }

        func finish(_ result: Result<Int, any Error>) {
            guard !done else { return }
            done = true
            status.completeWith(result)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .head(let head) = unwrapInboundIn(data) {
                finish(.success(Int(head.status.code)))
                context.close(promise: nil)
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            finish(.failure(Failure(description: "\(error)")))
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            finish(.failure(Failure(description: "the receiver closed the connection without an answer")))
            context.fireChannelInactive()
        }
    }
}
