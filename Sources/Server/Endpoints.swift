// The endpoints of docs/HTTP_API.md. Each one reads and checks its parameters first (400 naming
// the parameter), takes the current snapshot once (503 while loading), and answers from that
// snapshot alone, so a reload in the middle of a request never mixes two versions of the data.

import Engine
import Foundation
import Geometry
import Hummingbird
import QueryLanguage
import Routing
import Store
import VectorTiles

struct Endpoints: Sendable {
    let state: EngineState
    let configuration: ServerConfiguration
    let metrics: HTTPMetrics

    // MARK: - Layers

    func layers(_ request: Request, _ context: APIContext) throws -> Response {
        _ = try Parameters(request, allowed: [])
        let snapshot = try state.snapshot()
        let layers: [JSONValue] = snapshot.layers.map { layer in
            var object = JSONObject()
            object["name"] = .string(layer.name)
            object["kind"] = .string(layer.info.kind.rawValue)
            object["family"] = .string(layer.family.rawValue)
            object["geometry_type"] = layer.info.geometryType.map { .string($0) } ?? .null
            object["count"] = .integer(Int64(layer.count))
            object["bounds"] = FeatureJSON.bounds(layer.bounds)
            object["columns"] = .array(layer.info.columns.filter { $0.name != layer.info.geometryColumn }.map { column in
                .object(JSONObject([("name", .string(column.name)), ("type", .string(column.typeDescription))]))
            })
            if let series = snapshot.timeSeriesByLayer[layer.name] {
                object["time_series"] = .object(JSONObject([("table", .string(series.table)), ("columns", .array(series.columns.map { .string($0) }))]))
            }
            if let link = layer.info.timeSeries {
                object["time_series_of"] = .string(link.keyLayer)
            }
            return .object(object)
        }
        let tileSets: [JSONValue] = snapshot.tileSets.keys.sorted().map { name in
            .object(JSONObject([("name", .string(name)), ("tilejson", .string("/v1/tiles/\(Endpoints.pathEncoded(name)).json"))]))
        }
        return Reply.json(.object(JSONObject([("layers", .array(layers)), ("tilesets", .array(tileSets))])), request: request)
    }

    // MARK: - Containing

    func containing(_ request: Request, _ context: APIContext) throws -> Response {
        let parameters = try Parameters(request, allowed: ["lon", "lat", "geometry"])
        let position = try parameters.position()
        let mode = GeometryMode(try parameters.bool("geometry"))
        let name = try request.pathParameter("layer", context)
        let snapshot = try state.snapshot()
        let (layer, matches) = try engine { () throws(EngineError) in
            (try snapshot.layer(name), try snapshot.containing(name, lon: position.lon, lat: position.lat))
        }
        let features = matches.map { FeatureJSON.feature(layer, $0.index, geometry: mode) }
        return Reply.json(Endpoints.collection(layer: layer.name, position: position, features: features), contentType: Reply.geoJSON, request: request)
    }

    // MARK: - Nearest

    func nearest(_ request: Request, _ context: APIContext) throws -> Response {
        let parameters = try Parameters(request, allowed: ["lon", "lat", "k", "within_m", "where", "geometry"], attributes: true)
        let position = try parameters.position()
        let k = try parameters.int("k", default: 1, range: 1...Endpoints.maxK)
        let within = try parameters.double("within_m")
        if let within, within < 0 { throw APIError.invalidParameter("within_m", "must not be negative, got \(within)") }
        let mode = GeometryMode(try parameters.bool("geometry"))
        let name = try request.pathParameter("layer", context)
        let snapshot = try state.snapshot()
        let layer = try engine { () throws(EngineError) in try snapshot.layer(name) }
        let series = snapshot.timeSeriesByLayer[layer.name]
        let filter = try Endpoints.filter(layer: layer, series: series, where: parameters.string("where"), attributes: parameters.attributes)
        let matches = try engine { () throws(EngineError) in
            try snapshot.nearest(name, lon: position.lon, lat: position.lat, k: k, within: within, filter: filter)
        }
        let features = matches.map { match -> JSONValue in
            var extra: [(String, JSONValue)] = [("distance_m", FeatureJSON.metres(match.metres ?? 0))]
            if let series, let key = FeatureJSON.seriesKey(layer, match.index, series) { extra += FeatureJSON.latest(series, key: key) }
            return FeatureJSON.feature(layer, match.index, geometry: mode, extra: extra)
        }
        var collection = Endpoints.collection(layer: layer.name, position: position, features: features)
        if case .object(var object) = collection {
            object["distance_units"] = .string(Endpoints.distanceUnits)
            collection = .object(object)
        }
        return Reply.json(collection, contentType: Reply.geoJSON, request: request)
    }

