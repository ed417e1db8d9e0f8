// Point-in-polygon over a whole layer, on flat arrays, with no GEOS on the query path.
//
// Three levels, all built once:
// - a uniform grid over the layer's extent lists, per cell, the polygons whose bounding box
//   touches the cell (ascending index), so a query looks at a handful of candidates;
// - each grid cell is split into finer cells (up to 32 × 32, within a memory budget), and each
//   fine cell that no edge comes near is classified once: inside no candidate, or inside exactly
//   one (named by its place in the cell's list). A point in such a cell is answered by one
//   lookup, with no edge tested; most points fall deep inside one polygon or in a gap. Only
//   points in fine cells that an edge crosses go on to the exact test (see "Classified cells");
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
// Classified cells: a fine cell is classified only if no edge (nor a step between rings, which
// is harmless to leave out but simpler to include) comes within 1/1024 of a fine cell of its
// rectangle. Every point that maps to the cell is then at least that far from every edge:
// many orders of magnitude more than the rounding of the crossing test, so the ray test gives
// the exact answer for it, and that answer is the same for the whole cell (it changes only
// across an edge). The cell's answer is computed once at its centre, with the same crossing
// test, by sweeping each polygon's crossings along the row of fine cells. The top cell of a
// point is derived from its fine cell, and the candidate lists are built with the same
// mapping, so both levels always agree.
//
// Boundary rule: each edge goes through `PointInPolygon.crosses`, the engine's one half-open
// crossing test (see Geometry/PointInPolygon.swift): a point exactly on an edge shared by two
// polygons is inside exactly one of them, and `Polygon.contains` gives the same answers as
// this index. Every ring of every part counts in the even-odd sum, so holes and the parts of a
// MultiPolygon need no special case (valid input: parts do not overlap).

import Dispatch
import Geometry

public struct PolygonIndex: Sendable {
    /// Closed rings back to back, x, y per vertex, in blocks of about 8 MB; a polygon's run
    /// never straddles two blocks. Blocks rather than one array: the builder fills them in
    /// place, so the coordinates are never copied and never exist twice.
    private let blocks: CoordinateBlocks
    private let polygons: FlatArray<PolygonEntry>
    /// Band lists of the large polygons: `bandOffsets[firstBand + b] ..< bandOffsets[firstBand + b + 1]`
    /// indexes `bandEdges`, which holds the first vertex of each edge in the band.
    private let bandOffsets: FlatArray<UInt32>
    private let bandEdges: FlatArray<UInt32>
    @usableFromInline let grid: Grid

    /// Polygons with at most this many edges are scanned whole rather than banded.
    static let smallPolygonEdges = 32

    struct PolygonEntry: Sendable, BitwiseCopyable {
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

    // The grid's lookup is inlinable, so that a caller in another module (the engine, a
    // benchmark's loop) answers a point in a classified cell with no call at all.
    @usableFromInline
    struct Grid: Sendable {
        @usableFromInline var box: BBox
        /// Top cells per side; each holds (1 << shift) × (1 << shift) fine cells.
        @usableFromInline var columns: Int
        @usableFromInline var rows: Int
        @usableFromInline var shift: Int
        @inlinable var fineColumns: Int { columns &<< shift }
        @inlinable var fineRows: Int { rows &<< shift }
        /// Fine cells per degree.
        @usableFromInline var scaleX: Double
        @usableFromInline var scaleY: Double
        @usableFromInline var cellOffsets: FlatArray<Int32>
        @usableFromInline var cellItems: FlatArray<Int32>
        /// Per fine cell: `outside` (0), `mixed`, or k in 1..<mixed: inside the cell's candidate
        /// k - 1 only.
        @usableFromInline var fineStates: FlatArray<UInt8>

        @usableFromInline static let outside: UInt8 = 0
        @usableFromInline static let mixed: UInt8 = 255

