// Two middlewares of our own around every route: the access log with metrics (outermost), and
// the problem middleware (innermost) that enforces the URI limit and turns every error into an
// RFC 9457 document, so no error leaves the server as Hummingbird's empty 500.

import Dispatch
import Engine
import Geometry
import Hummingbird
import Logging
import QueryLanguage
import Support
import Synchronization

struct AccessMiddleware: RouterMiddleware {
    typealias Context = APIContext
    let metrics: HTTPMetrics
    let log: RequestLogPolicy

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        let start = DispatchTime.now().uptimeNanoseconds
        metrics.begin()
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            // Only errors raised outside the problem middleware get here (none are expected).
            response = Reply.problem(ProblemMiddleware.problem(for: error, request: request, logger: context.logger), request: request)
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        // The route template, not the path: bounded label values whatever clients send.
        let route = context.endpointPath ?? "unmatched"
        metrics.end(route: route, method: request.method.rawValue, status: response.status.code, seconds: seconds)
        if let (level, sampled) = log.level(status: response.status.code, seconds: seconds, loggerLevel: context.logger.logLevel) {
            var metadata: Logger.Metadata = [
                "method": .string(request.method.rawValue),
                "path": .string(request.uri.path),
                "route": .string(route),
                "status": .stringConvertible(response.status.code),
                "ms": .string(AccessMiddleware.milliseconds(seconds)),
                "client": .string(context.channel.remoteAddress?.ipAddress ?? "-"),
            ]
            if sampled > 1 { metadata["sampled"] = .stringConvertible(sampled) }
            context.logger.log(level: level, "request", metadata: metadata)
        }
        return response
    }
}

/// Which requests the access log writes. A line per request cost 10–18 % of the throughput
/// (and 7 MB/s at 24k requests/s), so: every failed request (4xx at notice, 5xx at error) and
/// every slow one (warning), always; of the others, one in `sampleEvery` at info, marked
/// `sampled` with that number, or every one when the log level is debug or trace.
final class RequestLogPolicy: Sendable {
    let sampleEvery: Int
    let slowSeconds: Double
    private let served = Atomic<Int>(0)

    init(sampleEvery: Int, slowSeconds: Double) {
        self.sampleEvery = max(0, sampleEvery)
        self.slowSeconds = slowSeconds
    }

    /// The level to log a request at, and the sampling rate it stands for; nil: not logged.
    func level(status: Int, seconds: Double, loggerLevel: Logger.Level) -> (Logger.Level, Int)? {
        if status >= 500 { return (.error, 1) }
        if status >= 400 { return (.notice, 1) }
        if seconds >= slowSeconds { return (.warning, 1) }
        if loggerLevel <= .debug { return (.debug, 1) }
        guard sampleEvery > 0, served.add(1, ordering: .relaxed).oldValue % sampleEvery == 0 else { return nil }
        return (.info, sampleEvery)
    }
}

extension AccessMiddleware {
    /// "1.234": milliseconds with three decimals, without Foundation's `String(format:)`
    /// (2 % of a request in profiles).
    static func milliseconds(_ seconds: Double) -> String {
        let micros = Int((seconds * 1e6).rounded())
        let fraction = String(micros % 1000)
        return "\(micros / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}

struct ProblemMiddleware: RouterMiddleware {
    typealias Context = APIContext
    let maxURIBytes: Int

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        let uriBytes = request.uri.description.utf8.count
        guard uriBytes <= maxURIBytes else {
            return Reply.problem(ProblemMiddleware.uriTooLong(bytes: uriBytes, limit: maxURIBytes), request: request)
        }
        do {
            return try await next(request, context)
        } catch {
            return Reply.problem(ProblemMiddleware.problem(for: error, request: request, logger: context.logger), request: request)
        }
    }

    /// 414 for a request target of `bytes` (nil: longer than the HTTP decoder reads, refused by
    /// `ConnectionGuardHandler` before it is read whole).
    static func uriTooLong(bytes: Int?, limit: Int) -> APIError {
        let size = bytes.map { "\($0) bytes" } ?? "more than \(ConnectionLimiter.maxHeadFieldBytes) bytes"
        return APIError(.uriTooLong, code: "uri_too_long", detail: "the request target is \(size); at most \(limit) are accepted")
    }

    static func problem(for error: any Error, request: Request, logger: Logger) -> APIError {
        switch error {
        case let error as APIError:
            return error
        case let error as EngineError:
            return APIError.engine(error)
        case let error as QueryError:
            return APIError.query(error)
        case let error as any CategorizedError:
            return APIError.categorized(error)
        case let error as HTTPError:
            // Hummingbird's own: no route (404), or a body limit it enforced.
            switch error.status {
            case .notFound:
                if let allowed = allowedMethods(for: request.uri.path) {
                    return APIError(.methodNotAllowed, code: "method_not_allowed",
                                    detail: "\(request.uri.path) answers \(allowed.joined(separator: ", ")), not \(request.method.rawValue)",
                                    headers: [.allow: allowed.joined(separator: ", ")])
                }
                return APIError(.notFound, code: "not_found", detail: "no endpoint at \(request.uri.path); see /openapi.json")
            case .contentTooLarge:
                return APIError(.contentTooLarge, code: "body_too_large", detail: error.body ?? "the body is too large")
            default:
                return APIError(error.status, code: "http_\(error.status.code)", detail: error.body ?? error.status.reasonPhrase)
            }
        default:
            logger.error("unexpected error", metadata: ["error": "\(error)", "path": "\(request.uri.path)"])
            return APIError.internalError("an unexpected error occurred; it has been logged")
        }
    }

    /// The methods of the route whose template matches `path`, if any (for 405 rather than 404).
    static func allowedMethods(for path: String) -> [String]? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        var methods: [String] = []
        for route in Endpoints.routes {
            let template = route.path.split(separator: "/", omittingEmptySubsequences: true)
            guard template.count == segments.count else { continue }
            let matches = zip(template, segments).allSatisfy { pattern, segment in
                if pattern.hasPrefix("{") && pattern.hasSuffix("}") { return true }
                if pattern.hasPrefix("{"), let close = pattern.firstIndex(of: "}") { return segment.hasSuffix(pattern[pattern.index(after: close)...]) }
                return pattern == segment
            }
            if matches { methods.append(route.method.rawValue) }
        }
        return methods.isEmpty ? nil : methods
    }
}
