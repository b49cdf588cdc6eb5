"""Several quantiles in one model whose predictions never cross (``tau=[...]``).

The K pinball losses at levels tau_1 < ... < tau_K share every tree: iteration t grows one
least-squares tree on the direction of level t mod K (round robin:
:meth:`MultiQuantile.tree_target`), then gives each leaf K values, one line search per level,
solved *together* under ordering constraints. Crossing is excluded by
construction, for every row (also far outside the training data) and at every stage:

- The prediction of level k is f_0,k + sum_t w_t c_t,k(leaf_t(x)) with positive model weights
  w_t (1 without acceleration, Nesterov's otherwise). The gap between adjacent levels at any x is
  therefore at least the *worst-case gap* G_k = (f_0,k - f_0,k-1) + sum_t w_t min_l (c_t,k(l) -
  c_t,k-1(l)), whatever leaves x falls into.
- Before each tree's leaf values are chosen, the gap it may remove is bounded by what remains:
  c_t,k(l) - c_t,k-1(l) >= -G_k (a "budget": gaps may shrink where the data ask for it, never
  below zero anywhere). With acceleration the earlier trees' weights grow with t, so G_k is
  recomputed with the current weights at every iteration, and a negative G_k forces the new tree
  to widen the gaps. A margin of a few ulps of the predictions' magnitude is kept so that
  rounding in the sums cannot produce a crossing either.
- Every level starts from the same constant, so the gaps start at zero; one tree per iteration
  is grown on the direction of one level in turn (round robin), and every level gets its own
  line-searched values in its leaves.
- For one leaf, minimising sum_k sum_i w_i rho_tau_k(u_ik - c_k) subject to c_k - c_k-1 >= b_k is a
  separable convex problem under an order: with c~_k = c_k - (b_2 + ... + b_k) it is isotonic
  regression of separable convex terms, solved exactly by pooling adjacent violators. A pooled
  block of levels is one weighted quantile problem: the pooled points u_ik - s_k of its levels,
  at the mean of their levels (the slopes of rho_tau add up).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._leafops import MIDPOINT, _bounded_tie_point, _leaf_values_arg
from .losses import Pinball

#: Relative margin kept on every worst-case gap, in units of eps x (iterations + 2) x the
#: magnitude of the predictions: rounding of the K sums cannot turn a zero gap negative.
ROUNDING_MARGIN = 8.0


def check_taus(tau):
    """The levels of ``tau`` as a 1-D float array when it is a list (strictly increasing, in
    (0, 1)), or None when it is a scalar; raises ValueError with one line otherwise."""
    if np.ndim(tau) == 0:
        return None
    taus = np.asarray(tau, dtype=float) if _all_numbers(tau) else None
    if (
        taus is None
        or taus.ndim != 1
        or len(taus) == 0
        or not np.all(np.isfinite(taus))
        or not np.all((taus > 0) & (taus < 1))
        or not np.all(np.diff(taus) > 0)
    ):
        raise ValueError(
            f"tau={tau!r} is not allowed; allowed values: a float in (0, 1), or a non-empty, "
            "strictly increasing list of floats in (0, 1) (several quantiles in one model)"
        )
    return taus


def _all_numbers(values) -> bool:
    try:
        return all(
            isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
            for v in values
        )
    except TypeError:
        return False


class MultiQuantile:
    """The pinball losses at K ordered levels, as one loss of vector-valued predictions: values,
    f_0, directions and leaf line searches take and return one column per level."""

    name, task = "pinball", "regression"
    target_bound = Pinball.target_bound

    def __init__(self, taus):
        self.taus = np.asarray(taus, dtype=float)
        self.levels = [Pinball(tau) for tau in self.taus]

    def params(self):
        return {"tau": [float(t) for t in self.taus]}

    def __repr__(self):
        return f"MultiQuantile(tau={self.params()['tau']})"

    def value(self, y, F, w=None) -> np.ndarray:
        """The mean pinball loss of each level, shape (K,)."""
        return np.array([level.value(y, F[:, k], w) for k, level in enumerate(self.levels)])

    def init(self, y, w=None) -> np.ndarray:
        """f_0: every level starts at the same constant, the weighted quantile of y at the mean
        level. Gaps then start at zero and open only where the trees find spread: starting from
        the K marginal quantiles would put the marginal gap everywhere, and the gaps could then
        shrink only as far as the worst case over all trees allows."""
        start = Pinball(float(np.mean(self.taus))).init(y, w)
        return np.full(len(self.taus), start)

    def auto_step(self, y, f0, w=None) -> float:
        """The step of ``step="auto"``: one lambda for every level, the single level's rule
        (:meth:`Pinball.auto_step`, which does not depend on tau) at the common start f_0."""
        return self.levels[0].auto_step(y, float(f0[0]), w)

    def tree_target(self, directions, t):
        """The target of tree t: the direction of level t mod K (round robin). One tree per
        iteration serves every level (each gets its own leaf values); the round robin lets the
        trees find where each level's direction varies — the mean of the K directions would
        carry the location and lose the spread."""
        return directions[:, t % directions.shape[1]]

    def direction(self, y, H, step, proximal) -> np.ndarray:
        """Each level's direction at its own predictions, shape (n, K)."""
        return np.column_stack(
            [level.direction(y, H[:, k], step, proximal) for k, level in enumerate(self.levels)]
        )

    def line_search(self, y, H, leaf_ids, n_leaves, w, tie_rule, leaf_values, min_steps):
        """Leaf values c of shape (n_leaves, K) minimising each leaf's sum of the K pinball
        losses at H + c, subject to c[:, k] - c[:, k - 1] >= min_steps[k - 1] in every leaf
        (``min_steps`` None: c[:, k] >= c[:, k - 1], the plain order)."""
        c = np.column_stack(
            [
                level.line_search(y, H[:, k], leaf_ids, n_leaves, w, tie_rule, leaf_values)
                for k, level in enumerate(self.levels)
            ]
        )
        return self._ordered(y, H, leaf_ids, n_leaves, w, tie_rule, leaf_values, min_steps, c)

    def bounded_line_search(
        self, y, H, leaf_ids, n_leaves, bounds, w, tie_rule, leaf_values, min_steps
    ):
        """:meth:`line_search` under per-leaf, per-level bounds ``bounds = (lower, upper)`` of
        shape (n_leaves, K) each (monotone constraints): the exact minimiser under both the
        ordering and the bounds, provided each leaf's ``lower`` and ``upper`` rows satisfy the
        ordering constraints themselves (rows of infinities do). In the shifted variables of
        the module docstring the bounds are then non-decreasing in k, so a pooled block of
        levels always has a non-empty common interval [max lower, min upper], and pooling
        adjacent violators with each block at its bounded optimum solves the problem."""
        lower, upper = (np.asarray(b, dtype=float) for b in bounds)
        c = np.column_stack(
            [
                level.bounded_line_search(
                    y,
                    H[:, k],
                    leaf_ids,
                    n_leaves,
                    (lower[:, k], upper[:, k]),
                    w,
                    tie_rule,
                    leaf_values,
                )
                for k, level in enumerate(self.levels)
            ]
        )
        c = self._ordered(
            y, H, leaf_ids, n_leaves, w, tie_rule, leaf_values, min_steps, c, (lower, upper)
        )
        # back from the shifted variables c~_k + shifts[k], a value may round one ulp past its
        # bound, and a neighbouring leaf's value at that bound would then come in the wrong
        # order: the bounds are exact (a gap one ulp short is within the budget's rounding
        # margin)
        return np.minimum(np.maximum(c, lower), upper)

    def _ordered(
        self, y, H, leaf_ids, n_leaves, w, tie_rule, leaf_values, min_steps, c, bounds=None
    ):
        """The levels' own values ``c`` made to satisfy the ordering constraints where they do
        not: pooling adjacent violators in those leaves (under ``bounds``, if any)."""
        K = len(self.taus)
        b = np.zeros(K - 1) if min_steps is None else np.asarray(min_steps, dtype=float)
        violated = np.flatnonzero(np.any(np.diff(c, axis=1) < b, axis=1))
        if len(violated) == 0:
            return c
        # the violating leaves' rows, grouped by leaf (one stable sort)
        order = np.argsort(leaf_ids, kind="stable")
        starts = np.searchsorted(leaf_ids[order], np.arange(n_leaves + 1))
        U = np.ascontiguousarray(y[order, None] - H[order])
        ws = np.ones(len(order)) if w is None else np.ascontiguousarray(w[order], dtype=float)
        rule, g = _leaf_values_arg(tie_rule, leaf_values, n_leaves)
        if rule == MIDPOINT:
            g = np.zeros(n_leaves)
        shifts = np.concatenate([[0.0], np.cumsum(b)])
        if bounds is None:
            shifted = (np.full((n_leaves, K), -np.inf), np.full((n_leaves, K), np.inf))
        else:  # the bounds in the shifted variables c~_k = c_k - shifts[k]
            shifted = tuple(np.ascontiguousarray(side - shifts) for side in bounds)
        _ordered_leaves(U, ws, starts, violated, self.taus, shifts, rule, g, c, shifted)
        return c