        @inlinable
        func fineColumn(_ lon: Double) -> Int { min(Int((lon - box.minLon) * scaleX), fineColumns - 1) }
        @inlinable
        func fineRow(_ lat: Double) -> Int { min(Int((lat - box.minLat) * scaleY), fineRows - 1) }

        /// The top cell and the fine cell of a point, or nil outside the grid.
        @inlinable
        func locate(lon: Double, lat: Double) -> (cell: Int, fine: Int)? {
            guard box.contains(lon: lon, lat: lat) else { return nil }
            let column = fineColumn(lon), row = fineRow(lat)
            // Wrapping operators: every value is bounded by the grid's size (at most 32,768 fine
            // cells a side), and a checked shift by a variable amount costs branches per point.
            return ((row &>> shift) &* columns &+ (column &>> shift), row &* fineColumns &+ column)
        }

        /// The polygon a classified fine cell is inside, or nil (outside). The state is checked
        /// against the cell's list, so that a damaged state read from a file cannot index past it.
        @inlinable
        func classified(_ state: UInt8, first: Int, cell: Int) -> Int? {
            let item = classifiedItem(state, first: first, cell: cell)
            return item < 0 ? nil : item
        }

        /// `classified` as an index or -1, computed without a branch on the state: whether a
        /// point falls inside a polygon or in a gap is as good as random from one query to the
        /// next, and the mispredicted branch cost more than the rest of the lookup (W1: 18 ns a
        /// point in a classified cell with the branch, 5.3 ns without). The item is read at a
        /// safe place either way, the list's own or the first item (there is one whenever a
        /// cell is classified), and the answer is selected by masks afterwards.
        @inlinable
        func classifiedItem(_ state: UInt8, first: Int, cell: Int) -> Int {
            guard !cellItems.isEmpty else { return -1 }
            let k = Int(state) &- 1  // -1 for `outside`
            let count = Int(cellOffsets[cell &+ 1]) &- first
            // All ones when 0 ≤ k < count, else zero, by sign bits: a comparison here would
            // become a branch again. (k is at least -1 and count at most 2^32: no overflow.)
            let inList = ((k &- count) &>> 63) & (~k &>> 63)
            let item = Int(cellItems[(first &+ k) & inList])
            return ((item &+ 1) & inList) &- 1
        }

        /// The fine column or row of a coordinate that may lie a little outside the grid, clamped.
        func clampedFine(_ value: Double, origin: Double, scale: Double, count: Int) -> Int {
            let f = ((value - origin) * scale).rounded(.down)
            return f < 0 ? 0 : f >= Double(count) ? count - 1 : Int(f)
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

        /// Room for `count` polygons' entries, so a large layer's are never copied as they grow.
        public mutating func reserveCapacity(_ count: Int) { polygons.reserveCapacity(count) }

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
            let blocks = blocks.freeze()
            let (polygons, bandOffsets, bandEdges) = (FlatArray(polygons), FlatArray(bandOffsets), FlatArray(bandEdges))
            // The builder's arrays go now, not after the grid is built.
            (self.polygons, self.bandOffsets, self.bandEdges, run) = ([], [], [], [])
            return PolygonIndex(blocks: blocks, polygons: polygons, bandOffsets: bandOffsets, bandEdges: bandEdges,
                                grid: PolygonIndex.buildGrid(polygons, blocks: blocks, bandOffsets: bandOffsets, bandEdges: bandEdges))
        }
    }

    private init(blocks: CoordinateBlocks, polygons: FlatArray<PolygonEntry>, bandOffsets: FlatArray<UInt32>, bandEdges: FlatArray<UInt32>, grid: Grid) {
        self.blocks = blocks
        self.polygons = polygons
        self.bandOffsets = bandOffsets
        self.bandEdges = bandEdges
        self.grid = grid
    }

