#!/usr/bin/env python3
"""Write throughput: Vltava's durable writes over HTTP against PostGIS's, in the same run.

Measures, each for --seconds, the same rows (points inside Prague with a text and an integer
property, from a fixed seed) written

  - to Vltava: `vltava serve --write-token-file` on a fresh GeoPackage store, over 1 and over 8
    keep-alive HTTP connections (http.client, a thread each), sending POST /v1/write with one
    insert (singles), then with 1,000 inserts (batches), each connection waiting for its last
    answer (over 8, the server commits the batches that arrive together as one group);
  - to Vltava through the library: `vltava-bench writes` (Benchmarks/vltava-bench/Writes.swift),
    `Engine.write` of the same batches on a copy of the same store, one writer;
  - to PostGIS: a throwaway PostgreSQL 15 + PostGIS cluster on loopback, INSERT … VALUES
    (ST_SetSRID(ST_GeomFromGeoJSON(%s), 4326), %s, %s) with bound parameters (psycopg 3): one row
    a statement in autocommit (singles), and 1,000 rows in one multi-row INSERT, its own
    transaction (batches), each over 1 connection and over 8 (a thread and a connection each).

and prints rows/s and commits/s for each, with Vltava's rate divided by each PostGIS rate.

Why the anchor is fair: both sides make every acknowledged write durable before answering.
Vltava commits each request as one SQLite transaction in WAL mode with synchronous = FULL (the
WAL is fsynced at every commit, docs/ARCHITECTURE.md "Writes and the change feed"); PostgreSQL
runs with its defaults, fsync = on and synchronous_commit = on (the WAL is flushed at every
commit), which the script checks and prints. Both write to the same filesystem (--work), both
keep a spatial index up to date (the GeoPackage R-tree; a GiST index on the PostGIS table) and a
primary key, both start from an empty layer or table per measurement, and both are driven from
Python over loopback with the request or statement prepared before the clock starts. Vltava
does more per write than PostgreSQL does (the change feed's row, the import's checks of each
geometry and attribute, and the next snapshot built before it answers), so the ratio is what
those cost on top of a durable commit; the single-connection rows compare the same concurrency.

    Benchmarks/write-throughput.py [--binary .build/release/vltava] [--bench .build/release/vltava-bench]
                                   [--seconds 10] [--work DIR] [--quick]

Needs the release builds (swift build -c release --product vltava, and --product vltava-bench), PostgreSQL 15 with PostGIS 3
(postgresql-15-postgis-3) and psycopg 3 (pip install 'psycopg[binary]==3.3.*'). As root,
PostgreSQL runs as nobody (runuser), so --work must be a folder nobody can reach (/tmp is).
Everything it starts (server, cluster, scratch folder) is stopped and removed at exit,
Ctrl-C or error included.
"""

import argparse
import contextlib
import hashlib
import http.client
import itertools
import json
import os
import pwd
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import benchsupport
from benchsupport import stop_process

try:
    import psycopg
except ImportError:
    sys.exit("psycopg 3 is missing: python3 -m pip install 'psycopg[binary]==3.3.*'")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PGBIN = "/usr/lib/postgresql/15/bin"
POSTGIS_CONTROL = "/usr/share/postgresql/15/extension/postgis.control"
BATCH = 1000
POOL_BATCHES = 10  # the rows are a pool of POOL_BATCHES batches, cycled
PRAGUE = (14.3, 14.6, 50.0, 50.15)  # lon min, lon max, lat min, lat max
PG_INSERT = "INSERT INTO {table} (geom, name, value) VALUES "
PG_ROW = "(ST_SetSRID(ST_GeomFromGeoJSON(%s), 4326), %s, %s)"


def make_rows(seed):
    """The rows every method writes: (GeoJSON point, text, integer), the same in every run."""
    rng = random.Random(seed)
    rows = []
    for _ in range(BATCH * POOL_BATCHES):
        point = {"type": "Point", "coordinates": [round(rng.uniform(*PRAGUE[:2]), 7), round(rng.uniform(*PRAGUE[2:]), 7)]}
        name = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(12))
        rows.append((json.dumps(point), name, rng.randrange(1_000_000)))
    return rows


def free_port(ports=range(55400, 55500)):
    """A free loopback port, from the range the project's tests and benchmarks keep to."""
    for port in random.sample(ports, len(ports)):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                pass
    sys.exit(f"no free port in {ports.start}–{ports.stop - 1}")


def filesystem(path):
    """The type and device of the filesystem holding path (fsync's cost depends on it)."""
    path, best = os.path.realpath(path), ("?", "?", "")
    with open("/proc/self/mounts") as mounts:
        for line in mounts:
            device, mount, kind = line.split()[:3]
            if (path == mount or path.startswith(mount.rstrip("/") + "/")) and len(mount) > len(best[2]):
                best = (kind, device, mount)
    return f"{best[0]} on {best[1]}"


