#!/usr/bin/env python3
"""Drives Vltava's OSRM API with routingpy's OSRM client and the `polyline` decoder (both from
PyPI, installed by scripts/install-deps.sh --test), as a routing app would, and prints what they
read as one JSON object for ServerTests/StandardClientTests.swift to check against /v1/route.

Usage: osrm_client.py BASE_URL POINTS_JSON
  POINTS_JSON: {"stages": [[lon, lat], …], "route": [[lon, lat], …]}
"""
import json
import sys

import polyline
from routingpy import OSRM


def main():
    base_url, points = sys.argv[1], json.loads(sys.argv[2])
    client = OSRM(base_url=base_url, timeout=60)
    stages, through = points["stages"], points["route"]

    # OSRM's table service: walking times and distances between every pair of stages.
    matrix = client.matrix(locations=stages, profile="foot", annotations=["duration", "distance"])

    # OSRM's route service through several points, with steps, as an encoded polyline.
    direction = client.directions(locations=through, profile="walking", steps=True, overview="full", geometries="polyline")
    raw = direction.raw
    decoded = polyline.decode(raw["routes"][0]["geometry"], 5)  # (lat, lon) pairs

    # One route per pair as GeoJSON too, to compare with /v1/route point by point.
    pair = client.directions(locations=stages[:2], profile="foot", overview="full", geometries="geojson")

    print(json.dumps({
        "table": {"durations": matrix.durations, "distances": matrix.distances, "code": matrix.raw["code"],
                  "sources": len(matrix.raw["sources"]), "destinations": len(matrix.raw["destinations"])},
        "route": {"raw": raw, "decoded": [[lon, lat] for lat, lon in decoded],
                  "client_distance": direction.distance, "client_geometry_points": len(direction.geometry)},
        "pair": {"raw": pair.raw, "geometry": pair.geometry},
    }))


if __name__ == "__main__":
    main()
