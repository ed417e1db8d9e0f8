// Request counts and latency histograms per route, written in the Prometheus text exposition
// format (version 0.0.4) by hand. swift-prometheus would add swift-metrics' global registry and
// a second set of types for what is here a dictionary, a few counters and one lock; the text
// format is short and stable, so writing it is the leaner choice (docs/HTTP_API.md).

import Geometry
import Foundation
import Support

final class HTTPMetrics: Sendable {
    /// Upper bounds of the latency buckets in seconds: fine below 10 ms, where the API lives.
    static let buckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    private struct Key: Hashable {
        var route: String
        var method: String
    }

    private struct Series {
        var byStatus: [Int: Int] = [:]
        /// Non-cumulative counts per bucket, plus one for +Inf.
        var buckets = [Int](repeating: 0, count: HTTPMetrics.buckets.count + 1)
        var sum = 0.0
        var count = 0
    }

    private struct State {
        var series: [Key: Series] = [:]
        var inFlight = 0
        var reloads: [String: Int] = ["ok": 0, "error": 0]
    }

    private let state = Locked(State())

    func begin() {
        state.withLock { $0.inFlight += 1 }
    }

    /// `route` is the route template (`/v1/layers/{layer}/containing`), never the raw path, so
    /// the number of series stays bounded whatever clients send.
    func end(route: String, method: String, status: Int, seconds: Double) {
        let bucket = HTTPMetrics.buckets.firstIndex { seconds <= $0 } ?? HTTPMetrics.buckets.count
        state.withLock { state in
            state.inFlight -= 1
            // One in-place update of the dictionary's value (no copy of its bucket array).
            func add(_ series: inout Series) {
                series.byStatus[status, default: 0] += 1
                series.buckets[bucket] += 1
                series.sum += seconds
                series.count += 1
            }
            add(&state.series[Key(route: route, method: method), default: Series()])
        }
    }

    func reloaded(ok: Bool) {
        state.withLock { $0.reloads[ok ? "ok" : "error", default: 0] += 1 }
    }

    /// The exposition text; `snapshotLoadedAt` is the current snapshot's load time, if any.
    func render(snapshotLoadedAt: Date?, snapshotLoadSeconds: Double?) -> String {
        let copy = state.withLock { $0 }
        let keys = copy.series.keys.sorted { ($0.route, $0.method) < ($1.route, $1.method) }
        var out = ""
        out += header("vltava_http_requests_total", "counter", "HTTP requests answered, by route template, method and status.")
        for key in keys {
            guard let series = copy.series[key] else { continue }
            for (status, count) in series.byStatus.sorted(by: { $0.key < $1.key }) {
                out += "vltava_http_requests_total{\(labels(key)),status=\"\(status)\"} \(count)\n"
            }
        }
        out += header("vltava_http_request_duration_seconds", "histogram", "Time from the request head to the response, by route template and method.")
        for key in keys {
            guard let series = copy.series[key] else { continue }
            var cumulative = 0
            for (i, bound) in HTTPMetrics.buckets.enumerated() {
                cumulative += series.buckets[i]
                out += "vltava_http_request_duration_seconds_bucket{\(labels(key)),le=\"\(bound)\"} \(cumulative)\n"
            }
            cumulative += series.buckets[HTTPMetrics.buckets.count]
            out += "vltava_http_request_duration_seconds_bucket{\(labels(key)),le=\"+Inf\"} \(cumulative)\n"
            out += "vltava_http_request_duration_seconds_sum{\(labels(key))} \(series.sum)\n"
            out += "vltava_http_request_duration_seconds_count{\(labels(key))} \(series.count)\n"
        }
        out += header("vltava_http_requests_in_flight", "gauge", "Requests being answered now.")
        out += "vltava_http_requests_in_flight \(copy.inFlight)\n"
        out += header("vltava_snapshot_reloads_total", "counter", "Snapshot reloads, by result.")
        for (result, count) in copy.reloads.sorted(by: { $0.key < $1.key }) {
            out += "vltava_snapshot_reloads_total{result=\"\(result)\"} \(count)\n"
        }
        if let snapshotLoadedAt, let snapshotLoadSeconds {
            out += header("vltava_snapshot_loaded_timestamp_seconds", "gauge", "When the current snapshot was built (Unix time).")
            out += "vltava_snapshot_loaded_timestamp_seconds \(snapshotLoadedAt.timeIntervalSince1970)\n"
            out += header("vltava_snapshot_load_seconds", "gauge", "Seconds it took to load and index the current snapshot.")
            out += "vltava_snapshot_load_seconds \(snapshotLoadSeconds)\n"
        }
        return out
    }

    private func labels(_ key: Key) -> String {
        "route=\"\(escape(key.route))\",method=\"\(escape(key.method))\""
    }

    /// Label values escape backslash, double quote and newline (the format's only escapes).
    private func escape(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }

    /// The `# HELP` and `# TYPE` lines that open a metric in the Prometheus text format.
    private func header(_ name: String, _ type: String, _ help: String) -> String {
        "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }
}
