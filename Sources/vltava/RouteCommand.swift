import ArgumentParser
import Foundation
import Geometry
import Routing
import Store

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
            print(JSON.serialize(routeJSON(route), pretty: true))
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
        do {
            let geoPackage = try GeoPackage(path: store.db)
            let info = try geoPackage.layer(network)
            guard info.kind == .features else { throw CLIError("'\(network)' is a table, not a line layer") }
            var lines: [[Double]] = [], ids: [[Int64]] = []
            for stored in try geoPackage.features(of: network) {
                let nodeIDs: [Int64]? = stored.feature.properties["node_ids"]?.stringValue.flatMap { text in
                    guard case .array(let items)? = try? JSON.parse(text) else { return nil }
                    return items.compactMap { if case .integer(let i) = $0 { i } else { nil } }
                }
                switch stored.feature.geometry {
                case .lineString(let l)?:
                    lines.append(l.coordinates)
                    ids.append(nodeIDs?.count == l.pointCount ? nodeIDs ?? [] : [])
                case .multiLineString(let m)?:
                    for i in 0..<m.lineCount { lines.append(m.line(i).coordinates); ids.append([]) }
                default:
                    continue
                }
            }
            guard !lines.isEmpty else { throw CLIError("layer '\(network)' has no lines to walk along") }
            // Vertex ids where the layer has them; shared coordinates otherwise.
            guard joinEnds >= 0, joinEnds.isFinite else { throw CLIError("--join-ends must be a number of metres ≥ 0") }
            return ids.allSatisfy(\.isEmpty) ? Graph.fromLines(lines, snapMetres: joinEnds) : Graph.fromLines(lines, vertexIDs: ids, snapMetres: joinEnds)
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError("\(error)")
        }
    }

    /// The OSRM-like answer: distance (m), duration (s), geometry, waypoints, nodes.
    func routeJSON(_ route: Route) -> JSONValue {
        .object(JSONObject([
            ("code", .string("Ok")),
            ("distance", .double((route.metres * 1000).rounded() / 1000)),
            ("duration", .double((route.seconds * 10).rounded() / 10)),
            ("distance_units", .string("metres, great-circle on a sphere of R = 6,371,008.8 m")),
            ("geometry", GeoJSON.encode(.lineString(route.geometry))),
            ("waypoints", .array(route.waypoints.map { w in
                .object(JSONObject([
                    ("location", .array([.double(w.location.lon), .double(w.location.lat)])),
                    ("distance", .double((w.snapMetres * 1000).rounded() / 1000)),
                ]))
            })),
            ("nodes", .array(route.nodeIDs.map { .integer($0) })),
        ]))
    }
}
