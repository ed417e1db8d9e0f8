#!/usr/bin/env python3
"""Visible at once: from an acknowledged one-feature write to the same server answering it.

Imports a polygon layer (the W3 workload's 200,000 polygons, or a tiled copy of 1,000,000:
Benchmarks/w3-tiled.py), serves it with a write token, then --writes times: inserts one small
square at a random point of the layer's extent (POST /ogc/collections/cells/items) and, the
moment the 201 arrives, asks GET /v1/layers/cells/containing at the square's centre, which must
name the new feature. Prints the p50/p90/p99/max of the write (request to acknowledgement) and
of the visibility (acknowledgement to the answer that holds it), the server's RSS (and heap)
before and after, as RESULT lines. Each request is a new connection (urllib), as a backend's would be.

    Benchmarks/write-latency.py --binary .build/release/vltava --polygons /tmp/geobench/W3-pip-synthetic-200k/polygons.geojson \\
        --work /tmp/write-latency [--writes 500] [--label 200k]
"""

import argparse
import json
import os
import random
import subprocess
import sys
import time
import urllib.request

import benchsupport
from benchsupport import free_port, rss_mb


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--polygons", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--writes", type=int, default=500)
    parser.add_argument("--label", default="run")
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args()
    rng = random.Random(options.seed)
    store = benchsupport.fresh_store(options.work)
    started = time.time()
    subprocess.run([options.binary, "import", options.polygons, "--layer", "cells", "--db", store], check=True, stdout=subprocess.DEVNULL)
    print(f"RESULT {options.label} import_seconds={time.time() - started:.1f}", flush=True)
    token, tokens = benchsupport.write_token_file(options.work, "bench-")
    port = free_port()
    server = benchsupport.serve(options.binary, store, port, tokens, "error", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                host=None, new_session=False)
    base = f"http://127.0.0.1:{port}"
    try:
        if not benchsupport.wait_until_ready(base + "/readyz", server, 600, request_timeout=5, interval=0.1):
            sys.exit("the server did not become ready")
        with urllib.request.urlopen(base + "/v1/layers", timeout=30) as answer:
            layer = next(l for l in json.load(answer)["layers"] if l["name"] == "cells")
        b = layer["bounds"]
        print(f"RESULT {options.label} features={layer['count']} rss_before_mb={rss_mb(server.pid)}", flush=True)
        writes, visible = [], []
        for n in range(options.writes):
            lon = rng.uniform(b[0], b[2]) if isinstance(b, list) else rng.uniform(b["min_lon"], b["max_lon"])
            lat = rng.uniform(b[1], b[3]) if isinstance(b, list) else rng.uniform(b["min_lat"], b["max_lat"])
            d = 1e-5
            square = [[lon - d, lat - d], [lon + d, lat - d], [lon + d, lat + d], [lon - d, lat + d], [lon - d, lat - d]]
            body = json.dumps({"type": "Feature", "geometry": {"type": "Polygon", "coordinates": [square]}, "properties": {"idx": -1 - n}}).encode()
            request = urllib.request.Request(base + "/ogc/collections/cells/items", data=body, method="POST",
                                             headers={"Authorization": f"Bearer {token}", "Content-Type": "application/geo+json"})
            t0 = time.perf_counter()
            with urllib.request.urlopen(request, timeout=60) as answer:
                fid = json.load(answer)["changes"][0]["fid"]
            t1 = time.perf_counter()
            with urllib.request.urlopen(f"{base}/v1/layers/cells/containing?lon={lon}&lat={lat}", timeout=60) as answer:
                found = json.load(answer)
            t2 = time.perf_counter()
            fids = [f.get("fid", f.get("id")) for f in found.get("features", found.get("matches", []))]
            if fid not in fids and str(fid) not in json.dumps(found):
                sys.exit(f"write {n}: fid {fid} is not in the next answer: {json.dumps(found)[:300]}")
            writes.append((t1 - t0) * 1000)
            visible.append((t2 - t1) * 1000)
        print(f"RESULT {options.label} writes={len(writes)} rss_after_mb={rss_mb(server.pid)}", flush=True)
        for name, values in (("write_ms", writes), ("visible_ms", visible)):
            print(f"RESULT {options.label} {name} p50={percentile(values, 50):.2f} p90={percentile(values, 90):.2f} "
                  f"p99={percentile(values, 99):.2f} max={max(values):.2f}", flush=True)
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
