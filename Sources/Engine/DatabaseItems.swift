// OGC API – Features' items of a layer kept in the database (DatabaseLayers.swift): the page is
// selected by PostgreSQL, so `limit=1` or a property filter on a layer of a million rows reads
// one page of rows, not the layer. Rows come in fid order, the order the layer loads in, so the
// pages are the ones the same layer loaded (or in a GeoPackage) gives.
//
// - No bbox: the attribute condition (`ItemsRequest.condition`, compiled by the query language
//   to exact SQL) is the whole selection, so `ORDER BY fid LIMIT limit + 1 OFFSET offset` is the
//   page, and the one row more says whether another follows. `after` (the next link's) adds
//   `fid > after`: the page starts on the primary key's index, however deep it is.
// - A bbox: SQL's `geom && envelope` is a superset (bounding boxes, float4-rounded), and the
//   engine's own test (`Geometry.intersects(box:)`) decides each candidate, as on a loaded layer;
//   so the candidates are walked in fid order, a bounded chunk per fetch (keyset: after the
//   last one), the first `offset` that pass skipped, until the page and one more are found.
//
// `numberMatched` is left out (`ItemsPage.matched` nil): counting a million rows for each page
// would cost more than the page.

import Geometry
import Store
import Support

extension Snapshot {
    func keptItems(_ layer: Layer, _ request: ItemsRequest, deadline: Deadline) throws(EngineError) -> ItemsPage {
        guard let database else { throw .store("'\(layer.name)' is kept in a database this snapshot does not have") }
        // A kept layer has no time (stations of a series load): the error names the layers that do.
        if request.time != nil { _ = try times(of: layer) }
        guard request.filter == nil else {
            throw .store("the items of '\(layer.name)', which stays in PostgreSQL, take their attribute filter as SQL (ItemsRequest.condition)")
        }
        var page: [StoredFeature] = []
        if let box = request.bbox {
            try Check.box(box)
            let parts = BBox.parts(of: box)
            let chunk = min(limits.maxRows, max(1_000, request.limit + 1))
            var skipped = 0
            var after = request.after ?? Int64.min
            walk: while true {
                let fetch = LayerFetch(layer: layer.info, points: layer.family == .points, selection: .intersecting(box),
                                       condition: request.condition, after: after, limit: chunk)
                let rows = try database.features(fetch, deadline: deadline).features
                for feature in rows {
                    after = feature.fid
                    guard let geometry = feature.feature.geometry, parts.contains(where: { geometry.intersects(box: $0) }) else { continue }
                    if skipped < request.offset {
                        skipped += 1
                        continue
                    }
                    page.append(feature)
                    if page.count > request.limit { break walk }
                }
                if rows.count < chunk { break }
                try deadline.check()
            }
        } else {
            let fetch = LayerFetch(layer: layer.info, points: layer.family == .points, selection: .all(limit: request.limit + 1, offset: request.offset),
                                   condition: request.condition, after: request.after)
            page = try database.features(fetch, deadline: deadline).features
        }
        let hasNext = page.count > request.limit
        let rows = try Layer(info: layer.info, features: Array(page.prefix(request.limit)), family: layer.family)
        return ItemsPage(layer: rows, indices: Array(0..<rows.count), matched: nil, request: request, hasNext: hasNext, keyset: true)
    }

}
