"""Methods of the protocol: one interface over the boosting estimators and the baselines.

Every method compared by the protocol (:mod:`proxboost.experiments.plan.protocol`) is an object
built by :func:`make_method` with these members::

    name, engine, grid_axes, val_metric       # what it is, which grid axes it searches
    reports_loss() -> bool                    # is its test loss reported (random forests: ls only)
    validation_curve(params, train, valid, max_estimators, random_state)
        -> (values, n_estimators)             # validation criterion per candidate T
    refit_predict(params, n_estimators, train, X_test, random_state)
        -> decision values on X_test          # predictions (regression) or margins (classification)
    identity() -> dict                        # options and library versions behind its numbers

``train`` and ``valid`` are ``(X, y)`` pairs. The boosting adapter lives here; the baselines
(XGBoost, LightGBM, scikit-learn's HistGradientBoosting, random forests) live in
:mod:`proxboost.experiments.plan.baselines` behind the same interface.

:func:`make_estimator` is the one place that builds a boosting estimator from (loss,
algorithm, parameters): the protocol, the synthetic curves and the command line all call it.

The options of the ``algo`` and ``engine`` config groups (``conf/algo/``, ``conf/engine/``) are
built by ``hydra.utils.instantiate`` into an :class:`Algo` and an :class:`Engine`: what the
pipeline needs of a choice, and nothing of Hydra's (``_target_`` is Hydra's key, never an
option: it cannot reach an identity).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from proxboost._vocabulary import DEFAULT_TIE_RULE, library_version
from proxboost.boosting import ALGOS as _BOOSTING_ALGOS
from proxboost.boosting import PROXIMAL_ALGOS, BoostingClassifier, BoostingRegressor
from proxboost.engines import ENGINES
from proxboost.experiments.plan import baselines
from proxboost.experiments.plan.protocol import GRID_AXES, LEVELS_VAL_METRIC
from proxboost.losses import LOSS_PARAMETERS, MultiQuantile

__all__ = [
    "ALGOS",
    "BASELINE_ALGOS",
    "BOOSTING_ALGOS",
    "DEFAULT_TIE_RULE",
    "Algo",
    "BoostingMethod",
    "LEVELS_VAL_METRIC",
    "Engine",
    "engine_libraries",
    "library_version",
    "make_estimator",
    "known_algos",
    "make_method",
    "n_levels",
    "register_method",
    "unregister_method",
]

BOOSTING_ALGOS = tuple(_BOOSTING_ALGOS)
#: Baselines and their classes in :mod:`proxboost.experiments.plan.baselines`.
_BASELINES = {
    "xgboost": "XGBoostMethod",
    "random_forest": "RandomForestMethod",
    "lightgbm": "LightGBMMethod",
    "sklearn_hgb": "HistGradientBoostingMethod",
    "quantile_forest": "QuantileForestMethod",
    "catboost": "CatBoostMethod",
}
BASELINE_ALGOS = tuple(_BASELINES)
#: The built-in algorithms (:func:`known_algos` adds the registered methods)
ALGOS = BOOSTING_ALGOS + BASELINE_ALGOS
#: Methods added by :func:`register_method`: algo name -> class
_REGISTERED: dict[str, type] = {}
#: What a method class gives: its attributes, and the methods the protocol calls
METHOD_ATTRIBUTES = ("grid_axes", "val_metric", "engine")
METHOD_CALLS = ("reports_loss", "validation_curve", "refit_predict", "identity")


def known_algos() -> tuple[str, ...]:
    """Every algorithm a run takes: the built-in ones, then the registered methods."""
    return ALGOS + tuple(_REGISTERED)


def register_method(cls):
    """Add a method (a baseline) under ``cls.name``, so that ``run.py algo=<name>`` (with a
    ``conf/algo/<name>.yaml`` in the user's config folder) runs it under the protocol, without
    editing proxboost (``docs/extending.md``). Usable as a class decorator; returns ``cls``.

    ``cls(loss, **options)`` builds the method for a loss object (``options``: the other keys of
    the algo config; raise ``ProtocolError`` for a loss it cannot fit); it has the attributes
    :data:`METHOD_ATTRIBUTES` and the calls :data:`METHOD_CALLS` (the interface of this
    module's docstring and of :mod:`proxboost.experiments.plan.baselines`). Anything else is
    refused by a one-line ``ValueError`` before anything changes."""
    name = getattr(cls, "name", None)
    problem = ""
    if not isinstance(cls, type):
        problem = "a method is a class (built as cls(loss, **options)); pass the class"
    elif not (isinstance(name, str) and name.isidentifier()):
        problem = f"name={name!r} is not a name; set the class attribute name, e.g. 'sklearn_gbr'"
    elif name in known_algos():
        kind = "a built-in algorithm" if name in ALGOS else "registered earlier"
        problem = f"the name {name!r} is taken ({kind}); choose another name"
    else:
        missing = [a for a in METHOD_ATTRIBUTES if not hasattr(cls, a)]
        missing += [m for m in METHOD_CALLS if not callable(getattr(cls, m, None))]
        if missing:
            problem = (
                f"it has no {', '.join(missing)}; a method has {METHOD_ATTRIBUTES} and"
                f" {METHOD_CALLS}"
            )
    if problem:
        raise ValueError(f"register_method({getattr(cls, '__name__', cls)!r}): {problem}")
    _REGISTERED[name] = cls
    return cls


def unregister_method(name) -> None:
    """Remove a method added by :func:`register_method` (a built-in algorithm is refused)."""
    if name in ALGOS:
        raise ValueError(f"unregister_method({name!r}): a built-in algorithm cannot be removed")
    if name not in _REGISTERED:
        raise ValueError(f"unregister_method({name!r}): no method of that name is registered")
    del _REGISTERED[name]


#: Estimator parameters that never change the numbers (left out of identities). ``warm_start``
#: continues a fit bit for bit as if it had been fitted at once (and the pipeline fits anew).
_NOT_NUMERICAL = frozenset({"n_jobs", "verbose", "warm_start"})

#: Library behind each tree-engine module (its version enters the identity of the rows).
_ENGINE_MODULE_LIBRARIES = {
    "proxboost.engines.sklearn": ("sklearn",),
    "proxboost.engines.exact": ("numba",),
    "proxboost.engines.hist": ("numba",),
}

_DISTRIBUTION = {"sklearn": "scikit-learn"}


def _versions(modules) -> dict:
    return {_DISTRIBUTION.get(m, m): library_version(m) for m in modules}


def engine_libraries(engine: str) -> dict:
    """``{distribution: version}`` of the library a tree engine grows its trees with."""
    module = ENGINES[engine].__module__
    return _versions(_ENGINE_MODULE_LIBRARIES.get(module, ()))


def _constraint_check(axis):
    """(predicate, what is allowed) of an estimator parameter, from its one constraint."""
    (constraint,) = [c for c in BoostingRegressor._parameter_constraints[axis] if c is not None]

    def ok(value):
        try:
            return constraint.is_satisfied_by(value)
        except ValueError:  # the constraint raises its own message: here only the verdict counts
            return False

    return ok, constraint.allowed


#: Checks of the grid values: the boosting axes by the estimators' parameter constraints (their one
#: definition), the others by :data:`proxboost.experiments.plan.protocol.GRID_AXES`.
GRID_CHECKS = {
    **GRID_AXES,
    **{axis: _constraint_check(axis) for axis in ("max_depth", "learning_rate", "step")},
}


def make_estimator(loss, algo, engine="exact", tie_rule=DEFAULT_TIE_RULE, **params):
    """The boosting estimator of ``algo`` for a loss object, with its parameters.

    ``loss`` is a :mod:`proxboost.losses` object: its task picks
    :class:`~proxboost.BoostingRegressor` or :class:`~proxboost.BoostingClassifier` and its
    parameters (τ, β, Newton steps) are passed on. ``params`` are estimator parameters
    (``n_estimators``, ``max_depth``, ``learning_rate``, ``step``, ``random_state``, ...).
    """
    cls = BoostingClassifier if loss.task == "classification" else BoostingRegressor
    kw = {**loss.params(), **params}
    return cls(loss=loss.name, algo=algo, engine=engine, tie_rule=tie_rule, **kw)


#: Estimator parameters added after rows were stored, with their default: in an identity only
#: when set otherwise, so that every stored row keeps its identity.
_LATER_OPTIONS = {"monotonic_cst": None}


def estimator_options(estimator) -> dict:
    """The estimator's parameters other than the loss's, the grid's, the per-fit ones and
    those that never change numbers — with the tie rule always written out."""
    fixed = {
        "loss",
        "algo",
        "engine",
        "n_estimators",
        "random_state",
        "max_depth",
        "learning_rate",
        "step",
        *LOSS_PARAMETERS,  # in the identity through the loss, not the options
        *_NOT_NUMERICAL,
    }
    options = {
        k: v
        for k, v in estimator.get_params(deep=False).items()
        if k not in fixed and not (k in _LATER_OPTIONS and v is _LATER_OPTIONS[k])
    }
    options.setdefault("tie_rule", DEFAULT_TIE_RULE)
    return options


def n_levels(loss) -> int:
    """The number of quantile levels of a loss of several quantiles (``tau=[...]``), else 0."""
    return len(loss.taus) if isinstance(loss, MultiQuantile) else 0


class BoostingMethod:
    """The six boosting algorithms of :mod:`proxboost.boosting` behind the method interface.

    With a loss of several quantiles (``tau=[...]``) a method is one model of K levels: its
    validation criterion is the sum of the K levels' losses, ``refit_predict`` returns shape
    (n, K)."""

    val_metric = "loss"

    def __init__(self, algo, loss, engine="exact", tie_rule=DEFAULT_TIE_RULE):
        if algo not in BOOSTING_ALGOS:
            raise ValueError(
                f"algo '{algo}' is not a boosting algorithm; valid: {', '.join(BOOSTING_ALGOS)}"
            )
        self.name = algo
        self.loss = loss
        self.engine = engine
        self.tie_rule = tie_rule
        self.grid_axes = ("max_depth", "learning_rate") + (
            ("step",) if algo in PROXIMAL_ALGOS else ()
        )
        if n_levels(loss):
            self.val_metric = LEVELS_VAL_METRIC
            # what only a fit would check (the tie rules a multi-level model takes), now
            make_estimator(loss, algo, engine=engine, tie_rule=tie_rule)._check_param_combinations()

    def reports_loss(self) -> bool:
        return True

    def estimator(self, params, n_estimators, random_state):
        kw = dict(
            n_estimators=int(n_estimators),
            learning_rate=float(params["learning_rate"]),
            max_depth=int(params["max_depth"]),
            random_state=int(random_state),
        )
        if "step" in params:
            step = params["step"]
            kw["step"] = step if isinstance(step, str) else float(step)  # a number or "auto"
        return make_estimator(
            self.loss, self.name, engine=self.engine, tie_rule=self.tie_rule, **kw
        )

    def identity(self) -> dict:
        est = make_estimator(self.loss, self.name, engine=self.engine, tie_rule=self.tie_rule)
        return {
            "algo": self.name,
            "engine": self.engine,
            "options": estimator_options(est),
            "libraries": engine_libraries(self.engine),
        }

    def validation_curve(self, params, train, valid, max_estimators, random_state):
        est = self.estimator(params, max_estimators, random_state)
        est.fit(*train, eval_set=valid)
        values = np.asarray(est.eval_loss_, dtype=np.float64)
        if values.ndim == 2:  # several quantiles: one column per level, selected on their sum
            values = values.sum(axis=1)
        return values, np.arange(len(values))

    def refit_predict(self, params, n_estimators, train, X_test, random_state):
        X, y = train
        if int(n_estimators) == 0:
            f0 = np.asarray(self.loss.init(np.asarray(y, dtype=np.float64)), dtype=np.float64)
            return np.tile(f0, (len(X_test), 1)) if f0.ndim else np.full(len(X_test), float(f0))
        est = self.estimator(params, n_estimators, random_state).fit(X, y)
        if self.loss.task == "classification":
            return np.asarray(est.decision_function(X_test), dtype=np.float64)
        return np.asarray(est.predict(X_test), dtype=np.float64)


def make_method(algo, loss, engine="exact", options=None, tie_rule=DEFAULT_TIE_RULE):
    """The method object of ``algo`` for a loss object.

    ``engine`` and ``tie_rule`` apply to the boosting algorithms only (a baseline's
    ``engine`` is ``"none"``); ``options`` are method settings from the algo config (e.g.
    ``n_estimators`` of random forests, ``tree_method`` of XGBoost).
    """
    options = dict(options or {})
    if algo in BOOSTING_ALGOS:
        return BoostingMethod(algo, loss, engine=engine, tie_rule=tie_rule)
    if n_levels(loss) and (algo in _BASELINES or algo in _REGISTERED):
        cls = getattr(baselines, _BASELINES[algo]) if algo in _BASELINES else _REGISTERED[algo]
        levels = getattr(cls, "levels", None)
        if levels == "one model":  # the library fits several levels in one model
            return cls(loss, **options)
        if levels == "separate":  # one model per level, each selected on its own
            return baselines.SeparateLevels(cls, loss, **options)
        raise ValueError(
            f"fits one quantile level per model, not loss.tau={loss.params()['tau']}: give "
            "loss.tau one level, or use a boosting algo for several levels in one model"
        )
    if algo in _BASELINES:
        return getattr(baselines, _BASELINES[algo])(loss, **options)
    if algo in _REGISTERED:
        return _REGISTERED[algo](loss, **options)
    raise ValueError(f"unknown algo '{algo}'; valid choices: {', '.join(known_algos())}")


class Algo:
    """An option of the ``algo`` config group (``conf/algo/<name>.yaml``; its ``_target_``):
    the algorithm's ``name``, the axes of the grid that only it searches (``grid``: random
    forests' ``max_features``) and its fixed settings, the other keys (``options``: e.g. the
    forests' ``n_estimators``, XGBoost's ``tree_method``), which :func:`make_method` passes on.
    ``Algo("prox")`` is a plain algorithm."""

    def __init__(self, name, grid=None, **options):
        self.name = name
        self.grid = dict(grid or {})
        self.options = options

    def method(self, loss, engine="exact", tie_rule=DEFAULT_TIE_RULE):
        """The method object of this algorithm for a loss object (:func:`make_method`)."""
        return make_method(self.name, loss, engine=engine, options=self.options, tie_rule=tie_rule)

    def __repr__(self):
        settings = "".join(f", {k}={v!r}" for k, v in {**self.options, "grid": self.grid}.items())
        return f"Algo({self.name!r}{settings})"


@dataclass(frozen=True)
class Engine:
    """An option of the ``engine`` config group (``conf/engine/<name>.yaml``; its ``_target_``):
    the tree engine the boosting algorithms grow their trees with (one of
    :data:`proxboost.engines.ENGINES`); the baselines grow their own."""

    name: str