    static let maxK = 100
    static let distanceUnits = "metres, great-circle on a sphere of R = 6,371,008.8 m"

    /// `where=no2,pm10`: stations whose time series measures every listed column (the engine's
    /// missing-versus-zero rule: a station measures a column if any of its values is non-zero).
    /// `attr.NAME=value`: the attribute equals the value (text as is; numbers and booleans by value).
    static func filter(layer: Layer, series: TimeSeries?, where text: String?, attributes: [(name: String, value: String)]) throws(APIError) -> FeatureFilter? {
        var measured: [String] = []
        if let text {
            guard let series else {
                throw APIError.invalidParameter("where", "layer '\(layer.name)' has no time series; where= names columns of a time series (attr.NAME=value filters attributes)")
            }
            for part in text.split(separator: ",", omittingEmptySubsequences: false) {
                let wanted = part.trimmingCharacters(in: .whitespaces)
                guard let column = series.columns.first(where: { $0.lowercased() == wanted.lowercased() }) else {
                    var message = "'\(wanted)' is not a measured column of '\(series.table)'"
                    if let suggestion = Suggestion.closest(to: wanted, in: series.columns) { message += " — did you mean '\(suggestion)'?" }
                    throw APIError.invalidParameter("where", message + " (columns: \(series.columns.joined(separator: ", ")))")
                }
                measured.append(column)
            }
        }
        let columnNames = layer.info.columns.map(\.name)
        var equalities: [(column: String, value: String)] = []
        for (name, value) in attributes {
            guard let column = columnNames.first(where: { $0 == name }) ?? columnNames.first(where: { $0.lowercased() == name.lowercased() }) else {
                var message = "layer '\(layer.name)' has no column '\(name)'"
                if let suggestion = Suggestion.closest(to: name, in: columnNames) { message += " — did you mean '\(suggestion)'?" }
                throw APIError.invalidParameter("attr.\(name)", message)
            }
            equalities.append((column, value))
        }
        if measured.isEmpty && equalities.isEmpty { return nil }
        // Decided once per feature here, so the search's filter is an array lookup.
        let keep: [Bool] = (0..<layer.count).map { index in
            let properties = layer.properties[index]
            for (column, value) in equalities where !matches(properties[column], value) { return false }
            if let series, !measured.isEmpty {
                guard let key = FeatureJSON.seriesKey(layer, index, series) else { return false }
                for column in measured where !series.measures(key, column) { return false }
            }
            return true
        }
        return { keep[$0] }
    }

    static func matches(_ attribute: AttributeValue?, _ text: String) -> Bool {
        switch attribute {
        case .text(let value)?, .json(let value)?: value == text
        case .integer(let value)?: Int64(text) == value || Double(text) == Double(value)
        case .real(let value)?: Double(text) == value
        case .bool(let value)?: ["true", "1"].contains(text.lowercased()) ? value : ["false", "0"].contains(text.lowercased()) ? !value : false
        case .null?, nil: false
        }
    }

    // MARK: - Route

