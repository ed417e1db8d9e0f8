import Foundation
import Geometry
import TestSupport
import Testing
@testable import VectorTiles
import Wire

/// The strict conformance check against the mvt-fixtures suite, and the encoder on small
/// features whose tiles can be worked out by hand.
@Suite(.validatesStores) struct MVTConformanceTests {
    /// The check agrees with the suite: no problem in every tile the suite calls valid in v2,
    /// a problem in every invalid one. Two exceptions, both refused on purpose: 057, whose
    /// MoveTo promises 536,870,911 positions and carries one (the decoder refuses it too), and
    /// 016, which is byte for byte the tile of 003 (a feature without a type field): the suite
    /// calls 003 invalid and 016 valid, and the spec says a feature MUST contain a type.
    @Test func agreesWithTheSuite() throws {
        var disagreements: [String] = []
        var valid = 0, invalid = 0
        for c in try ConformanceTests.cases() {
            let problems = MVTConformance.problems(in: c.tile)
            if c.validV2 {
                valid += 1
                if !problems.isEmpty { disagreements.append("\(c.id) valid: " + problems.joined(separator: "; ")) }
            } else {
                invalid += 1
                if problems.isEmpty { disagreements.append("\(c.id) invalid (\(c.error ?? "?")) but passed") }
            }
        }
        #expect((valid, invalid) == (46, 28))
        let same = try ConformanceTests.cases().filter { ["003", "016"].contains($0.id) }.map(\.tile)
        #expect(same.count == 2 && same[0] == same[1])
        #expect(disagreements == ["016 valid: layer 'hello', feature 0 has no type",
                                  "057 valid: layer 'hello', feature 0: a command promises 536870911 positions and 1 follow"])
    }

    /// The encoder rules add what a decoder tolerates but an encoder must not write.
    @Test func encoderRulesRefuseWhatDecodersTolerate() throws {
        let cases = try ConformanceTests.cases()
        func tile(_ id: String) throws -> [UInt8] { try #require(cases.first { $0.id == id }).tile }
        let rules = MVTConformance.EncoderRules(positions: -64...4160)
        // A feature of type UNKNOWN (written here: the suite has none with the type field);
        // 025: a layer without features; 049: a coordinate past int32.
        var feature = WireWriter(), layer = WireWriter(), unknown = WireWriter()
        feature.varintField(1, 1)
        feature.varintField(3, 0)
        feature.packedField(4, [9, 50, 34] as [UInt32])
        layer.stringField(1, "hello")
        layer.bytesField(2, feature.bytes)
        layer.varintField(5, 4096)
        layer.varintField(15, 2)
        unknown.bytesField(3, layer.bytes)
        #expect(MVTConformance.problems(in: unknown.bytes) == [])
        #expect(MVTConformance.problems(in: unknown.bytes, encoder: rules) == ["layer 'hello', feature 0 has the UNKNOWN geometry type"])
        #expect(MVTConformance.problems(in: try tile("025"), encoder: rules).contains { $0.contains("no features") })
        #expect(MVTConformance.problems(in: try tile("049"), encoder: rules).contains { $0.contains("outside") })
        // The suite's valid polygons keep within the tile and its buffer.
        #expect(MVTConformance.problems(in: try tile("019"), encoder: rules) == [])
        #expect(MVTConformance.problems(in: try tile("022"), encoder: rules) == [])
    }
}

@Suite(.validatesStores) struct MVTEncoderTests {
    static let rules = MVTConformance.EncoderRules(positions: -64...4160)
    /// Tile 14/8848/5550 holds Prague's centre.
    static let projection = TileProjection(z: 14, x: 8848, y: 5550)

    /// Lon/lat of tile positions (as a test writes a feature it wants at known positions).
    static func lonLat(_ positions: [(Double, Double)]) -> [Double] {
        positions.flatMap { let p = projection.lonLat($0.0, $0.1); return [p.lon, p.lat] }
    }

