"""CPU-hours of the paper's full real-world protocol with each tree engine (measured by sampling).

The protocol (``docs/protocol.md``) fits, per dataset, loss and split, every grid point of
every boosting algorithm with T_max = 1000 on the training half and its validation curve:
3 algorithms x 15 points (depth x nu) and 3 proximal ones x 90 points (x lambda), i.e. 105 fits
per depth, then 6 refits. This script measures, per (dataset, depth, engine), fits of
``algo="prox"`` (loss ``lad`` for regression, ``hinge`` for classification, nu = 0.1) on the
dataset's training-half size with a quarter as eval set, with T and 1 iterations (CPU time of
the process, single-threaded fits: robust to other jobs on a shared machine):

    per iteration = (t(T) - t(1)) / (T - 1),   one fit = t(1) - per iteration + T_max x per
    iteration

and multiplies:

    CPU-hours = sum over datasets of  n_losses x 20 splits x 105 x sum_depth (one fit)

(refits and the baselines are not counted). T is chosen per engine so that a sample costs a few
seconds (``--sample-seconds``); the whole run takes about 10-15 minutes of one core.
An unavailable dataset (``advertisements`` here) is timed on random data of its shape.

Usage: ``python benchmarks/protocol_cost.py [--datasets engel,crabs] [--engines
exact,hist,sklearn]``
"""

import argparse
import os
import time

import numpy as np

from proxboost import BoostingClassifier, BoostingRegressor
from proxboost.experiments.datasets import dataset_info, is_available, load_dataset

DATASETS = [
    "whitewine",
    "redwine",
    "bostonhousing",
    "crabs",
    "engel",
    "sniffer",
    "adult",
    "advertisements",
    "spam",
]
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


def _fit_cpu(X, y, task, depth, engine, T):
    n = len(y) // 2
    Est, loss = (
        (BoostingClassifier, "hinge") if task == "classification" else (BoostingRegressor, "lad")
    )
    est = Est(
        loss=loss,
        algo="prox",
        n_estimators=T,
        learning_rate=0.1,
        max_depth=depth,
        engine=engine,
        random_state=0,
    )
    t0 = time.process_time()
    est.fit(X[:n], y[:n], eval_set=(X[n : n + n // 2], y[n : n + n // 2]))
    return time.process_time() - t0


def fit_seconds(X, y, task, depth, engine, sample_seconds):
    """Seconds of one T_max fit, extrapolated from a sampled fit (see the module docstring)."""
    t1 = _fit_cpu(X, y, task, depth, engine, 1)
    t5 = _fit_cpu(X, y, task, depth, engine, 5)
    per_iter = max(t5 - t1, 1e-9) / 4
    T = int(min(T_MAX, max(5, sample_seconds / per_iter)))
    if T > 5:
        per_iter = max(_fit_cpu(X, y, task, depth, engine, T) - t1, 1e-9) / (T - 1)
    return max(t1 - per_iter, 0.0) + T_MAX * per_iter, T


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--engines", default="exact,hist,sklearn")
    parser.add_argument(
        "--sample-seconds", type=float, default=4.0, help="target length of a sampled fit"
    )
    args = parser.parse_args()
    engines = args.engines.split(",")
    warm = np.random.default_rng(0).normal(size=(50, 3))
    for engine in engines:  # compile / warm up once
        BoostingRegressor(n_estimators=2, engine=engine).fit(warm, warm[:, 0])
    print(
        "| dataset | n x d | data | "
        + " | ".join(f"{e}: s/fit d1, d3, d5 (T sampled) | {e}: CPU-h" for e in engines)
        + " |"
    )
    print("|---|---|---|" + "---|---|" * len(engines))
    totals = dict.fromkeys(engines, 0.0)
    t_start = time.perf_counter()
    for name in args.datasets.split(","):
        X, y, task, how = _data(name)
        cells = []
        for engine in engines:
            times, Ts = [], []
            for depth in (1, 3, 5):
                t, T = fit_seconds(X, y, task, depth, engine, args.sample_seconds)
                times.append(t)
                Ts.append(T)
            hours = N_LOSSES[task] * N_SPLITS * FITS_PER_DEPTH * sum(times) / 3600
            totals[engine] += hours
            cells.append(
                f"{times[0]:.2f}, {times[1]:.2f}, {times[2]:.2f} ({min(Ts)}-{max(Ts)}) |"
                f" {hours:.2f}"
            )
        print(
            f"| {name} | {X.shape[0]} x {X.shape[1]} | {how} | " + " | ".join(cells) + " |",
            flush=True,
        )
    print("| **total** | | | " + " | ".join(f" | **{totals[e]:.1f}**" for e in engines) + " |")
    print(f"\nmeasured in {time.perf_counter() - t_start:.0f} s; load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
