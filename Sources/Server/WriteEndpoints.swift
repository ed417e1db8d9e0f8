// Writes over HTTP: OGC API – Features Part 4 on the collections' items (POST, PUT, PATCH,
// DELETE, with ETag and If-Match for optimistic concurrency), a batch of operations on several
// layers at once (/v1/write), rows appended to a table such as a time series
// (/v1/layers/{layer}/rows, JSON or CSV), and the change feed (/v1/changes).
//
// Every write needs `Authorization: Bearer TOKEN` with the admin token or a write token that
// covers every layer it touches (`WriteTokens`); 403 `writes_disabled` when the server has
// neither. A write is one `Engine.write`, run on the writes' own thread (EngineState.write):
// it is durable and visible to the next request when the answer is sent.

import Engine
import Foundation
import Geometry
import Hummingbird
import ServiceLifecycle
import Store

/// Who may write which layers: each token covers every layer (nil) or the layers it names.
public struct WriteTokens: Sendable {
    public var entries: [(token: String, layers: Set<String>?)] = []

    public init(_ entries: [(token: String, layers: Set<String>?)] = []) {
        self.entries = entries
    }

    public struct FileError: Error, CustomStringConvertible {
        public let description: String
    }

    /// The tokens of a file: one per line, `TOKEN` for every layer or `TOKEN layer1,layer2`;
    /// blank lines and lines starting with `#` are skipped.
    public static func parse(_ text: String) throws(FileError) -> WriteTokens {
        var tokens = WriteTokens()
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let parts = trimmed.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts[0].utf8.count >= 16 else {
                throw FileError(description: "line \(number + 1): a token needs at least 16 characters")
            }
            let layers = parts.count > 1 ? Set(parts[1].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }) : nil
            tokens.entries.append((parts[0], layers))
        }
        return tokens
    }
}

extension Endpoints {
    /// Write bodies may be larger than queries: a batch of 1,000 features.
    static let maxWriteBodyBytes = 16 << 20
    /// Operations in one batch.
    static let maxBatchOperations = 10_000

    // MARK: - OGC API – Features Part 4

    /// POST a Feature or a FeatureCollection: every feature inserted, all or none. 201, with
    /// `Location` when one feature was sent.
    func ogcCreateItems(_ request: Request, _ context: APIContext) async throws -> Response {
        try Endpoints.ogcFormat(request, allowed: [])
        let name = try request.pathParameter("collection", context)
        let snapshot = try state.snapshot()
        let layer = try engine { () throws(EngineError) in try snapshot.layer(name) }
        try authorizeWrite(request, layers: [layer.name])
        let document = try await geoJSONBody(request)
        guard !document.features.isEmpty else { throw APIError(.badRequest, code: "invalid_body", detail: "the body has no feature") }
        let crs = try Endpoints.contentCRS(request) ?? document.crs
        let receipt = try await state.write(WriteBatch(document.features.map { .change(layer: layer.name, .insert($0)) }, crs: crs))
        var response = receiptResponse(receipt, status: .created, request: request)
        if receipt.changes.count == 1, let fid = receipt.changes.first?.fid {
            response.headers[.location] = baseURL(request, context) + Endpoints.ogcPrefix + "/collections/" + Endpoints.pathEncoded(layer.name) + "/items/\(fid)"
        }
        return response
    }

    /// PUT a Feature: the feature replaced whole.
    func ogcReplaceItem(_ request: Request, _ context: APIContext) async throws -> Response {
        let (layer, fid) = try ogcWrittenItem(request, context)
        let document = try await geoJSONBody(request)
        guard document.features.count == 1, let feature = document.features.first else {
            throw APIError(.badRequest, code: "invalid_body", detail: "PUT takes one Feature")
        }
        if let id = feature.id, id != .integer(fid) {
            throw APIError(.badRequest, code: "invalid_body", detail: "the feature's id \(Quote.input(id.description)) is not the \(fid) of the URL")
        }
        let receipt = try await state.write(WriteBatch([.change(layer: layer.name, .replace(fid: fid, feature))], crs: try Endpoints.contentCRS(request) ?? document.crs),
                                            precondition: ifMatch(request, layer, fid))
        return itemWritten(receipt, layer: layer.name, fid: fid, request: request)
    }

