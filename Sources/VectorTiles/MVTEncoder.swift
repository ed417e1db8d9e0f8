// Mapbox Vector Tile 2.1 encoder: features in lon/lat → one tile's layers, the way map clients
// expect them (the spec's section 4, and what mvt-fixtures checks):
//
// 1. Project to Web Mercator in tile units (`TileProjection`: the tile is `extent` units wide,
//    y grows down; latitudes are clamped to ±85.0511°, the square world's edge).
// 2. Clip to the tile grown by `buffer` units on every side, so that strokes and fills meet
//    seamlessly across tile edges: lines by Liang–Barsky (a line leaving and re-entering
//    becomes several parts), rings by Sutherland–Hodgman against the four edges. A ring cut
//    that way may run along the buffer's edge; that edge is outside the drawn tile.
// 3. Simplify with Douglas–Peucker at `simplification` tile units: a tolerance in tile units is
//    a tolerance per zoom (about 9.6 m at z10, 0.6 m at z14, 4 cm at z18 with the defaults).
// 4. Round to the integer grid and drop what that makes degenerate: repeated points, lines of
//    fewer than 2 points, rings of fewer than 3 or of zero area, a polygon whose exterior ring
//    went, features with nothing left.
// 5. Orient rings by the spec's rule (4.3.4.4): an exterior ring has positive area by the
//    surveyor's formula in tile coordinates (clockwise on screen, y down), an interior ring
//    negative; rings are reversed to fit.
// 6. Write the commands (MoveTo, LineTo, ClosePath with the counts the spec requires, deltas
//    zigzag-encoded) and the attributes as shared key and value tables.
//
// Attribute values keep their type: text → string, integer → uint (≥ 0) or sint (< 0),
// real → double, boolean → bool; JSON arrays and objects (the animals of a pen) go as their
// JSON text, since MVT values have no lists; nulls are left out.
//
// The scratch arrays live in the layer encoder and are reused from feature to feature, so a
// tile costs a few allocations, not some per vertex.

import Foundation
import Geometry
import Wire

/// How a tile is cut: its size in units, the buffer around it, the simplification.
public struct MVTEncodingOptions: Sendable, Equatable {
    /// Units across the tile (the spec's default and what every client expects).
    public var extent: Int
    /// Units of the neighbouring tiles kept around the tile, so lines and fills join up.
    public var buffer: Int
    /// Douglas–Peucker tolerance in tile units; 0 keeps every vertex that survives rounding.
    public var simplification: Double

    public init(extent: Int = 4096, buffer: Int = 64, simplification: Double = 1) {
        self.extent = extent
        self.buffer = buffer
        self.simplification = simplification
    }
}

/// Lon/lat ↔ the units of one tile (Web Mercator, XYZ numbering, y down).
public struct TileProjection: Sendable {
    public let z: Int, x: Int, y: Int
    public let extent: Int
    /// The world's width in this tile's units: 2^z · extent.
    let world: Double
    let originX: Double, originY: Double

    /// The square Mercator world ends here; clamping keeps the poles finite.
    static let maxLatitude = 85.051128779806604

    public init(z: Int, x: Int, y: Int, extent: Int = 4096) {
        self.z = z
        self.x = x
        self.y = y
        self.extent = extent
        world = Double(1 << max(0, min(z, 30))) * Double(extent)
        originX = Double(x) * Double(extent)
        originY = Double(y) * Double(extent)
    }

    @inline(__always)
    func project(_ lon: Double, _ lat: Double) -> (x: Double, y: Double) {
        let clamped = max(-TileProjection.maxLatitude, min(TileProjection.maxLatitude, lat))
        let s = sin(clamped * (Double.pi / 180))
        let my = 0.5 - log((1 + s) / (1 - s)) / (4 * Double.pi)
        return ((lon + 180) / 360 * world - originX, my * world - originY)
    }

