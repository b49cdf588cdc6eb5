"""The scikit-learn estimators :class:`BoostingRegressor` and :class:`BoostingClassifier`
(``docs/estimators.md``): parameters checked in ``fit``, learned attributes ending in ``_``.

Where the rest lives: the boosting iterations and the six algorithms in :mod:`proxboost._fit_loop`
(its compiled twin in :mod:`proxboost._compiled_loop`), the prediction intervals in
:mod:`proxboost._intervals`, the ``verbose`` lines in :mod:`proxboost._verbose`, the monotone
constraints in :mod:`proxboost._monotone`, the losses in :mod:`proxboost.losses` and the trees in
:mod:`proxboost.engines`.
"""

import contextlib

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.model_selection import train_test_split
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from proxboost._authors_float import FLOAT_LOSSES
from proxboost._fit_loop import (
    ALGOS,
    GRADIENT_ALGOS,
    PROXIMAL_ALGOS,
    BoostingLoop,
    _constant,
    _unweighted_if_uniform,
)
from proxboost._input_kinds import check_feature_kinds
from proxboost._intervals import QuantileIntervals
from proxboost._monotone import check_monotonic_cst
from proxboost._plain_data import fit_data, more_data
from proxboost._validation import (
    Choice,
    Flag,
    Levels,
    LossChoice,
    LossParameter,
    MonotonicCst,
    NJobs,
    Number,
    Step,
    Verbose,
    integer_at_least_one,
)
from proxboost._vocabulary import TIE_RULES
from proxboost.engines import ENGINES
from proxboost.engines._descent import CHUNK
from proxboost.engines._threads import engine_threads, numba_threads
from proxboost.losses import (
    LOSSES,
    MultiQuantile,
    check_taus,
    make_loss,
)

#: The public names: the estimators, and the algorithms' table (its home is ``_fit_loop``).
__all__ = [
    "ALGOS",
    "GRADIENT_ALGOS",
    "PROXIMAL_ALGOS",
    "BoostingClassifier",
    "BoostingRegressor",
]


#: Each estimator class's parameter names (``_BaseBoosting._get_param_names``).
_PARAM_NAMES: dict = {}


