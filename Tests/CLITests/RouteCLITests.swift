import Foundation
import Geometry
import Support
import TestSupport
import Testing

@Suite(.validatesStores) struct RouteCLITests {
    /// Over the zoo's paths imported into a store: the entrance to the gorilla pen. Reference:
    /// NetworkX on the same graph with the same snapping, 559.5569643307563 m; the start snaps
    /// 12.774 m, the end 18.709 m.
    @Test func zooRouteAsJSON() throws {
        let db = try Fixtures.temporaryDirectory("route").appendingPathComponent("zoo.gpkg").path
        #expect(try CLI.run(["import", Fixtures.path("zoo/paths-graph.json"), "--layer", "paths", "--db", db]).status == 0)
        let route = try CLI.run(["route", "--from", "14.4109,50.1167", "--to", "14.40519,50.11576", "--network", "paths", "--format", "json", "--db", db])
        #expect(route.status == 0, "\(route.stderr)")
        guard case .object(let answer) = try JSON.parse(route.stdout) else { Issue.record("not JSON: \(route.stdout)"); return }
        #expect(answer["code"] == .string("Ok"))
        guard case .array(let routes)? = answer["routes"], case .object(let best)? = routes.first else { Issue.record("no routes"); return }
        #expect(abs((best["distance"]?.number ?? 0) - 559.557) < 0.001)
        #expect(abs((best["duration"]?.number ?? 0) - 402.9) < 0.1)  // 559.557 m at 5 km/h
        guard case .array(let waypoints)? = answer["waypoints"], case .object(let first)? = waypoints.first, case .object(let last)? = waypoints.last else {
            Issue.record("no waypoints"); return
        }
        #expect(abs((first["distance"]?.number ?? 0) - 12.774) < 0.001)
        #expect(abs((last["distance"]?.number ?? 0) - 18.709) < 0.001)
        let geometry = try GeoJSON.geometry(from: best["geometry"] ?? .null)
        guard case .lineString(let line) = geometry else { Issue.record("no LineString"); return }
        #expect(abs(Geodesy.length(of: line.coordinates) - 559.557) < 0.01)
    }

    /// A GPX trace along the entrance–gorilla route (a point every 7 m, 5 s apart, exactly on
    /// the route's line): one matching of the route's length, from its first point to its last;
    /// the OSRM form says the same. A file that is not GPX, or a point out of range, is an error
    /// naming the file.
    @Test func matchAGPXTrace() throws {
        let directory = try Fixtures.temporaryDirectory("match-cli")
        let db = directory.appendingPathComponent("zoo.gpkg").path
        #expect(try CLI.run(["import", Fixtures.path("zoo/paths-graph.json"), "--layer", "paths", "--db", db]).status == 0)
        let route = try CLI.run(["route", "--from", "14.4109,50.1167", "--to", "14.40519,50.11576", "--network", "paths", "--format", "json", "--db", db])
        let line = try GeoJSON.geometry(from: (try JSON.parse(route.stdout))["routes"]?[0]?["geometry"] ?? .null)
        guard case .lineString(let path) = line else { Issue.record("no route line"); return }
        var points = "", carried = 0.0, next = 0.0, count = 0
        let c = path.coordinates
        for i in stride(from: 0, to: c.count - 2, by: 2) {
            let length = Geodesy.haversine(lon1: c[i], lat1: c[i + 1], lon2: c[i + 2], lat2: c[i + 3])
            while next <= carried + length {
                let f = length > 0 ? (next - carried) / length : 0
                let time = String(format: "2026-11-28T10:%02d:%02dZ", (count * 5) / 60, (count * 5) % 60)
                points += String(format: "<trkpt lat=\"%.8f\" lon=\"%.8f\"><time>%@</time></trkpt>\n", c[i + 1] + f * (c[i + 3] - c[i + 1]), c[i] + f * (c[i + 2] - c[i]), time)
                count += 1
                next += 7
            }
            carried += length
        }
        let gpx = directory.appendingPathComponent("walk.gpx")
        try "<?xml version=\"1.0\"?>\n<gpx version=\"1.1\" xmlns=\"http://www.topografix.com/GPX/1/1\"><trk><trkseg>\n\(points)</trkseg></trk></gpx>\n"
            .write(to: gpx, atomically: true, encoding: .utf8)
        let matched = try CLI.run(["match", gpx.path, "--network", "paths", "--accuracy", "3", "--db", db])
        #expect(matched.status == 0, "\(matched.stderr)")
        #expect(matched.stdout.contains(" in 1 matching;") && matched.stdout.contains("matching 1: points 1–\(count),"), "\(matched.stdout)")
        let json = try CLI.run(["match", gpx.path, "--network", "paths", "--accuracy", "3", "--format", "json", "--db", db])
        let metres = try #require((try JSON.parse(json.stdout))["matchings"]?[0]?["distance"]?.number)
        // The walk from the first point (the route's start) to the last, 7 m a step.
        #expect(abs(metres - Double(count - 1) * 7) < 1, "matched \(metres) m of \(Double(count - 1) * 7) m")
        let notGPX = directory.appendingPathComponent("notes.gpx")
        try "hello".write(to: notGPX, atomically: true, encoding: .utf8)
        let refused = try CLI.run(["match", notGPX.path, "--network", "paths", "--db", db])
        #expect(refused.status == 1 && refused.stderr.contains("notes.gpx: not GPX"), "\(refused.stderr)")
    }

