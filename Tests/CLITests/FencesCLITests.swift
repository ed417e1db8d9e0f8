import Engine
import Foundation
import Geometry
import Live
import Support
import TestSupport
import Testing

@Suite(.validatesStores) struct FencesCLITests {
    /// A threshold fence kept, listed and deleted through `vltava fences`, in the store the
    /// server reads; a fence that cannot run (no such live layer) is refused by name, not kept.
    @Test func putListAndDelete() throws {
        let directory = try Fixtures.temporaryDirectory("fences-cli")
        let db = directory.appendingPathComponent("air.gpkg").path
        #expect(try CLI.run(["import", Fixtures.path("air/stations-prague.csv"), "--layer", "stations", "--db", db]).status == 0)
        #expect(try CLI.run(["import", Fixtures.path("air/observations-2019-04-15-16.csv"), "--layer", "observations", "--time-series-of", "stations", "--db", db]).status == 0)
        let definition = #"{"threshold": {"place": [14.4208, 50.0875], "column": "aqi", "at_least": 4}}"#
        let file = directory.appendingPathComponent("home.json").path
        try definition.write(toFile: file, atomically: true, encoding: .utf8)
        let put = try CLI.run(["fences", "put", "home-air", file, "--db", db])
        #expect(put.status == 0 && put.stdout == "fence 'home-air' kept\n", "\(put.stderr)")
        let list = try CLI.run(["fences", "--db", db])
        #expect(list.stdout == "home-air\trunning\t\(JSON.serialize(try JSON.parse(definition)))\n")

        let moving = directory.appendingPathComponent("moving.json").path
        try #"{"watch": {"layer": "visitors"}, "area": {"point": [14.4, 50.1], "radius_m": 5}}"#.write(toFile: moving, atomically: true, encoding: .utf8)
        let refused = try CLI.run(["fences", "put", "f", moving, "--db", db])
        #expect(refused.status == 1 && refused.stderr.contains("watch.layer: no live layer named 'visitors'"), "\(refused.stderr)")

        #expect(try CLI.run(["fences", "delete", "home-air", "--db", db]).stdout == "fence 'home-air' deleted\n")
        #expect(try CLI.run(["fences", "--db", db]).stdout.isEmpty)
        let missing = try CLI.run(["fences", "delete", "home-air", "--db", db])
        #expect(missing.status == 1 && missing.stderr.contains("no fence named 'home-air'"))
    }
}

/// `vltava positions`: a recorded walk run through a store's live layer and fences, the events
/// printed as the streams send them.
@Suite(.validatesStores) struct PositionsCLITests {
    @Test func aWalkMakesItsFencesEvents() throws {
        let directory = try Fixtures.temporaryDirectory("positions-cli")
        let db = directory.appendingPathComponent("zoo.gpkg").path
        #expect(try CLI.run(["import", Fixtures.path("air/stations-prague.csv"), "--layer", "stations", "--db", db]).status == 0)
        do {  // declared as a server would keep them; the engine (the store's writer) ends here
            let engine = try Engine(storePath: db)
            try engine.declareLiveLayer("visitors", settings: LiveLayerSettings())
            try engine.putFence(FenceDefinition.parse(name: "gorillas", try JSON.parse(
                #"{"watch": {"layer": "visitors"}, "area": {"point": [14.40519, 50.1160], "radius_m": 50}, "detect": ["enter", "exit"]}"#)))
        }
        // From 100 m south of the point, to 10 m south (inside), to 100 m north; then a late fix.
        let metre = 180 / (Double.pi * 6_371_008.8)
        let walk = [(-100.0, 0), (-10, 60), (100, 120), (0, 90)].map { metres, seconds in
            #"{"id": "phone-1", "position": [14.40519, \#(50.1160 + metres * metre)], "time": \#(1_780_000_000 + seconds)}"#
        }
        let file = directory.appendingPathComponent("walk.json").path
        try (#"{"positions": ["# + walk.joined(separator: ", ") + "]}").write(toFile: file, atomically: true, encoding: .utf8)
        let run = try CLI.run(["positions", "visitors", file, "--db", db])
        #expect(run.status == 0, "\(run.stderr)")
        let events = run.stdout.split(separator: "\n").map { try? JSON.parse(String($0)) }
        func member(_ event: JSONValue??, _ key: String) -> String? {
            guard case .object(let fields)?? = event, case .string(let text)? = fields[key] else { return nil }
            return text
        }
        #expect(events.map { member($0, "event") } == ["enter", "exit"])
        #expect(events.allSatisfy { member($0, "fence") == "gorillas" && member($0, "object") == "phone-1" })
        #expect(events.map { member($0, "time") } == ["2026-05-28T20:27:40.000Z", "2026-05-28T20:28:40.000Z"])
        #expect(run.stderr == "4 positions through 'visitors': 2 events, 1 stale\n")

        let bad = directory.appendingPathComponent("bad.json").path
        try #"{"positions": [{"id": "a", "position": [14.4, 50.1]}, {"id": "b", "position": [14.4]}]}"#.write(toFile: bad, atomically: true, encoding: .utf8)
        let refused = try CLI.run(["positions", "visitors", bad, "--db", db])
        #expect(refused.status != 0 && refused.stderr.contains("position 2: position: expected [lon, lat]"), "\(refused.stderr)")
        let unknown = try CLI.run(["positions", "cars", file, "--db", db])
        #expect(unknown.status != 0 && unknown.stderr.contains("no live layer named 'cars'"), "\(unknown.stderr)")
    }
}
