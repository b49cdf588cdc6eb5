"""The boosting loop and the scikit-learn estimators built on it (``docs/method.md``).

Six algorithms (``algo``), named as on the command line:

=========================  =================================  ==============  ===========
algo                       direction r_t                      tree target     taken at
=========================  =================================  ==============  ===========
``gradient``               negative subgradient               r_t             f_t
``prox``                   proximal pseudo-residual           r_t             f_t
``residual_gradient``      negative subgradient               r_t + Delta_t   f_t
``residual_prox``          proximal pseudo-residual           r_t + Delta_t   f_t
``accelerated_gradient``   negative subgradient               r_t             h_t
``accelerated_prox``       proximal pseudo-residual           r_t             h_t
=========================  =================================  ==============  ===========

One iteration at the point p_t (f_t, or Nesterov's h_t): grow a least-squares tree on the
target, replace each leaf value by the loss's line search at p_t (a leaf whose fitted value is
exactly 0 keeps 0), shrink by ``learning_rate`` (nu) and set f_{t+1} = p_t + c_{t+1}. The residual
variants carry Delta_{t+1} = target - g_{t+1}(X), g the tree's least-squares fit. Nesterov's
weights: beta_0 = 1, beta_{t+1} = (1 + sqrt(1 + 4 beta_t^2)) / 2, alpha_{t+1} = (beta_t - 1) /
beta_{t+1}
and h_{t+1} = f_{t+1} + alpha_{t+1} (f_{t+1} - f_t), h_0 = f_0.

``step`` is lambda, the *per-sample* proximal step: the paper's appendix writes
lambda_paper = n * lambda. The values of the paper's experiments are per-sample values.
"""

import time
from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _authors_float, _compiled_loop
from ._authors_float import FLOAT_LOSSES
from ._input_kinds import check_feature_kinds
from ._monotone import check_monotonic_cst, leaf_bounds
from ._multi_quantile import GapBudget, MultiQuantile, check_taus
from ._validation import (
    Choice,
    Flag,
    Levels,
    LossParameter,
    MonotonicCst,
    Number,
    Step,
    Verbose,
    integer_at_least_one,
)
from ._vocabulary import TIE_RULES
from .conformal import conformal_interval, cqr_correction, levels_alpha
from .engines import ENGINES, make_engine
from .losses import CLASSIFICATION_LOSSES, LOSSES, REGRESSION_LOSSES, leaf_means, make_loss


@dataclass(frozen=True)
class Algorithm:
    """What distinguishes the six algorithms: three independent switches."""

    proximal: bool
    residual: bool
    accelerated: bool


ALGOS = {
    "gradient": Algorithm(False, False, False),
    "prox": Algorithm(True, False, False),
    "residual_gradient": Algorithm(False, True, False),
    "residual_prox": Algorithm(True, True, False),
    "accelerated_gradient": Algorithm(False, False, True),
    "accelerated_prox": Algorithm(True, False, True),
}
PROXIMAL_ALGOS = tuple(name for name, a in ALGOS.items() if a.proximal)
GRADIENT_ALGOS = tuple(name for name, a in ALGOS.items() if not a.proximal)


def nesterov_alphas(n_estimators):
    """Nesterov's alpha_1 .. alpha_T (beta_0 = 1, so alpha_1 = 0 and alpha_2 ~ 0.2818)."""
    alphas = np.empty(n_estimators)
    beta = 1.0
    for t in range(n_estimators):
        beta_next = (1.0 + np.sqrt(1.0 + 4.0 * beta * beta)) / 2.0
        alphas[t] = (beta - 1.0) / beta_next
        beta = beta_next
    return alphas


def model_weights(alphas):
    """Weights w_0 .. w_T of f_T = sum_t w_t c_t given alpha_1 .. alpha_T.

    w_0 = 1, w_T = 1 and w_t = 1 + alpha_t w_{t+1}, i.e. w_t = 1 + sum_{j=t}^{T-1} prod_{k=t}^{j}
    alpha_k.
    """
    T = len(alphas)
    weights = np.ones(T + 1)
    for t in range(T - 1, 0, -1):
        weights[t] = 1.0 + alphas[t - 1] * weights[t + 1]
    return weights


