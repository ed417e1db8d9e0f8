// OGC API – Tiles, Part 1 (Core, TileSet, TileSets list, GeoData tilesets, TileMatrixSet, MVT),
// beside OGC API – Features under /ogc: every feature layer of the store (every collection but
// the attribute tables) has one vector tile set, on the WebMercatorQuad tile matrix set, whose
// tiles are the layer's /v1/tiles tiles (Endpoints.tile: one tile path, one output path), only
// addressed {tileMatrix}/{tileRow}/{tileCol} (z/y/x: the row, OGC's order, before the column).
// GDAL's OGCAPI driver finds them from a collection (`OGCAPI:http://HOST/ogc/collections/pens`).
//
// The registered MBTiles tile sets are not offered here: they are not collections of the
// Features API (its clients would list them as layers without items), and the dataset tile sets
// of the standard (/tiles/{tileMatrixSetId}) are one per tile matrix set, not one per file.

import Engine
import Foundation
import Geometry
import Hummingbird
import Support

extension Endpoints {
    static let tilesConformanceClasses = [
        "http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/core",
        "http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/tileset",
        "http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/tilesets-list",
        "http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/geodata-tilesets",
        "http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/tilematrixset",
        "http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/mvt",
    ]
    static let tilesetsVectorRel = "http://www.opengis.net/def/rel/ogc/1.0/tilesets-vector"
    static let tilingSchemeRel = "http://www.opengis.net/def/rel/ogc/1.0/tiling-scheme"
    static let tilingSchemesRel = "http://www.opengis.net/def/rel/ogc/1.0/tiling-schemes"
    static let mvtMediaType = "application/vnd.mapbox-vector-tile"

    // MARK: - The tile matrix sets

    func ogcTileMatrixSets(_ request: Request, _ context: APIContext) throws -> Response {
        try Endpoints.ogcFormat(request, allowed: [])
        let base = baseURL(request, context) + Endpoints.ogcPrefix + "/tileMatrixSets"
        return Reply.json(request: request) { w in
            w.beginObject()
            Output.links(&w, [Link(href: base, rel: "self", type: Reply.json, title: "This document")])
            w.key("tileMatrixSets")
            w.beginArray()
            w.beginObject()
            w.key("id"); w.string(WebMercatorQuad.id)
            w.key("title"); w.string(WebMercatorQuad.title)
            w.key("uri"); w.string(WebMercatorQuad.uri)
            w.key("crs"); w.string(WebMercatorQuad.crs)
            Output.links(&w, [Link(href: base + "/" + WebMercatorQuad.id, rel: Endpoints.tilingSchemeRel, type: Reply.json, title: "Its definition")])
            w.endObject()
            w.endArray()
            w.endObject()
        }
    }

    func ogcTileMatrixSet(_ request: Request, _ context: APIContext) throws -> Response {
        try Endpoints.ogcFormat(request, allowed: [])
        try Endpoints.requireWebMercatorQuad(request.pathParameter("tileMatrixSetId", context))
        return Reply.json(request: request) { w in WebMercatorQuad.write(&w) }
    }

    // MARK: - A collection's tile sets

    func ogcCollectionTileSets(_ request: Request, _ context: APIContext) throws -> Response {
        try Endpoints.ogcFormat(request, allowed: [])
        let layer = try tiledLayer(request, context)
        let base = baseURL(request, context) + Endpoints.ogcPrefix
        let tiles = base + "/collections/" + Endpoints.pathEncoded(layer.name) + "/tiles"
        return Reply.json(request: request) { w in
            w.beginObject()
            Output.links(&w, [Link(href: tiles, rel: "self", type: Reply.json, title: "This document"),
                              Link(href: base + "/collections/" + Endpoints.pathEncoded(layer.name), rel: "collection", type: Reply.json, title: "The collection")])
            w.key("tilesets")
            w.beginArray()
            w.beginObject()
            w.key("title"); w.string(layer.name)
            w.key("dataType"); w.string("vector")
            w.key("crs"); w.string(WebMercatorQuad.crs)
            w.key("tileMatrixSetURI"); w.string(WebMercatorQuad.uri)
            Output.links(&w, [Link(href: tiles + "/" + WebMercatorQuad.id, rel: "self", type: Reply.json, title: "The tile set"),
                              Link(href: base + "/tileMatrixSets/" + WebMercatorQuad.id, rel: Endpoints.tilingSchemeRel, type: Reply.json, title: "Its tile matrix set")])
            w.endObject()
            w.endArray()
            w.endObject()
        }
    }

