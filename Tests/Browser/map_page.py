#!/usr/bin/env python3
"""The map page in a real browser: Debian's chromium and chromedriver, driven by Selenium, with
WebGL through SwiftShader (the page draws with MapLibre GL JS).

    python3 Tests/Browser/map_page.py --base http://127.0.0.1:PORT [--screenshots DIR] [--write-token TOKEN]

Against a server on the demo store it checks, with real clicks on the map:
  - the bare URL (no #map=) fits the store's extent and draws its first layers, its view is
    written into the URL, the canvas is not blank (distinct colours of its pixels), and the
    console has no errors; the time to the first full render (every tile of the view drawn);
  - the style the server serves (/map/style.json) passes MapLibre's own validation, run in the
    browser (a style with a mistake in it does not: the check can fail);
  - the zoo at z16 draws the zoo's tiles (paths, buildings, water), the pavilions and the pens,
    with the pavilions' labels and OpenStreetMap's attribution;
  - a click inside "Pavilon goril" shows "Pavilon goril" and "Praha-Troja", the nearest station
    and a 24-hour chart;
  - route mode between the zoo entrance and the gorilla pen draws a line whose metres are
    /v1/route's for the same points, and the two snapped points;
  - nearest mode draws a line to each of the 3 nearest stations;
  - the query box lists AREPA first for FIND stations NEAREST 3 TO POINT(14.4208 50.0880), and
    shows a syntax error with its caret;
  - Prague at z12: every station drawn in the colour of its latest air-quality index (the
    canvas's pixel at the station's centre), the parking zones by category, with legends;
  - the URL keeps the view, the mode and the layers;
  - a pan-and-zoom sequence, each step timed in the browser until the map is idle;
  - with --write-token: a pen inserted through the API (POST /ogc/collections/pens/items)
    appears on the map within 1 s, without a page reload (the change feed); it is deleted after;
    and an unchanged tile revalidates with If-None-Match (304, no body);
  - on a phone-sized viewport the map and the panel are both on screen, and a click works;
  - no console errors at any of these views.
Screenshots (DIR, default .build/screenshots): map-bare.png, map-zoo-z16.png,
map-prague-z12.png, map-route.png, map-query.png, map-phone.png.
Prints one JSON object (the measured values) on stdout; exits 1 naming the first failed check.
Run by Tests/ServerTests/MapPageTests.swift, which starts the server.
"""

import argparse
import json
import os
import sys
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

ENTRANCE = (14.4109, 50.1167)
GORILLA_PEN = (14.40519, 50.11576)
INSIDE_GORILLA_PAVILION = (14.40497, 50.11545)
ZOO_Z16 = "map=16/50.11700/14.40600"
ROUTE_VIEW = "map=16/50.11610/14.40800&layers=zoo_map,pavilions"
PRAGUE_Z12 = "map=12/50.08000/14.43000"
PHONE_VIEW = "map=16/50.11545/14.40497&layers=zoo_map,pavilions,pens"
LIVE_POINT = (14.4072, 50.1170)   # a free spot in the zoo, in ZOO_Z16's view
AQI_COLOURS = ["#1a9850", "#91cf60", "#fee08b", "#fc8d59", "#d73027", "#7b3294"]
NO_VALUE = "#999999"
# Pan and zoom: each step a jump, then until the map is idle (every tile loaded and drawn).
PAN_ZOOM = [
    {"center": [14.43, 50.08], "zoom": 12},
    {"center": [14.47, 50.08], "zoom": 12},
    {"center": [14.42, 50.10], "zoom": 13},
    {"center": [14.408, 50.117], "zoom": 15},
    {"center": [14.406, 50.117], "zoom": 16},
    {"center": [14.411, 50.119], "zoom": 16},
    {"center": [14.40, 50.11], "zoom": 14},
    {"center": [14.45, 50.07], "zoom": 11},
]

# Distinct colours of the map's canvas (every 3rd pixel each way) and the commonest's share.
CANVAS_COLOURS = """
const source = vltava.map.getCanvas();
const c = document.createElement('canvas'); c.width = source.width; c.height = source.height;
const g = c.getContext('2d'); g.drawImage(source, 0, 0);
const data = g.getImageData(0, 0, c.width, c.height).data;
const counts = new Map(); let n = 0;
for (let y = 0; y < c.height; y += 3) for (let x = 0; x < c.width; x += 3) {
  const i = (y * c.width + x) * 4, key = (data[i] << 16) | (data[i + 1] << 8) | data[i + 2];
  counts.set(key, (counts.get(key) || 0) + 1); n++;
}
return {distinct: counts.size, commonest_share: Math.max(...counts.values()) / n};
"""

