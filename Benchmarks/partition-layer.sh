#!/usr/bin/env bash
# Partitions a layer of a PostGIS store by grid cell (Benchmarks/partition-layer.sql says how),
# then prints the plan of the statement Vltava sends for a CONTAINING, an INTERSECTING and a
# NEAREST … WITHIN on it (`vltava query "EXPLAIN FIND …"`), which names only the partitions it reads.
#
#   Benchmarks/partition-layer.sh URL [LAYER=parking] [CELL_MILLIDEGREES=50] [PARTITIONS=8] [VLTAVA=.build/release/vltava]
set -euo pipefail
url=$1 layer=${2:-parking} cell=${3:-50} partitions=${4:-8}
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
vltava=${5:-$here/../.build/release/vltava}
psql -X -q -v ON_ERROR_STOP=1 "$url" -f "$here/partition-layer.sql" -c "CALL vltava_partition_layer('$layer', $cell, $partitions)"
echo "$layer: $(psql -X -A -t "$url" -c "SELECT count(*) FROM pg_inherits WHERE inhparent = '$layer'::regclass") partitions," \
     "$(psql -X -A -t "$url" -c "SELECT count(*) FROM $layer") rows (unpartitioned: $(psql -X -A -t "$url" -c "SELECT count(*) FROM ${layer}_unpartitioned"))"
for statement in "EXPLAIN FIND $layer CONTAINING POINT(14.42 50.08)" \
                 "EXPLAIN FIND $layer INTERSECTING BBOX(14.40 50.07, 14.43 50.09)" \
                 "EXPLAIN FIND $layer NEAREST 3 TO POINT(14.42 50.08) WITHIN 1000 m" \
                 "EXPLAIN FIND $layer NEAREST 3 TO POINT(14.42 50.08)"; do
    echo "== $statement"
    "$vltava" query --db "$url" --max-rows-loaded 0 "$statement" | grep -E "Scan|Append|SELECT|Subplans" || true
done