    private static func buildGrid(_ polygons: FlatArray<PolygonEntry>, blocks: CoordinateBlocks,
                                  bandOffsets: FlatArray<UInt32>, bandEdges: FlatArray<UInt32>) -> Grid {
        let boxes = polygons.lazy.map(\.box)
        var extent = BBox.empty
        var nonEmpty = 0
        var vertices = 0
        for entry in polygons where !entry.box.isEmpty {
            extent.extend(entry.box)
            nonEmpty += 1
            vertices += Int(entry.endVertex - entry.firstVertex)
        }
        guard nonEmpty > 0 else {
            return Grid(box: .empty, columns: 1, rows: 1, shift: 0, scaleX: 0, scaleY: 0, cellOffsets: FlatArray([0, 0]), cellItems: FlatArray(),
                        fineStates: FlatArray([Grid.mixed]))
        }
        // A few cells per polygon for small layers (fewer candidates per point); for large ones
        // at most two cells per polygon, to keep the grid small next to the coordinates.
        let n = Double(nonEmpty)
        let side = max(1, min(1024, Int(min(2.5 * n.squareRoot(), max(4096, 2 * n).squareRoot()))))
        // Fine cells cost a byte each: at most 8 per vertex (a vertex itself costs 16), and at
        // least 1 MB, so that a few large polygons (the districts) get the finest split.
        let budget = max(1 << 20, 8 * vertices)
        var shift = 0
        while shift < 5, (side * side) << (2 * (shift + 1)) <= budget { shift += 1 }
        let width = max(extent.maxLon - extent.minLon, 1e-12)
        let height = max(extent.maxLat - extent.minLat, 1e-12)
        var grid = Grid(box: extent, columns: side, rows: side, shift: shift,
                        scaleX: Double(side << shift) / width, scaleY: Double(side << shift) / height,
                        cellOffsets: FlatArray(), cellItems: FlatArray(), fineStates: FlatArray())
        // Through the fine mapping, as queries locate their top cell (see "Classified cells").
        func cellRange(_ box: BBox) -> (ClosedRange<Int>, ClosedRange<Int>) {
            ((grid.fineColumn(box.minLon) >> shift)...(grid.fineColumn(box.maxLon) >> shift),
             (grid.fineRow(box.minLat) >> shift)...(grid.fineRow(box.maxLat) >> shift))
        }
        var counts = [Int32](repeating: 0, count: side * side + 1)
        for box in boxes where !box.isEmpty {
            let (cs, rs) = cellRange(box)
            for r in rs { for c in cs { counts[r * side + c + 1] += 1 } }
        }
        for i in 1..<counts.count { counts[i] += counts[i - 1] }
        var fill = counts
        var items = [Int32](repeating: 0, count: Int(counts[counts.count - 1]))
        // Ascending polygon index within each cell: `firstContaining` can stop at the first hit.
        for (index, box) in boxes.enumerated() where !box.isEmpty {
            let (cs, rs) = cellRange(box)
            for r in rs {
                for c in cs {
                    items[Int(fill[r * side + c])] = Int32(index)
                    fill[r * side + c] += 1
                }
            }
        }
        grid.cellOffsets = FlatArray(counts)
        grid.cellItems = FlatArray(items)
        // Classified in place: the fine cells (64 MB for a million polygons) are never copied.
        grid.fineStates = FlatArray(count: grid.fineColumns * grid.fineRows, repeating: Grid.outside) { states in
            classify(grid, polygons, blocks, bandOffsets: bandOffsets, bandEdges: bandEdges, into: states)
        }
        return grid
    }

