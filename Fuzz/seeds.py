#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora, Fixtures/fuzz/TARGET/, from the real files in Fixtures/.

    python3 Fuzz/seeds.py

Each seed is a whole small fixture or a small excerpt of one (see Fixtures/README.md), so the
fuzzer starts from inputs that reach deep into each reader; scripts/fuzz.sh fuzzes a copy. The
output is deterministic: rerunning it changes nothing unless the fixtures change.
"""
import gzip
import json
import os
import re
import shutil
import sqlite3
import struct
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(ROOT, "Fixtures")
OUT = os.path.join(FIX, "fuzz")


def write(target, name, data):
    os.makedirs(os.path.join(OUT, target), exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(OUT, target, name), "wb") as f:
        f.write(data)


def query():
    # Every example statement of docs/QUERY_LANGUAGE.md (the ```vq blocks).
    text = open(os.path.join(ROOT, "docs", "QUERY_LANGUAGE.md"), encoding="utf-8").read()
    for i, block in enumerate(re.findall(r"^```vq[^\n]*\n(.*?)\n```", text, re.S | re.M)):
        write("query", f"doc-{i:02d}.vq", block)


def cql2():
    # Filters of every form the reader takes, in both encodings, on the demo's columns.
    texts = ["KOD_MC > 547000", "NAZEV_MC = 'Praha 1' AND KOD_MC <= 539000",
             "NOT (KOD_MC >= 500000 AND KOD_MC < 547000) OR \"NAZEV_MC\" <> 'it''s'",
             "547000 < KOD_MC", "NAZEV_MC NOT IN ('Praha 1', 'Praha 2')", "KOD_MC NOT BETWEEN 538000 AND 5.47e5",
             "classif IS NOT NULL AND owner = 'CHMI'", "name LIKE 'Praha\\_%' OR name NOT LIKE '%(%)'",
             "S_INTERSECTS(geom, POINT(14.4 50.1))", "S_WITHIN(geom, BBOX(14.3, 50.0, 14.5, 50.1))",
             "S_CROSSES(LINESTRING(14.3 50.0, 14.6 50.15), geom) OR S_TOUCHES(geom, MULTIPOLYGON(((14.4 50.07, 14.45 50.07, 14.45 50.09, 14.4 50.07))))",
             "T_DURING(INTERVAL(interval_start, interval_end), INTERVAL('2019-04-15T03:00:00Z', '..'))",
             "interval_start >= TIMESTAMP('2019-04-15T06:00:00Z') AND T_BEFORE(interval_end, DATE('2019-04-16'))"]
    for i, text in enumerate(texts):
        write("cql2", f"text-{i:02d}.cql2", text)
    jsons = [{"op": "and", "args": [{"op": "in", "args": [{"property": "NAZEV_MC"}, ["Praha 1", "Praha 2"]]},
                                    {"op": "between", "args": [{"property": "KOD_MC"}, 500000, 547000]}]},
             {"op": "not", "args": [{"op": "isNull", "args": [{"property": "classif"}]}]},
             {"op": "<", "args": [547000, {"property": "KOD_MC"}]},
             {"op": "s_intersects", "args": [{"property": "geom"}, {"bbox": [14.4, 50.07, 14.45, 50.09]}]},
             {"op": "s_contains", "args": [{"type": "Polygon", "coordinates": [[[14.3, 50.0], [14.6, 50.0], [14.6, 50.2], [14.3, 50.0]]]}, {"property": "geom"}]},
             {"op": "t_intersects", "args": [{"interval": [{"property": "interval_start"}, {"property": "interval_end"}]}, {"timestamp": "2019-04-15T06:00:00Z"}]},
             {"op": "like", "args": [{"property": "name"}, "%hot%"]}]
    for i, value in enumerate(jsons):
        write("cql2", f"json-{i:02d}.json", json.dumps(value, ensure_ascii=False))


def query_budget():
    # Statements that run long enough for a tiny budget to pass inside them, on the fuzz
    # snapshot's layers: feature references (joins), groups and aggregates, nearest and routes.
    statements = [
        "FIND stations ORDER BY code LIMIT 5 RETURN code, name, (districts CONTAINING).NAZEV_MC",
        "FIND pens RETURN name, (pavilions NEAREST).name, (pavilions NEAREST).distance_m",
        "FIND stations GROUP BY (districts CONTAINING).NAZEV_MC RETURN (districts CONTAINING).NAZEV_MC, COUNT(*) ORDER BY COUNT(*) DESC",
        "FIND animals RETURN class, COUNT(*), MIN(name) GROUP BY class HAVING COUNT(*) >= 10 ORDER BY COUNT(*) DESC",
        "FIND stations WHERE MEASURES(no2) RETURN classif, COUNT(*), AVG(MAX(HISTORY(no2, 24 h))) GROUP BY classif",
        "FIND districts RETURN NAZEV_MC, (stations NEAREST).name, (stations NEAREST).distance_m ORDER BY NAZEV_MC",
        "FIND pens NEAREST 5 TO POINT(14.4072 50.1167) RETURN name, (pavilions CONTAINING).name",
        "FIND stations WHERE (districts CONTAINING).NAZEV_MC = 'Praha 10' RETURN code, name",
        "FIND districts RETURN COUNT(*), SUM(area_m2(geometry))",
        "SEARCH 'pa' LIMIT 50",
        "SEARCH 'zirfa pavilon' NEAR POINT(14.4085 50.1170)",
    ]
    for i, statement in enumerate(statements):
        write("query-budget", f"join-{i:02d}.vq", statement)


def mvt():
    # The Mapbox conformance suite's tiles (valid and invalid), all tiny.
    suite = os.path.join(FIX, "mvt-fixtures", "fixtures")
    for case in sorted(os.listdir(suite)):
        path = os.path.join(suite, case, "tile.mvt")
        if os.path.exists(path):
            shutil.copyfile(path, os.path.join(OUT, "mvt", f"mvt-fixtures-{case}.mvt"))
    # Two gzip-compressed MVT tiles of world_cities, as stored.
    db = sqlite3.connect(os.path.join(FIX, "mbtiles", "mbtileserver-world_cities.mbtiles"))
    for z, x, y, data in db.execute("SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles ORDER BY zoom_level, length(tile_data) DESC LIMIT 2"):
        write("mvt", f"world_cities-{z}-{x}-{y}.mvt.gz", data)
    # The zoo's Tilezen layered GeoJSON tile, cut to the first two features of each layer.
    db = sqlite3.connect(os.path.join(FIX, "zoo", "zoo-prague-geojson-tiles.mbtiles"))
    (data,) = db.execute("SELECT tile_data FROM tiles ORDER BY length(tile_data) LIMIT 1").fetchone()
    layers = json.loads(data)
    for layer in layers.values():
        layer["features"] = layer["features"][:2]
    write("mvt", "zoo-geojson-excerpt.json", json.dumps(layers, ensure_ascii=False, separators=(",", ":")))
    # The zoo's smallest TopoJSON tile, whole (its arcs are shared by index).
    db = sqlite3.connect(os.path.join(FIX, "zoo", "zoo-prague-topojson-tiles.mbtiles"))
    (data,) = db.execute("SELECT tile_data FROM tiles ORDER BY length(tile_data) LIMIT 1").fetchone()
    write("mvt", "zoo-topojson.json", data)


def blobs():
    # GeoPackage blobs written by GDAL: the smallest of each geometry type, and Praha 1 in
    # S-JTSK; the WKB target gets the same geometries without the GeoPackage header.
    db = sqlite3.connect(os.path.join(FIX, "gdal", "zoo-places.gdal.gpkg"))
    chosen = {}
    for (geom,) in db.execute("SELECT geom FROM places ORDER BY length(geom)"):
        flags = geom[3]
        envelope = {0: 0, 1: 32, 2: 48, 3: 48, 4: 64}[(flags >> 1) & 7]
        wkb = geom[8 + envelope:]
        kind = struct.unpack("<I" if wkb[0] == 1 else ">I", wkb[1:5])[0]
        chosen.setdefault(kind, (geom, wkb))
    (geom,) = db.execute("SELECT geom FROM districts_sjtsk").fetchone()
    flags = geom[3]
    chosen["sjtsk"] = (geom, geom[8 + {0: 0, 1: 32, 2: 48, 3: 48, 4: 64}[(flags >> 1) & 7]:])
    for kind, (geom, wkb) in chosen.items():
        write("gpkg-blob", f"gdal-{kind}.gpb", geom)
        write("wkb", f"gdal-{kind}.wkb", wkb)


def geojson():
    zoo = json.load(open(os.path.join(FIX, "zoo", "pavilions-and-pens.geojson"), encoding="utf-8"))
    pavilion = next(f for f in zoo["features"] if f["geometry"]["type"] != "Point")
    pen = next(f for f in zoo["features"] if f["geometry"]["type"] == "Point")
    write("geojson", "zoo-collection.geojson", json.dumps({"type": "FeatureCollection", "features": [pavilion, pen]}, ensure_ascii=False))
    write("geojson", "zoo-pen.geojson", json.dumps(pen, ensure_ascii=False))
    write("geojson", "zoo-pavilion-geometry.geojson", json.dumps(pavilion["geometry"]))
    # The old-style `crs` member of the S-JTSK districts, with its smallest district.
    sjtsk = json.load(open(os.path.join(FIX, "prague", "districts.sjtsk-epsg5514.geojson"), encoding="utf-8"))
    smallest = min(sjtsk["features"], key=lambda f: len(json.dumps(f)))
    head = {k: v for k, v in sjtsk.items() if k != "features"}
    write("geojson", "districts-sjtsk-one.geojson", json.dumps({**head, "features": [smallest]}, ensure_ascii=False))
    # Plain JSON the importers read: one animal of the lexicon, one road of the paths graph.
    animals = json.load(open(os.path.join(FIX, "zoo", "animals.json"), encoding="utf-8"))
    write("geojson", "zoo-animal.json", json.dumps(animals[:1], ensure_ascii=False, indent=1))
    paths = json.load(open(os.path.join(FIX, "zoo", "paths-graph.json"), encoding="utf-8"))
    write("geojson", "zoo-road.json", json.dumps({"roads": paths["roads"][:1]}, ensure_ascii=False))


def osm_excerpt():
    """A footway of Andorra and its nodes, from andorra.osm.gz."""
    text = gzip.open(os.path.join(FIX, "osm", "andorra.osm.gz"), "rt", encoding="utf-8").read()
    ways = re.findall(r'  <way [^>]*>\n(?:    <[^\n]*\n)*?  </way>\n', text)
    way = next(w for w in ways if 'k="highway" v="footway"' in w and 4 <= w.count("<nd ") <= 8)
    refs = re.findall(r'<nd ref="(\d+)"', way)
    nodes = {}
    for m in re.finditer(r'  <node id="(\d+)"[^\n]*\n', text):
        if m.group(1) in refs:
            nodes[m.group(1)] = m.group(0)
    head = text[: text.index("  <node ")]
    return head, [nodes[r] for r in refs if r in nodes], way


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def zigzag(n):
    return (n << 1) ^ (n >> 63)


def field(number, wire, payload):
    if wire == 0:
        return varint(number << 3) + varint(payload)
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def packed(values):
    return b"".join(varint(v) for v in values)


def deltas(values):
    previous, out = 0, []
    for v in values:
        out.append(v - previous)
        previous = v
    return out


def pbf_blob(kind, block, compress):
    blob = field(2, 0, len(block)) + field(3, 2, zlib.compress(block, 9)) if compress else field(1, 2, block)
    header = field(1, 2, kind.encode()) + field(3, 0, len(blob))
    return struct.pack(">I", len(header)) + header + blob


def osm():
    head, nodes, way = osm_excerpt()
    write("osm-xml", "andorra-footway.osm", head + "".join(nodes) + way + "</osm>\n")
    write("osm-xml", "andorra-head.osm", head + "</osm>\n")
    # The same footway as PBF, encoded here the way osmium writes it: a header blob, then a data
    # block with a string table, dense nodes (delta-coded, in units of 100 nanodegrees) and the way.
    ids = [int(re.search(r'id="(\d+)"', n).group(1)) for n in nodes]
    lats = [round(float(re.search(r'lat="([-\d.]+)"', n).group(1)) * 1e7) for n in nodes]
    lons = [round(float(re.search(r'lon="([-\d.]+)"', n).group(1)) * 1e7) for n in nodes]
    tags = re.findall(r'<tag k="([^"]*)" v="([^"]*)"', way)
    strings = [""] + sorted({s for kv in tags for s in kv})
    index = {s: i for i, s in enumerate(strings)}
    way_id = int(re.search(r'<way id="(\d+)"', way).group(1))
    refs = [int(r) for r in re.findall(r'<nd ref="(\d+)"', way)]
    header = field(4, 2, b"OsmSchema-V0.6") + field(4, 2, b"DenseNodes")
    table = field(1, 2, b"".join(field(1, 2, s.encode()) for s in strings))
    dense = field(1, 2, packed(zigzag(d) for d in deltas(ids))) + field(8, 2, packed(zigzag(d) for d in deltas(lats))) + field(9, 2, packed(zigzag(d) for d in deltas(lons)))
    way_message = field(1, 0, way_id) + field(2, 2, packed(index[k] for k, _ in tags)) + field(3, 2, packed(index[v] for _, v in tags)) + field(8, 2, packed(zigzag(d) for d in deltas(refs)))
    block = table + field(2, 2, field(2, 2, dense)) + field(2, 2, field(3, 2, way_message)) + field(17, 0, 100)
    write("osm-pbf", "andorra-footway-zlib.osm.pbf", pbf_blob("OSMHeader", header, True) + pbf_blob("OSMData", block, True))
    write("osm-pbf", "andorra-footway-raw.osm.pbf", pbf_blob("OSMHeader", header, False) + pbf_blob("OSMData", block, False))
    # One plain (not dense) node, for the other node encoding.
    plain = field(2, 2, field(1, 2, field(1, 0, zigzag(ids[0])) + field(8, 0, zigzag(lats[0])) + field(9, 0, zigzag(lons[0]))))
    write("osm-pbf", "andorra-node-plain.osm.pbf", pbf_blob("OSMData", table + plain, False))


def mbtiles_meta():
    # Each tile set's metadata as `name=value` lines, and a few of its tile addresses.
    for name in ["mbtiles/mbtileserver-world_cities.mbtiles", "mbtiles/mbtileserver-world_cities_missing_center.mbtiles",
                 "zoo/zoo-prague-geojson-tiles.mbtiles", "mbtiles/mbtileserver-geography-class-png.mbtiles"]:
        db = sqlite3.connect(os.path.join(FIX, name))
        lines = [f"{k}={v}" for k, v in db.execute("SELECT name, value FROM metadata ORDER BY rowid") if "\n" not in str(v)]
        lines += [f"@tile={z}/{x}/{y}" for z, x, y in db.execute("SELECT zoom_level, tile_column, tile_row FROM tiles ORDER BY 1, 2, 3 LIMIT 3")]
        write("mbtiles-meta", os.path.basename(name).replace(".mbtiles", ".meta"), "\n".join(lines) + "\n")


def pm_tile_id(z, x, y):
    # PMTiles v3 tile ids: the tiles of every zoom above, then this zoom's Hilbert curve.
    d, s = 0, (1 << (z - 1)) if z > 0 else 0
    while s > 0:
        rx, ry = (1 if x & s else 0), (1 if y & s else 0)
        d += s * s * ((3 * rx) ^ ry)
        if ry == 0:
            if rx == 1:
                x, y = s - 1 - (x & (s - 1)), s - 1 - (y & (s - 1))
            x, y = y, x
        s >>= 1
    return ((1 << (2 * z)) - 1) // 3 + d


def pm_varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def pm_directory(entries):
    # The spec's columns: count, id deltas, run lengths, lengths, offsets (0: after the last).
    out = pm_varint(len(entries))
    last = 0
    for tile_id, _, _, _ in entries:
        out += pm_varint(tile_id - last)
        last = tile_id
    for _, _, _, run in entries:
        out += pm_varint(run)
    for _, _, length, _ in entries:
        out += pm_varint(length)
    for i, (_, offset, _, _) in enumerate(entries):
        previous = entries[i - 1] if i else None
        out += pm_varint(0 if previous and offset == previous[1] + previous[2] else offset + 1)
    return out


def pm_archive(tiles, metadata, gzipped, tile_type, tile_compression, bounds, leaf_size=None):
    # tiles: (z, x, y, bytes). Identical bytes stored once; consecutive ids of one blob a run.
    compress = (lambda b: gzip.compress(b, mtime=0)) if gzipped else (lambda b: b)
    data, offsets, entries = b"", {}, []
    for tile_id, blob in sorted((pm_tile_id(z, x, y), blob) for z, x, y, blob in tiles):
        if blob not in offsets:
            offsets[blob] = len(data)
            data += blob
        offset = offsets[blob]
        last = entries[-1] if entries else None
        if last and last[1] == offset and last[0] + last[3] == tile_id:
            entries[-1] = (last[0], last[1], last[2], last[3] + 1)
        else:
            entries.append((tile_id, offset, len(blob), 1))
    leaves = b""
    if leaf_size:
        pointers = []
        for i in range(0, len(entries), leaf_size):
            leaf = compress(pm_directory(entries[i:i + leaf_size]))
            pointers.append((entries[i][0], len(leaves), len(leaf), 0))
            leaves += leaf
        root = compress(pm_directory(pointers))
    else:
        root = compress(pm_directory(entries))
    meta = compress(json.dumps(metadata, sort_keys=True).encode())
    zooms = [z for z, _, _, _ in tiles]
    e7 = [round(v * 1e7) for v in bounds]
    offsets_and_lengths = [127, len(root), 127 + len(root), len(meta), 127 + len(root) + len(meta), len(leaves),
                           127 + len(root) + len(meta) + len(leaves), len(data), len(tiles), len(entries), len(offsets)]
    header = struct.pack("<7sB11QBBBBBB4iB2i", b"PMTiles", 3, *offsets_and_lengths, 1, 2 if gzipped else 1, tile_compression, tile_type,
                         min(zooms), max(zooms), *e7, min(zooms), (e7[0] + e7[2]) // 2, (e7[1] + e7[3]) // 2)
    return header + root + meta + leaves + data


def pmtiles():
    # world_cities' z0–2 as an archive, with gzip directories (as writers make them) and with
    # plain ones (so that mutations reach the directory decoder past gzip's checksum).
    db = sqlite3.connect(os.path.join(FIX, "mbtiles", "mbtileserver-world_cities.mbtiles"))
    tiles = [(z, x, (1 << z) - 1 - row, bytes(blob)) for z, x, row, blob in
             db.execute("SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles WHERE zoom_level <= 2")]
    meta = dict(db.execute("SELECT name, value FROM metadata"))
    metadata = {"name": meta["name"], "format": "pbf", "vector_layers": json.loads(meta["json"])["vector_layers"]}
    bounds = [float(v) for v in meta["bounds"].split(",")]
    for gzipped in (True, False):
        write("pmtiles", f"world-cities-z0-2{'' if gzipped else '-plain'}.pmtiles", pm_archive(tiles, metadata, gzipped, 1, 2, bounds))
    # z0–3 with the west half of z3 one blob (a run of 32) and leaves of 16 entries.
    synthetic = [(z, x, y, b"ocean" if z == 3 and x < 4 else f"tile {z}/{x}/{y}".encode())
                 for z in range(4) for x in range(1 << z) for y in range(1 << z)]
    write("pmtiles", "leaves-and-a-run-plain.pmtiles", pm_archive(synthetic, {"name": "pyramid"}, False, 0, 1, [-180, -85, 180, 85], leaf_size=16))


def csv():
    shutil.copyfile(os.path.join(FIX, "air", "stations-prague.csv"), os.path.join(OUT, "csv", "stations-prague.csv"))
    lines = open(os.path.join(FIX, "air", "observations-2019-04-15-16.csv"), "rb").read().split(b"\n")
    write("csv", "observations-first-hour.csv", b"\n".join(lines[:18]) + b"\n")
    # The same hour as a Czech export would write it: semicolons, CRLF, a BOM.
    write("csv", "observations-semicolon-crlf.csv", b"\xef\xbb\xbf" + b"\r\n".join(l.replace(b",", b";") for l in lines[:4]) + b"\r\n")


def survey():
    lines = open(os.path.join(FIX, "indoor", "ble-rssi-wmu-labeled.csv"), "rb").read().split(b"\r\n")
    write("survey", "wmu-first-rows.csv", b"\r\n".join(lines[:12]) + b"\r\n")
    # The same first scans as a long survey: one row per heard reading, a time per reading.
    header = lines[0].split(b",")
    rows = [b"point,time,beacon,rssi"]
    for line in lines[1:12]:
        cells = line.split(b",")
        for beacon, value in zip(header[2:], cells[2:]):
            if value != b"-200":
                rows.append(b",".join([cells[0], cells[1], beacon, value]))
    write("survey", "wmu-first-rows-long.csv", b"\n".join(rows) + b"\n")
    write("survey", "xy-floors.csv", b"x,y,floor,a,b,room\n1.5,2,0,-60,0,hall\n4,-3,1,-55,,lab\n")


def snapshot_load():
    # The stations as points; the smallest district's outer ring, every 8th vertex, as a polygon.
    stations = open(os.path.join(FIX, "air", "stations-prague.csv"), encoding="utf-8").read().splitlines()[1:]
    points = [f"P {c[5]} {c[4]}" for c in (line.split(",") for line in stations)]
    districts = json.load(open(os.path.join(FIX, "prague", "districts.wgs84.geojson"), encoding="utf-8"))["features"]
    smallest = min(districts, key=lambda f: len(json.dumps(f["geometry"])))
    ring = smallest["geometry"]["coordinates"][0]
    if smallest["geometry"]["type"] == "MultiPolygon":
        ring = ring[0]
    area = "A " + " ".join(f"{x} {y}" for x, y in ring[::8])
    write("snapshot-load", "stations-and-a-district.txt", "\n".join(points + [area]) + "\n")
    # Issue 30's coordinates: finite but far out of range, as another tool may write them.
    write("snapshot-load", "huge-finite.txt", "P 1.7e308 1.7e308\nP -1.7e308 -1.7e308\nA -1e308 50.08 1e308 50.08 1e308 50.09\nP 14.42 50.09\n")
    write("snapshot-load", "edges.txt", "P 180 90\nP -180 -90\nL -180 0 180 0\nA 179.9 -90 180 -90 180 90\nP nan 1\nL inf 0 0 0\n")


if __name__ == "__main__":
    shutil.rmtree(OUT, ignore_errors=True)
    for target in ["query", "cql2", "mvt", "gpkg-blob", "wkb", "geojson", "osm-pbf", "osm-xml", "mbtiles-meta", "pmtiles", "csv", "survey", "snapshot-load"]:
        os.makedirs(os.path.join(OUT, target), exist_ok=True)
    query()
    cql2()
    query_budget()
    mvt()
    blobs()
    geojson()
    osm()
    mbtiles_meta()
    pmtiles()
    csv()
    survey()
    snapshot_load()
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(OUT) for f in fs)
    print(f"seeds: {sum(len(fs) for _, _, fs in os.walk(OUT))} files, {total} bytes in {os.path.relpath(OUT, ROOT)}")