    func ogcCollectionTileSet(_ request: Request, _ context: APIContext) throws -> Response {
        try Endpoints.ogcFormat(request, allowed: [])
        let layer = try tiledLayer(request, context)
        try Endpoints.requireWebMercatorQuad(request.pathParameter("tileMatrixSetId", context))
        let base = baseURL(request, context) + Endpoints.ogcPrefix
        let collection = base + "/collections/" + Endpoints.pathEncoded(layer.name)
        let tileSet = collection + "/tiles/" + WebMercatorQuad.id
        return Reply.json(request: request) { w in
            w.beginObject()
            w.key("title"); w.string(layer.name)
            w.key("dataType"); w.string("vector")
            w.key("crs"); w.string(WebMercatorQuad.crs)
            w.key("tileMatrixSetURI"); w.string(WebMercatorQuad.uri)
            Output.links(&w, [
                Link(href: tileSet, rel: "self", type: Reply.json, title: "This tile set"),
                Link(href: base + "/tileMatrixSets/" + WebMercatorQuad.id, rel: Endpoints.tilingSchemeRel, type: Reply.json, title: "Its tile matrix set"),
                Link(href: collection, rel: "http://www.opengis.net/def/rel/ogc/1.0/geodata", type: Reply.json, title: "The collection"),
                Link(href: tileSet + "/{tileMatrix}/{tileRow}/{tileCol}", rel: "item", type: Endpoints.mvtMediaType,
                     title: "A tile: the layer's features as a Mapbox Vector Tile", templated: true),
            ])
            if let limits = WebMercatorQuad.limits(layer.bounds) {
                w.key("tileMatrixSetLimits")
                w.beginArray()
                for (z, limit) in limits.enumerated() {
                    w.beginObject()
                    w.key("tileMatrix"); w.string(String(z))
                    w.key("minTileRow"); w.integer(Int64(limit.rows.lowerBound))
                    w.key("maxTileRow"); w.integer(Int64(limit.rows.upperBound))
                    w.key("minTileCol"); w.integer(Int64(limit.cols.lowerBound))
                    w.key("maxTileCol"); w.integer(Int64(limit.cols.upperBound))
                    w.endObject()
                }
                w.endArray()
                w.key("boundingBox")
                w.beginObject()
                w.key("lowerLeft"); w.beginArray(); w.number(layer.bounds.minLon); w.number(layer.bounds.minLat); w.endArray()
                w.key("upperRight"); w.beginArray(); w.number(layer.bounds.maxLon); w.number(layer.bounds.maxLat); w.endArray()
                w.key("crs"); w.string(Output.crs84)
                w.endObject()
            }
            w.endObject()
        }
    }

    // MARK: - Tiles

    func ogcCollectionTile(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try Parameters(request, allowed: [])
        let snapshot = try state.snapshot()
        let layer = try tiledLayer(request, context, snapshot: snapshot)
        try Endpoints.requireWebMercatorQuad(request.pathParameter("tileMatrixSetId", context))
        // Digits, at most 10, checked as /v1/tiles checks them (400 otherwise); a number outside the tile
        // matrix set or the layer's limits addresses no tile: 404, as the standard asks.
        let z = try Endpoints.tileNumber(request.pathParameter("tileMatrix", context), "tileMatrix", below: .max)
        let row = try Endpoints.tileNumber(request.pathParameter("tileRow", context), "tileRow", below: .max)
        let col = try Endpoints.tileNumber(request.pathParameter("tileCol", context), "tileCol", below: .max)
        let notFound = APIError(.notFound, code: "tile_not_found",
                                detail: "collection \(Quote.input(layer.name)) has no tile \(z)/\(row)/\(col) (tileMatrix/tileRow/tileCol) in \(WebMercatorQuad.id)",
                                extra: JSONObject([("collection", .string(Quote.capped(layer.name))), ("tileMatrix", .integer(Int64(z))),
                                                   ("tileRow", .integer(Int64(row))), ("tileCol", .integer(Int64(col)))]))
        guard WebMercatorQuad.zooms.contains(z), row < 1 << z, col < 1 << z else { throw notFound }
        if let limit = WebMercatorQuad.limits(layer.bounds)?[z], !limit.rows.contains(row) || !limit.cols.contains(col) { throw notFound }
        return try await heavyWork(context, snapshot) { budget in
            try Endpoints.tile(request, snapshot: snapshot, source: .layer(layer), z: z, x: col, y: row, form: .mvt, deadline: budget.deadline)
        }
    }

