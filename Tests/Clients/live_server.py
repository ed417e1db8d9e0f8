"""Helpers shared by the live-server client tests (fences_bruteforce.py, sse_resume.py,
webhook_delivery.py).

Each test runs a real `vltava serve` on a private copy of a GeoPackage, so that the writes
it makes never touch the caller's store, and talks to it over HTTP on a free local port.
Scripts import this module after putting their own directory on sys.path, because they are
run as `python3 PATH/script.py` rather than as a package.
"""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

TOKEN = "demo-write-token-not-for-production"
AUTH = {"Authorization": "Bearer " + TOKEN}


def log(*args):
    # Flushed at once so progress interleaves correctly with the server's output in CI logs.
    print(*args, flush=True)


class TestFailure(Exception):
    pass


def check(cond, message):
    if not cond:
        raise TestFailure(message)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A `vltava serve` on a temporary copy of `store`, up and answering /healthz on return.

    Subclasses add their own request helpers and override `close_clients` to drop their
    connections before the process is stopped."""

    def __init__(self, binary, store, port=None, prefix="vltava-", extra=()):
        self.dir = tempfile.mkdtemp(prefix=prefix)
        self.db = os.path.join(self.dir, "store.gpkg")
        shutil.copyfile(store, self.db)
        tokens = os.path.join(self.dir, "tokens")
        with open(tokens, "w") as f:
            f.write(TOKEN + "\n")
        self.port = port or free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = os.path.join(self.dir, "server.log")
        self.log_file = open(self.log_path, "w")
        # A new session, so that stop() can signal the whole process group.
        self.proc = subprocess.Popen(
            [binary, "serve", "--db", self.db, "--host", "127.0.0.1", "--port", str(self.port),
             "--write-token-file", tokens, "--log-level", "warning", *extra],
            stdout=self.log_file, stderr=subprocess.STDOUT, start_new_session=True)
        self.wait_healthy()

    def healthy(self):
        try:
            with urllib.request.urlopen(self.base + "/healthz", timeout=5) as r:
                return r.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def wait_healthy(self, timeout=60):
        deadline = time.time() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with {self.proc.returncode}:\n{self.log_tail()}")
            if self.healthy():
                return
            if time.time() > deadline:
                raise RuntimeError(f"the server did not answer /healthz within {timeout} s:\n{self.log_tail()}")
            time.sleep(0.1)

    def alive(self):
        return self.proc.poll() is None

    def log_tail(self):
        try:
            self.log_file.flush()
            with open(self.log_path, errors="replace") as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def close_clients(self):
        pass

    def stop(self):
        self.close_clients()
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except OSError:
                self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except OSError:
                    self.proc.kill()
                self.proc.wait(10)
        self.log_file.close()
        shutil.rmtree(self.dir, ignore_errors=True)
