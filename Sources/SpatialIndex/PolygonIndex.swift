// Point-in-polygon over a whole layer, on flat arrays, with no GEOS on the query path.
//
// Two levels, both built once:
// - a uniform grid over the layer's extent lists, per cell, the polygons whose bounding box
//   touches the cell (ascending index), so a query looks at a handful of candidates;
// - per polygon, its edges sorted into horizontal bands ("slabs"): the crossing test for a
//   point only walks the edges of the band its latitude falls in. Edges outside that band
//   cannot cross the horizontal ray through the point, so the answer is exactly the even-odd
//   ray-casting answer over all edges, at a fraction of the work.
//
// Boundary rule: the crossing test is half-open (an edge counts when one end is strictly
// above the point's latitude and the other is not, and the crossing lies strictly east of the
// point). A point exactly on an edge shared by two polygons that tile the plane is therefore
// inside exactly one of them, never both and never neither; which one is fixed by the geometry
// (points on a polygon's south and west edges are generally inside it, on its north and east
// edges outside). Every ring of every part counts in the even-odd sum, so holes and the parts
// of a MultiPolygon need no special case (valid input: parts do not overlap).

import Geometry

public struct PolygonIndex: Sendable {
    /// Edge endpoints, four doubles per edge: x1, y1, x2, y2 (lon/lat). Horizontal edges are
    /// dropped: they never cross a horizontal ray.
    private let edges: [Double]
    /// For each polygon: its bbox, its band layout and where its band lists start.
    private let polygons: [PolygonEntry]
    /// Band lists: `bandOffsets[entry.firstBand + b] ..< bandOffsets[entry.firstBand + b + 1]`
    /// indexes `bandEdges`, which holds edge numbers.
    private let bandOffsets: [Int32]
    private let bandEdges: [Int32]
    private let grid: Grid

    private struct PolygonEntry: Sendable {
        var box: BBox
        var firstBand: Int32
        var bandCount: Int32
        /// bandCount / (maxLat - minLat): multiply to get a band number.
        var bandScale: Double
    }

    private struct Grid: Sendable {
        var box: BBox
        var columns: Int
        var rows: Int
        var scaleX: Double
        var scaleY: Double
        var cellOffsets: [Int32]
        var cellItems: [Int32]

        @inline(__always)
        func cell(lon: Double, lat: Double) -> Int? {
            guard box.contains(lon: lon, lat: lat) else { return nil }
            let column = min(Int((lon - box.minLon) * scaleX), columns - 1)
            let row = min(Int((lat - box.minLat) * scaleY), rows - 1)
            return row * columns + column
        }
    }

    /// The number of polygons indexed (including non-polygonal entries, which never match).
    public let count: Int

    /// Indexes `geometries` by position; entries that are not Polygon or MultiPolygon never match.
    public init(geometries: [Geometry]) {
        count = geometries.count
        var edges: [Double] = []
        var polygons: [PolygonEntry] = []
        var bandOffsets: [Int32] = [0]
        var bandEdges: [Int32] = []
        polygons.reserveCapacity(geometries.count)

        for geometry in geometries {
            let parts: [Polygon]
            switch geometry {
            case .polygon(let p): parts = [p]
            case .multiPolygon(let m): parts = m.polygons
            default: parts = []
            }
            let firstEdge = edges.count / 4
            var box = BBox.empty
            for part in parts {
                for ring in 0..<part.ringCount {
                    let start = part.ringOffsets[ring], end = part.ringOffsets[ring + 1]
                    guard end - start >= 2 else { continue }
                    for i in start..<(end - 1) {
                        let x1 = part.coordinates[2 * i], y1 = part.coordinates[2 * i + 1]
                        let x2 = part.coordinates[2 * i + 2], y2 = part.coordinates[2 * i + 3]
                        box.extend(lon: x1, lat: y1)
                        if y1 != y2 { edges += [x1, y1, x2, y2] }
                    }
                    // Rings are closed in GeoJSON and WKB; close an open one rather than miss an edge.
                    let x0 = part.coordinates[2 * start], y0 = part.coordinates[2 * start + 1]
                    let xn = part.coordinates[2 * (end - 1)], yn = part.coordinates[2 * (end - 1) + 1]
                    box.extend(lon: xn, lat: yn)
                    if (x0 != xn || y0 != yn) && y0 != yn { edges += [xn, yn, x0, y0] }
                }
            }
            let edgeCount = edges.count / 4 - firstEdge
            guard edgeCount > 0, !box.isEmpty, box.maxLat > box.minLat else {
                polygons.append(PolygonEntry(box: .empty, firstBand: Int32(bandOffsets.count - 1), bandCount: 0, bandScale: 0))
                continue
            }
            // About four edges per band keeps each test short; capped so that long edges
            // spanning every band cannot blow up the lists.
            let bandCount = max(1, min(edgeCount / 4, 4096))
            let scale = Double(bandCount) / (box.maxLat - box.minLat)
            var lists = [[Int32]](repeating: [], count: bandCount)
            for e in firstEdge..<(firstEdge + edgeCount) {
                let y1 = edges[4 * e + 1], y2 = edges[4 * e + 3]
                let low = max(0, min(bandCount - 1, Int((min(y1, y2) - box.minLat) * scale)))
                let high = max(0, min(bandCount - 1, Int((max(y1, y2) - box.minLat) * scale)))
                for b in low...high { lists[b].append(Int32(e)) }
            }
            let firstBand = Int32(bandOffsets.count - 1)
            for list in lists {
                bandEdges += list
                bandOffsets.append(Int32(bandEdges.count))
            }
            polygons.append(PolygonEntry(box: box, firstBand: firstBand, bandCount: Int32(bandCount), bandScale: scale))
        }
        self.edges = edges
        self.polygons = polygons
        self.bandOffsets = bandOffsets
        self.bandEdges = bandEdges
        self.grid = PolygonIndex.buildGrid(polygons.map(\.box))
    }

