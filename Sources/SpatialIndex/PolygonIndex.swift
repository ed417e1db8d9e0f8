// Point-in-polygon over a whole layer, on flat arrays, with no GEOS on the query path.
//
// Two levels, both built once:
// - a uniform grid over the layer's extent lists, per cell, the polygons whose bounding box
//   touches the cell (ascending index), so a query looks at a handful of candidates;
// - per polygon, an even-odd crossing test. A small polygon (at most 32 edges: pens,
//   buildings, parcels) simply walks its vertex run. A large one (a district's 700 edges) has
//   its edges sorted into horizontal bands ("slabs"), and a point only walks the edges of the
//   band its latitude falls in: edges outside that band cannot cross the horizontal ray
//   through the point, so the answer is exactly the ray-casting answer over all edges.
//
// Storage: every polygon's rings sit closed, back to back, in one array of coordinates (the
// index's only copy of them). In a polygon's run the steps between rings are not edges of the
// polygon: after each ring the run goes back to its very first vertex, and from there to the
// next ring's first, so every connecting step is walked once in each direction and each of
// its crossings is counted twice: they cancel. (Crossings are computed from the lower
// endpoint, so both directions give bit-identical results.) Returning to the first vertex
// after every ring, not only after the last, matters from three rings on: a chain
// ring 1 → ring 2 → ring 3 → ring 1 would be a triangle walked once, flipping every point
// inside it.
//
// Boundary rule: each edge goes through `PointInPolygon.crosses`, the engine's one half-open
// crossing test (see Geometry/PointInPolygon.swift): a point exactly on an edge shared by two
// polygons is inside exactly one of them, and `Polygon.contains` gives the same answers as
// this index. Every ring of every part counts in the even-odd sum, so holes and the parts of a
// MultiPolygon need no special case (valid input: parts do not overlap).

import Geometry

public struct PolygonIndex: Sendable {
    /// Closed rings back to back, x, y per vertex, in blocks of about 8 MB; a polygon's run
    /// never straddles two blocks. Blocks rather than one array: the builder fills them in
    /// place, so the coordinates are never copied and never exist twice.
    private let blocks: CoordinateBlocks
    private let polygons: [PolygonEntry]
    /// Band lists of the large polygons: `bandOffsets[firstBand + b] ..< bandOffsets[firstBand + b + 1]`
    /// indexes `bandEdges`, which holds the first vertex of each edge in the band.
    private let bandOffsets: [UInt32]
    private let bandEdges: [UInt32]
    private let grid: Grid

    /// Polygons with at most this many edges are scanned whole rather than banded.
    static let smallPolygonEdges = 32

    struct PolygonEntry: Sendable {
        /// The bounding box in Float, rounded outward: a prefilter only, so a slightly larger box
        /// changes no answer and halves the entry (200,000 polygons: 3 MB less).
        var minX: Float, minY: Float, maxX: Float, maxY: Float
        var box: BBox { BBox(minLon: Double(minX), minLat: Double(minY), maxLon: Double(maxX), maxLat: Double(maxY)) }

        init(box: BBox, block: UInt32, firstVertex: UInt32, endVertex: UInt32, firstBand: UInt32, bandCount: UInt32) {
            if box.isEmpty {
                (minX, minY, maxX, maxY) = (.infinity, .infinity, -.infinity, -.infinity)
            } else {
                (minX, minY) = (PolygonEntry.down(box.minLon), PolygonEntry.down(box.minLat))
                (maxX, maxY) = (PolygonEntry.up(box.maxLon), PolygonEntry.up(box.maxLat))
            }
            self.block = block
            self.firstVertex = firstVertex
            self.endVertex = endVertex
            self.firstBand = firstBand
            self.bandCount = bandCount
        }

        static func down(_ d: Double) -> Float { let f = Float(d); return Double(f) > d ? f.nextDown : f }
        static func up(_ d: Double) -> Float { let f = Float(d); return Double(f) < d ? f.nextUp : f }
        /// The polygon's vertex run: `firstVertex ..< endVertex` of block `block`.
        var block: UInt32
        var firstVertex: UInt32
        var endVertex: UInt32
        /// Bands (large polygons only; 0 for small ones and for non-polygons).
        var firstBand: UInt32
        var bandCount: UInt32
    }

    struct Grid: Sendable {
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
    public var count: Int { polygons.count }

    /// Indexes `geometries` by position; entries that are not Polygon or MultiPolygon never match.
    /// A polygon with a NaN or infinite vertex is refused (`.nonFinite(item:)`, its position).
    public init(geometries: [Geometry]) throws(SpatialIndexError) {
        var builder = Builder()
        for geometry in geometries { try builder.add(geometry) }
        self = builder.build()
    }