    /// PATCH with a JSON merge patch (RFC 7396) of the feature: the `properties` it names set
    /// (null clears one), and `geometry` when given.
    func ogcUpdateItem(_ request: Request, _ context: APIContext) async throws -> Response {
        let (layer, fid) = try ogcWrittenItem(request, context)
        let body = try await Endpoints.readBody(request, limit: Endpoints.maxWriteBodyBytes, timeout: configuration.requestTimeout)
        let patch = try Endpoints.parsePatch(body)
        let receipt = try await state.write(WriteBatch([.change(layer: layer.name, .update(fid: fid, patch))], crs: try Endpoints.contentCRS(request)),
                                            precondition: ifMatch(request, layer, fid))
        return itemWritten(receipt, layer: layer.name, fid: fid, request: request)
    }

    func ogcDeleteItem(_ request: Request, _ context: APIContext) async throws -> Response {
        let (layer, fid) = try ogcWrittenItem(request, context)
        let receipt = try await state.write(WriteBatch([.change(layer: layer.name, .delete(fid: fid))]), precondition: ifMatch(request, layer, fid))
        return receiptResponse(receipt, status: .ok, request: request)
    }

    /// The layer and fid of an item a request writes, authorised.
    private func ogcWrittenItem(_ request: Request, _ context: APIContext) throws -> (Layer, Int64) {
        try Endpoints.ogcFormat(request, allowed: [])
        let snapshot = try state.snapshot()
        let name = try request.pathParameter("collection", context)
        let layer = try engine { () throws(EngineError) in try snapshot.layer(name) }
        try authorizeWrite(request, layers: [layer.name])
        let id = try request.pathParameter("featureId", context)
        guard let fid = Int64(id) else {
            throw APIError(.notFound, code: "unknown_feature", detail: "collection '\(layer.name)' has no feature \(Quote.input(id))",
                           extra: JSONObject([("layer", .string(layer.name))]))
        }
        return (layer, fid)
    }

    /// With the body read: the request's `If-Match` (when it sends one) must name the item's
    /// current ETag, else 412. As RFC 9110 asks, it is not checked where the answer without it
    /// would not be a success: a feature that does not exist is 404 whatever the header says.
    /// The request's If-Match as a check of the feature on the snapshot the write is applied
    /// over, under the update lock, so no other write lands between the check and this one
    /// (optimistic concurrency without lost updates). nil without If-Match.
    private func ifMatch(_ request: Request, _ layer: Layer, _ fid: Int64) -> EngineState.Precondition? {
        // An empty If-Match (no tag at all) is taken as none.
        guard let expected = request.headers[.ifMatch], !expected.trimmingCharacters(in: .whitespaces).isEmpty,
              !layer.readsStore else { return nil }
        let name = layer.name
        return { (snapshot: Snapshot) throws(APIError) in
            let current = try engine { () throws(EngineError) in try snapshot.layer(name) }
            guard let index = current.index(ofFID: fid) else {
                throw APIError(.notFound, code: "unknown_feature", detail: "collection '\(name)' has no feature \(fid)", extra: JSONObject([("layer", .string(name))]))
            }
            let etag = Endpoints.itemETag(current, index)
            let matches = expected.split(separator: ",").contains { tag in
                let tag = tag.trimmingCharacters(in: .whitespaces)
                return tag == "*" || tag == etag
            }
            guard matches else {
                throw APIError(.preconditionFailed, code: "precondition_failed", detail: "If-Match: the feature has changed since that ETag (it is \(etag) now): read it again")
            }
        }
    }

    /// A feature's ETag: FNV-1a over its geometry and properties as GeoJSON, so it changes
    /// exactly when the feature does, and is the same on every replica.
    static func itemETag(_ layer: Layer, _ index: Int) -> String {
        var writer = JSONWriter(reservingCapacity: 256)
        writer.beginObject()
        writer.key("geometry"); if let geometry = layer.geometries[index] { writer.geometry(geometry) } else { writer.null() }
        Output.properties(&writer, layer.properties[index], skipping: [])
        writer.endObject()
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in writer.bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return "\"" + String(hash, radix: 16) + "\""
    }

    private func itemWritten(_ receipt: WriteReceipt, layer: String, fid: Int64, request: Request) -> Response {
        var response = receiptResponse(receipt, status: .ok, request: request)
        if let written = try? receipt.snapshot.layer(layer), let index = written.index(ofFID: fid) {
            response.headers[.eTag] = Endpoints.itemETag(written, index)
        }
        return response
    }