    static func encode(_ features: [(Int64?, Geometry, Attributes)], options: MVTEncodingOptions = MVTEncodingOptions()) -> [UInt8] {
        var layer = MVTLayerEncoder(name: "test", z: 14, x: 8848, y: 5550, options: options)
        for (id, geometry, properties) in features { layer.add(id: id, geometry: geometry, properties: properties) }
        return MVTEncoder.tile([layer])
    }

    static func onlyFeature(_ bytes: [UInt8]) throws -> (MVTLayer, MVTFeature) {
        #expect(MVTConformance.problems(in: bytes, encoder: rules) == [])
        let layer = try #require(try MVTTile(bytes: bytes).layers().first)
        #expect(layer.features.count == 1)
        return (layer, try #require(layer.features.first))
    }

    /// A line's commands, worked out by hand: MoveTo(1) to (10, 10), LineTo(2) by (+10, +20)
    /// and (+0, -5); the repeated point in the middle is dropped. Command integers are
    /// id | count << 3, parameters zigzag: 9 = MoveTo 1, 18 = LineTo 2, 20 = +10, 40 = +20, 9 = -5.
    @Test func lineCommandsByHand() throws {
        let line = LineString(coordinates: Self.lonLat([(10, 10), (20, 30), (20.2, 29.9), (20, 25)]))
        let (_, feature) = try Self.onlyFeature(Self.encode([(7, .lineString(line), Attributes())]))
        #expect(feature.type == .lineString && feature.id == 7)
        #expect(feature.geometry == [9, 20, 20, 18, 20, 40, 0, 9])
    }

    /// Rings are oriented by the spec whatever the input's order: the exterior with positive
    /// surveyor's area in tile coordinates, the hole negative (RFC 7946's counter-clockwise
    /// exterior in lon/lat is clockwise on screen).
    @Test func windingOfExteriorsAndHoles() throws {
        let exterior = [(100.0, 100.0), (100, 1000), (1000, 1000), (1000, 100), (100, 100)]
        let hole = [(400.0, 400.0), (600, 400), (600, 600), (400, 600), (400, 400)]
        for (outer, inner) in [(exterior, hole), (Array(exterior.reversed()), Array(hole.reversed()))] {
            let polygon = Polygon(rings: [Self.lonLat(outer), Self.lonLat(inner)])
            let (_, feature) = try Self.onlyFeature(Self.encode([(1, .polygon(polygon), Attributes())]))
            let rings = try MVTGeometry.commands(feature.geometry, type: .polygon)
            #expect(rings.count == 2)
            let areas: [Int64] = rings.map(MVTGeometry.signedArea)
            let expected: [Int64] = [1_620_000, -80_000]
            #expect(areas == expected)
            let corners: Set<[Int64]> = [[100, 100], [100, 1000], [1000, 1000], [1000, 100]]
            #expect(Set(rings[0].map { [$0.0, $0.1] }) == corners)
            // MoveTo 1 (9), LineTo 3 (26) and ClosePath 1 (15) for each ring.
            let g = feature.geometry
            #expect(g.count == 22 && [g[0], g[3], g[10], g[11], g[14], g[21]] == [9, 26, 15, 9, 26, 15])
        }
    }

    /// A polygon larger than the tile is cut to the tile and its 64-unit buffer, as fixture 056
    /// has it; a line across the tile ends on the buffer's edges.
    @Test func clippingToTheBuffer() throws {
        let big = Polygon(rings: [Self.lonLat([(-900, -900), (5000, -900), (5000, 5000), (-900, 5000), (-900, -900)])])
        let (_, polygon) = try Self.onlyFeature(Self.encode([(1, .polygon(big), Attributes())]))
        let ring = try #require(try MVTGeometry.commands(polygon.geometry, type: .polygon).first)
        let corners: Set<[Int64]> = [[-64, -64], [4160, -64], [4160, 4160], [-64, 4160]]
        #expect(Set(ring.map { [$0.0, $0.1] }) == corners)
        #expect(ring.count == 4)

        let across = LineString(coordinates: Self.lonLat([(-1000, 2048), (5000, 2048)]))
        let (_, line) = try Self.onlyFeature(Self.encode([(2, .lineString(across), Attributes())]))
        #expect(try MVTGeometry.commands(line.geometry, type: .lineString).map { $0.map { [$0.0, $0.1] } } == [[[-64, 2048], [4160, 2048]]])

        // A line that leaves the tile and comes back is two lines of one feature.
        let out = LineString(coordinates: Self.lonLat([(100, 100), (100, -500), (300, -500), (300, 100)]))
        let (_, twice) = try Self.onlyFeature(Self.encode([(3, .lineString(out), Attributes())]))
        #expect(try MVTGeometry.commands(twice.geometry, type: .lineString).map { $0.map { [$0.0, $0.1] } }
                == [[[100, 100], [100, -64]], [[300, -64], [300, 100]]])

        // Wholly outside the buffer: no feature, no layer, an empty tile.
        let far = Polygon(rings: [Self.lonLat([(5000, 5000), (6000, 5000), (6000, 6000), (5000, 5000)])])
        #expect(Self.encode([(4, .polygon(far), Attributes())]) == [])
    }

