// Adding a write batch's envelopes to a GeoPackage R-tree that already holds some, in one
// pass. The spec's insert trigger adds a row at a time through the virtual table, and each of
// those rewrites the leaf it lands in and every ancestor whose box grew (a node is a
// near-page blob), so a 1,000-row batch rewrote its nodes about a thousand times over: some
// 30 µs a row, most of a batch's SQL. Here the batch's cells go into the tree in memory (the
// nodes they touch read once), with the module's own choice of leaf (least enlargement, then
// least area) and a split of an overfull node in two halves along its wider axis, and each
// changed node is written once, as RTreeBulkLoad.swift writes them. Only insertion: updates
// and deletes stay with the triggers. The tree stays one `rtreecheck()` accepts.

import SQLite

extension GeoPackage {
    /// Adds `cells` (fids the tree does not hold) to the R-tree `rtreeName`. A tree that does
    /// not read as the module writes it, or that already holds one of the fids, gets them
    /// through the virtual table instead, as the trigger would have.
    func insertIntoRTree(_ rtreeName: String, cells: [RTreeCell]) throws {
        guard !cells.isEmpty else { return }
        // Nothing is written before `write`, so a node that does not read as expected leaves
        // the tree as it was for the virtual table, which reports the damage itself.
        if var edit = try RTreeEdit(database, rtreeName, fids: cells.map(\.id)) {
            do {
                for cell in cells { try edit.insert(cell) }
                try edit.write()
                return
            } catch is RTreeEdit.Unreadable {}
        }
        let insert = try database.prepare("INSERT OR REPLACE INTO \(quoted(rtreeName)) VALUES (?, ?, ?, ?, ?)")
        for cell in cells {
            try insert.run([.integer(cell.id), .real(Double(cell.minX)), .real(Double(cell.maxX)), .real(Double(cell.minY)), .real(Double(cell.maxY))])
        }
    }
}

/// The nodes of one R-tree that a batch changes, held in memory until `write`.
private struct RTreeEdit {
    struct Unreadable: Error {}

    let database: Database
    let name: String
    let nodeSize: Int
    let capacity: Int
    /// The tree's height: 0 while the root is a leaf.
    var depth: Int
    var nodes: [Int64: [RTreeCell]] = [:]
    var dirty: Set<Int64> = []
    /// Leaf cells placed or moved: fid → node (the `_rowid` table).
    var rowids: [Int64: Int64] = [:]
    /// Nodes made or moved: node → parent (the `_parent` table).
    var parents: [Int64: Int64] = [:]
    var nextNode: Int64
    let read: Statement

    init?(_ database: Database, _ name: String, fids: [Int64]) throws {
        self.database = database
        self.name = name
        read = try database.prepare("SELECT data FROM \(quoted(name + "_node")) WHERE nodeno = ?")
        try read.bind([.integer(1)])
        guard try read.step() else { return nil }
        let size = read.withBlob(0) { $0.count }
        let capacity = (size - 4) / 24
        guard capacity >= 4, let root = read.withBlob(0, { RTreeCell.decodeNode($0, capacity: capacity) }), root.depth < 40 else { return nil }
        read.reset()
        nodeSize = size
        self.capacity = capacity
        depth = root.depth
        nodes[1] = root.cells
        guard case .integer(let last)? = try database.scalar("SELECT max(nodeno) FROM \(quoted(name + "_node"))") else { return nil }
        nextNode = last + 1
        let held = try database.prepare("SELECT 1 FROM \(quoted(name + "_rowid")) WHERE rowid = ?")
        for fid in fids {
            try held.bind([.integer(fid)])
            if try held.step() { return nil }
        }
    }

    /// Node `number`'s cells, read into `nodes` on first use; changed in place there (a copy
    /// taken out and put back copied each node on the path, for every cell).
    mutating func load(_ number: Int64) throws {
        guard nodes[number] == nil else { return }
        try read.bind([.integer(number)])
        defer { read.reset() }
        guard try read.step(), let node = read.withBlob(0, { $0.count == nodeSize ? RTreeCell.decodeNode($0, capacity: capacity) : nil }) else {
            throw Unreadable()
        }
        nodes[number] = node.cells
    }

