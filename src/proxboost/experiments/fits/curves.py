"""Curves of the synthetic experiments (docs/protocol.md): one fit per file, stored and loaded.

A *run* is one fit of a boosting estimator on one synthetic data draw, split in two halves
(train / test), with the training and test losses, the cumulative fit seconds and the leaf
count of each tree recorded at every iteration t = 0..T (``train_loss_``, ``eval_loss_``,
``train_time_``, ``n_leaves_`` of the estimator; ``n_leaves`` is empty at t = 0).

Layout (under a results directory, default ``results/``)::

    <results>/synthetic/<experiment>/<dataset>/<loss>/<algo>/<run>_<hash>.csv
    <results>/synthetic/<experiment>/<dataset>/<loss>/<algo>/<run>_<hash>.predictions.csv  (intro)
    <results>/synthetic/<experiment>/<dataset>/data-seed-<s>.csv                          (intro)

``<run>`` spells the settings for people, e.g.
``depth-03_nu-0.05_step-1_T-1000_seed-0_exact_midpoint`` (no ``step`` part for the gradient
algorithms, which do not use λ); ``<hash>`` is the short hash of the run's **identity**
(:mod:`proxboost.experiments.store.results`): data generator, its parameters and seed, loss and
parameters, algorithm, engine, tie rule and every estimator option, T, the library versions of the
engine and ``NUMERICS_VERSION``. A curve is reused only when its stored identity is the one asked
for. The runs of an experiment come from its Hydra config (``python run.py
+experiment=convergence``; :func:`specs_from_config`).

A curve file is a CSV with the columns ``iteration, seconds, train_loss, test_loss, n_leaves`` (one
row per t) followed by the run's settings (:data:`SETTING_COLUMNS`), identity and provenance
(:func:`proxboost.experiments.store.results.provenance`). To keep the files small, settings and
provenance are written **on the first row only** (iteration 0) and left empty below it;
:func:`proxboost.experiments.store.results.read_curve` / ``load_curves`` fill them down. ``step`` is
λ, the
**per-sample** proximal step, empty for the gradient algorithms.

Guarantees (the same as the pipeline's result rows): every file is written atomically
(:func:`proxboost.experiments.store.results.atomic_write_csv`: temporary file + :func:`os.replace`);
a run whose curve file exists with the same identity is skipped (the curve file is written last,
after any predictions file, so it marks a finished run); runs execute one at a time so that the
wall-clock curves are comparable.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

from proxboost.experiments.fits.deadline import expired
from proxboost.experiments.fits.progress import Progress
from proxboost.experiments.plan.curves_plan import (
    RunSpec,
    curve_identity,
    curve_path,
    data_path,
    experiment_dir,
    is_stored,
    load_data,
    run_loss,
)
from proxboost.experiments.plan.methods import make_estimator
from proxboost.experiments.store import results, row_claims
from proxboost.experiments.store.results import (
    CURVE_COLUMNS,
    SETTING_COLUMNS,
    atomic_write_csv,
    provenance,
)

__all__ = [
    "CURVE_COLUMNS",
    "SETTING_COLUMNS",
    "run_curves",
    "run_one",
    "synthetic_split",
]

SPLIT_RULE = "50/50: permutation by numpy default_rng(seed), first half train"

FLOAT_FORMAT = "%.10g"


def synthetic_split(n, seed=0):
    """(train, test) row indices: a permutation by ``default_rng(seed)``, first half train."""
    perm = np.random.default_rng(seed).permutation(n)
    half = n // 2
    return np.sort(perm[:half]), np.sort(perm[half:])


def _predictions_path(curve_file: Path) -> Path:
    return curve_file.with_name(curve_file.name[: -len(".csv")] + ".predictions.csv")


# -- running ---------------------------------------------------------------------------------------


def run_one(spec: RunSpec, results_dir="results") -> Path | None:
    """Fit one run and store its curve (and predictions); ``None`` if already stored."""
    path = curve_path(results_dir, spec)
    if is_stored(results_dir, spec):
        return None
    identity = curve_identity(spec)
    X, y, info = load_data(spec)
    task = info.task
    tr, te = synthetic_split(len(y), spec.seed)
    est = make_estimator(
        run_loss(spec),
        spec.algo,
        engine=spec.engine,
        tie_rule=spec.tie_rule,
        n_estimators=spec.n_estimators,
        learning_rate=spec.learning_rate,
        step=1.0 if spec.step is None else spec.step,
        max_depth=spec.max_depth,
        random_state=spec.seed,
    )
    est.fit(X[tr], y[tr], eval_set=(X[te], y[te]))
    T = spec.n_estimators
    leaves = np.full(T + 1, np.nan)
    if hasattr(est, "n_leaves_"):  # one count per tree, t = 1..T
        leaves[1:] = np.asarray(est.n_leaves_, dtype=np.float64)
    curve = pd.DataFrame(
        {
            "iteration": np.arange(T + 1),
            "seconds": est.train_time_,
            "train_loss": est.train_loss_,
            "test_loss": est.eval_loss_,
            "n_leaves": leaves,
        }
    )
    settings = {
        "experiment": spec.experiment,
        "dataset": spec.dataset,
        "task": task,
        "loss": spec.loss,
        "algo": spec.algo,
        "max_depth": spec.max_depth,
        "learning_rate": spec.learning_rate,
        "step": math.nan if spec.step is None else spec.step,
        "n_estimators": T,
        "tau": spec.tau if spec.loss == "pinball" else math.nan,
        "beta": spec.beta if spec.loss == "exponential" else math.nan,
        "newton_steps": spec.newton_steps if task == "classification" else math.nan,
        "seed": spec.seed,
        "random_state": spec.seed,
        "engine": spec.engine,
        "tie_rule": spec.tie_rule,
        "n_train": len(tr),
        "n_test": len(te),
        "n_features": X.shape[1],
        "split": SPLIT_RULE,
        "fit_seconds": float(est.train_time_[-1]),
        "identity_hash": results.identity_hash(identity),
        "identity": identity,
        **provenance(),
    }
    _write_first_row(curve, settings)
    if spec.grid_predictions:
        if X.shape[1] != 1:
            raise ValueError("grid predictions need one-dimensional data")
        data_file = data_path(results_dir, spec)
        if not data_file.exists():
            part = np.empty(len(y), dtype=object)
            part[tr], part[te] = "train", "test"
            atomic_write_csv(
                pd.DataFrame({"x": X[:, 0], "y": y, "part": part}),
                data_file,
                float_format=FLOAT_FORMAT,
            )
        grid = np.linspace(0.0, 1.0, spec.grid_predictions)
        pred = pd.DataFrame({"x": grid, "prediction": est.predict(grid[:, None])})
        _write_first_row(
            pred,
            {
                k: settings[k]
                for k in (
                    "experiment",
                    "dataset",
                    "loss",
                    "algo",
                    "max_depth",
                    "learning_rate",
                    "step",
                    "n_estimators",
                    "seed",
                    "engine",
                    "tie_rule",
                    "identity_hash",
                    "commit",
                )
            },
        )
        atomic_write_csv(pred, _predictions_path(path), float_format=FLOAT_FORMAT)
    atomic_write_csv(curve, path, float_format=FLOAT_FORMAT)  # last: marks the run as finished
    return path


def _write_first_row(df: pd.DataFrame, values: dict):
    for key, value in values.items():
        col = pd.Series([None] * len(df), dtype=object)
        col.iloc[0] = value
        df[key] = col


def _claims(results_dir, experiment, specs) -> row_claims.RowClaims:
    """The row claims of a synthetic experiment's curves ``specs`` (by index)."""
    rows = {i: curve_path(results_dir, spec) for i, spec in enumerate(specs)}
    return row_claims.RowClaims(rows, lambda i: is_stored(results_dir, specs[i]), f"[{experiment}]")