    /// What rounding makes degenerate is dropped: a ring of zero area, a line that shrinks to a
    /// point, a polygon whose exterior went (with its hole); repeated points of a multi-point.
    @Test func noDegenerateGeometry() throws {
        let sliver = Polygon(rings: [Self.lonLat([(10, 10), (20, 10.2), (30, 9.9), (10, 10)])])
        let dot = LineString(coordinates: Self.lonLat([(50, 50), (50.3, 50.2)]))
        let tinyWithHole = Polygon(rings: [Self.lonLat([(70, 70), (70.4, 70), (70.4, 70.4), (70, 70)]),
                                           Self.lonLat([(70.1, 70.1), (70.2, 70.1), (70.2, 70.2), (70.1, 70.1)])])
        #expect(Self.encode([(1, .polygon(sliver), Attributes()), (2, .lineString(dot), Attributes()), (3, .polygon(tinyWithHole), Attributes())]) == [])
        // A hole that collapses goes; its exterior stays.
        let keptExterior = Polygon(rings: [Self.lonLat([(0, 0), (0, 500), (500, 500), (500, 0), (0, 0)]),
                                           Self.lonLat([(100, 100), (100.2, 100), (100.2, 100.3), (100, 100)])])
        let (_, polygon) = try Self.onlyFeature(Self.encode([(4, .polygon(keptExterior), Attributes())]))
        #expect(try MVTGeometry.commands(polygon.geometry, type: .polygon).count == 1)
        // Multi-point: each position once, in one MoveTo (count 2: 17).
        let points = MultiPoint(coordinates: Self.lonLat([(5, 5), (5.2, 4.9), (9, 9)]))
        let (_, multi) = try Self.onlyFeature(Self.encode([(5, .multiPoint(points), Attributes())]))
        #expect(multi.geometry == [17, 10, 10, 8, 8])
    }

    /// Douglas–Peucker in tile units: a bump of 0.8 units goes at the default tolerance of 1,
    /// one of 3 units stays; tolerance 0 keeps every vertex.
    @Test func simplificationInTileUnits() throws {
        let wiggly = LineString(coordinates: Self.lonLat([(0, 100), (100, 100.8), (200, 100), (300, 103), (400, 100)]))
        let (_, simplified) = try Self.onlyFeature(Self.encode([(1, .lineString(wiggly), Attributes())]))
        #expect(try MVTGeometry.commands(simplified.geometry, type: .lineString).first?.map { [$0.0, $0.1] } == [[0, 100], [200, 100], [300, 103], [400, 100]])
        let (_, full) = try Self.onlyFeature(Self.encode([(1, .lineString(wiggly), Attributes())], options: MVTEncodingOptions(simplification: 0)))
        #expect(try MVTGeometry.commands(full.geometry, type: .lineString).first?.count == 5)
    }

