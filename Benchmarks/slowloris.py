#!/usr/bin/env python3
"""Slowloris against `vltava serve` on loopback, while a client measures `containing`.

    Benchmarks/slowloris.py --bin PATH [--db FILE] [--connections 20000] [--duration 60]
                            [--rate N] [--server-option=--max-connections=4096 ...]

Starts the server (with RLIMIT_NOFILE raised as far as the hard limit allows, as for this
script), then:
  - the attacker opens up to --connections connections (default 20,000) from 127.0.0.2–9
    (more source ports than one address has), each sending a partial request head, and keeps
    them half-open: every second it sends one more header byte on each, and it opens a new
    connection for every one the server closes, until --duration seconds (default 60) are over;
    --rate caps the connections it opens per second (default: as fast as it can — the attacker
    then shares the machine's cores with the server it attacks, which a remote one would not);
  - the prober opens a fresh connection every 100 ms and asks
    GET /v1/layers/districts/containing (Praha 1), timing the answer with a 1 s time-out.
Prints the prober's latencies (p50, p99, max), how many answers took over 100 ms or failed,
the attacker's connections (opened, closed by the server, most open at once), and the
server's RSS: peak (VmHWM), during the attack, and 5 s after it ended.

Bounded: at most --connections sockets at once, at most 10 × --connections connection
attempts in all, and --duration seconds (at most 600). Only 127.0.0.0/8 is ever addressed.
Passing --server-option lets the same script run a build that has no such options (the base
commit) by leaving them out.
"""

import argparse
import errno
import multiprocessing
import os
import resource
import select
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PARTIAL = b"GET /v1/layers HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def status_kb(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


CONNECT_TIMES = []


