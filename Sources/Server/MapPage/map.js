// Vltava's map page: plain JavaScript over Leaflet and the HTTP API (docs/HTTP_API.md).
// Modes: "inspect" (a click asks /v1/here), "route" (two clicks ask /v1/route), "nearest"
// (a click asks /v1/layers/{layer}/nearest). Feature layers come from OGC API – Features
// (/ogc/collections/{layer}/items) for the visible box, page by page; tile sets as GeoJSON tiles
// (/v1/tiles/{set}/{z}/{x}/{y}.json). The URL's hash keeps the view, the mode and the layers.
'use strict';
(function () {
  const OSM_ATTRIBUTION = '© <a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a> contributors';
  const MAX_FEATURES = 5000;        // per layer and view: pages of 1,000 until this many
  const INDEX_COLOURS = ['#1a9850', '#91cf60', '#fee08b', '#fc8d59', '#d73027', '#7b3294'];
  const CATEGORY_COLOURS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
  const TILE_STYLES = {
    earth: { color: '#d9e6d3', weight: 0, fillOpacity: 1, className: 'zoo-earth' },
    landuse: { color: '#b5d29e', weight: 0, fillOpacity: 0.7, className: 'zoo-landuse' },
    water: { color: '#6fa8dc', weight: 1, fillColor: '#9fc5e8', fillOpacity: 0.9, className: 'zoo-water' },
    buildings: { color: '#8d7b68', weight: 1, fillColor: '#c9b79c', fillOpacity: 0.9, className: 'zoo-building' },
    roads: { color: '#ffffff', weight: 2, opacity: 1, className: 'zoo-path' },
    transit: { color: '#777', weight: 1, dashArray: '4 3', className: 'zoo-transit' },
    boundaries: { color: '#999', weight: 1, dashArray: '2 4', className: 'zoo-boundary' },
  };
  const TILE_ORDER = ['earth', 'landuse', 'water', 'buildings', 'roads', 'transit', 'boundaries', 'pois', 'places'];

  const $ = (id) => document.getElementById(id);
  const panel = $('panel');
  const timings = { load_ms: null, panel_ms: [], layers_ms: null };
  // For the browser test and the curious: the map, the timings and the last route asked for.
  const exposed = { map: null, timings, lastRoute: null };
  window.vltava = exposed;

  // ---- the API ----
  class APIError extends Error {
    constructor(problem, status) {
      super((problem && (problem.detail || problem.title)) || ('HTTP ' + status));
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

  // ---- the map and the URL ----
  const hash = new URLSearchParams(location.hash.slice(1));
  const map = L.map('map', { zoomControl: true });
  exposed.map = map;
  const state = {
    mode: ['inspect', 'route', 'nearest'].includes(hash.get('mode')) ? hash.get('mode') : 'inspect',
    profile: hash.get('profile') === 'wheelchair' ? 'wheelchair' : 'foot',
    nearestLayer: hash.get('nearest') || '',
    k: Math.min(50, Math.max(1, parseInt(hash.get('k') || '3', 10) || 3)),
    shown: new Set((hash.get('layers') || '').split(',').filter(Boolean)),
  };
  const layersInURL = hash.has('layers');
  const view = (hash.get('map') || '').split('/').map(Number);
  const hasView = view.length === 3 && view.every(Number.isFinite);
  if (hasView) map.setView([view[1], view[2]], view[0]);
  // Without a view in the URL, loadLayers sets it (the store's extent). Until then Leaflet has
  // no centre, and asking for one throws ("Set map center and zoom first."), so the URL is
  // written only once there is a view.
  let viewSet = hasView;

  function writeURL() {
    if (!viewSet) return;
    const c = map.getCenter();
    const params = new URLSearchParams();
    params.set('map', `${map.getZoom()}/${c.lat.toFixed(5)}/${c.lng.toFixed(5)}`);
    params.set('mode', state.mode);
    if (state.shown.size) params.set('layers', [...state.shown].join(','));
    if (state.mode === 'route') params.set('profile', state.profile);
    if (state.mode === 'nearest') { params.set('nearest', state.nearestLayer); params.set('k', String(state.k)); }
    history.replaceState(null, '', '#' + params.toString().replace(/%2F/g, '/').replace(/%2C/g, ','));
  }

  // ---- layers ----
  const overlays = new Map();   // name -> { group, refresh(), legend, attributed }
  const results = L.layerGroup().addTo(map);   // route, nearest lines, query answers

  // A layer's colouring: by the latest air-quality index for a layer with a time series that
  // has one, else by its first class- or index-like column; null when it has none.
  function colouringOf(info) {
    const series = info.time_series && info.time_series.columns || [];
    if (series.includes('aqi')) return { column: 'LATEST(aqi)', key: 'latest_aqi', numeric: true, latest: 'aqi' };
    const columns = info.columns || [];
    const column = columns.find((c) => /^(class|trida|category|zone_class|index|aqi|typ|kind)$/i.test(c.name));
    if (!column) return null;
    return { column: column.name, key: column.name, numeric: column.type === 'INTEGER' || column.type === 'REAL' };
  }

  function colourer(colouring) {
    const categories = new Map();
    return {
      colouring,
      colour(value) {
        if (value == null) return '#999';
        if (colouring.numeric) {
          const i = Math.round(Number(value)) - 1;
          return INDEX_COLOURS[Math.min(INDEX_COLOURS.length - 1, Math.max(0, i))];
        }
        if (!categories.has(value)) categories.set(value, CATEGORY_COLOURS[categories.size % CATEGORY_COLOURS.length]);
        return categories.get(value);
      },
      entries() {
        if (colouring.numeric) return INDEX_COLOURS.map((c, i) => [String(i + 1), c]);
        return [...categories.entries()].slice(0, 12);
      },
    };
  }

  function renderLegend(entry) {
    if (!entry.colours) return;
    const rows = entry.colours.entries().map(([value, colour]) =>
      el('div', {}, el('span', { class: 'swatch', style: 'background:' + colour }), value));
    entry.legend.replaceChildren(el('div', {}, entry.colours.colouring.column + ':'), ...rows);
  }

  function attribute(entry, features) {
    if (entry.attributed) return;
    if (features.some((f) => /openstreetmap/i.test(String((f.properties || {}).source || '')))) {
      map.attributionControl.addAttribution(OSM_ATTRIBUTION);
      entry.attributed = true;
    }
  }

  function featureLayer(info, legend) {
    const colours = colouringOf(info) ? colourer(colouringOf(info)) : null;
    const entry = { legend, colours, attributed: false, generation: 0 };
    const style = (feature) => {
      const value = colours ? feature.properties[colours.colouring.key] : null;
      const colour = colours ? colours.colour(value) : '#3366cc';
      return { color: colours ? '#333' : colour, weight: info.family === 'lines' ? 3 : 1, fillColor: colour, fillOpacity: 0.45, className: 'layer-' + info.name };
    };
    entry.group = L.geoJSON(null, {
      style,
      pointToLayer: (feature, latlng) => L.circleMarker(latlng, Object.assign(style(feature), { radius: 6, fillOpacity: 0.9 })),
      onEachFeature: (feature, layer) => layer.bindTooltip(featureName(feature.properties) || info.name + ' ' + feature.id),
    });
    entry.refresh = async () => {
      const generation = ++entry.generation;
      const b = map.getBounds();
      const bbox = [b.getWest(), b.getSouth(), b.getEast(), b.getNorth()].map((v) => v.toFixed(6)).join(',');
      let url = `/ogc/collections/${encodeURIComponent(info.name)}/items?bbox=${bbox}&limit=1000`;
      const features = [];
      try {
        while (url && features.length < MAX_FEATURES) {
          const page = await api(url, { headers: { Accept: 'application/geo+json' } });
          if (generation !== entry.generation) return;
          features.push(...page.features);
          const next = (page.links || []).find((link) => link.rel === 'next');
          url = next ? next.href : null;
        }
        if (colours && colours.colouring.latest) await addLatest(info, colours.colouring, features);
        if (generation !== entry.generation) return;
        entry.group.clearLayers();
        entry.group.addData(features);
        attribute(entry, features);
        renderLegend(entry);
      } catch (error) {
        if (generation === entry.generation) legend.replaceChildren(el('div', { class: 'error' }, error.message));
      }
    };
    return entry;
  }

  // The latest value of a time-series column, for colouring: one query for the layer's features.
  async function addLatest(info, colouring, features) {
    if (!features.length) return;
    const answer = await api('/v1/query', {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ query: `FIND ${quoted(info.name)} RETURN fid, LATEST(${quoted(colouring.latest)})` }),
    });
    const byFid = new Map(answer.rows.map((row) => [row.fid, row['latest_' + colouring.latest]]));
    for (const feature of features) feature.properties[colouring.key] = byFid.get(feature.id);
  }

  // A tile set: images drawn as they are; vector tiles fetched as GeoJSON and drawn as SVG.
  function tileLayer(info, tilejson, legend) {
    if (!(tilejson.vector_layers || []).length) return rasterLayer(tilejson, legend);
    const entry = { legend, attributed: false };
    const maxzoom = tilejson.maxzoom, minzoom = tilejson.minzoom;
    const tiles = new Map();   // "z/x/y" at the set's zooms -> { layer, uses }
    const group = L.layerGroup();
    if (tilejson.attribution) { map.attributionControl.addAttribution(tilejson.attribution); entry.attributed = true; }
    const grid = L.GridLayer.extend({
      createTile(coords, done) {
        const tile = document.createElement('div');
        // Above the set's deepest zoom the parent tile is drawn; below its first, nothing.
        if (coords.z < minzoom) { setTimeout(() => done(null, tile), 0); return tile; }
        const shift = Math.max(0, coords.z - maxzoom);
        const z = coords.z - shift, x = coords.x >> shift, y = coords.y >> shift;
        const key = `${z}/${x}/${y}`;
        tile.dataset.key = key;
        let cached = tiles.get(key);
        if (cached) { cached.uses++; setTimeout(() => done(null, tile), 0); return tile; }
        cached = { layer: null, uses: 1 };
        tiles.set(key, cached);
        api(`/v1/tiles/${encodeURIComponent(info.name)}/${key}.json`).then((collection) => {
          const features = collection.features.slice().sort((a, b) =>
            TILE_ORDER.indexOf(a.tile_layer) - TILE_ORDER.indexOf(b.tile_layer));
          cached.layer = L.geoJSON(features, {
            style: (f) => TILE_STYLES[f.tile_layer] || { color: '#666', weight: 1 },
            pointToLayer: (f, latlng) => L.circleMarker(latlng, { radius: 2, color: '#555', weight: 1, className: 'zoo-' + f.tile_layer }),
            filter: (f) => f.tile_layer !== 'places' || map.getZoom() >= 16,
          });
          if (cached.uses > 0) group.addLayer(cached.layer);
          attribute(entry, features);
          done(null, tile);
        }).catch((error) => { tiles.delete(key); done(error, tile); });
        return tile;
      },
    });
    // Only tiles that meet the set's bounds are asked for.
    const b = tilejson.bounds;
    const gridLayer = new grid({ minZoom: 0, maxZoom: 22, tileSize: 256, bounds: b ? L.latLngBounds([[b[1], b[0]], [b[3], b[2]]]) : undefined });
    gridLayer.on('tileunload', (event) => {
      const cached = tiles.get(event.tile.dataset.key);
      if (cached && --cached.uses <= 0) {
        if (cached.layer) group.removeLayer(cached.layer);
        tiles.delete(event.tile.dataset.key);
      }
    });
    entry.group = L.layerGroup([gridLayer, group]);
    entry.refresh = () => {};
    legend.replaceChildren(el('div', {}, `zoom ${minzoom}–${maxzoom}, drawn deeper from z${maxzoom}`));
    return entry;
  }

  function rasterLayer(tilejson, legend) {
    const b = tilejson.bounds;
    const layer = L.tileLayer(tilejson.tiles[0], {
      minNativeZoom: tilejson.minzoom, maxNativeZoom: tilejson.maxzoom, maxZoom: 22,
      bounds: b ? L.latLngBounds([[b[1], b[0]], [b[3], b[2]]]) : undefined,
      attribution: tilejson.attribution || undefined,
    });
    legend.replaceChildren(el('div', {}, `images, zoom ${tilejson.minzoom}–${tilejson.maxzoom}`));
    return { legend, group: layer, refresh: () => {}, attributed: false };
  }

  async function show(name, on) {
    const entry = overlays.get(name);
    if (!entry) return;
    if (on) {
      state.shown.add(name);
      entry.group.addTo(map);
      await entry.refresh();
    } else {
      state.shown.delete(name);
      map.removeLayer(entry.group);
      if (entry.attributed) { map.attributionControl.removeAttribution(OSM_ATTRIBUTION); entry.attributed = false; }
      entry.legend.replaceChildren();
    }
    writeURL();
  }

  async function loadLayers() {
    const started = performance.now();
    const answer = await api('/v1/layers');
    const list = $('layer-list');
    const select = $('nearest-layer');
    const bounds = L.latLngBounds([]);
    const features = answer.layers.filter((l) => l.kind === 'features' && l.bounds);
    for (const info of features) {
      bounds.extend([[info.bounds[1], info.bounds[0]], [info.bounds[3], info.bounds[2]]]);
      select.append(el('option', { value: info.name }, info.name));
    }
    if (!state.nearestLayer && features.length) {
      state.nearestLayer = (features.find((l) => l.time_series) || features[0]).name;
    }
    select.value = state.nearestLayer;
    const tileJSONs = new Map();
    for (const set of answer.tilesets) tileJSONs.set(set.name, await api(set.tilejson));
    // A first visit shows the vector tile sets and the first polygon layer: not a blank map.
    if (!layersInURL) {
      for (const set of answer.tilesets) if ((tileJSONs.get(set.name).vector_layers || []).length) state.shown.add(set.name);
      const polygons = features.find((l) => l.family === 'polygons');
      if (polygons) state.shown.add(polygons.name);
    }
    const entries = [];
    for (const info of features) entries.push({ name: info.name, count: info.count, make: (legend) => featureLayer(info, legend) });
    for (const set of answer.tilesets) {
      entries.push({ name: set.name, count: null, make: (legend) => tileLayer(set, tileJSONs.get(set.name), legend) });
    }
    for (const item of entries) {
      const box = el('input', { type: 'checkbox', id: 'layer-' + item.name });
      const legend = el('div', { class: 'legend' });
      overlays.set(item.name, item.make(legend));
      box.checked = state.shown.has(item.name);
      box.addEventListener('change', () => show(item.name, box.checked));
      list.append(el('li', {}, box, ' ', el('label', { for: 'layer-' + item.name }, item.name),
        item.count != null ? el('span', { class: 'count' }, ` ${item.count}`) : null, legend));
    }
    if (!hasView) {
      viewSet = true;  // before the move, so that its moveend writes the URL
      if (bounds.isValid()) map.fitBounds(bounds); else map.setView([50.0875, 14.4214], 12);
    }
    await Promise.all([...state.shown].map((name) => show(name, true)));
    timings.layers_ms = performance.now() - started;
  }
  map.on('moveend', () => {
    for (const name of state.shown) overlays.get(name)?.refresh();
    writeURL();
  });

  // ---- modes ----
  let routeStart = null;
  function setMode(mode) {
    state.mode = mode;
    routeStart = null;
    for (const button of document.querySelectorAll('#modes button')) button.classList.toggle('active', button.dataset.mode === mode);
    for (const label of document.querySelectorAll('#mode-options label')) label.classList.toggle('shown', label.dataset.for === mode);
    const hints = { inspect: 'Click the map: what is here.', route: 'Click the start, then the destination.', nearest: 'Click the map: the nearest features.' };
    panel.replaceChildren(el('p', { class: 'hint' }, hints[mode]));
    results.clearLayers();
    writeURL();
  }
  for (const button of document.querySelectorAll('#modes button')) button.addEventListener('click', () => setMode(button.dataset.mode));
  $('profile').value = state.profile;
  $('profile').addEventListener('change', () => { state.profile = $('profile').value; writeURL(); });
  $('nearest-layer').addEventListener('change', () => { state.nearestLayer = $('nearest-layer').value; writeURL(); });
  $('nearest-k').value = String(state.k);
  $('nearest-k').addEventListener('change', () => {
    state.k = Math.min(50, Math.max(1, parseInt($('nearest-k').value, 10) || 1));
    $('nearest-k').value = String(state.k);
    writeURL();
  });

  map.on('click', (event) => {
    const lon = event.latlng.lng, lat = event.latlng.lat;
    if (state.mode === 'inspect') inspect(lon, lat);
    else if (state.mode === 'route') routeClick(lon, lat);
    else nearest(lon, lat);
  });

  // ---- "where am I": /v1/here ----
  async function inspect(lon, lat) {
    const started = performance.now();
    results.clearLayers();
    L.circleMarker([lat, lon], { radius: 5, color: '#000', className: 'clicked' }).addTo(results);
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
    let chart = null;
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
        chart = el('div', { id: 'chart' });
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
      const answer = await api('/v1/query', {
        method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ query: `FIND ${quoted(layer)} WHERE fid = $1 RETURN HISTORY(${quoted(column)}, 24 h)`, params: [Number(fid)] }),
      });
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
      results.clearLayers();
      routeStart = [lon, lat];
      L.circleMarker([lat, lon], { radius: 6, color: '#2a6fdb', className: 'route-start' }).addTo(results);
      panel.replaceChildren(el('p', { class: 'hint' }, 'Now click the destination.'));
      return;
    }
    const from = routeStart.map((v) => +v.toFixed(6));
    routeStart = null;
    L.circleMarker([lat, lon], { radius: 6, color: '#d73027', className: 'route-end' }).addTo(results);
    const started = performance.now();
    try {
      const answer = await api(`/v1/route?from=${from[0].toFixed(6)},${from[1].toFixed(6)}&to=${lon.toFixed(6)},${lat.toFixed(6)}&profile=${state.profile}`);
      lon = +lon.toFixed(6); lat = +lat.toFixed(6);
      const route = answer.routes[0];
      exposed.lastRoute = { from, to: [lon, lat], profile: state.profile, distance: route.distance };
      L.geoJSON(route.geometry, { style: { color: '#2a6fdb', weight: 5, opacity: 0.85, className: 'route-line' } }).addTo(results);
      for (const waypoint of answer.waypoints) {
        L.circleMarker([waypoint.location[1], waypoint.location[0]], { radius: 4, color: '#000', fillColor: '#fff', fillOpacity: 1, className: 'snapped' })
          .bindTooltip(`snapped ${metres(waypoint.distance)}`).addTo(results);
      }
      panel.replaceChildren(
        el('h2', {}, `Route (${answer.profile})`),
        el('p', { id: 'route-summary' }, el('span', { id: 'route-distance' }, route.distance.toFixed(3)), ' m, ',
          el('span', { id: 'route-duration' }, (route.duration / 60).toFixed(1)), ' min on ', answer.network));
      timings.panel_ms.push(performance.now() - started);
    } catch (error) { showError(error); }
  }

  // ---- "what is near me": /v1/layers/{layer}/nearest ----
  async function nearest(lon, lat) {
    results.clearLayers();
    const layer = state.nearestLayer;
    const started = performance.now();
    L.circleMarker([lat, lon], { radius: 5, color: '#000', className: 'clicked' }).addTo(results);
    try {
      const answer = await api(`/v1/layers/${encodeURIComponent(layer)}/nearest?lon=${lon.toFixed(6)}&lat=${lat.toFixed(6)}&k=${state.k}`);
      const rows = el('table', { id: 'nearest-list' });
      answer.features.forEach((feature, i) => {
        const target = nearestPoint(feature.geometry, lon, lat);
        if (target) L.polyline([[lat, lon], [target[1], target[0]]], { color: '#7b3294', weight: 2, dashArray: '5 4', className: 'nearest-line' }).addTo(results);
        if (feature.geometry) L.geoJSON(feature, { style: { color: '#7b3294', weight: 2 }, pointToLayer: (f, ll) => L.circleMarker(ll, { radius: 5, color: '#7b3294' }) }).addTo(results);
        rows.append(el('tr', {}, el('td', {}, i + 1), el('td', { class: 'place' }, featureName(feature.properties) || '#' + feature.id), el('td', {}, metres(feature.properties.distance_m))));
      });
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

  // ---- the query box: /v1/query ----
  async function runQuery() {
    const text = $('query-text').value;
    if (!text.trim()) return;
    results.clearLayers();
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
      const drawn = L.geoJSON(features, { style: { color: '#e6550d', weight: 3, fillOpacity: 0.3, className: 'query-result' },
        pointToLayer: (f, ll) => L.circleMarker(ll, { radius: 6, color: '#e6550d', fillOpacity: 0.8, className: 'query-result' }) }).addTo(results);
      const b = drawn.getBounds();
      if (b.isValid() && !map.getBounds().contains(b)) map.fitBounds(b, { maxZoom: 17 });
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

  // ---- start ----
  // A link pasted into this tab changes only the hash: start again from it. (The page's own
  // updates use replaceState, which fires no hashchange.)
  window.addEventListener('hashchange', () => location.reload());
  setMode(state.mode);
  loadLayers().catch((error) => showError(error)).finally(() => {
    const navigation = performance.getEntriesByType('navigation')[0];
    timings.load_ms = navigation ? navigation.loadEventEnd - navigation.startTime : null;
    document.body.dataset.ready = 'true';
  });
})();
