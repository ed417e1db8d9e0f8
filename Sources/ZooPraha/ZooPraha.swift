// Zoo Praha's own files, read into the store: the footpath graph (`paths-graph.json`) and the
// animal lexicon (`animals.json`). The pens and pavilions file is plain GeoJSON, which the
// store reads by itself. A module of its own so the generic store knows no one source's
// formats: it depends on Store and hands it these formats through `ImportFormat`; the CLI
// passes them to every import.

import Geometry
import Store
import Support

extension ImportFormat {
    /// Zoo Praha's footpath network (`paths-graph.json`) as a line layer.
    /// Chosen by its exact structure only: a root object whose members are `metadata`,
    /// `nodes` and `roads` (a FeatureCollection with `"name": "roads"` is GeoJSON).
    public static let zooPaths = ImportFormat(name: "zoo-paths", recognise: { source in
        guard case .object(let keys, nil)? = source.jsonShape, !keys.isEmpty,
              Set(keys).isSubset(of: ["metadata", "nodes", "roads"]), keys.contains("nodes") || keys.contains("roads") else { return nil }
        return .byContent
    }, readBytes: ZooPraha.readPaths)

    /// Zoo Praha's animal lexicon (`animals.json`) as a table linked to pens and pavilions.
    /// Chosen by its exact structure only: a root array of objects with `_id` and `latin_name`
    /// (Vltava's own export of the animals is a FeatureCollection: GeoJSON).
    public static let zooAnimals = ImportFormat(name: "zoo-animals", recognise: { source in
        guard case .array(let keys)? = source.jsonShape, Set(["_id", "latin_name"]).isSubset(of: keys) else { return nil }
        return .byContent
    }, readBytes: ZooPraha.readAnimals)
}

public enum ZooPraha {
    /// This module's formats, to pass to `Importer.importFile` after the store's own
    /// (`ImportFormat.builtIn + ZooPraha.formats`: the order `--format` lists them in).
    public static let formats: [ImportFormat] = [.zooPaths, .zooAnimals]

    /// `paths-graph.json`: every road becomes a LineString feature (its OSM way id as fid),
    /// with its tags and the ids of its nodes (`node_ids`), which keep the graph's topology.
    static func readPaths(_ bytes: [UInt8], file: String, store _: GeoPackage, options _: ImportOptions) throws(StoreError) -> ImportRecords {
        let root = try parseJSON(bytes, file: file)
        guard case .object(let object) = root, case .array(let roads)? = object["roads"] else {
            throw .importFailed(file: file, problems: [ImportProblem(location: "", message: "expected an object with a \"roads\" array (Zoo Praha paths graph)")])
        }
        var features: [Feature] = []
        var problems: [ImportProblem] = []
        for (index, road) in roads.enumerated() {
            let location = "roads[\(index)]"
            guard case .object(let roadObject) = road,
                  case .object(let geometry)? = roadObject["geometry"],
                  case .array(let nodes)? = geometry["coordinates"] else {
                problems.append(ImportProblem(location: location, message: "a road needs geometry.coordinates"))
                continue
            }
            var coordinates: [Double] = []
            var nodeIDs: [JSONValue] = []
            for node in nodes {
                guard case .object(let n) = node, let lon = n["lon"]?.number, let lat = n["lat"]?.number, let id = n["_id"] else {
                    problems.append(ImportProblem(location: location, message: "a road node needs _id, lon and lat"))
                    break
                }
                coordinates += [lon, lat]
                nodeIDs.append(id)
            }
            guard coordinates.count >= 4 else {
                problems.append(ImportProblem(location: location, message: "a road needs at least two nodes"))
                continue
            }
            var properties = Attributes()
            if case .object(let tags)? = roadObject["properties"] {
                for (key, value) in tags { properties[key] = GeoJSON.attribute(value) }
            }
            properties["node_ids"] = .json(JSON.serialize(.array(nodeIDs)))
            let id: FeatureID? = if case .integer(let i)? = roadObject["_id"] { .integer(i) } else { nil }
            features.append(Feature(id: id, geometry: .lineString(LineString(coordinates: coordinates)), properties: properties))
        }
        if !problems.isEmpty { throw .importFailed(file: file, problems: problems) }
        return ImportRecords(kind: .features, features: features, sourceCRS: "EPSG:4326")
    }

    /// `animals.json`: one row per animal (its lexicon id as fid). `location_ids` lists the
    /// pens and pavilions (their feature ids, the fids of the `pens`/`pavilions` layers) where
    /// the animal lives. `class_` is renamed `class`.
    static func readAnimals(_ bytes: [UInt8], file: String, store _: GeoPackage, options _: ImportOptions) throws(StoreError) -> ImportRecords {
        let root = try parseJSON(bytes, file: file)
        guard case .array(let animals) = root else {
            throw .importFailed(file: file, problems: [ImportProblem(location: "", message: "expected an array of animals (Zoo Praha lexicon)")])
        }
        var rows: [Feature] = []
        var problems: [ImportProblem] = []
        for (index, animal) in animals.enumerated() {
            guard case .object(let object) = animal, case .integer(let id)? = object["_id"], case .string? = object["name"] else {
                problems.append(ImportProblem(location: "animals[\(index)]", message: "an animal needs an integer _id and a name"))
                continue
            }
            var properties = Attributes()
            for (key, value) in object where key != "_id" && key != "map_locations" {
                properties[key == "class_" ? "class" : key] = GeoJSON.attribute(value)
            }
            var locationIDs: [JSONValue] = []
            if case .array(let locations)? = object["map_locations"] {
                for location in locations {
                    if case .object(let l) = location, let locationID = l["_id"] { locationIDs.append(locationID) }
                }
            }
            properties["location_ids"] = .json(JSON.serialize(.array(locationIDs)))
            rows.append(Feature(id: .integer(id), geometry: nil, properties: properties))
        }
        if !problems.isEmpty { throw .importFailed(file: file, problems: problems) }
        return ImportRecords(kind: .attributes, features: rows, sourceCRS: nil)
    }

    static func parseJSON(_ bytes: [UInt8], file: String) throws(StoreError) -> JSONValue {
        do {
            return try JSON.parse(bytes)
        } catch {
            throw .importFailed(file: file, problems: [ImportProblem(location: "", message: "\(error)")])
        }
    }
}
