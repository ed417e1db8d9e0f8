#!/usr/bin/env python3
"""An SSE client that reconnects 50 times with Last-Event-ID misses no fence event.

Starts `vltava serve` on a fresh copy of a GeoPackage, declares a live layer and a fence, and
runs a writer thread that moves objects o0..o9 in and out of the fence (a POST of a few
positions every 5-20 ms, each making events) for the whole run. Meanwhile a client built on
sseclient (sseclient-py, over a streaming `requests` response) reads GET /v1/events as
text/event-stream (or, at random, /v1/events?fences=f1 or /v1/fences/f1/events: the same events
with one fence): it connects with Last-Event-ID = the newest id before the writer started,
reads a random 1-40 events, closes the connection (the socket, not just the generator),
sometimes waits a little so a backlog builds up, and reconnects with Last-Event-ID = the last
id it saw; 50 reconnections in all. After the writer stops, one more connection catches up to
the newest event.

Then the ids the client got, in order, must equal the feed GET /v1/events?after=START (paged,
`missed` false): none missed, none duplicated, same order, and the event bodies (SSE data) must
equal the feed's. Each SSE event's `id:` and `event:` lines must agree with its data.

Also checked: a stream resuming with a Last-Event-ID from before the run (1) first gets an
`event: missed` whose data is {"after": 1, "resumed_at": <first event kept>}, then the kept
events from there; a stream without Last-Event-ID starts at "now" (its first event is newer
than the newest event before it connected). Overflowing the 100,000-event ring is not tested
(not reachable cheaply).

Exits non-zero on any failure. Python stdlib, requests and sseclient (sseclient-py).

Usage: sse_resume.py --vltava BINARY --store GPKG [--reconnects 50] [--seed S]
"""
import argparse
import json
import math
import os
import random
import sys
import threading
import time

import requests
import sseclient

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import live_server  # noqa: E402  (shared server/assertion helpers next to this script)

TOKEN = live_server.TOKEN
AUTH = {"Authorization": "Bearer " + TOKEN}
CENTRE = (14.40519, 50.11576)
M_PER_DEG_LAT = 111195.0
LAYER = "visitors"
FENCE = "f1"
# The client resumes on any of these at random: with one fence they carry the same events.
PATHS = ["/v1/events", f"/v1/events?fences={FENCE}", f"/v1/fences/{FENCE}/events"]


log = live_server.log
TestFailure = live_server.TestFailure
check = live_server.check
free_port = live_server.free_port


# --------------------------------------------------------------------------------------------
# The server

class Server(live_server.Server):
    def __init__(self, binary, store):
        super().__init__(binary, store, prefix="vltava-sse-")


def call(session, server, method, path, body=None):
    headers = dict(AUTH) if method != "GET" else {}
    r = session.request(method, server.base + path, json=body, headers=headers, timeout=30)
    if r.status_code // 100 != 2:
        raise TestFailure(f"{method} {path} -> {r.status_code}: {r.text[:2000]}")
    return r.json()


def feed(session, server, after):
    """Every event after `after` from GET /v1/events, paged; fails on `missed`."""
    events = []
    while True:
        page = call(session, server, "GET", f"/v1/events?after={after}&limit=1000")
        check(page.get("missed") is False,
              f"GET /v1/events?after={after} says missed={page.get('missed')!r}")
        if not page["events"]:
            return events, page["last"]
        events.extend(page["events"])
        after = page["events"][-1]["id"]


def newest_id(session, server):
    """The newest event id (GET /v1/events?after=0's `last`, paged to the end), 0 when none."""
    _, last = feed(session, server, 0)
    return last or 0


def position(inside, rng):
    """A position 10 m (inside) or 200 m (outside) from the centre, in a random direction."""
    dist = 10.0 if inside else 200.0
    bearing = rng.uniform(0, 2 * math.pi)
    dlat = dist * math.cos(bearing) / M_PER_DEG_LAT
    dlon = dist * math.sin(bearing) / (M_PER_DEG_LAT * math.cos(math.radians(CENTRE[1])))
    return [round(CENTRE[0] + dlon, 7), round(CENTRE[1] + dlat, 7)]


# --------------------------------------------------------------------------------------------
# The writer

