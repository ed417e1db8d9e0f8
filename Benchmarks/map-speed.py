#!/usr/bin/env python3
"""The map page on MapLibre against the Leaflet page it replaced, at the same views, in one run.

    Benchmarks/map-speed.py --backend http://127.0.0.1:PORT [--old-rev 3bdfcee^] [--runs 3] [--json FILE]

--backend is a running `vltava serve` on the demo store (scripts/build-demo-store.sh). The script
starts two scripts/map-dev-proxy.py in front of it: one serves the new page from the working
tree (Sources/Server/MapPage/, MapLibre from PyPI's wheel), the other the old page's files from
git (--old-rev, read with `git show`; Leaflet from the server's /leaflet/). Both pages go
through the same kind of proxy, so neither pays a cost the other does not.

Each run opens a fresh headless Chromium (WebGL on SwiftShader, as the browser test) for each
page, cold cache, the pages alternating which goes first, and measures in the browser:
  - first render at the bare URL: navigation start to the view completely drawn. MapLibre: the
    map's first `idle` (every tile of the view loaded and drawn). Leaflet: the animation frame
    after the last data request of the view has been read (its SVG is drawn synchronously as
    the data arrives), with 300 ms of network quiet to be sure no request follows;
  - a pan-and-zoom sequence (the same centres and scales: Leaflet's zoom is MapLibre's + 1, its
    tiles being 256 px to MapLibre's 512), with the same layers on both pages, each step timed
    from the jump to the view completely drawn, as above;
  - the data requests each view made (from the proxy's request log: tiles, OGC items pages,
    other), against the visible tiles: for each source the new page shows, the tiles of its
    zoom (MapLibre's ideal zoom clamped to the source's range) that meet both the view and the
    source's bounds.
Prints a table (medians over the runs); --json FILE keeps every run's values too.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchsupport  # noqa: E402

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402

ROOT = benchsupport.ROOT
LAYERS = "districts,parking,paths,pavilions,pens,stations,zoo_map"
# MapLibre zooms; the Leaflet page is asked for zoom + 1 (the same scale).
STEPS = [
    ("Prague z12", [14.43, 50.08], 12),
    ("pan east z12", [14.47, 50.08], 12),
    ("Holešovice z13", [14.42, 50.10], 13),
    ("zoo z15", [14.408, 50.117], 15),
    ("zoo z16", [14.406, 50.117], 16),
    ("zoo pan z16", [14.411, 50.119], 16),
    ("Troja z14", [14.40, 50.11], 14),
    ("city z11", [14.45, 50.07], 11),
]

# The Leaflet page's requests, counted and timed from inside the page: every fetch is read to
# its end before the page sees it, then an animation frame marks the drawing after it.
NET_PROBE = """
window.__net = {inflight: 0, lastStart: 0, lastDone: 0, painted: 0};
const original = window.fetch;
window.fetch = function (...args) {
  __net.inflight++; __net.lastStart = performance.now();
  return original.apply(this, args).then(async (response) => {
    const body = [204, 304].includes(response.status) ? null : await response.arrayBuffer();
    return new Response(body, {status: response.status, statusText: response.statusText, headers: response.headers});
  }).finally(() => {
    __net.inflight--; __net.lastDone = performance.now();
    setTimeout(() => requestAnimationFrame(() => { __net.painted = performance.now(); }), 0);
  });
};
"""

LEAFLET_QUIET = """
const [since, done] = [arguments[0], arguments[arguments.length - 1]];
const poll = () => {
  const now = performance.now(), n = window.__net;
  if (document.body.dataset.ready === 'true' && n.inflight === 0 && now - n.lastStart > 300 && now - n.lastDone > 300 && n.painted >= n.lastDone)
    done(Math.max(n.painted, n.lastDone) - since);
  else setTimeout(poll, 20);
};
poll();
"""

LEAFLET_MOVE = """
const [lat, lon, zoom, done] = arguments;
const started = performance.now();
vltava.map.setView([lat, lon], zoom, {animate: false});
const poll = () => {
  const now = performance.now(), n = window.__net;
  if (n.inflight === 0 && now - started > 300 && now - n.lastStart > 300 && now - n.lastDone > 300 && n.painted >= n.lastDone)
    done(Math.max(n.lastDone > started ? n.painted : started, started) - started);
  else setTimeout(poll, 20);
};
setTimeout(poll, 20);
"""

MAPLIBRE_MOVE = """
const [lat, lon, zoom, done] = arguments;
const map = vltava.map, started = performance.now();
map.jumpTo({center: [lon, lat], zoom});
const check = () => { if (map.loaded() && map.areTilesLoaded()) done(performance.now() - started); else map.once('idle', check); };
map.once('idle', check);
"""

BOUNDS = {
    "maplibre": "const b = vltava.map.getBounds(); return [b.getWest(), b.getSouth(), b.getEast(), b.getNorth(), vltava.map.getZoom()];",
    "leaflet": "const b = vltava.map.getBounds(); return [b.getWest(), b.getSouth(), b.getEast(), b.getNorth(), vltava.map.getZoom() - 1];",
}


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--use-angle=swiftshader",
                     "--enable-unsafe-swiftshader", "--window-size=1280,800", "--hide-scrollbars"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_script_timeout(120)
    return driver


def wait_for(driver, script, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if driver.execute_script(script):
            return
        time.sleep(0.02)
    raise SystemExit(f"map-speed: timed out waiting for {script}")


def tile_range(west, south, east, north, z):
    n = 2 ** z
    def x(lon):
        return min(n - 1, max(0, int(math.floor((lon + 180) / 360 * n))))
    def y(lat):
        lat = max(-85.0511, min(85.0511, lat))
        r = math.radians(lat)
        return min(n - 1, max(0, int(math.floor((1 - math.log(math.tan(r) + 1 / math.cos(r)) / math.pi) / 2 * n))))
    return x(west), y(north), x(east), y(south)


def visible_tiles(style, view):
    """For each source of the new page's style: the tiles its view needs (see the docstring)."""
    west, south, east, north, zoom = view
    counts = {}
    for name, source in style["sources"].items():
        if source.get("type") != "vector":
            continue
        z = math.floor(zoom + 1e-9)
        if z < source.get("minzoom", 0):
            counts[name] = 0
            continue
        z = min(z, source.get("maxzoom", 22))
        b = source.get("bounds", [-180, -85.0511, 180, 85.0511])
        w, s, e, n = max(west, b[0]), max(south, b[1]), min(east, b[2]), min(north, b[3])
        if w >= e or s >= n:
            counts[name] = 0
            continue
        x0, y0, x1, y1 = tile_range(w, s, e, n, z)
        counts[name] = (x1 - x0 + 1) * (y1 - y0 + 1)
    return counts