    /// The state of every fine cell (see "Classified cells" in the header), into `states`
    /// (one per fine cell, all `outside` on entry). Rows of fine cells are classified in
    /// stripes, several at once: a cell's state depends only on its own row's work (the edges
    /// that come near it, then the polygons swept along its row, in index order), so each
    /// stripe writes only its own rows and the states are the same as one thread's.
    private static func classify(_ grid: Grid, _ polygons: FlatArray<PolygonEntry>, _ blocks: CoordinateBlocks,
                                 bandOffsets: FlatArray<UInt32>, bandEdges: FlatArray<UInt32>, into states: UnsafeMutableBufferPointer<UInt8>) {
        let fineRows = grid.fineRows
        let classifier = StripeClassifier(grid: grid, polygons: polygons, blocks: blocks, bandOffsets: bandOffsets, bandEdges: bandEdges,
                                          states: states)
        // A small grid (W1's million cells: a few milliseconds) is done sooner on this thread
        // than handed out: on a busy machine the hand-over alone doubled W1's build.
        guard states.count >= PolygonIndex.parallelClassifyCells else { return classifier.classify(rows: 0..<fineRows) }
        // More stripes than cores, so that a stripe dense with polygons does not hold the rest up.
        let stripes = min(fineRows, 16)
        DispatchQueue.concurrentPerform(iterations: stripes) { stripe in
            classifier.classify(rows: (stripe * fineRows / stripes)..<((stripe + 1) * fineRows / stripes))
        }
    }

    /// Fine grids at least this large are classified on all cores (W3: 25.6 M cells).
    static let parallelClassifyCells = 1 << 22

    /// `classify`'s work on one stripe of rows of fine cells.
    private struct StripeClassifier: @unchecked Sendable {
        let grid: Grid
        let polygons: FlatArray<PolygonEntry>
        let blocks: CoordinateBlocks
        let bandOffsets: FlatArray<UInt32>
        let bandEdges: FlatArray<UInt32>
        /// Shared by every stripe; each writes only the cells of its own rows.
        let states: UnsafeMutableBufferPointer<UInt8>

