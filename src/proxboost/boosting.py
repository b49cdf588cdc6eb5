"""The boosting loop of SPEC §3 and the scikit-learn estimators built on it.

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
weights: beta_0 = 1, beta_{t+1} = (1 + sqrt(1 + 4 beta_t^2)) / 2, alpha_{t+1} = (beta_t - 1) / beta_{t+1}
and h_{t+1} = f_{t+1} + alpha_{t+1} (f_{t+1} - f_t), h_0 = f_0.

``step`` is lambda, the *per-sample* proximal step (SPEC §2.1): the paper's appendix writes
lambda_paper = n * lambda. The values of the paper's experiments are per-sample values.
"""

import time
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

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
    """alpha_1 .. alpha_T of SPEC §3 (beta_0 = 1, so alpha_1 = 0 and alpha_2 ~ 0.2818)."""
    alphas = np.empty(n_estimators)
    beta = 1.0
    for t in range(n_estimators):
        beta_next = (1.0 + np.sqrt(1.0 + 4.0 * beta * beta)) / 2.0
        alphas[t] = (beta - 1.0) / beta_next
        beta = beta_next
    return alphas


def model_weights(alphas):
    """Weights w_0 .. w_T of f_T = sum_t w_t c_t given alpha_1 .. alpha_T.

    w_0 = 1, w_T = 1 and w_t = 1 + alpha_t w_{t+1}, i.e. w_t = 1 + sum_{j=t}^{T-1} prod_{k=t}^{j} alpha_k.
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
        ok = (value > low if low_open else value >= low) and (value < high if high_open else value <= high)
    if not ok:
        raise ValueError(f"{name}={value!r} is out of range; allowed values: {allowed}")


class _BaseBoosting(BaseEstimator):
    """The loop of SPEC §3; subclasses map targets and expose predictions."""

    _task = None

    # -- validation ------------------------------------------------------------------------------
    def _validate_params(self):
        allowed = REGRESSION_LOSSES if self._task == "regression" else CLASSIFICATION_LOSSES
        if self.loss not in allowed:
            other = "BoostingClassifier" if self._task == "regression" else "BoostingRegressor"
            hint = f" ({self.loss!r} is a {LOSSES[self.loss].task} loss: use {other})" if self.loss in LOSSES else ""
            raise ValueError(f"loss={self.loss!r} is not allowed for {type(self).__name__}; allowed values: {list(allowed)}{hint}")
        if self.algo not in ALGOS:
            raise ValueError(f"algo={self.algo!r} is not a known algorithm; allowed values: {list(ALGOS)}")
        if self.engine not in ENGINES:
            raise ValueError(f"engine={self.engine!r} is not a known tree engine; allowed values: {sorted(ENGINES)}")
        _check_range("n_estimators", self.n_estimators, 1, np.inf, False, True, "an integer >= 1", integer=True)
        _check_range("max_depth", self.max_depth, 1, np.inf, False, True, "an integer >= 1", integer=True)
        _check_range("learning_rate", self.learning_rate, 0.0, 1.0, True, False, "a float in (0, 1]")
        _check_range("step", self.step, 0.0, np.inf, True, True, "a float > 0 (per-sample proximal step)")
        _check_range("tau", self._param("tau", 0.5), 0.0, 1.0, True, True, "a float in (0, 1)")
        _check_range("beta", self._param("beta", 1.0), 0.0, np.inf, True, True, "a float > 0")
        _check_range("newton_steps", self._param("newton_steps", 1), 1, np.inf, False, True, "an integer >= 1", integer=True)

    def _param(self, name, default):
        return getattr(self, name, default)

    def _make_loss(self):
        return make_loss(
            self.loss,
            tau=self._param("tau", 0.5),
            beta=self._param("beta", 1.0),
            newton_steps=self._param("newton_steps", 1),
        )

    # -- fit -------------------------------------------------------------------------------------
    def fit(self, X, y, eval_set=None):
        """Fit the boosted model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        eval_set : tuple (X_eval, y_eval), optional
            Data on which the loss is recorded at every iteration (``eval_loss_``).

        Returns
        -------
        self
        """
        self._validate_params()
        X, y = validate_data(self, X, y, ensure_all_finite=True, y_numeric=self._task == "regression")
        y = self._encode_target(y, fit=True)
        X_eval = y_eval = None
        if eval_set is not None:
            if not (isinstance(eval_set, (tuple, list)) and len(eval_set) == 2):
                raise ValueError("eval_set must be a tuple (X_eval, y_eval)")
            X_eval = validate_data(self, eval_set[0], reset=False, ensure_all_finite=True)
            y_eval = self._encode_target(np.asarray(eval_set[1]), fit=False)
            if len(y_eval) != len(X_eval):
                raise ValueError(f"eval_set has {len(X_eval)} rows in X_eval but {len(y_eval)} in y_eval")
        self._boost(X, y, X_eval, y_eval)
        return self

    def _boost(self, X, y, X_eval, y_eval):
        algo, loss, nu, lam = ALGOS[self.algo], self._make_loss(), float(self.learning_rate), float(self.step)
        rng = check_random_state(self.random_state)
        engine = make_engine(self.engine)
        T = int(self.n_estimators)
        alphas = nesterov_alphas(T) if algo.accelerated else np.zeros(T)
        t0 = time.perf_counter()
        Xp = engine.prepare(X, fit=True)
        f0 = loss.init(y)
        F = np.full(len(y), f0)
        H, delta = F, np.zeros(len(y))
        elapsed = time.perf_counter() - t0
        ev = None if X_eval is None else _EvalTracker(engine.prepare(X_eval), y_eval, f0, loss)
        trees, leaf_values = [], []
        train_loss, times = [loss.value(y, F)], [0.0]
        for t in range(T):
            t0 = time.perf_counter()
            r = loss.direction(y, H, lam, algo.proximal)
            target = r + delta if algo.residual else r
            leaf_ids, tree = engine.grow(Xp, target, self.max_depth, rng)
            fit = leaf_means(target, leaf_ids, tree.n_leaves)  # the tree's least-squares fit
            c = loss.line_search(y, H, leaf_ids, tree.n_leaves)
            c = nu * np.where(fit == 0.0, 0.0, c)
            F_next = H + c[leaf_ids]
            if algo.residual:
                delta = target - fit[leaf_ids]
            H = F_next + alphas[t] * (F_next - F) if algo.accelerated else F_next
            F = F_next
            elapsed += time.perf_counter() - t0
            trees.append(tree)
            leaf_values.append(c)
            train_loss.append(loss.value(y, F))
            times.append(elapsed)
            if ev is not None:
                ev.update(tree, c, alphas[t])
        self.engine_ = engine
        self.loss_ = loss
        self.init_ = f0
        self.estimators_ = trees
        self.leaf_values_ = leaf_values
        self.alphas_ = alphas
        self.weights_ = model_weights(alphas)
        self.train_loss_ = np.asarray(train_loss)
        self.eval_loss_ = None if ev is None else np.asarray(ev.losses)
        self.train_time_ = np.asarray(times)
        self.train_prediction_ = F
        self.n_capped_steps_ = getattr(loss, "n_capped_steps", 0)

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


class _EvalTracker:
    """Replays the recursion on an evaluation set to record its loss at every iteration."""

    def __init__(self, Xp, y, f0, loss):
        self.Xp, self.y, self.loss = Xp, y, loss
        self.F = self.H = np.full(len(y), f0)
        self.losses = [loss.value(y, self.F)]

    def update(self, tree, c, alpha):
        F_next = self.H + c[tree.apply(self.Xp)]
        self.H = F_next + alpha * (F_next - self.F) if alpha else F_next
        self.F = F_next
        self.losses.append(self.loss.value(self.y, self.F))


_PARAMS_DOC = """
    algo : {"gradient", "prox", "residual_gradient", "residual_prox", "accelerated_gradient", \
"accelerated_prox"}, default="prox"
        The boosting algorithm (SPEC §3).
    n_estimators : int >= 1, default=100
        Number of boosting iterations T.
    learning_rate : float in (0, 1], default=0.1
        Shrinkage nu of every line-searched tree.
    step : float > 0, default=1.0
        Per-sample proximal step lambda (the authors' ``step``; the paper's appendix writes
        n * lambda). Used by the proximal algorithms only.
    max_depth : int >= 1, default=3
        Depth of the regression trees.
    random_state : int, RandomState instance or None, default=None
        Seeds the trees' tie-breaking between equally good splits, as in scikit-learn.
    engine : {"exact", "hist"}, default="exact"
        Tree engine: scikit-learn's exact ``DecisionTreeRegressor``, or the histogram engine.