    func route(_ request: Request, _ context: APIContext) throws -> Response {
        let parameters = try Parameters(request, allowed: ["from", "to", "network", "profile", "max_snap_m"])
        let from = try parameters.pair("from"), to = try parameters.pair("to")
        let profileName = parameters.string("profile") ?? "foot"
        guard let profile = WalkingProfile(rawValue: profileName) else {
            throw APIError.invalidParameter("profile", "unknown profile '\(profileName)' (profiles: \(WalkingProfile.names))")
        }
        let maxSnap = try parameters.double("max_snap_m") ?? 500
        guard maxSnap > 0 && maxSnap <= 5000 else { throw APIError.invalidParameter("max_snap_m", "must be more than 0 and at most 5000 metres, got \(maxSnap)") }
        let snapshot = try state.snapshot()
        let networkName = try Endpoints.networkName(parameters.string("network"), in: snapshot)
        let network = try engine { () throws(EngineError) in try snapshot.network(networkName) }
        let route: Route
        do {
            route = try network.withRouter(profile: profile, metresPerSecond: profile.kmh / 3.6, maxSnapMetres: maxSnap) { (router) throws(RouteError) -> Route in
                try router.route(from: Point(lon: from.lon, lat: from.lat), to: Point(lon: to.lon, lat: to.lat))
            }
        } catch {
            throw APIError.route(error)
        }
        return Reply.json(Endpoints.osrm(route, network: network.layerName, profile: profile.rawValue), request: request)
    }

    /// The network a request names, or the only line layer when it names none; with several the
    /// client must choose.
    static func networkName(_ given: String?, in snapshot: Snapshot) throws(APIError) -> String {
        if let given { return given }
        let lines = snapshot.layers.filter { $0.family == .lines }.map(\.name)
        guard lines.count == 1, let only = lines.first else {
            throw APIError.missingParameter("network", "a line layer to walk along (line layers: \(lines.joined(separator: ", ")))")
        }
        return only
    }

    /// The answer in OSRM's shape (`Route.osrmJSON`), naming the network and the profile.
    static func osrm(_ route: Route, network: String, profile: String) -> JSONValue {
        route.osrmJSON(extra: [("network", .string(network)), ("profile", .string(profile))])
    }

    // MARK: - Here

    /// The home screen of an app in one call: what contains the point, the nearest station with
    /// its latest values, and whether the point is inside the mapped area at all.
    func here(_ request: Request, _ context: APIContext) throws -> Response {
        let parameters = try Parameters(request, allowed: ["lon", "lat", "area"])
        let position = try parameters.position()
        let snapshot = try state.snapshot()
        let areaName = parameters.string("area") ?? configuration.areaLayer ?? Endpoints.defaultArea(snapshot)
        var answer = JSONObject()
        answer["query"] = .object(JSONObject([("lon", .double(position.lon)), ("lat", .double(position.lat))]))
        if let areaName {
            let check = try engine { () throws(EngineError) in try snapshot.areaCheck(areaName, lon: position.lon, lat: position.lat) }
            answer["area"] = .object(JSONObject([
                ("layer", .string(try engine { () throws(EngineError) in try snapshot.layer(areaName).name })),
                ("inside", .bool(check.inside)),
                ("reason", check.reason.map { .string($0) } ?? .null),
                ("metres_outside", FeatureJSON.metres(check.metresOutside)),
                ("message", .string(check.message)),
            ]))
        } else {
            answer["area"] = .null
        }
        var containing: [JSONValue] = []
        for layer in snapshot.layers where layer.family == .polygons || layer.family == .mixed {
            let matches = try engine { () throws(EngineError) in try snapshot.containing(layer.name, lon: position.lon, lat: position.lat) }
            containing.append(.object(JSONObject([
                ("layer", .string(layer.name)),
                ("features", .array(matches.map { FeatureJSON.feature(layer, $0.index, geometry: .none) })),
            ])))
        }
        answer["containing"] = .array(containing)
        answer["nearest_station"] = .null
        // The station layer is the (first, by name) point layer that has a time series.
        if let name = snapshot.timeSeriesByLayer.keys.sorted().first, let series = snapshot.timeSeriesByLayer[name] {
            let layer = try engine { () throws(EngineError) in try snapshot.layer(name) }
            let match = try engine { () throws(EngineError) in try snapshot.nearest(name, lon: position.lon, lat: position.lat, k: 1) }.first
            if let match {
                var extra: [(String, JSONValue)] = [("layer", .string(layer.name)), ("distance_m", FeatureJSON.metres(match.metres ?? 0))]
                if let key = FeatureJSON.seriesKey(layer, match.index, series) { extra += FeatureJSON.latest(series, key: key) }
                answer["nearest_station"] = FeatureJSON.feature(layer, match.index, geometry: .all, extra: extra)
            }
        }
        answer["distance_units"] = .string(Endpoints.distanceUnits)
        return Reply.json(.object(answer), request: request)
    }