def run_curves(
    experiment: str, specs, results_dir="results", progress=True, log=print, deadline=None
):
    """Run ``specs`` one at a time (skipping stored runs) with a tqdm bar; return seconds spent.
    ``deadline`` (a :func:`time.time` value): no curve is started after it (:mod:`.deadline`)."""
    specs = list(specs)
    todo = [s for s in specs if not is_stored(results_dir, s)]
    log(
        f"[{experiment}] {len(specs)} runs, {len(specs) - len(todo)} already stored, {len(todo)} to"
        f" do -> {experiment_dir(results_dir, experiment)}"
    )
    t0 = time.perf_counter()
    # the bar advances by iterations x (a rough cost of one iteration) so that its time-left
    # estimate accounts for deep trees costing more than shallow ones
    weights = [s.n_estimators * (3.0 if s.max_depth >= 10 else 1.0) for s in todo]
    with (
        _claims(results_dir, experiment, todo) as claims,
        Progress(
            sum(weights),
            experiment,
            unit="it",
            enabled=progress and bool(todo),
            mininterval=2.0,
            bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} [{elapsed}<{remaining}] {postfix}",
        ) as bar,
    ):
        pending = list(range(len(todo)))
        while pending:  # curves another process computes are skipped, then waited for
            for i in pending:
                if expired(deadline):
                    break
                if not claims.take(i):
                    continue
                bar.set_postfix_str(todo[i].label(), refresh=True)
                run_one(todo[i], results_dir)
                claims.done(i)
                bar.update(weights[i])
            if expired(deadline):
                break
            pending = claims.wait()
    elapsed = time.perf_counter() - t0
    if expired(deadline):
        left = sum(not is_stored(results_dir, s) for s in todo)
        log(f"[{experiment}] budget reached after {elapsed:.1f} s: {left} curve(s) not started")
        return elapsed
    log(f"[{experiment}] done in {elapsed:.1f} s")
    return elapsed


# -- configuration ---------------------------------------------------------------------------------