def binary_identity(binary):
    with open(binary, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    built = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(os.path.getmtime(binary)))
    return f"{os.path.realpath(binary)} (built {built}, sha256 {digest}…)"


# Vltava

def start_vltava(binary, scratch, stack):
    """Imports the station fixture into a new store, serves it with a write token on a free
    port, and returns (port, token). The server is stopped when `stack` closes."""
    store = new_store(binary, scratch)
    token, tokens = benchsupport.write_token_file(scratch, "bench-")
    port = free_port()
    log_path = os.path.join(scratch, "serve.log")
    with open(log_path, "w") as log:
        server = benchsupport.serve(binary, store, port, tokens, "warning", stdout=log)
    stack.callback(stop_process, server)
    stack.callback(show_log, "vltava serve", log_path, lambda line: not line.startswith("listening on"))
    wait_until_ready(f"http://127.0.0.1:{port}/readyz", server, log_path)
    return port, token


def new_store(binary, scratch, name="store.gpkg"):
    """A new store in scratch holding the station fixture: the server's, or (another name) the
    one the library's benchmark copies, never the file a server has open."""
    store = os.path.join(scratch, name)
    if not os.path.exists(store):
        subprocess.run([binary, "import", os.path.join(ROOT, "Fixtures/air/stations-prague.csv"), "--layer", "stations", "--db", store],
                       check=True, stdout=subprocess.DEVNULL)
    return store


def library_writes(bench, store, rows, rows_per_write, seconds, scratch):
    """`vltava-bench writes` on a copy of `store`: (rows, commits, seconds) of Engine.write
    batches of rows_per_write inserts of `rows` into a new layer."""
    path = os.path.join(scratch, "rows.json")
    if not os.path.exists(path):
        with open(path, "w") as f:
            json.dump([list(row) for row in rows], f)
    done = subprocess.run([bench, "writes", store, path, str(rows_per_write), str(seconds)], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"vltava-bench writes failed ({done.returncode}): {done.stderr[-2000:]}")
    fields = dict(field.split("=", 1) for field in done.stdout.split() if "=" in field)
    return int(fields["rows"]), int(fields["commits"]), float(fields["seconds"])


def show_log(name, path, wanted):
    """Prints the lines of a server's log that `wanted` keeps (its warnings and errors), so
    nothing it complained of goes unseen."""
    if not os.path.exists(path):
        return
    with open(path, errors="replace") as f:
        lines = [line for line in f.read().splitlines() if wanted(line)]
    if lines:
        print(f"\n{name} logged {len(lines)} lines; the last ones:", *lines[-20:], sep="\n  ")


def wait_until_ready(url, server, log_path):
    if benchsupport.wait_until_ready(url, server, 60):
        return
    with open(log_path, errors="replace") as f:
        sys.exit(f"the server did not become ready (exit status {server.poll()}):\n{f.read()[-2000:]}")


class Vltava:
    def __init__(self, port, token):
        self.port = port
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def post(self, connection, body):
        connection.request("POST", "/v1/write", body, self.headers)
        answer = connection.getresponse()
        text = answer.read()
        if answer.status != 200:
            raise RuntimeError(f"POST /v1/write answered {answer.status}: {text[:500].decode(errors='replace')}")

    def create_layer(self, name):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        with contextlib.closing(connection):
            self.post(connection, json.dumps({"operations": [{"create": {
                "name": name, "geometry_type": "POINT",
                "columns": [{"name": "name", "type": "TEXT"}, {"name": "value", "type": "INTEGER"}]}}]}))

    def writers(self, layer, rows_per_write, rows, connections, stack):
        """Writers for `measure`, one a keep-alive connection: each call POSTs the next of the
        pool's bodies of rows_per_write inserts into `layer`."""
        bodies, counter = self.bodies(layer, rows_per_write, rows), itertools.count()
        return [self.writer(bodies, counter, stack) for _ in range(connections)]

    def bodies(self, layer, rows_per_write, rows):
        def insert(row):
            geometry, name, value = row
            return f'{{"insert":{json.dumps(layer)},"feature":{{"type":"Feature","geometry":{geometry},' \
                   f'"properties":{json.dumps({"name": name, "value": value})}}}}}'
        return [('{"operations":[' + ",".join(map(insert, rows[i:i + rows_per_write])) + "]}").encode()
                for i in range(0, len(rows), rows_per_write)]

    def writer(self, bodies, counter, stack):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        connection.connect()  # before the clock starts, as PostgreSQL's connections are
        stack.callback(connection.close)
        rows_per_write = bodies[0].count(b'"insert"')

        def write():
            self.post(connection, bodies[next(counter) % len(bodies)])
            return rows_per_write
        return write


