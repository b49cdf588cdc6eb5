"""Cost of several quantiles in one model against the separate single-level models.

For each case (rows n, algorithm, engine), each round fits, in turn, the model of the three levels
``tau=[0.05, 0.5, 0.95]`` and the three single-level models ``tau=0.05``, ``0.5`` and ``0.95``
(same settings), each timed by the wall clock around ``fit``. The script prints, per case, the
median over rounds of the joint fit's time, of the three separate fits' summed time, and of the
per-round ratio joint / separate (< 1: the joint model is cheaper). With ``--write-docs`` it
writes the table, the date, the load and the commit into ``docs/quantiles.md`` between the
``bench-quantile-levels`` markers.

With ``--protocol``, instead: the paper protocol's cost of one split on the six regression
datasets (split 0, the paper grid: 15 configurations for ``gradient``, 90 for ``prox``, T_max =
1000, the validation quarter as eval set, then the refit on training + validation of the
configuration and T the validation chose), for the model of three levels (selected on the sum
of its three validation losses) and for each single level (selected on its own). Configuration
by configuration the joint fit and the three single-level fits run one after the other, so a
change of load touches both sides alike; times are this process's CPU time
(``time.process_time``: every fit runs on one thread). Printed per dataset and algorithm: the
two sums and their ratio (the target: at most 0.6), with the load before and after; the
stored rows' own ratio (their wall times, at the load of the run that computed them) is in
docs/quantiles.md's measurements. ``--datasets`` and ``--algos`` choose a part;
``--write-docs`` writes the table between the ``bench-quantile-protocol`` markers.

Usage: ``python benchmarks/bench_quantile_levels.py [--rounds 3] [--T 100] [--write-docs]``,
``PROXBOOST_DATA_MIRROR=... python benchmarks/bench_quantile_levels.py --protocol
[--datasets engel,...] [--algos gradient,prox] [--write-docs]``.
The machine may be shared: the load average is printed (and written) with the results.
"""

import argparse
import datetime
import time
from pathlib import Path

import numpy as np
import yaml
from shared import commit as short_commit
from shared import load, machine, write_between_markers

from proxboost import BoostingRegressor
from proxboost.experiments.datasets import load_dataset
from proxboost.experiments.plan.methods import make_method
from proxboost.experiments.plan.protocol import expand_grid, select, split_indices
from proxboost.experiments.store.naming import REGRESSION_DATASETS
from proxboost.losses import make_loss

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


#: the paper's grid, expanded on each method's axes as the protocol expands it
PAPER_GRID = Path(__file__).resolve().parents[1] / "conf" / "grid" / "paper.yaml"
T_MAX = 1000


def _grid(method):
    return expand_grid(yaml.safe_load(PAPER_GRID.read_text()), method.grid_axes)


def _cpu(call, *args):
    start = time.process_time()
    out = call(*args)
    return time.process_time() - start, out


def protocol_split(dataset, algo):
    """(CPU seconds of the joint model's split, of the three single levels' splits)."""
    X, y, _ = load_dataset(dataset, download=False)
    tr, va, _ = split_indices(len(y), 0)
    train, valid = (X[tr], y[tr]), (X[va], y[va])
    methods = [make_method(algo, make_loss("pinball", tau=LEVELS))] + [
        make_method(algo, make_loss("pinball", tau=t)) for t in LEVELS
    ]
    grid = _grid(methods[0])
    seconds = np.zeros(len(methods))
    curves = [[] for _ in methods]
    for params in grid:
        for i, m in enumerate(methods):
            spent, (values, _) = _cpu(m.validation_curve, params, train, valid, T_MAX, 0)
            seconds[i] += spent
            curves[i].append(values)
    both = (np.concatenate([X[tr], X[va]]), np.concatenate([y[tr], y[va]]))
    for i, m in enumerate(methods):
        g, t = select(np.asarray(curves[i]))
        seconds[i] += _cpu(m.refit_predict, grid[g], t + 1, both, X[:5], 0)[0]
    return float(seconds[0]), float(seconds[1:].sum()), len(grid)


def protocol(datasets, algos, write_docs):
    X, y = data(200)
    for algo in algos:  # compile every kernel the fits will use
        for tau in (LEVELS, LEVELS[0]):
            BoostingRegressor(loss="pinball", tau=tau, algo=algo, n_estimators=2).fit(X, y)
    lines = [
        f"Measured {datetime.date.today()} at commit {short_commit()} ({machine()}); split 0 of"
        " the paper protocol, CPU time of the validation curves of every configuration and the"
        " refit (`python benchmarks/bench_quantile_levels.py --protocol --write-docs`, with the"
        " data mirror):",
        "",
        "| dataset | algo | configurations | one model of 3 levels | 3 separate levels | ratio"
        " | load before → after |",
        "|---|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    ratios = {a: [] for a in algos}
    for dataset in datasets:
        for algo in algos:
            before = load()
            joint, separate, n_grid = protocol_split(dataset, algo)
            ratios[algo].append(joint / separate)
            lines.append(
                f"| {dataset} | `{algo}` | {n_grid} | {joint:.1f} s | {separate:.1f} s"
                f" | {joint / separate:.2f} | {before:.2f} → {load():.2f} |"
            )
            print(lines[-1], flush=True)
    lines += [
        "",
        "Median ratio over the datasets: "
        + "; ".join(f"`{a}` {np.median(r):.2f}" for a, r in ratios.items())
        + " (target: at most 0.6).",
    ]
    print(lines[-1])
    if write_docs:
        write_between_markers("quantiles.md", "bench-quantile-protocol", "\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--T", type=int, default=100)
    parser.add_argument("--protocol", action="store_true")
    parser.add_argument("--datasets", default=",".join(REGRESSION_DATASETS))
    parser.add_argument("--algos", default="gradient,prox")
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    if args.protocol:
        return protocol(args.datasets.split(","), args.algos.split(","), args.write_docs)
    commit = short_commit()
    load_before = load()
    rows = []
    for n, algo, engine in CASES:
        joint, separate, ratio = measure(n, algo, engine, args.rounds, args.T)
        rows.append(
            f"| {n} | `{algo}` | `{engine}` | {joint:.2f} s | {separate:.2f} s | {ratio:.2f} |"
        )
        print(rows[-1], flush=True)
    load_after = load()
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
