// Warnings an answer carries beside its rows. The first: swapped coordinates. POINT(50.09 14.42)
// is a valid point (in Yemen), so it is answered, but for data in Prague it is 5,000 km away
// while its swap, POINT(14.42 50.09), lies inside the data: the answer says so.

import Foundation
import Geometry

extension Snapshot {
    /// How far outside the data a point must lie before its swap is suggested.
    public static let swapWarningMetres = 1_000_000.0

    /// The box around every layer's features (nil when there are none); computed once, at load.
    static func extent(of layers: [Layer]) -> BBox? {
        var box = BBox.empty
        for layer in layers where layer.family != .table && layer.bounds.isFinite && !layer.bounds.isEmpty {
            box.extend(lon: layer.bounds.minLon, lat: layer.bounds.minLat)
            box.extend(lon: layer.bounds.maxLon, lat: layer.bounds.maxLat)
        }
        return box.isEmpty ? nil : box
    }

    /// Warnings about a point a statement gives: one when the point lies more than
    /// `swapWarningMetres` outside the data's extent and its swap (lat as lon, lon as lat) lies
    /// inside it.
    public func coordinateWarnings(_ point: Point) -> [String] {
        guard let box = dataExtent else { return [] }
        let (lon, lat) = (point.lon, point.lat)
        func inside(_ lon: Double, _ lat: Double) -> Bool {
            lon >= box.minLon && lon <= box.maxLon && lat >= box.minLat && lat <= box.maxLat
        }
        guard !inside(lon, lat), inside(lat, lon) else { return [] }
        let nearest = (lon: min(max(lon, box.minLon), box.maxLon), lat: min(max(lat, box.minLat), box.maxLat))
        let metres = Geodesy.haversine(lon1: lon, lat1: lat, lon2: nearest.lon, lat2: nearest.lat)
        guard metres > Snapshot.swapWarningMetres else { return [] }
        func text(_ v: Double) -> String { v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v) }
        let extent = String(format: "lon %.2f…%.2f, lat %.2f…%.2f", box.minLon, box.maxLon, box.minLat, box.maxLat)
        return ["POINT(\(text(lon)) \(text(lat))) lies \(Int((metres / 1000).rounded())) km outside the data (\(extent)), and its swap "
                + "POINT(\(text(lat)) \(text(lon))) lies inside it: did you swap longitude and latitude? POINT takes (lon lat)"]
    }
}
