// The map page (docs/HTTP_API.md, "The map page"): `/` is an HTML page over Leaflet that draws
// the layers and asks the API on each click. Its own three files are compiled into the binary
// (Package.swift embeds Sources/Server/MapPage/), so a copied `vltava` serves them; Leaflet is
// served from the system's copy (Debian's libjs-leaflet), never from a CDN: the machines this
// runs on may have no internet.

import Foundation
import Hummingbird

enum MapPage {
    static let html = "text/html; charset=utf-8"

    /// The page's own files by name.
    static let files: [String: (bytes: [UInt8], contentType: String)] = [
        "map.js": (PackageResources.map_js, "text/javascript; charset=utf-8"),
        "map.css": (PackageResources.map_css, "text/css; charset=utf-8"),
    ]

    /// The Leaflet files the page uses, relative to the Leaflet directory: a fixed list, so that
    /// no request names a path of its own on the server's disk.
    static let leafletFiles: [String: String] = [
        "leaflet.js": "text/javascript; charset=utf-8",
        "leaflet.css": "text/css; charset=utf-8",
        "images/layers.png": "image/png",
        "images/layers-2x.png": "image/png",
        "images/marker-icon.png": "image/png",
        "images/marker-icon-2x.png": "image/png",
        "images/marker-shadow.png": "image/png",
    ]

    /// Whether the client asked for JSON rather than a page: `Accept` names JSON and not HTML.
    /// Browsers send `text/html` first; curl sends `*/*` and gets the page too.
    static func wantsJSON(_ request: Request) -> Bool {
        let accept = (request.headers[.accept] ?? "").lowercased()
        return accept.contains("json") && !accept.contains("text/html")
    }
}

extension Endpoints {
    /// `GET /`: the map page, or for a client that asks for JSON, links to what this server offers.
    func mapPage(_ request: Request, _ context: APIContext) throws -> Response {
        _ = try Parameters(request, allowed: [])
        guard MapPage.wantsJSON(request) else {
            return Reply.bytes(PackageResources.index_html, contentType: MapPage.html, compressible: true, request: request)
        }
        let base = baseURL(request, context)
        return Reply.json(request: request) { w in
            w.beginObject()
            w.key("title"); w.string("Vltava")
            w.key("links"); w.beginArray()
            for (rel, path, type, title) in [
                ("alternate", "/", MapPage.html, "the map page"),
                ("service-desc", "/openapi.json", "application/json", "the OpenAPI document"),
                ("data", "/v1/layers", "application/json", "the layers and tile sets"),
            ] {
                w.beginObject()
                w.key("rel"); w.string(rel)
                w.key("href"); w.string(base + path)
                w.key("type"); w.string(type)
                w.key("title"); w.string(title)
                w.endObject()
            }
            w.endArray()
            w.endObject()
        }
    }

    /// `GET /map/{file}`: the page's script and style sheet.
    func mapFile(_ request: Request, _ context: APIContext) throws -> Response {
        _ = try Parameters(request, allowed: [])
        let name = try request.pathParameter("file", context)
        guard let file = MapPage.files[name] else {
            throw APIError(.notFound, code: "not_found", detail: "no map page file '\(name)'; there are \(MapPage.files.keys.sorted().joined(separator: ", "))")
        }
        var response = Reply.bytes(file.bytes, contentType: file.contentType, compressible: true, request: request)
        response.headers[.cacheControl] = "no-cache"
        return response
    }

    /// `GET /leaflet/{file}` and `/leaflet/images/{file}`: Leaflet from `--leaflet-dir`.
    func leafletFile(_ request: Request, _ context: APIContext) throws -> Response {
        _ = try Parameters(request, allowed: [])
        let file = try request.pathParameter("file", context)
        let name = request.uri.path.hasPrefix("/leaflet/images/") ? "images/" + file : file
        guard let contentType = MapPage.leafletFiles[name] else {
            throw APIError(.notFound, code: "not_found", detail: "no Leaflet file '\(name)'")
        }
        let path = configuration.leafletDirectory + "/" + name
        guard let data = FileManager.default.contents(atPath: path) else {
            throw APIError(.notFound, code: "leaflet_missing",
                           detail: "Leaflet is not at \(configuration.leafletDirectory): install Debian's libjs-leaflet (scripts/install-deps.sh) or pass --leaflet-dir")
        }
        var response = Reply.bytes(Array(data), contentType: contentType, compressible: !contentType.hasPrefix("image/"), request: request)
        response.headers[.cacheControl] = "max-age=3600"
        return response
    }
}
