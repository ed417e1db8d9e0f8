#!/usr/bin/env python3
"""Nothing acknowledged is lost: a writer sends batches while the server is killed with kill -9.

A writer sends batches of 1 and of 100, features into a layer of its own (made from a schema)
and observation rows into the demo store's time series, as fast as the server takes them, for
--seconds. Meanwhile the server is killed with SIGKILL at --kills random moments and started
again. Afterwards:
  - every acknowledged batch is in the store, whole;
  - no batch is there in part (an unacknowledged one is whole or absent);
  - the GeoPackage store passes PRAGMA integrity_check and GDAL's validate_gpkg.py.

With --postgis the store is a PostGIS database instead: a throwaway PostgreSQL 15 + PostGIS
cluster on 127.0.0.1 (Benchmarks/write-throughput.py's, initdb'd as nobody when run as root,
fsync and synchronous_commit on), the same demo store copied into it with `vltava push`, and
`vltava serve --db postgresql://…` killed and restarted as above (PostgreSQL itself is not
killed: the drill is about the server dying mid-transaction). The same two checks are read from
the database with psycopg 3 (bound parameters), and instead of the GeoPackage's checks the
change feed's table `vltava_changes`: every sequence number from 1 to its largest exactly once
(no gap, no duplicate), and one `inserted` row per feature or observation row the drill wrote,
none for one that is not there.

Why it is fair: the batches are the same in both modes, sent over loopback by one client that
counts a batch as acknowledged only when the server answered 200/201 with one change per
operation; the kills land at random moments (--seed) of a writer that never pauses, so some
fall inside a batch's transaction. A batch that got no answer may be there or not, but only
whole. Everything is read back after the last server is killed, from the store itself, not
through Vltava.

Usage: scripts/write-drill.py [--binary PATH] [--seconds 60] [--kills 20] [--seed N] [--postgis] [--keep]
Exit status 0 when every check holds; the summary is one JSON line on standard output, the
server's logged warnings and errors (if any) on standard error. Everything started (servers,
the cluster, the work folder unless --keep) is stopped and removed at exit, Ctrl-C included.
Only 127.0.0.1 is used. The test suite runs a short version (ServerTests' WriteEndpointTests).
"""

import argparse
import calendar
import contextlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks"))
import benchsupport  # noqa: E402
from benchsupport import free_port, start_postgis  # noqa: E402

BASE_HOUR = 1_893_456_000  # 2030-01-01T00:00:00Z: the drill's observation rows start here


class Server:
    def __init__(self, binary, store, tokens, log):
        self.binary, self.store, self.tokens, self.log = binary, store, tokens, log
        self.port = free_port()
        self.process = None

    def start(self):
        self.process = benchsupport.serve(self.binary, self.store, self.port, self.tokens, "error", stdout=self.log, stderr=self.log)
        if not benchsupport.wait_until_ready(f"http://127.0.0.1:{self.port}/readyz", self.process, 120):
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited with {self.process.returncode}")
            raise RuntimeError("the server did not become ready within 120 s")

    def kill(self):
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        if self.process is not None:
            self.process.wait()


def post(port, path, body, token, content_type="application/json"):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body.encode(), method="POST",
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": content_type})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.status, json.loads(answer.read())


def batch_of_row(interval_start):
    """The batch an observation row of the drill belongs to, from its start ('2030-…Z')."""
    seconds = calendar.timegm(time.strptime(interval_start, "%Y-%m-%dT%H:%M:%SZ"))
    return (seconds - BASE_HOUR) // 3600 // 100


def read_geopackage(store):
    """(drill features by batch, drill rows by batch, facts for the summary, problems)."""
    db = sqlite3.connect(store)
    features = dict(db.execute("SELECT batch, count(*) FROM drill GROUP BY batch").fetchall())
    rows = {}
    for (start,) in db.execute("SELECT interval_start FROM observations WHERE code = 'AREPA' AND interval_start >= ?", ("2030",)):
        n = batch_of_row(start)
        rows[n] = rows.get(n, 0) + 1
    integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
    db.close()
    problems = []
    if integrity != "ok":
        problems.append(f"PRAGMA integrity_check: {integrity}")
    validate = subprocess.run(["/usr/bin/python3", "-m", "osgeo_utils.samples.validate_gpkg", store], capture_output=True, text=True)
    if validate.returncode != 0:
        problems.append(f"validate_gpkg.py: {validate.stdout}{validate.stderr}")
    return features, rows, {"integrity_check": integrity, "validate_gpkg": validate.returncode == 0}, problems


