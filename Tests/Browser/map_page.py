#!/usr/bin/env python3
"""The map page in a real browser: Debian's chromium and chromedriver, driven by Selenium.

    python3 Tests/Browser/map_page.py --base http://127.0.0.1:PORT [--screenshots DIR]

Against a server on the demo store it checks, with real clicks on the map:
  - the bare URL (no #map=) fits the store's extent and draws its first layers, with no
    console errors;
  - the page loads with no console errors, and its load and panel times (Performance API);
  - the zoo's tile set draws paths and buildings;
  - a click inside "Pavilon goril" shows "Pavilon goril" and "Praha-Troja", the nearest station
    and a 24-hour chart;
  - route mode between the zoo entrance and the gorilla pen draws a line whose metres are
    /v1/route's for the same points;
  - nearest mode draws a line to each of the 3 nearest stations;
  - the query box lists AREPA first for FIND stations NEAREST 3 TO POINT(14.4208 50.0880), and
    shows a syntax error with its caret;
  - the URL keeps the view, the mode and the layers;
  - on a phone-sized viewport the map and the panel are both on screen.
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
ZOO_VIEW = "map=17/50.11610/14.40800&layers=zoo_map,pavilions"
PHONE_VIEW = "map=17/50.11545/14.40497&layers=zoo_map,pavilions"


class Failed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failed(message)


def wait_for(driver, script, what, timeout=60.0):
    """Polls `script` (JavaScript returning a value) until it is truthy."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.05)
    raise Failed(f"timed out after {timeout:.0f} s waiting for {what}")


def browser(width, height):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={width},{height}", "--hide-scrollbars"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def console_errors(driver):
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def open_page(driver, base, fragment):
    """Opens the page at `fragment` (None: the bare URL) and waits for its layers."""
    driver.get("about:blank")  # a new document, not a hash change of the old one
    driver.get(f"{base}/" if fragment is None else f"{base}/#{fragment}")
    wait_for(driver, "return document.body.dataset.ready === 'true'", "the page to load its layers")


def click_at(driver, lon, lat):
    """A real mouse click on the map at a longitude and latitude."""
    x, y = driver.execute_script(
        "const p = vltava.map.latLngToContainerPoint([arguments[1], arguments[0]]); return [p.x, p.y];", lon, lat)
    element = driver.find_element(By.ID, "map")
    width, height = element.size["width"], element.size["height"]
    check(0 <= x < width and 0 <= y < height, f"{lon}, {lat} is not in the map's view ({x:.0f}, {y:.0f} of {width}×{height})")
    # Selenium 4 offsets from the element's centre.
    ActionChains(driver).move_to_element_with_offset(element, int(x - width / 2), int(y - height / 2)).click().perform()


def panel_text(driver):
    return driver.find_element(By.ID, "panel").text


