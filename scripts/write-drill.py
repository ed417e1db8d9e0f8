#!/usr/bin/env python3
"""Nothing acknowledged is lost: a writer sends batches while the server is killed with kill -9.

A writer sends batches of 1 and of 100, features into a layer of its own (made from a schema)
and observation rows into the demo store's time series, as fast as the server takes them, for
--seconds. Meanwhile the server is killed with SIGKILL at --kills random moments and started
again. Afterwards:
  - every acknowledged batch is in the store, whole;
  - no batch is there in part (an unacknowledged one is whole or absent);
  - the store passes PRAGMA integrity_check and GDAL's validate_gpkg.py.

Usage: scripts/write-drill.py [--binary PATH] [--seconds 60] [--kills 20] [--seed N]
Exit status 0 when every check holds; the summary is one JSON line on standard output.
The test suite runs a short version (ServerTests' WriteDrillTests).
"""

import argparse
import calendar
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, binary, store, tokens, log):
        self.binary, self.store, self.tokens, self.log = binary, store, tokens, log
        self.port = free_port()
        self.process = None

    def start(self):
        self.process = subprocess.Popen(
            [self.binary, "serve", "--db", self.store, "--port", str(self.port), "--write-token-file", self.tokens, "--log-level", "error"],
            stdout=self.log, stderr=self.log)
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/readyz", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited with {self.process.returncode}")
            time.sleep(0.05)
        raise RuntimeError("the server did not become ready within 120 s")

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()


def post(port, path, body, token, content_type="application/json"):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body.encode(), method="POST",
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": content_type})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.status, json.loads(answer.read())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/release/vltava"))
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    options = parser.parse_args()
    rng = random.Random(options.seed)
    work = tempfile.mkdtemp(prefix="vltava-drill-")
    store = os.path.join(work, "demo.gpkg")
    with open(os.path.join(work, "build.log"), "w") as log:
        subprocess.run([os.path.join(ROOT, "scripts/build-demo-store.sh"), store, options.binary], stdout=log, stderr=log, check=True)
    token = "drill-" + os.urandom(16).hex()
    tokens = os.path.join(work, "tokens")
    with open(tokens, "w") as f:
        f.write(token + "\n")
    log = open(os.path.join(work, "serve.log"), "w")
    server = Server(options.binary, store, tokens, log)
    server.start()
    status, _ = post(server.port, "/v1/write", json.dumps({"operations": [{"create": {
        "name": "drill", "geometry_type": "POINT", "columns": [{"name": "batch", "type": "INTEGER"}, {"name": "item", "type": "INTEGER"}]}}]}), token)
    assert status == 200

    # Batch n: size 1 or 100, features or observation rows. Rows are AREPA's hours from 2030 on,
    # each batch its own hours, so a row names its batch by its start.
    sent = {}          # n -> (kind, size)
    acknowledged = set()
    failed = set()     # no answer: applied whole, or not at all
    stop = threading.Event()
    lock = threading.Lock()
    base_hour = 1_893_456_000  # 2030-01-01T00:00:00Z

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
                    start = base_hour + (n * 100 + i) * 3600
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
            except (urllib.error.URLError, ConnectionError, OSError, ValueError):
                with lock:
                    failed.add(n)
                time.sleep(0.02)

    thread = threading.Thread(target=writer)
    thread.start()
    started = time.time()
    moments = sorted(rng.uniform(0.5, options.seconds) for _ in range(options.kills))
    kills = 0
    for moment in moments:
        time.sleep(max(0, started + moment - time.time()))
        server.kill()
        kills += 1
        with lock:
            server.port = free_port()
        server.start()
    time.sleep(max(0, started + options.seconds - time.time()))
    stop.set()
    thread.join()
    server.kill()
    log.close()

    # The store as the last process left it.
    db = sqlite3.connect(store)
    features = dict(db.execute("SELECT batch, count(*) FROM drill GROUP BY batch").fetchall())
    rows = {}
    for (start,) in db.execute("SELECT interval_start FROM observations WHERE code = 'AREPA' AND interval_start >= '2030'"):
        seconds = calendar.timegm(time.strptime(start, "%Y-%m-%dT%H:%M:%SZ"))
        n = (seconds - base_hour) // 3600 // 100
        rows[n] = rows.get(n, 0) + 1
    integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
    db.close()
    problems = []
    for n, (kind, size) in sent.items():
        present = (features if kind == "features" else rows).get(n, 0)
        if n in acknowledged and present != size:
            problems.append(f"batch {n} ({kind}, {size}) was acknowledged but {present} of it is in the store")
        elif present not in (0, size):
            problems.append(f"batch {n} ({kind}, {size}) is in the store in part: {present}")
    if integrity != "ok":
        problems.append(f"PRAGMA integrity_check: {integrity}")
    validate = subprocess.run(["/usr/bin/python3", "-m", "osgeo_utils.samples.validate_gpkg", store], capture_output=True, text=True)
    if validate.returncode != 0:
        problems.append(f"validate_gpkg.py: {validate.stdout}{validate.stderr}")
    unacknowledged_present = sum(1 for n in failed if (features if sent[n][0] == "features" else rows).get(n, 0))
    summary = {"seconds": options.seconds, "kills": kills, "batches": len(sent), "acknowledged": len(acknowledged),
               "unacknowledged": len(failed), "unacknowledged_present_whole": unacknowledged_present,
               "features": sum(features.values()), "rows": sum(rows.values()), "integrity_check": integrity,
               "validate_gpkg": validate.returncode == 0, "problems": problems[:20]}
    print(json.dumps(summary))
    if not options.keep:
        subprocess.run(["rm", "-rf", work])
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