def requests_between(log, start, end):
    counts = {"tiles": 0, "ogc_items": 0, "other_data": 0, "by_source": {}}
    with open(log) as f:
        for line in f:
            t, method, path, status = line.split(" ", 3)
            if not start <= float(t) <= end:
                continue
            if path.startswith("/v1/tiles/") and "/" in path[len("/v1/tiles/"):]:
                counts["tiles"] += 1
                name = path[len("/v1/tiles/"):].split("/", 1)[0]
                counts["by_source"][name] = counts["by_source"].get(name, 0) + 1
            elif path.startswith("/ogc/collections/") and "/items" in path:
                counts["ogc_items"] += 1
            elif path.startswith(("/v1/", "/ogc/")):
                counts["other_data"] += 1
    return counts


def measure(page, base, log, style):
    driver = browser()
    try:
        if page == "leaflet":
            driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": NET_PROBE})
        start = time.time()
        driver.get(base + "/")
        wait_for(driver, "return document.body.dataset.ready === 'true'")
        if page == "maplibre":
            wait_for(driver, "return vltava.timings.first_render_ms !== null")
            first = driver.execute_script("return vltava.timings.first_render_ms")
        else:
            first = driver.execute_async_script(LEAFLET_QUIET, 0)
        time.sleep(0.4)
        bare_view = driver.execute_script(BOUNDS[page])
        bare = {"ms": first, "requests": requests_between(log, start, time.time()), "visible": visible_tiles(style, bare_view)}
        # The same layers on both pages, from the first step's view.
        name, (lon, lat), zoom = STEPS[0]
        driver.get("about:blank")
        page_zoom = zoom + (1 if page == "leaflet" else 0)
        driver.get(f"{base}/#map={page_zoom}/{lat}/{lon}&layers={LAYERS}")
        wait_for(driver, "return document.body.dataset.ready === 'true'")
        if page == "maplibre":
            wait_for(driver, "return vltava.timings.first_render_ms !== null")
        else:
            driver.execute_async_script(LEAFLET_QUIET, 0)
        time.sleep(0.4)
        steps = []
        for name, (lon, lat), zoom in STEPS[1:]:
            start = time.time()
            if page == "maplibre":
                ms = driver.execute_async_script(MAPLIBRE_MOVE, lat, lon, zoom)
            else:
                ms = driver.execute_async_script(LEAFLET_MOVE, lat, lon, zoom + 1)
            time.sleep(0.3)
            view = driver.execute_script(BOUNDS[page])
            steps.append({"view": name, "ms": ms, "requests": requests_between(log, start, time.time()), "visible": visible_tiles(style, view)})
        errors = [e["message"][:200] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        return {"bare": bare, "steps": steps, "console_errors": errors}
    finally:
        driver.quit()


def start_proxy(backend, port, log, extra):
    process = subprocess.Popen([sys.executable, "-B", os.path.join(ROOT, "scripts/map-dev-proxy.py"), "--backend", backend,
                                "--port", str(port), "--request-log", log, *extra], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    process.stdout.readline()   # "map-dev-proxy on …": listening
    return process


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", required=True)
    parser.add_argument("--old-rev", default="3bdfcee^", help="the git revision whose map page is the Leaflet one (default: the"
                        " commit before the MapLibre page's)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", metavar="FILE", help="also write the medians and every run's values to FILE")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="map-speed-")
    logs = {"maplibre": os.path.join(work, "new.log"), "leaflet": os.path.join(work, "old.log")}
    ports = {"maplibre": benchsupport.free_port(), "leaflet": benchsupport.free_port()}
    proxies = [start_proxy(args.backend, ports["maplibre"], logs["maplibre"], []),
               start_proxy(args.backend, ports["leaflet"], logs["leaflet"], ["--git-rev", args.old_rev])]
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ports['maplibre']}/map/style.json", timeout=30) as response:
            style = json.load(response)
        runs = {"maplibre": [], "leaflet": []}
        for run in range(args.runs):
            order = ["maplibre", "leaflet"] if run % 2 == 0 else ["leaflet", "maplibre"]
            for page in order:
                runs[page].append(measure(page, f"http://127.0.0.1:{ports[page]}", logs[page], style))
    finally:
        for process in proxies:
            process.terminate()
            process.wait()
    result = summarise(runs)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f)
    print_table(result, args.runs)


