"""The whole fit against LightGBM on the paper's datasets, one thread each, CPU time.

Setting (the target of docs/engines.md, "Whole fit against LightGBM"): split 0 of the paper's
protocol; the training half is fitted, the test quarter is the eval set whose loss is recorded
at every iteration; T = 1000, nu = 0.1, trees of depth 1, 3 and 5 (``engine="exact"``, the
paper's trees); ``lad``/``prox`` and ``pinball``/``prox`` (tau = 0.9, the paper's level) on the
regression datasets, ``hinge``/``prox`` on the classification datasets. LightGBM runs its
native objective (``l1``, ``quantile`` with alpha = tau, ``binary``) with the same depth,
num_leaves = 2^depth, min_data_in_leaf = 1, one thread, its metric on the eval set recorded at
every iteration, and its ``Dataset`` construction counted in its time.

Measured: CPU time of this process (``time.process_time``: both libraries run on one thread), in
a warm process after one warm-up fit of each, median of ``--rounds`` interleaved rounds (each
round fits proxboost then LightGBM). Printed: per cell the two medians and the ratio
proxboost / LightGBM, with the 1-minute load average before each dataset; the targets are
<= 0.7 on the six regression datasets and <= 1.0 on spam and adult. A table measured at a load
of 1.5 or more on this 2-core machine does not count (docs/engines.md says why).

Then, per iteration (the second target): crabs' training half (100 x 4), ``lad``/``prox``, depth
3, nu = 0.1, T = 1000, the test quarter as eval set; wall time of the whole fit divided by T (the
direction, tree, leaf line search, update, training and eval loss included), warm process,
median of ``--rounds``; target <= 10 us.

With ``--draws N`` the whole table is taken N times, ``--pause`` seconds apart (60 by default),
and then summarised: per cell the median ratio over the draws whose load before the row was
below 1.5, with the lowest and the highest, the verdicts read off the medians (a ratio at its
target's edge moves by about a tenth from one sitting to the next on the shared machine); the
per-iteration time likewise, once per draw.

Usage: ``PROXBOOST_DATA_MIRROR=... python benchmarks/bench_whole_fit.py [--rounds 5]
[--T 1000] [--datasets engel,...] [--depths 1,3,5] [--draws 3 [--pause 60]] [--write-docs]``
"""

import argparse
import datetime
import time

import numpy as np
from shared import MAX_LOAD, commit, lightgbm_params, load, machine, write_between_markers

from proxboost import BoostingClassifier, BoostingRegressor
from proxboost.experiments.datasets import dataset_info, load_dataset
from proxboost.experiments.plan.protocol import split_indices

REGRESSION = ("engel", "sniffer", "crabs", "bostonhousing", "redwine", "whitewine")
CLASSIFICATION = ("spam", "adult")
TARGET = {**dict.fromkeys(REGRESSION, 0.7), **dict.fromkeys(CLASSIFICATION, 1.0)}
NU, STEP, TAU = 0.1, 1.0, 0.9
#: proxboost's loss -> LightGBM's native objective (and its extra parameters)
LIGHTGBM_OBJECTIVE = {
    "lad": dict(objective="l1", metric="l1"),
    "pinball": dict(objective="quantile", alpha=TAU, metric="quantile"),
    # binary: LightGBM's default hessian floor, as with 0 its leaf of zero-hessian rows aborts
    # ("Check failed: best_split_info.left_count > 0") on spam
    "hinge": dict(objective="binary", metric="binary_logloss", min_sum_hessian_in_leaf=1e-3),
}


def fit_proxboost(loss, data, T, depth):
    X, y, Xe, ye = data
    Est = BoostingClassifier if loss == "hinge" else BoostingRegressor
    extra = dict(tau=TAU) if loss == "pinball" else {}
    est = Est(
        loss=loss,
        algo="prox",
        n_estimators=T,
        learning_rate=NU,
        step=STEP,
        max_depth=depth,
        engine="exact",
        random_state=0,
        **extra,
    )
    t0 = time.process_time()
    est.fit(X, y, eval_set=(Xe, ye))
    return time.process_time() - t0


