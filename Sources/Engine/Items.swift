// A layer's features a page at a time, selected by a box, a time and attribute values: OGC API –
// Features' items. The selection and the paging are here, so the HTTP API only parses the
// request and writes the page (`Output.items`).
//
// Time: a layer has time when it is a time-series table (each row's interval, from its start
// and end columns) or a point layer with one (each station is at a time when it has an
// observation then). A feature matches a time range when one of its intervals meets it.

import Geometry
import Store

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
    /// Attribute conditions, compiled (`Query.filter`).
    public var filter: FeatureFilter?
    public var offset: Int
    public var limit: Int

    public init(bbox: BBox? = nil, time: TimeRange? = nil, filter: FeatureFilter? = nil, offset: Int = 0, limit: Int = 10) {
        self.bbox = bbox
        self.time = time
        self.filter = filter
        self.offset = offset
        self.limit = limit
    }
}

/// One page of a selection.
public struct ItemsPage: Sendable {
    public let layer: Layer
    /// The features of the page (indices into the layer), in the layer's order.
    public let indices: [Int]
    /// How many features the selection holds in all pages.
    public let matched: Int
    public let offset: Int
    public let limit: Int

    /// Whether pages follow this one.
    public var hasNext: Bool { offset + indices.count < matched }
}

extension Snapshot {
    /// The page of `layer`'s features that `request` selects, in the layer's (load) order.
    /// The filters run over every feature of the box (of the layer, without one), so they ask
    /// `deadline` as they go.
    public func items(_ layer: Layer, _ request: ItemsRequest, deadline: Deadline = .none) throws(EngineError) -> ItemsPage {
        guard (1...limits.maxRows).contains(request.limit) else {
            throw .invalidArgument(parameter: "limit", message: "must be between 1 and \(limits.maxRows), got \(request.limit)")
        }
        guard request.offset >= 0 else { throw .invalidArgument(parameter: "offset", message: "must be 0 or more, got \(request.offset)") }
        try requireRows(layer, "the items")
        if layer.rowsInDatabase { throw .notSupportedOnPostGIS("the items of a time-series table (its rows stay in the database)") }
        var selected: [Int]
        if let box = request.bbox {
            selected = try self.features(of: layer, meeting: box)
        } else {
            selected = Array(0..<layer.count)
        }
        try deadline.check()
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
        return ItemsPage(layer: layer, indices: page, matched: selected.count, offset: request.offset, limit: request.limit)
    }

    /// The time the layer's features cover, from the earliest start to the latest end; nil for
    /// a layer without time.
    public func temporalExtent(of layer: Layer) throws(EngineError) -> TimeRange? {
        guard let series = timeSeriesByTable[layer.name] ?? timeSeriesByLayer[layer.name] else { return nil }
        if let database { return try databaseExtent(series, database: database) }
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
        for (lon, lat) in [(box.minLon, box.minLat), (box.maxLon, box.maxLat)] { try Check.position(Point(lon: lon, lat: lat), parameter: "bbox") }
        guard box.minLat <= box.maxLat else {
            throw .invalidArgument(parameter: "bbox", message: "the southern edge \(box.minLat) is north of the northern edge \(box.maxLat)")
        }
        guard let tree = layer.tree else { return [] }
        // A box across the antimeridian is the two boxes either side of it.
        let boxes = box.minLon <= box.maxLon ? [box]
            : [BBox(minLon: box.minLon, minLat: box.minLat, maxLon: 180, maxLat: box.maxLat),
               BBox(minLon: -180, minLat: box.minLat, maxLon: box.maxLon, maxLat: box.maxLat)]
        var found = Set<Int>()
        for part in boxes {
            _ = tree.search(part) { index in
                if layer.geometries[index]?.intersects(box: part) == true { found.insert(index) }
            }
        }
        return found.sorted()
    }

    /// Whether feature `index` of the layer has a time in a range: a time-series table by its
    /// rows' intervals, a point layer with one by its observations. An error for other layers.
    func times(of layer: Layer) throws(EngineError) -> (Int, TimeRange) -> Bool {
        if seriesInDatabase && (timeSeriesByTable[layer.name] ?? timeSeriesByLayer[layer.name]) != nil {
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