def summarise(runs):
    out = {}
    for page, measured in runs.items():
        bare = [m["bare"] for m in measured]
        page_out = {"bare": {"ms": statistics.median(b["ms"] for b in bare), "ms_all": [round(b["ms"], 1) for b in bare],
                             "requests": bare[0]["requests"], "visible": sum(bare[0]["visible"].values()), "visible_by_source": bare[0]["visible"]},
                    "steps": [], "console_errors": sorted({e for m in measured for e in m["console_errors"]})}
        for i in range(len(measured[0]["steps"])):
            steps = [m["steps"][i] for m in measured]
            page_out["steps"].append({"view": steps[0]["view"], "ms": statistics.median(s["ms"] for s in steps),
                                      "ms_all": [round(s["ms"], 1) for s in steps], "requests": steps[0]["requests"],
                                      "visible": sum(steps[0]["visible"].values()), "visible_by_source": steps[0]["visible"]})
        page_out["sequence_ms"] = statistics.median(sum(m["steps"][i]["ms"] for i in range(len(m["steps"]))) for m in measured)
        out[page] = page_out
    return out


def print_table(result, runs):
    new, old = result["maplibre"], result["leaflet"]
    def reqs(r):
        return f"{r['tiles']} tiles + {r['ogc_items']} items + {r['other_data']} other"
    print(f"map page speed, medians of {runs} runs (ms from the jump or navigation start to the view completely drawn)")
    print(f"{'view':<16} {'MapLibre ms':>12} {'Leaflet ms':>11}  {'MapLibre requests (visible tiles)':<42} Leaflet requests")
    print(f"{'bare URL':<16} {new['bare']['ms']:>12.0f} {old['bare']['ms']:>11.0f}  "
          f"{reqs(new['bare']['requests']) + ' (' + str(new['bare']['visible']) + ')':<42} {reqs(old['bare']['requests'])}")
    for a, b in zip(new["steps"], old["steps"]):
        print(f"{a['view']:<16} {a['ms']:>12.0f} {b['ms']:>11.0f}  "
              f"{reqs(a['requests']) + ' (' + str(a['visible']) + ')':<42} {reqs(b['requests'])}")
    print(f"{'sequence total':<16} {new['sequence_ms']:>12.0f} {old['sequence_ms']:>11.0f}")
    views = [dict(new["bare"], view="bare URL", visible_by_source=new["bare"]["visible_by_source"])] + new["steps"]
    over = [(s["view"], s["requests"]["by_source"], s["visible_by_source"]) for s in views
            if any(n > s["visible_by_source"].get(k, 0) for k, n in s["requests"]["by_source"].items())]
    print("MapLibre views fetching more tiles than visible:", over or "none")
    print("console errors: MapLibre", new["console_errors"] or "none", "| Leaflet", old["console_errors"] or "none")


if __name__ == "__main__":
    main()
