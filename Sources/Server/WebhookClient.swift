// The webhooks' HTTP client: one POST on a connection of its own, blocking, on the webhook's
// delivery thread. Written here rather than taken from URLSession: FoundationNetworking
// (libcurl) resent POSTs without their body after a receiver closed a connection, each then
// hanging to its timeout, and it spent several times the CPU of the POST in its own polling.
// http:// only; a receiver behind TLS takes the events through a local relay or proxy.

import Foundation
#if canImport(Glibc)
import Glibc
#endif

enum WebhookClient {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// POSTs `body` to `url` and returns the answer's status code, or throws (no connection, no
    /// answer within `timeout` seconds, an answer that is not HTTP).
    static func post(_ url: URL, headers: [(String, String)], body: [UInt8], timeout: Double) throws(Failure) -> Int {
        guard url.scheme?.lowercased() == "http", let host = url.host else { throw Failure(description: "only http:// URLs are supported") }
        let port = url.port ?? 80
        let descriptor = try connect(host: host, port: port, timeout: timeout)
        defer { close(descriptor) }
        var path = url.path.isEmpty ? "/" : url.path
        if let query = url.query { path += "?" + query }
        var head = "POST \(path) HTTP/1.1\r\nHost: \(host)\(url.port.map { ":\($0)" } ?? "")\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
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