    // MARK: - Parameters

    /// The collection of the path, when it has tiles: a layer with geometries (404 otherwise).
    func tiledLayer(_ request: Request, _ context: APIContext, snapshot: Snapshot? = nil) throws -> Layer {
        let snapshot = try snapshot ?? state.snapshot()
        let name = try request.pathParameter("collection", context)
        let layer = try engine { () throws(EngineError) in try snapshot.layer(name) }
        guard layer.family != .table else {
            throw APIError(.notFound, code: "no_tiles", detail: "collection '\(layer.name)' is a table without geometries: it has no tiles",
                           extra: JSONObject([("collection", .string(layer.name))]))
        }
        return layer
    }

    static func requireWebMercatorQuad(_ id: String) throws(APIError) {
        guard id == WebMercatorQuad.id else {
            throw APIError(.notFound, code: "unknown_tile_matrix_set", detail: "no tile matrix set \(Quote.input(id)) (this API has WebMercatorQuad)",
                           extra: JSONObject([("tileMatrixSetId", .string(Quote.capped(id)))]))
        }
    }
}

/// OGC's WebMercatorQuad (OGC 17-083r4, Annex D): EPSG:3857 in 256-pixel tiles, one tile at
/// zoom 0, the XYZ grid of web maps (tileRow is y, tileCol is x).
enum WebMercatorQuad {
    static let id = "WebMercatorQuad"
    static let title = "Google Maps Compatible for the World"
    static let uri = "http://www.opengis.net/def/tilematrixset/OGC/1.0/WebMercatorQuad"
    static let crs = "http://www.opengis.net/def/crs/EPSG/0/3857"
    /// The tile matrices the definition has (0–24, as OGC registers it). /v1/tiles serves 0–30.
    static let zooms = 0...24
    /// Half the equator of the WGS 84 ellipsoid, in metres: the square's half side.
    static let halfSide = Double.pi * 6_378_137
    /// The square's top left corner (x, y) in EPSG:3857 metres.
    static let origin = (x: -halfSide, y: halfSide)

    /// Metres per pixel at zoom z: the side over 256 pixels, halving each zoom.
    static func cellSize(_ z: Int) -> Double { 2 * halfSide / 256 / Double(1 << z) }

    /// The scale denominator at zoom z, for the standard's 0.28 mm pixels: 559082264.0287178 at z0.
    static func scaleDenominator(_ z: Int) -> Double { cellSize(z) / 0.000_28 }

