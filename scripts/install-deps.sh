#!/usr/bin/env bash
# Installs the Debian packages (and, for the tests and benchmarks, the PyPI packages) Vltava
# needs, only those that are missing.
# Usage: scripts/install-deps.sh [--test] [--bench]
#   --test  adds what the tests drive: GDAL (with python3-gdal for validate_gpkg.py), tmux, Chromium and its driver with Selenium (the map
#           page's browser test), Leaflet (the map page itself also needs it), and from PyPI the
#           clients of the standard APIs (routingpy's OSRM client, the polyline decoder,
#           openapi-spec-validator), jsonschema (the TileJSON schema test), and PostgreSQL 15 with
#           PostGIS 3 (the PostGIS store's tests start a throwaway cluster on loopback), and
#           schemathesis (scripts/schemathesis.sh: the served OpenAPI document against the server),
#           sseclient-py (the event streams' client), Shapely 2 (Tests/Clients/fences_bruteforce.py)
#           and pmtiles (Tests/Clients/pmtiles_reference.py: the PMTiles archives' reference reader and writer),
#           OWSLib (Tests/Clients/edr_client.py: an OGC API – EDR client), and pygeoapi in a virtualenv
#           of its own (Tests/Clients/pygeoapi_differential.py: the OGC API reference server, whose
#           pinned Flask, SQLAlchemy and Shapely would otherwise replace the system's)
#   --bench adds wrk (Benchmarks/http-load.sh), nginx (Benchmarks/replicas.sh), redis-server
#           (Benchmarks/fences-vs-redis.py: GEOADD, the floor for position updates), PostGIS (Benchmarks/tiles-vs-postgis.sh,
#           Benchmarks/postgis-side-by-side.sh),
#           psycopg 3 (Benchmarks/write-throughput.py: PostGIS taking rows with bound parameters),
#           scikit-learn (Benchmarks/indoor_sklearn.py) and Shapely 2 (../shared/bench/gen_workloads.py,
#           which makes the W1/W3 workloads of Benchmarks/http-load.sh and Benchmarks/budget-probe.sh);
#           not needed by the tests
set -euo pipefail

# libjs-leaflet: the previous map page's Leaflet (Benchmarks/map-speed.py compares with it);
# python3-pip: MapLibre GL JS for the map page comes in PyPI's maplibre wheel (below).
packages=(pkg-config libgeos-dev libproj-dev libsqlite3-dev zlib1g-dev libdeflate-dev libedit-dev libgdal-dev curl python3 python3-pip libjs-leaflet)
# PyPI packages as MODULE:REQUIREMENT, pinned to a major.minor.
python_packages=()
pygeoapi=0
for option in "$@"; do
    case "$option" in
        --test)
            packages+=(gdal-bin python3-gdal tmux python3-pip python3-venv chromium chromium-driver postgresql-15-postgis-3)
            pygeoapi=1
            python_packages+=("routingpy:routingpy==1.3.*" "polyline:polyline==2.0.*" "openapi_spec_validator:openapi-spec-validator==0.7.*"
                              "jsonschema:jsonschema==4.26.*" "selenium:selenium==4.51.*"
                              "schemathesis:schemathesis==4.32.*" "sseclient:sseclient-py==1.8.*" "shapely:shapely==2.1.*"
                              "pmtiles:pmtiles==3.8.*" "owslib:OWSLib==0.35.*") ;;
        --bench)
            packages+=(wrk nginx postgresql-15-postgis-3 python3-pip redis-server)
            python_packages+=("sklearn:scikit-learn==1.7.*" "shapely:shapely==2.1.*" "psycopg:psycopg[binary]==3.3.*") ;;
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

# PyPI packages, only those whose module does not import.
for entry in "${python_packages[@]}"; do
    module=${entry%%:*} requirement=${entry#*:}
    python3 -c "import $module" 2>/dev/null && continue
    echo "installing from PyPI: $requirement"
    # Debian's own python3 refuses pip outside a virtualenv (PEP 668) unless told otherwise.
    python3 -m pip install --quiet "$requirement" 2>/dev/null \
        || python3 -m pip install --quiet --break-system-packages "$requirement"
done

# MapLibre GL JS 5.3.0 for the map page: the JS and CSS inside PyPI's maplibre wheel, served from
# where pip puts them. Only those two files are used, so not the package's Python dependencies
# (--no-deps): the module does not import without them, so look for it without importing.
if ! python3 -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('maplibre') is None)" 2>/dev/null; then
    echo "installing from PyPI: maplibre==0.3.6 (its MapLibre GL JS only)"
    python3 -m pip install --quiet --no-deps "maplibre==0.3.6" 2>/dev/null \
        || python3 -m pip install --quiet --no-deps --break-system-packages "maplibre==0.3.6"
fi

# pygeoapi 0.21 (the last for Python 3.11) with its PostgreSQL provider's drivers, in
# ~/.cache/vltava/pygeoapi (PygeoapiDifferentialTests looks there).
if ((pygeoapi)); then
    venv="${XDG_CACHE_HOME:-$HOME/.cache}/vltava/pygeoapi"
    if ! "$venv/bin/python" -c "import pygeoapi.provider.sql, psycopg2, geoalchemy2, yaml" 2>/dev/null; then
        echo "installing from PyPI into $venv: pygeoapi==0.21.* psycopg2-binary geoalchemy2"
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet "pygeoapi==0.21.*" "psycopg2-binary==2.9.*" "geoalchemy2==0.20.*"
    fi
fi