class _BaseBoosting(BaseEstimator):
    """The boosting loop; subclasses map targets and expose predictions."""

    _task = None

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
        X, y = validate_data(
            self, X, y, ensure_all_finite="allow-nan", y_numeric=self._task == "regression"
        )
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
            X_eval = validate_data(self, eval_set[0], reset=False, ensure_all_finite="allow-nan")
            y_eval = self._encode_target(np.asarray(eval_set[1]), fit=False)
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

    def _boost(self, X, y, w, eval_data, val_data, cst=None):
        """Grow trees until ``n_estimators`` (or early stopping), from scratch or, with
        ``warm_start``, from the state the previous fit left in ``_state_``. ``cst``: the
        monotone constraints (``_monotone``; None: none)."""
        algo, loss = ALGOS[self.algo], self._make_loss()
        authors_float = self.tie_rule == "authors_float" and loss.name in FLOAT_LOSSES
        engine = make_engine(self.engine)
        T = int(self.n_estimators)
        alphas = nesterov_alphas(T) if algo.accelerated else np.zeros(T)
        t0 = time.perf_counter()
        # rows of weight 0 take no part in any step of the fit (binning, trees, f_0, line
        # searches, losses): the iterations run on the positive-weight rows only, and the
        # predictions of the others are replayed with each tree, as every engine would place
        # them (the same numbers, without the directions, line-search passes and updates of
        # rows that cannot move the fit)
        keep = None if w is None or np.all(w > 0) else w > 0
        X_idle = None
        if keep is not None:
            X_idle, X, y, w = X[~keep], X[keep], y[keep], w[keep]
        w = _unweighted_if_uniform(w)
        # no weights: the engines' unweighted paths
        weighted = {} if w is None else {"sample_weight": w}
        # monotone constraints: the engines grow scikit-learn's constrained trees
        growing = weighted if cst is None else {**weighted, "monotonic_cst": cst}
        Xp = engine.prepare(X, fit=True, **weighted)
        state = self._state_ if self._warm() else None
        if state is None:
            f0 = _authors_float.init(loss, y) if authors_float else loss.init(y, w)
            state = _LoopState.start(
                f0, len(y), check_random_state(self.random_state), self.n_iter_no_change
            )
            state.monotonic_cst = cst
            state.train_loss.append(loss.value(y, state.F, w))
        f0 = state.f0
        # lambda: the given per-sample step, or "auto"'s from the training target and f_0
        lam = loss.auto_step(y, f0, w) if _is_auto(self.step) else float(self.step)
        idle = None if keep is None else _Replay(engine.prepare(X_idle), f0, state.idle)
        ev = None
        if eval_data[0] is not None:
            ev = _EvalTracker(engine.prepare(eval_data[0]), *eval_data[1:], f0, loss, state.ev)
        val = None
        if val_data[0] is not None:
            val = _EvalTracker(engine.prepare(val_data[0]), *val_data[1:], f0, loss, state.val)
        state.elapsed += time.perf_counter() - t0
        fit = _compiled_loop.Fit(
            loss, algo, engine, Xp, y, w, lam, alphas, T, state, (idle, ev, val)
        )
        if _compiled_loop.applies(self, fit, cst):
            _compiled_loop.boost(self, fit)
        else:
            self._python_loop(fit, growing, authors_float, cst)
        F, trees = state.F, state.trees
        state.idle = None if idle is None else idle.vectors()
        state.ev = None if ev is None else ev.vectors()
        state.val = None if val is None else val.vectors()
        state.validation_split = self.__dict__.pop("_validation_split", None)
        self._state_ = state
        n_iter = len(trees)
        self.engine_ = engine
        self.loss_ = loss
        self.init_ = f0
        self.estimators_ = list(trees)
        self.leaf_values_ = list(state.leaf_values)
        self.n_iter_ = n_iter
        self.step_ = lam
        self.n_leaves_ = np.array([tree.n_leaves for tree in trees], dtype=np.intp)
        self.alphas_ = alphas[:n_iter]
        self.weights_ = model_weights(self.alphas_)
        self.train_loss_ = np.asarray(state.train_loss)
        self.eval_loss_ = None if ev is None else np.asarray(ev.losses)
        self.validation_loss_ = None if val is None else np.asarray(val.losses)
        self.train_time_ = np.asarray(state.times)
        if idle is not None:  # the training rows in their order, weight 0 included
            F_all = np.empty((len(keep),) + F.shape[1:])
            F_all[keep], F_all[~keep] = F, idle.F
            F = F_all
        self.train_prediction_ = F
        self.n_capped_steps_ = state.n_capped_steps

    def _python_loop(self, fit, growing, authors_float, cst):
        """The boosting iterations in Python: the reference of :mod:`proxboost._compiled_loop`
        and the loop of every fit it does not take. ``growing``: the engine's keyword
        arguments (weights, monotone constraints)."""
        loss, algo, engine, Xp, y, w, lam, alphas, T, state, (idle, ev, val) = fit
        reporter = _VerboseReporter(self.verbose, T, ev is not None, val is not None)
        rng, history = state.rng, state.history
        F, H, delta = state.F, state.H, state.delta
        trees, leaf_values, train_loss, times = (
            state.trees,
            state.leaf_values,
            state.train_loss,
            state.times,
        )
        for t in range(len(trees), T if not state.stopped else len(trees)):
            t0 = time.perf_counter()
            if authors_float and algo.proximal:
                r = _authors_float.prox_residual(loss, y, H, lam)
            else:
                r = loss.direction(y, H, lam, algo.proximal)
            if r.ndim == 2:  # several quantiles: one tree, grown for one level in turn
                r = loss.tree_target(r, t)
            target = r + delta if algo.residual else r
            leaf_ids, tree = engine.grow(Xp, target, self.max_depth, rng, **growing)
            fit = leaf_means(target, leaf_ids, tree.n_leaves, w)  # the tree's least-squares fit
            # the authors' rule reads the tree's own leaf values (their float32 thresholds' fit)
            g = _authors_float.tree_leaf_values(tree, fit) if authors_float else fit
            monotone = None if cst is None else (tree, target, cst)
            c = self._leaf_values(
                loss, y, H, leaf_ids, tree.n_leaves, w, (fit, g), state, alphas[: t + 1], monotone
            )
            F_next = H + c[leaf_ids]
            if algo.residual:
                delta = target - fit[leaf_ids]
            H = F_next + alphas[t] * (F_next - F) if algo.accelerated else F_next
            F = F_next
            if idle is not None:
                idle.update(tree, c, alphas[t])
            state.elapsed += time.perf_counter() - t0
            trees.append(tree)
            leaf_values.append(c)
            train_loss.append(loss.value(y, F, w))
            times.append(state.elapsed)
            if ev is not None:
                ev.update(tree, c, alphas[t])
            if val is not None:
                val.update(tree, c, alphas[t])
            reporter.update(
                t,
                _total(train_loss[-1]),
                ev and _total(ev.losses[-1]),
                val and _total(val.losses[-1]),
            )
            # scikit-learn's rule: stop unless the validation loss beats one of the last
            # n_iter_no_change values by tol; the trees up to this iteration are kept
            if val is not None:
                if np.any(_total(val.losses[-1]) + self.tol < history):
                    history[t % len(history)] = _total(val.losses[-1])
                else:
                    state.stopped = True
                    break
        state.F, state.H, state.delta = F, H, delta

    def _leaf_values(self, loss, y, H, leaf_ids, n_leaves, w, fits, state, alphas, monotone=None):
        """The tree's line-searched, shrunk leaf values (a leaf whose fitted value is exactly 0
        keeps 0). ``fits``: the tree's least-squares leaf values, and those its tie rule reads.
        Several quantiles: one column per level, solved together so that no gap between
        adjacent levels can close anywhere (``_multi_quantile``). ``monotone``: (tree, its
        target, constraints) under monotone constraints (None: none)."""
        if monotone is not None:
            return self._bounded_leaf_values(loss, y, H, leaf_ids, w, fits, state, alphas, monotone)
        nu = float(self.learning_rate)
        fit, g = fits
        if state.budget is None:
            c, n_capped = loss.line_search_counted(y, H, leaf_ids, n_leaves, w, self.tie_rule, g)
            state.n_capped_steps += n_capped
            return nu * np.where(fit == 0.0, 0.0, c)
        min_steps = state.budget.next_min_steps(model_weights(alphas))
        c = loss.line_search(y, H, leaf_ids, n_leaves, w, self.tie_rule, fit, min_steps / nu)
        if np.all(min_steps <= 0.0):  # 0 in every level satisfies the bounds: keep the rule
            c[fit == 0.0] = 0.0
        c = nu * c
        state.budget.add(c)
        return c

    def _bounded_leaf_values(self, loss, y, H, leaf_ids, w, fits, state, alphas, monotone):
        """``_leaf_values`` under monotone constraints (``_monotone``): the bounds pass over the
        tree, then each leaf's line search under its bounds; a leaf whose fitted value is 0
        takes the point of its bounds nearest 0 (0 itself when they allow it)."""
        tree, target, cst = monotone
        nu = float(self.learning_rate)
        fit, g = fits
        budget = state.budget
        min_steps = None if budget is None else budget.next_min_steps(model_weights(alphas))

        def solve(groups, n_groups, lower, upper, leaf_values=None):
            rows = groups >= 0
            ids, wr = groups[rows], None if w is None else w[rows]
            if leaf_values is None:  # a group's fitted value: its mean target (the authors' rule)
                leaf_values = leaf_means(target[rows], ids, n_groups, wr)
            args = (y[rows], H[rows], ids, n_groups, (lower, upper), wr, self.tie_rule, leaf_values)
            if budget is not None:
                return loss.bounded_line_search(*args, min_steps / nu)
            c, n_capped = loss.bounded_line_search_counted(*args)
            state.n_capped_steps += n_capped
            return c

        n_levels = None if budget is None else len(min_steps) + 1
        lower, upper = leaf_bounds(tree, leaf_ids, cst, solve, n_levels)
        c = solve(leaf_ids, tree.n_leaves, lower, upper, fit if budget is not None else g)
        if budget is None or np.all(min_steps <= 0.0):  # 0 in every level meets the gaps
            zero = fit == 0.0
            c[zero] = np.clip(0.0, lower[zero], upper[zero])
        c = nu * c
        if budget is not None:
            budget.add(c)
        return c

    @property
    def feature_importances_(self):
        """Impurity-based importances, as scikit-learn's gradient boosting computes them.

        Per tree, the unnormalised weighted impurity decrease of its least-squares fit by feature;
        trees without a split are skipped; the mean over trees is normalised to sum 1 (all zeros
        when no tree splits). Nesterov's model weights do not enter.
        """
        check_is_fitted(self)
        per_tree = [
            np.bincount(tree.split_feature, tree.split_gain, minlength=self.n_features_in_)
            for tree in self.estimators_
            if len(tree.split_feature) > 0
        ]
        if not per_tree:
            return np.zeros(self.n_features_in_)
        mean = np.mean(per_tree, axis=0)
        total = mean.sum()
        return mean / total if total > 0 else mean

    # -- prediction ------------------------------------------------------------------------------
    def _raw_predict(self, X):
        check_is_fitted(self)
        check_feature_kinds(X)
        Xp = self.engine_.prepare(
            validate_data(self, X, reset=False, ensure_all_finite="allow-nan")
        )
        F = _constant(Xp.shape[0], self.init_)
        for w, tree, c in zip(self.weights_[1:], self.estimators_, self.leaf_values_):
            F += w * c[tree.apply(Xp)]
        return F

    def _staged_raw_predict(self, X):
        check_is_fitted(self)
        check_feature_kinds(X)
        Xp = self.engine_.prepare(
            validate_data(self, X, reset=False, ensure_all_finite="allow-nan")
        )
        F = H = _constant(Xp.shape[0], self.init_)
        for tree, c, alpha in zip(self.estimators_, self.leaf_values_, self.alphas_):
            F_next = H + c[tree.apply(Xp)]
            H = F_next + alpha * (F_next - F) if alpha else F_next
            F = F_next
            yield F.copy()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # missing values (NaN) in X: every engine handles them
        return tags