    /// Tile units → lon/lat.
    public func lonLat(_ px: Double, _ py: Double) -> Point {
        let fx = (px + originX) / world, fy = (py + originY) / world
        return Point(lon: fx * 360 - 180, lat: atan(sinh(Double.pi * (1 - 2 * fy))) * 180 / Double.pi)
    }

    /// The lon/lat box of the tile grown by `margin` units on every side, within the world.
    public func lonLatBox(margin: Double) -> BBox {
        let northWest = lonLat(-margin, -margin), southEast = lonLat(Double(extent) + margin, Double(extent) + margin)
        return BBox(minLon: max(-180, northWest.lon), minLat: max(-90, southEast.lat),
                    maxLon: min(180, southEast.lon), maxLat: min(90, northWest.lat))
    }
}

/// One layer of a tile being written. Add features, then hand the layers to `MVTEncoder.tile`.
public struct MVTLayerEncoder {
    public let name: String
    public let projection: TileProjection
    public let options: MVTEncodingOptions
    /// The features written so far (those with something left inside the buffered tile).
    public private(set) var featureCount = 0

    /// Each feature as a field 2 of the layer message, in order.
    var features = WireWriter(reservingCapacity: 4096)
    var keys: [String] = []
    var keyIndex: [TableKey: UInt32] = [:]
    var values: [MVTValue] = []
    var valueIndex: [TableKey: UInt32] = [:]
    var ids = Set<UInt64>()
    var scratch = GeometryScratch()

    public init(name: String, z: Int, x: Int, y: Int, options: MVTEncodingOptions = MVTEncodingOptions()) {
        self.name = name
        self.options = options
        projection = TileProjection(z: z, x: x, y: y, extent: options.extent)
        keyIndex.reserveCapacity(32)
        valueIndex.reserveCapacity(256)
    }

    /// Where to look for features: the tile and its buffer in lon/lat.
    public var searchBox: BBox { projection.lonLatBox(margin: Double(options.buffer)) }

    /// Clips, simplifies and writes one feature; false when nothing of it is left in the tile.
    /// A geometry collection is written as one feature per kind of geometry it holds (points,
    /// lines, polygons: an MVT feature has one type), each with the attributes and the first
    /// with the id. A negative id, or one the layer already has, is left off.
    @discardableResult
    public mutating func add(id: Int64?, geometry: Geometry, properties: Attributes) -> Bool {
        if case .collection(let parts) = geometry {
            var groups: [[Geometry]] = [[], [], []]
            func collect(_ g: Geometry) {
                switch g {
                case .point, .multiPoint: groups[0].append(g)
                case .lineString, .multiLineString: groups[1].append(g)
                case .polygon, .multiPolygon: groups[2].append(g)
                case .collection(let inner): inner.forEach(collect)
                }
            }
            parts.forEach(collect)
            var any = false
            for group in groups where !group.isEmpty { any = write(id: id, group, properties: properties) || any }
            return any
        }
        return write(id: id, [geometry], properties: properties)
    }