    private static func buildGrid(_ boxes: [BBox]) -> Grid {
        var extent = BBox.empty
        var nonEmpty = 0
        for box in boxes where !box.isEmpty {
            extent.extend(box)
            nonEmpty += 1
        }
        guard nonEmpty > 0 else {
            return Grid(box: .empty, columns: 1, rows: 1, scaleX: 0, scaleY: 0, cellOffsets: [0, 0], cellItems: [])
        }
        // About one polygon per cell for evenly spread layers; at most 2^20 cells.
        let side = max(1, min(1024, Int(Double(nonEmpty).squareRoot() * 1.5)))
        let width = max(extent.maxLon - extent.minLon, 1e-12)
        let height = max(extent.maxLat - extent.minLat, 1e-12)
        let columns = side, rows = side
        let scaleX = Double(columns) / width, scaleY = Double(rows) / height
        var counts = [Int32](repeating: 0, count: columns * rows + 1)
        func cellRange(_ box: BBox) -> (ClosedRange<Int>, ClosedRange<Int>) {
            let c0 = max(0, min(columns - 1, Int((box.minLon - extent.minLon) * scaleX)))
            let c1 = max(0, min(columns - 1, Int((box.maxLon - extent.minLon) * scaleX)))
            let r0 = max(0, min(rows - 1, Int((box.minLat - extent.minLat) * scaleY)))
            let r1 = max(0, min(rows - 1, Int((box.maxLat - extent.minLat) * scaleY)))
            return (c0...c1, r0...r1)
        }
        for box in boxes where !box.isEmpty {
            let (cs, rs) = cellRange(box)
            for r in rs { for c in cs { counts[r * columns + c + 1] += 1 } }
        }
        for i in 1..<counts.count { counts[i] += counts[i - 1] }
        var fill = counts
        var items = [Int32](repeating: 0, count: Int(counts[counts.count - 1]))
        // Ascending polygon index within each cell: `firstContaining` can stop at the first hit.
        for (index, box) in boxes.enumerated() where !box.isEmpty {
            let (cs, rs) = cellRange(box)
            for r in rs {
                for c in cs {
                    items[Int(fill[r * columns + c])] = Int32(index)
                    fill[r * columns + c] += 1
                }
            }
        }
        return Grid(box: extent, columns: columns, rows: rows, scaleX: scaleX, scaleY: scaleY, cellOffsets: counts, cellItems: items)
    }

    /// Whether polygon `index` contains the point (see the boundary rule above).
    public func contains(_ index: Int, lon: Double, lat: Double) -> Bool {
        containsPoint(index, lon, lat)
    }

    private func containsPoint(_ index: Int, _ x: Double, _ y: Double) -> Bool {
        let entry = polygons[index]
        guard entry.bandCount > 0, entry.box.contains(lon: x, lat: y) else { return false }
        let band = Int(entry.firstBand) + min(Int((y - entry.box.minLat) * entry.bandScale), Int(entry.bandCount) - 1)
        var inside = false
        return edges.withUnsafeBufferPointer { e in
            bandEdges.withUnsafeBufferPointer { list in
                for k in Int(bandOffsets[band])..<Int(bandOffsets[band + 1]) {
                    let base = 4 * Int(list[k])
                    let x1 = e[base], y1 = e[base + 1], x2 = e[base + 2], y2 = e[base + 3]
                    if (y1 > y) != (y2 > y) {
                        let crossing = x1 + (y - y1) * (x2 - x1) / (y2 - y1)
                        if x < crossing { inside.toggle() }
                    }
                }
                return inside
            }
        }
    }

    /// Calls `visit` with every polygon containing the point, in ascending index order.
    public func containing(lon: Double, lat: Double, _ visit: (Int) -> Void) {
        guard let cell = grid.cell(lon: lon, lat: lat) else { return }
        for k in Int(grid.cellOffsets[cell])..<Int(grid.cellOffsets[cell + 1]) {
            let index = Int(grid.cellItems[k])
            if containsPoint(index, lon, lat) { visit(index) }
        }
    }

    /// The smallest index of a polygon containing the point, or nil.
    public func firstContaining(lon: Double, lat: Double) -> Int? {
        guard let cell = grid.cell(lon: lon, lat: lat) else { return nil }
        for k in Int(grid.cellOffsets[cell])..<Int(grid.cellOffsets[cell + 1]) {
            let index = Int(grid.cellItems[k])
            if containsPoint(index, lon, lat) { return index }
        }
        return nil
    }
}
