"""Compiled per-leaf order statistics: the piecewise-linear line searches in O(n).

The leaf line searches of ``lad``, ``pinball`` and ``hinge`` (called by :mod:`proxboost.losses`):

* rows are grouped by leaf with one counting sort (O(n + n_leaves), no comparison sort), or,
  for two leaves, one branch-free pass filling the scratch from both ends (``_group_two``);
  an order statistic does not depend on the order of the leaf's values (but for the sign of a
  zero: a selection returns whichever of -0.0 and 0.0 it meets, as the three-way partition
  below already does; the targets would need a -0.0 for it to show);
* in a leaf of more than 1024 values, the needed order statistic is found by sample select:
  two pivots bracketing its rank are selected in a strided sample of m^(3/4) values, one
  branch-free pass counts the values below, copies the few between the pivots and keeps the
  smallest above; the answer is selected among the copied values (O(m), about one pass);
* smaller leaves (and the rare sample misses) use an in-place quickselect with a three-way
  (Dutch flag) partition and a median-of-three pivot, so repeated values (pure leaves,
  constant predictions in early iterations) cost one pass; after ``2 log2(m) + 16`` rounds it
  falls back to heapsort: O(m log m) at worst (numba's ``np.sort`` takes seconds to compile);
* the (k+1)-th order statistic, when the minimisers form an interval, is the minimum of the
  values right of the selected k-th (all of them are >= the k-th after the selection);
* with row weights, a weighted quickselect finds the value where the cumulative weight
  reaches its target (expected O(m)); rows of weight 0 are dropped first, so they are never
  breakpoints.

The kernels allocate O(n) scratch per call and hold no state (thread-safe, ``nogil``);
:func:`leaf_intervals_in` and what it calls are kernels (no reference counting, nothing
allocated): their scratch is the caller's (the compiled boosting loop's, made once per fit).

Tie rules (``docs/estimators.md``), for a leaf whose minimisers form the interval [lo, hi]:

``"midpoint"`` (default)
    0 if 0 minimises, else the midpoint, or its finite end when the interval is unbounded;
``"authors"``
    the rule of the authors' public code in exact arithmetic: with g the tree's fitted leaf
    value, the optimal breakpoint with the smallest multiplier c / g: lo when g > 0, hi when
    g < 0, the finite end of an unbounded interval; 0 when g = 0.

Bounded variants (``bounded_quantile_line_search``, ``bounded_hinge_line_search``; monotone
constraints, :mod:`proxboost._monotone`): each leaf has bounds [lower, upper]; its value is the
tie rule applied to its interval of minimisers intersected with the bounds, or the bound nearest
the interval when they do not meet (``_bounded_tie_point``). The intervals are those of the
unbounded kernels (``_leaf_intervals``, ``_weighted_leaf_intervals``), so infinite bounds give
the unbounded values bit for bit.

An empty leaf gets 0 (bounded: the ``midpoint`` rule's point of its bounds). For the quantile,
``tau * m`` is taken as an integer k when ``|tau * m - k| <= 1e-9 * m``; with weights,
``tau * W`` (W the leaf's weight) equals a cumulative weight when within ``1e-9 * W``.
"""

from collections import namedtuple

import numpy as np
from numba import njit

from proxboost._vocabulary import TIE_RULES
from proxboost.engines._nodes import kernel