@njit(cache=True, nogil=True)
def _weighted_quantile_point(points, weights, tau, rule, g, bounds):
    """Tie-rule point of argmin_c sum_i weights_i rho_tau(points_i - c) on [lower, upper] =
    ``bounds``: the weighted tau-quantile, or the rule's point of [x_(j), x_(j+1)] when tau W
    equals a cumulative weight (to 1e-9 W), as the single-level line searches decide it (under
    bounds: ``_leafops._bounded_tie_point``; infinite bounds give the unbounded point)."""
    order = np.argsort(points, kind="mergesort")
    total = 0.0
    for i in range(len(points)):
        total += weights[i]
    target = tau * total
    tol = 1e-9 * total
    cum = 0.0
    lo = np.inf
    hi = np.inf
    for j in range(len(points)):
        cum += weights[order[j]]
        if abs(cum - target) <= tol:
            lo = points[order[j]]
            hi = points[order[j + 1]] if j + 1 < len(points) else np.inf
            break
        if cum > target:
            lo = points[order[j]]
            hi = lo
            break
    return _bounded_tie_point(lo, hi, rule, g, bounds[0], bounds[1])


@njit(cache=True, nogil=True)
def _pooled_point(U, ws, start, stop, taus, shifts, first, last, rule, g, bounds):
    """The common c~ of levels first..last of one leaf: the weighted quantile of the pooled
    points U[i, k] - shifts[k] at the mean of the levels, on ``bounds`` (the block's common
    interval of the shifted bounds)."""
    m = stop - start
    size = m * (last - first + 1)
    points = np.empty(size)
    weights = np.empty(size)
    tau = 0.0
    pos = 0
    for k in range(first, last + 1):
        tau += taus[k]
        for i in range(start, stop):
            points[pos] = U[i, k] - shifts[k]
            weights[pos] = ws[i]
            pos += 1
    return _weighted_quantile_point(points, weights, tau / (last - first + 1), rule, g, bounds)


