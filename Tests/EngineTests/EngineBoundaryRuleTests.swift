import Foundation
import Engine
import Geometry
import Store
import TestSupport
import Testing

/// Through the engine: a point on the edge two squares share is in exactly one, whether the
/// squares are polygons of a layer (`containing`, the polygon index) or the convex hulls of
/// point layers (the area check).
@Suite(.validatesStores) struct EngineBoundaryRuleTests {
    typealias S = AdjacentSquares

    static func snapshot() throws -> Snapshot {
        let dir = try Fixtures.temporaryDirectory("boundary")
        let path = dir.appendingPathComponent("squares.gpkg").path
        let store = try GeoPackage(path: path, mode: .readWrite)
        func load(_ name: String, _ text: String, as layer: String) throws {
            let file = dir.appendingPathComponent(name)
            try Data(text.utf8).write(to: file)
            _ = try Importer.importFile(file.path, into: store, options: ImportOptions(layer: layer))
        }
        try load("squares.geojson", S.geoJSON, as: "squares")
        // The corners of each square, and a point inside it: their hull is the square.
        try load("west.csv", "lon,lat\n14.0,50.0\n14.5,50.0\n14.5,50.5\n14.0,50.5\n14.25,50.25\n", as: "west_corners")
        try load("east.csv", "lon,lat\n14.5,50.0\n15.0,50.0\n15.0,50.5\n14.5,50.5\n14.75,50.25\n", as: "east_corners")
        return try Snapshot.load(storePath: path)
    }

    @Test func aPointOnASharedEdgeIsInExactlyOneSquare() throws {
        let snapshot = try Self.snapshot()
        let p = S.onSharedEdge
        let squares = try snapshot.layer("squares")
        let found = try snapshot.containing(snapshot.layer("squares"), at: Point(lon: p.lon, lat: p.lat))
        #expect(found.map { squares.properties[$0.index]["name"] } == [.text("east")])
        #expect(try snapshot.areaCheck(snapshot.layer("squares"), at: Point(lon: p.lon, lat: p.lat)).inside)
        // The hulls: the point is on the west hull's east edge (outside) and the east hull's
        // west edge (inside).
        let west = try snapshot.areaCheck(snapshot.layer("west_corners"), at: Point(lon: p.lon, lat: p.lat))
        let east = try snapshot.areaCheck(snapshot.layer("east_corners"), at: Point(lon: p.lon, lat: p.lat))
        #expect(!west.inside)
        #expect(west.reason == "outside_area")
        #expect(east.inside)
        // A point well inside each hull is inside it, and outside the other.
        #expect(try snapshot.areaCheck(snapshot.layer("west_corners"), at: Point(lon: 14.1, lat: 50.1)).inside)
        #expect(try !snapshot.areaCheck(snapshot.layer("east_corners"), at: Point(lon: 14.1, lat: 50.1)).inside)
    }
}
