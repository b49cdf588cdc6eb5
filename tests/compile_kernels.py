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

While it compiles, it also records what only a cold cache can show: which kernels the one-thread
fits compiled (numba compiles a kernel's callees when it compiles the kernel, and a cached kernel
hides them). Each engine's process fits every option on one thread first, then notes which of the
package's parallel kernels have a signature (none may) and whether the serial witnesses, kernels
compiled only as callees of the compiled loop, have one (so the record comes from a compilation,
not from cached code); the two-thread fits come after. The record is kept beside the compiled
kernels, named by the numba and Python versions (the folder is already that of the kernel
sources), and read by ``tests/test_threads.py``, which compiles from scratch itself only when no
record of this version exists.
"""

from __future__ import annotations

import importlib
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ENGINES = ("exact", "hist")

#: Per engine, kernels the compiled loop's one-thread entry calls and nothing compiles otherwise:
#: they have a signature after a fit only if the loop was compiled in the process, not loaded.
SERIAL_WITNESSES = {
    "exact": (
        "proxboost.engines._exact.histogram.build_root_hist",
        "proxboost._compiled_loop._run_exact",
    ),
    "hist": ("proxboost.engines._hist.splitting.best_split", "proxboost._compiled_loop._run_hist"),
}


def package_kernels() -> dict:
    """Every compiled kernel of the package (numba dispatchers), by module and name."""
    from numba.core.registry import CPUDispatcher

    from proxboost import _numba_cache

    kernels = {}
    for path in _numba_cache.kernel_sources():
        name = ".".join(path.relative_to(_numba_cache.PACKAGE.parent).with_suffix("").parts)
        module = importlib.import_module(name.removesuffix(".__init__"))
        for attr, obj in vars(module).items():
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == module.__name__:
                kernels[f"{module.__name__}.{attr}"] = obj
    return kernels


def compiled_report(engine: str) -> dict:
    """After this process's fits on ``engine``: the package's parallel kernels (numba's
    ``parallel=True``, and the loop's entries and helpers named for threads, ``*_par``), those
    with a signature, and the fewest signatures of a serial witness."""
    kernels = package_kernels()
    parallel = {
        name: k
        for name, k in kernels.items()
        if k.targetoptions.get("parallel") or name.endswith("_par")
    }
    return {
        "parallel_kernels": sorted(parallel),
        "parallel compiled": sorted(name for name, k in parallel.items() if k.signatures),
        "serial": min(len(kernels[name].signatures) for name in SERIAL_WITNESSES[engine]),
    }


def report_path(engine: str) -> Path | None:
    """Where the record of ``engine``'s one-thread fits is kept: numba's cache folder of these
    kernel sources (``proxboost._numba_cache``), or None when numba caches beside the sources."""
    import numba

    import proxboost  # noqa: F401 -- points NUMBA_CACHE_DIR at the folder of these sources
    from proxboost import _numba_cache

    folder = os.environ.get("NUMBA_CACHE_DIR")
    if not folder:
        return None
    version = f"numba{numba.__version__}-py{platform.python_version()}"
    return Path(folder) / f"serial-fits-{engine}-{_numba_cache.sources_key()}-{version}.json"


def store_report(engine: str, report: dict) -> None:
    """Keep ``report`` if it comes from a compilation (its witnesses compiled in the process)."""
    path = report_path(engine)
    if path is None or report["serial"] < 1:
        return
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(json.dumps(report))
    os.replace(temporary, path)


def stored_report(engine: str) -> dict | None:
    """The record of ``engine``'s one-thread fits for these kernel sources, or None."""
    path = report_path(engine)
    if path is None or not path.exists():
        return None
    return json.loads(path.read_text())


def fit_everything(engine: str) -> None:
    """Fits small models with every option on ``engine`` (``hist`` also runs ``sklearn``): all
    on one thread first, recorded (``compiled_report``), then on two threads."""
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
    store_report(engine, compiled_report(engine))
    common = dict(engine=engine, n_estimators=4, max_depth=3, random_state=0, n_jobs=2)
    for algo in ("gradient", "prox"):
        for weights in (None, w):
            BoostingRegressor(loss="lad", algo=algo, **common).fit(
                X, y, sample_weight=weights, eval_set=(X, y)
            ).predict(X)
    # a prediction of more than one chunk of rows (1,024) runs on the threads
    BoostingRegressor(loss="lad", **common).fit(X, y).predict(np.tile(X, (10, 1)))


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
