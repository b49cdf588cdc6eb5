"""CPU-hours of the paper's full real-world protocol (SPEC §5.4) with each tree engine.

The protocol fits, per dataset, loss and split, every grid point of every boosting algorithm
with T_max = 1000 on the training half and its validation curve: 3 algorithms x 15 points
(depth x ν) and 3 proximal ones x 90 points (x λ), i.e. 105 fits per depth, then 6 refits.
This script measures one fit per (dataset, depth, engine) — ``algo="prox"``, loss ``lad`` for
regression and ``hinge`` for classification, ν = 0.1, on the dataset's training-half size with
a quarter as eval set, and multiplies:

    CPU-hours = sum over datasets of  n_losses x 20 splits x 105 x sum_depth t(depth)

(refits and the baselines are not counted). Fits of the exact engine on the large datasets are
timed with fewer iterations and scaled to 1000 (per-iteration cost is constant in T).
An unavailable dataset (``advertisements`` here) is timed on random data of its shape.

Usage: ``python benchmarks/protocol_cost.py [--datasets engel,crabs] [--engines exact,hist]``
"""

import argparse
import time

import numpy as np

from proxboost import BoostingClassifier, BoostingRegressor
from proxboost.datasets import dataset_info, is_available, load_dataset

DATASETS = ["whitewine", "redwine", "bostonhousing", "crabs", "engel", "sniffer", "adult", "advertisements", "spam"]
N_LOSSES = {"regression": 3, "classification": 2}
FITS_PER_DEPTH = 3 * 5 + 3 * 5 * 6  # gradient-type algos x ν, proximal ones x ν x λ
T_MAX, N_SPLITS = 1000, 20


def _data(name):
    info = dataset_info(name)
    if is_available(name):
        X, y, _ = load_dataset(name)
        return X, y, info.task, "measured"
    rng = np.random.default_rng(0)
    X = rng.normal(size=(info.n, info.d))
    y = np.where(X[:, 0] > 0, 1.0, -1.0) if info.task == "classification" else X[:, 0]
    return X, y, info.task, "random data of its shape"


def fit_seconds(X, y, task, depth, engine, T):
    n = len(y) // 2
    Est, loss = (BoostingClassifier, "hinge") if task == "classification" else (BoostingRegressor, "lad")
    est = Est(loss=loss, algo="prox", n_estimators=T, learning_rate=0.1, max_depth=depth, engine=engine, random_state=0)
    t0 = time.perf_counter()
    est.fit(X[:n], y[:n], eval_set=(X[n : n + n // 2], y[n : n + n // 2]))
    return (time.perf_counter() - t0) * T_MAX / T


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--engines", default="exact,hist")
    parser.add_argument("--budget", type=float, default=20.0, help="seconds per timed fit before T is reduced")
    args = parser.parse_args()
    engines = args.engines.split(",")
    warm = np.random.default_rng(0).normal(size=(50, 3))
    for engine in engines:  # compile / warm up once
        BoostingRegressor(n_estimators=2, engine=engine).fit(warm, warm[:, 0])
    print("| dataset | n x d | data | " + " | ".join(f"{e}: s/fit d1, d3, d5 | {e}: CPU-h" for e in engines) + " |")
    print("|---|---|---|" + "---|---|" * len(engines))
    totals = dict.fromkeys(engines, 0.0)
    for name in args.datasets.split(","):
        X, y, task, how = _data(name)
        cells = []
        for engine in engines:
            times = []
            for depth in (1, 3, 5):
                T = 20
                t = fit_seconds(X, y, task, depth, engine, T)
                if t < args.budget:  # affordable: time the full T_max
                    t = fit_seconds(X, y, task, depth, engine, T_MAX)
                times.append(t)
            hours = N_LOSSES[task] * N_SPLITS * FITS_PER_DEPTH * sum(times) / 3600
            totals[engine] += hours
            cells.append(f"{times[0]:.2f}, {times[1]:.2f}, {times[2]:.2f} | {hours:.2f}")
        print(f"| {name} | {X.shape[0]} x {X.shape[1]} | {how} | " + " | ".join(cells) + " |", flush=True)
    print("| **total** | | | " + " | ".join(f" | **{totals[e]:.1f}**" for e in engines) + " |")


if __name__ == "__main__":
    main()