"""

_ATTRS_DOC = """
    Attributes
    ----------
    train_loss_ : ndarray of shape (n_estimators + 1,)
        C(f_0), ..., C(f_T) on the training set.
    eval_loss_ : ndarray of shape (n_estimators + 1,) or None
        The same on ``eval_set``.
    train_time_ : ndarray of shape (n_estimators + 1,)
        Cumulative wall-clock seconds of fitting at each iteration, starting at 0 (the loss
        recording and ``eval_set`` bookkeeping are not counted).
    init_ : float
        The constant f_0.
    estimators_ : list of trees
        The fitted trees (engine objects mapping rows to leaf ids).
    leaf_values_ : list of ndarray
        Each tree's line-searched, shrunk leaf values c_t.
    alphas_ : ndarray of shape (n_estimators,)
        Nesterov's alpha_1 .. alpha_T (zeros without acceleration).
    weights_ : ndarray of shape (n_estimators + 1,)
        f_T = sum_t weights_[t] c_t (all ones without acceleration).
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

    def __init__(self, loss="ls", algo="prox", n_estimators=100, learning_rate=0.1, step=1.0,
                 max_depth=3, tau=0.5, random_state=None, engine="exact"):
        self.loss = loss
        self.algo = algo
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.step = step
        self.max_depth = max_depth
        self.tau = tau
        self.random_state = random_state
        self.engine = engine

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

    def __init__(self, loss="logistic", algo="prox", n_estimators=100, learning_rate=0.1, step=1.0,
                 max_depth=3, beta=1.0, newton_steps=1, random_state=None, engine="exact"):
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
            raise ValueError(f"y contains labels {np.unique(y[~known])[:5].tolist()} not seen in fit: {self.classes_.tolist()}")
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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags
