#!/usr/bin/env python3
"""A webhook receiver that fails 30% of calls and restarts twice gets every event, in order.

Starts `vltava serve` on a fresh copy of a GeoPackage and runs a receiver in this script
(http.server in a thread, on a fixed free port). For each POST the receiver checks the
`Vltava-Signature: sha256=HEX` header (HMAC-SHA256 of the raw body with the webhook's secret)
and that `Vltava-Event-Id` is the body's id (a bad one is a test failure, answered 400); then,
with probability --failure-rate (seeded), it fails the call: mostly a 500, sometimes (at most
--max-drops times) closing the connection without answering; otherwise it records the event
(id, object, event, fence) and answers 204. The receiver speaks HTTP/1.1 with keep-alive.

An unanswered close is a failed try for the server, sent again after its back-off. A request
whose body never came is counted ("cut off") and not recorded. With --tls the receiver speaks
https with a certificate for localhost from a CA made for the run, which the server is told to
trust with --webhook-ca; the webhook's URL is https://localhost:PORT/hook.

Declares a live layer, two fences (f1, watched by the webhook; f2, the same place with a
smaller radius, not watched) and makes a few events before declaring the webhook (a webhook
starts at the newest event when it is declared: those are not delivered). Then it moves
objects o0..o9 in and out of both fences, about --events events of f1 spread over several
seconds; meanwhile it stops the receiver --restarts times (the listening socket and every
open connection closed, so connections are refused) for ~1.5 s and starts it again on the
same port.

Then it waits (up to 120 s) until the receiver has every f1 event GET /v1/events lists after
the webhook was declared, and checks: every event arrived at least once; no other event (f2,
or from before the declaration) arrived; per object, the order of first arrivals equals the
server's event order; each delivered body equals the feed's event; duplicates (same id) are
allowed but counted; GET /v1/webhooks/NAME shows no dead letters and `delivered` >= the number
of events. Also reported (not failed): whether first arrivals were in global order and whether
the server ever had two calls in flight at once.

Exits non-zero on any failure. Python stdlib and requests.

Usage: webhook_delivery.py --vltava BINARY --store GPKG [--failure-rate 0.3] [--restarts 2]
                           [--events 300] [--max-drops 2] [--duration 8] [--seed S] [--trace]
"""
import argparse
import hashlib
import hmac
import http.server
import json
import math
import os
import random
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict

import requests

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import live_server  # noqa: E402  (shared server/assertion helpers next to this script)

TOKEN = live_server.TOKEN
AUTH = {"Authorization": "Bearer " + TOKEN}
CENTRE = (14.40519, 50.11576)
M_PER_DEG_LAT = 111195.0
LAYER = "visitors"
FENCE = "f1"
OTHER_FENCE = "f2"
HOOK = "h1"
SECRET = "at-least-16-bytes-secret-for-the-test"


log = live_server.log
TestFailure = live_server.TestFailure
check = live_server.check
free_port = live_server.free_port


# --------------------------------------------------------------------------------------------
# The server

class Server(live_server.Server):
    def __init__(self, binary, store, extra=()):
        self.session = requests.Session()
        super().__init__(binary, store, prefix="vltava-webhook-", extra=extra)

    def call(self, method, path, body=None):
        headers = dict(AUTH) if method != "GET" or path.startswith("/v1/webhooks") else {}
        r = self.session.request(method, self.base + path, json=body, headers=headers, timeout=30)
        if r.status_code // 100 != 2:
            raise TestFailure(f"{method} {path} -> {r.status_code}: {r.text[:2000]}")
        return r.json()

    def feed(self, after):
        """Every event after `after` from GET /v1/events, paged; fails on `missed`."""
        events = []
        while True:
            page = self.call("GET", f"/v1/events?after={after}&limit=1000")
            check(page.get("missed") is False,
                  f"GET /v1/events?after={after} says missed={page.get('missed')!r}")
            if not page["events"]:
                return events, page["last"]
            events.extend(page["events"])
            after = page["events"][-1]["id"]

    def close_clients(self):
        self.session.close()


# --------------------------------------------------------------------------------------------
# The receiver

class Receiver:
    """Records webhook calls; fails a share of them; can be stopped and started on one port."""

    def __init__(self, port, failure_rate, seed, max_drops=1, trace=False, tls=None):
        self.tls = tls            # an ssl.SSLContext: the receiver speaks https
        self.trace = trace
        self.max_drops = max_drops
        self.truncated = 0        # requests whose body never came (the connection closed first)
        self.t0 = time.time()
        self.port = port
        self.failure_rate = failure_rate
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.arrivals = []        # (id, object, event, fence, body) of each recorded call, in order
        self.calls = 0
        self.failed_500 = 0
        self.failed_dropped = 0
        self.problems = []        # bad signatures, bad headers, bad paths
        self.in_flight = 0
        self.max_in_flight = 0
        self.connections = set()
        self.httpd = None
        self.thread = None

    def make_handler(self):
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self):
                super().setup()
                with receiver.lock:
                    receiver.connections.add(self.connection)

            def finish(self):
                try:
                    super().finish()
                finally:
                    with receiver.lock:
                        receiver.connections.discard(self.connection)

            def log_message(self, *args):
                pass

            def answer(self, status):
                try:
                    self.send_response(status)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                except OSError:
                    self.close_connection = True   # the caller gave up on this connection

            def do_POST(self):
                with receiver.lock:
                    receiver.in_flight += 1
                    receiver.max_in_flight = max(receiver.max_in_flight, receiver.in_flight)
                try:
                    self.handle_post()
                finally:
                    with receiver.lock:
                        receiver.in_flight -= 1

            def handle_post(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if len(raw) < length:
                    # The connection broke mid-request (the receiver stopping closes them all).
                    receiver.note(f"{self.headers.get('Vltava-Event-Id')} body cut off ({len(raw)}/{length})")
                    with receiver.lock:
                        receiver.truncated += 1
                    self.close_connection = True
                    return
                with receiver.lock:
                    receiver.calls += 1
                problem = None
                signature = self.headers.get("Vltava-Signature", "")
                expected = "sha256=" + hmac.new(SECRET.encode(), raw, hashlib.sha256).hexdigest()
                body = None
                if self.path != "/hook":
                    problem = f"a POST to {self.path}, not /hook"
                elif not hmac.compare_digest(signature, expected):
                    problem = (f"bad Vltava-Signature {signature!r} (expected {expected}) for body "
                               f"{raw[:300]!r}; request line {self.requestline!r}, headers "
                               f"{dict(self.headers)}")
                else:
                    try:
                        body = json.loads(raw)
                    except ValueError:
                        problem = f"a body that is not JSON: {raw[:300]!r}"
                    else:
                        if self.headers.get("Vltava-Event-Id") != str(body.get("id")):
                            problem = (f"Vltava-Event-Id {self.headers.get('Vltava-Event-Id')!r} but "
                                       f"the body's id is {body.get('id')!r}")
                if problem is not None:
                    with receiver.lock:
                        receiver.problems.append(problem)
                    self.answer(400)
                    return
                with receiver.lock:
                    fail = receiver.rng.random() < receiver.failure_rate
                    drop = fail and receiver.rng.random() < 0.1 and receiver.failed_dropped < receiver.max_drops
                    if drop:
                        receiver.failed_dropped += 1
                    elif fail:
                        receiver.failed_500 += 1
                    else:
                        receiver.arrivals.append((body["id"], body.get("object"), body.get("event"),
                                                  body.get("fence"), body))
                receiver.note(f"{body['id']} {body.get('object')} {body.get('event')} "
                              f"{'dropped' if drop else '500' if fail else '204'}")
                if drop:
                    # Close the connection without answering.
                    self.close_connection = True
                    try:
                        self.connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                elif fail:
                    self.answer(500)
                else:
                    self.answer(204)

        return Handler

    def note(self, text):
        if self.trace:
            log(f"  [{time.time() - self.t0:7.3f}] {text}")

    def start(self):
        class HTTPServer(http.server.ThreadingHTTPServer):
            allow_reuse_address = True
            daemon_threads = True

        self.httpd = HTTPServer(("127.0.0.1", self.port), self.make_handler())
        if self.tls:
            self.httpd.socket = self.tls.wrap_socket(self.httpd.socket, server_side=True)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)
        self.thread.start()

    def stop(self):
        """Closes the listening socket and every open connection: connections are refused."""
        if self.httpd is None:
            return
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)
        with self.lock:
            conns = list(self.connections)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.httpd = None

    def snapshot(self):
        with self.lock:
            return list(self.arrivals)


# --------------------------------------------------------------------------------------------

