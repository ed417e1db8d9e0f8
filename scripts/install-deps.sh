#!/usr/bin/env bash
# Installs the Debian packages Vltava needs, only those that are missing.
# Usage: scripts/install-deps.sh [--test] [--bench]
#   --test adds the tools the tests drive: GDAL, tmux
#   --bench adds the load generator of Benchmarks/http-load.sh: wrk, and the anchor of
#           Benchmarks/indoor_sklearn.py: numpy and scikit-learn from PyPI (not needed by the tests)
set -euo pipefail

bench=0
packages=(pkg-config libgeos-dev libproj-dev libsqlite3-dev zlib1g-dev libdeflate-dev libedit-dev curl python3)
for option in "$@"; do
    case "$option" in
        --test) packages+=(gdal-bin tmux) ;;
        --bench) packages+=(wrk python3-pip); bench=1 ;;
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

# The benchmarks' Python packages, pinned to a major.minor, only when missing.
if [[ $bench == 1 ]] && ! python3 -c "import numpy, sklearn" 2>/dev/null; then
    echo "installing from PyPI: numpy 2.x, scikit-learn 1.9"
    python3 -m pip install --quiet "numpy>=2,<3" "scikit-learn>=1.9,<1.10"
fi