# The colour of the canvas's pixel at each of some [lon, lat], as #rrggbb.
PIXELS_AT = """
const map = vltava.map, source = map.getCanvas(), ratio = source.width / source.clientWidth;
const c = document.createElement('canvas'); c.width = source.width; c.height = source.height;
const g = c.getContext('2d'); g.drawImage(source, 0, 0);
return arguments[0].map(([lon, lat]) => {
  const p = map.project([lon, lat]);
  const d = g.getImageData(Math.round(p.x * ratio), Math.round(p.y * ratio), 1, 1).data;
  return '#' + [d[0], d[1], d[2]].map(v => v.toString(16).padStart(2, '0')).join('');
});
"""

# MapLibre's own style validation: a map given the style with validateStyle (the default)
# reports each problem as an error event and never loads the style.
VALIDATE = """
const [style, done] = [arguments[0], arguments[arguments.length - 1]];
const box = document.createElement('div'); box.style.cssText = 'position:absolute;left:-2000px;width:64px;height:64px';
document.body.append(box);
const probe = new maplibregl.Map({container: box, style, validateStyle: true, interactive: false, attributionControl: false});
const errors = [];
probe.on('error', (e) => errors.push(String(e.error && e.error.message || e.error || e)));
const finish = (loaded) => { probe.remove(); box.remove(); done({loaded, errors}); };
probe.once('style.load', () => finish(true));
setTimeout(() => finish(false), 5000);
"""

# Until the map is idle after a move: an async script; answers the milliseconds.
MOVE_TIMED = """
const [step, done] = [arguments[0], arguments[arguments.length - 1]];
const map = vltava.map, started = performance.now();
map.jumpTo(step);
const check = () => { if (map.loaded() && map.areTilesLoaded()) done(performance.now() - started); else map.once('idle', check); };
map.once('idle', check);
"""


class Failed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failed(message)