    /// The mapped area when neither the request nor the server names one: the polygon layer
    /// with the largest extent (the city's districts rather than a zoo pavilion).
    static func defaultArea(_ snapshot: Snapshot) -> String? {
        func extent(_ layer: Layer) -> Double {
            layer.bounds.isEmpty ? 0 : (layer.bounds.maxLon - layer.bounds.minLon) * (layer.bounds.maxLat - layer.bounds.minLat)
        }
        let polygonal = snapshot.layers.filter { $0.family == .polygons }
        return polygonal.max { (extent($0), $1.name) < (extent($1), $0.name) }?.name
    }

    // MARK: - Tiles

    func tile(_ request: Request, _ context: APIContext) throws -> Response {
        _ = try Parameters(request, allowed: [])
        let name = try request.pathParameter("tileset", context)
        let z = try Endpoints.tileNumber(request.pathParameter("z", context), "z", below: 31)
        let limit = 1 << z
        let x = try Endpoints.tileNumber(request.pathParameter("x", context), "x", below: limit)
        let y = try Endpoints.tileNumber(request.pathParameter("y", context), "y", below: limit)
        let snapshot = try state.snapshot()
        // The name is a key into the snapshot's registered tile sets, never a file path, so no
        // request can reach a file that was not registered.
        let tiles = try engine { () throws(EngineError) in try snapshot.tileSet(name) }
        let bytes: [UInt8]?
        do {
            bytes = try tiles.tile(z: z, x: x, y: y)
        } catch {
            throw APIError(.internalServerError, code: "tiles_error", detail: error.description)
        }
        guard let bytes else {
            throw APIError(.notFound, code: "tile_not_found", detail: "tile set '\(name)' has no tile \(z)/\(x)/\(y)",
                           extra: JSONObject([("tileset", .string(name)), ("z", .integer(Int64(z))), ("x", .integer(Int64(x))), ("y", .integer(Int64(y)))]))
        }
        // An app revalidates its cached tiles with If-None-Match and gets a bodiless 304 for
        // each unchanged one. The tag is weak (W/) because the same stored bytes may go out
        // gzipped or not, and weak tags are what If-None-Match compares anyway.
        let etag = Endpoints.weakETag(bytes)
        if let ifNoneMatch = request.headers[.ifNoneMatch], Endpoints.matches(ifNoneMatch, etag: etag) {
            var headers = HTTPFields()
            headers[.eTag] = etag
            headers[.cacheControl] = Endpoints.tileCacheControl
            return Response(status: .notModified, headers: headers)
        }
        let encoding = TileEncoding.detect(bytes)
        var response = Reply.bytes(bytes, contentType: encoding.format.contentType, contentEncoding: encoding.compression.contentEncoding,
                                   compressible: !encoding.format.isRaster, request: request)
        response.headers[.cacheControl] = Endpoints.tileCacheControl
        response.headers[.eTag] = etag
        return response
    }

    static let tileCacheControl = "public, max-age=3600"

