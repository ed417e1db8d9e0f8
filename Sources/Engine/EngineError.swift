import Geometry

/// Errors of engine operations. Every case says what is wrong in words a user understands, and
/// has a stable machine-readable `code` for JSON answers.
public enum EngineError: Error, Equatable, CustomStringConvertible, Sendable {
    case unknownLayer(String, known: [String])
    case invalidArgument(parameter: String, message: String)
    case unsupportedGeometry(layer: String, operation: String, needs: String, has: String)
    case unknownFeature(layer: String, fid: Int64)
    case store(String)
    case unknownTileSet(String, known: [String])
    case tiles(String)

    public var code: String {
        switch self {
        case .unknownLayer: "unknown_layer"
        case .invalidArgument: "invalid_argument"
        case .unsupportedGeometry: "unsupported_geometry"
        case .unknownFeature: "unknown_feature"
        case .store: "store_error"
        case .unknownTileSet: "unknown_tileset"
        case .tiles: "tiles_error"
        }
    }

    public var description: String {
        switch self {
        case .unknownLayer(let name, let known):
            var message = "unknown layer '\(name)'"
            if let suggestion = Suggestion.closest(to: name, in: known) { message += " — did you mean '\(suggestion)'?" }
            return message
        case .invalidArgument(let parameter, let message):
            return "\(parameter): \(message)"
        case .unsupportedGeometry(let layer, let operation, let needs, let has):
            return "\(operation) needs a layer of \(needs); '\(layer)' has \(has)"
        case .unknownFeature(let layer, let fid):
            return "layer '\(layer)' has no feature \(fid)"
        case .store(let message), .tiles(let message):
            return message
        case .unknownTileSet(let name, let known):
            var message = "unknown tile set '\(name)'"
            if let suggestion = Suggestion.closest(to: name, in: known) { message += " — did you mean '\(suggestion)'?" }
            return message
        }
    }
}

/// Validation of user-supplied query values, shared by every operation.
enum Check {
    static func point(lon: Double, lat: Double) throws(EngineError) {
        guard lon.isFinite else { throw .invalidArgument(parameter: "lon", message: "longitude \(lon) is not a finite number") }
        guard lat.isFinite else { throw .invalidArgument(parameter: "lat", message: "latitude \(lat) is not a finite number") }
        guard abs(lat) <= 90 else {
            let hint = abs(lon) <= 90 ? " — did you swap longitude and latitude?" : ""
            throw .invalidArgument(parameter: "lat", message: "latitude \(lat) is outside -90…90\(hint)")
        }
        guard abs(lon) <= 180 else { throw .invalidArgument(parameter: "lon", message: "longitude \(lon) is outside -180…180") }
    }

    static let maxK = 10_000

    static func k(_ k: Int) throws(EngineError) {
        guard k >= 1 && k <= maxK else { throw .invalidArgument(parameter: "k", message: "k must be between 1 and \(maxK), got \(k)") }
    }

    static func distance(_ metres: Double, parameter: String = "distance") throws(EngineError) {
        guard !metres.isNaN else { throw .invalidArgument(parameter: parameter, message: "distance is not a number") }
        guard metres >= 0 else { throw .invalidArgument(parameter: parameter, message: "distance must not be negative, got \(metres) m") }
    }
}