    /// The 2.0 definition. Beside its members, the 1.0 names (`identifier`, `supportedCRS`,
    /// `boundingBox` corners, each matrix's `identifier` and `topLeftCorner`): GDAL before 3.7
    /// reads only those, and 2.0 readers ignore members they do not know.
    static func write(_ w: inout JSONWriter) {
        w.beginObject()
        w.key("id"); w.string(id)
        w.key("title"); w.string(title)
        w.key("uri"); w.string(uri)
        w.key("crs"); w.string(crs)
        w.key("orderedAxes"); w.beginArray(); w.string("X"); w.string("Y"); w.endArray()
        w.key("wellKnownScaleSet"); w.string("http://www.opengis.net/def/wkss/OGC/1.0/GoogleMapsCompatible")
        w.key("boundingBox")
        w.beginObject()
        w.key("crs"); w.string(crs)
        for (name, x, y) in [("lowerLeft", -halfSide, -halfSide), ("upperRight", halfSide, halfSide),
                             ("lowerCorner", -halfSide, -halfSide), ("upperCorner", halfSide, halfSide)] {
            w.key(name); w.beginArray(); w.number(x); w.number(y); w.endArray()
        }
        w.endObject()
        w.key("identifier"); w.string(id)
        w.key("supportedCRS"); w.string(crs)
        w.key("tileMatrices")
        w.beginArray()
        for z in zooms {
            w.beginObject()
            w.key("id"); w.string(String(z))
            w.key("scaleDenominator"); w.number(scaleDenominator(z))
            w.key("cellSize"); w.number(cellSize(z))
            w.key("cornerOfOrigin"); w.string("topLeft")
            w.key("pointOfOrigin"); w.beginArray(); w.number(origin.x); w.number(origin.y); w.endArray()
            w.key("tileWidth"); w.integer(256)
            w.key("tileHeight"); w.integer(256)
            w.key("matrixWidth"); w.integer(Int64(1 << z))
            w.key("matrixHeight"); w.integer(Int64(1 << z))
            w.key("identifier"); w.string(String(z))
            w.key("topLeftCorner"); w.beginArray(); w.number(origin.x); w.number(origin.y); w.endArray()
            w.endObject()
        }
        w.endArray()
        w.endObject()
    }

    /// The rows and columns a box's tiles take at each zoom, 0–24 (rows from the north), or nil
    /// for a box that is empty or crosses the antimeridian: a layer with no limits has tiles
    /// everywhere, empty ones where it has nothing.
    static func limits(_ box: BBox) -> [(rows: ClosedRange<Int>, cols: ClosedRange<Int>)]? {
        let values = [box.minLon, box.minLat, box.maxLon, box.maxLat]
        guard !box.isEmpty, values.allSatisfy(\.isFinite), box.minLon <= box.maxLon, box.minLat <= box.maxLat else { return nil }
        return zooms.map { z in
            let n = 1 << z
            // Finite and clamped to the square before converting, so no box (a pole, 180°) traps.
            func col(_ lon: Double) -> Int { Int((min(max((lon + 180) / 360, 0), 1) * Double(n)).rounded(.down)).clamped(0, n - 1) }
            func row(_ lat: Double) -> Int {
                let φ = min(max(lat, -85.051_128_779_806_59), 85.051_128_779_806_59) * .pi / 180
                let fraction = (1 - asinh(tan(φ)) / .pi) / 2
                return Int((min(max(fraction, 0), 1) * Double(n)).rounded(.down)).clamped(0, n - 1)
            }
            return (rows: row(box.maxLat)...row(box.minLat), cols: col(box.minLon)...col(box.maxLon))
        }
    }
}

private extension Int {
    func clamped(_ low: Int, _ high: Int) -> Int { Swift.min(Swift.max(self, low), high) }
}

// MARK: - Routes, with their OpenAPI operations (served whole at /openapi.json)

