#!/usr/bin/env python3
"""Live positions with fence evaluation over HTTP (Vltava) against Redis GEOADD (the floor: Redis
stores positions and detects nothing), in the same run, plus the latency from an update to its
event on a Server-Sent Events stream.

Workload (pre-generated once from --seed, the same bytes for both): --objects visitors random-walk
inside the zoo's extent (the pavilions' and pens' bbox, from /ogc/collections/…; steps 1–40 m,
reflected at the edges), --updates positions in all, step-major (every object's step k before any
step k+1). Vltava gets 200 fences: the pavilions layer (enter/exit/cross), the pens layer within
30 m, 20 roaming pairs (visitor 2i near visitor 2i+1 within 50 m; they start 0-80 m apart),
177 random circles of 20–150 m and one probe circle just outside the zoo for the latency test.

Each of --rounds rounds runs, alternately, Redis then Vltava, each on a fresh process:
  Redis   redis-server on a free loopback port (--save "" --appendonly no); every pipeline of
          --batch `GEOADD visitors lon lat id` pre-encoded as RESP, sent with one sendall, all
          its integer replies read before the next; the server's rate, not Python's encoding.
  Vltava  `vltava serve` on a fresh copy of --store; pre-encoded `POST /v1/live/visitors/positions`
          bodies of --batch positions over one keep-alive connection; then a fresh server again
          and the same positions over 2 connections in 2 threads (objects split in two halves, so
          every object's updates stay in order); updates/s and events/s (events counted from
          the replies after the clock stops). Then, on that second server, --latency-samples
          single-position POSTs that alternately put object `probe` inside and outside the probe
          fence (each makes exactly one event, checked), with an SSE client on
          /v1/fences/probe/events: the time from just before the POST is sent to the arrival of
          the event's data line, and the POST's round trip alone.
Memory: each server's peak RSS (VmHWM) at its end, Redis's used_memory_peak_human.
Checks: every reply is 2xx with the right counts and rising event ids; every fence's events
(circles, roaming pairs, pens within 30 m, pavilions with cross) agree in number with a
client-side replay (haversine; polygons on a local plane; positions within 1 cm of an edge left
aside); every round and both connection modes make the same events; each probe update makes
exactly its one event, on the stream too. Exits non-zero with a message otherwise. Event ids
at or above 2^53 (which JavaScript cannot read exactly) are a WARNING, not a failure. Client,
Redis and server share this machine's CPUs (printed): on a small machine the client's share
counts, so read the 2-connection row with it in mind.

    Benchmarks/fences-vs-redis.py --vltava .build/release/vltava --store demo/vltava.gpkg \\
        [--objects 1000] [--updates 200000] [--batch 1000] [--rounds 3] [--latency-samples 1000] \\
        [--baseline-vltava OTHER/vltava --baseline-bench OTHER/vltava-bench]

With a baseline (another build, say main's), every round also runs its library and 1-connection
HTTP passes, alternating which build goes first, and prints this build's ratios to it: on a
shared machine only ratios within one run mean anything.
"""

import argparse
import http.client
import json
import math
import os
import queue
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKEN = "demo-write-token-not-for-production"
EARTH_RADIUS = 6_371_008.8  # the engine's (Geodesy.earthRadius)
BASE_TIME = 1782000000.0
LAYER = "visitors"
PROBE_FENCE = "probe"
PROBE_RADIUS = 20.0


class Failure(Exception):
    pass


