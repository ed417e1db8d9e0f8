import Foundation
import Engine
import Geometry
import Store
import Support
import TestSupport
import Testing
@testable import VectorTiles

/// The store's layers as vector tiles (`Snapshot.vectorTile`), round-tripped through the
/// project's own decoder and through GDAL's MVT driver, for the districts, the parking zones
/// and the zoo's pens from z10 to z18. The reference is the layer itself, projected to the
/// tile's units by brute force over every feature (not through the R-tree the encoder uses).
@Suite(.validatesStores) struct VectorTileTests {
    static let layerNames = ["districts", "parking", "pens"]
    static let extent = 4096.0, buffer = 64.0

    struct Tile: Hashable, CustomStringConvertible {
        let z: Int, x: Int, y: Int
        var description: String { "\(z)/\(x)/\(y)" }
    }

    /// The tiles checked: every tile over the layer's bounds at z10 and z11, and from z12 on
    /// the tiles holding the first vertex of six features spread over the layer, with the
    /// tile east of each (so tiles cut through features, not only around them).
    static func tiles(_ layer: Layer) -> [Tile] {
        var out: [Tile] = []
        for z in 10...11 {
            let (x0, y0) = TileMath.tile(lon: layer.bounds.minLon, lat: layer.bounds.maxLat, zoom: z)
            let (x1, y1) = TileMath.tile(lon: layer.bounds.maxLon, lat: layer.bounds.minLat, zoom: z)
            for x in x0...x1 { for y in y0...y1 { out.append(Tile(z: z, x: x, y: y)) } }
        }
        for z in 12...18 {
            var seen = Set<Tile>()
            for k in 0..<6 {
                var first: (Double, Double)?
                layer.geometries[layer.count * k / 6]?.forEachCoordinateArray { c in if first == nil, c.count >= 2 { first = (c[0], c[1]) } }
                guard let (lon, lat) = first else { continue }
                let (x, y) = TileMath.tile(lon: lon, lat: lat, zoom: z)
                for tile in [Tile(z: z, x: x, y: y), Tile(z: z, x: min(x + 1, (1 << z) - 1), y: y)] where seen.insert(tile).inserted {
                    out.append(tile)
                }
            }
        }
        return out
    }

    /// A feature in one tile's units: its parts (rings or lines, without closing positions;
    /// points one each) and whether each part is a hole.
    struct Projected {
        var parts: [[(Double, Double)]] = []
        var holes: [Bool] = []
        var minX = Double.infinity, minY = Double.infinity, maxX = -Double.infinity, maxY = -Double.infinity
    }

    static func project(_ geometry: Geometry, _ projection: TileProjection) -> Projected {
        var out = Projected()
        func add(_ flat: ArraySlice<Double>, hole: Bool, ring: Bool) {
            var part: [(Double, Double)] = []
            var i = flat.startIndex
            while i + 1 < flat.endIndex {
                let p = projection.project(flat[i], flat[i + 1])
                part.append(p)
                out.minX = min(out.minX, p.x); out.maxX = max(out.maxX, p.x)
                out.minY = min(out.minY, p.y); out.maxY = max(out.maxY, p.y)
                i += 2
            }
            if ring, part.count > 1, part.first! == part.last! { part.removeLast() }
            out.parts.append(part)
            out.holes.append(hole)
        }
        func polygon(_ p: Polygon) { for r in 0..<p.ringCount { add(p.ring(r), hole: r > 0, ring: true) } }
        switch geometry {
        case .point(let p): add([p.lon, p.lat][...], hole: false, ring: false)
        case .multiPoint(let m):
            var i = 0
            while i + 1 < m.coordinates.count { add(m.coordinates[i..<(i + 2)], hole: false, ring: false); i += 2 }
        case .lineString(let l): add(l.coordinates[...], hole: false, ring: false)
        case .multiLineString(let m): for i in 0..<m.lineCount { add(m.line(i).coordinates[...], hole: false, ring: false) }
        case .polygon(let p): polygon(p)
        case .multiPolygon(let m): m.polygons.forEach(polygon)
        case .collection: Issue.record("no collections in these layers")
        }
        return out
    }

    static func segmentDistance(_ p: (Double, Double), _ a: (Double, Double), _ b: (Double, Double)) -> Double {
        let dx = b.0 - a.0, dy = b.1 - a.1
        let length = dx * dx + dy * dy
        let t = length > 0 ? max(0, min(1, ((p.0 - a.0) * dx + (p.1 - a.1) * dy) / length)) : 0
        return hypot(a.0 + t * dx - p.0, a.1 + t * dy - p.1)
    }

