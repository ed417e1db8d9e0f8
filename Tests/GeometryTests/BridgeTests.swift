import Foundation
import Geometry
import TestSupport
import Testing

@Suite(.validatesStores) struct GEOSTests {
    static let bowTie = Geometry.polygon(Polygon(rings: [[14.40, 50.10, 14.41, 50.11, 14.41, 50.10, 14.40, 50.11, 14.40, 50.10]]))

    @Test func bowTieIsInvalidAtItsCrossing() throws {
        let geos = try GEOSContext()
        let validity = try geos.validity(Self.bowTie)
        #expect(!validity.isValid)
        #expect(validity.reason == "Self-intersection")
        let location = try #require(validity.location)
        #expect(abs(location.lon - 14.405) < 1e-9 && abs(location.lat - 50.105) < 1e-9)
    }

    @Test func makeValidSplitsTheBowTieIntoTwoTriangles() throws {
        let geos = try GEOSContext()
        let fixed = try geos.makeValid(Self.bowTie)
        guard case .multiPolygon(let parts) = fixed else { Issue.record("not a MultiPolygon: \(fixed)"); return }
        #expect(parts.polygons.count == 2)
        #expect(try geos.validity(fixed).isValid)
        // Two triangles of base 0.01° and height 0.005°.
        #expect(abs(try geos.area(fixed) - 2 * 0.5 * 0.01 * 0.005) < 1e-15)
    }

    @Test func polygonsWithHolesSurviveTheBridge() throws {
        let geos = try GEOSContext()
        let square = Geometry.polygon(Polygon(rings: [[0, 0, 4, 0, 4, 4, 0, 4, 0, 0], [1, 1, 1, 2, 2, 2, 2, 1, 1, 1]]))
        #expect(try geos.makeValid(square) == square)  // valid input comes back vertex for vertex
        #expect(try geos.contains(square, lon: 0.5, lat: 0.5))
        #expect(try !geos.contains(square, lon: 1.5, lat: 1.5))  // in the hole
        #expect(try !geos.contains(square, lon: 0, lat: 2))  // on the boundary
    }

    @Test func geosErrorsAreCaughtNotPrinted() throws {
        let geos = try GEOSContext()
        // GEOS refuses to build a ring that is not closed.
        let broken = Geometry.polygon(Polygon(rings: [[0, 0, 1, 0, 1, 1, 0, 1]]))
        do {
            _ = try geos.validity(broken)
            Issue.record("a 3-position ring was accepted")
        } catch {
            #expect(error.description == "GEOS: cannot build a ring: IllegalArgumentException: Points of LinearRing do not form a closed linestring")
        }
    }
}

@Suite(.validatesStores) struct ProjectionTests {
    /// Reference computed once with PROJ 9.1.1's command-line tool, which picks the same
    /// operation (Krovak East North + "S-JTSK to WGS 84 (5)", a 7-parameter Helmert, 1 m;
    /// `PROJ_DEBUG=2 cs2cs …` names it):
    ///   echo "-743000 -1043000" | cs2cs -f %.9f EPSG:5514 EPSG:4326
    ///   → 50.087346615 14.418593891   (latitude, longitude)
    @Test func sjtskPointLandsOnTheReference() throws {
        let toWGS84 = try CoordinateTransformer(from: "EPSG:5514", to: "EPSG:4326")
        let (lon, lat) = try toWGS84.transform(x: -743000, y: -1043000)
        #expect(Geodesy.haversine(lon1: lon, lat1: lat, lon2: 14.418593891, lat2: 50.087346615) < 1.0)
        // Back again within 2 mm: the datum shift runs through geocentric coordinates and drops
        // the ellipsoidal height on each side (PROJ's push/pop v_3), which costs 1.2 mm here.
        let back = try CoordinateTransformer(from: "EPSG:4326", to: "EPSG:5514").transform(x: lon, y: lat)
        #expect(abs(back.x + 743000) < 0.002, "\(back.x)")
        #expect(abs(back.y + 1043000) < 0.002, "\(back.y)")
    }

    @Test func unknownCodesAreNamed() {
        do {
            _ = try CoordinateTransformer(from: "EPSG:999999", to: "EPSG:4326")
            Issue.record("EPSG:999999 accepted")
        } catch {
            #expect(error.description.contains("unknown CRS 'EPSG:999999'"))
        }
    }

    @Test func normalisesCRSNames() {
        #expect(Projection.normalizeCRS("epsg:5514") == "EPSG:5514")
        #expect(Projection.normalizeCRS("urn:ogc:def:crs:EPSG::5514") == "EPSG:5514")
        #expect(Projection.normalizeCRS("urn:ogc:def:crs:OGC:1.3:CRS84") == "EPSG:4326")
    }