    /// Writes geometries of one kind as one feature.
    mutating func write(id: Int64?, _ geometries: [Geometry], properties: Attributes) -> Bool {
        let bounds = Double(-options.buffer)...Double(options.extent + options.buffer)
        scratch.beginFeature()
        var type = MVTGeometryType.unknown
        for geometry in geometries {
            switch geometry {
            case .point(let p):
                type = .point
                scratch.addPoints([p.lon, p.lat], projection, bounds)
            case .multiPoint(let m):
                type = .point
                scratch.addPoints(m.coordinates, projection, bounds)
            case .lineString(let l):
                type = .lineString
                scratch.addLine(l.coordinates[...], projection, bounds, tolerance: options.simplification)
            case .multiLineString(let m):
                type = .lineString
                for i in 0..<m.lineCount {
                    scratch.addLine(m.coordinates[(2 * m.lineOffsets[i])..<(2 * m.lineOffsets[i + 1])], projection, bounds, tolerance: options.simplification)
                }
            case .polygon(let p):
                type = .polygon
                scratch.addPolygon(p, projection, bounds, tolerance: options.simplification)
            case .multiPolygon(let m):
                type = .polygon
                for p in m.polygons { scratch.addPolygon(p, projection, bounds, tolerance: options.simplification) }
            case .collection:
                break
            }
        }
        if type == .point { scratch.finishPoints() }
        guard type != .unknown, !scratch.commands.isEmpty else { return false }

        var tags: [UInt32] = []
        tags.reserveCapacity(2 * properties.count)
        for (key, value) in properties {
            guard let mvtValue = MVTLayerEncoder.value(value) else { continue }
            tags.append(index(ofKey: key))
            tags.append(index(of: mvtValue))
        }
        var feature = WireWriter(reservingCapacity: 16 + tags.count * 2 + scratch.commands.count * 2)
        // Ids are unique in a layer (the spec's SHOULD): a repeated one (the parts of a
        // collection, a transcoded tile's repeats) is left off.
        if let id, id >= 0, ids.insert(UInt64(id)).inserted { feature.varintField(1, UInt64(id)) }
        if !tags.isEmpty { feature.packedField(2, tags) }
        feature.varintField(3, UInt64(type.rawValue))
        feature.packedField(4, scratch.commands)
        features.bytesField(2, feature.bytes)
        featureCount += 1
        return true
    }

    /// An attribute as an MVT value; nil for null, which is left out.
    static func value(_ value: AttributeValue) -> MVTValue? {
        switch value {
        case .null: nil
        case .bool(let b): .bool(b)
        case .integer(let i): i >= 0 ? .uint(UInt64(i)) : .sint(i)
        case .real(let d): .double(d)
        case .text(let s), .json(let s): .string(s)
        }
    }

    mutating func index(ofKey key: String) -> UInt32 {
        let tableKey = TableKey(key)
        if let i = keyIndex[tableKey] { return i }
        let i = UInt32(keys.count)
        keys.append(key)
        keyIndex[tableKey] = i
        return i
    }

    mutating func index(of value: MVTValue) -> UInt32 {
        let tableKey = TableKey(value)
        if let i = valueIndex[tableKey] { return i }
        let i = UInt32(values.count)
        values.append(value)
        valueIndex[tableKey] = i
        return i
    }

    /// The Layer message: name, features, keys, values, extent, version 2.
    public func encoded() -> [UInt8] {
        var w = WireWriter(reservingCapacity: features.bytes.count + 64 + keys.count * 16 + values.count * 16)
        w.stringField(1, name)
        w.bytes.append(contentsOf: features.bytes)
        for key in keys { w.stringField(3, key) }
        var value = WireWriter(reservingCapacity: 32)
        for v in values {
            value.bytes.removeAll(keepingCapacity: true)
            switch v {
            case .string(let s): value.stringField(1, s)
            case .float(let f): value.fixed32Field(2, f.bitPattern)
            case .double(let d): value.fixed64Field(3, d.bitPattern)
            case .int(let i): value.varintField(4, UInt64(bitPattern: i))
            case .uint(let u): value.varintField(5, u)
            case .sint(let i): value.varintField(6, zigzagEncode(i))
            case .bool(let b): value.varintField(7, b ? 1 : 0)
            }
            w.bytesField(4, value.bytes)
        }
        w.varintField(5, UInt64(options.extent))
        w.varintField(15, 2)
        return w.bytes
    }
}

/// A key or value as the layer's tables tell them apart: strings byte for byte (as the spec
/// compares layer names, and without the Unicode normalisation `String` hashing does, which was
/// a quarter of the encoder's time), numbers by type and bit pattern.
struct TableKey: Hashable {
    let kind: UInt8
    let bits: UInt64
    let text: String

    init(kind: UInt8 = 0, bits: UInt64 = 0, text: String = "") {
        self.kind = kind
        self.bits = bits
        self.text = text
    }

    init(_ text: String) { self.init(text: text) }

