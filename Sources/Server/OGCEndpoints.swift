// OGC API – Features, Part 1 (Core, GeoJSON, OpenAPI 3.0), under /ogc: the map page of `/`
// belongs to browsers, so the standard API has a prefix of its own, and a client is pointed at
// http://HOST/ogc (GDAL: `ogrinfo OAPIF:http://HOST/ogc`). Every layer of the store is a
// collection (attribute tables too, as features without geometry). Answers are JSON only:
// `f=json` (or `geojson`) or an Accept header that takes JSON; anything else is 406.
//
// The selection and paging are the Engine's (`Snapshot.items`); property filters are compiled by
// the query language's one WHERE compiler (`Query.filter`), the same as `attr.NAME` filters.

import Engine
import Foundation
import Geometry
import Hummingbird
import QueryLanguage
import Store
import Support

extension Endpoints {
    static let ogcPrefix = "/ogc"
    static let conformanceClasses = [
        "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core",
        "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson",
        "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/oas30",
    ]
    /// Items per page when a request says nothing (the standard's example default).
    static let ogcDefaultLimit = 10
    static let openAPIMediaType = "application/vnd.oai.openapi+json;version=3.0"

    // MARK: - Documents

    func ogcLanding(_ request: Request, _ context: APIContext) throws -> Response {
        try Endpoints.ogcFormat(request, allowed: [])
        _ = try state.snapshot()
        let base = baseURL(request, context)
        return Reply.json(request: request) { w in
            w.beginObject()
            w.key("title"); w.string("Vltava")
            w.key("description"); w.string("The layers of a Vltava store as OGC API – Features collections, each feature layer also as vector tiles (OGC API – Tiles), and each point layer with a time series also through OGC API – EDR's position, radius, area and locations queries. Coordinates are WGS 84 longitude/latitude (CRS84).")
            Output.links(&w, [
                Link(href: base + Endpoints.ogcPrefix, rel: "self", type: Reply.json, title: "This document"),
                Link(href: base + "/openapi.json", rel: "service-desc", type: Endpoints.openAPIMediaType, title: "The API definition (OpenAPI 3.0)"),
                Link(href: base + Endpoints.ogcPrefix + "/conformance", rel: "conformance", type: Reply.json, title: "The conformance classes this API implements"),
                Link(href: base + Endpoints.ogcPrefix + "/collections", rel: "data", type: Reply.json, title: "The collections: every layer of the store"),
                Link(href: base + Endpoints.ogcPrefix + "/tileMatrixSets", rel: Endpoints.tilingSchemesRel, type: Reply.json, title: "The tile matrix sets of the tiles (OGC API – Tiles)"),
            ])
            w.endObject()
        }
    }

    func ogcConformance(_ request: Request, _ context: APIContext) throws -> Response {
        try Endpoints.ogcFormat(request, allowed: [])
        return Reply.json(request: request) { w in
            w.beginObject()
            w.key("conformsTo")
            w.beginArray()
            for uri in Endpoints.conformanceClasses + [OGCCRS.conformanceClass] + Endpoints.filterConformanceClasses
                + Endpoints.tilesConformanceClasses + Endpoints.edrConformanceClasses {
                w.string(uri)
            }
            w.endArray()
            w.endObject()
        }
    }

    func ogcCollections(_ request: Request, _ context: APIContext) async throws -> Response {
        try Endpoints.ogcFormat(request, allowed: [])
        let snapshot = try state.snapshot()
        let base = baseURL(request, context) + Endpoints.ogcPrefix
        return try await readsDatabase(context, snapshot) {
            let extents = try engine { () throws(EngineError) in try snapshot.layers.map { layer throws(EngineError) in try snapshot.temporalExtent(of: layer) } }
            return Reply.json(request: request) { w in
                w.beginObject()
                Output.links(&w, [Link(href: base + "/collections", rel: "self", type: Reply.json, title: "This document")])
                w.key("collections")
                w.beginArray()
                for (layer, extent) in zip(snapshot.layers, extents) {
                    Output.ogcCollection(&w, layer, temporal: extent, links: Endpoints.collectionLinks(base, layer),
                                         edr: snapshot.timeSeriesByLayer[layer.name], base: base)
                }
                w.endArray()
                w.endObject()
            }
        }
    }

