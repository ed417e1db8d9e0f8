// EXPLAIN: what a planned statement will do, in words, a line per step, without running it.

import Engine
import Foundation
import Geometry
import Store
import Support

extension Planner {
    // MARK: EXPLAIN

    func describe(_ statement: Statement, _ planned: PlannedStatement) -> [String] {
        switch planned.step {
        case .find(let plan):
            var lines: [String] = []
            for (n, source) in plan.sources.enumerated() {
                let layer = source.layer
                let access: String
                switch plan.spatial {
                case .containing?: access = "point-in-polygon on the polygon grid index (exact test on flat rings, half-open boundary rule), smallest area first"
                case .nearest(let k, _, let within)?:
                    access = (layer.family == .points ? "best-first k-nearest on the k-d tree of unit vectors (exact chord distance)"
                                                      : "best-first k-nearest on the packed Hilbert R-tree (exact distance to each geometry)")
                        + ", k = \(k)" + (within.map { ", within \(Parser.format($0)) m" } ?? "")
                case .within(let metres, _)?:
                    access = (layer.family == .points ? "k-d tree" : "packed Hilbert R-tree") + " range search, \(Parser.format(metres)) m, nearest first"
                case .nearestFeatures(let k, let selection, let within)?:
                    access = "best-first k-nearest on the packed Hilbert R-tree, measured to the nearest point of \(plan.targets.count) '\(selection.layer.text)' feature\(plan.targets.count == 1 ? "" : "s")"
                        + ", k = \(k)" + (within.map { ", within \(Parser.format($0)) m" } ?? "")
                case .withinFeatures(let metres, let selection)?:
                    access = "packed Hilbert R-tree range search, \(Parser.format(metres)) m of the nearest point of \(plan.targets.count) '\(selection.layer.text)' feature\(plan.targets.count == 1 ? "" : "s"), nearest first"
                case .withinReach(let limit, _, _)?:
                    let bound: String
                    switch limit {
                    case .seconds(let s): bound = "\(Parser.format(s)) s on foot"
                    case .metres(let m): bound = "\(Parser.format(m)) m on foot"
                    }
                    access = "a walk within \(bound): one bounded Dijkstra over the walking network, each feature joined to its nearest path, nearest first"
                case .intersecting?: access = "packed Hilbert R-tree bounding-box search"
                case .atZoom?, nil: access = "full scan in load order (no spatial clause)"
                }
                lines.append("\(n + 1). \(layer.name) (\(layer.rowCount) \(layer.family == .table ? "rows" : "features, \(layer.family.rawValue)")): \(access)")
            }
            if let note = plan.linkNote { lines.append("   link: \(note)") }
            if case .find(let find) = statement {
                lines.append("   where: " + (find.filter == nil ? "none" : "compiled per layer, tested on the index's candidates"))
                if let groups = plan.groups {
                    let keys = find.groupBy.isEmpty ? "one group of every row" : "groups by " + find.groupBy.map(Planner.written).joined(separator: ", ") + " (hashed)"
                    lines.append("   group: \(keys), \(groups.aggregates.count) aggregate\(groups.aggregates.count == 1 ? "" : "s") accumulated in one pass"
                                 + (find.having == nil ? "" : ", HAVING tested per group"))
                }
                lines.append("   order: " + (find.order.isEmpty ? (plan.groups == nil ? "the spatial clause's order, else load order" : "the group keys") : find.order.map { $0.field.label + ($0.descending ? " DESC" : "") }.joined(separator: ", ")))
                lines.append("   limit: " + (find.limit.map(String.init) ?? "none (at most \(limits.maxRows) rows)"))
            }
            return lines
        case .tilesAt(let plan):
            return ["1. tile set \(plan.tileSetName): the tile at zoom \(plan.zoom) holding the point, decoded, then features containing it (polygons) or within 8 pixels (points, lines)"]
        case .route(let plan) where plan.trip != nil:
            let count = plan.trip?.request.points.count ?? 0
            return ["1. network \(plan.network.layerName): \(plan.network.graph.nodeCount) nodes, \(plan.network.graph.edgeCount) directed edges",
                    "   table: \(count) × \(count) walking distances between the start, the stops and the end, on the contraction hierarchy (buckets)",
                    "   order: " + (count <= TripRequest.exactLimit ? "Held–Karp dynamic programming over subsets (exact)"
                                                                   : "nearest neighbour, then 2-opt and Or-opt with restarts (a heuristic, with a lower bound)"),
                    "   legs: one route per pair of consecutive stops, as ROUTE walks them"]
        case .route(let plan):
            return ["1. network \(plan.network.layerName): \(plan.network.graph.nodeCount) nodes, \(plan.network.graph.edgeCount) directed edges",
                    "   snap: each end to the nearest point of the nearest path (R-tree over edges), at most \(Rounding.wholeMetres(limits.defaultSnapMetres)) m",
                    // AVOID changes edge weights per query, which the hierarchy cannot take: A* then.
                    (plan.request.avoid.isEmpty
                        ? "   search: contraction hierarchy (\(plan.network.hierarchy(for: plan.request.profile).shortcutCount) shortcuts), both ends upwards, shortcuts unpacked"
                        : "   search: A* with ALT landmark bounds, edges inside the AVOID polygons forbidden")
                        + (plan.request.profile.avoidsSteps ? ", profile \(plan.request.profile.rawValue): the \(plan.network.steps.count) step edges " + (plan.request.avoid.isEmpty ? "left out of it" : "forbidden") : "")]
        case .tile(let tile, let tiles, _):
            let read = tiles.formatName == "PMTiles" ? "its tile id found in the PMTiles directories (Hilbert order), its bytes read"
                                                     : "one row of the MBTiles tiles table (TMS row flipped)"
            return ["1. tile \(tile.z)/\(tile.x)/\(tile.y): \(read), decoded"]
        case .locate(let plan):
            let venue = plan.venue
            let kind = plan.options.fingerprints
            let space = venue.locator.space
            let head = "1. venue \(venue.name): \(venue.venue.beacons.count) beacons, \(venue.venue.scans.count) survey scans at \(venue.venue.points.count) points; \(venue.venue.model.representation.rawValue), unheard = \(space.unheard) dBm"
            let (method, k) = plan.options.resolved(for: venue.venue)
            if let track = plan.track {
                return [head, "   track: \(track.scans.count) scans, a hidden Markov model over \(venue.locator.cells.cells.count) cells, moves of about \(track.options.speed) frame units a second",
                        "   estimate: forward-backward, each scan from its \(track.options.k) most probable cells"]
            }
            switch method {
            case .gaussian:
                return [head, "   model: a Gaussian per beacon and cell with P(heard), \(venue.locator.cells.cells.count) cells" + (venue.locator.cells.side.map { " of \($0) (frame units)" } ?? " (the points)"),
                        "   estimate: the \(k) likeliest cells, weighted by likelihood"]
            case .knn, .wknn:
                return [head, "   fingerprints: \(kind.rawValue), \(venue.distinctFingerprints(kind)) distinct vectors in a k-d tree (Euclidean)",
                        "   estimate: \(method == .wknn ? "weighted by 1/signal distance" : "mean") of the \(k) nearest"]
            case .ensemble:
                return [head, "   estimate: per axis the median of wknn over the scans, wknn over the points' mean fingerprints and the gaussian, k = \(k)"]
            }
        case .showLayers, .describeLayer, .describeTileSet:
            return ["1. read from the loaded snapshot; no index"]
        case .write(let plan):
            return plan.lines
        case .other(let plan):
            return plan.explanation
        case .explain:
            return []
        }
    }
}
