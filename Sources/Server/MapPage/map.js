// Vltava's map page: plain JavaScript over MapLibre GL JS and the HTTP API (docs/HTTP_API.md).
//
// The map is drawn on the GPU from Mapbox Vector Tiles: /map/style.json is a hand-written
// MapLibre style whose sources are the store's layers and tile sets (/v1/tiles/NAME/{z}/{x}/{y}.mvt;
// the server prefixes the URLs with its origin and leaves out what the store lacks). A store
// layer the style does not cover still shows, with a plain default style, from the layer list.
// Modes: "inspect" (a click asks /v1/here), "route" (two clicks ask /v1/route), "nearest"
// (a click asks /v1/layers/{layer}/nearest), "reach" (a click asks /isochrone: the bands walked
// within 5, 10 or 15 minutes), "trip" (clicks add stops; "Best order" asks /trip/v1/foot, a round
// trip from the first stop). Answers (route, nearest lines, bands, trip, query results) are
// drawn from one GeoJSON source. The URL's hash keeps the view, the mode and the layers.
//
// A GPX file dropped on the map (or chosen in the trace section) is read here (DOMParser: trkpt
// lat/lon, time, hdop) and sent to /match/v1/foot: at most 10,000 fixes (thinned evenly), in
// consecutive chunks whose request target stays under 7,500 bytes (the server refuses targets
// over 8 KB); neighbouring chunks share their boundary fix, so the matched paths join and no
// stretch is counted twice. The raw trace (dashed) and the matched paths (solid) have their
// own source, kept across clicks until cleared.
//
// Labels are HTML markers (maplibregl.Marker with a text element), not symbol layers. MapLibre
// draws text only from glyph PBFs (SDF font ranges), served by a glyph server or built with
// node-fontnik or a similar tool; there is no glyph server offline and no such tool here without
// npm. Only a few features are named on this map (17 stations, 57 districts at city zoom, 13
// pavilions in the zoo), so DOM labels are cheap, use the browser's own fonts (Czech diacritics
// included) and need nothing built. Their positions come from the tiles already loaded
// (querySourceFeatures): a point's position, a polygon's area-weighted centroid over its pieces.
//
// Fences, live objects and indoor venues: see their sections below.
//
// Live: the change feed (/v1/changes as Server-Sent Events) names the layer of each change; a
// layer on the map then reloads its tiles (source.setTiles with the same URLs). Feature-layer
// tiles are always asked with `cache: 'no-cache'`: the browser revalidates its copy with
// If-None-Match and the server answers 304 for every unchanged tile, so nothing unchanged is
// fetched twice and nothing changed is shown stale from the HTTP cache.
'use strict';
(function () {
  const INDEX_COLOURS = ['#1a9850', '#91cf60', '#fee08b', '#fc8d59', '#d73027', '#7b3294'];
  const NO_VALUE = '#999999';
  const CATEGORY_COLOURS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
  const RESULT = '#e6550d', ROUTE = '#2a6fdb', NEAREST = '#7b3294', TRIP = '#2a6fdb';
  // Reach bands, the nearest first: a sequential blue scheme (ColorBrewer Blues), drawn with
  // opacity and stacked, the smallest on top, so the centre reads darkest.
  const BAND_COLOURS = ['#08519c', '#3182bd', '#6baed6'];
  const BAND_OPACITY = 0.3;
  const TRACE_RAW = '#333333', TRACE_MATCHED = '#d7301f';
  // /match: at most this many fixes in all, and request targets under this many bytes.
  const MATCH_MAX_POINTS = 10000, MATCH_MAX_TARGET = 7500;
  // The demo's view, when the store has no extent to fit (an empty store).
  const FALLBACK_VIEW = { center: [14.4214, 50.0875], zoom: 11 };
  // Named features drawn as HTML labels: source (a store layer), the property named, zooms.
  // In order of priority: where two would overlap, the first one is drawn.
  const LABELS = [
    { source: 'stations', key: 'name', minzoom: 11.5, maxzoom: 24, className: 'label-station', point: true },
    { source: 'pavilions', key: 'name', minzoom: 16, maxzoom: 24, className: 'label-pavilion', wrap: 140 },
    { source: 'districts', key: 'NAZEV_MC', minzoom: 11.5, maxzoom: 14.5, className: 'label-district' },
  ];

  const $ = (id) => document.getElementById(id);
  const panel = $('panel');
  const timings = { load_ms: null, style_ms: null, map_created_ms: null, style_loaded_ms: null, map_load_ms: null, first_render_ms: null, layers_ms: null, panel_ms: [], live_ms: [] };
  // For the browser test and the curious: the map, the timings, the last route asked for.
  const exposed = { map: null, timings, lastRoute: null, sequence: null, changes: 0, results: () => results.features };
  window.vltava = exposed;

  // ---- the API ----
  class APIError extends Error {
    constructor(problem, status) {
      // Problem details (detail, title) or OSRM's errors (message).
      super((problem && (problem.detail || problem.message || problem.title)) || ('HTTP ' + status));
      this.problem = problem || {};
      this.status = status;
    }
  }
  // A layer or column name in query text: quoted, so that it stays a name whatever it holds
  // ("" for a quote inside). Values go in as bound parameters ($1), never into the text.
  const quoted = (name) => '"' + String(name).replaceAll('"', '""') + '"';

  async function api(path, options) {
    const response = await fetch(path, options);
    const type = response.headers.get('Content-Type') || '';
    const body = type.includes('json') ? await response.json() : await response.text();
    if (!response.ok) throw new APIError(typeof body === 'object' ? body : null, response.status);
    return body;
  }
  // The server's clock when it answered (its Date header, to the second), in ms; null without one.
  let serverDate = null;
  async function query(text, params) {
    return api('/v1/query', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(params ? { query: text, params } : { query: text }) });
  }

  // ---- small DOM helpers (text is always set as text, never as HTML) ----
  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes || {})) {
      if (key === 'class') node.className = value; else node.setAttribute(key, value);
    }
    for (const child of children) if (child != null) node.append(child instanceof Node ? child : String(child));
    return node;
  }
  function showError(error, text) {
    const box = el('div', { class: 'error' }, error.message);
    const p = error.problem || {};
    if (text && p.line && p.column) {
      const line = text.split('\n')[p.line - 1] || '';
      const caret = ' '.repeat(p.column - 1) + '^'.repeat(Math.max(1, p.length || 1));
      box.append(el('pre', { class: 'caret' }, line + '\n' + caret));
    }
    if (p.hint) box.append(el('div', {}, 'hint: ' + p.hint));
    panel.replaceChildren(box);
  }
  function metres(m) { return m >= 1000 ? (m / 1000).toFixed(2) + ' km' : m.toFixed(1) + ' m'; }
  function featureName(properties) {
    for (const key of ['name', 'NAZEV_MC', 'NAZEV_1', 'code', 'CODE', 'kind']) {
      if (properties && properties[key] != null && properties[key] !== '') return String(properties[key]);
    }
    return '';
  }

  // ---- the URL ----
  const hash = new URLSearchParams(location.hash.slice(1));
  const state = {
    mode: ['inspect', 'route', 'nearest', 'reach', 'trip'].includes(hash.get('mode')) ? hash.get('mode') : 'inspect',
    minutes: ['5', '10', '15'].includes(hash.get('minutes')) ? Number(hash.get('minutes')) : 10,
    profile: hash.get('profile') === 'wheelchair' ? 'wheelchair' : 'foot',
    nearestLayer: hash.get('nearest') || '',
    k: Math.min(50, Math.max(1, parseInt(hash.get('k') || '3', 10) || 3)),
    shown: new Set((hash.get('layers') || '').split(',').filter(Boolean)),
  };
  const layersInURL = hash.has('layers');
  const view = (hash.get('map') || '').split('/').map(Number);
  const hasView = view.length === 3 && view.every(Number.isFinite) && Math.abs(view[1]) <= 85 && Math.abs(view[2]) <= 180;
  let map = null;

  function writeURL() {
    if (!map) return;
    const c = map.getCenter();
    const params = new URLSearchParams();
    params.set('map', `${Math.round(map.getZoom() * 100) / 100}/${c.lat.toFixed(5)}/${c.lng.toFixed(5)}`);
    params.set('mode', state.mode);
    if (state.shown.size) params.set('layers', [...state.shown].join(','));
    if (state.mode === 'route' || state.mode === 'reach') params.set('profile', state.profile);
    if (state.mode === 'reach') params.set('minutes', String(state.minutes));
    if (state.mode === 'nearest') { params.set('nearest', state.nearestLayer); params.set('k', String(state.k)); }
    history.replaceState(null, '', '#' + params.toString().replace(/%2F/g, '/').replace(/%2C/g, ','));
  }

  // ---- results: one GeoJSON source, features told apart by their "role" ----
  const results = { type: 'FeatureCollection', features: [] };
  function setResults(features) {
    results.features = features;
    const source = map && map.getSource('results');
    if (source) source.setData(results);
  }
  const addResults = (...features) => setResults(results.features.concat(features));
  const clearResults = () => setResults([]);
  // A filter on the geometry's type, its multi form included (MapLibre names both).
  const isType = (type) => ['match', ['geometry-type'], [type, 'Multi' + type], true, false];
  const point = (lon, lat, role, properties) => ({ type: 'Feature', properties: Object.assign({ role }, properties), geometry: { type: 'Point', coordinates: [lon, lat] } });
  function addResultLayers() {
    map.addSource('results', { type: 'geojson', data: results });
    const role = ['get', 'role'];
    const colour = ['match', role, 'route', ROUTE, 'route-start', ROUTE, 'route-end', '#d73027', 'trip', TRIP,
      'nearest-line', NEAREST, 'nearest-target', NEAREST, 'snapped', '#000000', 'clicked', '#000000', 'reach-origin', '#000000', RESULT];
    // The reach bands: one layer each, the largest first (under), the smallest last (on top).
    for (let bucket = BAND_COLOURS.length - 1; bucket >= 0; bucket--) {
      const filter = ['all', ['==', role, 'band'], ['==', ['get', 'bucket'], bucket]];
      map.addLayer({ id: `reach-band-${bucket}`, type: 'fill', source: 'results', filter, paint: { 'fill-color': BAND_COLOURS[bucket], 'fill-opacity': BAND_OPACITY } });
      map.addLayer({ id: `reach-band-${bucket}-edge`, type: 'line', source: 'results', filter, paint: { 'line-color': BAND_COLOURS[bucket], 'line-width': 1.2, 'line-opacity': 0.8 } });
    }
    map.addLayer({ id: 'results-fill', type: 'fill', source: 'results', filter: ['all', isType('Polygon'), ['!=', role, 'band']], paint: { 'fill-color': colour, 'fill-opacity': 0.3 } });
    map.addLayer({ id: 'results-casing', type: 'line', source: 'results', filter: ['match', role, ['route', 'trip'], true, false], layout: { 'line-join': 'round', 'line-cap': 'round' }, paint: { 'line-color': '#ffffff', 'line-width': 9, 'line-opacity': 0.9 } });
    map.addLayer({ id: 'results-line', type: 'line', source: 'results', filter: ['all', ['!', isType('Point')], ['match', role, ['nearest-line', 'band'], false, true]], layout: { 'line-join': 'round', 'line-cap': 'round' }, paint: { 'line-color': colour, 'line-width': ['match', role, ['route', 'trip'], 5, 3], 'line-opacity': 0.9 } });
    map.addLayer({ id: 'results-dashed', type: 'line', source: 'results', filter: ['==', role, 'nearest-line'], paint: { 'line-color': NEAREST, 'line-width': 2, 'line-dasharray': [2.5, 2] } });
    map.addLayer({ id: 'results-point', type: 'circle', source: 'results', filter: isType('Point'), paint: {
      'circle-color': ['match', role, 'snapped', '#ffffff', 'clicked', '#000000', colour],
      'circle-radius': ['match', role, 'snapped', 4, 'clicked', 4, 6],
      'circle-stroke-color': ['match', role, 'snapped', '#000000', '#ffffff'], 'circle-stroke-width': 2 } });
    // The GPX trace: its own source, the raw fixes dashed and thin, the matched paths solid.
    map.addSource('trace', { type: 'geojson', data: trace });
    map.addLayer({ id: 'trace-raw', type: 'line', source: 'trace', filter: ['==', role, 'trace-raw'], layout: { 'line-join': 'round' }, paint: { 'line-color': TRACE_RAW, 'line-width': 1.5, 'line-dasharray': [3, 2], 'line-opacity': 0.85 } });
    map.addLayer({ id: 'trace-matched-casing', type: 'line', source: 'trace', filter: ['==', role, 'trace-matched'], layout: { 'line-join': 'round', 'line-cap': 'round' }, paint: { 'line-color': '#ffffff', 'line-width': 7, 'line-opacity': 0.8 } }, 'trace-raw');
    map.addLayer({ id: 'trace-matched', type: 'line', source: 'trace', filter: ['==', role, 'trace-matched'], layout: { 'line-join': 'round', 'line-cap': 'round' }, paint: { 'line-color': TRACE_MATCHED, 'line-width': 4, 'line-opacity': 0.9 } }, 'trace-raw');
  }
  const trace = { type: 'FeatureCollection', features: [] };
  function setTrace(features) {
    trace.features = features;
    const source = map && map.getSource('trace');
    if (source) source.setData(trace);
  }

  // ---- layers ----
  // name -> { info, kind: 'features'|'tileset', styleLayers: [ids], legend (element), colouring }
  const entries = new Map();
  const styledSources = new Set();     // store layers and tile sets the style draws
  const featureLayers = new Set();     // names of the store's feature layers (tiles revalidated)
  const timeSeriesOf = new Map();      // table name -> its point layer (observations -> stations)
  const aqiLayers = new Set();         // layers coloured by LATEST(aqi) through the feature state
  const tileURLs = new Map();          // source id -> its tile URLs

  function sourceNameOfTiles(url) {
    const match = /\/v1\/tiles\/([^/?#]+)\//.exec(url);
    return match ? decodeURIComponent(match[1]) : null;
  }

  // A layer's colouring when the style does not cover it: by the latest air-quality index for
  // a layer with a time series that has one, else by its first class- or index-like column.
  function colouringOf(info) {
    const series = info.time_series && info.time_series.columns || [];
    if (series.includes('aqi')) return { column: 'LATEST(aqi)', state: 'aqi', numeric: true };
    const column = (info.columns || []).find((c) => /^(class|trida|category|zone_class|index|aqi|typ|kind)$/i.test(c.name));
    if (!column) return null;
    return { column: column.name, numeric: column.type === 'INTEGER' || column.type === 'REAL' };
  }
  const indexColour = (value) => ['match', ['round', ['to-number', value, 0]], 1, INDEX_COLOURS[0], 2, INDEX_COLOURS[1], 3, INDEX_COLOURS[2], 4, INDEX_COLOURS[3], 5, INDEX_COLOURS[4], 6, INDEX_COLOURS[5], NO_VALUE];

  // The plain style of a layer the style does not cover: its family's geometry in one colour,
  // or coloured by a class column (categories read with one GROUP BY query).
  async function addDefaultLayers(entry) {
    const info = entry.info;
    const name = info.name;
    tileURLs.set(name, [location.origin + `/v1/tiles/${encodeURIComponent(name)}/{z}/{x}/{y}.mvt`]);
    map.addSource(name, defined({ type: 'vector', tiles: tileURLs.get(name), maxzoom: 16, bounds: info.bounds }));
    const colouring = colouringOf(info);
    let colour = '#3366cc', legend = null;
    if (colouring && colouring.state) {
      colour = indexColour(['feature-state', colouring.state]);
      legend = { title: colouring.column, entries: INDEX_COLOURS.map((c, i) => [String(i + 1), c]).concat([['no value', NO_VALUE]]) };
      aqiLayers.add(name);
    } else if (colouring && colouring.numeric) {
      colour = indexColour(['get', colouring.column]);
      legend = { title: colouring.column, entries: INDEX_COLOURS.map((c, i) => [String(i + 1), c]) };
    } else if (colouring) {
      try {
        const answer = await query(`FIND ${quoted(name)} RETURN ${quoted(colouring.column)}, COUNT(*) GROUP BY ${quoted(colouring.column)} ORDER BY COUNT(*) DESC LIMIT 10`);
        const values = answer.rows.map((row) => row[colouring.column]).filter((v) => v != null);
        if (values.length) {
          const pairs = values.map((v, i) => [String(v), CATEGORY_COLOURS[i % CATEGORY_COLOURS.length]]);
          colour = ['match', ['to-string', ['get', colouring.column]], ...pairs.flat(), NO_VALUE];
          legend = { title: colouring.column, entries: pairs };
        }
      } catch (error) { /* uncoloured: the layer still draws */ }
    }
    const common = { source: name, 'source-layer': name, layout: { visibility: 'none' } };
    const ids = [];
    const add = (layer) => { map.addLayer(Object.assign({}, common, layer), 'results-fill'); ids.push(layer.id); };
    if (info.family === 'polygons' || info.family === 'mixed') {
      add({ id: `default-${name}-fill`, type: 'fill', filter: isType('Polygon'), paint: { 'fill-color': colour, 'fill-opacity': 0.35 } });
      add({ id: `default-${name}-outline`, type: 'line', filter: isType('Polygon'), paint: { 'line-color': colouring ? '#333333' : colour, 'line-width': 1 } });
    }
    if (info.family === 'lines' || info.family === 'mixed') {
      add({ id: `default-${name}-line`, type: 'line', filter: isType('LineString'), paint: { 'line-color': colour, 'line-width': 2.5 } });
    }
    if (info.family === 'points' || info.family === 'mixed') {
      add({ id: `default-${name}-point`, type: 'circle', filter: isType('Point'), paint: { 'circle-color': colour, 'circle-radius': 6, 'circle-stroke-color': '#333333', 'circle-stroke-width': 1 } });
    }
    entry.styleLayers = ids;
    renderLegend(entry, legend);
  }

  // A source's options without the ones a TileJSON left out (the style's validation refuses
  // a key whose value is undefined or null).
  const defined = (options) => Object.fromEntries(Object.entries(options).filter(([, v]) => v != null));

  // A tile set the style does not cover: vector tiles with a plain style per tile layer, images
  // as they are.
  function addDefaultTileset(entry, tilejson) {
    const name = entry.info.name;
    const ids = [];
    const vectorLayers = tilejson.vector_layers || [];
    if (!vectorLayers.length) {
      map.addSource(name, defined({ type: 'raster', tiles: tilejson.tiles, tileSize: 256, minzoom: tilejson.minzoom, maxzoom: tilejson.maxzoom, bounds: tilejson.bounds, attribution: tilejson.attribution }));
      map.addLayer({ id: `default-${name}`, type: 'raster', source: name, layout: { visibility: 'none' } }, firstDataLayer());
      ids.push(`default-${name}`);
    } else {
      map.addSource(name, defined({ type: 'vector', tiles: tilejson.tiles, minzoom: tilejson.minzoom, maxzoom: tilejson.maxzoom, bounds: tilejson.bounds, attribution: tilejson.attribution }));
      for (const layer of vectorLayers) {
        const common = { source: name, 'source-layer': layer.id, layout: { visibility: 'none' } };
        for (const [suffix, type, filter, paint] of [
          ['fill', 'fill', 'Polygon', { 'fill-color': '#b9c7a8', 'fill-opacity': 0.5 }],
          ['line', 'line', 'LineString', { 'line-color': '#8c8c8c', 'line-width': 1 }],
          ['point', 'circle', 'Point', { 'circle-color': '#666666', 'circle-radius': 2 }]]) {
          const id = `default-${name}-${layer.id}-${suffix}`;
          map.addLayer(Object.assign({ id, type, filter: isType(filter), paint }, common), firstDataLayer());
          ids.push(id);
        }
      }
    }
    entry.styleLayers = ids;
  }
  // Where a tile set's default layers go: under the store's layers.
  function firstDataLayer() {
    const layer = map.getStyle().layers.find((l) => l.source && !l.id.startsWith('default-') && entries.has(l.source) && entries.get(l.source).kind === 'features');
    return layer ? layer.id : 'results-fill';
  }

  function renderLegend(entry, legend) {
    if (!legend) return;
    const rows = legend.entries.map(([value, colour]) => el('div', {}, el('span', { class: 'swatch', style: 'background:' + colour }), value));
    entry.legend.replaceChildren(el('div', {}, legend.title + ':'), ...rows);
  }

  // The latest air-quality index of each station, as the feature state the style colours by.
  async function refreshLatest(name) {
    if (!map.getSource(name)) return;
    try {
      const answer = await query(`FIND ${quoted(name)} RETURN fid, LATEST(${quoted('aqi')})`);
      for (const row of answer.rows) {
        if (row.fid == null) continue;
        map.setFeatureState({ source: name, sourceLayer: name, id: row.fid }, { aqi: row.latest_aqi == null ? null : Math.round(row.latest_aqi) });
      }
    } catch (error) {
      entries.get(name)?.legend.append(el('div', { class: 'error' }, error.message));
    }
  }

  function setVisible(name, on) {
    const entry = entries.get(name);
    if (!entry) return;
    for (const id of entry.styleLayers) if (map.getLayer(id)) map.setLayoutProperty(id, 'visibility', on ? 'visible' : 'none');
    if (on) state.shown.add(name); else state.shown.delete(name);
    entry.box.checked = on;
    updateLabels();
    writeURL();
  }

  // ---- labels: HTML markers for the few named features ----
  const markers = new Map();   // key -> Marker
  let labelTimer = null;
  function updateLabels() {
    if (labelTimer) return;
    labelTimer = setTimeout(() => { labelTimer = null; drawLabels(); }, 60);
  }
  function drawLabels() {
    if (!map) return;
    const zoom = map.getZoom();
    const canvas = map.getCanvas();
    const width = canvas.clientWidth, height = canvas.clientHeight;
    const wanted = new Map();
    const placed = [];   // screen boxes taken, [x0, y0, x1, y1]: the first label there wins
    const free = (box) => !placed.some((b) => box[0] < b[2] && b[0] < box[2] && box[1] < b[3] && b[1] < box[3]);
    for (const label of LABELS) {
      if (!state.shown.has(label.source) || !map.getSource(label.source) || zoom < label.minzoom || zoom >= label.maxzoom) continue;
      const sums = new Map();   // id -> [sum of area * x, sum of area * y, sum of area, name]
      for (const feature of map.querySourceFeatures(label.source, { sourceLayer: label.source })) {
        const text = feature.properties[label.key];
        if (feature.id == null || text == null || text === '') continue;
        const s = sums.get(feature.id) || [0, 0, 0, String(text)];
        if (label.point) {
          if (feature.geometry.type === 'Point') { s[0] = feature.geometry.coordinates[0]; s[1] = feature.geometry.coordinates[1]; s[2] = 1; }
        } else {
          const polygons = feature.geometry.type === 'Polygon' ? [feature.geometry.coordinates] : feature.geometry.type === 'MultiPolygon' ? feature.geometry.coordinates : [];
          for (const rings of polygons) {
            const ring = rings[0];
            for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
              const cross = ring[j][0] * ring[i][1] - ring[i][0] * ring[j][1];
              s[0] += (ring[j][0] + ring[i][0]) * cross;
              s[1] += (ring[j][1] + ring[i][1]) * cross;
              s[2] += 3 * cross;
            }
          }
        }
        sums.set(feature.id, s);
      }
      // Points keep their own spot free (a station's circle is never under another label).
      const boxes = [];
      for (const [id, [x, y, a, text]] of sums) {
        if (!a) continue;
        const lngLat = [x / a, y / a];
        const p = map.project(lngLat);
        if (p.x < -100 || p.y < -40 || p.x > width + 100 || p.y > height + 40) continue;
        // The label's box on screen, estimated from its length (11–12 px type).
        const w = Math.min(label.wrap || Infinity, text.length * 6.6 + 4), lines = label.wrap ? Math.ceil(text.length * 6.6 / label.wrap) : 1;
        const h = lines * 14;
        const box = label.point ? [p.x - w / 2, p.y + 9, p.x + w / 2, p.y + 9 + h] : [p.x - w / 2, p.y - h / 2, p.x + w / 2, p.y + h / 2];
        if (label.point) placed.push([p.x - 9, p.y - 9, p.x + 9, p.y + 9]);
        boxes.push({ key: `${label.source}/${id}`, lngLat, text, box });
      }
      for (const b of boxes) {
        if (!free(b.box)) continue;
        placed.push(b.box);
        wanted.set(b.key, { lngLat: b.lngLat, text: b.text, label });
      }
    }
    for (const [key, marker] of markers) if (!wanted.has(key)) { marker.remove(); markers.delete(key); }
    for (const [key, { lngLat, text, label }] of wanted) {
      const marker = markers.get(key);
      if (marker) { marker.setLngLat(lngLat); continue; }
      const element = el('div', { class: 'map-label ' + label.className }, text);
      markers.set(key, new maplibregl.Marker({ element, anchor: label.point ? 'top' : 'center', offset: label.point ? [0, 9] : [0, 0] })
        .setLngLat(lngLat).addTo(map));
    }
  }

  // ---- start: the layers, the style, the map ----
  async function start() {
    const started = performance.now();
    // The tile workers start while the layers and the style are on their way: two at least
    // (MapLibre takes half the cores, one on a 2-core machine, and the zoo's dense tiles then
    // wait for each other).
    if (maplibregl.getWorkerCount() < 2) maplibregl.setWorkerCount(2);
    maplibregl.prewarm();
    const layersResponse = fetch('/v1/layers').then(async (response) => {
      serverDate = Date.parse(response.headers.get('Date') || '') || null;
      if (!response.ok) throw new APIError(await response.json().catch(() => null), response.status);
      return response.json();
    });
    const [answer, style] = await Promise.all([layersResponse, api('/map/style.json')]);
    timings.style_ms = performance.now() - started;
    const features = answer.layers.filter((l) => l.kind === 'features' && l.bounds);
    for (const info of answer.layers) if (info.time_series_of) timeSeriesOf.set(info.name, info.time_series_of);
    for (const info of features) featureLayers.add(info.name);
    for (const [id, source] of Object.entries(style.sources || {})) {
      const name = sourceNameOfTiles((source.tiles || [])[0] || '');
      if (name) styledSources.add(name);
      if (source.tiles) tileURLs.set(id, source.tiles);
    }
    // The view: the URL's, else the store's extent (its feature layers' bounds).
    const options = {
      container: 'map', style, hash: false, attributionControl: { compact: false },
      canvasContextAttributes: { preserveDrawingBuffer: true },   // the browser test reads the canvas's pixels
      validateStyle: true, fadeDuration: 0, maxPitch: 0, dragRotate: false, pitchWithRotate: false, touchPitch: false,
      transformRequest: (url, type) => {
        // Feature layers change under writes: revalidate the browser's copy (304 when unchanged).
        if (type === 'Tile' && featureLayers.has(sourceNameOfTiles(url))) return { url, cache: 'no-cache' };
        return { url };
      },
    };
    if (hasView) Object.assign(options, { center: [view[2], view[1]], zoom: view[0] });
    else if (features.length) {
      const b = features.reduce((a, l) => [Math.min(a[0], l.bounds[0]), Math.min(a[1], l.bounds[1]), Math.max(a[2], l.bounds[2]), Math.max(a[3], l.bounds[3])], [180, 90, -180, -90]);
      Object.assign(options, { bounds: [[b[0], b[1]], [b[2], b[3]]], fitBoundsOptions: { padding: 10 } });
    } else Object.assign(options, FALLBACK_VIEW);
    map = new maplibregl.Map(options);
    exposed.map = map;
    timings.map_created_ms = performance.now();
    map.addControl(new maplibregl.NavigationControl({ showCompass: false }), 'top-right');
    map.addControl(new maplibregl.ScaleControl({ unit: 'metric' }), 'bottom-left');
    // First render: every tile of the first view loaded and drawn (navigation start = 0).
    map.once('idle', () => { timings.first_render_ms = performance.now(); });
    map.once('load', () => { timings.map_load_ms = performance.now(); });
    if (!map.isStyleLoaded()) await new Promise((resolve) => map.once('style.load', resolve));
    timings.style_loaded_ms = performance.now();
    addResultLayers();
    addLiveLayers();
    addIndoorLayers();

    // The layer list: the store's feature layers, then its tile sets.
    const list = $('layer-list');
    const select = $('nearest-layer');
    for (const info of features) select.append(el('option', { value: info.name }, info.name));
    if (!state.nearestLayer && features.length) state.nearestLayer = (features.find((l) => l.time_series) || features[0]).name;
    select.value = state.nearestLayer;
    const styleLayers = map.getStyle().layers;
    const items = features.map((info) => ({ info, kind: 'features', count: info.count }))
      .concat(answer.tilesets.map((set) => ({ info: set, kind: 'tileset', count: null })));
    for (const item of items) {
      const name = item.info.name;
      const box = el('input', { type: 'checkbox', id: 'layer-' + name });
      const legend = el('div', { class: 'legend' });
      const entry = { info: item.info, kind: item.kind, box, legend, styleLayers: styleLayers.filter((l) => l.source === name).map((l) => l.id) };
      entries.set(name, entry);
      for (const l of styleLayers) if (l.source === name && l.metadata && l.metadata['vltava:legend']) renderLegend(entry, l.metadata['vltava:legend']);
      for (const l of styleLayers) if (l.source === name && l.metadata && l.metadata['vltava:state'] === 'aqi') aqiLayers.add(name);
      box.addEventListener('change', () => setVisible(name, box.checked));
      list.append(el('li', {}, box, ' ', el('label', { for: 'layer-' + name }, name),
        item.count != null ? el('span', { class: 'count' }, ` ${item.count}`) : null, legend));
    }
    // What the style does not cover gets a default style (hidden until ticked).
    await Promise.all(items.filter((item) => !map.getSource(item.info.name)).map(async (item) => {
      const entry = entries.get(item.info.name);
      try {
        if (item.kind === 'features') await addDefaultLayers(entry);
        else addDefaultTileset(entry, await api(item.info.tilejson));
      } catch (error) { entry.legend.replaceChildren(el('div', { class: 'error' }, error.message)); }
    }));
    // A first visit shows what the style draws: the base and the data over it.
    if (!layersInURL) for (const [name, entry] of entries) if (styledSources.has(name) && entry.styleLayers.length) state.shown.add(name);
    for (const [name] of entries) setVisible(name, state.shown.has(name));
    for (const name of aqiLayers) refreshLatest(name);
    map.on('moveend', () => { writeURL(); updateLabels(); });
    map.on('sourcedata', (event) => { if (event.isSourceLoaded && LABELS.some((l) => l.source === event.sourceId)) updateLabels(); });
    map.on('click', onClick);
    timings.layers_ms = performance.now() - started;
    writeURL();
    listen(answer.sequence);
    startLive();
    startIndoor();
  }

  // ---- live: the change feed ----
  const pending = new Set();
  let flushTimer = null;
  // `since`: the store's sequence number when the layers were read, when the server says it;
  // else the feed starts at the store's first change, and the changes made before the page
  // read its layers (their `at` before the server's Date of that answer, less its second)
  // are passed over: the tiles asked since then already hold them.
  function listen(since) {
    if (typeof EventSource === 'undefined') return;
    const known = Number.isInteger(since);
    const feed = new EventSource('/v1/changes' + (known ? `?since=${since}` : ''));
    feed.addEventListener('change', (event) => {
      let change;
      try { change = JSON.parse(event.data); } catch (error) { return; }
      exposed.sequence = change.sequence;
      if (!known && serverDate !== null && Date.parse(change.at) < serverDate - 1000) return;
      exposed.changes++;
      pending.add(change.layer);
      if (!flushTimer) flushTimer = setTimeout(flush, 30);
    });
  }
  function flush() {
    flushTimer = null;
    const started = performance.now();
    const later = [];
    for (const layer of pending) {
      const parent = timeSeriesOf.get(layer);
      if (parent && aqiLayers.has(parent)) { refreshLatest(parent); continue; }
      const source = map.getSource(layer);
      if (!source || source.type !== 'vector' || !featureLayers.has(layer) || !tileURLs.has(layer)) continue;
      // A source still reading its metadata would abort that read: try again in a moment.
      if (!source.loaded()) { later.push(layer); continue; }
      // The same URLs: the tiles are asked again, revalidated (see transformRequest).
      source.setTiles(tileURLs.get(layer));
      if (aqiLayers.has(layer)) refreshLatest(layer);
      map.once('idle', () => timings.live_ms.push(performance.now() - started));
    }
    pending.clear();
    for (const layer of later) pending.add(layer);
    if (later.length) flushTimer = setTimeout(flush, 100);
  }

  // ---- modes ----
  let routeStart = null;
  function setMode(mode) {
    state.mode = mode;
    routeStart = null;
    clearStops();
    for (const button of document.querySelectorAll('#modes button')) button.classList.toggle('active', button.dataset.mode === mode);
    for (const label of document.querySelectorAll('#mode-options label')) label.classList.toggle('shown', label.dataset.for.split(' ').includes(mode));
    const hints = { inspect: 'Click the map: what is here.', route: 'Click the start, then the destination.', nearest: 'Click the map: the nearest features.',
      reach: 'Click the map: where you can walk to in the time chosen.', trip: 'Click the stops (the first is the start), then "Best order".' };
    panel.replaceChildren(el('p', { class: 'hint' }, hints[mode]));
    clearResults();
    writeURL();
  }
  for (const button of document.querySelectorAll('#modes button')) button.addEventListener('click', () => setMode(button.dataset.mode));
  $('profile').value = state.profile;
  $('profile').addEventListener('change', () => { state.profile = $('profile').value; writeURL(); });
  $('reach-minutes').value = String(state.minutes);
  $('reach-minutes').addEventListener('change', () => { state.minutes = Number($('reach-minutes').value); writeURL(); });
  $('trip-best').addEventListener('click', () => bestOrder());
  $('trip-clear').addEventListener('click', () => { clearStops(); clearResults(); panel.replaceChildren(el('p', { class: 'hint' }, 'Click the stops (the first is the start), then "Best order".')); });
  $('nearest-layer').addEventListener('change', () => { state.nearestLayer = $('nearest-layer').value; writeURL(); });
  $('nearest-k').value = String(state.k);
  $('nearest-k').addEventListener('change', () => {
    state.k = Math.min(50, Math.max(1, parseInt($('nearest-k').value, 10) || 1));
    $('nearest-k').value = String(state.k);
    writeURL();
  });

  function onClick(event) {
    const lon = event.lngLat.lng, lat = event.lngLat.lat;
    if (state.mode === 'inspect') inspect(lon, lat);
    else if (state.mode === 'route') routeClick(lon, lat);
    else if (state.mode === 'reach') reach(lon, lat);
    else if (state.mode === 'trip') addStop(lon, lat);
    else nearest(lon, lat);
  }

  // ---- "where am I": /v1/here ----
  async function inspect(lon, lat) {
    const started = performance.now();
    setResults([point(lon, lat, 'clicked')]);
    let here;
    try {
      here = await api(`/v1/here?lon=${lon.toFixed(6)}&lat=${lat.toFixed(6)}`);
    } catch (error) { showError(error); return; }
    const parts = [el('h2', {}, `${lon.toFixed(5)}, ${lat.toFixed(5)}`)];
    if (here.area) parts.push(el('p', { class: here.area.inside ? 'inside' : 'outside' }, here.area.message + (here.area.reason ? ` (${here.area.reason})` : '')));
    const places = el('table', { id: 'here-places' });
    for (const entry of here.containing || []) {
      for (const feature of entry.features) places.append(el('tr', {}, el('td', {}, entry.layer), el('td', { class: 'place' }, featureName(feature.properties))));
    }
    if (places.childElementCount) parts.push(places); else parts.push(el('p', {}, 'No polygon contains this point.'));
    const station = here.nearest_station;
    if (station) {
      const p = station.properties;
      parts.push(el('h2', {}, `Nearest station: ${p.code || ''} ${p.name || ''}`), el('p', {}, `${metres(p.distance_m)} away, data until ${p.observed_until || '—'}`));
      const latest = el('table', { id: 'latest' });
      const measured = [];
      for (const [column, value] of Object.entries(p.latest || {})) {
        if (value && value.value != null) { latest.append(el('tr', {}, el('td', {}, column), el('td', {}, value.value))); measured.push(column); }
      }
      parts.push(latest);
      const pollutants = measured.filter((c) => c !== 'aqi');
      if (pollutants.length) {
        const select = el('select', { id: 'chart-column', 'aria-label': 'pollutant' }, ...pollutants.map((c) => el('option', { value: c }, c)));
        select.value = pollutants.includes('no2') ? 'no2' : pollutants[0];
        const chart = el('div', { id: 'chart' });
        parts.push(el('div', {}, '24 hours of ', select), chart);
        const layer = p.layer || 'stations';
        const draw = () => drawHistory(chart, layer, station.id, select.value);
        select.addEventListener('change', draw);
        draw();
      }
    }
    panel.replaceChildren(...parts);
    timings.panel_ms.push(performance.now() - started);
  }

  async function drawHistory(target, layer, fid, column) {
    try {
      const answer = await query(`FIND ${quoted(layer)} WHERE fid = $1 RETURN HISTORY(${quoted(column)}, 24 h)`, [Number(fid)]);
      const series = (answer.rows[0] || {})[`history_${column}_24h`] || [];
      target.replaceChildren(chartSVG(series, column));
    } catch (error) {
      target.replaceChildren(el('div', { class: 'error' }, error.message));
    }
  }

  // An inline SVG line chart of [end time, value] pairs.
  function chartSVG(series, column) {
    const ns = 'http://www.w3.org/2000/svg';
    const width = 300, height = 120, left = 34, bottom = 18, top = 8, right = 6;
    const svg = document.createElementNS(ns, 'svg');
    svg.setAttribute('class', 'chart');
    svg.setAttribute('width', width); svg.setAttribute('height', height);
    svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
    const add = (name, attributes, text) => {
      const node = document.createElementNS(ns, name);
      for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, v);
      if (text != null) node.textContent = text;
      svg.append(node);
      return node;
    };
    const points = series.filter((p) => p[1] != null).map((p) => [Date.parse(p[0]), Number(p[1])]);
    if (!points.length) { add('text', { x: left, y: height / 2 }, `no ${column} values in 24 h`); return svg; }
    const t0 = Math.min(...points.map((p) => p[0])), t1 = Math.max(...points.map((p) => p[0]));
    const v1 = Math.max(...points.map((p) => p[1])) || 1;
    const x = (t) => left + (t1 > t0 ? (t - t0) / (t1 - t0) : 0.5) * (width - left - right);
    const y = (v) => height - bottom - (v / v1) * (height - bottom - top);
    add('line', { x1: left, y1: height - bottom, x2: width - right, y2: height - bottom, stroke: '#999' });
    add('line', { x1: left, y1: top, x2: left, y2: height - bottom, stroke: '#999' });
    add('text', { x: 2, y: top + 8, 'font-size': 10 }, v1.toFixed(0));
    add('text', { x: 2, y: height - bottom, 'font-size': 10 }, '0');
    const hour = (t) => new Date(t).toISOString().slice(11, 16);
    add('text', { x: left, y: height - 4, 'font-size': 10 }, hour(t0));
    add('text', { x: width - right - 30, y: height - 4, 'font-size': 10 }, hour(t1) + 'Z');
    add('polyline', { points: points.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(' '), fill: 'none', stroke: '#d73027', 'stroke-width': 2, class: 'series' });
    add('text', { x: width - right - 40, y: top + 8, 'font-size': 10 }, `${column} µg/m³`);
    return svg;
  }

  // ---- "how do I get there": /v1/route ----
  async function routeClick(lon, lat) {
    if (!routeStart) {
      routeStart = [lon, lat];
      setResults([point(lon, lat, 'route-start')]);
      panel.replaceChildren(el('p', { class: 'hint' }, 'Now click the destination.'));
      return;
    }
    const from = routeStart.map((v) => +v.toFixed(6));
    routeStart = null;
    addResults(point(lon, lat, 'route-end'));
    const started = performance.now();
    try {
      const answer = await api(`/v1/route?from=${from[0].toFixed(6)},${from[1].toFixed(6)}&to=${lon.toFixed(6)},${lat.toFixed(6)}&profile=${state.profile}`);
      lon = +lon.toFixed(6); lat = +lat.toFixed(6);
      const route = answer.routes[0];
      exposed.lastRoute = { from, to: [lon, lat], profile: state.profile, distance: route.distance };
      addResults({ type: 'Feature', properties: { role: 'route', distance: route.distance }, geometry: route.geometry },
        ...answer.waypoints.map((w) => point(w.location[0], w.location[1], 'snapped', { distance: w.distance })));
      panel.replaceChildren(
        el('h2', {}, `Route (${answer.profile})`),
        el('p', { id: 'route-summary' }, el('span', { id: 'route-distance' }, route.distance.toFixed(3)), ' m, ',
          el('span', { id: 'route-duration' }, (route.duration / 60).toFixed(1)), ' min on ', answer.network));
      timings.panel_ms.push(performance.now() - started);
    } catch (error) { showError(error); }
  }

  // ---- "what is near me": /v1/layers/{layer}/nearest ----
  async function nearest(lon, lat) {
    const layer = state.nearestLayer;
    const started = performance.now();
    setResults([point(lon, lat, 'clicked')]);
    try {
      const answer = await api(`/v1/layers/${encodeURIComponent(layer)}/nearest?lon=${lon.toFixed(6)}&lat=${lat.toFixed(6)}&k=${state.k}`);
      const rows = el('table', { id: 'nearest-list' });
      const drawn = [];
      answer.features.forEach((feature, i) => {
        const target = nearestPoint(feature.geometry, lon, lat);
        if (target) drawn.push({ type: 'Feature', properties: { role: 'nearest-line', rank: i + 1 }, geometry: { type: 'LineString', coordinates: [[lon, lat], target] } });
        if (feature.geometry) drawn.push({ type: 'Feature', properties: { role: 'nearest-target', rank: i + 1 }, geometry: feature.geometry });
        rows.append(el('tr', {}, el('td', {}, i + 1), el('td', { class: 'place' }, featureName(feature.properties) || '#' + feature.id), el('td', {}, metres(feature.properties.distance_m))));
      });
      addResults(...drawn);
      panel.replaceChildren(el('h2', {}, `${answer.features.length} nearest of ${layer}`), rows);
      timings.panel_ms.push(performance.now() - started);
    } catch (error) { showError(error); }
  }

  // Where to draw the line to: the nearest vertex or edge point of the geometry, on a local
  // plane (for drawing only; the distances shown are the engine's great-circle metres).
  function nearestPoint(geometry, lon, lat) {
    if (!geometry) return null;
    const k = Math.cos(lat * Math.PI / 180);
    let best = null, bestD = Infinity;
    const consider = (p) => { const d = ((p[0] - lon) * k) ** 2 + (p[1] - lat) ** 2; if (d < bestD) { bestD = d; best = p; } };
    const segment = (a, b) => {
      const ax = (a[0] - lon) * k, ay = a[1] - lat, bx = (b[0] - lon) * k, by = b[1] - lat;
      const dx = bx - ax, dy = by - ay, len = dx * dx + dy * dy;
      const t = len > 0 ? Math.min(1, Math.max(0, -(ax * dx + ay * dy) / len)) : 0;
      consider([a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])]);
    };
    const walk = (c, depth) => {
      if (depth === 0) { consider(c); return; }
      if (depth === 1) { for (let i = 0; i + 1 < c.length; i++) segment(c[i], c[i + 1]); if (c.length === 1) consider(c[0]); return; }
      for (const part of c) walk(part, depth - 1);
    };
    const depth = { Point: 0, MultiPoint: 1, LineString: 1, MultiLineString: 2, Polygon: 2, MultiPolygon: 3 }[geometry.type];
    if (depth == null) return null;
    if (geometry.type === 'MultiPoint') geometry.coordinates.forEach(consider); else walk(geometry.coordinates, depth);
    return best;
  }

  // The box of GeoJSON features: [west, south, east, north], or null.
  function extent(features) {
    const box = [Infinity, Infinity, -Infinity, -Infinity];
    const visit = (c) => {
      if (typeof c[0] === 'number') { box[0] = Math.min(box[0], c[0]); box[1] = Math.min(box[1], c[1]); box[2] = Math.max(box[2], c[0]); box[3] = Math.max(box[3], c[1]); }
      else for (const part of c) visit(part);
    };
    for (const f of features) if (f.geometry && f.geometry.coordinates) visit(f.geometry.coordinates);
    return Number.isFinite(box[0]) ? box : null;
  }

  // ---- "how far can I walk": /isochrone (GraphHopper's shape) ----
  const minutesText = (seconds) => { const m = seconds / 60; return (Number.isInteger(m) ? String(m) : m.toFixed(1)) + ' min'; };
  let reachAsked = 0;
  async function reach(lon, lat) {
    const started = performance.now();
    const asked = ++reachAsked;
    const seconds = state.minutes * 60;
    setResults([point(lon, lat, 'reach-origin')]);
    panel.replaceChildren(el('p', { class: 'hint' }, `Walking ${state.minutes} min from ${lon.toFixed(5)}, ${lat.toFixed(5)}…`));
    const url = `/isochrone?point=${lat.toFixed(6)},${lon.toFixed(6)}&time_limit=${seconds}&buckets=${BAND_COLOURS.length}&profile=${state.profile}`;
    let answer;
    try { answer = await api(url); } catch (error) { if (asked === reachAsked) showError(error); return; }
    if (asked !== reachAsked || state.mode !== 'reach') return;   // a newer click, or another mode
    const bands = answer.polygons.map((f) => ({ type: 'Feature', properties: { role: 'band', bucket: f.properties.bucket, time: f.properties.time, distance: f.properties.distance }, geometry: f.geometry }));
    setResults([...bands, point(lon, lat, 'reach-origin')]);
    const info = answer.info || {};
    exposed.lastIsochrone = { url, point: [+lon.toFixed(6), +lat.toFixed(6)], time_limit: seconds, profile: state.profile, bands: bands.length, reached_nodes: info.reached_nodes };
    const legend = el('table', { id: 'reach-legend' });
    for (const f of answer.polygons) {
      const bucket = f.properties.bucket;
      legend.append(el('tr', {}, el('td', {}, el('span', { class: 'swatch', style: `background:${BAND_COLOURS[bucket] || RESULT};opacity:${Math.min(1, BAND_OPACITY * (BAND_COLOURS.length - bucket) + 0.1).toFixed(2)}` })),
        el('td', {}, '≤ ' + minutesText(f.properties.time)), el('td', {}, `≈ ${metres(f.properties.distance)} at walking speed`)));
    }
    panel.replaceChildren(
      el('h2', {}, `Reach on ${answer.info && answer.info.profile || state.profile}`),
      el('p', { id: 'reach-summary' }, 'Within ', el('span', { id: 'reach-minutes-shown' }, String(state.minutes)), ' min: ',
        el('span', { id: 'reach-nodes' }, String(info.reached_nodes ?? '?')), ' nodes of ', info.network || 'the network', ' reached.'),
      legend);
    timings.panel_ms.push(performance.now() - started);
  }

  // ---- "in which order": /trip/v1/foot (OSRM's shape) ----
  const TRIP_MAX_STOPS = 100;
  let stops = [];           // [{ lon, lat, marker }] in the order clicked
  let tripAsked = 0;
  function stopMarker(lon, lat, number, ordered) {
    const element = el('div', { class: 'stop-marker' + (ordered ? ' ordered' : ''), 'data-stop': String(number) }, String(number));
    return new maplibregl.Marker({ element }).setLngLat([lon, lat]).addTo(map);
  }
  function clearStops() {
    for (const stop of stops) stop.marker.remove();
    stops = [];
    tripAsked++;
    const best = $('trip-best'), clear = $('trip-clear');
    if (best) best.disabled = true;
    if (clear) clear.disabled = true;
  }
  function addStop(lon, lat) {
    if (!map) return;
    if (stops.length >= TRIP_MAX_STOPS) { panel.replaceChildren(el('p', { class: 'error' }, `At most ${TRIP_MAX_STOPS} stops.`)); return; }
    // A new stop after an answer: start numbering in the order clicked again.
    if (stops.some((s) => s.ordered)) {
      clearResults();
      stops.forEach((s, i) => { s.marker.remove(); s.marker = stopMarker(s.lon, s.lat, i + 1, false); s.ordered = false; });
    }
    lon = +lon.toFixed(6); lat = +lat.toFixed(6);
    stops.push({ lon, lat, marker: stopMarker(lon, lat, stops.length + 1, false), ordered: false });
    $('trip-best').disabled = stops.length < 2;
    $('trip-clear').disabled = false;
    panel.replaceChildren(el('p', { class: 'hint' }, `${stops.length} stop${stops.length === 1 ? '' : 's'}` + (stops.length < 2 ? ': click another.' : ': click more, or "Best order".')));
  }
  async function bestOrder() {
    if (stops.length < 2) return;
    const started = performance.now();
    const asked = ++tripAsked;
    const coordinates = stops.map((s) => `${s.lon.toFixed(6)},${s.lat.toFixed(6)}`).join(';');
    const url = `/trip/v1/foot/${coordinates}?roundtrip=true&source=first&geometries=geojson&overview=full`;
    panel.replaceChildren(el('p', { class: 'hint' }, `Ordering ${stops.length} stops…`));
    let answer;
    try { answer = await api(url); } catch (error) { if (asked === tripAsked) showError(error); return; }
    if (asked !== tripAsked) return;
    const trip = answer.trips[0];
    // waypoints are in the request's order; waypoint_index is each one's place in the trip.
    const order = [];   // order[k] = the index (clicked) of the trip's k-th stop
    answer.waypoints.forEach((w, i) => { order[w.waypoint_index] = i; });
    stops.forEach((s, i) => {
      s.marker.remove();
      s.marker = stopMarker(s.lon, s.lat, answer.waypoints[i].waypoint_index + 1, true);
      s.ordered = true;
    });
    setResults([{ type: 'Feature', properties: { role: 'trip', distance: trip.distance }, geometry: trip.geometry },
      ...answer.waypoints.map((w) => point(w.location[0], w.location[1], 'snapped', { distance: w.distance }))]);
    exposed.lastTrip = { url, stops: stops.map((s) => [s.lon, s.lat]), order, distance: trip.distance, duration: trip.duration };
    const list = el('ol', { id: 'trip-order' });
    order.forEach((i, k) => {
      const leg = trip.legs[k];
      const to = k + 1 < order.length ? `stop ${k + 2}` : 'back to 1';
      list.append(el('li', {}, `clicked #${i + 1}` + (leg ? `, then ${metres(leg.distance)} to ${to}` : '')));
    });
    panel.replaceChildren(
      el('h2', {}, `Trip through ${stops.length} stops (round trip from 1)`),
      el('p', { id: 'trip-summary' }, el('span', { id: 'trip-distance' }, trip.distance.toFixed(3)), ' m, ',
        el('span', { id: 'trip-duration' }, (trip.duration / 60).toFixed(1)), ' min walking'),
      list);
    timings.panel_ms.push(performance.now() - started);
  }

  // ---- "where did I walk": a GPX trace, /match/v1/foot (OSRM's shape) ----
  // The segments of a GPX document: [[{ lon, lat, time (s) or null, radius (m) or null }]].
  function parseGPX(text) {
    const doc = new DOMParser().parseFromString(text, 'application/xml');
    if (doc.getElementsByTagName('parsererror').length) throw new Error('not a GPX file: the XML does not parse');
    const child = (node, name) => { const c = node.getElementsByTagNameNS('*', name)[0]; return c ? c.textContent.trim() : null; };
    const read = (nodes) => {
      const points = [];
      for (const node of nodes) {
        const lat = parseFloat(node.getAttribute('lat')), lon = parseFloat(node.getAttribute('lon'));
        if (!Number.isFinite(lat) || !Number.isFinite(lon) || Math.abs(lat) > 90 || Math.abs(lon) > 180) continue;
        const t = child(node, 'time'), ms = t ? Date.parse(t) : NaN;
        const hdop = parseFloat(child(node, 'hdop'));
        // An accuracy from the horizontal dilution of precision (× 5 m, a receiver's usual error).
        points.push({ lon, lat, time: Number.isFinite(ms) ? Math.round(ms / 1000) : null, radius: Number.isFinite(hdop) && hdop > 0 ? Math.min(100, Math.max(5, Math.round(hdop * 5))) : null });
      }
      return points;
    };
    let segments = [...doc.getElementsByTagNameNS('*', 'trkseg')].map((seg) => read(seg.getElementsByTagNameNS('*', 'trkpt')));
    if (!segments.some((s) => s.length)) segments = [...doc.getElementsByTagNameNS('*', 'rte')].map((r) => read(r.getElementsByTagNameNS('*', 'rtept')));
    segments = segments.filter((s) => s.length >= 2);
    if (!segments.length) throw new Error('the GPX file has no track (trkpt) with two points or more');
    return segments;
  }
  // At most `max` points of all the segments, picked evenly (each segment keeps its ends).
  function thin(segments, max) {
    const total = segments.reduce((n, s) => n + s.length, 0);
    if (total <= max) return segments;
    return segments.map((s) => {
      const keep = Math.max(2, Math.floor(s.length * max / total));
      if (keep >= s.length) return s;
      return Array.from({ length: keep }, (_, i) => s[Math.round(i * (s.length - 1) / (keep - 1))]);
    });
  }
  // The /match request targets of a segment: consecutive chunks under MATCH_MAX_TARGET bytes,
  // each sharing its first fix with the previous chunk's last.
  function matchTargets(points) {
    const withTimes = points.every((p) => p.time !== null);
    let last = -Infinity;
    const times = withTimes ? points.map((p) => (last = Math.max(last, p.time))) : null;   // never going back
    const parts = (i) => ({ c: `${p6(points[i].lon)},${p6(points[i].lat)}`, t: times ? String(times[i]) : null, r: String(points[i].radius ?? 10) });
    const build = (list) => `/match/v1/foot/${list.map((x) => x.c).join(';')}?` + (times ? `timestamps=${list.map((x) => x.t).join(';')}&` : '') +
      `radiuses=${list.map((x) => x.r).join(';')}&geometries=geojson&overview=full`;
    const fixed = build([]).length;
    const targets = [];
    let chunk = [], size = fixed, first = 0;
    for (let i = 0; i < points.length; i++) {
      const x = parts(i);
      const cost = x.c.length + x.r.length + (x.t ? x.t.length : 0) + 3;   // the ';' separators
      if (chunk.length >= 2 && size + cost > MATCH_MAX_TARGET) {
        targets.push({ url: build(chunk), first, count: chunk.length });
        // The next chunk starts at this chunk's last fix.
        first = i - 1; chunk = [parts(i - 1)]; size = fixed + chunk[0].c.length + chunk[0].r.length + (chunk[0].t ? chunk[0].t.length : 0) + 3;
      }
      chunk.push(x); size += cost;
    }
    if (chunk.length >= 2) targets.push({ url: build(chunk), first, count: chunk.length });
    return targets;
  }
  const p6 = (v) => String(+v.toFixed(6));
  function haversine(a, b) {
    const r = Math.PI / 180, dLat = (b.lat - a.lat) * r, dLon = (b.lon - a.lon) * r;
    const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * r) * Math.cos(b.lat * r) * Math.sin(dLon / 2) ** 2;
    return 2 * 6371008.8 * Math.asin(Math.sqrt(h));
  }
  // For the browser test: the plan for a trace, without asking anything.
  exposed.planMatch = (text) => { const segments = thin(parseGPX(text), MATCH_MAX_POINTS); return segments.map(matchTargets); };

  let traceAsked = 0;
  async function matchTrace(text, name) {
    const started = performance.now();
    const asked = ++traceAsked;
    let segments;
    try { segments = parseGPX(text); } catch (error) { panel.replaceChildren(el('div', { class: 'error' }, `${name}: ${error.message}`)); return; }
    const fixes = segments.reduce((n, s) => n + s.length, 0);
    const sent = thin(segments, MATCH_MAX_POINTS);
    const sentCount = sent.reduce((n, s) => n + s.length, 0);
    const raw = sent.map((s) => ({ type: 'Feature', properties: { role: 'trace-raw' }, geometry: { type: 'LineString', coordinates: s.map((p) => [p.lon, p.lat]) } }));
    const rawLength = segments.reduce((sum, s) => sum + s.slice(1).reduce((d, p, i) => d + haversine(s[i], p), 0), 0);
    setTrace(raw);
    $('trace-clear').disabled = false;
    const box = extent(raw);
    if (box) map.fitBounds([[box[0], box[1]], [box[2], box[3]]], { maxZoom: 17, padding: 40, duration: 0 });
    const targets = sent.flatMap((s, k) => matchTargets(s).map((t) => Object.assign(t, { segment: k })));
    panel.replaceChildren(el('p', { class: 'hint' }, `${name}: matching ${sentCount} fixes in ${targets.length} request${targets.length === 1 ? '' : 's'}…`));
    let answers;
    try { answers = await Promise.all(targets.map((t) => api(t.url))); }
    catch (error) { if (asked === traceAsked) showError(error); return; }
    if (asked !== traceAsked) return;
    let distance = 0, duration = 0, weighted = 0, matchings = 0;
    const paths = [], matchedFixes = new Set();   // segment:fix, a shared boundary fix once
    answers.forEach((answer, j) => {
      for (const m of answer.matchings || []) {
        matchings++;
        distance += m.distance; duration += m.duration; weighted += m.confidence * m.distance;
        if (m.geometry) paths.push({ type: 'Feature', properties: { role: 'trace-matched', distance: m.distance, confidence: m.confidence }, geometry: m.geometry });
      }
      (answer.tracepoints || []).forEach((t, q) => { if (t !== null) matchedFixes.add(`${targets[j].segment}:${targets[j].first + q}`); });
    });
    const matched = matchedFixes.size;
    const confidence = distance > 0 ? weighted / distance : 0;
    setTrace([...raw, ...paths]);
    exposed.lastTrace = { name, fixes, sent: sentCount, urls: targets.map((t) => t.url), distance, duration, confidence, matchings, matched, raw_m: rawLength };
    panel.replaceChildren(
      el('h2', {}, `Trace ${name}`),
      el('p', { id: 'trace-summary' }, 'Matched ', el('span', { id: 'trace-distance' }, distance.toFixed(3)), ' m (',
        el('span', { id: 'trace-duration' }, (duration / 60).toFixed(1)), ' min walking), confidence ',
        el('span', { id: 'trace-confidence' }, confidence.toFixed(3)), matchings > 1 ? ` (length-weighted, ${matchings} matchings)` : ''),
      el('p', {}, `${fixes} fixes, ${metres(rawLength)} as recorded` + (sentCount < fixes ? `; ${sentCount} sent (thinned evenly)` : '') +
        `; ${matched} matched in ${targets.length} request${targets.length === 1 ? '' : 's'}.`),
      el('p', { class: 'hint' }, 'Dashed: the recorded trace. Solid: the paths matched.'));
    timings.panel_ms.push(performance.now() - started);
  }
  // A file: a GPX trace to match, or (JSON) a track of beacon scans to locate indoors.
  async function readTraceFile(file) {
    if (!file) return;
    try {
      const text = await file.text();
      if (/^\s*\{/.test(text)) await locateTrack(text, file.name); else await matchTrace(text, file.name);
    }
    catch (error) { showError(error); }
  }
  $('trace-file').addEventListener('change', () => { readTraceFile($('trace-file').files[0]); });
  $('trace-clear').addEventListener('click', () => {
    traceAsked++; setTrace([]); $('trace-file').value = ''; $('trace-clear').disabled = true;
    panel.replaceChildren(el('p', { class: 'hint' }, 'Trace cleared.'));
  });
  // Drag and drop anywhere on the page: a file is never opened in place of the page.
  const hasFiles = (event) => event.dataTransfer && [...event.dataTransfer.types].includes('Files');
  let dragDepth = 0;
  window.addEventListener('dragenter', (event) => { if (!hasFiles(event)) return; dragDepth++; $('map').classList.add('dropping'); });
  window.addEventListener('dragleave', (event) => { if (!hasFiles(event)) return; if (--dragDepth <= 0) { dragDepth = 0; $('map').classList.remove('dropping'); } });
  window.addEventListener('dragover', (event) => { if (!hasFiles(event)) return; event.preventDefault(); event.dataTransfer.dropEffect = 'copy'; });
  window.addEventListener('drop', (event) => {
    if (!hasFiles(event)) return;
    event.preventDefault();
    dragDepth = 0; $('map').classList.remove('dropping');
    readTraceFile(event.dataTransfer.files[0]);
  });

  // ---- fences, live objects and their events ----
  // The fences (GET /v1/fences) are drawn as areas from their definitions: a point and radius
  // as a circle, a GeoJSON geometry as it is, a layer's features (read from OGC API – Features,
  // filtered here by the fence's fids and match) as they are (points as circles of within_m),
  // a walking reach as its /isochrone, a roaming fence as a circle around the object it follows,
  // a threshold fence as a marker at its place. Positions are memory, not in the change feed:
  // the live layers (GET /v1/live) are read at start, and while any exists their objects are
  // read every second (only when the tab is shown); each event also moves its object at once.
  // Events come as Server-Sent Events (/v1/events; EventSource resumes after Last-Event-ID by
  // itself, and the server says `missed` when it no longer has what followed): the fence (or the
  // one feature area the event names) flashes in the event's colour, and the event is listed.
  const FENCE = '#ff7f00', EVENT_COLOURS = { enter: '#d7301f', inside: '#d7301f', exit: '#2a6fdb', outside: '#2a6fdb', cross: '#7b3294' };
  const EVENT_KINDS = ['enter', 'exit', 'inside', 'outside', 'cross', 'above', 'below', 'rise'];
  const FLASH_MS = 1500, LIVE_POLL_MS = 1000, DISCOVER_MS = 60000, EVENTS_KEPT = 50;
  const fences = { type: 'FeatureCollection', features: [] };
  const live = { type: 'FeatureCollection', features: [] };
  const fenceIds = new Map();      // fence name -> [{ id, fid }] of its drawn areas
  const liveLayers = new Set();
  const objects = new Map();       // 'layer/id' -> [lon, lat]
  let fenceDefinitions = [];
  Object.assign(exposed, { fences: [], fenceEvents: 0, lastFenceEvent: null, liveObjects: 0, liveReads: 0,
    fenceAreaIds: (name) => (fenceIds.get(name) || []).map((a) => a.id), liveObjectsList: () => [...objects],
    fenceGeometries: (name) => (fenceIds.get(name) || []).map((a) => (fences.features.find((g) => g.id === a.id) || {}).geometry) });

  function circle(lon, lat, radius, properties) {
    const k = Math.cos(lat * Math.PI / 180), ring = [];
    for (let i = 0; i <= 64; i++) {
      const a = 2 * Math.PI * (i % 64) / 64;
      ring.push([lon + radius * Math.sin(a) / (111195 * k), lat + radius * Math.cos(a) / 111195]);
    }
    return { type: 'Feature', properties, geometry: { type: 'Polygon', coordinates: [ring] } };
  }
  function addLiveLayers() {
    map.addSource('fences', { type: 'geojson', data: fences });
    const flash = ['coalesce', ['feature-state', 'flash'], ''];
    const colour = ['match', flash, 'enter', EVENT_COLOURS.enter, 'inside', EVENT_COLOURS.inside, 'exit', EVENT_COLOURS.exit, 'outside', EVENT_COLOURS.outside, '', FENCE, EVENT_COLOURS.cross];
    map.addLayer({ id: 'fences-fill', type: 'fill', source: 'fences', filter: isType('Polygon'), paint: { 'fill-color': colour, 'fill-opacity': ['case', ['==', flash, ''], 0.25, 0.55] } }, 'results-fill');
    map.addLayer({ id: 'fences-line', type: 'line', source: 'fences', filter: isType('Polygon'), paint: { 'line-color': colour, 'line-width': ['case', ['==', flash, ''], 2, 4], 'line-dasharray': [3, 1.5] } }, 'results-fill');
    map.addLayer({ id: 'fences-point', type: 'circle', source: 'fences', filter: isType('Point'), paint: { 'circle-color': colour, 'circle-radius': 7, 'circle-opacity': 0.8, 'circle-stroke-color': '#ffffff', 'circle-stroke-width': 2 } }, 'results-fill');
    map.addSource('live', { type: 'geojson', data: live });
    map.addLayer({ id: 'live-objects', type: 'circle', source: 'live', paint: { 'circle-color': '#111111', 'circle-radius': 6, 'circle-stroke-color': '#ffd92f', 'circle-stroke-width': 3 } });
  }
  const setSource = (id, data) => { const source = map && map.getSource(id); if (source) source.setData(data); };

  // The areas of one fence, as GeoJSON features (null properties filled by the caller).
  async function fenceAreas(definition) {
    const area = definition.area || {};
    if (definition.threshold) return definition.threshold.place ? [point(definition.threshold.place[0], definition.threshold.place[1], 'fence', {})] : [];
    if (area.point && area.radius_m != null) return [circle(area.point[0], area.point[1], area.radius_m, {})];
    if (area.geometry) return [{ type: 'Feature', properties: {}, geometry: area.geometry }];
    if (area.reach) {
      const r = area.reach, from = r.from;
      const limit = r.minutes != null ? `time_limit=${Math.round(r.minutes * 60)}` : `distance_limit=${Math.round(r.metres)}`;
      const answer = await api(`/isochrone?point=${from[1]},${from[0]}&${limit}&buckets=1&profile=${encodeURIComponent(r.profile || 'foot')}`);
      return answer.polygons.map((f) => ({ type: 'Feature', properties: {}, geometry: f.geometry }));
    }
    if (area.near) {
      const at = objects.get(`${area.near.layer}/${area.near.object}`);
      return at ? [circle(at[0], at[1], area.radius_m || 0, { near: `${area.near.layer}/${area.near.object}` })] : [];
    }
    if (area.layer) {
      const answer = await api(`/ogc/collections/${encodeURIComponent(area.layer)}/items?limit=10000`);
      const fids = area.fids ? new Set(area.fids.map(Number)) : null;
      const match = Object.entries(area.match || {});
      return answer.features.filter((f) => f.geometry && (!fids || fids.has(Number(f.id))) && match.every(([k, v]) => f.properties[k] === v))
        .map((f) => {
          const base = { fid: Number(f.id), name: featureName(f.properties) };
          if (f.geometry.type === 'Point' && area.within_m) return circle(f.geometry.coordinates[0], f.geometry.coordinates[1], area.within_m, base);
          return { type: 'Feature', properties: base, geometry: f.geometry };
        });
    }
    return [];
  }
  async function loadFences() {
    let answer;
    try { answer = await api('/v1/fences'); } catch (error) { return; }
    fenceDefinitions = answer.fences;
    const features = [];
    fenceIds.clear();
    for (const fence of answer.fences) {
      let areas = [];
      try { areas = await fenceAreas(fence.definition); } catch (error) { /* a fence whose area cannot be read is listed, not drawn */ }
      const ids = [];
      for (const area of areas) {
        const id = features.length + 1;
        area.id = id;
        area.properties = Object.assign({}, area.properties, { fence: fence.name, running: fence.running });
        features.push(area);
        ids.push({ id, fid: area.properties.fid });
      }
      fenceIds.set(fence.name, ids);
    }
    fences.features = features;
    setSource('fences', fences);
    exposeFences();
    moveRoaming();
    renderEvents();
  }
  // Roaming fences follow their object, and are drawn once it is known: the fences are read
  // before the first objects are.
  function moveRoaming() {
    let moved = false;
    for (const fence of fenceDefinitions) {
      const area = fence.definition.area || {};
      if (!area.near) continue;
      const at = objects.get(`${area.near.layer}/${area.near.object}`);
      if (!at) continue;
      const ids = fenceIds.get(fence.name) || [];
      const drawn = ids.length ? fences.features.find((g) => g.id === ids[0].id) : null;
      const id = drawn ? drawn.id : fences.features.reduce((m, g) => Math.max(m, g.id), 0) + 1;
      const properties = drawn ? drawn.properties : { near: `${area.near.layer}/${area.near.object}`, fence: fence.name, running: fence.running };
      const around = Object.assign(circle(at[0], at[1], area.radius_m || 0, properties), { id });
      if (drawn) Object.assign(drawn, around);
      else { fences.features.push(around); fenceIds.set(fence.name, [{ id, fid: undefined }]); }
      moved = true;
    }
    if (moved) { setSource('fences', fences); exposeFences(); }
  }
  function exposeFences() {
    exposed.fences = fenceDefinitions.map((f) => ({ name: f.name, areas: (fenceIds.get(f.name) || []).length, running: f.running }));
  }

  function showObjects() {
    live.features = [...objects].map(([key, [lon, lat]]) => {
      const slash = key.indexOf('/');
      return point(lon, lat, 'live', { layer: key.slice(0, slash), object: key.slice(slash + 1) });
    });
    exposed.liveObjects = live.features.length;
    setSource('live', live);
    moveRoaming();
  }
  async function readLiveLayers() {
    try {
      const answer = await api('/v1/live');
      liveLayers.clear();
      for (const layer of answer.layers) liveLayers.add(layer.name);
    } catch (error) { /* no live layers */ }
  }
  let polling = null;
  async function readObjects() {
    polling = null;
    if (!document.hidden) {
      const seen = new Map();
      for (const layer of liveLayers) {
        try {
          const answer = await api(`/v1/live/${encodeURIComponent(layer)}/objects?limit=10000`);
          for (const f of answer.features) seen.set(`${layer}/${f.id}`, f.geometry.coordinates);
        } catch (error) { if (error.status === 404) liveLayers.delete(layer); }
      }
      objects.clear();
      for (const [key, at] of seen) objects.set(key, at);
      exposed.liveReads++;
      showObjects();
    }
    if (liveLayers.size && !polling) polling = setTimeout(readObjects, LIVE_POLL_MS);
  }

  const eventLog = [];
  function flashFence(event) {
    const ids = (fenceIds.get(event.fence) || []).filter((a) => !event.feature || a.fid == null || a.fid === Number(event.feature.fid));
    for (const { id } of ids) map.setFeatureState({ source: 'fences', id }, { flash: event.event });
    setTimeout(() => { for (const { id } of ids) if (map.getSource('fences')) map.setFeatureState({ source: 'fences', id }, { flash: '' }); }, FLASH_MS);
    return ids.length;
  }
  function onFenceEvent(kind, data) {
    let event;
    try { event = JSON.parse(data); } catch (error) { return; }
    event.event = event.event || kind;
    exposed.fenceEvents++;
    if (event.layer && event.object && event.position) {
      objects.set(`${event.layer}/${event.object}`, event.position);
      if (!liveLayers.has(event.layer)) { liveLayers.add(event.layer); if (!polling) polling = setTimeout(readObjects, LIVE_POLL_MS); }
      showObjects();
    }
    // A fence declared since the page read them: read them again, then flash.
    const known = fenceIds.has(event.fence);
    const flashed = known ? flashFence(event) : 0;
    if (!known) loadFences().then(() => flashFence(event));
    exposed.lastFenceEvent = { id: event.id, fence: event.fence, event: event.event, object: event.object, feature: event.feature || null, flashed, shown_at: performance.now() };
    eventLog.unshift(event);
    eventLog.length = Math.min(eventLog.length, EVENTS_KEPT);
    renderEvents();
  }
  function renderEvents(note) {
    const box = $('events');
    if (!box) return;
    box.hidden = !fenceDefinitions.length && !eventLog.length;
    $('fence-count').textContent = String(fenceDefinitions.length);
    const list = $('event-list');
    if (note) list.prepend(el('li', { class: 'missed' }, note));
    list.querySelectorAll('li.event').forEach((li) => li.remove());
    for (const e of eventLog) {
      const what = e.feature && e.feature.name ? ` (${e.feature.name})` : '';
      const value = e.values && e.values.value != null ? ` ${e.values.column} ${e.values.value}` : '';
      list.append(el('li', { class: 'event', 'data-kind': e.event, 'data-fence': e.fence },
        el('span', { class: 'kind', style: `background:${EVENT_COLOURS[e.event] || FENCE}` }, e.event), ' ',
        el('b', {}, e.fence), what, e.object ? ` · ${e.object}` : '', value, el('span', { class: 'when' }, ' ' + String(e.time || '').slice(11, 19))));
    }
  }
  let stream = null;
  function listenEvents() {
    if (typeof EventSource === 'undefined' || stream) return;
    stream = new EventSource('/v1/events');
    for (const kind of EVENT_KINDS) stream.addEventListener(kind, (e) => onFenceEvent(kind, e.data));
    stream.addEventListener('missed', () => { loadFences(); readObjects(); renderEvents('Some events were missed while the page was away.'); });
  }
  // The events' stream is opened only when the store has fences (a browser keeps 6 connections
  // to a server, and the change feed holds one already): until then, and while no live layer
  // is polled, the fences and live layers are looked for again every minute.
  async function startLive() {
    await Promise.all([readLiveLayers(), loadFences()]);
    if (fenceDefinitions.length) listenEvents();
    if (liveLayers.size) readObjects();
    else if (!stream) setTimeout(startLive, DISCOVER_MS);
  }
  document.addEventListener('visibilitychange', () => { if (!document.hidden && liveLayers.size && !polling) readObjects(); });

  // ---- indoor: georeferenced venues (GET /v1/venues), a floor switcher, located tracks ----
  // A venue whose floor has a frame on the globe is drawn on it: its reference points (small
  // dots), its beacons where their positions are known (squares, named), and the area the
  // survey covers (the convex hull of its points: the store holds no floor plan). A floor
  // switcher shows the venue's floors; a track of scans (a JSON file {"scans": [...]}, dropped
  // or chosen as a GPX trace is) is located with POST /v1/locate/track and drawn on its floor.
  const indoor = { type: 'FeatureCollection', features: [] };
  const INDOOR_MINZOOM = 16;   // a building's zooms: the venue, its switcher and its track
  let venues = [], floorShown = null, indoorControl = null;
  Object.assign(exposed, { venues: [], floor: null, lastTrack: null });
  function hull(points) {
    const p = [...points].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    if (p.length < 3) return null;
    const cross = (o, a, b) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
    const lower = [], upper = [];
    for (const q of p) { while (lower.length >= 2 && cross(lower.at(-2), lower.at(-1), q) <= 0) lower.pop(); lower.push(q); }
    for (const q of p.reverse()) { while (upper.length >= 2 && cross(upper.at(-2), upper.at(-1), q) <= 0) upper.pop(); upper.push(q); }
    const ring = lower.slice(0, -1).concat(upper.slice(0, -1));
    return ring.length >= 3 ? [...ring, ring[0]] : null;
  }
  function addIndoorLayers() {
    map.addSource('indoor', { type: 'geojson', data: indoor });
    map.addLayer({ id: 'indoor-area', type: 'fill', source: 'indoor', minzoom: INDOOR_MINZOOM, filter: ['==', ['get', 'role'], 'indoor-area'], paint: { 'fill-color': '#f4efe6', 'fill-opacity': 0.9 } }, 'results-fill');
    map.addLayer({ id: 'indoor-outline', type: 'line', source: 'indoor', minzoom: INDOOR_MINZOOM, filter: ['==', ['get', 'role'], 'indoor-area'], paint: { 'line-color': '#6b4f2a', 'line-width': 2 } }, 'results-fill');
    map.addLayer({ id: 'indoor-points', type: 'circle', source: 'indoor', filter: ['==', ['get', 'role'], 'indoor-point'], minzoom: 17, paint: { 'circle-color': '#8c8c8c', 'circle-radius': 1.5 } }, 'results-fill');
    map.addLayer({ id: 'indoor-track', type: 'line', source: 'indoor', minzoom: INDOOR_MINZOOM, filter: ['==', ['get', 'role'], 'indoor-track'], layout: { 'line-join': 'round', 'line-cap': 'round' }, paint: { 'line-color': '#e7298a', 'line-width': 3 } });
    map.addLayer({ id: 'indoor-fixes', type: 'circle', source: 'indoor', filter: ['==', ['get', 'role'], 'indoor-fix'], minzoom: 18, paint: { 'circle-color': '#e7298a', 'circle-radius': 2 } });
    map.addLayer({ id: 'indoor-beacons', type: 'circle', source: 'indoor', minzoom: INDOOR_MINZOOM + 1, filter: ['==', ['get', 'role'], 'indoor-beacon'], paint: { 'circle-color': '#1b9e77', 'circle-radius': 5, 'circle-stroke-color': '#ffffff', 'circle-stroke-width': 2 } });
  }
  // Whether the switcher shows: a venue's area in the view, at building zooms.
  function updateIndoorControl() {
    if (!indoorControl) return;
    const b = map.getBounds();
    const inView = map.getZoom() >= INDOOR_MINZOOM && venues.some((v) => {
      const box = extent(indoor.features.filter((f) => f.properties.venue === v.name && f.properties.role === 'indoor-area'));
      return box && box[0] <= b.getEast() && box[2] >= b.getWest() && box[1] <= b.getNorth() && box[3] >= b.getSouth();
    });
    indoorControl.hidden = !inView;
  }
  const INDOOR_LAYERS = ['indoor-area', 'indoor-outline', 'indoor-points', 'indoor-track', 'indoor-fixes', 'indoor-beacons'];
  function showFloor(floor) {
    floorShown = floor;
    exposed.floor = floor;
    for (const id of INDOOR_LAYERS) {
      const base = map.getFilter(id);
      const role = base[0] === '==' ? base : base[1];
      map.setFilter(id, ['all', role, ['==', ['get', 'floor'], floor]]);
    }
    if (indoorControl) for (const b of indoorControl.querySelectorAll('button[data-floor]')) b.classList.toggle('active', Number(b.dataset.floor) === floor);
  }
  function drawIndoor() {
    const features = [];
    for (const venue of venues) {
      for (const floor of venue.floors) {
        const pts = venue.points.filter((p) => p.floor === floor.floor && p.lon != null).map((p) => [p.lon, p.lat]);
        const beacons = venue.beacons.filter((b) => b.floor === floor.floor && b.lon != null);
        const ring = hull(pts.concat(beacons.map((b) => [b.lon, b.lat])));
        if (ring) features.push({ type: 'Feature', properties: { role: 'indoor-area', venue: venue.name, floor: floor.floor }, geometry: { type: 'Polygon', coordinates: [ring] } });
        for (const p of pts) features.push(point(p[0], p[1], 'indoor-point', { venue: venue.name, floor: floor.floor }));
        for (const b of beacons) features.push(point(b.lon, b.lat, 'indoor-beacon', { venue: venue.name, floor: floor.floor, beacon: b.id }));
      }
    }
    indoor.features = features.concat(indoor.features.filter((f) => f.properties.role === 'indoor-track' || f.properties.role === 'indoor-fix'));
    setSource('indoor', indoor);
  }
  function floorControl() {
    const box = el('div', { class: 'maplibregl-ctrl maplibregl-ctrl-group floor-switcher', id: 'floor-switcher' });
    for (const venue of venues) {
      const title = el('button', { type: 'button', class: 'venue', title: 'Show the venue' }, venue.title || venue.name);
      title.addEventListener('click', () => fitVenue(venue));
      box.append(title);
      for (const floor of venue.floors) {
        const b = el('button', { type: 'button', 'data-floor': String(floor.floor), 'data-venue': venue.name, title: floor.name || `floor ${floor.floor}` }, floor.name ? `${floor.floor} · ${floor.name}` : `floor ${floor.floor}`);
        b.addEventListener('click', () => showFloor(floor.floor));
        box.append(b);
      }
    }
    indoorControl = box;
    map.addControl({ onAdd: () => box, onRemove: () => box.remove() }, 'top-left');
  }
  function fitVenue(venue) {
    const box = extent(indoor.features.filter((f) => f.properties.venue === venue.name));
    if (box) map.fitBounds([[box[0], box[1]], [box[2], box[3]]], { padding: 60, maxZoom: 21, duration: 0 });
  }
  async function startIndoor(attempt = 0) {
    let answer;
    try { answer = await api('/v1/venues'); } catch (error) {
      // A busy server (503) or a dropped connection: asked again a few times, 1 to 8 s apart,
      // rather than the venue never drawn on this page.
      if (!(error.status < 500) && attempt < 4) setTimeout(() => startIndoor(attempt + 1), 1000 << attempt);
      return;
    }
    venues = answer.venues.map((v) => Object.assign({}, v, { floors: v.floors.filter((f) => f.origin) })).filter((v) => v.floors.length);
    exposed.venues = venues.map((v) => ({ name: v.name, floors: v.floors.map((f) => f.floor), points: v.points.length, beacons: v.beacons.filter((b) => b.lon != null).length }));
    if (!venues.length) return;
    drawIndoor();
    floorControl();
    showFloor(venues[0].floors[0].floor);
    updateIndoorControl();
    map.on('moveend', updateIndoorControl);
  }
  // The venue of a track: the only georeferenced one, else the one whose area is in view.
  function trackVenue() {
    if (venues.length <= 1) return venues[0] || null;
    const centre = map.getCenter();
    return venues.find((v) => { const box = extent(indoor.features.filter((f) => f.properties.venue === v.name)); return box && centre.lng >= box[0] && centre.lng <= box[2] && centre.lat >= box[1] && centre.lat <= box[3]; }) || venues[0];
  }
  async function locateTrack(text, name) {
    const started = performance.now();
    let body;
    try { body = JSON.parse(text); } catch (error) { panel.replaceChildren(el('div', { class: 'error' }, `${name}: not JSON: ${error.message}`)); return; }
    if (!body || !Array.isArray(body.scans)) { panel.replaceChildren(el('div', { class: 'error' }, `${name}: expected {"scans": [{"time": …, "readings": {beacon: dBm}}, …]}`)); return; }
    const venue = trackVenue();
    if (!venue) { panel.replaceChildren(el('div', { class: 'error' }, `${name}: no venue of this store is on the globe (vltava indoor import --origin)`)); return; }
    const url = `/v1/locate/track?venue=${encodeURIComponent(venue.name)}`;
    panel.replaceChildren(el('p', { class: 'hint' }, `${name}: locating ${body.scans.length} scans in ${venue.title || venue.name}…`));
    let answer;
    try { answer = await api(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ scans: body.scans }) }); }
    catch (error) { showError(error); return; }
    const placed = answer.positions.filter((p) => p.lon != null);
    const track = [];
    // One line per run of positions on one floor.
    let run = null;
    for (const p of placed) {
      if (!run || run.floor !== p.floor) { run = { floor: p.floor, coordinates: [] }; track.push(run); }
      run.coordinates.push([p.lon, p.lat]);
    }
    indoor.features = indoor.features.filter((f) => f.properties.role !== 'indoor-track' && f.properties.role !== 'indoor-fix')
      .concat(track.filter((r) => r.coordinates.length >= 2).map((r) => ({ type: 'Feature', properties: { role: 'indoor-track', venue: venue.name, floor: r.floor }, geometry: { type: 'LineString', coordinates: r.coordinates } })))
      .concat(placed.map((p) => point(p.lon, p.lat, 'indoor-fix', { venue: venue.name, floor: p.floor })));
    setSource('indoor', indoor);
    let length = 0;
    for (let i = 1; i < placed.length; i++) if (placed[i].floor === placed[i - 1].floor) length += Math.hypot(placed[i].x - placed[i - 1].x, placed[i].y - placed[i - 1].y);
    const floors = [...new Set(placed.map((p) => p.floor))];
    if (floors.length) showFloor(floors[0]);
    fitVenue(venue);
    exposed.lastTrack = { venue: venue.name, url, scans: body.scans.length, positions: answer.positions.length, placed: placed.length, floors, length_m: length };
    panel.replaceChildren(
      el('h2', {}, `Track ${name} in ${venue.title || venue.name}`),
      el('p', { id: 'track-summary' }, el('span', { id: 'track-positions' }, String(answer.positions.length)), ' positions, ',
        el('span', { id: 'track-length' }, length.toFixed(1)), ` m walked (${answer.units}), floor${floors.length === 1 ? '' : 's'} ${floors.join(', ')}.`),
      el('p', { class: 'hint' }, 'Pink: the located track. Green: the beacons. Dots: the survey\'s reference points.'));
    timings.panel_ms.push(performance.now() - started);
  }

  // ---- the query box: /v1/query ----
  async function runQuery() {
    const text = $('query-text').value;
    if (!text.trim()) return;
    clearResults();
    const started = performance.now();
    let answer;
    try {
      answer = await api('/v1/query?format=geojson', { method: 'POST', headers: { 'Content-Type': 'text/plain', Accept: 'application/geo+json' }, body: text });
    } catch (error) {
      // Answers that are not features (EXPLAIN, SHOW, a route's summary) come as plain JSON.
      if (error.problem && error.problem.line) { showError(error, text); return; }
      try { answer = await api('/v1/query', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: text }); }
      catch (second) { showError(second, text); return; }
    }
    const features = answer.type === 'FeatureCollection' ? answer.features : [];
    if (features.length) {
      setResults(features.filter((f) => f.geometry).map((f) => ({ type: 'Feature', properties: { role: 'query-result' }, geometry: f.geometry })));
      const box = extent(features);
      const b = map.getBounds();
      if (box && !(b.contains([box[0], box[1]]) && b.contains([box[2], box[3]]))) map.fitBounds([[box[0], box[1]], [box[2], box[3]]], { maxZoom: 17, padding: 40 });
    }
    const rows = features.length ? features.map((f) => f.properties) : (answer.rows || []);
    const columns = [...new Set(rows.slice(0, 50).flatMap((row) => Object.keys(row)))].filter((c) => typeof rows[0][c] !== 'object' || rows[0][c] === null);
    const table = el('table', { id: 'query-rows' }, el('tr', {}, ...columns.map((c) => el('th', {}, c))));
    for (const row of rows.slice(0, 50)) table.append(el('tr', {}, ...columns.map((c) => el('td', {}, row[c] == null ? '' : (typeof row[c] === 'number' ? +row[c].toFixed(3) : row[c])))));
    panel.replaceChildren(el('h2', {}, `${rows.length} row${rows.length === 1 ? '' : 's'}`), table);
    timings.panel_ms.push(performance.now() - started);
  }
  $('query-run').addEventListener('click', runQuery);
  $('query-text').addEventListener('keydown', (event) => { if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) runQuery(); });

  // ---- go ----
  // A link pasted into this tab changes only the hash: start again from it. (The page's own
  // updates use replaceState, which fires no hashchange.)
  window.addEventListener('hashchange', () => location.reload());
  setMode(state.mode);
  start().catch((error) => showError(error)).finally(() => {
    const navigation = performance.getEntriesByType('navigation')[0];
    timings.load_ms = navigation ? navigation.loadEventEnd - navigation.startTime : null;
    document.body.dataset.ready = 'true';
  });
})();
