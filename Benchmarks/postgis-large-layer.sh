#!/usr/bin/env bash
# A polygon layer larger than a snapshot loads, served from PostGIS (docs/ARCHITECTURE.md, "The
# PostGIS store", Layers kept in PostgreSQL), beside the same layer served embedded and loaded
# whole from PostGIS.
#
#   Benchmarks/postgis-large-layer.sh [--duration 10] [--connections 16] [--binary PATH] [GEOJSON]
#
# GEOJSON defaults to the shared 1M-polygon W3 grid (/tmp/geobench/W3-1m/polygons.geojson; make
# it with ../shared/bench's generator, as Benchmarks/snapshot-scale.sh says). The script:
# 1. imports it into a GeoPackage as layer `cells` (with its snapshot file), starts a throwaway
#    PostgreSQL 15 + PostGIS cluster (initdb into a temporary folder, as nobody when run as root,
#    on 127.0.0.1 at a free port of 55400–55499) and pushes the store into it;
# 2. serves it three ways: embedded (`--db store.gpkg`), PostGIS with the layer kept in
#    PostgreSQL (`--db postgresql://… --max-rows-loaded 0`; the default, 250,000, keeps the 1M
#    layer too), and PostGIS with the layer loaded whole (`--max-rows-loaded 100000000`); for
#    each it prints the seconds until
#    /healthz answers and the server's RSS then;
# 3. checks that the three answer 300 seeded CONTAINING statements alike (md5 of the answers);
# 4. loads each with wrk for --duration seconds: POST /v1/query
#    "FIND cells CONTAINING POINT(lon lat) RETURN fid, idx" at random points of the layer's box,
#    and prints queries/s, p50, p99, errors and the server's peak RSS (VmHWM).
# Everything started here is stopped on exit. wrk and PostGIS: scripts/install-deps.sh --bench.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
duration=10 connections=16 binary=
while (($#)); do
    case "$1" in
        --duration) duration=$2; shift 2 ;;
        --connections) connections=$2; shift 2 ;;
        --binary) binary=$2; shift 2 ;;
        -*) echo "unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
geojson=${1:-/tmp/geobench/W3-1m/polygons.geojson}
[[ -f "$geojson" ]] || { echo "no $geojson: make the 1M-polygon grid with ../shared/bench's generator" >&2; exit 1; }
source "$root/Benchmarks/postgres-cluster.sh" vltava-pg-large
require_tools wrk curl python3 "$pgbin/initdb"
use_binary "$binary"
now() { date +%s.%N; }
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$2"; }

start=$(now)
"$bin" import "$geojson" --layer cells --db "$work/store.gpkg" --snapshot-file >/dev/null
echo "RESULT import seconds=$(elapsed "$start" "$(now)")"

start_cluster
start=$(now)
"$bin" push "$work/store.gpkg" "$url" >/dev/null
echo "RESULT push seconds=$(elapsed "$start" "$(now)") table=$("$pgbin/psql" -X -A -t -h 127.0.0.1 -p "$pgport" -U vltava -d vltava \
    -c "SELECT pg_size_pretty(pg_total_relation_size('cells'))")"

rss() { awk -v k="$2" '$1 == k":" { printf "%d", $2 / 1024 }' "/proc/$1/status"; }
serve() {  # label, store, more arguments → the server's URL and pid in `base` and `pid`
    local port label=$1 store=$2
    shift 2
    port=$(free_port)
    local began
    began=$(now)
    "$bin" serve --db "$store" --host 127.0.0.1 --port "$port" --log-level error "$@" >/dev/null 2>"$work/serve-$port.log" &
    pid=$!
    pids+=("$pid")
    for _ in $(seq 3000); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
    echo "RESULT $label ready_seconds=$(elapsed "$began" "$(now)") rss_mb=$(rss "$pid" VmRSS)"
    base="http://127.0.0.1:$port"
}

# The layer's box, and seeded points in it.
box=$("$pgbin/psql" -X -A -t -F ' ' -h 127.0.0.1 -p "$pgport" -U vltava -d vltava \
    -c "SELECT ST_XMin(e), ST_YMin(e), ST_XMax(e), ST_YMax(e) FROM (SELECT ST_Extent(geom) AS e FROM cells) AS x")
python3 - "$work" $box <<'EOF'
import random, sys
work, x0, y0, x1, y1 = sys.argv[1], *map(float, sys.argv[2:])
random.seed(2026)
points = [f"{random.uniform(x0, x1):.6f} {random.uniform(y0, y1):.6f}" for _ in range(10_000)]
with open(f"{work}/points.lua", "w") as out:
    out.write("points = {\n" + "".join(f'"{p}",\n' for p in points) + "}\n")
with open(f"{work}/check.txt", "w") as out:
    out.write("".join(f"FIND cells CONTAINING POINT({p}) RETURN fid, idx\n" for p in points[:300]))
EOF
wrk_query_script "FIND cells CONTAINING " " RETURN fid, idx" >"$work/w.lua"

run() {  # label, store, more serve arguments
    local label=$1
    serve "$@"
    local sum
    sum=$(while read -r statement; do curl -s -X POST --data-binary "$statement" "$base/v1/query"; echo; done <"$work/check.txt" | md5sum | cut -c1-12)
    echo "RESULT $label answers_md5=$sum"
    echo "RESULT $label $(wrk -t2 -c"$connections" -d"${duration}s" --latency -s "$work/w.lua" "$base" | grep '^qps=') peak_rss_mb=$(rss "$pid" VmHWM)"
    kill "$pid"; wait "$pid" 2>/dev/null || true
}
echo "$(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); wrk -t2 -c$connections -d${duration}s"
run embedded "$work/store.gpkg"
run postgis-kept "$url" --max-rows-loaded 0
run postgis-loaded "$url" --max-rows-loaded 100000000
