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
(:mod:`proxboost.results`): data generator, its parameters and seed, loss and parameters,
algorithm, engine, tie rule and every estimator option, T, the library versions of the
engine and ``NUMERICS_VERSION``. A curve is reused only when its stored identity is the
one asked for. The runs of an experiment come from its Hydra config
(``python run.py +experiment=convergence``; :func:`specs_from_config`).

A curve file is a CSV with the columns ``iteration, seconds, train_loss, test_loss,
n_leaves`` (one row per t) followed by the run's settings (:data:`SETTING_COLUMNS`),
identity and provenance (:func:`proxboost.results.provenance`). To keep the files small,
settings and provenance are written **on the first row only** (iteration 0) and left empty
below it; :func:`proxboost.results.read_curve` / ``load_curves`` fill them down. ``step`` is λ, the
**per-sample** proximal step, empty for the gradient algorithms.

Guarantees (the same as the pipeline's result rows): every file is written atomically
(:func:`proxboost.results.atomic_write_csv`: temporary file + :func:`os.replace`); a run whose
curve file exists with the same identity is skipped (the curve file is written last, after
any predictions file, so it marks a finished run); runs execute one at a time so that the
wall-clock curves are comparable.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from . import _split_claims, budget, results
from ._progress import Progress
from .boosting import ALGOS as BOOSTING
from .boosting import GRADIENT_ALGOS  # the algorithms that do not use the proximal step λ
from .datasets import dataset_identity, load_dataset
from .losses import make_loss
from .methods import DEFAULT_TIE_RULE, BoostingMethod, make_estimator
from .results import CURVE_COLUMNS, SETTING_COLUMNS, atomic_write_csv, provenance

__all__ = [
    "CURVE_COLUMNS",
    "GRADIENT_ALGOS",
    "SETTING_COLUMNS",
    "RunSpec",
    "curve_identity",
    "curve_path",
    "experiment_dir",
    "run_curves",
    "run_one",
    "specs_from_config",
    "synthetic_split",
]

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
    """Settings of one synthetic run. ``step`` is λ per sample; ``seed`` draws the data and is
    the trees' ``random_state``."""

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
    tie_rule: str = DEFAULT_TIE_RULE
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
        parts += [f"T-{self.n_estimators}", f"seed-{self.seed}", self.engine, self.tie_rule]
        return "_".join(parts)

    def label(self) -> str:
        lam = "" if self.step is None else f" λ={_fmt_float(self.step)}"
        return (
            f"{self.experiment}: {self.dataset}/{self.loss}/{self.algo} depth={self.max_depth}{lam}"
        )


def experiment_dir(results_dir, experiment) -> Path:
    return Path(results_dir) / "synthetic" / experiment


def _loss(spec: RunSpec):
    return make_loss(spec.loss, tau=spec.tau, beta=spec.beta, newton_steps=spec.newton_steps)


def curve_identity(spec: RunSpec) -> str:
    """Canonical JSON of everything that determines a run's curve (see :mod:`proxboost.results`)."""
    loss = _loss(spec)
    _, _, info = _load(spec)
    identity = {
        "numerics_version": results.NUMERICS_VERSION,
        "dataset": dataset_identity(info, spec.seed),
        "split": "halves",
        "loss": {"name": loss.name, **loss.params()},
        "method": (
            BoostingMethod(spec.algo, loss, engine=spec.engine, tie_rule=spec.tie_rule).identity()
        ),
        "params": {
            "max_depth": int(spec.max_depth),
            "learning_rate": float(spec.learning_rate),
            "step": None if spec.step is None else float(spec.step),
            "n_estimators": int(spec.n_estimators),
            "random_state": int(spec.seed),
        },
        "grid_predictions": int(spec.grid_predictions),
    }
    return results.canonical_json(identity)


def curve_path(results_dir, spec: RunSpec) -> Path:
    short = results.identity_hash(curve_identity(spec))[: results.HASH_LENGTH]
    folder = experiment_dir(results_dir, spec.experiment) / spec.dataset / spec.loss / spec.algo
    return folder / f"{spec.name}_{short}.csv"


def is_stored(results_dir, spec: RunSpec) -> bool:
    """Whether the run's curve is stored with the same identity."""
    path = curve_path(results_dir, spec)
    if not path.exists():
        return False
    return results.stored_identity(path) == curve_identity(spec)


def _predictions_path(curve_file: Path) -> Path:
    return curve_file.with_name(curve_file.name[: -len(".csv")] + ".predictions.csv")


def _data_path(results_dir, spec: RunSpec) -> Path:
    return (
        experiment_dir(results_dir, spec.experiment) / spec.dataset / f"data-seed-{spec.seed}.csv"
    )


# -- running ---------------------------------------------------------------------------------------
_DATA_CACHE: dict = {}


def _load(spec: RunSpec):
    key = (spec.dataset, spec.seed, tuple(sorted(spec.dataset_params.items())))
    if key not in _DATA_CACHE:
        _DATA_CACHE[key] = load_dataset(spec.dataset, random_state=spec.seed, **spec.dataset_params)
    return _DATA_CACHE[key]


def run_one(spec: RunSpec, results_dir="results") -> Path | None:
    """Fit one run and store its curve (and predictions); ``None`` if already stored."""
    path = curve_path(results_dir, spec)
    if is_stored(results_dir, spec):
        return None
    identity = curve_identity(spec)
    X, y, info = _load(spec)
    task = info.task
    tr, te = synthetic_split(len(y), spec.seed)
    est = make_estimator(
        _loss(spec),
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
        data_file = _data_path(results_dir, spec)
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


def run_curves(
    experiment: str, specs, results_dir="results", progress=True, log=print, deadline=None
):
    """Run ``specs`` one at a time (skipping stored runs) with a tqdm bar; return seconds spent.
    ``deadline`` (a :func:`time.time` value): no curve is started after it (:mod:`.budget`)."""
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
        _split_claims.curve_claims(results_dir, experiment, todo) as claims,
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
                if budget.expired(deadline):
                    break
                if not claims.take(i):
                    continue
                bar.set_postfix_str(todo[i].label(), refresh=True)
                run_one(todo[i], results_dir)
                claims.done(i)
                bar.update(weights[i])
            if budget.expired(deadline):
                break
            pending = claims.wait()
    elapsed = time.perf_counter() - t0
    if budget.expired(deadline):
        left = sum(not is_stored(results_dir, s) for s in todo)
        log(f"[{experiment}] budget reached after {elapsed:.1f} s: {left} curve(s) not started")
        return elapsed
    log(f"[{experiment}] done in {elapsed:.1f} s")
    return elapsed


# -- configuration ---------------------------------------------------------------------------------
def specs_from_config(config: dict, engine="exact") -> list[RunSpec]:
    """The runs of a ``synthetic`` config node (``conf/experiment/{intro,convergence,
    proximal_step}.yaml``): every combination of its lists, in the order problems, depth,
    algorithm, λ, seed, tie rule.

    Keys: ``experiment``; ``problems`` (``dataset/loss`` strings); ``algo``, ``max_depth``,
    ``step``, ``seed``, ``tie_rule`` (lists); ``learning_rate``, ``n_estimators``, ``tau``,
    ``beta``, ``newton_steps``, ``grid_predictions`` (numbers); ``dataset_params`` (dict).
    A gradient algorithm runs once whatever ``step`` holds (it does not use λ).
    """

    def as_list(key):
        value = config[key]
        return list(value) if isinstance(value, (list, tuple)) else [value]

    unknown = [a for a in as_list("algo") if a not in BOOSTING]
    if unknown:
        raise ValueError(
            f"synthetic.algo {unknown[0]!r} is not a boosting algorithm; valid:"
            f" {', '.join(BOOSTING)}"
        )
    settings = dict(
        learning_rate=float(config["learning_rate"]),
        n_estimators=int(config["n_estimators"]),
        engine=engine,
        tau=float(config.get("tau", 0.5)),
        beta=float(config.get("beta", 1.0)),
        newton_steps=int(config.get("newton_steps", 1)),
        grid_predictions=int(config.get("grid_predictions", 0)),
        dataset_params=dict(config.get("dataset_params") or {}),
    )
    problems = [tuple(str(p).partition("/")[::2]) for p in as_list("problems")]
    combinations = itertools.product(
        problems,
        [int(d) for d in as_list("max_depth")],
        as_list("algo"),
        [float(s) for s in as_list("step")],
        [int(s) for s in as_list("seed")],
        [str(t) for t in as_list("tie_rule")],
    )
    specs = (
        RunSpec(
            config["experiment"],
            dataset,
            loss,
            algo,
            max_depth=depth,
            step=step,
            seed=seed,
            tie_rule=tie_rule,
            **settings,
        )
        for (dataset, loss), depth, algo, step, seed, tie_rule in combinations
    )
    # a gradient algorithm's spec drops λ, so its combinations that differ only by λ are one run
    specs = list(dict.fromkeys(specs))
    return specs
