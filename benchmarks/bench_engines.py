"""Per-iteration cost of the tree engines (exact, hist, sklearn) and LightGBM; peak memory.

Setting (``synthetic``): ``algo="prox"``, loss ``lad``, depth 3, nu = 0.05, lambda = 1, the
package's ``regression`` model (continuous features) at 10^4 x 20 and 10^5 x 20. Methods are
interleaved within each round; the table gives the median over rounds of the per-iteration time

    (CPU time of a fit with T iterations - CPU time of a fit with 1 iteration) / (T - 1),

(CPU time of the process, ``time.process_time``: everything runs on one thread, and it is far
less sensitive than wall time to other jobs on a shared machine), so one-off preparation (float32
cast, codes and sorted orders, binning) is excluded and the
per-iteration loss recording included. ``sklearn`` runs fewer iterations (it is slow).
LightGBM: native ``l1`` objective, 255 bins, num_leaves = 2^depth, max_depth = depth,
min_data_in_leaf = 1, one thread; per-iteration CPU time from a callback (Dataset construction
excluded).

``real``: each of the eight obtainable real datasets (``$PROXBOOST_DATA_MIRROR``), on the
training half and on the refit set (train + validation, 75 %) of split 0, depths 1, 3 and 5:
``lad``/``prox`` on the regression sets, ``hinge``/``prox`` on the classification sets; exact
against hist (ratio of medians).

``memory``: peak resident memory (``ru_maxrss``) of a fresh process that draws X (n x 20),
prepares it for the exact engine and grows 3 trees of depth 3, then of depth 15.

Usage: ``python benchmarks/bench_engines.py [--sections synthetic,real,memory] [--rounds 5]
[--T 200] [--quick] [--datasets bostonhousing,...]`` (``--datasets``: the real section's datasets,
all
eight by default). The load average is printed with the results (the machine may be shared).
"""

import argparse
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
from shared import lightgbm_params

from proxboost import BoostingClassifier, BoostingRegressor
from proxboost.experiments.datasets import dataset_info, load_dataset
from proxboost.experiments.plan.protocol import split_indices

DEPTH, NU, STEP = 3, 0.05, 1.0


def _load():
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def _fit_cpu(Est, loss, X, y, engine, T, depth):
    t0 = time.process_time()
    Est(
        loss=loss,
        algo="prox",
        n_estimators=T,
        learning_rate=NU,
        step=STEP,
        max_depth=depth,
        engine=engine,
        random_state=0,
    ).fit(X, y)
    return time.process_time() - t0


def per_iteration(Est, loss, X, y, engine, T, depth=DEPTH):
    """Seconds per iteration, one-off preparation excluded (see the module docstring)."""
    return (
        _fit_cpu(Est, loss, X, y, engine, T, depth) - _fit_cpu(Est, loss, X, y, engine, 1, depth)
    ) / (T - 1)


def per_iteration_lightgbm(X, y, T, depth=DEPTH):
    import lightgbm as lgb  # lazy: the reference library, needed by this section only

    params = lightgbm_params(depth, NU, objective="l1")
    data = lgb.Dataset(X, y, params=params, free_raw_data=False)
    data.construct()
    stamps = []
    lgb.train(
        params, data, num_boost_round=T, callbacks=[lambda env: stamps.append(time.process_time())]
    )
    return (stamps[-1] - stamps[0]) / (T - 1)


