#!/usr/bin/env python3
"""The GeoPackage R-tree's one-pass batch insert against the insert trigger, with one binary:
1,000-point batches POSTed to /v1/write into a fresh POINT layer, (A) as built (the trigger
dropped for the batch and its rows added in one pass, Store/RTreeInsert.swift) and (B) with the
layer's insert trigger renamed, so Vltava does not find it and the trigger adds every row (the
path before). Prints each run's request times and checks the store (rtreecheck, integrity).

    Benchmarks/rtree-batch-ab.py BINARY [BATCHES=40] [VARIANT…=B A B A]
"""
import http.client, json, os, random, sqlite3, statistics, subprocess, sys, tempfile, time
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks"))
import benchsupport
binary, batches = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 40

def run(variant):
    scratch = tempfile.mkdtemp(prefix="rtree-ab-")
    store = os.path.join(scratch, "s.gpkg")
    subprocess.run([binary, "import", os.path.join(ROOT, "Fixtures/air/stations-prague.csv"), "--layer", "stations", "--db", store], check=True, stdout=subprocess.DEVNULL)
    token, tokens = benchsupport.write_token_file(scratch, "ab-")
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    def serve():
        port = 20000 + random.randrange(20000)
        p = benchsupport.serve(binary, store, port, tokens, "warning", stdout=subprocess.DEVNULL)
        assert benchsupport.wait_until_ready(f"http://127.0.0.1:{port}/readyz", p, 60)
        return p, port
    def post(c, body):
        c.request("POST", "/v1/write", body, headers); a = c.getresponse(); t = a.read()
        assert a.status == 200, t[:300]
    p, port = serve()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    post(c, json.dumps({"operations": [{"create": {"name": "spots", "geometry_type": "POINT", "columns": [{"name": "name", "type": "TEXT"}, {"name": "value", "type": "INTEGER"}]}}]}))
    c.close(); benchsupport.stop_process(p)
    if variant == "B":
        db = sqlite3.connect(store)
        (sql,) = db.execute("SELECT sql FROM sqlite_master WHERE name = 'rtree_spots_geom_insert'").fetchone()
        db.execute("DROP TRIGGER rtree_spots_geom_insert")
        db.execute(sql.replace('"rtree_spots_geom_insert"', '"old_path_insert"').replace("rtree_spots_geom_insert", "old_path_insert"))
        db.commit(); db.close()
    p, port = serve()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120); c.connect()
    rng = random.Random(1)
    times = []
    for b in range(batches):
        ops = [{"insert": "spots", "feature": {"type": "Feature", "geometry": {"type": "Point", "coordinates": [round(rng.uniform(14.25, 14.65), 6), round(rng.uniform(49.97, 50.15), 6)]}, "properties": {"name": f"p{b}-{i}", "value": i}}} for i in range(1000)]
        body = json.dumps({"operations": ops}).encode()
        t = time.perf_counter(); post(c, body); times.append((time.perf_counter() - t) * 1000)
    c.close(); benchsupport.stop_process(p)
    db = sqlite3.connect(store)
    check = (db.execute("SELECT count(*) FROM rtree_spots_geom").fetchone()[0], db.execute("SELECT count(*) FROM spots").fetchone()[0],
             db.execute("PRAGMA integrity_check").fetchone()[0], db.execute("SELECT rtreecheck('rtree_spots_geom')").fetchone()[0])
    times.sort()
    print(f"RESULT {variant}: {batches} batches of 1,000 points: median {statistics.median(times):.1f} ms, p90 {times[int(0.9 * len(times))]:.1f} ms, "
          f"mean {statistics.mean(times):.1f} ms; rtree rows {check[0]}, table rows {check[1]}, integrity {check[2]}, rtreecheck {check[3]}")
    db.close()
    subprocess.run(["rm", "-rf", scratch], check=False)

for variant in sys.argv[3:] or ["B", "A", "B", "A"]:
    run(variant)
