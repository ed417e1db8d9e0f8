#!/usr/bin/env bash
# Installs the Debian packages Vltava needs, only those that are missing.
# Usage: scripts/install-deps.sh [--test] [--bench]
#   --test adds the tools the tests drive: GDAL, tmux
#   --bench adds the load generator of Benchmarks/http-load.sh: wrk (not needed by the tests)
set -euo pipefail

packages=(pkg-config libgeos-dev libproj-dev libsqlite3-dev zlib1g-dev libdeflate-dev libedit-dev libgdal-dev curl python3)
for option in "$@"; do
    case "$option" in
        --test) packages+=(gdal-bin tmux) ;;
        --bench) packages+=(wrk) ;;
        *) echo "unknown option $option (use --test, --bench)" >&2; exit 2 ;;
    esac
done

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
    echo "installing: ${missing[*]}"
    sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