class _BaseBoosting(BoostingLoop, BaseEstimator):
    """What both estimators share: parameter checks, ``fit`` and the raw predictions (the loop
    itself: :class:`proxboost._fit_loop.BoostingLoop`); subclasses map targets and expose
    predictions."""

    _task = None

    @classmethod
    def _get_param_names(cls):
        """scikit-learn's parameter names (the arguments of ``__init__``), read once per class:
        scikit-learn reads the signature again at every ``get_params``, which was half of the
        parameter checks' time at the start of every ``fit`` (0.04 of 0.08 ms)."""
        names = _PARAM_NAMES.get(cls)
        if names is None:
            names = _PARAM_NAMES[cls] = tuple(super()._get_param_names())
        return list(names)

    # -- validation ------------------------------------------------------------------------------
    #: The parameters both estimators have (scikit-learn's validation framework: checked by
    #: ``_fit_context`` at the start of ``fit``; see ``proxboost._validation``). Each subclass
    #: adds its loss and the loss's own parameters.
    _parameter_constraints: dict = {
        "algo": [Choice("algo", ALGOS)],
        "n_estimators": [integer_at_least_one("n_estimators")],
        "learning_rate": [
            Number("learning_rate", 0.0, 1.0, closed="right", allowed="a float in (0, 1]")
        ],
        "step": [Step()],
        "max_depth": [integer_at_least_one("max_depth")],
        "random_state": ["random_state"],
        "engine": [Choice("engine", sorted(ENGINES))],
        "tie_rule": [Choice("tie_rule", TIE_RULES)],
        "n_iter_no_change": [
            None,
            Number(
                "n_iter_no_change",
                1,
                np.inf,
                closed="left",
                allowed="None (no early stopping) or an integer >= 1",
                integer=True,
            ),
        ],
        "validation_fraction": [
            Number("validation_fraction", 0.0, 1.0, closed="neither", allowed="a float in (0, 1)")
        ],
        "tol": [Number("tol", 0.0, np.inf, closed="left", allowed="a finite float >= 0")],
        "verbose": [Verbose()],
        "warm_start": [Flag("warm_start")],
        "monotonic_cst": [None, MonotonicCst()],
        "n_jobs": [None, NJobs()],
    }

    @staticmethod
    def _other_task_hint(task):
        """The hint for a loss of the other task: which estimator takes it."""
        other = "BoostingClassifier" if task == "regression" else "BoostingRegressor"

        def hint(loss):
            if loss in LOSSES and LOSSES[loss].task != task:
                return f" ({loss!r} is a {LOSSES[loss].task} loss: use {other})"
            return ""

        return hint

    def _check_param_combinations(self):
        """What no single parameter's constraint can see (called after the constraints)."""

    def _check_weights(self, sample_weight, y, name="sample_weight"):
        """Validated float64 copy of the weights of the rows of y (None stays None).

        Unit weights are returned as None: they take the unweighted code paths (faster, and the
        numbers are those of the fit without weights, bit for bit).
        """
        if sample_weight is None:
            return None
        w = np.array(sample_weight, dtype=float)  # a copy: the caller's array is never modified
        if w.shape != (len(y),):
            raise ValueError(
                f"{name} has shape {w.shape}; expected ({len(y)},): one weight per row of X"
            )
        if not np.all(np.isfinite(w)):
            raise ValueError(
                f"{name} contains NaN or infinity; give every row a finite weight >= 0"
            )
        if np.any(w < 0):
            raise ValueError(f"{name} has negative values (min {w.min()!r}); weights must be >= 0")
        if not np.any(w > 0):
            raise ValueError(f"{name} is all zero; at least one row needs a positive weight")
        if np.all(w == w[0]):
            return None  # uniform positive weights: the unweighted path (weights are relative)
        # Scale by a power of two (exact) so that the largest weight lies in [0.5, 1): a fit then
        # depends on the weights' ratios only, and weights of 1e-200 or 1e200 behave as any
        # others (c * w gives the fit of w bit for bit for every power of two c)
        _, exponent = np.frexp(np.max(w))
        scaled = np.ldexp(w, -exponent)
        smallest = np.min(scaled[w > 0])
        if smallest < np.finfo(np.float64).tiny:
            raise ValueError(
                f"{name}'s positive weights span too many orders of magnitude (max {np.max(w)!r},"
                f" min {np.min(w[w > 0])!r}): the smallest would underflow once the largest is"
                " scaled to 1; set those rows' weight to 0 or rescale the weights"
            )
        return scaled

    def _check_target_range(self, y, name):
        """Refuse targets beyond the loss's bound, within which every internal sum (rows,
        weights, the engines' impurity sums) and the recorded losses stay finite."""
        bound = self._make_loss().target_bound
        largest = float(np.max(np.abs(y))) if len(y) else 0.0
        if largest > bound:
            raise ValueError(
                f"{name} has values up to {largest:.3g} in absolute value, beyond the {bound:.0e}"
                f" that loss={self.loss!r} keeps finite (see docs/method.md, overflow policy):"
                " rescale the target"
            )

    def _check_classes_weighted(self, y, w, what):
        """Classifier: both classes need rows of positive weight (the loss has no minimiser
        else).
        """
        if self._task != "classification":
            return
        pos = (y > 0) if w is None else (y > 0) & (w > 0)
        neg = (y < 0) if w is None else (y < 0) & (w > 0)
        if not (pos.any() and neg.any()):
            only = (self.classes_[1] if pos.any() else self.classes_[0]).tolist()
            raise ValueError(
                f"{what} has positive weight on class {only!r} only; both classes need rows of"
                " positive weight"
            )

    # -- fit -------------------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, eval_set=None):
        """Fit the boosted model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features; NaN marks a missing value (see ``docs/engines.md``), infinity is refused.
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative row weights (None: all 1). They enter the tree fits, f_0, the line
            searches and the recorded losses; rows of weight 0 take no part in them.
        eval_set : tuple (X_eval, y_eval) or (X_eval, y_eval, w_eval), optional
            Data on which the (weighted) loss is recorded at every iteration (``eval_loss_``);
            it is only monitored, never used to stop.

        Returns
        -------
        self
        """
        self._check_param_combinations()
        check_feature_kinds(X)
        X, y = fit_data(self, X, y, y_numeric=self._task == "regression")
        X, y = _writeable(X), _writeable(y)
        cst = self._fit_monotonic_cst()
        y = self._encode_target(y, fit=True)
        self._check_target_range(y, "y")
        w = self._check_weights(sample_weight, y)
        if w is not None and self.tie_rule == "authors_float" and self.loss in FLOAT_LOSSES:
            raise ValueError(
                'tie_rule="authors_float" reproduces the authors\' unweighted code and takes no'
                ' sample_weight other than 1; use tie_rule="authors" or "midpoint" with weights'
            )
        self._check_classes_weighted(y, w, "sample_weight")
        X_eval = y_eval = w_eval = None
        if eval_set is not None:
            if not (isinstance(eval_set, (tuple, list)) and len(eval_set) in (2, 3)):
                raise ValueError(
                    "eval_set must be a tuple (X_eval, y_eval) or (X_eval, y_eval, w_eval)"
                )
            check_feature_kinds(eval_set[0], "eval_set's X_eval")
            X_eval = more_data(self, eval_set[0])
            X_eval = _writeable(X_eval)
            y_eval = _writeable(self._encode_target(np.asarray(eval_set[1]), fit=False))
            self._check_target_range(y_eval, "eval_set's y_eval")
            if len(y_eval) != len(X_eval):
                raise ValueError(
                    f"eval_set has {len(X_eval)} rows in X_eval but {len(y_eval)} in y_eval"
                )
            if len(eval_set) == 3 and eval_set[2] is not None:
                w_eval = self._check_weights(eval_set[2], y_eval, name="eval_set's w_eval")
        data_key = _data_key(X, y, w, X_eval, y_eval, w_eval)
        if self._warm():
            if int(self.n_estimators) < self.n_iter_:
                raise ValueError(
                    f"n_estimators={self.n_estimators} must be larger or equal to n_iter_="
                    f"{self.n_iter_} when warm_start=True; set warm_start=False to fit anew"
                )
            if self._state_.data_key != data_key:
                raise ValueError(
                    "warm_start=True continues the previous fit, which was on other data: pass "
                    "the same X, y, sample_weight and eval_set, or set warm_start=False"
                )
            previous = getattr(self._state_, "monotonic_cst", None)
            if (previous is None) != (cst is None) or not np.array_equal(previous, cst):
                raise ValueError(
                    "warm_start=True cannot change monotonic_cst (the trees grown so far were"
                    " not bounded by the new constraints): set it back, or set warm_start=False"
                )
        else:
            self.__dict__.pop("_state_", None)
        X_val = y_val = w_val = None
        if self.n_iter_no_change is not None:
            X, y, w, X_val, y_val, w_val = self._split_validation(X, y, w)
        self.__dict__.pop("interval_correction_", None)  # a calibration belongs to one fit
        self._boost(X, y, w, (X_eval, y_eval, w_eval), (X_val, y_val, w_val), cst)
        self._state_.data_key = data_key
        return self

    def _fit_monotonic_cst(self):
        """The fit's monotone constraints (int8 per feature, or None: none), checked against X
        (``n_features_in_``, ``feature_names_in_``) before any compute."""
        cst = check_monotonic_cst(
            self.monotonic_cst, self.n_features_in_, getattr(self, "feature_names_in_", None)
        )
        if cst is not None and self.tie_rule == "authors_float" and self.loss in FLOAT_LOSSES:
            raise ValueError(
                'monotonic_cst needs bounded line searches, which tie_rule="authors_float" (the'
                ' authors\' unbounded code) does not have: use tie_rule="midpoint" or "authors"'
            )
        return cst

    def _warm(self) -> bool:
        """Whether this fit continues the previous one (``warm_start`` and a previous fit whose
        settings allow it: the same early-stopping choice)."""
        state = getattr(self, "_state_", None)
        if not (self.warm_start and state is not None):
            return False
        if (state.history is None) != (self.n_iter_no_change is None) or (
            state.history is not None and len(state.history) != int(self.n_iter_no_change)
        ):
            raise ValueError(
                "warm_start=True cannot change n_iter_no_change: set it back to "
                f"{None if state.history is None else len(state.history)!r}, or set "
                "warm_start=False"
            )
        return True

    def _split_validation(self, X, y, w):
        """Carve the early-stopping validation rows out of the training data (scikit-learn's
        ``train_test_split``, stratified for the classifier; weights follow their rows)."""
        n = len(y)
        n_val = int(np.ceil(self.validation_fraction * n))
        fix = "use more rows or a larger validation_fraction, or n_iter_no_change=None"
        if n_val < 2 or n - n_val < 2:
            raise ValueError(
                f"validation_fraction={self.validation_fraction!r} leaves {n_val} validation and"
                f" {n - n_val} training rows out of {n}; early stopping needs at least 2 of each:"
                f" {fix}"
            )
        stratify = None
        if self._task == "classification":
            counts = np.array([np.sum(y < 0), np.sum(y > 0)])
            if counts.min() < 2:
                raise ValueError(
                    f"early stopping (n_iter_no_change={self.n_iter_no_change!r}) needs at least 2"
                    " rows of each class to give both classes to the validation part; got"
                    f" {counts.tolist()}"
                )
            stratify = y
        if self._warm():  # the previous fit's validation rows, whatever the random_state
            rows_tr, rows_val = self._state_.validation_split
        else:
            rows_tr, rows_val = train_test_split(
                np.arange(n),
                test_size=self.validation_fraction,
                random_state=self.random_state,
                stratify=stratify,
            )
        self._validation_split = (rows_tr, rows_val)
        X_tr, X_val, y_tr, y_val = X[rows_tr], X[rows_val], y[rows_tr], y[rows_val]
        w_tr, w_val = (None, None) if w is None else (w[rows_tr], w[rows_val])
        w_val = _unweighted_if_uniform(w_val)
        if self._task == "classification":
            pos = (y_val > 0) if w_val is None else (y_val > 0) & (w_val > 0)
            neg = (y_val < 0) if w_val is None else (y_val < 0) & (w_val > 0)
            if not (pos.any() and neg.any()):
                raise ValueError(
                    f"validation_fraction={self.validation_fraction!r} gives a validation part"
                    f" without rows of positive weight in both classes: {fix}"
                )
        if w_val is not None and not np.any(w_val > 0):
            raise ValueError(
                f"validation_fraction={self.validation_fraction!r} gives a validation part of"
                f" weight 0: {fix}"
            )
        if w_tr is not None and not np.any(w_tr > 0):
            raise ValueError(
                f"validation_fraction={self.validation_fraction!r} gives a training part of weight"
                f" 0: {fix}"
            )
        self._check_classes_weighted(
            y_tr, w_tr, "the training part left by the early-stopping split"
        )
        return X_tr, y_tr, w_tr, X_val, y_val, w_val

    # -- the fitted trees ------------------------------------------------------------------------
    @property
    def estimators_(self):
        """The fitted trees, a list (made on the first read from the model's forest, then kept
        until the next fit: see ``proxboost._forest``)."""
        return self._fitted_forest("estimators_").trees()

    @property
    def leaf_values_(self):
        """Each tree's leaf values, a list of arrays (made on the first read, then kept)."""
        return self._fitted_forest("leaf_values_").leaf_values()

    def _fitted_forest(self, name):
        state = self.__dict__.get("_state_")
        if state is None:  # not fitted: hasattr() is False, as for any fitted attribute
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return state.forest

    def __setstate__(self, state):
        # a model pickled before forests held its trees as lists beside the state's own
        state = {k: v for k, v in state.items() if k not in ("estimators_", "leaf_values_")}
        super().__setstate__(state)

    @property
    def feature_importances_(self):
        """Impurity-based importances, as scikit-learn's gradient boosting computes them.

        Per tree, the unnormalised weighted impurity decrease of its least-squares fit by feature;
        trees without a split are skipped; the mean over trees is normalised to sum 1 (all zeros
        when no tree splits). Nesterov's model weights do not enter.
        """
        check_is_fitted(self)
        forest = self._state_.forest
        kind = forest.kind()
        if kind is not None:  # one compiled call per run of trees: the same sums
            gains = kind.gains_by_feature(forest, self.n_features_in_)
            per_tree = gains[forest.n_leaves() > 1]
        else:
            per_tree = [
                np.bincount(tree.split_feature, tree.split_gain, minlength=self.n_features_in_)
                for tree in forest.trees()
                if len(tree.split_feature) > 0
            ]
        if len(per_tree) == 0:
            return np.zeros(self.n_features_in_)
        mean = np.mean(per_tree, axis=0)
        total = mean.sum()
        return mean / total if total > 0 else mean

    # -- prediction ------------------------------------------------------------------------------
    def _raw_predict(self, X):
        check_is_fitted(self)
        check_feature_kinds(X)
        Xp = self.engine_.prepare(
            _writeable(validate_data(self, X, reset=False, ensure_all_finite="allow-nan"))
        )
        F = _constant(Xp.shape[0], self.init_)
        forest = self._state_.forest
        kind = _compiled_kind(forest, F)
        if kind is not None:  # no Python call per tree
            # n_jobs threads take chunks of rows; one chunk stays on one thread
            k = engine_threads(self.n_jobs) if Xp.shape[0] > CHUNK else 1
            with numba_threads(k) if k > 1 else contextlib.nullcontext():
                kind.add_trees(Xp, forest, self.weights_[1:], F, k)
            return F
        for w, tree, c in zip(self.weights_[1:], forest.trees(), forest.leaf_values()):
            F += w * c[tree.apply(Xp)]
        return F

    def _staged_raw_predict(self, X):
        check_is_fitted(self)
        check_feature_kinds(X)
        Xp = self.engine_.prepare(
            _writeable(validate_data(self, X, reset=False, ensure_all_finite="allow-nan"))
        )
        F = H = _constant(Xp.shape[0], self.init_)
        forest = self._state_.forest
        kind = _compiled_kind(forest, F)
        if kind is not None:  # blocks of stages computed by one compiled call per run of trees
            n = Xp.shape[0]
            FH = (F.reshape(n, -1).copy(), F.reshape(n, -1).copy())
            per_block = max(1, STAGES_BYTES // (8 * FH[0].size))
            for first in range(0, len(forest), per_block):
                stop = min(len(forest), first + per_block)
                out = np.empty((stop - first,) + FH[0].shape)
                kind.stage_trees(Xp, forest, first, stop, self.alphas_, FH, out)
                for stage in out:
                    yield stage.reshape(F.shape)
            return
        for tree, c, alpha in zip(forest.trees(), forest.leaf_values(), self.alphas_):
            F_next = H + c[tree.apply(Xp)]
            H = F_next + alpha * (F_next - F) if alpha else F_next
            F = F_next
            yield F.copy()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # missing values (NaN) in X: every engine handles them
        return tags


def _writeable(a):
    """``a``, or a copy of it when it is read-only (a joblib memory map in a parallel grid
    search, a NumPy view with ``writeable=False``): numba compiles a kernel again for each array
    type it is given, and read-only is a type of its own, so a read-only X or y would compile
    the whole boosting loop once more (minutes) for the same numbers. The copy holds the same
    values: no number changes."""
    return a if a.flags.writeable else a.copy()


def _data_key(*arrays) -> tuple:
    """A cheap fingerprint of a fit's data (shapes and column sums of each array, and where X
    has missing values their count per column), so that ``warm_start`` refuses to continue a
    fit on other data instead of silently mixing them."""
    key = []
    for a in arrays:
        if a is None:
            key.append(None)
        else:
            a = np.asarray(a, dtype=float)
            sums = np.sum(a, axis=0)
            if np.isnan(sums).any():  # missing values: NaN sums would hide the other values
                missing = np.isnan(a)
                key.append((a.shape, np.nansum(a, axis=0).tobytes(), missing.sum(axis=0).tobytes()))
            else:
                key.append((a.shape, sums.tobytes()))
    return tuple(key)


def _compiled_kind(forest, F):
    """The class of the fitted trees when a prediction into ``F`` (float64) can read them in
    compiled calls (all of one compiled engine's ``PackedNodes`` class), else None (one Python
    call per tree: the ``sklearn`` engine)."""
    return forest.kind() if F.dtype == np.float64 else None


#: Memory of one block of staged predictions (``staged_predict``): stages per block so that
#: a block takes about 8 MB, however many rows and levels
STAGES_BYTES = 8 << 20


_PARAMS_DOC = """
    algo : {"gradient", "prox", "residual_gradient", "residual_prox", "accelerated_gradient", \
"accelerated_prox"}, default="prox"
        The boosting algorithm (``docs/method.md``).
    n_estimators : int >= 1, default=100
        Maximum number of boosting iterations T.
    learning_rate : float in (0, 1], default=0.1
        Shrinkage nu of every line-searched tree.
    step : float > 0 or "auto", default=1.0
        Per-sample proximal step lambda (the authors' ``step``; the paper's appendix writes
        n * lambda). Used by the proximal algorithms only. "auto": for ``lad`` and ``pinball``,
        whose lambda is in the units of y, the weighted median absolute deviation of y from f_0
        (so it scales with the target); 1 for the other losses, whose lambda has no unit of y
        (``docs/estimators.md``). The value used is ``step_``.
    max_depth : int >= 1, default=3
        Depth of the regression trees.
    random_state : int, RandomState instance or None, default=None
        Seeds the trees' tie-breaking between equally good splits and the early-stopping split,
        as in scikit-learn.
    engine : str, default="exact"
        Tree engine (``docs/engines.md``).
    tie_rule : {"midpoint", "authors", "authors_float"}, default="midpoint"
        Point taken when a ``lad``, ``pinball`` or ``hinge`` leaf line search has an interval of
        minimisers: 0 if it minimises, else the midpoint (or the finite end); or the rule of the
        authors' public code (``docs/estimators.md``). f_0 uses ``"midpoint"``, except under
        ``"authors_float"``, which takes the line search, f_0 and the proximal pseudo-residual
        as the authors' code computes them in floating point (``docs/method.md``; no weights).
    n_iter_no_change : int >= 1 or None, default=None
        Early stopping as in scikit-learn's gradient boosting: ``validation_fraction`` of the
        training rows are set aside (stratified for the classifier) and fitting stops after
        ``n_iter_no_change`` iterations whose validation loss does not beat one of the previous
        ``n_iter_no_change`` values by ``tol``. The trees up to the stopping iteration are kept
        (not the best iteration's). None: no early stopping.
    validation_fraction : float in (0, 1), default=0.1
        Share of the training rows set aside for early stopping.
    tol : float >= 0, default=1e-4
        Improvement of the validation loss that counts for early stopping.
    verbose : int >= 0, default=0
        1: print the iteration, training loss, eval / validation loss and time left on
        scikit-learn's schedule (1-10, then every 10th, 100th, ...); > 1: every iteration.
    warm_start : bool, default=False
        True: ``fit`` adds trees to the previous fit until ``n_estimators`` instead of fitting
        anew, continuing exactly where it stopped (the Nesterov sequence, the residual Delta,
        the trees' random state, the curves, the eval set's replay and the early-stopping rows
        and history), so fitting 100 trees and then 200 gives the model of 200 at once, bit for
        bit. It needs the same X, y, sample_weight and eval_set as the previous fit (refused
        otherwise) and n_estimators >= ``n_iter_``; a fit that stopped early stays stopped.
    monotonic_cst : list of int, dict or None, default=None
        Monotone constraints, as scikit-learn's ``HistGradientBoostingRegressor``: one of -1, 0,
        1 per feature, or a dict {feature name: -1, 0 or 1} when X has feature names (a
        DataFrame; features not named are unconstrained). 1: the predictions (the classifier's
        decision function, towards ``classes_[1]``) never decrease when the feature grows, the
        other features fixed; -1: never increase; 0: no constraint. Honoured exactly for every
        loss, algorithm and engine, at every stage and, with several quantiles, in every level
        (``docs/quantiles.md``, "Monotone constraints"); all zeros is the unconstrained fit.
        Not with ``tie_rule="authors_float"`` on ``lad``, ``pinball`` or ``hinge``.
    n_jobs : int or None, default=None
        Threads growing each tree and predicting, as scikit-learn's ``n_jobs``: None one, -1 all
        cores, -k all cores but k - 1 (0 refused); at most ``numba.config.NUMBA_NUM_THREADS``.
        Any value gives the same trees and predictions bit for bit. Threads: the exact and hist
        engines (histograms and splits in parallel over features; a prediction of more than
        1,024 rows in chunks of rows; on numba's ``omp`` or ``tbb`` threading layer, else one
        thread with a warning); sklearn uses one thread. Not the
        experiment pipeline's ``n_jobs`` (``conf/config.yaml``, ``run.py n_jobs=k``), which is
        the number of worker processes running whole fits side by side.
"""

_ATTRS_DOC = """
    Attributes
    ----------
    n_iter_ : int
        Number of fitted trees T (``n_estimators`` without early stopping).
    train_loss_ : ndarray of shape (n_iter_ + 1,)
        C(f_0), ..., C(f_T) on the training rows (weighted by ``sample_weight``).
    eval_loss_ : ndarray of shape (n_iter_ + 1,) or None
        The same on ``eval_set``.
    validation_loss_ : ndarray of shape (n_iter_ + 1,) or None
        The same on the early-stopping validation rows.
    train_time_ : ndarray of shape (n_iter_ + 1,)
        Cumulative wall-clock seconds of fitting at each iteration, starting at 0 (the loss
        recording and ``eval_set`` bookkeeping are not counted).
    init_ : float
        The constant f_0.
    estimators_ : list of trees
        The fitted trees (engine objects mapping rows to leaf ids).
    leaf_values_ : list of ndarray
        Each tree's line-searched, shrunk leaf values c_t.
    n_leaves_ : ndarray of int, shape (n_iter_,)
        Each tree's number of leaves.
    feature_importances_ : ndarray of shape (n_features_in_,)
        Impurity-based importances (as scikit-learn's gradient boosting), summing to 1.
    alphas_ : ndarray of shape (n_iter_,)
        Nesterov's alpha_1 .. alpha_T (zeros without acceleration).
    weights_ : ndarray of shape (n_iter_ + 1,)
        f_T = sum_t weights_[t] c_t (all ones without acceleration; those of T = ``n_iter_``).
    n_capped_steps_ : int
        Newton line-search steps that hit the cap (exponential / logistic losses).
    step_ : float
        The per-sample proximal step lambda used (``step``, or the value "auto" chose).
"""


class BoostingRegressor(QuantileIntervals, RegressorMixin, _BaseBoosting):
    __doc__ = f"""Boosting for regression with the ``ls``, ``lad`` and ``pinball`` losses.

    Parameters
    ----------
    loss : {{"ls", "lad", "pinball"}}, default="ls"
        Least squares, least absolute deviation, or the pinball (quantile) loss at ``tau``.
    {_PARAMS_DOC}
    tau : float in (0, 1) or list of floats, default=0.5
        Quantile level of the pinball loss. A strictly increasing list of K levels fits them
        together with shared trees: ``predict`` returns shape (n, K) and the columns never
        cross, for any row and at every stage (``docs/quantiles.md``); ``train_loss_`` and
        ``eval_loss_`` then have one column per level, early stopping uses their sum, and
        ``score`` is the negated mean pinball loss. ``predict_interval`` and ``calibrate``
        give intervals with guaranteed coverage.
    {_ATTRS_DOC}
    Examples
    --------
    >>> import numpy as np
    >>> from proxboost import BoostingRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(200, 3)); y = X[:, 0] + rng.standard_t(2, size=200)
    >>> reg = BoostingRegressor(loss="lad", algo="prox", n_estimators=50, random_state=0).fit(X, y)
    >>> bool(reg.train_loss_[-1] < reg.train_loss_[0])
    True
    """

    _task = "regression"
    _parameter_constraints = {
        **_BaseBoosting._parameter_constraints,
        "loss": [LossChoice("regression", hint=_BaseBoosting._other_task_hint("regression"))],
        "tau": [Levels("tau")],
    }

    def _make_loss(self):
        taus = check_taus(self.tau)
        if taus is not None:
            return MultiQuantile(taus)
        return make_loss(self.loss, tau=self.tau)

    def _check_param_combinations(self):
        if check_taus(self.tau) is not None and self.tie_rule == "authors_float":
            raise ValueError(
                'tie_rule="authors_float" reproduces the authors\' single-level code; with '
                'several quantiles use tie_rule="midpoint" or "authors"'
            )
        if check_taus(self.tau) is not None and self.loss != "pinball":
            raise ValueError(
                f"tau={self.tau!r} (several quantiles) needs loss='pinball'; got loss={self.loss!r}"
            )

    def __init__(
        self,
        loss="ls",
        algo="prox",
        n_estimators=100,
        learning_rate=0.1,
        step=1.0,
        max_depth=3,
        tau=0.5,
        random_state=None,
        engine="exact",
        tie_rule="midpoint",
        n_iter_no_change=None,
        validation_fraction=0.1,
        tol=1e-4,
        verbose=0,
        warm_start=False,
        monotonic_cst=None,
        n_jobs=None,
    ):
        self.loss = loss
        self.algo = algo
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.step = step
        self.max_depth = max_depth
        self.tau = tau
        self.random_state = random_state
        self.engine = engine
        self.tie_rule = tie_rule
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.tol = tol
        self.verbose = verbose
        self.warm_start = warm_start
        self.monotonic_cst = monotonic_cst
        self.n_jobs = n_jobs

    def _encode_target(self, y, fit):
        y = np.asarray(y, dtype=float).ravel()
        if not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or infinity; remove or impute those targets")
        return y

    def predict(self, X):
        """f_T(X)."""
        return self._raw_predict(X)

    def staged_predict(self, X):
        """Yield f_1(X), ..., f_T(X) (replaying the recursion, as scikit-learn's staged_predict)."""
        yield from self._staged_raw_predict(X)

    def score(self, X, y, sample_weight=None):
        """R^2 of the predictions (scikit-learn's regressor score); with several quantiles
        (``tau`` a list), the negated mean over the levels of their mean pinball losses, so that
        higher is better and model selection tools work unchanged."""
        if self._fitted_taus() is None:
            return super().score(X, y, sample_weight=sample_weight)
        y = self._encode_target(y, fit=False)
        w = self._check_weights(sample_weight, y)
        return -float(np.mean(self.loss_.value(y, self.predict(X), w)))


# scale s of P(+1 | x) = sigma(s f(x)) for the losses with a probability model
PROBABILITY_SCALE = {"logistic": lambda est: 1.0, "exponential": lambda est: 2.0 * est.beta}


class BoostingClassifier(ClassifierMixin, _BaseBoosting):
    __doc__ = f"""Binary boosting with the ``exponential``, ``logistic`` and ``hinge`` losses.

    Any two labels are accepted: ``classes_[1]`` is the +1 class. ``predict`` returns the
    original labels, by the sign of the decision value (0 counts as +1).

    Parameters
    ----------
    loss : {{"exponential", "logistic", "hinge"}}, default="logistic"
    {_PARAMS_DOC}
    beta : float > 0, default=1.0
        Scale of the exponential loss exp(-beta y f).
    newton_steps : int >= 1, default=1
        Newton steps of the exponential / logistic leaf line search.
    {_ATTRS_DOC}
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is encoded +1.

    Examples
    --------
    >>> import numpy as np
    >>> from proxboost import BoostingClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(200, 3)); y = np.where(X[:, 0] > 0, "yes", "no")
    >>> clf = BoostingClassifier(loss="hinge", algo="residual_prox", n_estimators=20).fit(X, y)
    >>> float(clf.score(X, y)) > 0.9
    True
    """

    _task = "classification"
    _parameter_constraints = {
        **_BaseBoosting._parameter_constraints,
        "loss": [
            LossChoice("classification", hint=_BaseBoosting._other_task_hint("classification"))
        ],
        # the loss's own rules (proxboost.losses.PARAMETER_RULES), which make_loss applies too
        "beta": [LossParameter("beta")],
        "newton_steps": [LossParameter("newton_steps")],
    }

    def _make_loss(self):
        return make_loss(self.loss, beta=self.beta, newton_steps=self.newton_steps)

    def __init__(
        self,
        loss="logistic",
        algo="prox",
        n_estimators=100,
        learning_rate=0.1,
        step=1.0,
        max_depth=3,
        beta=1.0,
        newton_steps=1,
        random_state=None,
        engine="exact",
        tie_rule="midpoint",
        n_iter_no_change=None,
        validation_fraction=0.1,
        tol=1e-4,
        verbose=0,
        warm_start=False,
        monotonic_cst=None,
        n_jobs=None,
    ):
        self.loss = loss
        self.algo = algo
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.step = step
        self.max_depth = max_depth
        self.beta = beta
        self.newton_steps = newton_steps
        self.random_state = random_state
        self.engine = engine
        self.tie_rule = tie_rule
        self.n_iter_no_change = n_iter_no_change
        self.validation_fraction = validation_fraction
        self.tol = tol
        self.verbose = verbose
        self.warm_start = warm_start
        self.monotonic_cst = monotonic_cst
        self.n_jobs = n_jobs

    def _encode_target(self, y, fit):
        if fit:
            check_classification_targets(y)
            classes = np.unique(y)
            if len(classes) != 2:
                raise ValueError(
                    ("Only binary classification is supported. " if len(classes) > 2 else "")
                    + f"BoostingClassifier is a binary classifier: y has {len(classes)} "
                    f"class{'es' if len(classes) != 1 else ''} ({classes[:5].tolist()}); "
                    "allowed: exactly two distinct labels"
                )
            self.classes_ = classes
        known = np.isin(y, self.classes_)
        if not known.all():
            raise ValueError(
                f"y contains labels {np.unique(y[~known])[:5].tolist()} not seen in fit:"
                f" {self.classes_.tolist()}"
            )
        return np.where(y == self.classes_[1], 1.0, -1.0)

    def decision_function(self, X):
        """f_T(X): positive values predict ``classes_[1]``."""
        return self._raw_predict(X)

    def staged_decision_function(self, X):
        """Yield f_1(X), ..., f_T(X)."""
        yield from self._staged_raw_predict(X)

    def predict(self, X):
        """Original labels: ``classes_[1]`` where f_T(X) >= 0, else ``classes_[0]``."""
        F = self.decision_function(X)
        return self.classes_[(F >= 0).astype(int)]

    def staged_predict(self, X):
        for F in self.staged_decision_function(X):
            yield self.classes_[(F >= 0).astype(int)]

    def _has_proba(self):
        return self.loss in PROBABILITY_SCALE

    @available_if(_has_proba)
    def predict_proba(self, X):
        """Class probabilities, columns in ``classes_`` order (``logistic``, ``exponential``).

        P(classes_[1] | x) = sigma(s f_T(x)) with s = 1 (logistic) or 2 beta (exponential): the
        population minimiser of each loss is f = log(p / (1 - p)) / s. ``hinge`` has no
        probability (its minimiser is the sign of p - 1/2 only), so it has no ``predict_proba``.
        ``predict`` gives ``classes_[1]`` exactly where P(classes_[1] | x) >= 1/2.
        """
        return self._proba(self.decision_function(X))

    @available_if(_has_proba)
    def staged_predict_proba(self, X):
        """Yield the class probabilities of f_1, ..., f_T."""
        for F in self.staged_decision_function(X):
            yield self._proba(F)

    def _proba(self, F):
        scale = PROBABILITY_SCALE[self.loss](self)
        p1 = expit(scale * F)
        # sigma(s f) rounds to 1/2 for tiny negative f: keep it below 1/2 so that predict (the
        # sign of f) and the probabilities agree everywhere
        p1 = np.where(F < 0, np.minimum(p1, np.nextafter(0.5, 0.0)), p1)
        return np.column_stack([1.0 - p1, p1])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags
