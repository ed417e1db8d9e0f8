// The map page (docs/HTTP_API.md, "The map page"): `/` is an HTML page over MapLibre GL JS that
// draws the store's layers and tile sets as vector tiles with a hand-written style
// (`/map/style.json`) and asks the API on each click. Its own files are compiled into the binary
// (Package.swift embeds Sources/Server/MapPage/), so a copied `vltava` serves them; MapLibre GL
// JS is served from the system's copy (the JS and CSS inside PyPI's `maplibre` wheel, installed
// by scripts/install-deps.sh), never from a CDN: the machines this runs on may have no internet.
// Leaflet (Debian's libjs-leaflet) is still served for the page of the previous release, which
// Benchmarks/map-speed.py compares with.

import Foundation
import Geometry
import Hummingbird
import Support

enum MapPage {
    static let html = "text/html; charset=utf-8"

    /// The page's own files by name.
    static let files: [String: (bytes: [UInt8], contentType: String)] = [
        "map.js": (PackageResources.map_js, "text/javascript; charset=utf-8"),
        "map.css": (PackageResources.map_css, "text/css; charset=utf-8"),
    ]

    /// The MapLibre GL JS files the page uses, from the `maplibre` wheel's `srcjs` directory: a
    /// fixed list, so that no request names a path of its own on the server's disk.
    static let mapLibreFiles: [String: String] = [
        "maplibre-gl.js": "text/javascript; charset=utf-8",
        "maplibre-gl.css": "text/css; charset=utf-8",
    ]

    /// Where PyPI's `maplibre` wheel put its JS: the usual site-packages directories first, then
    /// Python's own answer (without importing the package, whose Python dependencies are not
    /// installed). Nil when it is nowhere.
    static func findMapLibre() -> String? {
        let fileManager = FileManager.default
        var roots = ["/usr/local/lib", "/usr/lib", NSHomeDirectory() + "/.local/lib"]
        let pyenv = NSHomeDirectory() + "/.pyenv/versions"
        for version in (try? fileManager.contentsOfDirectory(atPath: pyenv)) ?? [] { roots.append("\(pyenv)/\(version)/lib") }
        for root in roots {
            for python in ((try? fileManager.contentsOfDirectory(atPath: root)) ?? []).sorted() where python.hasPrefix("python3") {
                for packages in ["dist-packages", "site-packages"] {
                    let directory = "\(root)/\(python)/\(packages)/maplibre/srcjs"
                    if fileManager.fileExists(atPath: directory + "/maplibre-gl.js") { return directory }
                }
            }
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import importlib.util as u; s = u.find_spec('maplibre'); print(list(s.submodule_search_locations)[0] if s else '')"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let directory = (String(data: data, encoding: .utf8) ?? "").trimmingCharacters(in: .whitespacesAndNewlines) + "/srcjs"
        return fileManager.fileExists(atPath: directory + "/maplibre-gl.js") ? directory : nil
    }

    /// The page's style (Sources/Server/MapPage/style.json) for this store: each source's tile
    /// URLs, written as paths, made absolute with the server's base URL; a source whose layer or
    /// tile set (the path's segment after /v1/tiles/) the store does not have is left out, with
    /// every style layer drawn from it.
    static func style(base: String, has: (String) -> Bool) -> [UInt8] {
        guard case .object(var style)? = try? JSON.parse(PackageResources.style_json) else { return PackageResources.style_json }
        var kept = Set<String>()
        if case .object(let sources)? = style["sources"] {
            var filtered = JSONObject()
            for (id, value) in sources {
                guard case .object(var source) = value else { continue }
                if case .array(let tiles)? = source["tiles"] {
                    let paths = tiles.compactMap { tile -> String? in if case .string(let path) = tile { path } else { nil } }
                    let names = paths.compactMap(MapPage.tileSetName)
                    guard !names.isEmpty, names.allSatisfy(has) else { continue }
                    source["tiles"] = .array(paths.map { .string($0.hasPrefix("/") ? base + $0 : $0) })
                }
                filtered[id] = .object(source)
                kept.insert(id)
            }
            style["sources"] = .object(filtered)
        }
        if case .array(let layers)? = style["layers"] {
            let drawn = layers.filter { (layer: JSONValue) -> Bool in
                guard case .object(let object) = layer, case .string(let source)? = object["source"] else { return true }
                return kept.contains(source)
            }
            style["layers"] = .array(drawn)
        }
        return Array(JSON.serialize(.object(style)).utf8)
    }

    /// `/v1/tiles/NAME/{z}/{x}/{y}.mvt` → NAME (percent-decoded).
    static func tileSetName(_ path: String) -> String? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard let at = parts.firstIndex(of: "tiles"), at > 0, parts[at - 1] == "v1", at + 1 < parts.count else { return nil }
        return String(parts[at + 1]).removingPercentEncoding
    }

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

