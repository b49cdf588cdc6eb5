"""The synthetic experiments' runs: their settings (:class:`RunSpec`, from a Hydra config by
:func:`specs_from_config`), identities, file paths and whether they are stored.

Fitting a run and writing its curve is :mod:`proxboost.experiments.fits.curves` (whose docstring
describes the files); the manifest (:mod:`proxboost.experiments.plan.versions`) and the budget
estimates name the runs through this module without importing the fits.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path

from proxboost.boosting import ALGOS as BOOSTING
from proxboost.boosting import GRADIENT_ALGOS  # the algorithms that do not use the proximal step λ
from proxboost.experiments.datasets import dataset_identity, load_dataset
from proxboost.experiments.plan.methods import DEFAULT_TIE_RULE, BoostingMethod
from proxboost.experiments.store import results
from proxboost.losses import make_loss

__all__ = [
    "GRADIENT_ALGOS",
    "RunSpec",
    "curve_identity",
    "curve_path",
    "data_path",
    "experiment_dir",
    "is_stored",
    "load_data",
    "run_loss",
    "specs_from_config",
]


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


def run_loss(spec: RunSpec):
    return make_loss(spec.loss, tau=spec.tau, beta=spec.beta, newton_steps=spec.newton_steps)


def curve_identity(spec: RunSpec) -> str:
    """Canonical JSON of everything that determines a run's curve (see
    :mod:`proxboost.experiments.store.results`)."""
    loss = run_loss(spec)
    _, _, info = load_data(spec)
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


def data_path(results_dir, spec: RunSpec) -> Path:
    """The stored data draw of a run (the introduction example: predictions on a grid)."""
    return (
        experiment_dir(results_dir, spec.experiment) / spec.dataset / f"data-seed-{spec.seed}.csv"
    )


_DATA_CACHE: dict = {}


def load_data(spec: RunSpec):
    """The data draw of a run (X, y, info), cached per process: the runs of an experiment share
    their draws."""
    key = (spec.dataset, spec.seed, tuple(sorted(spec.dataset_params.items())))
    if key not in _DATA_CACHE:
        _DATA_CACHE[key] = load_dataset(spec.dataset, random_state=spec.seed, **spec.dataset_params)
    return _DATA_CACHE[key]


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
