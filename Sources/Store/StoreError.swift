import Geometry
import SQLite
import Support

/// Everything that can go wrong opening, reading or importing into a store. Each message says
/// what is wrong and where (file, layer, feature index or id, line and column).
public enum StoreError: CategorizedError, Sendable {
    case fileNotFound(String)
    case notAGeoPackage(path: String, reason: String)
    case sqlite(SQLiteError)
    case unknownLayer(String, known: [String])
    case layerExists(String)
    case invalidLayerName(String, reason: String)
    case corruptGeometry(String)
    /// One stored feature cannot be read: names the layer and the fid.
    case badFeature(layer: String, fid: Int64, reason: String)
    case readOnly(String)
    /// An import failed; nothing was written.
    case importFailed(file: String, problems: [ImportProblem])
    case unsupportedFormat(file: String, reason: String)
    /// Operation `position` (from 1) of a write batch cannot be applied; nothing was written.
    case badWrite(position: Int, reason: String)
    case noSuchFeature(layer: String, fid: Int64, position: Int)
    case featureExists(layer: String, fid: Int64, position: Int)

    public var code: String {
        switch self {
        case .fileNotFound: "file_not_found"
        case .notAGeoPackage: "not_a_geopackage"
        case .sqlite: "store_error"
        case .unknownLayer: "unknown_layer"
        case .layerExists: "layer_exists"
        case .invalidLayerName: "invalid_layer_name"
        case .corruptGeometry: "corrupt_geometry"
        case .badFeature: "bad_feature"
        case .readOnly: "read_only"
        case .importFailed: "import_failed"
        case .unsupportedFormat: "unsupported_format"
        case .badWrite: "bad_write"
        case .noSuchFeature: "unknown_feature"
        case .featureExists: "feature_exists"
        }
    }

    public var category: ErrorCategory {
        switch self {
        case .fileNotFound, .unknownLayer, .noSuchFeature: .notFound
        case .notAGeoPackage, .invalidLayerName, .importFailed, .unsupportedFormat, .badWrite: .invalid
        case .layerExists, .readOnly, .featureExists: .impossible
        // What the store holds cannot be read: the store is broken, not the request.
        case .sqlite, .corruptGeometry, .badFeature: .internal
        }
    }

    public var description: String {
        switch self {
        case .fileNotFound(let path):
            return "no such file: \(path)"
        case .notAGeoPackage(let path, let reason):
            return "\(path) is not a GeoPackage: \(reason)"
        case .sqlite(let error):
            return error.description
        case .unknownLayer(let name, let known):
            var message = "unknown layer '\(name)'"
            if let suggestion = Suggestion.closest(to: name, in: known) { message += " — did you mean '\(suggestion)'?" }
            if !known.isEmpty { message += " (layers: \(known.joined(separator: ", ")))" }
            return message
        case .layerExists(let name):
            return "layer '\(name)' already exists; use --replace to overwrite it"
        case .invalidLayerName(let name, let reason):
            return "invalid layer name '\(name)': \(reason)"
        case .corruptGeometry(let reason):
            return "corrupt geometry: \(reason)"
        case .badFeature(let layer, let fid, let reason):
            return "layer '\(layer)', fid \(fid): \(reason)"
        case .readOnly(let path):
            return "\(path) is open read-only"
        case .importFailed(let file, let problems):
            let shown = problems.prefix(20).map { "  - \($0)" }.joined(separator: "\n")
            let more = problems.count > 20 ? "\n  … and \(problems.count - 20) more" : ""
            return "import of \(file) failed; the store is unchanged:\n\(shown)\(more)"
        case .unsupportedFormat(let file, let reason):
            return "cannot import \(file): \(reason)"
        case .badWrite(let position, let reason):
            return "operation \(position) of the batch: \(reason); nothing was written"
        case .noSuchFeature(let layer, let fid, let position):
            return "operation \(position) of the batch: layer '\(layer)' has no feature \(fid); nothing was written"
        case .featureExists(let layer, let fid, let position):
            return "operation \(position) of the batch: layer '\(layer)' already has a feature \(fid); nothing was written"
        }
    }
}

/// One problem with one input record. `location` names the feature (index and id) or the
/// line of a CSV file.
public struct ImportProblem: Sendable, CustomStringConvertible, Equatable {
    public var location: String
    public var message: String

    public init(location: String, message: String) {
        self.location = location
        self.message = message
    }

    public var description: String { location.isEmpty ? message : "\(location): \(message)" }
}
