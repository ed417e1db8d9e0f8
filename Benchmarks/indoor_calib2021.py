#!/usr/bin/env python3
"""calib2021 (Fixtures/indoor/calib2021): Vltava against scikit-learn in the same run, on the
dataset README's protocol: train on calibration_df.csv, test on the robot's track (errors to its
positions) and on the person's walk (distances to the walked path, a lower bound).

  python3 Benchmarks/indoor_calib2021.py [VLTAVA_BINARY]     (default .build/release/vltava)

Vltava: `vltava indoor import calibration_df.csv --beacon-columns 'rssi_*' --time-unit ns` (the
default model: unheard learned from the survey), then `vltava indoor evaluate --test-track …` for
every method at k = 3, 5, 10 and every RSSI representation (dBm, positive, exponential, powed),
scan by scan, and the tracks (smoothed and forward only).
scikit-learn: KNeighborsRegressor, brute force, k = 1, 3, 5, 10, uniform and distance weights, with
unheard anchors at -105 dBm (the README's baseline) and -103 dBm (Vltava's learned value).
Prints median, p90 and max per setting, and the default's ratios to scikit-learn's best.
Needs numpy and scikit-learn (scripts/install-deps.sh --bench).
"""
import csv
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.neighbors import KNeighborsRegressor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "Fixtures", "indoor", "calib2021")
# The tests' reference reads the files and measures distances to the path: one copy.
sys.path.insert(0, os.path.join(ROOT, "Tests", "Clients"))
from indoor_calib_reference import path_distance, read  # noqa: E402


# The default model, and each RSSI representation of Torres-Sospedra et al. (2015) with it.
MODELS = [f"unheard=learned-10,representation={r}" for r in ("dbm", "positive", "exponential", "powed")]


def stats(e):
    return np.median(e), np.percentile(e, 90), np.max(e)


def vltava(binary):
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        db = os.path.join(folder, "calib.gpkg")
        subprocess.run([binary, "indoor", "import", os.path.join(DATA, "calibration_df.csv"), "--venue", "calib2021",
                        "--beacon-columns", "rssi_*", "--time-unit", "ns", "--db", db], check=True, stdout=subprocess.DEVNULL)
        for test, extra in [("robot", []), ("walk", ["--path", os.path.join(DATA, "path_reference.csv")])]:
            started = time.time()
            out = subprocess.run([binary, "indoor", "evaluate", "--test-track", os.path.join(DATA, f"test_{test}_df.csv"),
                                  "--beacon-columns", "rssi_*", "--time-unit", "ns", "--k", "3,5,10", "--format", "json",
                                  "--models", ";".join(MODELS), "--db", db] + extra,
                                 check=True, capture_output=True, text=True).stdout
            for r in json.loads(out)["results"]:
                representation = r["model"].split("representation=")[1].split(",")[0]
                name = ("track " + r["track"]) if "track" in r else f"{r['method']} k={r['k']}"
                name = name if representation == "dbm" else f"{name} ({representation})"
                results[(test, name)] = (r["median"], r["p90"], r["max"], r["us_per_locate"])
            results[(test, "seconds")] = time.time() - started
    return results


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "release", "vltava")
    Xc, Yc = read("calibration_df.csv")
    Xr, Yr = read("test_robot_df.csv")
    Xw, _ = read("test_walk_df.csv", positions=False)
    with open(os.path.join(DATA, "path_reference.csv"), newline="") as f:
        segments = [[float(r[k]) for k in ("x0", "y0", "x1", "y1")] for r in csv.DictReader(f, skipinitialspace=True)]
    ours = vltava(binary)
    theirs = {}
    started = time.time()
    for fill in (-105, -103):
        fit = lambda X: np.where(np.isnan(X), fill, X)
        for k in (1, 3, 5, 10):
            for weights in ("uniform", "distance"):
                model = KNeighborsRegressor(n_neighbors=k, weights=weights, algorithm="brute").fit(fit(Xc), Yc)
                theirs[(fill, k, weights)] = (stats(np.linalg.norm(model.predict(fit(Xr)) - Yr, axis=1)),
                                              stats(path_distance(model.predict(fit(Xw)), segments)))
    their_seconds = time.time() - started
    print(f"calib2021: trained on 4,104 calibration scans; robot track 719 scans (metres to its positions), walk 876 scans (metres to the path)")
    print(f"vltava {binary}; scikit-learn {their_seconds:.1f} s for its 16 settings\n")
    print(f"{'setting':40} {'robot median  p90    max':26} {'walk median  p90    max':26}")
    for (fill, k, weights), (r, w) in sorted(theirs.items()):
        print(f"{f'scikit-learn unheard {fill} k={k} {weights}':40} {r[0]:6.3f} {r[1]:6.3f} {r[2]:6.3f}       {w[0]:6.3f} {w[1]:6.3f} {w[2]:6.3f}")
    names = sorted({name for (test, name) in ours if name != "seconds"})
    for name in names:
        r, w = ours.get(("robot", name)), ours.get(("walk", name))
        print(f"{'Vltava ' + name:40} {r[0]:6.3f} {r[1]:6.3f} {r[2]:6.3f}       {w[0]:6.3f} {w[1]:6.3f} {w[2]:6.3f}   ({r[3]:.1f} µs/scan)")
    # The README's table: k ≤ 5, unheard -105.
    readme = {key: v for key, v in theirs.items() if key[0] == -105 and key[1] <= 5}
    best = min(readme.values(), key=lambda v: (v[0][0], v[0][1]))
    default = ours[("robot", "gaussian k=10")]
    smooth = ours[("robot", "track smooth")]
    print(f"\nrobot: the default (gaussian k=10) median {default[0]:.3f} = {default[0] / best[0][0]:.2f} × scikit-learn's best of the README's settings "
          f"({best[0][0]:.3f}); p90 {default[1]:.3f} against {min(v[0][1] for v in readme.values()):.3f}")
    print(f"robot: the smoothed track's median {smooth[0]:.3f} = {smooth[0] / default[0]:.2f} × the default scan by scan")
    return 0


if __name__ == "__main__":
    sys.exit(main())
