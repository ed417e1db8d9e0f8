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
// Storage: every polygon's rings sit closed, back to back, in blocks of coordinates (the
// index's only copy of them, and the snapshot file's: a mapped layer's geometries are read
// back from these runs, Engine/SnapshotFile.swift). A run whose every value is a multiple of
// 1e-7 degrees as parsed (GeoJSON with up to 7 decimals, OSM's precision) is kept as Int32
// pairs of value × 10^7: 8 bytes a vertex instead of 16, and exact, because `Double(q) / 1e7`
// is the correctly rounded quotient, the very Double a parser gives for the decimal (checked
// bit for bit per value when the run is added; any other run keeps its Doubles). The point
// test compares such latitudes as integers against a threshold and decodes only the edges
// that straddle the point's latitude, so it computes exactly what it would on the Doubles. In a polygon's run the steps between rings are not edges of the
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
    /// Closed rings back to back, x, y per vertex (Int32 pairs or Doubles, per run), in blocks
    /// of about 8 MB; a polygon's run never straddles two blocks. Blocks rather than one array:
    /// the builder fills them in place, so the coordinates are never copied and never exist twice.
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

        init(box: BBox, block: UInt32, fixed: Bool = false, firstVertex: UInt32, endVertex: UInt32, firstBand: UInt32, bandCount: UInt32) {
            if box.isEmpty {
                (minX, minY, maxX, maxY) = (.infinity, .infinity, -.infinity, -.infinity)
            } else {
                (minX, minY) = (PolygonEntry.down(box.minLon), PolygonEntry.down(box.minLat))
                (maxX, maxY) = (PolygonEntry.up(box.maxLon), PolygonEntry.up(box.maxLat))
            }
            self.block = block | (fixed ? PolygonEntry.fixedFlag : 0)
            self.firstVertex = firstVertex
            self.endVertex = endVertex
            self.firstBand = firstBand
            self.bandCount = bandCount
        }

        static func down(_ d: Double) -> Float { let f = Float(d); return Double(f) > d ? f.nextDown : f }
        static func up(_ d: Double) -> Float { let f = Float(d); return Double(f) < d ? f.nextUp : f }
        /// The polygon's vertex run: `firstVertex ..< endVertex` of block `blockIndex`, at byte
        /// `vertexBytes * firstVertex`: Int32 pairs when `fixed` (the flag's bit is set), else Doubles.
        var block: UInt32
        static let fixedFlag: UInt32 = 1 << 31
        var blockIndex: Int { Int(block & ~PolygonEntry.fixedFlag) }
        var fixed: Bool { block & PolygonEntry.fixedFlag != 0 }
        var vertexBytes: Int { fixed ? 8 : 16 }
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
        /// Per fine cell, 4 bits (cell f in byte f / 2, the low half first): `outside` (0),
        /// `mixed` (15), or k in 1...14: inside the cell's candidate k - 1 only. A cell inside a
        /// later candidate is `mixed` (tested exactly). Half a byte rather than a byte: the
        /// largest part of the index after the coordinates (W3: 12.8 MB instead of 25.6).
        @usableFromInline var fineStates: FlatArray<UInt8>

        @usableFromInline static let outside: UInt8 = 0
        @usableFromInline static let mixed: UInt8 = 15

        /// Fine cell `fine`'s state.
        @inlinable
        func state(_ fine: Int) -> UInt8 { (fineStates[fine &>> 1] &>> UInt8(truncatingIfNeeded: (fine & 1) &<< 2)) & 15 }

        /// Bytes for `cells` fine cells.
        static func packedCount(_ cells: Int) -> Int { (cells + 1) / 2 }

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
            // Truncation, which is the floor from 1 on: `rounded(.down)` is a call to floor on
            // x86-64's baseline (no SSE4.1), and this runs for every edge and row of a build.
            let f = (value - origin) * scale
            return !(f >= 1) ? 0 : f >= Double(count) ? count - 1 : Int(f)
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

        static let blockBytes = 1 << 23

        public init() {}

        /// Room for `count` polygons' entries, so a large layer's are never copied as they grow.
        public mutating func reserveCapacity(_ count: Int) { polygons.reserveCapacity(count) }

        /// Adds the next polygon (its index is the number added before it). A NaN or infinite
        /// vertex is refused with `.nonFinite(item:)` and nothing is added: it has no place in
        /// the grid or the bands, and a crossing test against it means nothing. Returns whether
        /// `geometry(_:rings:multi:)` gives the geometry back from its run: a Polygon or
        /// MultiPolygon whose every ring has at least 2 positions, with a run stored.
        @discardableResult
        public mutating func add(_ geometry: Geometry) throws(SpatialIndexError) -> Bool {
            let parts: [Polygon]
            switch geometry {
            case .polygon(let p): parts = [p]
            case .multiPolygon(let m): parts = m.polygons
            default: parts = []
            }
            for part in parts where !part.coordinates.allSatisfy(\.isFinite) { throw .nonFinite(item: polygons.count) }
            var readable = !parts.isEmpty
            for part in parts {
                let offsets = part.ringOffsets
                readable = readable && offsets.count >= 2 && offsets[0] == 0 && part.coordinates.count == 2 * (offsets.last ?? 0)
                    && zip(offsets.dropLast(), offsets.dropFirst()).allSatisfy { $1 - $0 >= 2 }
            }
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
                return false
            }
            let (b, first, fixed) = blocks.append(run, blockBytes: Builder.blockBytes)
            let edges = run.count / 2 - 1
            var firstBand: UInt32 = 0, bandCount: UInt32 = 0
            if edges > PolygonIndex.smallPolygonEdges {
                // The bands span the stored (Float, outward-rounded) box, as queries see it.
                let stored = PolygonEntry(box: box, block: 0, firstVertex: 0, endVertex: 0, firstBand: 0, bandCount: 0).box
                (firstBand, bandCount) = addBands(box: stored, base: first)
            }
            polygons.append(PolygonEntry(box: box, block: UInt32(b), fixed: fixed, firstVertex: UInt32(first), endVertex: UInt32(first + run.count / 2),
                                         firstBand: firstBand, bandCount: bandCount))
            return readable
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
                        fineStates: FlatArray([Grid.mixed | Grid.mixed << 4]))
        }
        // A few cells per polygon for small layers (fewer candidates per point); for large ones
        // at most two cells per polygon, to keep the grid small next to the coordinates.
        let n = Double(nonEmpty)
        let side = max(1, min(1024, Int(min(2.5 * n.squareRoot(), max(4096, 2 * n).squareRoot()))))
        // Fine cells cost half a byte each: at most 8 per vertex (a vertex itself costs 8 or
        // 16 bytes), and at least a million, so that a few large polygons (the districts) get
        // the finest split.
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
        grid.fineStates = FlatArray(count: Grid.packedCount(grid.fineColumns * grid.fineRows), repeating: 0) { states in
            classify(grid, polygons, blocks, bandOffsets: bandOffsets, bandEdges: bandEdges, into: states)
        }
        return grid
    }

    /// The state of every fine cell (see "Classified cells" in the header), into `states`
    /// (packed, all `outside` on entry). Rows of fine cells are classified in stripes, several
    /// at once: a cell's state depends only on its own row's work (the edges that come near it,
    /// then the polygons swept along its row, in index order), so each stripe writes only its
    /// own rows and the states are the same as one thread's. With an even number of columns
    /// no byte holds cells of two rows, so no two stripes write the same byte.
    private static func classify(_ grid: Grid, _ polygons: FlatArray<PolygonEntry>, _ blocks: CoordinateBlocks,
                                 bandOffsets: FlatArray<UInt32>, bandEdges: FlatArray<UInt32>, into states: UnsafeMutableBufferPointer<UInt8>) {
        let fineRows = grid.fineRows
        let classifier = StripeClassifier(grid: grid, polygons: polygons, blocks: blocks, bandOffsets: bandOffsets, bandEdges: bandEdges,
                                          packed: states)
        // A small grid (W1's million cells: a few milliseconds) is done sooner on this thread
        // than handed out: on a busy machine the hand-over alone doubled W1's build.
        guard 2 * states.count >= PolygonIndex.parallelClassifyCells, grid.fineColumns % 2 == 0 else {
            return classifier.classify(rows: 0..<fineRows, polygons: polygons.indices.lazy.map { Int32($0) })
        }
        // More stripes than cores, so that a stripe dense with polygons does not hold the rest up.
        let stripes = min(fineRows, 16)
        @Sendable func rows(_ stripe: Int) -> Range<Int> { (stripe * fineRows / stripes)..<((stripe + 1) * fineRows / stripes) }
        // Each stripe's polygons, listed once: each stripe scanning every entry for its own
        // read the entries 16 times (W3: 115 MB, 6% of a first load's time).
        var stripeOfRow = [Int](repeating: 0, count: fineRows)
        for stripe in 0..<stripes { for r in rows(stripe) { stripeOfRow[r] = stripe } }
        var lists = [[Int32]](repeating: [], count: stripes)
        for (index, entry) in polygons.enumerated() where entry.endVertex > entry.firstVertex {
            let span = classifier.rowSpan(entry)
            for stripe in stripeOfRow[span.lowerBound]...stripeOfRow[span.upperBound] { lists[stripe].append(Int32(index)) }
        }
        let stripeLists = lists
        DispatchQueue.concurrentPerform(iterations: stripes) { stripe in
            classifier.classify(rows: rows(stripe), polygons: stripeLists[stripe])
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
        /// Shared by every stripe (packed); each writes only the cells of its own rows.
        let packed: UnsafeMutableBufferPointer<UInt8>

        /// The fine rows an entry's cells may take, its edges' margin included.
        func rowSpan(_ entry: PolygonEntry) -> ClosedRange<Int> {
            let marginY = 1 / grid.scaleY / 1024
            let low = grid.clampedFine(Double(entry.minY) - marginY, origin: grid.box.minLat, scale: grid.scaleY, count: grid.fineRows)
            let high = grid.clampedFine(Double(entry.maxY) + marginY, origin: grid.box.minLat, scale: grid.scaleY, count: grid.fineRows)
            return low...max(low, high)
        }

        /// Classifies the cells of `rows`, which only the polygons `indices` (those with a run)
        /// come near.
        func classify(rows: Range<Int>, polygons indices: some Sequence<Int32>) {
            guard !rows.isEmpty else { return }
            let fineColumns = grid.fineColumns, fineRows = grid.fineRows
            let cellWidth = 1 / grid.scaleX, cellHeight = 1 / grid.scaleY
            let marginX = cellWidth / 1024, marginY = cellHeight / 1024
            func column(_ x: Double) -> Int { grid.clampedFine(x, origin: grid.box.minLon, scale: grid.scaleX, count: fineColumns) }
            func row(_ y: Double) -> Int { grid.clampedFine(y, origin: grid.box.minLat, scale: grid.scaleY, count: fineRows) }
            /// The rows of `low ... high` (fine rows, clamped) that are in this stripe.
            func ownRows(_ low: Double, _ high: Double) -> ClosedRange<Int>? {
                let first = max(row(low), rows.lowerBound), last = min(row(high), rows.upperBound - 1)
                return first <= last ? first...last : nil
            }

            // The stripe's cells a byte each while they are classified, packed at the end.
            let rowBase = rows.lowerBound * fineColumns
            let states = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: rows.count * fineColumns)
            states.initialize(repeating: Grid.outside)
            defer {
                // Two cells a byte: the stripe starts at an even cell whenever stripes run at
                // once (see `classify`), so its bytes are its own.
                var k = 0
                if rowBase & 1 == 1 {
                    packed[rowBase >> 1] |= states[0] << 4
                    k = 1
                }
                while k + 1 < states.count {
                    packed[(rowBase + k) >> 1] = states[k] | states[k + 1] << 4
                    k += 2
                }
                if k < states.count { packed[(rowBase + k) >> 1] |= states[k] }
                states.deallocate()
            }
            // Per polygon: the cells its edges come near, then its crossings along each row. A
            // cell's final state does not depend on the order of this work (an edge near it
            // makes it `mixed` whenever it comes; a second polygon inside makes it `mixed`), so
            // both are done while the polygon's run is at hand, decoded once into `xy`.
            var xy: [Double] = []
            var crossings: [Double] = []
            for index in indices.lazy.map(Int.init) {
                let entry = polygons[index]
                let minY = Double(entry.minY), maxY = Double(entry.maxY)
                guard entry.endVertex > entry.firstVertex, ownRows(minY - marginY, maxY + marginY) != nil else { continue }
                let p = blocks.run(entry)
                let first = Int(entry.firstVertex), count = Int(entry.endVertex) - first
                xy.removeAll(keepingCapacity: true)
                for v in first..<(first + count) {
                    xy.append(p.x(v))
                    xy.append(p.y(v))
                }
                // The cells an edge comes near: row by row, the longitudes that the part of the
                // edge within the row's (widened) latitudes spans.
                for e in 0..<(count - 1) {
                    let x1 = xy[2 * e], y1 = xy[2 * e + 1], x2 = xy[2 * e + 2], y2 = xy[2 * e + 3]
                    guard let edgeRows = ownRows(min(y1, y2) - marginY, max(y1, y2) + marginY) else { continue }
                    // One division an edge, not two a row: a rounding of an ulp is nothing
                    // beside the margin of 1/1024 of a cell.
                    let inverse = y1 != y2 ? 1 / (y2 - y1) : 0
                    for r in edgeRows {
                        var (xa, xb) = (x1, x2)
                        if y1 != y2 {
                            let low = grid.box.minLat + Double(r) * cellHeight - marginY
                            let high = grid.box.minLat + Double(r + 1) * cellHeight + marginY
                            let ta = max(0, min(1, (low - y1) * inverse)), tb = max(0, min(1, (high - y1) * inverse))
                            (xa, xb) = (x1 + ta * (x2 - x1), x1 + tb * (x2 - x1))
                        }
                        for c in column(min(xa, xb) - marginX)...column(max(xa, xb) + marginX) { states[r * fineColumns + c - rowBase] = Grid.mixed }
                    }
                }
                // The other cells: the polygon's crossings with the horizontal line through a
                // row's centres, swept west to east; a centre with an odd number of crossings
                // east of it is inside (the crossing test's own rule).
                guard let polygonRows = ownRows(minY, maxY) else { continue }
                var placeCell = -1, place = -1
                for r in polygonRows {
                    let y = grid.box.minLat + (Double(r) + 0.5) * cellHeight
                    crossings.removeAll(keepingCapacity: true)
                    func add(_ e: Int) {
                        let x1 = xy[2 * e], y1 = xy[2 * e + 1], x2 = xy[2 * e + 2], y2 = xy[2 * e + 3]
                        if (y1 > y) != (y2 > y) { crossings.append(PointInPolygon.crossingLongitude(y, x1, y1, x2, y2)) }
                    }
                    if entry.bandCount == 0 {
                        for e in 0..<(count - 1) { add(e) }
                    } else {
                        let scale = Double(entry.bandCount) / (maxY - minY)
                        let band = Int(entry.firstBand) + max(0, min(Int(((y - minY) * scale).rounded(.down)), Int(entry.bandCount) - 1))
                        for k in Int(bandOffsets[band])..<Int(bandOffsets[band + 1]) { add(Int(bandEdges[k]) - first) }
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
                        let fine = r * fineColumns + c - rowBase
                        guard states[fine] != Grid.mixed else { continue }
                        // A second polygon here (an overlapping layer): test such cells exactly.
                        guard states[fine] == Grid.outside else { states[fine] = Grid.mixed; continue }
                        let cell = (r >> grid.shift) * grid.columns + (c >> grid.shift)
                        if cell != placeCell {
                            // The polygon's place in the cell's list, looked up once per top cell.
                            let first = Int(grid.cellOffsets[cell]), end = Int(grid.cellOffsets[cell + 1])
                            place = (first..<end).firstIndex { grid.cellItems[$0] == Int32(index) }.map { $0 - first } ?? -1
                            placeCell = cell
                        }
                        if place >= 0, place + 1 < Int(Grid.mixed) {
                            states[fine] = UInt8(place + 1)
                        } else {
                            // A candidate too far down its cell's list to be named in 4 bits (or,
                            // which cannot happen, none: the box holds the centre).
                            states[fine] = Grid.mixed
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
        let p = blocks.run(entry)
        var first = Int(entry.firstVertex), end = Int(entry.endVertex) - 1
        var banded: Range<Int>? = nil
        if entry.bandCount > 0 {
            let minY = Double(entry.minY)
            let scale = Double(entry.bandCount) / (Double(entry.maxY) - minY)
            let band = Int(entry.firstBand) + max(0, min(Int((y - minY) * scale), Int(entry.bandCount) - 1))
            banded = Int(bandOffsets[band])..<Int(bandOffsets[band + 1])
            (first, end) = (0, 0)
        }
        var inside = false
        if entry.fixed {
            // Latitudes compared as stored: (y1 > y) is (q1 > t); only a straddling edge is decoded.
            let t = FixedPoint.threshold(y)
            @inline(__always) func crosses(_ v: Int) -> Bool {
                guard (p.fixedY(v) > t) != (p.fixedY(v &+ 1) > t) else { return false }
                return x < PointInPolygon.crossingLongitude(y, p.x(v), p.y(v), p.x(v &+ 1), p.y(v &+ 1))
            }
            for v in first..<end where crosses(v) { inside.toggle() }
            if let banded { for k in banded where crosses(Int(bandEdges[k])) { inside.toggle() } }
        } else {
            @inline(__always) func crosses(_ v: Int) -> Bool {
                PointInPolygon.crosses(x, y, p.doubleX(v), p.doubleY(v), p.doubleX(v &+ 1), p.doubleY(v &+ 1))
            }
            for v in first..<end where crosses(v) { inside.toggle() }
            if let banded { for k in banded where crosses(Int(bandEdges[k])) { inside.toggle() } }
        }
        return inside
    }

    /// Polygon `index` read back from its run (see "Storage"): `rings` holds each part's ring
    /// lengths in positions, as the geometry had them; a MultiPolygon when `multi`. The inverse
    /// of `Builder.add` for a geometry it called readable: each ring's positions are in the run
    /// as they were, followed by the closing position if the ring was open and by the run's
    /// first position if the ring does not end there, both decided by the same comparisons
    /// here. nil when the lengths do not account for the run exactly (a damaged file).
    public func geometry(_ index: Int, rings: [[Int]], multi: Bool) -> Geometry? {
        guard index >= 0, index < polygons.count else { return nil }
        let entry = polygons[index]
        let first = Int(entry.firstVertex), end = Int(entry.endVertex)
        // Only an entry with a run has a checked block (`init(image:)`).
        guard end > first, rings.count >= 1, multi || rings.count == 1 else { return nil }
        let p = blocks.run(entry)
        var v = first
        var parts: [Polygon] = []
        for lengths in rings {
            var coordinates: [Double] = [], offsets = [0]
            coordinates.reserveCapacity(2 * (end - v))
            for n in lengths {
                guard n >= 2, n <= end - v else { return nil }
                for k in v..<(v + n) {
                    coordinates.append(p.x(k))
                    coordinates.append(p.y(k))
                }
                offsets.append(offsets[offsets.count - 1] + n)
                if p.x(v) != p.x(v + n - 1) || p.y(v) != p.y(v + n - 1) { v += 1 }  // the closing position added
                v += n
                guard v <= end else { return nil }
                if p.x(first) != p.x(v - 1) || p.y(first) != p.y(v - 1) { v += 1 }  // back to the run's first
                guard v <= end else { return nil }
            }
            parts.append(Polygon(coordinates: coordinates, ringOffsets: offsets))
        }
        guard v == end else { return nil }
        return multi ? .multiPolygon(MultiPolygon(polygons: parts)) : parts.first.map { .polygon($0) }
    }

    /// Calls `visit` with every polygon containing the point, in ascending index order.
    @inlinable
    public func containing(lon: Double, lat: Double, _ visit: (Int) -> Void) {
        guard let (cell, fine) = grid.locate(lon: lon, lat: lat) else { return }
        let state = grid.state(fine)
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
        guard let (cell, fine) = grid.locate(lon: lon, lat: lat), grid.state(fine) == Grid.mixed else { return 0 }
        return Int(grid.cellOffsets[cell + 1]) - Int(grid.cellOffsets[cell])
    }

    /// The smallest index of a polygon containing the point, or -1: the form for loops over
    /// many points, where testing an optional would put back the branch `classifiedItem` avoids
    /// (W1: 5.3 ns a point in a classified cell this way, 12.7 ns through `firstContaining`).
    @inlinable
    public func firstContainingIndex(lon: Double, lat: Double) -> Int {
        guard let (cell, fine) = grid.locate(lon: lon, lat: lat) else { return -1 }
        let state = grid.state(fine)
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
        let cells = grid.fineColumns * grid.fineRows
        return Double((0..<cells).lazy.filter { grid.state($0) != Grid.mixed }.count) / Double(max(cells, 1))
    }
}

/// The coordinate blocks of a built index: allocated by the builder, never changed after, freed
/// with the index. Raw memory rather than arrays, so a point test reads coordinates with no
/// reference counting; read with raw loads, since a block holds Int32 and Double runs.
final class CoordinateBlocks: @unchecked Sendable {
    let pointers: [UnsafeMutableRawPointer]
    /// Bytes used in each block.
    let lengths: [Int]
    /// Set when the blocks lie in memory someone else owns (a mapped snapshot file).
    let owner: AnyObject?

    init(pointers: [UnsafeMutableRawPointer], lengths: [Int], owner: AnyObject? = nil) {
        self.pointers = pointers
        self.lengths = lengths
        self.owner = owner
    }

    deinit { if owner == nil { for p in pointers { p.deallocate() } } }

    /// Polygon `entry`'s vertex run.
    @inline(__always)
    func run(_ entry: PolygonIndex.PolygonEntry) -> VertexRun {
        VertexRun(base: UnsafeRawPointer(pointers[entry.blockIndex]), fixed: entry.fixed)
    }
}

/// Fixed-point coordinates (see "Storage" in the header): q stands for `Double(q) / 1e7`.
enum FixedPoint {
    static let scale = 1e7

    @inline(__always)
    static func value(_ q: Int32) -> Double { Double(q) / scale }

    /// `d` as q, if `value(q)` gives `d` back bit for bit.
    @inline(__always)
    static func exact(_ d: Double) -> Int32? {
        // Rounded by truncating (value ± 0.5), not `rounded()`, a call on x86-64's baseline; a
        // q off by one only fails the check below.
        let scaled = d * scale
        guard scaled > -2_147_483_000, scaled < 2_147_483_000 else { return nil }  // also false for NaN
        let q = Int32(scaled + (scaled < 0 ? -0.5 : 0.5))
        return value(q).bitPattern == d.bitPattern ? q : nil
    }

    /// The largest q (possibly one past Int32's range) with `value(q) <= y`, for a finite y:
    /// `value` is monotonic (correctly rounded division), so `value(q) > y` exactly when
    /// `q > threshold(y)`, and a latitude can be compared with no division.
    static func threshold(_ y: Double) -> Int64 {
        // Truncated rather than floored (a call on x86-64's baseline): the loops below correct it.
        let guess = y * scale
        guard guess > -3e9, guess < 3e9 else { return guess < 0 ? Int64(Int32.min) - 1 : Int64(Int32.max) }
        var t = Int64(guess)
        while t < Int64(Int32.max), Double(t + 1) / scale <= y { t += 1 }
        while t >= Int64(Int32.min), Double(t) / scale > y { t -= 1 }
        return t
    }
}

/// One block's vertices as one polygon's run stores them: vertex v's x and y.
struct VertexRun {
    let base: UnsafeRawPointer
    let fixed: Bool

    @inline(__always)
    func x(_ v: Int) -> Double {
        fixed ? FixedPoint.value(base.load(fromByteOffset: v &* 8, as: Int32.self)) : base.load(fromByteOffset: v &* 16, as: Double.self)
    }

    @inline(__always)
    func y(_ v: Int) -> Double {
        fixed ? FixedPoint.value(base.load(fromByteOffset: v &* 8 &+ 4, as: Int32.self)) : base.load(fromByteOffset: v &* 16 &+ 8, as: Double.self)
    }

    /// A Double run's coordinates, with no test of the run's kind (the point test's loop).
    @inline(__always)
    func doubleX(_ v: Int) -> Double { base.load(fromByteOffset: v &* 16, as: Double.self) }
    @inline(__always)
    func doubleY(_ v: Int) -> Double { base.load(fromByteOffset: v &* 16 &+ 8, as: Double.self) }

    /// A fixed run's latitude as stored (q).
    @inline(__always)
    func fixedY(_ v: Int) -> Int64 { Int64(base.load(fromByteOffset: v &* 8 &+ 4, as: Int32.self)) }
}

/// Fills blocks during the build; hands them to `CoordinateBlocks` at the end (or frees them
/// if the builder is dropped unbuilt).
final class BlockAllocator {
    private var pointers: [UnsafeMutableRawPointer] = []
    private var lengths: [Int] = []
    private var capacity = 0
    private var used = 0
    private var fixed: [Int32] = []

    /// Copies the run `values` (x, y, ...) into the current block, or a new one if it does not
    /// fit (a run never straddles blocks), as Int32 pairs if every value is exact in fixed
    /// point, else as Doubles; returns the block, the vertex number of the first vertex (in
    /// units of the run's vertex size) and whether it is fixed.
    func append(_ values: [Double], blockBytes: Int) -> (block: Int, first: Int, fixed: Bool) {
        fixed.removeAll(keepingCapacity: true)
        for d in values {
            guard let q = FixedPoint.exact(d) else { break }
            fixed.append(q)
        }
        let isFixed = fixed.count == values.count
        let vertexBytes = isFixed ? 8 : 16
        let bytes = values.count / 2 * vertexBytes
        var start = (used + vertexBytes - 1) / vertexBytes * vertexBytes
        if pointers.isEmpty || start + bytes > capacity {
            capacity = max(blockBytes, bytes)
            pointers.append(UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16))
            lengths.append(0)
            start = 0
        }
        let block = pointers[pointers.count - 1]
        // Padding zeroed: the same layer gives the same bytes (a snapshot file's sections).
        if start > used && used > 0 { (block + used).initializeMemory(as: UInt8.self, repeating: 0, count: start - used) }
        func copy(_ source: UnsafeRawBufferPointer) {
            if let from = source.baseAddress { (block + start).copyMemory(from: from, byteCount: bytes) }
        }
        if isFixed { fixed.withUnsafeBytes(copy) } else { values.withUnsafeBytes(copy) }
        used = start + bytes
        lengths[lengths.count - 1] = used
        return (pointers.count - 1, start / vertexBytes, isFixed)
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
        let coordinates = zip(blocks.pointers, blocks.lengths).map { UnsafeRawBufferPointer(start: $0, count: $1) }
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

        // The coordinate blocks lie back to back in one section, each a whole number of 8-byte
        // words (so every block starts aligned for the Doubles it may hold).
        let blockCount = try image.count("blocks", atMost: 1 << 24)
        guard let pieces = image.sections["coordinates"], pieces.count == 1, let all = pieces.first, image.owner != nil,
              Int(bitPattern: all.baseAddress) % 8 == 0 else { throw .corrupt("section 'coordinates' is missing or misaligned") }
        var lengths: [Int] = [], pointers: [UnsafeMutableRawPointer] = []
        var used = 0
        for b in 0..<blockCount {
            let length = try image.count("block\(b)", atMost: all.count - used)
            guard length % 8 == 0 else { throw .corrupt("coordinate block \(b) is not a whole number of words") }
            if let base = all.baseAddress { pointers.append(UnsafeMutableRawPointer(mutating: base + used)) }
            lengths.append(length)
            used += length
        }
        guard used == all.count, pointers.count == blockCount else { throw .corrupt("the coordinate blocks do not fill their section") }

        for (index, entry) in polygons.enumerated() where entry.endVertex > entry.firstVertex {
            let fine = [entry.minX, entry.minY, entry.maxX, entry.maxY].allSatisfy(\.isFinite) && entry.minX <= entry.maxX && entry.minY < entry.maxY
            guard fine, entry.blockIndex < blockCount, entry.endVertex - entry.firstVertex >= 2,
                  entry.vertexBytes * Int(entry.endVertex) <= lengths[entry.blockIndex] else { throw .corrupt("polygon \(index) has a bad vertex run") }
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
        let fineStates = try image.array("fineStates", UInt8.self, count: Grid.packedCount((columns << shift) * (rows << shift)))
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
        self.init(blocks: CoordinateBlocks(pointers: pointers, lengths: lengths, owner: image.owner), polygons: polygons,
                  bandOffsets: bandOffsets, bandEdges: bandEdges, grid: grid)
    }
}
