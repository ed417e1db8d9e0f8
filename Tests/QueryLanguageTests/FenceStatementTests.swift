import Engine
import Foundation
import Geometry
import QueryLanguage
import Support
import TestSupport
import Testing

/// SHOW FENCES, CREATE FENCE, DROP FENCE through an engine: the same definitions as PUT
/// /v1/fences, kept in the store (a new engine on it lists them), refused on a snapshot, with
/// clear errors.
@Suite(.validatesStores) struct FenceStatementTests {
    @Test func fencesThroughTheLanguage() throws {
        let path = try WriteStatementTests.demoCopy("query-fences")
        let engine = try Engine(storePath: path)
        try engine.declareLiveLayer("visitors", settings: LiveLayerSettings(history: .last(3), ttlSeconds: 600))
        let gorillas = #"{"watch": {"layer": "visitors"}, "area": {"layer": "pens", "match": {"name": "gorily"}, "within_m": 50}}"#
        let created = try Query.run("CREATE FENCE gorillas AS '" + gorillas + "'", on: engine)[0].json()
        #expect(created["rows"]?[0]?["name"] == .string("gorillas") && created["rows"]?[0]?["running"] == .bool(true), "\(created)")
        // A bound parameter holds the definition as well; a second fence replaces nothing.
        let entrance = #"{"watch": {"layer": "visitors"}, "area": {"point": [14.4052, 50.1157], "radius_m": 30}}"#
        _ = try Query.run("CREATE FENCE entrance AS $1", [entrance], on: engine)
        let listed = try Query.run("SHOW FENCES", on: engine)[0].json()["rows"]?.items ?? []
        #expect(listed.map { $0["name"] } == [.string("entrance"), .string("gorillas")])
        #expect(listed.last?["definition"]?.string.flatMap { try? JSON.parse($0) } == (try? JSON.parse(gorillas)))
        // The engine's own list is the same, and a new engine on the store keeps them.
        #expect(engine.fences.map(\.definition.name) == ["entrance", "gorillas"])
        #expect(try Engine(storePath: path).fences.map(\.definition.name) == ["entrance", "gorillas"])
        // A position inside fires the fence created in the language.
        let receipt = try engine.updatePositions("visitors", [PositionUpdate(id: "phone", point: Point(lon: 14.40519, lat: 50.1160), time: Date().timeIntervalSince1970)])
        #expect(receipt.events.map(\.fence).contains("gorillas"))
        let dropped = try Query.run("DROP FENCE entrance", on: engine)[0].json()
        #expect(dropped["rows"]?[0]?["dropped"] == .bool(true) && engine.fences.map(\.definition.name) == ["gorillas"])
    }

    @Test func badFenceStatementsSayWhy() throws {
        let path = try WriteStatementTests.demoCopy("query-fences-bad")
        let engine = try Engine(storePath: path)
        func code(_ text: String, _ parameters: [any QueryArgument] = []) -> String? {
            do {
                _ = try Query.run(text, parameters, on: engine)
                return nil
            } catch {
                return error.code
            }
        }
        #expect(code("DROP FENCE nothing") == "unknown_fence")
        #expect(code("CREATE FENCE f AS 'not json'") == "invalid_value")
        #expect(code(#"CREATE FENCE f AS '{"watch": {"layer": "cars"}, "area": {"point": [14.4, 50.1], "radius_m": 5}}'"#) == "unknown_live_layer")
        #expect(code("CREATE FENCE f AS $1", [5]) != nil)
        #expect(code("CREATE FENCE f '{}'") == "syntax_error")
        #expect(code("SHOW FENCE") == "syntax_error")
        // On a snapshot, without an engine: refused, not ignored.
        #expect(throws: QueryError.self) { try Query.run("SHOW FENCES", on: engine.snapshot) }
    }
}