@njit(cache=True, nogil=True)
def _ordered_leaves(U, ws, starts, leaves, taus, shifts, rule, g, c, shifted):
    """Pool adjacent violators in each of ``leaves`` (rows starts[leaf]:starts[leaf + 1] of U):
    c[leaf, k] = c~_k + shifts[k] with c~ non-decreasing, each block at its pooled optimum on
    the common interval of its levels' shifted bounds ``shifted`` = (lower, upper), arrays
    (n_leaves, K) (infinite: no bounds; ``c`` then holds the levels' bounded optima)."""
    K = taus.shape[0]
    first = np.empty(K, np.int64)
    last = np.empty(K, np.int64)
    value = np.empty(K)
    for leaf in leaves:
        start, stop = starts[leaf], starts[leaf + 1]
        n_blocks = 0
        for k in range(K):
            first[n_blocks] = k
            last[n_blocks] = k
            value[n_blocks] = c[leaf, k] - shifts[k]  # the level's own optimum
            n_blocks += 1
            while n_blocks > 1 and value[n_blocks - 2] > value[n_blocks - 1]:
                a = n_blocks - 2
                last[a] = last[n_blocks - 1]
                n_blocks -= 1
                low = -np.inf
                high = np.inf
                for k2 in range(first[a], last[a] + 1):
                    low = max(low, shifted[0][leaf, k2])
                    high = min(high, shifted[1][leaf, k2])
                if low > high:  # rounding only (the interval is non-empty in exact arithmetic)
                    low = high = 0.5 * (low + high)
                value[a] = _pooled_point(
                    U, ws, start, stop, taus, shifts, first[a], last[a], rule, g[leaf], (low, high)
                )
        for b in range(n_blocks):
            for k in range(first[b], last[b] + 1):
                c[leaf, k] = value[b] + shifts[k]


class GapBudget:
    """The worst-case gaps G_k between adjacent levels of the model grown so far (see the module
    docstring), and the bound they put on the next tree's leaf values."""

    def __init__(self, f0):
        f0 = np.asarray(f0, dtype=float)
        self.d0 = np.diff(f0)
        self.abs0 = np.abs(f0)
        self.min_steps = []  # per tree, min over leaves of c[:, k] - c[:, k - 1], shape (K-1,)
        self.max_abs = []  # per tree, max over leaves of |c[:, k]|, shape (K,)

    def next_min_steps(self, weights) -> np.ndarray:
        """Lower bounds on the next tree's (shrunk) c[:, k] - c[:, k - 1], given the model
        weights w_0..w_t of the model that will include it (w_t = 1 for the new tree)."""
        w = np.asarray(weights[1 : len(self.min_steps) + 1], dtype=float)
        if len(self.min_steps):
            gaps = self.d0 + w @ np.asarray(self.min_steps)
            scale = self.abs0 + w @ np.asarray(self.max_abs)
        else:
            gaps, scale = self.d0, self.abs0
        t = len(self.min_steps)
        margin = ROUNDING_MARGIN * np.finfo(float).eps * (t + 2) * (scale[1:] + scale[:-1])
        return -(gaps - margin)

    def add(self, c):
        """Record a tree's (shrunk) leaf values, shape (n_leaves, K)."""
        self.min_steps.append(np.min(np.diff(c, axis=1), axis=0))
        self.max_abs.append(np.max(np.abs(c), axis=0))
