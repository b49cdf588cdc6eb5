"""Baselines of the real-world protocol (SPEC §5.4): XGBoost and random forests.

Both sit behind the small shape the protocol uses for every method (see
:class:`proxboost.protocol.BoostingMethod`)::

    method.validation_curve(params, X_train, y_train, X_val, y_val, max_estimators, random_state)
        -> (values, n_estimators)     # selection criterion on validation, per candidate T
    method.refit_decision(params, n_estimators, X, y, X_test, random_state)
        -> decision values on X_test (predictions for regression, margins for classification)

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

Random forests (``algo=random_forest``)
    scikit-learn ``RandomForestRegressor`` / ``RandomForestClassifier`` with ``n_estimators``
    trees (500), ``max_features`` from the grid ({1/3, "sqrt", 1.0}), one job per fit. There
    is no T to select: the curve has one value, the validation squared error (regression)
    or misclassification rate (classification). Reported (SPEC §5.4): the test least-squares
    loss only when the run's loss is ``ls`` (NaN otherwise) and the misclassification rate.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RandomForestMethod", "XGBoostMethod", "XGB_OBJECTIVES", "xgboost_version"]

#: XGBoost objective for each loss id (``None``: custom objective).
XGB_OBJECTIVES = {
    "ls": "reg:squarederror",
    "lad": "reg:absoluteerror",
    "pinball": "reg:quantileerror",
    "logistic": "binary:logistic",
    "hinge": "binary:hinge",
    "exponential": None,
}

_CLIP = 700.0


def xgboost_version() -> str:
    import xgboost

    return xgboost.__version__


def _as_int(value):
    return None if value is None else int(value)


class XGBoostMethod:
    """XGBoost with the objective matching a loss; curve = our loss on its margin."""

    name = "xgboost"
    engine = "none"  # no proxboost tree engine: rows shared by engine=exact and engine=hist
    val_metric = "loss"
    grid_axes = ("max_depth", "learning_rate")

    def __init__(self, loss, n_threads=1, tree_method="hist"):
        if loss.name not in XGB_OBJECTIVES:
            raise ValueError(f"no XGBoost objective for loss {loss.name!r}; known: {list(XGB_OBJECTIVES)}")
        self.loss = loss
        self.n_threads = int(n_threads)
        self.tree_method = tree_method

    def reports_loss(self) -> bool:
        return True

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
        return p

    def _dmatrix(self, X, y=None):
        import xgboost as xgb

        if y is None:
            return xgb.DMatrix(np.asarray(X, dtype=np.float32), nthread=self.n_threads)
        label = (np.asarray(y) > 0).astype(np.float32) if str(XGB_OBJECTIVES[self.loss.name]).startswith("binary:") else y
        return xgb.DMatrix(np.asarray(X, dtype=np.float32), label=label, nthread=self.n_threads)

    def _train(self, params, dtrain, y, n_rounds, random_state, learning_rate=None, evals=(), callbacks=None):
        import xgboost as xgb

        p = self._booster_params(params, random_state, learning_rate)
        obj = None
        if XGB_OBJECTIVES[self.loss.name] is None:
            obj = self._exponential_objective(np.asarray(y, dtype=np.float64))
            p["base_score"] = float(self.loss.init(np.asarray(y, dtype=np.float64)))
        return xgb.train(p, dtrain, num_boost_round=int(n_rounds), obj=obj, evals=list(evals),
                         verbose_eval=False, callbacks=callbacks)

    def _exponential_objective(self, y):
        beta = float(self.loss.beta)

        def objective(predt, dtrain):
            e = np.exp(np.clip(-beta * y * predt, -_CLIP, _CLIP))
            return -beta * y * e, beta * beta * e

        return objective

    # -- protocol shape ----------------------------------------------------------------------------
    def validation_curve(self, params, X_train, y_train, X_val, y_val, max_estimators, random_state):
        import xgboost as xgb

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

    def refit_decision(self, params, n_estimators, X, y, X_test, random_state):
        dtrain, dtest = self._dmatrix(X, y), self._dmatrix(X_test)
        if int(n_estimators) == 0:
            booster = self._train(params, dtrain, y, 1, random_state, learning_rate=0.0)
        else:
            booster = self._train(params, dtrain, y, n_estimators, random_state)
        return booster.predict(dtest, output_margin=True).astype(np.float64)


class RandomForestMethod:
    """scikit-learn random forests, ``max_features`` selected on validation."""

    name = "random_forest"
    engine = "none"  # no proxboost tree engine: rows shared by engine=exact and engine=hist
    grid_axes = ("max_features",)

    def __init__(self, loss, n_estimators=500, n_threads=1):
        self.loss = loss
        self.n_estimators = int(n_estimators)
        self.n_threads = int(n_threads)
        self.classification = loss.task == "classification"
        self.val_metric = "misclassification" if self.classification else "squared_error"

    def reports_loss(self) -> bool:
        """SPEC §5.4: a forest's test loss is reported for the least-squares loss only."""
        return self.loss.name == "ls"

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
        from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

        cls = RandomForestClassifier if self.classification else RandomForestRegressor
        return cls(n_estimators=self.n_estimators, max_features=self.max_features(params["max_features"]),
                   random_state=int(random_state) % (2**32), n_jobs=self.n_threads)

    def validation_curve(self, params, X_train, y_train, X_val, y_val, max_estimators, random_state):
        pred = self._forest(params, random_state).fit(X_train, y_train).predict(X_val)
        y_val = np.asarray(y_val, dtype=np.float64)
        if self.classification:
            value = float(np.mean(np.where(pred >= 0, 1.0, -1.0) != y_val))
        else:
            value = float(np.mean((y_val - pred) ** 2))
        return np.array([value]), np.array([self.n_estimators])

    def refit_decision(self, params, n_estimators, X, y, X_test, random_state):
        pred = self._forest(params, random_state).fit(X, y).predict(X_test)
        return np.asarray(pred, dtype=np.float64)
