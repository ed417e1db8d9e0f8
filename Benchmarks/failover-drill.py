#!/usr/bin/env python3
"""Failover drill (issue 38): PostgreSQL's primary killed under writes and reads, a synchronous
standby promoted, the old primary brought back as a standby, N times; Vltava never restarted.

Topology, all on 127.0.0.1:
  - two PostgreSQL 15 clusters, node0 and node1 (initdb as nobody when run as root, with data
    checksums so that pg_rewind can run), fsync on, synchronous_commit on, and
    synchronous_standby_names 'node0,node1' (each node's walreceiver is named after it by
    cluster_name); node1 starts as a streaming standby of node0 (pg_basebackup -R);
  - two `vltava serve` processes on the one URL naming both nodes,
    postgresql://vltava@127.0.0.1:P0,127.0.0.1:P1/vltava?target_session_attrs=read-write,
    with --max-rows-loaded 0, so that reads are PostgreSQL's work too, not the snapshot's;
  - nginx (Debian's nginx-light) in front of the two;
  - a writer POSTing /v1/write through nginx, at most --rate batches a second: batches of 1
    station, every tenth of 100, each station with a unique code; a 200 is an acknowledgement;
  - two wrk readers through nginx: GET /v1/layers/districts/containing and
    GET /v1/layers/parking/nearest?k=3 at random points of Prague, counting every status;
  - a probe, GET containing every 50 ms, for the time until reads succeed again.

Each cycle: --steady seconds of load; `kill -9` of the primary's postmaster; --detect seconds
later (what an operator or Patroni takes to decide) `pg_ctl promote` of the standby, and
synchronous_standby_names emptied on it (ALTER SYSTEM, reload: until a standby is back it
commits alone, as Patroni's non-strict synchronous mode does); the old primary rewound onto
the new one's timeline (pg_rewind -R) and started as its standby; synchronous_standby_names set
again once it streams; --steady seconds more of load. Then the cycle is checked: every station
acknowledged is on the new primary (psql), and the change feed resumed with the Last-Event-ID
seen before the kill (Server-Sent Events, /v1/changes) holds every change an acknowledged write
was told of.

Prints one RESULT line per cycle: acknowledged writes (batches and stations), stations present
afterwards, failed writes by status, reads by status (wrk, both readers), seconds from the kill
until a write sent after it is acknowledged and until the probe reads 200 again, and whether
the feed missed anything. Exit status 1 when an acknowledged write is missing, a write or read
answered anything but 200 or 503, or the feed missed a change.

    Benchmarks/failover-drill.py [--cycles 5] [--steady 5] [--detect 1] [--rate 50]
                                 [--binary .build/release/vltava] [--work DIR]

Needs PostgreSQL 15 with PostGIS 3, nginx and wrk (scripts/install-deps.sh --bench).
Everything it starts is stopped, and its folder removed, at exit.
"""

import argparse
import contextlib
import http.client
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

import benchsupport

PGBIN = "/usr/lib/postgresql/15/bin"
AS = ["runuser", "-u", "nobody", "--"] if os.geteuid() == 0 else []


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def run(command, check=True, **kwargs):
    return subprocess.run(command, check=check, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


class Node:
    """One PostgreSQL cluster of the drill, in WORK/nodeN, on a fixed port for its whole life."""

    def __init__(self, work, index):
        self.name = f"node{index}"
        self.folder = os.path.join(work, self.name)
        self.data = os.path.join(self.folder, "data")
        self.port = benchsupport.free_port()
        os.makedirs(self.folder)
        if AS:
            shutil.chown(self.folder, "nobody")

    def options(self):
        return (f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories={self.folder} "
                f"-c cluster_name={self.name} -c synchronous_commit=on -c max_connections=100")

    def start(self):
        run(AS + [f"{PGBIN}/pg_ctl", "-D", self.data, "-l", os.path.join(self.folder, "log"), "-w", "-t", "60",
                  "-o", self.options(), "start"])

    def psql(self, sql, database="vltava"):
        return run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", str(self.port),
                    "-U", "vltava", "-d", database, "-c", sql]).stdout.strip()

    def crash(self):
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            os.kill(int(f.readline()), signal.SIGKILL)

    def stop(self):
        if os.path.exists(os.path.join(self.data, "postmaster.pid")):
            run(AS + [f"{PGBIN}/pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop"], check=False)

    def conninfo(self):
        return f"host=127.0.0.1 port={self.port} user=vltava dbname=postgres"


