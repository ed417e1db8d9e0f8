#!/usr/bin/env python3
"""Vltava against pygeoapi, the OGC API reference implementation, on the same PostGIS tables.

pygeoapi (PyPI, its PostgreSQL provider: SQLAlchemy + GeoAlchemy2, filters through pygeofilter)
serves the districts, stations and parking that `vltava push` wrote into a PostgreSQL database;
a `vltava serve --db` on the same database answers the same requests. For each CQL2 filter and
each CRS request both give the features, and this script compares them:

- filters: the same feature ids. pygeoapi's GET `filter` is ECQL (pygeofilter's parser), so the
  text filters are those ECQL and CQL2 spell alike; every filter also goes as CQL2 JSON, which
  pygeoapi takes as the request body. The spatial functions go as CQL2 JSON only (ECQL spells
  them INTERSECTS, CQL2 S_INTERSECTS).
- CRS (`crs=EPSG:5514`, `crs=EPSG:4326`, `bbox-crs`): the same ids, every vertex within the
  tolerance (both run PROJ; pygeoapi through pyproj).

A third reference settles each difference: PostGIS itself, asked in SQL written here from the
CQL2 JSON (ST_Intersects … with bound parameters; a box in another CRS through ST_Transform).
Vltava must agree with PostGIS everywhere; where pygeoapi does not, the difference is recorded
as pygeoapi's, with what PostGIS says.

Runs pygeoapi in-process through Flask's test client (no port of its own). Prints one JSON
object: the counts compared, the largest vertex difference, pygeoapi's refusals and differences,
and Vltava's differences from PostGIS (none expected). Exits 1 when Vltava differs.

Usage: pygeoapi_differential.py --db postgresql://user[:password]@host:port/db --vltava http://127.0.0.1:PORT
Runs under the virtualenv scripts/install-deps.sh --test makes (pygeoapi needs its own
dependencies' versions): ~/.cache/vltava/pygeoapi/bin/python.
"""

import argparse
import json
import math
import os
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request

SJTSK = "http://www.opengis.net/def/crs/EPSG/0/5514"
WGS84 = "http://www.opengis.net/def/crs/EPSG/0/4326"
CRS84 = "http://www.opengis.net/def/crs/OGC/1.3/CRS84"

# (collection, ECQL = CQL2 text or None, CQL2 JSON)
FILTERS = [
    ("districts", "KOD_MC > 547000", {"op": ">", "args": [{"property": "KOD_MC"}, 547000]}),
    ("districts", "NAZEV_MC = 'Praha 1'", {"op": "=", "args": [{"property": "NAZEV_MC"}, "Praha 1"]}),
    ("districts", "NAZEV_MC <> 'Praha 1' AND KOD_MC <= 539000",
     {"op": "and", "args": [{"op": "<>", "args": [{"property": "NAZEV_MC"}, "Praha 1"]}, {"op": "<=", "args": [{"property": "KOD_MC"}, 539000]}]}),
    ("districts", "KOD_MC < 539000 OR KOD_MC > 547300",
     {"op": "or", "args": [{"op": "<", "args": [{"property": "KOD_MC"}, 539000]}, {"op": ">", "args": [{"property": "KOD_MC"}, 547300]}]}),
    ("districts", "NOT (KOD_MC >= 500000 AND KOD_MC < 547000)",
     {"op": "not", "args": [{"op": "and", "args": [{"op": ">=", "args": [{"property": "KOD_MC"}, 500000]}, {"op": "<", "args": [{"property": "KOD_MC"}, 547000]}]}]}),
    ("districts", "NAZEV_MC IN ('Praha 1', 'Praha 2', 'Praha-Troja')",
     {"op": "in", "args": [{"property": "NAZEV_MC"}, ["Praha 1", "Praha 2", "Praha-Troja"]]}),
    ("districts", "KOD_MC BETWEEN 538000 AND 539500", {"op": "between", "args": [{"property": "KOD_MC"}, 538000, 539500]}),
    ("districts", "NAZEV_MC LIKE 'Praha 1%'", {"op": "like", "args": [{"property": "NAZEV_MC"}, "Praha 1%"]}),
    ("districts", "NAZEV_MC LIKE 'Praha-_e%'", {"op": "like", "args": [{"property": "NAZEV_MC"}, "Praha-_e%"]}),
    ("stations", "classif = 'urban' AND owner = 'CHMI'",
     {"op": "and", "args": [{"op": "=", "args": [{"property": "classif"}, "urban"]}, {"op": "=", "args": [{"property": "owner"}, "CHMI"]}]}),
    ("stations", "name LIKE '%(%)'", {"op": "like", "args": [{"property": "name"}, "%(%)"]}),
    ("parking", "CATEGORY = 'VIS' AND NOT (OBJECTID < 100)",
     {"op": "and", "args": [{"op": "=", "args": [{"property": "CATEGORY"}, "VIS"]}, {"op": "not", "args": [{"op": "<", "args": [{"property": "OBJECTID"}, 100]}]}]}),
    ("parking", "CODE IS NULL", {"op": "isNull", "args": [{"property": "CODE"}]}),
    # The spatial functions (CQL2 JSON only).
    ("districts", None, {"op": "s_intersects", "args": [{"property": "geom"}, {"type": "Point", "coordinates": [14.4208, 50.0875]}]}),
    ("districts", None, {"op": "s_intersects", "args": [{"property": "geom"}, {"bbox": [14.40, 50.07, 14.45, 50.09]}]}),
    ("districts", None, {"op": "s_within", "args": [{"property": "geom"}, {"bbox": [14.3, 50.0, 14.5, 50.1]}]}),
    ("districts", None, {"op": "s_crosses", "args": [{"property": "geom"}, {"type": "LineString", "coordinates": [[14.3, 50.0], [14.6, 50.15]]}]}),
    ("districts", None, {"op": "s_touches", "args": [{"property": "geom"},
                                                      {"type": "Polygon", "coordinates": [[[14.40, 50.07], [14.45, 50.07], [14.45, 50.09], [14.40, 50.09], [14.40, 50.07]]]}]}),
    ("districts", None, {"op": "s_disjoint", "args": [{"property": "geom"}, {"bbox": [14.40, 50.07, 14.45, 50.09]}]}),
    ("parking", None, {"op": "s_overlaps", "args": [{"property": "geom"}, {"bbox": [14.40, 50.07, 14.45, 50.09]}]}),
    ("parking", None, {"op": "s_contains", "args": [{"property": "geom"}, {"type": "Point", "coordinates": [14.4315, 50.0780]}]}),
    ("parking", None, {"op": "and", "args": [{"op": "s_intersects", "args": [{"property": "geom"}, {"bbox": [14.40, 50.07, 14.45, 50.09]}]},
                                              {"op": "like", "args": [{"property": "CATEGORY"}, "V_S"]}]}),
    ("stations", None, {"op": "s_within", "args": [{"property": "geom"}, {"bbox": [14.3, 50.0, 14.5, 50.1]}]}),
]

