#!/usr/bin/env python3
"""Replica lag: how soon a write through one replica of a PostGIS store is answered by another.

Starts a throwaway PostgreSQL 15 + PostGIS cluster on 127.0.0.1 (Benchmarks/write-throughput.py's:
initdb as nobody when run as root, fsync and synchronous_commit on), pushes a small store into
it (the 17 air-quality stations, `vltava push`), and serves that one database from two
replicas, A and B (`vltava serve --db postgresql://… --write-token-file`, each on its own
loopback port, B started once A is ready). Through A it creates a layer from a schema
(POST /v1/write, `create`) and waits until B lists it. Then --writes times (300; 50 with
--quick), at most --rate (20) a second:

  1. POST /v1/write to A: one insert of a point with a text and an integer (the body of
     Benchmarks/write-throughput.py's singles); A's 200 answer is the acknowledgement and names
     the new feature's fid;
  2. right after it, two things at once:
     - one GET /ogc/collections/LAYER/items/FID to A (read your writes: it must answer 200 with
       that feature at once), and
     - GET /ogc/collections/LAYER/items/FID to B, every 2 ms (a poll starts 2 ms after the
       previous one started, or at once when that one took longer) until B answers 200. The
       lag is the time from A's acknowledgement arriving to B's 200 arriving, on one monotonic
       clock. 404 `unknown_feature` is "not yet"; any other answer, or a failed connection,
       counts as an error of B (there must be none). A feature B has not answered after 10 s
       counts as never arrived. B's answer must carry A's ETag (the same feature: the tag hashes
       its geometry and properties, alike on every replica).

Prints p50, p90, p99 and max of the lag in ms (nearest rank), B's errors, A's read-your-writes
failures and the features never seen on B, as one JSON line on standard output (what it is
doing, and the replicas' and PostgreSQL's logged warnings and errors, go to standard error).
Exit status 1 when a write failed, B answered an error or another ETag than A, A did not have
its own write at once, or a feature never reached B.

Why it is fair: B learns of a write the way every replica does in production (PostgreSQL's
NOTIFY at commit, then B's catch-up from the change feed, docs/SCALING.md), nothing is
shortcut; writes are paced (the next one starts only after B answered the last and at least
1/rate after the last one started), so each lag is one write's on a quiet pipeline, not a
queue's; the polls are plain HTTP GETs on one keep-alive connection to each replica from one
client on the same machine, so a lag includes one loopback round trip to B and up to the 2 ms
poll interval. Both replicas, PostgreSQL and this client share the machine's cores.

    Benchmarks/replica-lag.py [--binary .build/release/vltava] [--writes 300] [--rate 20] [--quick] [--work DIR]

Needs PostgreSQL 15 with PostGIS 3 and psycopg 3 (scripts/install-deps.sh --bench). Only
127.0.0.1 is used; everything it starts (replicas, cluster, scratch folder) is stopped and
removed at exit, Ctrl-C or error included.
"""

import argparse
import contextlib
import http.client
import json
import math
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import benchsupport
from benchsupport import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYER = "lag"
POLL_INTERVAL = 0.002  # s
NEVER = 10.0  # s: a feature B has not answered after this long never arrived


def say(*text, sep=" "):
    print(*text, sep=sep, file=sys.stderr, flush=True)