extension Endpoints {
    /// OGC API – Tiles, Part 1.
    static let ogcTileRoutes: [Route] = [
        Route(.get, "/ogc/tileMatrixSets", { try $0.ogcTileMatrixSets($1, $2) }, openAPI: #"""
            {
              "tags": ["OGC API – Tiles"],
              "summary": "The tile matrix sets the tiles use: WebMercatorQuad",
              "parameters": [{"$ref": "#/components/parameters/f"}],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "tileMatrixSets (id, title, uri, crs, links) and links.", "content": {"application/json": {"schema": {"type": "object", "required": ["tileMatrixSets"], "properties": {"tileMatrixSets": {"type": "array", "items": {"type": "object"}}, "links": {"type": "array", "items": {"$ref": "#/components/schemas/Link"}}}}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "406": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/ogc/tileMatrixSets/{tileMatrixSetId}", { try $0.ogcTileMatrixSet($1, $2) }, openAPI: #"""
            {
              "tags": ["OGC API – Tiles"],
              "summary": "A tile matrix set's definition (OGC Two Dimensional Tile Matrix Set 2.0 JSON; the 1.0 member names beside, for older readers): WebMercatorQuad, tile matrices 0 to 24",
              "parameters": [{"$ref": "#/components/parameters/tileMatrixSetId"}, {"$ref": "#/components/parameters/f"}],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "id, uri, crs, orderedAxes, tileMatrices (scaleDenominator, cellSize, pointOfOrigin, tile and matrix sizes).", "content": {"application/json": {"schema": {"type": "object", "required": ["crs", "tileMatrices"], "properties": {"id": {"type": "string"}, "uri": {"type": "string"}, "crs": {"type": "string"}, "tileMatrices": {"type": "array", "items": {"type": "object"}}}}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "406": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/ogc/collections/{collection}/tiles", { try $0.ogcCollectionTileSets($1, $2) }, openAPI: #"""
            {
              "tags": ["OGC API – Tiles"],
              "summary": "A collection's tile sets: its features as vector tiles on WebMercatorQuad (a table has none: 404)",
              "parameters": [{"$ref": "#/components/parameters/collection"}, {"$ref": "#/components/parameters/f"}],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "tilesets (dataType, crs, tileMatrixSetURI, links) and links.", "content": {"application/json": {"schema": {"type": "object", "required": ["tilesets"], "properties": {"tilesets": {"type": "array", "items": {"type": "object"}}, "links": {"type": "array", "items": {"$ref": "#/components/schemas/Link"}}}}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "406": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/ogc/collections/{collection}/tiles/{tileMatrixSetId}", { try $0.ogcCollectionTileSet($1, $2) }, openAPI: #"""
            {
              "tags": ["OGC API – Tiles"],
              "summary": "A collection's tile set: its tile URL template (item, templated), tiling scheme, and the tile rows and columns of its bounds per tile matrix (tileMatrixSetLimits)",
              "parameters": [{"$ref": "#/components/parameters/collection"}, {"$ref": "#/components/parameters/tileMatrixSetId"}, {"$ref": "#/components/parameters/f"}],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "The tile set metadata (OGC 17-083r4).", "content": {"application/json": {"schema": {"type": "object", "required": ["dataType", "crs", "links"], "properties": {"dataType": {"type": "string"}, "crs": {"type": "string"}, "tileMatrixSetURI": {"type": "string"}, "links": {"type": "array", "items": {"$ref": "#/components/schemas/Link"}}, "tileMatrixSetLimits": {"type": "array", "items": {"type": "object"}}}}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "406": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/ogc/collections/{collection}/tiles/{tileMatrixSetId}/{tileMatrix}/{tileRow}/{tileCol}", { try await $0.ogcCollectionTile($1, $2) }, openAPI: #"""
            {
              "tags": ["OGC API – Tiles"],
              "summary": "One tile of a collection as a Mapbox Vector Tile: the same bytes as /v1/tiles/{collection}/{z}/{x}/{y}.mvt with tileMatrix = z, tileRow = y, tileCol = x. A tile outside the tile matrix or the collection's tileMatrixSetLimits is 404.",
              "parameters": [
                {"$ref": "#/components/parameters/collection"},
                {"$ref": "#/components/parameters/tileMatrixSetId"},
                {"name": "tileMatrix", "in": "path", "required": true, "schema": {"type": "string", "pattern": "^[0-9]{1,10}$"}, "example": "16", "description": "The zoom, 0 to 24 (404 otherwise)."},
                {"name": "tileRow", "in": "path", "required": true, "schema": {"type": "string", "pattern": "^[0-9]{1,10}$"}, "example": "22199", "description": "The row from the north (XYZ y), below 2^tileMatrix (404 otherwise)."},
                {"name": "tileCol", "in": "path", "required": true, "schema": {"type": "string", "pattern": "^[0-9]{1,10}$"}, "example": "35392", "description": "The column from the west (XYZ x), below 2^tileMatrix (404 otherwise)."},
                {"name": "Accept-Encoding", "in": "header", "required": false, "schema": {"type": "string"}, "description": "gzip only when listed."},
                {"name": "If-None-Match", "in": "header", "required": false, "schema": {"type": "string"}, "description": "ETags the client holds; a match gives 304."}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "The tile (an empty tile has no features); a weak ETag comes with it.", "content": {"application/vnd.mapbox-vector-tile": {}}},
                "304": {"description": "Not modified: If-None-Match holds the tile's ETag (or *)."},
                "400": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
    ]
}
