#!/usr/bin/env bash
# What one HTTP request costs the server, in measures that depend little on what else runs on
# the machine (requests/s under wrk depend a lot): heap allocations (malloc, calloc and realloc
# calls, counted exactly) and CPU time (user + system, from /proc) per request.
#
#   Benchmarks/http-cost.sh [--binary PATH] [--requests N] [--port PORT] [--workloads DIR]
#
# Serves the demo store with Benchmarks/malloc-counter.c preloaded, warms each endpoint up,
# then for `containing` and `nearest?k=3` in turn sends N (default 20,000) requests at the W1
# points one after another on one keep-alive connection, and prints one RESULT line per
# endpoint. Everything the process does counts: NIO, Hummingbird, middleware, the Engine, the
# JSON. (callgrind's instruction counts would be the better measure, but valgrind 3.19, the
# Debian one, crashes on any Swift 6 binary, even on `vltava --help`; the machine has no
# hardware counters for perf_event_open.) --binary defaults to .build/release/vltava.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/.build/release/vltava" requests=20000 port= workloads=/tmp/geobench
while (($#)); do
    case "$1" in
        --binary) bin=$2; shift 2 ;;
        --requests) requests=$2; shift 2 ;;
        --port) port=$2; shift 2 ;;
        --workloads) workloads=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done

work=$(mktemp -d /tmp/vltava-http-cost.XXXXXX)
server_pid=""
cleanup() {
    [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

cc -O2 -shared -fPIC -o "$work/malloc-counter.so" "$root/Benchmarks/malloc-counter.c"
"$root/scripts/build-demo-store.sh" "$work/demo.gpkg" "$bin" >/dev/null
python3 "$root/Benchmarks/wrk-points.py" --workloads "$workloads" --path /healthz >/dev/null  # makes W1 if missing
[[ -n "$port" ]] || port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
LD_PRELOAD="$work/malloc-counter.so" MALLOC_COUNTER_FILE="$work/mallocs" \
    "$bin" serve --db "$work/demo.gpkg" --host 127.0.0.1 --port "$port" >"$work/server.out" 2>"$work/server.log" &
server_pid=$!
base="http://127.0.0.1:$port"
for _ in $(seq 100); do curl -sf "$base/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "$base/healthz" >/dev/null || { echo "the server did not start"; cat "$work/server.log"; exit 1; }

echo "$bin: $requests requests per endpoint, one after another on one keep-alive connection"
python3 - "$workloads/W1-pip-districts/points.lonlat.f64" "$port" "$requests" "$server_pid" "$work/mallocs" <<'EOF'
import http.client, os, struct, sys
points, port, count, pid, counter = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
data = open(points, "rb").read()
ticks = os.sysconf("SC_CLK_TCK")

def cpu_seconds():
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime

def mallocs():
    return struct.unpack("<Q", open(counter, "rb").read(8))[0]

def send(connection, path, suffix, n):
    for i in range(n):
        lon, lat = struct.unpack_from("<dd", data, 16 * (i % 10_000))
        connection.request("GET", f"{path}?lon={lon:.6f}&lat={lat:.6f}{suffix}")
        response = connection.getresponse()
        response.read()
        if response.status != 200:
            sys.exit(f"{path}: status {response.status}")

for name, path, suffix in [("containing", "/v1/layers/districts/containing", ""), ("nearest", "/v1/layers/stations/nearest", "&k=3")]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    send(connection, path, suffix, 1000)
    cpu, allocations = cpu_seconds(), mallocs()
    send(connection, path, suffix, count)
    cpu, allocations = cpu_seconds() - cpu, mallocs() - allocations
    connection.close()
    print(f"RESULT http-cost-{name} requests={count} mallocs_per_request={allocations / count:.1f} "
          f"cpu_us_per_request={cpu / count * 1e6:.1f} load={open('/proc/loadavg').read().split()[0]}")
EOF