        func classify(rows: Range<Int>) {
            guard !rows.isEmpty else { return }
            let fineColumns = grid.fineColumns, fineRows = grid.fineRows, side = 1 << grid.shift
            let cellWidth = 1 / grid.scaleX, cellHeight = 1 / grid.scaleY
            let marginX = cellWidth / 1024, marginY = cellHeight / 1024
            func column(_ x: Double) -> Int { grid.clampedFine(x, origin: grid.box.minLon, scale: grid.scaleX, count: fineColumns) }
            func row(_ y: Double) -> Int { grid.clampedFine(y, origin: grid.box.minLat, scale: grid.scaleY, count: fineRows) }
            /// The rows of `low ... high` (fine rows, clamped) that are in this stripe.
            func ownRows(_ low: Double, _ high: Double) -> ClosedRange<Int>? {
                let first = max(row(low), rows.lowerBound), last = min(row(high), rows.upperBound - 1)
                return first <= last ? first...last : nil
            }

            // A list too long to name its polygon in a byte: its cells are always tested.
            for fineRow in rows {
                let r = fineRow >> grid.shift
                for c in 0..<grid.columns where grid.cellOffsets[r * grid.columns + c + 1] - grid.cellOffsets[r * grid.columns + c] >= Int32(Grid.mixed) {
                    for fineColumn in (c * side)..<((c + 1) * side) { states[fineRow * fineColumns + fineColumn] = Grid.mixed }
                }
            }
            // The cells an edge comes near: row by row, the longitudes that the part of the edge
            // within the row's (widened) latitudes spans.
            for entry in polygons where entry.endVertex > entry.firstVertex {
                guard ownRows(Double(entry.minY) - marginY, Double(entry.maxY) + marginY) != nil else { continue }
                let p = blocks.pointers[Int(entry.block)]
                for v in Int(entry.firstVertex)..<(Int(entry.endVertex) - 1) {
                    let x1 = p[2 * v], y1 = p[2 * v + 1], x2 = p[2 * v + 2], y2 = p[2 * v + 3]
                    guard let edgeRows = ownRows(min(y1, y2) - marginY, max(y1, y2) + marginY) else { continue }
                    for r in edgeRows {
                        var (xa, xb) = (x1, x2)
                        if y1 != y2 {
                            let low = grid.box.minLat + Double(r) * cellHeight - marginY
                            let high = grid.box.minLat + Double(r + 1) * cellHeight + marginY
                            let ta = max(0, min(1, (low - y1) / (y2 - y1))), tb = max(0, min(1, (high - y1) / (y2 - y1)))
                            (xa, xb) = (x1 + ta * (x2 - x1), x1 + tb * (x2 - x1))
                        }
                        for c in column(min(xa, xb) - marginX)...column(max(xa, xb) + marginX) { states[r * fineColumns + c] = Grid.mixed }
                    }
                }
            }
            // The other cells: each polygon's crossings with the horizontal line through a row's
            // centres, swept west to east; a centre with an odd number of crossings east of it is
            // inside (the crossing test's own rule).
            var crossings: [Double] = []
            for (index, entry) in polygons.enumerated() where entry.endVertex > entry.firstVertex {
                let minY = Double(entry.minY), maxY = Double(entry.maxY)
                guard let polygonRows = ownRows(minY, maxY) else { continue }
                let p = blocks.pointers[Int(entry.block)]
                for r in polygonRows {
                    let y = grid.box.minLat + (Double(r) + 0.5) * cellHeight
                    crossings.removeAll(keepingCapacity: true)
                    func add(_ v: Int) {
                        let x1 = p[2 * v], y1 = p[2 * v + 1], x2 = p[2 * v + 2], y2 = p[2 * v + 3]
                        if (y1 > y) != (y2 > y) { crossings.append(PointInPolygon.crossingLongitude(y, x1, y1, x2, y2)) }
                    }
                    if entry.bandCount == 0 {
                        for v in Int(entry.firstVertex)..<(Int(entry.endVertex) - 1) { add(v) }
                    } else {
                        let scale = Double(entry.bandCount) / (maxY - minY)
                        let band = Int(entry.firstBand) + max(0, min(Int(((y - minY) * scale).rounded(.down)), Int(entry.bandCount) - 1))
                        for k in Int(bandOffsets[band])..<Int(bandOffsets[band + 1]) { add(Int(bandEdges[k])) }
                    }
                    guard !crossings.isEmpty else { continue }
                    crossings.sort()
                    var west = 0
                    let last = column(Double(entry.maxX))
                    var c = column(Double(entry.minX))
                    while c <= last {
                        func centre(_ c: Int) -> Double { grid.box.minLon + (Double(c) + 0.5) * cellWidth }
                        while west < crossings.count, crossings[west] <= centre(c) { west += 1 }
                        guard (crossings.count - west) % 2 == 1 else {
                            // Outside up to the next crossing: go straight to the first centre at
                            // or past it (a column before it by the grid's mapping, then on).
                            guard west < crossings.count else { break }
                            var next = max(c + 1, column(crossings[west]) - 1)
                            while next <= last, centre(next) < crossings[west] { next += 1 }
                            c = next
                            continue
                        }
                        defer { c += 1 }
                        let fine = r * fineColumns + c
                        guard states[fine] != Grid.mixed else { continue }
                        // A second polygon here (an overlapping layer): test such cells exactly.
                        guard states[fine] == Grid.outside else { states[fine] = Grid.mixed; continue }
                        let cell = (r >> grid.shift) * grid.columns + (c >> grid.shift)
                        let first = Int(grid.cellOffsets[cell]), end = Int(grid.cellOffsets[cell + 1])
                        if let place = (first..<end).firstIndex(where: { grid.cellItems[$0] == Int32(index) }) {
                            states[fine] = UInt8(place - first + 1)
                        } else {
                            states[fine] = Grid.mixed  // cannot happen (the box holds the centre); safe anyway
                        }
                    }
                }
            }
        }
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
        for k in Int(bandOffsets[band])..<Int(bandOffsets[band + 1]) where crosses(Int(bandEdges[k])) { inside.toggle() }
        return inside
    }

