#!/usr/bin/env python3
"""OGC API – EDR as clients nobody here wrote read it, for Tests/ServerTests/EDREndpointTests.swift.

  edr_client.py owslib BASE         OWSLib's EnvironmentalDataRetrieval (PyPI OWSLib 0.35) asks a
                                    position, an area and a locations query of the `stations`
                                    collection; prints what it read, as JSON
  edr_client.py validate BASE DIR   fetches the EDR documents (collection, conformance, the four
                                    queries as CoverageJSON and GeoJSON, locations) and validates
                                    each against the standards' own schemas: CoverageJSON's
                                    (DIR/coveragejson, the covjson-validator's JSON schemas) and
                                    EDR 1.2's (DIR/edr, its OpenAPI 3.0 components, with
                                    `nullable` read as JSON Schema's null type). Also two broken
                                    copies, which must fail. Prints one line per document:
                                    NAME valid | NAME invalid: REASONS

BASE is the server's /ogc URL, e.g. http://127.0.0.1:8080/ogc.
Usage: scripts/install-deps.sh --test   (installs OWSLib and jsonschema)
"""

import copy
import json
import os
import sys
import urllib.parse

from oas_schemas import fetch, oas_validator, print_verdicts

POLYGON = "POLYGON((14.38 50.07,14.46 50.07,14.46 50.11,14.38 50.11,14.38 50.07))"


def owslib(base):
    from owslib.ogcapi.edr import EnvironmentalDataRetrieval

    edr = EnvironmentalDataRetrieval(base + "/")
    collection = edr.collection("stations")
    position = edr.query_data("stations", "position", coords="POINT(14.42 50.08)", parameter_names=["no2"],
                              datetime_="2019-04-15T10:00:00Z/2019-04-15T12:00:00Z")
    area = edr.query_data("stations", "area", coords=POLYGON, parameter_names=["pm10"], datetime_="2019-04-15T12:00:00Z")
    location = edr.query_data("stations", "locations/ALEGA", parameter_names=["aqi"],
                              datetime_="2019-04-15T00:00:00Z/2019-04-15T02:00:00Z")

    def series(coverage, name):
        axes = coverage["domain"]["axes"]
        return {"x": axes["x"]["values"][0], "y": axes["y"]["values"][0], "t": axes["t"]["values"],
                "values": coverage["ranges"][name]["values"]}

    print(json.dumps({
        "queries": sorted(collection["data_queries"]),
        "no2_unit": collection["parameter_names"]["no2"]["unit"]["symbol"],
        "position": [series(c, "no2") for c in position["coverages"]],
        "area": [series(c, "pm10") for c in area["coverages"]],
        "location": series(location, "aqi"),
    }, sort_keys=True))


def validate(base, directory):
    import jsonschema
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    # CoverageJSON: the validator's schemas, by their $id.
    registry = Registry()
    folder = os.path.join(directory, "coveragejson")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json"):
            schema = json.load(open(os.path.join(folder, name)))
            registry = registry.with_resource(schema["$id"], Resource.from_contents(schema, default_specification=DRAFT202012))
    coveragejson = jsonschema.Draft202012Validator({"$ref": "/schemas/coveragejson"}, registry=registry)

    edr = json.load(open(os.path.join(directory, "edr", "edr-1.2-oas30-schemas.json")))["schemas"]

    def edr_validator(name):
        return oas_validator(edr, {"$ref": "#/components/schemas/" + name})

    collection = base + "/collections/stations"
    window = "&datetime=2019-04-15T10:00:00Z/2019-04-15T12:00:00Z"
    documents = {
        "collection": (edr_validator("collection"), fetch(collection)),
        "conformance": (edr_validator("confClasses"), fetch(base + "/conformance")),
        "position.covjson": (coveragejson, fetch(collection + "/position?coords=POINT(14.42%2050.08)" + window)),
        "position.geojson": (edr_validator("edrFeatureCollectionGeoJSON"), fetch(collection + "/position?f=GeoJSON&coords=POINT(14.42%2050.08)" + window)),
        "radius.covjson": (coveragejson, fetch(collection + "/radius?coords=POINT(14.42%2050.08)&within=3&within-units=km" + window)),
        "area.covjson": (coveragejson, fetch(collection + "/area?coords=" + urllib.parse.quote(POLYGON) + window)),
        "location.covjson": (coveragejson, fetch(collection + "/locations/ALEGA?parameter-name=aqi,no2" + window)),
        "locations.geojson": (edr_validator("edrFeatureCollectionGeoJSON"), fetch(collection + "/locations")),
    }
    # Negative controls: a coverage without its domain, a collection without data_queries.
    broken = copy.deepcopy(documents["location.covjson"][1])
    del broken["domain"]
    documents["broken-coverage"] = (coveragejson, broken)
    broken = copy.deepcopy(documents["collection"][1])
    del broken["data_queries"]
    documents["broken-collection"] = (edr_validator("collection"), broken)
    print_verdicts(documents)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "owslib":
        owslib(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "validate":
        validate(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
