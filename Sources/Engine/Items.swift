// A layer's features a page at a time, selected by a box, a time and attribute values: OGC API –
// Features' items. The selection and the paging are here, so the HTTP API only parses the
// request and writes the page (`Output.items`).
//
// Time: a layer has time when it is a time-series table (each row's interval, from its start
// and end columns) or a point layer with one (each station is at a time when it has an
// observation then). A feature matches a time range when one of its intervals meets it.

import Geometry
import Store
import Support

/// A time range of `datetime`: an instant (start == end), or an interval, either end open (nil).
public struct TimeRange: Sendable, Equatable {
    public var start: UTCTime?
    public var end: UTCTime?

    public init(start: UTCTime?, end: UTCTime?) {
        self.start = start
        self.end = end
    }

    /// Whether the interval [from, to] meets this range (both closed).
    public func meets(from: UTCTime, to: UTCTime) -> Bool {
        (start.map { to >= $0 } ?? true) && (end.map { from <= $0 } ?? true)
    }
}

/// Which features, and which page of them.
public struct ItemsRequest: Sendable {
    /// Only features whose geometry meets the box (lon/lat; `minLon > maxLon` crosses the
    /// antimeridian).
    public var bbox: BBox?
    public var time: TimeRange?
    /// Attribute conditions, compiled (`Query.filter`), for a layer whose rows are loaded.
    public var filter: FeatureFilter?
    /// The same conditions in the store's terms, for a layer kept in the database
    /// (`Query.storeFilter`): the database applies them, before the page.
    public var condition: StoreCondition?
    /// Only features whose fid is greater (keyset paging): the page after the one that ended
    /// there, found on the primary key's index, where an offset counts every row before it.
    public var after: Int64?
    public var offset: Int
    public var limit: Int

    public init(bbox: BBox? = nil, time: TimeRange? = nil, filter: FeatureFilter? = nil, condition: StoreCondition? = nil,
                after: Int64? = nil, offset: Int = 0, limit: Int = 10) {
        self.bbox = bbox
        self.time = time
        self.filter = filter
        self.condition = condition
        self.after = after
        self.offset = offset
        self.limit = limit
    }
}

/// One page of a selection.
public struct ItemsPage: Sendable {
    public let layer: Layer
    /// The features of the page (indices into the layer), in the layer's order.
    public let indices: [Int]
    /// How many features the selection holds in all pages; nil on a layer kept in the
    /// database, where counting them would cost more than the page (OGC API – Features makes
    /// `numberMatched` optional).
    public let matched: Int?
    public let offset: Int
    public let limit: Int
    /// Where the next page starts; nil on the last page. An offset on a layer in memory; on a
    /// layer kept in the database the page's last fid, which the database finds on the primary
    /// key's index, where an offset counts every row before the page.
    public let next: PagePlace?
    /// Where the previous page starts, where an offset says where this page is (keyset pages do
    /// not go back).
    public let previous: PagePlace?
    /// Whether pages follow this one.
    public var hasNext: Bool { next != nil }

    init(layer: Layer, indices: [Int], matched: Int?, request: ItemsRequest, hasNext: Bool, keyset: Bool) {
        self.layer = layer
        self.indices = indices
        self.matched = matched
        offset = request.offset
        limit = request.limit
        let last = indices.last.map { layer.fids[$0] }
        next = !hasNext ? nil : keyset ? last.map { .after($0) } : .offset(request.offset + request.limit)
        previous = request.offset > 0 && !(keyset && request.after != nil) ? .offset(max(0, request.offset - request.limit)) : nil
    }
}

/// Where a page starts: after a number of features, or after a fid.
public enum PagePlace: Sendable, Equatable {
    case offset(Int)
    case after(Int64)
}

extension Snapshot {
    /// The page of `layer`'s features that `request` selects, in the layer's (load) order: fid
    /// order on a layer kept in the database, whose page PostgreSQL selects (DatabaseItems.swift).
    /// The filters run over every feature of the box (of the layer, without one), so they ask
    /// `deadline` as they go.
    public func items(_ layer: Layer, _ request: ItemsRequest, deadline: Deadline = .none) throws(EngineError) -> ItemsPage {
        guard (1...limits.maxRows).contains(request.limit) else {
            throw .invalidArgument(parameter: "limit", message: "must be between 1 and \(limits.maxRows), got \(request.limit)")
        }
        guard (0...Int(Int32.max)).contains(request.offset) else {
            throw .invalidArgument(parameter: "offset", message: "must be between 0 and \(Int32.max), got \(request.offset)")
        }
        if layer.storage == .database { return try keptItems(layer, request, deadline: deadline) }
        if layer.storage.rowsInDatabase { throw .notSupportedOnPostGIS("the items of a time-series table (its rows stay in the database)") }
        var selected: [Int]
        if let box = request.bbox {
            selected = try self.features(of: layer, meeting: box)
        } else {
            selected = layer.indicesInLoadOrder
        }
        try deadline.check()
        if let after = request.after { selected = try Items.keep(selected, { layer.fids[$0] > after }, deadline) }
        if let filter = request.filter { selected = try Items.keep(selected, filter, deadline) }
        if let time = request.time {
            let times = try self.times(of: layer)
            selected = try Items.keep(selected, { times($0, time) }, deadline)
        }
        // The last stretch of a filter was not checked (every 4,096): an answer past the
        // deadline is refused as a whole.
        try deadline.check()
        let start = min(request.offset, selected.count)
        let page = Array(selected[start..<min(selected.count, start + request.limit)])
        return ItemsPage(layer: layer, indices: page, matched: selected.count, request: request,
                         hasNext: start + page.count < selected.count, keyset: false)
    }

