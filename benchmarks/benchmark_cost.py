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
import datetime
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import shared  # noqa: E402

from proxboost.experiments.report.benchmark import (  # noqa: E402 (after the path)
    INTERVAL_DATASETS,
    INTERVAL_METHODS,
    METHODS,
    PLANNED,
)

#: The sweep's datasets, as its report plans them: the paper's (both readings, 20 splits) and
#: the others (reading a, 10 splits, subsampled above 20,000 rows).
SIX = tuple(PLANNED["benchmark90"])
MORE = tuple(d for d in PLANNED["benchmark15"] if d not in SIX)
#: Rows a dataset is subsampled to before its split (the benchmark's ``max_rows``).
MAX_ROWS = 20000
#: Computations on the paper's six datasets (lad, pinball) whose rows the paper protocol stores.
REUSED = {"benchmark90": ("prox", "residual_prox", "gradient"),
          "benchmark15": ("gradient", "lightgbm", "sklearn_hgb", "xgboost")}  # fmt: skip
#: ``--loss`` of the interval experiment's jobs (levels 0.05 and 0.95 of loss pinball).
INTERVALS = "intervals"
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


def estimate(path, write_docs=False):
    """The sweep's CPU-hours per dataset and method from the measured costs in ``path``
    (printed; with ``write_docs``, written into docs/quantile_benchmark.md with the measured
    jobs, their loads and commits)."""
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
    size = {}  # training rows x features, of the planned datasets and of every measured one
    for name in {*SIX, *more, *(d for d, _, _ in cost)}:
        info = dataset_info(name)
        size[name] = split_sizes(min(info.n, MAX_ROWS), (0.5, 0.25, 0.25))[0] * info.d
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
            splits = PLANNED["benchmark15"][name]
            seconds = per_a * 3 * splits
            if name in SIX:
                per_b = cost.get((name, method, "benchmark90"), per_a * ratio)
                seconds += per_b * 3 * splits
                # lad and pinball (2 of the 3 losses) of the reused computations: stored already
                seconds -= sum((per_b if g == "benchmark90" else per_a) * 2 * splits
                               for g, reused in REUSED.items() if method in reused)  # fmt: skip
            table[name, method] = seconds / 3600
            total += seconds / 3600
    lines = ["| dataset | " + " | ".join(METHODS) + " | all |"]
    lines.append("|---|" + "---|" * (len(METHODS) + 1))
    for name in SIX + more:
        cells = [table.get((name, m), float("nan")) for m in METHODS]
        lines.append(f"| {name} | " + " | ".join(f"{c:.2f}" for c in cells)
                     + f" | {np.nansum(cells):.2f} |")  # fmt: skip
    by = {m: sum(v for (d, mm), v in table.items() if mm == m) for m in METHODS}
    lines.append("| **all** | " + " | ".join(f"{by[m]:.2f}" for m in METHODS) + f" | {total:.2f} |")
    print("\n".join(lines))
    intervals_total, interval_lines = _interval_estimate(intervals, reading_a)
    if write_docs:
        _write_docs(rows, lines, interval_lines, total + intervals_total)
    return total + intervals_total


def _write_docs(rows, estimate_lines, interval_lines, total):
    """The measured jobs and the estimate into docs/quantile_benchmark.md (benchmark-cost)."""
    loads = [float(r[k]) for r in rows for k in ("load_before", "load_after") if r.get(k)]
    commits = sorted({r["commit"] for r in rows if r.get("commit")})
    measured = ["| dataset | job | " + " | ".join(METHODS) + " |",
                "|---|---|" + "---|" * len(METHODS)]  # fmt: skip
    jobs = sorted({(r["dataset"], r["grid"], r["loss"]) for r in rows})
    for dataset, grid, loss in jobs:
        cpu = {r["method"]: r["cpu_seconds"] for r in rows
               if (r["dataset"], r["grid"], r["loss"]) == (dataset, grid, loss)}  # fmt: skip
        job = "intervals 0.05/0.95" if loss == INTERVALS else f"{grid}, {loss}"
        measured.append(f"| {dataset} | {job} | " + " | ".join(cpu.get(m, "—") for m in METHODS)
                        + " |")  # fmt: skip
    text = "\n".join(
        [f"Measured {datetime.date.today().isoformat()} at commit {', '.join(commits)},"
         f" {shared.machine()}, one process at a time,"
         f" 1-minute load average {min(loads):.2f}–{max(loads):.2f} before and after the jobs"
         " (`python benchmarks/benchmark_cost.py`). CPU seconds of one split (every"
         " configuration's validation curve and the refit):", "", *measured, "",
         "Estimated CPU-hours of the sweep (`--estimate --write-docs`), per dataset and method,"
         " the reused computations deducted:", "", *estimate_lines, "", *interval_lines, "",
         f"**Whole sweep: {total:.1f} CPU-hours**, against the budget of 15."]
    )  # fmt: skip
    shared.write_between_markers("quantile_benchmark.md", "benchmark-cost", text)


def _interval_estimate(intervals, reading_a):
    """CPU-hours of the interval experiment (its datasets, 20 splits each): per method,
    the measured datasets at their cost, the others as reading (a)'s lad job of the same
    dataset (measured or estimated) times the median ratio (interval job / lad job) of the
    datasets where both were measured."""
    total, lines = 0.0, []
    for method in INTERVAL_METHODS:
        ratios = [c / reading_a[d, method] for (d, m), c in intervals.items()
                  if m == method and (d, method) in reading_a]  # fmt: skip
        if not ratios:
            lines.append(f"- intervals, {method}: not measured; not estimated")
            continue
        ratio = float(np.median(ratios))
        seconds = sum(
            intervals.get((d, method), ratio * reading_a[d, method]) for d in INTERVAL_DATASETS
        )
        lines.append(
            f"- intervals, {method}: {seconds * 20 / 3600:.2f} CPU-hours (its job costs"
            f" {ratio:.2f} times reading (a)'s lad job where both were measured)"
        )
        total += seconds * 20 / 3600
    lines.append(f"- intervals: {total:.2f} CPU-hours")
    print("\n".join(lines))
    return total, lines


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datasets", nargs="*", default=["barro", "computers", "diamonds"])
    p.add_argument("--methods", nargs="*", default=list(METHODS))
    p.add_argument("--grids", nargs="*", default=["benchmark15"])
    p.add_argument("--loss", default="lad")
    p.add_argument("--out", default="benchmark_cost.csv", help="CSV the measurements go to")
    p.add_argument("--estimate", metavar="CSV", help="estimate the sweep from measurements")
    p.add_argument("--write-docs", action="store_true", help="with --estimate: into the docs")
    args = p.parse_args(argv)
    if args.estimate:
        estimate(args.estimate, write_docs=args.write_docs)
        return 0
    measure(args.datasets, args.methods, args.grids, args.loss, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
