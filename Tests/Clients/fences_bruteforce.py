#!/usr/bin/env python3
"""Checks the events of Vltava's live layers and geofences against a brute force of their own.

Starts `vltava serve` on a fresh copy of a GeoPackage, declares a live layer and about 200
fences (a layer fence on the pavilions with cross, one on the pens within 30 m with hysteresis,
~160 random circles with cross, hysteresis and dwell, 20 roaming pairs, a few fences reporting
inside/outside for one object), walks N objects at random and sends the positions in batches.
The same updates run through an independent implementation of the fence rules (shapely and
numpy: haversine distances, planar polygon containment, the spherical point-to-segment
distance for `cross`), and the two event lists must be equal: per object and in global order.
The events the POST answers carry must also equal those of the /v1/events feed (same ids, same
order).

A second part walks one object along the edge of a 50 m circle with GPS jitter (hysteresis 0:
many enters and exits; hysteresis 20 m: one enter, no exit) and another in and out of it for
10 s at a time before staying inside (dwell 30 s: one enter, 30 s after it first held).

Exits non-zero on any difference. Only the standard library, numpy and shapely.

Usage: fences_bruteforce.py --vltava BINARY --store GPKG [--port P] [--objects N] [--updates N] [--seed S]
"""
import argparse
import datetime
import http.client
import json
import math
import os
import random
import signal
import sys
import time
import urllib.parse
from collections import Counter, defaultdict

import numpy as np
import shapely
from shapely.geometry import LineString, shape as geojson_shape

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import live_server  # noqa: E402  (shared server/assertion helpers next to this script)

TOKEN = live_server.TOKEN
R_EARTH = 6371008.8
D2R = math.pi / 180
KINDS = ["enter", "exit", "inside", "outside", "cross"]
BATCH = 1000
T0 = 1_800_000_000  # seconds since 1970 of the first update


log = live_server.log


# --------------------------------------------------------------------------------------------
# Geometry, ported from the rules the fences promise

def haversine(lon1, lat1, lon2, lat2):
    phi1 = lat1 * D2R
    phi2 = lat2 * D2R
    s1 = math.sin((phi2 - phi1) / 2)
    s2 = math.sin((lon2 - lon1) * D2R / 2)
    h = s1 * s1 + math.cos(phi1) * math.cos(phi2) * s2 * s2
    return 2 * R_EARTH * math.asin(min(1.0, math.sqrt(h)))


def haversine_np(lon1, lat1, lon2, lat2):
    """Broadcasting haversine, the same formula and order of operations as above."""
    phi1 = lat1 * D2R
    phi2 = lat2 * D2R
    s1 = np.sin((phi2 - phi1) / 2)
    s2 = np.sin((lon2 - lon1) * D2R / 2)
    h = s1 * s1 + np.cos(phi1) * np.cos(phi2) * s2 * s2
    return 2 * R_EARTH * np.arcsin(np.minimum(1.0, np.sqrt(h)))


def unit_vector(lon, lat):
    lam = lon * D2R
    phi = lat * D2R
    c = math.cos(phi)
    return (c * math.cos(lam), c * math.sin(lam), math.sin(phi))


def point_to_segment(lon, lat, ax, ay, bx, by):
    """Great-circle metres from (lon, lat) to the arc a-b (Geodesy.pointToSegment)."""
    p = unit_vector(lon, lat)
    a = unit_vector(ax, ay)
    b = unit_vector(bx, by)
    n = (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])
    nn = math.sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
    to_a = haversine(lon, lat, ax, ay)
    to_b = haversine(lon, lat, bx, by)
    if nn <= 1e-15:
        return min(to_a, to_b)
    u = (n[0] / nn, n[1] / nn, n[2] / nn)
    s = p[0] * u[0] + p[1] * u[1] + p[2] * u[2]
    foot = (p[0] - s * u[0], p[1] - s * u[1], p[2] - s * u[2])
    ab = (a[1] * foot[2] - a[2] * foot[1], a[2] * foot[0] - a[0] * foot[2], a[0] * foot[1] - a[1] * foot[0])
    fb = (foot[1] * b[2] - foot[2] * b[1], foot[2] * b[0] - foot[0] * b[2], foot[0] * b[1] - foot[1] * b[0])
    on_arc = (ab[0] * u[0] + ab[1] * u[1] + ab[2] * u[2]) >= 0 and (fb[0] * u[0] + fb[1] * u[1] + fb[2] * u[2]) >= 0
    if not on_arc:
        return min(to_a, to_b)
    return R_EARTH * math.asin(min(1.0, abs(s)))


def destination(lon, lat, metres, bearing):
    """The point `metres` from (lon, lat) along `bearing` (radians from north), on the sphere."""
    d = metres / R_EARTH
    phi1 = lat * D2R
    lam1 = lon * D2R
    phi2 = math.asin(math.sin(phi1) * math.cos(d) + math.cos(phi1) * math.sin(d) * math.cos(bearing))
    lam2 = lam1 + math.atan2(math.sin(bearing) * math.sin(d) * math.cos(phi1), math.cos(d) - math.sin(phi1) * math.sin(phi2))
    return lam2 / D2R, phi2 / D2R