def percentile(values, p):
    """Nearest rank: the smallest value with at least p % of the values at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)] if ordered else None


def start_replica(name, binary, url, tokens, work, stack, wt):
    port = free_port()
    log_path = os.path.join(work, f"replica-{name}.log")
    with open(log_path, "w") as log:
        process = benchsupport.serve(binary, url, port, tokens, "warning", stdout=log)
    stack.callback(benchsupport.stop_process, process)
    stack.callback(benchsupport.show_server_log, log_path, f"replica {name}", "requests", True)
    return port, process, log_path


class Client:
    """One keep-alive HTTP connection to a replica."""

    def __init__(self, port, token=None):
        self.port = port
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"} if token else {}
        self.connection = None
        self.etag = None  # the last answer's

    def request(self, method, path, body=None):
        """(status, body bytes); a failed connection raises OSError/HTTPException (closed first)."""
        try:
            if self.connection is None:
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            self.connection.request(method, path, body, self.headers)
            answer = self.connection.getresponse()
            self.etag = answer.getheader("ETag")
            return answer.status, answer.read()
        except (OSError, http.client.HTTPException):
            self.close()
            raise

    def close(self):
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def problem_code(body):
    try:
        return json.loads(body).get("code")
    except (ValueError, AttributeError):
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/release/vltava"))
    parser.add_argument("--writes", type=int, default=300)
    parser.add_argument("--rate", type=float, default=20, help="at most this many writes a second (default 20)")
    parser.add_argument("--quick", action="store_true", help="50 writes: checks that the script works")
    parser.add_argument("--work", help="the folder for the scratch files (default: the system's temporary folder)")
    options = parser.parse_args()
    writes = 50 if options.quick else options.writes
    if not os.access(options.binary, os.X_OK):
        sys.exit(f"{options.binary} is missing: swift build -c release --product vltava")
    wt = benchsupport.write_throughput()
    if not (os.access(os.path.join(wt.PGBIN, "postgres"), os.X_OK) and os.path.exists(wt.POSTGIS_CONTROL)):
        sys.exit("PostgreSQL 15 with PostGIS 3 is missing: scripts/install-deps.sh --bench")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwinds the cleanup as Ctrl-C does
    if options.work:
        os.makedirs(options.work, exist_ok=True)

    # Standard output is the JSON line alone: what the cleanup prints (logs) goes to standard error.
    with contextlib.redirect_stdout(sys.stderr), contextlib.ExitStack() as stack:
        work = tempfile.mkdtemp(prefix="replica-lag.", dir=options.work)
        stack.callback(shutil.rmtree, work, ignore_errors=True)
        os.chmod(work, 0o755)  # PostgreSQL's user must reach its folder inside
        store = os.path.join(work, "store.gpkg")
        subprocess.run([options.binary, "import", os.path.join(ROOT, "Fixtures/air/stations-prague.csv"), "--layer", "stations", "--db", store],
                       check=True, stdout=subprocess.DEVNULL)
        conninfo, url = benchsupport.start_postgis(work, stack)
        benchsupport.push(options.binary, store, url)
        token, tokens = benchsupport.write_token_file(work, "lag-")
        # One after the other, as a rolling deployment starts them: each writer installs the
        # change feed's function and triggers when it opens, and two doing so at the same moment
        # can collide in PostgreSQL's catalogue ("tuple concurrently updated").
        replicas = {}
        for name in ("A", "B"):
            replicas[name] = start_replica(name, options.binary, url, tokens, work, stack, wt)
            port, process, log_path = replicas[name]
            wt.wait_until_ready(f"http://127.0.0.1:{port}/readyz", process, log_path)
        say(f"vltava: {wt.binary_identity(options.binary)}")
        say(f"replicas A on 127.0.0.1:{replicas['A'][0]}, B on 127.0.0.1:{replicas['B'][0]}, one PostGIS database at {url}; "
            f"{writes} writes at most {options.rate:g}/s; {os.cpu_count()} cores, load {open('/proc/loadavg').read().split()[0]}")
        summary = measure(replicas["A"][0], replicas["B"][0], token, writes, options.rate, stack)
        summary["binary"] = wt.binary_identity(options.binary)
    print(json.dumps(summary))
    failed = (summary["write_failures"] or summary["b_errors"] or summary["read_your_writes_failures"] or summary["never_on_b"]
              or summary["etag_differs"])
    sys.exit(1 if failed else 0)


def measure(port_a, port_b, token, writes, rate, stack):
    writer, reader_a, reader_b = Client(port_a, token), Client(port_a), Client(port_b)
    for client in (writer, reader_a, reader_b):
        stack.callback(client.close)

    # The layer, through A; B reloads when it hears of a new layer.
    created = time.perf_counter()
    status, body = writer.request("POST", "/v1/write", json.dumps({"operations": [{"create": {
        "name": LAYER, "geometry_type": "POINT", "columns": [{"name": "name", "type": "TEXT"}, {"name": "value", "type": "INTEGER"}]}}]}))
    if status != 200:
        sys.exit(f"creating the layer through A answered {status}: {body[:500]!r}")
    while True:
        status, _ = reader_b.request("GET", f"/ogc/collections/{LAYER}")
        if status == 200:
            break
        if time.perf_counter() - created > 30:
            sys.exit(f"B did not list the layer created through A within 30 s (last answer {status})")
        time.sleep(0.01)
    layer_on_b_ms = (time.perf_counter() - created) * 1000

    # A's read-your-writes check runs on a thread of its own, so that it and B's first poll both
    # start right after the acknowledgement.
    checks, outcomes = queue.Queue(), queue.Queue()

    def read_own_writes():
        while (fid := checks.get()) is not None:
            try:
                status, body = reader_a.request("GET", f"/ogc/collections/{LAYER}/items/{fid}")
                ok = status == 200 and json.loads(body).get("id") == fid
                outcomes.put((None if ok else f"fid {fid}: A answered {status} {body[:200]!r}", reader_a.etag))
            except Exception as error:  # noqa: BLE001 - counted as a failure
                outcomes.put((f"fid {fid}: {type(error).__name__}: {error}", None))

    thread = threading.Thread(target=read_own_writes, daemon=True)
    thread.start()
    stack.callback(checks.put, None)

    lags, b_errors, b_error_examples, own, never, write_failures, polls, differ = [], 0, [], [], [], [], 0, []
    started = time.perf_counter()
    next_start = started
    for i in range(writes):
        time.sleep(max(0.0, next_start - time.perf_counter()))
        next_start = time.perf_counter() + 1 / rate
        body = json.dumps({"operations": [{"insert": LAYER, "feature": {"type": "Feature",
            "geometry": {"type": "Point", "coordinates": [round(14.3 + (i % 300) * 1e-3, 7), round(50.0 + (i // 300) * 1e-3, 7)]},
            "properties": {"name": f"write {i}", "value": i}}}]})
        try:
            status, answer = writer.request("POST", "/v1/write", body)
        except (OSError, http.client.HTTPException) as error:
            write_failures.append(f"write {i}: {type(error).__name__}: {error}")
            continue
        acknowledged = time.perf_counter()
        if status != 200:
            write_failures.append(f"write {i}: A answered {status}: {answer[:300]!r}")
            continue
        fid = json.loads(answer)["changes"][0]["fid"]
        checks.put(fid)
        path = f"/ogc/collections/{LAYER}/items/{fid}"
        while True:
            poll = time.perf_counter()
            polls += 1
            try:
                status, answer = reader_b.request("GET", path)
            except (OSError, http.client.HTTPException) as error:
                status, answer = None, f"{type(error).__name__}: {error}".encode()
            answered = time.perf_counter()
            if status == 200:
                if json.loads(answer).get("id") != fid:
                    b_errors += 1
                    b_error_examples.append(f"fid {fid}: B answered another feature: {answer[:200]!r}")
                lags.append((answered - acknowledged) * 1000)
                etag_b = reader_b.etag
                break
            if not (status == 404 and problem_code(answer) == "unknown_feature"):
                b_errors += 1
                if len(b_error_examples) < 5:
                    b_error_examples.append(f"fid {fid}: B answered {status}: {answer[:200]!r}")
            if answered - acknowledged > NEVER:
                never.append(fid)
                break
            time.sleep(max(0.0, poll + POLL_INTERVAL - time.perf_counter()))
        outcome, etag_a = outcomes.get()
        if outcome is not None:
            own.append(outcome)
        elif fid not in never and etag_a != etag_b:
            differ.append(f"fid {fid}: ETag {etag_a} on A, {etag_b} on B")
    elapsed = time.perf_counter() - started

    summary = {"writes": writes, "acknowledged": writes - len(write_failures), "seconds": round(elapsed, 1),
               "lag_ms": {"p50": None, "p90": None, "p99": None, "max": None}, "b_polls": polls,
               "b_errors": b_errors, "etag_differs": len(differ), "read_your_writes_failures": len(own), "never_on_b": len(never),
               "write_failures": len(write_failures), "layer_on_b_ms": round(layer_on_b_ms, 1)}
    if lags:
        summary["lag_ms"] = {f"p{p}": round(percentile(lags, p), 2) for p in (50, 90, 99)} | {"max": round(max(lags), 2)}
        summary["lag_ms"]["min"] = round(min(lags), 2)
    say(f"lag from A's acknowledgement to B's answer over {len(lags)} writes: p50 {summary['lag_ms']['p50']} ms, "
        f"p90 {summary['lag_ms']['p90']} ms, p99 {summary['lag_ms']['p99']} ms, max {summary['lag_ms']['max']} ms; "
        f"B errors {b_errors}, read-your-writes failures {len(own)}, never on B {len(never)}, write failures {len(write_failures)}")
    for example in (b_error_examples + own + differ + write_failures)[:10]:
        say("  " + example)
    if never:
        summary["never_on_b_fids"] = never[:20]
    return summary


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("interrupted; everything started was stopped and removed")