def get_json(url):
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.load(response)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--screenshots", default=".build/screenshots")
    args = parser.parse_args()
    os.makedirs(args.screenshots, exist_ok=True)
    out = {}

    driver = browser(1280, 800)
    try:
        # The bare URL: no view in a hash. The page fits the store's extent and draws the layers
        # a first visit shows (it threw "Set map center and zoom first." and drew nothing).
        open_page(driver, args.base, None)
        shown = driver.execute_script("return [...document.querySelectorAll('#layer-list input:checked')].map(b => b.id.slice(6))")
        check(shown, "the bare URL shows no layer")
        # The paths of each shown store layer (a tile set's paths are classed by its tile layers).
        drawn = wait_for(driver, "const n = {}; for (const b of document.querySelectorAll('#layer-list input:checked')) {"
                         " const c = document.querySelectorAll('path.layer-' + b.id.slice(6)).length; if (c) n[b.id.slice(6)] = c; }"
                         " return Object.keys(n).length && n;", "a layer drawn at the bare URL")
        check("#map=" in driver.current_url, f"the bare URL's view is not written into it: {driver.current_url}")
        errors = console_errors(driver)
        check(not errors, f"console errors at the bare URL: {errors}")
        out["bare_url"] = {"shown": shown, "drawn": drawn, "url": driver.current_url}

        open_page(driver, args.base, ZOO_VIEW)
        timings = driver.execute_script("return vltava.timings")
        out["load_ms"] = round(timings["load_ms"], 1)
        out["layers_ms"] = round(timings["layers_ms"], 1)

        # The zoo's tile set draws (SVG paths, classed by tile layer).
        paths = wait_for(driver, "return document.querySelectorAll('path.zoo-path').length", "zoo paths")
        buildings = wait_for(driver, "return document.querySelectorAll('path.zoo-building').length", "zoo buildings")
        out["zoo_paths_drawn"], out["zoo_buildings_drawn"] = paths, buildings
        pavilions = wait_for(driver, "return document.querySelectorAll('path.layer-pavilions').length", "pavilions")
        out["pavilions_drawn"] = pavilions
        check("OpenStreetMap" in driver.find_element(By.CLASS_NAME, "leaflet-control-attribution").text,
              "no OpenStreetMap attribution for the OSM-derived zoo map")

        # Where am I: inside the gorilla pavilion.
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
        wait_for(driver, "return document.querySelector('path.route-start') !== null", "the route's start")
        click_at(driver, *GORILLA_PEN)
        wait_for(driver, "return vltava.lastRoute !== null && document.querySelector('path.route-line') !== null", "the route line")
        route = driver.execute_script("return vltava.lastRoute")
        shown = float(driver.find_element(By.ID, "route-distance").text)
        reference = get_json(f"{args.base}/v1/route?from={route['from'][0]},{route['from'][1]}"
                             f"&to={route['to'][0]},{route['to'][1]}&profile=foot")["routes"][0]["distance"]
        check(abs(shown - reference) < 0.0005, f"the page shows {shown} m, /v1/route says {reference} m")
        check(len(driver.find_elements(By.CSS_SELECTOR, "path.snapped")) == 2, "the snapped points are not both marked")
        out["route"] = {"from": route["from"], "to": route["to"], "page_m": shown, "v1_route_m": reference,
                        "panel_ms": round(driver.execute_script("return vltava.timings.panel_ms.at(-1)"), 1)}
        driver.save_screenshot(os.path.join(args.screenshots, "map-desktop.png"))
        check("mode=route" in driver.current_url and "layers=zoo_map,pavilions" in driver.current_url,
              f"the URL does not keep the mode and layers: {driver.current_url}")
        out["url"] = driver.current_url

        # Nearest mode: lines to the 3 nearest stations.
        driver.find_element(By.CSS_SELECTOR, "#modes button[data-mode=nearest]").click()
        driver.execute_script("const s = document.getElementById('nearest-layer'); s.value = 'stations'; s.dispatchEvent(new Event('change'));")
        click_at(driver, *ENTRANCE)
        lines = wait_for(driver, "return document.querySelectorAll('path.nearest-line').length", "the nearest lines")
        check(lines == 3, f"{lines} nearest lines, not 3")
        out["nearest_rows"] = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "#nearest-list tr")]

        # The query box.
        box = driver.find_element(By.ID, "query-text")
        box.clear()
        box.send_keys("FIND stations NEAREST 3 TO POINT(14.4208 50.0880)")
        driver.find_element(By.ID, "query-run").click()
        wait_for(driver, "return document.querySelectorAll('#query-rows tr').length > 1", "the query's rows")
        rows = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "#query-rows tr")]
        check(len(rows) == 4 and "AREPA" in rows[1], f"the query box does not list AREPA first: {rows}")
        out["query_rows"] = rows[1:]
        driver.save_screenshot(os.path.join(args.screenshots, "map-desktop-query.png"))

        errors = console_errors(driver)
        check(not errors, f"console errors: {errors}")

        # A syntax error shows its caret (the 400 it answers is the one console error allowed).
        box.clear()
        box.send_keys("FIND stations NEAREST 3 TO POINT(14.4208 50.0880")
        driver.find_element(By.ID, "query-run").click()
        caret = wait_for(driver, "const c = document.querySelector('#panel pre.caret'); return c && c.textContent", "the caret")
        check(caret.endswith("^"), f"no caret: {caret!r}")
        out["syntax_error"] = panel_text(driver)
        errors = [e for e in console_errors(driver) if "/v1/query" not in e["message"] or "400" not in e["message"]]
        check(not errors, f"console errors: {errors}")

        # Layers coloured by a class or an index, with a legend: the stations by their latest
        # air-quality index, the parking zones by category.
        open_page(driver, args.base, "map=12/50.08000/14.43000&layers=stations,parking")
        stations = wait_for(driver, "return document.querySelectorAll('path.layer-stations').length >= 10 && "
                            "document.querySelectorAll('path.layer-stations').length", "the stations")
        colours = driver.execute_script("return [...document.querySelectorAll('path.layer-stations')].map(p => p.getAttribute('fill'))")
        # The colours the API's own values call for: the index scale's third colour for an index
        # of 3 (every station at the data's last hour), grey for the one without a value.
        request = urllib.request.Request(f"{args.base}/v1/query", data=b"FIND stations RETURN code, LATEST(aqi)", method="POST")
        with urllib.request.urlopen(request, timeout=30) as response:
            indexes = [row["latest_aqi"] for row in json.load(response)["rows"]]
        scale = ["#1a9850", "#91cf60", "#fee08b", "#fc8d59", "#d73027", "#7b3294"]
        expected = {"#999" if i is None else scale[int(i) - 1] for i in indexes}
        check(set(colours) == expected and colours.count("#999") <= indexes.count(None),
              f"the stations are not coloured by their index: {colours}, expected {expected}")
        legends = driver.find_element(By.ID, "layer-list").text
        check("LATEST(aqi):" in legends and "CATEGORY:" in legends, f"no legends: {legends!r}")
        out["stations_drawn"], out["station_colours"] = stations, sorted(set(colours))
        driver.save_screenshot(os.path.join(args.screenshots, "map-desktop-layers.png"))
        check(not console_errors(driver), f"console errors: {console_errors(driver)}")

        # The URL reproduces the view: open it afresh.
        url = out["url"]
        driver.get("about:blank")
        driver.get(url)
        wait_for(driver, "return document.body.dataset.ready === 'true'", "the page from its URL")
        check(driver.find_element(By.CSS_SELECTOR, "#modes button.active").get_attribute("data-mode") == "route",
              "the URL did not restore the mode")
        check(driver.find_element(By.ID, "profile").get_attribute("value") == "foot", "the URL did not restore the profile")
        check(driver.find_element(By.ID, "layer-zoo_map").is_selected(), "the URL did not restore the layers")
    finally:
        driver.quit()

    # A phone.
    driver = browser(390, 844)
    try:
        open_page(driver, args.base, PHONE_VIEW)
        wait_for(driver, "return document.querySelectorAll('path.zoo-building').length", "zoo buildings on a phone")
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
        errors = console_errors(driver)
        check(not errors, f"console errors on a phone: {errors}")
        driver.save_screenshot(os.path.join(args.screenshots, "map-phone.png"))
    finally:
        driver.quit()
    out["screenshots"] = [os.path.join(args.screenshots, name) for name in ("map-desktop.png", "map-desktop-query.png", "map-desktop-layers.png", "map-phone.png")]
    print(json.dumps(out))


if __name__ == "__main__":
    try:
        main()
    except Failed as failure:
        print(f"map page: {failure}", file=sys.stderr)
        sys.exit(1)
