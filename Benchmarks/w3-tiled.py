#!/usr/bin/env python3
"""Writes a larger W3 polygon layer: COPIES copies of the 200,000 polygons of
../shared/bench's W3 workload, each copy shifted north by the layer's height (so no two
polygons overlap), as one GeoJSON FeatureCollection with `idx` 0…N-1 in file order.

    w3-tiled.py W3.geojson OUT.geojson [COPIES]     (default 5: 1,000,000 polygons, ~510 MB)

The generator's grid is fixed at 500 x 400, so this is how the benchmarks get 1M polygons.
"""
import json
import sys

source, target = sys.argv[1], sys.argv[2]
copies = int(sys.argv[3]) if len(sys.argv) > 3 else 5

features = []
with open(source) as f:
    for line in f:
        line = line.strip().rstrip(",")
        if line.startswith('{"type":"Feature"'):
            features.append(json.loads(line))
lats = [p[1] for feature in features for ring in feature["geometry"]["coordinates"] for p in ring]
height = max(lats) - min(lats) + 0.001

with open(target, "w") as out:
    out.write('{"type":"FeatureCollection","features":[\n')
    first = True
    for copy in range(copies):
        shift = copy * height
        for feature in features:
            rings = [[[x, round(y + shift, 7)] for x, y in ring] for ring in feature["geometry"]["coordinates"]]
            text = '{"type":"Feature","properties":{"idx":%d},"geometry":{"type":"Polygon","coordinates":%s}}' % (
                copy * len(features) + feature["properties"]["idx"], json.dumps(rings, separators=(",", ":")))
            out.write(text if first else ",\n" + text)
            first = False
    out.write("\n]}\n")
