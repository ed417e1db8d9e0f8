// The fixed areas' boxes on a uniform grid over their extent, for the one search an update
// makes: it looks in the cell or two its move touches. The packed R-tree visited most of its
// nodes for that, because the fences of one place (a zoo's circles, pens and pavilions)
// overlap, and so do their nodes' boxes. A grid that would hold a box in many cells, or many
// boxes in one, is not built, and the R-tree answers instead (LiveState).

import Geometry

struct SlotGrid: Sendable {
    private let extent: BBox
    private let columns: Int
    private let rows: Int
    private let cellWidth: Double
    private let cellHeight: Double
    /// Cell c's slots are `entries[cellStart[c]..<cellStart[c + 1]]`, in slot order.
    private let cellStart: [Int32]
    private let entries: [Int32]
    private let boxes: [BBox]

    /// Cells the size of the median box (at most 256 a side), so a box lies in a few. Nil
    /// when the grid would not be worth it: no box, a box over more than 256 cells, more than
    /// 16 entries a box, or more than 128 boxes in one cell.
    init?(boxes: [BBox]) {
        var extent = BBox.empty
        for box in boxes where !box.isEmpty { extent.extend(box) }
        guard !extent.isEmpty, extent.isFinite, boxes.count < Int(Int32.max) else { return nil }
        let widths = boxes.filter { !$0.isEmpty }.map { $0.maxLon - $0.minLon }.sorted()
        let heights = boxes.filter { !$0.isEmpty }.map { $0.maxLat - $0.minLat }.sorted()
        let extentWidth = extent.maxLon - extent.minLon, extentHeight = extent.maxLat - extent.minLat
        let cellWidth = max(widths[widths.count / 2], extentWidth / 256, 1e-9)
        let cellHeight = max(heights[heights.count / 2], extentHeight / 256, 1e-9)
        let columns = Int(min(256, (extentWidth / cellWidth).rounded(.down) + 1))
        let rows = Int(min(256, (extentHeight / cellHeight).rounded(.down) + 1))
        func cell(_ value: Double, from origin: Double, size: Double, count: Int) -> Int {
            let k = ((value - origin) / size).rounded(.down)
            return k.isNaN ? 0 : Int(max(0, min(Double(count - 1), k)))
        }
        var counts = [Int](repeating: 0, count: columns * rows)
        var ranges: [(c0: Int, c1: Int, r0: Int, r1: Int)?] = []
        ranges.reserveCapacity(boxes.count)
        for box in boxes {
            guard !box.isEmpty else { ranges.append(nil); continue }
            let c0 = cell(box.minLon, from: extent.minLon, size: cellWidth, count: columns)
            let c1 = cell(box.maxLon, from: extent.minLon, size: cellWidth, count: columns)
            let r0 = cell(box.minLat, from: extent.minLat, size: cellHeight, count: rows)
            let r1 = cell(box.maxLat, from: extent.minLat, size: cellHeight, count: rows)
            guard (c1 - c0 + 1) * (r1 - r0 + 1) <= 256 else { return nil }
            ranges.append((c0, c1, r0, r1))
            for r in r0...r1 { for c in c0...c1 { counts[r * columns + c] += 1 } }
        }
        let total = counts.reduce(0, +)
        guard total <= 16 * widths.count, total < Int(Int32.max), counts.allSatisfy({ $0 <= 128 }) else { return nil }
        var start = [Int32](repeating: 0, count: columns * rows + 1)
        for c in 0..<(columns * rows) { start[c + 1] = start[c] + Int32(counts[c]) }
        var fill = start.map(Int.init)
        var entries = [Int32](repeating: 0, count: total)
        for (slot, range) in ranges.enumerated() {
            guard let (c0, c1, r0, r1) = range else { continue }
            for r in r0...r1 {
                for c in c0...c1 {
                    entries[fill[r * columns + c]] = Int32(slot)
                    fill[r * columns + c] += 1
                }
            }
        }
        self.extent = extent
        self.columns = columns
        self.rows = rows
        self.cellWidth = cellWidth
        self.cellHeight = cellHeight
        self.cellStart = start
        self.entries = entries
        self.boxes = boxes
    }

    /// Calls `visit` with every slot whose box intersects `box` (closed intervals, as the
    /// R-tree's search), once per cell it shares with `box`: a slot may come more than once.
    func search(_ box: BBox, _ visit: (Int) -> Void) {
        guard box.maxLon >= extent.minLon, box.minLon <= extent.maxLon, box.maxLat >= extent.minLat, box.minLat <= extent.maxLat else { return }
        func cell(_ value: Double, from origin: Double, size: Double, count: Int) -> Int {
            let k = ((value - origin) / size).rounded(.down)
            return k.isNaN ? 0 : Int(max(0, min(Double(count - 1), k)))
        }
        let c0 = cell(box.minLon, from: extent.minLon, size: cellWidth, count: columns)
        let c1 = cell(box.maxLon, from: extent.minLon, size: cellWidth, count: columns)
        let r0 = cell(box.minLat, from: extent.minLat, size: cellHeight, count: rows)
        let r1 = cell(box.maxLat, from: extent.minLat, size: cellHeight, count: rows)
        for r in r0...r1 {
            for c in c0...c1 {
                let k = r * columns + c
                for e in Int(cellStart[k])..<Int(cellStart[k + 1]) {
                    let slot = Int(entries[e])
                    let b = boxes[slot]
                    if b.maxLon >= box.minLon && b.minLon <= box.maxLon && b.maxLat >= box.minLat && b.minLat <= box.maxLat { visit(slot) }
                }
            }
        }
    }
}