    init(_ value: MVTValue) {
        switch value {
        case .string(let s): self.init(text: s)
        case .float(let f): self.init(kind: 1, bits: UInt64(f.bitPattern))
        case .double(let d): self.init(kind: 2, bits: d.bitPattern)
        case .int(let i): self.init(kind: 3, bits: UInt64(bitPattern: i))
        case .uint(let u): self.init(kind: 4, bits: u)
        case .sint(let i): self.init(kind: 5, bits: UInt64(bitPattern: i))
        case .bool(let b): self.init(kind: 6, bits: b ? 1 : 0)
        }
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(bits)
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    static func == (a: TableKey, b: TableKey) -> Bool {
        guard a.kind == b.kind, a.bits == b.bits, a.text.utf8.count == b.text.utf8.count else { return false }
        var x = a.text, y = b.text
        return x.withUTF8 { p in
            y.withUTF8 { q in
                guard let pa = p.baseAddress, let qa = q.baseAddress else { return true }  // both empty
                return memcmp(pa, qa, p.count) == 0
            }
        }
    }
}

public enum MVTEncoder {
    /// A tile of these layers, in order. Layers without features are left out (the spec asks
    /// encoders not to write them); a tile of no layers is zero bytes, a valid empty tile.
    public static func tile(_ layers: [MVTLayerEncoder]) -> [UInt8] {
        var w = WireWriter(reservingCapacity: 1024)
        for layer in layers where layer.featureCount > 0 { w.bytesField(3, layer.encoded()) }
        return w.bytes
    }
}

/// The geometry pipeline of one feature (project, clip, simplify, round, orient, command),
/// with its working arrays kept between features.
struct GeometryScratch {
    /// The feature's commands so far, and the cursor the next delta starts from.
    var commands: [UInt32] = []
    var cursorX: Int64 = 0, cursorY: Int64 = 0
    /// The feature's points (x, y pairs), deduplicated when the feature is finished.
    var points: [Int64] = []
    /// One part in tile units (x, y pairs), and the clipper's second buffer.
    var part: [Double] = []
    var spare: [Double] = []
    /// Clipped lines: their points and where each starts.
    var pieces: [Double] = []
    var pieceStarts: [Int] = []
    /// One part on the grid (x, y pairs).
    var grid: [Int64] = []
    var keep: [Bool] = []
    var stack: [Int] = []

    mutating func beginFeature() {
        commands.removeAll(keepingCapacity: true)
        points.removeAll(keepingCapacity: true)
        cursorX = 0
        cursorY = 0
    }

    // MARK: Points

    mutating func addPoints(_ coordinates: [Double], _ projection: TileProjection, _ bounds: ClosedRange<Double>) {
        var i = 0
        while i + 1 < coordinates.count {
            let (px, py) = projection.project(coordinates[i], coordinates[i + 1])
            i += 2
            // NaN fails both tests and is left out with the points outside.
            guard bounds.contains(px), bounds.contains(py) else { continue }
            points.append(Int64(px.rounded()))
            points.append(Int64(py.rounded()))
        }
    }

    /// All of a feature's points as one MoveTo, repeated positions once.
    mutating func finishPoints() {
        var seen = Set<Int64>()
        var unique: [Int64] = []
        var i = 0
        while i + 1 < points.count {
            // Both coordinates lie within ±2^31 of the origin: one key holds the pair.
            if seen.insert(points[i] << 32 ^ (points[i + 1] & 0xFFFF_FFFF)).inserted {
                unique.append(points[i])
                unique.append(points[i + 1])
            }
            i += 2
        }
        guard !unique.isEmpty else { return }
        commands.append(command(1, count: unique.count / 2))
        i = 0
        while i < unique.count {
            delta(unique[i], unique[i + 1])
            i += 2
        }
    }

    // MARK: Lines