    /// The distance from a point to the nearest edge of parts (closed as rings when `rings`).
    static func distance(_ p: (Double, Double), to parts: [[(Double, Double)]], rings: Bool) -> Double {
        var best = Double.infinity
        for part in parts {
            if part.count == 1 { best = min(best, hypot(p.0 - part[0].0, p.1 - part[0].1)) }
            let n = part.count
            for i in 0..<(rings ? n : n - 1) where n > 1 {
                let a = part[i], b = part[(i + 1) % n]
                // Cheap reject: the segment's box is farther than the best so far.
                if min(a.0, b.0) - p.0 > best || p.0 - max(a.0, b.0) > best || min(a.1, b.1) - p.1 > best || p.1 - max(a.1, b.1) > best { continue }
                best = min(best, segmentDistance(p, a, b))
            }
        }
        return best
    }

    /// Twice the area of rings by the surveyor's formula (y down).
    static func twiceArea(_ ring: [(Double, Double)]) -> Double {
        var sum = 0.0
        for i in ring.indices {
            let a = ring[i], b = ring[(i + 1) % ring.count]
            sum += a.0 * b.1 - b.0 * a.1
        }
        return sum
    }

    /// An attribute as the tile gives it back: JSON text as text, nulls left out.
    static func expected(_ attributes: Attributes) -> Attributes {
        var out = Attributes()
        for (name, value) in attributes {
            switch value {
            case .null: continue
            case .json(let text): out[name] = .text(text)
            default: out[name] = value
            }
        }
        return out
    }

    struct Counts: Equatable { var tiles = 0, features = 0, vertices = 0, clippedOnTheBuffer = 0 }

