#!/usr/bin/env python3
"""Leave-one-out on the WMU library survey: Vltava against scikit-learn, in the same run.

  python3 Benchmarks/indoor_sklearn.py [VLTAVA_BINARY]     (default .build/release/vltava)

Vltava's side: the survey (Fixtures/indoor/ble-rssi-wmu-labeled.csv) imported as the demo store
imports it (`vltava indoor import … --grid letter-column --cell-size 1`), then
`vltava indoor evaluate --format json --errors` for kNN and weighted kNN at k = 1, 3, 5 on
every survey scan as a fingerprint.

scikit-learn's side, on the same features (the 13 beacons' dBm, -200 for a beacon not heard:
the CSV's own cells, which is also how Vltava counts an unheard beacon) and the same positions
(letter = column x with A = 1, number = row y): KNeighborsClassifier (the cell label by vote;
its error is the distance between the voted cell and the true one) and KNeighborsRegressor (x
and y as the neighbours' mean), uniform and distance weights, brute force, leave-one-out by
refitting without each scan in turn. Errors are in cells; "exact" is the share of scans placed
in their own cell (the classifier: the right label; the regressor and Vltava: within half a
cell on both axes). Percentiles interpolate linearly (NumPy's default), as Vltava's do.

Needs numpy and scikit-learn (scripts/install-deps.sh --bench installs them with pip).
"""
import csv
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SURVEY = os.path.join(ROOT, "Fixtures", "indoor", "ble-rssi-wmu-labeled.csv")
KS = [1, 3, 5]
DEFAULT = {}


def position(label):
    return float(ord(label[0].upper()) - 64), float(label[1:])


def vltava(binary):
    with tempfile.TemporaryDirectory() as folder:
        db = os.path.join(folder, "wmu.gpkg")
        subprocess.run([binary, "indoor", "import", SURVEY, "--venue", "wmu_library", "--grid", "letter-column",
                        "--cell-size", "1", "--floor", "1", "--db", db], check=True, stdout=subprocess.DEVNULL)
        started = time.time()
        out = subprocess.run([binary, "indoor", "evaluate", "--venue", "wmu_library", "--k", ",".join(map(str, KS)),
                              "--method", "knn,wknn", "--format", "json", "--errors", "--db", db],
                             check=True, capture_output=True, text=True).stdout
        seconds = time.time() - started
        # Vltava's default (the probabilistic model, k = 10), beside the kNN settings.
        default = json.loads(subprocess.run([binary, "indoor", "evaluate", "--venue", "wmu_library", "--k", "10", "--method", "gaussian",
                                             "--format", "json", "--errors", "--db", db], check=True, capture_output=True, text=True).stdout)
    r = default["results"][0]
    DEFAULT.update({"errors": np.array(r["errors_cells"], float), "exact": r["exact_share"], "us": r["us_per_locate"]})
    answer = json.loads(out)
    results = {}
    for r in answer["results"]:
        results[(r["method"], r["k"])] = {"errors": np.array(r["errors_cells"], float), "exact": r["exact_share"],
                                          "us": r["us_per_locate"]}
    return results, seconds


def sklearn_loo(X, labels, P):
    results = {}
    n = len(X)
    for k in KS:
        for weights in ["uniform", "distance"]:
            started = time.time()
            cls_err, reg_err, cls_exact, reg_exact = np.empty(n), np.empty(n), 0, 0
            for i in range(n):
                keep = np.arange(n) != i
                c = KNeighborsClassifier(n_neighbors=k, weights=weights, algorithm="brute").fit(X[keep], labels[keep])
                r = KNeighborsRegressor(n_neighbors=k, weights=weights, algorithm="brute").fit(X[keep], P[keep])
                voted = c.predict(X[i:i + 1])[0]
                cls_err[i] = np.hypot(*(np.array(position(voted)) - P[i]))
                cls_exact += voted == labels[i]
                est = r.predict(X[i:i + 1])[0]
                reg_err[i] = np.hypot(*(est - P[i]))
                reg_exact += bool((np.abs(est - P[i]) < 0.5).all())
            seconds = time.time() - started
            results[("classifier", weights, k)] = {"errors": cls_err, "exact": cls_exact / n, "seconds": seconds / 2}
            results[("regressor", weights, k)] = {"errors": reg_err, "exact": reg_exact / n, "seconds": seconds / 2}
    return results


def stats(errors):
    return np.median(errors), np.percentile(errors, 90), errors.max()


