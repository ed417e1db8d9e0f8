#!/usr/bin/env python3
"""Reads from hot standbys (issue 38, `vltava serve --db-read`): lag, read-your-writes, scaling.

Topology, all on 127.0.0.1: node0, a PostgreSQL 15 primary (synchronous_commit on, fsync on),
and node1 and node2, asynchronous streaming standbys of it (pg_basebackup -R); the demo store
pushed into node0. `vltava serve` runs with --max-rows-loaded 0, so every feature layer but the
paths and stations stays in PostgreSQL and reads are PostgreSQL's work.

1. Lag. Server A (`--db node0 --db-read node1`) takes writes: one parking polygon at a new place
   per POST /v1/write. Server B (`--db node0 --db-read node1 --max-replica-lag 3600`) never
   writes, so it has no write of its own to wait for and its reads go to node1 as it is.
   After A's acknowledgement, B is asked `FIND parking CONTAINING POINT(…) RETURN fid` every
   2 ms until the new fid is in the answer: the lag is from A's 200 to B's answer holding it
   (one loopback round trip and up to 2 ms of polling included). --lag-writes of them (300).
2. Read-your-writes. --pairs (10,000) write-then-read pairs through A from 4 client threads,
   each on its own keep-alive connection: the write's 200, then the same FIND through A at
   once; a failure is an answer without the fid just written. A's /metrics says which host
   answered the reads and how many waited for node1 to replay.
3. Read scaling, in one run: A restarted with no --db-read (node0 answers), with node1, and with
   node1,node2; each time wrk (1 thread, 8 connections, --seconds) on
   GET /v1/layers/districts/containing and GET /v1/layers/parking/nearest?k=3 at random
   points of Prague, while a writer posts 100 single-station batches a second to A. Prints
   reads/s per reader and A's reads by host.

One JSON line per part on standard output (progress on standard error). Exit status 1 when a
read missed its own write or a lag sample never arrived.

    Benchmarks/standby-reads.py [--binary .build/release/vltava] [--lag-writes 300] [--pairs 10000]
                                [--seconds 20] [--work DIR]

Needs PostgreSQL 15 with PostGIS 3 and wrk (scripts/install-deps.sh --bench). Everything it
starts is stopped, and its folder removed, at exit.
"""

import argparse
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import benchsupport

drill = benchsupport.load_script("failover_drill", "Benchmarks/failover-drill.py")
PGBIN, AS, Node, run, wait_for, request = drill.PGBIN, drill.AS, drill.Node, drill.run, drill.wait_for, drill.request
log = drill.log


