#!/usr/bin/env bash
# Import speed against GDAL: the 200,000 polygons of the W3 workload imported by `vltava import`
# as GeoJSON (Vltava's own reader) and as a Shapefile (through GDAL), beside `ogr2ogr -f GPKG`
# making the same layer from the same files, in the same run.
#
#   Benchmarks/import-speed.sh [--1m] [--only-1m] [--scratch-path DIR] [--workloads DIR] [--binary PATH]
#
# Prints one RESULT line per import: wall seconds and peak memory (maximum resident set size
# from /usr/bin/time -v), and one RESULT line per pair with Vltava's time over ogr2ogr's (below
# 1: Vltava is faster). The Shapefile is made first with ogr2ogr (not timed). Each import
# writes a fresh store in a temporary directory, removed at the end. The release build of this
# checkout is used (built in --scratch-path, default .build) unless --binary names another.
# The W3 file comes from ../shared/bench/gen_workloads.py (numpy, shapely) when missing.
# --1m adds the same pair on 1,000,000 polygons (510 MB of GeoJSON: five copies of W3 stacked
# north, written by Benchmarks/w3-tiled.py into WORKLOADS/W3-1m once); --only-1m runs only that.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
scratch="$root/.build" workloads=/tmp/geobench bin="" big=0 small=1
while (($#)); do
    case "$1" in
        --1m) big=1; shift ;;
        --only-1m) big=1; small=0; shift ;;
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
((small)) && ogr2ogr -f "ESRI Shapefile" "$work/w3.shp" "$polygons" -nln w3

# One import under /usr/bin/time -v: RESULT name seconds peak-MB.
measure() {
    local name="$1"; shift
    /usr/bin/time -v -o "$work/time.txt" "$@" >"$work/out.txt" 2>&1 || { cat "$work/out.txt" "$work/time.txt" >&2; exit 1; }
    local peak
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$work/time.txt")
    peak=$(awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$work/time.txt")
    printf 'RESULT %-40s %8.2f s %8s MB peak\n' "$name" "$wall" "$peak"
}

ratio() {
    local name="$1" ours="$2" theirs="$3"
    awk -v n="$name" -v a="$ours" -v b="$theirs" 'BEGIN { printf "RESULT %-40s %8.2f (vltava s / ogr2ogr s)\n", n, a / b }'
}

if ((small)); then
    echo "W3: $(du -h "$polygons" | cut -f1) of GeoJSON, $(du -ch "$work"/w3.{shp,shx,dbf} | tail -1 | cut -f1) of Shapefile; $bin"
    measure "vltava import geojson" "$bin" import "$polygons" --layer w3 --db "$work/vltava-geojson.gpkg"; a=$wall
    measure "ogr2ogr -f GPKG geojson" ogr2ogr -f GPKG "$work/ogr-geojson.gpkg" "$polygons" -nln w3; b=$wall
    measure "vltava import shapefile" "$bin" import "$work/w3.shp" --layer w3 --db "$work/vltava-shp.gpkg"; c=$wall
    measure "ogr2ogr -f GPKG shapefile" ogr2ogr -f GPKG "$work/ogr-shp.gpkg" "$work/w3.shp" -nln w3; d=$wall
    ratio "200k geojson vltava/ogr2ogr" "$a" "$b"
    ratio "200k shapefile vltava/ogr2ogr" "$c" "$d"
    rm -f "$work"/*.gpkg
fi
if ((big)); then
    big_polygons="$workloads/W3-1m/polygons.geojson"
    if [[ ! -f "$big_polygons" ]]; then
        mkdir -p "$workloads/W3-1m"
        python3 "$root/Benchmarks/w3-tiled.py" "$polygons" "$big_polygons.part" 5 && mv "$big_polygons.part" "$big_polygons"
    fi
    echo "W3 1M: $(du -h "$big_polygons" | cut -f1) of GeoJSON; $bin"
    measure "vltava import geojson 1M" "$bin" import "$big_polygons" --layer w3 --db "$work/vltava-1m.gpkg"; a=$wall
    rm -f "$work/vltava-1m.gpkg"
    measure "ogr2ogr -f GPKG geojson 1M" ogr2ogr -f GPKG "$work/ogr-1m.gpkg" "$big_polygons" -nln w3; b=$wall
    rm -f "$work/ogr-1m.gpkg"
    ratio "1M geojson vltava/ogr2ogr" "$a" "$b"
fi