def _unweighted_if_uniform(w):
    """None (the unweighted path) for weights that are all positive and equal, else ``w``:
    weights are relative, so uniform ones change nothing but the rounding."""
    if w is None or len(w) == 0 or not (w[0] > 0 and np.all(w == w[0])):
        return w
    return None


def _constant(n, f0):
    """n rows of the constant f_0 (a float, or one value per quantile level)."""
    return np.full((n,) + np.shape(f0), f0)


def _total(loss_value):
    """A recorded loss as one number: several quantiles count by the sum of their losses."""
    return float(np.sum(loss_value)) if np.ndim(loss_value) else loss_value


def _is_auto(step) -> bool:
    """Whether ``step`` asks for the scale-free step (the string "auto")."""
    return isinstance(step, str) and step == "auto"


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
            missing = np.isnan(a)
            if missing.any():  # NaN sums would hide the other values
                key.append((a.shape, np.nansum(a, axis=0).tobytes(), missing.sum(axis=0).tobytes()))
            else:
                key.append((a.shape, np.sum(a, axis=0).tobytes()))
    return tuple(key)


@dataclass
class _LoopState:
    """What the boosting loop carries from one iteration to the next, kept after ``fit`` so that
    ``warm_start`` continues exactly where it stopped: the fitted rows' F_t, H_t and residual
    Delta_t, the trees' random state, the recorded curves, the replays of the other row sets
    (their F_t, H_t, losses), the early-stopping history, and whether it stopped."""

    f0: float
    F: np.ndarray
    H: np.ndarray
    delta: np.ndarray
    rng: np.random.RandomState
    history: np.ndarray | None
    elapsed: float = 0.0
    stopped: bool = False
    n_capped_steps: int = 0
    trees: list = field(default_factory=list)
    leaf_values: list = field(default_factory=list)
    train_loss: list = field(default_factory=list)
    times: list = field(default_factory=lambda: [0.0])
    idle: dict | None = None
    ev: dict | None = None
    val: dict | None = None
    data_key: tuple | None = None  # identifies the data of the fit (see _data_key)
    validation_split: tuple | None = None  # the early-stopping rows (training, validation)
    budget: GapBudget | None = None  # several quantiles: the gaps the next tree may close
    monotonic_cst: np.ndarray | None = None  # the fit's monotone constraints (warm_start keeps)

    @classmethod
    def start(cls, f0, n, rng, n_iter_no_change):
        F = _constant(n, f0)
        history = None if n_iter_no_change is None else np.full(int(n_iter_no_change), np.inf)
        budget = GapBudget(f0) if np.ndim(f0) else None
        return cls(f0=f0, F=F, H=F, delta=np.zeros(n), rng=rng, history=history, budget=budget)


