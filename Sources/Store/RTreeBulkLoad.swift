// Filling a GeoPackage R-tree in one pass: the envelopes packed Sort-Tile-Recursive into full
// nodes, written straight into the R*Tree module's own tables (`<name>_node`, `_rowid`,
// `_parent`), as GDAL does for its GeoPackages. Inserting a row at a time through the virtual
// table costs about 25 µs a feature (each insert chooses a leaf and splits nodes), more than
// the rest of a write; the packed tree is written at the speed of plain rows and is at least
// as good to search. The node format is SQLite's (ext/rtree/rtree.c): a node is a blob of the
// table's node size, 2 bytes of tree depth (root only), 2 bytes of cell count, then cells of a
// big-endian 64-bit id and four big-endian 32-bit floats (minx, maxx, miny, maxy), the minima
// rounded down and the maxima up as the module rounds them. `rtreecheck()` accepts the result.

import Foundation
import Geometry
import SQLite

/// One envelope of the R-tree: a feature's fid (in a leaf) or a child node (above), with its
/// box in the module's 32-bit floats.
struct RTreeCell {
    var id: Int64
    var minX: Float, maxX: Float, minY: Float, maxY: Float

    init(id: Int64, box: BBox) {
        self.id = id
        minX = RTreeCell.down(box.minLon)
        maxX = RTreeCell.up(box.maxLon)
        minY = RTreeCell.down(box.minLat)
        maxY = RTreeCell.up(box.maxLat)
    }

    init(id: Int64, minX: Float, maxX: Float, minY: Float, maxY: Float) {
        self.id = id
        self.minX = minX; self.maxX = maxX; self.minY = minY; self.maxY = maxY
    }

    init(id: Int64, covering cells: some Sequence<RTreeCell>) {
        self.id = id
        minX = .infinity; maxX = -.infinity; minY = .infinity; maxY = -.infinity
        for cell in cells {
            minX = min(minX, cell.minX); maxX = max(maxX, cell.maxX)
            minY = min(minY, cell.minY); maxY = max(maxY, cell.maxY)
        }
    }

    /// rtreeValueDown / rtreeValueUp of rtree.c: the float nearest, moved outwards if needed.
    static func down(_ d: Double) -> Float {
        let f = Float(d)
        return Double(f) > d ? Float(d * (d < 0 ? 1 + 1 / 8_388_608.0 : 1 - 1 / 8_388_608.0)) : f
    }

    static func up(_ d: Double) -> Float {
        let f = Float(d)
        return Double(f) < d ? Float(d * (d < 0 ? 1 - 1 / 8_388_608.0 : 1 + 1 / 8_388_608.0)) : f
    }

    var centreX: Float { (minX + maxX) / 2 }
    var centreY: Float { (minY + maxY) / 2 }
}

extension GeoPackage {
    /// Writes `cells` (every fid of the table with its envelope) as the packed tree of the
    /// empty R-tree `rtreeName`, which CREATE VIRTUAL TABLE just made.
    func bulkLoadRTree(_ rtreeName: String, cells: inout [RTreeCell]) throws {
        // The node size the module chose for this table (from the page size), as it reads it back.
        guard case .integer(let nodeSize)? = try database.scalar("SELECT length(data) FROM \(quoted(rtreeName + "_node")) WHERE nodeno = 1"),
              nodeSize >= 4 + 24 * 2 else { return }
        let capacity = Int(nodeSize - 4) / 24
        let writeNode = try database.prepare("INSERT OR REPLACE INTO \(quoted(rtreeName + "_node")) (nodeno, data) VALUES (?, ?)")
        let writeRowID = try database.prepare("INSERT INTO \(quoted(rtreeName + "_rowid")) (rowid, nodeno) VALUES (?, ?)")
        let writeParent = try database.prepare("INSERT INTO \(quoted(rtreeName + "_parent")) (nodeno, parentnode) VALUES (?, ?)")
        var blob = [UInt8](repeating: 0, count: Int(nodeSize))
        func write(node: Int64, depth: Int, _ entries: ArraySlice<RTreeCell>) throws {
            RTreeCell.encodeNode(depth: depth, entries, into: &blob)
            try writeNode.run([.integer(node), .blob(blob)])
        }

        var level = cells
        cells = []  // `level` owns the cells now: sorted in place, not copied
        var isLeafLevel = true
        var nextNode: Int64 = 2  // node 1 is the root, written last
        var depth = 0
        while level.count > capacity {
            RTreeCell.sortTileRecursive(&level, capacity: capacity)
            var parents: [RTreeCell] = []
            parents.reserveCapacity(level.count / capacity + 1)
            var start = 0
            while start < level.count {
                let end = min(start + capacity, level.count)
                let node = nextNode
                nextNode += 1
                try write(node: node, depth: 0, level[start..<end])
                for cell in level[start..<end] {
                    if isLeafLevel { try writeRowID.run([.integer(cell.id), .integer(node)]) } else { try writeParent.run([.integer(cell.id), .integer(node)]) }
                }
                parents.append(RTreeCell(id: node, covering: level[start..<end]))
                start = end
            }
            level = parents
            isLeafLevel = false
            depth += 1
        }
        try write(node: 1, depth: depth, level[...])
        for cell in level {
            if isLeafLevel { try writeRowID.run([.integer(cell.id), .integer(1)]) } else { try writeParent.run([.integer(cell.id), .integer(1)]) }
        }
    }
}

