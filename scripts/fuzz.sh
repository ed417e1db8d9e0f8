#!/usr/bin/env bash
# Coverage-guided fuzzing with libFuzzer (docs/ARCHITECTURE.md, "Fuzzing").
#
#   scripts/fuzz.sh TARGET SECONDS [LIBFUZZER-FLAG…]   one target for SECONDS
#   scripts/fuzz.sh all SECONDS [LIBFUZZER-FLAG…]      every target, SECONDS each
#   scripts/fuzz.sh build [TARGET|all]                 compile only
#   scripts/fuzz.sh replay TARGET FILE…                run saved inputs once (a crash's stack)
#   scripts/fuzz.sh minimize TARGET FILE               shrink a crashing input (FILE.min)
#
# Targets are Fuzz/TARGET.swift; their seeds are Fixtures/fuzz/TARGET/. Each run fuzzes a
# temporary copy of the seeds, so what the fuzzer finds never grows the repository; crashing
# inputs land in fuzz-crashes/ (git-ignored); FUZZ_KEEP_CORPUS=1 grows a corpus per target in
# .build-fuzz/corpus/ instead, for long runs one after another. Exits non-zero if any target
# crashed, timed out (10 s on one input) or ran out of memory (2 GB).
#
# Why swiftc and not `swift build`: SwiftPM would resolve the server's packages and link every
# product with libFuzzer's main. Here each module the targets need is compiled once, whole-module,
# with coverage instrumentation and AddressSanitizer (`-sanitize=fuzzer,address`) and
# `-enable-testing` (the CSV reader and the GeoPackage blob codec are internal), into
# .build-fuzz/fuzz/; a module is recompiled only when its sources, its dependencies or the
# flags change. One compiler process at a time, so a shared 2-core machine keeps a core free.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

