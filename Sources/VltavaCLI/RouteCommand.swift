import ArgumentParser
import Support
import Vltava
import Foundation
import Geometry
import Engine

struct RouteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "route",
        abstract: "A walking route between two points, over a line layer of the store or an OSM file.",
        discussion: """
            The network is a line layer of the store (roads meet where they share a vertex, or an
            OSM node id when the layer has node_ids, as the zoo's paths and imported OSM layers
            do), or an OpenStreetMap file (.osm.pbf, .osm, .osm.gz), read on every call: import it
            once (vltava import FILE.osm.pbf --layer NAME) to route over it by name. Profiles, for
            every network: foot (what OSM's tags let pedestrians walk), wheelchair (foot without
            steps), any (every line, both ways). Points are LON,LAT. Each point
            snaps to the nearest point of the nearest path, at most --max-snap metres away.
            Example: vltava route --from 14.4109,50.1167 --to 14.40519,50.11576 --network paths
            """
    )

    enum OutputFormat: String, ExpressibleByArgument { case text, json }

    // Unconditional: the value may start with '-' (a longitude west of Greenwich).
    @Option(parsing: .unconditional, help: "Start, LON,LAT.") var from: String
    @Option(parsing: .unconditional, help: "Destination, LON,LAT.") var to: String
    @Option(help: "A line layer of the store, or an OSM file.") var network: String
    @Option(help: "foot (default), wheelchair (step-free) or any (every line or highway, both ways).")
    var profile: String = "foot"
    @Option(help: "Walking speed in km/h (default: the profile's, 5 on foot and 4 by wheelchair).") var speed: Double?
    @Option(help: "Largest snap distance in metres (default 500).") var maxSnap: Double?
    @Option(help: "For line layers: join line ends that lie within this many metres of another line's end.") var joinEnds: Double = 0
    @Option(help: "text or json.") var format: OutputFormat = .text
    @OptionGroup var store: StoreOptions

    func run() throws {
        let start = try parsePoint(from), end = try parsePoint(to)
        let answer: RouteAnswer
        do {
            let (network, chosen) = try isOSMFile ? osmNetwork() : storeNetwork()
            answer = try network.route(RouteRequest(from: .point(Point(lon: start.0, lat: start.1)), to: .point(Point(lon: end.0, lat: end.1)),
                                                     profile: chosen, speedKmh: speed, maxSnapMetres: maxSnap), limits: EngineLimits())
        } catch {
            throw CLIError(error, message: "\(error.code): \(error)")
        }
        let route = answer.route
        switch format {
        case .json:
            var w = JSONWriter(pretty: true)
            Output.route(&w, answer)
            print(String(decoding: w.bytes, as: UTF8.self))
        case .text:
            let travel = answer.profile == .wheelchair ? "step-free by wheelchair" : "on foot"
            print(String(format: "%.1f m, %.0f s (%.1f min) %@ at %.1f km/h; distances are great-circle metres (R = 6,371,008.8 m)",
                         route.metres, route.seconds, route.seconds / 60, travel, answer.speedKmh))
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

    var chosenProfile: WalkingProfile {
        get throws(EngineError) {
            guard let chosen = WalkingProfile(rawValue: profile) else {
                throw .invalidArgument(parameter: "profile", message: "unknown profile '\(profile)' (profiles: \(WalkingProfile.names))")
            }
            return chosen
        }
    }

    /// An OSM file's network by the profile.
    func osmNetwork() throws(EngineError) -> (Network, WalkingProfile) {
        let chosen = try chosenProfile
        return (try Network.fromOSM(path: network, profile: chosen), chosen)
    }

    /// A line layer of the store, with its ends joined within --join-ends metres.
    func storeNetwork() throws(EngineError) -> (Network, WalkingProfile) {
        let chosen = try chosenProfile
        guard joinEnds >= 0, joinEnds.isFinite else { throw .invalidArgument(parameter: "join-ends", message: "must be a number of metres ≥ 0") }
        let snapshot = try StoreLocation.snapshot(store.db, limits: store.limits)
        // The snapshot has built every line layer's network already, with no ends joined.
        if joinEnds == 0 { return (try snapshot.network(network), chosen) }
        let layer = try snapshot.layer(network)
        guard let built = try Network.build(from: layer, joinEnds: joinEnds) else {
            throw .unsupportedGeometry(layer: layer.name, operation: "ROUTE", needs: "lines", has: layer.family.rawValue)
        }
        return (built, chosen)
    }
}