    /// Every tile: conforms to the encoder rules; holds every feature it must and none it
    /// must not; ids are fids and attributes the layer's, with their types; every position is
    /// within the grid's precision (0.75 units: rounding) of the feature, or on the buffer's
    /// edge where clipping cut it; every vertex of the feature inside the tile is within 1.75
    /// units (rounding and the simplification tolerance of 1) of the tile's geometry; and a
    /// polygon the buffer does not cut keeps its area (holes subtracting) within 1.75 units
    /// times its perimeter.
    @Test(arguments: layerNames) func roundTripThroughOwnDecoder(_ name: String) throws {
        let snapshot = try DemoStore.get()
        let layer = try snapshot.layer(name)
        let rules = MVTConformance.EncoderRules(positions: -64...4160)
        var counts = Counts()
        var zooms = Set<Int>()
        for tile in Self.tiles(layer) {
            zooms.insert(tile.z)
            let bytes = try snapshot.vectorTile(layer, z: tile.z, x: tile.x, y: tile.y)
            #expect(MVTConformance.problems(in: bytes, encoder: rules) == [], "\(name) \(tile)")
            let decoded = try MVTTile(bytes: bytes).layers()
            #expect(decoded.map(\.name) == (decoded.isEmpty ? [] : [name]))
            let mvt = decoded.first
            #expect(mvt.map { $0.extent == 4096 && $0.version == 2 } ?? true)
            let projection = TileProjection(z: tile.z, x: tile.x, y: tile.y)
            var byFID: [Int64: MVTFeature] = [:]
            for feature in mvt?.features ?? [] {
                let fid = Int64(try #require(feature.id))
                #expect(byFID.updateValue(feature, forKey: fid) == nil, "\(name) \(tile): fid \(fid) twice")
            }
            counts.tiles += 1
            counts.features += byFID.count
            // Brute force over every feature of the layer.
            for index in 0..<layer.count {
                guard let geometry = layer.geometries[index] else { continue }
                let fid = layer.fids[index]
                let original = Self.project(geometry, projection)
                let lo = -Self.buffer, hi = Self.extent + Self.buffer
                let outside = original.maxX < lo || original.minX > hi || original.maxY < lo || original.minY > hi
                let vertexInside = original.parts.joined().contains { $0.0 > 0 && $0.0 < Self.extent && $0.1 > 0 && $0.1 < Self.extent }
                let mustBePresent: Bool
                switch layer.family {
                case .points: mustBePresent = original.parts.joined().contains { $0.0 >= lo && $0.0 <= hi && $0.1 >= lo && $0.1 <= hi }
                default: mustBePresent = vertexInside && original.maxX - original.minX >= 4 && original.maxY - original.minY >= 4
                }
                guard let feature = byFID[fid] else {
                    #expect(!mustBePresent, "\(name) \(tile): fid \(fid) is missing")
                    continue
                }
                #expect(!outside, "\(name) \(tile): fid \(fid) lies outside the tile and its buffer")
                #expect(mvt?.properties(of: feature) == Self.expected(layer.properties[index]), "\(name) \(tile): fid \(fid) attributes")
                let type: MVTGeometryType = switch layer.family { case .points: .point; case .lines: .lineString; default: .polygon }
                #expect(feature.type == type)
                let parts = try MVTGeometry.commands(feature.geometry, type: type)
                let rings = type == .polygon
                let tileParts = parts.map { $0.map { (Double($0.0), Double($0.1)) } }
                for p in tileParts.joined() {
                    counts.vertices += 1
                    if p.0 == lo || p.0 == hi || p.1 == lo || p.1 == hi { counts.clippedOnTheBuffer += 1; continue }
                    let d = Self.distance(p, to: original.parts, rings: rings)
                    #expect(d <= 0.75, "\(name) \(tile): fid \(fid): (\(p.0), \(p.1)) is \(d) units from the feature")
                }
                for v in original.parts.joined() where v.0 > 0 && v.0 < Self.extent && v.1 > 0 && v.1 < Self.extent {
                    let d = Self.distance(v, to: tileParts, rings: rings)
                    #expect(d <= 1.75, "\(name) \(tile): fid \(fid): vertex (\(v.0), \(v.1)) is \(d) units from the tile's geometry")
                }
                if rings && original.minX > lo && original.maxX < hi && original.minY > lo && original.maxY < hi {
                    let area = zip(original.parts, original.holes).reduce(0.0) { $0 + ($1.1 ? -1 : 1) * abs(Self.twiceArea($1.0)) } / 2
                    let tileArea = tileParts.reduce(0.0) { $0 + Self.twiceArea($1) } / 2
                    let perimeter = original.parts.reduce(0.0) { sum, ring in
                        sum + ring.indices.reduce(0.0) { $0 + hypot(ring[$1].0 - ring[($1 + 1) % ring.count].0, ring[$1].1 - ring[($1 + 1) % ring.count].1) }
                    }
                    #expect(abs(tileArea - area) <= 1.75 * perimeter, "\(name) \(tile): fid \(fid): area \(tileArea), expected \(area)")
                }
            }
        }
        #expect(zooms == Set(10...18))
        // What the tiles held, so that a change in the encoder shows here too.
        let expected: [String: Counts] = [
            "districts": Counts(tiles: 102, features: 449, vertices: 35_994, clippedOnTheBuffer: 1_240),
            "parking": Counts(tiles: 65, features: 6_952, vertices: 45_906, clippedOnTheBuffer: 1_429),
            "pens": Counts(tiles: 33, features: 594, vertices: 594, clippedOnTheBuffer: 0),
        ]
        #expect(counts == expected[name], "\(name)")
    }

    /// The same tiles through GDAL's MVT driver (`ogr2ogr` over a VRT that unions every tile of
    /// a layer, each opened with CLIP=NO so the buffer stays): per tile the same features (by
    /// `mvt_id`, the fid), the same attributes with their types, and the same positions to
    /// 1e-6 of a unit once GDAL's EPSG:3857 metres are taken back to tile units.
    @Test(arguments: layerNames) func roundTripThroughGDAL(_ name: String) throws {
        let snapshot = try DemoStore.get()
        let layer = try snapshot.layer(name)
        let directory = try Fixtures.temporaryDirectory("mvt-gdal")
        defer { try? FileManager.default.removeItem(at: directory) }
        var vrt = "<OGRVRTDataSource><OGRVRTUnionLayer name=\"all\"><SourceLayerFieldName>tile</SourceLayerFieldName>"
        var own: [String: [UInt64: (Attributes, [[Int64]])]] = [:]
        for tile in Self.tiles(layer) {
            let bytes = try snapshot.vectorTile(layer, z: tile.z, x: tile.x, y: tile.y)
            guard !bytes.isEmpty else { continue }
            let key = "\(tile.z)-\(tile.x)-\(tile.y)"
            // GDAL reads the tile's address from a {z}-{x}-{y}.pbf name.
            try Data(bytes).write(to: directory.appendingPathComponent("\(key).pbf"))
            vrt += "<OGRVRTLayer name=\"\(key)\"><SrcDataSource>\(directory.path)/\(key).pbf</SrcDataSource><SrcLayer>\(name)</SrcLayer>"
                + "<OpenOptions><OOI key=\"CLIP\">NO</OOI></OpenOptions></OGRVRTLayer>"
            let mvt = try #require(try MVTTile(bytes: bytes).layers().first)
            for feature in mvt.features {
                let positions = try MVTGeometry.commands(feature.geometry, type: feature.type).joined().map { [$0.0, $0.1] }
                own[key, default: [:]][try #require(feature.id)] = (mvt.properties(of: feature), positions.sorted { $0.lexicographicallyPrecedes($1) })
            }
        }
        vrt += "</OGRVRTUnionLayer></OGRVRTDataSource>"
        try vrt.write(to: directory.appendingPathComponent("tiles.vrt"), atomically: true, encoding: .utf8)
        let out = directory.appendingPathComponent("out.geojson").path
        let run = try Fixtures.run(URL(fileURLWithPath: "/usr/bin/ogr2ogr"), ["-f", "GeoJSON", "-lco", "RFC7946=NO", out, directory.appendingPathComponent("tiles.vrt").path])
        #expect(run.status == 0, "\(run.stderr)")
        guard case .object(let collection) = try JSON.parse(Array(try Data(contentsOf: URL(fileURLWithPath: out)))),
              case .array(let features)? = collection["features"] else { Issue.record("ogr2ogr wrote no FeatureCollection"); return }
        let r = 20037508.342789244
        var seen: [String: Set<UInt64>] = [:]
        for item in features {
            guard case .object(let f) = item, case .object(let properties)? = f["properties"], case .string(let key)? = properties["tile"],
                  case .integer(let id)? = properties["mvt_id"] else { Issue.record("a feature without tile or mvt_id: \(item)"); continue }
            let address = key.split(separator: "-").compactMap { Double($0) }
            guard address.count == 3, let (attributes, positions) = own[key]?[UInt64(id)] else { Issue.record("GDAL has \(key) fid \(id), the tile not"); continue }
            seen[key, default: []].insert(UInt64(id))
            // Attributes: every one of ours, with its value and type; GDAL's others are the
            // union layer's fields of other features (null).
            for (field, value) in properties where field != "tile" && field != "mvt_id" {
                let ours = attributes[field]
                switch value {
                case .null: #expect(ours == nil, "\(key) \(id) \(field)")
                case .string(let s): #expect(ours == .text(s), "\(key) \(id) \(field)")
                case .integer(let i): #expect(ours == .integer(i), "\(key) \(id) \(field)")
                case .double(let d): #expect(ours == .real(d), "\(key) \(id) \(field)")
                case .bool(let b): #expect(ours == .bool(b), "\(key) \(id) \(field)")
                // GDAL writes a string that holds JSON (the animals of a pen) as JSON.
                case .array, .object: #expect(ours.flatMap { $0.stringValue }.flatMap { try? JSON.parse($0) } == value, "\(key) \(id) \(field)")
                }
            }
            #expect(attributes.names.allSatisfy { properties[$0] != nil && properties[$0] != .null }, "\(key) \(id)")
            // Positions back in tile units.
            let world = Double(1 << Int(address[0])) * 4096
            var gdal: [[Double]] = []
            func collect(_ value: JSONValue) {
                guard case .array(let items) = value else { return }
                if items.count >= 2, let x = items[0].number, let y = items[1].number, items.allSatisfy({ $0.number != nil }) {
                    gdal.append([(x + r) / (2 * r) * world - address[1] * 4096, (r - y) / (2 * r) * world - address[2] * 4096])
                } else {
                    items.forEach(collect)
                }
            }
            if case .object(let geometry)? = f["geometry"], let coordinates = geometry["coordinates"] { collect(coordinates) }
            // GDAL closes rings: its closing positions repeat the first.
            var rounded = gdal.map { $0.map { Int64($0.rounded()) } }
            #expect(gdal.allSatisfy { $0.allSatisfy { abs($0 - $0.rounded()) < 1e-6 } }, "\(key) \(id)")
            if layer.family == .polygons { rounded = Self.withoutClosingPositions(rounded, in: f["geometry"]) }
            #expect(rounded.sorted { $0.lexicographicallyPrecedes($1) } == positions.map { $0 }, "\(key) \(id): positions differ")
        }
        #expect(seen.mapValues(\.count) == own.mapValues(\.count), "\(name): features per tile")
    }

    /// GDAL's rings as we write them: without the closing position of each ring.
    static func withoutClosingPositions(_ positions: [[Int64]], in geometry: JSONValue?) -> [[Int64]] {
        guard case .object(let g)? = geometry, case .array(let coordinates)? = g["coordinates"] else { return positions }
        let polygons: [JSONValue] = g["type"] == .string("MultiPolygon") ? coordinates : [.array(coordinates)]
        var out: [[Int64]] = []
        var i = 0
        for polygon in polygons {
            guard case .array(let rings) = polygon else { continue }
            for ring in rings {
                guard case .array(let points) = ring else { continue }
                out += positions[i..<(i + points.count - 1)]
                i += points.count
            }
        }
        return out
    }
}