    mutating func addLine(_ coordinates: ArraySlice<Double>, _ projection: TileProjection, _ bounds: ClosedRange<Double>, tolerance: Double) {
        guard project(coordinates, projection, closed: false) else { return }
        // Clip each segment (Liang–Barsky); a line that leaves the box and comes back becomes
        // two pieces.
        pieces.removeAll(keepingCapacity: true)
        pieceStarts.removeAll(keepingCapacity: true)
        let lo = bounds.lowerBound, hi = bounds.upperBound
        var open = false
        var i = 0
        while i + 3 < part.count {
            let ax = part[i], ay = part[i + 1], bx = part[i + 2], by = part[i + 3]
            i += 2
            guard let (t0, t1) = GeometryScratch.clipSegment(ax, ay, bx, by, lo, hi) else {
                open = false
                continue
            }
            if !open || t0 > 0 {
                pieceStarts.append(pieces.count / 2)
                pieces.append(t0 == 0 ? ax : ax + t0 * (bx - ax))
                pieces.append(t0 == 0 ? ay : ay + t0 * (by - ay))
            }
            pieces.append(t1 == 1 ? bx : ax + t1 * (bx - ax))
            pieces.append(t1 == 1 ? by : ay + t1 * (by - ay))
            open = t1 == 1
        }
        pieceStarts.append(pieces.count / 2)
        for k in 0..<(pieceStarts.count - 1) {
            part.removeAll(keepingCapacity: true)
            part.append(contentsOf: pieces[(2 * pieceStarts[k])..<(2 * pieceStarts[k + 1])])
            simplify(closed: false, tolerance: tolerance)
            snapToGrid(closed: false)
            guard grid.count >= 4 else { continue }
            emit(closed: false)
        }
    }

    /// The parameters (t0, t1) of the part of segment a→b inside the square [lo, hi]², or nil.
    @inline(__always)
    static func clipSegment(_ ax: Double, _ ay: Double, _ bx: Double, _ by: Double, _ lo: Double, _ hi: Double) -> (Double, Double)? {
        var t0 = 0.0, t1 = 1.0
        let dx = bx - ax, dy = by - ay
        // Each edge as p·t ≤ q; false when the segment lies wholly outside it.
        @inline(__always) func edge(_ p: Double, _ q: Double) -> Bool {
            if p == 0 { return q >= 0 }
            let t = q / p
            if p < 0 {
                if t > t1 { return false }
                if t > t0 { t0 = t }
            } else {
                if t < t0 { return false }
                if t < t1 { t1 = t }
            }
            return true
        }
        guard edge(-dx, ax - lo), edge(dx, hi - ax), edge(-dy, ay - lo), edge(dy, hi - ay) else { return nil }
        return (t0, t1)
    }

    // MARK: Polygons

    mutating func addPolygon(_ polygon: Polygon, _ projection: TileProjection, _ bounds: ClosedRange<Double>, tolerance: Double) {
        for ring in 0..<polygon.ringCount {
            let exterior = ring == 0
            let emitted = addRing(polygon.ring(ring), exterior: exterior, projection, bounds, tolerance: tolerance)
            // Without its exterior ring a polygon's holes mean nothing.
            if exterior && !emitted { return }
        }
    }

    mutating func addRing(_ coordinates: ArraySlice<Double>, exterior: Bool, _ projection: TileProjection, _ bounds: ClosedRange<Double>, tolerance: Double) -> Bool {
        guard project(coordinates, projection, closed: true) else { return false }
        clipRing(bounds.lowerBound, bounds.upperBound)
        guard part.count >= 6 else { return false }
        simplify(closed: true, tolerance: tolerance)
        snapToGrid(closed: true)
        guard grid.count >= 6 else { return false }
        let area = GeometryScratch.twiceArea(grid)
        guard area != 0 else { return false }
        // Exterior rings positive (clockwise on screen, y down), interior rings negative.
        if (area > 0) != exterior { reverseGrid() }
        emit(closed: true)
        return true
    }