    /// Builds an index one geometry at a time, so a caller streaming a large file never holds
    /// its geometries and the index at once.
    public struct Builder {
        var blocks = BlockAllocator()
        var polygons: [PolygonEntry] = []
        var bandOffsets: [UInt32] = [0]
        var bandEdges: [UInt32] = []
        /// The current polygon's run, reused between polygons.
        var run: [Double] = []

        static let blockSize = 1 << 20

        public init() {}

        /// Adds the next polygon (its index is the number added before it). A NaN or infinite
        /// vertex is refused with `.nonFinite(item:)` and nothing is added: it has no place in
        /// the grid or the bands, and a crossing test against it means nothing.
        public mutating func add(_ geometry: Geometry) throws(SpatialIndexError) {
            let parts: [Polygon]
            switch geometry {
            case .polygon(let p): parts = [p]
            case .multiPolygon(let m): parts = m.polygons
            default: parts = []
            }
            for part in parts where !part.coordinates.allSatisfy(\.isFinite) { throw .nonFinite(item: polygons.count) }
            // Polygon indices go into the grid as Int32.
            guard polygons.count < Int(Int32.max) else { throw .tooLarge(polygons.count + 1) }
            run.removeAll(keepingCapacity: true)
            var box = BBox.empty
            for part in parts {
                for ring in 0..<part.ringCount {
                    let start = part.ringOffsets[ring], end = part.ringOffsets[ring + 1]
                    guard end - start >= 2 else { continue }
                    for i in start..<end {
                        box.extend(lon: part.coordinates[2 * i], lat: part.coordinates[2 * i + 1])
                        run.append(part.coordinates[2 * i])
                        run.append(part.coordinates[2 * i + 1])
                    }
                    // Rings are closed in GeoJSON and WKB; close an open one rather than miss an edge.
                    if part.coordinates[2 * start] != part.coordinates[2 * (end - 1)] || part.coordinates[2 * start + 1] != part.coordinates[2 * (end - 1) + 1] {
                        run.append(part.coordinates[2 * start])
                        run.append(part.coordinates[2 * start + 1])
                    }
                    // Back to the run's first vertex, so the step to the next ring cancels (see the header).
                    if (run[0], run[1]) != (run[run.count - 2], run[run.count - 1]) {
                        run.append(run[0])
                        run.append(run[1])
                    }
                }
            }
            guard run.count >= 8, !box.isEmpty, box.maxLat > box.minLat else {
                polygons.append(PolygonEntry(box: .empty, block: 0, firstVertex: 0, endVertex: 0, firstBand: 0, bandCount: 0))
                return
            }
            let (b, firstDouble) = blocks.append(run, blockSize: Builder.blockSize)
            let first = firstDouble / 2
            let edges = run.count / 2 - 1
            var firstBand: UInt32 = 0, bandCount: UInt32 = 0
            if edges > PolygonIndex.smallPolygonEdges {
                // The bands span the stored (Float, outward-rounded) box, as queries see it.
                let stored = PolygonEntry(box: box, block: 0, firstVertex: 0, endVertex: 0, firstBand: 0, bandCount: 0).box
                (firstBand, bandCount) = addBands(box: stored, base: first)
            }
            polygons.append(PolygonEntry(box: box, block: UInt32(b), firstVertex: UInt32(first), endVertex: UInt32(first + run.count / 2),
                                         firstBand: firstBand, bandCount: bandCount))
        }

        /// Sorts the run's edges into bands (a counting sort: two passes, no per-band arrays).
        mutating func addBands(box: BBox, base: Int) -> (UInt32, UInt32) {
            let edges = run.count / 2 - 1
            // About four edges per band keeps each test short; capped so that long edges
            // spanning every band cannot blow up the lists.
            let count = max(1, min(edges / 2, 4096))
            let scale = Double(count) / (box.maxLat - box.minLat)
            func band(_ y: Double) -> Int { max(0, min(count - 1, Int((y - box.minLat) * scale))) }
            var counts = [UInt32](repeating: 0, count: count + 1)
            for v in 0..<edges where run[2 * v + 1] != run[2 * v + 3] {
                for b in band(min(run[2 * v + 1], run[2 * v + 3]))...band(max(run[2 * v + 1], run[2 * v + 3])) { counts[b + 1] += 1 }
            }
            for b in 0..<count { counts[b + 1] += counts[b] }
            let start = UInt32(bandEdges.count)
            bandEdges.append(contentsOf: repeatElement(0, count: Int(counts[count])))
            var fill = counts
            for v in 0..<edges where run[2 * v + 1] != run[2 * v + 3] {
                for b in band(min(run[2 * v + 1], run[2 * v + 3]))...band(max(run[2 * v + 1], run[2 * v + 3])) {
                    bandEdges[Int(start + fill[b])] = UInt32(base + v)
                    fill[b] += 1
                }
            }
            let firstBand = UInt32(bandOffsets.count - 1)
            for b in 1...count { bandOffsets.append(start + counts[b]) }
            return (firstBand, UInt32(count))
        }

