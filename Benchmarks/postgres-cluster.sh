# Sourced by the PostGIS benchmarks (postgis-side-by-side.sh, postgis-large-layer.sh): a
# throwaway PostgreSQL 15 + PostGIS cluster in a temporary folder, and what they start stopped
# on exit.
#
# Sets `work` (the temporary folder, named after $1), `pgbin`, and `pids` (the servers a script
# starts: add each one's pid). `start_cluster` runs initdb (as nobody when this runs as root) and
# PostgreSQL on 127.0.0.1 at a free port of 55400–55499, creates the database `vltava`, and sets
# `pgport` and `url`. `free_port` prints a free port of that range. `wrk_query_script BEFORE AFTER`
# prints a wrk script that POSTs "BEFORE POINT(lon lat)AFTER" to /v1/query for each point of
# $work/points.lua (a Lua table `points` of "lon lat"), and prints qps, p50, p99 and errors.
# `require_tools TOOL…` stops with the install hint when one is missing. `use_binary PATH` sets
# `bin`: PATH, or when it is empty this checkout's release build, built now.

pgbin=/usr/lib/postgresql/15/bin
work=$(mktemp -d "/tmp/$1.XXXXXX")
as=()
if [[ $(id -u) -eq 0 ]]; then chown nobody "$work"; as=(runuser -u nobody --); fi
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
    [[ -f "$work/data/postmaster.pid" ]] && "${as[@]}" "$pgbin/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT

require_tools() {
    for tool in "$@"; do
        command -v "$tool" >/dev/null || { echo "$tool is missing: scripts/install-deps.sh --bench" >&2; exit 1; }
    done
}

use_binary() {
    if [[ -n "$1" ]]; then
        bin=$1
    else
        echo "building vltava (release)"
        local root
        root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
        (cd "$root" && swift build -c release --product vltava) >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
        bin="$root/.build/release/vltava"
    fi
}

free_port() {
    python3 - <<'PY'
import random, socket
for port in random.sample(range(55400, 55500), 100):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port)); print(port); break
    except OSError:
        pass
    finally:
        s.close()
PY
}

start_cluster() {
    pgport=$(free_port)
    "${as[@]}" "$pgbin/initdb" -D "$work/data" -U vltava --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync >/dev/null
    "${as[@]}" "$pgbin/pg_ctl" -D "$work/data" -l "$work/pg.log" -w \
        -o "-c listen_addresses=127.0.0.1 -p $pgport -c unix_socket_directories=$work -c fsync=off -c max_connections=100" start >/dev/null
    "$pgbin/psql" -X -q -h 127.0.0.1 -p "$pgport" -U vltava -d postgres -c "CREATE DATABASE vltava" >/dev/null
    url="postgresql://vltava@127.0.0.1:$pgport/vltava"
}

wrk_query_script() {
    cat "$work/points.lua" - <<LUA
local i = 0
function init(args) math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16)); i = math.random(#points) end
function request()
    i = i % #points + 1
    return wrk.format("POST", "/v1/query", {["Content-Type"] = "text/plain"}, "$1POINT(" .. points[i] .. ")$2")
end
function done(summary, latency, requests)
    local e = summary.errors
    io.write(string.format("qps=%.0f p50_ms=%.3f p99_ms=%.3f errors=%d\n", summary.requests / (summary.duration / 1e6),
        latency:percentile(50) / 1000, latency:percentile(99) / 1000, e.connect + e.read + e.write + e.timeout + e.status))
end
LUA
}