def percentile(values, p):
    """Nearest rank."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, int(round(p / 100 * len(ordered) + 0.5)) - 1))]


class Client:
    """One keep-alive connection to a server."""

    def __init__(self, port, token=None):
        self.port, self.token = port, token
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def send(self, method, path, body=None, headers=None):
        for attempt in range(2):
            try:
                self.connection.request(method, path, body=body, headers=headers or {})
                answer = self.connection.getresponse()
                return answer.status, answer.read().decode(errors="replace")
            except (OSError, http.client.HTTPException):
                self.connection.close()
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                if attempt == 1:
                    raise

    def write_square(self, lon, lat):
        """Inserts a small parking square around (lon, lat); returns its fid."""
        d = 0.00005
        ring = [[lon - d, lat - d], [lon + d, lat - d], [lon + d, lat + d], [lon - d, lat + d], [lon - d, lat - d]]
        body = json.dumps({"operations": [{"insert": "parking", "feature": {"type": "Feature",
                                           "geometry": {"type": "Polygon", "coordinates": [ring]}, "properties": {}}}]})
        status, text = self.send("POST", "/v1/write", body, {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"})
        if status != 200:
            raise SystemExit(f"write answered {status}: {text[:300]}")
        return json.loads(text)["changes"][0]["fid"]

    def fids_containing(self, lon, lat):
        status, text = self.send("POST", "/v1/query", f"FIND parking CONTAINING POINT({lon:.6f} {lat:.6f}) RETURN fid")
        if status != 200:
            return None
        return {row["fid"] for row in json.loads(text).get("rows", [])} if text.startswith("{") else {row["fid"] for row in json.loads(text)}

    def metrics(self):
        status, text = self.send("GET", "/metrics")
        return {line.split(" ")[0]: float(line.split(" ")[1]) for line in text.splitlines() if line.startswith("vltava_db_")}


def start_server(binary, work, name, primary_url, read_urls, tokens, extra=()):
    port = benchsupport.free_port()
    command = [binary, "serve", "--db", primary_url, "--host", "127.0.0.1", "--port", str(port), "--write-token-file", tokens,
               "--max-rows-loaded", "0", "--log-level", "warning", *extra]
    if read_urls:
        command += ["--db-read", read_urls]
    process = subprocess.Popen(command, stdout=open(os.path.join(work, f"{name}.log"), "w"), stderr=subprocess.STDOUT, start_new_session=True)
    if not benchsupport.wait_until_ready(f"http://127.0.0.1:{port}/readyz", process, 60):
        raise SystemExit(f"vltava serve {name} did not get ready: see {work}/{name}.log")
    return process, port


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(benchsupport.ROOT, ".build/release/vltava"))
    parser.add_argument("--lag-writes", type=int, default=300)
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--work")
    args = parser.parse_args()
    for tool in ("wrk", "psql"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} is missing: scripts/install-deps.sh --bench")
    work = args.work or tempfile.mkdtemp(prefix="vltava-standby-reads-")
    os.makedirs(work, exist_ok=True)
    if AS:
        shutil.chown(work, "nobody")
    processes, nodes, failed = [], [], False
    try:
        nodes = [Node(work, i) for i in range(3)]
        primary = nodes[0]
        run(AS + [f"{PGBIN}/initdb", "-D", primary.data, "-U", "vltava", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"])
        primary.start()
        primary.psql("CREATE DATABASE vltava", database="postgres")
        store = os.path.join(work, "demo.gpkg")
        run([os.path.join(benchsupport.ROOT, "scripts/build-demo-store.sh"), store, args.binary])
        url = [f"postgresql://vltava@127.0.0.1:{node.port}/vltava" for node in nodes]
        benchsupport.push(args.binary, store, url[0])
        for standby in nodes[1:]:
            run(AS + [f"{PGBIN}/pg_basebackup", "-D", standby.data, "-R", "-X", "stream", "-c", "fast", "-h", "127.0.0.1",
                      "-p", str(primary.port), "-U", "vltava"])
            standby.start()
        wait_for(lambda: primary.psql("SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'") == "2", 30, "two standbys streaming")
        token, tokens = benchsupport.write_token_file(work, "standby-")
        log(f"node0 :{nodes[0].port} (primary), node1 :{nodes[1].port}, node2 :{nodes[2].port} (standbys); {os.cpu_count()} cores; work {work}")

        # 1. Lag: A writes, B (never writing) reads from node1.
        a, a_port = start_server(args.binary, work, "A", url[0], url[1], tokens)
        b, b_port = start_server(args.binary, work, "B", url[0], url[1], tokens, ["--max-replica-lag", "3600"])
        processes += [a, b]
        writer, reader = Client(a_port, token), Client(b_port)
        lags, never = [], 0
        for i in range(args.lag_writes):
            lon, lat = 15.0 + (i % 500) * 0.0004, 49.0 + (i // 500) * 0.0004
            fid = writer.write_square(lon, lat)
            acknowledged = time.monotonic()
            while True:
                polled = time.monotonic()
                if fid in (reader.fids_containing(lon, lat) or set()):
                    lags.append((time.monotonic() - acknowledged) * 1000)
                    break
                if polled - acknowledged > 10:
                    never += 1
                    break
                time.sleep(max(0.0, 0.002 - (time.monotonic() - polled)))
        b_metrics = reader.metrics()
        result = {"part": "lag", "writes": args.lag_writes, "never_arrived": never,
                  "p50_ms": round(percentile(lags, 50), 2), "p90_ms": round(percentile(lags, 90), 2),
                  "p99_ms": round(percentile(lags, 99), 2), "max_ms": round(max(lags), 2),
                  "B_reads": {k: v for k, v in b_metrics.items() if k.startswith("vltava_db_reads_total")}}
        print(json.dumps(result), flush=True)
        failed |= never > 0
        b.terminate()
        b.wait()
        processes.remove(b)

        # 2. Read-your-writes through A, 4 client threads.
        before = Client(a_port).metrics()
        failures, lock = [], threading.Lock()
        started = time.monotonic()

        def pairs(thread, count):
            client = Client(a_port, token)
            for i in range(count):
                n = thread * 100_000 + i
                lon, lat = 16.0 + (n % 1000) * 0.0003, 48.5 + (n // 1000) * 0.0003
                fid = client.write_square(lon, lat)
                got = client.fids_containing(lon, lat)
                if got is None or fid not in got:
                    with lock:
                        failures.append((fid, got))

        threads = [threading.Thread(target=pairs, args=(t, args.pairs // 4 + (1 if t < args.pairs % 4 else 0))) for t in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seconds = time.monotonic() - started
        after = Client(a_port).metrics()
        delta = {k: after[k] - before.get(k, 0) for k in after if k.startswith(("vltava_db_reads_total", "vltava_db_read_waits_total"))}
        print(json.dumps({"part": "read-your-writes", "pairs": args.pairs, "failures": len(failures), "seconds": round(seconds, 1),
                          "first_failures": failures[:3], "A_reads_and_waits": delta}), flush=True)
        failed |= bool(failures)
        a.terminate()
        a.wait()
        processes.remove(a)

        # 3. Read scaling: node0 alone, node1, node1+node2; 100 writes/s to the primary meanwhile.
        for name, reads in (("primary only", None), ("1 standby", url[1]), ("2 standbys", f"postgresql://vltava@127.0.0.1:{nodes[1].port},127.0.0.1:{nodes[2].port}/vltava")):
            server, port = start_server(args.binary, work, f"scale-{len(processes)}", url[0], reads, tokens)
            processes.append(server)
            load = drill.Writer(port, token, 100)
            load.start()
            readers = [drill.wrk(work, port, "containing", "/v1/layers/districts/containing", "", args.seconds),
                       drill.wrk(work, port, "nearest", "/v1/layers/parking/nearest", "&k=3", args.seconds)]
            for reader_process in readers:
                reader_process.wait()
            load.running = False
            load.join()
            outcome = {r: drill.wrk_result(work, r) for r in ("containing", "nearest")}
            writes = load.since(0)
            metrics = Client(port).metrics()
            print(json.dumps({"part": "scaling", "reads_from": name, "seconds": args.seconds,
                              "reads_per_s": {r: round(outcome[r]["requests"] / args.seconds, 1) for r in outcome},
                              "statuses": {r: outcome[r]["statuses"] for r in outcome}, "p99_ms": {r: outcome[r].get("p99_ms") for r in outcome},
                              "writes_per_s": round(sum(1 for w in writes if w[2] == 200) / args.seconds, 1),
                              "reads_by_host": {k: v for k, v in metrics.items() if k.startswith("vltava_db_reads_total")}}), flush=True)
            server.terminate()
            server.wait()
            processes.remove(server)
    finally:
        for process in processes:
            benchsupport.stop_process(process)
        for node in nodes:
            node.stop()
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
