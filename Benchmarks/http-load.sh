#!/usr/bin/env bash
# Load test of the HTTP API on loopback with wrk, against a release build and the demo store.
#
#   Benchmarks/http-load.sh [--duration S] [--connections N] [--threads T] [--scratch-path DIR] [--workloads DIR] [--binary PATH]
#                           [--log-level LEVEL] [--port PORT]
#
# --binary runs a vltava built elsewhere (an older commit's, to compare in one session)
# instead of building this checkout's. --log-level is the server's (default info: one request
# in 100 logged; debug logs every request, to measure what the logs cost). --port: the port to
# serve on (default: a free one).
#
# Runs, each for --duration seconds (default 30) with --connections (64) over --threads (2):
#   0. healthz:    GET /healthz, which does no work: the rate the HTTP stack itself allows
#   1. containing: GET /v1/layers/districts/containing at random points of the W1 workload
#   2. nearest:    GET /v1/layers/stations/nearest?k=3 at the same points
#   3. containing again while POST /v1/admin/reload swaps the snapshot 10 times
# and prints one RESULT line per run (requests/s, p50, p99, errors: wrk's socket errors plus
# non-2xx answers; the server's CPU time per request), the reloads that failed, and the
# server's peak RSS (VmHWM).
#
# The points are the W1 query points of the shared workloads (points uniform in the districts'
# bbox), made by ../shared/bench/gen_workloads.py (needs numpy and shapely) when missing.
# wrk comes from Debian (scripts/install-deps.sh --bench). Only 127.0.0.1 is ever loaded.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
duration=30 connections=64 threads=2 scratch="$root/.build" workloads=/tmp/geobench binary= log_level=info port=
while (($#)); do
    case "$1" in
        --duration) duration=$2; shift 2 ;;
        --connections) connections=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;;
        --scratch-path) scratch=$2; shift 2 ;;
        --workloads) workloads=$2; shift 2 ;;
        --binary) binary=$2; shift 2 ;;
        --log-level) log_level=$2; shift 2 ;;
        --port) port=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
command -v wrk >/dev/null || { echo "wrk is missing: scripts/install-deps.sh --bench" >&2; exit 1; }

work=$(mktemp -d /tmp/vltava-http-load.XXXXXX)
server_pid=""
cleanup() {
    [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

if [[ -n "$binary" ]]; then
    bin=$binary
else
    echo "building vltava (release) in $scratch"
    swift build -c release --product vltava --scratch-path "$scratch" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
    bin="$scratch/release/vltava"
fi

"$root/scripts/build-demo-store.sh" "$work/demo.gpkg" "$bin" >/dev/null

# The wrk scripts: the first 10,000 W1 points (Benchmarks/wrk-points.py).
python3 "$root/Benchmarks/wrk-points.py" --workloads "$workloads" --path /v1/layers/districts/containing >"$work/containing.lua"
python3 "$root/Benchmarks/wrk-points.py" --workloads "$workloads" --path /v1/layers/stations/nearest --suffix "&k=3" >"$work/nearest.lua"

[[ -n "$port" ]] || port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
token="bench-$RANDOM$RANDOM"
VLTAVA_ADMIN_TOKEN="$token" "$bin" serve --db "$work/demo.gpkg" --host 127.0.0.1 --port "$port" --log-level "$log_level" >"$work/server.out" 2>"$work/server.log" &
server_pid=$!
base="http://127.0.0.1:$port"
for _ in $(seq 100); do curl -sf "$base/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "$base/healthz" >/dev/null || { echo "the server did not start"; cat "$work/server.log"; exit 1; }

# The server's CPU time so far (user + system), in clock ticks.
server_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$server_pid/stat"; }

run() {  # name, lua script
    local line before requests
    before=$(server_ticks)
    line=$(wrk -t"$threads" -c"$connections" -d"${duration}s" --latency -s "$2" "$base" | grep '^rps=')
    requests=$(sed -E 's/.* requests=([0-9]+).*/\1/' <<<"$line")
    # The server's CPU per request depends less on what else runs than requests/s do; the
    # load average tells whether something else shared the cores during the run.
    echo "RESULT http-$1 $line server_cpu_us_per_request=$(( ($(server_ticks) - before) * 1000000 / $(getconf CLK_TCK) / (requests > 0 ? requests : 1) )) load=$(cut -d' ' -f1 /proc/loadavg)"
}

echo "wrk -t$threads -c$connections -d${duration}s on $base, $(nproc) cores"
# The floor the HTTP stack sets: /healthz does no work of its own, so its rate is what
# Hummingbird, NIO and the kernel allow on these cores with wrk beside them.
{ echo 'local r'; echo 'function init(args) r = wrk.format("GET", "/healthz") end'; echo 'function request() return r end'
  sed -n '/^function done/,$p' "$work/containing.lua"; } >"$work/healthz.lua"
run healthz "$work/healthz.lua"
run containing "$work/containing.lua"
run nearest "$work/nearest.lua"

# The same containing load while the snapshot is reloaded 10 times, evenly spread.
(
    failed=0
    for _ in $(seq 10); do
        sleep "$(python3 -c "print($duration / 11)")"
        status=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $token" "$base/v1/admin/reload")
        [[ "$status" == 200 ]] || failed=$((failed + 1))
    done
    echo "$failed" >"$work/reloads-failed"
) &
reloader=$!
run containing-during-10-reloads "$work/containing.lua"
wait "$reloader"
echo "reloads: 10, failed: $(cat "$work/reloads-failed"); $(curl -s "$base/metrics" | grep '^vltava_snapshot_reloads_total')" | tr '\n' ' '
echo
echo "server peak RSS (VmHWM): $(grep VmHWM /proc/$server_pid/status | awk '{print $2, $3}')"
echo "request log lines written (JSON, --log-level $log_level): $(grep -c '"msg":"request"' "$work/server.log" || true), $(wc -c <"$work/server.log") bytes of log"