# --------------------------------------------------------------------------------------------
# The server

class Server(live_server.Server):
    """The shared live server plus a keep-alive http.client connection: the brute-force run
    sends thousands of requests, and a fresh connection per request would dominate it."""

    def __init__(self, binary, store, port):
        self.conn = None
        super().__init__(binary, store, port, prefix="vltava-fences-")

    def request(self, method, path, body=None, parse=True):
        headers = {}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if method != "GET":
            headers["Authorization"] = "Bearer " + TOKEN
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
            try:
                self.conn.request(method, path, body=data, headers=headers)
                resp = self.conn.getresponse()
                raw = resp.read()
                break
            except (http.client.HTTPException, ConnectionError):
                self.conn.close()
                self.conn = None
                if attempt == 1 or method != "GET":
                    raise
        if not parse:
            return resp.status, raw
        if resp.status // 100 != 2:
            raise RuntimeError(f"{method} {path} -> {resp.status}: {raw[:2000].decode(errors='replace')}")
        return resp.status, json.loads(raw)

    def close_clients(self):
        if self.conn is not None:
            self.conn.close()


def fetch_features(server, layer):
    """Every feature of a store layer, following `next` links."""
    features = []
    path = f"/ogc/collections/{layer}/items?limit=1000"
    seen = set()
    while path and path not in seen:
        seen.add(path)
        _, page = server.request("GET", path)
        features += page["features"]
        nxt = [link["href"] for link in page.get("links", []) if link.get("rel") == "next"]
        if not nxt or not page["features"]:
            break
        parts = urllib.parse.urlsplit(nxt[0])
        path = parts.path + ("?" + parts.query if parts.query else "")
    fids = [f["id"] for f in features]
    if len(set(fids)) != len(fids):
        raise RuntimeError(f"{layer}: paging returned a feature twice")
    return features


