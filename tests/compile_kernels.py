"""Compile the kernels the test suite runs into numba's cache, one process per engine, first.

numba keeps compiled kernels on disk, but processes that start together do not share their work:
with a cold cache (a fresh clone, CI, or any edit of a kernel source, which gives a fresh cache
folder: ``proxboost/_numba_cache.py``) each of ``make test``'s workers, and each process a test
starts (``run.py``, the core-only install), compiled the same kernels for itself, minutes each.
``make test`` runs this script first: two processes, one per tree engine, fit the estimators with
the options whose kernels differ (every algorithm and loss, weights, an eval set, early stopping,
several quantiles, monotone constraints, missing values, two threads), so that the suite then
loads them. With a warm cache it only loads them (seconds). It checks nothing (the tests do);
``python tests/compile_kernels.py exact`` compiles one engine's kernels in this process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

ENGINES = ("exact", "hist")


def fit_everything(engine: str) -> None:
    """Fits small models with every option on ``engine`` (``hist`` also runs ``sklearn``)."""
    os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", "X86_V4 AVX512_ICL AVX512_SPR")
    import numpy as np

    from proxboost import BoostingClassifier, BoostingRegressor
    from proxboost._fit_loop import ALGOS
    from proxboost.losses import CLASSIFICATION_LOSSES, REGRESSION_LOSSES

    rng = np.random.RandomState(0)
    X = rng.normal(size=(120, 3))
    y = X[:, 0] + rng.normal(size=120)
    w = rng.randint(0, 3, size=120).astype(float)
    X_nan = X.copy()
    X_nan[::7, 1] = np.nan
    labels = np.where(y > 0, 1, 0)
    engines = (engine, "sklearn") if engine == "hist" else (engine,)
    for name in engines:
        common = dict(engine=name, n_estimators=4, max_depth=3, random_state=0)
        for algo in ALGOS:
            for loss in REGRESSION_LOSSES:
                for weights in (None, w):
                    est = BoostingRegressor(loss=loss, algo=algo, **common)
                    est.fit(X, y, sample_weight=weights, eval_set=(X, y))
                    est.predict(X)
                    list(est.staged_predict(X))
                    BoostingRegressor(loss=loss, algo=algo, **common).fit(
                        X, y, sample_weight=weights
                    )
            for loss in CLASSIFICATION_LOSSES:
                for weights in (None, w):
                    clf = BoostingClassifier(loss=loss, algo=algo, **common)
                    clf.fit(X, labels, sample_weight=weights, eval_set=(X, labels))
                    clf.decision_function(X)
        for algo in ("gradient", "prox"):
            for weights in (None, w):
                options = (
                    dict(loss="pinball", tau=[0.1, 0.5, 0.9]),
                    dict(loss="lad", monotonic_cst=[1, 0, -1]),
                    dict(loss="lad", n_iter_no_change=2, validation_fraction=0.3),
                    dict(loss="lad", tie_rule="authors"),
                )
                for option in options:
                    BoostingRegressor(algo=algo, **common, **option).fit(
                        X, y, sample_weight=weights, eval_set=(X, y)
                    ).predict(X)
                BoostingRegressor(loss="lad", algo=algo, **common).fit(
                    X_nan, y, sample_weight=weights, eval_set=(X_nan, y)
                ).predict(X_nan)
                if name != "sklearn":
                    BoostingRegressor(loss="lad", algo=algo, n_jobs=2, **common).fit(
                        X, y, sample_weight=weights, eval_set=(X, y)
                    ).predict(X)


def main() -> int:
    if len(sys.argv) == 2:
        fit_everything(sys.argv[1])
        return 0
    start = time.perf_counter()
    workers = [subprocess.Popen([sys.executable, __file__, engine]) for engine in ENGINES]
    codes = [worker.wait() for worker in workers]
    took = time.perf_counter() - start
    print(f"compile_kernels: the kernels are in numba's cache ({took:.0f} s)", flush=True)
    return max(codes)


if __name__ == "__main__":
    sys.exit(main())
