#!/usr/bin/env bash
# Builds the demo GeoPackage from Fixtures/ through the CLI, one `vltava import` per layer.
# Usage: scripts/build-demo-store.sh OUT.gpkg [VLTAVA_BINARY]
# Idempotent: it writes a new file next to OUT and moves it into place only when every import
# succeeded, so a reader of OUT never sees a half-built store.
set -euo pipefail
out=${1:?usage: build-demo-store.sh OUT.gpkg [VLTAVA_BINARY]}
vltava=${2:-.build/release/vltava}
fixtures="$(cd "$(dirname "$0")/.." && pwd)/Fixtures"

tmp="$out.building"
rm -f "$tmp" "$tmp-wal" "$tmp-shm"
mkdir -p "$(dirname "$out")"
import() { "$vltava" import --db "$tmp" "$@"; }

import "$fixtures/prague/districts.wgs84.geojson" --layer districts
import "$fixtures/prague/districts.sjtsk-epsg5514.geojson" --layer districts_sjtsk
import "$fixtures/prague/parking-zones.wgs84.geojson" --layer parking
import "$fixtures/air/stations-prague.csv" --layer stations
# Units: the data's README gives µg/m³ for the pollutants; CO's unit is not stated there, and
# its values (407–618) are urban carbon monoxide in µg/m³ as ČHMÚ reports it. The index is a
# pure number (UCUM's "1").
import "$fixtures/air/observations-2019-04-15-16.csv" --layer observations --time-series-of stations \
    --units 'aqi=1,no2=µg/m³,o3=µg/m³,pm10=µg/m³,pm10_24=µg/m³,pm2_5=µg/m³,so2=µg/m³,co=µg/m³'
import "$fixtures/zoo/pavilions-and-pens.geojson" --layer pavilions --only polygon
import "$fixtures/zoo/pavilions-and-pens.geojson" --layer pens --only point
import "$fixtures/zoo/animals.json" --layer animals
import "$fixtures/zoo/paths-graph.json" --layer paths
import "$fixtures/zoo/zoo-prague-geojson-tiles.mbtiles" --layer zoo_map
# The WMU library's BLE survey as an indoor venue: grid-cell labels (letter = column, number =
# row, cell 1), the first floor; the data set gives no position on the globe.
"$vltava" indoor import --db "$tmp" "$fixtures/indoor/ble-rssi-wmu-labeled.csv" --venue wmu_library \
    --title "Waldo Library, Western Michigan University" --grid letter-column --cell-size 1 --floor 1 --floor-name "first floor"

# With VLTAVA_DEMO_FLAT=1: calib2021's flat (a 9 × 7 m survey with 6 anchors) as a venue on the
# globe, for the map page's indoor view. The data set gives no position on Earth, so it is placed
# inside Pavilon goril (its centre at the pavilion's centroid, the frame's y axis 30° east of
# north), with anchors.csv as the beacons' positions. Off by default: with two venues a locate
# must name its venue, and the demo's one-venue examples (and their tests) leave it out.
if [[ ${VLTAVA_DEMO_FLAT:-} == 1 ]]; then
    "$vltava" indoor import --db "$tmp" "$fixtures/indoor/calib2021/calibration_df.csv" --venue flat \
        --title "calib2021 flat" --floor-name ground --beacon-columns 'rssi_*' --time-unit ns \
        --origin 14.404804,50.11542 --rotation 30 --beacon-positions "$fixtures/indoor/calib2021/anchors.csv"
fi

rm -f "$out-wal" "$out-shm"
mv "$tmp" "$out"
