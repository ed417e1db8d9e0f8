#!/usr/bin/env bash
# Schemathesis over the whole served OpenAPI document: every operation (the /v1 API, OGC API –
# Features, OSRM's services), positive and negative data, every check, and the stateful phase.
# A failure is a 5xx, a status or content type the document does not list, a schema-valid
# request rejected or an invalid one accepted. scripts/schemathesis.toml names the operations
# whose well-formed requests may still be refused for what the data holds, and why. Schemathesis
# is given the server's admin token, which also writes: the writes (OGC API – Features Part 4,
# /v1/write, rows) change the throwaway store as the run goes, and the reload runs too (a debug
# build's reload takes seconds on a loaded machine, hence --max-response-time).
#
# Usage: scripts/schemathesis.sh [--binary PATH] [--max-examples N] [--max-time SECONDS] [--seed N]
#   --binary        the vltava to serve (default .build/debug/vltava)
#   --max-examples  cases per operation and phase (default 30; the test runs a few, a long run
#                   outside CI many more)
#   --max-time      a time budget for the whole run, in which fuzzing and the stateful phase
#                   repeat until it is spent (default: none)
# Needs schemathesis from PyPI (scripts/install-deps.sh --test). Serves a demo store built
# from Fixtures/ on a free loopback port, and stops it when done. Exit status: schemathesis's.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
binary="$root/.build/debug/vltava"
examples=30
time_budget=""
seed=1
while (($#)); do
    case "$1" in
        --binary) binary=$2; shift 2 ;;
        --max-examples) examples=$2; shift 2 ;;
        --max-time) time_budget=$2; shift 2 ;;
        --seed) seed=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
command -v schemathesis >/dev/null || { echo "schemathesis is not installed: scripts/install-deps.sh --test" >&2; exit 2; }

work=$(mktemp -d)
server=""
cleanup() { [[ -n $server ]] && kill "$server" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

"$root/scripts/build-demo-store.sh" "$work/demo.gpkg" "$binary" >"$work/build.log" 2>&1 \
    || { cat "$work/build.log" >&2; exit 1; }
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
head -c 24 /dev/urandom | base64 >"$work/admin-token"
"$binary" serve --db "$work/demo.gpkg" --port "$port" --admin-token-file "$work/admin-token" >"$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 1 600); do
    curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
    sleep 0.2
done
# The first search builds the names' index (under a second on a debug build; past the 5 s
# request budget on a machine loaded by the rest of the test suite, a 422 schemathesis would
# count against the document). Built once here, before the requests it judges.
curl -s -o /dev/null "http://127.0.0.1:$port/v1/search?q=a" || true

options=(--checks all --mode all --phases examples,coverage,fuzzing,stateful --max-examples "$examples"
         --seed "$seed" --generation-deterministic --workers 1 --request-timeout 30 --max-response-time 120 --no-color
         --suppress-health-check too_slow,filter_too_much)
[[ -n $time_budget ]] && options+=(--max-time "$time_budget")
schemathesis --config-file "$root/scripts/schemathesis.toml" run "http://127.0.0.1:$port/openapi.json" "${options[@]}" \
    --header "Authorization: Bearer $(cat "$work/admin-token")"
