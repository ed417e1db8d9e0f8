#!/usr/bin/env python3
"""Reads under writes: the read latency wrk sees while write batches arrive at a steady rate.

The requirement it measures: "Reads under wrk while writes run at 100 batches/s: read p99 no
worse than 2x the read-only p99, and 0 errors."

Imports the W3 workload's 200,000 polygons into a fresh store (as write-latency.py does), serves
it with a write token on a free loopback port, and runs wrk (--threads 2, --connections 32,
--latency) on GET /v1/layers/cells/containing?lon=…&lat=… at 10,000 fixed random points of the
layer's extent (a Lua script written as Benchmarks/wrk-points.py writes them, with its result
line), first unreported for a warm-up, then:

  1. read-only:   wrk alone for --seconds;
  2. with writes: the same wrk run while a writer sends POST /v1/write batches at a steady
     --batches-per-second (100), each --features-per-batch (10) inserts of a small square at a
     random point of the extent. The writer is paced by a schedule (batch i is due at start +
     i / rate; a late batch is sent at once, never skipped, and how late is reported), and
     sent by 8 threads, each with its own keep-alive connection (http.client), so one slow
     answer does not hold back the batches due after it.

Prints RESULT lines: per phase requests/s, p50, p99, max and wrk's errors (socket errors plus
non-2xx answers), the server's CPU seconds, what else ran meanwhile (others_cpu_s: CPU at normal
priority, a build or another benchmark; nice_cpu_s: niced processes such as the fuzzers, which
take more than idle time when cgroups hold them apart; steal_s: the hypervisor's) and RSS; the
ratio of the two p99s; the batches acknowledged per second (up to the last answer) and failed,
with the write latency's p50/p99/max (send to answer), its p50 in each quarter of the phase, and
how late the sends were; and a check that the layer then holds exactly the features the
acknowledged batches inserted. Exits 1 when a read had an error, a batch failed, or the layer's
count is not what the acknowledgements promise (the p99 ratio is reported, not enforced; the
last RESULT line says whether the requirement was met, the rate included).

    Benchmarks/reads-under-writes.py [--binary .build/release/vltava] [--work /tmp/reads-under-writes]
        [--seconds 20 | --quick] [--batches-per-second 100] [--features-per-batch 10]

The server logs at --log-level warning (slow and failed requests) to WORK/server.log.
wrk shares the cores with the server: run it on an otherwise quiet machine, niced processes
included.
"""

import argparse
import http.client
import json
import os
import queue
import random
import re
import subprocess
import sys
import threading
import time
import urllib.request

import benchsupport
from benchsupport import free_port, rss_mb

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYER = "cells"
POINTS = 10_000
WRITER_THREADS = 8


