import Engine
import Foundation
import Geometry
import Store
import TestSupport
import Testing

/// The OSM import format (`ImportFormat.osm`, Engine/OSMLayer.swift), as `vltava import` uses it
/// with the store's own formats.
@Suite(.validatesStores) struct OSMImportTests {
    /// The same extract as `.osm.pbf`, as `.osm` XML, and as `.osm.gz` (the XML gzipped here,
    /// at test time, by gzip itself) makes the same layer: 1615 ways, feature for feature the
    /// same tags, node ids and coordinates.
    @Test func osmXMLAndGzippedXMLImportAsThePBF() throws {
        let dir = try Fixtures.temporaryDirectory("osm-formats")
        let xml = dir.appendingPathComponent("andorra.osm").path
        let unzipped = try Fixtures.run(URL(fileURLWithPath: "/bin/sh"), ["-c", "gzip -dc \"$0\" > \"$1\"", Fixtures.path("osm/andorra.osm.gz"), xml], timeout: 60)
        #expect(unzipped.status == 0, "\(unzipped.stderr)")
        let zipped = try Fixtures.run(URL(fileURLWithPath: "/bin/sh"), ["-c", "gzip -c \"$0\" > \"$0.gz\"", xml], timeout: 60)
        #expect(zipped.status == 0, "\(zipped.stderr)")
        var layers: [String: [StoredFeature]] = [:]
        for input in [Fixtures.path("osm/andorra.osm.pbf"), xml, xml + ".gz"] {
            let db = dir.appendingPathComponent(URL(fileURLWithPath: input).lastPathComponent + ".gpkg").path
            let report = try Importer.importFile(input, intoStoreAt: db, options: ImportOptions(layer: "andorra"), formats: ImportFormat.builtIn + [.osm])
            #expect(report.format.name == "osm" && report.geometryType == "LINESTRING" && report.featureCount == 1615, "\(input)")
            layers[input] = try GeoPackage(path: db).features(of: "andorra")
        }
        let pbf = try #require(layers[Fixtures.path("osm/andorra.osm.pbf")])
        let plain = try #require(layers[xml])
        #expect(pbf.count == 1615)
        // The gzipped XML is the XML, bit for bit.
        #expect(layers[xml + ".gz"] == plain)
        // The XML is the PBF: the same ways, tags and node ids; coordinates to 1e-9° (the PBF
        // stores nanodegrees times a granularity, the XML decimal text).
        #expect(plain.map(\.fid) == pbf.map(\.fid))
        #expect(plain.map(\.feature.properties) == pbf.map(\.feature.properties))
        var worst = 0.0
        for (a, b) in zip(plain, pbf) {
            guard case .lineString(let x)? = a.feature.geometry, case .lineString(let y)? = b.feature.geometry, x.coordinates.count == y.coordinates.count else {
                Issue.record("fid \(a.fid): not the same line in both")
                continue
            }
            for (u, v) in zip(x.coordinates, y.coordinates) { worst = max(worst, abs(u - v)) }
        }
        #expect(worst < 1e-9, "coordinates differ by up to \(worst)°")
    }
}
