#!/usr/bin/env bash
# The speed targets of the scale work, in one run with the shared anchors beside them:
#   W1  point in polygon (districts)        ≥ 10× shapely's prepared loop
#   W3  point in polygon (200k polygons)    ≥ 5× shapely's STRtree (the faster of its two uses)
#   W7  routes on Andorra by the hierarchy  ≥ 50× Boost's A*, lengths equal to Dijkstra's
#   T2  a 1,000 × 1,000 table on Andorra    < 1 s
#
#   Benchmarks/scale-targets.sh [--repeat 3] [--workloads /tmp/geobench] [--binary PATH] [--budget 20]
#
# Runs ../shared/bench/anchors.py on W1, W3 and W7 (SpatiaLite, DuckDB and the slow Python
# anchors skipped; each anchor's answers checked against the workload's own), then
# vltava-bench on W1, W3, W7 and T2 --repeat times, interleaved, and `anchors.py --verify` on
# every Vltava RESULT line (every checksum must match the workload's answers). Prints one
# line per target and repetition:
#   TARGET W1 run=1 vltava_s=… anchor=shapely-prepared-loop anchor_s=… ratio=… goal=10 met=yes|no
# and exits 1 if a checksum does not match. The release build of this checkout is used
# (swift build -c release --product vltava-bench) unless --binary names another vltava-bench.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
repeat=3 workloads=/tmp/geobench bin="" budget=20
while (($#)); do
    case "$1" in
        --repeat) repeat=$2; shift 2 ;;
        --workloads) workloads=$2; shift 2 ;;
        --binary) bin=$2; shift 2 ;;
        --budget) budget=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
anchors="$root/../shared/bench/anchors.py"
[[ -f "$anchors" ]] || { echo "no $anchors" >&2; exit 1; }
if [[ -z "$bin" ]]; then
    (cd "$root" && swift build -c release --product vltava-bench >/dev/null)
    bin="$root/.build/release/vltava-bench"
fi
work=$(mktemp -d /tmp/vltava-targets.XXXXXX)
trap 'rm -rf "$work"' EXIT

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
python3 "$anchors" "$workloads" --only W1,W3,W7 --skip spatialite,duckdb,numpy,rtree,networkx,python-heapq \
    --budget "$budget" --json "$work/anchors.json" >"$work/anchors.txt"
grep -E '^ *RESULT' "$work/anchors.txt" | sed 's/^ *//'
for run in $(seq "$repeat"); do
    # vltava-bench reads the workloads relative to its own folder for Q1 and T1; run it from the repository.
    (cd "$root" && "$bin" "$workloads" --only W1,W3,W7,T2) | tee "$work/run$run.txt"
done
cat "$work"/run*.txt >"$work/all.txt"
# --verify prints OK or BAD per line and exits 1 when any checksum differs.
python3 "$anchors" "$workloads" --verify "$work/all.txt" --json "$work/anchors.json" || { echo "a checksum did not match" >&2; exit 1; }

python3 - "$work/anchors.json" "$repeat" "$work" <<'EOF'
import json, re, sys
anchors = {(r["workload"], r["impl"]): r["query_s"] for r in json.load(open(sys.argv[1]))["results"] if r["ok"]}
# Each target against the fastest of its named anchors (W3: either way of using shapely's STRtree).
targets = [("W1", "vltava-polygon-index", ["shapely-prepared-loop"], 10),
           ("W3", "vltava-polygon-index", ["shapely-strtree-within", "shapely-strtree+contains_xy"], 5),
           ("W7", "vltava-ch", ["bgl-astar(C++)"], 50)]
for run in range(1, int(sys.argv[2]) + 1):
    lines = open(f"{sys.argv[3]}/run{run}.txt").read().splitlines()
    for workload, impl, names, goal in targets:
        mine = next((float(re.search(r"query_s=(\S+)", l).group(1)) for l in lines
                     if f"workload={workload} " in l and f"impl={impl} " in l), None)
        timed = [(anchors[(workload, n)], n) for n in names if (workload, n) in anchors]
        theirs, anchor = min(timed) if timed else (None, names[0])
        if mine is None or theirs is None:
            print(f"TARGET {workload} run={run} missing ({impl}: {mine}, {anchor}: {theirs})")
            continue
        ratio = theirs / mine
        print(f"TARGET {workload} run={run} vltava_s={mine:.4g} anchor={anchor} anchor_s={theirs:.4g} "
              f"ratio={ratio:.1f} goal={goal} met={'yes' if ratio >= goal else 'no'}")
    table = next((l for l in lines if l.startswith("TABLE id=T2")), None)
    if table:
        seconds = float(re.search(r"ch_s=(\S+)", table).group(1))
        print(f"TARGET T2 run={run} table_s={seconds:.4g} goal_s=1 met={'yes' if seconds < 1 else 'no'}")
EOF
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