def cpu_seconds(pid):
    """The process's user + system CPU time so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def busy_seconds():
    """CPU time the machine spent at normal priority (user, system, interrupts; not the nice
    time the fuzzers take from idle), of it this script's and its finished children's (wrk), and
    the time niced processes (the fuzzers) and the hypervisor (steal) took."""
    with open("/proc/stat") as f:
        user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in f.readline().split()[1:9])
    own = os.times()
    tick = os.sysconf("SC_CLK_TCK")
    return (user + system + irq + softirq) / tick, own.user + own.system + own.children_user + own.children_system, nice / tick, steal / tick


def percentile(values, p):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def square(lon, lat, d=1e-5):
    return [[[lon - d, lat - d], [lon + d, lat - d], [lon + d, lat + d], [lon - d, lat + d], [lon - d, lat - d]]]


WRK_LINE = re.compile(r"rps=(?P<rps>[\d.]+) p50_ms=(?P<p50>[\d.]+) p99_ms=(?P<p99>[\d.]+) max_ms=(?P<max>[\d.]+) "
                      r"requests=(?P<requests>\d+) errors=(?P<errors>\d+) \((?P<detail>[^)]*)\)")


def run_wrk(options, base, lua):
    command = ["wrk", f"-t{options.threads}", f"-c{options.connections}", f"-d{options.seconds}s", "--latency", "-s", lua, base]
    done = subprocess.run(command, capture_output=True, text=True)
    match = next((m for m in map(WRK_LINE.search, done.stdout.splitlines()) if m), None)
    if done.returncode != 0 or match is None:
        sys.exit(f"wrk failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return match


class Writer:
    """Sends batches on a fixed schedule until stopped: a scheduler thread releases batch i at
    start + i / rate into a queue, and WRITER_THREADS threads send them, each over its own
    keep-alive connection."""

    def __init__(self, port, token, bounds, rate, features, seed):
        self.port, self.token, self.bounds, self.rate, self.features = port, token, bounds, rate, features
        self.rng = random.Random(seed)
        self.queue = queue.Queue()
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.latencies, self.sent_at, self.late, self.failures, self.acknowledged, self.unsent = [], [], [], [], 0, 0
        self.next_idx = -1

    def body(self):
        b = self.bounds
        operations = []
        for _ in range(self.features):
            lon, lat = self.rng.uniform(b[0], b[2]), self.rng.uniform(b[1], b[3])
            operations.append({"insert": LAYER, "feature": {"type": "Feature", "geometry": {"type": "Polygon", "coordinates": square(lon, lat)},
                                                             "properties": {"idx": self.next_idx}}})
            self.next_idx -= 1
        return json.dumps({"operations": operations}).encode()

    def schedule(self):
        n = 0
        while not self.stop.is_set():
            due = self.start + n / self.rate
            wait = due - time.perf_counter()
            if wait > 0 and self.stop.wait(wait):
                break
            self.queue.put((due, self.body()))
            n += 1
        self.scheduled = n

    def send(self):
        connection = None
        while True:
            item = self.queue.get()
            if item is None:
                break
            if self.stop.is_set():  # due before the end, but no thread was free to send it in time
                with self.lock:
                    self.unsent += 1
                continue
            due, body = item
            sent = time.perf_counter()
            try:
                if connection is None:
                    connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                connection.request("POST", "/v1/write", body=body,
                                   headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"})
                answer = connection.getresponse()
                text = answer.read()
                acknowledged = time.perf_counter()
                if answer.status != 200:
                    raise RuntimeError(f"HTTP {answer.status}: {text[:300]!r}")
                changes = json.loads(text)["changes"]
                if len(changes) != self.features:
                    raise RuntimeError(f"{len(changes)} changes for {self.features} inserts: {text[:300]!r}")
                with self.lock:
                    self.acknowledged += 1
                    self.latencies.append((acknowledged - sent) * 1000)
                    self.sent_at.append(sent - self.start)
                    self.late.append((sent - due) * 1000)
            except Exception as error:  # noqa: BLE001 - every failure is counted and the first few shown
                if connection is not None:
                    connection.close()
                connection = None
                with self.lock:
                    self.failures.append(f"{type(error).__name__}: {error}")
        if connection is not None:
            connection.close()

    def __enter__(self):
        self.start = time.perf_counter()
        self.threads = [threading.Thread(target=self.schedule)] + [threading.Thread(target=self.send) for _ in range(WRITER_THREADS)]
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.threads[0].join()
        for _ in range(WRITER_THREADS):
            self.queue.put(None)
        for thread in self.threads[1:]:
            thread.join()
        # Up to the last answer: the batches in flight at the end count, and so does their time.
        self.elapsed = time.perf_counter() - self.start

    def quarters(self):
        """The write latency's p50 in each quarter of the run, by when the batch was sent: a
        cost that grows with what was written shows as a rising row."""
        span = max(self.sent_at, default=0) or 1
        parts = [[] for _ in range(4)]
        for at, ms in zip(self.sent_at, self.latencies):
            parts[min(3, int(4 * at / span))].append(ms)
        return " ".join(f"{percentile(part, 50):.1f}" for part in parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "release", "vltava"))
    parser.add_argument("--polygons", default="/tmp/geobench/W3-pip-synthetic-200k/polygons.geojson")
    parser.add_argument("--work", default="/tmp/reads-under-writes")
    parser.add_argument("--seconds", type=int, default=20, help="each phase's wrk run (default 20)")
    parser.add_argument("--quick", action="store_true", help="5 s per phase")
    parser.add_argument("--batches-per-second", type=float, default=100)
    parser.add_argument("--features-per-batch", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2, help="wrk's threads")
    parser.add_argument("--connections", type=int, default=32, help="wrk's connections")
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args()
    if options.quick:
        options.seconds = 5
    rng = random.Random(options.seed)
    store = benchsupport.fresh_store(options.work)
    binary = os.path.abspath(options.binary)
    stat = os.stat(binary)
    print(f"RESULT binary={binary} mtime={time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(stat.st_mtime))} "
          f"cores={os.cpu_count()} load={open('/proc/loadavg').read().split()[0]}", flush=True)
    started = time.time()
    subprocess.run([binary, "import", options.polygons, "--layer", LAYER, "--db", store], check=True, stdout=subprocess.DEVNULL)
    print(f"RESULT import_seconds={time.time() - started:.1f}", flush=True)
    token, tokens = benchsupport.write_token_file(options.work, "bench-")
    port = free_port()
    log = open(os.path.join(options.work, "server.log"), "w")
    server = benchsupport.serve(binary, store, port, tokens, "warning", stdout=log, host=None, new_session=False)
    base = f"http://127.0.0.1:{port}"
    failed = []
    try:
        if not benchsupport.wait_until_ready(base + "/readyz", server, 600, request_timeout=5, interval=0.1):
            sys.exit("the server did not become ready")

        def layer_info():
            with urllib.request.urlopen(base + "/v1/layers", timeout=60) as answer:
                return next(l for l in json.load(answer)["layers"] if l["name"] == LAYER)

        layer = layer_info()
        b = layer["bounds"]
        features_before = layer["count"]
        print(f"RESULT features={features_before} bounds={b} rss_mb={rss_mb(server.pid)}", flush=True)

        # The wrk script: 10,000 fixed random points of the extent, in wrk-points.py's Lua.
        wrk_points = benchsupport.load_script("wrk_points", "Benchmarks/wrk-points.py")
        lua = os.path.join(options.work, "containing.lua")
        with open(lua, "w") as f:
            f.write("points = {\n")
            for _ in range(POINTS):
                f.write(f'"lon={rng.uniform(b[0], b[2]):.6f}&lat={rng.uniform(b[1], b[3]):.6f}",\n')
            f.write("}\n")
            f.write(wrk_points.LUA % {"prefix": wrk_points.lua_string(f"/v1/layers/{LAYER}/containing?"),
                                      "suffix": wrk_points.lua_string(""), "label": wrk_points.lua_string("")})

        # Warm-up, unreported: the first requests fault the snapshot's pages in.
        measured = options.seconds
        options.seconds = min(5, measured)
        run_wrk(options, base, lua)
        options.seconds = measured

        phases = {}

        def report(name, match, cpu, busy):
            # others_cpu_s: what the rest of the machine took at normal priority meanwhile (a
            # build, another benchmark); more than a second or two and the phase was shared.
            machine, own, nice, steal = busy_seconds()
            others = machine - busy[0] - cpu - (own - busy[1])
            phases[name] = match
            print(f"RESULT {name} rps={match['rps']} p50_ms={match['p50']} p99_ms={match['p99']} max_ms={match['max']} "
                  f"requests={match['requests']} errors={match['errors']} ({match['detail']}) "
                  f"server_cpu_s={cpu:.1f} others_cpu_s={others:.1f} nice_cpu_s={nice - busy[2]:.1f} steal_s={steal - busy[3]:.1f} rss_mb={rss_mb(server.pid)} "
                  f"load={open('/proc/loadavg').read().split()[0]}", flush=True)
            if int(match["errors"]):
                failed.append(f"{name}: {match['errors']} read errors ({match['detail']})")

        cpu, busy = cpu_seconds(server.pid), busy_seconds()
        match = run_wrk(options, base, lua)
        report("read-only", match, cpu_seconds(server.pid) - cpu, busy)

        cpu, busy = cpu_seconds(server.pid), busy_seconds()
        with Writer(port, token, b, options.batches_per_second, options.features_per_batch, options.seed + 1) as writer:
            match = run_wrk(options, base, lua)
        report("with-writes", match, cpu_seconds(server.pid) - cpu, busy)

        w = writer
        print(f"RESULT writes target_batches_per_s={options.batches_per_second:g} features_per_batch={options.features_per_batch} "
              f"seconds={w.elapsed:.1f} scheduled={w.scheduled} acknowledged={w.acknowledged} failed={len(w.failures)} unsent={w.unsent} "
              f"acknowledged_batches_per_s={w.acknowledged / w.elapsed:.1f}", flush=True)
        print(f"RESULT writes write_ms p50={percentile(w.latencies, 50):.2f} p99={percentile(w.latencies, 99):.2f} "
              f"max={max(w.latencies, default=float('nan')):.2f} send_late_ms p50={percentile(w.late, 50):.2f} "
              f"p99={percentile(w.late, 99):.2f} max={max(w.late, default=float('nan')):.2f} "
              f"write_ms_p50_by_quarter={w.quarters().replace(' ', ',')}", flush=True)
        for failure in w.failures[:5]:
            print(f"write failure: {failure}", flush=True)
        if w.failures:
            failed.append(f"{len(w.failures)} write batches failed")

        expected = features_before + w.acknowledged * options.features_per_batch
        features_after = layer_info()["count"]
        print(f"RESULT features_after={features_after} expected={expected}", flush=True)
        if features_after != expected:
            failed.append(f"the layer holds {features_after} features, the acknowledged batches make {expected}")

        ratio = float(phases["with-writes"]["p99"]) / float(phases["read-only"]["p99"])
        achieved = w.acknowledged / w.elapsed
        met = ratio <= 2 and not failed and achieved >= 0.95 * options.batches_per_second
        print(f"RESULT p99_ratio={ratio:.2f} (with-writes p99 / read-only p99; requirement <= 2, 0 errors, "
              f"{options.batches_per_second:g} batches/s) requirement={'met' if met else 'NOT met'}", flush=True)
    finally:
        server.terminate()
        server.wait()
        log.close()
    if failed:
        print("FAILED: " + "; ".join(failed), flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
