"""Several quantiles in one model whose predictions never cross (``tau=[...]``): the compiled
ordered leaf search and the gap budget of :class:`proxboost.losses.MultiQuantile`.

The K pinball losses at levels tau_1 < ... < tau_K share every tree: iteration t grows one
least-squares tree on the direction of level t mod K (round robin:
:meth:`proxboost.losses.MultiQuantile.tree_target`), then gives each leaf K values, one line search
per level, solved *together* under ordering constraints. Crossing is excluded by construction, for
every row (also far outside the training data) and at every stage:

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

from proxboost._leafops import _bounded_tie_point, _select

#: Relative margin kept on every worst-case gap, in units of eps x (iterations + 2) x the
#: magnitude of the predictions: rounding of the K sums cannot turn a zero gap negative.
ROUNDING_MARGIN = 8.0


@njit(error_model="numpy", cache=True, nogil=True)
def _sorted_quantile_interval(points, weights, tau):
    """(x_(j), x_(j+1)) where the cumulative weight of the sorted points meets tau W (to 1e-9
    W: a tie), else (x_(j), x_(j)) at the first cumulative weight above tau W; (inf, inf) for no
    point. The reference: one stable sort, the cumulative weights summed in sorted order."""
    order = np.argsort(points, kind="mergesort")
    total = 0.0
    for i in range(len(points)):
        total += weights[i]
    target = tau * total
    tol = 1e-9 * total
    cum = 0.0
    for j in range(len(points)):
        cum += weights[order[j]]
        if abs(cum - target) <= tol:
            hi = points[order[j + 1]] if j + 1 < len(points) else np.inf
            return points[order[j]], hi
        if cum > target:
            return points[order[j]], points[order[j]]
    return np.inf, np.inf


@njit(error_model="numpy", cache=True, nogil=True)
def _unit_rank(m, tau):
    """(j, tie) of m unit weights at level tau: the first rank j whose cumulative weight j + 1
    equals tau m (to 1e-9 m: ``tie``) or exceeds it; (-1, False) for none. The ranks skipped at
    the start have j + 1 <= tau m - tol - 2, far from both tests."""
    total = float(m)
    target = tau * total
    tol = 1e-9 * total
    for j in range(max(0, int(target - tol) - 2), m):
        cum = float(j + 1)
        tie = abs(cum - target) <= tol
        if tie or cum > target:
            return j, tie
    return -1, False


@njit(error_model="numpy", cache=True, nogil=True)
def _unit_quantile_interval(points, tau):
    """:func:`_sorted_quantile_interval` with every weight 1, without sorting: the cumulative
    weights are then the integers 1..m, exact in any order, so which rank j is reached depends
    on m and tau only, and x_(j), x_(j+1) are order statistics (a partition, O(m)). The same
    floating-point tests on the same numbers as the reference, hence the same interval."""
    m = len(points)
    j, tie = _unit_rank(m, tau)
    if j < 0:
        return np.inf, np.inf
    part = np.partition(points, j)
    lo = part[j]
    if not tie:
        return lo, lo
    if j + 1 >= m:
        return lo, np.inf
    return lo, part[j + 1 :].min()


@njit(error_model="numpy", cache=True, nogil=True)
def _pooled_points(U, start, stop, shifts, first, last):
    """The pooled points U[i, k] - shifts[k] of rows start..stop and levels first..last."""
    points = np.empty((stop - start) * (last - first + 1))
    pos = 0
    for k in range(first, last + 1):
        for i in range(start, stop):
            points[pos] = U[i, k] - shifts[k]
            pos += 1
    return points


@njit(error_model="numpy", cache=True, nogil=True)
def _pooled_unit_interval(U, start, stop, shifts, first, last, tau, near, kept):
    """:func:`_unit_quantile_interval` of the pooled points (:func:`_pooled_points`) without
    partitioning them all: one pass counts the points below ``near`` = (low, high), keeps those
    in it (in ``kept``, a scratch of at least as many values as the pooled points), and the
    largest below and the two smallest above it; the order statistics x_(j), x_(j+1) are read
    from those, the kept points selected in place (few, when ``near`` brackets the quantile, as
    the pooled blocks' own optima do). Order statistics are values, so this is the same interval
    whatever ``near`` is and whichever selection finds them (``np.partition``'s copy before
    gave the same numbers; only a -0.0 beside a +0.0 at the rank could tell two selections
    apart, and a pooled point is -0.0 only where a target is); where it cannot give x_(j) (or a
    point is NaN), the full partition runs."""
    m = (stop - start) * (last - first + 1)
    j, tie = _unit_rank(m, tau)
    if j < 0:
        return np.inf, np.inf
    low, high = near
    below = inside = 0
    max_below = -np.inf
    min_above = second_above = np.inf
    for k in range(first, last + 1):
        for i in range(start, stop):
            x = U[i, k] - shifts[k]
            if x < low:
                below += 1
                max_below = max(max_below, x)
            elif x <= high:
                kept[inside] = x
                inside += 1
            elif x < min_above:
                second_above = min_above
                min_above = x
            elif x < second_above:
                second_above = x
            elif x != x:  # NaN: the reference's ordering of NaN
                return _unit_quantile_interval(
                    _pooled_points(U, start, stop, shifts, first, last), tau
                )
    above = m - below - inside
    if j == below - 1:  # the largest point below
        lo = max_below
        if tie and j + 1 < m:
            return lo, kept[:inside].min() if inside else min_above
    elif below <= j < below + inside:
        lo = _select(kept, 0, inside, j - below)  # then kept[j - below + 1 : inside] >= lo
        if tie and j + 1 < m:
            after = j - below + 1
            return lo, kept[after:inside].min() if after < inside else min_above
    elif j == below + inside and above > 0:  # the smallest point above
        lo = min_above
        if tie and j + 1 < m:
            return lo, second_above
    else:
        return _unit_quantile_interval(_pooled_points(U, start, stop, shifts, first, last), tau)
    return (lo, lo) if not tie else (lo, np.inf)


@njit(error_model="numpy", cache=True, nogil=True)
def _weighted_quantile_point(points, weights, tau, rule, g, bounds):
    """Tie-rule point of argmin_c sum_i weights_i rho_tau(points_i - c) on [lower, upper] =
    ``bounds``: the weighted tau-quantile, or the rule's point of [x_(j), x_(j+1)] when tau W
    equals a cumulative weight (to 1e-9 W), as the single-level line searches decide it (under
    bounds: ``_leafops._bounded_tie_point``; infinite bounds give the unbounded point). Unit
    weights (every fit without ``sample_weight``) take the sort-free path."""
    unit = True
    for i in range(len(weights)):
        if weights[i] != 1.0:
            unit = False
            break
    if unit:
        lo, hi = _unit_quantile_interval(points, tau)
    else:
        lo, hi = _sorted_quantile_interval(points, weights, tau)
    return _bounded_tie_point(lo, hi, rule, g, bounds[0], bounds[1])


@njit(error_model="numpy", cache=True, nogil=True)
def _pooled_point(U, ws, start, stop, taus, shifts, first, last, rule, g, bounds, near, kept):
    """The common c~ of levels first..last of one leaf: the weighted quantile of the pooled
    points U[i, k] - shifts[k] at the mean of the levels, on ``bounds`` (the block's common
    interval of the shifted bounds). ``near``: an interval expected to hold it (with unit
    weights, the points outside it are only counted: :func:`_pooled_unit_interval`, its
    scratch ``kept``)."""
    tau = 0.0
    for k in range(first, last + 1):
        tau += taus[k]
    tau = tau / (last - first + 1)
    unit = True
    for i in range(start, stop):
        if ws[i] != 1.0:
            unit = False
            break
    if unit:
        lo, hi = _pooled_unit_interval(U, start, stop, shifts, first, last, tau, near, kept)
        return _bounded_tie_point(lo, hi, rule, g, bounds[0], bounds[1])
    points = _pooled_points(U, start, stop, shifts, first, last)
    weights = np.empty(points.shape[0])
    pos = 0
    for _ in range(first, last + 1):
        for i in range(start, stop):
            weights[pos] = ws[i]
            pos += 1
    return _weighted_quantile_point(points, weights, tau, rule, g, bounds)


@njit(error_model="numpy", cache=True, nogil=True)
def _ordered_leaves(U, ws, starts, leaves, taus, shifts, rule, g, c, shifted, kept):
    """Pool adjacent violators in each of ``leaves`` (rows starts[leaf]:starts[leaf + 1] of U):
    c[leaf, k] = c~_k + shifts[k] with c~ non-decreasing, each block at its pooled optimum on
    the common interval of its levels' shifted bounds ``shifted`` = (lower, upper), arrays
    (n_leaves, K) (infinite: no bounds; ``c`` then holds the levels' bounded optima). ``kept``:
    a scratch of at least U.size values."""
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
                # the pooled optimum lies between the two blocks' own optima (the sum's
                # slope changes sign there): where its order statistics are looked for
                near = (value[a + 1], value[a])
                value[a] = _pooled_point(
                    U, ws, start, stop, taus, shifts, first[a], last[a], rule, g[leaf],
                    (low, high), near, kept,
                )  # fmt: skip
        for b in range(n_blocks):
            for k in range(first[b], last[b] + 1):
                c[leaf, k] = value[b] + shifts[k]


def gap_bounds(d0, abs0, min_steps, max_abs, weights) -> np.ndarray:
    """Lower bounds on the next tree's (shrunk) c[:, k] - c[:, k - 1] (see :class:`GapBudget`):
    ``min_steps`` and ``max_abs`` hold one row per earlier tree (lists of rows, or the first t
    rows of preallocated C-contiguous arrays: ``np.asarray`` gives the same (t, K - 1) and
    (t, K) operands, hence the same BLAS products), ``weights`` the model weights w_0..w_t.
    The Python loop's; the compiled one (:mod:`proxboost._compiled_multi`) performs the same
    operations, its two products by the BLAS function NumPy calls here (:mod:`proxboost._blas`):
    a BLAS product's order of additions is BLAS's, which a written loop cannot reproduce."""
    t = len(min_steps)
    w = np.asarray(weights[1 : t + 1], dtype=float)
    if t:
        gaps = d0 + w @ np.asarray(min_steps)
        scale = abs0 + w @ np.asarray(max_abs)
    else:
        gaps, scale = d0, abs0
    margin = ROUNDING_MARGIN * np.finfo(float).eps * (t + 2) * (scale[1:] + scale[:-1])
    return -(gaps - margin)


def tree_gaps(c):
    """(min over leaves of c[:, k] - c[:, k - 1], max over leaves of |c[:, k]|) of a tree's
    (shrunk) leaf values ``c``, shape (n_leaves, K): its rows of :func:`gap_bounds`."""
    return np.min(np.diff(c, axis=1), axis=0), np.max(np.abs(c), axis=0)


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
        return gap_bounds(self.d0, self.abs0, self.min_steps, self.max_abs, weights)

    def add(self, c):
        """Record a tree's (shrunk) leaf values, shape (n_leaves, K)."""
        min_step, max_abs = tree_gaps(c)
        self.min_steps.append(min_step)
        self.max_abs.append(max_abs)
