// The endpoints of docs/HTTP_API.md. Each one reads and checks its parameters first (400 naming
// the parameter), takes the current snapshot once (503 while loading), and answers from that
// snapshot alone, so a reload in the middle of a request never mixes two versions of the data.

import Engine
import Foundation
import Geometry
import Hummingbird
import QueryLanguage
import Store
import VectorTiles

struct Endpoints: Sendable {
    let state: EngineState
    let configuration: ServerConfiguration
    let metrics: HTTPMetrics
    /// Where the heavy endpoints (query, schedule check, route, tiles) run their work; the
    /// light ones (containing, nearest, here, air, …) answer on the request's own task.
    let heavy: WorkPool
    let connections: ConnectionLimiter

    /// Runs `work`, which may read time series or the rows of a layer kept in the database, on
    /// the heavy-work pool when the snapshot has a database (a PostGIS store waits for
    /// PostgreSQL there, never on the cooperative pool or an event loop), else at once.
    func readsDatabase<T: Sendable>(_ context: APIContext, _ snapshot: Snapshot, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        snapshot.readsSeriesFromStore ? try await heavyWork(context, snapshot) { _ in try work() } : try work()
    }

    /// Runs a heavy request's work on the pool (`WorkPool`) with the request's one budget: its
    /// seconds start when the work does, and its deadline ends early when the client goes
    /// (`ConnectionLimiter.departure`), which also drops the job if it is still queued. Every
    /// heavy endpoint comes through here and hands `budget.deadline` to its Engine operation.
    func heavyWork<T: Sendable>(_ context: APIContext, _ snapshot: Snapshot,
                                _ work: @escaping @Sendable (_ budget: RequestBudget) throws -> T) async throws -> T {
        let departure = connections.departure(of: context.channel)
        let limits = snapshot.limits
        return try await heavy.run(cancellation: departure) { try work(RequestBudget(limits: limits, cancellation: departure)) }
    }

    /// `W/"…"`: a 64-bit hash of an answer's bytes (or a stored tile's), in hex. Not
    /// cryptographic: it only has to change when the bytes do, the same on every replica and
    /// after every restart (so not Swift's seeded `Hasher`). FNV-1a's step taken eight bytes at
    /// a time (every step a bijection of the state, so one changed word always changes it),
    /// then MurmurHash3's finaliser so every bit of the tag depends on every bit of the state.
    static func weakETag(_ bytes: [UInt8]) -> String { weakETag(bytes[...]) }

    static func weakETag(_ bytes: ArraySlice<UInt8>) -> String {
        let prime: UInt64 = 0x0000_0100_0000_01B3
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(bytes.count)
        bytes.withUnsafeBytes { raw in
            var i = 0
            while i + 8 <= raw.count {
                hash = (hash ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* prime
                i += 8
            }
            while i < raw.count {
                hash = (hash ^ UInt64(raw[i])) &* prime
                i += 1
            }
        }
        hash ^= hash >> 33
        hash = hash &* 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        hash = hash &* 0xc4ce_b9fe_1a85_ec53
        hash ^= hash >> 33
        let hex = String(hash, radix: 16)
        return "W/\"" + String(repeating: "0", count: 16 - hex.count) + hex + "\""
    }

    /// If-None-Match's weak comparison (RFC 9110 §13.1.2): `*`, or any listed tag equal to ours
    /// once the W/ prefixes are set aside.
    static func matches(_ ifNoneMatch: String, etag: String) -> Bool {
        func opaque(_ tag: some StringProtocol) -> String {
            let tag = tag.trimmingCharacters(in: .whitespaces)
            return tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag
        }
        let ours = opaque(etag)
        return ifNoneMatch.split(separator: ",").contains { opaque($0) == "*" || opaque($0) == ours }
    }

    /// Where clients reach this server: `--public-url`, else the Host header when it is a plain
    /// host[:port], else the address this connection arrived at.
    func baseURL(_ request: Request, _ context: APIContext) -> String {
        if let url = configuration.publicURL { return url.hasSuffix("/") ? String(url.dropLast()) : url }
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]")
        if let host = request.head.authority, !host.isEmpty, host.count <= 255, host.allSatisfy({ allowed.contains($0) }) {
            return "http://\(host)"
        }
        let local = context.channel.localAddress
        let host = local?.ipAddress.map { $0.contains(":") ? "[\($0)]" : $0 } ?? configuration.host
        return "http://\(host):\(local?.port ?? configuration.port)"
    }

    static func pathEncoded(_ name: String) -> String {
        name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? name
    }

    /// The body as UTF-8 text, at most `limit` bytes (413 beyond; checked on Content-Length
    /// before reading when the client sends one) and within `timeout` (408 for a client that
    /// stops sending).
    static func readBody(_ request: Request, limit: Int, timeout: Duration) async throws -> String {
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw APIError(.contentTooLarge, code: "body_too_large", detail: "the body is \(length) bytes; at most \(limit) are accepted")
        }
        let body = request.body
        let bytes = try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
            group.addTask {
                var collected: [UInt8] = []
                for try await buffer in body {
                    guard collected.count + buffer.readableBytes <= limit else {
                        throw APIError(.contentTooLarge, code: "body_too_large", detail: "the body is larger than \(limit) bytes")
                    }
                    collected += buffer.readableBytesView
                }
                return collected
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let bytes = first else {
                throw APIError(.requestTimeout, code: "body_timeout", detail: "the body did not arrive within \(timeout)")
            }
            return bytes
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw APIError(.badRequest, code: "invalid_body", detail: "the body is not UTF-8 text")
        }
        return text
    }

    /// Compares every byte whatever the first difference, so the time taken tells nothing about
    /// how much of a guessed token was right.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for i in 0..<max(a.count, b.count) {
            difference |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
        }
        return difference == 0
    }
}

/// Runs an engine call and answers its error as a problem (`APIError.engine`).
func engine<T>(_ body: () throws(EngineError) -> T) throws(APIError) -> T {
    do {
        return try body()
    } catch {
        throw APIError.engine(error)
    }
}