class _Replay:
    """Replays the recursion F_t, H_t with each new tree on prepared rows outside the fit
    (training rows of weight 0, evaluation rows): the fitted rows' operations, row by row.
    ``vectors`` (from :meth:`vectors` of a previous fit) resumes it for ``warm_start``."""

    def __init__(self, Xp, f0, vectors=None):
        self.Xp = Xp
        if vectors is None:
            self.F = self.H = _constant(len(Xp), f0)
        else:
            self.F, self.H = vectors["F"], vectors["H"]

    def vectors(self) -> dict:
        """What :meth:`__init__` needs to resume the replay."""
        return {"F": self.F, "H": self.H}

    def update(self, tree, c, alpha):
        F_next = self.H + c[tree.apply(self.Xp)]
        self.H = F_next + alpha * (F_next - self.F) if alpha else F_next
        self.F = F_next


class _EvalTracker(_Replay):
    """Replays the recursion on an evaluation set to record its (weighted) loss at every
    iteration.
    """

    def __init__(self, Xp, y, w, f0, loss, vectors=None):
        super().__init__(Xp, f0, vectors)
        self.y, self.w, self.loss = y, w, loss
        self.losses = [loss.value(y, self.F, w)] if vectors is None else list(vectors["losses"])

    def vectors(self) -> dict:
        return {**super().vectors(), "losses": list(self.losses)}

    def update(self, tree, c, alpha):
        super().update(tree, c, alpha)
        self.losses.append(self.loss.value(self.y, self.F, self.w))


