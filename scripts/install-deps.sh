#!/usr/bin/env bash
# Installs the Debian packages Vltava needs, only those that are missing.
# Usage: scripts/install-deps.sh [--test] [--bench]
#   --test adds the tools the tests drive: GDAL, tmux, and from PyPI the clients of the standard
#          APIs (routingpy's OSRM client, the polyline decoder, openapi-spec-validator)
#   --bench adds the load generator of Benchmarks/http-load.sh: wrk (not needed by the tests)
set -euo pipefail

packages=(pkg-config libgeos-dev libproj-dev libsqlite3-dev zlib1g-dev libdeflate-dev libedit-dev curl python3)
# PyPI packages, pinned to a major.minor, with the module each one installs.
python_packages=()
python_modules=()
for option in "$@"; do
    case "$option" in
        --test)
            packages+=(gdal-bin tmux python3-pip)
            python_packages+=("routingpy==1.3.*" "polyline==2.0.*" "openapi-spec-validator==0.7.*")
            python_modules+=(routingpy polyline openapi_spec_validator) ;;
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

# The Python packages, into the python3 the tests run (`/usr/bin/env python3`), when missing.
# Debian's own python3 refuses pip outside a virtual environment (PEP 668): the tests are that
# machine's only use of these packages, so they go in beside the system's.
if ((${#python_packages[@]})) && ! python3 -c "import $(IFS=,; echo "${python_modules[*]}")" 2>/dev/null; then
    echo "installing from PyPI: ${python_packages[*]}"
    python3 -m pip install --quiet "${python_packages[@]}" 2>/dev/null \
        || python3 -m pip install --quiet --break-system-packages "${python_packages[@]}"
fi
