// The OpenAPI 3.0 document served at /openapi.json, assembled once from the route table: each
// route's operation sits beside its handler (Routes.swift); what they share (parameters,
// schemas, responses) is here. ServerTests checks that the document parses, that its paths and
// methods are exactly the routes, and schemathesis runs it against the server. OpenAPI 3.0
// rather than 3.1 because OGC API – Features' "OpenAPI 3.0" conformance class asks for it: the
// landing page at /ogc links here as its `service-desc`, and the one document describes every
// endpoint, the OGC and OSRM ones too.

enum OpenAPI {
    static let document: String = {
        // Paths in the order of their first route; a path's methods in route order.
        var paths: [(path: String, operations: [String])] = []
        for route in Endpoints.routes {
            let operation = "\"\(route.method.rawValue.lowercased())\": " + route.openAPI
            if let at = paths.firstIndex(where: { $0.path == route.path }) {
                paths[at].operations.append(operation)
            } else {
                paths.append((route.path, [operation]))
            }
        }
        let pathsText = paths.map { "\"\($0.path)\": {\n" + $0.operations.joined(separator: ",\n") + "\n}" }.joined(separator: ",\n")
        return header + "\"paths\": {\n" + pathsText + "\n},\n" + shared
    }()

    /// Everything before the paths.
    private static let header = #"""
{
  "openapi": "3.0.3",
  "info": {
    "title": "Vltava HTTP API",
    "version": "1.0.0",
    "description": "Point lookups, nearest features, walking routes, MBTiles and PMTiles tile sets and the store's layers as vector tiles from one GeoPackage store. Coordinates are WGS 84 longitude/latitude; distances are great-circle metres on a sphere of R = 6,371,008.8 m. Errors are RFC 9457 problem documents (application/problem+json) with a stable `code`. See docs/HTTP_API.md."
  },
"""#

    /// What the operations share, and the document's end.
    private static let shared = #"""
  "components": {
    "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
    "parameters": {
      "layer": {"name": "layer", "in": "path", "required": true, "schema": {"type": "string"}, "example": "districts"},
      "tileset": {"name": "tileset", "in": "path", "required": true, "schema": {"type": "string"}, "example": "zoo_map", "description": "A registered tile set, else a feature layer of the store (districts, parking, pens, …)."},
      "lon": {"name": "lon", "in": "query", "required": true, "schema": {"type": "number", "minimum": -180, "maximum": 180}, "example": 14.4208},
      "lat": {"name": "lat", "in": "query", "required": true, "schema": {"type": "number", "minimum": -90, "maximum": 90}, "example": 50.088},
      "geometry": {"name": "geometry", "in": "query", "schema": {"type": "boolean"}, "description": "true: every geometry; false: none; absent: points only."},
      "tileMatrixSetId": {"name": "tileMatrixSetId", "in": "path", "required": true, "schema": {"type": "string", "enum": ["WebMercatorQuad"]}, "description": "The tile matrix set (404 for any other)."},
      "collection": {"name": "collection", "in": "path", "required": true, "schema": {"type": "string"}, "example": "districts", "description": "A layer of the store."},
      "contentCrs": {"name": "Content-Crs", "in": "header", "schema": {"type": "string"}, "example": "<http://www.opengis.net/def/crs/EPSG/0/5514>", "description": "The CRS of the body's geometries (OGC API – Features Part 2); CRS84 when absent."},
      "f": {"name": "f", "in": "query", "schema": {"type": "string", "enum": ["json", "geojson"]}, "description": "The answer's format: JSON only (406 otherwise); given twice, 400."},
      "osrmProfile": {"name": "profile", "in": "path", "required": true, "schema": {"type": "string", "enum": ["foot", "walking", "walk", "pedestrian", "wheelchair"]}, "description": "foot (walking, walk, pedestrian are the same), or wheelchair: step-free."},
      "osrmCoordinates": {"name": "coordinates", "in": "path", "required": true, "schema": {"type": "string"}, "example": "14.4109,50.1167;14.40519,50.11576", "description": "LON,LAT;LON,LAT…, polyline(…) or polyline6(…); an optional .json suffix."},
      "osrmRadiuses": {"name": "radiuses", "in": "query", "schema": {"type": "string"}, "description": "Per coordinate, separated by ;: metres (at most 5000), unlimited (5000), or empty for the default 500."},
      "osrmHints": {"name": "hints", "in": "query", "schema": {"type": "string"}, "description": "Accepted and not used: every coordinate snaps again."},
      "osrmGenerateHints": {"name": "generate_hints", "in": "query", "schema": {"type": "boolean", "default": true}},
      "osrmSkipWaypoints": {"name": "skip_waypoints", "in": "query", "schema": {"type": "boolean", "default": false}},
      "osrmBearings": {"name": "bearings", "in": "query", "schema": {"type": "string"}, "description": "Not supported (InvalidOptions): paths are walked both ways."},
      "osrmNetwork": {"name": "network", "in": "query", "schema": {"type": "string"}, "description": "Vltava's: the line layer to walk; optional when the store has exactly one."},
      "osrmDeparture": {"name": "departure", "in": "query", "schema": {"type": "string"}, "example": "2026-11-28T13:55:00+01:00", "description": "Vltava's: when the walk starts (ISO 8601, or a local time in Prague); paths with opening_hours are taken only while open. InvalidValue when not a time."}
    },
    "responses": {
      "Problem": {"description": "An RFC 9457 problem.", "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}},
      "QueryProblem": {"description": "An RFC 9457 problem with the position in the query text.", "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}},
      "OSRMError": {"description": "OSRM's error: code (InvalidUrl, InvalidQuery, InvalidOptions, InvalidValue, NoSegment, NoRoute, TooBig) and message, in an RFC 9457 problem.", "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}}
    },
    "schemas": {
      "QueryText": {"type": "string", "minLength": 1, "pattern": "\\S", "description": "One or more statements; text of white space alone is 400 empty_query."},
      "LonLat": {"type": "string", "pattern": "^[-+]?(180(\\.0+)?|(1[0-7][0-9]|[0-9]{1,2})(\\.[0-9]+)?),[-+]?(90(\\.0+)?|[0-8]?[0-9](\\.[0-9]+)?)$", "description": "LON,LAT in degrees: longitude −180 to 180, latitude −90 to 90 (exponents are read too)."},
      "WriteReceipt": {
        "type": "object",
        "required": ["sequence", "changes", "warnings"],
        "properties": {
          "sequence": {"type": "integer", "description": "The store's sequence number after the write."},
          "changes": {"type": "array", "items": {"type": "object", "properties": {"sequence": {"type": "integer"}, "layer": {"type": "string"}, "fid": {"type": "integer", "nullable": true}, "change": {"type": "string", "enum": ["created", "inserted", "replaced", "updated", "deleted"]}, "at": {"type": "string"}}}},
          "warnings": {"type": "array", "items": {"type": "string"}}
        }
      },
      "Problem": {
        "type": "object",
        "required": ["type", "title", "status", "code", "detail"],
        "properties": {
          "type": {"type": "string"}, "title": {"type": "string"}, "status": {"type": "integer"},
          "code": {"type": "string"}, "detail": {"type": "string"},
          "parameter": {"type": "string"}, "line": {"type": "integer"}, "column": {"type": "integer"},
          "length": {"type": "integer"}, "hint": {"type": "string"}
        }
      },
      "FeatureCollection": {
        "type": "object",
        "required": ["type", "features"],
        "properties": {
          "type": {"type": "string", "enum": ["FeatureCollection"]}, "layer": {"type": "string"},
          "query": {"type": "object", "properties": {"lon": {"type": "number"}, "lat": {"type": "number"}}},
          "features": {"type": "array", "items": {"type": "object"}}
        }
      },
      "Link": {
        "type": "object",
        "required": ["href", "rel"],
        "properties": {"href": {"type": "string"}, "rel": {"type": "string"}, "type": {"type": "string"}, "title": {"type": "string"}}
      },
      "LandingPage": {
        "type": "object",
        "required": ["links"],
        "properties": {"title": {"type": "string"}, "description": {"type": "string"}, "links": {"type": "array", "items": {"$ref": "#/components/schemas/Link"}}}
      },
      "Collection": {
        "type": "object",
        "required": ["id", "links"],
        "properties": {
          "id": {"type": "string"}, "title": {"type": "string"}, "description": {"type": "string"},
          "links": {"type": "array", "items": {"$ref": "#/components/schemas/Link"}},
          "extent": {"type": "object", "properties": {
            "spatial": {"type": "object", "properties": {"bbox": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}}, "crs": {"type": "string"}}},
            "temporal": {"type": "object", "properties": {"interval": {"type": "array", "items": {"type": "array", "items": {"type": "string", "format": "date-time", "nullable": true}}}, "trs": {"type": "string"}}}}},
          "itemType": {"type": "string"}, "crs": {"type": "array", "items": {"type": "string"}}
        }
      },
      "Layers": {
        "type": "object",
        "properties": {
          "layers": {"type": "array", "items": {"type": "object", "properties": {
            "name": {"type": "string"}, "kind": {"type": "string", "enum": ["features", "attributes"]},
            "family": {"type": "string", "enum": ["points", "lines", "polygons", "mixed", "table"]},
            "geometry_type": {"type": "string", "nullable": true}, "count": {"type": "integer"},
            "bounds": {"type": "array", "nullable": true, "items": {"type": "number"}},
            "columns": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}, "type": {"type": "string"}}}}
          }}},
          "tilesets": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}, "tilejson": {"type": "string"}}}}
        }
      },
      "Route": {
        "type": "object",
        "properties": {
          "code": {"type": "string", "enum": ["Ok"]},
          "routes": {"type": "array", "items": {"type": "object", "properties": {
            "distance": {"type": "number"}, "duration": {"type": "number"}, "geometry": {"type": "object"},
            "nodes": {"type": "array", "items": {"type": "integer"}}
          }}},
          "waypoints": {"type": "array", "items": {"type": "object", "properties": {
            "location": {"type": "array", "items": {"type": "number"}}, "distance": {"type": "number"}, "name": {"type": "string"}
          }}},
          "departure": {"type": "string", "description": "With departure=: when the walk starts (UTC)."},
          "closed": {"type": "array", "description": "With departure=: the paths kept off, closed when the walk would have reached them.", "items": {"type": "object", "properties": {
            "name": {"type": "string"}, "opening_hours": {"type": "string"}, "reached_at": {"type": "string"}, "opens_at": {"type": "string", "nullable": true}
          }}}
        }
      }
    }
  }
}
"""#
}