# (collection, query parameters): the same features in another CRS.
CRS_REQUESTS = [
    ("districts", {"crs": SJTSK}),
    ("stations", {"crs": SJTSK}),
    ("stations", {"crs": WGS84}),
    ("parking", {"crs": SJTSK, "bbox": "-743000,-1045000,-740000,-1042000", "bbox-crs": SJTSK}),
    ("stations", {"bbox": "50.0,14.3,50.1,14.5", "bbox-crs": WGS84}),
]


def pygeoapi_client(db):
    """pygeoapi's Flask app over the database, as a test client."""
    url = urllib.parse.urlparse(db)
    folder = tempfile.mkdtemp(prefix="pygeoapi-")
    connection = {"host": url.hostname, "port": url.port or 5432, "dbname": url.path.lstrip("/"),
                  "user": urllib.parse.unquote(url.username or ""), "password": urllib.parse.unquote(url.password or ""),
                  "search_path": ["public"]}
    resources = {}
    for table in ["districts", "stations", "parking"]:
        resources[table] = {
            "type": "collection", "title": table, "description": table, "keywords": [table],
            "extents": {"spatial": {"bbox": [14.2, 49.9, 14.8, 50.2], "crs": CRS84}},
            "links": [],
            "providers": [{"type": "feature", "name": "PostgreSQL", "data": connection, "id_field": "fid", "table": table,
                           "geom_field": "geom", "storage_crs": CRS84, "crs": [CRS84, WGS84, SJTSK]}],
        }
    config = {
        "server": {"bind": {"host": "127.0.0.1", "port": 5000}, "url": "http://127.0.0.1:5000", "mimetype": "application/json; charset=UTF-8",
                   "encoding": "utf-8", "language": "en-US", "limits": {"default_items": 10000, "max_items": 10000},
                   "map": {"url": "https://tile.openstreetmap.org/{z}/{x}/{y}.png", "attribution": "OSM"}},
        "logging": {"level": "ERROR"},
        "metadata": {"identification": {"title": "differential", "description": "differential", "keywords": ["x"], "keywords_type": "theme",
                                        "terms_of_service": "none", "url": "http://127.0.0.1"},
                     "license": {"name": "CC-BY 4.0", "url": "https://creativecommons.org/licenses/by/4.0/"},
                     "provider": {"name": "x", "url": "http://127.0.0.1"}, "contact": {"name": "x", "url": "http://127.0.0.1", "email": "x@example.org"}},
        "resources": resources,
    }
    import yaml
    config_path = os.path.join(folder, "config.yml")
    openapi_path = os.path.join(folder, "openapi.yml")
    with open(config_path, "w") as f:
        yaml.safe_dump(config, f)
    os.environ["PYGEOAPI_CONFIG"] = config_path
    os.environ["PYGEOAPI_OPENAPI"] = openapi_path
    from pygeoapi.openapi import get_oas
    from pygeoapi.util import yaml_load
    with open(config_path) as f:
        document = get_oas(yaml_load(f))
    with open(openapi_path, "w") as f:
        yaml.safe_dump(json.loads(json.dumps(document, default=str)), f)
    from pygeoapi.flask_app import APP
    return APP.test_client()


