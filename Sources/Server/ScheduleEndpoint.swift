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
import Support

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
        guard case .array(let items)? = body["events"] else {
            throw APIError.invalidParameter("events", "an array of 2 to 20 events, each {\"name\", \"place\", \"start\", \"end\"}")
        }
        let snapshot = try state.snapshot()
        return try await heavyWork(context, snapshot) { budget in
            try Endpoints.checkSchedule(request, snapshot: snapshot, body: body, items: items, speed: speed, deadline: budget.deadline)
        }
    }

    static func checkSchedule(_ request: Request, snapshot: Snapshot, body: JSONObject, items: [JSONValue], speed: Double,
                              deadline: Deadline) throws -> Response {
        // A place is parsed as one place of the language and nothing more: its text is never
        // pasted into a statement, so a place cannot carry clauses of its own.
        var events: [ScheduleEvent] = []
        for (i, item) in items.enumerated() {
            guard case .object(let event) = item, let placeText = event["place"]?.string, !placeText.isEmpty,
                  let start = event["start"]?.string.flatMap(UTCTime.parse), let end = event["end"]?.string.flatMap(UTCTime.parse) else {
                throw APIError.invalidParameter("events[\(i)]", "needs \"place\" (POINT(lon lat) or a target such as pavilions WHERE name = '…') and \"start\", \"end\" as UTC times (2026-06-20T14:00:00Z)")
            }
            let place: RoutePlace
            do {
                place = try Query.place(placeText, on: snapshot)
            } catch {
                var problem = APIError.query(error)
                problem.detail = "events[\(i)].place: \(error.message)" + (error.hint.map { " — \($0)" } ?? "")
                problem.extra["parameter"] = .string("events[\(i)].place")
                throw problem
            }
            events.append(ScheduleEvent(name: event["name"]?.string ?? "event \(i + 1)", place: place, start: start, end: end))
        }
        let check = try engine { () throws(EngineError) in
            try snapshot.checkSchedule(events, on: snapshot.network(body["network"]?.string), speedKmh: speed, deadline: deadline)
        }
        return try Reply.json(request: request, limit: snapshot.limits.maxResponseBytes) { w in Output.schedule(&w, check) }
    }
}

// MARK: - Routes, with their OpenAPI operations (served whole at /openapi.json)

extension Endpoints {
    /// The festival schedule check.
    static let scheduleRoutes: [Route] = [
        Route(.post, "/v1/schedule/check", { try await $0.checkSchedule($1, $2) }, openAPI: #"""
            {
              "summary": "Whether a plan of events leaves enough time to walk from each event to the next",
              "requestBody": {
                "required": true,
                "content": {
                  "application/json": {"schema": {"type": "object", "required": ["events"], "properties": {
                    "network": {"type": "string"},
                    "speed_kmh": {"type": "number", "minimum": 0.5, "maximum": 30, "default": 5},
                    "events": {"type": "array", "minItems": 2, "maxItems": 20, "items": {"type": "object", "required": ["place", "start", "end"], "properties": {
                      "name": {"type": "string"}, "place": {"type": "string", "minLength": 1, "description": "POINT(lon lat), or a query-language target such as pavilions WHERE name = 'Pavilon goril'"},
                      "start": {"type": "string", "format": "date-time"}, "end": {"type": "string", "format": "date-time"}}}}}}}
                }
              },
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "feasible, and per leg the walk (m, min), the gap between the events and the slack (min).", "content": {"application/json": {"schema": {"type": "object"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "413": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
    ]
}
