"""Cost of row weights: this revision against a base revision, in one process, interleaved.

The base revision (any earlier checkout of this repository, e.g. made with ``git worktree add
../base <commit>``) is imported from its ``src/proxboost`` under the name ``proxboost_base``,
next to the working tree's ``proxboost``. Each round fits, in turn:

* ``base``: the base revision, no weights;
* ``new``: this revision, no weights;
* ``new+w``: this revision with integer weights 0..3 (a quarter of the rows at weight 0), or
  1..4 with ``--weights 1-4`` (every row in every tree fit: the cost of weighting itself, without
  the rows that weight 0 removes).

Fit time is the estimator's ``train_time_[-1]`` (the boosting iterations; loss recording is
excluded). Per case, the script prints the median over rounds of each method's time, the median
of the per-round ratios new / base and new+w / base, and the round-to-round spread of new /
base (median absolute deviation of the per-round ratios). Targets: new / base within
max(5 %, 2 x spread) of 1; new+w / base at most 1.2.

Usage: ``python benchmarks/bench_weights.py --base ../base [--rounds 7] [--n 20000] [--T 40]
[--engines hist,sklearn] [--weights 0-3|1-4]``.
The machine may be shared: the load average is printed with the results.
"""

import argparse
import importlib.util
import inspect
import os
import sys

import numpy as np

import proxboost

# (estimator, loss, algo, engine of this revision, the same engine's name in the base revision:
# scikit-learn's tree was called "exact" there)
CASES = [
    ("BoostingRegressor", "lad", "prox", "hist", "hist"),
    ("BoostingRegressor", "pinball", "gradient", "hist", "hist"),
    ("BoostingClassifier", "hinge", "prox", "hist", "hist"),
    ("BoostingClassifier", "logistic", "gradient", "hist", "hist"),
    ("BoostingRegressor", "lad", "prox", "sklearn", "exact"),
]


def import_base(base):
    """Import ``<base>/src/proxboost`` as the package ``proxboost_base``.

    Only a base whose modules import each other relatively (``from .boosting import ...``:
    revisions before the library and the experiments were split into two houses, e.g.
    ``949280cb``) can be loaded this way: in a later one, ``from proxboost.boosting import ...``
    finds this checkout's ``proxboost``, already imported, and the "base" would be this revision
    itself. Such a base stops the script with one line, before any timing."""
    path = os.path.join(base, "src", "proxboost", "__init__.py")
    spec = importlib.util.spec_from_file_location(
        "proxboost_base", path, submodule_search_locations=[os.path.dirname(path)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["proxboost_base"] = module
    spec.loader.exec_module(module)
    source = inspect.getsourcefile(module.BoostingRegressor)
    if not os.path.abspath(source).startswith(os.path.dirname(os.path.abspath(path)) + os.sep):
        raise SystemExit(
            f"error: the base {base} imports its own modules as `proxboost` (absolute imports), "
            "so they cannot be loaded beside this checkout in one process (its estimators came "
            f"from {source}); use a base with relative imports (before the two-houses layout, "
            "e.g. 949280cb), or time each checkout in its own process"
        )
    return module


def data(n, d, classification, seed=0, lowest_weight=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    s = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 - X[:, 2] + rng.standard_t(3, size=n)
    y = np.where(s > np.median(s), 1, -1) if classification else s
    w = rng.randint(0, 4, size=n).astype(float) + lowest_weight
    return X, y, w


def fit_time(Est, X, y, w=None, **params):
    est = Est(**params)
    est.fit(X, y) if w is None else est.fit(X, y, sample_weight=w)
    return est.train_time_[-1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="checkout of the base revision")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--T", type=int, default=40)
    parser.add_argument("--engines", default="hist,sklearn", help="comma-separated engines to run")
    parser.add_argument(
        "--weights", default="0-3", choices=["0-3", "1-4"], help="range of the integer weights"
    )
    args = parser.parse_args()
    base = import_base(args.base)
    print(f"new: {os.path.dirname(proxboost.__file__)}  base: {os.path.dirname(base.__file__)}")
    print(
        f"n = {args.n}, d = {args.d}, T = {args.T}, depth 3, rounds = {args.rounds}, "
        f"weights {args.weights}, load average before: {os.getloadavg()[0]:.2f}"
    )
    header = (
        f"{'case':34s} {'base s':>8s} {'new s':>8s} {'new+w s':>8s} {'new/base':>9s} {'spread':>7s}"
        f" {'w/base':>7s}  unweighted  weighted"
    )
    print(header)
    for est_name, loss, algo, engine, base_engine in [
        c for c in CASES if c[3] in args.engines.split(",")
    ]:
        X, y, w = data(
            args.n, args.d, est_name == "BoostingClassifier", lowest_weight=int(args.weights[0])
        )
        params = dict(loss=loss, algo=algo, n_estimators=args.T, max_depth=3, random_state=0)
        new_params, base_params = dict(params, engine=engine), dict(params, engine=base_engine)
        Base, New = getattr(base, est_name), getattr(proxboost, est_name)
        small = slice(0, 500)  # warm-up: numba kernels compiled / loaded outside the timing
        fit_time(Base, X[small], y[small], **base_params)
        fit_time(New, X[small], y[small], **new_params)
        fit_time(New, X[small], y[small], w[small], **new_params)
        times = np.empty((args.rounds, 3))
        for r in range(args.rounds):
            times[r] = [
                fit_time(Base, X, y, **base_params),
                fit_time(New, X, y, **new_params),
                fit_time(New, X, y, w, **new_params),
            ]
        ratio, ratio_w = times[:, 1] / times[:, 0], times[:, 2] / times[:, 0]
        spread = np.median(np.abs(ratio - np.median(ratio)))
        ok = abs(np.median(ratio) - 1) <= max(0.05, 2 * spread)
        ok_w = np.median(ratio_w) <= 1.2
        med = np.median(times, axis=0)
        print(
            f"{est_name[8:] + ' ' + loss + ' ' + algo + ' ' + engine:34s} {med[0]:8.3f}"
            f" {med[1]:8.3f} {med[2]:8.3f} {np.median(ratio):9.3f} {spread:7.3f}"
            f" {np.median(ratio_w):7.3f}  {'ok' if ok else 'MISSED':10s} "
            f" {'ok' if ok_w else 'MISSED'}",
            flush=True,
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