    /// Sutherland–Hodgman against the four edges of [lo, hi]², in place on `part`.
    mutating func clipRing(_ lo: Double, _ hi: Double) {
        var minX = Double.infinity, minY = Double.infinity, maxX = -Double.infinity, maxY = -Double.infinity
        var i = 0
        while i + 1 < part.count {
            minX = min(minX, part[i]); maxX = max(maxX, part[i])
            minY = min(minY, part[i + 1]); maxY = max(maxY, part[i + 1])
            i += 2
        }
        if minX >= lo && maxX <= hi && minY >= lo && maxY <= hi { return }
        if maxX < lo || minX > hi || maxY < lo || minY > hi {
            part.removeAll(keepingCapacity: true)
            return
        }
        if minX < lo { clipPass(axis: 0, bound: lo, keepAbove: true) }
        if maxX > hi { clipPass(axis: 0, bound: hi, keepAbove: false) }
        if minY < lo { clipPass(axis: 1, bound: lo, keepAbove: true) }
        if maxY > hi { clipPass(axis: 1, bound: hi, keepAbove: false) }
    }

    /// One edge of Sutherland–Hodgman: keeps the side of `axis = bound` given by `keepAbove`.
    mutating func clipPass(axis: Int, bound: Double, keepAbove: Bool) {
        let n = part.count / 2
        guard n >= 3 else {
            part.removeAll(keepingCapacity: true)
            return
        }
        spare.removeAll(keepingCapacity: true)
        let other = 1 - axis
        @inline(__always) func inside(_ v: Double) -> Bool { keepAbove ? v >= bound : v <= bound }
        var prev = n - 1
        for cur in 0..<n {
            let pa = part[2 * prev + axis], ca = part[2 * cur + axis]
            let prevIn = inside(pa), curIn = inside(ca)
            if curIn != prevIn {
                let t = (bound - pa) / (ca - pa)
                let po = part[2 * prev + other], co = part[2 * cur + other]
                let o = po + t * (co - po)
                if axis == 0 { spare.append(bound); spare.append(o) } else { spare.append(o); spare.append(bound) }
            }
            if curIn {
                spare.append(part[2 * cur])
                spare.append(part[2 * cur + 1])
            }
            prev = cur
        }
        swap(&part, &spare)
    }

    /// Twice the surveyor's area of a ring on the grid (without its closing point), y down.
    static func twiceArea(_ ring: [Int64]) -> Int64 {
        let n = ring.count / 2
        var sum: Int64 = 0
        var j = n - 1
        for i in 0..<n {
            sum &+= ring[2 * j] &* ring[2 * i + 1] &- ring[2 * i] &* ring[2 * j + 1]
            j = i
        }
        return sum
    }

    mutating func reverseGrid() {
        var i = 0, j = grid.count - 2
        while i < j {
            grid.swapAt(i, j)
            grid.swapAt(i + 1, j + 1)
            i += 2
            j -= 2
        }
    }

    // MARK: Shared steps

    /// Projects a part into `part` (a ring without its closing position); false when a
    /// coordinate is not finite, which leaves the part out.
    mutating func project(_ coordinates: ArraySlice<Double>, _ projection: TileProjection, closed: Bool) -> Bool {
        part.removeAll(keepingCapacity: true)
        var end = coordinates.endIndex
        if closed && coordinates.count >= 4 && coordinates[end - 2] == coordinates[coordinates.startIndex]
            && coordinates[end - 1] == coordinates[coordinates.startIndex + 1] {
            end -= 2
        }
        var i = coordinates.startIndex
        while i + 1 < end {
            let (px, py) = projection.project(coordinates[i], coordinates[i + 1])
            guard px.isFinite && py.isFinite else { return false }
            part.append(px)
            part.append(py)
            i += 2
        }
        return !part.isEmpty
    }

