#!/usr/bin/env bash
# Vector tile encoding, Vltava against PostGIS's ST_AsMVT, on the same tiles in the same run.
#
#   Benchmarks/tiles-vs-postgis.sh [--passes N] [--zooms 14-16] [--port 18951] [--bin-dir DIR]
#
# 1. Builds the release `vltava` and `vltava-bench` (or takes them from --bin-dir) and imports
#    the parking zones (Fixtures/prague/parking-zones.wgs84.geojson) into a fresh store.
# 2. `vltava-bench tiles` lists every tile over the layer's bounds at the zooms (z14–z16: 918
#    tiles) and encodes them all, in process on one thread, best of --passes (default 5).
# 3. Starts a throwaway PostgreSQL 15 cluster with PostGIS 3 (scripts/install-deps.sh --bench):
#    initdb in a temporary folder, run as an unprivileged user (`nobody` when this script runs
#    as root, as CI does), listening on 127.0.0.1:--port only (18951; no Unix socket), fsync
#    off. Loads the same GeoJSON with ogr2ogr, transformed once to EPSG:3857 (so PostGIS does
#    not transform per tile, as Vltava projects from lon/lat per tile) with a GiST index.
# 4. Encodes the same tiles inside the server, in one PL/pgSQL loop (no client round trips):
#    ST_AsMVT over ST_AsMVTGeom(geom, ST_TileEnvelope(z, x, y), 4096, 64, true) of the features
#    whose boxes meet the tile and its 64-unit buffer, with the same attributes and ids; best
#    of the same passes.
# 5. Prints both TILES lines (tiles/s, non-empty tiles, features, bytes) and the ratio, and
#    stops the cluster (also on error or Ctrl-C) and removes the folder.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
passes=5 zooms=14-16 port=18951 bin_dir=
while (($#)); do
    case "$1" in
        --passes) passes=$2; shift 2 ;;
        --zooms) zooms=$2; shift 2 ;;
        --port) port=$2; shift 2 ;;
        --bin-dir) bin_dir=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
zmin=${zooms%-*} zmax=${zooms#*-}
pg_bin=/usr/lib/postgresql/15/bin
[[ -x $pg_bin/initdb && -f /usr/share/postgresql/15/extension/postgis.control ]] \
    || { echo "PostgreSQL 15 with PostGIS 3 is missing: scripts/install-deps.sh --bench" >&2; exit 1; }
command -v ogr2ogr >/dev/null || { echo "ogr2ogr is missing: scripts/install-deps.sh --test" >&2; exit 1; }

if [[ -z "$bin_dir" ]]; then
    (cd "$root" && swift build -c release --product vltava-bench >&2 && swift build -c release --product vltava >&2)
    bin_dir=$(cd "$root" && swift build -c release --show-bin-path)
fi

work=$(mktemp -d /tmp/vltava-tiles-pg.XXXXXX)
chmod 755 "$work"
# PostgreSQL refuses to run as root: as root, the cluster belongs to nobody.
as_postgres=()
if [[ $(id -u) -eq 0 ]]; then as_postgres=(runuser -u nobody --); fi
started=""
cleanup() {
    if [[ -n "$started" ]]; then "${as_postgres[@]}" "$pg_bin/pg_ctl" -D "$work/pg" -m fast -w stop >/dev/null 2>&1 || true; fi
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
geojson="$root/Fixtures/prague/parking-zones.wgs84.geojson"
"$bin_dir/vltava" import "$geojson" --layer parking --db "$work/store.gpkg" >/dev/null
vltava_line=$("$bin_dir/vltava-bench" tiles "$work/store.gpkg" parking "$zmin" "$zmax" "$work/tiles.csv" "$passes")
echo "$vltava_line"

mkdir "$work/pg"
[[ ${#as_postgres[@]} -eq 0 ]] || chown nobody "$work/pg"
"${as_postgres[@]}" "$pg_bin/initdb" -D "$work/pg" -U bench --auth=trust -E UTF8 --no-sync >/dev/null
"${as_postgres[@]}" "$pg_bin/pg_ctl" -D "$work/pg" -l "$work/pg/server.log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories='' -c fsync=off -c synchronous_commit=off -c jit=off" start >/dev/null
started=1
psql=(psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U bench -d postgres)
"${psql[@]}" -c "CREATE EXTENSION postgis"
ogr2ogr -f PostgreSQL "PG:host=127.0.0.1 port=$port user=bench dbname=postgres" "$geojson" -nln parking -t_srs EPSG:3857 \
    -nlt PROMOTE_TO_MULTI -lco GEOMETRY_NAME=geom -lco FID=fid -lco SPATIAL_INDEX=GIST
"${psql[@]}" <<SQL
VACUUM ANALYZE parking;
CREATE TABLE tiles (z int, x int, y int);
\copy tiles FROM '$work/tiles.csv' WITH (FORMAT csv)
CREATE TABLE runs (seconds float8, nonempty int, bytes bigint);
SQL
for ((pass = 0; pass < passes; pass++)); do
    "${psql[@]}" <<'SQL'
DO $$
DECLARE
    t record;
    tile bytea;
    started timestamptz := clock_timestamp();
    total bigint := 0;
    nonempty int := 0;
BEGIN
    FOR t IN SELECT z, x, y FROM tiles LOOP
        SELECT ST_AsMVT(q, 'parking', 4096, 'geom', 'fid') INTO tile FROM (
            SELECT p.fid, p.objectid, p.code, p.category, p.tariftext, p.poskyt, p.shape_length, p.shape_area,
                   ST_AsMVTGeom(p.geom, ST_TileEnvelope(t.z, t.x, t.y), 4096, 64, true) AS geom
            FROM parking p
            WHERE p.geom && ST_TileEnvelope(t.z, t.x, t.y, margin => 64.0 / 4096)
        ) q WHERE q.geom IS NOT NULL;
        total := total + coalesce(octet_length(tile), 0);
        IF coalesce(octet_length(tile), 0) > 0 THEN nonempty := nonempty + 1; END IF;
    END LOOP;
    INSERT INTO runs VALUES (extract(epoch FROM clock_timestamp() - started), nonempty, total);
END $$;
SQL
done
postgis_line=$("${psql[@]}" -At -F ' ' <<'SQL'
SELECT 'TILES id=T1 impl=postgis-' || postgis_lib_version() || ' layer=parking tiles=' || (SELECT count(*) FROM tiles)
    || ' seconds=' || round(min(seconds)::numeric, 6) || ' tiles_per_s=' || round(((SELECT count(*) FROM tiles) / min(seconds))::numeric, 1)
    || ' nonempty=' || max(nonempty) || ' features=' || (
        SELECT count(*) FROM tiles t, parking p
        WHERE p.geom && ST_TileEnvelope(t.z, t.x, t.y, margin => 64.0 / 4096)
          AND ST_AsMVTGeom(p.geom, ST_TileEnvelope(t.z, t.x, t.y), 4096, 64, true) IS NOT NULL)
    || ' bytes=' || max(bytes)
FROM runs;
SQL
)
echo "$postgis_line"
rate() { sed -n 's/.*tiles_per_s=\([0-9.e+]*\).*/\1/p' <<<"$1"; }
python3 -c "import sys; v, p = float(sys.argv[1]), float(sys.argv[2]); print(f'RATIO vltava/postgis tiles_per_s={v / p:.2f}')" \
    "$(rate "$vltava_line")" "$(rate "$postgis_line")"
