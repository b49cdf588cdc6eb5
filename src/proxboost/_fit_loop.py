"""The boosting iterations behind both estimators (``docs/method.md``).

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

:class:`BoostingLoop` holds the loop (:meth:`~BoostingLoop._boost`, the Python iterations that
are the reference of :mod:`proxboost._compiled_loop`, and the leaf values under the tie rule,
several quantiles and monotone constraints); :class:`_LoopState` what it carries from one
iteration to the next (kept for ``warm_start``).
"""

import time
from dataclasses import dataclass, field

import numpy as np
from sklearn.utils import check_random_state

from proxboost import _authors_float, _compiled_loop, _compiled_multi
from proxboost._authors_float import FLOAT_LOSSES
from proxboost._forest import Forest
from proxboost._monotone import leaf_bounds
from proxboost._multi_quantile import GapBudget
from proxboost._nesterov import model_weights, nesterov_alphas
from proxboost._verbose import VerboseReporter
from proxboost.engines import make_engine
from proxboost.losses import leaf_means


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
    forest: Forest = field(default_factory=Forest)  # the trees and their leaf values
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

    def __setstate__(self, state):
        if "forest" not in state:  # pickled before forests: the trees and values as lists
            trees, values = state.pop("trees", []), state.pop("leaf_values", [])
            state["forest"] = Forest.of_lists(trees, values)
        self.__dict__.update(state)


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


class BoostingLoop:
    """The boosting loop of both estimators (a mixin of ``_BaseBoosting``): from the checked
    data to the fitted attributes."""

    def _boost(self, X, y, w, eval_data, val_data, cst=None):
        """Grow trees until ``n_estimators`` (or early stopping), from scratch or, with
        ``warm_start``, from the state the previous fit left in ``_state_``. ``cst``: the
        monotone constraints (``_monotone``; None: none)."""
        algo, loss = ALGOS[self.algo], self._make_loss()
        authors_float = self.tie_rule == "authors_float" and loss.name in FLOAT_LOSSES
        engine = make_engine(self.engine)
        engine.n_jobs = self.n_jobs  # threads of its kernels (make_engine's n_jobs)
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
        elif _compiled_multi.applies(self, fit, cst):  # several quantile levels
            _compiled_multi.boost(self, fit)
        else:
            self._python_loop(fit, growing, authors_float, cst)
        F, forest = state.F, state.forest
        state.idle = None if idle is None else idle.vectors()
        state.ev = None if ev is None else ev.vectors()
        state.val = None if val is None else val.vectors()
        state.validation_split = self.__dict__.pop("_validation_split", None)
        self._state_ = state
        n_iter = len(forest)
        self.engine_ = engine
        self.loss_ = loss
        self.init_ = f0
        self.n_iter_ = n_iter
        self.step_ = lam
        self.n_leaves_ = forest.n_leaves()
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
        reporter = VerboseReporter(self.verbose, T, ev is not None, val is not None)
        rng, history = state.rng, state.history
        F, H, delta = state.F, state.H, state.delta
        forest, train_loss, times = state.forest, state.train_loss, state.times
        for t in range(len(forest), T if not state.stopped else len(forest)):
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
            forest.append(tree, c)
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
