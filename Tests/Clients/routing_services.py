#!/usr/bin/env python3
"""Drives Vltava's isochrone, trip and match services as clients nobody on the project wrote
would: routingpy's GraphHopper client asks for the isochrone (and parses it with its own
parser); the trip and match requests are built exactly as OSRM's HTTP API documentation shows
(routingpy's OSRM client has neither). Prints what they read as one JSON object for
ServerTests/StandardClientTests.swift to check.

Usage: routing_services.py BASE_URL POINTS_JSON
  POINTS_JSON: {"start": [lon, lat], "stages": [[lon, lat], …], "trace": [[lon, lat, t], …]}
"""
import itertools
import json
import sys
import urllib.request

from routingpy import Graphhopper


def get(url):
    with urllib.request.urlopen(url, timeout=60) as response:
        return json.load(response)


def coordinates(points):
    # OSRM: {longitude},{latitude};{longitude},{latitude}[;…]
    return ";".join(f"{lon:.6f},{lat:.6f}" for lon, lat in points)


def main():
    base, points = sys.argv[1], json.loads(sys.argv[2])
    start, stages, trace = points["start"], points["stages"], points["trace"]

    client = Graphhopper(base_url=base)
    isochrones = client.isochrones(locations=start, profile="foot", intervals=[600], buckets=2)
    parsed = [{"interval": i.interval, "points": len(i.geometry), "geometry": i.geometry} for i in isochrones]

    # /trip/v1/{profile}/{coordinates}?roundtrip=true&source=first (OSRM's documented options).
    trip = get(f"{base}/trip/v1/foot/{coordinates(stages)}?roundtrip=true&source=first&geometries=geojson&overview=full")
    table = get(f"{base}/table/v1/foot/{coordinates(stages)}?annotations=distance")
    # The optimum by enumeration over the table, from the first stage and back.
    d = table["distances"]
    n = len(stages)
    best = min(sum(d[a][b] for a, b in zip((0,) + order, order + (0,))) for order in itertools.permutations(range(1, n)))

    # /match/v1/{profile}/{coordinates}?timestamps=…&radiuses=… (seconds; metres of accuracy).
    stamps = ";".join(str(int(t)) for _, _, t in trace)
    radiuses = ";".join("5" for _ in trace)
    match = get(f"{base}/match/v1/foot/{coordinates([(x, y) for x, y, _ in trace])}"
                f"?timestamps={stamps}&radiuses={radiuses}&geometries=geojson&overview=full")

    print(json.dumps({"isochrones": parsed, "isochrone_raw": isochrones.raw, "trip": trip, "table": table,
                      "best_round_trip": best, "match": match}))


if __name__ == "__main__":
    main()