@kernel
def _heapsort(a, lo, hi):
    """Sort a[lo:hi] in place (heapsort: O(m log m) worst case, and quick to compile)."""
    m = hi - lo
    for first in range(m // 2 - 1, -1, -1):
        _sift(a, lo, first, m)
    for end in range(m - 1, 0, -1):
        v = a[lo]
        a[lo] = a[lo + end]
        a[lo + end] = v
        _sift(a, lo, 0, end)


@kernel
def _sift(a, lo, root, m):
    v = a[lo + root]
    while True:
        child = 2 * root + 1
        if child >= m:
            break
        if child + 1 < m and a[lo + child + 1] > a[lo + child]:
            child += 1
        if a[lo + child] <= v:
            break
        a[lo + root] = a[lo + child]
        root = child
    a[lo + root] = v


@njit(error_model="numpy", cache=True, nogil=True, inline="always")
def _median_of_three(a, lo, hi):
    """Median of the first, middle and last values of a[lo:hi]: the quickselect pivot."""
    x, y, z = a[lo], a[lo + (hi - lo) // 2], a[hi - 1]
    if x > y:
        x, y = y, x
    if y > z:
        y = z
        if x > y:
            y = x
    return y


@kernel
def _select(a, lo, hi, k):
    """Rearrange a[lo:hi] so that a[k] is its (k - lo + 1)-th smallest value; return a[k].

    Quickselect, three-way partition (two branch-free passes: ``_front_below``, then
    ``_front_not_above`` on the rest, skipped when k is below the pivot's values: the values
    from the pivot up are then all dropped, and telling them apart is of no use), median-of-three
    pivot; heapsort after 2 log2(m) + 16 rounds. Afterwards a[lo:k] <= a[k] <= a[k+1:hi]. The
    value returned is the same whatever the arrangement; the arrangement itself is not (no caller
    reads it beyond that order).
    """
    m = hi - lo
    budget = 16
    while m > 1:
        m >>= 1
        budget += 2
    while hi - lo > 1:
        if budget == 0:
            _heapsort(a, lo, hi)
            return a[k]
        budget -= 1
        pivot = _median_of_three(a, lo, hi)
        lt = _front_below(a, lo, hi, pivot)  # [lo, lt) < pivot
        if k < lt:
            hi = lt
            continue
        gt = _front_not_above(a, lt, hi, pivot)  # [lt, gt) == pivot, [gt, hi) > pivot
        if k >= gt:
            lo = gt
        else:
            return pivot
    return a[k]


# The partition's two passes swap every value with the front's cursor and advance the cursor by
# the comparison (Lomuto's scheme without a branch): a branch per comparison was mispredicted
# half the time (a leaf's values are in no useful order), quickselect 2-3x as slow. Indices are
# unsigned (also in the counting sort): numba's wrap-around code made it about 1.5x as slow.


@njit(error_model="numpy", cache=True, nogil=True, inline="always")
def _front_below(a, lo, hi, pivot):
    """Move the values of a[lo:hi] below ``pivot`` to its front; return where they end."""
    j = np.uint64(lo)
    for i in range(np.uint64(lo), np.uint64(hi)):
        v = a[i]
        a[i] = a[j]
        a[j] = v
        j += np.uint64(v < pivot)
    return np.int64(j)


@njit(error_model="numpy", cache=True, nogil=True, inline="always")
def _front_not_above(a, lo, hi, pivot):
    """Move the values of a[lo:hi] not above ``pivot`` (equal to it, as NaN counts in the
    three-way partition) to its front; return where they end."""
    j = np.uint64(lo)
    for i in range(np.uint64(lo), np.uint64(hi)):
        v = a[i]
        a[i] = a[j]
        a[j] = v
        j += np.uint64(not v > pivot)
    return np.int64(j)


@kernel
def _order_pair(a, lo, hi, r, scratch):
    """(r-th, (r+1)-th) smallest values of a[lo:hi] (0-based r; +inf when r + 1 == m).

    Up to 1024 values: quickselect in place, then the minimum right of the r-th. Larger
    ranges: sample select. Two pivots bracketing rank r (+-1.5 sqrt(s) ranks around it) are
    selected in an evenly strided sample of s = m^(3/4) values (in ``scratch``); one pass counts
    the values below the lower pivot, copies those between the pivots to ``scratch`` and keeps
    the smallest value above the upper pivot; the answer is then selected in the small copied
    part. When the bracket misses rank r (unlikely; adversarial orders only cost time),
    quickselect on the whole range. A kernel: it allocates nothing (the loop's line searches).
    """
    m = hi - lo
    if m > 1024:
        s = np.int64(np.exp(np.log(m) * 0.75))
        stride = m // s
        sample = scratch[:s]  # read before the pass below overwrites it
        for i in range(s):
            sample[i] = a[lo + i * stride]
        pos = (r * s) // m
        delta = np.int64(1.5 * np.sqrt(s)) + 1  # ~3 standard deviations of the sample rank
        i1 = max(pos - delta, 0)
        i2 = min(pos + delta, s - 1)
        p1 = _select(sample, 0, s, i1)
        p2 = _select(sample, i1, s, i2)  # sample[i1:] >= p1 after the first selection
        n_lt = 0
        n_mid = 0
        min_gt = np.inf
        for j in range(lo, hi):
            v = a[j]
            n_lt += 1 if v < p1 else 0
            scratch[n_mid] = v
            n_mid += 1 if (v >= p1 and v <= p2) else 0
            if v > p2 and v < min_gt:
                min_gt = v
        rr = r - n_lt
        if 0 <= rr < n_mid:
            v = _select(scratch, 0, n_mid, rr)
            w = min_gt
            for j in range(rr + 1, n_mid):
                if scratch[j] < w:
                    w = scratch[j]
            return v, w
    k = lo + r
    v = _select(a, lo, hi, k)
    w = np.inf
    for j in range(k + 1, hi):
        if a[j] < w:
            w = a[j]
    return v, w


MIDPOINT, AUTHORS = 0, 1
#: the compiled code of each tie rule of these kernels (the names are ``_vocabulary.TIE_RULES``;
#: ``authors_float`` is computed by :mod:`proxboost._authors_float`, called by the losses)
RULE_CODES = {"midpoint": MIDPOINT, "authors": AUTHORS}
assert set(RULE_CODES) < set(TIE_RULES)


@kernel
def _tie_point(lo, hi, rule, g):
    """The point a leaf takes in its interval of minimisers [lo, hi] (see the module docstring)."""
    if rule == AUTHORS:  # smallest multiplier gamma = c / g among the optimal breakpoints
        if g > 0.0:
            return lo if np.isfinite(lo) else hi
        if g < 0.0:
            return hi if np.isfinite(hi) else lo
        return 0.0
    if lo <= 0.0 and 0.0 <= hi:
        return 0.0
    if np.isfinite(lo) and np.isfinite(hi):
        return 0.5 * (lo + hi)
    return lo if np.isfinite(lo) else hi


@njit(error_model="numpy", cache=True, nogil=True, inline="always")
def _leaf_ranks(m, tau, n_pos, hinge):
    """(lo_rank, hi_rank), 1-based, of the interval of minimisers of a leaf of m > 0 values (see
    :func:`_leaf_intervals`)."""
    if hinge:
        return n_pos, n_pos + 1
    tm = tau * m
    k = np.int64(np.rint(tm))
    if abs(tm - k) <= 1e-9 * max(m, 1):
        return k, k + 1
    lo_rank = np.int64(np.ceil(tm))
    return lo_rank, lo_rank


@kernel
def _leaf_interval(grouped, start, m, lo_rank, hi_rank, scratch):
    """[lo, hi] of the leaf whose m values are grouped[start:start + m] (rearranged), at ranks
    ``_leaf_ranks``; ``scratch``: at least m values."""
    if lo_rank > m:
        return np.inf, np.inf
    if lo_rank < 1:
        hi = -np.inf
        if hi_rank >= 1:  # hi_rank == 1: the minimum
            hi = np.inf
            for j in range(start, start + m):
                if grouped[j] < hi:
                    hi = grouped[j]
        return -np.inf, hi
    lo, hi = _order_pair(grouped, start, start + m, lo_rank - 1, scratch)
    return (lo, lo) if hi_rank == lo_rank else (lo, hi)


#: The scratch of :func:`leaf_intervals_in`, for up to n rows and n_leaves leaves
#: (:func:`leaf_scratch`): per leaf its row count, its positive signs (hinge), where its rows
#: start, the grouping's cursor, and its interval [lo, hi]; per row the values grouped by leaf
#: and the selections' scratch. A fit's compiled loop allocates one and reuses it at every tree.
LeafScratch = namedtuple(
    "LeafScratch", ["counts", "n_pos", "starts", "fill", "los", "his", "grouped", "scratch"]
)


@njit(error_model="numpy", cache=True, nogil=True)
def leaf_scratch(n, n_leaves):
    """A :data:`LeafScratch` for up to ``n`` rows and ``n_leaves`` leaves."""
    return LeafScratch(
        np.zeros(n_leaves, np.int64), np.zeros(n_leaves, np.int64), np.empty(n_leaves, np.int64),
        np.empty(n_leaves, np.int64), np.empty(n_leaves), np.empty(n_leaves), np.empty(n),
        np.empty(n),
    )  # fmt: skip


@kernel
def leaf_intervals_in(values, leaf_ids, n_leaves, tau, signs, work, counted):
    """Interval of minimisers [lo, hi] of every leaf into ``work.los[:n_leaves]`` and
    ``work.his[:n_leaves]``, and its number of values into ``work.counts[:n_leaves]`` (0: empty
    leaf, whose interval is left at (-inf, inf)): tau-quantile (``signs`` empty) or hinge (P =
    #signs > 0). ``work``: a :data:`LeafScratch` of at least len(values) rows and n_leaves
    leaves.

    Ranks (1-based) of the interval of minimisers of a leaf of m values:
    quantile: [k, k + 1] when tau * m = k is an integer (to 1e-9 m), else ceil(tau * m) twice;
    hinge: [P, P + 1]. Rank < 1 is -inf, rank > m is +inf.

    ``counted``: ``work.counts[:n_leaves]`` holds the leaves' sizes already (not hinge: the
    compiled loop's leaf weights), and the counting sort skips its counting pass.
    """
    hinge = signs.shape[0] > 0
    counts, n_pos, starts = work.counts, work.n_pos, work.starts
    grouped, los, his = work.grouped, work.los, work.his
    if n_leaves == 2:
        _group_two(values, leaf_ids, signs, work)
    else:
        _group_counting(values, leaf_ids, n_leaves, signs, work, counted)
    for leaf in range(n_leaves):
        los[leaf], his[leaf] = _grouped_interval(
            grouped, starts[leaf], counts[leaf], (tau, n_pos[leaf], hinge), work.scratch
        )


@kernel
def _grouped_interval(grouped, start, m, ranks, scratch):
    """[lo, hi] of the leaf of m values at ``start`` in ``grouped`` (``ranks``: tau, its positive
    signs, hinge; ``_leaf_ranks``), (-inf, inf) when empty; ``scratch``: at least m values."""
    if m == 0:
        return -np.inf, np.inf
    lo_rank, hi_rank = _leaf_ranks(m, ranks[0], ranks[1], ranks[2])
    return _leaf_interval(grouped, start, m, lo_rank, hi_rank, scratch)


@kernel
def _group_two(values, leaf_ids, signs, work):
    """:func:`leaf_intervals_in`'s grouping of two leaves (a stump's) in one branch-free pass:
    leaf 0's values from the front of ``grouped``, leaf 1's from the back (reversed: order
    statistics do not depend on the order), the counts (and positive signs) in registers. The
    counting sort's passes carry a dependency through memory (``counts[leaf] += 1``,
    ``fill[leaf]``) when two rows in a row fall in the same leaf, the common case with two.

    Each row is written to both ends; a write to the unused end lands where the next row of
    that leaf goes (before row i, c0 + c1 = i <= n - 1, so the front cursor c0 never passes the
    back one n - 1 - c1), and when they meet, at the last row, both writes are the same value.
    """
    n = values.shape[0]
    hinge = signs.shape[0] > 0
    grouped = work.grouped
    c0 = 0
    c1 = 0
    p0 = 0
    p1 = 0
    for i in range(n):
        one = np.int64(leaf_ids[i] != 0)
        v = values[i]
        grouped[c0] = v
        grouped[n - 1 - c1] = v
        c0 += 1 - one
        c1 += one
        if hinge:
            pos = np.int64(signs[i] > 0)
            p0 += pos * (1 - one)
            p1 += pos * one
    work.counts[0] = c0
    work.counts[1] = c1
    work.n_pos[0] = p0
    work.n_pos[1] = p1
    work.starts[0] = 0
    work.starts[1] = c0


@kernel
def _group_counting(values, leaf_ids, n_leaves, signs, work, counted):
    """:func:`leaf_intervals_in`'s grouping: a counting sort by leaf, each leaf's values in row
    order from ``starts[leaf]``, with the counts (and positive signs) unless ``counted``."""
    n = values.shape[0]
    counts, n_pos, starts, fill = work.counts, work.n_pos, work.starts, work.fill
    if not counted:
        counts[:n_leaves] = 0
        n_pos[:n_leaves] = 0
        _count_rows(leaf_ids, signs, (0, n), counts, n_pos)
    acc = 0
    for k in range(n_leaves):
        starts[k] = acc
        fill[k] = acc
        acc += counts[k]
    _place_rows(values, leaf_ids, (0, n), fill, work.grouped)


@kernel
def _count_rows(leaf_ids, signs, rows, count, positive):
    """Add the rows ``rows`` = (start, end) to ``count[leaf]`` (and their positive hinge
    ``signs`` to ``positive[leaf]``): the counting sort's first pass (``_leaf_threads``' too)."""
    if signs.shape[0] > 0:
        for i in range(np.uint64(rows[0]), np.uint64(rows[1])):
            leaf = np.uint64(leaf_ids[i])
            count[leaf] += 1
            positive[leaf] += 1 if signs[i] > 0 else 0  # branch-free: signs are random
    else:
        for i in range(np.uint64(rows[0]), np.uint64(rows[1])):
            count[np.uint64(leaf_ids[i])] += 1


@kernel
def _place_rows(values, leaf_ids, rows, fill, grouped):
    """Place the values of the rows ``rows`` = (start, end) in ``grouped`` from each leaf's
    cursor ``fill[leaf]``: the counting sort's second pass, also run on chunks of rows by
    ``_leaf_threads``."""
    for i in range(np.uint64(rows[0]), np.uint64(rows[1])):
        leaf = np.uint64(leaf_ids[i])
        k = fill[leaf]
        fill[leaf] = k + 1  # before the store below: no reload of fill through aliasing
        grouped[np.uint64(k)] = values[i]


@njit(error_model="numpy", cache=True, nogil=True)
def _leaf_intervals(values, leaf_ids, n_leaves, tau, signs):
    """(lo, hi, count) of every leaf: :func:`leaf_intervals_in` with a scratch of its own."""
    work = leaf_scratch(values.shape[0], n_leaves)
    leaf_intervals_in(values, leaf_ids, n_leaves, tau, signs, work, False)
    return work.los, work.his, work.counts


@njit(error_model="numpy", cache=True, nogil=True)
def _leaf_points(values, leaf_ids, n_leaves, tau, signs, rule, g):
    """Tie-rule point of every leaf (``_leaf_intervals``; an empty leaf gets 0).
    ``g``: the leaves' fitted values (read by the ``authors`` rule only)."""
    los, his, counts = _leaf_intervals(values, leaf_ids, n_leaves, tau, signs)
    return _points_of(los, his, counts, rule, g)


@njit(error_model="numpy", cache=True, nogil=True)
def _weighted_select(a, b, lo, hi, target, tol):
    """Smallest value v of a[lo:hi] (weights b[lo:hi]) whose cumulative weight S(<= v) is at
    least ``target - tol``; returns (v, S(<= v)). Rearranges a and b together.

    Weighted quickselect: three-way partition (repeated values cost one pass), median-of-three
    pivot; after 2 log2(m) + 16 rounds the pivot is drawn pseudo-randomly (expected O(m) on any
    input order, no sort to compile).
    """
    m = hi - lo
    budget = 16
    while m > 1:
        m >>= 1
        budget += 2
    state = np.uint64(88172645463325252)
    acc = 0.0  # weight of the values left of [lo, hi)
    while hi - lo > 1:
        if budget > 0:
            budget -= 1
            pivot = _median_of_three(a, lo, hi)
        else:  # xorshift64: a pivot the input order cannot anticipate
            state ^= state << np.uint64(13)
            state ^= state >> np.uint64(7)
            state ^= state << np.uint64(17)
            pivot = a[lo + np.int64(state % np.uint64(hi - lo))]
        lt = lo
        i = lo
        gt = hi - 1
        w_lt = 0.0
        w_eq = 0.0
        while i <= gt:
            v = a[i]
            wv = b[i]
            if v < pivot:
                a[i] = a[lt]
                b[i] = b[lt]
                a[lt] = v
                b[lt] = wv
                w_lt += wv
                lt += 1
                i += 1
            elif v > pivot:
                a[i] = a[gt]
                b[i] = b[gt]
                a[gt] = v
                b[gt] = wv
                gt -= 1
            else:
                w_eq += wv
                i += 1
        if lt > lo and acc + w_lt >= target - tol:
            hi = lt
        elif acc + w_lt + w_eq >= target - tol or gt + 1 >= hi:
            return pivot, acc + w_lt + w_eq  # (or the largest value: rounding of the sums)
        else:
            acc += w_lt + w_eq
            lo = gt + 1
    return a[lo], acc + b[lo]


@njit(error_model="numpy", cache=True, nogil=True)
def _weighted_pair(a, b, lo, hi, target, tol, total, scratch, scratch_w):
    """Interval of minimisers [v, v'] of a weighted leaf a[lo:hi] (weights b[lo:hi], sum
    ``total``): v the smallest value with S(v) >= target - tol; v' the next value above v when
    S(v) = target (to tol), else v.

    Up to 1024 values: weighted quickselect in place. Larger ranges: weighted sample select, as
    ``_order_pair``: two pivots are chosen by weighted selection in a strided sample of m^(3/4)
    values (the sample's target +- 2 / sqrt(sample size) of its weight), one pass adds up the
    weight below the lower pivot, copies the values between the pivots and keeps the smallest
    value above the upper one, and the answer is selected among the copies. When the bracket
    misses the target (unlikely), quickselect on the whole range.
    """
    m = hi - lo
    if m > 1024:
        s = np.int64(np.exp(np.log(m) * 0.75))
        stride = m // s
        sample = np.empty(s)
        sample_w = np.empty(s)
        ws = 0.0
        for i in range(s):
            sample[i] = a[lo + i * stride]
            sample_w[i] = b[lo + i * stride]
            ws += sample_w[i]
        ts = target * ws / total
        margin = 2.0 * ws / np.sqrt(s)  # ~3 standard deviations for moderately spread weights
        p1, _ = _weighted_select(sample, sample_w, 0, s, ts - margin, 0.0)
        p2, _ = _weighted_select(sample, sample_w, 0, s, ts + margin, 0.0)
        w_lt = 0.0
        n_mid = 0
        min_gt = np.inf
        for j in range(lo, hi):  # branch-free but for the rare new minimum above p2
            v = a[j]
            wj = b[j]
            w_lt += wj if v < p1 else 0.0
            scratch[n_mid] = v
            scratch_w[n_mid] = wj
            n_mid += 1 if (v >= p1 and v <= p2) else 0
            if v > p2 and v < min_gt:
                min_gt = v
        w_mid = 0.0
        for j in range(n_mid):
            w_mid += scratch_w[j]
        rest = target - w_lt
        if n_mid > 0 and rest > tol and rest < w_mid - tol:
            v, cum = _weighted_select(scratch, scratch_w, 0, n_mid, rest, tol)
            if abs(cum - rest) > tol:
                return v, v
            nxt = min_gt
            for j in range(n_mid):
                if scratch[j] > v and scratch[j] < nxt:
                    nxt = scratch[j]
            return v, nxt
    v, cum = _weighted_select(a, b, lo, hi, target, tol)
    if abs(cum - target) > tol:
        return v, v
    nxt = np.inf  # S(v) = target: every point up to the next value minimises
    for j in range(lo, hi):
        if a[j] > v and a[j] < nxt:
            nxt = a[j]
    return v, nxt


@njit(error_model="numpy", cache=True, nogil=True)
def _weighted_leaf_intervals(values, weights, leaf_ids, n_leaves, tau, signs):
    """Weighted ``_leaf_intervals``: rows of weight 0 are dropped (they are no breakpoints; a
    leaf of such rows only counts as empty).

    With W the leaf's weight and S(c) the weight of its values <= c, the slope of the objective
    between breakpoints is S(c) - t, t = tau W (quantile) or the weight of the positives (hinge):
    the minimisers are [v, next value above v] when S(v) = t (to 1e-9 W), else v alone, v the
    smallest value with S(v) >= t; t = 0 gives (-inf, smallest value].
    """
    n = values.shape[0]
    hinge = signs.shape[0] > 0
    counts = np.zeros(n_leaves, np.int64)
    total = np.zeros(n_leaves)
    target = np.zeros(n_leaves)
    # branch-free passes (weights of 0 are frequent and unpredictable): a row of weight 0 adds
    # 0 to the sums and is written to a dump slot past the grouped rows
    for i in range(n):
        wi = weights[i]
        leaf = leaf_ids[i]
        counts[leaf] += 1 if wi > 0.0 else 0
        total[leaf] += wi
        if hinge:
            target[leaf] += wi if signs[i] > 0 else 0.0
    starts = np.empty(n_leaves, np.int64)
    acc = 0
    for k in range(n_leaves):
        starts[k] = acc
        acc += counts[k]
    fill = starts.copy()
    grouped = np.empty(acc + 1)
    grouped_w = np.empty(acc + 1)
    for i in range(n):
        wi = weights[i]
        leaf = leaf_ids[i]
        k = fill[leaf]
        keep = wi > 0.0
        dst = k if keep else acc
        fill[leaf] = k + 1 if keep else k
        grouped[dst] = values[i]
        grouped_w[dst] = wi

    big = 0
    for k in range(n_leaves):
        big = max(big, counts[k])
    scratch = np.empty(big)
    scratch_w = np.empty(big)
    los = np.full(n_leaves, -np.inf)
    his = np.full(n_leaves, np.inf)
    for leaf in range(n_leaves):
        m = counts[leaf]
        if m == 0:
            continue  # empty leaf (or weight 0 only)
        start = starts[leaf]
        t = target[leaf] if hinge else tau * total[leaf]
        tol = 1e-9 * total[leaf]
        if t <= tol:
            lo = -np.inf
            hi = np.inf
            for j in range(start, start + m):
                if grouped[j] < hi:
                    hi = grouped[j]
        else:
            lo, hi = _weighted_pair(
                grouped, grouped_w, start, start + m, t, tol, total[leaf], scratch, scratch_w
            )
        los[leaf] = lo
        his[leaf] = hi
    return los, his, counts


@njit(error_model="numpy", cache=True, nogil=True)
def _weighted_leaf_points(values, weights, leaf_ids, n_leaves, tau, signs, rule, g):
    """Weighted ``_leaf_points`` (``_weighted_leaf_intervals``; an empty leaf gets 0)."""
    los, his, counts = _weighted_leaf_intervals(values, weights, leaf_ids, n_leaves, tau, signs)
    return _points_of(los, his, counts, rule, g)


@kernel
def _leaf_point(lo, hi, count, rule, g):
    """The tie-rule point of a leaf of ``count`` values whose minimisers are [lo, hi]; 0 for an
    empty leaf. ``g``: its fitted value (``_tie_point`` reads it under the ``authors`` rule
    only)."""
    if count == 0:
        return 0.0
    return _tie_point(lo, hi, rule, g)


@njit(error_model="numpy", cache=True, nogil=True)
def _points_of(los, his, counts, rule, g):
    """The tie-rule point of each leaf's interval of minimisers (:func:`_leaf_point`); ``g`` may
    be empty unless the rule is ``authors``."""
    n_leaves = los.shape[0]
    out = np.empty(n_leaves)
    for leaf in range(n_leaves):
        out[leaf] = _leaf_point(
            los[leaf], his[leaf], counts[leaf], rule, g[leaf] if rule == AUTHORS else 0.0
        )
    return out


@njit(error_model="numpy", cache=True, nogil=True)
def _bounded_tie_point(lo, hi, rule, g, lower, upper):
    """The point a leaf takes under the bounds [lower, upper] (``lower <= upper``): the tie
    rule on its minimisers [lo, hi] intersected with the bounds, or, when they do not meet, the
    bound nearest the minimisers (the objective is convex: it decreases towards them)."""
    if hi < lower:
        return lower
    if lo > upper:
        return upper
    # the authors' rule gives 0 when g = 0, wherever the minimisers are: clip it too
    point = _tie_point(max(lo, lower), min(hi, upper), rule, g)
    return min(max(point, lower), upper)


@njit(error_model="numpy", cache=True, nogil=True)
def _bounded_points_of(los, his, counts, rule, g, lower, upper):
    """``_points_of`` under per-leaf bounds. An empty leaf (its objective is 0 everywhere) takes
    the ``midpoint`` rule's point of its bounds: 0 when they contain it."""
    n_leaves = los.shape[0]
    out = np.zeros(n_leaves)
    for leaf in range(n_leaves):
        if counts[leaf] > 0:
            gl = g[leaf] if rule == AUTHORS else 0.0
            out[leaf] = _bounded_tie_point(los[leaf], his[leaf], rule, gl, lower[leaf], upper[leaf])
        else:
            out[leaf] = _bounded_tie_point(-np.inf, np.inf, MIDPOINT, 0.0, lower[leaf], upper[leaf])
    return out


@njit(error_model="numpy", cache=True, nogil=True)
def _bounded_leaf_points(values, weights, leaf_ids, n_leaves, tau, signs, rule, g, bounds):
    """``_leaf_points`` (``weights`` empty) or ``_weighted_leaf_points`` under per-leaf bounds
    ``(lower, upper)``: ``_bounded_tie_point`` of each leaf."""
    if weights.shape[0] == 0:
        los, his, counts = _leaf_intervals(values, leaf_ids, n_leaves, tau, signs)
    else:
        los, his, counts = _weighted_leaf_intervals(values, weights, leaf_ids, n_leaves, tau, signs)
    return _bounded_points_of(los, his, counts, rule, g, bounds[0], bounds[1])


_EMPTY = np.empty(0)


def _leaf_values_arg(tie_rule, leaf_values, n_leaves):
    if tie_rule not in RULE_CODES:
        raise ValueError(
            f"tie_rule={tie_rule!r} is not a known tie rule; allowed values: {list(TIE_RULES)}"
        )
    if RULE_CODES[tie_rule] == MIDPOINT:
        return MIDPOINT, _EMPTY
    if leaf_values is None:
        raise ValueError('tie_rule="authors" needs leaf_values (the tree\'s fitted leaf values)')
    g = np.ascontiguousarray(leaf_values, dtype=np.float64)
    if g.shape != (n_leaves,):
        raise ValueError(f"leaf_values has shape {g.shape}; expected ({n_leaves},)")
    return AUTHORS, g


def _points(values, signs, leaf_ids, n_leaves, tau, w, tie_rule, leaf_values):
    n_leaves = int(n_leaves)
    rule, g = _leaf_values_arg(tie_rule, leaf_values, n_leaves)
    leaf_ids = np.ascontiguousarray(leaf_ids, dtype=np.intp)
    if len(values) == 0:
        return np.zeros(n_leaves)
    if w is None:
        return _leaf_points(values, leaf_ids, n_leaves, float(tau), signs, rule, g)
    w = np.ascontiguousarray(w, dtype=np.float64)
    return _weighted_leaf_points(values, w, leaf_ids, n_leaves, float(tau), signs, rule, g)


def quantile_line_search(u, leaf_ids, n_leaves, tau, w=None, tie_rule="midpoint", leaf_values=None):
    """Per-leaf minimiser of sum_i w_i rho_tau(u_i - c) (tau-quantile with the tie rule).

    ``w``: row weights (None: all 1); ``leaf_values``: the tree's fitted leaf values, read by
    ``tie_rule="authors"``.
    """
    u = np.ascontiguousarray(u, dtype=np.float64)
    return _points(u, _EMPTY, leaf_ids, n_leaves, tau, w, tie_rule, leaf_values)


def hinge_line_search(y, z, leaf_ids, n_leaves, w=None, tie_rule="midpoint", leaf_values=None):
    """Per-leaf minimiser of sum_i w_i max(0, 1 - y_i (z_i + c)) (tie rule).

    Each sample is a hinge in c with breakpoint y_i - z_i; with P positives in a leaf the
    minimisers are [b_(P), b_(P+1)] (weighted: see ``_weighted_leaf_points``).
    """
    y = np.ascontiguousarray(y, dtype=np.float64)
    breakpoints = np.ascontiguousarray(y - np.asarray(z, dtype=np.float64))
    return _points(breakpoints, y, leaf_ids, n_leaves, 0.5, w, tie_rule, leaf_values)


def check_bounds(lower, upper, n_leaves):
    """Per-leaf bounds as two contiguous float64 arrays of shape (n_leaves,), lower <= upper."""
    lower = np.ascontiguousarray(lower, dtype=np.float64)
    upper = np.ascontiguousarray(upper, dtype=np.float64)
    if lower.shape != (n_leaves,) or upper.shape != (n_leaves,):
        raise ValueError(
            f"bounds have shapes {lower.shape} and {upper.shape}; expected ({n_leaves},) each"
        )
    if np.any(np.isnan(lower)) or np.any(np.isnan(upper)) or np.any(lower > upper):
        raise ValueError("bounds must be numbers with lower <= upper in every leaf")
    return lower, upper


def _bounded_points(values, signs, leaf_ids, n_leaves, tau, w, tie_rule, leaf_values, bounds):
    n_leaves = int(n_leaves)
    rule, g = _leaf_values_arg(tie_rule, leaf_values, n_leaves)
    bounds = check_bounds(*bounds, n_leaves)
    leaf_ids = np.ascontiguousarray(leaf_ids, dtype=np.intp)
    w = _EMPTY if w is None else np.ascontiguousarray(w, dtype=np.float64)
    return _bounded_leaf_points(values, w, leaf_ids, n_leaves, float(tau), signs, rule, g, bounds)


def bounded_quantile_line_search(
    u, leaf_ids, n_leaves, tau, bounds, w=None, tie_rule="midpoint", leaf_values=None
):
    """``quantile_line_search`` under per-leaf bounds ``(lower, upper)``: the minimiser of each
    leaf's objective on [lower, upper] — the tie rule on its minimisers inside the bounds, or the
    bound nearest them when there are none (``_bounded_tie_point``). Infinite bounds give
    ``quantile_line_search``'s values."""
    u = np.ascontiguousarray(u, dtype=np.float64)
    return _bounded_points(u, _EMPTY, leaf_ids, n_leaves, tau, w, tie_rule, leaf_values, bounds)


def bounded_hinge_line_search(
    y, z, leaf_ids, n_leaves, bounds, w=None, tie_rule="midpoint", leaf_values=None
):
    """``hinge_line_search`` under per-leaf bounds ``(lower, upper)`` (as
    ``bounded_quantile_line_search``)."""
    y = np.ascontiguousarray(y, dtype=np.float64)
    breakpoints = np.ascontiguousarray(y - np.asarray(z, dtype=np.float64))
    return _bounded_points(
        breakpoints, y, leaf_ids, n_leaves, 0.5, w, tie_rule, leaf_values, bounds
    )


# ---------------------------------------------------------------------------------------------
# Bounded minimisers of the smooth margin losses (logistic, exponential) under leaf bounds
# ---------------------------------------------------------------------------------------------
LOGISTIC, EXPONENTIAL = 0, 1
_EXP_CLIP = 700.0  # losses.EXP_CLIP (the overflow policy: every exponent clipped)
_LN2 = np.log(2.0)


@njit(error_model="numpy", cache=True, nogil=True, inline="always")
def _margin_derivatives(kind, beta, m):
    """(phi'(m), phi''(m)) of the logistic loss log2(1 + e^-m) or the exponential loss
    e^(-beta m), exponents clipped at +-700 as the losses' ``_dphi`` and ``_d2phi``."""
    if kind == LOGISTIC:
        m = min(max(m, -_EXP_CLIP), _EXP_CLIP)
        e = np.exp(-abs(m))
        p_neg = 1.0 / (1.0 + e) if m < 0.0 else e / (1.0 + e)  # expit(-m)
        return -p_neg / _LN2, p_neg * (1.0 - p_neg) / _LN2
    e = np.exp(min(max(-beta * m, -_EXP_CLIP), _EXP_CLIP))
    return -beta * e, beta * beta * e


@njit(error_model="numpy", cache=True, nogil=True)
def _leaf_slope(kind, beta, margins, y, w, start, stop, c):
    """(F'(c), F''(c)) of a leaf's objective F(c) = sum_i w_i phi(margin_i + y_i c) over its
    rows start:stop (grouped; w normalised to sum 1 in the leaf, so that sums of saturated
    e^700 terms stay finite)."""
    d1 = 0.0
    d2 = 0.0
    for i in range(start, stop):
        a, b = _margin_derivatives(kind, beta, margins[i] + y[i] * c)
        d1 += w[i] * y[i] * a
        d2 += w[i] * b
    return d1, d2


@njit(error_model="numpy", cache=True, nogil=True)
def _bounded_root(kind, beta, rows, lo, hi):
    """The minimiser on [lo, hi] (finite) of one leaf's strictly convex objective: the bound
    where its increasing derivative F' keeps one sign, else the root of F' by safeguarded
    Newton (bisection whenever a step leaves the bracket or fails to halve |F'|), to machine
    precision. ``rows``: the leaf's (margins, y, w, start, stop)."""
    margins, y, w, start, stop = rows
    d_lo = _leaf_slope(kind, beta, margins, y, w, start, stop, lo)[0]
    d_hi = _leaf_slope(kind, beta, margins, y, w, start, stop, hi)[0]
    if d_lo == 0.0 and d_hi == 0.0:  # no weight: 0 if the bounds allow it
        return min(max(0.0, lo), hi)
    if d_lo >= 0.0:
        return lo
    if d_hi <= 0.0:
        return hi
    c = 0.5 * (lo + hi)
    previous = np.inf
    for _ in range(200):
        d1, d2 = _leaf_slope(kind, beta, margins, y, w, start, stop, c)
        if d1 == 0.0:
            return c
        if d1 < 0.0:
            lo = c
        else:
            hi = c
        # an overflowed curvature (beta^2 e^700) would make a zero Newton step: bisect instead
        step = c - d1 / d2 if 0.0 < d2 < np.inf else np.nan
        if not (lo < step < hi) or abs(d1) > 0.5 * previous:
            step = 0.5 * (lo + hi)
        previous = abs(d1)
        if abs(step - c) <= 2.0 * 2.220446049250313e-16 * max(abs(c), 1e-300) or hi - lo <= (
            2.0 * 2.220446049250313e-16 * max(abs(lo), abs(hi), 1e-300)
        ):
            return step
        c = step
    return c


@njit(error_model="numpy", cache=True, nogil=True)
def _bounded_margin_points(kind, beta, margins, y, w, leaf_ids, lower, upper):
    """``_bounded_root`` of every leaf (rows grouped by leaf with one counting sort)."""
    n = margins.shape[0]
    n_leaves = lower.shape[0]
    counts = np.zeros(n_leaves + 1, np.int64)
    for i in range(n):
        counts[leaf_ids[i] + 1] += 1
    for k in range(n_leaves):
        counts[k + 1] += counts[k]
    totals = np.zeros(n_leaves)
    for i in range(n):
        totals[leaf_ids[i]] += 1.0 if w.shape[0] == 0 else w[i]
    fill = counts[:-1].copy()
    gm = np.empty(n)
    gy = np.empty(n)
    gw = np.empty(n)
    for i in range(n):
        k = fill[leaf_ids[i]]
        fill[leaf_ids[i]] = k + 1
        gm[k] = margins[i]
        gy[k] = y[i]
        weight = 1.0 if w.shape[0] == 0 else w[i]
        gw[k] = weight / totals[leaf_ids[i]] if totals[leaf_ids[i]] > 0.0 else 0.0
    out = np.empty(n_leaves)
    for leaf in range(n_leaves):
        rows = (gm, gy, gw, counts[leaf], counts[leaf + 1])
        out[leaf] = _bounded_root(kind, beta, rows, lower[leaf], upper[leaf])
    return out


def bounded_margin_minimisers(kind, beta, y, z, leaf_ids, n_leaves, bounds, w=None):
    """Per-leaf minimiser of sum_i w_i phi(y_i (z_i + c)) on [lower, upper] = ``bounds``
    (finite), phi the ``LOGISTIC`` or ``EXPONENTIAL`` (scale ``beta``) margin loss (y in
    {-1, +1}): compiled, each leaf's own rows only."""
    y = np.ascontiguousarray(y, dtype=np.float64)
    margins = np.ascontiguousarray(y * np.asarray(z, dtype=np.float64))
    w = _EMPTY if w is None else np.ascontiguousarray(w, dtype=np.float64)
    leaf_ids = np.ascontiguousarray(leaf_ids, dtype=np.intp)
    lower, upper = check_bounds(*bounds, int(n_leaves))
    return _bounded_margin_points(int(kind), float(beta), margins, y, w, leaf_ids, lower, upper)
