import Foundation
import Geometry
import Store
import TestSupport
import Testing

/// Geometries another tool wrote into a store (issue 19): a NaN or infinite coordinate, a blob
/// that is not a GeoPackage geometry, GDAL's POINT EMPTY.
@Suite(.validatesStores) struct StoredGeometryTests {
    /// Stations with fid 3 at (14.42, inf) (the report's blob), fid 5 POINT EMPTY, fid 7 WKT
    /// text where a blob belongs.
    func editedStations() throws -> (GeoPackage, String) {
        let (store, path) = try freshStore()
        try importFixture("air/stations-prague.csv", as: "stations", into: store)
        try RawStoreEdits.setGeometry(of: "stations", fid: 3, to: RawStoreEdits.infiniteLatitude, in: path)
        try RawStoreEdits.setGeometry(of: "stations", fid: 5, to: RawStoreEdits.pointEmpty, in: path)
        try RawStoreEdits.execute("UPDATE stations SET geom = 'POINT (14.4 50.1)' WHERE fid = 7", in: path)
        return (try GeoPackage(path: path), path)
    }

    /// Reading a layer strictly (export, the observations importer) names the layer and the fid
    /// of the first feature that cannot be read; before, the infinite latitude was read as it was.
    @Test func aBadGeometryIsAnErrorNamingTheLayerAndFid() throws {
        let (store, _) = try editedStations()
        do {
            _ = try store.features(of: "stations")
            Issue.record("a station at latitude inf was read")
        } catch {
            #expect(error.description == "layer 'stations', fid 3: corrupt geometry: invalid WKB at byte 5: the coordinate (14.42, inf) is not a finite number")
        }
    }

    /// The tolerant read the engine uses: bad features are listed by fid, the rest are read,
    /// and POINT EMPTY is a feature without geometry.
    @Test func readFeaturesListsTheBadOnesAndKeepsTheRest() throws {
        let (store, _) = try editedStations()
        let read = try store.readFeatures(of: "stations")
        #expect(read.problems == [
            FeatureProblem(fid: 3, reason: "corrupt geometry: invalid WKB at byte 5: the coordinate (14.42, inf) is not a finite number"),
            FeatureProblem(fid: 7, reason: "corrupt geometry: not a GeoPackage geometry blob (no 'GP' magic)"),
        ])
        #expect(read.features.count == 15)
        #expect(read.features.map(\.fid) == [1, 2, 4, 5, 6] + Array(8...17))
        let empty = try #require(read.features.first { $0.fid == 5 })
        #expect(empty.feature.geometry == nil)
        #expect(empty.feature.properties["code"] == .text("ALEGA"))
        #expect(read.features.first { $0.fid == 4 }?.feature.geometry == .point(Point(lon: 14.467578, lat: 50.122189)))
    }
}