def features_of(answer, who, what):
    if answer.get("type") != "FeatureCollection":
        raise SystemExit(f"{who} did not answer {what} with features: {json.dumps(answer)[:400]}")
    return {int(f["id"]): f for f in answer["features"]}


def vltava(base, collection, parameters):
    query = urllib.parse.urlencode({"limit": 10000, **parameters})
    try:
        with urllib.request.urlopen(f"{base}/ogc/collections/{collection}/items?{query}", timeout=60) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        raise SystemExit(f"Vltava answered {error.code} to {collection} {parameters}: {error.read()[:400]!r}")


def pygeoapi(client, collection, parameters, body=None):
    query = urllib.parse.urlencode({"f": "json", "limit": 10000, **parameters})
    answer = client.get(f"/collections/{collection}/items?{query}", data=body,
                        headers={"Content-Type": "application/query-cql-json"} if body else {})
    try:
        document = json.loads(answer.get_data(as_text=True))
    except ValueError:
        document = None
    return document if isinstance(document, dict) else {"description": f"{answer.status}: {answer.get_data(as_text=True)[:200]}"}


RELATIONS = {"s_intersects": "ST_Intersects", "s_disjoint": "ST_Disjoint", "s_contains": "ST_Contains", "s_within": "ST_Within",
             "s_equals": "ST_Equals", "s_touches": "ST_Touches", "s_crosses": "ST_Crosses", "s_overlaps": "ST_Overlaps"}