    func ogcCollection(_ request: Request, _ context: APIContext) async throws -> Response {
        try Endpoints.ogcFormat(request, allowed: [])
        let snapshot = try state.snapshot()
        let name = try request.pathParameter("collection", context)
        let layer = try engine { () throws(EngineError) in try snapshot.layer(name) }
        let base = baseURL(request, context) + Endpoints.ogcPrefix
        return try await readsDatabase(context, snapshot) {
            let extent = try engine { () throws(EngineError) in try snapshot.temporalExtent(of: layer) }
            return Reply.json(request: request) { w in
                Output.ogcCollection(&w, layer, temporal: extent, links: Endpoints.collectionLinks(base, layer),
                                     edr: snapshot.timeSeriesByLayer[layer.name], base: base)
            }
        }
    }

    static func collectionLinks(_ base: String, _ layer: Layer) -> [Link] {
        let path = base + "/collections/" + pathEncoded(layer.name)
        let links = [Link(href: path, rel: "self", type: Reply.json, title: "This collection"),
                     Link(href: path + "/items", rel: "items", type: Reply.geoJSON, title: "Its features"),
                     Link(href: path + "/queryables", rel: "http://www.opengis.net/def/rel/ogc/1.0/queryables", type: "application/schema+json",
                          title: "What a filter may name")]
        // A layer with geometries is also tiled (OGCTileEndpoints.swift); a table is not.
        guard layer.family != .table else { return links }
        return links + [Link(href: path + "/tiles", rel: tilesetsVectorRel, type: Reply.json, title: "Its features as vector tiles")]
    }

    // MARK: - Items