def position(inside, rng):
    """A position 10 m (inside) or 200 m (outside) from the centre, in a random direction."""
    dist = 10.0 if inside else 200.0
    bearing = rng.uniform(0, 2 * math.pi)
    dlat = dist * math.cos(bearing) / M_PER_DEG_LAT
    dlon = dist * math.sin(bearing) / (M_PER_DEG_LAT * math.cos(math.radians(CENTRE[1])))
    return [round(CENTRE[0] + dlon, 7), round(CENTRE[1] + dlat, 7)]


def run(args):
    t0 = time.time()
    rng = random.Random(args.seed)
    tls, extra, scheme, host = None, (), "http", "127.0.0.1"
    if args.tls:
        # A private CA's certificate for localhost and 127.0.0.1, made now: the server trusts it
        # through --webhook-ca, and checks the name it connects to (localhost) against it.
        folder = tempfile.mkdtemp(prefix="vltava-webhook-tls-")
        cert, key = os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key, "-out", cert],
                       check=True, capture_output=True)
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(cert, key)
        extra, scheme, host = ("--webhook-ca", cert), "https", "localhost"
    receiver = Receiver(free_port(), args.failure_rate, args.seed + 1, args.max_drops, args.trace, tls)
    server = Server(args.vltava, args.store, extra)
    try:
        receiver.start()
        server.call("PUT", f"/v1/live/{LAYER}", {"history": "none"})
        server.call("PUT", f"/v1/fences/{FENCE}",
                    {"watch": {"layer": LAYER}, "area": {"point": list(CENTRE), "radius_m": 50}})
        server.call("PUT", f"/v1/fences/{OTHER_FENCE}",
                    {"watch": {"layer": LAYER}, "area": {"point": list(CENTRE), "radius_m": 30}})
        inside = {f"o{i}": False for i in range(10)}

        def move(ids):
            positions = []
            for oid in ids:
                inside[oid] = not inside[oid]
                positions.append({"id": oid, "position": position(inside[oid], rng)})
            answer = server.call("POST", f"/v1/live/{LAYER}/positions", {"positions": positions})
            check(len(answer["events"]) == 2 * len(ids),
                  f"a POST moving {len(ids)} objects across both fences made {len(answer['events'])} "
                  f"events: {answer}")

        # Events before the webhook exists: not delivered.
        move(["o0", "o1", "o2"])
        _, declared_after = server.feed(0)
        server.call("PUT", f"/v1/webhooks/{HOOK}",
                    {"url": f"{scheme}://{host}:{receiver.port}/hook", "secret": SECRET,
                     "fences": [FENCE]})
        log(f"server on port {server.port}, receiver on {receiver.port}; webhook declared after "
            f"event {declared_after}")

        # ~args.events events of f1 over ~args.duration seconds, with the receiver restarts spread in.
        posts = max(1, math.ceil(args.events / 3))
        interval = args.duration / posts
        restart_at = sorted(int(posts * (k + 1) / (args.restarts + 1)) for k in range(args.restarts))
        made = 0
        restarts = 0
        for k in range(posts):
            n = min(rng.randint(2, 4), args.events - made) if k < posts - 1 else args.events - made
            if n > 0:
                move(rng.sample(sorted(inside), min(n, 10)))
                made += min(n, 10)
            if restarts < len(restart_at) and k == restart_at[restarts]:
                receiver.stop()
                log(f"receiver stopped ({time.time() - t0:.1f} s, {len(receiver.snapshot())} events so far)")
                down = time.time() + 1.5
                while time.time() < down:     # keep making events while it is down
                    time.sleep(interval)
                    m = rng.randint(1, 3)
                    if made + m < args.events:
                        move(rng.sample(sorted(inside), m))
                        made += m
                receiver.start()
                restarts += 1
                log(f"receiver started again ({time.time() - t0:.1f} s)")
            time.sleep(interval)
        check(server.alive(), f"the server died:\n{server.log_tail()}")

        everything, _ = server.feed(declared_after)
        expected = [e for e in everything if e["fence"] == FENCE]
        check(len(expected) == made, f"{made} f1 crossings but GET /v1/events lists {len(expected)} f1 events")
        want_ids = {e["id"] for e in expected}
        log(f"{len(expected)} f1 events made ({time.time() - t0:.1f} s); waiting for the deliveries")

        deadline = time.time() + 120
        while True:
            got = {a[0] for a in receiver.snapshot()}
            if want_ids <= got or receiver.problems or not server.alive():
                break
            if time.time() > deadline:
                break
            time.sleep(0.2)
        check(server.alive(), f"the server died:\n{server.log_tail()}")
        check(not receiver.problems, f"{len(receiver.problems)} bad calls, e.g. {receiver.problems[:3]}")
        arrivals = receiver.snapshot()
        got = {a[0] for a in arrivals}
        missing = sorted(want_ids - got)
        hook = server.call("GET", f"/v1/webhooks/{HOOK}")
        check(not missing, f"after 120 s, {len(missing)} of {len(want_ids)} events never arrived, "
                           f"first {missing[:10]}; the webhook: {json.dumps(hook)[:2000]}")
        delivered_s = time.time() - t0

        extra = sorted(got - want_ids)
        check(not extra, f"{len(extra)} events arrived that are not f1 events after the declaration "
                         f"(after {declared_after}): {extra[:10]}")
        by_id = {e["id"]: e for e in expected}
        for eid, obj, kind, fence, body in arrivals:
            check(body == by_id[eid], f"event {eid}: delivered body {body} differs from the feed's {by_id[eid]}")
        first = []
        seen = set()
        for a in arrivals:
            if a[0] not in seen:
                seen.add(a[0])
                first.append(a)
        duplicates = len(arrivals) - len(first)
        server_order = defaultdict(list)
        for e in expected:
            server_order[e["object"]].append(e["id"])
        arrival_order = defaultdict(list)
        for eid, obj, *_ in first:
            arrival_order[obj].append(eid)
        for obj in sorted(server_order):
            if arrival_order[obj] != server_order[obj]:
                a, s = arrival_order[obj], server_order[obj]
                i = next((i for i, (x, y) in enumerate(zip(a, s)) if x != y), min(len(a), len(s)))
                raise TestFailure(f"object {obj}: events arrived in the order {a[i:i + 6]}..., the server "
                                  f"made them in the order {s[i:i + 6]}... (from position {i})")
        globally = [a[0] for a in first] == sorted(want_ids)

        # The webhook's own account (its counters may trail the last 204 by a moment).
        deadline = time.time() + 10
        while True:
            hook = server.call("GET", f"/v1/webhooks/{HOOK}")
            if (hook.get("delivered") or 0) >= len(expected) or time.time() > deadline:
                break
            time.sleep(0.2)
        check(hook.get("dead_letters") == [], f"GET /v1/webhooks/{HOOK}: dead letters {hook.get('dead_letters')}")
        check((hook.get("delivered") or 0) >= len(expected),
              f"GET /v1/webhooks/{HOOK}: delivered {hook.get('delivered')} < {len(expected)} events: {hook}")
        failures = receiver.failed_500 + receiver.failed_dropped
        log(f"webhook state: delivered {hook.get('delivered')}, attempts {hook.get('attempts')}, "
            f"last_event_id {hook.get('last_event_id')}, last_error {hook.get('last_error')!r}")
        log(f"receiver: {receiver.calls} calls, {receiver.failed_500} answered 500, "
            f"{receiver.failed_dropped} dropped unanswered, {receiver.truncated} requests cut off before "
            f"their body (connection closed); first arrivals in global order: {globally}; "
            f"most calls in flight at once: {receiver.max_in_flight}")
        log(f"webhook: {len(expected)} events, {duplicates} duplicates, {failures} failures answered, "
            f"all delivered in order")
        log(f"ok (all delivered {delivered_s:.1f} s after the start, {time.time() - t0:.1f} s in all)")
    finally:
        receiver.stop()
        server.stop()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--vltava", required=True, help="the vltava binary")
    p.add_argument("--store", required=True, help="the GeoPackage to copy (never written)")
    p.add_argument("--failure-rate", type=float, default=0.3)
    p.add_argument("--restarts", type=int, default=2)
    p.add_argument("--events", type=int, default=300)
    p.add_argument("--duration", type=float, default=8.0, help="seconds to spread the events over")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--max-drops", type=int, default=1,
                   help="at most this many failures close the connection without answering (each "
                        "costs the server's 5 s request timeout, see below); the rest answer 500")
    p.add_argument("--trace", action="store_true", help="print every call the receiver gets")
    p.add_argument("--tls", action="store_true", help="the receiver speaks https, its certificate from a CA made for the run")
    args = p.parse_args()
    if args.seed is None:
        args.seed = random.randrange(1 << 30)
    log(f"seed {args.seed}")
    try:
        run(args)
    except TestFailure as e:
        log(f"FAIL: {e}")
        sys.exit(1)


if __name__ == "__main__":
    main()
