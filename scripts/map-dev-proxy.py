#!/usr/bin/env python3
"""A development proxy for the map page: edit the page's files and reload, no Swift build.

    scripts/map-dev-proxy.py --backend http://127.0.0.1:8080 [--port 8737] [--page-dir DIR | --git-rev REV]

Serves, in front of a running `vltava serve`:
  - `/` and `/map/{file}` from the working tree's Sources/Server/MapPage/ (or from a git
    revision with --git-rev, e.g. HEAD for the Leaflet page, read with `git show`);
  - `/map/style.json` as the server serves it: every `tiles` entry that starts with `/`
    prefixed with the request's origin, the sources whose name (the path segment after
    `/v1/tiles/`) is not a layer or tile set of the store left out, and the layers drawn from
    them;
  - `/maplibre/maplibre-gl.js` and `.css` from PyPI's `maplibre` wheel;
and forwards everything else (method, headers, body; the answer streamed, so the change feed's
Server-Sent Events pass as they come) to the backend. Not a production proxy: loopback only.
Used by Benchmarks/map-speed.py (once for each page; it counts requests with --request-log).
"""

import argparse
import http.client
import http.server
import json
import os
import socketserver
import subprocess
import sys
import threading
import time
import urllib.parse

HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "host"}
TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
         ".html": "text/html; charset=utf-8", ".json": "application/json"}
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def maplibre_dir():
    import importlib.util
    spec = importlib.util.find_spec("maplibre")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("map-dev-proxy: PyPI's maplibre is not installed (pip install --no-deps maplibre)")
    return os.path.join(list(spec.submodule_search_locations)[0], "srcjs")


def filtered_style(raw, origin, names):
    """The style as the server serves it (see the module's docstring)."""
    style = json.loads(raw)
    kept = {}
    for name, source in style.get("sources", {}).items():
        tiles = source.get("tiles")
        if tiles:
            store_name = None
            for url in tiles:
                if "/v1/tiles/" in url:
                    store_name = url.split("/v1/tiles/", 1)[1].split("/", 1)[0]
            if store_name is not None and store_name not in names:
                continue
            source = dict(source, tiles=[origin + t if t.startswith("/") else t for t in tiles])
        kept[name] = source
    style["sources"] = kept
    style["layers"] = [layer for layer in style.get("layers", []) if "source" not in layer or layer["source"] in kept]
    return json.dumps(style).encode()


def make_handler(args):
    backend = urllib.parse.urlsplit(args.backend)
    request_log = open(args.request_log, "a") if args.request_log else None
    log_lock = threading.Lock()
    libdir = maplibre_dir()

    def page_file(name):
        if args.git_rev:
            try:
                return subprocess.run(["git", "-C", REPO, "show", f"{args.git_rev}:Sources/Server/MapPage/{name}"],
                                      check=True, capture_output=True).stdout
            except subprocess.CalledProcessError:
                return None
        path = os.path.join(args.page_dir, name)
        if os.path.isfile(path):
            with open(path, "rb") as f:
                return f.read()
        return None

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format, *a):
            if args.verbose:
                sys.stderr.write("%.3f %s\n" % (time.time(), format % a))

        def log_request(self, code="-", size="-"):
            super().log_request(code, size)
            if request_log is not None:
                code = getattr(code, "value", code)
                with log_lock:
                    request_log.write(f"{time.time():.6f} {self.command} {self.path} {code}\n")
                    request_log.flush()

        def send_bytes(self, body, content_type, status=200, extra=()):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-cache")
            for k, v in extra:
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def local(self):
            path = urllib.parse.urlsplit(self.path).path
            if self.command not in ("GET", "HEAD"):
                return False
            if path == "/" and "json" not in self.headers.get("Accept", "") or path == "/index.html":
                body = page_file("index.html")
                self.send_bytes(body, TYPES[".html"])
                return True
            if path.startswith("/map/"):
                name = path[len("/map/"):]
                if "/" in name or name.startswith("."):
                    return False
                body = page_file(name)
                if body is None:
                    self.send_bytes(b'{"code":"not_found"}', "application/problem+json", 404)
                    return True
                if name == "style.json":
                    layers = self.backend_json("/v1/layers")
                    names = {l["name"] for l in layers["layers"]} | {t["name"] for t in layers["tilesets"]}
                    body = filtered_style(body, "http://" + self.headers.get("Host", "127.0.0.1"), names)
                self.send_bytes(body, TYPES.get(os.path.splitext(name)[1], "application/octet-stream"))
                return True
            if path.startswith("/maplibre/") and not args.git_rev:
                name = path[len("/maplibre/"):]
                if name not in ("maplibre-gl.js", "maplibre-gl.css", "maplibre-gl.js.map"):
                    return False
                file = os.path.join(libdir, name)
                if not os.path.isfile(file):
                    self.send_bytes(b'{"code":"not_found"}', "application/problem+json", 404)
                    return True
                with open(file, "rb") as f:
                    self.send_bytes(f.read(), TYPES.get(os.path.splitext(name)[1], "application/octet-stream"))
                return True
            return False

        def backend_json(self, path):
            connection = http.client.HTTPConnection(backend.hostname, backend.port, timeout=30)
            connection.request("GET", path, headers={"Accept": "application/json"})
            return json.loads(connection.getresponse().read())

        def forward(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
            headers["Host"] = backend.netloc
            connection = http.client.HTTPConnection(backend.hostname, backend.port, timeout=3600)
            try:
                connection.request(self.command, self.path, body=body, headers=headers)
                response = connection.getresponse()
            except OSError as error:
                self.send_bytes(json.dumps({"code": "proxy", "detail": str(error)}).encode(), "application/json", 502)
                return
            self.send_response(response.status, response.reason)
            streamed = response.getheader("Content-Length") is None and response.status not in (204, 304) and self.command != "HEAD"
            for k, v in response.getheaders():
                # Date and Server: send_response wrote its own (one of each, as the server would).
                if k.lower() not in HOP and k.lower() not in ("date", "server"):
                    self.send_header(k, v)
            if streamed:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            try:
                while True:
                    chunk = response.read1(65536)
                    if not chunk:
                        break
                    self.wfile.write(chunk)
                    self.wfile.flush()
            except OSError:
                self.close_connection = True
            finally:
                connection.close()

        def handle_one(self):
            if not self.local():
                self.forward()

        do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = handle_one

    return Handler


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", required=True, help="the vltava server, http://HOST:PORT")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8737)
    parser.add_argument("--page-dir", default=os.path.join(REPO, "Sources/Server/MapPage"))
    parser.add_argument("--git-rev", help="serve the page's files from this git revision (read-only git show)")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--request-log", help="append a line per request to this file: unix time, method, path, status")
    args = parser.parse_args()
    server = Server((args.host, args.port), make_handler(args))
    print(f"map-dev-proxy on http://{args.host}:{server.server_address[1]}/ -> {args.backend}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
