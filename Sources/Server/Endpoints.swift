// The endpoints of docs/HTTP_API.md. Each one reads and checks its parameters first (400 naming
// the parameter), takes the current snapshot once (503 while loading), and answers from that
// snapshot alone, so a reload in the middle of a request never mixes two versions of the data.

import Engine
import Foundation
import Geometry
import Hummingbird
import QueryLanguage
import Store
import VectorTiles

struct Endpoints: Sendable {
    let state: EngineState
    let configuration: ServerConfiguration
    let metrics: HTTPMetrics
    /// Where the heavy endpoints (query, schedule check, route, tiles) run their work; the
    /// light ones (containing, nearest, here, air, …) answer on the request's own task.
    let heavy: WorkPool
    let connections: ConnectionLimiter

    // MARK: - Layers

    func layers(_ request: Request, _ context: APIContext) throws -> Response {
        _ = try Parameters(request, allowed: [])
        let snapshot = try state.snapshot()
        return Reply.json(request: request) { w in
            w.beginObject()
            w.key("layers")
            w.beginArray()
            for layer in snapshot.layers {
                w.beginObject()
                w.key("name"); w.string(layer.name)
                w.key("kind"); w.string(layer.info.kind.rawValue)
                w.key("family"); w.string(layer.family.rawValue)
                w.key("geometry_type"); if let type = layer.info.geometryType { w.string(type) } else { w.null() }
                w.key("count"); w.integer(Int64(layer.rowCount))
                w.key("bounds"); Output.bounds(&w, layer.bounds)
                w.key("columns")
                w.beginArray()
                for column in layer.info.columns where column.name != layer.info.geometryColumn {
                    w.beginObject()
                    w.key("name"); w.string(column.name)
                    w.key("type"); w.string(column.typeDescription)
                    w.endObject()
                }
                w.endArray()
                if let series = snapshot.timeSeriesByLayer[layer.name] {
                    w.key("time_series")
                    w.beginObject()
                    w.key("table"); w.string(series.table)
                    w.key("columns"); w.beginArray(); for column in series.columns { w.string(column) }; w.endArray()
                    w.endObject()
                }
                if let link = layer.info.timeSeries { w.key("time_series_of"); w.string(link.keyLayer) }
                w.endObject()
            }
            w.endArray()
            w.key("tilesets")
            w.beginArray()
            for name in snapshot.tileSets.keys.sorted() {
                w.beginObject()
                w.key("name"); w.string(name)
                w.key("tilejson"); w.string("/v1/tiles/\(Endpoints.pathEncoded(name)).json")
                w.endObject()
            }
            w.endArray()
            w.endObject()
        }
    }

    // MARK: - Containing

    func containing(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Parameters(request, allowed: ["lon", "lat", "geometry"])
        let point = try parameters.position()
        let mode = GeometryMode(try parameters.bool("geometry"))
        let snapshot = try state.snapshot()
        let name = try request.pathParameter("layer", context)
        var layer = try engine { () throws(EngineError) in try snapshot.layer(name) }
        if layer.fetchesRows {
            // Its polygons around the point, fetched on the heavy-work pool (the hot path, a
            // layer in memory, stays free of the hop).
            let kept = layer
            layer = try await heavyWork(context, snapshot) { budget in
                try engine { () throws(EngineError) in try snapshot.rows(of: kept, for: .containing(point), deadline: budget.deadline) }
            }
        }
        let matches = try engine { () throws(EngineError) in try snapshot.containing(layer, at: point) }
        return try Reply.json(contentType: Reply.geoJSON, request: request, limit: snapshot.limits.maxResponseBytes) { w in
            Output.collection(&w, layer: layer, query: point, distances: false, warnings: snapshot.coordinateWarnings(point)) { w in
                for match in matches { Output.match(&w, layer, match, geometry: mode) }
            }
        }
    }

    // MARK: - Nearest

