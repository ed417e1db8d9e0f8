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
            file (.osm.pbf, .osm, .osm.gz). --profile wheelchair keeps a store route off steps. Points are LON,LAT. Each point
            snaps to the nearest point of the nearest path, at most --max-snap metres away.
            Example: vltava route --from 14.4109,50.1167 --to 14.40519,50.11576 --network paths
            """
    )

    enum OutputFormat: String, ExpressibleByArgument { case text, json }

    // Unconditional: the value may start with '-' (a longitude west of Greenwich).
    @Option(parsing: .unconditional, help: "Start, LON,LAT.") var from: String
    @Option(parsing: .unconditional, help: "Destination, LON,LAT.") var to: String
    @Option(help: "A line layer of the store, or an OSM file.") var network: String
    @Option(help: "foot (default) or wheelchair (step-free) for a store layer; foot or any (every highway) for an OSM file.")
    var profile: String = "foot"
    @Option(help: "Walking speed in km/h (default: the profile's, 5 on foot and 4 by wheelchair).") var speed: Double?
    @Option(help: "Largest snap distance in metres.") var maxSnap: Double = 500
    @Option(help: "For line layers: join line ends that lie within this many metres of another line's end.") var joinEnds: Double = 0
    @Option(help: "text or json.") var format: OutputFormat = .text
    @OptionGroup var store: StoreOptions

    func run() throws {
        let start = try parsePoint(from), end = try parsePoint(to)
        if let speed, !(speed > 0 && speed.isFinite) { throw CLIError("--speed must be a positive number of km/h") }
        let route: Route
        let kmh: Double
        let travel: String
        do {
            if isOSMFile {
                kmh = speed ?? 5
                travel = "on foot"
                let router = try Router(graph: osmGraph(), metresPerSecond: kmh / 3.6, maxSnapMetres: maxSnap)
                route = try router.route(from: Point(lon: start.0, lat: start.1), to: Point(lon: end.0, lat: end.1))
            } else {
                guard let chosen = WalkingProfile(rawValue: profile) else {
                    throw CLIError("unknown profile '\(profile)' for a store layer (profiles: \(WalkingProfile.names))")
                }
                kmh = speed ?? chosen.kmh
                travel = chosen == .wheelchair ? "step-free by wheelchair" : "on foot"
                route = try storeNetwork().withRouter(profile: chosen, metresPerSecond: kmh / 3.6, maxSnapMetres: maxSnap) { router throws(RouteError) in
                    try router.route(from: Point(lon: start.0, lat: start.1), to: Point(lon: end.0, lat: end.1))
                }
            }
        } catch let error as RouteError {
            throw CLIError("\(error.code): \(error)")
        }
        switch format {
        case .json:
            print(JSON.serialize(route.osrmJSON(), pretty: true))
        case .text:
            print(String(format: "%.1f m, %.0f s (%.1f min) %@ at %.1f km/h; distances are great-circle metres (R = 6,371,008.8 m)",
                         route.metres, route.seconds, route.seconds / 60, travel, kmh))
            for (i, w) in route.waypoints.enumerated() {
                print(String(format: "%@ snapped %.1f m to (%.6f, %.6f)", i == 0 ? "start" : "end  ", w.snapMetres, w.location.lon, w.location.lat))
            }
            print("\(route.nodeIDs.count) nodes: \(route.nodeIDs.prefix(8).map(String.init).joined(separator: " "))\(route.nodeIDs.count > 8 ? " …" : "")")
        }
    }

    var isOSMFile: Bool {
        let lowered = network.lowercased()
        return lowered.hasSuffix(".pbf") || lowered.hasSuffix(".osm") || lowered.hasSuffix(".osm.gz")
    }

    func osmGraph() throws -> Graph {
        guard let chosen = OSMProfile(rawValue: profile) else {
            throw CLIError("unknown profile '\(profile)' for an OSM file (profiles: \(OSMProfile.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        do {
            return Graph.fromOSM(try OSMReader.read(path: network), profile: chosen)
        } catch {
            throw CLIError("\(error)")
        }
    }

    func storeNetwork() throws -> Network {
        guard joinEnds >= 0, joinEnds.isFinite else { throw CLIError("--join-ends must be a number of metres ≥ 0") }
        let layer: Layer
        do {
            layer = try Snapshot.load(storePath: store.db).layer(network)
        } catch {
            throw CLIError("\(error)")
        }
        guard let network = try Network.build(from: layer, joinEnds: joinEnds) else {
            throw CLIError("layer '\(network)' has no lines to walk along")
        }
        return network
    }
}