        public consuming func build() -> PolygonIndex {
            PolygonIndex(blocks: blocks.freeze(), polygons: polygons, bandOffsets: bandOffsets, bandEdges: bandEdges,
                         grid: PolygonIndex.buildGrid(polygons))
        }
    }

    private init(blocks: CoordinateBlocks, polygons: [PolygonEntry], bandOffsets: [UInt32], bandEdges: [UInt32], grid: Grid) {
        self.blocks = blocks
        self.polygons = polygons
        self.bandOffsets = bandOffsets
        self.bandEdges = bandEdges
        self.grid = grid
    }

    private static func buildGrid(_ polygons: [PolygonEntry]) -> Grid {
        let boxes = polygons.lazy.map(\.box)
        var extent = BBox.empty
        var nonEmpty = 0
        for box in boxes where !box.isEmpty {
            extent.extend(box)
            nonEmpty += 1
        }
        guard nonEmpty > 0 else {
            return Grid(box: .empty, columns: 1, rows: 1, scaleX: 0, scaleY: 0, cellOffsets: [0, 0], cellItems: [])
        }
        // A few cells per polygon for small layers (fewer candidates per point); for large ones
        // at most two cells per polygon, to keep the grid small next to the coordinates.
        let n = Double(nonEmpty)
        let side = max(1, min(1024, Int(min(2.5 * n.squareRoot(), max(4096, 2 * n).squareRoot()))))
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
        guard entry.endVertex > entry.firstVertex,
              x >= Double(entry.minX), x <= Double(entry.maxX), y >= Double(entry.minY), y <= Double(entry.maxY) else { return false }
        let p = blocks.pointers[Int(entry.block)]
        @inline(__always) func crosses(_ v: Int) -> Bool {
            PointInPolygon.crosses(x, y, p[2 * v], p[2 * v + 1], p[2 * v + 2], p[2 * v + 3])
        }
        var inside = false
        if entry.bandCount == 0 {
            for v in Int(entry.firstVertex)..<(Int(entry.endVertex) - 1) where crosses(v) { inside.toggle() }
            return inside
        }
        let minY = Double(entry.minY)
        let scale = Double(entry.bandCount) / (Double(entry.maxY) - minY)
        let band = Int(entry.firstBand) + max(0, min(Int((y - minY) * scale), Int(entry.bandCount) - 1))
        return bandEdges.withUnsafeBufferPointer { list in
            for k in Int(bandOffsets[band])..<Int(bandOffsets[band + 1]) where crosses(Int(list[k])) { inside.toggle() }
            return inside
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

    /// How many polygons the grid cell holding the point lists: the candidates `containing`
    /// tests exactly, for EXPLAIN (0 outside the grid).
    public func candidateCount(lon: Double, lat: Double) -> Int {
        guard let cell = grid.cell(lon: lon, lat: lat) else { return 0 }
        return Int(grid.cellOffsets[cell + 1]) - Int(grid.cellOffsets[cell])
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

/// The coordinate blocks of a built index: allocated by the builder, never changed after, freed
/// with the index. Raw memory rather than arrays, so a point test reads coordinates with no
/// reference counting.
final class CoordinateBlocks: @unchecked Sendable {
    let pointers: [UnsafeMutablePointer<Double>]

    init(pointers: [UnsafeMutablePointer<Double>]) { self.pointers = pointers }

    deinit { for p in pointers { p.deallocate() } }
}

/// Fills blocks during the build; hands them to `CoordinateBlocks` at the end (or frees them
/// if the builder is dropped unbuilt).
final class BlockAllocator {
    private var pointers: [UnsafeMutablePointer<Double>] = []
    private var capacity = 0
    private var used = 0

    /// Copies `values` into the current block, or a new one if they do not fit (a run never
    /// straddles blocks); returns the block and the offset of the first value.
    func append(_ values: [Double], blockSize: Int) -> (block: Int, offset: Int) {
        if pointers.isEmpty || used + values.count > capacity {
            capacity = max(blockSize, values.count)
            pointers.append(UnsafeMutablePointer<Double>.allocate(capacity: capacity))
            used = 0
        }
        let offset = used
        values.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { (pointers[pointers.count - 1] + offset).update(from: base, count: source.count) }
        }
        used += values.count
        return (pointers.count - 1, offset)
    }

    func freeze() -> CoordinateBlocks {
        defer { pointers = [] }
        return CoordinateBlocks(pointers: pointers)
    }

    deinit { for p in pointers { p.deallocate() } }
}
