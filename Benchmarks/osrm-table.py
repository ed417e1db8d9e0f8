#!/usr/bin/env python3
"""The festival app's question over HTTP: the walking times between every pair of 10 stages as
one OSRM table request, against 100 single OSRM route requests (one connection, kept alive),
from a running `vltava serve` on the demo store. Prints the best of 5 rounds of each and checks
that the table's 100 distances equal the routes'. Standard library only.

  python3 Benchmarks/osrm-table.py http://127.0.0.1:8080
"""
import http.client
import json
import sys
import time
import urllib.parse

# Ten pens of the zoo as stages (as in Tests/ServerTests/StandardClientTests.swift).
STAGES = [(14.41065, 50.116017), (14.406937, 50.119896), (14.404921, 50.118809), (14.402208, 50.119129), (14.404378, 50.117699),
          (14.407006, 50.116108), (14.408996, 50.115365), (14.409289, 50.116703), (14.406123, 50.117445), (14.405187, 50.115756)]


def main():
    base = urllib.parse.urlparse(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8080")
    connection = http.client.HTTPConnection(base.hostname, base.port, timeout=30)

    def get(path):
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
        if response.status != 200:
            sys.exit(f"{path}: {response.status} {body[:200]!r}")
        return json.loads(body)

    coordinates = ";".join(f"{lon},{lat}" for lon, lat in STAGES)
    table_best, routes_best, table, routes = float("inf"), float("inf"), None, None
    for _ in range(5):
        start = time.perf_counter()
        table = get(f"/table/v1/foot/{coordinates}?annotations=duration,distance")
        table_best = min(table_best, time.perf_counter() - start)
        start = time.perf_counter()
        routes = [[get(f"/route/v1/foot/{a[0]},{a[1]};{b[0]},{b[1]}?overview=false")["routes"][0]["distance"] for b in STAGES] for a in STAGES]
        routes_best = min(routes_best, time.perf_counter() - start)
    equal = sum(table["distances"][i][j] == routes[i][j] for i in range(10) for j in range(10))
    print(f"OSRM over HTTP: 10x10 table {table_best * 1000:.2f} ms, 100 routes {routes_best * 1000:.2f} ms "
          f"({routes_best / table_best:.1f}x), equal distances {equal}/100")


if __name__ == "__main__":
    main()
