#!/usr/bin/env bash
# The memory of `vltava serve` on a PostGIS store with a large time series (docs/ARCHITECTURE.md,
# "The PostGIS store", Memory).
#
#   Benchmarks/postgis-series-memory.sh [--years 5] [--port 56201] [--http-port 56210] VLTAVA [OTHER_VLTAVA]
#
# 1. Starts a throwaway PostgreSQL 15 + PostGIS cluster on 127.0.0.1:--port (initdb in a
#    temporary folder, run as `nobody` when this script runs as root).
# 2. Builds the demo store with VLTAVA (scripts/build-demo-store.sh), pushes it, and replaces its
#    observations with 17 stations × hourly × --years years from 2015 (SQL generate_series;
#    columns some stations do not measure are 0, 2 % of hours incomplete).
# 3. For VLTAVA (and OTHER_VLTAVA, e.g. a build from before a change), serves the store, prints
#    the time until /healthz answers and the RSS then, the time of each of a few statements that
#    read the series, the RSS after them, and the md5 of every answer (equal sums: equal answers;
#    /v1/air's age_s, which depends on the clock, is left out of its sum).
set -euo pipefail
years=5 port=56201 http_port=56210
while [[ $# -gt 0 ]]; do
    case $1 in
        --years) years=$2; shift 2 ;;
        --port) port=$2; shift 2 ;;
        --http-port) http_port=$2; shift 2 ;;
        *) break ;;
    esac
done
binaries=("$@")
[[ ${#binaries[@]} -ge 1 ]] || { echo "usage: $0 [--years N] [--port P] [--http-port P] VLTAVA [OTHER_VLTAVA]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
pg_bin=/usr/lib/postgresql/15/bin
[[ -x $pg_bin/initdb && -f /usr/share/postgresql/15/extension/postgis.control ]] \
    || { echo "PostgreSQL 15 with PostGIS 3 is missing: scripts/install-deps.sh --test" >&2; exit 1; }

work=$(mktemp -d /tmp/vltava-series-pg.XXXXXX)
chmod 755 "$work"
as_postgres=()
if [[ $(id -u) -eq 0 ]]; then as_postgres=(runuser -u nobody --); fi
started="" server=""
cleanup() {
    if [[ -n "$server" ]]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    if [[ -n "$started" ]]; then "${as_postgres[@]}" "$pg_bin/pg_ctl" -D "$work/pg" -m fast -w stop >/dev/null 2>&1 || true; fi
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

mkdir "$work/pg"
[[ ${#as_postgres[@]} -eq 0 ]] || chown nobody "$work/pg"
"${as_postgres[@]}" "$pg_bin/initdb" -D "$work/pg" -U vltava --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync >/dev/null
"${as_postgres[@]}" "$pg_bin/pg_ctl" -D "$work/pg" -l "$work/pg/server.log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories='' -c fsync=off -c synchronous_commit=off" start >/dev/null
started=1
psql=(psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U vltava)
"${psql[@]}" -d postgres -c "CREATE DATABASE series"
"${psql[@]}" -d series -c "CREATE EXTENSION postgis"
url="postgresql://vltava@127.0.0.1:$port/series"

"$root/scripts/build-demo-store.sh" "$work/demo.gpkg" "${binaries[0]}" >/dev/null
"${binaries[0]}" push "$work/demo.gpkg" "$url" >/dev/null
"${psql[@]}" -d series <<SQL
DELETE FROM observations;
INSERT INTO observations (fid, code, interval_start, interval_end, aqi, aqidescription, no2, o3, pm10, pm10_24, pm2_5, so2, co)
SELECT row_number() OVER (), s.code,
       to_char(h, 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), to_char(h + interval '1 hour', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       CASE WHEN random() < 0.02 THEN 0 ELSE 1 + floor(random() * 5) END, 'fair',
       round((random() * 80)::numeric, 1), CASE WHEN s.n % 3 = 0 THEN 0 ELSE round((random() * 120)::numeric, 1) END,
       round((random() * 60)::numeric, 1), round((random() * 50)::numeric, 1),
       CASE WHEN s.n % 2 = 0 THEN 0 ELSE round((random() * 40)::numeric, 1) END,
       CASE WHEN s.n % 4 = 0 THEN round((random() * 10)::numeric, 1) ELSE 0 END,
       CASE WHEN s.n % 5 = 0 THEN round((random() * 900)::numeric, 0) ELSE 0 END
FROM (SELECT code, row_number() OVER (ORDER BY code) AS n FROM stations) AS s,
     generate_series(timestamp '2015-01-01', timestamp '2015-01-01' + interval '$years years' - interval '1 hour', interval '1 hour') AS h;
ANALYZE observations;
SQL
echo "observations: $("${psql[@]}" -d series -A -t -c "SELECT count(*) || ' rows, ' || pg_size_pretty(pg_total_relation_size('observations')) || ' with indexes' FROM observations")"

statements=(
    "FIND stations ORDER BY code RETURN code, OBSERVED_AT, LATEST(aqi), LATEST(no2), LATEST(o3), LATEST(pm10), LATEST(pm10_24), LATEST(pm2_5), LATEST(so2), LATEST(co)"
    "FIND stations ORDER BY code RETURN code, HISTORY(no2, 24 h), HISTORY(aqi, 6 h)"
    "FIND stations WHERE MEASURES(so2) AND FRESH(3 h) RETURN code, AVG(HISTORY(so2, 168 h)), MAX(HISTORY(co, 720 h))"
    "FIND stations WHERE MEASURES(no2) RETURN classif, COUNT(*), AVG(MAX(HISTORY(no2, 24 h))) GROUP BY classif"
    "FIND stations NEAREST 3 TO POINT(14.42 50.08) RETURN code, distance_m, LATEST(no2), OBSERVED_AT"
)
for binary in "${binaries[@]}"; do
    echo "== $binary"
    begin=$(date +%s.%N)
    "$binary" serve --db "$url" --host 127.0.0.1 --port "$http_port" >"$work/serve.log" 2>&1 &
    server=$!
    until curl -sf "http://127.0.0.1:$http_port/healthz" >/dev/null; do
        kill -0 "$server" 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
        sleep 0.2
    done
    echo "ready after $(echo "$(date +%s.%N) - $begin" | bc) s, $(grep VmRSS "/proc/$server/status" | tr -s ' \t' ' ')"
    for statement in "${statements[@]}"; do
        time=$(curl -s -o "$work/answer.json" -w "%{time_total}" -X POST --data-binary "$statement" "http://127.0.0.1:$http_port/v1/query")
        echo "  ${time} s  md5 $(md5sum <"$work/answer.json" | cut -c1-12)  $statement"
    done
    for path in "/v1/air?lon=14.42&lat=50.08" "/v1/here?lon=14.42&lat=50.08"; do
        time=$(curl -s -o "$work/answer.json" -w "%{time_total}" "http://127.0.0.1:$http_port$path")
        echo "  ${time} s  md5 $(sed 's/"age_s":[0-9-]*//' "$work/answer.json" | md5sum | cut -c1-12)  GET $path"
    done
    echo "after: $(grep -E 'VmRSS|VmHWM' "/proc/$server/status" | tr -s ' \t' ' ' | tr '\n' ' ')"
    kill "$server"; wait "$server" 2>/dev/null || true
    server=""
done
