#!/usr/bin/env bash
# Replicas behind a load balancer, on loopback: N `vltava serve` processes on one store, nginx
# (Debian's) in front of them, and wrk through nginx while the replicas are rolled one by one.
#
#   Benchmarks/replicas.sh [--replicas 2] [--duration 30] [--mode reload|restart]
#                          [--connections 64] [--threads 2] [--binary PATH] [--workloads DIR]
#
# --mode reload (the default) asks each replica in turn to swap its snapshot
# (POST /v1/admin/reload): what a data update does. --mode restart stops each replica in turn
# (SIGTERM: it finishes the requests in progress) and starts it again: what a new binary does.
# nginx retries a request that found a replica gone (connection refused or reset) or still
# loading (503 snapshot_loading) on another one, so clients see no error either way.
#
# Prints one RESULT line per run: requests/s, p50, p99 and errors (wrk's socket errors plus
# non-2xx answers), then the rolls that failed. The query points are the first 10,000 of the
# shared W1 workload (Benchmarks/wrk-points.py writes the wrk script). Only 127.0.0.1 is ever used; everything
# started here is stopped on exit. nginx and wrk come from scripts/install-deps.sh --bench.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
replicas=2 duration=30 mode=reload connections=64 threads=2 binary= workloads=/tmp/geobench
while (($#)); do
    case "$1" in
        --replicas) replicas=$2; shift 2 ;;
        --duration) duration=$2; shift 2 ;;
        --mode) mode=$2; shift 2 ;;
        --connections) connections=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;;
        --binary) binary=$2; shift 2 ;;
        --workloads) workloads=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
[[ "$mode" == reload || "$mode" == restart ]] || { echo "--mode is reload or restart" >&2; exit 2; }
((replicas >= 2)) || { echo "--replicas must be at least 2" >&2; exit 2; }
for tool in nginx wrk curl; do
    command -v "$tool" >/dev/null || [[ -x /usr/sbin/$tool ]] || { echo "$tool is missing: scripts/install-deps.sh --bench" >&2; exit 1; }
done
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)

work=$(mktemp -d /tmp/vltava-replicas.XXXXXX)
declare -a ports
nginx_pid=""
cleanup() {
    # Replicas restarted by the roller (a subshell) are known by their pid files only.
    for file in "$work"/replica-*.pid; do [[ -f "$file" ]] && kill "$(cat "$file")" 2>/dev/null || true; done
    [[ -n "$nginx_pid" ]] && kill "$nginx_pid" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

if [[ -n "$binary" ]]; then
    bin=$binary
else
    echo "building vltava (release)"
    swift build -c release --product vltava --package-path "$root" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
    bin="$root/.build/release/vltava"
fi
"$root/scripts/build-demo-store.sh" "$work/demo.gpkg" "$bin" >/dev/null

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
token="bench-$RANDOM$RANDOM"
printf '%s\n' "$token" >"$work/token"

start_replica() {  # index
    VLTAVA_ADMIN_TOKEN= "$bin" serve --db "$work/demo.gpkg" --host 127.0.0.1 --port "${ports[$1]}" \
        --admin-token-file "$work/token" --log-level warning >"$work/replica-$1.out" 2>>"$work/replica-$1.log" &
    echo $! >"$work/replica-$1.pid"
}
wait_healthy() {  # url
    for _ in $(seq 300); do curl -sf "$1/healthz" >/dev/null && return 0; sleep 0.1; done
    return 1
}

upstreams=""
for ((i = 0; i < replicas; i++)); do
    ports[$i]=$(free_port)
    start_replica "$i"
    # fail_timeout 1s: a replica that refused a connection while restarting is tried again soon.
    upstreams+="        server 127.0.0.1:${ports[$i]} max_fails=1 fail_timeout=1s;"$'\n'
done
for ((i = 0; i < replicas; i++)); do
    wait_healthy "http://127.0.0.1:${ports[$i]}" || { echo "replica $i did not start"; cat "$work/replica-$i.log"; exit 1; }
done

port=$(free_port)
source "$root/Benchmarks/nginx.sh"
nginx_conf "$work/nginx.conf" "$work/nginx" "    upstream vltava {
$upstreams        keepalive 64;
    }
    server {
        listen 127.0.0.1:$port;
        location / {
            proxy_pass http://vltava;
            proxy_http_version 1.1;
            proxy_set_header Connection \"\";
            # A replica that is gone or still loading its snapshot: ask another (GETs are idempotent).
            proxy_next_upstream error timeout http_502 http_503;
            proxy_next_upstream_tries $replicas;
            proxy_connect_timeout 1s;
        }
    }"
"$nginx_bin" -c "$work/nginx.conf" -p "$work/nginx" 2>"$work/nginx/start.log" &
nginx_pid=$!
base="http://127.0.0.1:$port"
wait_healthy "$base" || { echo "nginx did not start"; cat "$work/nginx/start.log" "$work/nginx/error.log" 2>/dev/null; exit 1; }

python3 "$root/Benchmarks/wrk-points.py" --workloads "$workloads" --path /v1/layers/districts/containing >"$work/containing.lua"

run() {  # name
    local line
    line=$(wrk -t"$threads" -c"$connections" -d"${duration}s" --latency -s "$work/containing.lua" "$base" | grep '^rps=')
    echo "RESULT replicas-$1 replicas=$replicas $line load=$(cut -d' ' -f1 /proc/loadavg)"
}

echo "$replicas replicas behind nginx on $base; wrk -t$threads -c$connections -d${duration}s; $(nproc) cores"
run steady

# The same load while the replicas are rolled one by one, spread over the run.
(
    failed=0
    gap=$(python3 -c "print($duration / ($replicas + 1))")
    for ((i = 0; i < replicas; i++)); do
        sleep "$gap"
        url="http://127.0.0.1:${ports[$i]}"
        if [[ "$mode" == reload ]]; then
            status=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $token" "$url/v1/admin/reload")
            [[ "$status" == 200 ]] || failed=$((failed + 1))
        else
            pid=$(cat "$work/replica-$i.pid")
            kill -TERM "$pid" 2>/dev/null || true
            while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
            start_replica "$i"
            wait_healthy "$url" || failed=$((failed + 1))
        fi
    done
    echo "$failed" >"$work/rolls-failed"
) &
roller=$!
run "during-rolling-$mode"
wait "$roller"
echo "rolled: $replicas replicas ($mode), failed: $(cat "$work/rolls-failed")"