def probe_once(port, timeout=1.0):
    """Seconds for one containing request on a fresh connection, or None on failure."""
    start = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            CONNECT_TIMES.append(time.monotonic() - start)
            s.settimeout(max(0.01, timeout - (time.monotonic() - start)))
            s.sendall(b"GET /v1/layers/districts/containing?lon=14.4208&lat=50.0880 HTTP/1.1\r\n"
                      b"Host: 127.0.0.1\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
                if time.monotonic() - start > timeout:
                    return None
        if data.startswith(b"HTTP/1.1 200") and b"Praha 1" in data:
            return time.monotonic() - start
    except OSError:
        return None
    return None


class Attacker:
    """Runs in a process of its own, so that its loops never delay the prober's timing; it
    reports through shared counters."""

    def __init__(self, port, limit, deadline, stats, rate=None):
        self.rate = rate
        self.port = port
        self.limit = limit
        self.deadline = deadline
        self.max_attempts = 10 * limit
        self.attempts = 0
        self.stats = stats  # opened, closed by server, connect failures, open now, most open
        self.socks = {}  # fd -> socket
        self.poll = None
        self.source = 0

    @property
    def opened(self): return self.stats[0]
    @property
    def closed_by_server(self): return self.stats[1]
    @property
    def connect_failures(self): return self.stats[2]
    @property
    def open_now(self): return self.stats[3]
    @property
    def peak_open(self): return self.stats[4]

    def count(self, index, n=1):
        self.stats[index] += n

    def note_open(self):
        self.stats[3] = len(self.socks)
        self.stats[4] = max(self.stats[4], len(self.socks))

    def open_one(self):
        if self.attempts >= self.max_attempts:
            return False
        self.attempts += 1
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.bind((f"127.0.0.{2 + self.source % 8}", 0))
            self.source += 1
            s.settimeout(1.0)
            s.connect(("127.0.0.1", self.port))
            s.sendall(PARTIAL)
            s.setblocking(False)
        except OSError:
            s.close()
            self.count(2)
            return False
        self.socks[s.fileno()] = s
        self.poll.register(s.fileno(), select.EPOLLIN | select.EPOLLRDHUP | select.EPOLLHUP | select.EPOLLERR)
        self.count(0)
        self.note_open()
        return True

    def reap(self):
        """Forgets the connections the server closed."""
        for fd, _ in self.poll.poll(0):
            s = self.socks.pop(fd, None)
            if s is None:
                continue
            self.poll.unregister(fd)
            s.close()
            self.count(1)
        self.note_open()

    def drip(self):
        """One more header byte on every open connection (the slowloris keep-alive)."""
        for fd, s in list(self.socks.items()):
            try:
                s.send(b"a")
            except OSError as e:
                if e.errno not in (errno.EAGAIN, errno.EWOULDBLOCK):
                    self.poll.unregister(fd)
                    self.socks.pop(fd, None)
                    s.close()
                    self.count(1)
        self.note_open()

    def run(self):
        raise_nofile()
        self.poll = select.epoll()
        last_drip = time.monotonic()
        started = time.monotonic()
        while time.monotonic() < self.deadline:
            self.reap()
            opened_now = 0
            # Top up to the limit, in batches so that reaping and dripping keep going.
            while len(self.socks) < self.limit and opened_now < 500 and time.monotonic() < self.deadline:
                if self.rate and self.attempts >= self.rate * (time.monotonic() - started):
                    break
                if not self.open_one() and self.attempts >= self.max_attempts:
                    break
                opened_now += 1
            if time.monotonic() - last_drip >= 1.0:
                self.drip()
                last_drip = time.monotonic()
            if opened_now == 0:
                time.sleep(0.05)
        # Hold them until the prober has read the peak, then let go.
        for s in self.socks.values():
            s.close()
        self.socks.clear()
        self.note_open()
        self.poll.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, help="the vltava binary")
    parser.add_argument("--db", help="the store (default: the demo store, built into a temporary directory)")
    parser.add_argument("--connections", type=int, default=20_000)
    parser.add_argument("--duration", type=float, default=60)
    parser.add_argument("--rate", type=float, help="at most this many connections opened per second")
    parser.add_argument("--server-option", action="append", default=[], help="an extra option for vltava serve (repeatable)")
    args = parser.parse_args()
    if not 1 <= args.connections <= 20_000 or not 1 <= args.duration <= 600:
        sys.exit("--connections must be 1–20000 and --duration 1–600 s")

    nofile = raise_nofile()
    work = tempfile.mkdtemp(prefix="vltava-slowloris.")
    db = args.db
    if db is None:
        db = os.path.join(work, "demo.gpkg")
        subprocess.run([os.path.join(ROOT, "scripts/build-demo-store.sh"), db, args.bin], check=True, stdout=subprocess.DEVNULL)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(os.path.join(work, "server.log"), "w")
    server = subprocess.Popen([args.bin, "serve", "--db", db, "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
                               *args.server_option],
                              stdout=subprocess.DEVNULL, stderr=log, preexec_fn=raise_nofile)
    try:
        for _ in range(200):
            if probe_once(port) is not None:
                break
            time.sleep(0.05)
        else:
            sys.exit("the server did not start")
        print(f"slowloris: {args.bin} {' '.join(args.server_option)}; RLIMIT_NOFILE {nofile} (script and server), "
              f"up to {args.connections} half-open connections for {args.duration:.0f} s"
              f"{f', opened at most {args.rate:.0f}/s' if args.rate else ''}, probe every 100 ms; {os.cpu_count()} cores; load {os.getloadavg()[0]:.1f}", flush=True)
        rss_before = status_kb(server.pid, "VmRSS")

        latencies, failures = [], 0
        rss_during = []
        stop = time.monotonic() + args.duration
        # The attacker's sockets and the prober's share the script's file limit.
        attacker = Attacker(port, min(args.connections, nofile - 64), stop, multiprocessing.Array("q", 5, lock=False), args.rate)
        process = multiprocessing.Process(target=attacker.run)
        process.start()
        next_probe = time.monotonic()
        next_report = time.monotonic() + 5
        window = []
        while time.monotonic() < stop:
            seconds = probe_once(port)
            if seconds is None:
                failures += 1
                window.append(None)
            else:
                latencies.append(seconds)
                window.append(seconds)
            if time.monotonic() >= next_report:
                rss = status_kb(server.pid, "VmRSS")
                rss_during.append(rss or 0)
                ok = [x for x in window if x is not None]
                print(f"  t={args.duration - (stop - time.monotonic()):5.1f}s attacker open {attacker.open_now:5d} "
                      f"(opened {attacker.opened}, closed by server {attacker.closed_by_server}); probes {len(window)}: "
                      f"max {max(ok) * 1000 if ok else float('nan'):.1f} ms, failed {window.count(None)}; server RSS {rss} kB", flush=True)
                window = []
                next_report += 5
            next_probe += 0.1
            time.sleep(max(0, next_probe - time.monotonic()))
        hwm = status_kb(server.pid, "VmHWM")
        process.join(timeout=30)
        if process.is_alive():
            process.kill()
        time.sleep(5)
        rss_after = status_kb(server.pid, "VmRSS")

        latencies.sort()
        over = sum(1 for x in latencies if x > 0.1)
        p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000 if latencies else float("nan")
        print(f"RESULT slowloris probes={len(latencies) + failures} p50_ms={p(0.5):.1f} p99_ms={p(0.99):.1f} "
              f"max_ms={(latencies[-1] * 1000 if latencies else float('nan')):.1f} over_100ms={over} failed={failures}")
        connects = sorted(CONNECT_TIMES)
        if connects:
            print(f"       of which connecting (the kernel's accept queue): p50 {connects[len(connects) // 2] * 1000:.1f} ms, "
                  f"p99 {connects[min(len(connects) - 1, int(0.99 * len(connects)))] * 1000:.1f} ms, max {connects[-1] * 1000:.1f} ms")
        print(f"       attacker: opened {attacker.opened}, closed by the server {attacker.closed_by_server}, most open at once "
              f"{attacker.peak_open}, connect failures {attacker.connect_failures}")
        print(f"       server RSS: before {rss_before} kB, peak (VmHWM) {hwm} kB, most seen during {max(rss_during, default=0)} kB, "
              f"5 s after {rss_after} kB; load {os.getloadavg()[0]:.1f}")
        warnings = [line for line in open(os.path.join(work, "server.log")) if '"level":"warning"' in line]
        print(f"       server warnings: {len(warnings)} lines" + (f"; last: {warnings[-1].strip()[:300]}" if warnings else ""))
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