class _VerboseReporter:
    """Progress lines on scikit-learn's gradient-boosting schedule.

    ``verbose=1``: iterations 1-10, then every 10th up to 100, every 100th up to 1000, ...;
    ``verbose>1``: every iteration; ``verbose=0``: nothing.
    """

    def __init__(self, verbose, n_estimators, with_eval, with_validation):
        self.verbose, self.n_estimators = int(verbose), n_estimators  # True counts as 1
        if not self.verbose:
            return
        header = ["Iter", "Train Loss"] + ["Eval Loss"] * with_eval + ["Val Loss"] * with_validation
        print(("%10s " + "%16s " * len(header)) % (*header, "Remaining Time"))
        self.mod = 1
        self.start = time.perf_counter()

    def update(self, t, train, eval_loss, val_loss):
        if not self.verbose or (t + 1) % self.mod:
            return
        left = (self.n_estimators - t - 1) * (time.perf_counter() - self.start) / (t + 1)
        left = f"{left / 60:.2f}m" if left > 60 else f"{left:.2f}s"
        cells = [f"{t + 1:>10d}", f"{train:>16.4f}"]
        cells += [f"{v:>16.4f}" for v in (eval_loss, val_loss) if v is not None]
        print(" ".join(cells + [f"{left:>16s}"]))
        if self.verbose == 1 and (t + 1) // (self.mod * 10) > 0:
            self.mod *= 10


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


