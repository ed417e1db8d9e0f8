// Tiles and TileJSON for the registered tile sets and the store's layers (/v1/tiles), with
// ETags so clients revalidate.

import Engine
import Foundation
import Geometry
import Hummingbird
import QueryLanguage
import Store
import Support
import VectorTiles

extension Endpoints {
    // MARK: - Tiles

    func tile(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try Parameters(request, allowed: [])
        let name = try request.pathParameter("tileset", context)
        let z = try Endpoints.tileNumber(request.pathParameter("z", context), "z", below: 31)
        let limit = 1 << z
        let x = try Endpoints.tileNumber(request.pathParameter("x", context), "x", below: limit)
        let (yText, form) = try Endpoints.tileForm(request.pathParameter("y", context))
        let y = try Endpoints.tileNumber(yText, "y", below: limit)
        let snapshot = try state.snapshot()
        // Reading (SQLite), encoding, transcoding and gzipping a tile is work of the heavy kind.
        return try await heavyWork(context, snapshot) { budget in
            try Endpoints.tile(request, snapshot: snapshot, name: name, z: z, x: x, y: y, form: form, deadline: budget.deadline)
        }
    }

    /// The last path segment of a tile: `y`, or `y.mvt`, `y.pbf` (MVT) or `y.json` (GeoJSON).
    static func tileForm(_ text: String) throws(APIError) -> (y: String, form: TileForm) {
        guard let dot = text.firstIndex(of: ".") else { return (text, .automatic) }
        let y = String(text[..<dot]), suffix = text[text.index(after: dot)...]
        switch suffix {
        case "mvt", "pbf": return (y, .mvt)
        case "json": return (y, .geoJSON)
        default: throw APIError.invalidParameter("y", "unknown tile extension \(Quote.input("." + suffix)) (use .mvt, .pbf or .json, or none)")
        }
    }

    static func tile(_ request: Request, snapshot: Snapshot, name: String, z: Int, x: Int, y: Int, form: TileForm, deadline: Deadline) throws -> Response {
        // The name is a key into the snapshot's registered tile sets and layers, never a file
        // path, so no request can reach a file that was not registered.
        let source = try engine { () throws(EngineError) in try snapshot.tileSource(name) }
        return try tile(request, snapshot: snapshot, source: source, z: z, x: x, y: y, form: form, deadline: deadline)
    }

    /// One tile of a source, answered the same wherever it was addressed (/v1/tiles, and OGC API
    /// – Tiles under /ogc, which names a layer where /v1/tiles would prefer a tile set).
    static func tile(_ request: Request, snapshot: Snapshot, source: TileSource, z: Int, x: Int, y: Int, form: TileForm, deadline: Deadline) throws -> Response {
        let name = source.name
        let body = try engine { () throws(EngineError) in
            try snapshot.tile(source, z: z, x: x, y: y, form: form, deadline: deadline)
        }
        guard let body else {
            // A sparse set has no tile where it has nothing to draw: inside its zooms and bounds
            // that is an empty tile, 204 as tile servers answer (a map client draws nothing and
            // logs no error); outside them the address is wrong, 404.
            if case .tileSet(_, let tiles) = source, tiles.covers(z: z, x: x, y: y) {
                var headers = HTTPFields()
                headers[.cacheControl] = Endpoints.tileCacheControl(source)
                return Response(status: .noContent, headers: headers)
            }
            throw APIError(.notFound, code: "tile_not_found", detail: "tile set \(Quote.input(name)) has no tile \(z)/\(x)/\(y)",
                           extra: JSONObject([("tileset", .string(Quote.capped(name))), ("z", .integer(Int64(z))), ("x", .integer(Int64(x))), ("y", .integer(Int64(y)))]))
        }
        // An app revalidates its cached tiles with If-None-Match and gets a bodiless 304 for
        // each unchanged one. The tag is weak (W/) because the same bytes may go out gzipped
        // or not, and weak tags are what If-None-Match compares anyway.
        let etag = Endpoints.weakETag(body.bytes)
        if let ifNoneMatch = request.headers[.ifNoneMatch], Endpoints.matches(ifNoneMatch, etag: etag) {
            var headers = HTTPFields()
            headers[.eTag] = etag
            headers[.cacheControl] = Endpoints.tileCacheControl(source)
            headers[.vary] = "Accept-Encoding"
            return Response(status: .notModified, headers: headers)
        }
        // A stored compression goes out only to a client that accepts it (MBTiles and PMTiles
        // tiles are often gzip; `identity` or no Accept-Encoding gets them inflated); anything else that
        // is not an image is gzipped for a client that accepts gzip.
        var bytes = body.bytes
        var contentEncoding = body.encoding.compression.contentEncoding
        if let coding = contentEncoding, !Reply.accepts(request, coding: coding) {
            do {
                bytes = try Decompression.inflate(bytes)
            } catch {
                throw APIError.engine(.tiles("tile \(z)/\(x)/\(y) of '\(name)': \(error)"))
            }
            contentEncoding = nil
        }
        var response = Reply.bytes(bytes, contentType: body.encoding.format.contentType, contentEncoding: contentEncoding,
                                   compressible: !body.encoding.format.isRaster, etag: etag, request: request)
        response.headers[.cacheControl] = Endpoints.tileCacheControl(source)
        response.headers[.vary] = "Accept-Encoding"
        return response
    }

