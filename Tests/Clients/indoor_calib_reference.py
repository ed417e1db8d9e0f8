#!/usr/bin/env python3
"""scikit-learn's kNN on calib2021 (Fixtures/indoor/calib2021), the reference numbers of
Tests/IndoorTests/RealSurveyTests.swift: trained on calibration_df.csv, tested on the robot track
(distance to its positions) and on the walk (distance to the nearest segment of the walked path).
Unheard anchors are -103 dBm, Vltava's learned default on this survey (the weakest strength heard,
-93 dBm, minus 10). Needs numpy and scikit-learn (scripts/install-deps.sh --bench).

  python3 Tests/Clients/indoor_calib_reference.py
"""
import csv
import os

import numpy as np
from sklearn.neighbors import KNeighborsRegressor

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Fixtures", "indoor", "calib2021")
COLUMNS = [f"rssi_{i}" for i in range(1, 7)]


def read(name, positions=True):
    with open(os.path.join(HERE, name), newline="") as f:
        rows = list(csv.DictReader(f, skipinitialspace=True))
    X = np.array([[float(r[c]) if r[c] != "" else np.nan for c in COLUMNS] for r in rows])
    Y = np.array([[float(r["x"]), float(r["y"])] for r in rows]) if positions else None
    return X, Y


def path_distance(P, segments):
    best = np.full(len(P), np.inf)
    for x0, y0, x1, y1 in segments:
        a, b = np.array([x0, y0]), np.array([x1, y1])
        t = np.clip(((P - a) @ (b - a)) / ((b - a) @ (b - a)), 0, 1)
        best = np.minimum(best, np.linalg.norm(P - (a + t[:, None] * (b - a)), axis=1))
    return best


def main():
    Xc, Yc = read("calibration_df.csv")
    Xr, Yr = read("test_robot_df.csv")
    Xw, _ = read("test_walk_df.csv", positions=False)
    with open(os.path.join(HERE, "path_reference.csv"), newline="") as f:
        segments = [[float(v) for v in (r["x0"], r["y0"], r["x1"], r["y1"])] for r in csv.DictReader(f, skipinitialspace=True)]
    fill = np.nanmin(Xc) - 10
    print(f"unheard = {fill} dBm")
    fit = lambda X: np.where(np.isnan(X), fill, X)
    for k in (3, 5, 10):
        for weights in ("uniform", "distance"):
            model = KNeighborsRegressor(n_neighbors=k, weights=weights, algorithm="brute").fit(fit(Xc), Yc)
            er = np.linalg.norm(model.predict(fit(Xr)) - Yr, axis=1)
            ew = path_distance(model.predict(fit(Xw)), segments)
            print(f"k={k:2d} {weights:8s} robot median {np.median(er):.6f} p90 {np.percentile(er, 90):.6f} max {er.max():.6f}"
                  f"  walk median {np.median(ew):.6f} p90 {np.percentile(ew, 90):.6f} max {ew.max():.6f}")


if __name__ == "__main__":
    main()