def fit_lightgbm(loss, data, T, depth):
    import lightgbm as lgb  # lazy: the reference library

    X, y, Xe, ye = data
    if loss == "hinge":  # LightGBM's binary objective wants labels 0/1
        y, ye = (y > 0).astype(float), (ye > 0).astype(float)
    params = lightgbm_params(depth, NU, **LIGHTGBM_OBJECTIVE[loss])
    record = {}
    t0 = time.process_time()
    train = lgb.Dataset(X, y, params=params)
    valid = lgb.Dataset(Xe, ye, reference=train)
    lgb.train(
        params,
        train,
        num_boost_round=T,
        valid_sets=[valid],
        callbacks=[lgb.record_evaluation(record)],
    )
    return time.process_time() - t0


def dataset_parts(name):
    """(training half, test quarter) of split 0, as (X, y, X_eval, y_eval)."""
    X, y, _ = load_dataset(name)
    tr, _, te = split_indices(len(y), 0)
    return X[tr], y[tr], X[te], y[te]


def run_cell(loss, data, T, depth, rounds):
    fit_proxboost(loss, data, T, depth)  # warm-up: compiled kernels, caches
    fit_lightgbm(loss, data, T, depth)
    ours, theirs = [], []
    for _ in range(rounds):
        ours.append(fit_proxboost(loss, data, T, depth))
        theirs.append(fit_lightgbm(loss, data, T, depth))
    return float(np.median(ours)), float(np.median(theirs))


ITERATION_TARGET_US = 10.0


def per_iteration_us(T, rounds):
    """Wall time per iteration (us) of lad/prox, depth 3, on crabs' training half."""
    X, y, Xe, ye = dataset_parts("crabs")
    est = BoostingRegressor(
        loss="lad", algo="prox", max_depth=3, learning_rate=NU, n_estimators=T, step=STEP
    )
    est.fit(X, y, eval_set=(Xe, ye))  # warm-up
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        est.fit(X, y, eval_set=(Xe, ye))
        times.append(time.perf_counter() - t0)
    return float(np.median(times)) / T * 1e6


def one_draw(names, depths, T, rounds):
    """{(dataset, loss): ({depth: (proxboost s, LightGBM s)}, load before, load after)} of one
    draw, each row printed as it is measured."""
    rows = {}
    for name in names:
        data = dataset_parts(name)
        losses = ("hinge",) if dataset_info(name).task == "classification" else ("lad", "pinball")
        for loss in losses:
            before = load()
            cells = {depth: run_cell(loss, data, T, depth, rounds) for depth in depths}
            rows[(name, loss)] = (cells, before, load())
            print(table_row(name, loss, rows[(name, loss)]), flush=True)
    return rows


def table_row(name, loss, row):
    """One dataset and loss of one draw: per depth the two medians and their ratio."""
    cells, before, after = row
    shown = [f"{a:.3f} s / {b:.3f} s = {a / b:.2f}" for a, b in cells.values()]
    return (
        f"| {name} | {loss} | " + " | ".join(shown) + f" | ≤ {TARGET[name]} |"
        f" {before:.2f} → {after:.2f} |"
    )


def header(depths, last):
    return [
        "| dataset | loss | " + " | ".join(f"depth {d}" for d in depths) + f" | target | {last} |",
        "|---|---|" + "---|" * len(depths) + "---|---|",
    ]


def spread_rows(draws, depths, max_load=MAX_LOAD):
    """Markdown rows over several draws: per dataset, loss and depth the median ratio over the
    draws whose load before the row was below ``max_load``, with the lowest and the highest;
    and {dataset: largest median ratio}."""
    lines, worst = [], {}
    for name, loss in draws[0]:
        kept = [d[(name, loss)][0] for d in draws if d[(name, loss)][1] < max_load]
        if not kept:
            lines.append(f"| {name} | {loss} |" + " |" * len(depths) + f" ≤ {TARGET[name]} | 0 |")
            continue
        shown = []
        for depth in depths:
            ratios = [cells[depth][0] / cells[depth][1] for cells in kept]
            middle = float(np.median(ratios))
            worst[name] = max(worst.get(name, 0.0), middle)
            shown.append(f"{middle:.2f} ({min(ratios):.2f}–{max(ratios):.2f})")
        lines.append(
            f"| {name} | {loss} | " + " | ".join(shown) + f" | ≤ {TARGET[name]} |"
            f" {len(kept)} of {len(draws)} |"
        )
    return lines, worst


