import Foundation
import Geometry
import Routing
import SpatialIndex
import Support
import TestSupport
import Testing

/// The zoo's footpath graph (paths-graph.json), read the way the importer stores it: each road
/// a line with the ids of its nodes, so roads meet where they share an OSM node.
enum ZooNetwork {
    static let graph: Result<Graph, any Error> = Result {
        let root = try JSON.parse([UInt8](Data(contentsOf: Fixtures.url("zoo/paths-graph.json"))))
        guard case .object(let object) = root, case .array(let roads)? = object["roads"] else { throw CocoaError(.fileReadCorruptFile) }
        var lines: [[Double]] = [], ids: [[Int64]] = []
        for road in roads {
            guard case .object(let r) = road, case .object(let g)? = r["geometry"], case .array(let nodes)? = g["coordinates"] else { continue }
            var line: [Double] = [], lineIDs: [Int64] = []
            for node in nodes {
                guard case .object(let n) = node, let lon = n["lon"]?.number, let lat = n["lat"]?.number, case .integer(let id)? = n["_id"] else { continue }
                line += [lon, lat]
                lineIDs.append(id)
            }
            lines.append(line)
            ids.append(lineIDs)
        }
        return Graph.fromLines(lines, vertexIDs: ids)
    }
}

@Suite(.validatesStores) struct ZooRoutingTests {
    @Test func componentsOfTheZooNetwork() throws {
        let graph = try ZooNetwork.graph.get()
        #expect(graph.nodeCount == 3361)
        #expect(graph.componentCount == 61)
        #expect(graph.componentSizes.first == 1212)
        // The shared benchmark's generator counts 3,573 undirected edges after merging duplicates.
        #expect(graph.edgeCount == 2 * 3573)
    }

    /// A* against Dijkstra on 2,000 random pairs of the largest component: the same length to
    /// 1e-9 relative, every route's LineString as long as its reported distance, and fewer
    /// nodes settled.
    @Test func aStarEqualsDijkstraAndSettlesFewer() throws {
        let graph = try ZooNetwork.graph.get()
        let search = Search(graph: graph)
        let largest = (0..<graph.nodeCount).filter { graph.component[$0] == 0 }
        var g = SplitMix(state: 5)
        var settledAStar = 0, settledDijkstra = 0
        for _ in 0..<2_000 {
            let s = largest[Int.random(in: 0..<largest.count, using: &g)], t = largest[Int.random(in: 0..<largest.count, using: &g)]
            let a = try search.shortestPath(from: [(s, 0)], to: [(t, 0)])
            settledAStar += search.settled
            let d = try search.shortestPath(from: [(s, 0)], to: [(t, 0)], heuristic: false)
            settledDijkstra += search.settled
            #expect(abs(a.metres - d.metres) <= 1e-9 * max(1, d.metres))
            var along = 0.0
            for (u, v) in zip(a.nodes, a.nodes.dropFirst()) {
                along += Geodesy.haversine(lon1: graph.lons[u], lat1: graph.lats[u], lon2: graph.lons[v], lat2: graph.lats[v])
            }
            #expect(abs(along - a.metres) <= 1e-9 * max(1, a.metres))
        }
        let ratio = Double(settledAStar) / Double(settledDijkstra)
        print("A* settled \(settledAStar), Dijkstra \(settledDijkstra): ratio \(ratio)")
        #expect(ratio < 0.25)  // measured 0.140 with 8 ALT landmarks
    }

