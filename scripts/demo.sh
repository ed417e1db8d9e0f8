#!/usr/bin/env bash
# The main job on the bundled demo data: builds demo/vltava.gpkg from Fixtures/ and shows
# what is in it. (Assumes `swift build -c release` has run; `make demo` does both.)
set -euo pipefail
cd "$(dirname "$0")/.."
vltava=.build/release/vltava
db=demo/vltava.gpkg

start=$(date +%s%N)
scripts/build-demo-store.sh "$db" "$vltava"
echo "built $db in $(( ($(date +%s%N) - start) / 1000000 )) ms"
echo

"$vltava" layers --db "$db"
echo
"$vltava" describe stations --db "$db"
echo
"$vltava" tiles at Fixtures/zoo/zoo-prague-geojson-tiles.mbtiles 14.404891,50.115400 --zoom 16
echo
# A walk inside the zoo, from the main entrance to the gorillas' pen, over its footpaths.
"$vltava" route --from 14.4109,50.1167 --to 14.40519,50.11576 --network paths --db "$db"