    /// Calls `visit` with every polygon containing the point, in ascending index order.
    @inlinable
    public func containing(lon: Double, lat: Double, _ visit: (Int) -> Void) {
        guard let (cell, fine) = grid.locate(lon: lon, lat: lat) else { return }
        let state = grid.fineStates[fine]
        if state != Grid.mixed {
            if let item = grid.classified(state, first: Int(grid.cellOffsets[cell]), cell: cell) { visit(item) }
            return
        }
        allTested(cell: cell, lon: lon, lat: lat, visit)
    }

    /// `containing`'s exact test over `cell`'s list.
    @usableFromInline
    func allTested(cell: Int, lon: Double, lat: Double, _ visit: (Int) -> Void) {
        for k in Int(grid.cellOffsets[cell])..<Int(grid.cellOffsets[cell + 1]) {
            let index = Int(grid.cellItems[k])
            if containsPoint(index, lon, lat) { visit(index) }
        }
    }

    /// How many polygons a point test runs the crossing test on, for EXPLAIN: 0 outside the
    /// grid and in a classified cell, else the candidates of the point's cell.
    public func candidateCount(lon: Double, lat: Double) -> Int {
        guard let (cell, fine) = grid.locate(lon: lon, lat: lat), grid.fineStates[fine] == Grid.mixed else { return 0 }
        return Int(grid.cellOffsets[cell + 1]) - Int(grid.cellOffsets[cell])
    }

    /// The smallest index of a polygon containing the point, or -1: the form for loops over
    /// many points, where testing an optional would put back the branch `classifiedItem` avoids
    /// (W1: 5.3 ns a point in a classified cell this way, 12.7 ns through `firstContaining`).
    @inlinable
    public func firstContainingIndex(lon: Double, lat: Double) -> Int {
        guard let (cell, fine) = grid.locate(lon: lon, lat: lat) else { return -1 }
        let state = grid.fineStates[fine]
        if state != Grid.mixed { return grid.classifiedItem(state, first: Int(grid.cellOffsets[cell]), cell: cell) }
        return firstTested(cell: cell, lon: lon, lat: lat) ?? -1
    }

    /// The smallest index of a polygon containing the point, or nil.
    @inlinable
    public func firstContaining(lon: Double, lat: Double) -> Int? {
        let index = firstContainingIndex(lon: lon, lat: lat)
        return index < 0 ? nil : index
    }

    /// The smallest index of a polygon of `cell`'s list that contains the point: the exact test,
    /// for a point in a fine cell an edge crosses.
    @usableFromInline
    func firstTested(cell: Int, lon: Double, lat: Double) -> Int? {
        for k in Int(grid.cellOffsets[cell])..<Int(grid.cellOffsets[cell + 1]) {
            let index = Int(grid.cellItems[k])
            if containsPoint(index, lon, lat) { return index }
        }
        return nil
    }

    /// The share of fine cells answered without a crossing test (for tests and benchmarks).
    public var classifiedShare: Double {
        Double(grid.fineStates.lazy.filter { $0 != Grid.mixed }.count) / Double(max(grid.fineStates.count, 1))
    }
}

/// The coordinate blocks of a built index: allocated by the builder, never changed after, freed
/// with the index. Raw memory rather than arrays, so a point test reads coordinates with no
/// reference counting.
final class CoordinateBlocks: @unchecked Sendable {
    let pointers: [UnsafeMutablePointer<Double>]
    /// Doubles used in each block.
    let lengths: [Int]
    /// Set when the blocks lie in memory someone else owns (a mapped snapshot file).
    let owner: AnyObject?

    init(pointers: [UnsafeMutablePointer<Double>], lengths: [Int], owner: AnyObject? = nil) {
        self.pointers = pointers
        self.lengths = lengths
        self.owner = owner
    }

