// OGC API – Features' documents (collections, pages of items, one item), written on the same
// output path as the server's own answers; their links are made by the endpoints, which know the
// URLs (OGCEndpoints.swift). Coordinates as stored.

import Engine
import Geometry
import Support

/// A link of an OGC API document (RFC 8288 in JSON).
struct Link: Sendable, Equatable {
    var href: String
    var rel: String
    var type: String
    var title: String?
    /// The href is a URI template (RFC 6570), such as OGC API – Tiles' tile URL.
    var templated: Bool

    init(href: String, rel: String, type: String, title: String? = nil, templated: Bool = false) {
        self.href = href
        self.rel = rel
        self.type = type
        self.title = title
        self.templated = templated
    }
}

extension Output {
    /// OGC API's name of the coordinates' reference system: WGS 84 longitude/latitude.
    static let crs84 = "http://www.opengis.net/def/crs/OGC/1.3/CRS84"

    static func links(_ w: inout JSONWriter, _ links: [Link]) {
        w.key("links")
        w.beginArray()
        for link in links {
            w.beginObject()
            w.key("href"); w.string(link.href)
            w.key("rel"); w.string(link.rel)
            w.key("type"); w.string(link.type)
            if let title = link.title { w.key("title"); w.string(title) }
            if link.templated { w.key("templated"); w.bool(true) }
            w.endObject()
        }
        w.endArray()
    }

    /// A collection's description: id, title, links, extent (the layer's bounds in CRS84 and,
    /// for a layer with time, its interval), item type and CRS; for a point layer with a time
    /// series (`edr`), also its EDR queries and parameters (EDROutput.swift).
    static func ogcCollection(_ w: inout JSONWriter, _ layer: Layer, temporal: TimeRange?, links: [Link],
                              edr: TimeSeries? = nil, base: String = "") {
        w.beginObject()
        w.key("id"); w.string(layer.name)
        w.key("title"); w.string(layer.name)
        w.key("description")
        let count = "\(layer.rowCount) \(layer.family == .table ? "rows" : "features")"
        w.string(layer.family == .table ? "\(count), without geometry" : "\(count) (\(layer.family.rawValue))")
        Output.links(&w, links)
        w.key("extent")
        w.beginObject()
        if !layer.bounds.isEmpty {
            w.key("spatial")
            w.beginObject()
            w.key("bbox"); w.beginArray(); bounds(&w, layer.bounds); w.endArray()
            w.key("crs"); w.string(crs84)
            w.endObject()
        }
        if let temporal {
            w.key("temporal")
            w.beginObject()
            w.key("interval")
            w.beginArray()
            w.beginArray()
            if let start = temporal.start { w.string(start.iso) } else { w.null() }
            if let end = temporal.end { w.string(end.iso) } else { w.null() }
            w.endArray()
            w.endArray()
            w.key("trs"); w.string("http://www.opengis.net/def/uom/ISO-8601/0/Gregorian")
            w.endObject()
        }
        w.endObject()
        w.key("itemType"); w.string("feature")
        w.key("crs"); w.beginArray(); for crs in OGCCRS.allCases { w.string(crs.rawValue) }; w.endArray()
        w.key("storageCrs"); w.string(crs84)
        // When the layer last changed (as OGC API – Records and STAC name it).
        if let lastChange = layer.info.lastChange { w.key("updated"); w.string(lastChange) }
        if let edr, layer.family == .points {
            edrCollectionMembers(&w, edr, collectionURL: base + "/collections/" + Endpoints.pathEncoded(layer.name))
        }
        w.endObject()
    }

    /// A page of items: a GeoJSON FeatureCollection with every geometry, its links, how many
    /// features the selection holds and the page returns, and when it was written. Returns how
    /// many bytes precede the time stamp: the page's ETag is theirs, so it changes with the
    /// data and not with the clock.
    @discardableResult
    static func ogcItems(_ w: inout JSONWriter, _ page: ItemsPage, links: [Link], timeStamp: String,
                         budget: RequestBudget? = nil, crs: CoordinateTransformer? = nil) throws(EngineError) -> Int {
        w.beginObject()
        w.key("type"); w.string("FeatureCollection")
        w.key("features")
        w.beginArray()
        for index in page.indices {
            feature(&w, page.layer, index, geometry: .all, projected: try projected(page.layer, index, crs))
            try budget?.check(responseBytes: w.bytes.count)
        }
        w.endArray()
        Output.links(&w, links)
        if let matched = page.matched { w.key("numberMatched"); w.integer(Int64(matched)) }
        w.key("numberReturned"); w.integer(Int64(page.indices.count))
        let beforeTimeStamp = w.bytes.count
        w.key("timeStamp"); w.string(timeStamp)
        w.endObject()
        return beforeTimeStamp
    }

    /// One item: a GeoJSON Feature with its geometry and links.
    static func ogcItem(_ w: inout JSONWriter, _ layer: Layer, _ index: Int, links: [Link], crs: CoordinateTransformer? = nil) throws(EngineError) {
        feature(&w, layer, index, geometry: .all, projected: try projected(layer, index, crs), members: { w in Output.links(&w, links) })
    }

    /// A feature's geometry in the answer's CRS (OGCCRS.swift); nil when it is the stored one.
    static func projected(_ layer: Layer, _ index: Int, _ crs: CoordinateTransformer?) throws(EngineError) -> Geometry? {
        guard let crs, let geometry = layer.geometries[index] else { return nil }
        do {
            return try crs.transform(geometry)
        } catch {
            throw .invalidArgument(parameter: "crs", message: "feature \(layer.fids[index]) of '\(layer.name)' cannot be given in \(crs.target): \(error)")
        }
    }
}