    /// To the sea lions' pen from the entrance: 110.4 m on foot down two flights of steps,
    /// 165.7 m step-free (the distances StepFreeRoutingTests checks against a reference
    /// Dijkstra); and a spot that only steps reach.
    @Test func wheelchairRoute() throws {
        let db = try Fixtures.temporaryDirectory("route-cli").appendingPathComponent("zoo.gpkg").path
        #expect(try CLI.run(["import", Fixtures.path("zoo/paths-graph.json"), "--layer", "paths", "--db", db]).status == 0)
        let trip = ["route", "--from", "14.4109,50.1167", "--to", "14.41064991,50.11601702", "--network", "paths", "--db", db]
        let foot = try CLI.run(trip)
        #expect(foot.stdout.hasPrefix("110.4 m, 79 s (1.3 min) on foot at 5.0 km/h"), "\(foot.stdout)\(foot.stderr)")
        let wheelchair = try CLI.run(trip + ["--profile", "wheelchair"])
        #expect(wheelchair.stdout.hasPrefix("165.7 m, 149 s (2.5 min) step-free by wheelchair at 4.0 km/h"), "\(wheelchair.stdout)\(wheelchair.stderr)")
        let stepsOnly = try CLI.run(["route", "--from", "14.396432,50.10957096", "--to", "14.39647441,50.1094895", "--network", "paths", "--profile", "wheelchair", "--db", db])
        #expect(stepsOnly.status == 1)
        #expect(stepsOnly.stderr.contains("NoRoute: no route: no path without steps connects the two points: only paths with steps join them"))
        let bike = try CLI.run(trip + ["--profile", "bike"])
        #expect(bike.stderr.contains("unknown profile 'bike' (profiles: foot, wheelchair, any)"))
    }

    /// Andorra imported into the store routes as the file does, by every profile (one
    /// vocabulary for every network): 6,011.9 m on foot; 7,416.0 m step-free, round the steps
    /// the foot route takes.
    @Test func anImportedOSMLayerRoutesAsTheFileByEveryProfile() throws {
        let db = try Fixtures.temporaryDirectory("route-osm-layer").appendingPathComponent("andorra.gpkg").path
        let pbf = Fixtures.path("osm/andorra.osm.pbf")
        let imported = try CLI.run(["import", pbf, "--layer", "andorra", "--db", db])
        #expect(imported.stdout == "imported 1615 LINESTRING features into layer 'andorra' (osm)\n", "\(imported.stderr)")
        let trip = ["route", "--from", "1.52,42.51", "--to", "1.54,42.50", "--db", db]
        var lengths: [String] = []
        for profile in ["foot", "wheelchair", "any"] {
            let overFile = try CLI.run(trip + ["--network", pbf, "--profile", profile])
            let overLayer = try CLI.run(trip + ["--network", "andorra", "--profile", profile])
            #expect(overFile.status == 0 && overLayer.status == 0, "\(overFile.stderr)\(overLayer.stderr)")
            #expect(overFile.stdout == overLayer.stdout, "\(profile)")
            lengths.append(String(overLayer.stdout.prefix { $0 != "," }))
        }
        #expect(lengths[0] == "6011.9 m" && lengths[1] == "7416.0 m", "\(lengths)")
        // `any` walks every highway both ways: never longer than on foot.
        #expect((Double(lengths[2].dropLast(2)) ?? .infinity) <= 6011.9)
    }

    @Test func clearErrors() throws {
        let db = try Fixtures.temporaryDirectory("route").appendingPathComponent("zoo.gpkg").path
        #expect(try CLI.run(["import", Fixtures.path("zoo/paths-graph.json"), "--layer", "paths", "--db", db]).status == 0)
        let far = try CLI.run(["route", "--from", "14.4213,50.0875", "--to", "14.40519,50.11576", "--network", "paths", "--db", db])
        #expect(far.status != 0)
        #expect(far.stderr.contains("NoSegment: the start is not within 500 m of the network"))
        let unknown = try CLI.run(["route", "--from", "14.4109,50.1167", "--to", "14.40519,50.11576", "--network", "path", "--db", db])
        #expect(unknown.stderr.contains("unknown layer 'path' — did you mean 'paths'?"))
        // Latitude first by mistake: a valid position in Somalia, far from the network.
        let swapped = try CLI.run(["route", "--from", "50.1167,14.4109", "--to", "14.40519,50.11576", "--network", "paths", "--db", db])
        #expect(swapped.status != 0)
        #expect(swapped.stderr.contains("NoSegment"))
        let osm = try CLI.run(["route", "--from", "1.5211,42.5063", "--to", "1.5340,42.5100", "--network", Fixtures.path("osm/andorra.osm.pbf"), "--profile", "bike"])
        #expect(osm.stderr.contains("unknown profile 'bike' (profiles: foot, wheelchair, any)"))
    }