    func ogcItems(_ request: Request, _ context: APIContext) async throws -> Response {
        let snapshot = try state.snapshot()
        let name = try request.pathParameter("collection", context)
        let layer = try engine { () throws(EngineError) in try snapshot.layer(name) }
        // Property filters: any column of the layer by its name; the standard's own names come
        // first where a column has one of them.
        let reserved = ["f", "limit", "offset", "after", "bbox", "bbox-crs", "crs", "datetime", "filter", "filter-lang", "filter-crs"]
        let columns = layer.info.columns.map(\.name).filter { $0 != layer.info.geometryColumn && !reserved.contains($0) }
        let parameters = try Endpoints.ogcFormat(request, allowed: reserved + columns)
        let limit = try parameters.int("limit", default: Endpoints.ogcDefaultLimit, range: 1...snapshot.limits.maxRows)
        let offset = try parameters.int("offset", default: 0, range: 0...Int(Int32.max))
        let after = parameters.string("after") == nil ? nil : Int64(try parameters.int("after", default: 0, range: nil))
        let crs = try parameters.string("crs").map { text throws(APIError) in try OGCCRS(text, parameter: "crs") } ?? .crs84
        let bboxCRS = try parameters.string("bbox-crs").map { text throws(APIError) in try OGCCRS(text, parameter: "bbox-crs") } ?? .crs84
        // A box in another CRS: its axes in that CRS's order, the candidates in the CRS84 box
        // around it, each kept when its transformed geometry meets the box (OGCCRS.swift).
        let givenBox = try parameters.string("bbox").map(Endpoints.bbox)
        if bboxCRS != .crs84 && givenBox == nil { throw APIError.invalidParameter("bbox-crs", "goes with a bbox") }
        let bbox = try givenBox.map { box throws(APIError) in try bboxCRS.crs84Box(around: box) }
        let time = try parameters.string("datetime").map(Endpoints.datetime)
        let cql2 = try Endpoints.cql2(parameters)
        let equal = columns.compactMap { column in parameters.string(column).map { (name: column, value: $0) } }
        let base = baseURL(request, context) + Endpoints.ogcPrefix + "/collections/" + Endpoints.pathEncoded(layer.name)
        let query = request.uri.query ?? ""
        return try await heavyWork(context, snapshot) { budget in
            var items = ItemsRequest(bbox: bbox, time: time, after: after, offset: offset, limit: limit)
            do throws(FilterError) {
                try Query.filterItems(&items, on: layer, in: snapshot, equal: equal, cql2: cql2)
            } catch {
                let parameter = error.parameter.hasPrefix("attr.") ? String(error.parameter.dropFirst("attr.".count)) : error.parameter
                throw APIError.invalidParameter(parameter, error.message)
            }
            if bboxCRS != .crs84, let givenBox, layer.fetchesRows {
                // In PostgreSQL: the same test by ST_Transform, on the rows the CRS84 box finds
                // by the index (PostGIS's axes: easting first, and for EPSG:4326 longitude first).
                guard let srid = bboxCRS.epsg else { throw APIError.internalError("no EPSG code for \(bboxCRS.rawValue)") }
                let box = bboxCRS == .epsg4326 ? BBox(minLon: givenBox.minLat, minLat: givenBox.minLon, maxLon: givenBox.maxLat, maxLat: givenBox.maxLon) : givenBox
                items.condition = .and([items.condition, .projectedBox(srid: srid, box)].compactMap { $0 })
            } else if bboxCRS != .crs84, let givenBox {
                let test = try ProjectedBoxTest(bboxCRS, box: givenBox, layer: layer)
                let attributes = items.filter
                items.filter = { index in test.keeps(index) && (attributes?(index) ?? true) }
            }
            let transformer = try crs.fromStored()
            let page = try engine { () throws(EngineError) in try snapshot.items(layer, items, deadline: budget.deadline) }
            // Next and previous pages keep the request's parameters, with the page's new place
            // (`ItemsPage.next`): an offset, or after a fid (keyset, on a layer kept in PostgreSQL).
            func pageURL(_ place: PagePlace) -> String {
                let moved: [String: String?] = switch place {
                case .offset(let n): ["offset": "offset=\(n)"]
                case .after(let fid): ["offset": nil, "after": "after=\(fid)"]
                }
                let kept = query.split(separator: "&").filter { item in
                    let key = Parameters.decoded(item.split(separator: "=", maxSplits: 1).first ?? "")
                    return key != "limit" && moved.index(forKey: key) == nil
                }
                return base + "/items?" + (kept.map(String.init) + ["limit=\(limit)"] + moved.values.compactMap { $0 }.sorted()).joined(separator: "&")
            }
            var links = [Link(href: base + "/items" + (query.isEmpty ? "" : "?" + query), rel: "self", type: Reply.geoJSON, title: "This page"),
                         Link(href: base, rel: "collection", type: Reply.json, title: "The collection")]
            if let next = page.next { links.append(Link(href: pageURL(next), rel: "next", type: Reply.geoJSON, title: "The next page")) }
            if let previous = page.previous { links.append(Link(href: pageURL(previous), rel: "prev", type: Reply.geoJSON, title: "The previous page")) }
            let now = UTCTime(seconds: Int64(Date().timeIntervalSince1970.rounded(.down))).iso
            var w = JSONWriter(reservingCapacity: 4096)
            let stamped = try engine { () throws(EngineError) in
                try Output.ogcItems(&w, page, links: links, timeStamp: now, budget: budget, crs: transformer)
            }
            var response = Reply.bytes(w.bytes, contentType: Reply.geoJSON, compressible: true, etag: Endpoints.weakETag(w.bytes[..<stamped]), request: request)
            response.headers[.contentCrs] = crs.contentCrsHeader
            return response
        }
    }

