#!/usr/bin/env python3
"""The feed misses nothing: a Server-Sent Events client that leaves and comes back.

A writer inserts --changes features in batches of 10 (POST /v1/write) while a client reads
GET /v1/changes as an event stream with sseclient-py (PyPI), drops its connection at
--disconnects random moments and reconnects with Last-Event-ID set to the last id it saw.
At the end the client must have seen every sequence number from 1 to the last, exactly once
and in order.

With --postgis the store is a PostGIS database: a throwaway PostgreSQL 15 + PostGIS cluster on
127.0.0.1 (Benchmarks/write-throughput.py's, initdb'd as nobody when run as root), the demo
store copied into it with `vltava push`, served with `vltava serve --db postgresql://…`. The
same drill runs, and besides:
  - --updates times, spread over the writes, psql (another program, as an app's back office
    would be) runs `UPDATE feed SET n = … WHERE fid = …` on a feature written earlier; the
    layer's row trigger numbers it in the feed, so the client must see those sequence numbers
    too, once and in order with the rest;
  - a second client holds one event stream open for the whole run and notes when each event
    arrives: each UPDATE must arrive there as an `updated` event within 1 s of
    clock_timestamp() taken inside the UPDATE (PostgreSQL runs on this machine, so one clock;
    the delay counts the commit's flush as well, so it is an upper bound). The delays are printed;
  - that client too sees every sequence number once and in order, the table
    `vltava_changes` holds 1 to its largest, each once, and the server serves each UPDATE's
    value afterwards (GET /ogc/collections/feed/items/FID: it applied the change, not only fed it).
psql 15 has no \\bind, so the UPDATE's two integers are passed as psql variables (-v) and
quoted by psql itself (:'fid'); no SQL text is built from values here.

Usage: scripts/feed-drill.py [--binary PATH] [--changes 10000] [--disconnects 50] [--seed N]
                             [--postgis [--updates 5]]
Prints one JSON line; exit status 0 when every check holds. Everything started (the server, the
cluster, the work folder) is stopped and removed at exit, Ctrl-C included; only 127.0.0.1 is
used. A short version is a test (ServerTests' WriteEndpointTests).
"""

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import requests
import sseclient

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks"))
import benchsupport  # noqa: E402
from benchsupport import free_port, start_postgis, stop_process  # noqa: E402

READ_TIMEOUT = 30  # s: the server sends a keep-alive comment every 15 s on a quiet stream
UPDATE_WITHIN = 1.0  # s: an UPDATE made in psql must be in the feed this soon