def section_synthetic(rounds, T, sizes):
    print(
        f"\n## Synthetic, lad / prox / depth {DEPTH}, per iteration (median of {rounds} interleaved"
        " rounds)\n"
    )
    print(
        "| n x d | exact | hist | sklearn (T) | LightGBM l1 | sklearn / exact | exact / hist |"
        " exact / LightGBM | load before -> after |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for n, d, T_sk in sizes:
        X, y, _ = load_dataset("regression", random_state=0, n_samples=n, n_features=d)
        load0 = _load()
        res = {k: [] for k in ("exact", "hist", "sklearn", "lightgbm")}
        for _ in range(rounds):
            res["exact"].append(per_iteration(BoostingRegressor, "lad", X, y, "exact", T))
            res["hist"].append(per_iteration(BoostingRegressor, "lad", X, y, "hist", T))
            res["lightgbm"].append(per_iteration_lightgbm(X, y, T))
            res["sklearn"].append(per_iteration(BoostingRegressor, "lad", X, y, "sklearn", T_sk))
        m = {k: float(np.median(v)) for k, v in res.items()}
        print(
            f"| {n} x {d} | {m['exact'] * 1e3:.2f} ms | {m['hist'] * 1e3:.2f} ms |"
            f" {m['sklearn'] * 1e3:.1f} ms ({T_sk}) | {m['lightgbm'] * 1e3:.2f} ms |"
            f" {m['sklearn'] / m['exact']:.1f} | {m['exact'] / m['hist']:.2f} |"
            f" {m['exact'] / m['lightgbm']:.2f} | {load0} -> {_load()} |",
            flush=True,
        )


REAL = ["whitewine", "redwine", "bostonhousing", "crabs", "engel", "sniffer", "adult", "spam"]


def section_real(rounds, T, depths=(1, 3, 5), datasets=REAL):
    print(
        f"\n## Real datasets: exact / hist per iteration (median of {rounds} interleaved rounds, T"
        f" = {T})\n"
    )
    print(
        "| dataset | part | n x d | "
        + " | ".join(f"depth {D}: exact, hist, ratio" for D in depths)
        + " | load |"
    )
    print("|---|---|---|" + "---|" * len(depths) + "---|")
    worst = 0.0
    for name in datasets:
        X, y, _ = load_dataset(name)
        task = dataset_info(name).task
        Est, loss = (
            (BoostingRegressor, "lad") if task == "regression" else (BoostingClassifier, "hinge")
        )
        tr, va, _ = split_indices(len(y), 0)
        for part, rows in (("train", tr), ("refit", np.sort(np.concatenate([tr, va])))):
            Xp, yp = X[rows], y[rows]
            cells = []
            for D in depths:
                ex, hi = [], []
                for _ in range(rounds):
                    ex.append(per_iteration(Est, loss, Xp, yp, "exact", T, D))
                    hi.append(per_iteration(Est, loss, Xp, yp, "hist", T, D))
                e, h = float(np.median(ex)), float(np.median(hi))
                worst = max(worst, e / h)
                cells.append(f"{e * 1e3:.2f}, {h * 1e3:.2f} ms, {e / h:.2f}")
            print(
                f"| {name} | {part} | {len(rows)} x {X.shape[1]} | "
                + " | ".join(cells)
                + f" | {_load()} |",
                flush=True,
            )
    print(f"\nlargest exact / hist ratio: {worst:.2f}")


_MEMORY_SCRIPT = textwrap.dedent("""
    import resource, sys, numpy as np
    from proxboost.engines import ExactEngine
    n, depth = int(sys.argv[1]), int(sys.argv[2])
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 20))
    y = np.sign(rng.standard_normal(n))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    e = ExactEngine()
    Xp = e.prepare(X, fit=True)
    for t in range(3):
        e.grow(Xp, y, depth, t)
    print(before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
""")


def section_memory(sizes=(10**5, 10**6), depths=(3, 15)):
    print("\n## Peak resident memory of a fresh process (exact engine, X n x 20 float64)\n")
    print("| n x 20 | depth | peak RSS before prepare | peak RSS after 3 trees | X float64 |")
    print("|---|---|---|---|---|")
    for n in sizes:
        for D in depths:
            out = subprocess.run(
                [sys.executable, "-c", _MEMORY_SCRIPT, str(n), str(D)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            before, after = (int(v) / 1024 for v in out)
            print(
                f"| {n} | {D} | {before:.0f} MB | {after:.0f} MB | {n * 20 * 8 / 2**20:.0f} MB |",
                flush=True,
            )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", default="synthetic,real,memory")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--T", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="3 rounds of 50 iterations, 10^4 only")
    parser.add_argument(
        "--datasets",
        default=",".join(REAL),
        help="real datasets of the real section (comma-separated)",
    )
    args = parser.parse_args(argv)
    rounds, T = (3, 50) if args.quick else (args.rounds, args.T)
    sizes = [(10**4, 20, 21)] + ([] if args.quick else [(10**5, 20, 6)])
    sections = args.sections.split(",")
    print(f"load average at start: {_load()}")
    if "synthetic" in sections:
        section_synthetic(rounds, T, sizes)
    if "real" in sections:
        section_real(rounds, T, datasets=args.datasets.split(","))
    if "memory" in sections:
        section_memory()


if __name__ == "__main__":
    main()
