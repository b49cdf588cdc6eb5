"""Fit time of proxboost's exact engine against scikit-learn, measured in one interleaved run.

Setting: the synthetic regression model of docs/protocol.md, depth 3, nu = 0.05, loss ``lad``;
a small case (400 training rows, d = 100, T = 1000) and a large one (100,000 rows, d = 20,
T = 50 iterations: the tree is then ~99 % of the time, so 50 are representative).

For each case, five rounds; in each round, in turn: proxboost ``algo="gradient"``, proxboost
``algo="prox"``, scikit-learn ``GradientBoostingRegressor(loss="absolute_error")`` with the
same settings, and the floor: the same number of bare ``DecisionTreeRegressor`` fits on float32
input with ``check_input=False``. Reported: medians and ratios. Targets: ours / scikit-learn
<= 1.0 (small) and <= 1.05 (large); ours / floor <= 1.05 (large).

Usage: ``python benchmarks/bench_fit.py [--rounds 5] [--quick]``
"""

import argparse
import platform
import time

import numpy as np
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.tree import DecisionTreeRegressor

from proxboost import BoostingRegressor
from proxboost.experiments.datasets import load_dataset

CASES = {"small": dict(n=400, d=100, T=1000), "large": dict(n=100_000, d=20, T=50)}


def _time(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _floor(X32, target, T, depth):
    for _ in range(T):
        DecisionTreeRegressor(max_depth=depth).fit(X32, target, check_input=False)


def run_case(n, d, T, rounds, depth=3, nu=0.05):
    X, y, _ = load_dataset("regression", n_samples=n, n_features=d, random_state=0)
    X32 = X.astype(np.float32)
    target = np.sign(y - np.median(y))
    runners = {
        "proxboost gradient": (
            lambda: BoostingRegressor(
                loss="lad",
                algo="gradient",
                n_estimators=T,
                learning_rate=nu,
                max_depth=depth,
                random_state=0,
            ).fit(X, y)
        ),
        "proxboost prox": (
            lambda: BoostingRegressor(
                loss="lad",
                algo="prox",
                n_estimators=T,
                learning_rate=nu,
                max_depth=depth,
                random_state=0,
            ).fit(X, y)
        ),
        "scikit-learn GBR": (
            lambda: GradientBoostingRegressor(
                loss="absolute_error",
                n_estimators=T,
                learning_rate=nu,
                max_depth=depth,
                random_state=0,
            ).fit(X, y)
        ),
        "floor (bare trees)": lambda: _floor(X32, target, T, depth),
    }
    times = {k: [] for k in runners}
    for _ in range(rounds):
        for name, fn in runners.items():
            times[name].append(_time(fn))
    return {k: float(np.median(v)) for k, v in times.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--quick", action="store_true", help="smaller cases, to check the script runs"
    )
    args = parser.parse_args()
    cases = (
        CASES
        if not args.quick
        else {"small": dict(n=400, d=100, T=50), "large": dict(n=5000, d=20, T=10)}
    )
    print(
        f"machine: {platform.machine()}, {platform.processor() or 'cpu'}, python"
        f" {platform.python_version()}, rounds={args.rounds} (median)"
    )
    print(
        "\n| case | n x d, T | gradient | prox | scikit-learn | floor | gradient / sklearn | prox /"
        " sklearn | gradient / floor | prox / floor |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for case, cfg in cases.items():
        t = run_case(cfg["n"], cfg["d"], cfg["T"], args.rounds)
        g, p, s, f = (
            t["proxboost gradient"],
            t["proxboost prox"],
            t["scikit-learn GBR"],
            t["floor (bare trees)"],
        )
        print(
            f"| {case} | {cfg['n']} x {cfg['d']}, {cfg['T']} | {g:.3f} s | {p:.3f} s | {s:.3f} s |"
            f" {f:.3f} s | {g / s:.3f} | {p / s:.3f} | {g / f:.3f} | {p / f:.3f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