COMPARISONS = {"=": "=", "<>": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def sql_of(node, parameters):
    """CQL2 JSON as a PostgreSQL condition with %s parameters (the forms FILTERS uses)."""
    op, args = node["op"].lower(), node["args"]

    def value(arg):
        if isinstance(arg, dict) and "property" in arg:
            return "t." + '"' + arg["property"].replace('"', '""') + '"'
        parameters.append(arg)
        return "%s"

    if op in ("and", "or"):
        return "(" + f" {op.upper()} ".join(sql_of(a, parameters) for a in args) + ")"
    if op == "not":
        return f"(NOT {sql_of(args[0], parameters)})"
    if op in COMPARISONS:
        return f"COALESCE({value(args[0])} {COMPARISONS[op]} {value(args[1])}, false)"
    if op == "like":
        return f"COALESCE({value(args[0])} LIKE {value(args[1])}, false)"
    if op == "in":
        left = value(args[0])
        return "(" + " OR ".join(f"COALESCE({left} = {value(v)}, false)" for v in args[1]) + ")"
    if op == "between":
        left = value(args[0])
        return f"COALESCE({left} BETWEEN {value(args[1])} AND {value(args[2])}, false)"
    if op == "isnull":
        return f"({value(args[0])} IS NULL)"
    if op in RELATIONS:
        shape = args[1]
        if "bbox" in shape:
            parameters.extend(shape["bbox"])
            other = "ST_MakeEnvelope(%s, %s, %s, %s, 4326)"
        else:
            parameters.append(json.dumps(shape))
            other = "ST_SetSRID(ST_GeomFromGeoJSON(%s), 4326)"
        return f"COALESCE({RELATIONS[op]}(t.geom, {other}), false)"
    raise ValueError(f"no SQL for {op}")


def postgis_fids(connection, table, condition, parameters):
    with connection.cursor() as cursor:
        cursor.execute(f'SELECT t.fid FROM "{table}" AS t WHERE {condition} ORDER BY t.fid', parameters)
        return {row[0] for row in cursor.fetchall()}


def postgis_box(connection, table, parameters):
    """The features whose geometry meets a bbox given in bbox-crs, exactly, in that CRS."""
    box = [float(v) for v in parameters["bbox"].split(",")]
    crs = parameters.get("bbox-crs", CRS84)
    if crs == SJTSK:
        return postgis_fids(connection, table, "ST_Intersects(ST_Transform(t.geom, 5514), ST_MakeEnvelope(%s, %s, %s, %s, 5514))", box)
    if crs == WGS84:  # latitude first
        box = [box[1], box[0], box[3], box[2]]
    return postgis_fids(connection, table, "ST_Intersects(t.geom, ST_MakeEnvelope(%s, %s, %s, %s, 4326))", box)


def positions(geometry):
    """Every vertex of a GeoJSON geometry, in order."""
    def walk(c):
        if isinstance(c[0], (int, float)):
            yield c
        else:
            for part in c:
                yield from walk(part)
    return list(walk(geometry["coordinates"])) if geometry else []


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", required=True)
    parser.add_argument("--vltava", required=True)
    parser.add_argument("--tolerance", type=float, default=0.001, help="metres (S-JTSK) or 1e-8 degrees per metre")
    args = parser.parse_args()
    client = pygeoapi_client(args.db)
    import psycopg2
    connection = psycopg2.connect(args.db)
    report = {"filters": 0, "filter_features": 0, "pygeoapi_agreed": 0, "crs_requests": 0, "vertices": 0, "max_difference": 0.0,
              "vltava_differences": [], "pygeoapi_differences": [], "pygeoapi_refused": []}

    def settle(what, ours, theirs, exact):
        """Vltava against PostGIS (must agree), pygeoapi against PostGIS (recorded)."""
        if set(ours) != exact:
            report["vltava_differences"].append({**what, "only_vltava": sorted(set(ours) - exact), "only_postgis": sorted(exact - set(ours))})
        if set(theirs) == exact:
            report["pygeoapi_agreed"] += 1
        else:
            report["pygeoapi_differences"].append({**what, "only_pygeoapi": sorted(set(theirs) - exact), "only_postgis": sorted(exact - set(theirs))})

    for collection, text, cql2_json in FILTERS:
        compared = []
        requests = [("cql2-json", json.dumps(cql2_json), {"filter-lang": "cql2-json", "filter": json.dumps(cql2_json)}, {}, json.dumps(cql2_json))]
        if text is not None:
            requests.append(("cql2-text", text, {"filter": text}, {"filter": text}, None))
        for language, filter_, ours_parameters, their_parameters, body in requests:
            ours = features_of(vltava(args.vltava, collection, ours_parameters), "Vltava", filter_)
            answer = pygeoapi(client, collection, their_parameters, body=body)
            if answer.get("type") != "FeatureCollection":
                # Recorded, not compared: what pygeoapi's parsers (pygeofilter) do not take.
                report["pygeoapi_refused"].append({"collection": collection, language: filter_, "answer": answer.get("description")})
            else:
                compared.append((language, filter_, ours, features_of(answer, "pygeoapi", filter_)))
        parameters = []
        condition = sql_of(cql2_json, parameters)
        exact = postgis_fids(connection, collection, condition, parameters)
        for language, filter_, a, b in compared:
            report["filters"] += 1
            report["filter_features"] += len(a)
            settle({"collection": collection, language: filter_}, a, b, exact)

    for collection, parameters in CRS_REQUESTS:
        ours = features_of(vltava(args.vltava, collection, parameters), "Vltava", parameters)
        theirs = features_of(pygeoapi(client, collection, parameters), "pygeoapi", parameters)
        report["crs_requests"] += 1
        exact = postgis_box(connection, collection, parameters) if "bbox" in parameters else postgis_fids(connection, collection, "true", [])
        settle({"collection": collection, "parameters": parameters}, ours, theirs, exact)
        if set(ours) != set(theirs):
            continue
        # Degrees for EPSG:4326 (lat, lon), metres for S-JTSK: the difference in metres.
        scale = 1.0 if parameters.get("crs") == SJTSK else 111_000.0
        for fid, feature in ours.items():
            a, b = positions(feature["geometry"]), positions(theirs[fid]["geometry"])
            if len(a) != len(b):
                report["vltava_differences"].append({"collection": collection, "parameters": parameters, "fid": fid, "vertices": [len(a), len(b)]})
                continue
            for p, q in zip(a, b):
                report["vertices"] += 1
                d = math.hypot(p[0] - q[0], p[1] - q[1]) * scale
                report["max_difference"] = max(report["max_difference"], d)
                if d > args.tolerance:
                    report["vltava_differences"].append({"collection": collection, "parameters": parameters, "fid": fid, "vltava": p, "pygeoapi": q})
                    break
    print(json.dumps(report))
    return 0 if not report["vltava_differences"] else 1


if __name__ == "__main__":
    sys.exit(main())