class Writer(threading.Thread):
    def __init__(self, server, seed):
        super().__init__(daemon=True)
        self.server = server
        self.rng = random.Random(seed)
        self.inside = {f"o{i}": False for i in range(10)}
        self.stop_flag = threading.Event()
        self.posts = 0
        self.events = 0
        self.error = None

    def step(self, session):
        ids = self.rng.sample(sorted(self.inside), self.rng.randint(2, 4))
        positions = []
        for oid in ids:
            self.inside[oid] = not self.inside[oid]
            positions.append({"id": oid, "position": position(self.inside[oid], self.rng)})
        answer = call(session, self.server, "POST", f"/v1/live/{LAYER}/positions",
                      {"positions": positions})
        check(len(answer["events"]) == len(ids),
              f"a POST moving {len(ids)} objects across the fence made {len(answer['events'])} "
              f"events: {answer}")
        self.posts += 1
        self.events += len(answer["events"])

    def run(self):
        try:
            with requests.Session() as session:
                while not self.stop_flag.is_set():
                    self.step(session)
                    time.sleep(self.rng.uniform(0.005, 0.020))
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            self.error = e

    def stop(self):
        self.stop_flag.set()
        self.join(30)
        if self.error is not None:
            raise TestFailure(f"the writer failed: {self.error!r}")


# --------------------------------------------------------------------------------------------
# The SSE client

class Stream:
    """One text/event-stream connection read through sseclient."""

    def __init__(self, server, path="/v1/events", last_event_id=None, read_timeout=20):
        self.session = requests.Session()
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        self.sock = None
        self.response = self.session.get(server.base + path, headers=headers, stream=True,
                                         timeout=(5, read_timeout))
        if self.response.status_code != 200:
            body = self.response.text[:2000]
            self.close()
            raise TestFailure(f"GET {path} (SSE, Last-Event-ID {last_event_id}) -> "
                              f"{self.response.status_code}: {body}")
        ctype = self.response.headers.get("Content-Type", "")
        check(ctype.startswith("text/event-stream"), f"GET {path} (SSE) answered Content-Type {ctype!r}")
        conn = getattr(self.response.raw, "_connection", None)
        self.sock = getattr(conn, "sock", None)
        self.client = sseclient.SSEClient(self.response)
        self.events = self.client.events()

    def next(self):
        try:
            return next(self.events)
        except StopIteration:
            raise TestFailure("the SSE stream ended while events were expected") from None
        except requests.exceptions.ConnectionError as e:
            raise TestFailure(f"the SSE stream failed or stalled: {e!r}") from None

    def close(self):
        # Close the socket itself: urllib3's HTTPResponse.close() closes its connection, and
        # the session (its pool) goes too, so nothing is put back for reuse.
        try:
            self.response.raw.close()
        finally:
            self.response.close()
            self.session.close()
        if self.sock is not None:
            check(self.sock.fileno() == -1, "closing the SSE stream left its socket open")


def parse_event(ev, where):
    """(id, body) of a fence event from the SSE stream; checks its id and event lines."""
    check(ev.event != "missed", f"{where}: an unexpected `missed` event: {ev.data}")
    try:
        body = json.loads(ev.data)
    except ValueError:
        raise TestFailure(f"{where}: SSE data is not JSON: {ev.data!r}") from None
    check(ev.id is not None and ev.id.isdigit(), f"{where}: SSE event without an integer id: {ev}")
    eid = int(ev.id)
    check(body.get("id") == eid, f"{where}: SSE id {eid} but data id {body.get('id')}")
    check(body.get("event") == ev.event, f"{where}: SSE event {ev.event!r} but data event {body.get('event')!r}")
    return eid, body


# --------------------------------------------------------------------------------------------

