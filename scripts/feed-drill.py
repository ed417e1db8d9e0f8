#!/usr/bin/env python3
"""The feed misses nothing: a Server-Sent Events client that leaves and comes back.

A writer inserts --changes features in batches of 10 (POST /v1/write) while a client reads
GET /v1/changes as an event stream with sseclient-py (PyPI), drops its connection at
--disconnects random moments and reconnects with Last-Event-ID set to the last id it saw.
At the end the client must have seen every sequence number from 1 to the last, exactly once
and in order.

Usage: scripts/feed-drill.py [--binary PATH] [--changes 10000] [--disconnects 50] [--seed N]
Prints one JSON line; exit status 0 when the check holds. A short version is a test
(ServerTests' WriteEndpointTests).
"""

import argparse
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time

import requests
import sseclient

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/release/vltava"))
    parser.add_argument("--changes", type=int, default=10_000)
    parser.add_argument("--disconnects", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args()
    rng = random.Random(options.seed)
    work = tempfile.mkdtemp(prefix="vltava-feed-")
    store = os.path.join(work, "demo.gpkg")
    subprocess.run([os.path.join(ROOT, "scripts/build-demo-store.sh"), store, options.binary],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    token = "feed-" + os.urandom(16).hex()
    with open(os.path.join(work, "tokens"), "w") as f:
        f.write(token + "\n")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([options.binary, "serve", "--db", store, "--port", str(port), "--write-token-file",
                               os.path.join(work, "tokens"), "--log-level", "error"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    auth = {"Authorization": f"Bearer {token}"}
    try:
        for _ in range(1200):
            try:
                if requests.get(base + "/readyz", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            time.sleep(0.1)
        created = requests.post(base + "/v1/write", headers=auth, timeout=30, json={"operations": [{"create": {
            "name": "feed", "geometry_type": "POINT", "columns": [{"name": "n", "type": "INTEGER"}]}}]})
        created.raise_for_status()
        total = 1 + options.changes  # the creation is the first change
        batches = (options.changes + 9) // 10

        def writer():
            for b in range(batches):
                size = min(10, options.changes - b * 10)
                answer = requests.post(base + "/v1/write", headers=auth, timeout=60, json={"operations": [
                    {"insert": "feed", "feature": {"type": "Feature", "geometry": {"type": "Point", "coordinates": [14.4, 50.0 + (b % 100) * 1e-4]},
                                                   "properties": {"n": b * 10 + i}}} for i in range(size)]})
                answer.raise_for_status()

        thread = threading.Thread(target=writer)
        thread.start()
        # Disconnect after these many events (counted over the whole run).
        cuts = sorted(rng.sample(range(1, total), min(options.disconnects, total - 1)))
        seen, last, reconnects = [], 0, 0
        deadline = time.time() + 600
        while len(seen) < total and time.time() < deadline:
            headers = {"Accept": "text/event-stream"}
            if last:
                headers["Last-Event-ID"] = str(last)
            response = requests.get(base + "/v1/changes", headers=headers, stream=True, timeout=60)
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
            finally:
                response.close()
            reconnects += 1
        thread.join()
        ok = seen == list(range(1, total + 1))
        duplicates = len(seen) - len(set(seen))
        print(json.dumps({"changes": total, "events": len(seen), "reconnects": reconnects - 1, "duplicates": duplicates,
                          "in_order": seen == sorted(seen), "every_one_once": ok}))
        sys.exit(0 if ok else 1)
    finally:
        server.terminate()
        server.wait()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
