"""Curves of the synthetic experiments (SPEC §5.1–§5.3): one fit per file, stored and loaded.

A *run* is one fit of a boosting estimator on one synthetic data draw, split in two halves
(train / test), with the training and test losses and the cumulative fit seconds recorded at
every iteration t = 0..T (``train_loss_``, ``eval_loss_``, ``train_time_`` of the estimator).

Layout (under a results directory, default ``results/``)::

    <results>/synthetic/<experiment>/<dataset>/<loss>/<algo>/<run>.csv
    <results>/synthetic/<experiment>/<dataset>/<loss>/<algo>/<run>.predictions.csv   (intro only)
    <results>/synthetic/<experiment>/<dataset>/data.csv                              (intro only)

``<run>`` spells the settings, e.g. ``depth-03_nu-0.05_step-1_T-1000_seed-0_exact`` (no ``step``
part for the gradient algorithms, which do not use λ). ``--quick`` runs go to
``<results>/synthetic-quick/`` so they never mix with the full-size curves.

A curve file is a CSV with the columns ``iteration, seconds, train_loss, test_loss`` (one row
per t) followed by the run's settings (:data:`SETTING_COLUMNS`) and provenance
(:func:`proxboost.results.provenance`: commit, library versions, UTC timestamp). To keep the
files small, settings and provenance are written **on the first row only** (iteration 0) and
left empty below it; :func:`read_curve` / :func:`load_curves` fill them down. ``step`` is λ,
the **per-sample** proximal step (SPEC §2.1), empty for the gradient algorithms.

Guarantees (the same as the pipeline's result rows): every file is written atomically
(:func:`proxboost.results.atomic_write_csv`: temporary file + :func:`os.replace`); a run whose
curve file exists is skipped (the curve file is written last, after any predictions file, so it
marks a finished run); runs execute one at a time so that the wall-clock curves are comparable.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .boosting import GRADIENT_ALGOS  # the algorithms that do not use the proximal step λ
from .results import atomic_write_csv, provenance

__all__ = [
    "CURVE_COLUMNS",
    "GRADIENT_ALGOS",
    "SETTING_COLUMNS",
    "RunSpec",
    "curve_path",
    "experiment_dir",
    "load_curves",
    "load_intro",
    "read_curve",
    "run_experiment",
    "run_one",
    "synthetic_split",
]

CURVE_COLUMNS = ("iteration", "seconds", "train_loss", "test_loss")
SETTING_COLUMNS = (
    "experiment", "dataset", "task", "loss", "algo", "max_depth", "learning_rate", "step",
    "n_estimators", "tau", "beta", "newton_steps", "seed", "random_state", "engine",
    "n_train", "n_test", "n_features", "split", "fit_seconds",
)
SPLIT_RULE = "50/50: permutation by numpy default_rng(seed), first half train"
FLOAT_FORMAT = "%.10g"


def synthetic_split(n, seed=0):
    """(train, test) row indices: a permutation by ``default_rng(seed)``, first half train."""
    perm = np.random.default_rng(seed).permutation(n)
    half = n // 2
    return np.sort(perm[:half]), np.sort(perm[half:])


def _fmt_float(v):
    return f"{float(v):g}"


@dataclass(frozen=True)
class RunSpec:
    """Settings of one synthetic run (SPEC §5.1–§5.3). ``step`` is λ per sample (SPEC §2.1)."""

    experiment: str
    dataset: str
    loss: str
    algo: str
    max_depth: int
    learning_rate: float
    n_estimators: int
    step: float | None = 1.0
    seed: int = 0
    engine: str = "exact"
    tau: float = 0.5
    beta: float = 1.0
    newton_steps: int = 1
    grid_predictions: int = 0  # > 0: also store f_T on this many x in [0, 1] (intro, d = 1)
    dataset_params: dict = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self):
        if self.algo in GRADIENT_ALGOS:
            object.__setattr__(self, "step", None)  # λ is not used: not part of the run's key

    @property
    def name(self) -> str:
        parts = [f"depth-{self.max_depth:02d}", f"nu-{_fmt_float(self.learning_rate)}"]
        if self.step is not None:
            parts.append(f"step-{_fmt_float(self.step)}")
        parts += [f"T-{self.n_estimators}", f"seed-{self.seed}", self.engine]
        return "_".join(parts)

    def label(self) -> str:
        lam = "" if self.step is None else f" λ={_fmt_float(self.step)}"
        return f"{self.experiment}: {self.dataset}/{self.loss}/{self.algo} depth={self.max_depth}{lam}"


def experiment_dir(results_dir, experiment, quick=False) -> Path:
    return Path(results_dir) / ("synthetic-quick" if quick else "synthetic") / experiment


def curve_path(results_dir, spec: RunSpec, quick=False) -> Path:
    return experiment_dir(results_dir, spec.experiment, quick) / spec.dataset / spec.loss / spec.algo / f"{spec.name}.csv"


def _predictions_path(curve_file: Path) -> Path:
    return curve_file.with_name(curve_file.name[: -len(".csv")] + ".predictions.csv")


def _data_path(results_dir, spec: RunSpec, quick=False) -> Path:
    return experiment_dir(results_dir, spec.experiment, quick) / spec.dataset / "data.csv"


# -- running ---------------------------------------------------------------------------------------
_DATA_CACHE: dict = {}


def _load(spec: RunSpec):
    key = (spec.dataset, spec.seed, tuple(sorted(spec.dataset_params.items())))
    if key not in _DATA_CACHE:
        from .datasets import load_dataset

        X, y, info = load_dataset(spec.dataset, random_state=spec.seed, **spec.dataset_params)
        _DATA_CACHE[key] = (X, y, info.task)
    return _DATA_CACHE[key]


def _estimator(spec: RunSpec, task: str):
    from .boosting import BoostingClassifier, BoostingRegressor

    common = dict(loss=spec.loss, algo=spec.algo, n_estimators=spec.n_estimators,
                  learning_rate=spec.learning_rate, step=1.0 if spec.step is None else spec.step,
                  max_depth=spec.max_depth, random_state=spec.seed, engine=spec.engine)
    if task == "classification":
        return BoostingClassifier(beta=spec.beta, newton_steps=spec.newton_steps, **common)
    return BoostingRegressor(tau=spec.tau, **common)


def run_one(spec: RunSpec, results_dir="results", quick=False) -> Path | None:
    """Fit one run and store its curve (and predictions); ``None`` if already stored."""
    path = curve_path(results_dir, spec, quick)
    if path.exists():
        return None
    X, y, task = _load(spec)
    tr, te = synthetic_split(len(y), spec.seed)
    est = _estimator(spec, task)
    est.fit(X[tr], y[tr], eval_set=(X[te], y[te]))
    T = spec.n_estimators
    curve = pd.DataFrame({
        "iteration": np.arange(T + 1),
        "seconds": est.train_time_,
        "train_loss": est.train_loss_,
        "test_loss": est.eval_loss_,
    })
    settings = {
        "experiment": spec.experiment, "dataset": spec.dataset, "task": task, "loss": spec.loss,
        "algo": spec.algo, "max_depth": spec.max_depth, "learning_rate": spec.learning_rate,
        "step": math.nan if spec.step is None else spec.step, "n_estimators": T,
        "tau": spec.tau if spec.loss == "pinball" else math.nan,
        "beta": spec.beta if spec.loss == "exponential" else math.nan,
        "newton_steps": spec.newton_steps if task == "classification" else math.nan,
        "seed": spec.seed, "random_state": spec.seed, "engine": spec.engine,
        "n_train": len(tr), "n_test": len(te), "n_features": X.shape[1], "split": SPLIT_RULE,
        "fit_seconds": float(est.train_time_[-1]),
        **provenance(),
    }
    _write_first_row(curve, settings)
    if spec.grid_predictions:
        if X.shape[1] != 1:
            raise ValueError("grid predictions need one-dimensional data")
        data_file = _data_path(results_dir, spec, quick)
        if not data_file.exists():
            part = np.empty(len(y), dtype=object)
            part[tr], part[te] = "train", "test"
            atomic_write_csv(pd.DataFrame({"x": X[:, 0], "y": y, "part": part}), data_file,
                             float_format=FLOAT_FORMAT)
        grid = np.linspace(0.0, 1.0, spec.grid_predictions)
        pred = pd.DataFrame({"x": grid, "prediction": est.predict(grid[:, None])})
        _write_first_row(pred, {k: settings[k] for k in ("experiment", "dataset", "loss", "algo", "max_depth",
                                                         "learning_rate", "step", "n_estimators", "seed",
                                                         "engine", "commit")})
        atomic_write_csv(pred, _predictions_path(path), float_format=FLOAT_FORMAT)
    atomic_write_csv(curve, path, float_format=FLOAT_FORMAT)  # last: marks the run as finished
    return path


def _write_first_row(df: pd.DataFrame, values: dict):
    for key, value in values.items():
        col = pd.Series([None] * len(df), dtype=object)
        col.iloc[0] = value
        df[key] = col


def run_experiment(experiment: str, specs, results_dir="results", quick=False, progress=True, log=print):
    """Run ``specs`` one at a time (skipping stored runs) with a tqdm bar; return seconds spent."""
    specs = list(specs)
    todo = [s for s in specs if not curve_path(results_dir, s, quick).exists()]
    log(f"[{experiment}] {len(specs)} runs, {len(specs) - len(todo)} already stored, {len(todo)} to do "
        f"-> {experiment_dir(results_dir, experiment, quick)}")
    t0 = time.perf_counter()
    # the bar advances by iterations x (a rough cost of one iteration) so that its time-left
    # estimate accounts for deep trees costing more than shallow ones
    weights = [s.n_estimators * (3.0 if s.max_depth >= 10 else 1.0) for s in todo]
    bar = None
    if progress and todo:
        from tqdm.auto import tqdm

        bar = tqdm(total=sum(weights), desc=experiment, unit="it", unit_scale=False, dynamic_ncols=True, mininterval=2.0,
                   bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} [{elapsed}<{remaining}] {postfix}")
    try:
        for spec, w in zip(todo, weights):
            if bar is not None:
                bar.set_postfix_str(spec.label())
            run_one(spec, results_dir, quick)
            if bar is not None:
                bar.update(w)
    finally:
        if bar is not None:
            bar.close()
    elapsed = time.perf_counter() - t0
    log(f"[{experiment}] done in {elapsed:.1f} s")
    return elapsed


# -- reading ---------------------------------------------------------------------------------------
def read_curve(path) -> pd.DataFrame:
    """One curve file with its settings and provenance filled down to every row."""
    df = pd.read_csv(path)
    fill = [c for c in df.columns if c not in CURVE_COLUMNS]
    df[fill] = df[fill].ffill()
    return df


def load_curves(results_dir="results", experiment=None, quick=False) -> pd.DataFrame:
    """Every curve stored under ``<results_dir>/synthetic[/<experiment>]`` as one tidy DataFrame.

    One row per (run, iteration); settings and provenance columns on every row. Empty (with the
    curve and setting columns) when nothing is stored.
    """
    root = Path(results_dir) / ("synthetic-quick" if quick else "synthetic")
    if experiment is not None:
        root = root / experiment
    files = sorted(p for p in root.rglob("*.csv")
                   if not p.name.endswith(".predictions.csv") and p.name != "data.csv"
                   and not p.name.startswith(".")) if root.is_dir() else []
    if not files:
        return pd.DataFrame(columns=[*CURVE_COLUMNS, *SETTING_COLUMNS])
    df = pd.concat([read_curve(p) for p in files], ignore_index=True)
    for c in ("experiment", "dataset", "task", "loss", "algo", "engine", "commit"):
        if c in df.columns:
            df[c] = df[c].astype(str)
    for c in ("iteration", "max_depth", "n_estimators", "seed"):
        if c in df.columns:
            df[c] = df[c].astype(int)
    return df


def load_intro(results_dir="results", quick=False):
    """``(curves, predictions, data)`` of the introduction example (empty frames if missing)."""
    root = experiment_dir(results_dir, "intro", quick)
    curves = load_curves(results_dir, "intro", quick)
    preds = [read_curve(p) for p in sorted(root.rglob("*.predictions.csv"))] if root.is_dir() else []
    predictions = pd.concat(preds, ignore_index=True) if preds else pd.DataFrame(columns=["x", "prediction", "algo"])
    data_files = sorted(root.rglob("data.csv")) if root.is_dir() else []
    data = pd.read_csv(data_files[0]) if data_files else pd.DataFrame(columns=["x", "y", "part"])
    return curves, predictions, data


# -- command line ------------------------------------------------------------------------------------
def experiment_cli(experiment: str, make_specs, argv=None, description=None) -> float:
    """Command line shared by the scripts of ``experiments/``.

    ``make_specs(quick: bool) -> list[RunSpec]``. Options: ``--results DIR`` (default
    ``results``), ``--quick`` (tiny T, stored under ``<results>/synthetic-quick/``), ``--list``
    (print the runs and whether they are stored), ``--no-progress``.
    """
    import argparse

    parser = argparse.ArgumentParser(prog=f"experiments/{experiment}.py", description=description)
    parser.add_argument("--results", default="results", help="results directory (default: results)")
    parser.add_argument("--quick", action="store_true",
                        help="tiny T for tests; curves go to <results>/synthetic-quick/")
    parser.add_argument("--list", action="store_true", help="list the runs and exit")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    specs = make_specs(args.quick)
    if args.list:
        for s in specs:
            stored = curve_path(args.results, s, args.quick).exists()
            print(f"{'stored ' if stored else 'to do  '} {curve_path(args.results, s, args.quick)}")
        return 0.0
    return run_experiment(experiment, specs, args.results, args.quick, progress=not args.no_progress)
