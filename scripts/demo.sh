#!/usr/bin/env bash
# The main job on the bundled demo data (`make demo` builds the release binary first):
# prints the map page's URL, builds demo/vltava.gpkg from Fixtures/, starts the HTTP API and the
# map page on loopback, and prints one ready-to-paste request per story of docs/STORIES.md.
# Ctrl-C stops the server.
#   VLTAVA_PORT   the port (default 8080)
#   VLTAVA_BUILD  the build whose binary runs: release (default) or debug
#   VLTAVA_DEMO_FLAT=1  also import calib2021's flat as a venue on the map (build-demo-store.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
vltava=.build/${VLTAVA_BUILD:-release}/vltava
db=demo/vltava.gpkg
port=${VLTAVA_PORT:-8080}

map="http://127.0.0.1:$port/#map=16/50.11700/14.40600&layers=zoo_map,pavilions,districts"
echo "the map page, once the server runs: $map"
start=$(date +%s%N)
scripts/build-demo-store.sh "$db" "$vltava" >/dev/null
echo "built $db from Fixtures/ in $(( ($(date +%s%N) - start) / 1000000 )) ms:"
"$vltava" query "SHOW LAYERS" --db "$db"
echo

# The stories that write (docs/STORIES.md) send this demo-only token; the server takes writes
# from nobody else.
tokens=demo/write-tokens
(umask 077; echo "$(python3 scripts/stories.py demo-token)" > "$tokens")
"$vltava" serve --db "$db" --host 127.0.0.1 --port "$port" --log-level warning --write-token-file "$tokens" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT INT TERM
for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
    kill -0 $server 2>/dev/null || { echo "the server did not start" >&2; exit 1; }
    sleep 0.1
done
echo "open the map page: $map"
echo "serving the HTTP API on http://127.0.0.1:$port (docs/HTTP_API.md); Ctrl-C stops it."
echo "Try the stories of docs/STORIES.md:"
echo
python3 scripts/stories.py curl "http://127.0.0.1:$port"
wait $server