    func ogcItem(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Endpoints.ogcFormat(request, allowed: ["crs"])
        let crs = try parameters.string("crs").map { text throws(APIError) in try OGCCRS(text, parameter: "crs") } ?? .crs84
        let snapshot = try state.snapshot()
        let name = try request.pathParameter("collection", context)
        let kept = try engine { () throws(EngineError) in try snapshot.layer(name) }
        let id = try request.pathParameter("featureId", context)
        try engine { () throws(EngineError) in try kept.requireFeatures(for: "a feature") }
        let base = baseURL(request, context) + Endpoints.ogcPrefix + "/collections/" + Endpoints.pathEncoded(kept.name)
        return try await readsDatabase(context, snapshot) {
            // A layer kept in the database: the one row, fetched by its key.
            let fid = Int64(id)
            let layer = try fid.map { fid in
                try engine { () throws(EngineError) in
                    try snapshot.rows(of: kept, for: .feature(fid: fid))
                }
            } ?? kept
            guard let fid, let index = layer.index(ofFID: fid) else {
                throw APIError(.notFound, code: "unknown_feature", detail: "collection '\(kept.name)' has no feature \(Quote.input(id))",
                               extra: JSONObject([("layer", .string(kept.name))]))
            }
            // The ETag that PUT, PATCH and DELETE take in If-Match (WriteEndpoints.swift).
            let etag = Endpoints.itemETag(layer, index)
            if let tags = request.headers[.ifNoneMatch], Endpoints.matches(tags, etag: etag) {
                return Response(status: .notModified, headers: [.eTag: etag])
            }
            let transformer = try crs.fromStored()
            var w = JSONWriter(reservingCapacity: 4096)
            try engine { () throws(EngineError) in
                try Output.ogcItem(&w, layer, index, links: [Link(href: base + "/items/\(fid)", rel: "self", type: Reply.geoJSON, title: "This feature"),
                                                             Link(href: base, rel: "collection", type: Reply.json, title: "The collection")],
                                   crs: transformer)
            }
            var response = Reply.bytes(w.bytes, contentType: Reply.geoJSON, compressible: true, etag: etag, request: request)
            response.headers[.contentCrs] = crs.contentCrsHeader
            return response
        }
    }

    // MARK: - Part 3: filters and queryables

    static let filterConformanceClasses = [
        "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables",
        "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables-query-parameters",
        "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/filter",
        "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/features-filter",
        "http://www.opengis.net/spec/cql2/1.0/conf/cql2-text",
        "http://www.opengis.net/spec/cql2/1.0/conf/cql2-json",
        "http://www.opengis.net/spec/cql2/1.0/conf/basic-cql2",
        "http://www.opengis.net/spec/cql2/1.0/conf/advanced-comparison-operators",
        "http://www.opengis.net/spec/cql2/1.0/conf/basic-spatial-functions",
        "http://www.opengis.net/spec/cql2/1.0/conf/basic-spatial-functions-plus",
        "http://www.opengis.net/spec/cql2/1.0/conf/spatial-functions",
        "http://www.opengis.net/spec/cql2/1.0/conf/temporal-functions",
    ]

    /// `filter`, in `filter-lang` (cql2-text by default), with coordinates in `filter-crs`
    /// (CRS84 only: a filter's geometries are longitude and latitude).
    static func cql2(_ parameters: Parameters) throws(APIError) -> (text: String, encoding: CQL2Encoding)? {
        let language = try parameters.string("filter-lang").map { text throws(APIError) in
            guard let encoding = CQL2Encoding(rawValue: text.lowercased()) else {
                throw .invalidParameter("filter-lang", "\(Quote.input(text)) is not cql2-text or cql2-json")
            }
            return encoding
        }
        if let crs = parameters.string("filter-crs"), try OGCCRS(crs, parameter: "filter-crs") != .crs84 {
            throw .invalidParameter("filter-crs", "only CRS84: a filter's geometries are in longitude and latitude")
        }
        guard let text = parameters.string("filter") else {
            if language != nil { throw .invalidParameter("filter-lang", "goes with a filter") }
            return nil
        }
        return (text, language ?? .text)
    }