def parse_time(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class Sender:
    """Posts positions and checks that the answers' events are the feed's (ids and order)."""

    def __init__(self, server):
        self.server = server
        self.feed_after = 0
        self.last_id = None
        self.events = []
        self.feed_problems = []
        self.reads = 0

    def read_feed(self):
        got = []
        # Every other read in small pages, so that paging with `last` is exercised too.
        self.reads += 1
        limit = 10000 if self.reads % 2 else 257
        while True:
            _, page = self.server.request("GET", f"/v1/events?after={self.feed_after}&limit={limit}")
            if len(page["events"]) > limit:
                self.feed_problems.append(f"a feed page with limit {limit} held {len(page['events'])} events")
            if page.get("missed"):
                self.feed_problems.append(f"the feed says events were missed after {self.feed_after}")
            if not page["events"]:
                break
            got += page["events"]
            if page.get("last") != page["events"][-1]["id"]:
                self.feed_problems.append(f"feed page after {self.feed_after}: last {page.get('last')} is not its last event's id")
            self.feed_after = page["events"][-1]["id"]
        return got

    def send(self, layer, positions):
        for start in range(0, len(positions), BATCH):
            chunk = positions[start:start + BATCH]
            _, answer = self.server.request("POST", f"/v1/live/{layer}/positions", {"positions": chunk})
            if answer.get("updated") != len(chunk):
                raise RuntimeError(f"POST positions: updated {answer.get('updated')} of {len(chunk)}")
            posted = answer["events"]
            feed = self.read_feed()
            if posted != feed and len(self.feed_problems) < 10:
                a = [e["id"] for e in posted]
                b = [e["id"] for e in feed]
                self.feed_problems.append(
                    f"batch at update {start}: the POST answer has {len(posted)} events, the feed {len(feed)}; "
                    f"ids equal: {a == b}; first ids {a[:3]} vs {b[:3]}")
            for e in posted:
                if self.last_id is not None and e["id"] <= self.last_id and len(self.feed_problems) < 10:
                    self.feed_problems.append(f"event id {e['id']} does not follow {self.last_id}")
                self.last_id = e["id"]
            self.events += posted


# --------------------------------------------------------------------------------------------
# The fences, as this script declares them and as the brute force reads them

class FenceSpec:
    """kind: 'circle' (centre, radius), 'layer' (store layer, within, fids), 'near' (target, radius)."""

    def __init__(self, name, kind, watch_object=None, detect=("enter", "exit"), dwell=0.0, hysteresis=0.0, **area):
        self.name = name
        self.kind = kind
        self.watch_object = watch_object
        self.detect = list(detect)
        self.dwell = float(dwell)
        self.hysteresis = float(hysteresis)
        self.area = area

    def json(self, layer):
        watch = {"layer": layer}
        if self.watch_object is not None:
            watch["object"] = self.watch_object
        if self.kind == "circle":
            area = {"point": list(self.area["centre"]), "radius_m": self.area["radius"]}
        elif self.kind == "layer":
            area = {"layer": self.area["layer"]}
            if self.area.get("within"):
                area["within_m"] = self.area["within"]
            if self.area.get("fids") is not None:
                area["fids"] = list(self.area["fids"])
        else:
            area = {"near": {"layer": layer, "object": self.area["target"]}, "radius_m": self.area["radius"]}
        return {"watch": watch, "area": area, "detect": self.detect, "dwell_s": self.dwell, "hysteresis_m": self.hysteresis}


class BruteForce:
    """The fence rules, evaluated independently: every update against every area it could change."""

    def __init__(self, fences, layers, objects):
        # layers: {name: [(fid, shapely geometry, name)] sorted by fid}; objects: ids in index order.
        self.obj_index = {o: i for i, o in enumerate(objects)}
        self.objects = objects
        pt_cols = []       # (lon, lat) per point column
        poly_cols = []     # shapely polygon per polygon column
        col_of = {}        # (layer, fid) or ('circle', name) -> ('pt'|'poly', index)
        for lname, feats in layers.items():
            for fid, geom, _ in feats:
                if geom.geom_type == "Point":
                    col_of[(lname, fid)] = ("pt", len(pt_cols))
                    pt_cols.append((geom.x, geom.y))
                elif geom.geom_type in ("Polygon", "MultiPolygon"):
                    col_of[(lname, fid)] = ("poly", len(poly_cols))
                    poly_cols.append(geom)
                else:
                    raise RuntimeError(f"{lname} {fid}: a {geom.geom_type} is not handled")
        for f in fences:
            if f.kind == "circle":
                col_of[("circle", f.name)] = ("pt", len(pt_cols))
                pt_cols.append(tuple(f.area["centre"]))
        self.pt = np.array(pt_cols, dtype=float).reshape(-1, 2)
        self.polys = np.array(poly_cols, dtype=object)
        shapely.prepare(self.polys)
        self.poly_bounds = shapely.bounds(self.polys).reshape(-1, 4) if len(poly_cols) else np.zeros((0, 4))
        npt = len(pt_cols)
        self.slots = []
        for f in sorted(fences, key=lambda f: f.name):
            base = dict(fence=f.name, detect=set(f.detect), dwell=f.dwell, h=f.hysteresis,
                        watch=-1 if f.watch_object is None else self.obj_index[f.watch_object])
            if f.kind == "circle":
                self.slots.append(dict(base, type="pt", col=col_of[("circle", f.name)][1], r=float(f.area["radius"]), fid=None))
            elif f.kind == "layer":
                fids = f.area.get("fids")
                feats = [ft for ft in layers[f.area["layer"]] if fids is None or ft[0] in set(fids)]
                within = float(f.area.get("within") or 0)
                for fid, geom, fname in feats:
                    typ, c = col_of[(f.area["layer"], fid)]
                    if typ == "poly" and (within > 0 or f.hysteresis > 0):
                        raise RuntimeError("polygon areas with a margin are not brute-forced here")
                    self.slots.append(dict(base, type=typ, col=c if typ == "pt" else npt + c, r=within,
                                           fid=fid, layer=f.area["layer"], fname=fname))
            else:
                self.slots.append(dict(base, type="near", col=-1, r=float(f.area["radius"]), fid=None,
                                       target=self.obj_index[f.area["target"]]))
        S = len(self.slots)
        self.ncols = npt + len(poly_cols)
        self.is_area = np.array([s["type"] != "near" for s in self.slots], dtype=bool)
        self.area_slots = np.nonzero(self.is_area)[0]
        sa = [self.slots[i] for i in self.area_slots]
        self.sa_col = np.array([s["col"] for s in sa], dtype=int)
        self.sa_r = np.array([s["r"] for s in sa], dtype=float)
        self.sa_watch = np.array([s["watch"] for s in sa], dtype=int)
        self.sa_outside = np.array(["outside" in s["detect"] for s in sa], dtype=bool)
        self.sa_cross_pt = np.array([("cross" in s["detect"]) and s["type"] == "pt" for s in sa], dtype=bool)
        self.sa_cross_poly = np.array([("cross" in s["detect"]) and s["type"] == "poly" for s in sa], dtype=bool)
        self.sa_polycol = np.array([s["col"] - npt if s["type"] == "poly" else 0 for s in sa], dtype=int)
        # Roaming slots by the object they watch and by the object they follow.
        self.roam_by_watch = defaultdict(list)
        self.roam_by_target = defaultdict(list)
        for i, s in enumerate(self.slots):
            if s["type"] == "near":
                self.roam_by_watch[s["watch"]].append(i)
                self.roam_by_target[s["target"]].append(i)
        self.nslots = S

    def distances(self, lon, lat):
        """Metres from each point to each column (0/inf for polygons: inside or not)."""
        n = len(lon)
        d = np.empty((n, self.ncols))
        npt = len(self.pt)
        if npt:
            d[:, :npt] = haversine_np(lon[:, None], lat[:, None], self.pt[None, :, 0], self.pt[None, :, 1])
        if len(self.polys):
            inside = shapely.contains_xy(self.polys[None, :], lon[:, None], lat[:, None])
            d[:, npt:] = np.where(inside, 0.0, np.inf)
        return d

    def run(self, updates, chunk=2000):
        """updates: [(object index, lon, lat, time)] in order. Returns events as dicts in order."""
        n = len(updates)
        obj = np.array([u[0] for u in updates], dtype=int)
        lon = np.array([u[1] for u in updates], dtype=float)
        lat = np.array([u[2] for u in updates], dtype=float)
        # The previous position of the same object (NaN on its first update).
        qlon = np.full(n, np.nan)
        qlat = np.full(n, np.nan)
        last = {}
        for j, o in enumerate(obj.tolist()):
            if o in last:
                qlon[j] = lon[last[o]]
                qlat[j] = lat[last[o]]
            last[o] = j
        pos = {}            # object -> (lon, lat)
        states = defaultdict(dict)  # object -> {slot: [inside, pending_since]}, only non-resting
        events = []
        slots = self.slots
        area_slots = self.area_slots
        for c0 in range(0, n, chunk):
            c1 = min(n, c0 + chunk)
            D = self.distances(lon[c0:c1], lat[c0:c1])[:, self.sa_col]
            hasq = ~np.isnan(qlon[c0:c1])
            seg = np.where(hasq, haversine_np(np.nan_to_num(qlon[c0:c1]), np.nan_to_num(qlat[c0:c1]), lon[c0:c1], lat[c0:c1]), 0.0)
            ob = obj[c0:c1]
            watched = (self.sa_watch[None, :] == -1) | (self.sa_watch[None, :] == ob[:, None])
            cand = (D <= self.sa_r[None, :]) | self.sa_outside[None, :]
            # cross: the segment could come within r of a circle; its box meets a polygon's box.
            cand |= self.sa_cross_pt[None, :] & hasq[:, None] & (D <= self.sa_r[None, :] + seg[:, None] + 1.0)
            if self.sa_cross_poly.any():
                b = self.poly_bounds[self.sa_polycol]
                x0 = np.fmin(qlon[c0:c1], lon[c0:c1])[:, None]
                x1 = np.fmax(qlon[c0:c1], lon[c0:c1])[:, None]
                y0 = np.fmin(qlat[c0:c1], lat[c0:c1])[:, None]
                y1 = np.fmax(qlat[c0:c1], lat[c0:c1])[:, None]
                meets = ~((x1 < b[None, :, 0]) | (x0 > b[None, :, 2]) | (y1 < b[None, :, 1]) | (y0 > b[None, :, 3]))
                cand |= self.sa_cross_poly[None, :] & hasq[:, None] & meets
            cand &= watched
            rows, cols = np.nonzero(cand)
            bounds = np.searchsorted(rows, np.arange(c1 - c0 + 1))
            cols_slot = area_slots[cols]
            for k in range(c1 - c0):
                j = c0 + k
                o, plon, plat, t = updates[j]
                q = pos.get(o)
                pos[o] = (plon, plat)
                st = states[o]
                cset = set(cols_slot[bounds[k]:bounds[k + 1]].tolist())
                cset.update(st.keys())
                cset.update(self.roam_by_watch.get(o, ()))
                drow = D[k]
                for s in sorted(cset):
                    sl = slots[s]
                    if sl["type"] == "near":
                        tp = pos.get(sl["target"])
                        if tp is None or sl["target"] == o:
                            continue
                        d = haversine(plon, plat, tp[0], tp[1])
                        kind, before = self.step(st, s, d, sl, t)
                        if kind in sl["detect"]:
                            events.append(self.event(j, o, sl, kind, (plon, plat), t, d, before))
                        continue
                    if sl["watch"] != -1 and sl["watch"] != o:
                        continue
                    # Column position of slot s among the area slots.
                    d = drow[self.area_pos[s]]
                    resting = s not in st
                    kind, before = self.step(st, s, d, sl, t)
                    if kind == "outside" and "cross" in sl["detect"] and q is not None and resting and d > sl["r"]:
                        if self.cross(sl, q, (plon, plat)):
                            kind = "cross"
                    if kind in sl["detect"]:
                        events.append(self.event(j, o, sl, kind, (plon, plat), t, d, before))
                # Roaming fences following o: their watched object, against o's new position.
                for s in self.roam_by_target.get(o, ()):
                    sl = slots[s]
                    w = sl["watch"]
                    wp = pos.get(w)
                    if wp is None or w == o:
                        continue
                    d = haversine(wp[0], wp[1], plon, plat)
                    kind, before = self.step(states[w], s, d, sl, t)
                    if kind in ("enter", "exit") and kind in sl["detect"]:
                        events.append(self.event(j, w, sl, kind, wp, t, d, before, recheck=True))
        return events

    @property
    def area_pos(self):
        if not hasattr(self, "_area_pos"):
            self._area_pos = {int(s): i for i, s in enumerate(self.area_slots)}
        return self._area_pos

    @staticmethod
    def step(st, s, d, sl, t):
        state = st.get(s)
        inside, pending = (state if state is not None else (False, None))
        before = (inside, pending)
        wants = d > sl["r"] + sl["h"] if inside else d <= sl["r"]
        if not wants:
            pending = None
            kind = "inside" if inside else "outside"
        else:
            since = pending if pending is not None else t
            if t - since >= sl["dwell"]:
                inside = not inside
                pending = None
                kind = "enter" if inside else "exit"
            else:
                pending = since
                kind = "inside" if inside else "outside"
        if inside or pending is not None:
            st[s] = (inside, pending)
        else:
            st.pop(s, None)
        return kind, before

    def cross(self, sl, q, p):
        if sl["type"] == "pt":
            d_q = self.dist_to_col(sl, q)
            if not d_q > sl["r"]:
                return False
            c = self.pt[sl["col"]]
            return point_to_segment(float(c[0]), float(c[1]), q[0], q[1], p[0], p[1]) <= sl["r"]
        poly = self.polys[sl["col"] - len(self.pt)]
        if shapely.contains_xy(poly, q[0], q[1]):
            return False
        return bool(shapely.intersects(LineString([q, p]), poly))

    def dist_to_col(self, sl, p):
        if sl["type"] == "pt":
            c = self.pt[sl["col"]]
            return haversine(p[0], p[1], float(c[0]), float(c[1]))
        poly = self.polys[sl["col"] - len(self.pt)]
        return 0.0 if shapely.contains_xy(poly, p[0], p[1]) else math.inf

    def event(self, j, o, sl, kind, p, t, d, before, recheck=False):
        return {"update": j, "object": self.objects[o], "fence": sl["fence"], "event": kind,
                "fid": sl["fid"], "near": self.objects[sl["target"]] if sl["type"] == "near" else None,
                "feature": {"layer": sl["layer"], "fid": sl["fid"], "name": sl["fname"]} if sl["fid"] is not None else None,
                "position": p, "time": t,
                "context": f"d={d:.3f} m r={sl['r']} h={sl['h']} dwell={sl['dwell']} state before={before}"
                           + (" (re-check after the target moved)" if recheck else "")}


# --------------------------------------------------------------------------------------------
# Comparison

def server_key(e):
    feat = e.get("feature")
    return (e["object"], e["fence"], e["event"], feat["fid"] if feat else None, e.get("near"))


def brute_key(e):
    return (e["object"], e["fence"], e["event"], e["fid"], e["near"])


def compare(label, server_events, brute_events, updates, objects, bf, layer_name):
    """Per object and in global order; positions and times too. Returns a list of problems."""
    problems = []
    s_keys = []
    for e in server_events:
        t = parse_time(e["time"])
        s_keys.append((round(t, 3),) + server_key(e))
    b_keys = [(round(float(e["time"]), 3),) + brute_key(e) for e in brute_events]

    update_at = {u[3]: i for i, u in enumerate(updates)}

    def describe_server(e):
        t = parse_time(e["time"])
        j = update_at.get(t)
        extra = ""
        feat = e.get("feature")
        if j is not None and bf is not None:
            o = objects[updates[j][0]]
            for sl in bf.slots:
                if sl["fence"] != e["fence"] or (feat and sl["fid"] != feat["fid"]):
                    continue
                p = e.get("position") or [updates[j][1], updates[j][2]]
                if sl["type"] == "near":
                    break
                extra = f" d={bf.dist_to_col(sl, p):.3f} m r={sl['r']} h={sl['h']} dwell={sl['dwell']}"
                break
            extra += f" (update {j} moved {o})"
        return f"server {e['event']} {e['fence']} {e['object']} fid={feat['fid'] if feat else None} near={e.get('near')} at {e['position']} {e['time']}{extra}"

    def describe_brute(e):
        return (f"brute  {e['event']} {e['fence']} {e['object']} fid={e['fid']} near={e['near']} "
                f"at {list(e['position'])} update {e['update']} ({objects[updates[e['update']][0]]} moved) {e['context']}")

    # Per object.
    per_s = defaultdict(list)
    per_b = defaultdict(list)
    for i, k in enumerate(s_keys):
        per_s[k[1]].append(i)
    for i, k in enumerate(b_keys):
        per_b[k[1]].append(i)
    shown = 0
    for o in sorted(set(per_s) | set(per_b)):
        a = [s_keys[i] for i in per_s[o]]
        b = [b_keys[i] for i in per_b[o]]
        if a == b:
            continue
        n = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
        problems.append(f"{label}: object {o}: {len(a)} server events, {len(b)} brute force; first difference at its event {n}")
        if shown < 10:
            shown += 1
            lines = [problems[-1]]
            for i in range(max(0, n - 2), n + 3):
                if i < len(a):
                    lines.append("   " + describe_server(server_events[per_s[o][i]]))
                if i < len(b):
                    lines.append("   " + describe_brute(brute_events[per_b[o][i]]))
            problems[-1] = "\n".join(lines)
    # Global order.
    if s_keys != b_keys:
        n = next((i for i in range(min(len(s_keys), len(b_keys))) if s_keys[i] != b_keys[i]), min(len(s_keys), len(b_keys)))
        lines = [f"{label}: global order differs at event {n} ({len(s_keys)} server events, {len(b_keys)} brute force)"]
        for i in range(max(0, n - 3), n + 4):
            if i < len(s_keys):
                lines.append(f"   [{i}] " + describe_server(server_events[i]))
            if i < len(b_keys):
                lines.append(f"   [{i}] " + describe_brute(brute_events[i]))
        problems.append("\n".join(lines))
    else:
        # Same events: the positions must be where the object was.
        bad = 0
        for se, be in zip(server_events, brute_events):
            sp = se.get("position")
            if sp is None or abs(sp[0] - be["position"][0]) > 1e-9 or abs(sp[1] - be["position"][1]) > 1e-9:
                bad += 1
                if bad <= 10:
                    problems.append(f"{label}: event {se['id']} position {sp}, expected {list(be['position'])}: {describe_brute(be)}")
            if se.get("layer") != layer_name and bad < 10:
                bad += 1
                problems.append(f"{label}: event {se['id']} names layer {se.get('layer')!r}, expected {layer_name!r}")
            if se.get("feature") != be["feature"] and bad < 10:
                bad += 1
                problems.append(f"{label}: event {se['id']} feature {se.get('feature')}, expected {be['feature']}")
    return problems


def kind_counts(events, key="event"):
    c = Counter(e[key] for e in events)
    return " ".join(f"{k}={c.get(k, 0)}" for k in KINDS)


# --------------------------------------------------------------------------------------------
# Part 1: random walk

def part_random(server, sender, args, rng, layers):
    problems = []
    # The zoo's box: the pavilions' and pens' extent, grown by 100 m.
    allb = np.array([g.bounds for lname in layers for _, g, _ in layers[lname]])
    minx, miny = allb[:, 0].min(), allb[:, 1].min()
    maxx, maxy = allb[:, 2].max(), allb[:, 3].max()
    midlat = (miny + maxy) / 2
    dlat = 100 / 111_195
    dlon = dlat / math.cos(midlat * D2R)
    minx, maxx, miny, maxy = float(minx - dlon), float(maxx + dlon), float(miny - dlat), float(maxy + dlat)
    log(f"zoo box: {minx:.6f},{miny:.6f} .. {maxx:.6f},{maxy:.6f}")

    n_obj = args.objects
    objects = [f"o{i}" for i in range(n_obj)]

    def rpoint():
        return (rng.uniform(minx, maxx), rng.uniform(miny, maxy))

    # Start positions; roaming targets start near their watcher.
    start = [rpoint() for _ in range(n_obj)]
    fences = []
    pav_fids = [fid for fid, _, _ in layers["pavilions"]]
    pen_fids = [fid for fid, _, _ in layers["pens"]]
    fences.append(FenceSpec("pavilions", "layer", detect=["enter", "exit", "cross"], layer="pavilions"))
    fences.append(FenceSpec("pens", "layer", hysteresis=5, layer="pens", within=30))
    for i in range(160):
        detect = ["enter", "exit"]
        roll = rng.random()
        if roll < 0.3:
            detect = ["enter", "exit", "cross"]
        elif roll < 0.4:
            detect = ["cross"]
        elif roll < 0.45:
            detect = ["exit"]
        hyst = round(rng.uniform(0, 10), 2) if rng.random() < 0.4 else 0
        dwell = float(rng.randint(0, 60)) if rng.random() < 0.25 else 0
        c = rpoint()
        fences.append(FenceSpec(f"c{i:03d}", "circle", detect=detect, dwell=dwell, hysteresis=hyst,
                                centre=(round(c[0], 7), round(c[1], 7)), radius=round(rng.uniform(20, 150), 1)))
    pairs = []
    for i in range(20):
        w, t = rng.sample(range(n_obj), 2)
        pairs.append((w, t))
        b = rng.uniform(0, 2 * math.pi)
        start[t] = destination(start[w][0], start[w][1], rng.uniform(10, 150), b)
        hyst = round(rng.uniform(0, 10), 1) if i % 4 == 1 else 0
        dwell = float(rng.randint(1, 20)) if i % 4 == 2 else 0
        fences.append(FenceSpec(f"near{i:02d}", "near", watch_object=objects[w], hysteresis=hyst, dwell=dwell,
                                target=objects[t], radius=round(rng.uniform(20, 100), 1)))
    # A few fences reporting every update of one object.
    io = rng.sample(range(n_obj), 4)
    c = start[io[0]]
    fences.append(FenceSpec("io-circle", "circle", watch_object=objects[io[0]], detect=KINDS, hysteresis=3,
                            centre=(round(c[0], 7), round(c[1], 7)), radius=120.0))
    fences.append(FenceSpec("io-pens", "layer", watch_object=objects[io[1]], detect=KINDS, layer="pens", within=30,
                            fids=rng.sample(pen_fids, min(8, len(pen_fids))), dwell=5))
    fences.append(FenceSpec("io-pav", "layer", watch_object=objects[io[2]], detect=["inside", "outside", "cross", "enter"],
                            layer="pavilions"))
    t_io = next(t for t in range(n_obj) if t != io[3])
    start[t_io] = destination(start[io[3]][0], start[io[3]][1], 60, 1.0)
    fences.append(FenceSpec("io-near", "near", watch_object=objects[io[3]], detect=["enter", "exit", "inside", "outside"],
                            target=objects[t_io], radius=80.0))
    # Areas come in fid order whatever order `fids` lists them in: pens given backwards, wide
    # enough that one update often enters several.
    fences.append(FenceSpec("pens-wide", "layer", layer="pens", within=120,
                            fids=sorted(rng.sample(pen_fids, min(12, len(pen_fids))), reverse=True)))
    # Fences in name order (code points: capitals, digits and punctuation before small letters),
    # all the same circle so that one update fires them together.
    hot = layers["pens"][len(layers["pens"]) // 2][1]
    for name in ("zoo.gate", "Zoo.gate", "zoo-gate", "zoo_gate", "ZOO1", "zoo10", "zoo9", "zoožirafa", "zoogate"):
        fences.append(FenceSpec(name, "circle", centre=(round(hot.x, 7), round(hot.y, 7)), radius=90.0,
                                detect=["enter", "exit", "cross"]))
    # An object is never near itself: this one must stay silent.
    fences.append(FenceSpec("near-self", "near", watch_object=objects[io[3]], detect=["enter", "exit", "inside", "outside"],
                            target=objects[io[3]], radius=1000.0))
    # Objects of a roaming pair tend to walk towards each other, so they come and go often.
    partner = {}
    for w, t in pairs + [(io[3], t_io)]:
        partner.setdefault(w, t)
        partner.setdefault(t, w)

    server.request("PUT", "/v1/live/visitors", {"history": "none"})
    for f in fences:
        server.request("PUT", "/v1/fences/" + urllib.parse.quote(f.name), f.json("visitors"))
    log(f"{len(fences)} fences, {n_obj} objects, {args.updates} updates")

    # The walk: each object placed once, in order, then random moves of 1-40 m; 1 s per update.
    updates = []
    cur = list(start)
    for j in range(args.updates):
        if j < n_obj:
            o = j
        else:
            o = rng.randrange(n_obj)
            lon0, lat0 = cur[o]
            heading = rng.uniform(0, 2 * math.pi)
            if o in partner and rng.random() < 0.5:
                plon, plat = cur[partner[o]]
                heading = math.atan2((plon - lon0) * math.cos(lat0 * D2R), plat - lat0) + rng.uniform(-1, 1)
            lon1, lat1 = destination(lon0, lat0, rng.uniform(1, 40), heading)
            if not (minx <= lon1 <= maxx):
                lon1 = 2 * lon0 - lon1
            if not (miny <= lat1 <= maxy):
                lat1 = 2 * lat0 - lat1
            cur[o] = (lon1, lat1)
        lon, lat = round(cur[o][0], 8), round(cur[o][1], 8)
        cur[o] = (lon, lat)
        updates.append((o, lon, lat, float(T0 + j)))
    positions = [{"id": objects[o], "position": [lon, lat], "time": t} for o, lon, lat, t in updates]

    t1 = time.time()
    sender.send("visitors", positions)
    t_server = time.time() - t1
    server_events = list(sender.events)
    log(f"server: {len(server_events)} events in {t_server:.1f} s ({len(updates) / max(t_server, 1e-9):.0f} updates/s): {kind_counts(server_events)}")

    t1 = time.time()
    bf = BruteForce(fences, layers, objects)
    brute = bf.run(updates)
    t_brute = time.time() - t1
    log(f"brute force: {len(brute)} events in {t_brute:.1f} s: {kind_counts(brute)}")
    rechecks = sum(1 for e in brute if "re-check" in e["context"])
    log(f"brute force: {rechecks} events of roaming re-checks (the followed object moved)")
    per_fence = Counter("c000-c159" if e["fence"][0] == "c" and e["fence"][1:].isdigit() else e["fence"] for e in brute)
    log("brute force events by fence: " + ", ".join(f"{k}={v}" for k, v in sorted(per_fence.items())))

    t1 = time.time()
    problems += compare("random walk", server_events, brute, updates, objects, bf, "visitors")
    log(f"compared in {time.time() - t1:.1f} s")
    # The test is only worth something if every kind happened.
    c = Counter(e["event"] for e in brute)
    if args.updates >= 5000:
        for k in KINDS:
            if c[k] == 0:
                problems.append(f"random walk: the brute force made no {k} event; the walk tests too little")
        if not any(e["near"] for e in brute if e["event"] == "enter") or rechecks == 0:
            problems.append("random walk: no roaming enter or no re-check event; the walk tests too little")
    return problems, len(updates), len(server_events)


# --------------------------------------------------------------------------------------------
# Part 2: dwell and hysteresis at a fence's edge

def part_edge(server, sender, rng, centre):
    problems = []
    layer = "edgewalk"
    server.request("PUT", f"/v1/live/{layer}", {"history": "none"})
    c = (round(centre[0], 7), round(centre[1], 7))
    fences = [
        FenceSpec("edge-h0", "circle", watch_object="jitter", centre=c, radius=50.0),
        FenceSpec("edge-h20", "circle", watch_object="jitter", hysteresis=20, centre=c, radius=50.0),
        FenceSpec("edge-dwell30", "circle", watch_object="dweller", dwell=30, centre=c, radius=50.0),
    ]
    for f in fences:
        server.request("PUT", f"/v1/fences/{f.name}", f.json(layer))
    objects = ["jitter", "dweller"]
    t_base = T0 + 10_000_000
    updates = []
    # Along the edge, 1 m a second, ±8 m of jitter across it: starts outside.
    angle = rng.uniform(0, 2 * math.pi)
    max_out = 0.0
    for k in range(300):
        off = 6.0 if k == 0 else rng.uniform(-8, 8)
        lon, lat = destination(c[0], c[1], 50 + off, angle + k / 50.0)
        lon, lat = round(lon, 8), round(lat, 8)
        max_out = max(max_out, haversine(lon, lat, c[0], c[1]) - 50)
        updates.append((0, lon, lat, float(t_base + k)))
    # In for 10 s, out for 10 s, four times, then in for 60 s.
    track = ["out"] * 5 + (["in"] * 10 + ["out"] * 10) * 4 + ["in"] * 60
    first_final = 5 + 80
    for k, where in enumerate(track):
        lon, lat = destination(c[0], c[1], 20 if where == "in" else 80, rng.uniform(0, 2 * math.pi))
        updates.append((1, round(lon, 8), round(lat, 8), float(t_base + 1000 + k)))
    expected_enter_time = float(t_base + 1000 + first_final + 30)

    before = len(sender.events)
    positions = [{"id": objects[o], "position": [lon, lat], "time": t} for o, lon, lat, t in updates]
    sender.send(layer, positions)
    server_events = sender.events[before:]
    bf = BruteForce(fences, {}, objects)
    brute = bf.run(updates)
    problems += compare("edge walk", server_events, brute, updates, objects, bf, layer)

    def count(events, fence, kind, key):
        return sum(1 for e in events if e["fence"] == fence and e[key] == kind)

    for src, evs, key in (("server", server_events, "event"), ("brute force", brute, "event")):
        h0_in, h0_out = count(evs, "edge-h0", "enter", key), count(evs, "edge-h0", "exit", key)
        h20_in, h20_out = count(evs, "edge-h20", "enter", key), count(evs, "edge-h20", "exit", key)
        dw_in, dw_out = count(evs, "edge-dwell30", "enter", key), count(evs, "edge-dwell30", "exit", key)
        log(f"edge walk ({src}): hysteresis 0: {h0_in} enters, {h0_out} exits; hysteresis 20: {h20_in} enters, {h20_out} exits; "
            f"dwell 30: {dw_in} enters, {dw_out} exits")
        if h0_in < 10 or h0_out < 10:
            problems.append(f"edge walk ({src}): hysteresis 0 should flap: {h0_in} enters, {h0_out} exits")
        if (h20_in, h20_out) != (1, 0):
            problems.append(f"edge walk ({src}): hysteresis 20 m (at most {max_out:.1f} m outside): {h20_in} enters, {h20_out} exits; expected 1 and 0")
        if (dw_in, dw_out) != (1, 0):
            problems.append(f"edge walk ({src}): dwell 30 s: {dw_in} enters, {dw_out} exits; expected 1 and 0")
        else:
            e = next(e for e in evs if e["fence"] == "edge-dwell30")
            t = parse_time(e["time"]) if src == "server" else e["time"]
            if abs(t - expected_enter_time) > 1e-6:
                problems.append(f"edge walk ({src}): the dwell enter came at {t}, expected {expected_enter_time} "
                                f"(30 s after the object first stayed inside)")
    return problems, len(updates), len(server_events)


# --------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vltava", default=os.environ.get("VLTAVA_BINARY", "/tmp/vltava-live"))
    ap.add_argument("--store", required=True, help="a GeoPackage with the zoo (demo/vltava.gpkg, which make demo builds); copied, never written")
    ap.add_argument("--port", type=int, default=0, help="0: a free port")
    ap.add_argument("--objects", type=int, default=1000)
    ap.add_argument("--updates", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=20261128)
    args = ap.parse_args()
    if args.updates < args.objects:
        ap.error("--updates must be at least --objects (each object is placed once first)")
    rng = random.Random(args.seed)
    started = time.time()
    server = None

    def on_signal(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_signal)
    problems = []
    try:
        server = Server(args.vltava, args.store, args.port)
        log(f"server up on port {server.port} in {time.time() - started:.1f} s")
        layers = {}
        for lname in ("pavilions", "pens"):
            feats = fetch_features(server, lname)
            items = sorted((int(f["id"]), geojson_shape(f["geometry"]), (f.get("properties") or {}).get("name")) for f in feats)
            layers[lname] = [(fid, g, nm) for fid, g, nm in items]
            log(f"{lname}: {len(items)} features ({Counter(g.geom_type for _, g, _ in items)})")
        sender = Sender(server)
        p1, n1, m1 = part_random(server, sender, args, rng, layers)
        problems += p1
        allb = np.array([g.bounds for lname in layers for _, g, _ in layers[lname]])
        centre = ((allb[:, 0].min() + allb[:, 2].max()) / 2, (allb[:, 1].min() + allb[:, 3].max()) / 2)
        p2, n2, m2 = part_edge(server, sender, rng, centre)
        problems += p2
        problems += sender.feed_problems
        if server.proc.poll() is not None:
            problems.append(f"the server exited with {server.proc.returncode}:\n{server.log_tail()}")
    except BaseException as error:
        log(f"FAILED: {type(error).__name__}: {error}")
        if server is not None:
            log("server log:\n" + server.log_tail())
        if server is not None:
            server.stop()
        return 2
    server.stop()
    log(f"wall time {time.time() - started:.1f} s")
    if problems:
        log(f"{len(problems)} problems:")
        for p in problems[:20]:
            log(" - " + p)
        return 1
    log(f"fences brute force: {n1 + n2} updates, {m1 + m2} events, all equal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