usage() { echo "usage: scripts/fuzz.sh TARGET|all SECONDS [libFuzzer flags…] | scripts/fuzz.sh build [TARGET|all]" >&2; exit 2; }
[[ $# -ge 1 ]] || usage

all_targets=(query query-budget cql2 mvt gpkg-blob wkb geojson osm-pbf osm-xml mbtiles-meta pmtiles csv survey snapshot-load)
# The package's Swift modules in dependency order, and what each imports, read from Package.swift
# (so this list cannot drift from it); C system modules come in through c_flags below.
declare -a module_order=()
declare -A module_deps=()
while read -r name deps; do
    module_order+=("$name"); module_deps[$name]=$deps
done < <(swift package dump-package 2>/dev/null | python3 -c '
import json, sys
targets = {t["name"]: t for t in json.load(sys.stdin)["targets"] if t["type"] == "regular"}
def deps(t):
    names = [d.get("byName", d.get("target", [None]))[0] for d in t["dependencies"]]
    return [n for n in names if n in targets]
done = []
def visit(n):
    if n not in done:
        for d in deps(targets[n]): visit(d)
        done.append(n)
for n in targets: visit(n)
for n in done: print(n, " ".join(deps(targets[n])))
')
[[ ${#module_order[@]} -gt 0 ]] || { echo "fuzz: could not read the modules from Package.swift (swift package dump-package)" >&2; exit 1; }
# The module each target calls into; its dependencies come along.
declare -A target_module=(
    [query]="QueryLanguage ZooPraha" [query-budget]="QueryLanguage ZooPraha" [cql2]="QueryLanguage ZooPraha" [mvt]=VectorTiles [gpkg-blob]=Store [wkb]=Geometry [geojson]=Geometry
    [osm-pbf]=Routing [osm-xml]=Routing [mbtiles-meta]=VectorTiles [pmtiles]=VectorTiles [csv]=Store [survey]=Indoor
    [snapshot-load]=Engine
)
# Sources a target shares with another, beside Fuzz/Support/ (which every target has).
declare -A target_sources=([query]=Fuzz/Shared/DemoSnapshot.swift [query-budget]=Fuzz/Shared/DemoSnapshot.swift [cql2]=Fuzz/Shared/DemoSnapshot.swift)

build=.build-fuzz/fuzz
mkdir -p "$build/obj" "$build/bin"
# The system libraries' headers, as SwiftPM finds them (pkg-config), through the shims.
c_flags=()
for dir in Sources/CGEOS Sources/CPROJ Sources/CGDAL Sources/CSQLite Sources/CZlib Sources/CDeflate Sources/CMalloc; do c_flags+=(-I "$dir"); done
for flag in $(pkg-config --cflags geos proj gdal sqlite3 zlib libdeflate); do c_flags+=(-Xcc "$flag"); done
# -O as shipped (overflow and bounds checks stay on); line tables for symbolised stack traces;
# one package name, as SwiftPM gives, for the `package` declarations of Wire.
swift_flags=(-swift-version 6 -package-name vltava -parse-as-library -O -gline-tables-only -sanitize=fuzzer,address -enable-testing)
link_flags=(-lgeos_c -lproj -lgdal -lsqlite3 -lz -ldeflate)
compiler_id=$(swiftc --version 2>&1 | head -1)

# The modules `module` needs, itself last, in dependency order.
closure() {
    local wanted=" $1 " changed=1 m d
    while [[ $changed == 1 ]]; do
        changed=0
        for m in $wanted; do
            for d in ${module_deps[$m]}; do
                [[ $wanted == *" $d "* ]] || { wanted+="$d "; changed=1; }
            done
        done
    done
    for m in "${module_order[@]}"; do [[ $wanted == *" $m "* ]] && printf '%s ' "$m"; done
}

stamp_of() {  # the hash of everything an output depends on: files, flags, compiler, dependencies' stamps
    { printf '%s\n' "$compiler_id" "${swift_flags[*]}" "${c_flags[*]}" "$@"; cat "$@" 2>/dev/null; } | sha256sum | cut -d' ' -f1
}

build_module() {
    local m=$1 deps_stamps="" d
    for d in ${module_deps[$m]}; do deps_stamps+=$(cat "$build/obj/$d.stamp"); done
    local sources=(Sources/"$m"/*.swift)
    local stamp
    stamp=$(printf '%s%s' "$(stamp_of "${sources[@]}")" "$deps_stamps" | sha256sum | cut -d' ' -f1)
    if [[ -f $build/obj/$m.o && "$(cat "$build/obj/$m.stamp" 2>/dev/null)" == "$stamp" ]]; then return; fi
    echo "fuzz: compiling $m" >&2
    local start=$SECONDS
    swiftc "${swift_flags[@]}" "${c_flags[@]}" -I "$build/obj" -wmo -module-name "$m" \
        -emit-module -emit-module-path "$build/obj/$m.swiftmodule" \
        -c "${sources[@]}" -o "$build/obj/$m.o"
    echo "$stamp" >"$build/obj/$m.stamp"
    echo "fuzz: compiled $m in $((SECONDS - start)) s" >&2
}

build_target() {
    local t=$1 m
    [[ -n ${target_module[$t]:-} && -f Fuzz/$t.swift ]] || { echo "no fuzz target '$t' (targets: ${all_targets[*]})" >&2; exit 2; }
    local modules
    read -ra modules <<<"$(closure "${target_module[$t]}")"
    local objects=() deps_stamps=""
    for m in "${modules[@]}"; do
        build_module "$m"
        objects+=("$build/obj/$m.o")
        deps_stamps+=$(cat "$build/obj/$m.stamp")
    done
    local sources=(Fuzz/"$t".swift Fuzz/Support/*.swift ${target_sources[$t]:-})
    local stamp
    stamp=$(printf '%s%s' "$(stamp_of "${sources[@]}")" "$deps_stamps" | sha256sum | cut -d' ' -f1)
    if [[ -x $build/bin/$t && "$(cat "$build/bin/$t.stamp" 2>/dev/null)" == "$stamp" ]]; then return; fi
    echo "fuzz: linking $t" >&2
    # The ld.gold warnings about ASan's local symbols are noise; real errors still fail the build.
    swiftc "${swift_flags[@]}" "${c_flags[@]}" -I "$build/obj" -module-name "Fuzz_${t//-/_}" \
        "${sources[@]}" "${objects[@]}" "${link_flags[@]}" -o "$build/bin/$t" 2> >(grep -v "Cannot export local symbol '__asan" >&2)
    echo "$stamp" >"$build/bin/$t.stamp"
}

# The environment every target runs in. TMPDIR: the targets' scratch files (stores, MBTiles)
# go with the run. Swift's own backtracer is off so a runtime trap reaches libFuzzer's handler,
# which saves the input (the backtracer also reads memory that ASan then reports as a second,
# bogus error). No leak checking (here and -detect_leaks=0 below): Swift keeps enum case tags in
# the spare bits of heap pointers (an `indirect enum Geometry` holds its boxes that way), which
# LeakSanitizer cannot follow, so every geometry a global keeps (the query target's snapshot)
# would be reported as leaked.
run_env() {  # scratch-dir command…
    local scratch=$1; shift
    VLTAVA_ROOT=$root TMPDIR=$scratch SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0:${ASAN_OPTIONS:-} "$@"
}

# Runs one target; prints its executions per second and coverage; returns libFuzzer's status.
run_target() {
    local t=$1 seconds=$2; shift 2
    local work corpus
    work=$(mktemp -d "${TMPDIR:-/tmp}/vltava-fuzz-$t.XXXXXX")
    mkdir -p "$work/tmp" fuzz-crashes
    # FUZZ_KEEP_CORPUS=1 keeps what the fuzzer learns between runs, outside the repository.
    corpus=$work/corpus
    [[ ${FUZZ_KEEP_CORPUS:-0} == 1 ]] && corpus=$root/.build-fuzz/corpus/$t
    mkdir -p "$corpus"
    [[ -d Fixtures/fuzz/$t ]] && cp -R Fixtures/fuzz/"$t"/. "$corpus/"
    local flags=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -detect_leaks=0 -print_final_stats=1
                 -artifact_prefix="$root/fuzz-crashes/$t-")
    [[ -f Fuzz/$t.dict ]] && flags+=(-dict="Fuzz/$t.dict")
    echo "fuzz: $t for $seconds s (log: $work/log)" >&2
    local status=0
    run_env "$work/tmp" "$build/bin/$t" "${flags[@]}" "$@" "$corpus" >"$work/log" 2>&1 || status=$?
    local last execs cov
    last=$(grep -E '^#[0-9]+' "$work/log" | tail -1 || true)
    execs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log")
    cov=$(sed -n 's/.* cov: \([0-9]*\) ft: \([0-9]*\) corp: \([^ ]*\) .*/cov \1, features \2, corpus \3/p' <<<"$last")
    if [[ $status == 0 ]]; then
        printf 'fuzz: %-13s ok    %6s exec/s  %s\n' "$t" "${execs:-?}" "${cov:-?}"
        rm -rf "$work"
    else
        printf 'fuzz: %-13s FAILED (status %s) %6s exec/s  %s\n' "$t" "$status" "${execs:-?}" "${cov:-?}"
        # The report: from the first line of trouble (a broken invariant, a Swift runtime error,
        # the sanitizer's or libFuzzer's report) on.
        local first
        first=$(grep -n -m1 -E '^fuzz target: |^Fatal error|^==[0-9]+==' "$work/log" | cut -d: -f1 || true)
        [[ -n $first ]] && sed -n "$first,\$p" "$work/log" | head -60 >&2
        echo "fuzz: full log kept in $work/log; crashing input in fuzz-crashes/" >&2
    fi
    return $status
}

if [[ $1 == build ]]; then
    what=${2:-all}
    targets=("$what"); [[ $what == all ]] && targets=("${all_targets[@]}")
    for t in "${targets[@]}"; do build_target "$t"; done
    exit 0
fi

if [[ $1 == replay || $1 == minimize ]]; then
    [[ $# -ge 3 ]] || usage
    mode=$1 t=$2; shift 2
    build_target "$t"
    scratch=$(mktemp -d "${TMPDIR:-/tmp}/vltava-fuzz-$t.XXXXXX")
    trap 'rm -rf "$scratch"' EXIT
    if [[ $mode == replay ]]; then
        run_env "$scratch" "$build/bin/$t" -detect_leaks=0 "$@"
    else
        run_env "$scratch" "$build/bin/$t" -detect_leaks=0 -minimize_crash=1 -runs=20000 -exact_artifact_path="$1.min" "$1"
        echo "fuzz: minimised input in $1.min ($(wc -c <"$1.min") bytes)" >&2
    fi
    exit
fi

[[ $# -ge 2 && $2 =~ ^[0-9]+$ ]] || usage
what=$1 seconds=$2; shift 2
targets=("$what"); [[ $what == all ]] && targets=("${all_targets[@]}")
start=$SECONDS
for t in "${targets[@]}"; do build_target "$t"; done
echo "fuzz: built in $((SECONDS - start)) s" >&2
failed=()
for t in "${targets[@]}"; do run_target "$t" "$seconds" "$@" || failed+=("$t"); done
echo "fuzz: ${#targets[@]} target(s) in $((SECONDS - start)) s" >&2
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "fuzz: FAILED: ${failed[*]}" >&2
    exit 1
fi
