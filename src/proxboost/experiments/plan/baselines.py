"""Baselines of the real-world protocol: XGBoost, LightGBM, scikit-learn's HistGradientBoosting
and random forests (set-up and reasons in ``docs/protocol.md``, section "Baselines").

Every baseline sits behind the method interface of :mod:`proxboost.experiments.plan.methods`::

    method.validation_curve(params, train, valid, max_estimators, random_state)
        -> (values, n_estimators)     # selection criterion on validation, per candidate T
    method.refit_predict(params, n_estimators, train, X_test, random_state)
        -> decision values on X_test (predictions for regression, margins for classification)
    method.identity() -> {"algo", "engine": "none", "options", "libraries"}

(``train``, ``valid``: ``(X, y)`` pairs) and names the library its numbers depend on (``library``,
``versions()``; both enter the rows' identity). A baseline grows its own trees: its ``engine`` is
``"none"`` whatever proxboost tree engine a run names. A setting the library cannot run (a loss
without a matching objective, a bad option) raises
:class:`~proxboost.experiments.plan.protocol.ProtocolError` when the method is built, before any
fit.

XGBoost (``algo=xgboost``)
    ``tree_method="hist"``, its defaults otherwise (max_bin 256, reg_lambda 1, ...), one thread
    per fit (the protocol parallelises across fits). Objective per loss: ``ls`` →
    ``reg:squarederror``, ``lad`` → ``reg:absoluteerror``, ``pinball`` → ``reg:quantileerror``
    with ``quantile_alpha`` = τ, ``logistic`` → ``binary:logistic``, ``hinge`` →
    ``binary:hinge``, ``exponential`` → a custom objective (gradient −βy·e^{−βyz}, hessian
    β²·e^{−βyz}, exponents clipped at ±700), whose intercept ``base_score`` is set to the
    exponential loss's f_0 (XGBoost estimates the intercept of its built-in objectives itself,
    but not of a custom one). Labels ±1 → {0, 1} for the ``binary:*`` objectives. The
    validation curve is **our** loss (``loss.value``) on XGBoost's raw margin
    (``output_margin=True``, so ``binary:hinge`` is scored on its margin, not on its 0/1
    output) after every boosting round, predicted during training (XGBoost's prediction cache
    of the validation DMatrix makes this O(n_val) per round). T = 0 is XGBoost's own intercept,
    obtained as the margin of a one-round model with learning rate 0; the refit with T = 0
    does the same on train ∪ validation.

LightGBM (``algo=lightgbm``) and HistGradientBoosting (``algo=sklearn_hgb``)
    What a practitioner would pick for quantile or absolute-error boosting, each with its own
    native objective and its own initial prediction. Grid: ``max_depth`` × ``learning_rate``;
    a tree of depth d has at most 2^d leaves (LightGBM ``num_leaves``, HGB ``max_leaf_nodes``),
    so the depth bounds the tree as in the other methods. Fixed settings come from the algo
    config (``conf/algo/lightgbm.yaml``, ``conf/algo/sklearn_hgb.yaml``); leaves may hold a
    single training row (as the exact trees), so that depth-limited trees grow on the small
    datasets instead of stopping at the libraries' default of 20 rows per leaf. A grid that
    gives values to a library's minimum leaf size (LightGBM ``min_data_in_leaf``, HGB
    ``min_samples_leaf``, XGBoost ``min_child_weight``) makes it a third axis (:class:`_LeafAxis`).

    - **Regression** (one row per loss): ``ls`` → LightGBM ``regression`` / HGB
      ``squared_error``, ``lad`` → ``regression_l1`` / ``absolute_error``, ``pinball`` →
      ``quantile`` with α = τ. The validation curve is **our** loss on the raw prediction
      after every round, T ∈ [0, T_max], T = 0 being the library's own initial prediction
      (LightGBM's ``boost_from_average`` score, HGB's baseline prediction).
    - **Classification**: their logistic objective (LightGBM ``binary``, HGB ``log_loss``)
      whatever the run's classification loss, so the rows do not depend on it (as for random
      forests); the curve is the validation misclassification rate of the sign of the raw
      margin (0 counts as +1), and only the test misclassification rate is reported (their
      training loss is neither the exponential nor the hinge loss).

    Curves cost O(T·n_val) in all: LightGBM's validation margin is accumulated one tree at a
    time (``predict(start_iteration=t, num_iteration=1, raw_score=True)``: the running sum
    adds the trees in LightGBM's own order, so it equals its prediction with t trees); HGB's
    comes from ``staged_predict`` / ``staged_decision_function``. If a library stops adding
    trees (no split meets its requirements), the model no longer changes and the curve stays
    at its last value.

Random forests (``algo=random_forest``)
    scikit-learn ``RandomForestRegressor`` / ``RandomForestClassifier`` with ``n_estimators``
    trees (500), ``max_features`` from the grid ({1/3, "sqrt", 1.0}), one job per fit. There
    is no T to select: the curve has one value, the validation squared error (regression)
    or misclassification rate (classification). Reported: the test least-squares loss only
    when the run's loss is ``ls`` (NaN otherwise) and the misclassification rate.

Quantile regression forests (``algo=quantile_forest``)
    ``quantile-forest``'s ``RandomForestQuantileRegressor`` (``lad`` and ``pinball`` only):
    the run's quantile level predicted from the forest's leaves, ``max_features`` ×
    ``min_samples_leaf`` selected on validation by the run's own loss; see
    :class:`QuantileForestMethod`.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from threadpoolctl import threadpool_limits

from proxboost._vocabulary import is_integer, library_version
from proxboost.experiments.plan.protocol import LEVELS_VAL_METRIC, ProtocolError
from proxboost.losses import EXP_CLIP, MultiQuantile

__all__ = [
    "CATBOOST_OBJECTIVES",
    "CatBoostMethod",
    "HGB_LOSSES",
    "HistGradientBoostingMethod",
    "LGB_OBJECTIVES",
    "LightGBMMethod",
    "QuantileForestMethod",
    "RandomForestMethod",
    "XGBoostMethod",
    "XGB_OBJECTIVES",
]

#: XGBoost objective for each loss id (``None``: custom objective).
XGB_OBJECTIVES = {
    "ls": "reg:squarederror",
    "lad": "reg:absoluteerror",
    "pinball": "reg:quantileerror",
    "logistic": "binary:logistic",
    "hinge": "binary:hinge",
    "exponential": None,
}


def _as_int(value):
    return None if value is None else int(value)


#: Settings that never change a baseline's numbers (left out of its identity).
_NOT_NUMERICAL = frozenset({"n_threads", "num_threads", "verbose"})


def _identity(method, options) -> dict:
    """A baseline's part of a row's identity: its fixed options and library versions."""
    return {
        "algo": method.name,
        "engine": method.engine,
        "libraries": method.versions(),
        "options": {k: v for k, v in options.items() if k not in _NOT_NUMERICAL},
    }


class _LeafAxis:
    """A library's minimum leaf size as an optional grid axis (``leaf_axis``): searched when the
    grid gives it values (the quantile benchmark's 90-point reading, conf/grid/benchmark90.yaml),
    else the library's fixed setting applies and the method's grid and identity are unchanged.

    Why the leaf size and not an L2 penalty: for the quantile and absolute-error objectives the
    three libraries refit every leaf's value to the τ-quantile (or median) of its residuals, so
    an L2 penalty on leaf values (``lambda_l2``, ``l2_regularization``, ``reg_lambda``) changes
    the split gains only; the leaf size bounds how few rows each leaf's quantile rests on, and
    it means the same in all three (XGBoost's hessian is 1 per row for these objectives, so
    ``min_child_weight`` counts rows)."""

    leaf_axis = ""

    def search_axes(self, grid) -> None:
        """Add ``leaf_axis`` to the searched axes when ``grid`` (the merged grid) names it."""
        if self.leaf_axis in grid:
            self.grid_axes = type(self).grid_axes + (self.leaf_axis,)

    def _searched(self) -> bool:
        return self.leaf_axis in self.grid_axes

    def _fixed(self, settings) -> dict:
        """The fixed settings that enter the identity: the leaf size's goes when it is searched
        (the grid holds its values then)."""
        return {k: v for k, v in settings.items() if not (self._searched() and k == self.leaf_axis)}


class XGBoostMethod(_LeafAxis):
    """XGBoost with the objective matching a loss; curve = our loss on its margin."""

    #: several quantile levels (``tau=[...]``): one model per level (:class:`SeparateLevels`)
    levels = "separate"

    name = "xgboost"
    library = "xgboost"
    engine = "none"  # grows its own trees: no proxboost tree engine applies
    val_metric = "loss"
    grid_axes = ("max_depth", "learning_rate")
    leaf_axis = "min_child_weight"

    def __init__(self, loss, n_threads=1, tree_method="hist"):
        if loss.name not in XGB_OBJECTIVES:
            raise ProtocolError(
                f"no XGBoost objective for loss {loss.name!r}; known: {list(XGB_OBJECTIVES)}"
            )
        if tree_method not in ("hist", "approx", "exact"):
            raise ProtocolError(
                f"xgboost setting tree_method={tree_method!r} is invalid: must be hist, approx or"
                " exact (conf/algo/xgboost.yaml)"
            )
        self.loss = loss
        self.n_threads = int(n_threads)
        self.tree_method = tree_method

    def reports_loss(self) -> bool:
        return True

    def versions(self) -> dict:
        return {self.library: library_version("xgboost")}

    def identity(self) -> dict:
        return _identity(self, {"tree_method": self.tree_method})

    # -- XGBoost plumbing --------------------------------------------------------------------------
    def _booster_params(self, params, random_state, learning_rate=None):
        loss = self.loss
        p = {
            "tree_method": self.tree_method,
            "max_depth": int(params["max_depth"]),
            "eta": float(params["learning_rate"] if learning_rate is None else learning_rate),
            "nthread": self.n_threads,
            "seed": int(random_state) % (2**31),
            "verbosity": 0,
            # XGBoost's own metric is not used: the curve is our loss, see validation_curve
            "disable_default_eval_metric": 1,
        }
        objective = XGB_OBJECTIVES[loss.name]
        if objective is not None:
            p["objective"] = objective
        if loss.name == "pinball":
            p["quantile_alpha"] = float(loss.tau)
        if self.leaf_axis in params:
            p["min_child_weight"] = float(params[self.leaf_axis])
        return p

    def _dmatrix(self, X, y=None):
        import xgboost as xgb  # lazy: loaded by the runs that use it only (seconds to import)

        if y is None:
            return xgb.DMatrix(np.asarray(X, dtype=np.float32), nthread=self.n_threads)
        label = (
            (np.asarray(y) > 0).astype(np.float32)
            if str(XGB_OBJECTIVES[self.loss.name]).startswith("binary:")
            else y
        )
        return xgb.DMatrix(np.asarray(X, dtype=np.float32), label=label, nthread=self.n_threads)

    def _train(
        self,
        params,
        dtrain,
        y,
        n_rounds,
        random_state,
        learning_rate=None,
        evals=(),
        callbacks=None,
    ):
        import xgboost as xgb  # lazy: loaded by the runs that use it only (seconds to import)

        p = self._booster_params(params, random_state, learning_rate)
        obj = None
        if XGB_OBJECTIVES[self.loss.name] is None:
            obj = self._exponential_objective(np.asarray(y, dtype=np.float64))
            p["base_score"] = float(self.loss.init(np.asarray(y, dtype=np.float64)))
        return xgb.train(
            p,
            dtrain,
            num_boost_round=int(n_rounds),
            obj=obj,
            evals=list(evals),
            verbose_eval=False,
            callbacks=callbacks,
        )

    def _exponential_objective(self, y):
        beta = float(self.loss.beta)

        def objective(predt, dtrain):
            e = np.exp(np.clip(-beta * y * predt, -EXP_CLIP, EXP_CLIP))
            return -beta * y * e, beta * beta * e

        return objective

    # -- protocol shape ----------------------------------------------------------------------------
    def validation_curve(self, params, train, valid, max_estimators, random_state):
        (X_train, y_train), (X_val, y_val) = train, valid
        import xgboost as xgb  # lazy: loaded by the runs that use it only (seconds to import)

        loss = self.loss
        dtrain, dval = self._dmatrix(X_train, y_train), self._dmatrix(X_val, y_val)
        y_val = np.asarray(y_val, dtype=np.float64)
        values = np.empty(int(max_estimators) + 1)
        # T = 0: XGBoost's intercept, the margin of one round at learning rate 0.
        b0 = self._train(params, dtrain, y_train, 1, random_state, learning_rate=0.0)
        values[0] = loss.value(y_val, b0.predict(dval, output_margin=True).astype(np.float64))

        class _Record(xgb.callback.TrainingCallback):
            def after_iteration(self, model, epoch, evals_log):
                margin = model.predict(dval, output_margin=True).astype(np.float64)
                values[epoch + 1] = loss.value(y_val, margin)
                return False

        # XGBoost caches the predictions of a DMatrix it has predicted and updates them with
        # the new trees only, so each round costs O(n_val), not O(t * n_val).
        self._train(params, dtrain, y_train, max_estimators, random_state, callbacks=[_Record()])
        return values, np.arange(int(max_estimators) + 1)

    def refit_predict(self, params, n_estimators, train, X_test, random_state):
        X, y = train
        dtrain, dtest = self._dmatrix(X, y), self._dmatrix(X_test)
        if int(n_estimators) == 0:
            booster = self._train(params, dtrain, y, 1, random_state, learning_rate=0.0)
        else:
            booster = self._train(params, dtrain, y, n_estimators, random_state)
        return booster.predict(dtest, output_margin=True).astype(np.float64)


class RandomForestMethod:
    """scikit-learn random forests, ``max_features`` selected on validation."""

    name = "random_forest"
    library = "scikit-learn"
    engine = "none"  # grows its own trees: no proxboost tree engine applies
    grid_axes = ("max_features",)

    def __init__(self, loss, n_estimators=500, n_threads=1):
        self.loss = loss
        self.n_estimators = int(n_estimators)
        self.n_threads = int(n_threads)
        self.classification = loss.task == "classification"
        self.val_metric = "misclassification" if self.classification else "squared_error"

    def reports_loss(self) -> bool:
        """A forest's test loss is reported for the least-squares loss only (it minimises no
        other loss)."""
        return self.loss.name == "ls"

    def versions(self) -> dict:
        return {self.library: library_version("sklearn")}

    def identity(self) -> dict:
        return _identity(self, {"n_estimators": self.n_estimators})

    @staticmethod
    def max_features(value):
        """Config value → scikit-learn value (``"sqrt"``/``"log2"`` stay strings)."""
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                return value
        return float(value)

    def _forest(self, params, random_state):
        cls = RandomForestClassifier if self.classification else RandomForestRegressor
        return cls(
            n_estimators=self.n_estimators,
            max_features=self.max_features(params["max_features"]),
            random_state=int(random_state) % (2**32),
            n_jobs=self.n_threads,
        )

    def validation_curve(self, params, train, valid, max_estimators, random_state):
        (X_train, y_train), (X_val, y_val) = train, valid
        pred = self._forest(params, random_state).fit(X_train, y_train).predict(X_val)
        y_val = np.asarray(y_val, dtype=np.float64)
        if self.classification:
            value = _misclassification(y_val, pred)
        else:
            value = float(np.mean((y_val - pred) ** 2))
        return np.array([value]), np.array([self.n_estimators])

    def refit_predict(self, params, n_estimators, train, X_test, random_state):
        X, y = train
        pred = self._forest(params, random_state).fit(X, y).predict(X_test)
        return np.asarray(pred, dtype=np.float64)


class QuantileForestMethod:
    """Quantile regression forests (Meinshausen 2006) from the ``quantile-forest`` package:
    ``RandomForestQuantileRegressor`` predicting the run's quantile level (τ of ``pinball``,
    0.5 for ``lad``), its forest axes (``max_features``, ``min_samples_leaf``) selected on
    validation by **our** loss of the predicted quantile, as the boosting methods are. There is
    no T: the curve has one value. Regression losses ``lad`` and ``pinball`` only (a forest
    predicts a quantile, not a mean or a margin)."""

    name = "quantile_forest"
    library = "quantile-forest"
    engine = "none"  # grows its own trees: no proxboost tree engine applies
    grid_axes = ("max_features", "min_samples_leaf")

    #: several quantile levels (``tau=[...]``): one forest predicts them all
    levels = "one model"

    def __init__(self, loss, n_estimators=100, n_threads=1):
        if loss.name not in ("lad", "pinball"):
            raise ProtocolError(
                f"algo=quantile_forest predicts a quantile: it runs with loss=lad or "
                f"loss=pinball, not loss={loss.name}"
            )
        if not (is_integer(n_estimators) and int(n_estimators) >= 1):
            raise ProtocolError(
                f"quantile_forest: n_estimators={n_estimators!r}; use a positive integer"
            )
        self.loss = loss
        self.several = isinstance(loss, MultiQuantile)
        self.taus = (
            [float(t) for t in loss.taus] if self.several else [loss.params().get("tau", 0.5)]
        )
        self.n_estimators = int(n_estimators)
        self.n_threads = int(n_threads)
        self.val_metric = LEVELS_VAL_METRIC if self.several else loss.name

    def reports_loss(self) -> bool:
        return True

    def versions(self) -> dict:
        return {
            self.library: library_version("quantile_forest"),
            "scikit-learn": library_version("sklearn"),
        }

    def identity(self) -> dict:
        return _identity(self, {"n_estimators": self.n_estimators})

    def _forest(self, params, random_state):
        from quantile_forest import RandomForestQuantileRegressor  # lazy: an optional extra

        return RandomForestQuantileRegressor(
            n_estimators=self.n_estimators,
            max_features=RandomForestMethod.max_features(params["max_features"]),
            min_samples_leaf=int(params["min_samples_leaf"]),
            random_state=int(random_state) % (2**32),
            n_jobs=self.n_threads,
        )

    def predict_quantiles(self, params, train, X, quantiles, random_state):
        """Fit on ``train`` and predict the given quantile levels on X: shape (n, len)."""
        forest = self._forest(params, random_state).fit(*train)
        pred = forest.predict(X, quantiles=list(quantiles))
        return np.asarray(pred, dtype=np.float64).reshape(len(X), len(quantiles))

    def _output(self, pred):
        """(n, K) predictions with several levels, (n,) with one."""
        return pred if self.several else pred[:, 0]

    def validation_curve(self, params, train, valid, max_estimators, random_state):
        X_val, y_val = valid
        pred = self._output(self.predict_quantiles(params, train, X_val, self.taus, random_state))
        value = np.sum(self.loss.value(np.asarray(y_val, dtype=np.float64), pred))
        return np.array([value]), np.array([self.n_estimators])

    def refit_predict(self, params, n_estimators, train, X_test, random_state):
        return self._output(self.predict_quantiles(params, train, X_test, self.taus, random_state))


# -- LightGBM and HistGradientBoosting -------------------------------------------------------------
#: LightGBM objective for each regression loss id (classification: ``binary`` for every loss).
LGB_OBJECTIVES = {"ls": "regression", "lad": "regression_l1", "pinball": "quantile"}

#: HistGradientBoostingRegressor loss for each regression loss id (classification: ``log_loss``).
HGB_LOSSES = {"ls": "squared_error", "lad": "absolute_error", "pinball": "quantile"}

#: LightGBM's largest ``num_leaves``; a depth-d tree never has more than 2^d leaves anyway.
_LGB_MAX_LEAVES = 131072


def _misclassification(y, z) -> float:
    """Misclassification rate of sign(z) against labels ±1, 0 counting as +1 (as the protocol)."""
    return float(np.mean(np.where(np.asarray(z) >= 0, 1.0, -1.0) != np.asarray(y)))


def _is_number(v) -> bool:
    return (
        isinstance(v, (int, float, np.integer, np.floating))
        and not isinstance(v, bool)
        and math.isfinite(v)
    )


def _check_settings(algo, settings, defaults, checks):
    """``defaults`` updated by ``settings`` after checking every key and value (ProtocolError)."""
    unknown = sorted(set(settings) - set(defaults))
    if unknown:
        raise ProtocolError(
            f"unknown {algo} setting(s) {unknown}; known: {sorted(defaults)}"
            f" (conf/algo/{algo}.yaml)"
        )
    merged = {**defaults, **settings}
    for key, (ok, what) in checks.items():
        if not ok(merged[key]):
            raise ProtocolError(f"{algo} setting {key}={merged[key]!r} is invalid: must be {what}")
    return merged


def _curve(score, z0, stages, max_estimators):
    """``score`` of the decision values at T = 0 (``z0``) and after each stage, T = 0..T_max.

    A library that stops adding trees early leaves the model unchanged: the curve keeps its
    last value up to T_max (so selection, ties going to the smallest T, never picks a T
    beyond the last tree).
    """
    values = np.empty(int(max_estimators) + 1)
    values[0] = score(z0)
    t = 0
    for t, z in enumerate(stages, start=1):
        values[t] = score(z)
    values[t + 1 :] = values[t]
    return values, np.arange(int(max_estimators) + 1)


class _NativeObjectiveMethod(_LeafAxis):
    """What LightGBM and HGB share: objective per loss, criterion, grid, versions."""

    engine = "none"  # grows its own trees: no proxboost tree engine applies
    grid_axes = ("max_depth", "learning_rate")
    regression_objectives: dict = {}

    def __init__(self, loss):
        self.loss = loss
        self.classification = loss.task == "classification"
        if not self.classification and loss.name not in self.regression_objectives:
            raise ProtocolError(
                f"{self.name} has no objective for loss {loss.name!r}; "
                f"regression losses: {', '.join(self.regression_objectives)}"
            )
        self.val_metric = "misclassification" if self.classification else "loss"

    def reports_loss(self) -> bool:
        """The test loss is reported for regression only: in classification the library
        minimises its logistic loss, neither the exponential nor the hinge loss."""
        return not self.classification

    def _score(self, y_val):
        """Selection criterion on validation: our loss, or the misclassification rate."""
        y_val = np.asarray(y_val, dtype=np.float64)
        if self.classification:
            return lambda z: _misclassification(y_val, z)
        return lambda z: float(self.loss.value(y_val, np.asarray(z, dtype=np.float64)))


class LightGBMMethod(_NativeObjectiveMethod):
    """LightGBM with its native objective; curve = our loss (or the error) on its raw score."""

    #: several quantile levels (``tau=[...]``): one model per level (:class:`SeparateLevels`)
    levels = "separate"

    name = "lightgbm"
    library = "lightgbm"
    leaf_axis = "min_data_in_leaf"
    regression_objectives = LGB_OBJECTIVES
    #: Fixed settings (the values of conf/algo/lightgbm.yaml).
    defaults = {
        "num_threads": 1,
        "deterministic": True,
        # LightGBM asks for a fixed histogram layout when deterministic is set
        "force_col_wise": True,
        "verbose": -1,
        "min_data_in_leaf": 1,
        "min_sum_hessian_in_leaf": 1e-3,
        "min_data_in_bin": 1,
        "max_bin": 255,
    }
    checks = {
        "num_threads": (lambda v: is_integer(v) and v >= 1, "an integer >= 1"),
        "deterministic": (lambda v: isinstance(v, bool), "true or false"),
        "force_col_wise": (lambda v: isinstance(v, bool), "true or false"),
        "verbose": (is_integer, "an integer"),
        "min_data_in_leaf": (lambda v: is_integer(v) and v >= 1, "an integer >= 1"),
        "min_sum_hessian_in_leaf": (lambda v: _is_number(v) and v >= 0, "a number >= 0"),
        "min_data_in_bin": (lambda v: is_integer(v) and v >= 1, "an integer >= 1"),
        "max_bin": (lambda v: is_integer(v) and v >= 2, "an integer >= 2"),
    }

    def __init__(self, loss, **settings):
        super().__init__(loss)
        self.settings = _check_settings(self.name, settings, self.defaults, self.checks)
        self.objective = "binary" if self.classification else LGB_OBJECTIVES[loss.name]

    def versions(self) -> dict:
        return {self.library: library_version("lightgbm")}

    def identity(self) -> dict:
        return _identity(self, self._fixed(self.settings))

    def _params(self, params, random_state):
        depth = int(params["max_depth"])
        p = {
            "objective": self.objective,
            "max_depth": depth,
            "num_leaves": min(2**depth, _LGB_MAX_LEAVES),
            "learning_rate": float(params["learning_rate"]),
            "seed": int(random_state) % (2**31),
            **self.settings,
        }
        if self.leaf_axis in params:  # searched: the grid point's value, not the fixed one
            p["min_data_in_leaf"] = int(params[self.leaf_axis])
        if self.loss.name == "pinball":
            p["alpha"] = float(self.loss.tau)
        return p

    def _train(self, params, X, y, n_rounds, random_state):
        """Booster after ``n_rounds`` rounds, or fewer if LightGBM stops (no split left).

        ``n_rounds = 0``: one round in which no split is allowed (every leaf would need all
        the rows), so the model is LightGBM's initial score alone (``boost_from_average``).
        """
        import lightgbm as lgb  # lazy: loaded by the runs that use it only

        p = self._params(params, random_state)
        y = np.asarray(y, dtype=np.float64)
        if int(n_rounds) == 0:
            p["min_data_in_leaf"] = len(y)
        label = (y > 0).astype(np.float64) if self.classification else y
        # the Dataset gets the parameters too: its binning (min_data_in_bin, max_bin) is fixed
        # when it is built, and a bare Dataset would be built with LightGBM's defaults
        data = lgb.Dataset(np.asarray(X, dtype=np.float64), label=label, params=p)
        booster = lgb.Booster(p, data)
        for _ in range(max(int(n_rounds), 1)):
            if booster.update():  # True: no tree could be grown, the model is final
                break
        return booster

    def _raw(self, booster, X, **kw):
        return booster.predict(
            np.asarray(X, dtype=np.float64),
            raw_score=True,
            num_threads=self.settings["num_threads"],
            **kw,
        ).astype(np.float64)

    def validation_curve(self, params, train, valid, max_estimators, random_state):
        (X_train, y_train), (X_val, y_val) = train, valid
        score = self._score(y_val)
        z0 = self._raw(self._train(params, X_train, y_train, 0, random_state), X_val)
        booster = self._train(params, X_train, y_train, max_estimators, random_state)

        def stages():
            # tree t's contribution added to the running margin: O(n_val) per tree; the sum
            # runs over the trees in LightGBM's own order (the first tree holds its initial score)
            z = np.zeros(len(X_val))
            for t in range(booster.current_iteration()):
                z += self._raw(booster, X_val, start_iteration=t, num_iteration=1)
                yield z

        return _curve(score, z0, stages(), max_estimators)

    def refit_predict(self, params, n_estimators, train, X_test, random_state):
        X, y = train
        return self._raw(self._train(params, X, y, n_estimators, random_state), X_test)


class HistGradientBoostingMethod(_NativeObjectiveMethod):
    """scikit-learn's HistGradientBoosting with its native loss; curve from staged predictions."""

    #: several quantile levels (``tau=[...]``): one model per level (:class:`SeparateLevels`)
    levels = "separate"

    name = "sklearn_hgb"
    library = "scikit-learn"
    leaf_axis = "min_samples_leaf"
    regression_objectives = HGB_LOSSES
    #: Fixed settings (the values of conf/algo/sklearn_hgb.yaml).
    defaults = {"n_threads": 1, "min_samples_leaf": 1, "max_bins": 255, "early_stopping": False}
    checks = {
        "n_threads": (lambda v: is_integer(v) and v >= 1, "an integer >= 1"),
        "min_samples_leaf": (lambda v: is_integer(v) and v >= 1, "an integer >= 1"),
        "max_bins": (lambda v: is_integer(v) and 2 <= v <= 255, "an integer in [2, 255]"),
        # T is selected on the full validation curve: the library must not cut it short
        "early_stopping": (
            lambda v: v is False,
            "false (T is selected on the full validation curve)",
        ),
    }

    def __init__(self, loss, **settings):
        super().__init__(loss)
        self.settings = _check_settings(self.name, settings, self.defaults, self.checks)
        self.objective = "log_loss" if self.classification else HGB_LOSSES[loss.name]

    def versions(self) -> dict:
        return {self.library: library_version("sklearn")}

    def identity(self) -> dict:
        return _identity(self, self._fixed(self.settings))

    def _estimator(self, params, n_iter, random_state):
        depth = int(params["max_depth"])
        kw = dict(
            loss=self.objective,
            learning_rate=float(params["learning_rate"]),
            max_iter=max(int(n_iter), 1),
            max_depth=depth,
            max_leaf_nodes=2**depth,
            min_samples_leaf=int(params.get(self.leaf_axis, self.settings["min_samples_leaf"])),
            max_bins=self.settings["max_bins"],
            early_stopping=self.settings["early_stopping"],
            random_state=int(random_state) % (2**32),
        )
        if self.classification:
            return HistGradientBoostingClassifier(**kw)
        if self.loss.name == "pinball":
            kw["quantile"] = float(self.loss.tau)
        return HistGradientBoostingRegressor(**kw)

    def _threads(self):
        return threadpool_limits(limits=self.settings["n_threads"], user_api="openmp")

    @staticmethod
    def _baseline(est, n):
        # HGB's initial raw prediction (mean, median, τ-quantile or log-odds of the training
        # labels); scikit-learn has no public accessor for it
        return np.full(n, float(est._baseline_prediction.ravel()[0]))

    def _staged(self, est, X):
        stages = est.staged_decision_function(X) if self.classification else est.staged_predict(X)
        return (np.asarray(z, dtype=np.float64).ravel() for z in stages)

    def validation_curve(self, params, train, valid, max_estimators, random_state):
        (X_train, y_train), (X_val, y_val) = train, valid
        with self._threads():
            est = self._estimator(params, max_estimators, random_state).fit(X_train, y_train)
            return _curve(
                self._score(y_val),
                self._baseline(est, len(X_val)),
                self._staged(est, X_val),
                max_estimators,
            )

    def refit_predict(self, params, n_estimators, train, X_test, random_state):
        X, y = train
        with self._threads():
            est = self._estimator(params, n_estimators, random_state).fit(X, y)
            if int(n_estimators) == 0:
                return self._baseline(est, len(X_test))
            z = est.decision_function(X_test) if self.classification else est.predict(X_test)
        return np.asarray(z, dtype=np.float64).ravel()


