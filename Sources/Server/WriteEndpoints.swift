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
import Support

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

    /// Seconds between the comments that keep a quiet event stream (and proxies) open.
    static let heartbeat: Duration = .seconds(15)

    func receiptResponse(_ receipt: WriteReceipt, status: HTTPResponse.Status, request: Request) -> Response {
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

    func geoJSONBody(_ request: Request) async throws -> GeoJSONDocument {
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

// MARK: - Routes, with their OpenAPI operations (served whole at /openapi.json)

extension Endpoints {
    /// Write batches, and rows appended to a table.
    static let writeRoutes: [Route] = [
        Route(.post, "/v1/write", { try await $0.writeBatch($1, $2) }, openAPI: #"""
            {
              "summary": "A batch of writes on any layers, all or none",
              "description": "{\"crs\": …, \"strict\": false, \"operations\": [{\"insert\": LAYER, \"feature\": {…}}, {\"replace\": LAYER, \"fid\": N, \"feature\": {…}}, {\"update\": LAYER, \"fid\": N, \"feature\": {…}}, {\"delete\": LAYER, \"fid\": N}, {\"upsert\": LAYER, \"key\": COLUMN, \"feature\": {…}}, {\"create\": {\"name\": …, \"geometry_type\": …, \"columns\": [{\"name\": …, \"type\": …}]}}]}. Needs a write token covering every layer named.",
              "security": [{"bearer": []}],
              "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "required": ["operations"], "properties": {"crs": {"type": "string"}, "strict": {"type": "boolean"}, "operations": {"type": "array", "minItems": 1, "maxItems": 10000, "items": {"type": "object"}}}}}}},
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "Applied, durable and visible to the next request.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WriteReceipt"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "401": {"$ref": "#/components/responses/Problem"},
                "403": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "408": {"$ref": "#/components/responses/Problem"},
                "413": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.post, "/v1/layers/{layer}/rows", { try await $0.appendRows($1, $2) }, openAPI: #"""
            {
              "summary": "Append rows to a table (a time series' observations): a JSON array of objects, or CSV with a header line",
              "security": [{"bearer": []}],
              "parameters": [{"$ref": "#/components/parameters/layer"}],
              "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "array", "items": {"type": "object"}}}, "text/csv": {"schema": {"type": "string"}}}},
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "201": {"description": "Appended.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WriteReceipt"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "401": {"$ref": "#/components/responses/Problem"},
                "403": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "408": {"$ref": "#/components/responses/Problem"},
                "413": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
    ]
}
