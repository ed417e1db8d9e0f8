// Live layers in the snapshot: FIND, nearest, containing, within and tiles answer on a live layer
// as on any point layer. A read after a change builds its objects into point layers (fid: the
// object's serial number; columns id, time, fields) beside the store's layers; a read with
// nothing changed takes the snapshot built before. Writes, reloads and catch-ups go on over the
// store's snapshot alone (`storeSnapshot`), so live objects never reach the store.

import Foundation
import Geometry
import Live
import Store
import Support

/// The snapshot with the live layers in it, and what it was built from.
struct LiveView: Sendable {
    let base: Snapshot
    let version: UInt64
    let snapshot: Snapshot
}

extension Engine {
    /// The current snapshot, with the live layers as they are now. Keep the reference for the
    /// whole of one answer.
    public var snapshot: Snapshot {
        let base = storeSnapshot
        let version = live.version
        guard version > 0 else { return base }
        return liveView.withLock { view in
            if let view, view.base === base, view.version == version { return view.snapshot }
            guard let built = try? base.with(liveLayers: live.layers.map(Layer.live)) else { return base }
            view = LiveView(base: base, version: version, snapshot: built)
            return built
        }
    }
}

extension Layer {
    static let liveColumns = [ColumnInfo(name: "id", type: .text), ColumnInfo(name: "time", type: .text), ColumnInfo(name: "fields", type: .text, isJSON: true)]

    /// A live layer's objects as a point layer.
    static func live(_ layer: LiveLayer) throws(EngineError) -> Layer {
        let features = layer.objects.values.sorted { $0.serial < $1.serial }.map { object in
            var attributes = Attributes()
            attributes["id"] = .text(object.id)
            attributes["time"] = .text(Output.isoMilliseconds(object.time))
            attributes["fields"] = object.fields.map { .json(JSON.serialize(.object($0))) } ?? .null
            return StoredFeature(fid: object.serial, feature: Feature(id: .integer(object.serial), geometry: .point(object.point), properties: attributes))
        }
        let info = LayerInfo(name: layer.name, kind: .features, geometryType: "POINT", geometryColumn: "geom", crs: "EPSG:4326",
                             featureCount: features.count, bbox: nil, columns: liveColumns, description: "live layer")
        return try Layer(info: info, features: features, family: .points)
    }
}

extension Snapshot {
    /// This snapshot with `live` beside its layers (a store layer keeps its name).
    func with(liveLayers live: [Layer]) throws(EngineError) -> Snapshot {
        let names = Set(layers.map { $0.name.lowercased() })
        let all = (layers + live.filter { !names.contains($0.name.lowercased()) }).sorted { $0.name < $1.name }
        return try Snapshot(storePath: storePath, layers: all, timeSeriesByTable: timeSeriesByTable, timeSeriesByLayer: timeSeriesByLayer,
                            tileSets: tileSets, unavailableTileSets: unavailableTileSets, loadSeconds: loadSeconds, limits: limits,
                            venues: venues, venueWarnings: venueWarnings, database: database, networks: networks)
    }
}