    @Test func everySJTSKDistrictLandsInPrague() throws {
        let document = try GeoJSON.parseDocument([UInt8](Data(contentsOf: Fixtures.url("prague/districts.sjtsk-epsg5514.geojson"))))
        let transformer = try CoordinateTransformer(from: try #require(document.crs), to: "EPSG:4326")
        var box = BBox.empty
        for feature in document.features { box.extend(try transformer.transform(try #require(feature.geometry)).bbox) }
        #expect(box.minLon > 14.22 && box.maxLon < 14.71 && box.minLat > 49.94 && box.maxLat < 50.18)
    }
}

@Suite(.validatesStores) struct MeasureTests {
    /// The ellipsoidal area of every Prague district against an independent reference: the
    /// same polygon projected by PROJ to EPSG:3035 (ETRS89 Lambert azimuthal equal-area, on the
    /// GRS80 ellipsoid, which differs from WGS84 by 0.1 mm in its minor axis) and measured by
    /// GEOS in the plane. An equal-area projection keeps areas, so the two agree to within the
    /// edge-shape difference: 1e-5 relative is asserted (about 1 m² per 10 ha).
    @Test func districtAreasMatchAnEqualAreaProjection() throws {
        let geos = try GEOSContext()
        let toLAEA = try CoordinateTransformer(from: "EPSG:4326", to: "EPSG:3035")
        var worst = 0.0
        for feature in try fixtureFeatures("prague/districts.wgs84.geojson") {
            let geometry = try #require(feature.geometry)
            let reference = try geos.area(toLAEA.transform(geometry))
            worst = max(worst, abs(Measure.area(geometry) - reference) / reference)
        }
        #expect(worst < 1e-5, "worst relative difference \(worst)")
    }

    @Test func ringOrientationAndHoles() {
        let ccw: [Double] = [14.40, 50.10, 14.41, 50.10, 14.41, 50.11, 14.40, 50.11, 14.40, 50.10]
        #expect(Measure.ringArea(ccw[...]) > 0)
        #expect(Measure.ringArea(ccw[...]) == -Measure.ringArea(Array(stride(from: ccw.count - 2, through: 0, by: -2).flatMap { [ccw[$0], ccw[$0 + 1]] })[...]))
        let holed = Polygon(rings: [ccw, [14.402, 50.102, 14.402, 50.104, 14.404, 50.104, 14.404, 50.102, 14.402, 50.102]])
        let whole = Measure.area(.polygon(Polygon(rings: [ccw])))
        let hole = Measure.area(.polygon(Polygon(rings: [holed.ring(1).map { $0 }])))
        #expect(abs(Measure.area(.polygon(holed)) - (whole - hole)) < 1e-6)
        #expect(Measure.area(.point(Point(lon: 1, lat: 2))) == 0)
    }

    /// Against a brute-force minimum over 20,000 points along each real footpath-sized segment.
    @Test func pointToSegmentMatchesBruteForce() {
        let segments: [(Double, Double, Double, Double)] = [(14.4035, 50.1166, 14.4109, 50.1167), (14.40, 50.10, 14.42, 50.12), (14.4208, 50.0880, 14.4208, 50.0980)]
        let points: [(Double, Double)] = [(14.4070, 50.1180), (14.3990, 50.1160), (14.4300, 50.1100), (14.4100, 50.0900), (14.4208, 50.0930)]
        for (ax, ay, bx, by) in segments {
            for (px, py) in points {
                var best = Double.infinity
                let n = 20_000
                for i in 0...n {
                    // Sample the great-circle arc by normalised linear interpolation of unit vectors.
                    let t = Double(i) / Double(n)
                    let a = Geodesy.unitVector(lon: ax, lat: ay), b = Geodesy.unitVector(lon: bx, lat: by)
                    let x = a.x + t * (b.x - a.x), y = a.y + t * (b.y - a.y), z = a.z + t * (b.z - a.z)
                    let lat = atan2(z, (x * x + y * y).squareRoot()) * 180 / .pi, lon = atan2(y, x) * 180 / .pi
                    best = min(best, Geodesy.haversine(lon1: px, lat1: py, lon2: lon, lat2: lat))
                }
                let d = Geodesy.pointToSegment(lon: px, lat: py, ax: ax, ay: ay, bx: bx, by: by)
                #expect(abs(d - best) < 0.01, "(\(px), \(py)) to segment: \(d) vs \(best)")
            }
        }
    }

    @Test func distanceToGeometries() {
        let square = Geometry.polygon(Polygon(rings: [[14.40, 50.10, 14.41, 50.10, 14.41, 50.11, 14.40, 50.11, 14.40, 50.10]]))
        #expect(Geodesy.distance(from: Point(lon: 14.405, lat: 50.105), to: square) == 0)
        // 0.001° of latitude due south of the square's south edge: 111.195 m along the meridian,
        // plus the 1.2 cm by which the great-circle edge between the two corners bulges north of
        // the parallel at its middle (R · (Δλ/2)² · sin φ cos φ / 2 = 0.0119 m).
        let south = Geodesy.distance(from: Point(lon: 14.405, lat: 50.099), to: square)
        let meridian = Geodesy.earthRadius * 0.001 * .pi / 180
        let bulge = Geodesy.earthRadius * pow(0.005 * .pi / 180, 2) * sin(50.1 * .pi / 180) * cos(50.1 * .pi / 180) / 2
        #expect(abs(south - (meridian + bulge)) < 0.001)
        #expect(abs(Measure.length(.lineString(LineString(coordinates: [14.40, 50.10, 14.40, 50.11]))) - Geodesy.earthRadius * 0.01 * .pi / 180) < 1e-6)
    }
}
