// OpenStreetMap into the store: `vltava import andorra.osm.pbf --layer andorra` keeps every way
// tagged `highway` as a line feature (fid = the way's id) with its OSM node ids and tags, so
// the snapshot builds the same walking network from the layer that `Graph.fromOSM` builds from
// the file, and routes over it by every profile (`WalkingProfile`).

import Foundation
import Geometry
import Routing
import Store
import Support

extension ImportFormat {
    /// An OSM extract: `.osm.pbf`, `.osm` or `.osm.gz` (the content says which).
    /// Known by content (a PBF's first blob header names `OSMHeader`; XML has an `<osm` root),
    /// else by the name: a gzip's content is only known once inflated.
    public static let osm = ImportFormat(name: "osm", recognise: { source in
        if source.head.prefix(64).firstRange(of: Array("OSMHeader".utf8)) != nil || source.headText.contains("<osm") { return .byContent }
        return [".osm.pbf", ".pbf", ".osm", ".osm.gz"].contains(where: source.lowercasedPath.hasSuffix) ? .byName : nil
    }, readBytes: { bytes, file, _, _ throws(StoreError) in
        let data: OSMData
        do {
            data = try OSMReader.read(bytes: bytes, file: file)
        } catch let error as OSMError {
            throw .importFailed(file: file, problems: [ImportProblem(location: "", message: error.message)])
        } catch {
            throw .importFailed(file: file, problems: [ImportProblem(location: "", message: "\(error)")])
        }
        return ImportRecords(kind: .features, features: OSMLayer.features(of: data), sourceCRS: "EPSG:4326")
    })
}

public enum OSMLayer {
    /// The tags kept as columns of their own, for the language's WHERE and for the walking
    /// rule (`oneway:foot` becomes `oneway_foot`); every tag is also in `tags`, a JSON object.
    static let columnTags = ["highway", "name", "foot", "access", "oneway:foot"]

    /// Every way with a `highway` tag as a line over its nodes (refs to nodes the extract lacks
    /// are skipped, as the network from the file skips them); ways left with fewer than two
    /// distinct positions are not lines and are left out.
    public static func features(of data: OSMData) -> [Feature] {
        var features: [Feature] = []
        for way in data.ways where way.tags["highway"] != nil {
            var coordinates: [Double] = []
            var ids: [Int64] = []
            coordinates.reserveCapacity(way.refs.count * 2)
            for ref in way.refs {
                guard let node = data.nodeIndex[ref] else { continue }
                coordinates.append(data.lons[Int(node)])
                coordinates.append(data.lats[Int(node)])
                ids.append(ref)
            }
            guard ids.count >= 2, (1..<ids.count).contains(where: { coordinates[2 * $0] != coordinates[0] || coordinates[2 * $0 + 1] != coordinates[1] }) else { continue }
            var properties = Attributes()
            for key in columnTags { if let value = way.tags[key] { properties[key.replacingOccurrences(of: ":", with: "_")] = .text(value) } }
            var tags = JSONWriter(reservingCapacity: 128)
            tags.beginObject()
            for (key, value) in way.tags.sorted(by: { $0.key < $1.key }) {
                tags.key(key)
                tags.string(value)
            }
            tags.endObject()
            properties["tags"] = .json(String(decoding: tags.bytes, as: UTF8.self))
            properties["node_ids"] = .json("[" + ids.map(String.init).joined(separator: ",") + "]")
            features.append(Feature(id: .integer(way.id), geometry: .lineString(LineString(coordinates: coordinates)), properties: properties))
        }
        return features
    }
}

extension Network {
    /// The network of an OSM file by a walking profile, without importing it: `foot` and `any`
    /// exactly as `Graph.fromOSM` builds them; `wheelchair` from the lines an import would
    /// make, since it needs to know each way's steps.
    public static func fromOSM(path: String, profile: WalkingProfile) throws(EngineError) -> Network {
        switch profile {
        case .foot: return try fromOSM(path: path, profile: OSMProfile.foot)
        case .any: return try fromOSM(path: path, profile: OSMProfile.anyHighway)
        case .wheelchair:
            let data: OSMData
            do { data = try OSMReader.read(path: path) } catch { throw .store("\(error)") }
            let features = OSMLayer.features(of: data)
            let columns = ["highway", "foot", "access", "oneway_foot"].map { ColumnInfo(name: $0, type: .text) }
            let info = LayerInfo(name: path, kind: .features, geometryType: "LINESTRING", geometryColumn: "geom", crs: "EPSG:4326",
                                 featureCount: features.count, bbox: nil, columns: columns)
            let stored = features.enumerated().map { StoredFeature(fid: Int64($0.offset + 1), feature: $0.element) }
            guard let network = try build(from: try Layer(info: info, features: stored)) else {
                throw .store("\((path as NSString).lastPathComponent): no ways tagged highway")
            }
            return network
        }
    }
}