def histogram(errors):
    edges = [0, 1e-9, 1.0 + 1e-9, 2.0 + 1e-9, 3.0 + 1e-9, 5.0 + 1e-9, np.inf]
    counts, _ = np.histogram(errors, bins=edges)
    return [f"{100 * c / len(errors):5.1f}" for c in counts]


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "release", "vltava")
    rows = list(csv.DictReader(open(SURVEY, newline="")))
    beacons = [c for c in rows[0] if c.startswith("b")]
    X = np.array([[float(r[b]) for b in beacons] for r in rows])
    labels = np.array([r["location"] for r in rows])
    P = np.array([position(l) for l in labels])

    ours, our_seconds = vltava(binary)
    started = time.time()
    theirs = sklearn_loo(X, labels, P)
    their_seconds = time.time() - started

    print(f"WMU library survey: {len(X)} scans, {len(beacons)} beacons, {len(set(labels))} cells; leave-one-out, errors in cells")
    print(f"vltava {binary}: {our_seconds:.1f} s for all six settings; scikit-learn: {their_seconds:.1f} s (refitting per scan)\n")
    header = f"{'k':>2}  {'weights':8}  {'Vltava kNN (median p90 max exact)':36}  {'sklearn Regressor':28}  {'sklearn Classifier':28}"
    print(header)
    print("-" * len(header))
    for k in KS:
        for method, weights in [("knn", "uniform"), ("wknn", "distance")]:
            o = ours[(method, k)]
            m, p, x = stats(o["errors"])
            cell = f"{m:5.3f} {p:5.3f} {x:6.3f} {100 * o['exact']:5.1f} %"
            r = theirs[("regressor", weights, k)]
            c = theirs[("classifier", weights, k)]
            rm, rp, rx = stats(r["errors"])
            cm, cp, cx = stats(c["errors"])
            print(f"{k:>2}  {weights:8}  {cell:36}  {rm:5.3f} {rp:5.3f} {rx:6.3f} {100 * r['exact']:5.1f} %  "
                  f"{cm:5.3f} {cp:5.3f} {cx:6.3f} {100 * c['exact']:5.1f} %")
    print()
    best_theirs = min(theirs.items(), key=lambda kv: (np.median(kv[1]["errors"]), np.percentile(kv[1]["errors"], 90)))
    best_ours = min(ours.items(), key=lambda kv: (np.median(kv[1]["errors"]), np.percentile(kv[1]["errors"], 90)))
    (model, weights, k), tb = best_theirs
    (method, ko), ob = best_ours
    print(f"best by median, then p90: scikit-learn {model} {weights} k={k}: median {np.median(tb['errors']):.3f}, "
          f"p90 {np.percentile(tb['errors'], 90):.3f}; Vltava {method} k={ko}: median {np.median(ob['errors']):.3f}, "
          f"p90 {np.percentile(ob['errors'], 90):.3f}")
    verdict = (np.median(ob["errors"]), np.percentile(ob["errors"], 90)) <= (np.median(tb["errors"]), np.percentile(tb["errors"], 90))
    print("Vltava is at least as accurate as scikit-learn's best setting" if verdict else "Vltava is LESS accurate than scikit-learn's best setting")
    print("\nerror distribution of the two best settings, % of scans per error in cells:")
    print(f"{'':28}  {'0':>5}  {'≤1':>5}  {'≤2':>5}  {'≤3':>5}  {'≤5':>5}  {'>5':>5}")
    print(f"{'Vltava ' + method + ' k=' + str(ko):28}  " + "  ".join(histogram(ob["errors"])))
    print(f"{'sklearn ' + model + ' ' + weights + ' k=' + str(k):28}  " + "  ".join(histogram(tb["errors"])))
    dm, dp, dx = stats(DEFAULT["errors"])
    best_p90 = min(np.percentile(v["errors"], 90) for v in theirs.values())
    print(f"\nVltava's default (gaussian k=10): median {dm:.3f} = {dm / np.median(tb['errors']):.2f} × scikit-learn's best median; "
          f"p90 {dp:.3f} against scikit-learn's best p90 {best_p90:.3f}; max {dx:.3f}; exact {100 * DEFAULT['exact']:.1f} %; {DEFAULT['us']:.2f} µs per locate")
    print(f"\nµs per locate, Vltava (debug or release as built): " + ", ".join(f"{m} k={kk}: {v['us']:.2f}" for (m, kk), v in sorted(ours.items())))
    return 0 if verdict else 1


if __name__ == "__main__":
    sys.exit(main())
