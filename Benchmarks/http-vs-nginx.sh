#!/usr/bin/env bash
# The HTTP path against the loopback ceiling, in one run: nginx serving a 380-byte static JSON
# file, and Vltava's /healthz, containing and nearest, with the event loop's fast path
# (Sources/Server/FastPath.swift) and with --router-only (every request through Hummingbird's
# router), alternated so both see the same machine. wrk, 2 threads and 64 connections, as
# issue 37's outside run.
#
#   Benchmarks/http-vs-nginx.sh [--binary PATH] [--duration S] [--rounds N] [--workloads DIR]
#
# Prints one RESULT line per run (requests/s and latency, as Benchmarks/wrk-points.py prints
# them) and, per round, each rate's ratio to nginx's in the same round. nginx (one worker,
# access log off) and wrk come from scripts/install-deps.sh --bench. Only 127.0.0.1 is loaded.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
binary="" duration=10 rounds=2 workloads=/tmp/geobench threads=2 connections=64
while (($#)); do
    case "$1" in
        --binary) binary=$2; shift 2 ;;
        --duration) duration=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --workloads) workloads=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
for tool in wrk curl; do command -v "$tool" >/dev/null || { echo "$tool is missing: scripts/install-deps.sh --bench" >&2; exit 1; }; done
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
[[ -x "$nginx_bin" ]] || { echo "nginx is missing: scripts/install-deps.sh --bench" >&2; exit 1; }

work=$(mktemp -d /tmp/vltava-vs-nginx.XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

if [[ -z "$binary" ]]; then
    swift build -c release --product vltava --package-path "$root" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
    binary="$root/.build/release/vltava"
fi
"$root/scripts/build-demo-store.sh" "$work/demo.gpkg" "$binary" >/dev/null
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_up() { for _ in $(seq 300); do curl -sf "$1" >/dev/null && return 0; sleep 0.1; done; return 1; }

# nginx: the 380-byte JSON file.
nginx_port=$(free_port)
mkdir -p "$work/nginx/html"
python3 -c 'import json; body = json.dumps({"status": "ok", "pad": "x" * 350}); print(body[:379] + "}", end="")' >"$work/nginx/html/static.json"
source "$root/Benchmarks/nginx.sh"
nginx_conf "$work/nginx.conf" "$work/nginx" "    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$nginx_port;
        root $work/nginx/html;
        default_type application/json;
    }"
"$nginx_bin" -c "$work/nginx.conf" -p "$work/nginx" 2>"$work/nginx/start.log" &
pids+=($!)
wait_up "http://127.0.0.1:$nginx_port/static.json" || { cat "$work/nginx/start.log"; exit 1; }

# Vltava twice: with the fast path, and router only.
fast_port=$(free_port) routed_port=$(free_port)
"$binary" serve --db "$work/demo.gpkg" --host 127.0.0.1 --port "$fast_port" --log-level warning >"$work/fast.log" 2>&1 &
pids+=($!)
fast_pid=$!
"$binary" serve --db "$work/demo.gpkg" --host 127.0.0.1 --port "$routed_port" --log-level warning --router-only >"$work/routed.log" 2>&1 &
pids+=($!)
routed_pid=$!
wait_up "http://127.0.0.1:$fast_port/readyz" && wait_up "http://127.0.0.1:$routed_port/readyz" || { cat "$work"/*.log; exit 1; }

python3 "$root/Benchmarks/wrk-points.py" --workloads "$workloads" --path /v1/layers/districts/containing >"$work/containing.lua"
python3 "$root/Benchmarks/wrk-points.py" --workloads "$workloads" --path /v1/layers/stations/nearest --suffix '&k=3' >"$work/nearest.lua"
printf 'done = function(summary, latency, requests)\n  io.write(string.format("rps=%%.0f p50_ms=%%.3f p99_ms=%%.3f errors=%%d\\n", summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout + summary.errors.status))\nend\n' >"$work/plain.lua"

cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # user + system ticks
run() {  # name url script [pid]
    local before after line
    [[ -n "${4:-}" ]] && before=$(cpu "$4")
    line=$(wrk -t"$threads" -c"$connections" -d"${duration}s" --latency -s "$3" "$2" | grep 'rps=')
    local extra=""
    if [[ -n "${4:-}" ]]; then
        after=$(cpu "$4")
        local requests=${line#*requests=}
        requests=${requests%% *}
        [[ "$requests" =~ ^[0-9]+$ ]] && ((requests > 0)) && extra=" server_cpu_us_per_request=$(( (after - before) * 10000 / requests ))"
    fi
    echo "RESULT $1 $line$extra load=$(cut -d' ' -f1 /proc/loadavg)" >&2
    echo "$line" | sed -E 's/.*rps=([0-9.]+).*/\1/'
}

echo "nginx static (380 bytes) on :$nginx_port; vltava fast path on :$fast_port, router only on :$routed_port; wrk -t$threads -c$connections -d${duration}s; $(nproc) cores"
for ((round = 1; round <= rounds; round++)); do
    declare -A rate=()
    rate[nginx]=$(run nginx "http://127.0.0.1:$nginx_port/static.json" "$work/plain.lua")
    for side in fast routed; do
        port=$fast_port pid=$fast_pid
        [[ $side == routed ]] && port=$routed_port pid=$routed_pid
        rate[$side-healthz]=$(run "$side-healthz" "http://127.0.0.1:$port/healthz" "$work/plain.lua" "$pid")
        rate[$side-containing]=$(run "$side-containing" "http://127.0.0.1:$port" "$work/containing.lua" "$pid")
        rate[$side-nearest]=$(run "$side-nearest" "http://127.0.0.1:$port" "$work/nearest.lua" "$pid")
    done
    line="round $round, ratio to nginx:"
    for key in fast-healthz routed-healthz fast-containing routed-containing fast-nearest routed-nearest; do
        line+=" $key=$(python3 -c "print(f'{${rate[$key]} / ${rate[nginx]}:.2f}')")"
    done
    echo "$line"
done
