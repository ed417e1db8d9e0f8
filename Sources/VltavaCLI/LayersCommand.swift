import ArgumentParser
import Engine
import Foundation
import Geometry
import Vltava
import Store

struct LayersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "layers",
        abstract: "List the store's layers: name, geometry type, feature count, bounding box, CRS."
    )

    @OptionGroup var store: StoreOptions

    func run() throws {
        do {
            let layers = try StoreLocation.source(store.db).layerInfos()
            let rows = layers.map { layer -> [String] in
                [layer.name,
                 layer.kind == .features ? (layer.geometryType ?? "GEOMETRY") : (layer.timeSeries.map { "time series of \($0.keyLayer)" } ?? "table"),
                 String(layer.featureCount),
                 layer.bbox.map(formatBBox) ?? "",
                 layer.crs ?? ""]
            }
            print(Table(header: ["layer", "type", "features", "bbox (min lon, min lat, max lon, max lat)", "crs"], rows: rows, rightAligned: [2]).rendered)
        } catch {
            throw CLIError(error)
        }
    }

    func formatBBox(_ box: BBox) -> String {
        [box.minLon, box.minLat, box.maxLon, box.maxLat].map { String(format: "%.6f", $0) }.joined(separator: " ")
    }
}

struct DescribeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "describe",
        abstract: "Show a layer's columns and their types."
    )

    @Argument(help: "The layer.") var layer: String
    @OptionGroup var store: StoreOptions

    func run() throws {
        do {
            let layers = try StoreLocation.source(store.db).layerInfos()
            guard let info = layers.first(where: { $0.name == layer }) else { throw EngineError.unknownLayer(layer, known: layers.map(\.name)) }
            var rows: [[String]] = []
            if let column = info.geometryColumn { rows.append([column, info.geometryType ?? "GEOMETRY"]) }
            rows += info.columns.map { [$0.name, $0.typeDescription] }
            print("\(info.name): \(info.featureCount) \(info.kind == .features ? "features" : "rows")" + (info.crs.map { ", \($0)" } ?? ""))
            if let link = info.timeSeries {
                print("time series of '\(link.keyLayer)': \(link.keyColumn) = \(link.keyLayer).\(link.layerKeyColumn), interval [\(link.startColumn), \(link.endColumn)) UTC")
            }
            print(Table(header: ["column", "type"], rows: rows).rendered)
        } catch {
            throw CLIError(error)
        }
    }
}