# MARK: - processes


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def peak_rss_mb(pid):
    """VmHWM (peak resident set) of a live process, in MB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def stop(process):
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class Processes:
    """Every process started here, stopped at the end whatever happens."""

    def __init__(self):
        self.running = []
        self.logs = {}

    def start(self, command, log):
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.running.append(process)
        self.logs[process.pid] = (os.path.basename(command[0]), log.name)
        return process

    def show_logs(self):
        """The last lines each running process logged, on standard error (after a failure)."""
        for process in self.running:
            name, path = self.logs.get(process.pid, ("?", None))
            text = ""
            if path:
                with open(path, errors="replace") as f:
                    lines = [line for line in f if not ('"/healthz"' in line and '"503"' in line)]  # polled while starting
                text = "".join(lines[-15:]).strip()
            state = "running" if process.poll() is None else f"exited with {process.returncode}"
            print(f"{name} (pid {process.pid}, {state}) logged last:", *(text.splitlines() or ["(nothing)"]), sep="\n  ", file=sys.stderr)

    def stop(self, process):
        stop(process)
        if process in self.running:
            self.running.remove(process)

    def stop_all(self):
        for process in reversed(self.running):
            stop(process)
        self.running = []


def tail(path, lines=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


class Vltava:
    """`vltava serve` on a fresh copy of the store in its own temporary folder."""

    def __init__(self, processes, binary, store, work, label):
        self.folder = tempfile.mkdtemp(prefix=f"vltava-{label}-", dir=work)
        self.db = os.path.join(self.folder, "store.gpkg")
        shutil.copyfile(store, self.db)
        tokens = os.path.join(self.folder, "tokens")
        with open(tokens, "w") as f:
            f.write(TOKEN + "\n")
        self.port = free_port()
        self.log = os.path.join(self.folder, "server.log")
        self.processes = processes
        with open(self.log, "w") as log:
            self.process = processes.start([binary, "serve", "--db", self.db, "--host", "127.0.0.1", "--port", str(self.port),
                                            "--write-token-file", tokens, "--log-level", "warning"], log)
        deadline = time.time() + 120
        while True:
            try:
                status, _ = self.request("GET", "/healthz", timeout=2)
                if status == 200:
                    break
            except OSError:
                pass
            if self.process.poll() is not None:
                raise Failure(f"vltava serve exited with {self.process.returncode} before /healthz answered:\n{tail(self.log)}")
            if time.time() > deadline:
                raise Failure(f"vltava serve did not answer /healthz within 120 s:\n{tail(self.log)}")
            time.sleep(0.05)

    def connection(self, timeout=300):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, path, body=None, timeout=60):
        connection = self.connection(timeout)
        try:
            headers = {"Authorization": f"Bearer {TOKEN}"}
            if body is not None:
                headers["Content-Type"] = "application/json"
                body = json.dumps(body).encode()
            connection.request(method, path, body=body, headers=headers)
            answer = connection.getresponse()
            return answer.status, answer.read()
        finally:
            connection.close()

    def must(self, method, path, body=None):
        status, data = self.request(method, path, body)
        if not 200 <= status < 300:
            raise Failure(f"{method} {path} answered {status}: {data[:500].decode(errors='replace')}")
        return json.loads(data) if data else None

    def peak_rss_mb(self):
        if self.process.poll() is not None:
            raise Failure(f"vltava serve exited with {self.process.returncode}:\n{tail(self.log)}")
        return peak_rss_mb(self.process.pid)

    def close(self):
        """Stops the server; returns (errors, notes): the lines it logged at error level or
        worse (but /healthz's 503s while it started), and its other lines, each once, its
        logged requests summed up by level, method, route and status (with the slowest)."""
        self.processes.stop(self.process)
        errors, notes, requests = [], [], {}
        with open(self.log, errors="replace") as f:
            for line in f.read().splitlines():
                if not line.strip() or line.startswith("listening on"):
                    continue
                try:
                    entry = json.loads(line)
                except ValueError:
                    entry = None
                if not isinstance(entry, dict):
                    notes.append(line)
                    continue
                if entry.get("msg") == "request":
                    if entry.get("path") == "/healthz" and str(entry.get("status")) == "503":
                        continue
                    key = f"{entry.get('level')} {entry.get('method')} {entry.get('route')} {entry.get('status')}"
                    count, slowest = requests.get(key, (0, 0.0))
                    try:
                        ms = float(entry.get("ms", 0))
                    except ValueError:
                        ms = 0.0
                    requests[key] = (count + 1, max(slowest, ms))
                    if entry.get("level") in ("error", "critical") or str(entry.get("status", "")).startswith("5"):
                        errors.append(line)
                elif entry.get("level") in ("error", "critical"):
                    errors.append(line)
                else:
                    notes.append(json.dumps({k: v for k, v in entry.items() if k != "ts"}, ensure_ascii=False))
        for key, (count, slowest) in sorted(requests.items()):
            notes.append(f"logged requests: {key} × {count}, slowest {slowest:.0f} ms")
        shutil.rmtree(self.folder, ignore_errors=True)
        return errors, notes


class Redis:
    def __init__(self, processes, binary, work):
        self.port = free_port()
        self.folder = tempfile.mkdtemp(prefix="redis-", dir=work)
        self.log = os.path.join(self.folder, "redis.log")
        self.processes = processes
        with open(self.log, "w") as log:
            self.process = processes.start([binary, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no",
                                            "--dir", self.folder, "--daemonize", "no"], log)
        deadline = time.time() + 30
        while True:
            try:
                self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=60)
                if self.command("PING") == b"+PONG":
                    break
            except OSError:
                pass
            if self.process.poll() is not None:
                raise Failure(f"redis-server exited with {self.process.returncode}:\n{tail(self.log)}")
            if time.time() > deadline:
                raise Failure(f"redis-server did not answer PING within 30 s:\n{tail(self.log)}")
            time.sleep(0.05)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = bytearray(1 << 20)

    def command(self, *words):
        """One command, its whole reply (simple, integer or bulk) as bytes without the framing."""
        self.sock.sendall(resp(*words))
        data = b""
        while b"\r\n" not in data:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise OSError("redis closed the connection")
            data += chunk
        if data.startswith(b"$"):
            length = int(data[1:data.index(b"\r\n")])
            start = data.index(b"\r\n") + 2
            while len(data) < start + length + 2:
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise OSError("redis closed the connection")
                data += chunk
            return data[start:start + length]
        return data[:data.index(b"\r\n")]

    def pipeline(self, payload, count):
        """Sends one pre-encoded pipeline and reads its `count` replies; returns the number of
        integer replies (the caller checks it is `count`)."""
        self.sock.sendall(payload)
        view = memoryview(self.buffer)
        received = bytearray()
        lines = 0
        while lines < count:
            n = self.sock.recv_into(view)
            if n == 0:
                raise Failure("redis closed the connection mid-pipeline")
            chunk = view[:n]
            received += chunk
            lines += bytes(chunk).count(b"\n")  # one a reply (no bulk replies here); never split across reads
        if lines != count:
            raise Failure(f"redis sent {lines} reply lines for {count} commands")
        integers = received.count(b"\r\n:") + (1 if received.startswith(b":") else 0)
        return integers, bytes(received[:200])

    def peak(self):
        info = self.command("INFO", "memory").decode()
        fields = dict(line.split(":", 1) for line in info.splitlines() if ":" in line)
        return fields.get("used_memory_peak_human", "?"), peak_rss_mb(self.process.pid)

    def close(self):
        try:
            self.sock.close()
        except Exception:
            pass
        self.processes.stop(self.process)
        problems = tail(self.log, 200)
        shutil.rmtree(self.folder, ignore_errors=True)
        return problems


def resp(*words):
    out = [b"*%d\r\n" % len(words)]
    for word in words:
        if isinstance(word, str):
            word = word.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(word), word))
    return b"".join(out)


# MARK: - workload


def metres_to_degrees(lat):
    """Degrees of latitude and of longitude per metre at `lat` (the engine's sphere)."""
    per_lat = 180 / (math.pi * EARTH_RADIUS)
    return per_lat, per_lat / math.cos(math.radians(lat))


def haversine(lon1, lat1, lon2, lat2):
    phi1, phi2 = np.radians(lat1), np.radians(lat2)
    s1 = np.sin((phi2 - phi1) / 2)
    s2 = np.sin(np.radians(lon2 - lon1) / 2)
    h = s1 * s1 + np.cos(phi1) * np.cos(phi2) * s2 * s2
    return 2 * EARTH_RADIUS * np.arcsin(np.minimum(1, np.sqrt(h)))


class Workload:
    def __init__(self, bbox, objects, updates, seed):
        self.bbox = bbox
        self.objects = objects
        self.ids = [f"v{i}" for i in range(objects)]
        rng = np.random.default_rng(seed)
        west, south, east, north = bbox
        dlat, dlon = metres_to_degrees((south + north) / 2)
        steps = -(-updates // objects)
        lon = np.empty((steps, objects))
        lat = np.empty((steps, objects))
        lon[0] = rng.uniform(west, east, objects)
        lat[0] = rng.uniform(south, north, objects)
        # The roaming pairs' partners start 0-80 m apart, so their fences have something to see.
        self.pairs = min(20, objects // 2)
        for p in range(self.pairs):
            length, heading = rng.uniform(0, 80), rng.uniform(0, 2 * math.pi)
            lon[0, 2 * p + 1] = min(east, max(west, lon[0, 2 * p] + length * math.sin(heading) * dlon))
            lat[0, 2 * p + 1] = min(north, max(south, lat[0, 2 * p] + length * math.cos(heading) * dlat))
        for k in range(1, steps):
            length = rng.uniform(1, 40, objects)
            heading = rng.uniform(0, 2 * math.pi, objects)
            x = lon[k - 1] + length * np.sin(heading) * dlon
            y = lat[k - 1] + length * np.cos(heading) * dlat
            x = np.where(x < west, 2 * west - x, np.where(x > east, 2 * east - x, x))
            y = np.where(y < south, 2 * south - y, np.where(y > north, 2 * north - y, y))
            lon[k], lat[k] = x, y
        # As sent: 7 decimals (about a centimetre); the replay uses the same numbers.
        self.lon_text = np.char.mod("%.7f", lon)
        self.lat_text = np.char.mod("%.7f", lat)
        self.lon = self.lon_text.astype(float)
        self.lat = self.lat_text.astype(float)
        self.steps = steps
        # Flat update order, step-major, cut to `updates`: (step, object) pairs.
        order = [(k, i) for k in range(steps) for i in range(objects)][:updates]
        self.order = order
        self.updates = len(order)

        # Fences: 2 layer fences, 20 roaming pairs, 177 circles, the probe (200 in all).
        self.fences = {
            "pavilions": {"watch": {"layer": LAYER}, "area": {"layer": "pavilions"}, "detect": ["enter", "exit", "cross"]},
            "pens": {"watch": {"layer": LAYER}, "area": {"layer": "pens", "within_m": 30}},
        }
        pairs = self.pairs
        for p in range(pairs):
            self.fences[f"near{p}"] = {"watch": {"layer": LAYER, "object": self.ids[2 * p]},
                                       "area": {"near": {"layer": LAYER, "object": self.ids[2 * p + 1]}, "radius_m": 50}}
        self.circles = {}
        for c in range(200 - 3 - pairs):
            centre = (round(float(rng.uniform(west, east)), 7), round(float(rng.uniform(south, north)), 7))
            radius = round(float(rng.uniform(20, 150)), 1)
            self.circles[f"circle{c}"] = (centre, radius)
            self.fences[f"circle{c}"] = {"watch": {"layer": LAYER}, "area": {"point": list(centre), "radius_m": radius}}
        # The probe fence lies 400 m north of the zoo, where nothing else reaches (circles are at
        # most 150 m, pens' margin 30 m), so each probe update makes exactly one event.
        self.probe_inside = (round((west + east) / 2, 7), round(north + 400 * dlat, 7))
        self.probe_outside = (self.probe_inside[0], round(self.probe_inside[1] + 3 * PROBE_RADIUS * dlat, 7))
        self.fences[PROBE_FENCE] = {"watch": {"layer": LAYER}, "area": {"point": list(self.probe_inside), "radius_m": PROBE_RADIUS}}

    def position_json(self, k, i):
        return ('{"id":"%s","position":[%s,%s],"time":%.1f}' % (self.ids[i], self.lon_text[k, i], self.lat_text[k, i], BASE_TIME + k))

    def http_bodies(self, order, batch):
        """Pre-encoded POST bodies, each with its number of positions."""
        out = []
        for start in range(0, len(order), batch):
            part = order[start:start + batch]
            body = ('{"positions":[' + ",".join(self.position_json(k, i) for k, i in part) + "]}").encode()
            out.append((body, len(part)))
        return out

    def redis_pipelines(self, batch):
        out = []
        for start in range(0, len(self.order), batch):
            part = self.order[start:start + batch]
            payload = b"".join(resp("GEOADD", LAYER, str(self.lon_text[k, i]), str(self.lat_text[k, i]), self.ids[i]) for k, i in part)
            out.append((payload, len(part)))
        return out

    def halves(self):
        """The update order split by object into two halves, each still step-major."""
        half = self.objects // 2 // 2 * 2  # even: a roaming pair stays in one half
        return [[(k, i) for k, i in self.order if i < half], [(k, i) for k, i in self.order if i >= half]]

    def expected_circle_events(self):
        """Per circle fence: the enter+exit events a haversine replay predicts (an object's first
        update inside enters), and twice the updates within 1 cm of the edge (either way there)."""
        valid = np.zeros((self.steps, self.objects), dtype=bool)
        full, rest = divmod(self.updates, self.objects)
        valid[:full] = True
        if rest:
            valid[full, :rest] = True
        counts = {}
        for name, ((clon, clat), radius) in self.circles.items():
            d = haversine(self.lon, self.lat, clon, clat)
            inside = (d <= radius) & valid
            previous = np.vstack((np.zeros((1, self.objects), dtype=bool), inside[:-1]))
            changes = (inside != previous) & valid
            near = (np.abs(d - radius) < 0.01) & valid
            counts[name] = (int(changes.sum()), 2 * int(near.sum()))
        return counts

    def valid(self):
        valid = np.zeros((self.steps, self.objects), dtype=bool)
        full, rest = divmod(self.updates, self.objects)
        valid[:full] = True
        if rest:
            valid[full, :rest] = True
        return valid

    def expected_pens_events(self, pens):
        """The pens fence (within 30 m of any pen, a point): enter/exit per pen, replayed."""
        valid = self.valid()
        events, doubtful = 0, 0
        for pen in pens:
            geometry = pen["geometry"]
            if geometry["type"] != "Point":
                raise Failure(f"pens: a {geometry['type']}; the replay knows points")
            clon, clat = geometry["coordinates"][:2]
            d = haversine(self.lon, self.lat, clon, clat)
            inside = (d <= 30) & valid
            previous = np.vstack((np.zeros((1, self.objects), dtype=bool), inside[:-1]))
            events += int(((inside != previous) & valid).sum())
            doubtful += 2 * int(((np.abs(d - 30) < 0.01) & valid).sum())
        return events, doubtful

    def expected_pavilions_events(self, pavilions):
        """The pavilions fence (enter, exit, cross per polygon), replayed on a local plane in
        metres (the engine: polygons contain by the flat rule; a segment crosses when it meets
        one with both ends outside). Positions or segments within 1 cm of an edge are doubtful."""
        valid = self.valid()
        lat0 = (self.bbox[1] + self.bbox[3]) / 2
        dlat, dlon = metres_to_degrees(lat0)
        x, y = self.lon / dlon, self.lat / dlat
        px, py = np.vstack((x[:1], x[:-1])), np.vstack((y[:1], y[:-1]))  # the previous positions
        has_previous = np.vstack((np.zeros((1, self.objects), dtype=bool), valid[:-1])) & valid
        events, doubtful = 0, 0

        def orientation(ax, ay, bx, by, cx, cy):
            return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)

        def point_segment(qx, qy, ax, ay, bx, by):
            vx, vy = bx - ax, by - ay
            t = np.clip(((qx - ax) * vx + (qy - ay) * vy) / max(vx * vx + vy * vy, 1e-18), 0, 1)
            return np.hypot(qx - ax - t * vx, qy - ay - t * vy)

        for pavilion in pavilions:
            geometry = pavilion["geometry"]
            polygons = [geometry["coordinates"]] if geometry["type"] == "Polygon" else geometry["coordinates"] if geometry["type"] == "MultiPolygon" else None
            if polygons is None:
                raise Failure(f"pavilions: a {geometry['type']}; the replay knows polygons")
            inside = np.zeros(x.shape, dtype=bool)
            crossing = np.zeros(x.shape, dtype=bool)
            edge = np.full(x.shape, np.inf)
            for polygon in polygons:
                for ring in polygon:
                    ring = [(lon / dlon, lat / dlat) for lon, lat in (c[:2] for c in ring)]
                    for (ax, ay), (bx, by) in zip(ring, ring[1:]):
                        # Even-odd ray to +x for containment (holes toggle back out).
                        straddles = (ay > y) != (by > y)
                        with np.errstate(divide="ignore", invalid="ignore"):
                            at = ax + (y - ay) * (bx - ax) / (by - ay)
                        inside ^= straddles & (x < at)
                        # The segment previous -> current against this edge.
                        o1, o2 = orientation(px, py, x, y, ax, ay), orientation(px, py, x, y, bx, by)
                        o3, o4 = orientation(ax, ay, bx, by, px, py), orientation(ax, ay, bx, by, x, y)
                        crossing |= (np.sign(o1) != np.sign(o2)) & (np.sign(o3) != np.sign(o4))
                        edge = np.minimum(edge, point_segment(x, y, ax, ay, bx, by))
            inside &= valid
            previous = np.vstack((np.zeros((1, self.objects), dtype=bool), inside[:-1]))
            changes = (inside != previous) & valid
            crosses = crossing & has_previous & ~inside & ~previous
            events += int(changes.sum()) + int(crosses.sum())
            near = (edge < 0.01) & valid
            doubtful += 2 * int(near.sum())
        return events, doubtful

    def expected_roaming_events(self, orders):
        """Per roaming fence near{p} (visitor 2p near 2p+1, 50 m): the events a replay predicts,
        evaluated after either one's update once both have a position (as the server does),
        and twice the evaluations within 1 cm of the edge. `orders`: the update sequences
        (each object's updates lie in one of them, so their interleaving does not matter)."""
        counts = {}
        for p in range(self.pairs):
            a, b = 2 * p, 2 * p + 1
            seen = {}
            inside, events, doubtful = False, 0, 0
            for order in orders:
                for k, i in order:
                    if i != a and i != b:
                        continue
                    seen[i] = k
                    if len(seen) < 2:
                        continue
                    d = float(haversine(self.lon[seen[a], a], self.lat[seen[a], a], self.lon[seen[b], b], self.lat[seen[b], b]))
                    now = d <= 50
                    if abs(d - 50) < 0.01:
                        doubtful += 2
                    if now != inside:
                        events += 1
                        inside = now
            counts[f"near{p}"] = (events, doubtful)
        return counts


# MARK: - runs


def run_redis(options, workload, pipelines, processes):
    redis = Redis(processes, options.redis_server, options.work)
    try:
        started = time.perf_counter()
        for payload, count in pipelines:
            integers, head = redis.pipeline(payload, count)
            if integers != count:
                raise Failure(f"redis answered {integers} integer replies of {count}: {head!r}")
        elapsed = time.perf_counter() - started
        stored = int(redis.command("ZCARD", LAYER)[1:])
        if stored != min(workload.objects, workload.updates):
            raise Failure(f"redis holds {stored} visitors, expected {workload.objects}")
        used_peak, rss = redis.peak()
    finally:
        redis.close()
    return {"updates_s": workload.updates / elapsed, "seconds": elapsed, "used_memory_peak": used_peak, "rss_mb": rss}


def run_library(options, fences_file, bodies_file, bench=None):
    """Engine.updatePositions over the same batches, in vltava-bench (parsing not timed)."""
    bench = bench or options.bench
    if not os.path.isfile(bench):
        raise Failure(f"--bench {bench}: no such file (swift build -c release --product vltava-bench)")
    run = subprocess.run([bench, "fences", fences_file, bodies_file, options.store], capture_output=True, text=True)
    if run.returncode != 0 or "FENCES id=F1" not in run.stdout:
        raise Failure(f"vltava-bench fences failed: {run.stderr[-2000:]}")
    line = run.stdout.strip().splitlines()[-1]
    fields = dict(part.split("=", 1) for part in line.split(" per_fence=")[0].split()[2:])
    return {"updates_s": float(fields["updates_s"]), "seconds": float(fields["seconds"]), "events": int(fields["events"]),
            "per_fence": json.loads(line.split(" per_fence=", 1)[1])}


def set_up(server, workload):
    server.must("PUT", f"/v1/live/{LAYER}", {"history": "none"})
    for name, body in workload.fences.items():
        server.must("PUT", f"/v1/fences/{name}", body)
    listed = server.must("GET", "/v1/fences")
    fences = listed.get("fences", listed) if isinstance(listed, dict) else listed
    if len(fences) != len(workload.fences):
        raise Failure(f"GET /v1/fences lists {len(fences)} fences, {len(workload.fences)} were put")


def post_all(server, bodies, replies, failures):
    """Posts every pre-encoded body over one keep-alive connection; keeps each reply's bytes."""
    connection = server.connection()
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    path = f"/v1/live/{LAYER}/positions"
    try:
        for body, count in bodies:
            connection.request("POST", path, body=body, headers=headers)
            answer = connection.getresponse()
            data = answer.read()
            if answer.status != 200:
                failures.append(f"POST {path} answered {answer.status}: {data[:300].decode(errors='replace')}")
                return
            replies.append((data, count))
    except Exception as error:  # reported by the caller
        failures.append(f"POST {path} failed: {error!r}")
    finally:
        connection.close()


def count_events(replies, ids):
    """Checks each reply's `updated` and that its event ids rise; returns events per fence and
    adds the ids' (lowest, highest) to `ids`."""
    per_fence = {}
    last, lowest = -1, None
    for data, count in replies:
        reply = json.loads(data)
        if reply.get("updated") != count:
            raise Failure(f"a batch of {count} positions answered updated={reply.get('updated')}")
        for event in reply["events"]:
            key = event["fence"]
            per_fence[key] = per_fence.get(key, 0) + 1
            if not isinstance(event.get("id"), int) or event["id"] <= last:
                raise Failure(f"event id {event.get('id')!r} follows {last} on one connection: ids must rise")
            last = event["id"]
            lowest = last if lowest is None else lowest
    if lowest is not None:
        ids.append((lowest, last))
    return per_fence


def run_http(server, workload, threads_bodies):
    replies = [[] for _ in threads_bodies]
    failures = []
    threads = [threading.Thread(target=post_all, args=(server, bodies, replies[t], failures)) for t, bodies in enumerate(threads_bodies)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if failures:
        raise Failure("; ".join(failures))
    per_fence, ids = {}, []
    for part in replies:
        for name, n in count_events(part, ids).items():
            per_fence[name] = per_fence.get(name, 0) + n
    events = sum(per_fence.values())
    return {"updates_s": workload.updates / elapsed, "events_s": events / elapsed, "events": events, "seconds": elapsed,
            "per_fence": per_fence, "max_id": max((high for _, high in ids), default=0)}


class EventStream:
    """An SSE client on one path; every data line goes into a queue with its arrival time."""

    def __init__(self, server, path):
        self.connection = server.connection(timeout=None)
        self.connection.request("GET", path, headers={"Accept": "text/event-stream"})
        self.answer = self.connection.getresponse()
        if self.answer.status != 200:
            raise Failure(f"GET {path} (event-stream) answered {self.answer.status}: {self.answer.read(300)!r}")
        first = self.answer.readline()  # "retry: 1000": the stream is live
        if not first.startswith(b"retry:"):
            raise Failure(f"the event stream began with {first!r}")
        self.lines = queue.Queue()
        self.closing = False
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        try:
            while True:
                line = self.answer.readline()
                arrived = time.perf_counter()
                if not line:
                    self.lines.put((arrived, None))
                    return
                if line.startswith(b"data:"):
                    self.lines.put((arrived, line[5:].strip()))
        except Exception as error:
            if not self.closing:
                self.lines.put((time.perf_counter(), repr(error).encode()))

    def close(self):
        self.closing = True
        try:
            self.connection.sock.shutdown(socket.SHUT_RDWR)
        except Exception:
            pass
        self.connection.close()


def run_latency(server, workload, samples, warmup=20):
    stream = EventStream(server, f"/v1/fences/{PROBE_FENCE}/events")
    connection = server.connection(timeout=30)
    connection.connect()
    connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    path = f"/v1/live/{LAYER}/positions"
    bodies = []
    for n in range(samples + warmup):
        lon, lat = workload.probe_inside if n % 2 == 0 else workload.probe_outside
        bodies.append(('{"positions":[{"id":"probe","position":[%.7f,%.7f],"time":%.1f}]}' % (lon, lat, BASE_TIME + 1_000_000 + n)).encode())
    to_event, round_trip, wrong = [], [], []
    try:
        for n, body in enumerate(bodies):
            expected = "enter" if n % 2 == 0 else "exit"
            sent = time.perf_counter()
            connection.request("POST", path, body=body, headers=headers)
            answer = connection.getresponse()
            data = answer.read()
            answered = time.perf_counter()
            if answer.status != 200:
                raise Failure(f"probe POST answered {answer.status}: {data[:300].decode(errors='replace')}")
            events = json.loads(data)["events"]
            if len(events) != 1 or events[0]["fence"] != PROBE_FENCE or events[0]["event"] != expected:
                wrong.append(f"probe update {n} ({expected}) answered events {events}")
            try:
                arrived, line = stream.lines.get(timeout=10)
            except queue.Empty:
                raise Failure(f"no event on the stream within 10 s of probe update {n} ({expected})")
            if line is None:
                raise Failure("the event stream ended")
            try:
                event = json.loads(line)
            except ValueError:
                raise Failure(f"the event stream sent {line!r} after probe update {n}")
            if event.get("object") != "probe" or event.get("fence") != PROBE_FENCE or event.get("event") != expected:
                wrong.append(f"probe update {n} ({expected}) streamed {line!r}")
            if n >= warmup:
                to_event.append(arrived - sent)
                round_trip.append(answered - sent)
        time.sleep(0.2)  # time for an extra event, were there one
        extra = []
        while not stream.lines.empty():
            extra.append(stream.lines.get()[1])
    finally:
        connection.close()
        stream.close()
    if extra:
        wrong.append(f"{len(extra)} extra events on the stream, first {extra[0]!r}")
    return {"to_event": to_event, "round_trip": round_trip, "wrong": wrong}


def record_log(server, where, problems, notes):
    errors, others = server.close()
    for line in errors[:10]:
        problems.append(f"{where}: the server logged {line}")
    if len(errors) > 10:
        problems.append(f"{where}: and {len(errors) - 10} more error lines")
    for line in others:
        notes.setdefault(line, [])
        if where not in notes[line]:
            notes[line].append(where)


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def millis(values):
    return {name: percentile(values, p) * 1000 for name, p in (("p50", 50), ("p90", 90), ("p99", 99), ("max", 100))}


# MARK: - main


def zoo(binary, store, processes, work):
    """The zoo's extent (the pavilions' and pens' bbox) and those layers' features."""
    server = Vltava(processes, binary, store, work, "extent")
    try:
        boxes = [server.must("GET", f"/ogc/collections/{name}")["extent"]["spatial"]["bbox"][0] for name in ("pavilions", "pens")]
        features = {name: server.must("GET", f"/ogc/collections/{name}/items?limit=10000")["features"] for name in ("pavilions", "pens")}
    finally:
        server.close()
    return [min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes)], features


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vltava", default=os.path.join(ROOT, ".build/release/vltava"),
                        help="the vltava binary (default: the repository's .build/release/vltava; build it with swift build -c release)")
    parser.add_argument("--bench", default=os.path.join(ROOT, ".build/release/vltava-bench"),
                        help="vltava-bench, for the updates through the library (swift build -c release --product vltava-bench)")
    parser.add_argument("--store", default=os.path.join(ROOT, "demo/vltava.gpkg"), help="the zoo store (make demo builds it); each server gets a fresh copy")
    parser.add_argument("--redis-server", default=shutil.which("redis-server") or "redis-server")
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--updates", type=int, default=200000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency-samples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--baseline-vltava", default=None,
                        help="another build's vltava (and --baseline-bench its vltava-bench): its library and 1-connection HTTP runs "
                             "alternate with this build's in every round, and the rounds print the ratios between the two")
    parser.add_argument("--baseline-bench", default=None)
    parser.add_argument("--work", default=None, help="where the temporary folders go (default: the system's)")
    options = parser.parse_args()
    for name in ("objects", "updates", "batch", "rounds", "latency_samples"):
        if getattr(options, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if options.objects < 2:
        parser.error("--objects must be at least 2")
    if not (os.path.isfile(options.vltava) and os.access(options.vltava, os.X_OK)):
        parser.error(f"--vltava {options.vltava}: no such executable (build it: swift build -c release)")
    if (options.baseline_vltava is None) != (options.baseline_bench is None):
        parser.error("--baseline-vltava and --baseline-bench go together")
    if not os.path.isfile(options.store):
        parser.error(f"--store {options.store}: no such file")
    if not shutil.which(options.redis_server):
        parser.error(f"--redis-server {options.redis_server}: not found (apt-get install redis-server)")
    work = tempfile.mkdtemp(prefix="fences-vs-redis-", dir=options.work)
    options.work = work
    command = " ".join(shlex.quote(a) for a in [sys.argv[0]] + sys.argv[1:])
    print(f"command: {command}", flush=True)
    redis_version = subprocess.run([options.redis_server, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"redis: {redis_version}", flush=True)
    print(f"vltava: {os.path.abspath(options.vltava)}; store: {os.path.abspath(options.store)}; {os.cpu_count()} CPUs "
          "(client, Redis and Vltava share them)", flush=True)

    processes = Processes()
    problems, notes, highest_id = [], {}, 0
    try:
        bbox, features = zoo(options.vltava, options.store, processes, work)
        prepared = time.perf_counter()
        workload = Workload(bbox, options.objects, options.updates, options.seed)
        pipelines = workload.redis_pipelines(options.batch)
        one = [workload.http_bodies(workload.order, options.batch)]
        two = [workload.http_bodies(half, options.batch) for half in workload.halves()]
        expected = workload.expected_circle_events()
        expected.update(workload.expected_roaming_events([workload.order]))
        expected["pens"] = workload.expected_pens_events(features["pens"])
        expected["pavilions"] = workload.expected_pavilions_events(features["pavilions"])
        print(f"workload: {workload.objects} objects, {workload.updates} updates ({workload.steps} steps of 1-40 m) in "
              f"bbox {[round(v, 6) for v in bbox]}, {len(workload.fences)} fences, batch {options.batch}; "
              f"prepared (positions, requests, replay) in {time.perf_counter() - prepared:.1f} s "
              f"(HTTP {sum(len(b) for b, _ in one[0]) / 1e6:.1f} MB, RESP {sum(len(p) for p, _ in pipelines) / 1e6:.1f} MB)", flush=True)

        # The library's input: the same fences and the same bodies, read by vltava-bench.
        fences_file, bodies_file = os.path.join(work, "fences.json"), os.path.join(work, "bodies.ndjson")
        with open(fences_file, "w") as f:
            json.dump(workload.fences, f)
        with open(bodies_file, "wb") as f:
            f.write(b"\n".join(body for body, _ in one[0]))

        rounds = []
        for r in range(1, options.rounds + 1):
            result = {"round": r}
            result["redis"] = run_redis(options, workload, pipelines, processes)
            print(f"round {r}: redis done ({result['redis']['updates_s']:,.0f} updates/s)", flush=True)
            # With a baseline, the two builds alternate which goes first, round by round.
            baseline_first = options.baseline_bench is not None and r % 2 == 0
            if baseline_first:
                result["base_library"] = run_library(options, fences_file, bodies_file, options.baseline_bench)
            result["library"] = run_library(options, fences_file, bodies_file)
            print(f"round {r}: library done ({result['library']['updates_s']:,.0f} updates/s)", flush=True)
            if options.baseline_bench is not None and not baseline_first:
                result["base_library"] = run_library(options, fences_file, bodies_file, options.baseline_bench)
            if "base_library" in result:
                print(f"round {r}: baseline library done ({result['base_library']['updates_s']:,.0f} updates/s)", flush=True)
            for name, (events, doubtful) in expected.items():
                got = result["library"]["per_fence"].get(name, 0)
                if abs(got - events) > doubtful:
                    problems.append(f"round {r} library: fence {name} made {got} events, a replay predicts {events}")

            if baseline_first:
                server = Vltava(processes, options.baseline_vltava, options.store, work, f"r{r}-base")
                set_up(server, workload)
                result["base_http1"] = run_http(server, workload, one)
                record_log(server, f"round {r}, baseline", problems, notes)
            server = Vltava(processes, options.vltava, options.store, work, f"r{r}-1c")
            set_up(server, workload)
            result["http1"] = run_http(server, workload, one)
            result["http1"]["rss_mb"] = server.peak_rss_mb()
            record_log(server, f"round {r}, 1 connection", problems, notes)
            print(f"round {r}: vltava 1 connection done ({result['http1']['updates_s']:,.0f} updates/s)", flush=True)
            if options.baseline_vltava is not None and not baseline_first:
                server = Vltava(processes, options.baseline_vltava, options.store, work, f"r{r}-base")
                set_up(server, workload)
                result["base_http1"] = run_http(server, workload, one)
                record_log(server, f"round {r}, baseline", problems, notes)
            if "base_http1" in result:
                print(f"round {r}: baseline 1 connection done ({result['base_http1']['updates_s']:,.0f} updates/s)", flush=True)
                if result["base_http1"]["per_fence"] != result["http1"]["per_fence"]:
                    problems.append(f"round {r}: the baseline made other events ({result['base_http1']['events']} vs {result['http1']['events']})")

            server = Vltava(processes, options.vltava, options.store, work, f"r{r}-2c")
            set_up(server, workload)
            result["http2"] = run_http(server, workload, two)
            result["latency"] = run_latency(server, workload, options.latency_samples)
            result["http2"]["rss_mb"] = server.peak_rss_mb()
            record_log(server, f"round {r}, 2 connections + latency", problems, notes)
            print(f"round {r}: vltava 2 connections + latency done", flush=True)

            # Checks: every fence against the replay, both modes and all rounds alike.
            for mode in ("http1", "http2"):
                per_fence = result[mode]["per_fence"]
                for name, (events, doubtful) in expected.items():
                    got = per_fence.get(name, 0)
                    if abs(got - events) > doubtful:
                        problems.append(f"round {r} {mode}: fence {name} made {got} events, a replay predicts {events}"
                                        + (f" (±{doubtful} at the edge)" if doubtful else ""))
            agreeing = sum(1 for name, (events, doubtful) in expected.items()
                           if abs(result["http1"]["per_fence"].get(name, 0) - events) <= doubtful)
            result["replay"] = (agreeing, len(expected), sum(e for e, _ in expected.values()),
                                sum(result["http1"]["per_fence"].get(name, 0) for name in expected))
            if result["http1"]["per_fence"] != result["http2"]["per_fence"]:
                differing = sorted(n for n in set(result["http1"]["per_fence"]) | set(result["http2"]["per_fence"])
                                   if result["http1"]["per_fence"].get(n) != result["http2"]["per_fence"].get(n))
                problems.append(f"round {r}: 1 and 2 connections made different events for fences {differing[:10]}: "
                                + ", ".join(f"{n} {result['http1']['per_fence'].get(n, 0)} vs {result['http2']['per_fence'].get(n, 0)}" for n in differing[:10]))
            if rounds and result["http1"]["per_fence"] != rounds[0]["http1"]["per_fence"]:
                problems.append(f"round {r}: events differ from round 1's ({result['http1']['events']} vs {rounds[0]['http1']['events']})")
            highest_id = max(highest_id, result["http1"]["max_id"], result["http2"]["max_id"])
            if result["latency"]["wrong"]:
                problems.append(f"round {r} latency: {len(result['latency']['wrong'])} wrong events; first: {result['latency']['wrong'][0]}")
            rounds.append(result)
            print_round(result, options)
        print_summary(rounds, options, command)
    except Failure as failure:
        print(f"FAILED: {failure}", file=sys.stderr, flush=True)
        processes.show_logs()
        processes.stop_all()
        return 1
    except (OSError, http.client.HTTPException, ValueError, KeyError) as error:
        print(f"FAILED: {error!r}", file=sys.stderr, flush=True)
        processes.show_logs()
        processes.stop_all()
        return 1
    except KeyboardInterrupt:
        processes.stop_all()
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        processes.stop_all()
        shutil.rmtree(work, ignore_errors=True)
    if highest_id >= 2 ** 53:
        odd = highest_id if highest_id % 2 else highest_id - 1
        print(f"WARNING: event ids reach {highest_id}, above 2^53 = {2 ** 53}: a JSON parser that reads numbers as doubles "
              f"(JavaScript's) cannot keep them apart ({odd} reads as {int(float(odd))}); not counted as a failure",
              file=sys.stderr, flush=True)
    if notes:
        print("the servers also logged (not counted as failures):", *(f"{line}  [{', '.join(where[:3])}{' …' if len(where) > 3 else ''}]"
              for line, where in notes.items()), sep="\n  ", file=sys.stderr, flush=True)
    if problems:
        print(f"\nFAILED: {len(problems)} problems:", *problems, sep="\n  ", file=sys.stderr, flush=True)
        return 1
    return 0


def print_round(result, options):
    r = result["round"]
    redis, h1, h2, lat = result["redis"], result["http1"], result["http2"], result["latency"]
    print(f"\n== round {r} ==")
    print(f"  {'':34} {'updates/s':>12} {'events/s':>12} {'events':>9} {'seconds':>8} {'peak RSS MB':>12}")
    print(f"  {'Redis GEOADD (pipeline)':34} {redis['updates_s']:12,.0f} {'-':>12} {'-':>9} {redis['seconds']:8.2f} {redis['rss_mb']:12.1f}"
          f"   used_memory_peak {redis['used_memory_peak']}")
    lib = result["library"]
    print(f"  {'Vltava library (Engine.updatePositions)':34} {lib['updates_s']:12,.0f} {lib['events'] / lib['seconds']:12,.0f} {lib['events']:9,} {lib['seconds']:8.2f} {'-':>12}")
    print(f"  {'Vltava HTTP, 1 connection':34} {h1['updates_s']:12,.0f} {h1['events_s']:12,.0f} {h1['events']:9,} {h1['seconds']:8.2f} {h1['rss_mb']:12.1f}")
    print(f"  {'Vltava HTTP, 2 connections':34} {h2['updates_s']:12,.0f} {h2['events_s']:12,.0f} {h2['events']:9,} {h2['seconds']:8.2f} {h2['rss_mb']:12.1f}"
          "   (RSS includes the latency test)")
    agreeing, checked, predicted, got = result["replay"]
    print(f"  replay check (1 connection): {agreeing} of {checked} fences agree; the replay predicts {predicted:,} events "
          f"for them, the server made {got:,}")
    e, t = millis(lat["to_event"]), millis(lat["round_trip"])
    print(f"  latency ms over {len(lat['to_event'])} samples {'p50':>7} {'p90':>7} {'p99':>7} {'max':>7}")
    print(f"    update -> SSE event          {e['p50']:7.2f} {e['p90']:7.2f} {e['p99']:7.2f} {e['max']:7.2f}")
    print(f"    POST round trip              {t['p50']:7.2f} {t['p90']:7.2f} {t['p99']:7.2f} {t['max']:7.2f}", flush=True)
    print(f"  ratios to Redis: library {lib['updates_s'] / redis['updates_s']:.3f}, HTTP 1 connection {h1['updates_s'] / redis['updates_s']:.3f}", flush=True)
    if "base_library" in result:
        bl, bh = result["base_library"], result["base_http1"]
        print(f"  baseline: library {bl['updates_s']:,.0f} updates/s ({bl['updates_s'] / redis['updates_s']:.3f} of Redis), "
              f"HTTP 1 connection {bh['updates_s']:,.0f} ({bh['updates_s'] / redis['updates_s']:.3f}); this build / baseline: "
              f"library {lib['updates_s'] / bl['updates_s']:.2f}x, HTTP {h1['updates_s'] / bh['updates_s']:.2f}x "
              f"({'baseline first' if r % 2 == 0 else 'this build first'})", flush=True)


def print_summary(rounds, options, command):
    med = statistics.median
    redis = med(r["redis"]["updates_s"] for r in rounds)
    h1 = med(r["http1"]["updates_s"] for r in rounds)
    h2 = med(r["http2"]["updates_s"] for r in rounds)
    e1 = med(r["http1"]["events_s"] for r in rounds)
    e2 = med(r["http2"]["events_s"] for r in rounds)
    to_event = millis([v for r in rounds for v in r["latency"]["to_event"]])
    trip = millis([v for r in rounds for v in r["latency"]["round_trip"]])
    p99s = [millis(r["latency"]["to_event"])["p99"] for r in rounds]
    print(f"\n== summary: medians of {len(rounds)} rounds ==")
    print(f"  Redis GEOADD, pipelined {options.batch}:   {redis:12,.0f} updates/s  (stores, detects nothing)")
    lib = med(r["library"]["updates_s"] for r in rounds)
    print(f"  Vltava library:               {lib:12,.0f} updates/s                        ratio Vltava/Redis {lib / redis:.3f}")
    print(f"  Vltava HTTP, 1 connection:    {h1:12,.0f} updates/s  {e1:10,.0f} events/s   ratio Vltava/Redis {h1 / redis:.3f}")
    print(f"  Vltava HTTP, 2 connections:   {h2:12,.0f} updates/s  {e2:10,.0f} events/s   ratio Vltava/Redis {h2 / redis:.3f}")
    if "base_library" in rounds[0]:
        print("  per round, this build / baseline: library "
              + ", ".join(f"{r['library']['updates_s'] / r['base_library']['updates_s']:.2f}x" for r in rounds)
              + "; HTTP 1 connection " + ", ".join(f"{r['http1']['updates_s'] / r['base_http1']['updates_s']:.2f}x" for r in rounds))
        print("  per round, baseline / Redis: library "
              + ", ".join(f"{r['base_library']['updates_s'] / r['redis']['updates_s']:.3f}" for r in rounds)
              + "; HTTP 1 connection " + ", ".join(f"{r['base_http1']['updates_s'] / r['redis']['updates_s']:.3f}" for r in rounds))
    print("  per round, this build / Redis: library " + ", ".join(f"{r['library']['updates_s'] / r['redis']['updates_s']:.3f}" for r in rounds)
          + "; HTTP 1 connection " + ", ".join(f"{r['http1']['updates_s'] / r['redis']['updates_s']:.3f}" for r in rounds))
    print(f"  events per run: {rounds[0]['http1']['events']:,} ({len(rounds[0]['http1']['per_fence'])} fences fired)")
    print(f"  update -> SSE event (all rounds' samples): p50 {to_event['p50']:.2f} ms, p90 {to_event['p90']:.2f}, "
          f"p99 {to_event['p99']:.2f}, max {to_event['max']:.2f}; per-round p99 {', '.join(f'{p:.2f}' for p in p99s)}; "
          f"target p99 < 10 ms: {'met' if to_event['p99'] < 10 else 'NOT met'}")
    print(f"  POST round trip alone:                     p50 {trip['p50']:.2f} ms, p90 {trip['p90']:.2f}, p99 {trip['p99']:.2f}, max {trip['max']:.2f}")
    print(f"  peak RSS: Vltava {max(max(r['http1']['rss_mb'], r['http2']['rss_mb']) for r in rounds):.1f} MB (max of all servers), "
          f"Redis {max(r['redis']['rss_mb'] for r in rounds):.1f} MB (used_memory_peak {rounds[-1]['redis']['used_memory_peak']})")
    print(f"  command: {command}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