    /// From the main entrance (the design brief's example point) to "Pavilon goril": to the
    /// network points nearest to the pavilion's outline, the nearest by route winning.
    @Test func fromTheEntranceToTheGorillas() throws {
        let graph = try ZooNetwork.graph.get()
        let router = try Router(graph: graph)
        let zoo = try GeoJSON.parseDocument([UInt8](Data(contentsOf: Fixtures.url("zoo/pavilions-and-pens.geojson"))))
        guard case .polygon(let pavilion)? = zoo.features.first(where: { $0.properties["name"] == .text("Pavilon goril") })?.geometry else {
            Issue.record("no gorilla pavilion"); return
        }
        let outline = stride(from: 0, to: pavilion.ring(0).count, by: 2).map { i in
            Point(lon: pavilion.coordinates[i], lat: pavilion.coordinates[i + 1])
        }
        let route = try router.route(from: Point(lon: 14.4109, lat: 50.1167), toAny: outline)
        // It ends at the pavilion: its last position is within 30 m of the outline.
        let end = route.geometry.point(at: route.geometry.pointCount - 1)
        #expect(Geodesy.distance(from: end, to: .polygon(pavilion)) < 30)
        // The LineString is as long as the reported distance.
        #expect(abs(Geodesy.length(of: route.geometry.coordinates) - route.metres) < 0.01)
        #expect(abs(route.seconds - route.metres / (5.0 / 3.6)) < 1e-9)
        // Reference: NetworkX on the same graph, the start snapped to the nearest edge and the
        // outline's vertices snapped likewise, joined by virtual edges of the partial lengths:
        // 565.3682578559761 m, start snap 12.773933059523221 m.
        #expect(abs(route.metres - 565.3682578559761) < 1e-6)
        #expect(abs(route.waypoints[0].snapMetres - 12.773933059523221) < 1e-6)
    }

    @Test func clearErrors() throws {
        let router = try Router(graph: ZooNetwork.graph.get())
        // Old Town Square is kilometres from the zoo's paths.
        #expect(throws: RouteError.self) { try router.route(from: Point(lon: 14.4213, lat: 50.0875), to: Point(lon: 14.4109, lat: 50.1167)) }
        do {
            _ = try router.route(from: Point(lon: 14.4213, lat: 50.0875), to: Point(lon: 14.4109, lat: 50.1167))
        } catch {
            #expect(error.code == "NoSegment")
            #expect(error.description.hasPrefix("the start is not within 500 m of the network (the nearest path is "))
        }
        // The same start and end: a zero-length route, not an error.
        let here = Point(lon: 14.4070, lat: 50.1170)
        let zero = try router.route(from: here, to: here)
        #expect(zero.metres == 0)
        #expect(throws: RouteError.invalidPoint("waypoint 0: latitude 114.407 is outside -90…90 — did you swap longitude and latitude?")) {
            try router.route(from: Point(lon: 50.117, lat: 14.407 + 100), to: here)
        }
    }
}

@Suite(.validatesStores) struct AvoidAndComponentTests {
    static let entrance = Point(lon: 14.4109, lat: 50.1167)
    static let gorillaPen = Point(lon: 14.40519, lat: 50.11576)

    /// A box around the middle of the direct route: forbidding it gives a longer route that
    /// never enters it; a penalty factor gives the same detour or the direct way, and the
    /// answer's distance is always real metres along its LineString.
    @Test func avoidingAnArea() throws {
        let router = try Router(graph: ZooNetwork.graph.get())
        let direct = try router.route(from: Self.entrance, to: Self.gorillaPen)
        let middle = direct.geometry.point(at: direct.geometry.pointCount / 2)
        let d = 0.0004
        let (x0, x1, y0, y1) = (middle.lon - d, middle.lon + d, middle.lat - d, middle.lat + d)
        let ring: [Double] = [x0, y0, x1, y0, x1, y1, x0, y1, x0, y0]
        let box = Geometry.polygon(Polygon(rings: [ring]))
        let zone = try PolygonIndex(geometries: [box])
        let forbidden = try router.route(from: Self.entrance, to: Self.gorillaPen, avoiding: Router.Avoid(polygons: zone, factor: nil))
        #expect(forbidden.metres > direct.metres)
        let line = forbidden.geometry
        for i in 1..<(line.pointCount - 1) {
            let a = line.point(at: i), b = line.point(at: i + 1)
            #expect(zone.firstContaining(lon: (a.lon + b.lon) / 2, lat: (a.lat + b.lat) / 2) == nil)
        }
        #expect(abs(Geodesy.length(of: forbidden.geometry.coordinates) - forbidden.metres) < 0.01)
        let weighted = try router.route(from: Self.entrance, to: Self.gorillaPen, avoiding: Router.Avoid(polygons: zone, factor: 1.01))
        #expect(abs(weighted.metres - direct.metres) < 1e-6)  // a 1 % penalty is not worth the detour
        let heavy = try router.route(from: Self.entrance, to: Self.gorillaPen, avoiding: Router.Avoid(polygons: zone, factor: 100))
        #expect(abs(heavy.metres - forbidden.metres) < 1e-6)
    }

