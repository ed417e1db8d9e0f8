#!/usr/bin/env python3
"""A wrk Lua script that asks one endpoint at the W1 workload's query points.

    python3 Benchmarks/wrk-points.py --workloads DIR --path /v1/layers/districts/containing \\
        [--suffix '&k=3'] [--label containing:] > containing.lua

The points are the first 10,000 W1 query points of the shared workloads (uniform in the
districts' bounding box), made by ../shared/bench/gen_workloads.py (numpy, shapely) when
DIR has none. Each request is `GET PATH?lon=…&lat=…SUFFIX`; each wrk thread starts at a
random point and walks the list in order. When wrk ends, the script prints one line:

    [LABEL ]rps=… p50_ms=… p99_ms=… max_ms=… requests=… errors=… (connect …, read …, write …, timeout …, non-2xx …)

with errors the sum of wrk's socket errors and the non-2xx answers. http-load.sh,
heavy-load.sh and replicas.sh all load the server through this one script.
"""
import argparse
import os
import struct
import subprocess
import sys

COUNT = 10_000

LUA = """
local prefix = %(prefix)s
local suffix = %(suffix)s
local i = 0
local requests = {}
function init(args)
    -- Every request is formatted once here, not at each call: wrk shares the server's cores,
    -- and what it spends building requests is taken from the server.
    for j = 1, #points do requests[j] = wrk.format("GET", prefix .. points[j] .. suffix) end
    math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
    i = math.random(#points)
end
function request()
    i = i %% #points + 1
    return requests[i]
end
function done(summary, latency, requests)
    local e = summary.errors
    io.write(string.format(%(label)s .. "rps=%%.0f p50_ms=%%.3f p99_ms=%%.3f max_ms=%%.3f requests=%%d errors=%%d (connect %%d, read %%d, write %%d, timeout %%d, non-2xx %%d)\\n",
        summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
        summary.requests, e.connect + e.read + e.write + e.timeout + e.status, e.connect, e.read, e.write, e.timeout, e.status))
end
"""


def lua_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default="/tmp/geobench", help="the shared workloads' directory")
    parser.add_argument("--path", required=True, help="the endpoint's path, without '?'")
    parser.add_argument("--suffix", default="", help="more query parameters, e.g. '&k=3'")
    parser.add_argument("--label", default="", help="a word printed before the result line")
    args = parser.parse_args()

    points = os.path.join(args.workloads, "W1-pip-districts", "points.lonlat.f64")
    if not os.path.isfile(points):
        generator = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "bench", "gen_workloads.py")
        subprocess.run([sys.executable, generator, args.workloads, "--only", "W1", "--scale", "quick"],
                       check=True, stdout=subprocess.DEVNULL)
    with open(points, "rb") as f:
        data = f.read()
    out = ["points = {\n"]
    for i in range(min(len(data) // 16, COUNT)):
        lon, lat = struct.unpack_from("<dd", data, 16 * i)
        out.append(f'"lon={lon:.6f}&lat={lat:.6f}",\n')
    out.append("}\n")
    out.append(LUA % {"prefix": lua_string(args.path + "?"), "suffix": lua_string(args.suffix),
                      "label": lua_string(args.label + " " if args.label else "")})
    sys.stdout.write("".join(out))


if __name__ == "__main__":
    main()