# PostGIS

def start_postgis(scratch, stack):
    """initdb and start a stock PostgreSQL 15 (fsync and synchronous_commit on) on 127.0.0.1 at a
    free port, as nobody when running as root, with a database `vltava` holding PostGIS.
    Returns its conninfo; the cluster is stopped when `stack` closes."""
    as_postgres = []
    folder = os.path.join(scratch, "pg")
    os.mkdir(folder)
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        os.chown(folder, nobody.pw_uid, nobody.pw_gid)
        as_postgres = ["runuser", "-u", "nobody", "--"]
    data = os.path.join(folder, "data")

    def pg(program, *arguments, check=True):
        done = subprocess.run(as_postgres + [os.path.join(PGBIN, program), *arguments],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        if check and done.returncode != 0:
            sys.exit(f"{program} failed ({done.returncode}): {done.stderr.decode(errors='replace')[-2000:]}")

    pg("initdb", "-D", data, "-U", "vltava", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8")
    port = free_port()
    with open(os.path.join(data, "postgresql.conf"), "a") as conf:
        conf.write(f"listen_addresses = '127.0.0.1'\nport = {port}\nunix_socket_directories = ''\n")
    stack.callback(pg, "pg_ctl", "-D", data, "-m", "immediate", "-w", "stop", check=False)
    stack.callback(show_log, "PostgreSQL", os.path.join(folder, "log"),
                   lambda line: any(level in line for level in ("WARNING:", "ERROR:", "FATAL:", "PANIC:")))
    pg("pg_ctl", "-D", data, "-l", os.path.join(folder, "log"), "-w", "-t", "60", "start")
    server = f"host=127.0.0.1 port={port} user=vltava"
    with psycopg.connect(server + " dbname=postgres", autocommit=True) as connection:
        connection.execute("CREATE DATABASE vltava")
    with psycopg.connect(server + " dbname=vltava", autocommit=True) as connection:
        connection.execute("CREATE EXTENSION postgis")
    return server + " dbname=vltava"


def postgis_facts(conninfo):
    with psycopg.connect(conninfo) as connection:
        version, postgis = connection.execute("SELECT version(), postgis_full_version()").fetchone()
        settings = connection.execute(
            "SELECT string_agg(name || '=' || setting, ' ' ORDER BY name) FROM pg_settings "
            "WHERE name IN ('fsync', 'synchronous_commit', 'wal_sync_method', 'full_page_writes')").fetchone()[0]
    if "fsync=on" not in settings or "synchronous_commit=on" not in settings:
        sys.exit(f"PostgreSQL does not commit durably: {settings}")
    return version, postgis, settings


def create_table(conninfo, table):
    with psycopg.connect(conninfo, autocommit=True) as connection:
        connection.execute(f"CREATE TABLE {table} (fid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
                           f"geom geometry(Point, 4326) NOT NULL, name text, value integer)")
        connection.execute(f"CREATE INDEX ON {table} USING gist (geom)")


def postgis_writers(conninfo, table, rows_per_write, rows, connections, stack):
    """Writers for `measure`, one a connection: each call runs one INSERT of the next
    rows_per_write rows of the pool, in autocommit, so each is its own transaction."""
    sql = PG_INSERT.format(table=table) + ", ".join([PG_ROW] * rows_per_write)
    parameters = [[value for row in rows[i:i + rows_per_write] for value in row] for i in range(0, len(rows), rows_per_write)]
    counter = itertools.count()  # shared: the connections write the pool's rows between them

    def writer():
        connection = stack.enter_context(psycopg.connect(conninfo, autocommit=True))

        def write():
            connection.execute(sql, parameters[next(counter) % len(parameters)])
            return rows_per_write
        return write
    return [writer() for _ in range(connections)]


# Measuring

def measure(seconds, writers):
    """Runs each writer (a call that commits once and returns the rows it wrote) in a thread of
    its own, over and over for `seconds`, all starting together; returns (rows, commits, elapsed
    seconds until the last commit in flight at the end was answered)."""
    stop = threading.Event()
    counts = [[0, 0] for _ in writers]
    errors = []
    start_line = threading.Barrier(len(writers) + 1)

    def run(k):
        start_line.wait()
        try:
            while not stop.is_set():
                counts[k][0] += writers[k]()
                counts[k][1] += 1
        except Exception as error:
            errors.append(error)
            stop.set()

    threads = [threading.Thread(target=run, args=(k,), daemon=True) for k in range(len(writers))]
    for thread in threads:
        thread.start()
    start_line.wait()
    started = time.perf_counter()
    try:
        stop.wait(seconds)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    elapsed = time.perf_counter() - started
    if errors:
        raise errors[0]
    return sum(c[0] for c in counts), sum(c[1] for c in counts), elapsed


def print_table(results):
    """results: (kind, method, connections, rows, commits, elapsed), Vltava's first. Each
    PostGIS row's ratios are Vltava's rates over HTTP with the same number of connections, and
    through the library (one writer), divided by its."""
    print(f"\n{'method':<50} {'conns':>5} {'rows':>9} {'rows/s':>10} {'commits/s':>10} {'HTTP/this':>10} {'library/this':>12}")
    http_rate, library_rate = {}, {}
    for kind, method, connections, rows, commits, elapsed in results:
        rate = rows / elapsed
        ratios = ("", "")
        if method.startswith("vltava library"):
            library_rate[kind] = rate
        elif method.startswith("vltava"):
            http_rate[(kind, connections)] = rate
        else:
            ratios = (f"{http_rate[(kind, connections)] / rate:.2f}", f"{library_rate[kind] / rate:.2f}")
        print(f"{method:<50} {connections:>5} {rows:>9,} {rate:>10,.0f} {commits / elapsed:>10,.1f} {ratios[0]:>10} {ratios[1]:>12}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/release/vltava"))
    parser.add_argument("--bench", default=os.path.join(ROOT, ".build/release/vltava-bench"))
    parser.add_argument("--seconds", type=float, default=10, help="seconds a measurement (default 10)")
    parser.add_argument("--work", help="the folder for the scratch files (default: the system's temporary folder)")
    parser.add_argument("--quick", action="store_true", help="2 s a measurement: checks that the script works")
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args()
    seconds = 2 if options.quick else options.seconds
    if not os.access(options.binary, os.X_OK):
        sys.exit(f"{options.binary} is missing: swift build -c release --product vltava")
    if not os.access(options.bench, os.X_OK):
        sys.exit(f"{options.bench} is missing: swift build -c release --product vltava-bench")
    if not (os.access(os.path.join(PGBIN, "postgres"), os.X_OK) and os.path.exists(POSTGIS_CONTROL)):
        sys.exit("PostgreSQL 15 with PostGIS 3 is missing: scripts/install-deps.sh --bench")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwinds the cleanup as Ctrl-C does
    if options.work:
        os.makedirs(options.work, exist_ok=True)

    with contextlib.ExitStack() as stack:
        scratch = tempfile.mkdtemp(prefix="write-throughput.", dir=options.work)
        stack.callback(shutil.rmtree, scratch, ignore_errors=True)
        os.chmod(scratch, 0o755)  # PostgreSQL's user must reach its folder inside
        rows = make_rows(options.seed)
        vltava = Vltava(*start_vltava(options.binary, scratch, stack))
        conninfo = start_postgis(scratch, stack)
        version, postgis, settings = postgis_facts(conninfo)
        print(f"vltava:     {binary_identity(options.binary)}")
        print(f"library:    {binary_identity(options.bench)}")
        print(f"PostgreSQL: {version}\n            {settings}")
        print(f"PostGIS:    {postgis}")
        print(f"client:     Python {sys.version.split()[0]}, psycopg {psycopg.__version__} ({psycopg.pq.__impl__}, libpq {psycopg.pq.version()})")
        print(f"scratch:    {scratch} ({filesystem(scratch)}), {seconds:g} s a measurement, seed {options.seed}, {os.cpu_count()} cores")

        results = []
        for kind, size in (("singles", 1), ("batches", BATCH)):
            for count in (1, 8):
                layer = f"{kind}_{count}"
                vltava.create_layer(layer)
                with contextlib.ExitStack() as connections:
                    print(f"measuring Vltava {kind} over {count} connection{'s' if count > 1 else ''}…", flush=True)
                    writers = vltava.writers(layer, size, rows, count, connections)
                    results.append((kind, f"vltava POST /v1/write, {size:,} insert{'s' if size > 1 else ''}", count, *measure(seconds, writers)))
            print(f"measuring Vltava {kind} through the library…", flush=True)
            results.append((kind, f"vltava library Engine.write, {size:,} insert{'s' if size > 1 else ''}", 1,
                            *library_writes(options.bench, new_store(options.binary, scratch, "library.gpkg"), rows, size, seconds, scratch)))
            for count in (1, 8):
                table = f"{kind}_{count}"
                create_table(conninfo, table)
                with contextlib.ExitStack() as connections:
                    print(f"measuring PostGIS {kind} over {count} connection{'s' if count > 1 else ''}…", flush=True)
                    writers = postgis_writers(conninfo, table, size, rows, count, connections)
                    method = "postgis INSERT, 1 row, autocommit" if size == 1 else f"postgis INSERT of {size:,} rows, 1 transaction"
                    results.append((kind, method, count, *measure(seconds, writers)))
        print_table(results)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("interrupted; everything started was stopped and removed")