# -- CatBoost --------------------------------------------------------------------------------------
#: CatBoost loss function for each regression loss id (τ appended for pinball).
CATBOOST_OBJECTIVES = {"ls": "RMSE", "lad": "MAE", "pinball": "Quantile"}


class CatBoostMethod(_LeafAxis):
    """CatBoost with its native objective (``RMSE``, ``MAE``, ``Quantile:alpha=τ``), regression
    only; curve = our loss on its raw prediction after every tree.

    CatBoost grows oblivious trees (one split per level, its default ``SymmetricTree``): a tree of
    depth d has 2^d leaves, as the other methods' at most. Its optional grid axis is
    ``l2_leaf_reg`` (:class:`_LeafAxis`): CatBoost has no minimum leaf size for oblivious trees,
    and its leaf values for ``MAE``/``Quantile`` are exact quantiles, so the L2 term acts on the
    split scores. The curve comes from one call: every validation row's leaf in every tree
    (``calc_leaf_indexes``), whose leaf values are summed tree by tree onto CatBoost's starting
    value (``boost_from_average``; T = 0): O(T·n_val), and the running sum after T trees equals
    CatBoost's own prediction with T trees (a test checks it)."""

    name = "catboost"
    library = "catboost"
    engine = "none"  # grows its own trees: no proxboost tree engine applies
    grid_axes = ("max_depth", "learning_rate")
    leaf_axis = "l2_leaf_reg"
    #: Fixed settings (the values of conf/algo/catboost.yaml).
    defaults = {"thread_count": 1, "l2_leaf_reg": 3.0, "border_count": 254}
    checks = {
        "thread_count": (lambda v: is_integer(v) and v >= 1, "an integer >= 1"),
        "l2_leaf_reg": (lambda v: _is_number(v) and v >= 0, "a number >= 0"),
        "border_count": (lambda v: is_integer(v) and 1 <= v <= 65535, "an integer in [1, 65535]"),
    }

    #: several quantile levels (``tau=[...]``): one model, CatBoost's ``MultiQuantile``
    levels = "one model"

    def __init__(self, loss, **settings):
        if loss.task != "regression" or loss.name not in CATBOOST_OBJECTIVES:
            raise ProtocolError(
                f"catboost runs with the regression losses {', '.join(CATBOOST_OBJECTIVES)}, not"
                f" loss={loss.name}"
            )
        self.loss = loss
        self.settings = _check_settings(self.name, settings, self.defaults, self.checks)
        self.several = isinstance(loss, MultiQuantile)
        if self.several:
            alphas = ",".join(repr(float(t)) for t in loss.taus)
            self.objective = f"MultiQuantile:alpha={alphas}"
        elif loss.name == "pinball":
            self.objective = f"Quantile:alpha={loss.tau!r}"
        else:
            self.objective = CATBOOST_OBJECTIVES[loss.name]
        self.val_metric = LEVELS_VAL_METRIC if self.several else "loss"

    def reports_loss(self) -> bool:
        return True

    def versions(self) -> dict:
        return {self.library: library_version("catboost")}

    def identity(self) -> dict:
        return _identity(self, {"objective": self.objective, **self._fixed(self.settings)})

    def _fit(self, params, X, y, n_rounds, random_state):
        from catboost import CatBoostRegressor  # lazy: loaded by the runs that use it only

        settings = {**self.settings, **{k: params[k] for k in (self.leaf_axis,) if k in params}}
        model = CatBoostRegressor(
            loss_function=self.objective,
            depth=int(params["max_depth"]),
            learning_rate=float(params["learning_rate"]),
            iterations=max(int(n_rounds), 1),  # T = 0: the starting value alone, see _raw
            random_seed=int(random_state) % (2**31),
            thread_count=int(settings["thread_count"]),
            l2_leaf_reg=float(settings["l2_leaf_reg"]),
            border_count=int(settings["border_count"]),
            verbose=False,
            allow_writing_files=False,  # no catboost_info/ folder in the working directory
        )
        return model.fit(np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64))

    def _start(self, model, n):
        """CatBoost's starting value on n rows: (n,), or (n, K) with several levels."""
        bias = np.asarray(model.get_scale_and_bias()[1], dtype=np.float64)
        return np.tile(bias, (n, 1)) if self.several else np.full(n, float(bias))

    def _stages(self, model, X):
        """(starting value on X's rows, generator of the predictions after each tree). A
        model of K levels has K values per leaf, stored leaf by leaf."""
        scale = model.get_scale_and_bias()[0]
        leaves = model.calc_leaf_indexes(np.asarray(X, dtype=np.float64)).astype(np.int64)
        first = np.concatenate([[0], np.cumsum(model.get_tree_leaf_counts())[:-1]]).astype(np.int64)
        values = np.asarray(model.get_leaf_values(), dtype=np.float64)
        if self.several:
            values = values.reshape(-1, len(self.loss.taus))
        z0 = self._start(model, len(X))

        def stages():
            z = np.zeros_like(z0)
            for t in range(leaves.shape[1]):  # tree t's leaf value of every row
                z += values[leaves[:, t] + first[t]]
                yield z0 + scale * z

        return z0, stages()

    def validation_curve(self, params, train, valid, max_estimators, random_state):
        (X_train, y_train), (X_val, y_val) = train, valid
        model = self._fit(params, X_train, y_train, max_estimators, random_state)
        y_val = np.asarray(y_val, dtype=np.float64)
        z0, stages = self._stages(model, X_val)
        score = lambda z: float(np.sum(self.loss.value(y_val, z)))  # noqa: E731
        return _curve(score, z0, stages, max_estimators)

    def refit_predict(self, params, n_estimators, train, X_test, random_state):
        X, y = train
        model = self._fit(params, X, y, n_estimators, random_state)
        if int(n_estimators) == 0:
            return self._start(model, len(X_test))
        return np.asarray(model.predict(np.asarray(X_test, dtype=np.float64)), dtype=np.float64)


