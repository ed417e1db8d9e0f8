// POST /v1/schedule/check: does a festival-goer's plan leave enough time to walk from one event
// to the next? Each event names its place (a point, or features in the query language's target
// syntax, e.g. a stage: `pavilions WHERE name = 'Pavilon goril'`) and its start and end. Each leg
// is a walking route over the network, from the place of one event to the place of the next;
// its slack is the gap between the events minus the walk.

import Engine
import Foundation
import Geometry
import Hummingbird
import QueryLanguage
import Store

extension Endpoints {
    func checkSchedule(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try Parameters(request, allowed: [])
        let text = try await Endpoints.readBody(request, limit: configuration.maxBodyBytes, timeout: configuration.requestTimeout)
        let body: JSONObject
        do {
            guard case .object(let object) = try JSON.parse(text) else { throw APIError(.badRequest, code: "invalid_body", detail: "the body must be a JSON object") }
            body = object
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError(.badRequest, code: "invalid_body", detail: "the body is not JSON: \(error)")
        }
        let speed = body["speed_kmh"]?.number ?? 5
        guard speed > 0 && speed <= 30 else { throw APIError.invalidParameter("speed_kmh", "must be more than 0 and at most 30 km/h, got \(speed)") }
        guard case .array(let items)? = body["events"], (2...20).contains(items.count) else {
            throw APIError.invalidParameter("events", "an array of 2 to 20 events, each {\"name\", \"place\", \"start\", \"end\"}")
        }
        struct Event { var name: String; var place: String; var start: UTCTime; var end: UTCTime }
        var events: [Event] = []
        for (i, item) in items.enumerated() {
            guard case .object(let event) = item, let place = event["place"]?.string, !place.isEmpty,
                  let start = event["start"]?.string.flatMap(UTCTime.parse), let end = event["end"]?.string.flatMap(UTCTime.parse) else {
                throw APIError.invalidParameter("events[\(i)]", "needs \"place\" (POINT(lon lat) or a target such as pavilions WHERE name = '…') and \"start\", \"end\" as UTC times (2026-06-20T14:00:00Z)")
            }
            guard start <= end else { throw APIError.invalidParameter("events[\(i)]", "ends before it starts") }
            if let previous = events.last, start < previous.end {
                throw APIError.invalidParameter("events[\(i)]", "starts before the event before it ends: list the events in time order")
            }
            events.append(Event(name: event["name"]?.string ?? "event \(i + 1)", place: place, start: start, end: end))
        }
        let snapshot = try state.snapshot()
        let network = try Endpoints.networkName(body["network"]?.string, in: snapshot)
        // Each leg is a ROUTE statement of the query language, so places take its syntax and
        // its errors (an unknown layer, a place that matches nothing) with their positions.
        var legs: [JSONValue] = []
        var feasible = true
        for (a, b) in zip(events, events.dropFirst()) {
            let statement = "ROUTE FROM \(a.place) TO \(b.place) ON \(network) SPEED \(speed) km/h"
            let route: JSONObject
            do {
                guard case .object(let answer)? = try Query.run(statement, on: snapshot, limits: configuration.queryLimits).first?.json(),
                      case .array(let routes)? = answer["routes"], case .object(let best)? = routes.first else {
                    throw APIError(.unprocessableContent, code: "NoRoute", detail: "no route from \(a.name) to \(b.name)")
                }
                route = best
            } catch let error as QueryError {
                throw APIError(error.kind == .notFound ? .notFound : error.kind == .impossible || error.kind == .limit ? .unprocessableContent : .badRequest,
                               code: error.code, detail: "leg from \(a.name) to \(b.name): \(error.message)" + (error.hint.map { " — \($0)" } ?? ""),
                               extra: JSONObject([("statement", .string(statement))]))
            }
            let walkSeconds = route["duration"]?.number ?? 0
            let gapSeconds = Double(b.start.seconds - a.end.seconds)
            let slack = gapSeconds - walkSeconds
            if slack < 0 { feasible = false }
            legs.append(.object(JSONObject([
                ("from", .string(a.name)),
                ("to", .string(b.name)),
                ("walk_m", route["distance"] ?? .null),
                ("walk_min", .double((walkSeconds / 6).rounded() / 10)),
                ("gap_min", .double((gapSeconds / 6).rounded() / 10)),
                ("slack_min", .double((slack / 6).rounded() / 10)),
                ("enough_time", .bool(slack >= 0)),
            ])))
        }
        return Reply.json(.object(JSONObject([
            ("feasible", .bool(feasible)),
            ("speed_kmh", .double(speed)),
            ("network", .string(network)),
            ("legs", .array(legs)),
            ("distance_units", .string(Endpoints.distanceUnits)),
        ])), request: request)
    }
}