def read_postgis(conninfo):
    """The same from the PostGIS database, and the change feed's checks."""
    import psycopg
    problems = []
    with psycopg.connect(conninfo) as db:
        features = dict(db.execute("SELECT batch, count(*) FROM drill GROUP BY batch").fetchall())
        drill_fids = [fid for (fid,) in db.execute("SELECT fid FROM drill ORDER BY fid")]
        rows, row_fids = {}, []
        for fid, start in db.execute("SELECT fid, interval_start FROM observations WHERE code = %s AND interval_start >= %s ORDER BY fid",
                                     ("AREPA", "2030")):
            n = batch_of_row(start)
            rows[n] = rows.get(n, 0) + 1
            row_fids.append(fid)
        sequences = [seq for (seq,) in db.execute("SELECT seq FROM vltava_changes ORDER BY seq")]
        kinds = dict(((layer, kind), count) for layer, kind, count in db.execute(
            "SELECT layer, kind, count(*) FROM vltava_changes GROUP BY layer, kind ORDER BY layer, kind"))
        inserted = {layer: [fid for (fid,) in db.execute(
            "SELECT fid FROM vltava_changes WHERE layer = %s AND kind = %s ORDER BY fid", (layer, "inserted"))]
            for layer in ("drill", "observations")}
    largest = sequences[-1] if sequences else 0
    duplicates = len(sequences) - len(set(sequences))
    missing = sorted(set(range(1, largest + 1)) - set(sequences))
    if duplicates or missing or sequences != list(range(1, largest + 1)):
        problems.append(f"vltava_changes: {len(sequences)} rows, largest sequence {largest}, {duplicates} duplicated, "
                        f"missing {missing[:20]}{'…' if len(missing) > 20 else ''}")
    for layer, present in (("drill", drill_fids), ("observations", row_fids)):
        fed = inserted[layer]
        if fed != present:
            extra, absent = sorted(set(fed) - set(present)), sorted(set(present) - set(fed))
            twice = sorted({fid for fid in fed if fed.count(fid) > 1}) if len(fed) != len(set(fed)) else []
            problems.append(f"{layer}: {len(present)} rows written and {len(fed)} 'inserted' changes; changes for rows not there "
                            f"{extra[:10]}, rows without a change {absent[:10]}, fids changed twice {twice[:10]}")
    unexpected = {f"{layer}/{kind}": count for (layer, kind), count in kinds.items()
                  if (layer, kind) not in (("drill", "created"), ("drill", "inserted"), ("observations", "inserted"))}
    if kinds.get(("drill", "created")) != 1 or unexpected:
        problems.append(f"vltava_changes holds other changes than the drill's one creation and its inserts: {kinds}")
    facts = {"changes": len(sequences), "largest_sequence": largest, "sequence_gaps": len(missing), "sequence_duplicates": duplicates,
             "feed_rows_per_feature_ok": not any(p.startswith(("drill:", "observations:")) for p in problems)}
    return features, rows, facts, problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/release/vltava"))
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--postgis", action="store_true", help="the store is a throwaway PostGIS database, not a GeoPackage")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    options = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwinds the cleanup as Ctrl-C does
    rng = random.Random(options.seed)
    moments_rng = random.Random(f"{options.seed}-kills")  # the main thread's own: the writer's rng is the writer's
    # Standard output is the JSON line alone: what the cleanup prints (logs) goes to standard error.
    with contextlib.redirect_stdout(sys.stderr), contextlib.ExitStack() as stack:
        work = tempfile.mkdtemp(prefix="vltava-drill-")
        os.chmod(work, 0o755)  # with --postgis, PostgreSQL's user (nobody) must reach its folder inside
        if not options.keep:
            stack.callback(shutil.rmtree, work, ignore_errors=True)
        summary, problems = run(options, rng, moments_rng, work, stack)
    print(json.dumps(summary))
    sys.exit(1 if problems else 0)