    mutating func insert(_ cell: RTreeCell) throws {
        // Down to a leaf, as the module chooses, widening each box on the way: every ancestor
        // covers the new cell before any split moves cells about.
        var path: [Int64] = [1]
        for _ in 0..<depth {
            let number = path[path.count - 1]
            try load(number)
            guard nodes[number]?.isEmpty == false else { throw Unreadable() }
            var best = 0, bestGrowth = Float.infinity, bestArea = Float.infinity
            for (i, child) in nodes[number, default: []].enumerated() {
                let area = child.area
                let growth = child.growing(cell).area - area
                if growth < bestGrowth || (growth == bestGrowth && area < bestArea) { (best, bestGrowth, bestArea) = (i, growth, area) }
            }
            nodes[number, default: []][best].grow(cell)
            dirty.insert(number)
            path.append(nodes[number, default: []][best].id)
        }
        // Into the leaf, then up: an overfull node keeps half its cells and a new sibling
        // beside it in the parent takes the rest; an overfull root moves into two children.
        var entry = cell
        for level in stride(from: path.count - 1, through: 0, by: -1) {
            let number = path[level]
            try load(number)
            nodes[number, default: []].append(entry)
            dirty.insert(number)
            place(entry, in: number, leaf: level == path.count - 1)
            guard let cells = nodes[number], cells.count > capacity else { return }
            let (kept, moved) = RTreeEdit.split(cells)
            let isLeaf = level == path.count - 1
            if number == 1 {
                let first = newNode(), second = newNode()
                set(first, kept)
                set(second, moved)
                for child in kept { place(child, in: first, leaf: isLeaf) }
                for child in moved { place(child, in: second, leaf: isLeaf) }
                parents[first] = 1
                parents[second] = 1
                set(1, [RTreeCell(id: first, covering: kept), RTreeCell(id: second, covering: moved)])
                depth += 1
                return
            }
            let sibling = newNode()
            set(number, kept)
            set(sibling, moved)
            for child in moved { place(child, in: sibling, leaf: isLeaf) }
            // The node's own box shrinks to what it kept; the sibling goes beside it.
            let parent = path[level - 1]
            try load(parent)
            if let i = nodes[parent]?.firstIndex(where: { $0.id == number }) { nodes[parent, default: []][i] = RTreeCell(id: number, covering: kept) }
            dirty.insert(parent)
            entry = RTreeCell(id: sibling, covering: moved)
        }
    }

    mutating func set(_ number: Int64, _ cells: [RTreeCell]) {
        nodes[number] = cells
        dirty.insert(number)
    }

    mutating func place(_ cell: RTreeCell, in number: Int64, leaf: Bool) {
        if leaf { rowids[cell.id] = number } else { parents[cell.id] = number }
    }

    mutating func newNode() -> Int64 {
        defer { nextNode += 1 }
        return nextNode
    }

    /// Two halves of an overfull node: sorted by centre along the axis its centres spread
    /// wider on.
    static func split(_ cells: [RTreeCell]) -> ([RTreeCell], [RTreeCell]) {
        let xs = cells.map(\.centreX), ys = cells.map(\.centreY)
        let spreadX = (xs.max() ?? 0) - (xs.min() ?? 0), spreadY = (ys.max() ?? 0) - (ys.min() ?? 0)
        let sorted = spreadX >= spreadY ? cells.sorted { $0.centreX < $1.centreX } : cells.sorted { $0.centreY < $1.centreY }
        let half = sorted.count / 2
        return (Array(sorted[..<half]), Array(sorted[half...]))
    }

    /// Each changed node once, and the leaf and parent maps of what moved.
    func write() throws {
        let writeNode = try database.prepare("INSERT OR REPLACE INTO \(quoted(name + "_node")) (nodeno, data) VALUES (?, ?)")
        var blob = [UInt8](repeating: 0, count: nodeSize)
        for number in dirty.sorted() {
            RTreeCell.encodeNode(depth: number == 1 ? depth : 0, nodes[number] ?? [], into: &blob)
            try writeNode.run([.integer(number), .blob(blob)])
        }
        let writeRowID = try database.prepare("INSERT OR REPLACE INTO \(quoted(name + "_rowid")) (rowid, nodeno) VALUES (?, ?)")
        // In key order: appended fids then land at the end of the table's B-tree, page by page.
        for (fid, number) in rowids.sorted(by: { $0.key < $1.key }) { try writeRowID.run([.integer(fid), .integer(number)]) }
        let writeParent = try database.prepare("INSERT OR REPLACE INTO \(quoted(name + "_parent")) (nodeno, parentnode) VALUES (?, ?)")
        for (number, parent) in parents.sorted(by: { $0.key < $1.key }) { try writeParent.run([.integer(number), .integer(parent)]) }
    }
}

private extension RTreeCell {
    var area: Float { (maxX - minX) * (maxY - minY) }

    func growing(_ other: RTreeCell) -> RTreeCell {
        RTreeCell(id: id, minX: min(minX, other.minX), maxX: max(maxX, other.maxX), minY: min(minY, other.minY), maxY: max(maxY, other.maxY))
    }

    mutating func grow(_ other: RTreeCell) { self = growing(other) }
}