extension RTreeCell {
    /// A node as the module stores it, in `blob` (the table's node size): depth (read from the
    /// root only), cell count, then the cells.
    static func encodeNode(depth: Int, _ entries: some Collection<RTreeCell>, into blob: inout [UInt8]) {
        for i in blob.indices { blob[i] = 0 }
        blob[0] = UInt8(truncatingIfNeeded: depth >> 8)
        blob[1] = UInt8(truncatingIfNeeded: depth)
        blob[2] = UInt8(truncatingIfNeeded: entries.count >> 8)
        blob[3] = UInt8(truncatingIfNeeded: entries.count)
        var offset = 4
        for cell in entries {
            withUnsafeBytes(of: cell.id.bigEndian) { for b in $0 { blob[offset] = b; offset += 1 } }
            for value in [cell.minX, cell.maxX, cell.minY, cell.maxY] {
                withUnsafeBytes(of: value.bitPattern.bigEndian) { for b in $0 { blob[offset] = b; offset += 1 } }
            }
        }
    }

    /// The depth and cells of a stored node; nil when the blob is not one of `capacity` cells.
    static func decodeNode(_ blob: UnsafeRawBufferPointer, capacity: Int) -> (depth: Int, cells: [RTreeCell])? {
        guard blob.count >= 4 else { return nil }
        let depth = Int(blob[0]) << 8 | Int(blob[1])
        let count = Int(blob[2]) << 8 | Int(blob[3])
        guard count <= capacity, blob.count >= 4 + 24 * count else { return nil }
        var cells: [RTreeCell] = []
        cells.reserveCapacity(count + 1)
        for i in 0..<count {
            let offset = 4 + 24 * i
            var id: UInt64 = 0
            for b in 0..<8 { id = id << 8 | UInt64(blob[offset + b]) }
            func float(_ at: Int) -> Float {
                var bits: UInt32 = 0
                for b in 0..<4 { bits = bits << 8 | UInt32(blob[at + b]) }
                return Float(bitPattern: bits)
            }
            cells.append(RTreeCell(id: Int64(bitPattern: id), minX: float(offset + 8), maxX: float(offset + 12), minY: float(offset + 16), maxY: float(offset + 20)))
        }
        return (depth, cells)
    }

    /// Sort-Tile-Recursive order: vertical slabs by centre x, each sorted by centre y, so that
    /// every run of `capacity` cells is a compact tile.
    static func sortTileRecursive(_ cells: inout [RTreeCell], capacity: Int) {
        let leaves = (cells.count + capacity - 1) / capacity
        let slabs = Int(Double(leaves).squareRoot().rounded(.up))
        let slabSize = slabs * capacity
        cells.sort { $0.centreX < $1.centreX }
        var start = 0
        while start < cells.count {
            let end = min(start + slabSize, cells.count)
            cells[start..<end].sort { $0.centreY < $1.centreY }
            start = end
        }
    }
}
