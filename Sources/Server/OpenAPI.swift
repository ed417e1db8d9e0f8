// The OpenAPI 3.1 document served at /openapi.json. Kept as text in the source (no resource
// bundle to locate at run time); ServerTests checks that its paths and methods are exactly the
// server's route table, and that it parses.

enum OpenAPI {
    static let document = #"""
{
  "openapi": "3.1.0",
  "info": {
    "title": "Vltava HTTP API",
    "version": "1.0.0",
    "description": "Point lookups, nearest features, walking routes and MBTiles vector tiles from one GeoPackage store. Coordinates are WGS 84 longitude/latitude; distances are great-circle metres on a sphere of R = 6,371,008.8 m. Errors are RFC 9457 problem documents (application/problem+json) with a stable `code`. See docs/HTTP_API.md."
  },
  "paths": {
    "/v1/query": {
      "post": {
        "summary": "Run query-language statements",
        "parameters": [
          {"name": "format", "in": "query", "schema": {"type": "string", "enum": ["json", "geojson"]}, "description": "Answer format; default from the Accept header (application/geo+json picks geojson), else json."}
        ],
        "requestBody": {
          "required": true,
          "content": {
            "text/plain": {"schema": {"type": "string"}, "example": "FIND districts CONTAINING POINT(14.4208 50.0880)"},
            "application/json": {"schema": {"type": "object", "required": ["query"], "properties": {"query": {"type": "string"}}}}
          }
        },
        "responses": {
          "200": {"description": "One statement: its result; several: an array of results.", "content": {"application/json": {"schema": {}}, "application/geo+json": {"schema": {}}}},
          "400": {"$ref": "#/components/responses/QueryProblem"},
          "404": {"$ref": "#/components/responses/QueryProblem"},
          "408": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/QueryProblem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/layers": {
      "get": {
        "summary": "The layers and tile sets of the store",
        "responses": {
          "200": {"description": "Layers with kind, family, count, bounds and columns; tile sets with their TileJSON URL.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Layers"}}}},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/layers/{layer}/containing": {
      "get": {
        "summary": "Features of a polygon layer that contain a point, smallest first",
        "parameters": [
          {"$ref": "#/components/parameters/layer"},
          {"$ref": "#/components/parameters/lon"},
          {"$ref": "#/components/parameters/lat"},
          {"$ref": "#/components/parameters/geometry"}
        ],
        "responses": {
          "200": {"description": "A GeoJSON FeatureCollection.", "content": {"application/geo+json": {"schema": {"$ref": "#/components/schemas/FeatureCollection"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/layers/{layer}/nearest": {
      "get": {
        "summary": "The k features nearest to a point, nearest first",
        "parameters": [
          {"$ref": "#/components/parameters/layer"},
          {"$ref": "#/components/parameters/lon"},
          {"$ref": "#/components/parameters/lat"},
          {"name": "k", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 1}},
          {"name": "within_m", "in": "query", "schema": {"type": "number", "minimum": 0}, "description": "Only features within this many metres."},
          {"name": "where", "in": "query", "schema": {"type": "string"}, "example": "no2", "description": "Comma-separated time-series columns: only features whose time series measures all of them."},
          {"name": "attr", "in": "query", "style": "deepObject", "explode": true, "schema": {"type": "object", "additionalProperties": {"type": "string"}}, "description": "attr.NAME=value: only features whose attribute NAME equals value."},
          {"$ref": "#/components/parameters/geometry"}
        ],
        "responses": {
          "200": {"description": "A GeoJSON FeatureCollection; each Feature has distance_m, and latest/observed_until when the layer has a time series.", "content": {"application/geo+json": {"schema": {"$ref": "#/components/schemas/FeatureCollection"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/route": {
      "get": {
        "summary": "A walking route between two points, in OSRM's shape",
        "parameters": [
          {"name": "from", "in": "query", "required": true, "schema": {"type": "string"}, "example": "14.4109,50.1167", "description": "LON,LAT"},
          {"name": "to", "in": "query", "required": true, "schema": {"type": "string"}, "example": "14.40519,50.11576", "description": "LON,LAT"},
          {"name": "network", "in": "query", "schema": {"type": "string"}, "description": "A line layer; optional when the store has exactly one."},
          {"name": "profile", "in": "query", "schema": {"type": "string", "enum": ["foot", "wheelchair"], "default": "foot"}, "description": "foot: every path, 5 km/h. wheelchair: step-free (never a path tagged steps), 4 km/h; 422 NoRoute when only steps connect the points."},
          {"name": "max_snap_m", "in": "query", "schema": {"type": "number", "exclusiveMinimum": 0, "maximum": 5000, "default": 500}}
        ],
        "responses": {
          "200": {"description": "code Ok, routes[0] with distance (m), duration (s), geometry (GeoJSON LineString), waypoints with their snap distance.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Route"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/here": {
      "get": {
        "summary": "Everything about a point: containing features of every polygon layer, the nearest station with its latest values, inside the mapped area or not",
        "parameters": [
          {"$ref": "#/components/parameters/lon"},
          {"$ref": "#/components/parameters/lat"},
          {"name": "area", "in": "query", "schema": {"type": "string"}, "description": "The layer that defines the mapped area; default --area-layer, else the polygon layer with the largest extent."}
        ],
        "responses": {
          "200": {"description": "query, area, containing, nearest_station.", "content": {"application/json": {"schema": {"type": "object"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/air": {
      "get": {
        "summary": "The air where a point is: per pollutant the nearest station that measures it with its latest value, the index of the nearest station that has one, the district, and the data's age",
        "parameters": [
          {"$ref": "#/components/parameters/lon"},
          {"$ref": "#/components/parameters/lat"}
        ],
        "responses": {
          "200": {"description": "query, district, index, pollutants, observed_until, age_s.", "content": {"application/json": {"schema": {"type": "object"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/schedule/check": {
      "post": {
        "summary": "Whether a plan of events leaves enough time to walk from each event to the next",
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {"schema": {"type": "object", "required": ["events"], "properties": {
              "network": {"type": "string"},
              "speed_kmh": {"type": "number"},
              "events": {"type": "array", "minItems": 2, "maxItems": 20, "items": {"type": "object", "required": ["place", "start", "end"], "properties": {
                "name": {"type": "string"}, "place": {"type": "string", "description": "POINT(lon lat), or a query-language target such as pavilions WHERE name = 'Pavilon goril'"},
                "start": {"type": "string", "format": "date-time"}, "end": {"type": "string", "format": "date-time"}}}}}}}
          }
        },
        "responses": {
          "200": {"description": "feasible, and per leg the walk (m, min), the gap between the events and the slack (min).", "content": {"application/json": {"schema": {"type": "object"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/locate": {
      "post": {
        "summary": "Where am I inside a venue: a beacon scan located by its fingerprints (kNN in signal space)",
        "parameters": [
          {"name": "venue", "in": "query", "schema": {"type": "string"}, "example": "wmu_library", "description": "The venue; optional when the store has exactly one."},
          {"name": "k", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 3}, "description": "How many nearest fingerprints the estimate uses."},
          {"name": "method", "in": "query", "schema": {"type": "string", "enum": ["knn", "wknn"], "default": "wknn"}, "description": "knn: mean of the neighbours' points; wknn: weighted by 1/signal distance."},
          {"name": "fingerprints", "in": "query", "schema": {"type": "string", "enum": ["scans", "mean", "median"], "default": "scans"}, "description": "Every survey scan, or one per reference point (mean or median per beacon)."},
          {"name": "geometry", "in": "query", "schema": {"type": "boolean", "default": false}, "description": "true: answer a GeoJSON Feature (a Point when the floor is georeferenced)."}
        ],
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {"schema": {"type": "object", "additionalProperties": {"type": "number", "minimum": -200, "maximum": 0}}, "example": {"b3001": -78, "b3006": -77}}
          }
        },
        "responses": {
          "200": {"description": "venue, floor, floor_name, x, y (the floor's frame), lon/lat (null unless georeferenced), point (nearest reference point), spread (error estimate), method, k, fingerprints, neighbours (point, floor, x, y, signal_distance in dB, weight), ignored_beacons.", "content": {"application/json": {"schema": {"type": "object"}}, "application/geo+json": {"schema": {"type": "object"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "408": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/tiles/{tileset}.json": {
      "get": {
        "summary": "TileJSON 3.0.0 of a tile set",
        "parameters": [{"$ref": "#/components/parameters/tileset"}],
        "responses": {
          "200": {"description": "TileJSON whose tiles URL points at this server.", "content": {"application/json": {"schema": {"type": "object"}}}},
          "404": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/tiles/{tileset}/{z}/{x}/{y}": {
      "get": {
        "summary": "One tile, XYZ addressing, as stored",
        "parameters": [
          {"$ref": "#/components/parameters/tileset"},
          {"name": "z", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 0, "maximum": 30}},
          {"name": "x", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 0}},
          {"name": "y", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 0}, "description": "XYZ row (0 at the north); the TMS flip of MBTiles is done by the server."},
          {"name": "If-None-Match", "in": "header", "required": false, "schema": {"type": "string"}, "description": "ETags the client holds; a match gives 304."}
        ],
        "responses": {
          "200": {"description": "The tile's bytes; Content-Type and Content-Encoding are read from the bytes. A weak ETag comes with it.", "content": {"application/vnd.mapbox-vector-tile": {}, "application/geo+json": {}, "image/png": {}}},
          "304": {"description": "Not modified: If-None-Match holds the tile's ETag (or *)."},
          "400": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/admin/reload": {
      "post": {
        "summary": "Reload the snapshot from the store",
        "description": "Disabled (404 admin_disabled) unless the server has an admin token; then requires Authorization: Bearer TOKEN.",
        "security": [{"bearer": []}],
        "responses": {
          "200": {"description": "status reloaded, loaded_at, load_seconds, layers, warnings (features left out; the log names them).", "content": {"application/json": {"schema": {"type": "object"}}}},
          "401": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "500": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/healthz": {
      "get": {
        "summary": "Health: 200 once the snapshot is loaded",
        "responses": {
          "200": {"description": "status ok, loaded_at, load_seconds, layers, tilesets, warnings (features left out at load; the log names them).", "content": {"application/json": {"schema": {"type": "object"}}}},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/metrics": {
      "get": {
        "summary": "Prometheus text format: requests and latency histograms per route, reloads",
        "responses": {"200": {"description": "Metrics.", "content": {"text/plain": {"schema": {"type": "string"}}}}}
      }
    },
    "/openapi.json": {
      "get": {
        "summary": "This document",
        "responses": {"200": {"description": "OpenAPI 3.1.", "content": {"application/json": {"schema": {"type": "object"}}}}}
      }
    }
  },
  "components": {
    "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
    "parameters": {
      "layer": {"name": "layer", "in": "path", "required": true, "schema": {"type": "string"}, "example": "districts"},
      "tileset": {"name": "tileset", "in": "path", "required": true, "schema": {"type": "string"}, "example": "zoo_map"},
      "lon": {"name": "lon", "in": "query", "required": true, "schema": {"type": "number", "minimum": -180, "maximum": 180}, "example": 14.4208},
      "lat": {"name": "lat", "in": "query", "required": true, "schema": {"type": "number", "minimum": -90, "maximum": 90}, "example": 50.088},
      "geometry": {"name": "geometry", "in": "query", "schema": {"type": "boolean"}, "description": "true: every geometry; false: none; absent: points only."}
    },
    "responses": {
      "Problem": {"description": "An RFC 9457 problem.", "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}},
      "QueryProblem": {"description": "An RFC 9457 problem with the position in the query text.", "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}}
    },
    "schemas": {
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
          "type": {"const": "FeatureCollection"}, "layer": {"type": "string"},
          "query": {"type": "object", "properties": {"lon": {"type": "number"}, "lat": {"type": "number"}}},
          "features": {"type": "array", "items": {"type": "object"}}
        }
      },
      "Layers": {
        "type": "object",
        "properties": {
          "layers": {"type": "array", "items": {"type": "object", "properties": {
            "name": {"type": "string"}, "kind": {"type": "string", "enum": ["features", "attributes"]},
            "family": {"type": "string", "enum": ["points", "lines", "polygons", "mixed", "table"]},
            "geometry_type": {"type": ["string", "null"]}, "count": {"type": "integer"},
            "bounds": {"type": ["array", "null"], "items": {"type": "number"}},
            "columns": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}, "type": {"type": "string"}}}}
          }}},
          "tilesets": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}, "tilejson": {"type": "string"}}}}
        }
      },
      "Route": {
        "type": "object",
        "properties": {
          "code": {"const": "Ok"},
          "routes": {"type": "array", "items": {"type": "object", "properties": {
            "distance": {"type": "number"}, "duration": {"type": "number"}, "geometry": {"type": "object"},
            "nodes": {"type": "array", "items": {"type": "integer"}}
          }}},
          "waypoints": {"type": "array", "items": {"type": "object", "properties": {
            "location": {"type": "array", "items": {"type": "number"}}, "distance": {"type": "number"}, "name": {"type": "string"}
          }}}
        }
      }
    }
  }
}
"""#
}