    /// A collection's queryables: its columns as a JSON Schema, which a filter may name.
    func ogcQueryables(_ request: Request, _ context: APIContext) throws -> Response {
        try Endpoints.ogcFormat(request, allowed: [])
        let snapshot = try state.snapshot()
        let name = try request.pathParameter("collection", context)
        let layer = try engine { () throws(EngineError) in try snapshot.layer(name) }
        let url = baseURL(request, context) + Endpoints.ogcPrefix + "/collections/" + Endpoints.pathEncoded(layer.name) + "/queryables"
        return Reply.json(contentType: "application/schema+json", request: request) { w in
            w.beginObject()
            w.key("$schema"); w.string("https://json-schema.org/draft/2020-12/schema")
            w.key("$id"); w.string(url)
            w.key("type"); w.string("object")
            w.key("title"); w.string(layer.name)
            w.key("properties")
            w.beginObject()
            if let geometry = layer.info.geometryColumn {
                // The geometry, which the spatial functions name (Part 3; the role from Part 5).
                w.key(geometry)
                w.beginObject()
                let format = switch layer.family {
                case .points: "geometry-point-or-multi"
                case .lines: "geometry-linestring-or-multi"
                case .polygons: "geometry-polygon-or-multi"
                case .mixed, .table: "geometry-any"
                }
                w.key("format"); w.string(format)
                w.key("x-ogc-role"); w.string("primary-geometry")
                w.endObject()
            }
            for column in layer.info.columns where column.name != layer.info.geometryColumn {
                w.key(column.name)
                w.beginObject()
                let type = switch column.type {
                case .integer: "integer"
                case .real: "number"
                case .boolean: "boolean"
                case .text, .dateTime, .blob: "string"
                }
                w.key("type"); w.string(type)
                if column.type == .dateTime { w.key("format"); w.string("date-time") }
                w.endObject()
            }
            w.endObject()
            w.key("additionalProperties"); w.bool(false)
            w.endObject()
        }
    }

    // MARK: - Parameters

    /// The request's parameters (`f` and `allowed`), after checking that it asks for JSON:
    /// `f=json` or `f=geojson`, and an Accept header (if any) that takes JSON. 406 otherwise.
    @discardableResult
    static func ogcFormat(_ request: Request, allowed: [String]) throws -> Parameters {
        let parameters = try Parameters(request, allowed: ["f"] + allowed.filter { $0 != "f" })
        if let f = parameters.string("f"), !["json", "geojson"].contains(f.lowercased()) {
            throw APIError(.notAcceptable, code: "not_acceptable", detail: "f=\(Quote.input(f)): this API answers JSON only (f=json)",
                           extra: JSONObject([("parameter", .string("f"))]))
        }
        if parameters.string("f") == nil, let accept = request.headers[.accept], !Endpoints.acceptsJSON(accept) {
            throw APIError(.notAcceptable, code: "not_acceptable", detail: "Accept: \(Quote.input(accept)): this API answers JSON only (application/json, application/geo+json)")
        }
        return parameters
    }

    /// Whether an Accept header takes a JSON answer: a media range of JSON (or `+json`),
    /// `application/*` or `*/*`, not with q=0.
    static func acceptsJSON(_ accept: String) -> Bool {
        for item in accept.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let range = parts.first else { continue }
            let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            guard quality > 0 else { continue }
            if ["*/*", "application/*", "application/json", "application/geo+json"].contains(range) || range.hasSuffix("+json") { return true }
        }
        return false
    }

    /// `bbox=minLon,minLat,maxLon,maxLat` (or six numbers with heights, which are set aside).
    static func bbox(_ text: String) throws(APIError) -> BBox {
        let numbers = text.split(separator: ",", omittingEmptySubsequences: false).map { Parameters.number(String($0)) }
        guard numbers.count == 4 || numbers.count == 6, numbers.allSatisfy({ $0 != nil }) else {
            throw .invalidParameter("bbox", "\(Quote.input(text)) is not 4 numbers minLon,minLat,maxLon,maxLat (or 6 with heights)")
        }
        let v = numbers.compactMap { $0 }
        return v.count == 4 ? BBox(minLon: v[0], minLat: v[1], maxLon: v[2], maxLat: v[3]) : BBox(minLon: v[0], minLat: v[1], maxLon: v[3], maxLat: v[4])
    }

    /// `datetime`: an instant, `start/end`, or an interval open at one end (`../end`,
    /// `start/..`, or empty). RFC 3339 date-times in UTC, or dates (a whole day).
    static func datetime(_ text: String) throws(APIError) -> TimeRange {
        func instant(_ part: Substring, end: Bool) throws(APIError) -> UTCTime? {
            if part.isEmpty || part == ".." { return nil }
            if let time = UTCTime.parse(String(part)) { return time }
            // A date alone: from the start of the day, or to its end.
            if part.count == 10, let day = UTCTime.parse(part + "T00:00:00Z") { return end ? UTCTime(seconds: day.seconds + 86_399) : day }
            throw .invalidParameter("datetime", "\(Quote.input(String(part))) is not a UTC date-time such as 2019-04-16T12:00:00Z (or a date such as 2019-04-16)")
        }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        switch parts.count {
        case 1:
            guard text != ".." && !text.isEmpty else { throw .invalidParameter("datetime", "an instant cannot be open ('..')") }
            // A date alone is the whole day.
            return TimeRange(start: try instant(parts[0], end: false), end: try instant(parts[0], end: true))
        case 2:
            let range = TimeRange(start: try instant(parts[0], end: false), end: try instant(parts[1], end: true))
            if let start = range.start, let end = range.end, start > end {
                throw .invalidParameter("datetime", "the interval \(Quote.input(text)) ends before it starts")
            }
            return range
        default:
            throw .invalidParameter("datetime", "\(Quote.input(text)) is not an instant or an interval START/END")
        }
    }
}