def wait_for(predicate, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with contextlib.suppress(Exception):
            if predicate():
                return
        time.sleep(0.05)
    raise SystemExit(f"timed out after {timeout} s waiting for {what}")


def request(port, method, path, body=None, headers=None, timeout=30):
    """(status, headers, body) of one request; (0, {}, error) when the connection failed."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        answer = connection.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read().decode(errors="replace")
    except OSError as error:
        return 0, {}, str(error)
    finally:
        connection.close()


class Writer(threading.Thread):
    """Batches through nginx, one after the other, at most `rate` a second. Every outcome is
    kept: (start, end, status, codes, sequences, retry-after)."""

    def __init__(self, port, token, rate):
        super().__init__(daemon=True)
        self.port, self.token, self.rate = port, token, rate
        self.outcomes, self.lock, self.running, self.n = [], threading.Lock(), True, 0

    def run(self):
        while self.running:
            start = time.monotonic()
            self.n += 1
            codes = [f"d{self.n}-{i}" for i in range(100)] if self.n % 10 == 0 else [f"d{self.n}"]
            operations = [{"insert": "stations", "feature": {"type": "Feature", "geometry": {"type": "Point", "coordinates": [
                14.3 + random.random() * 0.3, 50.0 + random.random() * 0.1]}, "properties": {"code": code}}} for code in codes]
            status, headers, body = request(self.port, "POST", "/v1/write", json.dumps({"operations": operations}),
                                            {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"})
            sequences = []
            if status == 200:
                sequences = [change["sequence"] for change in json.loads(body)["changes"]]
            with self.lock:
                self.outcomes.append((start, time.monotonic(), status, codes, sequences, headers.get("retry-after")))
            time.sleep(max(0.0, 1 / self.rate - (time.monotonic() - start)))

    def since(self, moment):
        with self.lock:
            return [o for o in self.outcomes if o[0] >= moment]


class Probe(threading.Thread):
    """GET containing every 50 ms: (time, status)."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port, self.seen, self.running = port, [], True

    def run(self):
        while self.running:
            lon, lat = 14.3 + random.random() * 0.3, 50.0 + random.random() * 0.1
            status, _, _ = request(self.port, "GET", f"/v1/layers/districts/containing?lon={lon:.5f}&lat={lat:.5f}", timeout=10)
            self.seen.append((time.monotonic(), status))
            time.sleep(0.05)


WRK_LUA = """
counts = {}
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16)) end
function request()
    local lon = 14.3 + math.random() * 0.3
    local lat = 50.0 + math.random() * 0.1
    return wrk.format("GET", string.format("%s?lon=%.5f&lat=%.5f%s", PATH, lon, lat, SUFFIX))
end
function response(status, headers, body) counts[status] = (counts[status] or 0) + 1 end
function done(summary, latency, requests)
    local total = {}
    for _, thread in ipairs(threads) do
        for k, v in pairs(thread:get("counts")) do total[k] = (total[k] or 0) + v end
    end
    local parts = {}
    for k, v in pairs(total) do table.insert(parts, string.format('"%d": %d', k, v)) end
    local e = summary.errors
    io.write(string.format('WRK {"statuses": {%s}, "socket_errors": %d, "requests": %d, "p99_ms": %.1f}\\n', table.concat(parts, ", "),
        e.connect + e.read + e.write + e.timeout, summary.requests, latency:percentile(99) / 1000))
end
"""


def wrk(work, port, name, path, suffix, seconds):
    script = os.path.join(work, f"{name}.lua")
    with open(script, "w") as f:
        f.write(f'PATH = "{path}"\nSUFFIX = "{suffix}"\n' + WRK_LUA)
    out = open(os.path.join(work, f"{name}.out"), "w")
    return subprocess.Popen(["wrk", "-t1", "-c8", f"-d{seconds}s", "--timeout", "10s", "-s", script, f"http://127.0.0.1:{port}"],
                            stdout=out, stderr=subprocess.STDOUT)


def wrk_result(work, name):
    with open(os.path.join(work, f"{name}.out")) as f:
        for line in f:
            if line.startswith("WRK "):
                return json.loads(line[4:])
    return {"statuses": {}, "socket_errors": -1, "requests": 0}


def feed_after(port, last_event_id, wanted, timeout=10):
    """The event ids of /v1/changes as Server-Sent Events resumed after `last_event_id`, read
    until every id of `wanted` arrived or `timeout` seconds passed."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    connection.request("GET", "/v1/changes", headers={"Accept": "text/event-stream", "Last-Event-ID": str(last_event_id)})
    answer = connection.getresponse()
    ids, end = [], time.monotonic() + timeout
    try:
        while time.monotonic() < end and not wanted.issubset(ids):
            line = answer.readline()  # de-chunked (nginx re-chunks the stream anywhere, mid-line too)
            if not line:
                break
            if line.startswith(b"id: "):
                ids.append(int(line[4:]))
    except OSError:
        pass
    finally:
        connection.close()
    return ids


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cycles", type=int, default=5)
    parser.add_argument("--steady", type=float, default=5)
    parser.add_argument("--detect", type=float, default=1)
    parser.add_argument("--rate", type=float, default=50)
    parser.add_argument("--binary", default=os.path.join(benchsupport.ROOT, ".build/release/vltava"))
    parser.add_argument("--work")
    args = parser.parse_args()
    for tool in ("nginx", "wrk", "psql"):
        if not shutil.which(tool) and not os.path.exists(f"/usr/sbin/{tool}"):
            raise SystemExit(f"{tool} is missing: scripts/install-deps.sh --bench")

    work = args.work or tempfile.mkdtemp(prefix="vltava-failover-")
    os.makedirs(work, exist_ok=True)
    if AS:
        shutil.chown(work, "nobody")
    processes, nodes = [], []
    try:
        # node0: the first primary, with the demo store pushed.
        nodes = [Node(work, 0), Node(work, 1)]
        primary, standby = nodes
        run(AS + [f"{PGBIN}/initdb", "-D", primary.data, "-U", "vltava", "--auth=trust", "--data-checksums", "-E", "UTF8",
                  "--locale=C.UTF-8"])
        primary.start()
        primary.psql("CREATE DATABASE vltava", database="postgres")
        store = os.path.join(work, "demo.gpkg")
        run([os.path.join(benchsupport.ROOT, "scripts/build-demo-store.sh"), store, args.binary])
        url0 = f"postgresql://vltava@127.0.0.1:{primary.port}/vltava"
        benchsupport.push(args.binary, store, url0)
        # In postgresql.auto.conf, not on the command line: the single-user run of pg_rewind's
        # crash recovery must keep the WAL back to the last common checkpoint too.
        primary.psql("ALTER SYSTEM SET wal_keep_size = '512MB'")
        primary.psql("ALTER SYSTEM SET synchronous_standby_names = 'node0,node1'")
        primary.psql("SELECT pg_reload_conf()")
        run(AS + [f"{PGBIN}/pg_basebackup", "-D", standby.data, "-R", "-X", "stream", "-c", "fast", "-h", "127.0.0.1",
                  "-p", str(primary.port), "-U", "vltava"])
        standby.start()
        wait_for(lambda: primary.psql("SELECT sync_state FROM pg_stat_replication") == "sync", 30, "node1 to stream synchronously")

        # Two Vltava servers on the URL naming both nodes, nginx in front.
        url = f"postgresql://vltava@127.0.0.1:{primary.port},127.0.0.1:{standby.port}/vltava?target_session_attrs=read-write"
        token, tokens = benchsupport.write_token_file(work, "drill-")
        ports = [benchsupport.free_port(), benchsupport.free_port()]
        for i, port in enumerate(ports):
            out = open(os.path.join(work, f"serve-{i}.log"), "w")
            processes.append(subprocess.Popen([args.binary, "serve", "--db", url, "--host", "127.0.0.1", "--port", str(port),
                                               "--write-token-file", tokens, "--max-rows-loaded", "0", "--log-level", "warning"],
                                              stdout=out, stderr=subprocess.STDOUT, start_new_session=True))
        for i, port in enumerate(ports):
            if not benchsupport.wait_until_ready(f"http://127.0.0.1:{port}/readyz", processes[i], 60):
                raise SystemExit(f"vltava serve {i} did not get ready: see {work}/serve-{i}.log")
        front = benchsupport.free_port()
        nginx_dir = os.path.join(work, "nginx")
        os.makedirs(nginx_dir)
        user = "user root;" if os.geteuid() == 0 else ""
        with open(os.path.join(work, "nginx.conf"), "w") as f:
            f.write(f"""{user}
worker_processes 1;
daemon off;
pid {nginx_dir}/nginx.pid;
error_log {nginx_dir}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {nginx_dir}/body;
    proxy_temp_path {nginx_dir}/proxy;
    fastcgi_temp_path {nginx_dir}/fastcgi;
    uwsgi_temp_path {nginx_dir}/uwsgi;
    scgi_temp_path {nginx_dir}/scgi;
    upstream vltava {{
        server 127.0.0.1:{ports[0]};
        server 127.0.0.1:{ports[1]};
        keepalive 32;
    }}
    server {{
        listen 127.0.0.1:{front};
        client_max_body_size 16m;
        location / {{
            proxy_pass http://vltava;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_read_timeout 60s;
            # Only a replica that is not there is skipped: a 503 from the database is the client's to see.
            proxy_next_upstream error timeout;
        }}
    }}
}}
""")
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        processes.append(subprocess.Popen([nginx, "-c", os.path.join(work, "nginx.conf"), "-p", nginx_dir],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_for(lambda: request(front, "GET", "/readyz")[0] == 200, 30, "nginx")
        log(f"node0 :{primary.port} (primary), node1 :{standby.port} (synchronous standby); vltava :{ports[0]}, :{ports[1]}; "
            f"nginx :{front}; {os.cpu_count()} cores; work {work}")

        writer, probe = Writer(front, token, args.rate), Probe(front)
        writer.start()
        probe.start()
        failed = False
        for cycle in range(1, args.cycles + 1):
            began = time.monotonic()
            length = int(2 * args.steady + args.detect + 30)
            readers = [wrk(work, front, "containing", "/v1/layers/districts/containing", "", length),
                       wrk(work, front, "nearest", "/v1/layers/parking/nearest", "&k=3", length)]
            time.sleep(args.steady)
            status, _, body = request(front, "GET", "/v1/changes?since=0&limit=10000")
            # The newest sequence a feed client has seen: page to the end.
            page = json.loads(body) if status == 200 else {"last": 0}
            last_event_id = page["last"]
            while status == 200 and len(page["changes"]) == 10000:
                status, _, body = request(front, "GET", f"/v1/changes?since={last_event_id}&limit=10000")
                page = json.loads(body)
                last_event_id = page["last"]

            killed = time.monotonic()
            primary.crash()
            time.sleep(args.detect)
            run(AS + [f"{PGBIN}/pg_ctl", "-D", standby.data, "-w", "-t", "60", "promote"])
            standby.psql("ALTER SYSTEM SET synchronous_standby_names = ''")
            standby.psql("SELECT pg_reload_conf()")
            promoted = time.monotonic()
            # The promotion's checkpoint puts the new timeline in the control file pg_rewind
            # reads; without it pg_rewind sees one timeline, rewinds nothing, and the old
            # primary never streams.
            standby.psql("CHECKPOINT")
            # The old primary follows the new one: rewound to the fork, then a standby.
            # (Its backends may take a moment to notice their postmaster died: a rewind that
            # finds them still holding the shared memory is tried again.)
            rejoin = "pg_rewind"
            for attempt in range(3):
                rewind = run(AS + [f"{PGBIN}/pg_rewind", "-D", primary.data, f"--source-server={standby.conninfo()}", "-R"], check=False)
                if rewind.returncode == 0:
                    break
                log(f"pg_rewind failed ({rewind.stderr.strip()[-300:]}); again in 1 s")
                time.sleep(1)
            else:
                # The WAL back to the fork is gone: a fresh base backup instead.
                rejoin = "pg_basebackup"
                shutil.rmtree(primary.data)
                run(AS + [f"{PGBIN}/pg_basebackup", "-D", primary.data, "-R", "-X", "stream", "-c", "fast", "-h", "127.0.0.1",
                          "-p", str(standby.port), "-U", "vltava"])
            primary.start()
            wait_for(lambda: standby.psql("SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'") == "1", 60,
                     f"{primary.name} to stream from {standby.name}")
            standby.psql("ALTER SYSTEM SET synchronous_standby_names = 'node0,node1'")
            standby.psql("SELECT pg_reload_conf()")
            wait_for(lambda: standby.psql("SELECT sync_state FROM pg_stat_replication") == "sync", 30, "synchronous again")
            rejoined = time.monotonic()
            primary, standby = standby, primary
            time.sleep(args.steady)
            for reader in readers:
                reader.send_signal(signal.SIGINT)
                reader.wait(30)

            # Check the cycle.
            outcomes = writer.since(began)
            acknowledged = [o for o in outcomes if o[2] == 200]
            statuses = {}
            for o in outcomes:
                statuses[o[2]] = statuses.get(o[2], 0) + 1
            bad_writes = {s: n for s, n in statuses.items() if s not in (200, 503)}
            without_retry = sum(1 for o in outcomes if o[2] == 503 and o[5] != "1")
            codes = [code for o in acknowledged for code in o[3]]
            stored = set(primary.psql("SELECT code FROM stations WHERE code LIKE 'd%'").split("\n"))
            missing = [code for code in codes if code not in stored]
            first_write = next((o[1] for o in outcomes if o[0] >= killed and o[2] == 200), None)
            after_kill = [(t, s) for t, s in list(probe.seen) if t >= killed]
            first_fail = next((t for t, s in after_kill if s != 200), None)
            first_read = next((t for t, s in after_kill if s == 200 and (first_fail is None or t > first_fail)), None)
            reads = {}
            socket_errors = 0
            for name in ("containing", "nearest"):
                result = wrk_result(work, name)
                socket_errors += max(0, result["socket_errors"])
                for s, n in result["statuses"].items():
                    reads[s] = reads.get(s, 0) + n
            bad_reads = {s: n for s, n in reads.items() if s not in ("200", "503")}
            told = {seq for o in acknowledged for seq in o[4] if seq > last_event_id}
            ids = feed_after(front, last_event_id, told)
            feed_missed = len(told - set(ids))
            feed_gaps = ids != list(range(last_event_id + 1, last_event_id + 1 + len(ids)))
            print("RESULT " + json.dumps({
                "cycle": cycle,
                "acknowledged_batches": len(acknowledged), "acknowledged_stations": len(codes),
                "present_afterwards": len(codes) - len(missing),
                "writes_failed": {str(s): n for s, n in statuses.items() if s != 200}, "503_without_retry_after": without_retry,
                "reads": reads, "read_socket_errors": socket_errors,
                "writes_back_after_s": round(first_write - killed, 2) if first_write else None,
                "reads_back_after_s": round(first_read - killed, 2) if first_fail and first_read else (0.0 if not first_fail else None),
                "promoted_after_s": round(promoted - killed, 2), "rejoined_after_s": round(rejoined - killed, 2), "rejoined_by": rejoin,
                "feed_resumed_after": last_event_id, "feed_events": len(ids), "feed_missed": feed_missed, "feed_gaps": feed_gaps,
            }), flush=True)
            if missing or bad_writes or bad_reads or without_retry or feed_missed or feed_gaps or first_write is None:
                failed = True
                gaps = [(a, b) for a, b in zip(ids, ids[1:]) if b != a + 1][:5]
                log(f"cycle {cycle}: missing {missing[:5]}, writes {bad_writes}, reads {bad_reads}, feed missed "
                    f"{sorted(told - set(ids))[:5]} (in the table: {[primary.psql(f'SELECT count(*) FROM vltava_changes WHERE seq = {n}') for n in sorted(told - set(ids))[:3]]}), "
                    f"feed starts {ids[:3]}, jumps {gaps}")
        writer.running = probe.running = False
        writer.join(30)
        return 1 if failed else 0
    finally:
        for process in processes:
            with contextlib.suppress(Exception):
                benchsupport.stop_process(process)
        for node in nodes:
            node.stop()
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