def wait_for(driver, script, what, timeout=60.0, *arguments):
    """Polls `script` (JavaScript returning a value) until it is truthy."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = driver.execute_script(script, *arguments)
        if value:
            return value
        time.sleep(0.05)
    raise Failed(f"timed out after {timeout:.0f} s waiting for {what}")


def browser(width, height):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    # WebGL without a GPU: ANGLE on SwiftShader.
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--use-angle=swiftshader",
                     "--enable-unsafe-swiftshader", f"--window-size={width},{height}", "--hide-scrollbars"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_script_timeout(60)
    return driver


def console_errors(driver):
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def no_console_errors(driver, where):
    errors = console_errors(driver)
    check(not errors, f"console errors {where}: {errors}")


def open_page(driver, base, fragment):
    """Opens the page at `fragment` (None: the bare URL) and waits until its first view is drawn."""
    driver.get("about:blank")  # a new document, not a hash change of the old one
    driver.get(f"{base}/" if fragment is None else f"{base}/#{fragment}")
    wait_for(driver, "return document.body.dataset.ready === 'true'", "the page to load its layers")
    wait_for(driver, "return vltava.timings.first_render_ms !== null", "the first view drawn")
    idle(driver)


def idle(driver):
    driver.execute_async_script("const done = arguments[0], map = vltava.map;"
                                " const check = () => (map.loaded() && map.areTilesLoaded()) ? done(true) : map.once('idle', check);"
                                " setTimeout(check, 30);")


def rendered(driver, layers):
    """How many features of each style layer are drawn in the view."""
    return driver.execute_script(
        "const n = {}; for (const id of arguments[0]) n[id] = vltava.map.getLayer(id) ?"
        " vltava.map.queryRenderedFeatures({layers: [id]}).length : 0; return n;", layers)


def not_blank(driver, name, out):
    colours = driver.execute_script(CANVAS_COLOURS)
    out.setdefault("canvas", {})[name] = colours
    check(colours["distinct"] >= 16 and colours["commonest_share"] < 0.97, f"the canvas is blank at {name}: {colours}")


def click_at(driver, lon, lat):
    """A real mouse click on the map at a longitude and latitude."""
    x, y = driver.execute_script("const p = vltava.map.project([arguments[0], arguments[1]]); return [p.x, p.y];", lon, lat)
    element = driver.find_element(By.ID, "map")
    width, height = element.size["width"], element.size["height"]
    check(0 <= x < width and 0 <= y < height, f"{lon}, {lat} is not in the map's view ({x:.0f}, {y:.0f} of {width}×{height})")
    # Selenium 4 offsets from the element's centre.
    ActionChains(driver).move_to_element_with_offset(element, int(x - width / 2), int(y - height / 2)).click().perform()


def panel_text(driver):
    return driver.find_element(By.ID, "panel").text


def results(driver, role):
    return driver.execute_script("return vltava.results().filter(f => f.properties.role === arguments[0]).length", role)


def get_json(url):
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.load(response)


def post_query(base, text):
    request = urllib.request.Request(f"{base}/v1/query", data=text.encode(), method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def shot(driver, directory, name, out):
    path = os.path.join(directory, name)
    driver.save_screenshot(path)
    out.setdefault("screenshots", []).append(path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--screenshots", default=".build/screenshots")
    parser.add_argument("--write-token", help="a write token of the server: checks that a write shows live")
    args = parser.parse_args()
    os.makedirs(args.screenshots, exist_ok=True)
    out = {}

    driver = browser(1280, 800)
    try:
        # The bare URL: no view in a hash. The page fits the store's extent and draws the layers
        # a first visit shows (it threw "Set map center and zoom first." and drew nothing).
        open_page(driver, args.base, None)
        timings = driver.execute_script("return vltava.timings")
        out["bare_first_render_ms"] = round(timings["first_render_ms"], 1)
        out["load_ms"] = round(timings["load_ms"], 1)
        shown = driver.execute_script("return [...document.querySelectorAll('#layer-list input:checked')].map(b => b.id.slice(6))")
        check(shown, "the bare URL shows no layer")
        drawn = rendered(driver, ["city", "district-boundaries", "stations"])
        check(all(drawn.values()), f"the bare URL does not draw the districts and the stations: {drawn}")
        check("#map=" in driver.current_url, f"the bare URL's view is not written into it: {driver.current_url}")
        not_blank(driver, "bare", out)
        no_console_errors(driver, "at the bare URL")
        shot(driver, args.screenshots, "map-bare.png", out)
        out["bare_url"] = {"shown": shown, "drawn": drawn, "url": driver.current_url,
                           "zoom": round(driver.execute_script("return vltava.map.getZoom()"), 2)}

        # The style validates with MapLibre's own validation, and the check can fail.
        style = get_json(f"{args.base}/map/style.json")
        verdict = driver.execute_async_script(VALIDATE, style)
        check(verdict["loaded"] and not verdict["errors"], f"the style does not validate: {verdict}")
        broken = json.loads(json.dumps(style))
        broken["layers"][0]["type"] = "fil"
        verdict_broken = driver.execute_async_script(VALIDATE, broken)
        check(not verdict_broken["loaded"] and verdict_broken["errors"], f"a broken style passed the validation: {verdict_broken}")
        driver.get_log("browser")   # the broken style's errors were asked for
        out["style"] = {"sources": sorted(style["sources"]), "layers": len(style["layers"]),
                        "broken_style_errors": verdict_broken["errors"][:1]}

        # The zoo at z16: the zoo's own tiles under the pavilions and the pens.
        open_page(driver, args.base, ZOO_Z16)
        drawn = rendered(driver, ["zoo-paths", "zoo-buildings", "zoo-water-area", "zoo-landuse-grass", "pavilions-fill", "pens", "walking-network"])
        check(all(drawn.values()), f"the zoo at z16 lacks a layer: {drawn}")
        labels = driver.execute_script("return [...document.querySelectorAll('.label-pavilion')].map(e => e.textContent)")
        check("Pavilon goril" in labels, f"no label for the gorilla pavilion: {labels}")
        check("OpenStreetMap" in driver.find_element(By.CLASS_NAME, "maplibregl-ctrl-attrib").text,
              "no OpenStreetMap attribution for the OSM-derived zoo map")
        not_blank(driver, "zoo_z16", out)
        no_console_errors(driver, "at the zoo at z16")
        shot(driver, args.screenshots, "map-zoo-z16.png", out)
        out["zoo_z16"] = {"drawn": drawn, "labels": labels}

        # Live: a pen inserted through the API shows within 1 s, without a reload.
        if args.write_token:
            driver.execute_script("window.__notReloaded = true;")
            before = driver.execute_script("return vltava.changes")
            name = f"live test {time.time():.0f}"
            answer = driver.execute_async_script("""
                const [token, name, lon, lat, done] = arguments;
                (async () => {
                const map = vltava.map, started = performance.now();
                const response = await fetch('/ogc/collections/pens/items', {method: 'POST',
                  headers: {'Content-Type': 'application/geo+json', Authorization: 'Bearer ' + token},
                  body: JSON.stringify({type: 'Feature', geometry: {type: 'Point', coordinates: [lon, lat]}, properties: {name}})});
                const receipt = await response.json();
                const written = performance.now() - started;
                const seen = () => map.queryRenderedFeatures({layers: ['pens']}).some(f => f.properties.name === name);
                const poll = () => {
                  if (seen()) done({status: response.status, receipt, written_ms: written, shown_ms: performance.now() - started});
                  else if (performance.now() - started > 5000) done({status: response.status, receipt, written_ms: written, shown_ms: null});
                  else requestAnimationFrame(poll);
                };
                poll();
                })().catch((error) => done({status: String(error), shown_ms: null}));""", args.write_token, name, *LIVE_POINT)
            check(answer["status"] == 201, f"the insert was refused: {answer}")
            check(answer["shown_ms"] is not None and answer["shown_ms"] <= 1000,
                  f"the inserted pen did not show within 1 s: {answer}")
            check(driver.execute_script("return window.__notReloaded === true"), "the page reloaded")
            fid = answer["receipt"]["changes"][0]["fid"]
            out["live"] = {"shown_ms": round(answer["shown_ms"], 1), "written_ms": round(answer["written_ms"], 1), "fid": fid,
                           "feed_events": driver.execute_script("return vltava.changes") - before}
            shot(driver, args.screenshots, "map-live.png", out)
            request = urllib.request.Request(f"{args.base}/ogc/collections/pens/items/{fid}", method="DELETE",
                                             headers={"Authorization": f"Bearer {args.write_token}"})
            urllib.request.urlopen(request, timeout=30).read()
            gone = driver.execute_async_script("""
                const [name, done] = arguments, map = vltava.map, started = performance.now();
                const poll = () => {
                  const still = map.queryRenderedFeatures({layers: ['pens']}).some(f => f.properties.name === name);
                  if (!still || performance.now() - started > 5000) done(still ? null : performance.now() - started); else requestAnimationFrame(poll);
                };
                poll();""", name)
            check(gone is not None, "the deleted pen stayed on the map")
            out["live"]["gone_ms"] = round(gone, 1)
            # An unchanged tile revalidates: its weak ETag gives 304 without a body.
            tile = f"{args.base}/v1/tiles/pavilions/16/35390/22192.mvt"
            with urllib.request.urlopen(tile, timeout=30) as response:
                etag, cache_control = response.headers["ETag"], response.headers["Cache-Control"]
            request = urllib.request.Request(tile, headers={"If-None-Match": etag})
            try:
                urllib.request.urlopen(request, timeout=30)
                status = 200
            except urllib.error.HTTPError as error:
                status = error.code
            check(status == 304, f"an unchanged tile answered {status} to If-None-Match, not 304")
            out["live"]["tile_revalidation"] = {"etag": etag, "status": status, "cache_control": cache_control}
            no_console_errors(driver, "after the live insert")

        # Where am I: inside the gorilla pavilion.
        open_page(driver, args.base, ROUTE_VIEW)
        click_at(driver, *INSIDE_GORILLA_PAVILION)
        wait_for(driver, "return document.querySelector('#here-places') !== null", "the here panel")
        text = panel_text(driver)
        check("Pavilon goril" in text and "Praha-Troja" in text, f"the here panel lacks the pavilion or district: {text!r}")
        check("Nearest station" in text, f"the here panel lacks the nearest station: {text!r}")
        wait_for(driver, "return document.querySelector('#chart polyline.series') !== null", "the 24-hour chart")
        out["here_panel_ms"] = round(driver.execute_script("return vltava.timings.panel_ms.at(-1)"), 1)
        out["here_panel_places"] = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "#here-places tr")]
        out["chart_points"] = driver.execute_script(
            "return document.querySelector('#chart polyline.series').getAttribute('points').split(' ').length")

        # Route mode: the entrance to the gorilla pen.
        driver.find_element(By.CSS_SELECTOR, "#modes button[data-mode=route]").click()
        click_at(driver, *ENTRANCE)
        wait_for(driver, "return vltava.results().some(f => f.properties.role === 'route-start')", "the route's start")
        click_at(driver, *GORILLA_PEN)
        wait_for(driver, "return vltava.lastRoute !== null && vltava.results().some(f => f.properties.role === 'route')", "the route line")
        idle(driver)
        line = wait_for(driver, "return vltava.map.queryRenderedFeatures({layers: ['results-line']}).filter(f => f.properties.role === 'route').length",
                        "the route line drawn")
        route = driver.execute_script("return vltava.lastRoute")
        shown = float(driver.find_element(By.ID, "route-distance").text)
        reference = get_json(f"{args.base}/v1/route?from={route['from'][0]},{route['from'][1]}"
                             f"&to={route['to'][0]},{route['to'][1]}&profile=foot")["routes"][0]["distance"]
        check(abs(shown - reference) < 0.0005, f"the page shows {shown} m, /v1/route says {reference} m")
        check(results(driver, "snapped") == 2, "the snapped points are not both marked")
        out["route"] = {"from": route["from"], "to": route["to"], "page_m": shown, "v1_route_m": reference, "line_pieces_drawn": line,
                        "panel_ms": round(driver.execute_script("return vltava.timings.panel_ms.at(-1)"), 1)}
        not_blank(driver, "route", out)
        shot(driver, args.screenshots, "map-route.png", out)
        check("mode=route" in driver.current_url and "layers=zoo_map,pavilions" in driver.current_url,
              f"the URL does not keep the mode and layers: {driver.current_url}")
        out["url"] = driver.current_url
        no_console_errors(driver, "with a route")

        # Nearest mode: lines to the 3 nearest stations.
        driver.find_element(By.CSS_SELECTOR, "#modes button[data-mode=nearest]").click()
        driver.execute_script("const s = document.getElementById('nearest-layer'); s.value = 'stations'; s.dispatchEvent(new Event('change'));")
        click_at(driver, *ENTRANCE)
        lines = wait_for(driver, "return vltava.results().filter(f => f.properties.role === 'nearest-line').length", "the nearest lines")
        check(lines == 3, f"{lines} nearest lines, not 3")
        idle(driver)
        check(rendered(driver, ["results-dashed"])["results-dashed"] >= 1, "the nearest lines are not drawn")
        out["nearest_rows"] = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "#nearest-list tr")]

        # The query box.
        box = driver.find_element(By.ID, "query-text")
        box.clear()
        box.send_keys("FIND stations NEAREST 3 TO POINT(14.4208 50.0880)")
        driver.find_element(By.ID, "query-run").click()
        wait_for(driver, "return document.querySelectorAll('#query-rows tr').length > 1", "the query's rows")
        rows = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "#query-rows tr")]
        check(len(rows) == 4 and "AREPA" in rows[1], f"the query box does not list AREPA first: {rows}")
        check(results(driver, "query-result") == 3, "the query's 3 stations are not drawn")
        out["query_rows"] = rows[1:]
        idle(driver)
        shot(driver, args.screenshots, "map-query.png", out)
        no_console_errors(driver, "after the query")

        # A syntax error shows its caret (the 400 it answers is the one console error allowed).
        box.clear()
        box.send_keys("FIND stations NEAREST 3 TO POINT(14.4208 50.0880")
        driver.find_element(By.ID, "query-run").click()
        caret = wait_for(driver, "const c = document.querySelector('#panel pre.caret'); return c && c.textContent", "the caret")
        check(caret.endswith("^"), f"no caret: {caret!r}")
        out["syntax_error"] = panel_text(driver)
        errors = [e for e in console_errors(driver) if "/v1/query" not in e["message"] or "400" not in e["message"]]
        check(not errors, f"console errors: {errors}")

        # Prague at z12: the stations by their latest air-quality index (the pixel at each
        # station's centre), the parking zones by category, with legends.
        open_page(driver, args.base, PRAGUE_Z12)
        wait_for(driver, "return vltava.map.queryRenderedFeatures({layers: ['stations']}).filter(f => f.state && 'aqi' in f.state).length >= 8",
                 "the stations coloured by their index")
        stations = driver.execute_script(
            "const seen = new Map(); for (const f of vltava.map.queryRenderedFeatures({layers: ['stations']}))"
            " seen.set(f.id, {fid: f.id, code: f.properties.code, lonlat: f.geometry.coordinates, aqi: f.state.aqi}); return [...seen.values()];")
        latest = {row["fid"]: row["latest_aqi"] for row in post_query(args.base, "FIND stations RETURN fid, LATEST(aqi)")["rows"]}
        pixels = driver.execute_script(PIXELS_AT, [s["lonlat"] for s in stations])
        wrong = []
        for station, pixel in zip(stations, pixels):
            value = latest.get(station["fid"])
            expected = NO_VALUE if value is None else AQI_COLOURS[int(round(value)) - 1]
            close = all(abs(int(pixel[i:i + 2], 16) - int(expected[i:i + 2], 16)) <= 6 for i in (1, 3, 5))
            if not close:
                wrong.append((station["code"], value, pixel, expected))
        check(len(stations) >= 8 and not wrong, f"stations not in their index's colour (code, index, drawn, expected): {wrong}")
        parking = rendered(driver, ["parking-fill"])["parking-fill"]
        check(parking > 0, "no parking zones at z12")
        legends = driver.find_element(By.ID, "layer-list").text
        check("LATEST(aqi):" in legends and "CATEGORY:" in legends, f"no legends: {legends!r}")
        out["prague_z12"] = {"stations_drawn": len(stations), "station_colours": sorted(set(pixels)), "parking_drawn": parking,
                             "station_labels": driver.execute_script("return document.querySelectorAll('.label-station').length")}
        not_blank(driver, "prague_z12", out)
        no_console_errors(driver, "at Prague z12")
        shot(driver, args.screenshots, "map-prague-z12.png", out)

        # The URL reproduces the view: open it afresh.
        url = out["url"]
        driver.get("about:blank")
        driver.get(url)
        wait_for(driver, "return document.body.dataset.ready === 'true'", "the page from its URL")
        check(driver.find_element(By.CSS_SELECTOR, "#modes button.active").get_attribute("data-mode") == "route",
              "the URL did not restore the mode")
        check(driver.find_element(By.ID, "profile").get_attribute("value") == "foot", "the URL did not restore the profile")
        check(driver.find_element(By.ID, "layer-zoo_map").is_selected() and not driver.find_element(By.ID, "layer-stations").is_selected(),
              "the URL did not restore the layers")

        # Pan and zoom from the bare URL, each step until the map is idle.
        open_page(driver, args.base, None)
        steps = [round(driver.execute_async_script(MOVE_TIMED, step), 1) for step in PAN_ZOOM]
        out["pan_zoom_ms"] = {"steps": steps, "total": round(sum(steps), 1)}
        no_console_errors(driver, "after panning and zooming")
    finally:
        driver.quit()

    # A phone.
    driver = browser(390, 844)
    try:
        open_page(driver, args.base, PHONE_VIEW)
        check(rendered(driver, ["zoo-buildings"])["zoo-buildings"] > 0, "no zoo buildings on a phone")
        map_box = driver.find_element(By.ID, "map").rect
        side_box = driver.find_element(By.ID, "side").rect
        viewport = driver.execute_script("return [window.innerWidth, window.innerHeight]")
        check(map_box["width"] == viewport[0] and map_box["height"] >= 0.5 * viewport[1] - 1,
              f"the map does not fill the phone's width and top half: {map_box} in {viewport}")
        check(side_box["y"] >= map_box["y"] + map_box["height"] - 1 and side_box["y"] < viewport[1],
              f"the panel is not below the map on a phone: {side_box}")
        click_at(driver, *INSIDE_GORILLA_PAVILION)
        wait_for(driver, "return document.querySelector('#here-places') !== null", "the here panel on a phone")
        check("Pavilon goril" in panel_text(driver), "the phone's panel lacks the pavilion")
        out["phone_load_ms"] = round(driver.execute_script("return vltava.timings.load_ms"), 1)
        not_blank(driver, "phone", out)
        no_console_errors(driver, "on a phone")
        shot(driver, args.screenshots, "map-phone.png", out)
    finally:
        driver.quit()
    print(json.dumps(out))


if __name__ == "__main__":
    try:
        main()
    except Failed as failure:
        print(f"map page: {failure}", file=sys.stderr)
        sys.exit(1)