    deinit { if owner == nil { for p in pointers { p.deallocate() } } }
}

/// Fills blocks during the build; hands them to `CoordinateBlocks` at the end (or frees them
/// if the builder is dropped unbuilt).
final class BlockAllocator {
    private var pointers: [UnsafeMutablePointer<Double>] = []
    private var lengths: [Int] = []
    private var capacity = 0
    private var used = 0

    /// Copies `values` into the current block, or a new one if they do not fit (a run never
    /// straddles blocks); returns the block and the offset of the first value.
    func append(_ values: [Double], blockSize: Int) -> (block: Int, offset: Int) {
        if pointers.isEmpty || used + values.count > capacity {
            capacity = max(blockSize, values.count)
            pointers.append(UnsafeMutablePointer<Double>.allocate(capacity: capacity))
            lengths.append(0)
            used = 0
        }
        let offset = used
        values.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { (pointers[pointers.count - 1] + offset).update(from: base, count: source.count) }
        }
        used += values.count
        lengths[lengths.count - 1] = used
        return (pointers.count - 1, offset)
    }

    func freeze() -> CoordinateBlocks {
        defer { pointers = [] }
        return CoordinateBlocks(pointers: pointers, lengths: lengths)
    }

    deinit { for p in pointers { p.deallocate() } }
}

// The flat form, for a snapshot file: every array as it is, the coordinate blocks back to back.
extension PolygonIndex {
    /// The index's flat form (valid while the index is).
    public var image: IndexImage {
        var numbers: [String: UInt64] = [
            "polygons": UInt64(polygons.count), "blocks": UInt64(blocks.pointers.count),
            "columns": UInt64(grid.columns), "rows": UInt64(grid.rows), "shift": UInt64(grid.shift),
            "scaleX": grid.scaleX.bitPattern, "scaleY": grid.scaleY.bitPattern,
            "minLon": grid.box.minLon.bitPattern, "minLat": grid.box.minLat.bitPattern,
            "maxLon": grid.box.maxLon.bitPattern, "maxLat": grid.box.maxLat.bitPattern,
            "entryStride": UInt64(MemoryLayout<PolygonEntry>.stride),
        ]
        for (b, length) in blocks.lengths.enumerated() { numbers["block\(b)"] = UInt64(length) }
        let coordinates = zip(blocks.pointers, blocks.lengths).map { UnsafeRawBufferPointer(start: $0, count: $1 * 8) }
        return IndexImage(numbers: numbers,
                          sections: ["coordinates": coordinates, "polygons": [polygons.bytes], "bandOffsets": [bandOffsets.bytes],
                                     "bandEdges": [bandEdges.bytes], "cellOffsets": [grid.cellOffsets.bytes],
                                     "cellItems": [grid.cellItems.bytes], "fineStates": [grid.fineStates.bytes]],
                          owner: nil)
    }