    func nearest(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Parameters(request, allowed: ["lon", "lat", "k", "within_m", "where", "geometry"], attributes: true)
        let point = try parameters.position()
        let k = try parameters.int("k", default: 1, range: nil)  // checked by `nearest` (`Check.k`)
        let within = try parameters.double("within_m")
        let mode = GeometryMode(try parameters.bool("geometry"))
        let snapshot = try state.snapshot()
        let name = try request.pathParameter("layer", context)
        let kept = try engine { () throws(EngineError) in try snapshot.layer(name) }
        let measured = parameters.string("where").map { $0.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) } } ?? []
        let stations = snapshot.stations.flatMap { $0.layer === kept ? $0 : nil }
        let attributes = parameters.attributes
        return try await readsDatabase(context, snapshot) {
            if !(measured.isEmpty && attributes.isEmpty) {
                // Filtered after the fetch, the nearest rows fetched might not hold the k nearest that pass.
                try engine { () throws(EngineError) in
                    try kept.requireRows(for: "with where= or attribute filters on /nearest (ask POST /v1/query: FIND \(kept.name) NEAREST k TO POINT(…) WHERE …)")
                }
            }
            let layer = try engine { () throws(EngineError) in try snapshot.rows(of: kept, for: .nearest(k: k, to: point, within: within)) }
            let filter: FeatureFilter?
            do throws(FilterError) {
                filter = try Query.filter(on: layer, in: snapshot, measuring: measured, equal: attributes)
            } catch {
                throw APIError.invalidParameter(error.parameter, error.message)
            }
            let matches = try engine { () throws(EngineError) in try snapshot.nearest(layer, to: point, k: k, within: within, filter: filter) }
            let readings = try stations.map { stations in try engine { () throws(EngineError) in try snapshot.readings(stations, matches) } }
            return try Reply.json(contentType: Reply.geoJSON, request: request, limit: snapshot.limits.maxResponseBytes) { w in
                Output.collection(&w, layer: layer, query: point, distances: true, warnings: snapshot.coordinateWarnings(point)) { w in
                    for (n, match) in matches.enumerated() {
                        Output.match(&w, layer, match, geometry: mode, reading: readings?[n])
                    }
                }
            }
        }
    }

    // MARK: - Route

    func route(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Parameters(request, allowed: ["from", "to", "network", "profile", "max_snap_m", "departure"])
        let from = try parameters.pair("from"), to = try parameters.pair("to")
        let profileName = parameters.string("profile") ?? "foot"
        guard let profile = WalkingProfile(rawValue: profileName) else {
            throw APIError.invalidParameter("profile", "unknown profile \(Quote.input(profileName)) (profiles: \(WalkingProfile.names))")
        }
        let maxSnap = try parameters.double("max_snap_m")
        let network = parameters.string("network")
        let departure = try parameters.string("departure").map { text throws(APIError) in
            guard let date = RouteRequest.departure(parsing: text) else {
                throw APIError.invalidParameter("departure", "\(Quote.input(text)) is not a time: e.g. 2026-11-28T13:55:00%2B01:00, or 2026-11-28T13:55 in Prague")
            }
            return date
        }
        let snapshot = try state.snapshot()
        return try await heavyWork(context, snapshot) { budget in
            let answer = try engine { () throws(EngineError) in
                try snapshot.route(RouteRequest(from: .point(from), to: .point(to), profile: profile, maxSnapMetres: maxSnap, departure: departure),
                                   on: snapshot.network(network), deadline: budget.deadline)
            }
            return try Reply.json(request: request, limit: snapshot.limits.maxResponseBytes) { w in Output.route(&w, answer) }
        }
    }

    // MARK: - Here

    /// The home screen of an app in one call: what contains the point, the nearest station with
    /// its latest values, and whether the point is inside the mapped area at all.
    func here(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Parameters(request, allowed: ["lon", "lat", "area"])
        let point = try parameters.position()
        let snapshot = try state.snapshot()
        let areaName = parameters.string("area") ?? configuration.areaLayer
        return try await readsDatabase(context, snapshot) {
            let answer = try engine { () throws(EngineError) in
                let area = try areaName.map { name throws(EngineError) in try snapshot.layer(name) }
                return try snapshot.here(at: point, area: area)
            }
            return Reply.json(request: request) { w in Output.here(&w, answer) }
        }
    }

    /// Runs `work`, which may read time series or the rows of a layer kept in the database, on
    /// the heavy-work pool when the snapshot has a database (a PostGIS store waits for
    /// PostgreSQL there, never on the cooperative pool or an event loop), else at once.
    func readsDatabase<T: Sendable>(_ context: APIContext, _ snapshot: Snapshot, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        snapshot.readsSeriesFromStore ? try await heavyWork(context, snapshot) { _ in try work() } : try work()
    }

    /// Runs a heavy request's work on the pool (`WorkPool`) with the request's one budget: its
    /// seconds start when the work does, and its deadline ends early when the client goes
    /// (`ConnectionLimiter.departure`), which also drops the job if it is still queued. Every
    /// heavy endpoint comes through here and hands `budget.deadline` to its Engine operation.
    func heavyWork<T: Sendable>(_ context: APIContext, _ snapshot: Snapshot,
                                _ work: @escaping @Sendable (_ budget: RequestBudget) throws -> T) async throws -> T {
        let departure = connections.departure(of: context.channel)
        let limits = snapshot.limits
        return try await heavy.run(cancellation: departure) { try work(RequestBudget(limits: limits, cancellation: departure)) }
    }

    // MARK: - Air

    /// "What is the air like where I am?" for the air-quality app (`Snapshot.air`).
    func air(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Parameters(request, allowed: ["lon", "lat"])
        let point = try parameters.position()
        let snapshot = try state.snapshot()
        let districts = try? snapshot.layer(configuration.districtLayer)
        return try await readsDatabase(context, snapshot) {
            let report = try engine { () throws(EngineError) in try snapshot.air(at: point, districts: districts) }
            return Reply.json(request: request) { w in Output.air(&w, report) }
        }
    }

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
        // A stored compression goes out only to a client that accepts it (MBTiles tiles are
        // often gzip; `identity` or no Accept-Encoding gets them inflated); anything else that
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

    /// `W/"…"`: a 64-bit hash of an answer's bytes (or a stored tile's), in hex. Not
    /// cryptographic: it only has to change when the bytes do, the same on every replica and
    /// after every restart (so not Swift's seeded `Hasher`). FNV-1a's step taken eight bytes at
    /// a time (every step a bijection of the state, so one changed word always changes it),
    /// then MurmurHash3's finaliser so every bit of the tag depends on every bit of the state.
    static func weakETag(_ bytes: [UInt8]) -> String { weakETag(bytes[...]) }

    static func weakETag(_ bytes: ArraySlice<UInt8>) -> String {
        let prime: UInt64 = 0x0000_0100_0000_01B3
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(bytes.count)
        bytes.withUnsafeBytes { raw in
            var i = 0
            while i + 8 <= raw.count {
                hash = (hash ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* prime
                i += 8
            }
            while i < raw.count {
                hash = (hash ^ UInt64(raw[i])) &* prime
                i += 1
            }
        }
        hash ^= hash >> 33
        hash = hash &* 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        hash = hash &* 0xc4ce_b9fe_1a85_ec53
        hash ^= hash >> 33
        let hex = String(hash, radix: 16)
        return "W/\"" + String(repeating: "0", count: 16 - hex.count) + hex + "\""
    }

    /// If-None-Match's weak comparison (RFC 9110 §13.1.2): `*`, or any listed tag equal to ours
    /// once the W/ prefixes are set aside.
    static func matches(_ ifNoneMatch: String, etag: String) -> Bool {
        func opaque(_ tag: some StringProtocol) -> String {
            let tag = tag.trimmingCharacters(in: .whitespaces)
            return tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag
        }
        let ours = opaque(etag)
        return ifNoneMatch.split(separator: ",").contains { opaque($0) == "*" || opaque($0) == ours }
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

    /// Where clients reach this server: `--public-url`, else the Host header when it is a plain
    /// host[:port], else the address this connection arrived at.
    func baseURL(_ request: Request, _ context: APIContext) -> String {
        if let url = configuration.publicURL { return url.hasSuffix("/") ? String(url.dropLast()) : url }
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]")
        if let host = request.head.authority, !host.isEmpty, host.count <= 255, host.allSatisfy({ allowed.contains($0) }) {
            return "http://\(host)"
        }
        let local = context.channel.localAddress
        let host = local?.ipAddress.map { $0.contains(":") ? "[\($0)]" : $0 } ?? configuration.host
        return "http://\(host):\(local?.port ?? configuration.port)"
    }

    static func pathEncoded(_ name: String) -> String {
        name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? name
    }

    // MARK: - Query

    func query(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Parameters(request, allowed: ["format"])
        let format: AnswerFormat
        if let given = parameters.string("format") {
            guard let known = AnswerFormat(rawValue: given) else { throw APIError.invalidParameter("format", "\(Quote.input(given)) is not json, geojson or csv") }
            format = known
        } else {
            let accept = request.headers[.accept] ?? ""
            format = accept.contains(Reply.geoJSON) ? .geojson : accept.contains(Reply.csv) ? .csv : .json
        }
        var text = try await Endpoints.readBody(request, limit: configuration.maxBodyBytes, timeout: configuration.requestTimeout)
        var bound: [QueryValue] = []
        if (request.headers[.contentType] ?? "").hasPrefix("application/json") {
            guard case .object(let object)? = try? JSON.parse(text), let query = object["query"]?.string else {
                throw APIError(.badRequest, code: "invalid_body", detail: "a JSON body must be an object with the query text in \"query\"; or send the text as text/plain")
            }
            text = query
            bound = try object["params"].map(Endpoints.boundParameters) ?? []
        }
        guard !text.allSatisfy(\.isWhitespace) else {
            throw APIError(.badRequest, code: "empty_query", detail: "the body holds no query; send statements such as SHOW LAYERS")
        }
        let snapshot = try state.snapshot()
        let query = text, values = bound
        let contentType = switch format {
        case .json: Reply.json
        case .geojson: Reply.geoJSON
        case .csv: Reply.csvWithHeader
        }
        // INSERT, UPDATE and DELETE need a write token for their layers, checked before any
        // statement runs; a text that writes (or names fences) runs on the writes' thread,
        // through the engine.
        let written: [String]
        let fences: (any: Bool, changes: Bool)
        do { (written, fences) = (try Query.writtenLayers(query), try Query.fenceStatements(query)) } catch { throw APIError.query(error) }
        // Fences live in the engine: a text that names them runs through it too, and adding or
        // dropping one needs a token for every layer, as PUT /v1/fences does.
        if fences.changes, try writeGrant(request) != nil {
            throw APIError(.forbidden, code: "forbidden", detail: "fences need a token that covers every layer (or the admin token)")
        }
        if !written.isEmpty || fences.any {
            if !written.isEmpty { try authorizeWrite(request, layers: written.map { (try? snapshot.layer($0).name) ?? $0 }) }
            let departure = connections.departure(of: context.channel)
            let body = try await state.writing { host in
                var budget = RequestBudget(limits: snapshot.limits, cancellation: departure)
                do {
                    return try Query.answer(query, values, on: host.snapshot, writingTo: host, format: format, budget: &budget)
                } catch let error as QueryError {
                    throw APIError.query(error)
                }
            }
            return Reply.bytes(body, contentType: contentType, compressible: true, request: request)
        }
        return try await heavyWork(context, snapshot) { budget in
            var budget = budget
            let body: [UInt8]
            do {
                body = try Query.answer(query, values, on: snapshot, format: format, budget: &budget)
            } catch let error as QueryError {
                throw APIError.query(error)
            }
            return Reply.bytes(body, contentType: contentType, compressible: true, request: request)
        }
    }

    /// A JSON body's `"params"`: the values of `$1`, `$2`, … (or the `?`s) in order. A point is
    /// `{"lon": 14.42, "lat": 50.09}`; names are never parameters (quote them: `"typ stanice"`).
    static func boundParameters(_ json: JSONValue) throws -> [QueryValue] {
        guard case .array(let values) = json else {
            throw APIError(.badRequest, code: "invalid_body", detail: "\"params\" must be an array: the values of $1, $2, … in order")
        }
        return try values.enumerated().map { index, value in
            switch value {
            case .null: return .null
            case .bool(let b): return .bool(b)
            case .integer(let number): return .number(Double(number))
            case .double(let number): return .number(number)
            case .string(let text): return .text(text)
            case .object(let object):
                if object.keys.count == 2, let lon = object["lon"]?.number, let lat = object["lat"]?.number {
                    return .point(Point(lon: lon, lat: lat))
                }
                fallthrough
            case .array:
                throw APIError(.badRequest, code: "invalid_body",
                               detail: "params[\(index)] (the value of $\(index + 1)) is not a number, text, true, false, null or a point {\"lon\": …, \"lat\": …}")
            }
        }
    }

    /// The body as UTF-8 text, at most `limit` bytes (413 beyond; checked on Content-Length
    /// before reading when the client sends one) and within `timeout` (408 for a client that
    /// stops sending).
    static func readBody(_ request: Request, limit: Int, timeout: Duration) async throws -> String {
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw APIError(.contentTooLarge, code: "body_too_large", detail: "the body is \(length) bytes; at most \(limit) are accepted")
        }
        let body = request.body
        let bytes = try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
            group.addTask {
                var collected: [UInt8] = []
                for try await buffer in body {
                    guard collected.count + buffer.readableBytes <= limit else {
                        throw APIError(.contentTooLarge, code: "body_too_large", detail: "the body is larger than \(limit) bytes")
                    }
                    collected += buffer.readableBytesView
                }
                return collected
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let bytes = first else {
                throw APIError(.requestTimeout, code: "body_timeout", detail: "the body did not arrive within \(timeout)")
            }
            return bytes
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw APIError(.badRequest, code: "invalid_body", detail: "the body is not UTF-8 text")
        }
        return text
    }

    // MARK: - Operations

    func health(_ request: Request, _ context: APIContext) throws -> Response {
        let snapshot = try state.snapshot()
        return Reply.json(request: request) { w in
            w.beginObject()
            w.key("status"); w.string("ok")
            w.key("loaded_at"); w.string(snapshot.loadedAt.formatted(.iso8601))
            w.key("load_seconds"); w.number((snapshot.loadSeconds * 1000).rounded() / 1000)
            w.key("layers"); w.integer(Int64(snapshot.layers.count))
            w.key("tilesets"); w.integer(Int64(snapshot.tileSets.count))
            w.key("warnings"); w.integer(Int64(snapshot.warnings.count))
            w.endObject()
        }
    }

    /// `/readyz`: 200 when data requests can be answered, else the problem that says why
    /// (503 `snapshot_loading`, `snapshot_unavailable`, `database_unavailable`).
    func readiness(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try Parameters(request, allowed: [])
        switch await state.ready() {
        case .success:
            return Reply.json(request: request) { w in
                w.beginObject()
                w.key("status"); w.string("ready")
                w.endObject()
            }
        case .failure(let problem):
            throw problem
        }
    }

    func metricsText(_ request: Request, _ context: APIContext) throws -> Response {
        let snapshot = state.currentSnapshot
        var text = metrics.render(snapshotLoadedAt: snapshot?.loadedAt, snapshotLoadSeconds: snapshot?.loadSeconds)
        text += Endpoints.capacityMetrics(connections: connections.counts, heavy: heavy.counts)
        return Reply.text(text, contentType: "text/plain; version=0.0.4; charset=utf-8", request: request)
    }

    /// The connection limits' and the heavy pool's gauges and counters.
    static func capacityMetrics(connections: (open: Int, peak: Int, totals: ConnectionLimiter.Counts), heavy: (queued: Int, running: Int, refused: Int)) -> String {
        func header(_ name: String, _ type: String, _ help: String) -> String { "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n" }
        var out = header("vltava_connections_open", "gauge", "Connections open now.")
        out += "vltava_connections_open \(connections.open)\n"
        out += header("vltava_connections_open_peak", "gauge", "The most connections open at once since the start.")
        out += "vltava_connections_open_peak \(connections.peak)\n"
        out += header("vltava_connections_closed_total", "counter", "Connections the server closed for its limits, by reason.")
        out += "vltava_connections_closed_total{reason=\"evicted\"} \(connections.totals.evicted)\n"
        out += "vltava_connections_closed_total{reason=\"header_timeout\"} \(connections.totals.headerTimeouts)\n"
        out += "vltava_connections_closed_total{reason=\"refused\"} \(connections.totals.refused)\n"
        out += header("vltava_heavy_running", "gauge", "Heavy requests (query, schedule check, route, tiles) working now.")
        out += "vltava_heavy_running \(heavy.running)\n"
        out += header("vltava_heavy_queued", "gauge", "Heavy requests waiting for a thread.")
        out += "vltava_heavy_queued \(heavy.queued)\n"
        out += header("vltava_heavy_busy_total", "counter", "Heavy requests answered 503 busy.")
        out += "vltava_heavy_busy_total \(heavy.refused)\n"
        return out
    }

    /// As `application/vnd.oai.openapi+json;version=3.0` to a client that asks for it (OGC
    /// API's `service-desc`), else as `application/json`.
    func openAPI(_ request: Request, _ context: APIContext) throws -> Response {
        let openAPIType = (request.headers[.accept] ?? "").contains("application/vnd.oai.openapi+json")
        return Reply.bytes(Array(OpenAPI.document.utf8), contentType: openAPIType ? Endpoints.openAPIMediaType : Reply.json,
                           compressible: true, request: request)
    }

    /// Disabled (404 `admin_disabled`) unless a token is configured; then it needs
    /// `Authorization: Bearer TOKEN` (401 otherwise).
    func reload(_ request: Request, _ context: APIContext) async throws -> Response {
        guard let token = configuration.adminToken, !token.isEmpty else {
            throw APIError(.notFound, code: "admin_disabled", detail: "the admin API is disabled: start the server with --admin-token-file, VLTAVA_ADMIN_TOKEN or --admin-token")
        }
        let given = request.headers[.authorization] ?? ""
        guard given.hasPrefix("Bearer "), Endpoints.constantTimeEqual(Array(given.utf8.dropFirst(7)), Array(token.utf8)) else {
            throw APIError(.unauthorized, code: "unauthorized", detail: "send Authorization: Bearer TOKEN with the admin token",
                           headers: [.wwwAuthenticate: "Bearer realm=\"vltava-admin\""])
        }
        let snapshot: Snapshot
        do {
            snapshot = try await state.reload()
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError(.internalServerError, code: "reload_failed", detail: "the reload failed and the previous data stays: \(error)")
        }
        context.logger.info("snapshot reloaded", metadata: ["layers": "\(snapshot.layers.count)", "load_seconds": "\(snapshot.loadSeconds)"])
        context.logger.logWarnings(of: snapshot)
        return Reply.json(request: request) { w in
            w.beginObject()
            w.key("status"); w.string("reloaded")
            w.key("loaded_at"); w.string(snapshot.loadedAt.formatted(.iso8601))
            w.key("load_seconds"); w.number((snapshot.loadSeconds * 1000).rounded() / 1000)
            w.key("layers"); w.integer(Int64(snapshot.layers.count))
            w.key("warnings"); w.integer(Int64(snapshot.warnings.count))
            w.endObject()
        }
    }

    /// Compares every byte whatever the first difference, so the time taken tells nothing about
    /// how much of a guessed token was right.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for i in 0..<max(a.count, b.count) {
            difference |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
        }
        return difference == 0
    }

}

/// Runs an engine call and answers its error as a problem (`APIError.engine`).
func engine<T>(_ body: () throws(EngineError) -> T) throws(APIError) -> T {
    do {
        return try body()
    } catch {
        throw APIError.engine(error)
    }
}