def run(args):
    t0 = time.time()
    rng = random.Random(args.seed)
    server = Server(args.vltava, args.store)
    writer = None
    try:
        session = requests.Session()
        call(session, server, "PUT", f"/v1/live/{LAYER}", {"history": "none"})
        call(session, server, "PUT", f"/v1/fences/{FENCE}",
             {"watch": {"layer": LAYER}, "area": {"point": list(CENTRE), "radius_m": 50}})
        start = newest_id(session, server)
        log(f"server on port {server.port}; starting after event {start}")

        writer = Writer(server, args.seed + 1)
        writer.start()

        received = []          # (id, body) in the order the client got them
        last = start
        reconnects = 0
        sockets_seen = 0
        for conn in range(args.reconnects + 1):   # the first connection, then the reconnections
            want = rng.randint(1, 40)
            path = rng.choice(PATHS)
            stream = Stream(server, path=path, last_event_id=last)
            sockets_seen += stream.sock is not None
            try:
                for _ in range(want):
                    eid, body = parse_event(stream.next(), f"connection {conn} to {path} (after {last})")
                    check(eid > last, f"connection {conn} resumed after {last} but got event {eid} "
                                      f"(ids must increase; a duplicate or a step back)")
                    received.append((eid, body))
                    last = eid
            finally:
                stream.close()
            if conn:
                reconnects += 1
            check(server.alive(), f"the server died:\n{server.log_tail()}")
            if rng.random() < 0.3:
                time.sleep(rng.uniform(0.01, 0.15))   # let a backlog build up before resuming
        check(sockets_seen == args.reconnects + 1, "could not reach the streams' sockets to check they close")
        writer.stop()
        writer_events = writer.events
        writer = None

        expected, final_last = feed(session, server, start)
        check(len(expected) == writer_events,
              f"the writer's POSTs made {writer_events} events, but GET /v1/events?after={start} "
              f"lists {len(expected)}")
        # Catch up to the newest event (the writer has stopped, so the stream ends there).
        if last < final_last:
            stream = Stream(server, last_event_id=last)
            try:
                while last < final_last:
                    eid, body = parse_event(stream.next(), f"catch-up connection (after {last})")
                    check(eid > last, f"the catch-up connection resumed after {last} but got {eid}")
                    received.append((eid, body))
                    last = eid
            finally:
                stream.close()

        got_ids = [eid for eid, _ in received]
        want_ids = [e["id"] for e in expected]
        if got_ids != want_ids:
            got_set, want_set = set(got_ids), set(want_ids)
            missing = [i for i in want_ids if i not in got_set]
            extra = [i for i in got_ids if i not in want_set]
            dups = len(got_ids) - len(got_set)
            first_diff = next((k for k, (a, b) in enumerate(zip(got_ids, want_ids)) if a != b),
                              min(len(got_ids), len(want_ids)))
            raise TestFailure(
                f"the SSE client's ids differ from GET /v1/events?after={start}: got {len(got_ids)}, "
                f"expected {len(want_ids)}; missing {len(missing)} {missing[:20]}; unexpected "
                f"{len(extra)} {extra[:20]}; duplicated {dups}; first difference at position "
                f"{first_diff}: got {got_ids[first_diff:first_diff + 5]}, expected "
                f"{want_ids[first_diff:first_diff + 5]}")
        for (eid, body), exp in zip(received, expected):
            check(body == exp, f"event {eid}: SSE data {body} differs from the feed's {exp}")
        log(f"sse resume: {len(received)} events over {reconnects} reconnections, none missed")

        # A stream resuming from before the run first says what it missed.
        kept, _ = feed(session, server, 0)
        check(kept, "GET /v1/events?after=0 lists no events")
        stream = Stream(server, last_event_id=1)
        try:
            ev = stream.next()
            check(ev.event == "missed", f"resuming after event 1 (before the run): the first event is "
                                        f"{ev.event!r} ({ev.data}), not `missed`")
            data = json.loads(ev.data)
            check(data.get("after") == 1 and data.get("resumed_at") == kept[0]["id"],
                  f"resuming after event 1: missed data {data}, expected after 1 and resumed_at "
                  f"{kept[0]['id']} (the first event kept)")
            for k in range(min(5, len(kept))):
                eid, body = parse_event(stream.next(), "the stream after `missed`")
                check(body == kept[k], f"after `missed`, event {k} is {body}, expected {kept[k]}")
        finally:
            stream.close()
        log(f"missed: resuming after 1 gets `missed` (resumed_at {kept[0]['id']}), then the kept events")

        # A stream without Last-Event-ID starts at "now".
        before = newest_id(session, server)
        stream = Stream(server)
        try:
            inside = {}
            box = {}

            def poke():
                # Make events until the stream has one (the subscription may lag the headers).
                prng = random.Random(args.seed + 2)
                k = 0
                while "got" not in box and k < 100:
                    inside["o0"] = not inside.get("o0", writer_inside_o0)
                    call(requests, server, "POST", f"/v1/live/{LAYER}/positions",
                         {"positions": [{"id": "o0", "position": position(inside["o0"], prng)}]})
                    k += 1
                    time.sleep(0.2)

            # o0's state: from the last event about o0 in the feed.
            o0_events = [e for e in expected if e["object"] == "o0"]
            writer_inside_o0 = bool(o0_events) and o0_events[-1]["event"] == "enter"
            poker = threading.Thread(target=poke, daemon=True)
            poker.start()
            eid, body = parse_event(stream.next(), "a stream without Last-Event-ID")
            box["got"] = eid
            poker.join(30)
            check(eid > before, f"a stream without Last-Event-ID started with event {eid}, not after "
                                f"the newest before it connected ({before})")
        finally:
            stream.close()
        log(f"live: a stream without Last-Event-ID starts after {before} (first event {eid})")
        check(server.alive(), f"the server died:\n{server.log_tail()}")
        log(f"ok ({time.time() - t0:.1f} s)")
    finally:
        if writer is not None:
            writer.stop_flag.set()
            writer.join(10)
        server.stop()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--vltava", required=True, help="the vltava binary")
    p.add_argument("--store", required=True, help="the GeoPackage to copy (never written)")
    p.add_argument("--reconnects", type=int, default=50)
    p.add_argument("--seed", type=int, default=None)
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
