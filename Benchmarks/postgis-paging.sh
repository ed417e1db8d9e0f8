#!/usr/bin/env bash
# OGC API items of a layer kept in PostgreSQL, paged `limit=100` through a large layer (issue 30:
# these were 422 `too_many_rows` above 10,000 rows), beside the same pages of the layer embedded.
#
#   Benchmarks/postgis-paging.sh [--rows 1000000] [--pages 300] [--binary PATH]
#
# Writes a grid of --rows points (property `idx`) as GeoJSON, imports it as layer `cells`, starts
# a throwaway PostgreSQL 15 + PostGIS cluster (Benchmarks/postgres-cluster.sh) and pushes the
# store into it, then serves it twice: `--db store.gpkg` (embedded) and `--db postgresql://…`
# (the layer kept in PostgreSQL: it is larger than the 250,000 rows a snapshot loads). For each
# it GETs --pages pages of `/ogc/collections/cells/items?limit=100&offset=N` at offsets spread
# evenly over the layer (the first and the last among them) on one kept-alive connection, checks
# each page has 100 features (fewer only at the end) and the same ids from both, and prints p50,
# p99 and the slowest page's time in ms, for all pages and for the first and last tenth of the
# offsets. Then it pages through the whole layer as a client does, following each page's `next`
# link from the first page to the last (on the kept layer the link carries `after`, the page's
# last fid), checks every feature comes once and in order, and prints the same figures.
# Everything started here is stopped on exit. PostGIS: scripts/install-deps.sh --bench.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
rows=1000000 pages=300 binary=
while (($#)); do
    case "$1" in
        --rows) rows=$2; shift 2 ;;
        --pages) pages=$2; shift 2 ;;
        --binary) binary=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
source "$root/Benchmarks/postgres-cluster.sh" vltava-pg-paging
require_tools curl python3 "$pgbin/initdb"
use_binary "$binary"

python3 - "$work/cells.geojson" "$rows" <<'PY'
import math, sys
path, n = sys.argv[1], int(sys.argv[2])
side = math.ceil(math.sqrt(n))
with open(path, "w") as out:
    out.write('{"type":"FeatureCollection","features":[\n')
    for i in range(n):
        lon, lat = 14.2 + (i % side) * 0.6 / side, 49.9 + (i // side) * 0.3 / side
        out.write(('' if i == 0 else ',\n') + f'{{"type":"Feature","properties":{{"idx":{i}}},"geometry":{{"type":"Point","coordinates":[{lon:.7f},{lat:.7f}]}}}}')
    out.write('\n]}\n')
PY
"$bin" import "$work/cells.geojson" --layer cells --db "$work/store.gpkg" --snapshot-file >/dev/null
rm "$work/cells.geojson"
start_cluster
"$bin" push "$work/store.gpkg" "$url" >/dev/null

serve() {  # store → `port`, `pid`
    port=$(free_port)
    "$bin" serve --db "$1" --host 127.0.0.1 --port "$port" --log-level error >/dev/null 2>"$work/serve-$port.log" &
    pid=$!
    pids+=("$pid")
    for _ in $(seq 3000); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
}
page_times() {  # label, port → RESULT lines; ids to $work/ids-label
    python3 - "$1" "$2" "$rows" "$pages" "$work/ids-$1" <<'PY'
import http.client, json, sys, time
label, port, rows, pages, ids_path = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
last = (rows - 1) // 100 * 100
offsets = sorted({round(k * last / (pages - 1) / 100) * 100 for k in range(pages)})
connection = http.client.HTTPConnection("127.0.0.1", port)
times, ids = [], []
for offset in offsets:
    began = time.perf_counter()
    connection.request("GET", f"/ogc/collections/cells/items?limit=100&offset={offset}")
    response = connection.getresponse()
    body = response.read()
    times.append((time.perf_counter() - began) * 1000)
    assert response.status == 200, (offset, response.status, body[:300])
    features = json.loads(body)["features"]
    assert len(features) == min(100, rows - offset), (offset, len(features))
    ids.append([f["id"] for f in features])
def summary(name, values):
    values = sorted(values)
    at = lambda q: values[min(len(values) - 1, int(q * len(values)))]
    return f"{name}: p50_ms={at(0.5):.2f} p99_ms={at(0.99):.2f} max_ms={values[-1]:.2f} pages={len(values)}"
tenth = max(1, len(times) // 10)
print(f"RESULT {label} " + "; ".join([summary("all", times), summary("first_tenth", times[:tenth]), summary("last_tenth", times[-tenth:])]))
json.dump(ids, open(ids_path, "w"))
PY
}
follow_times() {  # label, port → a RESULT line: every page, following the next links
    python3 - "$1" "$2" "$rows" <<'PY'
import http.client, json, sys, time, urllib.parse
label, port, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
connection = http.client.HTTPConnection("127.0.0.1", port)
target, times, seen, previous = "/ogc/collections/cells/items?limit=100", [], 0, None
while target:
    began = time.perf_counter()
    connection.request("GET", target)
    response = connection.getresponse()
    body = response.read()
    times.append((time.perf_counter() - began) * 1000)
    assert response.status == 200, (target, response.status, body[:300])
    page = json.loads(body)
    ids = [f["id"] for f in page["features"]]
    assert ids == sorted(ids) and (previous is None or ids[0] > previous), (target, ids[:3])
    seen, previous = seen + len(ids), ids[-1]
    nexts = [link["href"] for link in page["links"] if link["rel"] == "next"]
    target = None
    if nexts:
        parts = urllib.parse.urlsplit(nexts[0])
        target = parts.path + "?" + parts.query
assert seen == rows, (seen, rows)
values = sorted(times)
at = lambda q: values[min(len(values) - 1, int(q * len(values)))]
print(f"RESULT {label} following next links: p50_ms={at(0.5):.2f} p99_ms={at(0.99):.2f} max_ms={values[-1]:.2f} "
      f"pages={len(values)} features={seen}")
PY
}
echo "$(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); $rows rows, $pages pages of 100"
serve "$work/store.gpkg"
page_times embedded "$port"
follow_times embedded "$port"
kill "$pid"; wait "$pid" 2>/dev/null || true
serve "$url"
page_times postgis-kept "$port"
follow_times postgis-kept "$port"
kill "$pid"; wait "$pid" 2>/dev/null || true
cmp -s "$work/ids-embedded" "$work/ids-postgis-kept" && echo "RESULT same ids on every page" || echo "RESULT the pages differ"
