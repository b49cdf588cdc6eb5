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
from dataclasses import dataclass

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _authors_float
from ._authors_float import FLOAT_LOSSES
from ._leafops import TIE_RULES
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


def _check_range(name, value, low, high, low_open, high_open, allowed, integer=False):
    kinds = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    ok = isinstance(value, kinds) and not isinstance(value, bool)
    if ok:
        ok = (value > low if low_open else value >= low) and (
            value < high if high_open else value <= high
        )
    if not ok:
        raise ValueError(f"{name}={value!r} is out of range; allowed values: {allowed}")


class _BaseBoosting(BaseEstimator):
    """The boosting loop; subclasses map targets and expose predictions."""

    _task = None

    # -- validation ------------------------------------------------------------------------------
    def _validate_params(self):
        allowed = REGRESSION_LOSSES if self._task == "regression" else CLASSIFICATION_LOSSES
        if self.loss not in allowed:
            other = "BoostingClassifier" if self._task == "regression" else "BoostingRegressor"
            hint = (
                f" ({self.loss!r} is a {LOSSES[self.loss].task} loss: use {other})"
                if self.loss in LOSSES
                else ""
            )
            raise ValueError(
                f"loss={self.loss!r} is not allowed for {type(self).__name__}; allowed values:"
                f" {list(allowed)}{hint}"
            )
        if self.algo not in ALGOS:
            raise ValueError(
                f"algo={self.algo!r} is not a known algorithm; allowed values: {list(ALGOS)}"
            )
        if self.engine not in ENGINES:
            raise ValueError(
                f"engine={self.engine!r} is not a known tree engine; allowed values:"
                f" {sorted(ENGINES)}"
            )
        if self.tie_rule not in TIE_RULES:
            raise ValueError(
                f"tie_rule={self.tie_rule!r} is not a known tie rule; allowed values:"
                f" {list(TIE_RULES)}"
            )
        _check_range(
            "n_estimators",
            self.n_estimators,
            1,
            np.inf,
            False,
            True,
            "an integer >= 1",
            integer=True,
        )
        _check_range(
            "max_depth", self.max_depth, 1, np.inf, False, True, "an integer >= 1", integer=True
        )
        _check_range(
            "learning_rate", self.learning_rate, 0.0, 1.0, True, False, "a float in (0, 1]"
        )
        _check_range(
            "step", self.step, 0.0, np.inf, True, True, "a float > 0 (per-sample proximal step)"
        )
        _check_range("tau", self._param("tau", 0.5), 0.0, 1.0, True, True, "a float in (0, 1)")
        _check_range("beta", self._param("beta", 1.0), 0.0, np.inf, True, True, "a float > 0")
        _check_range(
            "newton_steps",
            self._param("newton_steps", 1),
            1,
            np.inf,
            False,
            True,
            "an integer >= 1",
            integer=True,
        )
        if self.n_iter_no_change is not None:
            _check_range(
                "n_iter_no_change",
                self.n_iter_no_change,
                1,
                np.inf,
                False,
                True,
                "None (no early stopping) or an integer >= 1",
                integer=True,
            )
        _check_range(
            "validation_fraction",
            self.validation_fraction,
            0.0,
            1.0,
            True,
            True,
            "a float in (0, 1)",
        )
        _check_range("tol", self.tol, 0.0, np.inf, False, True, "a finite float >= 0")
        if not isinstance(self.verbose, bool):  # True / False are accepted, as in scikit-learn
            _check_range(
                "verbose",
                self.verbose,
                0,
                np.inf,
                False,
                True,
                "an integer >= 0 or a bool",
                integer=True,
            )

    def _param(self, name, default):
        return getattr(self, name, default)

    def _make_loss(self):
        return make_loss(
            self.loss,
            tau=self._param("tau", 0.5),
            beta=self._param("beta", 1.0),
            newton_steps=self._param("newton_steps", 1),
        )

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
        return None if np.all(w == 1.0) else w

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
    def fit(self, X, y, sample_weight=None, eval_set=None):
        """Fit the boosted model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
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
        self._validate_params()
        X, y = validate_data(
            self, X, y, ensure_all_finite=True, y_numeric=self._task == "regression"
        )
        y = self._encode_target(y, fit=True)
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
            X_eval = validate_data(self, eval_set[0], reset=False, ensure_all_finite=True)
            y_eval = self._encode_target(np.asarray(eval_set[1]), fit=False)
            if len(y_eval) != len(X_eval):
                raise ValueError(
                    f"eval_set has {len(X_eval)} rows in X_eval but {len(y_eval)} in y_eval"
                )
            if len(eval_set) == 3 and eval_set[2] is not None:
                w_eval = self._check_weights(eval_set[2], y_eval, name="eval_set's w_eval")
        X_val = y_val = w_val = None
        if self.n_iter_no_change is not None:
            X, y, w, X_val, y_val, w_val = self._split_validation(X, y, w)
        self._boost(X, y, w, (X_eval, y_eval, w_eval), (X_val, y_val, w_val))
        return self

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
        arrays = (X, y) if w is None else (X, y, w)
        parts = train_test_split(
            *arrays,
            test_size=self.validation_fraction,
            random_state=self.random_state,
            stratify=stratify,
        )
        X_tr, X_val, y_tr, y_val = parts[:4]
        w_tr, w_val = (None, None) if w is None else parts[4:]
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

    def _boost(self, X, y, w, eval_data, val_data):
        algo, loss, nu, lam = (
            ALGOS[self.algo],
            self._make_loss(),
            float(self.learning_rate),
            float(self.step),
        )
        authors_float = self.tie_rule == "authors_float" and loss.name in FLOAT_LOSSES
        rng = check_random_state(self.random_state)
        engine = make_engine(self.engine)
        weighted = (
            {} if w is None else {"sample_weight": w}
        )  # no weights: the engines' unweighted paths
        T = int(self.n_estimators)
        alphas = nesterov_alphas(T) if algo.accelerated else np.zeros(T)
        t0 = time.perf_counter()
        # rows of weight 0 take no part in any step of the fit (binning, trees, f_0, line
        # searches, losses): the iterations run on the positive-weight rows only, and the
        # predictions of the others are replayed with each tree, as every engine would place
        # them (the same numbers, without the directions, line-search passes and updates of
        # rows that cannot move the fit)
        keep = None if w is None or np.all(w > 0) else w > 0
        if keep is not None:
            X_idle, X, y, w = X[~keep], X[keep], y[keep], w[keep]
            weighted = {"sample_weight": w}
        Xp = engine.prepare(X, fit=True, **weighted)
        f0 = _authors_float.init(loss, y) if authors_float else loss.init(y, w)
        F = np.full(len(y), f0)
        H, delta = F, np.zeros(len(y))
        idle = None if keep is None else _Replay(engine.prepare(X_idle), f0)
        elapsed = time.perf_counter() - t0
        ev = (
            None
            if eval_data[0] is None
            else _EvalTracker(engine.prepare(eval_data[0]), *eval_data[1:], f0, loss)
        )
        val = (
            None
            if val_data[0] is None
            else _EvalTracker(engine.prepare(val_data[0]), *val_data[1:], f0, loss)
        )
        history = None if val is None else np.full(int(self.n_iter_no_change), np.inf)
        reporter = _VerboseReporter(self.verbose, T, ev is not None, val is not None)
        trees, leaf_values = [], []
        train_loss, times = [loss.value(y, F, w)], [0.0]
        for t in range(T):
            t0 = time.perf_counter()
            if authors_float and algo.proximal:
                r = _authors_float.prox_residual(loss, y, H, lam)
            else:
                r = loss.direction(y, H, lam, algo.proximal)
            target = r + delta if algo.residual else r
            leaf_ids, tree = engine.grow(Xp, target, self.max_depth, rng, **weighted)
            fit = leaf_means(target, leaf_ids, tree.n_leaves, w)  # the tree's least-squares fit
            g = _authors_float.tree_leaf_values(tree, fit) if authors_float else fit
            c = loss.line_search(y, H, leaf_ids, tree.n_leaves, w, self.tie_rule, g)
            c = nu * np.where(fit == 0.0, 0.0, c)
            F_next = H + c[leaf_ids]
            if algo.residual:
                delta = target - fit[leaf_ids]
            H = F_next + alphas[t] * (F_next - F) if algo.accelerated else F_next
            F = F_next
            if idle is not None:
                idle.update(tree, c, alphas[t])
            elapsed += time.perf_counter() - t0
            trees.append(tree)
            leaf_values.append(c)
            train_loss.append(loss.value(y, F, w))
            times.append(elapsed)
            if ev is not None:
                ev.update(tree, c, alphas[t])
            if val is not None:
                val.update(tree, c, alphas[t])
            reporter.update(t, train_loss[-1], ev and ev.losses[-1], val and val.losses[-1])
            # scikit-learn's rule: stop unless the validation loss beats one of the last
            # n_iter_no_change values by tol; the trees up to this iteration are kept
            if val is not None:
                if np.any(val.losses[-1] + self.tol < history):
                    history[t % len(history)] = val.losses[-1]
                else:
                    break
        n_iter = len(trees)
        self.engine_ = engine
        self.loss_ = loss
        self.init_ = f0
        self.estimators_ = trees
        self.leaf_values_ = leaf_values
        self.n_iter_ = n_iter
        self.n_leaves_ = np.array([tree.n_leaves for tree in trees], dtype=np.intp)
        self.alphas_ = alphas[:n_iter]
        self.weights_ = model_weights(self.alphas_)
        self.train_loss_ = np.asarray(train_loss)
        self.eval_loss_ = None if ev is None else np.asarray(ev.losses)
        self.validation_loss_ = None if val is None else np.asarray(val.losses)
        self.train_time_ = np.asarray(times)
        if idle is not None:  # the training rows in their order, weight 0 included
            F_all = np.empty(len(keep))
            F_all[keep], F_all[~keep] = F, idle.F
            F = F_all
        self.train_prediction_ = F
        self.n_capped_steps_ = getattr(loss, "n_capped_steps", 0)

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
        Xp = self.engine_.prepare(validate_data(self, X, reset=False, ensure_all_finite=True))
        F = np.full(Xp.shape[0], self.init_)
        for w, tree, c in zip(self.weights_[1:], self.estimators_, self.leaf_values_):
            F += w * c[tree.apply(Xp)]
        return F

    def _staged_raw_predict(self, X):
        check_is_fitted(self)
        Xp = self.engine_.prepare(validate_data(self, X, reset=False, ensure_all_finite=True))
        F = H = np.full(Xp.shape[0], self.init_)
        for tree, c, alpha in zip(self.estimators_, self.leaf_values_, self.alphas_):
            F_next = H + c[tree.apply(Xp)]
            H = F_next + alpha * (F_next - F) if alpha else F_next
            F = F_next
            yield F.copy()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


class _Replay:
    """Replays the recursion F_t, H_t with each new tree on prepared rows outside the fit
    (training rows of weight 0, evaluation rows): the fitted rows' operations, row by row."""

    def __init__(self, Xp, f0):
        self.Xp = Xp
        self.F = self.H = np.full(len(Xp), f0)

    def update(self, tree, c, alpha):
        F_next = self.H + c[tree.apply(self.Xp)]
        self.H = F_next + alpha * (F_next - self.F) if alpha else F_next
        self.F = F_next


class _EvalTracker(_Replay):
    """Replays the recursion on an evaluation set to record its (weighted) loss at every
    iteration.
    """

    def __init__(self, Xp, y, w, f0, loss):
        super().__init__(Xp, f0)
        self.y, self.w, self.loss = y, w, loss
        self.losses = [loss.value(y, self.F, w)]

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
    step : float > 0, default=1.0
        Per-sample proximal step lambda (the authors' ``step``; the paper's appendix writes
        n * lambda). Used by the proximal algorithms only.
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
"""


class BoostingRegressor(RegressorMixin, _BaseBoosting):
    __doc__ = f"""Boosting for regression with the ``ls``, ``lad`` and ``pinball`` losses.

    Parameters
    ----------
    loss : {{"ls", "lad", "pinball"}}, default="ls"
        Least squares, least absolute deviation, or the pinball (quantile) loss at ``tau``.
    {_PARAMS_DOC}
    tau : float in (0, 1), default=0.5
        Quantile level of the pinball loss.
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