    // MARK: - Batches and rows

    /// POST /v1/write: a batch of operations on any layers, all or none (docs/HTTP_API.md).
    func writeBatch(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try Parameters(request, allowed: [])
        let grant = try writeGrant(request)
        let body = try await Endpoints.readBody(request, limit: Endpoints.maxWriteBodyBytes, timeout: configuration.requestTimeout)
        let batch = try Endpoints.parseBatch(body)
        let snapshot = try state.snapshot()
        try Endpoints.check(grant: grant, covers: batch.operations.map { operation in
            switch operation {
            case .create(let schema): schema.name
            case .change(let layer, _): (try? snapshot.layer(layer).name) ?? layer
            }
        })
        return receiptResponse(try await state.write(batch), status: .ok, request: request)
    }

    /// POST /v1/layers/{layer}/rows: rows appended to a table (the hourly observations), as a
    /// JSON array of objects or as CSV with a header line (`Content-Type: text/csv`); CSV
    /// fields are read by the column's type.
    func appendRows(_ request: Request, _ context: APIContext) async throws -> Response {
        _ = try Parameters(request, allowed: [])
        let name = try request.pathParameter("layer", context)
        let snapshot = try state.snapshot()
        let layer = try engine { () throws(EngineError) in try snapshot.layer(name) }
        try authorizeWrite(request, layers: [layer.name])
        guard layer.family == .table else {
            throw APIError(.badRequest, code: "invalid_body", detail: "'\(layer.name)' holds geometries: write features through /ogc/collections/\(layer.name)/items or /v1/write")
        }
        let body = try await Endpoints.readBody(request, limit: Endpoints.maxWriteBodyBytes, timeout: configuration.requestTimeout)
        let isCSV = (request.headers[.contentType] ?? "").lowercased().hasPrefix("text/csv")
        let operations: [WriteOperation]
        if let link = layer.info.timeSeries {
            // A time series: the rows as an import of the feed reads them, each replacing the
            // station's row of the same start if there is one.
            let stations = try engine { () throws(EngineError) in try snapshot.layer(link.keyLayer) }
            let keys = Set(stations.indices.compactMap { stations.properties[$0][link.layerKeyColumn]?.stringValue })
            let rows: [Feature]
            do {
                rows = try isCSV ? TimeSeriesRows.fromCSV(Array(body.utf8), link: link, keyLayer: stations.info, keys: keys)
                                 : TimeSeriesRows.fromJSON(try Endpoints.jsonRows(body), link: link, keys: keys)
            } catch let error as StoreError {
                throw APIError.categorized(error)
            }
            operations = TimeSeriesRows.operations(rows, into: layer.name, link: link)
        } else {
            let rows = try isCSV ? Endpoints.csvRows(body, columns: layer.info.columns) : Endpoints.jsonRows(body)
            operations = rows.map { .change(layer: layer.name, .insert(Feature(geometry: nil, properties: $0))) }
        }
        guard !operations.isEmpty else { throw APIError(.badRequest, code: "invalid_body", detail: "the body has no row") }
        guard operations.count <= Endpoints.maxBatchOperations else {
            throw APIError(.contentTooLarge, code: "too_many_operations", detail: "\(operations.count) rows; at most \(Endpoints.maxBatchOperations) a request")
        }
        let receipt = try await state.write(WriteBatch(operations))
        return receiptResponse(receipt, status: .created, request: request)
    }

    // MARK: - The change feed

    /// GET /v1/changes?since=N&limit=M: the changes after N, oldest first; with `Accept:
    /// text/event-stream`, the same as Server-Sent Events, live (`changeStream`).
    func changes(_ request: Request, _ context: APIContext) async throws -> Response {
        let parameters = try Parameters(request, allowed: ["since", "limit"])
        let since = try parameters.int("since", default: 0, range: 0...Int.max)
        let limit = try parameters.int("limit", default: 1000, range: 1...10_000)
        if (request.headers[.accept] ?? "").contains("text/event-stream") {
            // A reconnecting client resumes after the last event it saw.
            let resume = try Endpoints.lastEventID(request) ?? Int64(since)
            _ = try state.snapshot()
            return changeStream(after: resume)
        }
        let changes = try await state.changes(since: Int64(since), limit: limit)
        return Reply.json(request: request) { w in
            w.beginObject()
            w.key("changes")
            w.beginArray()
            for change in changes { Endpoints.change(&w, change) }
            w.endArray()
            w.key("last"); w.integer(changes.last?.sequence ?? Int64(since))
            w.endObject()
        }
    }

