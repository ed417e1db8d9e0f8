// The OpenAPI 3.0 document served at /openapi.json. Kept as text in the source (no resource
// bundle to locate at run time); ServerTests checks that its paths and methods are exactly the
// server's route table, and that it parses. OpenAPI 3.0 rather than 3.1 because OGC API –
// Features' "OpenAPI 3.0" conformance class asks for it: the landing page at /ogc links here as
// its `service-desc`, and the one document describes every endpoint, the OGC and OSRM ones too.

enum OpenAPI {
    static let document = #"""
{
  "openapi": "3.0.3",
  "info": {
    "title": "Vltava HTTP API",
    "version": "1.0.0",
    "description": "Point lookups, nearest features, walking routes and MBTiles tile sets and the store's layers as vector tiles from one GeoPackage store. Coordinates are WGS 84 longitude/latitude; distances are great-circle metres on a sphere of R = 6,371,008.8 m. Errors are RFC 9457 problem documents (application/problem+json) with a stable `code`. See docs/HTTP_API.md."
  },
  "paths": {
    "/v1/query": {
      "post": {
        "summary": "Run query-language statements",
        "description": "INSERT, UPDATE and DELETE need a write token for the layers they write (Authorization: Bearer …), checked before any statement runs; EXPLAIN of a write plans it without writing. A write answers its changes as rows: sequence, layer, fid, change.",
        "parameters": [
          {"name": "format", "in": "query", "schema": {"type": "string", "enum": ["json", "geojson", "csv"]}, "description": "Answer format; default from the Accept header (application/geo+json picks geojson, text/csv picks csv), else json. CSV (RFC 4180, header line, CRLF) holds one statement's rows."}
        ],
        "requestBody": {
          "required": true,
          "content": {
            "text/plain": {"schema": {"$ref": "#/components/schemas/QueryText"}, "example": "FIND districts CONTAINING POINT(14.4208 50.0880)"},
            "application/json": {"schema": {"type": "object", "required": ["query"], "properties": {"query": {"$ref": "#/components/schemas/QueryText"}, "params": {"type": "array", "description": "The values of $1, $2, … (or the ?s) in order: numbers, text, true/false, null, or a point {\"lon\": …, \"lat\": …}. Names are never parameters: quote them (\"typ stanice\").", "items": {"nullable": true, "oneOf": [{"type": "number"}, {"type": "string"}, {"type": "boolean"}, {"type": "object", "required": ["lon", "lat"], "additionalProperties": false, "properties": {"lon": {"type": "number"}, "lat": {"type": "number"}}}]}}}}, "example": {"query": "FIND stations WHERE code = $1 RETURN code, name", "params": ["AREPA"]}}
          }
        },
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "One statement: its result; several: an array of results. A rows answer has count, rows, and warnings when there are any (a point that looks swapped).", "content": {"application/json": {"schema": {}}, "application/geo+json": {"schema": {}}, "text/csv": {"schema": {"type": "string"}}}},
          "400": {"$ref": "#/components/responses/QueryProblem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "403": {"$ref": "#/components/responses/Problem"},
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
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
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
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
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
          {"name": "k", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 1}},
          {"name": "within_m", "in": "query", "schema": {"type": "number", "minimum": 0}, "description": "Only features within this many metres."},
          {"name": "where", "in": "query", "schema": {"type": "string"}, "example": "no2", "description": "Comma-separated time-series columns: only features whose time series measures all of them."},
          {"name": "attr", "in": "query", "style": "deepObject", "explode": true, "schema": {"type": "object", "additionalProperties": {"type": "string"}}, "description": "attr.NAME=value: only features whose attribute NAME equals value."},
          {"$ref": "#/components/parameters/geometry"}
        ],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
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
          {"name": "from", "in": "query", "required": true, "schema": {"$ref": "#/components/schemas/LonLat"}, "example": "14.4109,50.1167", "description": "LON,LAT"},
          {"name": "to", "in": "query", "required": true, "schema": {"$ref": "#/components/schemas/LonLat"}, "example": "14.40519,50.11576", "description": "LON,LAT"},
          {"name": "network", "in": "query", "schema": {"type": "string"}, "description": "A line layer; optional when the store has exactly one."},
          {"name": "profile", "in": "query", "schema": {"type": "string", "enum": ["foot", "wheelchair", "any"], "default": "foot"}, "description": "foot: every path pedestrians may use (OSM's walking rule on OSM tags), 5 km/h. wheelchair: foot but step-free (never a path tagged steps), 4 km/h; 422 NoRoute when only steps connect the points. any: every line both ways, 5 km/h."},
          {"name": "max_snap_m", "in": "query", "schema": {"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 5000, "default": 500}},
          {"name": "departure", "in": "query", "schema": {"type": "string"}, "example": "2026-11-28T13:55:00+01:00", "description": "When the walk starts (ISO 8601, or a local time in Prague): paths with opening_hours are taken only while open when the walk reaches them; the answer lists those kept off (closed)."}
        ],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
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
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
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
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
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
              "speed_kmh": {"type": "number", "minimum": 0.5, "maximum": 30, "default": 5},
              "events": {"type": "array", "minItems": 2, "maxItems": 20, "items": {"type": "object", "required": ["place", "start", "end"], "properties": {
                "name": {"type": "string"}, "place": {"type": "string", "minLength": 1, "description": "POINT(lon lat), or a query-language target such as pavilions WHERE name = 'Pavilon goril'"},
                "start": {"type": "string", "format": "date-time"}, "end": {"type": "string", "format": "date-time"}}}}}}}
          }
        },
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
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
        "summary": "Where am I inside a venue: a beacon scan located by its fingerprints (a probabilistic model, or kNN in signal space)",
        "parameters": [
          {"name": "venue", "in": "query", "schema": {"type": "string"}, "example": "wmu_library", "description": "The venue; optional when the store has exactly one."},
          {"name": "k", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 100}, "description": "How many nearest fingerprints (knn, wknn, ensemble; default 3) or likeliest cells (gaussian; default 10) the estimate uses."},
          {"name": "method", "in": "query", "schema": {"type": "string", "enum": ["knn", "wknn", "gaussian", "ensemble"], "default": "gaussian"}, "description": "knn: mean of the neighbours' points; wknn: weighted by 1/signal distance; gaussian: the k likeliest cells of the probabilistic model; ensemble: per axis the median of wknn, wknn on mean fingerprints and gaussian."},
          {"name": "fingerprints", "in": "query", "schema": {"type": "string", "enum": ["scans", "mean", "median"], "default": "scans"}, "description": "Every survey scan, or one per reference point (mean or median per beacon)."},
          {"name": "live", "in": "query", "schema": {"type": "string", "minLength": 1}, "description": "A live layer to place the located phone in (its fences fire); needs a write token and a venue on the globe."},
          {"name": "id", "in": "query", "schema": {"type": "string", "minLength": 1, "maxLength": 200}, "description": "The phone's object in the live layer (with live)."},
          {"name": "geometry", "in": "query", "schema": {"type": "boolean", "default": false}, "description": "true: answer a GeoJSON Feature (a Point when the floor is georeferenced)."}
        ],
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {"schema": {"type": "object", "minProperties": 1, "maxProperties": 1000, "additionalProperties": {"type": "number", "minimum": -200, "maximum": 0}}, "example": {"b3001": -78, "b3006": -77}}
          }
        },
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "venue, floor, floor_name, x, y (the floor's frame), lon/lat (null unless georeferenced), point (nearest reference point), spread (error estimate), method, k, fingerprints, neighbours (point, floor, x, y, signal_distance in dB, weight), ignored_beacons.", "content": {"application/json": {"schema": {"type": "object"}}, "application/geo+json": {"schema": {"type": "object"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "403": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "408": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/locate/track": {
      "post": {
        "summary": "A walking phone's scans located together: a hidden Markov model over the venue's cells, moves bounded by walking speed",
        "parameters": [
          {"name": "venue", "in": "query", "schema": {"type": "string"}, "example": "wmu_library", "description": "The venue; optional when the store has exactly one."},
          {"name": "k", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": 5}, "description": "How many of the most probable cells each position is the weighted mean of."},
          {"name": "speed", "in": "query", "schema": {"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 1000, "default": 1.5}, "description": "Walking speed, frame units a second."},
          {"name": "interval", "in": "query", "schema": {"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 86400, "default": 1}, "description": "Seconds between scans that have no time."},
          {"name": "live", "in": "query", "schema": {"type": "string", "minLength": 1}, "description": "A live layer to place the located phone in (its fences fire); needs a write token and a venue on the globe."},
          {"name": "id", "in": "query", "schema": {"type": "string", "minLength": 1, "maxLength": 200}, "description": "The phone's object in the live layer (with live)."},
          {"name": "smooth", "in": "query", "schema": {"type": "boolean", "default": true}, "description": "true: each position from the whole track (forward-backward); false: from the scans up to it (forward only)."}
        ],
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {"schema": {"type": "object", "required": ["scans"], "properties": {"scans": {"type": "array", "minItems": 1, "maxItems": 10000, "items": {"type": "object", "required": ["readings"], "properties": {"time": {"type": "number", "nullable": true}, "readings": {"type": "object", "minProperties": 1, "maxProperties": 1000, "additionalProperties": {"type": "number", "minimum": -200, "maximum": 0}}}}}}}, "example": {"scans": [{"time": 0, "readings": {"b3001": -78}}, {"time": 1, "readings": {"b3001": -75, "b3006": -80}}]}}
          }
        },
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "venue, units, smooth, speed, k, positions (per scan in the order sent: time, floor, x, y, lon/lat or null, point, spread), ignored_beacons.", "content": {"application/json": {"schema": {"type": "object"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "403": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "408": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/venues/{venue}/scans": {
      "post": {
        "summary": "Add survey scans to an indoor venue as a surveyor walks: durable when answered, located by the next request (needs a write token covering the venue)",
        "parameters": [{"name": "venue", "in": "path", "required": true, "schema": {"type": "string"}, "example": "wmu_library"}],
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {"schema": {"type": "object", "required": ["scans"], "properties": {"scans": {"type": "array", "minItems": 1, "maxItems": 10000, "items": {"type": "object", "required": ["x", "y", "readings"], "properties": {"x": {"type": "number"}, "y": {"type": "number"}, "floor": {"type": "integer"}, "label": {"type": "string"}, "time": {"description": "ISO text (2026-11-28T10:00:00) or Unix seconds", "nullable": true}, "readings": {"type": "object", "minProperties": 1, "maxProperties": 1000, "additionalProperties": {"type": "number", "minimum": -200, "maximum": 0}}}}}}}, "example": {"scans": [{"x": 9, "y": 6, "floor": 1, "label": "I06", "time": "2026-11-28T10:00:00", "readings": {"b3002": -75, "b3005": -79}}]}}
          }
        },
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "201": {"description": "venue, added (scans), scans, points, beacons (the venue's totals now).", "content": {"application/json": {"schema": {"type": "object"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "403": {"$ref": "#/components/responses/Problem"},
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
        "summary": "TileJSON 3.0.0 of a tile set or of a feature layer (vector_layers with typed fields; valid against the TileJSON 3.0.0 schema)",
        "parameters": [{"$ref": "#/components/parameters/tileset"}],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "TileJSON whose tiles URL points at this server.", "content": {"application/json": {"schema": {"type": "object"}}}},
          "404": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/tiles/{tileset}/{z}/{x}/{y}": {
      "get": {
        "summary": "One tile, XYZ addressing: a tile set's tile, or a feature layer cut into a Mapbox Vector Tile (extent 4096, 64 units of buffer, simplified per zoom). y may end in .mvt or .pbf (MVT: GeoJSON and TopoJSON tile sets transcoded) or .json (a GeoJSON FeatureCollection, each feature's tile layer in tile_layer, a member beside its properties); without an extension vector tiles come as MVT and images as stored. Content-Encoding follows Accept-Encoding: gzip only when accepted, stored gzip inflated otherwise.",
        "parameters": [
          {"$ref": "#/components/parameters/tileset"},
          {"name": "z", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 0, "maximum": 30}},
          {"name": "x", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 0, "maximum": 1073741823}, "description": "XYZ column, below 2^z (400 otherwise)."},
          {"name": "y", "in": "path", "required": true, "schema": {"type": "string", "pattern": "^[0-9]{1,10}(\\.(mvt|pbf|json))?$"}, "description": "XYZ row below 2^z (0 at the north; the TMS flip of MBTiles is done by the server; 400 otherwise), optionally with the extension .mvt, .pbf or .json."},
          {"name": "Accept-Encoding", "in": "header", "required": false, "schema": {"type": "string"}, "description": "gzip (or deflate, for zlib-stored tiles) only when listed."},
          {"name": "If-None-Match", "in": "header", "required": false, "schema": {"type": "string"}, "description": "ETags the client holds; a match gives 304."}
        ],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "The tile's bytes; Content-Type and Content-Encoding are read from the bytes. A weak ETag comes with it.", "content": {"application/vnd.mapbox-vector-tile": {}, "application/geo+json": {}, "image/png": {}, "image/jpeg": {}, "image/webp": {}}},
          "204": {"description": "An empty tile: a tile set has no tile here, inside its zoom range and bounds."},
          "304": {"description": "Not modified: If-None-Match holds the tile's ETag (or *)."},
          "400": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/write": {
      "post": {
        "summary": "A batch of writes on any layers, all or none",
        "description": "{\"crs\": …, \"strict\": false, \"operations\": [{\"insert\": LAYER, \"feature\": {…}}, {\"replace\": LAYER, \"fid\": N, \"feature\": {…}}, {\"update\": LAYER, \"fid\": N, \"feature\": {…}}, {\"delete\": LAYER, \"fid\": N}, {\"upsert\": LAYER, \"key\": COLUMN, \"feature\": {…}}, {\"create\": {\"name\": …, \"geometry_type\": …, \"columns\": [{\"name\": …, \"type\": …}]}}]}. Needs a write token covering every layer named.",
        "security": [{"bearer": []}],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "required": ["operations"], "properties": {"crs": {"type": "string"}, "strict": {"type": "boolean"}, "operations": {"type": "array", "minItems": 1, "maxItems": 10000, "items": {"type": "object"}}}}}}},
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "Applied, durable and visible to the next request.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WriteReceipt"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "403": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "408": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/layers/{layer}/rows": {
      "post": {
        "summary": "Append rows to a table (a time series' observations): a JSON array of objects, or CSV with a header line",
        "security": [{"bearer": []}],
        "parameters": [{"$ref": "#/components/parameters/layer"}],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "array", "items": {"type": "object"}}}, "text/csv": {"schema": {"type": "string"}}}},
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "201": {"description": "Appended.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WriteReceipt"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "403": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "408": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/changes": {
      "get": {
        "summary": "The change feed: every write's changes after a sequence number, oldest first",
        "description": "With Accept: text/event-stream, the same as Server-Sent Events that stay open: each change an event whose id is its sequence number, resumed after a Last-Event-ID header (docs/HTTP_API.md).",
        "parameters": [
          {"name": "since", "in": "query", "schema": {"type": "integer", "minimum": 0, "default": 0}},
          {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 1000}}
        ],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "changes (sequence, layer, fid, change, at) and last, the sequence to ask after next.", "content": {"application/json": {"schema": {"type": "object"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/live": {
      "get": {
        "summary": "The live layers",
        "description": "Each with its object count, history and ttl_s.",
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "layers", "content": {"application/json": {"schema": {"type": "object"}}}},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/live/{layer}": {
      "put": {
        "summary": "Declare a live layer (or change its settings)",
        "description": "Kept in the store. Needs a write token covering the layer.",
        "security": [{"bearer": []}],
        "parameters": [
          {"name": "layer", "in": "path", "required": true, "schema": {"type": "string"}}
        ],
        "requestBody": {"required": false, "description": "Without a body: no history, no TTL.", "content": {"application/json": {"schema": {"type": "object"}, "example": {"history": {"last": 10}, "ttl_s": 600}}}},
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "The layer: name, objects, history, ttl_s.", "content": {"application/json": {"schema": {"type": "object"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "403": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      },
      "delete": {
        "summary": "Drop a live layer and its objects",
        "security": [{"bearer": []}],
        "parameters": [
          {"name": "layer", "in": "path", "required": true, "schema": {"type": "string"}}
        ],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "204": {"description": "Deleted."},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "403": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/live/{layer}/positions": {
      "post": {
        "summary": "Send positions; every fence watching the layer is evaluated",
        "description": "Applied in order, all or none; a position older than its object's is stale and left out. Memory only: nothing is written to the store.",
        "security": [{"bearer": []}],
        "parameters": [
          {"name": "layer", "in": "path", "required": true, "schema": {"type": "string"}},
          {"name": "events", "in": "query", "schema": {"type": "boolean", "default": true}, "description": "false: only event_count, not the events."}
        ],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object"}, "example": {"positions": [{"id": "phone-1", "position": [14.40519, 50.1160], "time": "2026-06-20T14:00:00Z", "fields": {"group": "A"}}]}}}},
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "updated, stale, and the events made (or event_count).", "content": {"application/json": {"schema": {"type": "object"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "403": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/live/{layer}/objects": {
      "get": {
        "summary": "The objects of a live layer, as GeoJSON",
        "parameters": [
          {"name": "layer", "in": "path", "required": true, "schema": {"type": "string"}},
          {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 1000}}
        ],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "A FeatureCollection: each object's position, time, expires, fields; numberMatched.", "content": {"application/geo+json": {"schema": {"type": "object"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/live/{layer}/objects/{id}": {
      "get": {
        "summary": "One object, with its history",
        "parameters": [
          {"name": "layer", "in": "path", "required": true, "schema": {"type": "string"}},
          {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}
        ],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "A Feature; properties.history lists earlier positions, oldest first.", "content": {"application/geo+json": {"schema": {"type": "object"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      },
      "delete": {
        "summary": "Remove an object",
        "description": "Its fences send exit with reason deleted.",
        "security": [{"bearer": []}],
        "parameters": [
          {"name": "layer", "in": "path", "required": true, "schema": {"type": "string"}},
          {"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}
        ],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "204": {"description": "Deleted."},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "403": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/fences": {
      "get": {
        "summary": "The fences",
        "description": "Each with its definition and whether it runs (problem says why not).",
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "fences", "content": {"application/json": {"schema": {"type": "object"}}}},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/fences/{name}": {
      "put": {
        "summary": "Add or replace a fence",
        "description": "Kept in the store; needs the admin token or a write token for every layer. Areas: point with radius_m, geometry, layer (fids, match, within_m), reach (from, minutes or metres), near (another moving object, radius_m); or a threshold on a time series (place, column, at_least or rise_by, within_s). docs/HTTP_API.md.",
        "security": [{"bearer": []}],
        "parameters": [
          {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}
        ],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object"}, "example": {"watch": {"layer": "visitors"}, "area": {"layer": "pens", "match": {"name": "gorily"}, "within_m": 50}, "hysteresis_m": 10, "dwell_s": 5}}}},
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "The fence: name, definition, running.", "content": {"application/json": {"schema": {"type": "object"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "403": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      },
      "get": {
        "summary": "One fence",
        "parameters": [
          {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}
        ],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "name, definition, running, problem.", "content": {"application/json": {"schema": {"type": "object"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      },
      "delete": {
        "summary": "Delete a fence",
        "security": [{"bearer": []}],
        "parameters": [
          {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}
        ],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "204": {"description": "Deleted."},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "403": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/fences/{name}/events": {
      "get": {
        "summary": "A fence's events",
        "description": "With Accept: text/event-stream, Server-Sent Events that stay open, resumed after Last-Event-ID; a stream that missed events gets an event named missed first.",
        "parameters": [
          {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}},
          {"name": "after", "in": "query", "schema": {"type": "integer", "minimum": 0}, "description": "The events after this id (0: every event kept)."},
          {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 1000}}
        ],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "events, last (the id to ask after next), missed.", "content": {"application/json": {"schema": {"type": "object"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/events": {
      "get": {
        "summary": "Every fence's events, or those of some fences",
        "description": "With Accept: text/event-stream, Server-Sent Events (see /v1/fences/{name}/events).",
        "parameters": [
          {"name": "fences", "in": "query", "schema": {"type": "string"}, "description": "Fence names, comma-separated."},
          {"name": "after", "in": "query", "schema": {"type": "integer", "minimum": 0}, "description": "The events after this id (0: every event kept)."},
          {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 1000}}
        ],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "events, last, missed.", "content": {"application/json": {"schema": {"type": "object"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/webhooks": {
      "get": {
        "summary": "The webhooks, with how their delivery goes",
        "description": "Never their secrets.",
        "security": [{"bearer": []}],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "webhooks: name, url, fences, delivered, attempts, last_event_id, last_error, dead_letters.", "content": {"application/json": {"schema": {"type": "object"}}}},
          "401": {"$ref": "#/components/responses/Problem"},
          "403": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/webhooks/{name}": {
      "put": {
        "summary": "Add or replace a webhook",
        "description": "Each event of its fences is POSTed alone, in order, with Vltava-Event-Id and Vltava-Signature: sha256=HMAC-SHA256(secret, body); retried with back-off, then a dead letter.",
        "security": [{"bearer": []}],
        "parameters": [
          {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}
        ],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object"}, "example": {"url": "https://app.example/hooks/vltava", "secret": "a-secret-of-16-bytes-or-more", "fences": ["gorillas"]}}}},
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "The webhook (without its secret).", "content": {"application/json": {"schema": {"type": "object"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "403": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      },
      "get": {
        "summary": "One webhook and its delivery",
        "security": [{"bearer": []}],
        "parameters": [
          {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}
        ],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "name, url, fences, delivered, attempts, last_event_id, last_error, dead_letters.", "content": {"application/json": {"schema": {"type": "object"}}}},
          "401": {"$ref": "#/components/responses/Problem"},
          "403": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      },
      "delete": {
        "summary": "Delete a webhook",
        "security": [{"bearer": []}],
        "parameters": [
          {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}
        ],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "204": {"description": "Deleted."},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "403": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/v1/admin/reload": {
      "post": {
        "summary": "Reload the snapshot from the store",
        "description": "Disabled (404 admin_disabled) unless the server has an admin token; then requires Authorization: Bearer TOKEN.",
        "security": [{"bearer": []}],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
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
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "status ok, loaded_at, load_seconds, layers, tilesets, warnings (features left out at load; the log names them).", "content": {"application/json": {"schema": {"type": "object"}}}},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/readyz": {
      "get": {
        "summary": "Readiness: 200 when data requests can be answered (the one for a load balancer to probe)",
        "description": "A snapshot is loaded and its store answers: a GeoPackage once loaded, a PostGIS store when its database answers SELECT 1 within 1 s (the answer is kept for 250 ms). /healthz is the process's liveness and stays 200 while the database is down.",
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "status ready.", "content": {"application/json": {"schema": {"type": "object"}}}},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/metrics": {
      "get": {
        "summary": "Prometheus text format: requests and latency histograms per route, reloads",
        "responses": {"414": {"$ref": "#/components/responses/Problem"}, "200": {"description": "Metrics.", "content": {"text/plain": {"schema": {"type": "string"}}}}}
      }
    },
    "/openapi.json": {
      "get": {
        "summary": "This document",
        "responses": {"414": {"$ref": "#/components/responses/Problem"}, "200": {"description": "OpenAPI 3.0; as application/vnd.oai.openapi+json;version=3.0 when the Accept header asks for it.", "content": {"application/json": {"schema": {"type": "object"}}, "application/vnd.oai.openapi+json;version=3.0": {"schema": {"type": "object"}}}}}
      }
    },
    "/ogc": {
      "get": {
        "tags": ["OGC API – Features"],
        "summary": "OGC API – Features landing page: links to the API definition (service-desc), the conformance classes and the collections",
        "parameters": [{"$ref": "#/components/parameters/f"}],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "title, description, links.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/LandingPage"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "406": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/ogc/conformance": {
      "get": {
        "tags": ["OGC API – Features"],
        "summary": "The conformance classes implemented: Part 1 Core, GeoJSON and OpenAPI 3.0",
        "parameters": [{"$ref": "#/components/parameters/f"}],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "conformsTo: the classes' URIs.", "content": {"application/json": {"schema": {"type": "object", "required": ["conformsTo"], "properties": {"conformsTo": {"type": "array", "items": {"type": "string"}}}}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "406": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/ogc/collections": {
      "get": {
        "tags": ["OGC API – Features"],
        "summary": "Every layer of the store as a collection (attribute tables as features without geometry)",
        "parameters": [{"$ref": "#/components/parameters/f"}],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "links and collections.", "content": {"application/json": {"schema": {"type": "object", "required": ["links", "collections"], "properties": {"links": {"type": "array", "items": {"$ref": "#/components/schemas/Link"}}, "collections": {"type": "array", "items": {"$ref": "#/components/schemas/Collection"}}}}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "406": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/ogc/collections/{collection}": {
      "get": {
        "tags": ["OGC API – Features"],
        "summary": "One collection: its extent (CRS84 box; the interval of a layer with time) and links",
        "parameters": [{"$ref": "#/components/parameters/collection"}, {"$ref": "#/components/parameters/f"}],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "The collection.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Collection"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "406": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/ogc/collections/{collection}/items": {
      "get": {
        "tags": ["OGC API – Features"],
        "summary": "A page of a collection's features, in the layer's order; any other parameter named like a column filters on that column (equal, text exactly, numbers by value)",
        "parameters": [
          {"$ref": "#/components/parameters/collection"},
          {"name": "limit", "in": "query", "style": "form", "explode": false, "schema": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 10}},
          {"name": "offset", "in": "query", "schema": {"type": "integer", "minimum": 0, "maximum": 2147483647, "default": 0}, "description": "Features to skip; the next and prev links carry it."},
          {"name": "after", "in": "query", "schema": {"type": "integer", "format": "int64"}, "description": "Only features whose id (fid) is greater: keyset paging, which the next link of a layer kept in PostgreSQL carries."},
          {"name": "bbox", "in": "query", "style": "form", "explode": false, "schema": {"type": "array", "oneOf": [{"minItems": 4, "maxItems": 4}, {"minItems": 6, "maxItems": 6}], "items": {"type": "number"}}, "description": "minLon,minLat,maxLon,maxLat in CRS84 (or 6 numbers, with heights): only features whose geometry meets the box (minLon > maxLon crosses the antimeridian)."},
          {"name": "datetime", "in": "query", "style": "form", "explode": false, "schema": {"type": "string"}, "example": "2019-04-16T12:00:00Z/..", "description": "An instant or an interval (.. for an open end), UTC. Only on layers with time: a time-series table (each row's interval) and its point layer (features with an observation then)."},
          {"name": "properties", "in": "query", "style": "form", "explode": true, "schema": {"type": "object", "additionalProperties": {"type": "string"}}, "description": "NAME=value for any column NAME of the layer."},
          {"$ref": "#/components/parameters/f"}
        ],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "A GeoJSON FeatureCollection with links (self, collection, next, prev), timeStamp, numberMatched and numberReturned.", "content": {"application/geo+json": {"schema": {"$ref": "#/components/schemas/FeatureCollection"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "406": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      },
      "post": {
        "tags": ["OGC API – Features"],
        "summary": "Insert features (OGC API – Features Part 4): a GeoJSON Feature or FeatureCollection, all or none",
        "description": "Needs Authorization: Bearer with a write token for the collection (403 writes_disabled when the server takes no writes). An integer id becomes the feature's fid. Geometries are in CRS84, or in the CRS a Content-Crs header names (http://www.opengis.net/def/crs/EPSG/0/5514).",
        "security": [{"bearer": []}],
        "parameters": [{"$ref": "#/components/parameters/collection"}, {"$ref": "#/components/parameters/contentCrs"}],
        "requestBody": {"required": true, "content": {"application/geo+json": {"schema": {"type": "object"}}, "application/json": {"schema": {"type": "object"}}}},
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "201": {"description": "Inserted, durable and visible to the next request: the sequence number and one change per feature. Location names the feature when one was sent.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WriteReceipt"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "403": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "406": {"$ref": "#/components/responses/Problem"},
          "408": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/ogc/collections/{collection}/items/{featureId}": {
      "get": {
        "tags": ["OGC API – Features"],
        "summary": "One feature by its fid",
        "parameters": [
          {"$ref": "#/components/parameters/collection"},
          {"name": "featureId", "in": "path", "required": true, "schema": {"type": "integer"}},
          {"$ref": "#/components/parameters/f"}
        ],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "A GeoJSON Feature with links (self, collection).", "content": {"application/geo+json": {"schema": {"type": "object"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "406": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      },
      "put": {
        "tags": ["OGC API – Features"],
        "summary": "Replace a feature whole (OGC API – Features Part 4)",
        "security": [{"bearer": []}],
        "parameters": [
          {"$ref": "#/components/parameters/collection"},
          {"name": "featureId", "in": "path", "required": true, "schema": {"type": "integer"}},
          {"name": "If-Match", "in": "header", "schema": {"type": "string"}, "description": "The ETag the client last read: 412 when the feature has changed since."},
          {"$ref": "#/components/parameters/contentCrs"}
        ],
        "requestBody": {"required": true, "content": {"application/geo+json": {"schema": {"type": "object"}}, "application/json": {"schema": {"type": "object"}}}},
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "Replaced; ETag is the feature's new one.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WriteReceipt"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "403": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "406": {"$ref": "#/components/responses/Problem"},
          "412": {"$ref": "#/components/responses/Problem"},
          "408": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      },
      "patch": {
        "tags": ["OGC API – Features"],
        "summary": "Change some of a feature's properties, or its geometry (a JSON merge patch, RFC 7396)",
        "security": [{"bearer": []}],
        "parameters": [
          {"$ref": "#/components/parameters/collection"},
          {"name": "featureId", "in": "path", "required": true, "schema": {"type": "integer"}},
          {"name": "If-Match", "in": "header", "schema": {"type": "string"}, "description": "The ETag the client last read: 412 when the feature has changed since."},
          {"$ref": "#/components/parameters/contentCrs"}
        ],
        "requestBody": {"required": true, "content": {"application/merge-patch+json": {"schema": {"type": "object"}}, "application/json": {"schema": {"type": "object"}}}},
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "Updated; ETag is the feature's new one.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WriteReceipt"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "403": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "406": {"$ref": "#/components/responses/Problem"},
          "412": {"$ref": "#/components/responses/Problem"},
          "408": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      },
      "delete": {
        "tags": ["OGC API – Features"],
        "summary": "Delete a feature",
        "security": [{"bearer": []}],
        "parameters": [
          {"$ref": "#/components/parameters/collection"},
          {"name": "featureId", "in": "path", "required": true, "schema": {"type": "integer"}},
          {"name": "If-Match", "in": "header", "schema": {"type": "string"}, "description": "The ETag the client last read: 412 when the feature has changed since."}
        ],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "Deleted.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WriteReceipt"}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "401": {"$ref": "#/components/responses/Problem"},
          "403": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "406": {"$ref": "#/components/responses/Problem"},
          "412": {"$ref": "#/components/responses/Problem"},
          "408": {"$ref": "#/components/responses/Problem"},
          "413": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/route/v1/{profile}/{coordinates}": {
      "get": {
        "tags": ["OSRM"],
        "summary": "OSRM's route service: a walking route through the coordinates in order, one leg between each two",
        "parameters": [
          {"$ref": "#/components/parameters/osrmProfile"},
          {"$ref": "#/components/parameters/osrmCoordinates"},
          {"name": "steps", "in": "query", "schema": {"type": "boolean", "default": false}},
          {"name": "geometries", "in": "query", "schema": {"type": "string", "enum": ["polyline", "polyline6", "geojson"], "default": "polyline"}},
          {"name": "overview", "in": "query", "schema": {"type": "string", "enum": ["full", "simplified", "false"], "default": "simplified"}},
          {"name": "annotations", "in": "query", "schema": {"type": "string"}, "description": "true, false, or a list of distance, duration, datasources, nodes, weight, speed."},
          {"name": "alternatives", "in": "query", "schema": {"type": "string"}, "description": "Accepted; one route is answered."},
          {"name": "continue_straight", "in": "query", "schema": {"type": "string", "enum": ["default", "true", "false"]}, "description": "Accepted; changes nothing on foot."},
          {"$ref": "#/components/parameters/osrmRadiuses"},
          {"$ref": "#/components/parameters/osrmHints"},
          {"$ref": "#/components/parameters/osrmGenerateHints"},
          {"$ref": "#/components/parameters/osrmSkipWaypoints"},
          {"$ref": "#/components/parameters/osrmBearings"},
          {"$ref": "#/components/parameters/osrmNetwork"},
          {"$ref": "#/components/parameters/osrmDeparture"}
        ],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "code Ok, routes[0] (distance m, duration s, weight = duration, weight_name, geometry, legs with steps, summary and annotation), waypoints (hint, distance, name, location).", "content": {"application/json": {"schema": {"type": "object"}}}},
          "400": {"$ref": "#/components/responses/OSRMError"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/table/v1/{profile}/{coordinates}": {
      "get": {
        "tags": ["OSRM"],
        "summary": "OSRM's table service: walking durations and distances between sources and destinations, one search per source",
        "parameters": [
          {"$ref": "#/components/parameters/osrmProfile"},
          {"$ref": "#/components/parameters/osrmCoordinates"},
          {"name": "sources", "in": "query", "schema": {"type": "string", "default": "all"}, "example": "0;2", "description": "all, or indices of the coordinates separated by ;"},
          {"name": "destinations", "in": "query", "schema": {"type": "string", "default": "all"}},
          {"name": "annotations", "in": "query", "schema": {"type": "string", "enum": ["duration", "distance", "duration,distance", "distance,duration"], "default": "duration"}},
          {"$ref": "#/components/parameters/osrmRadiuses"},
          {"$ref": "#/components/parameters/osrmHints"},
          {"$ref": "#/components/parameters/osrmGenerateHints"},
          {"$ref": "#/components/parameters/osrmSkipWaypoints"},
          {"$ref": "#/components/parameters/osrmBearings"},
          {"$ref": "#/components/parameters/osrmNetwork"},
          {"$ref": "#/components/parameters/osrmDeparture"}
        ],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "code Ok, durations (s) and/or distances (m) by source row, null where no path joins a pair; sources and destinations as waypoints.", "content": {"application/json": {"schema": {"type": "object"}}}},
          "400": {"$ref": "#/components/responses/OSRMError"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/nearest/v1/{profile}/{coordinates}": {
      "get": {
        "tags": ["OSRM"],
        "summary": "OSRM's nearest service: the points of the nearest edges of the network, nearest first",
        "parameters": [
          {"$ref": "#/components/parameters/osrmProfile"},
          {"$ref": "#/components/parameters/osrmCoordinates"},
          {"name": "number", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 10000, "default": 1}},
          {"$ref": "#/components/parameters/osrmRadiuses"},
          {"$ref": "#/components/parameters/osrmHints"},
          {"$ref": "#/components/parameters/osrmGenerateHints"},
          {"$ref": "#/components/parameters/osrmBearings"},
          {"$ref": "#/components/parameters/osrmNetwork"}
        ],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "code Ok, waypoints with nodes (the OSM ids of the edge's ends), hint, distance, name, location.", "content": {"application/json": {"schema": {"type": "object"}}}},
          "400": {"$ref": "#/components/responses/OSRMError"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/trip/v1/{profile}/{coordinates}": {
      "get": {
        "tags": ["OSRM"],
        "summary": "OSRM's trip service: the shortest round trip or open path through the coordinates (exact up to 12, a heuristic beyond)",
        "parameters": [
          {"$ref": "#/components/parameters/osrmProfile"},
          {"$ref": "#/components/parameters/osrmCoordinates"},
          {"name": "roundtrip", "in": "query", "schema": {"type": "string", "enum": ["true", "false"], "default": "true"}},
          {"name": "source", "in": "query", "schema": {"type": "string", "enum": ["any", "first"], "default": "any"}},
          {"name": "destination", "in": "query", "schema": {"type": "string", "enum": ["any", "last"], "default": "any"}},
          {"name": "steps", "in": "query", "schema": {"type": "boolean", "default": false}},
          {"name": "geometries", "in": "query", "schema": {"type": "string", "enum": ["polyline", "polyline6", "geojson"], "default": "polyline"}},
          {"name": "overview", "in": "query", "schema": {"type": "string", "enum": ["full", "simplified", "false"], "default": "simplified"}},
          {"name": "annotations", "in": "query", "schema": {"type": "string"}},
          {"$ref": "#/components/parameters/osrmRadiuses"},
          {"$ref": "#/components/parameters/osrmHints"},
          {"$ref": "#/components/parameters/osrmGenerateHints"},
          {"$ref": "#/components/parameters/osrmBearings"},
          {"$ref": "#/components/parameters/osrmNetwork"},
          {"$ref": "#/components/parameters/osrmDeparture"}
        ],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "code Ok, trips[0] (a route through the points in the best order, legs between them), waypoints in the request's order with waypoint_index (the place in the trip) and trips_index.", "content": {"application/json": {"schema": {"type": "object"}}}},
          "400": {"$ref": "#/components/responses/OSRMError"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/match/v1/{profile}/{coordinates}": {
      "get": {
        "tags": ["OSRM"],
        "summary": "OSRM's match service: the paths a GPS trace walked (hidden Markov model)",
        "parameters": [
          {"$ref": "#/components/parameters/osrmProfile"},
          {"$ref": "#/components/parameters/osrmCoordinates"},
          {"name": "timestamps", "in": "query", "schema": {"type": "string"}, "example": "1700000000;1700000005", "description": "Seconds, one per coordinate, never going back."},
          {"name": "gaps", "in": "query", "schema": {"type": "string", "enum": ["split", "ignore"], "default": "split"}, "description": "split: more than 60 s between fixes starts a new matching."},
          {"name": "tidy", "in": "query", "schema": {"type": "string", "enum": ["true", "false"]}, "description": "Accepted: fixes within 3σ of the last one taken are always left out."},
          {"name": "geometries", "in": "query", "schema": {"type": "string", "enum": ["polyline", "polyline6", "geojson"], "default": "polyline"}},
          {"name": "overview", "in": "query", "schema": {"type": "string", "enum": ["full", "simplified", "false"], "default": "simplified"}},
          {"name": "steps", "in": "query", "schema": {"type": "string", "enum": ["true", "false"]}, "description": "Accepted; matchings have no steps."},
          {"name": "annotations", "in": "query", "schema": {"type": "string"}},
          {"$ref": "#/components/parameters/osrmRadiuses"},
          {"$ref": "#/components/parameters/osrmHints"},
          {"$ref": "#/components/parameters/osrmGenerateHints"},
          {"$ref": "#/components/parameters/osrmBearings"},
          {"$ref": "#/components/parameters/osrmNetwork"}
        ],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "code Ok, tracepoints (null for a fix left out; else matchings_index, waypoint_index, alternatives_count, location, distance), matchings (confidence, geometry, legs, distance, duration).", "content": {"application/json": {"schema": {"type": "object"}}}},
          "400": {"$ref": "#/components/responses/OSRMError"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/isochrone": {
      "get": {
        "tags": ["Routing"],
        "summary": "GraphHopper's isochrone: the area reachable on foot within a time or a distance, one polygon per bucket, following the paths",
        "parameters": [
          {"name": "point", "in": "query", "required": true, "schema": {"type": "string", "pattern": "^[-+]?(90(\\.0+)?|[0-8]?[0-9](\\.[0-9]+)?),[-+]?(180(\\.0+)?|(1[0-7][0-9]|[0-9]{1,2})(\\.[0-9]+)?)$"}, "example": "50.1167,14.4109", "description": "LAT,LON (GraphHopper's order)."},
          {"name": "time_limit", "in": "query", "schema": {"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 10800, "default": 600}, "description": "Seconds of walking."},
          {"name": "distance_limit", "in": "query", "schema": {"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 50000}, "description": "Metres; when given, it is asked instead of time_limit."},
          {"name": "buckets", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": 20, "default": 1}},
          {"name": "profile", "in": "query", "schema": {"type": "string", "enum": ["foot", "walk", "walking", "hike", "wheelchair"], "default": "foot"}},
          {"name": "vehicle", "in": "query", "schema": {"type": "string", "enum": ["foot", "walk", "walking", "hike", "wheelchair"]}, "description": "The older name of profile."},
          {"name": "speed_kmh", "in": "query", "schema": {"type": "number", "minimum": 0.5, "maximum": 30}},
          {"name": "reverse_flow", "in": "query", "schema": {"type": "string", "enum": ["false"]}},
          {"name": "type", "in": "query", "schema": {"type": "string", "enum": ["json"]}},
          {"name": "debug", "in": "query", "schema": {"type": "string", "enum": ["true", "false"]}},
          {"name": "key", "in": "query", "schema": {"type": "string"}, "description": "Accepted and ignored (GraphHopper's API key)."},
          {"name": "network", "in": "query", "schema": {"type": "string"}}
        ],
        "responses": {"414": {"$ref": "#/components/responses/Problem"},
          "200": {"description": "polygons: one GeoJSON Feature per bucket, smallest first, properties bucket (from 0), time (s), distance (m); info: copyrights, took (ms), network, profile, reached_nodes.", "content": {"application/json": {"schema": {"type": "object", "required": ["polygons"]}}}},
          "400": {"$ref": "#/components/responses/Problem"},
          "404": {"$ref": "#/components/responses/Problem"},
          "422": {"$ref": "#/components/responses/Problem"},
          "503": {"$ref": "#/components/responses/Problem"}
        }
      }
    },
    "/": {
      "get": {
        "summary": "The map page (HTML); with Accept naming JSON and not HTML, links to the API",
        "responses": {"414": {"$ref": "#/components/responses/Problem"}, "200": {"description": "The page, or links.", "content": {"text/html": {"schema": {"type": "string"}}, "application/json": {"schema": {"type": "object"}}}}}
      }
    },
    "/map/{file}": {
      "get": {
        "summary": "The map page's script (map.js), style sheet (map.css) and MapLibre style (style.json: the store's layers and tile sets, with absolute tile URLs)",
        "parameters": [{"name": "file", "in": "path", "required": true, "schema": {"type": "string", "enum": ["map.js", "map.css", "style.json"]}}],
        "responses": {"414": {"$ref": "#/components/responses/Problem"}, "200": {"description": "The file."}, "404": {"$ref": "#/components/responses/Problem"}}
      }
    },
    "/maplibre/{file}": {
      "get": {
        "summary": "MapLibre GL JS (maplibre-gl.js, maplibre-gl.css) from the system's copy (PyPI's maplibre; --maplibre-dir)",
        "parameters": [{"name": "file", "in": "path", "required": true, "schema": {"type": "string", "enum": ["maplibre-gl.js", "maplibre-gl.css"]}}],
        "responses": {"414": {"$ref": "#/components/responses/Problem"}, "200": {"description": "The file."}, "404": {"$ref": "#/components/responses/Problem"}}
      }
    },
    "/leaflet/{file}": {
      "get": {
        "summary": "Leaflet (leaflet.js, leaflet.css) from the system's copy (--leaflet-dir)",
        "parameters": [{"name": "file", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {"414": {"$ref": "#/components/responses/Problem"}, "200": {"description": "The file."}, "404": {"$ref": "#/components/responses/Problem"}}
      }
    },
    "/leaflet/images/{file}": {
      "get": {
        "summary": "Leaflet's images from the system's copy",
        "parameters": [{"name": "file", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {"414": {"$ref": "#/components/responses/Problem"}, "200": {"description": "The image."}, "404": {"$ref": "#/components/responses/Problem"}}
      }
    }
  },
  "components": {
    "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
    "parameters": {
      "layer": {"name": "layer", "in": "path", "required": true, "schema": {"type": "string"}, "example": "districts"},
      "tileset": {"name": "tileset", "in": "path", "required": true, "schema": {"type": "string"}, "example": "zoo_map", "description": "A registered tile set, else a feature layer of the store (districts, parking, pens, …)."},
      "lon": {"name": "lon", "in": "query", "required": true, "schema": {"type": "number", "minimum": -180, "maximum": 180}, "example": 14.4208},
      "lat": {"name": "lat", "in": "query", "required": true, "schema": {"type": "number", "minimum": -90, "maximum": 90}, "example": 50.088},
      "geometry": {"name": "geometry", "in": "query", "schema": {"type": "boolean"}, "description": "true: every geometry; false: none; absent: points only."},
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
