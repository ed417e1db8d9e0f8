#!/usr/bin/env bash
# The GeoPackage store and the PostGIS store side by side, through HTTP, beside plain pgbench
# running the equivalent SQL, one run each, on loopback.
#
#   Benchmarks/postgis-side-by-side.sh [--duration 10] [--connections 16] [--threads 2] [--binary PATH]
#
# Starts a throwaway PostgreSQL 15 + PostGIS cluster (initdb into a temporary folder, as nobody
# when run as root, on 127.0.0.1 at a free port of 55400–55499), pushes the demo store into it
# with `vltava push`, and serves the same store twice: `vltava serve --db demo.gpkg` (embedded)
# and `vltava serve --db postgresql://…` (PostGIS-backed). Then, each for --duration seconds:
#   W1 containing: POST /v1/query "FIND districts CONTAINING POINT(lon lat) RETURN fid, NAZEV_MC"
#   W4 nearest:    POST /v1/query "FIND stations NEAREST 3 TO POINT(lon lat) RETURN fid, code, distance_m"
# through wrk on each server, and pgbench (--connections clients) running the SQL the PostGIS
# store generates for them (EXPLAIN shows it), with random points in the districts' box.
# Prints one RESULT line per run: queries/s, p50 and p99 in ms, errors.
# The points are uniform in the districts' bounding box (seeded), as the shared W1 workload's.
# Everything started here is stopped on exit. wrk and PostGIS: scripts/install-deps.sh --bench.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
duration=10 connections=16 threads=2 binary=
while (($#)); do
    case "$1" in
        --duration) duration=$2; shift 2 ;;
        --connections) connections=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;;
        --binary) binary=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
source "$root/Benchmarks/postgres-cluster.sh" vltava-pg-bench
require_tools wrk curl python3 "$pgbin/pgbench" "$pgbin/initdb"
use_binary "$binary"
"$root/scripts/build-demo-store.sh" "$work/demo.gpkg" "$bin" >/dev/null

start_cluster
"$bin" push "$work/demo.gpkg" "$url" | tail -1

serve() {  # store, variable → the base URL in the variable; not in a $(…) subshell, so that
           # the server's pid reaches `pids` and the cleanup stops it
    local port
    port=$(free_port)
    "$bin" serve --db "$1" --host 127.0.0.1 --port "$port" --log-level error >/dev/null 2>"$work/serve-$port.log" &
    pids+=($!)
    for _ in $(seq 200); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
    printf -v "$2" '%s' "http://127.0.0.1:$port"
}
serve "$work/demo.gpkg" embedded
serve "$url" postgis

# 10,000 seeded points in the districts' box, as a Lua table of "lon lat".
python3 - "$work/points.lua" <<'EOF'
import random, sys
random.seed(2026)
with open(sys.argv[1], "w") as out:
    out.write("points = {\n")
    for _ in range(10_000):
        out.write(f'"{random.uniform(14.224437, 14.706788):.6f} {random.uniform(49.941900, 50.177425):.6f}",\n')
    out.write("}\n")
EOF
wrk_query_script "FIND districts CONTAINING " " RETURN fid, NAZEV_MC" >"$work/w1.lua"
wrk_query_script "FIND stations NEAREST 3 TO " " RETURN fid, code, distance_m" >"$work/w4.lua"

# The SQL the PostGIS store runs for them (PostGIS/PostGISFetch.swift), with pgbench's random points.
cat >"$work/w1.sql" <<'EOF'
\set lon 14.224437 + random(0, 482351) / 1000000.0
\set lat 49.941900 + random(0, 235525) / 1000000.0
SELECT t.fid FROM districts AS t WHERE ST_Covers(t.geom, ST_SetSRID(ST_MakePoint(:lon, :lat), 4326)) ORDER BY t.fid;
EOF
cat >"$work/w4.sql" <<'EOF'
\set lon 14.224437 + random(0, 482351) / 1000000.0
\set lat 49.941900 + random(0, 235525) / 1000000.0
SELECT t.fid, ST_Distance(t.geom::geography, ST_SetSRID(ST_MakePoint(:lon, :lat), 4326)::geography, false) FROM stations AS t ORDER BY t.geom::geography <-> ST_SetSRID(ST_MakePoint(:lon, :lat), 4326)::geography, t.fid LIMIT 28;
EOF

echo "wrk -t$threads -c$connections -d${duration}s; pgbench -c$connections -j$threads -T$duration -M prepared; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
for w in w1 w4; do
    name=$([[ $w == w1 ]] && echo W1-containing || echo W4-nearest)
    echo "RESULT $name http-embedded $(wrk -t"$threads" -c"$connections" -d"${duration}s" --latency -s "$work/$w.lua" "$embedded" | grep '^qps=')"
    echo "RESULT $name http-postgis  $(wrk -t"$threads" -c"$connections" -d"${duration}s" --latency -s "$work/$w.lua" "$postgis" | grep '^qps=')"
    "$pgbin/pgbench" -n -h 127.0.0.1 -p "$pgport" -U vltava -c "$connections" -j "$threads" -T "$duration" -M prepared \
        -f "$work/$w.sql" -r --log --log-prefix="$work/$w" vltava >"$work/$w.pgbench" 2>&1 || { cat "$work/$w.pgbench"; exit 1; }
    qps=$(grep -oP 'tps = \K[0-9.]+' "$work/$w.pgbench" | head -1)
    # pgbench's per-transaction log: the 3rd field is the latency in µs.
    read -r p50 p99 < <(cat "$work/$w".* | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {printf "%.3f %.3f\n", a[int(NR*0.5)]/1000, a[int(NR*0.99)]/1000}')
    failed=$(grep -oP 'number of failed transactions: \K[0-9]+' "$work/$w.pgbench" || echo 0)
    echo "RESULT $name pgbench-sql    qps=${qps%.*} p50_ms=$p50 p99_ms=$p99 errors=$failed"
done