    /// `GET /map/{file}`: the page's script, style sheet and map style.
    func mapFile(_ request: Request, _ context: APIContext) throws -> Response {
        _ = try Parameters(request, allowed: [])
        let name = try request.pathParameter("file", context)
        if name == "style.json" {
            let snapshot = try state.snapshot()
            let bytes = MapPage.style(base: baseURL(request, context)) { name in
                snapshot.tileSets[name] != nil || snapshot.layers.contains { $0.name == name }
            }
            var response = Reply.bytes(bytes, contentType: "application/json", compressible: true, request: request)
            response.headers[.cacheControl] = "no-cache"
            return response
        }
        guard let file = MapPage.files[name] else {
            throw APIError(.notFound, code: "not_found", detail: "no map page file '\(name)'; there are \((MapPage.files.keys + ["style.json"]).sorted().joined(separator: ", "))")
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

    /// `GET /maplibre/{file}`: MapLibre GL JS from `--maplibre-dir` (found at start when not
    /// given).
    func mapLibreFile(_ request: Request, _ context: APIContext) throws -> Response {
        _ = try Parameters(request, allowed: [])
        let name = try request.pathParameter("file", context)
        guard let contentType = MapPage.mapLibreFiles[name] else {
            throw APIError(.notFound, code: "not_found", detail: "no MapLibre file '\(name)'; there are \(MapPage.mapLibreFiles.keys.sorted().joined(separator: ", "))")
        }
        guard let directory = configuration.mapLibreDirectory, let data = FileManager.default.contents(atPath: directory + "/" + name) else {
            throw APIError(.notFound, code: "maplibre_missing",
                           detail: "MapLibre GL JS is not at \(configuration.mapLibreDirectory ?? "any of the usual places"): install PyPI's maplibre (scripts/install-deps.sh) or pass --maplibre-dir")
        }
        var response = Reply.bytes(Array(data), contentType: contentType, compressible: true, request: request)
        response.headers[.cacheControl] = "max-age=3600"
        return response
    }
}

// MARK: - Routes, with their OpenAPI operations (served whole at /openapi.json)

extension Endpoints {
    /// The map page and its files.
    static let mapRoutes: [Route] = [
        Route(.get, "/", { try $0.mapPage($1, $2) }, openAPI: #"""
            {
              "summary": "The map page (HTML); with Accept naming JSON and not HTML, links to the API",
              "responses": {"414": {"$ref": "#/components/responses/Problem"}, "200": {"description": "The page, or links.", "content": {"text/html": {"schema": {"type": "string"}}, "application/json": {"schema": {"type": "object"}}}}}
            }
            """#),
        Route(.get, "/map/{file}", { try $0.mapFile($1, $2) }, openAPI: #"""
            {
              "summary": "The map page's script (map.js), style sheet (map.css) and MapLibre style (style.json: the store's layers and tile sets, with absolute tile URLs)",
              "parameters": [{"name": "file", "in": "path", "required": true, "schema": {"type": "string", "enum": ["map.js", "map.css", "style.json"]}}],
              "responses": {"414": {"$ref": "#/components/responses/Problem"}, "200": {"description": "The file."}, "404": {"$ref": "#/components/responses/Problem"}}
            }
            """#),
        Route(.get, "/maplibre/{file}", { try $0.mapLibreFile($1, $2) }, openAPI: #"""
            {
              "summary": "MapLibre GL JS (maplibre-gl.js, maplibre-gl.css) from the system's copy (PyPI's maplibre; --maplibre-dir)",
              "parameters": [{"name": "file", "in": "path", "required": true, "schema": {"type": "string", "enum": ["maplibre-gl.js", "maplibre-gl.css"]}}],
              "responses": {"414": {"$ref": "#/components/responses/Problem"}, "200": {"description": "The file."}, "404": {"$ref": "#/components/responses/Problem"}}
            }
            """#),
        Route(.get, "/leaflet/{file}", { try $0.leafletFile($1, $2) }, openAPI: #"""
            {
              "summary": "Leaflet (leaflet.js, leaflet.css) from the system's copy (--leaflet-dir)",
              "parameters": [{"name": "file", "in": "path", "required": true, "schema": {"type": "string"}}],
              "responses": {"414": {"$ref": "#/components/responses/Problem"}, "200": {"description": "The file."}, "404": {"$ref": "#/components/responses/Problem"}}
            }
            """#),
        Route(.get, "/leaflet/images/{file}", { try $0.leafletFile($1, $2) }, openAPI: #"""
            {
              "summary": "Leaflet's images from the system's copy",
              "parameters": [{"name": "file", "in": "path", "required": true, "schema": {"type": "string"}}],
              "responses": {"414": {"$ref": "#/components/responses/Problem"}, "200": {"description": "The image."}, "404": {"$ref": "#/components/responses/Problem"}}
            }
            """#),
    ]
}
