#!/usr/bin/env bash
# Light requests under a flood of heavy ones, on loopback: does `containing` keep its latency
# while 8 connections send the heaviest /v1/query bodies?
#
#   Benchmarks/heavy-load.sh [--bin PATH | --scratch-path DIR] [--duration S] [--connections N]
#                            [--heavy-connections N] [--heavy attack|allowed|both]
#
# Each run lasts --duration seconds (default 30): wrk with --connections (64) over 2 threads
# asks GET /v1/layers/districts/containing at the W1 points (as Benchmarks/http-load.sh does),
# while a second wrk with --heavy-connections (8) over 1 thread POSTs one body to /v1/query
# again and again:
#   attack:  400 × `TILE 15/17694/11097 OF zoo_map;` (12 KB; the body of the issue: 21.5 s of
#            CPU and a 150 MB answer on a server without a request budget)
#   allowed: 20 × `TILE 15/17694/11097 OF zoo_map LIMIT 500` (the heaviest body the request
#            budget lets through: 20 statements, 20 tile decodes, 10,000 rows, 2.4 MB)
# It prints one RESULT line per run with containing's requests/s, p50, p99 and errors (wrk's
# socket errors plus non-2xx answers), the heavy client's answers by status, and the server's
# peak RSS (VmHWM) and RSS at the end. A fresh server serves each run, so the peaks are the
# run's own.
#
# --bin runs a given binary (e.g. a build of an older commit: the script passes it only
# options every version has); otherwise the worktree is built in release mode in
# --scratch-path (default .build). wrk comes from Debian (scripts/install-deps.sh --bench).
# Only 127.0.0.1 is ever loaded, and every load is bounded by --duration.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
duration=30 connections=64 heavy_connections=8 scratch="$root/.build" workloads=/tmp/geobench bin="" heavy=both
while (($#)); do
    case "$1" in
        --duration) duration=$2; shift 2 ;;
        --connections) connections=$2; shift 2 ;;
        --heavy-connections) heavy_connections=$2; shift 2 ;;
        --scratch-path) scratch=$2; shift 2 ;;
        --workloads) workloads=$2; shift 2 ;;
        --bin) bin=$2; shift 2 ;;
        --heavy) heavy=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
case "$heavy" in attack|allowed|both) ;; *) echo "--heavy is attack, allowed or both" >&2; exit 2 ;; esac
command -v wrk >/dev/null || { echo "wrk is missing: scripts/install-deps.sh --bench" >&2; exit 1; }
((duration > 0 && duration <= 600)) || { echo "--duration must be 1–600 s" >&2; exit 2; }

work=$(mktemp -d /tmp/vltava-heavy-load.XXXXXX)
server_pid=""
stop_server() {
    if [[ -n "$server_pid" ]]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=""
    fi
}
cleanup() {
    stop_server
    rm -rf "$work"
}
trap cleanup EXIT

if [[ -z "$bin" ]]; then
    echo "building vltava (release) in $scratch"
    swift build -c release --product vltava --scratch-path "$scratch" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
    bin="$scratch/release/vltava"
fi
"$root/scripts/build-demo-store.sh" "$work/demo.gpkg" "$bin" >/dev/null

# The light load: containing at the first 10,000 W1 points (Benchmarks/wrk-points.py).
python3 "$root/Benchmarks/wrk-points.py" --workloads "$workloads" --path /v1/layers/districts/containing --label containing: >"$work/containing.lua"

# The heavy client counts its answers by status (one wrk thread, so one Lua state to ask).
heavy_script() {  # $1: the body file
    python3 - "$1" <<'EOF'
import json, sys
body = open(sys.argv[1]).read()
print("local body = " + json.dumps(body))
EOF
    cat <<'EOF'
counts = {}  -- global: thread:get reads globals only
local threads = {}
function setup(thread) table.insert(threads, thread) end
function request()
    return wrk.format("POST", "/v1/query", {["Content-Type"] = "text/plain"}, body)
end
function response(status, headers, body)
    counts[status] = (counts[status] or 0) + 1
end
function done(summary, latency, requests)
    local parts = {}
    for _, thread in ipairs(threads) do
        local c = thread:get("counts")
        for status, n in pairs(c) do table.insert(parts, status .. ":" .. n) end
    end
    table.sort(parts)
    io.write(string.format("heavy: requests=%d p50_ms=%.1f max_ms=%.1f timeouts=%d statuses=%s\n",
        summary.requests, latency:percentile(50) / 1000, latency.max / 1000, summary.errors.timeout, table.concat(parts, ",")))
end
EOF
}