    /// Two points on different pieces of the network: NoRoute, saying so.
    @Test func differentComponents() throws {
        let graph = try ZooNetwork.graph.get()
        let router = try Router(graph: graph)
        let inLargest = try #require((0..<graph.nodeCount).first(where: { graph.component[$0] == 0 }))
        let inSecond = try #require((0..<graph.nodeCount).first(where: { graph.component[$0] == 1 }))
        do {
            _ = try router.route(from: Point(lon: graph.lons[inLargest], lat: graph.lats[inLargest]),
                                 to: Point(lon: graph.lons[inSecond], lat: graph.lats[inSecond]))
            Issue.record("a route between components")
        } catch {
            #expect(error.code == "NoRoute")
            #expect(error.description.contains("lie in different, unconnected parts of the network"))
        }
    }

    /// To the pavilion as a feature: its outline sampled every 5 m, so the route can end
    /// between two corners; never longer than the corners-only route (565.368 m), and its
    /// destination lies on the outline.
    @Test func toAFeaturesOutline() throws {
        let router = try Router(graph: ZooNetwork.graph.get())
        let zoo = try GeoJSON.parseDocument([UInt8](Data(contentsOf: Fixtures.url("zoo/pavilions-and-pens.geojson"))))
        let pavilion = try #require(zoo.features.first(where: { $0.properties["name"] == .text("Pavilon goril") })?.geometry)
        let route = try router.route(from: Self.entrance, toFeatures: [pavilion])
        #expect(route.metres <= 565.3682578559761 + 1e-6)
        #expect(route.metres > 500)
        guard case .polygon(let outline) = pavilion else { Issue.record("not a polygon"); return }
        let ring = Geometry.lineString(LineString(coordinates: Array(outline.ring(0))))
        #expect(Geodesy.distance(from: route.waypoints[1].input, to: ring) < 0.01)
    }

    /// Two paths that stop 2 m short of each other: separate without a tolerance, one network
    /// with 5 m.
    @Test func snappingLineEnds() {
        let a: [Double] = [14.4000, 50.1000, 14.4010, 50.1000]
        let b: [Double] = [14.401028, 50.1000, 14.4020, 50.1000]  // starts 2.0 m east of a's end
        #expect(Graph.fromLines([a, b]).componentCount == 2)
        let joined = Graph.fromLines([a, b], snapMetres: 5)
        #expect(joined.componentCount == 1)
        #expect(joined.nodeCount == 3)
        // A vanishing tolerance joins nothing, and does not trap in the grid's Int conversion.
        #expect(Graph.fromLines([a, b], snapMetres: 1e-300).componentCount == 2)
    }

    @Test func aTargetThatMatchesNothing() throws {
        let router = try Router(graph: ZooNetwork.graph.get())
        #expect(throws: RouteError.noTarget(waypoint: 1)) {
            try router.route(from: Self.entrance, toAny: [])
        }
    }

    @Test func searchesAreBoundedInWork() throws {
        let graph = try ZooNetwork.graph.get()
        let search = Search(graph: graph, maxSettled: 10)
        let largest = (0..<graph.nodeCount).filter { graph.component[$0] == 0 }
        #expect(throws: Search.Failure.tooMuchWork(settled: 11)) {
            try search.shortestPath(from: [(largest[0], 0)], to: [(largest[largest.count - 1], 0)], heuristic: false)
        }
    }
}

@Suite(.validatesStores) struct EdgeSetTests {
    /// Either direction finds an edge; repeats, self-loops and nodes out of range are dropped.
    @Test func lookups() {
        let set = EdgeSet(pairs: [(3, 1), (1, 3), (2, 2), (5, 70), (0, 99)], nodeCount: 80)
        #expect(set.count == 2)
        #expect(set.contains(1, 3) && set.contains(3, 1) && set.contains(70, 5))
        #expect(!set.contains(1, 2) && !set.contains(2, 2) && !set.contains(0, 99) && !set.contains(-1, 3) && !set.contains(500, 3))
        #expect(set.pairs.map { [$0.0, $0.1] } == [[1, 3], [5, 70]])
        #expect(!EdgeSet.empty.contains(0, 1))
    }
}
