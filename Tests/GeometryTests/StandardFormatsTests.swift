import Foundation
import Geometry
import TestSupport
import Testing

/// The pieces the standard APIs need from Geometry: Google's encoded polylines (OSRM's
/// geometries), a geometry meeting a box (OGC API's bbox), overview simplification, bearings.
@Suite(.validatesStores) struct StandardFormatsTests {
    /// The example of Google's description of the format: (38.5, -120.2), (40.7, -120.95),
    /// (43.252, -126.453).
    @Test func polylineOfGooglesExample() throws {
        let flat = [-120.2, 38.5, -120.95, 40.7, -126.453, 43.252]
        #expect(Polyline.encode(flat, precision: 5) == "_p~iF~ps|U_ulLnnqC_mqNvxq`@")
        let decoded = try #require(Polyline.decode("_p~iF~ps|U_ulLnnqC_mqNvxq`@", precision: 5))
        #expect(zip(decoded, flat).allSatisfy { abs($0 - $1) < 1e-9 })
        // Broken text is nil, not a trap: a character outside the alphabet, a number cut short.
        #expect(Polyline.decode("_p~iF~ps|U \u{1}", precision: 5) == nil)
        #expect(Polyline.decode("_p~iF~ps|U_", precision: 5) == nil)
        #expect(Polyline.decode("_p~iF", precision: 5) == nil)
    }

    /// Every district's outline survives encoding to the precision asked for, in both.
    @Test func polylineRoundTripsTheDistricts() throws {
        for feature in try fixtureFeatures("prague/districts.wgs84.geojson") {
            guard case .polygon(let polygon)? = feature.geometry else { continue }
            for (precision, step) in [(5, 1e-5), (6, 1e-6)] {
                let decoded = try #require(Polyline.decode(Polyline.encode(polygon.coordinates, precision: precision), precision: precision))
                #expect(decoded.count == polygon.coordinates.count)
                #expect(zip(decoded, polygon.coordinates).allSatisfy { abs($0 - $1) <= step / 2 + 1e-12 })
            }
        }
    }

    /// `intersects(box:)` agrees with GEOS's intersects against the box as a polygon, for the
    /// districts and 300 boxes of many sizes around Prague (inside a district, across edges,
    /// over several, outside all).
    @Test func boxIntersectionAgreesWithGEOS() throws {
        let geos = try GEOSContext()
        let districts = try fixtureFeatures("prague/districts.wgs84.geojson").compactMap(\.geometry)
        var generator = SystemRandomNumberGenerator()
        var agreed = 0, hits = 0
        for _ in 0..<300 {
            let lon = Double.random(in: 14.20...14.72, using: &generator), lat = Double.random(in: 49.93...50.19, using: &generator)
            let size = pow(10, Double.random(in: -4 ... -1, using: &generator))
            let box = BBox(minLon: lon, minLat: lat, maxLon: lon + size * 1.5, maxLat: lat + size)
            let polygon = Geometry.polygon(Polygon(rings: [[box.minLon, box.minLat, box.maxLon, box.minLat, box.maxLon, box.maxLat, box.minLon, box.maxLat, box.minLon, box.minLat]]))
            for district in districts {
                let ours = district.intersects(box: box)
                if ours == (try geos.intersects(district, polygon)) { agreed += 1 } else { Issue.record("disagree at \(box)") }
                if ours { hits += 1 }
            }
        }
        #expect(agreed == 300 * districts.count)
        #expect(hits > 300)
        // Points and lines: on the edge counts, beside it does not.
        let box = BBox(minLon: 0, minLat: 0, maxLon: 1, maxLat: 1)
        #expect(Geometry.point(Point(lon: 1, lat: 0.5)).intersects(box: box))
        #expect(!Geometry.point(Point(lon: 1.0001, lat: 0.5)).intersects(box: box))
        #expect(Geometry.lineString(LineString(coordinates: [-1, 0.5, 2, 0.5])).intersects(box: box))
        #expect(!Geometry.lineString(LineString(coordinates: [-1, 1.5, 2, 1.1])).intersects(box: box))
    }

    /// Douglas–Peucker keeps the ends and the corner of an L, drops points along straight runs.
    @Test func overviewKeepsCorners() {
        let line = LineString(coordinates: [0, 0, 0.5, 0.0000001, 1, 0, 1, 0.5, 1, 1])
        #expect(Simplify.douglasPeucker(line, tolerance: 0.001).coordinates == [0, 0, 1, 0, 1, 1])
        #expect(Simplify.douglasPeucker(line, tolerance: 0).coordinates == line.coordinates)
    }

    /// Bearings: north 0, east 90 (on the equator), south 180, west 270.
    @Test func bearings() {
        #expect(Geodesy.bearing(lon1: 14, lat1: 50, lon2: 14, lat2: 51) == 0)
        #expect(abs(Geodesy.bearing(lon1: 0, lat1: 0, lon2: 1, lat2: 0) - 90) < 1e-9)
        #expect(abs(Geodesy.bearing(lon1: 14, lat1: 50, lon2: 14, lat2: 49) - 180) < 1e-9)
        #expect(abs(Geodesy.bearing(lon1: 0, lat1: 0, lon2: -1, lat2: 0) - 270) < 1e-9)
    }
}