    /// An OSM file with a node that is not a finite position in range: a clear error naming the
    /// node and exit status 1, where `lon="inf"` crashed `vltava route` (SIGILL) and NaN, 95.5
    /// and 1e300 were walked along (issue 19). A PBF whose granularity is corrupt likewise.
    @Test func osmNodesOutOfRangeAreAnError() throws {
        let dir = try Fixtures.temporaryDirectory("route-osm")
        let cases = [
            ("lat='42.52' lon='inf'", "node 3: longitude inf is not a finite number"),
            ("lat='NaN' lon='1.50'", "node 3: latitude nan is not a finite number"),
            ("lat='95.5' lon='1.50'", "node 3: latitude 95.5 is outside -90…90"),
            ("lat='42.52' lon='1e300'", "node 3: longitude 1e+300 is outside -180…180"),
        ]
        for (i, (position, message)) in cases.enumerated() {
            let file = dir.appendingPathComponent("bad\(i).osm")
            try Data("""
                <?xml version='1.0'?><osm version='0.6'>
                <node id='1' lat='42.50' lon='1.50'/><node id='2' lat='42.51' lon='1.50'/><node id='3' \(position)/>
                <way id='10'><nd ref='1'/><nd ref='2'/><nd ref='3'/><tag k='highway' v='footway'/></way>
                </osm>
                """.utf8).write(to: file)
            let route = try CLI.run(["route", "--from", "1.5,42.5", "--to", "1.5,42.51", "--network", file.path])
            #expect(route.status == 1, "\(position): \(route.stdout)\(route.stderr)")
            #expect(route.stderr.contains("bad\(i).osm: \(message)"), "\(route.stderr)")
        }
        let nodes = [PBFBuilder.Node(id: 1, lat: 425_000_000, lon: 15_000_000), PBFBuilder.Node(id: 2, lat: 425_100_000, lon: 15_000_000)]
        let good = dir.appendingPathComponent("good.osm.pbf"), bad = dir.appendingPathComponent("bad.osm.pbf")
        try Data(PBFBuilder.file(nodes: nodes, way: [1, 2])).write(to: good)
        try Data(PBFBuilder.file(nodes: nodes, way: [1, 2], granularity: 100_000)).write(to: bad)
        let fine = try CLI.run(["route", "--from", "1.5,42.5", "--to", "1.5,42.51", "--network", good.path])
        #expect(fine.status == 0 && fine.stdout.hasPrefix("1112.0 m, 801 s"), "\(fine.stdout)\(fine.stderr)")
        let corrupt = try CLI.run(["route", "--from", "1.5,42.5", "--to", "1.5,42.51", "--network", bad.path])
        #expect(corrupt.status == 1)
        #expect(corrupt.stderr.contains("bad.osm.pbf: node 1: latitude 42500 is outside -90…90"), "\(corrupt.stderr)")
    }

    /// `--from -1.5,42.5` was refused as a missing value (the parser took it for an option).
    @Test func negativeLongitudes() throws {
        let nodes = [PBFBuilder.Node(id: 1, lat: 425_000_000, lon: -15_000_000), PBFBuilder.Node(id: 2, lat: 425_100_000, lon: -15_000_000)]
        let file = try Fixtures.temporaryDirectory("route-west").appendingPathComponent("west.osm.pbf")
        try Data(PBFBuilder.file(nodes: nodes, way: [1, 2])).write(to: file)
        let route = try CLI.run(["route", "--from", "-1.5,42.5", "--to", "-1.5,42.51", "--network", file.path])
        #expect(route.status == 0, "\(route.stderr)")
        #expect(route.stdout.hasPrefix("1112.0 m, 801 s (13.3 min) on foot at 5.0 km/h"), "\(route.stdout)")
    }

    /// End to end over the Andorra PBF with the foot profile. The value is pinned from this
    /// implementation (the search itself is checked against Dijkstra and NetworkX on the zoo).
    @Test func andorraOnFoot() throws {
        let route = try CLI.run(["route", "--from", "1.5211,42.5063", "--to", "1.5340,42.5100", "--network", Fixtures.path("osm/andorra.osm.pbf")])
        #expect(route.status == 0, "\(route.stderr)")
        #expect(route.stdout.hasPrefix("1174.6 m, 846 s (14.1 min) on foot at 5.0 km/h"))
    }
}