    /// A registered tile set changes only on a reload: clients keep its tiles for an hour. A
    /// layer's tiles change with every write to it: clients revalidate each (`no-cache`), and
    /// the ETag answers 304 for those that did not change.
    static func tileCacheControl(_ source: TileSource) -> String {
        if case .layer = source { return "no-cache" }
        return "public, max-age=3600"
    }

    /// A tile coordinate: digits only, below `limit` (2^z for x and y; 31 for z).
    static func tileNumber(_ text: String, _ name: String, below limit: Int) throws(APIError) -> Int {
        guard !text.isEmpty, text.utf8.count <= 10, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), let value = Int(text) else {
            throw APIError.invalidParameter(name, "\(Quote.input(text)) is not a tile coordinate (a whole number ≥ 0)")
        }
        guard value < limit else { throw APIError.invalidParameter(name, "must be below \(limit), got \(value)") }
        return value
    }

    func tileJSON(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try Parameters(request, allowed: [])
        let name = try request.pathParameter("tileset", context)
        let snapshot = try state.snapshot()
        let base = baseURL(request, context)
        // Heavy: the first TileJSON of a set whose metadata has no vector_layers reads its
        // tiles (the zoo's 22 GeoJSON tiles, 3.6 MB: 0.2 s), once per snapshot.
        return try await heavyWork(context, snapshot) { _ in
            let source = try engine { () throws(EngineError) in try snapshot.tileSource(name) }
            // Vector tiles by their MVT URL (what MapLibre draws); images as stored.
            let url = "\(base)/v1/tiles/\(Endpoints.pathEncoded(source.name))/{z}/{x}/{y}" + (source.isRaster ? "" : ".mvt")
            let tileJSON = snapshot.tileJSON(source, tilesURL: url)
            return Reply.json(request: request) { w in w.value(tileJSON) }
        }
    }
}

// MARK: - Routes, with their OpenAPI operations (served whole at /openapi.json)

extension Endpoints {
    /// TileJSON and tiles.
    static let tileRoutes: [Route] = [
        Route(.get, "/v1/tiles/{tileset}.json", { try await $0.tileJSON($1, $2) }, openAPI: #"""
            {
              "summary": "TileJSON 3.0.0 of a tile set or of a feature layer (vector_layers with typed fields; valid against the TileJSON 3.0.0 schema)",
              "parameters": [{"$ref": "#/components/parameters/tileset"}],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "TileJSON whose tiles URL points at this server.", "content": {"application/json": {"schema": {"type": "object"}}}},
                "404": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/v1/tiles/{tileset}/{z}/{x}/{y}", { try await $0.tile($1, $2) }, openAPI: #"""
            {
              "summary": "One tile, XYZ addressing: a tile set's tile, or a feature layer cut into a Mapbox Vector Tile (extent 4096, 64 units of buffer, simplified per zoom). y may end in .mvt or .pbf (MVT: GeoJSON and TopoJSON tile sets transcoded) or .json (a GeoJSON FeatureCollection, each feature's tile layer in tile_layer, a member beside its properties); without an extension vector tiles come as MVT and images as stored. Content-Encoding follows Accept-Encoding: gzip only when accepted, stored gzip inflated otherwise.",
              "parameters": [
                {"$ref": "#/components/parameters/tileset"},
                {"name": "z", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 0, "maximum": 30}},
                {"name": "x", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 0, "maximum": 1073741823}, "description": "XYZ column, below 2^z (400 otherwise)."},
                {"name": "y", "in": "path", "required": true, "schema": {"type": "string", "pattern": "^[0-9]{1,10}(\\.(mvt|pbf|json))?$"}, "description": "XYZ row below 2^z (0 at the north; the TMS flip of MBTiles and the tile ids of PMTiles are the server's; 400 otherwise), optionally with the extension .mvt, .pbf or .json."},
                {"name": "Accept-Encoding", "in": "header", "required": false, "schema": {"type": "string"}, "description": "gzip (or deflate, for zlib-stored tiles) only when listed."},
                {"name": "If-None-Match", "in": "header", "required": false, "schema": {"type": "string"}, "description": "ETags the client holds; a match gives 304."}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "The tile's bytes; Content-Type and Content-Encoding are read from the bytes. A weak ETag comes with it.", "content": {"application/vnd.mapbox-vector-tile": {}, "application/geo+json": {}, "image/png": {}, "image/jpeg": {}, "image/webp": {}}},
                "204": {"description": "An empty tile: a tile set has no tile here, inside its zoom range and bounds."},
                "304": {"description": "Not modified: If-None-Match holds the tile's ETag (or *)."},
                "400": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
    ]
}