    /// Attribute values keep their types; JSON lists go as their text; nulls are left out;
    /// keys and values are shared between features.
    @Test func typedAttributes() throws {
        let point = Geometry.point(Self.projection.lonLat(2048, 2048))
        let a = Attributes([("name", .text("lachtani")), ("count", .integer(3)), ("offset", .integer(-12)), ("depth", .real(2.5)),
                            ("indoor", .bool(false)), ("animals", .json("[\"Lachtan\"]")), ("note", .null)])
        let b = Attributes([("name", .text("lachtani")), ("count", .integer(4))])
        let bytes = Self.encode([(1, point, a), (2, point, b)])
        #expect(MVTConformance.problems(in: bytes, encoder: Self.rules) == [])
        let layer = try #require(try MVTTile(bytes: bytes).layers().first)
        #expect(layer.keys == ["name", "count", "offset", "depth", "indoor", "animals"])
        #expect(layer.values == [.string("lachtani"), .uint(3), .sint(-12), .double(2.5), .bool(false), .string("[\"Lachtan\"]"), .uint(4)])
        let first = layer.properties(of: layer.features[0])
        #expect(first["count"] == .integer(3) && first["offset"] == .integer(-12) && first["depth"] == .real(2.5))
        #expect(first["indoor"] == .bool(false) && first["animals"] == .text("[\"Lachtan\"]") && first["note"] == nil)
        #expect(layer.features[1].tags == [0, 0, 1, 6])
        #expect(layer.version == 2 && layer.extent == 4096 && layer.name == "test")
    }

    /// An MVT feature has one type: a collection becomes one feature per kind, the id on the
    /// first; ids stay unique in the layer (a repeat is left off), negative ones are left off.
    @Test func collectionsAndIds() throws {
        let point = Geometry.point(Self.projection.lonLat(10, 10))
        let square = Geometry.polygon(Polygon(rings: [Self.lonLat([(100, 100), (100, 200), (200, 200), (200, 100), (100, 100)])]))
        let bytes = Self.encode([(5, .collection([point, square]), Attributes([("name", .text("both"))])),
                                 (5, point, Attributes()), (-3, point, Attributes()), (6, point, Attributes())])
        #expect(MVTConformance.problems(in: bytes, encoder: Self.rules) == [])
        let layer = try #require(try MVTTile(bytes: bytes).layers().first)
        #expect(layer.features.map(\.type) == [.point, .polygon, .point, .point, .point])
        #expect(layer.features.map(\.id) == [5, nil, nil, nil, 6])
        #expect(layer.features.prefix(2).allSatisfy { layer.properties(of: $0)["name"] == .text("both") })
    }

    /// Tile units and lon/lat agree with GDAL's EPSG:3857 tile grid: the corners of tile
    /// 14/8848/5550 (gdaltransform -s_srs EPSG:3857 of the corners' metres, ±20037508.342789244 ·
    /// (2·8848/16384 − 1) and so on, to 1e-9°).
    @Test func projectionOfTheTileCorners() {
        let northWest = Self.projection.lonLat(0, 0), southEast = Self.projection.lonLat(4096, 4096)
        #expect(abs(northWest.lon - 14.4140625) < 1e-9 && abs(southEast.lon - 14.43603515625) < 1e-9)
        #expect(abs(northWest.lat - 50.0923932109388) < 1e-9 && abs(southEast.lat - 50.0782945473894) < 1e-9)
        let (x, y) = Self.projection.project(northWest.lon, northWest.lat)
        #expect(abs(x) < 1e-6 && abs(y) < 1e-6)
    }
}
