#!/usr/bin/env bash
# Installs the Debian packages Vltava needs, only those that are missing.
# Usage: scripts/install-deps.sh [--test] [--bench]
#   --test adds the tools the tests drive: GDAL, tmux, and Python's jsonschema (PyPI) for the
#          TileJSON schema test
#   --bench adds the load generator of Benchmarks/http-load.sh: wrk, and PostGIS for
#          Benchmarks/tiles-vs-postgis.sh (not needed by the tests)
set -euo pipefail

packages=(pkg-config libgeos-dev libproj-dev libsqlite3-dev zlib1g-dev libdeflate-dev libedit-dev curl python3)
python_packages=()
for option in "$@"; do
    case "$option" in
        --test) packages+=(gdal-bin tmux python3-pip); python_packages+=("jsonschema:jsonschema==4.26.*") ;;
        --bench) packages+=(wrk postgresql-15-postgis-3) ;;
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

# PyPI packages (MODULE:REQUIREMENT), only those whose module does not import.
for entry in "${python_packages[@]}"; do
    module=${entry%%:*} requirement=${entry#*:}
    python3 -c "import $module" 2>/dev/null && continue
    echo "installing from PyPI: $requirement"
    # Debian's own python3 refuses pip outside a virtualenv (PEP 668) unless told otherwise.
    python3 -m pip install --quiet "$requirement" 2>/dev/null \
        || python3 -m pip install --quiet --break-system-packages "$requirement"
done
