import Engine
import Foundation
import Geometry
import Store
import Support
import TestSupport
import Testing

/// OSM in the store: Andorra imported with `vltava import andorra.osm.pbf --layer andorra`,
/// served, and routed over by name (the import of each OSM format is EngineTests'
/// `OSMImportTests`). The reference is what `vltava route --network
/// andorra.osm.pbf` answers: `Network.fromOSM`, which reads the file itself and builds the
/// graph with `Graph.fromOSM`, a path that shares nothing with the layer's.
@Suite(.validatesStores) struct OSMLayerTests {
    @Test func theServerRoutesOverAnImportedOSMLayerAsOverTheFile() async throws {
        let pbf = Fixtures.path("osm/andorra.osm.pbf")
        let db = try Fixtures.temporaryDirectory("osm-layer").appendingPathComponent("andorra.gpkg").path
        let imported = try await offPool { try CLI.run(["import", pbf, "--layer", "andorra", "--db", db]) }
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout == "imported 1615 LINESTRING features into layer 'andorra' (osm)\n")
        #expect(try GeoPackageValidator.problems(db) == nil)

        let server = await RunningServer.start(store: db)
        defer { server.stop() }
        try await server.ready()

        let foot = try Network.fromOSM(path: pbf, profile: WalkingProfile.foot)
        let any = try Network.fromOSM(path: pbf, profile: WalkingProfile.any)
        // 200 pairs of places near the network's nodes (up to ~50 m off), drawn from a fixed
        // seed; the first 40 are also asked with profile=any.
        var random = SplitMix(state: 14)
        let graph = foot.graph
        func place() -> Point {
            let node = Int.random(in: 0..<graph.nodeCount, using: &random)
            return Point(lon: graph.lons[node] + Double.random(in: -0.0005...0.0005, using: &random),
                         lat: graph.lats[node] + Double.random(in: -0.0005...0.0005, using: &random))
        }
        var found = 0, compared = 0, ties = 0
        for pair in 0..<200 {
            let from = place(), to = place()
            for (profile, network) in pair < 40 ? [("foot", foot), ("any", any)] : [("foot", foot)] {
                let target = "/v1/route?from=\(from.lon),\(from.lat)&to=\(to.lon),\(to.lat)&network=andorra&profile=\(profile)"
                let reply = try await get(server.port, target)
                compared += 1
                do {
                    let expected = try network.route(RouteRequest(from: .point(from), to: .point(to)), limits: RunningServer.testLimits).route
                    #expect(reply.status == 200, "\(target): \(reply.text)")
                    let route = reply.json["routes"]?[0]
                    #expect(route?["distance"]?.number == Rounding.metres(expected.metres), "\(target)")
                    // The same nodes, but where two paths are equally long (Andorra has ways
                    // joined by zero-length edges, nodes at one position): a route by A* (while
                    // a hierarchy is still being built) and one by the hierarchy may take
                    // either; the length above is the same.
                    if route?["nodes"]?.items.compactMap({ if case .integer(let id) = $0 { id } else { nil } }) != expected.nodeIDs { ties += 1 }
                    found += 1
                } catch {
                    // No route from the file either: the same OSRM code over HTTP.
                    #expect(reply.status == 422, "\(target): \(reply.text)")
                    #expect(reply.json["code"] == .string(error.code), "\(target)")
                }
            }
        }
        #expect(compared == 240)
        // Most pairs do have a route (Andorra's ways are mostly one component).
        #expect(found > 150, "only \(found) routes found")
        #expect(ties <= found / 20, "\(ties) of \(found) routes on other nodes")

        // The CLI over the file, for one pair, says the same as the server over the layer.
        let cli = try await offPool {
            try CLI.run(["route", "--from", "1.52,42.51", "--to", "1.54,42.50", "--network", pbf, "--format", "json"])
        }
        #expect(cli.status == 0, "\(cli.stderr)")
        let overFile = (try? JSON.parse(Array(cli.stdout.utf8))) ?? .null
        let overLayer = try await get(server.port, "/v1/route?from=1.52,42.51&to=1.54,42.50&network=andorra").json
        #expect(overFile["routes"]?[0]?["distance"] == overLayer["routes"]?[0]?["distance"])
        #expect(overFile["routes"]?[0]?["nodes"] == overLayer["routes"]?[0]?["nodes"])
        #expect(overLayer["routes"]?[0]?["nodes"]?.items.count == 239)
    }
}
