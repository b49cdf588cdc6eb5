"""Per-iteration wall time of the boosting loop: the compiled loop against the Python reference.

Setting (the tracker's target): crabs' training half (100 x 4; a seeded synthetic 100 x 4 when
crabs.csv is not available), ``loss="lad"``, ``algo="prox"``, depth 3, nu = 0.1, T = 1000, the
other half as eval set. Per path: one warm-up fit, then the median of 5 fits, divided by T.
Prints the date, ``uptime``'s load and the commit: the machine may be busy.

The compiled loop's line also splits that time: the median of 5 fits of T = 1 is a fit's fixed
cost (scikit-learn's checks of the parameters and the data, the engine's binning, the set-up
and the collection of the results), and (fit of T - fit of 1) / (T - 1) the cost of one more
iteration. The target is judged on the first figure, the whole fit divided by T.

Usage: ``PROXBOOST_DATA_MIRROR=... python benchmarks/bench_iteration.py [--rounds 5]``
"""

import argparse
import datetime
import os
import subprocess
import time

import numpy as np

from proxboost import BoostingRegressor, _compiled_loop


def _data():
    try:
        from proxboost.experiments.datasets import load_dataset

        X, y, _ = load_dataset("crabs", download=False)
        source = "crabs"
    except Exception:  # noqa: BLE001 - any missing-data error: the synthetic stand-in
        rng = np.random.RandomState(0)
        X = rng.normal(size=(200, 4))
        y = X @ [1.0, 0.5, 0.2, 0.0] + rng.standard_t(2, size=200)
        source = "synthetic 200 x 4 (crabs not available)"
    perm = np.random.RandomState(0).permutation(len(y))
    half = len(y) // 2
    return X[perm[:half]], y[perm[:half]], X[perm[half:]], y[perm[half:]], source


def _per_iteration(force_python, data, T, rounds):
    _compiled_loop.FORCE_PYTHON = force_python
    X, y, Xe, ye, _ = data

    def fit():
        est = BoostingRegressor(
            loss="lad", algo="prox", max_depth=3, learning_rate=0.1, n_estimators=T
        )
        t0 = time.perf_counter()
        est.fit(X, y, eval_set=(Xe, ye))
        return time.perf_counter() - t0

    fit()  # warm-up (compilation)
    return float(np.median([fit() for _ in range(rounds)])) / T


def _fixed_cost(data, rounds):
    """The median wall time (s) of a compiled fit of T = 1: a fit's fixed cost."""
    return _per_iteration(False, data, 1, rounds)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--T", type=int, default=1000)
    args = parser.parse_args()
    data = _data()
    here = os.path.dirname(os.path.abspath(__file__))
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=here
    ).stdout.strip()
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"{datetime.datetime.now().isoformat(timespec='seconds')}  commit {commit}")
    print(f"uptime: {load}")
    print(f"data: {data[4]}, {len(data[1])} training rows; T = {args.T}, median of {args.rounds}")
    python = _per_iteration(True, data, args.T, args.rounds)
    compiled = _per_iteration(False, data, args.T, args.rounds)
    print(f"python loop   {python * 1e6:8.1f} us / iteration")
    fixed = _fixed_cost(data, args.rounds)
    added = (compiled * args.T - fixed) / (args.T - 1)
    print(f"compiled loop {compiled * 1e6:8.1f} us / iteration  (x{python / compiled:.1f})")
    print(
        f"  of which a fit's fixed cost (T = 1) {fixed * 1e3:.2f} ms and "
        f"{added * 1e6:.1f} us per added iteration"
    )


if __name__ == "__main__":
    main()
