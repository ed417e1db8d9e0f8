#!/usr/bin/env bash
# One budget per request, probed over loopback on a 200,000-polygon layer: do the statements
# of the seams issue stop at the request's deadline, does a client that leaves free its worker,
# and does /v1/here keep its latency while they run?
#
#   Benchmarks/budget-probe.sh [--binary PATH | --scratch-path DIR] [--workloads DIR] [--duration S]
#
# The store is the demo store (scripts/build-demo-store.sh) plus `synth`: the 200,000
# polygons of the shared W3 workload (made by ../shared/bench/gen_workloads.py when missing;
# it needs numpy and Shapely 2: scripts/install-deps.sh --bench). The server runs with its
# defaults: 5 s of work per request, half the cores for heavy work, a queue of 16 waiting 5 s.
#
# Prints RESULT lines:
#   join-65:   `FIND districts RETURN (synth NEAREST).idx, (synth CONTAINING).idx` (65 bytes; it ran
#              for more than 440 s of CPU without the budget): status, code and seconds to answer
#   join-272:  a 272-byte statement with 8 `(districts NEAREST)` fields (31.6 s, then 200, without
#              the budget): the same
#   leave:     the 65-byte request from a client that leaves after 1 s: milliseconds from its
#              leaving until no heavy worker runs (the work stops at its next check), polled
#              every 2 ms from /metrics
#   here:      wrk on /v1/here for --duration seconds (default 20) while two clients send the two
#              statements again and again: requests/s, p50, p99, errors; and the heavy clients'
#              answers by status
# --binary runs a given vltava (an older commit's, to compare); otherwise the worktree is
# built in release mode in --scratch-path (default .build). Only 127.0.0.1 is ever loaded.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
duration=20 scratch="$root/.build" workloads=/tmp/geobench binary=""
while (($#)); do
    case "$1" in
        --duration) duration=$2; shift 2 ;;
        --scratch-path) scratch=$2; shift 2 ;;
        --workloads) workloads=$2; shift 2 ;;
        --binary) binary=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
command -v wrk >/dev/null || { echo "wrk is missing: scripts/install-deps.sh --bench" >&2; exit 1; }
((duration > 0 && duration <= 600)) || { echo "--duration must be 1–600 s" >&2; exit 2; }

work=$(mktemp -d /tmp/vltava-budget-probe.XXXXXX)
server_pid="" heavy_pids=()
cleanup() {
    for pid in "${heavy_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
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

polygons="$workloads/W3-pip-synthetic-200k/polygons.geojson"
if [[ ! -f "$polygons" ]]; then
    echo "making the W3 workload in $workloads"
    python3 "$root/../shared/bench/gen_workloads.py" "$workloads" --scale quick --only W3 >"$work/workloads.log" 2>&1 \
        || { cat "$work/workloads.log"; exit 1; }
fi
echo "building the store: the demo layers and synth (200,000 polygons)"
"$root/scripts/build-demo-store.sh" "$work/store.gpkg" "$bin" >/dev/null
"$bin" import --db "$work/store.gpkg" "$polygons" --layer synth >/dev/null

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin" serve --db "$work/store.gpkg" --host 127.0.0.1 --port "$port" --log-level critical >"$work/server.out" 2>"$work/server.log" &
server_pid=$!
base="http://127.0.0.1:$port"
# A debug build loads the 200,000 polygons in minutes, a release build in seconds.
for _ in $(seq 3000); do curl -sf "$base/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "$base/healthz" >/dev/null || { echo "the server did not start"; cat "$work/server.log"; exit 1; }

join65='FIND districts RETURN (synth NEAREST).idx, (synth CONTAINING).idx'
fields=$(printf '(districts NEAREST).NAZEV_MC, %.0s' 1 2 3 4 5 6 7)
join272="FIND synth WHERE idx < 900 RETURN ${fields}(districts NEAREST).NAZEV_MC"
printf '%s' "$join65" >"$work/join65.txt"
printf '%s' "$join272" >"$work/join272.txt"
echo "statements: ${#join65} and ${#join272} bytes; $(nproc) cores"

probe() {  # name, body file
    local out
    out=$(curl -s -o "$work/$1.json" -w '%{http_code} %{time_total}' --data-binary @"$2" -H 'Content-Type: text/plain' "$base/v1/query")
    echo "RESULT $1 status=${out% *} code=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("code", "-"))' "$work/$1.json" 2>/dev/null || echo -) seconds=${out#* }"
}
probe join-65 "$work/join65.txt"
probe join-272 "$work/join272.txt"

running() { curl -s "$base/metrics" | awk '/^vltava_heavy_running /{print $2}'; }
curl -s -o /dev/null --max-time 1 --data-binary @"$work/join65.txt" "$base/v1/query" || true
left=$(date +%s%N)
while [[ "$(running)" != 0 ]]; do sleep 0.002; done
echo "RESULT leave freed_after_ms=$(( ($(date +%s%N) - left) / 1000000 )) (the work alone would have run until its 5 s deadline)"

heavy_loop() {  # body file, status log
    while true; do curl -s -o /dev/null -w '%{http_code}\n' --data-binary @"$1" "$base/v1/query" >>"$2" || true; done
}
heavy_loop "$work/join65.txt" "$work/statuses" & heavy_pids+=($!)
heavy_loop "$work/join272.txt" "$work/statuses" & heavy_pids+=($!)
sleep 1
cat >"$work/here.lua" <<'LUA'
local points = {}
function init(args)
    math.randomseed(7)
    for i = 1, 1000 do
        points[i] = string.format("/v1/here?lon=%.5f&lat=%.5f", 14.25 + math.random() * 0.45, 49.95 + math.random() * 0.2)
    end
end
local i = 0
function request()
    i = i % #points + 1
    return wrk.format("GET", points[i])
end
function done(summary, latency, requests)
    local errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout + summary.errors.status
    io.write(string.format("rps=%.0f p50_ms=%.2f p99_ms=%.2f max_ms=%.2f errors=%d requests=%d\n", summary.requests / (summary.duration / 1e6),
        latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000, errors, summary.requests))
end
LUA
line=$(wrk -t1 -c8 -d"${duration}s" --latency -s "$work/here.lua" "$base" | grep '^rps=')
for pid in "${heavy_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
heavy_pids=()
echo "RESULT here-during-joins $line heavy_answers=$(sort "$work/statuses" | uniq -c | awk '{printf "%s×%s ", $1, $2}')load=$(cut -d' ' -f1 /proc/loadavg)"