def run(options, rng, moments_rng, work, stack):
    gpkg = os.path.join(work, "demo.gpkg")
    with open(os.path.join(work, "build.log"), "w") as log:
        subprocess.run([os.path.join(ROOT, "scripts/build-demo-store.sh"), gpkg, options.binary], stdout=log, stderr=log, check=True)
    store = gpkg
    if options.postgis:
        conninfo, store = start_postgis(work, stack)
        with open(os.path.join(work, "push.log"), "w") as log:
            benchsupport.push(options.binary, gpkg, store, stdout=log, stderr=log)
    token, tokens = benchsupport.write_token_file(work, "drill-")
    log_path = os.path.join(work, "serve.log")
    log = stack.enter_context(open(log_path, "w"))
    stack.callback(benchsupport.show_server_log, log_path)
    server = Server(options.binary, store, tokens, log)
    stack.callback(server.kill)
    server.start()
    status, _ = post(server.port, "/v1/write", json.dumps({"operations": [{"create": {
        "name": "drill", "geometry_type": "POINT", "columns": [{"name": "batch", "type": "INTEGER"}, {"name": "item", "type": "INTEGER"}]}}]}), token)
    assert status == 200

    # Batch n: size 1 or 100, features or observation rows. Rows are AREPA's hours from 2030 on,
    # each batch its own hours, so a row names its batch by its start.
    sent = {}          # n -> (kind, size)
    acknowledged = set()
    failed = set()     # no answer: applied whole, or not at all
    reasons = {}       # why batches were not acknowledged: HTTP status and problem code, or the connection's error
    stop = threading.Event()
    lock = threading.Lock()

    def count(reason):
        reasons[reason] = reasons.get(reason, 0) + 1

    def writer():
        n = 0
        while not stop.is_set():
            n += 1
            kind = "features" if n % 2 else "rows"
            size = 100 if rng.random() < 0.3 else 1
            with lock:
                sent[n] = (kind, size)
                port = server.port
            if kind == "features":
                body = json.dumps({"operations": [{"insert": "drill", "feature": {"type": "Feature",
                    "geometry": {"type": "Point", "coordinates": [14.4 + i * 1e-4, 50.0 + (n % 1000) * 1e-4]},
                    "properties": {"batch": n, "item": i}}} for i in range(size)]})
                path, content_type = "/v1/write", "application/json"
            else:
                lines = ["code,datefromutc,datetoutc,no2"]
                for i in range(size):
                    start = BASE_HOUR + (n * 100 + i) * 3600
                    lines.append(f"AREPA,{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(start))} UTC,"
                                 f"{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(start + 3600))} UTC,{n}")
                body, path, content_type = "\n".join(lines), "/v1/layers/observations/rows", "text/csv"
            try:
                status, answer = post(port, path, body, token, content_type)
                if status in (200, 201) and len(answer["changes"]) == size:
                    with lock:
                        acknowledged.add(n)
                else:
                    with lock:
                        failed.add(n)
                        count(f"{status} with {len(answer.get('changes', []))} changes")
            except urllib.error.HTTPError as error:
                try:
                    code = json.loads(error.read()).get("code")
                except (ValueError, AttributeError, OSError):
                    code = "?"
                with lock:
                    failed.add(n)
                    count(f"{error.code} {code}")
                time.sleep(0.02)
            except (urllib.error.URLError, ConnectionError, OSError, ValueError) as error:
                with lock:
                    failed.add(n)
                    count(type(getattr(error, "reason", error)).__name__)
                time.sleep(0.02)

    thread = threading.Thread(target=writer)
    thread.start()
    # At exit (callbacks run last first): stop the writer, kill the server, then wait for the writer.
    stack.callback(thread.join)
    stack.callback(server.kill)
    stack.callback(stop.set)
    started = time.time()
    moments = sorted(moments_rng.uniform(0.5, options.seconds) for _ in range(options.kills))
    kills, ready_after = 0, []
    for moment in moments:
        time.sleep(max(0, started + moment - time.time()))
        server.kill()
        kills += 1
        with lock:
            server.port = free_port()
        restarted = time.time()
        server.start()
        ready_after.append(time.time() - restarted)
    time.sleep(max(0, started + options.seconds - time.time()))
    stop.set()
    thread.join()
    server.kill()

    # The store as the last process left it.
    features, rows, facts, problems = read_postgis(conninfo) if options.postgis else read_geopackage(store)
    for n, (kind, size) in sent.items():
        present = (features if kind == "features" else rows).get(n, 0)
        if n in acknowledged and present != size:
            problems.insert(0, f"batch {n} ({kind}, {size}) was acknowledged but {present} of it is in the store")
        elif present not in (0, size):
            problems.insert(0, f"batch {n} ({kind}, {size}) is in the store in part: {present}")
    unacknowledged_present = sum(1 for n in failed if (features if sent[n][0] == "features" else rows).get(n, 0))
    summary = {"store": "postgis" if options.postgis else "geopackage", "seconds": options.seconds, "kills": kills,
               "batches": len(sent), "acknowledged": len(acknowledged), "unacknowledged": len(failed),
               "unacknowledged_present_whole": unacknowledged_present, "unacknowledged_why": dict(sorted(reasons.items())),
               "ready_after_restart_s_max": round(max(ready_after), 2) if ready_after else None, "features": sum(features.values()), "rows": sum(rows.values()),
               **facts, "problems": problems[:20]}
    return summary, problems


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("interrupted; everything started was stopped and removed")
