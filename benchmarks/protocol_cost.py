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

With ``--base <checkout>`` (a checkout of an earlier revision, e.g. ``git worktree add ../base
<commit>``; its ``src/proxboost`` is imported as ``proxboost_base``, as ``bench_weights.py``
does), the ``exact`` engine's CPU-hours of this revision against the base's instead, both in
this process: dataset by dataset, the two revisions one after the other (the order alternating
between datasets), each after unmeasured 2-iteration fits of the sampled settings (compiled code
loaded or compiled outside the timing); the table gives both and the ratio this / base per
dataset, over the six regression datasets and over the eight obtainable ones
(``advertisements``, timed on random data, is left out).

Usage: ``python benchmarks/protocol_cost.py [--datasets engel,crabs] [--engines
exact,hist,sklearn]``, ``python benchmarks/protocol_cost.py --base ../base [--write-docs]``
"""

import argparse
import datetime
import os
import subprocess
import time

import numpy as np
from bench_weights import import_base
from shared import commit, load, machine, write_between_markers

import proxboost
from proxboost import BoostingRegressor
from proxboost.experiments.datasets import dataset_info, is_available, load_dataset
from proxboost.experiments.store.naming import REGRESSION_DATASETS

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


def _fit_cpu(X, y, task, depth, engine, T, package=None):
    """CPU seconds of one sampled fit (``package``: the proxboost to fit with; None: this one)."""
    n = len(y) // 2
    classes = package or proxboost
    Est, loss = (
        (classes.BoostingClassifier, "hinge")
        if task == "classification"
        else (classes.BoostingRegressor, "lad")
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


def fit_seconds(X, y, task, depth, engine, sample_seconds, package=None):
    """Seconds of one T_max fit, extrapolated from a sampled fit (see the module docstring)."""
    t1 = _fit_cpu(X, y, task, depth, engine, 1, package)
    t5 = _fit_cpu(X, y, task, depth, engine, 5, package)
    per_iter = max(t5 - t1, 1e-9) / 4
    T = int(min(T_MAX, max(5, sample_seconds / per_iter)))
    if T > 5:
        per_iter = max(_fit_cpu(X, y, task, depth, engine, T, package) - t1, 1e-9) / (T - 1)
    return max(t1 - per_iter, 0.0) + T_MAX * per_iter, T


REGRESSION = REGRESSION_DATASETS
OBTAINABLE = REGRESSION + ("adult", "spam")


def _warm(package, X, y, task):
    """Compile, or load from numba's cache, what the sampled fits of ``package`` will run."""
    for depth in (1, 3, 5):
        _fit_cpu(X, y, task, depth, "exact", 2, package)


def against_base(base, write_docs):
    """This revision's CPU-hours against ``base``'s, dataset by dataset (module docstring)."""
    other = import_base(base)
    base_commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=base
    ).stdout.strip()
    lines = [
        f"Measured {datetime.date.today()} at commit {commit()} against {base_commit}"
        f" ({machine()}); the exact engine's CPU-hours of the paper protocol (this script's"
        " sampling), both revisions in one process, dataset by dataset, the order alternating"
        " (`python benchmarks/protocol_cost.py --base <checkout> --write-docs`):",
        "",
        "| dataset | base CPU-h | this CPU-h | this / base | load before → after |",
        "|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    hours = {}
    for i, dataset in enumerate(OBTAINABLE):
        X, y, task, _ = _data(dataset)
        before = load()
        sides = (proxboost, other) if i % 2 else (other, proxboost)
        measured = {}
        for package in sides:
            _warm(package, X, y, task)
            seconds = [fit_seconds(X, y, task, d, "exact", 4.0, package)[0] for d in (1, 3, 5)]
            measured[package] = N_LOSSES[task] * N_SPLITS * FITS_PER_DEPTH * sum(seconds) / 3600
        hours[dataset] = b, t = measured[other], measured[proxboost]
        lines.append(
            f"| {dataset} | {b:.3f} | {t:.3f} | {t / b:.2f} | {before:.2f} → {load():.2f} |"
        )
        print(lines[-1], flush=True)
    for name, group, target in (
        ("six regression datasets", REGRESSION, 0.4),
        ("eight obtainable datasets", OBTAINABLE, 0.6),
    ):
        b = sum(hours[d][0] for d in group)
        t = sum(hours[d][1] for d in group)
        lines.append(f"| **{name}** | {b:.2f} | {t:.2f} | **{t / b:.2f}** (target ≤ {target}) | |")
        print(lines[-1], flush=True)
    if write_docs:
        write_between_markers("engines.md", "protocol-cost", "\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--engines", default="exact,hist,sklearn")
    parser.add_argument(
        "--sample-seconds", type=float, default=4.0, help="target length of a sampled fit"
    )
    parser.add_argument("--base", help="a checkout of an earlier revision (imported from its src/)")
    parser.add_argument("--write-docs", action="store_true", help="with --base: into engines.md")
    args = parser.parse_args()
    if args.base:
        return against_base(os.path.abspath(args.base), args.write_docs)
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