    /// An index read in place from its flat form, over `items` items. Every stored offset and
    /// index is checked (in time linear in the index, not the coordinates), so a damaged image
    /// is refused with `.corrupt` and a query can never read outside the arrays; damaged
    /// coordinates can only give wrong answers.
    public init(image: IndexImage, items: Int) throws(SpatialIndexError) {
        guard try image.number("entryStride") == UInt64(MemoryLayout<PolygonEntry>.stride) else { throw .corrupt("polygon entries of another layout") }
        let polygons = try image.array("polygons", PolygonEntry.self, count: items)
        let bandOffsets = try image.array("bandOffsets", UInt32.self)
        let bandEdges = try image.array("bandEdges", UInt32.self)
        guard bandOffsets.first == 0, zip(bandOffsets.dropLast(), bandOffsets.dropFirst()).allSatisfy({ $0 <= $1 }),
              Int(bandOffsets.last ?? 0) <= bandEdges.count else { throw .corrupt("band offsets out of order") }

        // The coordinate blocks lie back to back in one section.
        let blockCount = try image.count("blocks", atMost: 1 << 24)
        guard let pieces = image.sections["coordinates"], pieces.count == 1, let all = pieces.first, let owner = image.owner,
              let coordinates = FlatArray<Double>(bytes: all, owner: owner) else { throw .corrupt("section 'coordinates' is missing or misaligned") }
        var lengths: [Int] = [], pointers: [UnsafeMutablePointer<Double>] = []
        var used = 0
        for b in 0..<blockCount {
            let length = try image.count("block\(b)", atMost: coordinates.count - used)
            if let base = coordinates.buffer.baseAddress { pointers.append(UnsafeMutablePointer(mutating: base + used)) }
            lengths.append(length)
            used += length
        }
        guard used == coordinates.count, pointers.count == blockCount else { throw .corrupt("the coordinate blocks do not fill their section") }

        for (index, entry) in polygons.enumerated() where entry.endVertex > entry.firstVertex {
            let fine = [entry.minX, entry.minY, entry.maxX, entry.maxY].allSatisfy(\.isFinite) && entry.minX <= entry.maxX && entry.minY < entry.maxY
            guard fine, Int(entry.block) < blockCount, entry.endVertex - entry.firstVertex >= 2,
                  2 * Int(entry.endVertex) <= lengths[Int(entry.block)] else { throw .corrupt("polygon \(index) has a bad vertex run") }
            guard entry.bandCount > 0 else { continue }
            guard Int(entry.firstBand) + Int(entry.bandCount) < bandOffsets.count else { throw .corrupt("polygon \(index) has bad bands") }
            for k in Int(bandOffsets[Int(entry.firstBand)])..<Int(bandOffsets[Int(entry.firstBand + entry.bandCount)]) {
                guard bandEdges[k] >= entry.firstVertex, bandEdges[k] + 1 < entry.endVertex else { throw .corrupt("polygon \(index) has an edge outside its run") }
            }
        }

        let columns = try image.count("columns", atMost: 1 << 16), rows = try image.count("rows", atMost: 1 << 16)
        let shift = try image.count("shift", atMost: 5)
        let box = BBox(minLon: try image.double("minLon"), minLat: try image.double("minLat"),
                       maxLon: try image.double("maxLon"), maxLat: try image.double("maxLat"))
        let scaleX = try image.double("scaleX"), scaleY = try image.double("scaleY")
        guard columns >= 1, rows >= 1 else { throw .corrupt("an empty grid") }
        let cellOffsets = try image.array("cellOffsets", Int32.self, count: columns * rows + 1)
        let cellItems = try image.array("cellItems", Int32.self)
        let fineStates = try image.array("fineStates", UInt8.self, count: (columns << shift) * (rows << shift))
        guard cellOffsets.first == 0, Int(cellOffsets.last ?? -1) == cellItems.count,
              zip(cellOffsets.dropLast(), cellOffsets.dropFirst()).allSatisfy({ $0 <= $1 }) else { throw .corrupt("grid cell offsets out of order") }
        guard cellItems.allSatisfy({ $0 >= 0 && Int($0) < items }) else { throw .corrupt("a grid cell names a polygon that does not exist") }
        // A point inside the box maps to a fine cell with no overflow (see Grid.fineColumn).
        if !box.isEmpty {
            guard box.isFinite, scaleX.isFinite, scaleY.isFinite, scaleX > 0, scaleY > 0,
                  (box.maxLon - box.minLon) * scaleX <= Double(columns << shift) + 1,
                  (box.maxLat - box.minLat) * scaleY <= Double(rows << shift) + 1 else { throw .corrupt("the grid's scale does not fit its box") }
        }
        let grid = Grid(box: box, columns: columns, rows: rows, shift: shift, scaleX: scaleX, scaleY: scaleY,
                        cellOffsets: cellOffsets, cellItems: cellItems, fineStates: fineStates)
        self.init(blocks: CoordinateBlocks(pointers: pointers, lengths: lengths, owner: owner), polygons: polygons,
                  bandOffsets: bandOffsets, bandEdges: bandEdges, grid: grid)
    }
}