    /// The `Last-Event-ID` a reconnecting EventSource sends (nil: none), for the change feed
    /// and the fences' events alike.
    static func lastEventID(_ request: Request) throws(APIError) -> Int64? {
        guard let last = request.headers.first(where: { $0.name.canonicalName == "last-event-id" })?.value else { return nil }
        guard let id = Int64(last.trimmingCharacters(in: .whitespaces)), id >= 0 else {
            throw APIError(.badRequest, code: "invalid_parameter", detail: "Last-Event-ID: \(Quote.input(last)) is not an event id",
                           extra: JSONObject([("parameter", .string("Last-Event-ID"))]))
        }
        return id
    }

    /// Seconds between the comments that keep a quiet event stream (and proxies) open.
    static let heartbeat: Duration = .seconds(15)

    /// The change feed as Server-Sent Events: every change after `sequence`, each an event
    /// whose `id` is its sequence number (so a client's `Last-Event-ID` resumes exactly after
    /// it), then each new one as writes commit, until the client leaves. The events are read
    /// from the store's change table, so a stream misses nothing a commit holds, whatever
    /// wakes it. A graceful shutdown (SIGTERM) ends every stream, so the server stops rather
    /// than wait for clients that never leave; they reconnect to another replica and resume.
    func changeStream(after sequence: Int64) -> Response {
        let state = self.state
        let body = ResponseBody { writer in
            let (wakes, token) = state.changeSignal.subscribe(heartbeat: Endpoints.heartbeat)
            defer { state.changeSignal.cancel(token) }
            try await withGracefulShutdownHandler {
                try await Endpoints.stream(changesAfter: sequence, state: state, wakes: wakes, to: &writer)
            } onGracefulShutdown: {
                state.changeSignal.cancel(token)
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"], body: body)
    }

    /// The events of a stream until its wakes end (the client left, or the server stops).
    static func stream(changesAfter sequence: Int64, state: EngineState, wakes: AsyncStream<ChangeSignal.Wake>,
                       to writer: inout any ResponseBodyWriter) async throws {
        var last = sequence
        var wake = wakes.makeAsyncIterator()
        try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
        while true {
            let changes = try await state.changes(since: last, limit: 1000)
            if let newest = changes.last {
                var text = ""
                for change in changes {
                    var w = JSONWriter(reservingCapacity: 128)
                    Endpoints.change(&w, change)
                    text += "id: \(change.sequence)\nevent: change\ndata: \(String(decoding: w.bytes, as: UTF8.self))\n\n"
                }
                try await writer.write(ByteBuffer(string: text))
                last = newest.sequence
                continue
            }
            guard let woken = await wake.next() else { break }
            if woken == .heartbeat { try await writer.write(ByteBuffer(string: ": keep-alive\n\n")) }
        }
    }

    static func change(_ w: inout JSONWriter, _ change: Change) {
        w.beginObject()
        w.key("sequence"); w.integer(change.sequence)
        w.key("layer"); w.string(change.layer)
        w.key("fid"); if let fid = change.fid { w.integer(fid) } else { w.null() }
        w.key("change"); w.string(change.kind.rawValue)
        w.key("at"); w.string(change.at)
        w.endObject()
    }

    private func receiptResponse(_ receipt: WriteReceipt, status: HTTPResponse.Status, request: Request) -> Response {
        Reply.json(status: status, request: request) { w in
            w.beginObject()
            w.key("sequence"); w.integer(receipt.sequence)
            w.key("changes")
            w.beginArray()
            for change in receipt.changes { Endpoints.change(&w, change) }
            w.endArray()
            w.key("warnings")
            w.beginArray()
            for warning in receipt.warnings { w.string(warning) }
            w.endArray()
            w.endObject()
        }
    }

    // MARK: - Authorisation

    /// 403 `writes_disabled` without any write token; 401 without a known token; 403
    /// `forbidden` when the token does not cover one of `layers`.
    func authorizeWrite(_ request: Request, layers: [String]) throws(APIError) {
        try Endpoints.check(grant: try writeGrant(request), covers: layers)
    }

    /// 403 `forbidden` when a token's grant (nil: every layer) leaves out one of `layers`.
    static func check(grant: Set<String>?, covers layers: [String]) throws(APIError) {
        if let allowed = grant, let outside = layers.first(where: { !allowed.contains($0.lowercased()) }) {
            throw APIError(.forbidden, code: "forbidden", detail: "this token may not write layer \(Quote.input(outside))",
                           extra: JSONObject([("layer", .string(Quote.capped(outside)))]))
        }
    }

    /// The layers the request's token may write (nil: all), before anything else of it is
    /// read: 403 `writes_disabled` or 401 as above.
    func writeGrant(_ request: Request) throws(APIError) -> Set<String>? {
        let admin = configuration.adminToken.flatMap { $0.isEmpty ? nil : $0 }
        guard admin != nil || !configuration.writeTokens.entries.isEmpty else {
            throw APIError(.forbidden, code: "writes_disabled",
                           detail: "this server takes no writes: start it with --write-token-file (or an admin token)")
        }
        let given = request.headers[.authorization] ?? ""
        let token = given.hasPrefix("Bearer ") ? Array(given.utf8.dropFirst(7)) : []
        let unauthorized = APIError(.unauthorized, code: "unauthorized", detail: "send Authorization: Bearer TOKEN with a write token",
                                    headers: [.wwwAuthenticate: "Bearer realm=\"vltava-write\""])
        guard !token.isEmpty else { throw unauthorized }
        if let admin, Endpoints.constantTimeEqual(token, Array(admin.utf8)) { return nil }
        // Every entry is compared, whichever matches, so the time taken tells nothing.
        var covered: Set<String>?? = .none
        for entry in configuration.writeTokens.entries where Endpoints.constantTimeEqual(token, Array(entry.token.utf8)) {
            covered = .some(entry.layers)
        }
        guard case .some(let allowed) = covered else { throw unauthorized }
        return allowed
    }

    // MARK: - Bodies

    private func geoJSONBody(_ request: Request) async throws -> GeoJSONDocument {
        let body = try await Endpoints.readBody(request, limit: Endpoints.maxWriteBodyBytes, timeout: configuration.requestTimeout)
        do {
            let document = try GeoJSON.parseDocument(Array(body.utf8))
            guard document.features.count <= Endpoints.maxBatchOperations else {
                throw APIError(.contentTooLarge, code: "too_many_operations", detail: "\(document.features.count) features; at most \(Endpoints.maxBatchOperations) a request")
            }
            return document
        } catch let error as GeoJSONError {
            throw APIError(.badRequest, code: "invalid_body", detail: "the body is not GeoJSON: \(error)")
        }
    }

    /// OGC API – Features Part 2's `Content-Crs: <http://www.opengis.net/def/crs/EPSG/0/5514>`
    /// as "EPSG:5514"; CRS84 is WGS 84 longitude/latitude (nil).
    static func contentCRS(_ request: Request) throws(APIError) -> String? {
        guard let header = request.headers.first(where: { $0.name.canonicalName == "content-crs" })?.value else { return nil }
        let uri = header.trimmingCharacters(in: CharacterSet(charactersIn: "<> "))
        if uri.hasSuffix("/OGC/1.3/CRS84") { return nil }
        let parts = uri.split(separator: "/")
        guard parts.count >= 3, parts[parts.count - 3] == "EPSG", let code = Int(parts[parts.count - 1]), code > 0 else {
            throw APIError(.badRequest, code: "invalid_crs", detail: "Content-Crs: \(Quote.input(header)) is not an EPSG CRS URI (http://www.opengis.net/def/crs/EPSG/0/CODE)")
        }
        return "EPSG:\(code)"
    }

    static func parsePatch(_ text: String) throws(APIError) -> Feature {
        let value: JSONValue
        do { value = try JSON.parse(text) } catch { throw APIError(.badRequest, code: "invalid_body", detail: "the body is not JSON: \(error)") }
        guard case .object(let object) = value else { throw APIError(.badRequest, code: "invalid_body", detail: "a patch is a JSON object") }
        var feature = Feature(geometry: nil)
        for (key, member) in object {
            switch key {
            case "type", "id", "links": continue
            case "geometry":
                if case .null = member { throw APIError(.badRequest, code: "invalid_body", detail: "geometry: a feature's geometry cannot be removed") }
                do { feature.geometry = try GeoJSON.geometry(from: member) } catch { throw APIError(.badRequest, code: "invalid_body", detail: "geometry: \(error)") }
            case "properties":
                guard case .object(let members) = member else { throw APIError(.badRequest, code: "invalid_body", detail: "properties: expected an object") }
                for (name, property) in members { feature.properties[name] = GeoJSON.attribute(property) }
            default:
                throw APIError(.badRequest, code: "invalid_body", detail: "\(Quote.input(key)): a patch names only geometry and properties")
            }
        }
        return feature
    }

    /// The batch of /v1/write: `{"crs": …, "strict": …, "operations": [{"insert": LAYER,
    /// "feature": {…}}, {"replace": LAYER, "fid": N, "feature": {…}}, {"update": …},
    /// {"delete": LAYER, "fid": N}, {"upsert": LAYER, "key": COLUMN, "feature": {…}},
    /// {"create": {"name": …, "geometry_type": …, "columns": [{"name": …, "type": …}]}}]}`.
    static func parseBatch(_ text: String) throws(APIError) -> WriteBatch {
        func bad(_ path: String, _ message: String) -> APIError {
            APIError(.badRequest, code: "invalid_body", detail: "\(path): \(message)", extra: JSONObject([("path", .string(path))]))
        }
        let value: JSONValue
        do { value = try JSON.parse(text) } catch { throw APIError(.badRequest, code: "invalid_body", detail: "the body is not JSON: \(error)") }
        guard case .object(let root) = value else { throw bad("", "a batch is a JSON object with \"operations\"") }
        var batch = WriteBatch()
        for (key, member) in root {
            switch (key, member) {
            case ("crs", .string(let crs)): batch.crs = crs
            case ("crs", .null): break
            case ("strict", .bool(let strict)): batch.strict = strict
            case ("operations", .array): break
            default: throw bad(key, "unknown member or wrong type (members: crs, strict, operations)")
            }
        }
        guard case .array(let operations)? = root["operations"], !operations.isEmpty else { throw bad("operations", "give an array of operations") }
        guard operations.count <= maxBatchOperations else {
            throw APIError(.contentTooLarge, code: "too_many_operations", detail: "\(operations.count) operations; at most \(maxBatchOperations) a batch")
        }
        for (index, operation) in operations.enumerated() {
            let path = "operations[\(index)]"
            guard case .object(let object) = operation else { throw bad(path, "an operation is an object") }
            let verbs = ["insert", "replace", "update", "delete", "upsert", "create"].filter { object[$0] != nil }
            guard verbs.count == 1, let verb = verbs.first else {
                throw bad(path, "name exactly one of insert, replace, update, delete, upsert, create")
            }
            func feature() throws(APIError) -> Feature {
                guard let member = object["feature"] else { throw bad(path + ".feature", "missing") }
                if verb == "update" { return try parsePatch(JSON.serialize(member)) }
                do { return try GeoJSON.feature(from: member) } catch { throw bad(path + ".feature", "\(error)") }
            }
            func fid() throws(APIError) -> Int64 {
                guard case .integer(let fid)? = object["fid"] else { throw bad(path + ".fid", "give the feature's fid, an integer") }
                return fid
            }
            if verb == "create" {
                batch.operations.append(.create(try schema(object["create"], path: path + ".create")))
                continue
            }
            guard case .string(let layer)? = object[verb] else { throw bad(path + "." + verb, "give the layer's name") }
            let change: FeatureChange
            switch verb {
            case "insert": change = .insert(try feature())
            case "replace": change = .replace(fid: try fid(), try feature())
            case "update": change = .update(fid: try fid(), try feature())
            case "delete": change = .delete(fid: try fid())
            default:
                switch object["key"] {
                case .string(let key)?: change = .upsert(keys: [key], try feature())
                case .array(let keys)? where !keys.isEmpty && keys.allSatisfy({ $0.string != nil }):
                    change = .upsert(keys: keys.compactMap(\.string), try feature())
                default: throw bad(path + ".key", "give the key column's name, or a list of names")
                }
            }
            batch.operations.append(.change(layer: layer, change))
        }
        return batch

        func schema(_ value: JSONValue?, path: String) throws(APIError) -> LayerSchema {
            guard case .object(let object)? = value, case .string(let name)? = object["name"] else { throw bad(path, "give {\"name\": …, \"columns\": […]}") }
            var geometryType: String?
            switch object["geometry_type"] {
            case .string(let type)?: geometryType = type
            case nil, .null?: geometryType = nil
            default: throw bad(path + ".geometry_type", "a GeoPackage geometry type name, e.g. POINT")
            }
            var columns: [ColumnInfo] = []
            if case .array(let items)? = object["columns"] {
                for (i, item) in items.enumerated() {
                    guard case .object(let column) = item, case .string(let columnName)? = column["name"], case .string(let typeName)? = column["type"] else {
                        throw bad(path + ".columns[\(i)]", "give {\"name\": …, \"type\": …}")
                    }
                    let type = typeName.uppercased()
                    if type == "JSON" {
                        columns.append(ColumnInfo(name: columnName, type: .text, isJSON: true))
                    } else if let known = ColumnType(rawValue: type), known != .blob {
                        columns.append(ColumnInfo(name: columnName, type: known))
                    } else {
                        throw bad(path + ".columns[\(i)].type", "one of INTEGER, REAL, TEXT, BOOLEAN, DATETIME, JSON")
                    }
                }
            }
            return LayerSchema(name: name, geometryType: geometryType, columns: columns, description: object["description"]?.string ?? "")
        }
    }

    static func jsonRows(_ text: String) throws(APIError) -> [Attributes] {
        let value: JSONValue
        do { value = try JSON.parse(text) } catch { throw APIError(.badRequest, code: "invalid_body", detail: "the body is not JSON: \(error)") }
        guard case .array(let items) = value else { throw APIError(.badRequest, code: "invalid_body", detail: "rows are a JSON array of objects") }
        var rows: [Attributes] = []
        rows.reserveCapacity(items.count)
        for (i, item) in items.enumerated() {
            guard case .object(let object) = item else { throw APIError(.badRequest, code: "invalid_body", detail: "[\(i)]: a row is an object") }
            var row = Attributes()
            for (name, member) in object { row[name] = GeoJSON.attribute(member) }
            rows.append(row)
        }
        return rows
    }

    /// CSV with a header line (comma or semicolon, as imports read it); each field read as its
    /// column's type (an empty field is null).
    static func csvRows(_ text: String, columns: [ColumnInfo]) throws(APIError) -> [Attributes] {
        let table: CSVTable
        do { table = try CSV.parse(Array(text.utf8)) } catch { throw APIError(.badRequest, code: "invalid_body", detail: "the body is not CSV: \(error)") }
        let byName = Dictionary(columns.map { ($0.name.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        var header: [ColumnInfo] = []
        for name in table.header {
            guard let column = byName[name.lowercased()] else {
                throw APIError(.badRequest, code: "invalid_body", detail: "line 1: the table has no column \(Quote.input(name)) (columns: \(columns.map(\.name).joined(separator: ", ")))")
            }
            header.append(column)
        }
        var rows: [Attributes] = []
        rows.reserveCapacity(table.rows.count)
        for (line, fields) in table.rows {
            var row = Attributes()
            for (column, field) in zip(header, fields) { row[column.name] = try csvValue(field, column, line: line, table) }
            rows.append(row)
        }
        return rows
    }

    private static func csvValue(_ field: String, _ column: ColumnInfo, line: Int, _ table: CSVTable) throws(APIError) -> AttributeValue {
        let field = field.trimmingCharacters(in: .whitespaces)
        if field.isEmpty { return .null }
        func refuse() -> APIError {
            APIError(.badRequest, code: "invalid_body", detail: "line \(line): column '\(column.name)' holds \(column.typeDescription); \(Quote.input(field)) is not one")
        }
        if column.isJSON { return .json(field) }
        switch column.type {
        case .integer: guard let i = Int64(field) else { throw refuse() }; return .integer(i)
        case .real: guard let d = table.number(field), d.isFinite else { throw refuse() }; return .real(d)
        case .boolean:
            switch field.lowercased() {
            case "true", "1": return .bool(true)
            case "false", "0": return .bool(false)
            default: throw refuse()
            }
        case .text, .dateTime, .blob: return .text(field)
        }
    }
}
