#!/usr/bin/env bash
# PostgreSQL stopping and starting under load (issue 30, "never down, never silently short"):
# a PostGIS-backed server keeps answering 200 or 503 `database_unavailable` with Retry-After,
# never 500, and `/readyz` says when it can answer again.
#
#   Benchmarks/postgres-outage.sh [--cycles 3] [--outage 15] [--connections 16] [--binary PATH]
#
# Starts a throwaway PostgreSQL 15 + PostGIS cluster (Benchmarks/postgres-cluster.sh), pushes the
# demo store into it and serves it (`vltava serve --db postgresql://…`). wrk then loads
# POST /v1/query "FIND districts CONTAINING POINT(lon lat) RETURN NAZEV_MC" at random points
# while PostgreSQL is stopped (`pg_ctl stop -m fast`) for --outage seconds --cycles times, a few
# seconds apart. It prints the count of each HTTP status wrk saw (0 × 500 expected), and for each
# restart the seconds from `pg_ctl start` returning until `/readyz` answers 200 (polled every
# 50 ms), and whether `/healthz` stayed 200 during the outage. wrk and PostGIS:
# scripts/install-deps.sh --bench.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cycles=3 outage=15 connections=16 binary=
while (($#)); do
    case "$1" in
        --cycles) cycles=$2; shift 2 ;;
        --outage) outage=$2; shift 2 ;;
        --connections) connections=$2; shift 2 ;;
        --binary) binary=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
source "$root/Benchmarks/postgres-cluster.sh" vltava-pg-outage
require_tools wrk curl python3 "$pgbin/initdb"
use_binary "$binary"

"$root/scripts/build-demo-store.sh" "$work/demo.gpkg" "$bin" >/dev/null
start_cluster
"$bin" push "$work/demo.gpkg" "$url" >/dev/null
port=$(free_port)
"$bin" serve --db "$url" --host 127.0.0.1 --port "$port" --log-level error >/dev/null 2>"$work/serve.log" &
pids+=($!)
base="http://127.0.0.1:$port"
for _ in $(seq 600); do curl -sf "$base/readyz" >/dev/null && break; sleep 0.1; done
curl -sf "$base/readyz" >/dev/null || { echo "the server did not become ready" >&2; cat "$work/serve.log" >&2; exit 1; }

python3 - "$work" <<'PY'
import random, sys
random.seed(2026)
points = [f"{random.uniform(14.30, 14.60):.6f} {random.uniform(49.98, 50.15):.6f}" for _ in range(10_000)]
with open(f"{sys.argv[1]}/points.lua", "w") as out:
    out.write("points = {\n" + "".join(f'"{p}",\n' for p in points) + "}\n")
PY
# Counts every status wrk sees (wrk's own summary counts only non-2xx/3xx as errors).
cat "$work/points.lua" - >"$work/w.lua" <<'LUA'
local i = 0
counts = {}  -- a global: done() reads each thread's through thread:get
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16)); i = math.random(#points) end
function request()
    i = i % #points + 1
    return wrk.format("POST", "/v1/query", {["Content-Type"] = "text/plain"},
        "FIND districts CONTAINING POINT(" .. points[i] .. ") RETURN NAZEV_MC")
end
function response(status, headers, body)
    counts[status] = (counts[status] or 0) + 1
    if status == 503 and headers["Retry-After"] == nil and headers["retry-after"] == nil then
        counts["503 without Retry-After"] = (counts["503 without Retry-After"] or 0) + 1
    end
end
function done(summary, latency, requests)
    local total = {}
    for _, thread in ipairs(threads) do
        local c = thread:get("counts")
        for k, v in pairs(c) do total[k] = (total[k] or 0) + v end
    end
    local keys = {}
    for k in pairs(total) do table.insert(keys, tostring(k)) end
    table.sort(keys)
    local parts = {}
    for _, k in ipairs(keys) do table.insert(parts, k .. ":" .. (total[tonumber(k) or k])) end
    local e = summary.errors
    io.write(string.format("RESULT statuses %s socket_errors=%d requests=%d\n", table.concat(parts, " "),
        e.connect + e.read + e.write + e.timeout, summary.requests))
end
LUA

pause=5
total=$((cycles * (outage + pause) + pause))
echo "$(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); wrk -t2 -c$connections -d${total}s; $cycles outages of ${outage}s"
wrk -t2 -c"$connections" -d"${total}s" --timeout 10s -s "$work/w.lua" "$base" >"$work/wrk.out" 2>&1 &
wrk_pid=$!
pids+=("$wrk_pid")
now() { date +%s.%N; }
for cycle in $(seq "$cycles"); do
    sleep "$pause"
    "${as[@]}" "$pgbin/pg_ctl" -D "$work/data" -m fast -w stop >/dev/null
    healthy=0 polls=0
    end=$(python3 -c "import sys; print(float(sys.argv[1]) + float(sys.argv[2]))" "$(now)" "$outage")
    while python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)" "$(now)" "$end"; do
        [[ $(curl -s -o /dev/null -w '%{http_code}' "$base/healthz") == 200 ]] && healthy=$((healthy + 1))
        polls=$((polls + 1))
        sleep 0.5
    done
    ready_during=$(curl -s -o /dev/null -w '%{http_code}' "$base/readyz")
    "${as[@]}" "$pgbin/pg_ctl" -D "$work/data" -l "$work/pg.log" -w \
        -o "-c listen_addresses=127.0.0.1 -p $pgport -c unix_socket_directories=$work -c fsync=off -c max_connections=100" start >/dev/null
    started=$(now)
    while [[ $(curl -s -o /dev/null -w '%{http_code}' "$base/readyz") != 200 ]]; do sleep 0.05; done
    ready=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$started" "$(now)")
    echo "RESULT cycle $cycle healthz_200_during_outage=$healthy/$polls readyz_during_outage=$ready_during ready_seconds_after_start=$ready"
done
wait "$wrk_pid" || true
grep '^RESULT' "$work/wrk.out" || cat "$work/wrk.out"
