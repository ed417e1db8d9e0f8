// OGC API – Features Part 4 on the collections' items: POST, PUT, PATCH and DELETE, with ETag
// and If-Match for optimistic concurrency. Authorisation and bodies are WriteEndpoints.swift's.

import Engine
import Foundation
import Geometry
import Hummingbird
import ServiceLifecycle
import Store
import Support

extension Endpoints {
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
}

// MARK: - Routes, with their OpenAPI operations (served whole at /openapi.json)

extension Endpoints {
    /// OGC API – Features, Part 4.
    static let ogcWriteRoutes: [Route] = [
        Route(.post, "/ogc/collections/{collection}/items", { try await $0.ogcCreateItems($1, $2) }, openAPI: #"""
            {
              "tags": ["OGC API – Features"],
              "summary": "Insert features (OGC API – Features Part 4): a GeoJSON Feature or FeatureCollection, all or none",
              "description": "Needs Authorization: Bearer with a write token for the collection (403 writes_disabled when the server takes no writes). An integer id becomes the feature's fid. Geometries are in CRS84, or in the CRS a Content-Crs header names (http://www.opengis.net/def/crs/EPSG/0/5514).",
              "security": [{"bearer": []}],
              "parameters": [{"$ref": "#/components/parameters/collection"}, {"$ref": "#/components/parameters/contentCrs"}],
              "requestBody": {"required": true, "content": {"application/geo+json": {"schema": {"type": "object"}}, "application/json": {"schema": {"type": "object"}}}},
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "201": {"description": "Inserted, durable and visible to the next request: the sequence number and one change per feature. Location names the feature when one was sent.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WriteReceipt"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "401": {"$ref": "#/components/responses/Problem"},
                "403": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "406": {"$ref": "#/components/responses/Problem"},
                "408": {"$ref": "#/components/responses/Problem"},
                "413": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.put, "/ogc/collections/{collection}/items/{featureId}", { try await $0.ogcReplaceItem($1, $2) }, openAPI: #"""
            {
              "tags": ["OGC API – Features"],
              "summary": "Replace a feature whole (OGC API – Features Part 4)",
              "security": [{"bearer": []}],
              "parameters": [
                {"$ref": "#/components/parameters/collection"},
                {"name": "featureId", "in": "path", "required": true, "schema": {"type": "integer"}},
                {"name": "If-Match", "in": "header", "schema": {"type": "string"}, "description": "The ETag the client last read: 412 when the feature has changed since."},
                {"$ref": "#/components/parameters/contentCrs"}
              ],
              "requestBody": {"required": true, "content": {"application/geo+json": {"schema": {"type": "object"}}, "application/json": {"schema": {"type": "object"}}}},
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "Replaced; ETag is the feature's new one.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WriteReceipt"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "401": {"$ref": "#/components/responses/Problem"},
                "403": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "406": {"$ref": "#/components/responses/Problem"},
                "412": {"$ref": "#/components/responses/Problem"},
                "408": {"$ref": "#/components/responses/Problem"},
                "413": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.patch, "/ogc/collections/{collection}/items/{featureId}", { try await $0.ogcUpdateItem($1, $2) }, openAPI: #"""
            {
              "tags": ["OGC API – Features"],
              "summary": "Change some of a feature's properties, or its geometry (a JSON merge patch, RFC 7396)",
              "security": [{"bearer": []}],
              "parameters": [
                {"$ref": "#/components/parameters/collection"},
                {"name": "featureId", "in": "path", "required": true, "schema": {"type": "integer"}},
                {"name": "If-Match", "in": "header", "schema": {"type": "string"}, "description": "The ETag the client last read: 412 when the feature has changed since."},
                {"$ref": "#/components/parameters/contentCrs"}
              ],
              "requestBody": {"required": true, "content": {"application/merge-patch+json": {"schema": {"type": "object"}}, "application/json": {"schema": {"type": "object"}}}},
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "Updated; ETag is the feature's new one.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WriteReceipt"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "401": {"$ref": "#/components/responses/Problem"},
                "403": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "406": {"$ref": "#/components/responses/Problem"},
                "412": {"$ref": "#/components/responses/Problem"},
                "408": {"$ref": "#/components/responses/Problem"},
                "413": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
        Route(.delete, "/ogc/collections/{collection}/items/{featureId}", { try await $0.ogcDeleteItem($1, $2) }, openAPI: #"""
            {
              "tags": ["OGC API – Features"],
              "summary": "Delete a feature",
              "security": [{"bearer": []}],
              "parameters": [
                {"$ref": "#/components/parameters/collection"},
                {"name": "featureId", "in": "path", "required": true, "schema": {"type": "integer"}},
                {"name": "If-Match", "in": "header", "schema": {"type": "string"}, "description": "The ETag the client last read: 412 when the feature has changed since."}
              ],
              "responses": {"414": {"$ref": "#/components/responses/Problem"},
                "200": {"description": "Deleted.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WriteReceipt"}}}},
                "400": {"$ref": "#/components/responses/Problem"},
                "401": {"$ref": "#/components/responses/Problem"},
                "403": {"$ref": "#/components/responses/Problem"},
                "404": {"$ref": "#/components/responses/Problem"},
                "406": {"$ref": "#/components/responses/Problem"},
                "412": {"$ref": "#/components/responses/Problem"},
                "408": {"$ref": "#/components/responses/Problem"},
                "413": {"$ref": "#/components/responses/Problem"},
                "422": {"$ref": "#/components/responses/Problem"},
                "503": {"$ref": "#/components/responses/Problem"}
              }
            }
            """#),
    ]
}