    /// `W/"…"`: 64-bit FNV-1a of the stored tile, in hex. Not cryptographic: it only has to
    /// change when a re-imported tile set changes the bytes.
    static func weakETag(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
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
            throw APIError.invalidParameter(name, "'\(text)' is not a tile coordinate (a whole number ≥ 0)")
        }
        guard value < limit else { throw APIError.invalidParameter(name, "must be below \(limit), got \(value)") }
        return value
    }

    func tileJSON(_ request: Request, _ context: APIContext) throws -> Response {
        _ = try Parameters(request, allowed: [])
        let name = try request.pathParameter("tileset", context)
        let snapshot = try state.snapshot()
        let tiles = try engine { () throws(EngineError) in try snapshot.tileSet(name) }
        let url = "\(baseURL(request, context))/v1/tiles/\(Endpoints.pathEncoded(name))/{z}/{x}/{y}"
        return Reply.json(tiles.tileJSON(tilesURL: url), request: request)
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
        let format: String
        if let given = parameters.string("format") {
            guard given == "json" || given == "geojson" else { throw APIError.invalidParameter("format", "'\(given)' is not json or geojson") }
            format = given
        } else {
            format = (request.headers[.accept] ?? "").contains(Reply.geoJSON) ? "geojson" : "json"
        }
        var text = try await Endpoints.readBody(request, limit: configuration.maxBodyBytes, timeout: configuration.requestTimeout)
        if (request.headers[.contentType] ?? "").hasPrefix("application/json") {
            guard case .object(let object)? = try? JSON.parse(text), let query = object["query"]?.string else {
                throw APIError(.badRequest, code: "invalid_body", detail: "a JSON body must be an object with the query text in \"query\"; or send the text as text/plain")
            }
            text = query
        }
        guard !text.allSatisfy(\.isWhitespace) else {
            throw APIError(.badRequest, code: "empty_query", detail: "the body holds no query; send statements such as SHOW LAYERS")
        }
        let snapshot = try state.snapshot()
        let results: [QueryResult]
        do {
            results = try Query.run(text, on: snapshot, limits: configuration.queryLimits)
        } catch {
            throw APIError.query(error)
        }
        let rendered = results.map { format == "geojson" ? $0.geoJSON() : $0.json() }
        let body: JSONValue = rendered.count == 1 ? rendered[0] : .array(rendered)
        return Reply.json(body, contentType: format == "geojson" ? Reply.geoJSON : Reply.json, request: request)
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
        return Reply.json(.object(JSONObject([
            ("status", .string("ok")),
            ("loaded_at", .string(snapshot.loadedAt.formatted(.iso8601))),
            ("load_seconds", .double((snapshot.loadSeconds * 1000).rounded() / 1000)),
            ("layers", .integer(Int64(snapshot.layers.count))),
            ("tilesets", .integer(Int64(snapshot.tileSets.count))),
            ("warnings", .integer(Int64(snapshot.warnings.count))),
        ])), request: request)
    }

    func metricsText(_ request: Request, _ context: APIContext) throws -> Response {
        let snapshot = state.currentSnapshot
        let text = metrics.render(snapshotLoadedAt: snapshot?.loadedAt, snapshotLoadSeconds: snapshot?.loadSeconds)
        return Reply.text(text, contentType: "text/plain; version=0.0.4; charset=utf-8", request: request)
    }

    func openAPI(_ request: Request, _ context: APIContext) throws -> Response {
        Reply.bytes(Array(OpenAPI.document.utf8), contentType: "application/json", compressible: true, request: request)
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
        return Reply.json(.object(JSONObject([
            ("status", .string("reloaded")),
            ("loaded_at", .string(snapshot.loadedAt.formatted(.iso8601))),
            ("load_seconds", .double((snapshot.loadSeconds * 1000).rounded() / 1000)),
            ("layers", .integer(Int64(snapshot.layers.count))),
            ("warnings", .integer(Int64(snapshot.warnings.count))),
        ])), request: request)
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

    // MARK: - Helpers

    static func collection(layer: String, position: (lon: Double, lat: Double), features: [JSONValue]) -> JSONValue {
        .object(JSONObject([
            ("type", .string("FeatureCollection")),
            ("layer", .string(layer)),
            ("query", .object(JSONObject([("lon", .double(position.lon)), ("lat", .double(position.lat))]))),
            ("features", .array(features)),
        ]))
    }
}

/// Runs an engine call and answers its error as a problem (the engine's `within` is the API's
/// `within_m`).
func engine<T>(_ body: () throws(EngineError) -> T) throws(APIError) -> T {
    do {
        return try body()
    } catch {
        throw APIError.engine(error, parameterNames: ["within": "within_m"])
    }
}