def verdict(worst, what):
    missed = [f"{n} ({r:.2f} > {TARGET[n]})" for n, r in worst.items() if r > TARGET[n]]
    return (
        f"{what} per dataset: "
        + ", ".join(f"{n} {r:.2f}" for n, r in worst.items())
        + "; targets missed: "
        + (", ".join(missed) if missed else "none")
        + "."
    )


def iteration_line(runs, rounds):
    """The per-iteration target's sentence from one (us, load before, load after) per draw."""
    us = [u for u, _, _ in runs]
    middle = float(np.median(us))
    state = "met" if middle <= ITERATION_TARGET_US else "missed"
    spread = f" (draws: {', '.join(f'{u:.1f}' for u in us)})" if len(us) > 1 else ""
    loads = f"load {runs[0][1]:.2f} → {runs[-1][2]:.2f}"
    return (
        f"Per iteration on crabs' training half (100 × 4), lad/prox, depth 3, eval set, wall"
        f" time, median of {rounds}{' per draw, median over the draws' if spread else ''}:"
        f" {middle:.1f} µs{spread} (target ≤ {ITERATION_TARGET_US:.0f} µs: {state}; {loads})."
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--T", type=int, default=1000)
    parser.add_argument("--datasets", default=",".join(REGRESSION + CLASSIFICATION))
    parser.add_argument("--depths", default="1,3,5")
    parser.add_argument("--draws", type=int, default=1, help="repeat the whole table")
    parser.add_argument("--pause", type=float, default=60.0, help="seconds between draws")
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    names = args.datasets.split(",")
    unknown = [n for n in names if n not in TARGET]
    if unknown:
        raise SystemExit(f"unknown dataset(s) {unknown}: choose among {', '.join(TARGET)}")
    if args.T < 2 or args.rounds < 1 or args.draws < 1 or args.pause < 0:
        raise SystemExit(
            "--T must be at least 2, --rounds and --draws at least 1, --pause at least 0"
        )
    depths = [int(d) for d in args.depths.split(",")]
    command = "python benchmarks/bench_whole_fit.py" + (
        f" --draws {args.draws}" if args.draws > 1 else ""
    )
    lines = [
        f"Measured {datetime.date.today()} at commit {commit()} ({machine()}); T = {args.T},"
        f" nu = {NU}, eval set recorded every iteration, process CPU time, median of"
        f" {args.rounds} interleaved rounds"
        + (f" per draw, {args.draws} draws {args.pause:.0f} s apart" if args.draws > 1 else "")
        + f"; proxboost / LightGBM (`{command} --write-docs`):",
    ]
    print(lines[0], flush=True)
    draws, iterations = [], []
    for k in range(args.draws):
        if k:
            time.sleep(args.pause)
        stamp = datetime.datetime.now().strftime("%H:%M")
        title = [""] + ([f"Draw {k + 1} ({stamp}):", ""] if args.draws > 1 else [])
        print("\n".join(title + header(depths, "load")), flush=True)
        draws.append(one_draw(names, depths, args.T, args.rounds))
        lines += title + header(depths, "load")
        lines += [table_row(name, loss, row) for (name, loss), row in draws[-1].items()]
        if "crabs" in names:
            before = load()
            iterations.append((per_iteration_us(args.T, args.rounds), before, load()))
    if args.draws == 1:
        worst = {}
        for (name, _), (cells, _, _) in draws[0].items():
            for ours, theirs in cells.values():
                worst[name] = max(worst.get(name, 0.0), ours / theirs)
        lines += ["", verdict(worst, "Largest ratio")]
        print("\n".join(lines[-2:]))
    else:
        spread, worst = spread_rows(draws, depths)
        lines += [
            "",
            f"Over the draws (a row counts in a draw only if the load before it was below"
            f" {MAX_LOAD}): the median ratio, with the lowest and the highest:",
            "",
            *header(depths, f"draws (load < {MAX_LOAD})"),
            *spread,
            "",
            verdict(worst, "Largest median ratio"),
        ]
        print("\n".join(lines[-len(spread) - 7 :]))
    if iterations:
        lines += ["", iteration_line(iterations, args.rounds)]
        print(lines[-1])
    if args.write_docs:
        write_between_markers("engines.md", "bench-whole-fit", "\n".join(lines))


if __name__ == "__main__":
    main()
