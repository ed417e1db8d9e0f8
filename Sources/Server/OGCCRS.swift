// OGC API – Features Part 2 (coordinate reference systems by reference): items may be asked for
// (`crs`) and boxed (`bbox-crs`) in WGS 84 longitude/latitude (CRS84, as stored), WGS 84 in
// EPSG:4326's own axis order (latitude first) or S-JTSK / Křovák East North (EPSG:5514, easting
// first: the CRS of Prague's open data), each in its authority's axis order as the standard
// requires, through PROJ. Every items answer names its CRS in `Content-Crs`.
//
// A box in another CRS selects exactly: the CRS84 box around it (its edges transformed,
// densified) finds the candidates by the index, and each candidate's geometry, transformed, is
// tested against the box in the box's own CRS.

import Engine
import Foundation
import Geometry
import HTTPTypes
import Hummingbird
import Support

enum OGCCRS: String, CaseIterable, Sendable {
    case crs84 = "http://www.opengis.net/def/crs/OGC/1.3/CRS84"
    case epsg4326 = "http://www.opengis.net/def/crs/EPSG/0/4326"
    case sjtsk = "http://www.opengis.net/def/crs/EPSG/0/5514"

    static let conformanceClass = "http://www.opengis.net/spec/ogcapi-features-2/1.0/conf/crs"

    /// PROJ's name, in its authority's axis order.
    var projName: String {
        switch self {
        case .crs84: "OGC:CRS84"
        case .epsg4326: "EPSG:4326"
        case .sjtsk: "EPSG:5514"
        }
    }

    /// `crs` or `bbox-crs`: one of the URIs (or its safe CURIE `[EPSG:5514]`, or `EPSG:5514`).
    init(_ text: String, parameter: String) throws(APIError) {
        let plain = text.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).uppercased()
        let byName: [String: OGCCRS] = ["OGC:CRS84": .crs84, "CRS84": .crs84, "EPSG:4326": .epsg4326, "EPSG:5514": .sjtsk]
        guard let crs = OGCCRS(rawValue: text) ?? byName[plain] else {
            throw .invalidParameter(parameter, "\(Quote.input(text)) is not offered (\(OGCCRS.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        self = crs
    }

    var contentCrsHeader: String { "<\(rawValue)>" }

    /// The EPSG code PostGIS knows it by (its x, y in PostGIS's order: easting, northing).
    var epsg: Int32? {
        switch self {
        case .crs84: nil
        case .epsg4326: 4326
        case .sjtsk: 5514
        }
    }

    /// Stored lon/lat into this CRS; nil for CRS84 itself.
    func fromStored() throws(APIError) -> CoordinateTransformer? {
        guard self != .crs84 else { return nil }
        do {
            return try CoordinateTransformer(from: OGCCRS.crs84.projName, to: projName, authorityAxes: true)
        } catch {
            throw APIError(.internalServerError, code: "projection_error", detail: "PROJ cannot transform into \(projName): \(error)")
        }
    }

    /// The CRS84 box around a box given in this CRS (its edges transformed at 64 points each).
    func crs84Box(around box: BBox) throws(APIError) -> BBox {
        guard self != .crs84 else { return box }
        var ring: [Double] = []
        let steps = 64
        for i in 0..<steps {
            let f = Double(i) / Double(steps)
            let (dx, dy) = (box.maxLon - box.minLon, box.maxLat - box.minLat)
            ring += [box.minLon + f * dx, box.minLat, box.maxLon, box.minLat + f * dy, box.maxLon - f * dx, box.maxLat, box.minLon, box.maxLat - f * dy]
        }
        let lonLat: [Double]
        do {
            lonLat = try CoordinateTransformer(from: projName, to: OGCCRS.crs84.projName, authorityAxes: true).transform(ring)
        } catch {
            throw .invalidParameter("bbox", "the box cannot be transformed from \(projName): \(error)")
        }
        let lons = stride(from: 0, to: lonLat.count, by: 2).map { lonLat[$0] }
        let lats = stride(from: 1, to: lonLat.count, by: 2).map { lonLat[$0] }
        guard let west = lons.min(), let east = lons.max(), let south = lats.min(), let north = lats.max() else { return box }
        // A hair wider: the edges' curvature between the 64 points is far below it.
        let margin = 1e-7
        return BBox(minLon: west - margin, minLat: south - margin, maxLon: east + margin, maxLat: north + margin)
    }
}

/// A box in another CRS as a feature filter: a feature is kept when its geometry, transformed,
/// meets the box. One request's work runs it, on one thread, so the transformer (PROJ's context
/// is not shared between threads) is never used by two at once.
final class ProjectedBoxTest: @unchecked Sendable {
    private let transformer: CoordinateTransformer
    private let box: BBox
    private let layer: Layer

    init(_ crs: OGCCRS, box: BBox, layer: Layer) throws(APIError) {
        guard let transformer = try crs.fromStored() else { throw APIError.invalidParameter("bbox-crs", "CRS84 needs no transformation") }
        self.transformer = transformer
        self.box = box
        self.layer = layer
    }

    func keeps(_ index: Int) -> Bool {
        guard let geometry = layer.geometries[index], let projected = try? transformer.transform(geometry) else { return false }
        return projected.intersects(box: box)
    }
}

extension HTTPField.Name {
    /// OGC API – Features Part 2's header naming the answer's CRS.
    static let contentCrs = HTTPField.Name("Content-Crs") ?? .contentType  // a valid token: never nil
}