class Listener(threading.Thread):
    """One event stream held open from sequence 0 for the whole run: each change event and
    when it arrived (time.time())."""

    def __init__(self, base):
        super().__init__(daemon=True)
        self.base = base
        self.events = []  # (sequence, layer, fid, change, arrived)
        self.error = None
        self.stop = threading.Event()
        self.response = None
        self.arrived = threading.Condition()

    def run(self):
        try:
            self.response = requests.get(self.base + "/v1/changes", headers={"Accept": "text/event-stream"}, stream=True, timeout=(10, None))
            self.response.raise_for_status()
            for event in sseclient.SSEClient(self.response).events():
                arrived = time.time()
                if self.stop.is_set():
                    break
                if event.event != "change":
                    continue
                change = json.loads(event.data)
                with self.arrived:
                    self.events.append((change["sequence"], change["layer"], change["fid"], change["change"], arrived))
                    self.arrived.notify_all()
        except Exception as error:  # noqa: BLE001 - reported in the summary
            if not self.stop.is_set():
                self.error = f"{type(error).__name__}: {error}"
        finally:
            with self.arrived:
                self.arrived.notify_all()

    def wait_for(self, predicate, timeout):
        """The first event (sequence, layer, fid, change, arrived) that predicate accepts, or None."""
        deadline = time.time() + timeout
        with self.arrived:
            checked = 0
            while True:
                for event in self.events[checked:]:
                    if predicate(event):
                        return event
                checked = len(self.events)
                left = deadline - time.time()
                if left <= 0 or self.error or not self.is_alive():
                    return None
                self.arrived.wait(left)

    def close(self):
        self.stop.set()
        if self.response is not None:
            self.response.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/release/vltava"))
    parser.add_argument("--changes", type=int, default=10_000)
    parser.add_argument("--disconnects", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--postgis", action="store_true", help="the store is a throwaway PostGIS database, not a GeoPackage")
    parser.add_argument("--updates", type=int, default=5, help="with --postgis: UPDATEs made with psql during the writes (default 5)")
    options = parser.parse_args()
    if options.changes < 10:
        parser.error("--changes must be at least 10")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwinds the cleanup as Ctrl-C does
    # Standard output is the JSON line alone: what the cleanup prints (logs) goes to standard error.
    with contextlib.redirect_stdout(sys.stderr), contextlib.ExitStack() as stack:
        work = tempfile.mkdtemp(prefix="vltava-feed-")
        os.chmod(work, 0o755)  # with --postgis, PostgreSQL's user (nobody) must reach its folder inside
        stack.callback(shutil.rmtree, work, ignore_errors=True)
        summary, ok = run(options, random.Random(options.seed), work, stack)
    print(json.dumps(summary))
    sys.exit(0 if ok else 1)


def run(options, rng, work, stack):
    store = os.path.join(work, "demo.gpkg")
    subprocess.run([os.path.join(ROOT, "scripts/build-demo-store.sh"), store, options.binary],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    updates = options.updates if options.postgis else 0
    if options.postgis:
        conninfo, url = start_postgis(work, stack)
        benchsupport.push(options.binary, store, url)
        pg = dict(part.split("=", 1) for part in conninfo.split())
        store = url
    token, tokens = benchsupport.write_token_file(work, "feed-")
    port = free_port()
    log_path = os.path.join(work, "serve.log")
    with open(log_path, "w") as log:
        server = benchsupport.serve(options.binary, store, port, tokens, "error", stdout=log, stderr=log)
    stack.callback(benchsupport.show_server_log, log_path)
    stack.callback(stop_process, server)
    base = f"http://127.0.0.1:{port}"
    auth = {"Authorization": f"Bearer {token}"}
    if not benchsupport.wait_until_ready(base + "/readyz", server, 120, interval=0.1) and server.poll() is not None:
        sys.exit(f"the server exited with {server.returncode}")
    # The store's own changes before the run (the demo's layers, imported): the run's come after.
    start = requests.get(base + "/v1/changes", params={"since": 0, "limit": 10000}, timeout=30).json()["last"]
    created = requests.post(base + "/v1/write", headers=auth, timeout=30, json={"operations": [{"create": {
        "name": "feed", "geometry_type": "POINT", "columns": [{"name": "n", "type": "INTEGER"}]}}]})
    created.raise_for_status()
    total = 1 + options.changes + updates  # the creation is the first change
    expected = list(range(start + 1, start + total + 1))
    batches = (options.changes + 9) // 10
    progress = {"batches": 0}
    broken = threading.Event()  # the writer or psql failed: stop waiting for events
    failures = []

    listener = None
    if options.postgis:
        listener = Listener(base)
        stack.callback(listener.close)
        listener.start()

    def writer():
        try:
            for b in range(batches):
                size = min(10, options.changes - b * 10)
                answer = requests.post(base + "/v1/write", headers=auth, timeout=60, json={"operations": [
                    {"insert": "feed", "feature": {"type": "Feature", "geometry": {"type": "Point", "coordinates": [14.4, 50.0 + (b % 100) * 1e-4]},
                                                   "properties": {"n": b * 10 + i}}} for i in range(size)]})
                answer.raise_for_status()
                progress["batches"] = b + 1
        except Exception as error:  # noqa: BLE001 - reported in the summary
            failures.append(f"writer: {type(error).__name__}: {error}")
            broken.set()

    measured = []  # per UPDATE: fid, its sequence, delay from the UPDATE's clock_timestamp() to the event, psql's own time

    def updater():
        """psql's UPDATEs, the k-th once the writer has written k / (updates + 1) of its batches."""
        try:
            for k in range(updates):
                fid = k + 1  # written by batch k // 10
                due = max(k // 10 + 1, batches * (k + 1) // (updates + 1))
                while progress["batches"] < due and not broken.is_set():
                    time.sleep(0.005)
                if broken.is_set():
                    return
                started = time.time()
                done = subprocess.run(
                    ["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", pg["host"], "-p", pg["port"], "-U", pg["user"], "-d", pg["dbname"],
                     "-v", f"fid={fid}", "-v", f"n={-1 - k}"],
                    input="UPDATE feed SET n = :'n'::integer WHERE fid = :'fid'::bigint "
                          "RETURNING fid, extract(epoch FROM clock_timestamp());\n",
                    capture_output=True, text=True, timeout=30)
                returned = time.time()
                if done.returncode != 0 or not done.stdout.strip():
                    raise RuntimeError(f"psql failed ({done.returncode}): {done.stderr.strip()}{done.stdout.strip()}")
                updated_fid, statement_time = done.stdout.strip().split("|")
                if int(updated_fid) != fid:
                    raise RuntimeError(f"psql updated fid {updated_fid}, not {fid}")
                event = listener.wait_for(lambda e, fid=fid: e[1] == "feed" and e[2] == fid and e[3] == "updated", timeout=30)
                if event is None:
                    raise RuntimeError(f"psql's UPDATE of fid {fid} did not reach the event stream within 30 s"
                                       + (f" ({listener.error})" if listener.error else ""))
                measured.append({"fid": fid, "sequence": event[0], "delay_ms": round((event[4] - float(statement_time)) * 1000, 1),
                                 "after_psql_returned_ms": round((event[4] - returned) * 1000, 1),
                                 "psql_ms": round((returned - started) * 1000, 1)})
        except Exception as error:  # noqa: BLE001 - reported in the summary
            failures.append(f"psql's UPDATE: {type(error).__name__}: {error}")
            broken.set()

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    threads = [thread]
    if updates:
        threads.append(threading.Thread(target=updater, daemon=True))
        threads[-1].start()
    # Disconnect after these many events (counted over the whole run).
    cuts = sorted(rng.sample(range(1, total), min(options.disconnects, total - 1)))
    seen, last, reconnects, stream_errors = [], start, 0, []
    deadline = time.time() + 600
    while len(seen) < total and time.time() < deadline and not broken.is_set():
        headers = {"Accept": "text/event-stream"}
        if last:
            headers["Last-Event-ID"] = str(last)
        response = requests.get(base + "/v1/changes", headers=headers, stream=True, timeout=(10, READ_TIMEOUT))
        response.raise_for_status()
        client = sseclient.SSEClient(response)
        try:
            for event in client.events():
                if event.event != "change":
                    continue
                change = json.loads(event.data)
                assert int(event.id) == change["sequence"]
                seen.append(change["sequence"])
                last = change["sequence"]
                if cuts and len(seen) >= cuts[0]:
                    cuts.pop(0)
                    break
                if len(seen) >= total:
                    break
        except requests.RequestException as error:  # a stream that broke (or went quiet) without being asked
            stream_errors.append(f"{type(error).__name__}: {error}")
        finally:
            response.close()
        reconnects += 1
    for t in threads:
        t.join(timeout=120)
    ok = seen == expected
    duplicates = len(seen) - len(set(seen))
    summary = {"store": "geopackage", "changes": total, "events": len(seen), "reconnects": reconnects - 1, "duplicates": duplicates,
               "in_order": seen == sorted(seen), "every_one_once": ok}
    if stream_errors:
        summary["stream_errors"] = stream_errors[:5]
        ok = False
    if options.postgis:
        import psycopg
        listener.wait_for(lambda e: e[0] >= start + total, timeout=10)
        listener.close()
        heard = [e[0] for e in listener.events if e[0] > start]
        with psycopg.connect(conninfo) as db:
            sequences = [seq for (seq,) in db.execute("SELECT seq FROM vltava_changes WHERE seq > %s ORDER BY seq", (start,))]
        # The server applied each UPDATE to what it serves too (its catch-up), not only to the feed.
        stale = []
        for k, m in enumerate(measured):
            item = requests.get(f"{base}/ogc/collections/feed/items/{m['fid']}", timeout=30)
            served = item.json().get("properties", {}).get("n") if item.status_code == 200 else f"HTTP {item.status_code}"
            if served != -1 - k:
                stale.append(f"fid {m['fid']}: served n = {served}, psql set {-1 - k}")
        delays = [m["delay_ms"] for m in measured]
        table_ok = sequences == expected
        within = len(measured) == updates and all(d <= UPDATE_WITHIN * 1000 for d in delays)
        summary.update({"store": "postgis", "psql_updates": updates, "update_delays_ms": delays,
                        "update_delay_max_ms": max(delays) if delays else None, "updates_within_1s": within,
                        "steady_client_every_one_once": heard == expected,
                        "vltava_changes_every_one_once": table_ok, "updates_served": not stale, "updates": measured})
        if stale:
            summary["updates_not_served"] = stale
        if listener.error:
            summary["steady_client_error"] = listener.error
        print(f"psql's UPDATEs reached the event stream in {', '.join(f'{d:g}' for d in delays)} ms "
              f"(from clock_timestamp() inside each UPDATE; at most {UPDATE_WITHIN * 1000:g} ms allowed)", file=sys.stderr)
        ok = ok and within and heard == expected and table_ok and not stale
    if failures:
        summary["failures"] = failures
        ok = False
    return summary, ok


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("interrupted; everything started was stopped and removed")