    /// The time the layer's features cover, from the earliest start to the latest end; nil for
    /// a layer without time.
    public func temporalExtent(of layer: Layer) throws(EngineError) -> TimeRange? {
        guard let series = timeSeriesByTable[layer.name] ?? timeSeriesByLayer[layer.name] else { return nil }
        if let database { return try database.seriesExtent(series, deadline: .none) }
        var first: UTCTime?, last: UTCTime?
        for key in series.keys {
            let observations = series.observations(of: key)
            if let start = observations.map(\.start).min() { first = min(first ?? start, start) }
            if let end = observations.map(\.end).max() { last = max(last ?? end, end) }
        }
        return first == nil ? nil : TimeRange(start: first, end: last)
    }

    /// The features whose geometry meets the box, in layer order; none for a table.
    func features(of layer: Layer, meeting box: BBox) throws(EngineError) -> [Int] {
        try Check.box(box)
        guard let tree = layer.tree else { return [] }
        var found = Set<Int>()
        for part in BBox.parts(of: box) {
            _ = tree.search(part) { index in
                if layer.geometries[index]?.intersects(box: part) == true { found.insert(index) }
            }
        }
        var sorted = Array(found)
        layer.sortInLoadOrder(&sorted)
        return sorted
    }

    /// Whether feature `index` of the layer has a time in a range: a time-series table by its
    /// rows' intervals, a point layer with one by its observations. An error for other layers.
    func times(of layer: Layer) throws(EngineError) -> (Int, TimeRange) -> Bool {
        if readsSeriesFromStore && (timeSeriesByTable[layer.name] ?? timeSeriesByLayer[layer.name]) != nil {
            throw .notSupportedOnPostGIS("datetime on a layer with a time series")
        }
        if let series = timeSeriesByTable[layer.name] {
            let link = series.link
            let intervals = layer.properties.map { row -> (UTCTime, UTCTime)? in
                guard let start = row[link.startColumn]?.stringValue.flatMap(UTCTime.parse),
                      let end = row[link.endColumn]?.stringValue.flatMap(UTCTime.parse) else { return nil }
                return (start, end)
            }
            return { index, range in intervals[index].map { range.meets(from: $0.0, to: $0.1) } ?? false }
        }
        if let series = timeSeriesByLayer[layer.name] {
            let keyColumn = series.link.layerKeyColumn
            return { index, range in
                guard let key = layer.properties[index][keyColumn]?.stringValue else { return false }
                return series.observations(of: key).contains { range.meets(from: $0.start, to: $0.end) }
            }
        }
        let timed = (Array(timeSeriesByTable.keys) + Array(timeSeriesByLayer.keys)).sorted()
        throw .invalidArgument(parameter: "datetime", message: "layer '\(layer.name)' has no time"
            + (timed.isEmpty ? "" : " (layers with time: \(timed.joined(separator: ", ")))"))
    }
}

private enum Items {
    /// The indices that pass `test`, in order, with the deadline read every 4,096 of them.
    static func keep(_ indices: [Int], _ test: (Int) -> Bool, _ deadline: Deadline) throws(EngineError) -> [Int] {
        var kept: [Int] = []
        for (n, index) in indices.enumerated() {
            if n & 4095 == 4095 { try deadline.check() }
            if test(index) { kept.append(index) }
        }
        return kept
    }
}

extension BBox {
    /// A box as boxes that do not cross the antimeridian: itself, or (`minLon > maxLon`) the
    /// two either side of it.
    public static func parts(of box: BBox) -> [BBox] {
        box.minLon <= box.maxLon ? [box]
            : [BBox(minLon: box.minLon, minLat: box.minLat, maxLon: 180, maxLat: box.maxLat),
               BBox(minLon: -180, minLat: box.minLat, maxLon: box.maxLon, maxLat: box.maxLat)]
    }
}

extension Check {
    /// A `bbox`: its corners are positions, its southern edge not north of its northern one.
    static func box(_ box: BBox) throws(EngineError) {
        for (lon, lat) in [(box.minLon, box.minLat), (box.maxLon, box.maxLat)] { try position(Point(lon: lon, lat: lat), parameter: "bbox") }
        guard box.minLat <= box.maxLat else {
            throw .invalidArgument(parameter: "bbox", message: "the southern edge \(box.minLat) is north of the northern edge \(box.maxLat)")
        }
    }
}