    /// Douglas–Peucker on `part` at `tolerance` units. A ring is split at the point farthest
    /// from its first, and each half simplified as a line.
    mutating func simplify(closed: Bool, tolerance: Double) {
        let n = part.count / 2
        guard tolerance > 0, n > (closed ? 3 : 2) else { return }
        if closed {
            part.append(part[0])
            part.append(part[1])
        }
        let count = part.count / 2
        keep.removeAll(keepingCapacity: true)
        keep.append(contentsOf: repeatElement(false, count: count))
        keep[0] = true
        keep[count - 1] = true
        stack.removeAll(keepingCapacity: true)
        if closed {
            var far = 1, farDistance = -1.0
            for i in 1..<(count - 1) {
                let dx = part[2 * i] - part[0], dy = part[2 * i + 1] - part[1]
                let d = dx * dx + dy * dy
                if d > farDistance { farDistance = d; far = i }
            }
            keep[far] = true
            stack += [0, far, far, count - 1]
        } else {
            stack += [0, count - 1]
        }
        let limit = tolerance * tolerance
        while stack.count >= 2 {
            let last = stack.removeLast(), first = stack.removeLast()
            guard last - first > 1 else { continue }
            let ax = part[2 * first], ay = part[2 * first + 1], bx = part[2 * last], by = part[2 * last + 1]
            var worst = first, worstDistance = -1.0
            for i in (first + 1)..<last {
                let d = GeometryScratch.squaredDistance(part[2 * i], part[2 * i + 1], ax, ay, bx, by)
                if d > worstDistance { worstDistance = d; worst = i }
            }
            if worstDistance > limit {
                keep[worst] = true
                stack += [first, worst, worst, last]
            }
        }
        var out = 0
        for i in 0..<(closed ? count - 1 : count) where keep[i] {
            part[2 * out] = part[2 * i]
            part[2 * out + 1] = part[2 * i + 1]
            out += 1
        }
        part.removeLast(part.count - 2 * out)
    }

    @inline(__always)
    static func squaredDistance(_ px: Double, _ py: Double, _ ax: Double, _ ay: Double, _ bx: Double, _ by: Double) -> Double {
        let dx = bx - ax, dy = by - ay
        let length = dx * dx + dy * dy
        var t = length > 0 ? ((px - ax) * dx + (py - ay) * dy) / length : 0
        t = max(0, min(1, t))
        let ex = ax + t * dx - px, ey = ay + t * dy - py
        return ex * ex + ey * ey
    }

    /// Rounds `part` to the grid into `grid`, without repeated positions (for a ring, the last
    /// is not the first either).
    mutating func snapToGrid(closed: Bool) {
        grid.removeAll(keepingCapacity: true)
        var i = 0
        while i + 1 < part.count {
            let gx = Int64(part[i].rounded()), gy = Int64(part[i + 1].rounded())
            i += 2
            if grid.count >= 2 && grid[grid.count - 2] == gx && grid[grid.count - 1] == gy { continue }
            grid.append(gx)
            grid.append(gy)
        }
        if closed {
            while grid.count >= 4 && grid[grid.count - 2] == grid[0] && grid[grid.count - 1] == grid[1] {
                grid.removeLast(2)
            }
        }
    }

    /// `grid` as MoveTo, LineTo (and ClosePath for a ring), relative to the cursor.
    mutating func emit(closed: Bool) {
        let n = grid.count / 2
        commands.append(command(1, count: 1))
        delta(grid[0], grid[1])
        commands.append(command(2, count: n - 1))
        for i in 1..<n { delta(grid[2 * i], grid[2 * i + 1]) }
        if closed { commands.append(command(7, count: 1)) }
    }

    @inline(__always)
    func command(_ id: UInt32, count: Int) -> UInt32 { id | UInt32(truncatingIfNeeded: count) << 3 }

    @inline(__always)
    mutating func delta(_ x: Int64, _ y: Int64) {
        commands.append(UInt32(truncatingIfNeeded: zigzagEncode(x - cursorX)))
        commands.append(UInt32(truncatingIfNeeded: zigzagEncode(y - cursorY)))
        cursorX = x
        cursorY = y
    }
}