# -- several quantile levels as separate models ----------------------------------------------------
class SeparateLevels:
    """K quantile levels as K separate single-level models of one library, as a practitioner
    gets them from LightGBM, HGB or XGBoost: each level's model is fitted on its own pinball
    loss and selected on its own validation curve (its own grid point and T: the pipeline
    selects level by level, ``separate_levels``), so nothing keeps the K predictions in order.

    ``validation_curve`` returns the K levels' curves of a grid point, shape (K, T_max + 1);
    ``refit_predict`` takes one grid point and one T per level and returns shape (n, K)."""

    levels = "separate"
    separate_levels = True
    engine = "none"
    val_metric = LEVELS_VAL_METRIC

    def __init__(self, cls, loss, **options):
        self.loss = loss
        self.members = [cls(level, **options) for level in loss.levels]
        self.name = cls.name
        self.grid_axes = self.members[0].grid_axes

    def search_axes(self, grid) -> None:
        for member in self.members:
            if hasattr(member, "search_axes"):  # optional, as for one level (plan_run)
                member.search_axes(grid)
        self.grid_axes = self.members[0].grid_axes

    def reports_loss(self) -> bool:
        return True

    def versions(self) -> dict:
        return self.members[0].versions()

    def identity(self) -> dict:
        identity = self.members[0].identity()
        return {**identity, "options": {**identity["options"], "levels": "separate models"}}

    def validation_curve(self, params, train, valid, max_estimators, random_state):
        curves = [m.validation_curve(params, train, valid, max_estimators, random_state)
                  for m in self.members]  # fmt: skip
        return np.vstack([values for values, _ in curves]), curves[0][1]

    def refit_predict(self, params, n_estimators, train, X_test, random_state):
        """``params``, ``n_estimators``: one per level."""
        return np.column_stack(
            [
                m.refit_predict(p, T, train, X_test, random_state)
                for m, p, T in zip(self.members, params, n_estimators, strict=True)
            ]
        )
