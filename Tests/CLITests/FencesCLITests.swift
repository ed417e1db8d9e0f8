import Foundation
import Geometry
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
