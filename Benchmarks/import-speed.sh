#!/usr/bin/env bash
# Import speed against GDAL: the 200,000 polygons of the W3 workload imported by `vltava import`
# as GeoJSON (Vltava's own reader) and as a Shapefile (through GDAL), beside `ogr2ogr -f GPKG`
# making the same layer from the same files, in the same run.
#
#   Benchmarks/import-speed.sh [--scratch-path DIR] [--workloads DIR] [--binary PATH]
#
# Prints one RESULT line per import: wall seconds and peak memory (maximum resident set size
# from /usr/bin/time -v). The Shapefile is made first with ogr2ogr (not timed). Each import
# writes a fresh store in a temporary directory, removed at the end. The release build of this
# checkout is used (built in --scratch-path, default .build) unless --binary names another.
# The W3 file comes from ../shared/bench/gen_workloads.py (numpy, shapely) when missing.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
scratch="$root/.build" workloads=/tmp/geobench bin=""
while (($#)); do
    case "$1" in
        --scratch-path) scratch="$2"; shift 2 ;;
        --workloads) workloads="$2"; shift 2 ;;
        --binary) bin="$2"; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done

polygons="$workloads/W3-pip-synthetic-200k/polygons.geojson"
if [[ ! -f "$polygons" ]]; then
    python3 "$root/../shared/bench/gen_workloads.py" "$workloads"
fi
if [[ -z "$bin" ]]; then
    (cd "$root" && swift build -c release --product vltava --scratch-path "$scratch" >/dev/null)
    bin="$scratch/release/vltava"
fi
[[ -x /usr/bin/time ]] || { echo "needs /usr/bin/time (Debian package time)" >&2; exit 2; }

work="$(mktemp -d /tmp/vltava-import-speed.XXXXXX)"
trap 'rm -rf "$work"' EXIT
ogr2ogr -f "ESRI Shapefile" "$work/w3.shp" "$polygons" -nln w3

# One import under /usr/bin/time -v: RESULT name seconds peak-MB.
measure() {
    local name="$1"; shift
    /usr/bin/time -v -o "$work/time.txt" "$@" >"$work/out.txt" 2>&1 || { cat "$work/out.txt" "$work/time.txt" >&2; exit 1; }
    local wall peak
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$work/time.txt")
    peak=$(awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$work/time.txt")
    printf 'RESULT %-28s %8.2f s %8s MB peak\n' "$name" "$wall" "$peak"
}

echo "W3: $(du -h "$polygons" | cut -f1) of GeoJSON, $(du -ch "$work"/w3.{shp,shx,dbf} | tail -1 | cut -f1) of Shapefile; $bin"
measure "vltava import geojson" "$bin" import "$polygons" --layer w3 --db "$work/vltava-geojson.gpkg"
measure "ogr2ogr -f GPKG geojson" ogr2ogr -f GPKG "$work/ogr-geojson.gpkg" "$polygons" -nln w3
measure "vltava import shapefile" "$bin" import "$work/w3.shp" --layer w3 --db "$work/vltava-shp.gpkg"
measure "ogr2ogr -f GPKG shapefile" ogr2ogr -f GPKG "$work/ogr-shp.gpkg" "$work/w3.shp" -nln w3
