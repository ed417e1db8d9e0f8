#!/usr/bin/env python3
"""The OGC standards' OpenAPI 3.0 schemas as JSON Schema validators, and OGC API – Tiles checked
against its own (Tests/ServerTests/OGCTileEndpointTests.swift).

  oas_schemas.py tiles BASE DIR   fetches the Tiles documents (tile matrix sets, WebMercatorQuad,
                                  a collection's tile sets and tile set, the conformance and the
                                  landing page) and validates each against OGC API – Tiles 1.0's
                                  schemas (DIR/tiles, its bundled OpenAPI's components), plus two
                                  broken copies, which must fail. Prints one line per document:
                                  NAME valid | NAME invalid: REASONS

BASE is the server's /ogc URL. edr_client.py validates EDR with oas_validator too.
Usage: scripts/install-deps.sh --test   (installs jsonschema)
"""

import copy
import json
import os
import sys
import urllib.request


def as_json_schema(node):
    """OpenAPI 3.0's `nullable: true` as JSON Schema's type list; $refs to its components."""
    if isinstance(node, dict):
        node = {k: as_json_schema(v) for k, v in node.items() if k not in ("example", "nullable")}
        if "$ref" in node:
            node["$ref"] = node["$ref"].replace("#/components/schemas/", "#/$defs/")
        return node
    if isinstance(node, list):
        return [as_json_schema(v) for v in node]
    return node


def with_nulls(node):
    if isinstance(node, dict):
        nullable = node.get("nullable") is True and "type" in node
        out = {k: with_nulls(v) for k, v in node.items()}
        if nullable:
            out["type"] = [node["type"], "null"]
        return out
    if isinstance(node, list):
        return [with_nulls(v) for v in node]
    return node


def oas_validator(schemas, schema):
    """A Draft 2020-12 validator of `schema` (which may $ref '#/components/schemas/NAME'), with
    the components as its $defs."""
    import jsonschema
    definitions = as_json_schema(with_nulls(schemas))
    return jsonschema.Draft202012Validator({"$defs": definitions, **as_json_schema(with_nulls(schema))})


def print_verdicts(documents):
    """One line per document, NAME valid | NAME invalid: REASONS, from {NAME: (validator, document)}."""
    for name, (check, document) in documents.items():
        errors = sorted(e.message for e in check.iter_errors(document))
        print(name, "valid" if not errors else "invalid: " + "; ".join(errors))


def fetch(url):
    with urllib.request.urlopen(url) as response:
        return json.load(response)


def tiles(base, directory):
    standard = json.load(open(os.path.join(directory, "tiles", "ogcapi-tiles-1-oas30-schemas.json")))

    def validator(response):
        return oas_validator(standard["schemas"], standard["responses"][response])

    documents = {
        "tileMatrixSets": (validator("TileMatrixSetsList"), fetch(base + "/tileMatrixSets")),
        "WebMercatorQuad": (validator("TileMatrixSet"), fetch(base + "/tileMatrixSets/WebMercatorQuad")),
        "districts.tilesets": (validator("TileSetsList"), fetch(base + "/collections/districts/tiles")),
        "districts.tileset": (validator("TileSet"), fetch(base + "/collections/districts/tiles/WebMercatorQuad")),
        "pens.tileset": (validator("TileSet"), fetch(base + "/collections/pens/tiles/WebMercatorQuad")),
        "conformance": (validator("Conformance"), fetch(base + "/conformance")),
        "landing": (validator("LandingPage"), fetch(base)),
    }
    # Negative controls: a tile set without its tile matrix set's URI, a matrix without its scale.
    broken = copy.deepcopy(documents["districts.tileset"][1])
    del broken["crs"]
    documents["broken-tileset"] = (validator("TileSet"), broken)
    broken = copy.deepcopy(documents["WebMercatorQuad"][1])
    del broken["tileMatrices"][0]["scaleDenominator"]
    documents["broken-matrix"] = (validator("TileMatrixSet"), broken)
    print_verdicts(documents)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "tiles":
        tiles(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
