#!/usr/bin/env bash
# The scaling table of docs/ARCHITECTURE.md ("Snapshot files"): for one polygon GeoJSON, the
# import's seconds and peak RSS, the first load's (which builds the snapshot file, streaming
# the layer from the store: `vltava import` leaves it to the first load unless given
# --snapshot-file, because the build holds the polygon index, about 430 MB at 1M), a cold
# `vltava query`'s seconds, `serve`'s seconds to its
# first answer, and the server's RSS after the first load and after 10 reloads (POST
# /v1/admin/reload, one after another, each answered before the next).
#
#   Benchmarks/snapshot-scale.sh VLTAVA GEOJSON WORKDIR PORT [LABEL]
#
# e.g. Benchmarks/snapshot-scale.sh .build/release/vltava /tmp/geobench/W3-1m/polygons.geojson /tmp/scale 55601 1m
# (the 1M file: Benchmarks/w3-tiled.py). Prints RESULT lines. "Cold" means a new process on a
# store whose file pages are in the page cache (the import just wrote them): page cache is
# not dropped.
set -euo pipefail
vltava=$(realpath "$1"); geojson=$2; work=$3; port=$4; label=${5:-run}
mkdir -p "$work"
store="$work/store.gpkg"
rm -f "$store" "$store"-wal "$store"-shm "$store".vltava-snapshot

now() { date +%s.%N; }
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$1" "$2"; }

/usr/bin/time -v "$vltava" import "$geojson" --layer cells --db "$store" > "$work/import.out" 2> "$work/import.time"
import_s=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s }' "$work/import.time")
import_kb=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$work/import.time")
echo "RESULT $label import_seconds=$import_s import_peak_rss_mb=$((import_kb / 1024))"

# A point inside the first cell of the W3 grid.
query='FIND cells CONTAINING POINT(14.2248 49.9422) RETURN fid, idx'
/usr/bin/time -v "$vltava" query --db "$store" "$query" > "$work/query.out" 2> "$work/build.time"
build_s=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s }' "$work/build.time")
build_kb=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$work/build.time")
echo "RESULT $label first_load_builds_file_seconds=$build_s peak_rss_mb=$((build_kb / 1024)) file_mb=$(( $(stat -c %s "$store.vltava-snapshot") / 1048576 ))"
for run in 1 2 3; do
    start=$(now)
    "$vltava" query --db "$store" "$query" > "$work/query.out"
    echo "RESULT $label cold_query_seconds=$(elapsed "$start" "$(now)") run=$run answer=$(tr -s ' \n' ' ' < "$work/query.out" | tail -c 60)"
done

token="$work/admin-token"
echo "snapshot-scale-token" > "$token"
start=$(now)
"$vltava" serve --db "$store" --port "$port" --admin-token-file "$token" --log-level warning > "$work/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
url="http://127.0.0.1:$port"
until curl -sf "$url/v1/layers/cells/containing?lon=14.2248&lat=49.9422" > "$work/first.json" 2> /dev/null; do
    kill -0 $server || { cat "$work/serve.log"; exit 1; }
    sleep 0.02
done
echo "RESULT $label serve_first_answer_seconds=$(elapsed "$start" "$(now)")"
rss() { awk '/VmRSS/ { print int($2 / 1024) }' "/proc/$server/status"; }
# A few answers first, so the pages a query touches are counted.
for _ in $(seq 20); do curl -sf "$url/v1/layers/cells/containing?lon=14.2248&lat=49.9422" > /dev/null; done
first=$(rss)
echo "RESULT $label rss_after_first_load_mb=$first"
for i in $(seq 10); do
    curl -sf -X POST -H "Authorization: Bearer snapshot-scale-token" "$url/v1/admin/reload" > "$work/reload.json"
    for _ in $(seq 20); do curl -sf "$url/v1/layers/cells/containing?lon=14.2248&lat=49.9422" > /dev/null; done
    echo "reload $i: rss $(rss) MB $(cat "$work/reload.json")" >> "$work/reloads.log"
done
sleep 1  # the trim after a snapshot is released runs on a thread of its own
after=$(rss)
echo "RESULT $label rss_after_10_reloads_mb=$after ratio=$(python3 -c "print(f'{$after / $first:.3f}')")"
kill $server; wait $server 2>/dev/null || true
trap - EXIT