// MARK: - Routes, with their OpenAPI operations (served whole at /openapi.json)

extension Endpoints {
    /// OGC API – Features, Part 1.
    static let ogcRoutes: [Route] = [
        Route(.get, "/ogc", { try $0.ogcLanding($1, $2) }, openAPI: #"""
            {
              "tags": ["OGC API – Features"],
              "summary": "OGC API – Features landing page: links to the API definition (service-desc), the conformance classes and the collections",
              "parameters": [{"$ref": "#/components/parameters/f"}],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "title, description, links.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/LandingPage"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "406": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/ogc/conformance", { try $0.ogcConformance($1, $2) }, openAPI: #"""
            {
              "tags": ["OGC API – Features"],
              "summary": "The conformance classes implemented: Features Part 1 Core, GeoJSON and OpenAPI 3.0; Tiles Part 1 Core, TileSet, TileSets list, GeoData tilesets, TileMatrixSet and MVT",
              "parameters": [{"$ref": "#/components/parameters/f"}],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "conformsTo: the classes' URIs.", "content": {"application/json": {"schema": {"type": "object", "required": ["conformsTo"], "properties": {"conformsTo": {"type": "array", "items": {"type": "string"}}}}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "406": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/ogc/collections", { try await $0.ogcCollections($1, $2) }, openAPI: #"""
            {
              "tags": ["OGC API – Features"],
              "summary": "Every layer of the store as a collection (attribute tables as features without geometry)",
              "parameters": [{"$ref": "#/components/parameters/f"}],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "links and collections.", "content": {"application/json": {"schema": {"type": "object", "required": ["links", "collections"], "properties": {"links": {"type": "array", "items": {"$ref": "#/components/schemas/Link"}}, "collections": {"type": "array", "items": {"$ref": "#/components/schemas/Collection"}}}}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "406": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/ogc/collections/{collection}", { try await $0.ogcCollection($1, $2) }, openAPI: #"""
            {
              "tags": ["OGC API – Features"],
              "summary": "One collection: its extent (CRS84 box; the interval of a layer with time) and links",
              "parameters": [{"$ref": "#/components/parameters/collection"}, {"$ref": "#/components/parameters/f"}],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "The collection.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Collection"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "406": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/ogc/collections/{collection}/items", { try await $0.ogcItems($1, $2) }, openAPI: #"""
            {
              "tags": ["OGC API – Features"],
              "summary": "A page of a collection's features, in the layer's order; any other parameter named like a column filters on that column (equal, text exactly, numbers by value)",
              "parameters": [
                {"$ref": "#/components/parameters/collection"},
                {"name": "limit", "in": "query", "style": "form", "explode": false, "schema": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 10}},
                {"name": "offset", "in": "query", "schema": {"type": "integer", "minimum": 0, "maximum": 2147483647, "default": 0}, "description": "Features to skip; the next and prev links carry it."},
                {"name": "after", "in": "query", "schema": {"type": "integer", "format": "int64"}, "description": "Only features whose id (fid) is greater: keyset paging, which the next link of a layer kept in PostgreSQL carries."},
                {"name": "bbox", "in": "query", "style": "form", "explode": false, "schema": {"type": "array", "oneOf": [{"minItems": 4, "maxItems": 4}, {"minItems": 6, "maxItems": 6}], "items": {"type": "number"}}, "description": "minLon,minLat,maxLon,maxLat in CRS84 (or 6 numbers, with heights): only features whose geometry meets the box (minLon > maxLon crosses the antimeridian)."},
                {"name": "datetime", "in": "query", "style": "form", "explode": false, "schema": {"type": "string"}, "example": "2019-04-16T12:00:00Z/..", "description": "An instant or an interval (.. for an open end), UTC. Only on layers with time: a time-series table (each row's interval) and its point layer (features with an observation then)."},
                {"name": "crs", "in": "query", "schema": {"type": "string", "enum": ["http://www.opengis.net/def/crs/OGC/1.3/CRS84", "http://www.opengis.net/def/crs/EPSG/0/4326", "http://www.opengis.net/def/crs/EPSG/0/5514"]}, "description": "The answer's CRS (OGC API – Features Part 2), in its axis order; Content-Crs names it."},
                {"name": "filter", "in": "query", "schema": {"type": "string"}, "example": "classif = 'urban' AND owner <> 'x'", "description": "A CQL2 filter (Part 3) on the queryables: comparisons, LIKE, IN, BETWEEN, IS NULL, the spatial functions (S_INTERSECTS … S_EQUALS, on WKT, BBOX or GeoJSON in lon/lat) and the temporal ones (T_AFTER … T_STARTS, on TIMESTAMP, DATE, INTERVAL)."},
                {"name": "filter-lang", "in": "query", "schema": {"type": "string", "enum": ["cql2-text", "cql2-json"], "default": "cql2-text"}},
                {"name": "filter-crs", "in": "query", "schema": {"type": "string", "enum": ["http://www.opengis.net/def/crs/OGC/1.3/CRS84"]}},
                {"name": "bbox-crs", "in": "query", "schema": {"type": "string", "enum": ["http://www.opengis.net/def/crs/OGC/1.3/CRS84", "http://www.opengis.net/def/crs/EPSG/0/4326", "http://www.opengis.net/def/crs/EPSG/0/5514"]}, "description": "The CRS of bbox, in its axis order."},
                {"name": "properties", "in": "query", "style": "form", "explode": true, "schema": {"type": "object", "additionalProperties": {"type": "string"}}, "description": "NAME=value for any column NAME of the layer."},
                {"$ref": "#/components/parameters/f"}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "A GeoJSON FeatureCollection with links (self, collection, next, prev), timeStamp, numberMatched and numberReturned.", "content": {"application/geo+json": {"schema": {"$ref": "#/components/schemas/FeatureCollection"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "406": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/ogc/collections/{collection}/queryables", { try $0.ogcQueryables($1, $2) }, openAPI: #"""
            {
              "tags": ["OGC API – Features"],
              "summary": "The properties a filter may name: the collection's columns as a JSON Schema (Part 3)",
              "parameters": [{"$ref": "#/components/parameters/collection"}, {"$ref": "#/components/parameters/f"}],
              "responses": {
                "200": {"description": "A JSON Schema of the columns.", "content": {"application/schema+json": {"schema": {"type": "object"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "406": {"$ref": "#/components/responses/Problem"},
                "414": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.get, "/ogc/collections/{collection}/items/{featureId}", { try await $0.ogcItem($1, $2) }, openAPI: #"""
            {
              "tags": ["OGC API – Features"],
              "summary": "One feature by its fid",
              "parameters": [
                {"$ref": "#/components/parameters/collection"},
                {"name": "featureId", "in": "path", "required": true, "schema": {"type": "integer"}},
                {"name": "crs", "in": "query", "schema": {"type": "string", "enum": ["http://www.opengis.net/def/crs/OGC/1.3/CRS84", "http://www.opengis.net/def/crs/EPSG/0/4326", "http://www.opengis.net/def/crs/EPSG/0/5514"]}, "description": "The answer's CRS, in its axis order; Content-Crs names it."},
                {"$ref": "#/components/parameters/f"}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "A GeoJSON Feature with links (self, collection).", "content": {"application/geo+json": {"schema": {"type": "object"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "406": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
    ]
}
