"""Cost of several quantiles in one model against the separate single-level models.

For each case (rows n, algorithm, engine), each round fits, in turn, the model of the three levels
``tau=[0.05, 0.5, 0.95]`` and the three single-level models ``tau=0.05``, ``0.5`` and ``0.95``
(same settings), each timed by the wall clock around ``fit``. The script prints, per case, the
median over rounds of the joint fit's time, of the three separate fits' summed time, and of the
per-round ratio joint / separate (< 1: the joint model is cheaper). With ``--write-docs`` it
writes the table, the date, the load and the commit into ``docs/quantiles.md`` between the
``bench-quantile-levels`` markers.

Usage: ``python benchmarks/bench_quantile_levels.py [--rounds 3] [--T 100] [--write-docs]``.
The machine may be shared: the load average is printed (and written) with the results.
"""

import argparse
import datetime
import os
import subprocess
import time

import numpy as np
from shared import write_between_markers

from proxboost import BoostingRegressor

LEVELS = [0.05, 0.5, 0.95]
CASES = [  # (n, algo, engine)
    (400, "gradient", "exact"),
    (400, "prox", "exact"),
    (4000, "gradient", "exact"),
    (4000, "prox", "exact"),
    (4000, "prox", "hist"),
]


def data(n, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-2, 2, size=(n, 5))
    y = np.sin(X[:, 0]) + X[:, 2] + (0.2 + np.abs(X[:, 1])) * rng.standard_t(4, size=n)
    return X, y


def seconds(est, X, y):
    start = time.perf_counter()
    est.fit(X, y)
    return time.perf_counter() - start


def measure(n, algo, engine, rounds, T):
    X, y = data(n)
    settings = dict(loss="pinball", algo=algo, engine=engine, n_estimators=T, random_state=0)
    BoostingRegressor(**{**settings, "n_estimators": 2, "tau": LEVELS}).fit(X, y)  # compile
    joint, separate = [], []
    for _ in range(rounds):
        joint.append(seconds(BoostingRegressor(**settings, tau=LEVELS), X, y))
        separate.append(sum(seconds(BoostingRegressor(**settings, tau=t), X, y) for t in LEVELS))
    ratios = np.array(joint) / np.array(separate)
    return float(np.median(joint)), float(np.median(separate)), float(np.median(ratios))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--T", type=int, default=100)
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    load_before = os.getloadavg()[0]
    rows = []
    for n, algo, engine in CASES:
        joint, separate, ratio = measure(n, algo, engine, args.rounds, args.T)
        rows.append(
            f"| {n} | `{algo}` | `{engine}` | {joint:.2f} s | {separate:.2f} s | {ratio:.2f} |"
        )
        print(rows[-1], flush=True)
    load_after = os.getloadavg()[0]
    stamp = datetime.date.today().isoformat()
    text = (
        f"Measured {stamp} at commit {commit}, load average {load_before:.1f} before and "
        f"{load_after:.1f} after (2 cores, shared), T = {args.T}, depth 3, 5 features, "
        f"median of {args.rounds} interleaved rounds "
        "(`python benchmarks/bench_quantile_levels.py --write-docs`):\n\n"
        "| rows | algo | engine | one model of 3 levels | 3 separate levels | ratio |\n"
        "|---|---|---|---|---|---|\n" + "\n".join(rows)
    )
    print(text)
    if args.write_docs:
        write_between_markers("quantiles.md", "bench-quantile-levels", text)


if __name__ == "__main__":
    main()
