"""Helpers the benchmark and drill scripts share (Benchmarks/*.py, scripts/*-drill.py).

Plain functions, no state: a free loopback port, an empty store's path, waiting for /readyz,
starting `vltava serve` with a write-token file, stopping a process, its resident memory,
summing up a server's log, loading a sibling script as a module, and the throwaway PostGIS
cluster (Benchmarks/write-throughput.py's) with a store pushed into it. Scripts in Benchmarks/ import it directly; scripts elsewhere put the Benchmarks
folder on sys.path first. Only the standard library is imported here: psycopg is needed only
by the PostGIS helpers, which load write-throughput.py (and so psycopg) when called.
"""

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_script(name, path):
    """A script whose file name is not a module name (write-throughput.py), loaded as module
    `name`; path is relative to the repository's root unless absolute."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def free_port():
    """A loopback port the system has free right now (bound to port 0, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fresh_store(work):
    """WORK/store.gpkg with no store there (it, its WAL and shared memory, snapshot and writer
    files removed); WORK is made when missing."""
    os.makedirs(work, exist_ok=True)
    store = os.path.join(work, "store.gpkg")
    for suffix in ("", "-wal", "-shm", ".vltava-snapshot", "-writer"):
        if os.path.exists(store + suffix):
            os.remove(store + suffix)
    return store


def write_token_file(folder, prefix):
    """A new random write token (prefix + 32 hex digits), written to FOLDER/tokens as
    `vltava serve --write-token-file` reads it. Returns (token, path of the file)."""
    token = prefix + os.urandom(16).hex()
    path = os.path.join(folder, "tokens")
    with open(path, "w") as f:
        f.write(token + "\n")
    return token, path


def serve(binary, store, port, tokens, log_level, stdout, stderr=subprocess.STDOUT, host="127.0.0.1", new_session=True):
    """Starts `vltava serve --db STORE [--host HOST] --port PORT --write-token-file TOKENS
    --log-level LOG_LEVEL` (no --host when host is None) and returns its Popen; it is not waited for."""
    command = [binary, "serve", "--db", store]
    if host is not None:
        command += ["--host", host]
    command += ["--port", str(port), "--write-token-file", tokens, "--log-level", log_level]
    return subprocess.Popen(command, stdout=stdout, stderr=stderr, start_new_session=new_session)


def wait_until_ready(url, process, timeout, request_timeout=2, interval=0.05):
    """Polls url (a server's /readyz) until it answers 200: True then; False when `process`
    exited first or `timeout` seconds passed (the caller says which, as it reports errors)."""
    deadline = time.time() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=request_timeout) as answer:
                if answer.status == 200:
                    return True
        except OSError:
            pass
        if process.poll() is not None or time.time() > deadline:
            return False
        time.sleep(interval)


def rss_mb(pid):
    """Resident MB, and of it the heap's (RssAnon): the rest is the mapped snapshot file's pages
    that answers touched, shared and given back under pressure."""
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "RssAnon"):
                values[key] = int(rest.split()[0]) // 1024
    return f"{values.get('VmRSS', -1)} heap_mb={values.get('RssAnon', -1)}"


def stop_process(process):
    """SIGTERM, then SIGKILL when it has not exited within 10 s; waits for it."""
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def show_server_log(path, name="vltava serve", what="failed requests", with_level=False):
    """What a server logged, on standard error, so nothing it complained of goes unseen: its
    logged requests counted by method, route and status (and level when with_level), every
    other line as it is (the last 20). Nothing when the log does not exist."""
    if not os.path.exists(path):
        return
    requests, other = {}, []
    with open(path, errors="replace") as f:
        for line in f.read().splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                entry = None
            if isinstance(entry, dict) and entry.get("msg") == "request":
                key = f"{entry.get('method')} {entry.get('route')} {entry.get('status')}"
                if with_level:
                    key = f"{entry.get('level')} {key}"
                requests[key] = requests.get(key, 0) + 1
            elif line.strip() and not line.startswith("listening on"):
                other.append(line)
    if requests:
        print(f"{name} logged {what}:", ", ".join(f"{key} × {count}" for key, count in sorted(requests.items())), file=sys.stderr, flush=True)
    if other:
        print(f"{name} logged {len(other)} other lines; the last ones:", *other[-20:], sep="\n  ", file=sys.stderr, flush=True)


def write_throughput():
    """Benchmarks/write-throughput.py as a module (it imports psycopg, so only for PostGIS runs)."""
    return load_script("write_throughput", "Benchmarks/write-throughput.py")


def postgis_url(conninfo):
    """The `vltava --db` URL of a psycopg conninfo ("host=… port=… user=… dbname=…")."""
    parts = dict(part.split("=", 1) for part in conninfo.split())
    return f"postgresql://{parts['user']}@{parts['host']}:{parts['port']}/{parts['dbname']}"


def start_postgis(work, stack):
    """The throwaway cluster of Benchmarks/write-throughput.py (one way to start it for every
    script here), stopped when `stack` closes; returns (psycopg conninfo, URL for `vltava --db`)."""
    conninfo = write_throughput().start_postgis(work, stack)
    return conninfo, postgis_url(conninfo)


def push(binary, store, url, stdout=subprocess.DEVNULL, stderr=None):
    """`vltava push STORE URL`: copies a GeoPackage store into the database; fails loudly."""
    subprocess.run([binary, "push", store, url], stdout=stdout, stderr=stderr, check=True)