python3 -c "print('\n'.join(['TILE 15/17694/11097 OF zoo_map;'] * 400))" >"$work/attack.vq"
python3 -c "print('\n'.join(['TILE 15/17694/11097 OF zoo_map LIMIT 500'] * 20))" >"$work/allowed.vq"
heavy_script "$work/attack.vq" >"$work/attack.lua"
heavy_script "$work/allowed.vq" >"$work/allowed.lua"

run() {  # $1: attack or allowed
    local port base
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    base="http://127.0.0.1:$port"
    "$bin" serve --db "$work/demo.gpkg" --host 127.0.0.1 --port "$port" --log-level warning >"$work/server.out" 2>"$work/server-$1.log" &
    server_pid=$!
    for _ in $(seq 100); do curl -sf "$base/healthz" >/dev/null && break; sleep 0.1; done
    curl -sf "$base/healthz" >/dev/null || { echo "the server did not start"; cat "$work/server-$1.log"; exit 1; }
    local rss_start
    rss_start=$(awk '/VmRSS/ {print $2}' "/proc/$server_pid/status")
    # The heavy client starts first and stops last, so the containing run is under load
    # throughout. Its own time-out is the run's length: an answer that takes longer is a
    # time-out, not a wait.
    wrk -t1 -c"$heavy_connections" -d"$((duration + 2))s" --timeout "$((duration + 2))s" -s "$work/$1.lua" "$base" >"$work/heavy-$1.out" 2>&1 &
    local heavy_pid=$!
    sleep 1
    # Beside wrk, one containing request a second on a fresh connection (5 s time-out): wrk
    # reports nothing at all when no answer comes back within the run.
    (
        for _ in $(seq "$duration"); do
            curl -s -o /dev/null -m 5 -w '%{http_code} %{time_total}\n' "$base/v1/layers/districts/containing?lon=14.4208&lat=50.0880" || true
            sleep 1
        done >"$work/probe-$1.txt"
    ) &
    local probe_pid=$!
    local light
    light=$(wrk -t2 -c"$connections" -d"${duration}s" --latency -s "$work/containing.lua" "$base" | grep '^containing:')
    wait "$probe_pid" || true
    wait "$heavy_pid" || true
    local probe
    probe=$(awk '{ n++; if ($1 == "200") { ok++; if ($2 > max) max = $2 } } END { printf "probe (1/s, fresh connection, 5 s time-out): %d sent, %d answered 200, slowest %.1f ms", n, ok, max * 1000 }' "$work/probe-$1.txt")
    local heavy_line rss_end hwm
    heavy_line=$(grep '^heavy:' "$work/heavy-$1.out" || echo "heavy: no answer within the run ($(grep -E 'requests in|Socket errors' "$work/heavy-$1.out" | tr -s ' ' | tr '\n' ';'))")
    rss_end=$(awk '/VmRSS/ {print $2}' "/proc/$server_pid/status")
    hwm=$(awk '/VmHWM/ {print $2}' "/proc/$server_pid/status")
    echo "RESULT heavy-load-$1 $light"
    echo "       $probe"
    echo "       $heavy_line"
    echo "       server RSS: start ${rss_start} kB, peak (VmHWM) ${hwm} kB, end ${rss_end} kB; load=$(cut -d' ' -f1 /proc/loadavg)"
    stop_server
}

echo "heavy-load: $bin; containing wrk -t2 -c$connections, heavy wrk -t1 -c$heavy_connections, ${duration}s per run, $(nproc) cores"
[[ "$heavy" == attack || "$heavy" == both ]] && run attack
[[ "$heavy" == allowed || "$heavy" == both ]] && run allowed
exit 0