class BoostingRegressor(RegressorMixin, _BaseBoosting):
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
        "loss": [
            Choice("loss", REGRESSION_LOSSES, hint=_BaseBoosting._other_task_hint("regression"))
        ],
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

    def _fitted_taus(self):
        """The levels the model was fitted with (an array), or None for a single-level loss:
        the fitted loss's, never ``self.tau``, which ``set_params`` may have changed since."""
        check_is_fitted(self)
        return self.loss_.taus if isinstance(self.loss_, MultiQuantile) else None

    def _check_interval_model(self):
        taus = self._fitted_taus()
        if taus is None or len(taus) < 2:
            raise ValueError(
                "an interval needs at least two quantile levels; this model was fitted with "
                f"{self.loss_!r}: fit with e.g. loss='pinball', tau=[0.05, 0.95]"
            )
        return taus

    def calibrate(self, X_cal, y_cal):
        """Conformalize the interval of the outermost levels on rows used neither for fitting
        nor for model selection (conformalized quantile regression, ``proxboost.conformal``):
        ``predict_interval`` then has coverage at least tau_K - tau_1 on new exchangeable rows,
        with the levels of the fit (a ``tau`` changed by ``set_params`` since then takes effect
        at the next ``fit``). Sets ``interval_correction_`` (+inf when there are too few rows
        for that level)."""
        taus = self._check_interval_model()
        y_cal = self._encode_target(y_cal, fit=False)
        P = self.predict(X_cal)
        alpha = levels_alpha(taus[0], taus[-1])  # exact: the rank is an integer
        self.interval_correction_ = cqr_correction(P[:, 0], P[:, -1], y_cal, alpha)
        return self

    def predict_interval(self, X):
        """(n, 2): the predictions of the outermost levels tau_1 and tau_K (nominal coverage
        tau_K - tau_1), conformalized when ``calibrate`` was called (see
        :func:`proxboost.conformal.conformal_interval` for a negative correction)."""
        self._check_interval_model()
        P = self.predict(X)
        lower, upper = P[:, 0], P[:, -1]
        correction = getattr(self, "interval_correction_", None)
        if correction is not None:
            lower, upper = conformal_interval(lower, upper, correction)
        return np.column_stack([lower, upper])


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
            Choice(
                "loss", CLASSIFICATION_LOSSES, hint=_BaseBoosting._other_task_hint("classification")
            )
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
