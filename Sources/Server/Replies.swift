// Building responses: JSON from our own JSONValue (stable key order, see Geometry/JSON.swift),
// problem documents, and gzip when the client accepts it. Compression is decided here, where
// the body is still bytes, rather than in a middleware that would have to re-read a body
// stream.

import CZlib
import Foundation
import Geometry
import Hummingbird
import Support

enum Reply {
    /// Bodies smaller than this go out as they are: gzip's header and the CPU outweigh the bytes.
    static let gzipThreshold = 1024

    static let json = "application/json"
    static let geoJSON = "application/geo+json"
    static let csv = "text/csv"
    /// RFC 4180's type with its parameters: UTF-8, a header line.
    static let csvWithHeader = "text/csv; charset=utf-8; header=present"
    static let problemJSON = "application/problem+json"

    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok, contentType: String = json, request: Request) -> Response {
        bytes(JSONWriter.encode(value), status: status, contentType: contentType, compressible: true, request: request)
    }

    /// A JSON answer written straight into the body's bytes.
    static func json(status: HTTPResponse.Status = .ok, contentType: String = json, etag: String? = nil, request: Request,
                     _ write: (inout JSONWriter) -> Void) -> Response {
        var writer = JSONWriter(reservingCapacity: 4096)
        write(&writer)
        return bytes(writer.bytes, status: status, contentType: contentType, compressible: true, etag: etag, request: request)
    }

    /// A JSON answer no larger than `limit` bytes (before gzip): 422 `response_too_large`
    /// past it (`EngineLimits.maxResponseBytes`).
    static func json(status: HTTPResponse.Status = .ok, contentType: String = json, request: Request, limit: Int,
                     _ write: (inout JSONWriter) -> Void) throws(APIError) -> Response {
        bytes(try limited(limit, write), status: status, contentType: contentType, compressible: true, request: request)
    }

    /// JSON written straight into bytes, no larger than `limit` (422 `response_too_large` past it).
    static func limited(_ limit: Int, _ write: (inout JSONWriter) -> Void) throws(APIError) -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: 4096)
        write(&writer)
        guard writer.bytes.count <= limit else { throw APIError.engine(.responseTooLarge(limit: limit)) }
        return writer.bytes
    }

    static func problem(_ error: APIError, request: Request) -> Response {
        var response = json(error.document, status: error.status, contentType: problemJSON, request: request)
        for field in error.headers { response.headers.append(field) }
        return response
    }

    static func text(_ text: String, contentType: String, request: Request) -> Response {
        bytes(Array(text.utf8), status: .ok, contentType: contentType, compressible: true, request: request)
    }

    /// `compressible` bodies are gzipped when the request accepts gzip and they are large enough.
    static func bytes(_ body: [UInt8], status: HTTPResponse.Status = .ok, contentType: String, contentEncoding: String? = nil,
                      compressible: Bool = false, etag: String? = nil, request: Request) -> Response {
        let (status, headers, body) = answer(body, status: status, contentType: contentType, contentEncoding: contentEncoding, compressible: compressible,
                                             etag: etag, method: request.method, requestFields: request.headers)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// The status, fields and body of an answer: one place for the router's responses and the
    /// event loop's (FastPath.swift).
    static func answer(_ body: [UInt8], status: HTTPResponse.Status, contentType: String, contentEncoding: String? = nil,
                       compressible: Bool, etag: String?, method: HTTPRequest.Method, requestFields: HTTPFields) -> (HTTPResponse.Status, HTTPFields, [UInt8]) {
        // Room for every field the answer may carry: ours, then Date and Server (Hummingbird)
        // and CORS's two, so the list is allocated once rather than grown three times.
        var headers = HTTPFields()
        headers.reserveCapacity(9)
        // Every answer to a GET carries a weak ETag of what it says (the caller's, or a hash of
        // the bytes), so it changes exactly when the answer does: after a write to a layer it
        // read, not after one to another layer. If-None-Match with it gets a bodiless 304.
        if status == .ok, method == .get || method == .head {
            let tag = etag ?? Endpoints.weakETag(body)
            headers[.eTag] = tag
            if compressible || contentEncoding != nil { headers[.vary] = "Accept-Encoding" }
            if let ifNoneMatch = requestFields[.ifNoneMatch], Endpoints.matches(ifNoneMatch, etag: tag) {
                return (.notModified, headers, [])
            }
        }
        headers[.contentType] = contentType
        var body = body
        if let contentEncoding {
            headers[.contentEncoding] = contentEncoding
        } else if compressible {
            // Caches must keep the gzip and the plain answer apart.
            headers[.vary] = "Accept-Encoding"
            if body.count >= gzipThreshold, accepts(requestFields, coding: "gzip"), let compressed = Gzip.compress(body) {
                body = compressed
                headers[.contentEncoding] = "gzip"
            }
        }
        return (status, headers, body)
    }

    /// `Accept-Encoding` lists gzip (or `*`) without `q=0`.
    static func acceptsGzip(_ request: Request) -> Bool { accepts(request, coding: "gzip") }

    /// `Accept-Encoding` lists `coding` (or `*`) without `q=0`. No header: identity only.
    static func accepts(_ request: Request, coding: String) -> Bool { accepts(request.headers, coding: coding) }

    static func accepts(_ fields: HTTPFields, coding: String) -> Bool {
        guard let header = fields[.acceptEncoding] else { return false }
        for item in header.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let name = parts.first, name == coding || name == "*" else { continue }
            let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            if quality > 0 { return true }
        }
        return false
    }
}

enum Gzip {
    /// One-shot gzip (RFC 1952) with zlib at level 6; nil if zlib fails, in which case the
    /// caller sends the body uncompressed.
    static func compress(_ input: [UInt8]) -> [UInt8]? {
        var stream = z_stream()
        // windowBits 15 + 16: a gzip wrapper instead of zlib's.
        guard deflateInit2_(&stream, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(input.count))) + 32)
        var input = input
        let status = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = uInt(inBuffer.count)
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = uInt(outBuffer.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { return nil }
        output.removeSubrange(Int(stream.total_out)...)
        return output
    }
}
