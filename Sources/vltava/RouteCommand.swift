import ArgumentParser
import Foundation
import Geometry
import Routing
import Engine

struct RouteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "route",
        abstract: "A walking route between two points, over a line layer of the store or an OSM file.",
        discussion: """
            The network is a line layer of the store (roads meet where they share a vertex, or an
            OSM node id when the layer has node_ids, as the zoo's paths do), or an OpenStreetMap
            file (.osm.pbf, .osm, .osm.gz) read with --profile. Points are LON,LAT. Each point
            snaps to the nearest point of the nearest path, at most --max-snap metres away.
            Example: vltava route --from 14.4109,50.1167 --to 14.40519,50.11576 --network paths
            """
    )

    enum OutputFormat: String, ExpressibleByArgument { case text, json }

    @Option(help: "Start, LON,LAT.") var from: String
    @Option(help: "Destination, LON,LAT.") var to: String
    @Option(help: "A line layer of the store, or an OSM file.") var network: String
    @Option(help: "For OSM files: foot (default) or any (every highway).") var profile: String = "foot"
    @Option(help: "Walking speed in km/h.") var speed: Double = 5
    @Option(help: "Largest snap distance in metres.") var maxSnap: Double = 500
    @Option(help: "For line layers: join line ends that lie within this many metres of another line's end.") var joinEnds: Double = 0
    @Option(help: "text or json.") var format: OutputFormat = .text
    @OptionGroup var store: StoreOptions

    func run() throws {
        let start = try parsePoint(from), end = try parsePoint(to)
        guard speed > 0, speed.isFinite else { throw CLIError("--speed must be a positive number of km/h") }
        let graph = try loadNetwork()
        let router = Router(graph: graph, metresPerSecond: speed / 3.6, maxSnapMetres: maxSnap)
        let route: Route
        do {
            route = try router.route(from: Point(lon: start.0, lat: start.1), to: Point(lon: end.0, lat: end.1))
        } catch {
            throw CLIError("\(error.code): \(error)")
        }
        switch format {
        case .json:
            print(JSON.serialize(route.osrmJSON(), pretty: true))
        case .text:
            print(String(format: "%.1f m, %.0f s (%.1f min) on foot at %.1f km/h; distances are great-circle metres (R = 6,371,008.8 m)",
                         route.metres, route.seconds, route.seconds / 60, speed))
            for (i, w) in route.waypoints.enumerated() {
                print(String(format: "%@ snapped %.1f m to (%.6f, %.6f)", i == 0 ? "start" : "end  ", w.snapMetres, w.location.lon, w.location.lat))
            }
            print("\(route.nodeIDs.count) nodes: \(route.nodeIDs.prefix(8).map(String.init).joined(separator: " "))\(route.nodeIDs.count > 8 ? " …" : "")")
        }
    }

    func loadNetwork() throws -> Graph {
        let lowered = network.lowercased()
        if lowered.hasSuffix(".pbf") || lowered.hasSuffix(".osm") || lowered.hasSuffix(".osm.gz") {
            guard let chosen = OSMProfile(rawValue: profile) else {
                throw CLIError("unknown profile '\(profile)' (profiles: \(OSMProfile.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            do {
                return Graph.fromOSM(try OSMReader.read(path: network), profile: chosen)
            } catch {
                throw CLIError("\(error)")
            }
        }
        guard joinEnds >= 0, joinEnds.isFinite else { throw CLIError("--join-ends must be a number of metres ≥ 0") }
        let layer: Layer
        do {
            layer = try Snapshot.load(storePath: store.db).layer(network)
        } catch {
            throw CLIError("\(error)")
        }
        guard let graph = Network.graph(of: layer, joinEnds: joinEnds) else {
            throw CLIError("layer '\(network)' has no lines to walk along")
        }
        return graph
    }
}
